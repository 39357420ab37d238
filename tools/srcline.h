/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_SRCLINE_H
#define LBR_SNAP_SRCLINE_H

#include <stdbool.h>
#include <stddef.h>

#define SRC_MAX_INLINE	8

/* A function inlined at an address, and where it was called from. */
struct src_inline {
	const char *func;
	const char *call_file;
	int call_line;
};

/* Where an address is in the source; strings live as long as the table. */
struct srcloc {
	const char *file;
	const char *comp_dir;		/* the CU's DW_AT_comp_dir, or NULL */
	const char *src_root;		/* outside comp_dir, its module's
					 * source tree, or NULL
					 */
	int line;
	unsigned int nr_inline;		/* innermost first */
	struct src_inline inl[SRC_MAX_INLINE];
};

struct ksyms;
struct srclines;

extern const bool srclines_built_in;
extern bool srclines_verbose;		/* -v: say which debug files */
extern bool srclines_replay;		/* -i: -k only, no host modules */
bool srclines_wanted(void);		/* LBR_SNAP_ROOT is set */

struct srclines *srclines_open(const char *vmlinux, const struct ksyms *ks);
bool srclines_lookup(const struct srclines *sl, const struct ksyms *ks,
		     unsigned long long addr, struct srcloc *loc);
void srclines_close(struct srclines *sl);
/*
 * The @i-th place a vmlinux is looked for (under LBR_SNAP_ROOT), in
 * @buf; false past the last.  Built with libdw only.
 */
bool srclines_vmlinux_path(unsigned int i, char *buf, size_t len);

#endif /* LBR_SNAP_SRCLINE_H */
