// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: symbolize kernel addresses with /proc/kallsyms.
 *
 * kallsyms shows runtime addresses, so KASLR needs no special care.  Only
 * text symbols (t, T, w, W) are kept, module ones with their module name.
 * An address is shown as the symbol with the greatest address not above it,
 * plus the offset; addresses below the first symbol print as raw hex.
 *
 * LBR entries repeat a lot (a burst of the same error takes the same
 * paths), so the text of recent addresses is kept in a direct-mapped cache:
 * most lookups are a hash and a compare, not a binary search of 100,000
 * symbols and an snprintf().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksym.h"
#include "srcline.h"
#include "util.h"

#define CACHE_BITS	13		/* 8192 entries of 128 bytes */
#define CACHE_STR	116		/* longer texts are not kept */

struct ksym_cache_ent {
	unsigned long long addr;
	unsigned short len;		/* of @str, 0: unused */
	bool found;
	bool plain;			/* @str needs no JSON escape */
	char str[CACHE_STR];
};

struct ksym_cache {
	struct ksym_cache_ent ent[1u << CACHE_BITS];
	char buf[KSYM_BUF_LEN];		/* a text too long for an entry */
};

static unsigned int pool_add(struct ksyms *ks, const char *s, size_t len)
{
	unsigned int off = ks->pool_len;

	if (ks->pool_len + len + 1 > ks->pool_cap) {
		ks->pool_cap = (ks->pool_len + len + 1) * 2;
		ks->pool = xrealloc(ks->pool, ks->pool_cap);
	}
	memcpy(ks->pool + off, s, len);
	ks->pool[off + len] = '\0';
	ks->pool_len += len + 1;
	return off;
}

static bool is_text_type(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * Parse one kallsyms line, "ffffffff81000000 T _stext" or
 * "ffffffffc0a01000 t foo\t[mod]", into @sym.  Returns false for lines
 * that are not text symbols.  Consecutive symbols of a module share its name.
 */
/* 1 to 16 hex digits at @s into *@v; returns past them, NULL if none. */
static char *parse_hex(char *s, unsigned long long *v)
{
	unsigned long long x = 0;
	unsigned int d;
	char *p;

	for (p = s; ; p++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			d = (*p | 0x20) - 'a' + 10;
		else
			break;
		if (p - s == 16)
			return NULL;
		x = x << 4 | d;
	}
	*v = x;
	return p == s ? NULL : p;
}

static bool parse_line(struct ksyms *ks, char *line, struct ksym *sym,
		       unsigned int *last_mod)
{
	char *p, *name, *mod;
	size_t name_len;

	p = parse_hex(line, &sym->addr);
	if (!p || *p != ' ' || !is_text_type(p[1]) || p[2] != ' ')
		return false;
	name = p + 3;
	name_len = strcspn(name, " \t\n");
	if (!name_len)
		return false;
	sym->name = pool_add(ks, name, name_len);
	sym->mod = 0;
	if (name_len == 5 && !strncmp(name, "_text", 5))
		ks->text_addr = sym->addr;
	if (name_len == 6 && !strncmp(name, "_etext", 6))
		ks->etext_addr = sym->addr;
	mod = name + name_len + strspn(name + name_len, " \t");
	if (*mod++ != '[')
		return true;
	mod[strcspn(mod, "]\n")] = '\0';
	if (!*last_mod || strcmp(ks->pool + *last_mod, mod))
		*last_mod = pool_add(ks, mod, strlen(mod));
	sym->mod = *last_mod;
	return true;
}

static void add_sym(struct ksyms *ks, const struct ksym *sym)
{
	if (ks->nr == ks->cap) {
		ks->cap = ks->cap ? ks->cap * 2 : 4096;
		ks->syms = xrealloc(ks->syms, ks->cap * sizeof(*ks->syms));
	}
	ks->syms[ks->nr] = *sym;
	ks->syms[ks->nr].seq = ks->nr;
	ks->nr++;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sort by address; of symbols sharing an address keep the first listed.
 * /proc/kallsyms lists vmlinux in address order, then the modules: the
 * sorted prefix stays, the rest is sorted and merged into it.
 */
static void sort_syms(struct ksyms *ks)
{
	size_t i, j, k, n = 0, pre = 1;
	struct ksym *out;

	while (pre < ks->nr && ks->syms[pre - 1].addr <= ks->syms[pre].addr)
		pre++;
	if (pre < ks->nr) {
		qsort(ks->syms + pre, ks->nr - pre, sizeof(*ks->syms), cmp_sym);
		out = xrealloc(NULL, ks->nr * sizeof(*out));
		for (i = 0, j = pre, k = 0; k < ks->nr; k++) {
			if (j == ks->nr ||
			    (i < pre && cmp_sym(&ks->syms[i], &ks->syms[j]) <= 0))
				out[k] = ks->syms[i++];
			else
				out[k] = ks->syms[j++];
		}
		free(ks->syms);
		ks->syms = out;
		ks->cap = ks->nr;
	}
	for (i = 0; i < ks->nr; i++)
		if (!n || ks->syms[i].addr != ks->syms[n - 1].addr)
			ks->syms[n++] = ks->syms[i];
	ks->nr = n;
}

static bool all_zero(const struct ksyms *ks)
{
	size_t i;

	for (i = 0; i < ks->nr; i++)
		if (ks->syms[i].addr)
			return false;
	return true;
}

static void read_syms(struct ksyms *ks, FILE *f)
{
	unsigned int last_mod = 0;
	struct ksym sym;
	char *line = NULL;
	size_t len = 0;

	while (getline(&line, &len, f) > 0)
		if (parse_line(ks, line, &sym, &last_mod))
			add_sym(ks, &sym);
	free(line);
}

/*
 * Load the text symbols of @path.  This never fails: on trouble it says so
 * once on stderr and leaves the table empty, so that addresses print raw.
 */
void ksyms_load(struct ksyms *ks, const char *path)
{
	size_t i;
	FILE *f;

	memset(ks, 0, sizeof(*ks));
	pool_add(ks, "", 0);
	ks->cache = xrealloc(NULL, sizeof(*ks->cache));
	memset(ks->cache, 0, sizeof(*ks->cache));
	f = fopen(path, "r");
	if (!f) {
		pr_err("%s: %s: printing raw addresses", path, strerror(errno));
		return;
	}
	read_syms(ks, f);
	fclose(f);
	if (!ks->nr) {
		pr_err("%s: no text symbols: printing raw addresses", path);
	} else if (all_zero(ks)) {
		pr_err("%s: all addresses are 0 (kernel.kptr_restrict): printing raw addresses; run as root or set kernel.kptr_restrict=0",
		       path);
		ks->nr = 0;
	}
	sort_syms(ks);
	/* The addresses alone: a search touches a third of the cache lines. */
	ks->addrs = xrealloc(NULL, (ks->nr + 1) * sizeof(*ks->addrs));
	for (i = 0; i < ks->nr; i++)
		ks->addrs[i] = ks->syms[i].addr;
}

void ksyms_free(struct ksyms *ks)
{
	srclines_close(ks->lines);
	free(ks->cache);
	free(ks->syms);
	free(ks->addrs);
	free(ks->pool);
}

/* The symbol with the greatest address <= @addr, or NULL. */
static const struct ksym *lookup(const struct ksyms *ks,
				 unsigned long long addr)
{
	size_t lo = 0, hi = ks->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->addrs[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &ks->syms[lo - 1] : NULL;
}

/*
 * ksyms_format() without the cache; returns the length it would write,
 * as snprintf() does.  Put together without printf(), which was most of
 * the time a symbol took.
 */
static int format_sym(const struct ksyms *ks, unsigned long long addr,
		      char *buf, size_t len, bool *found)
{
	static const char digits[] = "0123456789abcdef";
	const struct ksym *s = lookup(ks, addr);
	char tmp[KSYM_BUF_LEN], hex[16], *p = tmp;
	const char *name, *mod;
	unsigned long long off;
	size_t n, nl, ml;
	int i;

	*found = s;
	if (!s)
		return snprintf(buf, len, "0x%016llx", addr);
	name = ks->pool + s->name;
	mod = ks->pool + s->mod;
	nl = strlen(name);
	ml = s->mod ? strlen(mod) : 0;
	/* name, "+0x", 16 digits, " [", mod, "]" */
	if (nl + ml + 22 > sizeof(tmp))
		return snprintf(buf, len, "%s+0x%llx%s%s%s", name,
				addr - s->addr, s->mod ? " [" : "", mod,
				s->mod ? "]" : "");
	memcpy(p, name, nl);
	p += nl;
	memcpy(p, "+0x", 3);
	p += 3;
	off = addr - s->addr;
	i = sizeof(hex);
	do {
		hex[--i] = digits[off & 15];
		off >>= 4;
	} while (off);
	memcpy(p, hex + i, sizeof(hex) - i);
	p += sizeof(hex) - i;
	if (s->mod) {
		memcpy(p, " [", 2);
		memcpy(p + 2, mod, ml);
		p[2 + ml] = ']';
		p += ml + 3;
	}
	n = p - tmp;
	if (len) {
		memcpy(buf, tmp, n < len ? n : len - 1);
		buf[n < len ? n : len - 1] = '\0';
	}
	return n;
}

static size_t cache_slot(unsigned long long addr)
{
	return (addr * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS);
}

/* Printable ASCII but '"' and '\\': JSON takes it as it is. */
static bool json_plain(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	for (i = 0; i < n; i++)
		if (u[i] < 0x20 || u[i] >= 0x7f || u[i] == '"' || u[i] == '\\')
			return false;
	return true;
}

/*
 * What ksyms_format() writes for @addr, @len bytes without a NUL after
 * them, from the cache; @found as ksyms_format() returns, and @plain
 * whether the text needs no JSON escape (known for cached texts only: a
 * storm prints the same few hundred addresses over and over).  The text
 * lives until the next call.
 */
const char *ksyms_sym_plain(const struct ksyms *ks, unsigned long long addr,
			    size_t *len, bool *found, bool *plain)
{
	struct ksym_cache_ent *e;
	int n;

	e = &ks->cache->ent[cache_slot(addr)];
	if (!e->len || e->addr != addr) {
		n = format_sym(ks, addr, ks->cache->buf, sizeof(ks->cache->buf),
			       found);
		*len = strnlen(ks->cache->buf, sizeof(ks->cache->buf));
		*plain = false;
		if (n <= 0 || n >= CACHE_STR)
			return ks->cache->buf;
		e->addr = addr;
		e->len = n;
		e->found = *found;
		e->plain = json_plain(ks->cache->buf, n);
		memcpy(e->str, ks->cache->buf, n + 1);
	}
	*len = e->len;
	*found = e->found;
	*plain = e->plain;
	return e->str;
}

/* ksyms_sym_plain() without @plain. */
const char *ksyms_sym(const struct ksyms *ks, unsigned long long addr,
		      size_t *len, bool *found)
{
	bool plain;

	return ksyms_sym_plain(ks, addr, len, found, &plain);
}

/*
 * Write "sym+0xoff", "sym+0xoff [module]" or, for an address below every
 * symbol, "0x<hex>" into @buf.  Returns whether a symbol was found.
 */
bool ksyms_format(const struct ksyms *ks, unsigned long long addr,
		  char *buf, size_t len)
{
	bool found;
	size_t n;
	const char *s = ksyms_sym(ks, addr, &n, &found);

	if (len) {
		if (n >= len)
			n = len - 1;
		memcpy(buf, s, n);
		buf[n] = '\0';
	}
	return found;
}

/*
 * Name of the function entered at @addr into @buf: just "name" when @addr is
 * a symbol, else what ksyms_format() prints.  Returns whether it was found.
 */
bool ksyms_func(const struct ksyms *ks, unsigned long long addr,
		char *buf, size_t len)
{
	const struct ksym *s = lookup(ks, addr);

	if (!s || s->addr != addr)
		return ksyms_format(ks, addr, buf, len);
	snprintf(buf, len, "%s", ks->pool + s->name);
	return true;
}

/*
 * End of the function that starts at @addr: the address of the next symbol
 * above it, or 0 when there is none (or no symbols at all).
 */
unsigned long long ksyms_func_end(const struct ksyms *ks,
				  unsigned long long addr)
{
	const struct ksym *s = lookup(ks, addr);
	size_t i = s ? (size_t)(s - ks->syms) + 1 : 0;

	for (; i < ks->nr; i++)
		if (ks->syms[i].addr > addr)
			return ks->syms[i].addr;
	return 0;
}

/*
 * The bare name of the symbol @addr lies in (no offset, no module), and
 * @addr's offset in it in *@off; NULL below every symbol.  Lives as long
 * as @ks.
 */
const char *ksyms_name(const struct ksyms *ks, unsigned long long addr,
		       unsigned long long *off)
{
	const struct ksym *s = lookup(ks, addr);

	if (!s)
		return NULL;
	*off = addr - s->addr;
	return ks->pool + s->name;
}

/*
 * Whether @addr, an LBR entry's, cannot be this kernel's text: in the
 * kernel's half (the vsyscall page aside, which user space executes),
 * below every text symbol, past vmlinux's _etext (its init text is gone
 * once it runs), or over 1 MiB past a module's last symbol below it (no
 * function is that long).  So the branches of another context that
 * reached the LBR: a guest's, on a KVM host whose Arch LBR keeps
 * recording across VM entry (design.md, "KVM").  Never with kallsyms of
 * zeros (kptr_restrict), nor of user-space addresses, which no kallsyms
 * can tell apart.
 */
bool ksyms_foreign(const struct ksyms *ks, unsigned long long addr)
{
	const struct ksym *s;

	if (addr < 0xffff800000000000ULL || !ks->text_addr ||
	    (addr >= 0xffffffffff600000ULL && addr < 0xffffffffff601000ULL))
		return false;
	s = lookup(ks, addr);
	if (!s)
		return true;
	if (s->mod)
		return addr - s->addr > (1u << 20);
	return ks->etext_addr && addr >= ks->etext_addr;
}

/* Whether @addr is in a module's symbol, not vmlinux's. */
bool ksyms_in_module(const struct ksyms *ks, unsigned long long addr)
{
	const struct ksym *s = lookup(ks, addr);

	return s && s->mod;
}

/* The module of @addr's symbol: NULL for vmlinux's, or none. */
const char *ksyms_module(const struct ksyms *ks, unsigned long long addr)
{
	const struct ksym *s = lookup(ks, addr);

	return s && s->mod ? ks->pool + s->mod : NULL;
}

/*
 * Open the debug info for source lines, if @vmlinux is given or symbols
 * come from the live kallsyms (other kallsyms belong to another kernel).
 */
void ksyms_load_lines(struct ksyms *ks, const char *kallsyms,
		      const char *vmlinux)
{
	if (srclines_replay) {
		if (vmlinux)
			ks->lines = srclines_open(vmlinux, ks);
		else if (srclines_verbose)
			pr_err("no source lines: a replay takes them from -k only");
	} else if (vmlinux || !strcmp(kallsyms, "/proc/kallsyms") ||
		   srclines_wanted())
		ks->lines = srclines_open(vmlinux, ks);
	else if (srclines_verbose)
		pr_err("no source lines: %s is not /proc/kallsyms, and no -k vmlinux",
		       kallsyms);
}

/* The address of text symbol @name (its first), or 0: a walk of them all. */
unsigned long long ksyms_addr_of(const struct ksyms *ks, const char *name,
				 size_t len)
{
	size_t i;

	for (i = 0; i < ks->nr; i++) {
		const char *s = ks->pool + ks->syms[i].name;

		if (!strncmp(s, name, len) && !s[len])
			return ks->syms[i].addr;
	}
	return 0;
}
