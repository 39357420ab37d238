// SPDX-License-Identifier: GPL-2.0
/*
 * Targets: parsing "sym[%type][/N][@hook]", the list of targets, and
 * attaching each to its hook (kretprobe_hook.c or fexit_hook.c).
 */
#include <linux/ctype.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "lbr_snap.h"
#include "lbr_own_names.h"
#include "fexit_slots.h"
#include "func_lookup.h"

/* The targets, in the order they were added; ids are never reused. */
static DEFINE_MUTEX(lbr_targets_lock);
static struct lbr_target *lbr_targets[LBR_SNAP_MAX_TARGETS];
static unsigned int lbr_nr_targets;
static u32 lbr_next_id;

/* The hook of targets without @hook: the hook= parameter. */
static enum lbr_hook_want lbr_default_hook = LBR_WANT_AUTO;

static const char * const lbr_ret_type_names[] = {
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
 * A spec holds symbol characters (as kallsyms has them: letters, digits,
 * '_', '.', '$'), the separators "%/@" and ',', and "=-" of an errno
 * list.  Checked before any of it is logged: other bytes, a newline
 * above all, would forge lines in the kernel log.
 */
static int lbr_spec_chars_ok(const char *spec)
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
static void lbr_targets_btf_done(struct lbr_btf *btf, bool ok)
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
 * stack arguments that are not there.
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
			pr_info("target '%s': several functions of this name in BTF: it is not used\n",
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
	"do_idle", "arch_cpu_idle_dead", "play_dead", "native_play_dead",
	"mwait_play_dead", "hlt_play_dead", "cpuidle_play_dead",
	"acpi_idle_play_dead", "intel_idle_enter_dead", "xen_pv_play_dead",
};

/* Is @name where an offline CPU's idle task stays?  No hook takes it. */
static bool lbr_on_offline_cpu_path(const char *name)
{
	return match_string(lbr_offline_cpu_path,
			    ARRAY_SIZE(lbr_offline_cpu_path), name) >= 0;
}

static struct lbr_target *lbr_target_new(char *tok, struct lbr_btf **btf)
{
	struct lbr_target *t = kzalloc(sizeof(*t), GFP_KERNEL);
	unsigned int i;
	int ret;

	if (!t)
		return ERR_PTR(-ENOMEM);
	t->slot = -1;
	ret = lbr_parse_one(tok, t);
	for (i = 0; !ret && i < lbr_nr_targets; i++) {
		if (!strcmp(lbr_targets[i]->name, t->name) &&
		    !lbr_targets[i]->gone) {
			pr_err("target '%s': listed twice\n", t->name);
			ret = -EEXIST;
		}
	}
	if (!ret)
		ret = lbr_target_resolve(t);
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
	for (i = 0; !ret && i < lbr_nr_targets; i++) {
		if (lbr_targets[i]->start == t->start && !lbr_targets[i]->gone) {
			pr_err("target '%s': same function as '%s'\n",
			       t->name, lbr_targets[i]->name);
			ret = -EEXIST;
		}
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

/*
 * Attach @t to the hook it asked for; "auto" tries fexit and falls back
 * to a kretprobe.  A kretprobe is registered disabled: the caller arms it
 * with lbr_kretprobe_enable() once every target is good.
 */
static int lbr_target_attach(struct lbr_target *t)
{
	enum lbr_hook_want want = t->want == LBR_WANT_DEFAULT ?
				  lbr_default_hook : t->want;
	int ret;

	if (want != LBR_WANT_KRETPROBE) {
		/* Its first records may come before this returns. */
		t->hook = LBR_SNAP_HOOK_FEXIT;
		ret = lbr_fexit_attach(t, want == LBR_WANT_FEXIT);
		if (!ret)
			return 0;
		if (want == LBR_WANT_FEXIT)
			return ret;
	}
	t->hook = LBR_SNAP_HOOK_KRETPROBE;
	return lbr_kretprobe_attach(t);
}

/*
 * Undo lbr_target_attach() for @n targets and free them: the kretprobe
 * ones here, after their handlers; the fexit ones once the last call
 * through their trampolines is over (fexit_hook.c).  Reorders @ts so each
 * hook detaches its own in one batch.
 */
static void lbr_targets_detach(struct lbr_target **ts, unsigned int n)
{
	unsigned int i, nkr = 0;

	for (i = 0; i < n; i++) {
		if (ts[i]->hook == LBR_SNAP_HOOK_KRETPROBE) {
			swap(ts[i], ts[nkr]);
			nkr++;
		}
	}
	lbr_kretprobe_detach(ts, nkr);
	for (i = 0; i < nkr; i++)
		lbr_target_free(ts[i]);
	lbr_fexit_detach(ts + nkr, n - nkr);
}

/*
 * The next spec of the list at *@cur, cut out: up to a comma that is
 * not followed by '-' (which goes on with an errno list).
 */
static char *lbr_next_spec(char **cur)
{
	char *s = *cur, *c = s;

	if (!s)
		return NULL;
	while ((c = strchr(c, ',')) && c[1] == '-')
		c++;
	if (c)
		*c++ = '\0';
	*cur = c;
	return s;
}

static unsigned int lbr_count_tokens(const char *s)
{
	unsigned int n = 1;

	while ((s = strchr(s, ',')) != NULL) {
		s++;
		n += *s != '-';
	}
	return n;
}

static void lbr_target_announce(struct lbr_target *t)
{
	char errs[LBR_TARGET_ERRNOS * 6 + 16] = "";
	unsigned int i, n = 0;

	for (i = 0; i < t->nr_errnos; i++)
		n += scnprintf(errs + n, sizeof(errs) - n, "%s-%u",
			       i ? "," : ", errors ", t->errnos[i]);
	pr_info("target %u: %s%%%s at %pS, %s%s%s%s%s\n", t->id, t->name,
		lbr_ret_type_names[t->ret_type], (void *)t->start,
		lbr_hook_name(t->hook), errs,
		t->no_fexit[0] ? " (not fexit: " : "", t->no_fexit,
		t->no_fexit[0] ? ")" : "");
}

/**
 * lbr_targets_register - register every target of a targets= string
 * @spec: "sym[%type][/N][@hook],..."
 *
 * All or nothing: on any error nothing stays registered and one line naming
 * the culprit is logged.
 */
int lbr_targets_register(const char *spec)
{
	struct lbr_btf *btf = NULL;
	char *buf, *cur, *tok;
	struct lbr_target *t;
	unsigned int i;
	int ret = 0;

	if (!spec || !*spec) {
		pr_err("no targets: load with targets=sym[%%type],...\n");
		return -EINVAL;
	}
	buf = kstrdup(spec, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	lbr_kretprobe_init();

	cur = strim(buf);
	if (lbr_count_tokens(cur) > LBR_SNAP_MAX_TARGETS) {
		pr_err("targets: more than %d targets\n", LBR_SNAP_MAX_TARGETS);
		kfree(buf);
		return -E2BIG;
	}
	mutex_lock(&lbr_targets_lock);
	while ((tok = lbr_next_spec(&cur)) != NULL) {
		t = lbr_target_new(strim(tok), &btf);
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			break;
		}
		/* An fexit target records from the moment it attaches. */
		t->id = lbr_next_id;
		ret = lbr_target_attach(t);
		if (ret) {
			lbr_target_free(t);
			break;
		}
		lbr_next_id++;
		lbr_targets[lbr_nr_targets++] = t;
	}
	mutex_unlock(&lbr_targets_lock);
	lbr_targets_btf_done(btf, !ret);
	kfree(buf);

	if (ret) {
		lbr_targets_unregister();
		return ret;
	}
	for (i = 0; i < lbr_nr_targets; i++) {
		lbr_kretprobe_enable(lbr_targets[i]);
		lbr_target_announce(lbr_targets[i]);
	}
	return 0;
}

/*
 * Remove the @i-th target; records already taken stay readable.  Waits
 * for running kretprobe handlers; fexit calls still inside the function
 * finish on their own and free the target after (or find lbr_snap gone
 * and record nothing).
 */
static void lbr_target_remove_locked(unsigned int i)
{
	struct lbr_target *t = lbr_targets[i];

	lockdep_assert_held(&lbr_targets_lock);
	for (; i + 1 < lbr_nr_targets; i++)
		lbr_targets[i] = lbr_targets[i + 1];
	lbr_targets[--lbr_nr_targets] = NULL;
	pr_info("target %u: %s removed (missed %lu)\n", t->id, t->name,
		lbr_kretprobe_missed(t));
	lbr_targets_detach(&t, 1);
}

static int lbr_target_find_locked(const char *name)
{
	unsigned int i;

	for (i = 0; i < lbr_nr_targets; i++)
		if (!strcmp(lbr_targets[i]->name, name))
			return i;
	return -ENOENT;
}

/*
 * The index of the gone target @spec names, or -ENOENT.  Added again, the
 * name resolves anew (its module may be back, at another address), and
 * the new target replaces the gone one once it is attached.
 */
static int lbr_target_gone_locked(const char *spec)
{
	char name[LBR_SNAP_NAME_LEN];
	int i;

	strscpy(name, spec, sizeof(name));
	name[strcspn(name, "%/@=")] = '\0';
	i = lbr_target_find_locked(strim(name));
	return i >= 0 && lbr_targets[i]->gone ? i : -ENOENT;
}

/**
 * lbr_target_add - add one target at run time
 * @spec: "sym[%type][/N][@hook][=-ERR,...]", validated as targets= is
 * @id: the new target's id
 * @hook: the hook it got
 */
int lbr_target_add(const char *spec, u32 *id, u32 *hook)
{
	char buf[LBR_SNAP_NAME_LEN + 8];
	struct lbr_btf *btf = NULL;
	struct lbr_target *t;
	int ret, gone;

	ret = lbr_spec_chars_ok(spec);
	if (ret)
		return ret;
	if (strscpy(buf, spec, sizeof(buf)) < 0) {
		pr_err("target '%.32s...': name longer than %d characters\n",
		       spec, LBR_SNAP_NAME_LEN - 1);
		return -ENAMETOOLONG;
	}
	lbr_kretprobe_init();
	mutex_lock(&lbr_targets_lock);
	gone = lbr_target_gone_locked(buf);
	if (lbr_nr_targets == LBR_SNAP_MAX_TARGETS && gone < 0) {
		pr_err("targets: more than %d targets\n", LBR_SNAP_MAX_TARGETS);
		ret = -E2BIG;
		goto out;
	}
	t = lbr_target_new(strim(buf), &btf);
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		goto out;
	}
	/* An fexit target records from the moment it attaches. */
	t->id = lbr_next_id;
	ret = lbr_target_attach(t);
	if (ret) {
		lbr_target_free(t);
		goto out;
	}
	lbr_next_id++;
	if (gone >= 0)
		lbr_target_remove_locked(gone);
	lbr_targets[lbr_nr_targets++] = t;
	lbr_kretprobe_enable(t);
	lbr_target_announce(t);
	*id = t->id;
	*hook = t->hook;
out:
	mutex_unlock(&lbr_targets_lock);
	lbr_targets_btf_done(btf, !ret);
	return ret;
}

/* Remove the target named @name; records already taken stay readable. */
int lbr_target_del(const char *name)
{
	int i;

	mutex_lock(&lbr_targets_lock);
	i = lbr_target_find_locked(name);
	if (i >= 0)
		lbr_target_remove_locked(i);
	mutex_unlock(&lbr_targets_lock);
	return i < 0 ? i : 0;
}

/*
 * A module that goes takes the hooks on its functions along: kprobes
 * marks their kretprobes gone, lbr_snap_fexit removes their direct calls.
 * Their targets stay listed, for their counters, and say they are gone.
 * Registered after lbr_snap_fexit's notifier (this module depends on
 * it), at the same priority: called after it.
 */
static int lbr_targets_module_event(struct notifier_block *nb,
				    unsigned long state, void *data)
{
	struct module *mod = data;
	unsigned int i;

	if (state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&lbr_targets_lock);
	for (i = 0; i < lbr_nr_targets; i++) {
		struct lbr_target *t = lbr_targets[i];

		if (t->gone || !within_module(t->start, mod))
			continue;
		/*
		 * lbr_snap_fexit's own notifier, before this one, unhooked
		 * the slots it knew of; one an add got while the module was
		 * already going is unhooked here, before ftrace drops the
		 * module's records (and could no longer remove the call).
		 */
		if (t->hook == LBR_SNAP_HOOK_FEXIT && t->slot >= 0)
			lbr_fexit_slot_unhook(t->slot, mod->name);
		WRITE_ONCE(t->gone, true);
		pr_info("target %u: %s: module %s goes, and its hook with it: delete the target, or add it again once the module is back\n",
			t->id, t->name, mod->name);
	}
	mutex_unlock(&lbr_targets_lock);
	return NOTIFY_DONE;
}

static struct notifier_block lbr_targets_module_nb = {
	.notifier_call = lbr_targets_module_event,
};

int lbr_targets_watch_modules(void)
{
	return register_module_notifier(&lbr_targets_module_nb);
}

void lbr_targets_unwatch_modules(void)
{
	unregister_module_notifier(&lbr_targets_module_nb);
}

void lbr_targets_unregister(void)
{
	unsigned int i;

	mutex_lock(&lbr_targets_lock);
	lbr_targets_detach(lbr_targets, lbr_nr_targets);
	for (i = 0; i < lbr_nr_targets; i++)
		lbr_targets[i] = NULL;
	lbr_nr_targets = 0;
	mutex_unlock(&lbr_targets_lock);
}

/**
 * lbr_targets_set_capture - capture every return, or errors only
 * @all: every return
 *
 * Under the targets' lock, as attaching a target is: a void target (no
 * return value to tell errors by) attaches only with capture=all, and
 * capture=errors is refused while one is attached, so the filter never
 * sees one.
 *
 * Return: 0, or -EBUSY (the kernel log names the target).
 */
int lbr_targets_set_capture(bool all)
{
	const struct lbr_target *t = NULL;
	unsigned int i;

	mutex_lock(&lbr_targets_lock);
	for (i = 0; !all && !t && i < lbr_nr_targets; i++)
		if (lbr_targets[i]->ret_type == LBR_SNAP_RET_VOID)
			t = lbr_targets[i];
	if (t) {
		pr_err_ratelimited("capture errors: target '%s' returns void; detach it first\n",
				   t->name);
	} else {
		/*
		 * The fexit trampolines let successes go before the capture
		 * sees them: they stop before the capture records them, and
		 * start after it no longer does.
		 */
		if (!all)
			lbr_capture_set_every_return(false);
		for (i = 0; i < lbr_nr_targets; i++)
			if (lbr_targets[i]->hook == LBR_SNAP_HOOK_FEXIT)
				lbr_fexit_recapture(lbr_targets[i], all);
		if (all)
			lbr_capture_set_every_return(true);
	}
	mutex_unlock(&lbr_targets_lock);
	return t ? -EBUSY : 0;
}

unsigned int lbr_targets_count(void)
{
	return READ_ONCE(lbr_nr_targets);
}

static void lbr_target_stats(const struct lbr_target *t,
			     struct lbr_snap_target_stats *st)
{
	int cpu;

	memset(st, 0, sizeof(*st));
	strscpy(st->name, t->name, sizeof(st->name));
	st->func_addr = t->start;
	st->id = t->id;
	st->ret_type = t->ret_type;
	st->hook = t->hook;
	st->nr_args = t->nargs;
	st->state = READ_ONCE(t->gone) ? LBR_SNAP_TARGET_GONE : 0;
	for_each_possible_cpu(cpu) {
		const struct lbr_counters *c = per_cpu_ptr(t->counters, cpu);

		st->hits += READ_ONCE(c->hits);
		st->captured += READ_ONCE(c->captured);
		st->filtered += READ_ONCE(c->filtered);
		st->dropped += READ_ONCE(c->dropped);
		st->recursion += READ_ONCE(c->recursion);
		st->lbr_off += READ_ONCE(c->lbr_off);
	}
	st->missed = lbr_kretprobe_missed(t);
	if (t->hook == LBR_SNAP_HOOK_FEXIT) {
		u64 quiet = lbr_fexit_quiet_returns(t);

		/* Let go by the trampoline: filtered before the capture. */
		st->hits += quiet;
		st->filtered += quiet;
		st->inflight = lbr_fexit_inflight(t);
	}
}

/**
 * lbr_targets_stats - the counters of every target
 * @st: room for LBR_SNAP_MAX_TARGETS entries
 * Return: the number of targets.
 */
unsigned int lbr_targets_stats(struct lbr_snap_target_stats *st)
{
	unsigned int i, n;

	mutex_lock(&lbr_targets_lock);
	n = lbr_nr_targets;
	for (i = 0; i < n; i++)
		lbr_target_stats(lbr_targets[i], &st[i]);
	mutex_unlock(&lbr_targets_lock);
	return n;
}
