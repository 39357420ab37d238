/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_KSYM_H
#define LBR_SNAP_KSYM_H

#include <stdbool.h>
#include <stddef.h>

/* Kernel text symbols from /proc/kallsyms, sorted by address. */
struct ksym {
	unsigned long long addr;
	unsigned int name;	/* offset of the name in the string pool */
	unsigned int mod;	/* offset of the module name, 0 for vmlinux */
	unsigned int seq;	/* line order, to keep the first of aliases */
};

struct srclines;
struct ksym_cache;

struct ksyms {
	struct ksym *syms;
	unsigned long long *addrs;	/* syms[i].addr, to search in */
	size_t nr, cap;
	char *pool;		/* NUL-terminated names; offset 0 is "" */
	size_t pool_len, pool_cap;
	unsigned long long text_addr;	/* _text, for the KASLR offset */
	unsigned long long etext_addr;	/* _etext, the end of its text */
	struct srclines *lines;		/* file:line lookup, or NULL */
	struct ksym_cache *cache;	/* formatted recent addresses */
};

void ksyms_load(struct ksyms *ks, const char *path);
void ksyms_free(struct ksyms *ks);
void ksyms_load_lines(struct ksyms *ks, const char *kallsyms,
		      const char *vmlinux);
bool ksyms_func(const struct ksyms *ks, unsigned long long addr,
		char *buf, size_t len);
bool ksyms_format(const struct ksyms *ks, unsigned long long addr,
		  char *buf, size_t len);
const char *ksyms_sym(const struct ksyms *ks, unsigned long long addr,
		      size_t *len, bool *found);
const char *ksyms_sym_plain(const struct ksyms *ks, unsigned long long addr,
			    size_t *len, bool *found, bool *plain);
const char *ksyms_name(const struct ksyms *ks, unsigned long long addr,
		       unsigned long long *off);
bool ksyms_in_module(const struct ksyms *ks, unsigned long long addr);
bool ksyms_foreign(const struct ksyms *ks, unsigned long long addr);
unsigned long long ksyms_addr_of(const struct ksyms *ks, const char *name,
				 size_t len);
const char *ksyms_module(const struct ksyms *ks, unsigned long long addr);
unsigned long long ksyms_func_end(const struct ksyms *ks,
				  unsigned long long addr);

/* Room for "name+0x<16 digits> [module]", names up to KSYM_NAME_LEN (512). */
#define KSYM_BUF_LEN	640

#endif /* LBR_SNAP_KSYM_H */
