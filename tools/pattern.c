// SPDX-License-Identifier: GPL-2.0
/*
 * Targets by pattern (pattern.h): which kernel functions a glob, a module
 * scope or a source file names, and which of them lbr_snap can hook.
 *
 * A function can be hooked if it is a text symbol of /proc/kallsyms, ftrace
 * lists it in available_filter_functions (so it is neither notrace nor
 * inlined away), it is not lbr_snap's own nor on its capture path (the
 * module's rules, src/targets.c, kept in step below), and its type from
 * BTF is one the hook and the capture mode take.  The module hooks a
 * function by name: where several functions share one, it gets the first
 * kallsyms lists (vmlinux's lowest address, else the first module's), and
 * the others are refused.
 *
 * A source file (":fs/namei.c") is matched against the names of vmlinux's
 * DWARF compile units, relative to the kernel tree; their functions are
 * the DW_TAG_subprogram that have code (not declarations, nor inlined-only
 * abstract copies), each placed by its address in kallsyms, which also
 * gives the name of a copy the compiler renamed (foo.isra.0).  Two static
 * functions of one name cannot be told apart by address where kallsyms
 * hides addresses (kernel.kptr_restrict): the first is taken.
 *
 * "!PAT" leaves the functions PAT matches out of every other argument.
 *
 * LBR_SNAP_ROOT=DIR puts DIR before /proc, /sys and the vmlinux paths.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/lbr_own_names.h"
#include "btf.h"
#include "pattern.h"
#include "recording.h"
#include "srcline.h"
#include "util.h"

/* A kernel function: a line of kallsyms or available_filter_functions. */
struct kfunc {
	char *name;
	char *mod;		/* NULL: vmlinux */
	unsigned long long addr;
	unsigned int seq;	/* line order */
};

struct kfuncs {
	struct kfunc *f;
	size_t nr, cap;
	bool read;
};

static struct kfuncs ksyms_by_name, ftrace_funcs;
static struct kfunc **ksyms_by_addr;	/* vmlinux's, by address */
static size_t nr_by_addr;
static unsigned long long ksyms_text;	/* _text, 0 if hidden */

static const char *root(void)
{
	const char *r = getenv("LBR_SNAP_ROOT");

	return r ? r : "";
}

/* Each reason in a few words, for the counts of a pattern's refusals. */
static const char *const what_why[PAT_NR_WHY] = {
	[PAT_TOO_LONG] = "name too long",
	[PAT_NO_FUNC] = "no such function",
	[PAT_OWN] = "lbr_snap's own or its capture path",
	[PAT_NO_HOOK] = "no hook takes it",
	[PAT_UNTRACEABLE] = "not traceable",
	[PAT_SAME_NAME] = "another function of the name is hooked",
	[PAT_ALIAS] = "an alias",
	[PAT_VOID] = "returns void",
	[PAT_TYPE] = "a type the hook cannot take",
	[PAT_NO_BATCH] = "not in a batch, and no room one by one",
};

/*
 * The module's refusals (src/targets.c, its lists in src/lbr_own_names.h):
 * the capture path's functions by prefix, the unwinder's by name (with
 * stack_depth=, the default 16), and where an offline CPU's idle task
 * stays.
 */
static const char *const own_path_prefixes[] = {
	LBR_OWN_PATH_PREFIXES,
};

static const char *const unwind_names[] = {
	LBR_UNWIND_NAMES,
};

static const char *const noreturn_names[] = {
	LBR_NORETURN_NAMES,
};

static const char *const offline_cpu_path[] = {
	LBR_OFFLINE_CPU_NAMES,
};

static bool in_list(const char *name, const char *const *list, size_t n,
		    bool prefix)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (prefix ? !strncmp(name, list[i], strlen(list[i])) :
			     !strcmp(name, list[i]))
			return true;
	return false;
}

static char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		oom();
	return p;
}

static void kfuncs_add(struct kfuncs *k, const char *name, size_t len,
		       const char *mod, size_t mlen, unsigned long long addr)
{
	struct kfunc *f;

	if (k->nr == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 4096;
		k->f = xrealloc(k->f, k->cap * sizeof(*k->f));
	}
	f = &k->f[k->nr];
	f->name = xstrndup(name, len);
	f->mod = mlen ? xstrndup(mod, mlen) : NULL;
	f->addr = addr;
	f->seq = k->nr++;
}

static int cmp_name(const void *a, const void *b)
{
	const struct kfunc *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_addr(const void *a, const void *b)
{
	const struct kfunc *x = *(struct kfunc *const *)a;
	const struct kfunc *y = *(struct kfunc *const *)b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* "name" then, after blanks, an optional "[module]". */
static void split_mod(char *s, size_t *len, const char **mod, size_t *mlen)
{
	char *m;

	*len = strcspn(s, " \t\n");
	m = s + *len + strspn(s + *len, " \t");
	*mod = NULL;
	*mlen = 0;
	if (*m == '[') {
		*mod = m + 1;
		*mlen = strcspn(m + 1, "]\n");
	}
}

/* Compiler-made entry padding, not functions. */
static bool not_a_func(const char *name)
{
	return !strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6);
}

static int read_kallsyms(const char *path)
{
	char buf[4096], line[1024], type, *p;
	unsigned long long addr;
	const char *mod;
	size_t len, mlen, i;
	FILE *f;

	if (ksyms_by_name.read)
		return 0;
	if (!path) {
		snprintf(buf, sizeof(buf), "%s/proc/kallsyms", root());
		path = buf;
	}
	f = fopen(path, "re");
	if (!f) {
		pr_err("%s: %s: patterns need the kernel's symbols", path,
		       strerror(errno));
		return EXIT_ERROR;
	}
	while (fgets(line, sizeof(line), f)) {
		addr = strtoull(line, &p, 16);
		if (p == line || *p++ != ' ')
			continue;
		type = *p;
		if (!type || p[1] != ' ')
			continue;
		p += 2;
		split_mod(p, &len, &mod, &mlen);
		if (len == 5 && !strncmp(p, "_text", 5) && !mod)
			ksyms_text = addr;
		if ((type != 't' && type != 'T') || !len)
			continue;
		p[len] = '\0';
		if (not_a_func(p))
			continue;
		kfuncs_add(&ksyms_by_name, p, len, mod, mlen, addr);
	}
	fclose(f);
	ksyms_by_name.read = true;
	qsort(ksyms_by_name.f, ksyms_by_name.nr, sizeof(struct kfunc), cmp_name);
	ksyms_by_addr = xrealloc(NULL, (ksyms_by_name.nr + 1) *
				 sizeof(*ksyms_by_addr));
	for (i = 0; i < ksyms_by_name.nr; i++)
		if (!ksyms_by_name.f[i].mod && ksyms_by_name.f[i].addr)
			ksyms_by_addr[nr_by_addr++] = &ksyms_by_name.f[i];
	qsort(ksyms_by_addr, nr_by_addr, sizeof(*ksyms_by_addr), cmp_addr);
	return 0;
}

static const char *const ftrace_dirs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

static int read_ftrace(bool verbose)
{
	char path[4096], line[1024];
	const char *mod;
	size_t len, mlen, i;
	FILE *f = NULL;
	int err = ENOENT;

	if (ftrace_funcs.read)
		return 0;
	for (i = 0; i < ARRAY_SIZE(ftrace_dirs) && !f; i++) {
		snprintf(path, sizeof(path), "%s%s/available_filter_functions",
			 root(), ftrace_dirs[i]);
		f = fopen(path, "re");
		if (!f && err == ENOENT)
			err = errno;
	}
	if (!f) {
		snprintf(path, sizeof(path), "%s%s/available_filter_functions",
			 root(), ftrace_dirs[0]);
		pr_err("%s: %s: patterns need the functions ftrace can hook (root, tracefs mounted)",
		       path, strerror(err));
		return EXIT_ERROR;
	}
	if (verbose)
		pr_err("traceable functions: %s", path);
	while (fgets(line, sizeof(line), f)) {
		split_mod(line, &len, &mod, &mlen);
		if (!len || !strncmp(line, "__ftrace_invalid_address__", 26))
			continue;
		line[len] = '\0';
		kfuncs_add(&ftrace_funcs, line, len, mod, mlen, 0);
	}
	fclose(f);
	ftrace_funcs.read = true;
	qsort(ftrace_funcs.f, ftrace_funcs.nr, sizeof(struct kfunc), cmp_name);
	return 0;
}

/* The first of @k's entries named @name (its others follow); or NULL. */
static struct kfunc *first_named(const struct kfuncs *k, const char *name,
				 size_t *n)
{
	size_t lo = 0, hi = k->nr, mid, end;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (strcmp(k->f[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < k->nr && !strcmp(k->f[end].name, name); end++)
		;
	*n = end - lo;
	return *n ? &k->f[lo] : NULL;
}

static bool same_mod(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool traceable(const char *name, const char *mod)
{
	size_t n, i;
	struct kfunc *f = first_named(&ftrace_funcs, name, &n);

	for (i = 0; i < n; i++)
		if (same_mod(f[i].mod, mod))
			return true;
	return false;
}

/* The stack_depth= of the loaded module, else its default (16). */
static unsigned int module_stack_depth(void)
{
	char path[4096];
	unsigned int d = 16;
	FILE *f;

	snprintf(path, sizeof(path),
		 "%s/sys/module/lbr_snap/parameters/stack_depth", root());
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%u", &d) != 1)
			d = 16;
		fclose(f);
	}
	return d;
}

/* One argument, taken apart. */
struct pat {
	const char *arg;
	char glob[PAT_MAX_LEN];		/* the name or file pattern */
	char scope[PAT_MAX_LEN];	/* the module pattern, "" for any */
	char suffix[PAT_MAX_LEN];	/* %type/N@hook=-ERR,... */
	bool file;			/* :file */
	int type;			/* the suffix's %type, or -1 */
	int nargs;			/* the suffix's /N, or -1 */
	bool fexit, errnos;
};

static const char *const type_names[] = {
	[LBR_SNAP_RET_INT] = "int", [LBR_SNAP_RET_LONG] = "long",
	[LBR_SNAP_RET_PTR] = "ptr", [LBR_SNAP_RET_BOOL] = "bool",
	[LBR_SNAP_RET_VOID] = "void",
};

/* "NAME [MODULE]": where the scope starts, or NULL. */
static const char *scope_start(const char *arg)
{
	size_t n = strlen(arg);
	const char *s;

	if (n < 4 || arg[n - 1] != ']')
		return NULL;
	s = strrchr(arg, '[');
	return s && s > arg && s[-1] == ' ' && s + 2 < arg + n ? s : NULL;
}

bool pat_is_pattern(const char *arg)
{
	size_t n = strcspn(arg, "%/@=");

	return arg[0] == ':' || arg[0] == '!' || scope_start(arg) ||
	       memchr(arg, '*', n) || memchr(arg, '?', n) || memchr(arg, '[', n);
}

static int parse(const char *arg, struct pat *p)
{
	const char *sc = scope_start(arg), *t;
	size_t len = sc ? (size_t)(sc - 1 - arg) : strlen(arg), n;
	unsigned int i;

	memset(p, 0, sizeof(*p));
	p->arg = arg;
	p->type = -1;
	p->nargs = -1;
	if (strlen(arg) >= PAT_MAX_LEN) {
		pr_err("%.40s...: a pattern of %zu bytes: at most %d (the kernel's KSYM_NAME_LEN)",
		       arg, strlen(arg), PAT_MAX_LEN - 1);
		return EXIT_USAGE;
	}
	if (sc)
		snprintf(p->scope, sizeof(p->scope), "%.*s",
			 (int)strcspn(sc + 1, "]"), sc + 1);
	p->file = arg[0] == ':';
	/* A file's path has '/': no /N after it (BTF gives it). */
	n = p->file ? 1 + strcspn(arg + 1, "%@=") : strcspn(arg, "%/@=");
	if (n > len)
		n = len;
	snprintf(p->glob, sizeof(p->glob), "%.*s", (int)(n - p->file),
		 arg + p->file);
	snprintf(p->suffix, sizeof(p->suffix), "%.*s", (int)(len - n), arg + n);
	if (!p->glob[0] || strpbrk(p->glob, " \t\n,")) {
		pr_err("%s: expected a function name or glob, \" [MODULE]\" or :FILE, then %%type, /N, @hook, =-ERR,...",
		       arg);
		return EXIT_USAGE;
	}
	if (p->file && p->scope[0] && strcmp(p->scope, "vmlinux")) {
		pr_err("%s: a source file is vmlinux's: no module scope", arg);
		return EXIT_USAGE;
	}
	t = strchr(p->suffix, '%');
	if (t) {
		n = strcspn(t + 1, "/@=");
		for (i = 0; i < ARRAY_SIZE(type_names); i++)
			if (strlen(type_names[i]) == n &&
			    !strncmp(t + 1, type_names[i], n))
				p->type = i;
		if (p->type < 0) {
			pr_err("%s: unknown return type '%.*s' (int, long, ptr, bool, void)",
			       arg, (int)n, t + 1);
			return EXIT_USAGE;
		}
	}
	t = strchr(p->suffix, '/');
	if (t && t[1] >= '0' && t[1] <= '9')
		p->nargs = atoi(t + 1);
	t = strchr(p->suffix, '@');
	p->fexit = t && !strncmp(t + 1, "fexit", 5);
	p->errnos = strchr(p->suffix, '=');
	return 0;
}

/* Whether module @mod (NULL: vmlinux) is in @p's scope. */
static bool in_scope(const struct pat *p, const char *mod)
{
	return !p->scope[0] || !fnmatch(p->scope, mod ? mod : "vmlinux", 0);
}

static __printf(2, 3) void set_detail(struct pat_match *m, const char *fmt,
				      ...)
{
	va_list ap;

	free(m->detail);
	va_start(ap, fmt);
	if (vasprintf(&m->detail, fmt, ap) < 0)
		oom();
	va_end(ap);
}

static struct pat_match *list_add(struct pat_list *l, const char *name,
				  const char *mod, unsigned long long addr,
				  unsigned int arg)
{
	struct pat_match *m;

	if (l->nr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->m = xrealloc(l->m, l->cap * sizeof(*l->m));
	}
	m = &l->m[l->nr++];
	memset(m, 0, sizeof(*m));
	m->name = xstrndup(name, strlen(name));
	m->mod = mod ? xstrndup(mod, strlen(mod)) : NULL;
	m->addr = addr;
	m->arg = arg;
	return m;
}

/* Bytes the module takes in a name (src/targets.c, lbr_spec_chars_ok()). */
static bool spec_chars_ok(const char *name)
{
	for (; *name; name++)
		if (!(*name >= 'a' && *name <= 'z') &&
		    !(*name >= 'A' && *name <= 'Z') &&
		    !(*name >= '0' && *name <= '9') && !strchr("_.$", *name))
			return false;
	return true;
}

/* The checks of BTF's type against the capture mode and the hook. */
/*
 * "@fexit" with an argument count of six at most: the user's count, not
 * BTF, bounds its stack arguments (none), in a batch too (the module
 * takes it so), where vmlinux has BTF that does not describe this one.
 * The system calls' own functions, x86-64's
 * __x64_sys_*(const struct pt_regs *), which BTF often has twice.
 */
static bool user_bounds(const struct pat *p)
{
	return p->fexit && p->nargs >= 0 && p->nargs <= 6 &&
	       btf_have_vmlinux();
}

/* A function that never returns: no fexit, and "@fexit" refused. */
static void judge_noreturn(struct pat_match *m, const struct pat *p)
{
	if (!in_list(m->name, noreturn_names, ARRAY_SIZE(noreturn_names),
		     false))
		return;
	m->no_batch = "it never returns: fexit refuses it";
	if (p->fexit && !m->why) {
		m->why = PAT_TYPE;
		set_detail(m, "it never returns: @fexit refuses it");
	}
}

static void judge_type(struct pat_match *m, const struct pat *p,
		       const struct pat_opts *o)
{
	struct btf_func_info fi;
	int rt;

	if (btf_func_info(m->name, &fi)) {
		/* Without libbpf here, the module judges. */
		if (user_bounds(p))
			;
		else if (btf_have_vmlinux())
			m->no_batch = "no BTF prototype (a compiler's copy, .part or .constprop, has none): fexit in a batch needs one to know its stack arguments";
		else if (btf_built_in)
			m->no_batch = "no vmlinux BTF on this kernel: fexit in a batch needs it";
		if (p->type == LBR_SNAP_RET_VOID && !o->capture_all) {
			m->why = PAT_VOID;
			set_detail(m, "%%void under capture errors has no error to catch (capture all, trace --all)");
		}
		judge_noreturn(m, p);
		return;
	}
	rt = p->type >= 0 ? p->type : fi.ret_type;
	if (fi.ret_type == LBR_SNAP_RET_VOID && rt != LBR_SNAP_RET_VOID) {
		m->why = PAT_TYPE;
		set_detail(m, "BTF says it returns void, the pattern %%%s: no return value to read",
			   type_names[rt]);
	} else if (rt == LBR_SNAP_RET_VOID && !o->capture_all) {
		m->why = PAT_VOID;
		set_detail(m, "returns void: capture errors has no error to catch (capture all, trace --all)");
	} else if (rt < 0 && !o->capture_all) {
		m->why = PAT_TYPE;
		set_detail(m, "its return type is none the hook reads as an error (not a 32- or 64-bit integer, a pointer or bool)");
	} else if (o->errno_only && rt == LBR_SNAP_RET_BOOL) {
		m->why = PAT_TYPE;
		set_detail(m, "returns bool, which carries no errno for why to follow");
	} else if (p->errnos && (rt == LBR_SNAP_RET_BOOL ||
				 rt == LBR_SNAP_RET_VOID)) {
		m->why = PAT_TYPE;
		set_detail(m, "returns %s, which has no errno to list",
			   type_names[rt]);
	} else if (p->fexit && fi.stack_unbounded) {
		m->why = PAT_TYPE;
		set_detail(m, "%s: @fexit cannot bound its stack arguments",
			   fi.variadic ? "takes variable arguments" :
			   "takes a value of over 16 bytes");
	}
	if (fi.stack_unbounded)
		m->no_batch = "BTF says it takes variable arguments or a value of over 16 bytes, whose stack words fexit cannot bound";
	else if (fi.name_twice && !user_bounds(p))
		m->no_batch = "BTF has several functions of this name: the module cannot tell which prototype is this one's, and fexit in a batch needs it";
	judge_noreturn(m, p);
}

/*
 * Judge match @m, function @f of kallsyms (NULL if none), whose name has
 * @nr_same entries there, @first the one the module would hook.
 */
static void judge(struct pat_match *m, const struct kfunc *f,
		  const struct kfunc *first, size_t nr_same,
		  const struct pat *p, const struct pat_opts *o)
{
	char spec[PAT_MAX_LEN + LBR_SNAP_NAME_LEN], why[128];
	size_t len = strlen(m->name);

	if (len >= LBR_SNAP_NAME_LEN) {
		m->why = PAT_TOO_LONG;
		set_detail(m, "a name of %zu bytes: lbr_snap takes at most %d (LBR_SNAP_NAME_LEN)",
			   len, LBR_SNAP_NAME_LEN - 1);
		return;
	}
	if (!spec_chars_ok(m->name)) {
		m->why = PAT_TOO_LONG;
		set_detail(m, "its name has bytes a target spec cannot hold");
		return;
	}
	if (!f) {
		m->why = PAT_NO_FUNC;
		set_detail(m, "no such function: not a text symbol of kallsyms");
		return;
	}
	if (f->mod && (!strcmp(f->mod, "lbr_snap") ||
		       !strcmp(f->mod, "lbr_snap_fexit"))) {
		m->why = PAT_OWN;
		set_detail(m, "lbr_snap's own function");
		return;
	}
	if (in_list(m->name, own_path_prefixes,
		    ARRAY_SIZE(own_path_prefixes), true)) {
		m->why = PAT_OWN;
		set_detail(m, "on lbr_snap's own capture path: the module refuses it");
		return;
	}
	if (in_list(m->name, unwind_names, ARRAY_SIZE(unwind_names), false) &&
	    module_stack_depth()) {
		m->why = PAT_OWN;
		set_detail(m, "the unwinder's, which the capture runs with stack_depth=: the module refuses it");
		return;
	}
	if (in_list(m->name, offline_cpu_path, ARRAY_SIZE(offline_cpu_path),
		    false)) {
		m->why = PAT_NO_HOOK;
		set_detail(m, "an offline CPU's idle task stays inside it: no hook takes it");
		return;
	}
	if (!traceable(m->name, f->mod)) {
		m->why = PAT_UNTRACEABLE;
		set_detail(m, "not traceable: not in available_filter_functions (notrace, or not an ftrace site)");
		return;
	}
	if (f != first) {
		m->why = PAT_SAME_NAME;
		set_detail(m, "one of %zu functions of this name: lbr_snap hooks by name, and gets the first in kallsyms, %s's",
			   nr_same, first->mod ? first->mod : "vmlinux");
		return;
	}
	judge_type(m, p, o);
	if (m->why)
		return;
	snprintf(spec, sizeof(spec), "%s%s", m->name, p->suffix);
	if (strlen(spec) >= sizeof(m->spec) ||
	    btf_complete_spec(spec, m->spec, sizeof(m->spec), why, sizeof(why))) {
		m->why = PAT_TOO_LONG;
		set_detail(m, "its spec is over %zu bytes", sizeof(m->spec) - 1);
		return;
	}
	if (nr_same > 1)
		set_detail(m, "one of %zu functions of this name: the module hooks this one, the first in kallsyms",
			   nr_same);
}

/*
 * The functions listed so far, by every argument, as "name@address": one
 * matched twice is listed once.  Open addressing on the keys' hash.
 */
static struct {
	const char **slot;
	size_t nr, cap;		/* cap: a power of two */
} seen;

static size_t name_hash(const char *s)
{
	size_t h = 14695981039346656037ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* Whether @key was listed; if not, it is from now on (and kept). */
static bool seen_key(const char *key)
{
	const char **old = seen.slot;
	size_t i, cap = seen.cap;

	if (2 * (seen.nr + 1) > seen.cap) {
		seen.cap = cap ? 2 * cap : 1024;
		seen.slot = xrealloc(NULL, seen.cap * sizeof(*seen.slot));
		memset(seen.slot, 0, seen.cap * sizeof(*seen.slot));
		seen.nr = 0;
		for (i = 0; i < cap; i++)
			if (old[i])
				seen_key(old[i]);
		free(old);
	}
	for (i = name_hash(key) & (seen.cap - 1); seen.slot[i];
	     i = (i + 1) & (seen.cap - 1))
		if (!strcmp(seen.slot[i], key))
			return true;
	seen.slot[i] = key;
	seen.nr++;
	return false;
}

static bool listed(const char *name, unsigned long long addr)
{
	char *key;

	if (asprintf(&key, "%s@%llx", name, addr) < 0)
		oom();
	if (!seen_key(key))
		return false;
	free(key);
	return true;
}

/* Functions matched by the argument resolved now, listed before or not. */
static size_t nr_matched;

/* A function of @p by name: judged and listed, if not listed already. */
static void add_named(struct pat_list *l, const char *name,
		      const struct kfunc *want, const struct pat *p,
		      const struct pat_opts *o, unsigned int arg)
{
	struct kfunc *first;
	struct pat_match *m;
	size_t n;

	nr_matched++;
	first = first_named(&ksyms_by_name, name, &n);
	if (!want)
		want = first;
	if (listed(name, want ? want->addr : 0))
		return;
	m = list_add(l, name, want ? want->mod : NULL, want ? want->addr : 0,
		     arg);
	judge(m, want, first, n, p, o);
}

/* Glob and scope over kallsyms and available_filter_functions. */
static void match_names(struct pat_list *l, const struct pat *p,
			const struct pat_opts *o, unsigned int arg)
{
	const struct kfuncs *k = &ksyms_by_name;
	const struct kfunc *f, *want;
	size_t i, j;

	for (i = 0; i < k->nr; i = j) {
		f = &k->f[i];
		for (j = i + 1; j < k->nr && !strcmp(k->f[j].name, f->name); j++)
			;
		if (fnmatch(p->glob, f->name, 0))
			continue;
		/* The first of the name in scope is the one wanted. */
		for (want = NULL; f < k->f + j && !want; f++)
			if (in_scope(p, f->mod))
				want = f;
		if (want)
			add_named(l, want->name, want, p, o, arg);
	}
	/* What ftrace lists and kallsyms does not: no such function. */
	for (i = 0; i < ftrace_funcs.nr; i++) {
		f = &ftrace_funcs.f[i];
		if (!fnmatch(p->glob, f->name, 0) && in_scope(p, f->mod) &&
		    !first_named(k, f->name, &j))
			add_named(l, f->name, NULL, p, o, arg);
	}
}

#ifdef HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <limits.h>

/*
 * vmlinux's function at @addr in kallsyms, or NULL: the one named @name
 * among aliases, else the first listed.
 */
static struct kfunc *ksym_at(unsigned long long addr, const char *name)
{
	size_t lo = 0, hi = nr_by_addr, mid;
	struct kfunc *best = NULL, *f;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (ksyms_by_addr[mid]->addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nr_by_addr && ksyms_by_addr[lo]->addr == addr; lo++) {
		f = ksyms_by_addr[lo];
		if (name && !strcmp(f->name, name))
			return f;
		if (!best || f->seq < best->seq)
			best = f;
	}
	return best;
}

/*
 * A unit's name relative to the kernel tree.  C units have it so (with
 * "./" at times); the absolute ones (assembly) lie under the compile
 * directory or, built with O=, under one of its parents, the source tree
 * (Debian's: /build/.../linux-6.1.192/debian/build/build_amd64_none_amd64).
 */
static const char *cu_path(Dwarf_Die *cu)
{
	const char *name = dwarf_diename(cu), *dir;
	Dwarf_Attribute a;
	size_t n;

	if (!name)
		return NULL;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	if (dir && dir[0] == '/' && name[0] == '/') {
		for (n = strlen(dir); n > 1; n--) {
			if ((dir[n] == '/' || !dir[n]) &&
			    !strncmp(name, dir, n) && name[n] == '/') {
				name += n + 1;
				break;
			}
		}
	}
	while (!strncmp(name, "./", 2))
		name += 2;
	return name;
}

/* _text's address in the ELF, or 0. */
static unsigned long long elf_text(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(d, i, &sym) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, sym.st_name) ?: "",
				    "_text"))
				return sym.st_value;
	}
	return 0;
}

/* @path's DWARF, its descriptor in *@fd; or NULL, and why in @why. */
static Dwarf *open_dwarf(const char *path, int *fd, const char **why)
{
	Dwarf *dw;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	dw = dwarf_begin(*fd, DWARF_C_READ);
	if (!dw) {
		*why = "no DWARF debug info in it";
		close(*fd);
	}
	return dw;
}

/*
 * The vmlinux for :file, its path in @buf: -k, else the first with DWARF
 * of srcline's places.  NULL, said, if none.
 */
static Dwarf *find_vmlinux(const struct pat_opts *o, char *buf, size_t len,
			   int *fd)
{
	char looked[4 * PATH_MAX] = "";
	const char *why = NULL;
	unsigned int i;
	Dwarf *dw;

	if (o->vmlinux) {
		snprintf(buf, len, "%s", o->vmlinux);
		dw = open_dwarf(buf, fd, &why);
		if (!dw)
			pr_err("%s: %s: :FILE patterns need vmlinux's debug info",
			       buf, why);
		return dw;
	}
	for (i = 0; srclines_vmlinux_path(i, buf, len); i++) {
		dw = access(buf, R_OK) ? NULL : open_dwarf(buf, fd, &why);
		if (dw)
			return dw;
		snprintf(looked + strlen(looked), sizeof(looked) - strlen(looked),
			 "%s%s%s%s", i ? ", " : "", buf, why ? ": " : "",
			 why ? why : "");
		why = NULL;
	}
	pr_err(":FILE patterns need vmlinux's debug info (linux-image-RELEASE-dbg, or -k VMLINUX): looked for %s",
	       looked);
	return NULL;
}

/* The running kernel's build ID must be the vmlinux's. */
static int check_build_id(const char *vmlinux, bool verbose)
{
	char path[4096], want[128], have[128];

	snprintf(path, sizeof(path), "%s/sys/kernel/notes", root());
	notes_build_id(path, want, sizeof(want));
	if (elf_build_id(vmlinux, have, sizeof(have)))
		snprintf(have, sizeof(have), "-");
	if (!strcmp(want, "-") || !strcmp(have, "-")) {
		if (verbose)
			pr_err("%s: build ID %s, the running kernel's %s: not compared",
			       vmlinux, have, want);
		return 0;
	}
	if (strcmp(want, have)) {
		pr_err("%s is not the running kernel's: build ID %s, the kernel's %s",
		       vmlinux, have, want);
		return EXIT_ERROR;
	}
	if (verbose)
		pr_err("%s: build ID %s, the running kernel's", vmlinux, have);
	return 0;
}

/*
 * Where a function's code starts, into @pc: its low_pc or, for one gcc
 * split into a hot and a cold part (foo and foo.cold, DW_AT_ranges), the
 * first of its ranges that kallsyms (moved by @off) names without
 * ".cold", else its first range.  False for a function without code.
 */
static bool die_entry(Dwarf_Die *die, long long off, Dwarf_Addr *pc)
{
	Dwarf_Addr base, start, end, first = 0;
	struct kfunc *f;
	ptrdiff_t it = 0;
	size_t n;

	if (!dwarf_lowpc(die, pc))
		return true;
	while ((it = dwarf_ranges(die, it, &base, &start, &end)) > 0) {
		if (!first)
			first = start;
		f = ksyms_text ? ksym_at(start + off, NULL) : NULL;
		n = f ? strlen(f->name) : 0;
		if (f && (n < 5 || strcmp(f->name + n - 5, ".cold"))) {
			*pc = start;
			return true;
		}
	}
	*pc = first;
	return first != 0;
}

/*
 * vmlinux's DWARF for :FILE, checked against the running kernel once and
 * kept for the next patterns (its sections are decompressed once: why's
 * defaults have dozens), its path in *@path.  NULL, said, if none.
 */
static struct {
	Dwarf *dw;
	int fd;
	char path[PATH_MAX];
} vml = { .fd = -1 };

static Dwarf *vmlinux_dwarf(const struct pat_opts *o, const char **path)
{
	if (!vml.dw) {
		vml.dw = find_vmlinux(o, vml.path, sizeof(vml.path), &vml.fd);
		if (vml.dw && check_build_id(vml.path, o->verbose)) {
			dwarf_end(vml.dw);
			close(vml.fd);
			vml.dw = NULL;
		}
	}
	*path = vml.path;
	return vml.dw;
}

static void vmlinux_dwarf_close(void)
{
	if (!vml.dw)
		return;
	dwarf_end(vml.dw);
	close(vml.fd);
	vml.dw = NULL;
	vml.fd = -1;
}

/* One function of a matching unit: placed by address, else by name. */
static void add_die(struct pat_list *l, Dwarf_Die *die, long long off,
		    const struct pat *p, const struct pat_opts *o,
		    unsigned int arg)
{
	Dwarf_Attribute a;
	const char *name;
	struct kfunc *f;
	Dwarf_Addr pc;

	if (dwarf_tag(die) != DW_TAG_subprogram ||
	    dwarf_hasattr(die, DW_AT_declaration) || !die_entry(die, off, &pc))
		return;
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	f = ksyms_text && pc ? ksym_at(pc + off, name) : NULL;
	if (f)
		add_named(l, f->name, f, p, o, arg);
	else if (name)
		add_named(l, name, NULL, p, o, arg);
}

static int match_files(struct pat_list *l, const struct pat *p,
		       const struct pat_opts *o, unsigned int arg)
{
	static unsigned int said_vmlinux;
	Dwarf_Off cu_off = 0, next;
	unsigned long long text;
	Dwarf_Die cu, die;
	long long off = 0;
	size_t hsize, nr_cus = 0;
	const char *name, *path;
	Dwarf *dw;
	int ret = 0;

	dw = vmlinux_dwarf(o, &path);
	if (!dw)
		return EXIT_ERROR;
	if (o->verbose && !said_vmlinux++)
		pr_err("source files: %s", path);
	text = elf_text(dwarf_getelf(dw));
	if (ksyms_text && text)
		off = (long long)(ksyms_text - text);
	while (!dwarf_nextcu(dw, cu_off, &next, &hsize, NULL, NULL, NULL)) {
		if (!dwarf_offdie(dw, cu_off + hsize, &cu))
			goto next;
		name = cu_path(&cu);
		if (!name || fnmatch(p->glob, name, FNM_PATHNAME))
			goto next;
		nr_cus++;
		if (dwarf_child(&cu, &die))
			goto next;
		do {
			add_die(l, &die, ksyms_text && text ? off : 0, p, o, arg);
		} while (!dwarf_siblingof(&die, &die));
next:
		cu_off = next;
	}
	if (!nr_cus) {
		if (!o->quiet_none)
			pr_err("%s: no source file of %s matches", p->arg, path);
		ret = EXIT_ERROR;
	} else if (!nr_matched) {
		if (!o->quiet_none)
			pr_err("%s: %zu source files match, with no function of their own",
			       p->arg, nr_cus);
		ret = EXIT_ERROR;
	}
	return ret;
}

#else /* !HAVE_LIBDW */

static void vmlinux_dwarf_close(void)
{
}

static int match_files(struct pat_list *l, const struct pat *p,
		       const struct pat_opts *o, unsigned int arg)
{
	(void)l;
	(void)o;
	(void)arg;
	pr_err("%s: lbr-snap was built without libdw: no :FILE patterns",
	       p->arg);
	return EXIT_ERROR;
}

#endif

static struct pat_match *alias_base;

static int cmp_alias(const void *a, const void *b)
{
	const struct pat_match *x = alias_base + *(const size_t *)a;
	const struct pat_match *y = alias_base + *(const size_t *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (!same_mod(x->mod, y->mod))
		return strcmp(x->mod ?: "", y->mod ?: "");
	return (x > y) - (x < y);
}

/*
 * Two attachable matches at one address (aliases): the module hooks one
 * function once, and says EEXIST to the second.  The later is refused.
 */
static void judge_aliases(struct pat_list *l)
{
	size_t *idx = xrealloc(NULL, (l->nr + 1) * sizeof(*idx)), n = 0, i;
	struct pat_match *m, *prev;

	for (i = 0; i < l->nr; i++)
		if (!l->m[i].why && !l->m[i].exact && l->m[i].addr)
			idx[n++] = i;
	alias_base = l->m;
	qsort(idx, n, sizeof(*idx), cmp_alias);
	for (i = 1; i < n; i++) {
		prev = &l->m[idx[i - 1]];
		m = &l->m[idx[i]];
		if (prev->addr != m->addr || !same_mod(prev->mod, m->mod))
			continue;
		m->why = PAT_ALIAS;
		set_detail(m, "same function as %s: attached once", prev->name);
		idx[i] = idx[i - 1];	/* the first stays the one compared */
	}
	free(idx);
}

/* "N functions, M to attach; refused: 2 not traceable, ..." */
static void say_counts(const struct pat *p, const struct pat_list *l,
		       size_t from, bool verbose)
{
	size_t counts[PAT_NR_WHY] = { 0 }, i, ok;
	char buf[1024];
	int n = 0;

	for (i = from; i < l->nr; i++)
		counts[l->m[i].why]++;
	ok = counts[PAT_OK];
	if (ok == l->nr - from)
		return;
	for (i = 1; i < PAT_NR_WHY; i++)
		if (counts[i])
			n += snprintf(buf + n, sizeof(buf) - n, "%s%zu %s",
				      n ? ", " : "", counts[i], what_why[i]);
	if (ok)
		pr_err("%s: %zu function%s, %zu to attach; refused: %s%s",
		       p->arg, l->nr - from, l->nr - from > 1 ? "s" : "", ok,
		       buf, verbose ? "" : " (-v or --dry-run lists them)");
	else
		pr_err("%s: %zu function%s, none can be attached: %s%s",
		       p->arg, l->nr - from, l->nr - from > 1 ? "s" : "", buf,
		       verbose ? "" : " (-v or --dry-run lists them)");
	if (!verbose)
		return;
	for (i = from; i < l->nr; i++)
		if (l->m[i].why)
			pr_err("%s: refused %s%s%s%s: %s", p->arg, l->m[i].name,
			       l->m[i].mod ? " [" : "",
			       l->m[i].mod ? l->m[i].mod : "",
			       l->m[i].mod ? "]" : "", l->m[i].detail);
}

static int resolve(const char *arg, unsigned int idx, const struct pat_opts *o,
		   struct pat_list *l, bool dry_run)
{
	size_t from = l->nr, i;
	struct pat p;
	int ret;

	nr_matched = 0;
	ret = parse(arg, &p);
	if (!ret)
		ret = read_kallsyms(o->kallsyms);
	if (!ret)
		ret = read_ftrace(o->verbose);
	if (ret)
		return ret;
	if (p.file) {
		ret = match_files(l, &p, o, idx);
		if (ret)
			return ret;
	} else {
		match_names(l, &p, o, idx);
	}
	if (!nr_matched && !pat_is_pattern(arg)) {
		pr_err("%s: no such function in kallsyms or available_filter_functions",
		       p.glob);
		return EXIT_ERROR;
	}
	if (!nr_matched) {
		if (!o->quiet_none)
			pr_err("%s: matches no function%s of kallsyms or available_filter_functions",
			       arg, p.scope[0] ? " in that scope" : "");
		return EXIT_ERROR;
	}
	judge_aliases(l);
	if (!dry_run)
		say_counts(&p, l, from, o->verbose);
	/* Each listed by an earlier argument already. */
	if (l->nr == from)
		return 0;
	for (i = from; i < l->nr; i++)
		if (!l->m[i].why)
			return 0;
	return dry_run ? 0 : EXIT_ERROR;
}

/*
 * "!PAT": the functions PAT matches are listed first, into a list thrown
 * away, so that no other argument lists them, wherever it comes.
 */
static void free_matches(struct pat_list *l);

static int exclude(const char *arg, unsigned int idx,
		   const struct pat_opts *o)
{
	struct pat_opts q = *o;
	struct pat_list x = { 0 };
	int ret;

	if (!arg[1] || arg[1] == '!') {
		pr_err("%s: expected !PATTERN, the functions to leave out", arg);
		return EXIT_USAGE;
	}
	q.quiet_none = o->lenient;
	ret = resolve(arg + 1, idx, &q, &x, true);
	if (!ret && o->verbose)
		pr_err("%s: %zu functions left out", arg, x.nr);
	free_matches(&x);
	return ret;
}

int pat_expand(char **args, const struct pat_opts *o, struct pat_list *l)
{
	struct pat_match *m;
	unsigned int i;
	size_t j;
	int ret = 0, r;

	for (i = 0; args[i]; i++) {
		if (args[i][0] != '!')
			continue;
		r = exclude(args[i], i, o);
		if (r == EXIT_ERROR && o->lenient)
			r = 0;
		if (r && (!ret || r == EXIT_USAGE))
			ret = r;
	}
	for (i = 0; args[i]; i++) {
		if (args[i][0] == '!')
			continue;
		if (pat_is_pattern(args[i]) || o->resolve_exact) {
			r = resolve(args[i], i, o, l, o->resolve_exact);
		} else {
			m = list_add(l, "", NULL, 0, i);
			snprintf(m->spec, sizeof(m->spec), "%s", args[i]);
			m->exact = true;
			r = 0;
		}
		if (r == EXIT_ERROR && o->lenient)
			r = 0;
		/* Every bad one said, the first's code kept. */
		if (r && (!ret || r == EXIT_USAGE))
			ret = r;
	}
	for (j = 0; j < l->nr; j++)
		l->nr_ok += !l->m[j].why;
	return ret;
}

void pat_print(FILE *f, const struct pat_list *l)
{
	const struct pat_match *m;
	size_t i;

	for (i = 0; i < l->nr; i++) {
		m = &l->m[i];
		if (m->why)
			fprintf(f, "refuse %s%s%s%s: %s\n", m->name,
				m->mod ? " [" : "", m->mod ? m->mod : "",
				m->mod ? "]" : "", m->detail);
		else
			fprintf(f, "attach %s%s%s%s%s%s\n", m->spec,
				m->mod ? " [" : "", m->mod ? m->mod : "",
				m->mod ? "]" : "", m->detail ? ": " : "",
				m->detail ? m->detail : "");
	}
}

/* A function of vmlinux at a known address, by fexit or the default. */
static bool batch_place(const struct pat_match *m)
{
	const char *hook = strchr(m->spec, '@');

	return !m->why && !m->mod && m->addr &&
	       (!hook || !strcmp(hook, "@fexit"));
}

bool pat_batchable(const struct pat_match *m)
{
	return batch_place(m) && !m->no_batch;
}

int pat_check_room(struct pat_list *l, unsigned int attached)
{
	unsigned int room = attached < LBR_SNAP_MAX_TARGETS ?
			    LBR_SNAP_MAX_TARGETS - attached : 0;
	size_t i, single = 0, refused = 0;
	bool many = l->nr_ok > room;

	l->nr_batch = 0;
	for (i = 0; i < l->nr; i++) {
		struct pat_match *m = &l->m[i];

		m->batch = many && pat_batchable(m);
		l->nr_batch += m->batch;
		single += !m->why && !m->batch && !batch_place(m);
	}
	if (l->nr_ok > LBR_SNAP_MAX_ALL_TARGETS) {
		pr_err("%zu functions to attach, the module takes %d in all: nothing attached; narrow the patterns (--dry-run lists them)",
		       l->nr_ok, LBR_SNAP_MAX_ALL_TARGETS);
		return EXIT_ERROR;
	}
	if (single > room) {
		pr_err("%zu functions to attach one by one (of modules, or with a hook other than fexit), the module takes %u more (%d at most outside batches, %u attached): nothing attached; narrow the patterns (--dry-run lists them)",
		       single, room, LBR_SNAP_MAX_TARGETS, attached);
		return EXIT_ERROR;
	}
	/* Those of vmlinux a batch cannot take: one by one while room lasts. */
	for (i = 0; many && i < l->nr; i++) {
		struct pat_match *m = &l->m[i];

		if (!batch_place(m) || m->batch)
			continue;
		if (single < room) {
			single++;
			continue;
		}
		set_detail(m, "%s; and the module's %d one by one are taken",
			   m->no_batch, LBR_SNAP_MAX_TARGETS);
		m->why = PAT_NO_BATCH;
		l->nr_ok--;
		refused++;
	}
	if (!refused)
		return 0;
	pr_err("%zu %s refused: not in a batch (no BTF prototype, a name BTF has twice, or stack arguments fexit cannot bound), and no room among the %d the module takes one by one (-v or --dry-run lists them)",
	       refused, refused == 1 ? "function" : "functions",
	       LBR_SNAP_MAX_TARGETS);
	/* A pattern left with only refused matches is bad input, as ever. */
	for (i = 0; i < l->nr; i++) {
		size_t j, ok = 0;

		if (l->m[i].why != PAT_NO_BATCH)
			continue;
		for (j = 0; j < l->nr; j++)
			ok += l->m[j].arg == l->m[i].arg && !l->m[j].why;
		if (!ok) {
			pr_err("a pattern's every match is refused: nothing attached");
			return EXIT_ERROR;
		}
	}
	return 0;
}

/* The matches of @l, not the functions listed so far. */
static void free_matches(struct pat_list *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++) {
		free(l->m[i].name);
		free(l->m[i].mod);
		free(l->m[i].detail);
	}
	free(l->m);
	memset(l, 0, sizeof(*l));
}

void pat_list_free(struct pat_list *l)
{
	size_t i;

	free_matches(l);
	vmlinux_dwarf_close();
	for (i = 0; i < seen.cap; i++)
		free((char *)seen.slot[i]);
	free(seen.slot);
	memset(&seen, 0, sizeof(seen));
}
