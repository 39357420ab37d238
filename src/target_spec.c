// SPDX-License-Identifier: GPL-2.0
/*
 * What a target's spec says: parsing "sym[%type][/N][@hook][=-ERR,...]",
 * finding the function, what BTF says of it, and what no hook may take.
 * Nothing here knows the list of targets (targets.c).
 */
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "lbr_snap.h"
#include "lbr_own_names.h"
#include "fexit_slots.h"
#include "func_lookup.h"
#include "target_spec.h"

/* The hook of targets without @hook: the hook= parameter. */
enum lbr_hook_want lbr_default_hook = LBR_WANT_AUTO;

const char * const lbr_ret_type_names[] = {
	[LBR_SNAP_RET_INT] = "int",
	[LBR_SNAP_RET_LONG] = "long",
	[LBR_SNAP_RET_PTR] = "ptr",
	[LBR_SNAP_RET_BOOL] = "bool",
	[LBR_SNAP_RET_VOID] = "void",
};

static const char * const lbr_hook_names[] = {
	[LBR_WANT_KRETPROBE] = "kretprobe",
	[LBR_WANT_FEXIT] = "fexit",
	[LBR_WANT_AUTO] = "auto",
};

static int lbr_hook_lookup(const char *s)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lbr_hook_names); i++)
		if (lbr_hook_names[i] && sysfs_streq(s, lbr_hook_names[i]))
			return i;
	return -EINVAL;
}

/**
 * lbr_targets_set_hook - the hook= parameter
 * @hook: kretprobe, fexit or auto
 */
int lbr_targets_set_hook(const char *hook)
{
	int h = lbr_hook_lookup(hook);

	if (h < 0) {
		pr_err("hook=%s: use kretprobe, fexit or auto\n", hook);
		return h;
	}
	lbr_default_hook = h;
	return 0;
}

const char *lbr_hook_name(u8 hook)
{
	return hook == LBR_SNAP_HOOK_FEXIT ? "fexit" : "kretprobe";
}

/*
 * Functions the capture path runs through.  A probe on them could only
 * ever count misses (kprobes do not nest) or recurse (fexit), so refuse
 * them up front.
 */
static const char * const lbr_own_path_prefixes[] = {
	LBR_OWN_PATH_PREFIXES,
};

/*
 * ... and, with stack_depth=, the unwinder's (call_stack.c), by exact
 * name: a return of one of them inside a capture is counted as
 * recursion, and an fexit one would freeze and unfreeze LBR once a frame.
 */
static const char * const lbr_unwind_names[] = {
	LBR_UNWIND_NAMES,
};

/* @name starts with one of @prefixes, or is one of them with @exact. */
static bool lbr_name_in(const char *name, const char * const *prefixes,
			unsigned int n, bool exact)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (exact ? !strcmp(name, prefixes[i]) :
			    !strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static bool lbr_on_own_path(const struct lbr_target *t)
{
	if (within_module(t->start, THIS_MODULE) || lbr_fexit_owns(t->start))
		return true;
	if (lbr_name_in(t->name, lbr_own_path_prefixes,
			ARRAY_SIZE(lbr_own_path_prefixes), false))
		return true;
	return lbr_stack_depth() &&
	       lbr_name_in(t->name, lbr_unwind_names,
			   ARRAY_SIZE(lbr_unwind_names), true);
}

/* Find the function, refusing what kprobes refuse (lbr_func_lookup()). */
static int lbr_target_resolve(struct lbr_target *t)
{
	int ret = lbr_func_lookup(t->name, &t->start, &t->size);

	if (ret == -ENODATA) {
		pr_err("target '%s': cannot find the function's entry\n",
		       t->name);
		return -ENOENT;
	}
	if (ret) {
		pr_err("target '%s': %s (%d)\n", t->name,
		       ret == -ENOENT ? "unknown symbol" :
		       "kprobes refuse this function", ret);
		return ret;
	}
	if (lbr_on_own_path(t)) {
		pr_err("target '%s': on lbr_snap's own capture path\n",
		       t->name);
		return -EPERM;
	}
	return 0;
}

/*
 * The function at @addr, which must be @t's entry in vmlinux: kallsyms
 * says so, a lookup by address, where one by name is a walk of every
 * symbol.  What kprobes refuse is checked by the caller, for a batch at
 * once (lbr_targets_add_batch()).
 */
static int lbr_target_at(struct lbr_target *t, unsigned long addr)
{
	char buf[KSYM_SYMBOL_LEN];
	unsigned long off, size;
	size_t len = strlen(t->name);
	int n = 0;

	sprint_symbol(buf, addr);
	if (strncmp(buf, t->name, len) ||
	    sscanf(buf + len, "+%lx/%lx%n", &off, &size, &n) != 2 || off) {
		pr_err("target '%s': not the function at %#lx, %s\n", t->name,
		       addr, buf);
		return -ENOENT;
	}
	if (buf[len + n]) {
		pr_err("target '%s': by address, functions of vmlinux only: this one is in a module\n",
		       t->name);
		return -EINVAL;
	}
	t->start = addr;
	t->size = size;
	if (lbr_on_own_path(t)) {
		pr_err("target '%s': on lbr_snap's own capture path\n",
		       t->name);
		return -EPERM;
	}
	return 0;
}

/* Is @t's function in a module, not in vmlinux? */
bool lbr_target_in_module(const struct lbr_target *t)
{
	char buf[KSYM_SYMBOL_LEN];

	sprint_symbol(buf, t->start);
	return strchr(buf, ' ') != NULL;
}

/*
 * A spec holds symbol characters (as kallsyms has them: letters, digits,
 * '_', '.', '$'), the separators "%/@" and ',', and "=-" of an errno
 * list.  Checked before any of it is logged: other bytes, a newline
 * above all, would forge lines in the kernel log.
 */
int lbr_spec_chars_ok(const char *spec)
{
	const char *c;

	for (c = spec; *c; c++) {
		if (isalnum(*c) || strchr("_.$%/@,=-", *c))
			continue;
		pr_err("targets: byte %#04x at %zu cannot be in a target spec\n",
		       (unsigned char)*c, (size_t)(c - spec));
		return -EINVAL;
	}
	return 0;
}

/* "-EINVAL" or "-22": an errno, by number or name (errno_names.c). */
static int lbr_errno_parse(const char *s)
{
	int e;

	if (*s != '-')
		return -EINVAL;
	if (!kstrtoint(s + 1, 10, &e))
		return e >= 1 && e <= MAX_ERRNO ? e : -EINVAL;
	e = lbr_errno_by_name(s + 1);
	return e ? e : -EINVAL;
}

/*
 * "=-ERR,-ERR...": the errors @t is to record, at most
 * LBR_TARGET_ERRNOS; any other return of it is filtered.
 */
static int lbr_parse_errnos(char *list, struct lbr_target *t)
{
	char *e;
	int n;

	while ((e = strsep(&list, ",")) != NULL) {
		n = lbr_errno_parse(e);
		if (n < 0) {
			pr_err("target '%s': '%s' is not an errno (-ENAME or -N, 1 to %d)\n",
			       t->name, e, MAX_ERRNO);
			return -EINVAL;
		}
		if (t->nr_errnos == LBR_TARGET_ERRNOS) {
			pr_err("target '%s': more than %d errnos\n", t->name,
			       LBR_TARGET_ERRNOS);
			return -EINVAL;
		}
		t->errnos[t->nr_errnos++] = n;
	}
	return 0;
}

/* "sym[%type][/N][@hook][=-ERR,...]", parsed from the end. */
static int lbr_parse_one(char *tok, struct lbr_target *t)
{
	char *errs = strchr(tok, '=');
	char *hook, *nargs, *type;
	unsigned int i, n;
	int h;

	h = lbr_spec_chars_ok(tok);
	if (h)
		return h;
	if (errs)
		*errs++ = '\0';
	if (strpbrk(tok, ",-")) {
		pr_err("target '%s': one target at a time, an errno list after '='\n",
		       tok);
		return -EINVAL;
	}
	hook = strrchr(tok, '@');
	nargs = strrchr(tok, '/');
	type = strrchr(tok, '%');
	t->want = LBR_WANT_DEFAULT;
	if (hook) {
		*hook++ = '\0';
		h = lbr_hook_lookup(hook);
		if (h < 0) {
			pr_err("target '%s': unknown hook '%s' (kretprobe, fexit, auto)\n",
			       tok, hook);
			return -EINVAL;
		}
		t->want = h;
	}
	t->nargs = -1;
	if (nargs) {
		*nargs++ = '\0';
		if (kstrtouint(nargs, 10, &n) || n > 127) {
			pr_err("target '%s': bad argument count '%s'\n", tok,
			       nargs);
			return -EINVAL;
		}
		t->nargs = n;
	}
	if (type) {
		*type++ = '\0';
		for (i = 0; i < ARRAY_SIZE(lbr_ret_type_names); i++)
			if (!strcmp(type, lbr_ret_type_names[i]))
				break;
		if (i == ARRAY_SIZE(lbr_ret_type_names)) {
			pr_err("target '%s': unknown return type '%s' (int, long, ptr, bool, void)\n",
			       tok, type);
			return -EINVAL;
		}
		t->ret_type = i;
		t->typed = true;
	}
	if (!*tok) {
		pr_err("targets: empty symbol name\n");
		return -EINVAL;
	}
	if (strlen(tok) >= LBR_SNAP_NAME_LEN) {
		pr_err("target '%.32s...': name longer than %d characters\n",
		       tok, LBR_SNAP_NAME_LEN - 1);
		return -ENAMETOOLONG;
	}
	/* sym%type/N@hook, each once: what is left is the symbol alone. */
	if (strpbrk(tok, "%/@")) {
		pr_err("target '%s': '%%', '/' and '@' come at most once each\n",
		       tok);
		return -EINVAL;
	}
	strscpy(t->name, tok, sizeof(t->name));
	return errs ? lbr_parse_errnos(errs, t) : 0;
}

void lbr_target_free(struct lbr_target *t)
{
	free_percpu(t->counters);
	kfree(t);
}

/*
 * Done with the BTF lbr_target_btf() opened, if it did.  After a load or
 * an add that worked, say why BTF was there but could not be read: a
 * failed one has said its one line.
 */
void lbr_targets_btf_done(struct lbr_btf *btf, bool ok)
{
	if (ok && IS_ERR(btf) && PTR_ERR(btf) != -ENOENT)
		pr_info("no BTF from /sys/kernel/btf/vmlinux (%ld): return types from the specs only\n",
			PTR_ERR(btf));
	lbr_btf_close(btf);
}

/*
 * What vmlinux's BTF says of @t (nothing without BTF, or for a module's
 * function): the return type when the spec gave none, a warning when it
 * gave another (refused when BTF says void: there is no value to tell
 * errors by); the argument count; and whether every argument is in a
 * register, which spares the fexit hook copying stack words.  A user's
 * /N is never taken for that: a wrong one would have the function read
 * stack arguments that are not there.  Without BTF's count, fexit takes
 * the user's /N where fexit was asked for (fexit_hook.c), copying all of
 * LBR_FEXIT_STACK_WORDS all the same.
 *
 * Return: 0, or -EINVAL for a %type where BTF says void.
 */
static int lbr_target_btf(struct lbr_target *t, struct lbr_btf **btfp)
{
	struct lbr_btf *btf;
	const char *const *names = lbr_ret_type_names;
	struct lbr_btf_func fi;
	int ret;

	t->btf_reg_args = -1;
	t->stack_words = LBR_BTF_STACK_UNKNOWN;
	/* Opened for the first good target only: a bad spec reads nothing. */
	if (!*btfp)
		*btfp = lbr_btf_open();
	btf = *btfp;
	if (IS_ERR(btf))
		return 0;
	ret = lbr_btf_func(btf, t->name, &fi);
	if (ret) {
		if (ret == -ENOTUNIQ)
			pr_info_ratelimited("target '%s': several functions of this name in BTF: it is not used\n",
					    t->name);
		return 0;
	}
	t->stack_words = fi.stack_words;
	if (fi.ret_type == LBR_BTF_RET_VOID)
		fi.ret_type = LBR_SNAP_RET_VOID;
	if (fi.ret_type >= 0 && !t->typed) {
		t->ret_type = fi.ret_type;
	} else if (fi.ret_type == LBR_SNAP_RET_VOID &&
		   t->ret_type != LBR_SNAP_RET_VOID) {
		pr_err("target '%s': BTF says it returns void, the spec says %s: RAX holds no return value\n",
		       t->name, names[t->ret_type]);
		return -EINVAL;
	} else if (fi.ret_type >= 0 && t->ret_type == LBR_SNAP_RET_VOID) {
		pr_warn("target '%s': BTF says it returns %s, the spec says void: its returns are recorded as void\n",
			t->name, names[fi.ret_type]);
	} else if (fi.ret_type >= 0 && fi.ret_type != t->ret_type) {
		pr_warn("target '%s': BTF says it returns %s, the spec says %s: errors are told by %s\n",
			t->name, names[fi.ret_type], names[t->ret_type],
			names[t->ret_type]);
	}
	if (fi.nargs < 0)
		return 0;
	if (t->nargs >= 0 && t->nargs != fi.nargs)
		pr_warn("target '%s': BTF says %d arguments, the spec %d: BTF's count is used\n",
			t->name, fi.nargs, t->nargs);
	t->nargs = fi.nargs;
	t->btf_reg_args = fi.nargs;
	return 0;
}

/*
 * Where an offline CPU's idle task stays (arch/x86/kernel/smpboot.c and
 * below): an fexit call would never return, and no hook takes them: they run
 * where the CPU has reported its death, and a capture has nothing to tell
 * there (with kretprobes on them, CPU hotplug stalled on 7.2 in the lab;
 * a stall there without them was seen too, and is not explained yet).
 */
static const char *const lbr_offline_cpu_path[] = {
	LBR_OFFLINE_CPU_NAMES,
};

/* Is @name where an offline CPU's idle task stays?  No hook takes it. */
static bool lbr_on_offline_cpu_path(const char *name)
{
	return match_string(lbr_offline_cpu_path,
			    ARRAY_SIZE(lbr_offline_cpu_path), name) >= 0;
}

/**
 * lbr_target_new - a target from its spec, resolved and checked
 * @tok: "sym[%type][/N][@hook][=-ERR,...]", cut in place
 * @addr: the function's entry, or 0 to find it by name
 * @btf: vmlinux's BTF, opened at the first call (lbr_targets_btf_done())
 *
 * Not checked against the other targets, not attached.  The log says
 * why a spec is refused.
 *
 * Return: the target, or an ERR_PTR.
 */
struct lbr_target *lbr_target_new(char *tok, unsigned long addr,
				  struct lbr_btf **btf)
{
	struct lbr_target *t = kzalloc(sizeof(*t), GFP_KERNEL);
	int ret;

	if (!t)
		return ERR_PTR(-ENOMEM);
	t->slot = -1;
	ret = lbr_parse_one(tok, t);
	if (!ret)
		ret = addr ? lbr_target_at(t, addr) : lbr_target_resolve(t);
	if (!ret && lbr_on_offline_cpu_path(t->name)) {
		pr_err("target '%s': an offline CPU's idle task stays inside it: no hook takes it\n",
		       t->name);
		ret = -EINVAL;
	}
	if (!ret)
		ret = lbr_target_btf(t, btf);
	if (!ret && t->nr_errnos && (t->ret_type == LBR_SNAP_RET_BOOL ||
				     t->ret_type == LBR_SNAP_RET_VOID)) {
		pr_err("target '%s': returns %s, which has no errno to list\n",
		       t->name, lbr_ret_type_names[t->ret_type]);
		ret = -EINVAL;
	}
	if (!ret && t->ret_type == LBR_SNAP_RET_VOID &&
	    !lbr_capture_every_return()) {
		pr_err("target '%s': returns void: capture=errors has no error to catch; capture=all records every return\n",
		       t->name);
		ret = -EINVAL;
	}
	if (!ret) {
		t->counters = alloc_percpu(struct lbr_counters);
		if (!t->counters)
			ret = -ENOMEM;
	}
	if (ret) {
		lbr_target_free(t);
		return ERR_PTR(ret);
	}
	return t;
}
