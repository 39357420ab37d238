// SPDX-License-Identifier: GPL-2.0
/*
 * Targets: the list of targets, and attaching each to its hook
 * (kretprobe_hook.c or fexit_hook.c); target_spec.c makes them.
 */
#include <linux/ctype.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "lbr_snap.h"
#include "fexit_slots.h"
#include "target_spec.h"

/*
 * The targets, in the order they were added, which is the order of their
 * ids: ids are never reused.
 */
static DEFINE_MUTEX(lbr_targets_lock);
static struct lbr_target **lbr_targets;
static unsigned int lbr_nr_targets, lbr_targets_room;
static u32 lbr_next_id;
/* Of the targets, a batch's (lbr_targets_counted_locked()): read unlocked. */
static unsigned int lbr_nr_batch_targets;

/* Room in the list for @more targets on top of those in it. */
static int lbr_targets_grow_locked(unsigned int more)
{
	unsigned int want = lbr_nr_targets + more, room;
	struct lbr_target **ts;

	lockdep_assert_held(&lbr_targets_lock);
	if (want <= lbr_targets_room)
		return 0;
	if (want > LBR_SNAP_MAX_ALL_TARGETS) {
		pr_err("targets: more than %d in all\n",
		       LBR_SNAP_MAX_ALL_TARGETS);
		return -E2BIG;
	}
	room = clamp(max(want, 2 * lbr_targets_room), 64U,
		     (unsigned int)LBR_SNAP_MAX_ALL_TARGETS);
	ts = kvmalloc_array(room, sizeof(*ts), GFP_KERNEL);
	if (!ts)
		return -ENOMEM;
	if (lbr_nr_targets)
		memcpy(ts, lbr_targets, lbr_nr_targets * sizeof(*ts));
	kvfree(lbr_targets);
	lbr_targets = ts;
	lbr_targets_room = room;
	return 0;
}

/* Targets added one by one, not by a batch: at most 64. */
static unsigned int lbr_targets_single_locked(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < lbr_nr_targets; i++)
		n += !lbr_targets[i]->batch;
	return n;
}

/* The list changed: count a batch's targets again. */
static void lbr_targets_counted_locked(void)
{
	lockdep_assert_held(&lbr_targets_lock);
	WRITE_ONCE(lbr_nr_batch_targets,
		   lbr_nr_targets - lbr_targets_single_locked());
}

/* Is @t's function, or its name, a target already?  Says which. */
static int lbr_target_dup_locked(const struct lbr_target *t)
{
	unsigned int i;

	for (i = 0; i < lbr_nr_targets; i++) {
		const struct lbr_target *o = lbr_targets[i];

		if (o->gone)
			continue;
		if (!strcmp(o->name, t->name)) {
			pr_err("target '%s': listed twice\n", t->name);
			return -EEXIST;
		}
		if (o->start == t->start) {
			pr_err("target '%s': same function as '%s'\n",
			       t->name, o->name);
			return -EEXIST;
		}
	}
	return 0;
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
	ret = lbr_targets_grow_locked(lbr_count_tokens(cur));
	while (!ret && (tok = lbr_next_spec(&cur)) != NULL) {
		t = lbr_target_new(strim(tok), 0, &btf);
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			break;
		}
		ret = lbr_target_dup_locked(t);
		if (ret) {
			lbr_target_free(t);
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
		ret = lbr_kretprobe_enable(lbr_targets[i]);
		if (ret) {
			pr_err("target '%s': kprobes cannot arm its kretprobe (%d)\n",
			       lbr_targets[i]->name, ret);
			lbr_targets_unregister();
			return ret;
		}
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
	lbr_targets_counted_locked();
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
	if (lbr_targets_single_locked() >= LBR_SNAP_MAX_TARGETS && gone < 0) {
		pr_err("targets: more than %d targets, other than a batch's\n",
		       LBR_SNAP_MAX_TARGETS);
		ret = -E2BIG;
		goto out;
	}
	ret = lbr_targets_grow_locked(1);
	if (ret)
		goto out;
	t = lbr_target_new(strim(buf), 0, &btf);
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		goto out;
	}
	ret = lbr_target_dup_locked(t);
	if (ret) {
		lbr_target_free(t);
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
	ret = lbr_kretprobe_enable(t);
	if (ret) {
		pr_err("target '%s': kprobes cannot arm its kretprobe (%d)\n",
		       t->name, ret);
		lbr_targets_detach(&t, 1);
		goto out;
	}
	if (gone >= 0)
		lbr_target_remove_locked(gone);
	lbr_targets[lbr_nr_targets++] = t;
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
	mutex_lock(&lbr_targets_lock);
	lbr_targets_detach(lbr_targets, lbr_nr_targets);
	lbr_nr_targets = 0;
	lbr_targets_counted_locked();
	kvfree(lbr_targets);
	lbr_targets = NULL;
	lbr_targets_room = 0;
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

/**
 * lbr_targets_check_entry - every kretprobe tests at its entry for the
 *	task the tree filter leaves out (lbr_kretprobe_check_entry())
 *
 * Process context, before the tree filter is set (the word is NULL until
 * it is: the handler lets nothing go before).  Once, for good: then at
 * once.  Waits for a batch being attached, killably.
 * Return: 0, or -EINTR.
 */
int lbr_targets_check_entry(void)
{
	unsigned int i;

	if (lbr_kretprobe_entry_checked())
		return 0;
	if (mutex_lock_killable(&lbr_targets_lock))
		return -EINTR;
	lbr_kretprobe_check_entry(NULL);
	for (i = 0; i < lbr_nr_targets; i++)
		lbr_kretprobe_check_entry(lbr_targets[i]);
	mutex_unlock(&lbr_targets_lock);
	return 0;
}

unsigned int lbr_targets_count(void)
{
	return READ_ONCE(lbr_nr_targets);
}

/*
 * Targets a batch added (those outside one count against the 64), for
 * GET_INFO: without the lock, which a batch holds for as long as ftrace
 * takes to hook it.
 */
unsigned int lbr_targets_count_batch(void)
{
	return READ_ONCE(lbr_nr_batch_targets);
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
 * lbr_targets_stats - the counters of the first targets
 * @st: room for @room entries
 * @room: how many
 * Return: the number of targets.
 */
unsigned int lbr_targets_stats(struct lbr_snap_target_stats *st,
			       unsigned int room)
{
	unsigned int i, n;

	mutex_lock(&lbr_targets_lock);
	n = lbr_nr_targets;
	for (i = 0; i < min(n, room); i++)
		lbr_target_stats(lbr_targets[i], &st[i]);
	mutex_unlock(&lbr_targets_lock);
	return n;
}

/* A target of a batch and its entry, or an old target (@entry -1). */
struct lbr_batch_item {
	struct lbr_target *t;
	int entry;
};

static int lbr_item_by_start(const void *a, const void *b)
{
	const struct lbr_batch_item *x = a, *y = b;

	if (x->t->start != y->t->start)
		return x->t->start < y->t->start ? -1 : 1;
	return x->entry - y->entry;
}

static int lbr_item_by_name(const void *a, const void *b)
{
	const struct lbr_batch_item *x = a, *y = b;
	int c = strcmp(x->t->name, y->t->name);

	return c ? c : x->entry - y->entry;
}

/*
 * Refuse, with -EEXIST in its entry, each new target of @it (@n of them,
 * @nr_old old ones first) whose function or name a target before it in
 * @cmp's order has: the old ones sort first, so an old target is kept.
 * Sorting, not a walk of the list for each one: a batch is thousands.
 */
static void lbr_batch_dups(struct lbr_batch_item *it, unsigned int n,
			   struct lbr_snap_target_entry *e,
			   int (*cmp)(const void *, const void *), bool name)
{
	unsigned int i, keep = 0;

	sort(it, n, sizeof(*it), cmp, NULL);
	for (i = 1; i < n; i++) {
		struct lbr_target *a = it[keep].t, *b = it[i].t;
		bool same = name ? !strcmp(a->name, b->name) :
				   a->start == b->start;

		if (!same || it[i].entry < 0) {
			keep = i;
			continue;
		}
		if (e[it[i].entry].error)
			continue;
		pr_err("target '%s': %s '%s'\n", b->name,
		       name ? "listed twice, as" : "same function as",
		       a->name);
		e[it[i].entry].error = -EEXIST;
	}
}

/*
 * Check the new targets @ts (entries @idx of @e) against the targets and
 * each other.  Return: 0, or -ENOMEM.
 */
static int lbr_batch_check_dups_locked(struct lbr_target **ts,
				       const u32 *idx, unsigned int n,
				       struct lbr_snap_target_entry *e)
{
	struct lbr_batch_item *it;
	unsigned int i, m = 0;

	it = kvmalloc_array(lbr_nr_targets + n, sizeof(*it), GFP_KERNEL);
	if (!it)
		return -ENOMEM;
	for (i = 0; i < lbr_nr_targets; i++)
		if (!lbr_targets[i]->gone)
			it[m++] = (struct lbr_batch_item){ lbr_targets[i], -1 };
	for (i = 0; i < n; i++)
		if (!e[idx[i]].error)
			it[m++] = (struct lbr_batch_item){ ts[i], idx[i] };
	lbr_batch_dups(it, m, e, lbr_item_by_start, false);
	lbr_batch_dups(it, m, e, lbr_item_by_name, true);
	kvfree(it);
	return 0;
}

/*
 * May @t, refused by fexit in a batch, take a kretprobe?  Its spec's
 * "@auto", or @fallback (LBR_SNAP_BATCH_FALLBACK) unless it said "@fexit".
 */
static bool lbr_batch_may_kretprobe(const struct lbr_target *t, bool fallback)
{
	return t->want == LBR_WANT_AUTO ||
	       (fallback && t->want != LBR_WANT_FEXIT);
}

#define LBR_BATCH_NO_ROOM \
	"past the direct calls ftrace takes, or the free trampolines"

/* @t takes a kretprobe for @why, which fexit could not do. */
static void lbr_batch_to_kretprobe(struct lbr_target *t, const char *why)
{
	t->hook = LBR_SNAP_HOOK_KRETPROBE;
	if (why)
		strscpy(t->no_fexit, why, sizeof(t->no_fexit));
}

/*
 * What kprobes refuse (the kprobes blacklist, noinstr code), as
 * lbr_func_lookup() checks for one target, and where ftrace has no site
 * (kprobes say where they have one: KPROBES_ON_FTRACE, which a kernel
 * with direct calls has in practice), of the targets fexit is to take:
 * kprobes registered disabled, never armed, and unregistered together,
 * one grace period for all.  A refusal goes to the target's entry (a
 * kretprobe would need the ftrace site too: lbr_kretprobe_attach()).
 * Return: 0, or -ENOMEM.
 */
static int lbr_batch_kprobe_check(struct lbr_target **ts, const u32 *idx,
				  unsigned int n,
				  struct lbr_snap_target_entry *e)
{
	struct kprobe *kps, **reg;
	unsigned int i, nr = 0;
	int ret;

	kps = kvcalloc(n, sizeof(*kps), GFP_KERNEL);
	reg = kvcalloc(n, sizeof(*reg), GFP_KERNEL);
	if (!kps || !reg) {
		kvfree(kps);
		kvfree(reg);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		/* A kretprobe's own registration says what kprobes refuse. */
		if (ts[i]->hook != LBR_SNAP_HOOK_FEXIT)
			continue;
		kps[i].addr = (kprobe_opcode_t *)ts[i]->start;
		kps[i].flags = KPROBE_FLAG_DISABLED;
		ret = register_kprobe(&kps[i]);
		if (ret) {
			pr_err("target '%s': kprobes refuse this function (%d)\n",
			       ts[i]->name, ret);
			e[idx[i]].error = ret;
			continue;
		}
		reg[nr++] = &kps[i];
		/*
		 * Where the probe went is an ftrace site, or ftrace cannot
		 * hook the function and would refuse the whole group.
		 */
		if (kps[i].flags & KPROBE_FLAG_FTRACE)
			continue;
		pr_err("target '%s': not traceable: no ftrace site at its entry\n",
		       ts[i]->name);
		e[idx[i]].error = -EINVAL;
	}
	if (nr)
		unregister_kprobes(reg, nr);
	kvfree(reg);
	kvfree(kps);
	return 0;
}

/*
 * The target of entry @e, or an ERR_PTR: its spec, of a function of
 * vmlinux, hooked by fexit, or by a kretprobe where its spec asks for
 * one, or where fexit cannot take it and lbr_batch_may_kretprobe() (the
 * reason in the target's no_fexit).
 */
static struct lbr_target *lbr_batch_target(struct lbr_snap_target_entry *e,
					    struct lbr_btf **btf,
					    bool fallback)
{
	struct lbr_target *t;
	int ret;

	e->spec[sizeof(e->spec) - 1] = '\0';
	ret = lbr_spec_chars_ok(e->spec);
	if (ret)
		return ERR_PTR(ret);
	t = lbr_target_new(strim(e->spec), e->addr, btf);
	if (IS_ERR(t))
		return t;
	t->batch = true;
	if (lbr_target_in_module(t)) {
		pr_err("target '%s': a batch takes functions of vmlinux only\n",
		       t->name);
		lbr_target_free(t);
		return ERR_PTR(-EINVAL);
	}
	t->hook = LBR_SNAP_HOOK_KRETPROBE;
	if (t->want == LBR_WANT_KRETPROBE)
		return t;
	/* Why not fexit goes to no_fexit, said as the kretprobe's reason. */
	ret = lbr_fexit_check_many(t);
	if (ret && !lbr_batch_may_kretprobe(t, fallback)) {
		pr_err("target '%s': fexit: %s\n", t->name, t->no_fexit);
		lbr_target_free(t);
		return ERR_PTR(ret);
	}
	if (!ret)
		t->hook = LBR_SNAP_HOOK_FEXIT;
	return t;
}

/*
 * A batch's entries that will be fexit's if good: those whose spec does
 * not ask for "@kretprobe" or "@auto" (found before any entry is looked
 * at, for lbr_fexit_batch_room()).
 */
static unsigned int lbr_batch_fexit_specs(const struct lbr_snap_target_entry *e,
					  unsigned int nr)
{
	unsigned int i, n = 0;

	for (i = 0; i < nr; i++) {
		const char *hook = strnchr(e[i].spec, sizeof(e[i].spec), '@');

		n += !hook || (strncmp(hook, "@kretprobe", 10) &&
			       strncmp(hook, "@auto", 5));
	}
	return n;
}

/*
 * The fexit targets of @ts past what fexit takes now
 * (lbr_fexit_batch_quota()) take a kretprobe where
 * lbr_batch_may_kretprobe(); the others' entries get -E2BIG.  Those
 * whose spec said "@fexit" are given the room first.  Without @fallback
 * a batch past the room was refused before, so this is for others that
 * took room since.  Under the targets' lock.
 */
static void lbr_batch_past_quota_locked(struct lbr_target **ts,
					const u32 *idx, unsigned int n,
					struct lbr_snap_target_entry *e,
					bool fallback)
{
	unsigned int i, pass, want = 0, quota;

	lockdep_assert_held(&lbr_targets_lock);
	for (i = 0; i < n; i++)
		want += !e[idx[i]].error && ts[i]->hook == LBR_SNAP_HOOK_FEXIT;
	quota = lbr_fexit_batch_quota(want);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			struct lbr_target *t = ts[i];

			if (e[idx[i]].error || t->hook != LBR_SNAP_HOOK_FEXIT ||
			    (t->want == LBR_WANT_FEXIT) != !pass)
				continue;
			if (quota) {
				quota--;
				continue;
			}
			if (lbr_batch_may_kretprobe(t, fallback)) {
				lbr_batch_to_kretprobe(t, LBR_BATCH_NO_ROOM);
				continue;
			}
			pr_err_ratelimited("target '%s': fexit: no room left for its direct call or trampoline\n",
					   t->name);
			e[idx[i]].error = -E2BIG;
		}
	}
}

/*
 * The kretprobe targets of @ts from @from on are not to be registered:
 * their entries -ECANCELED, so that nothing takes them for registered.
 */
static void lbr_batch_cancel(struct lbr_target **ts, const u32 *idx,
			     unsigned int from, unsigned int n,
			     struct lbr_snap_target_entry *e)
{
	for (; from < n; from++)
		if (!e[idx[from]].error &&
		    ts[from]->hook == LBR_SNAP_HOOK_KRETPROBE)
			e[idx[from]].error = -ECANCELED;
}

/*
 * Register the kretprobes of the targets of @ts that take one, disarmed,
 * at most what batch_kretprobes leaves (lbr_kretprobe_room()); a refusal
 * goes to the target's entry.  Without @skip it stops at the first.
 * Return: how many are registered, or -EINTR on a fatal signal.
 */
static int lbr_batch_kretprobes(struct lbr_target **ts, const u32 *idx,
				unsigned int n,
				struct lbr_snap_target_entry *e, bool skip)
{
	unsigned int i, nr = 0, room = lbr_kretprobe_room();
	int ret;

	for (i = 0; i < n; i++) {
		if (e[idx[i]].error || ts[i]->hook != LBR_SNAP_HOOK_KRETPROBE)
			continue;
		if (fatal_signal_pending(current)) {
			lbr_batch_cancel(ts, idx, i, n, e);
			return -EINTR;
		}
		ret = nr < room ? lbr_kretprobe_attach(ts[i]) : -E2BIG;
		if (ret == -E2BIG)
			pr_err_ratelimited("target '%s': no kretprobe: all of lbr_snap's batch_kretprobes=%u are taken\n",
					   ts[i]->name, lbr_kretprobe_max());
		if (ret) {
			e[idx[i]].error = ret;
			if (skip)
				continue;
			lbr_batch_cancel(ts, idx, i + 1, n, e);
			break;
		}
		nr++;
		cond_resched();
	}
	return nr;
}

/*
 * Free the targets of @ts whose entry was refused, keep the others in
 * order.  None of those has a hook.  Return: how many are kept.
 */
static unsigned int lbr_batch_keep(struct lbr_target **ts, u32 *idx,
				   unsigned int n,
				   const struct lbr_snap_target_entry *e)
{
	unsigned int i, k;

	for (i = 0, k = 0; i < n; i++) {
		if (e[idx[i]].error) {
			lbr_target_free(ts[i]);
			continue;
		}
		ts[k] = ts[i];
		idx[k++] = idx[i];
	}
	return k;
}

/*
 * The batch is not added: unregister the kretprobes registered for the
 * targets of @ts (those of a good entry that take one) and free every
 * target, none of them listed or hooked by fexit.
 */
static void lbr_batch_drop(struct lbr_target **ts, const u32 *idx,
			   unsigned int n,
			   const struct lbr_snap_target_entry *e,
			   bool registered)
{
	unsigned int i, k = 0;

	for (i = 0; registered && i < n; i++) {
		if (!e[idx[i]].error &&
		    ts[i]->hook == LBR_SNAP_HOOK_KRETPROBE) {
			swap(ts[i], ts[k]);
			k++;
		}
	}
	/* Detached and freed; the rest never had a hook. */
	lbr_targets_detach(ts, k);
	for (i = k; i < n; i++)
		lbr_target_free(ts[i]);
}

/*
 * Arm the kretprobes of @ts; one ftrace refuses to arm is unregistered,
 * freed and taken out of @ts (*@n less), its entry says why.  Without
 * @skip it stops there, for the caller to drop the rest.
 * Return: 0, or that first error without @skip.
 */
static int lbr_batch_arm(struct lbr_target **ts, u32 *idx, unsigned int *n,
			 struct lbr_snap_target_entry *e, bool skip)
{
	unsigned int i, k;
	int ret, err = 0;

	for (i = 0; i < *n && !err; i++) {
		if (ts[i]->hook != LBR_SNAP_HOOK_KRETPROBE)
			continue;
		ret = lbr_kretprobe_enable(ts[i]);
		cond_resched();
		if (!ret)
			continue;
		pr_err("target '%s': kprobes cannot arm its kretprobe (%d)\n",
		       ts[i]->name, ret);
		e[idx[i]].error = ret;
		e[idx[i]].id = 0;
		lbr_targets_detach(&ts[i], 1);
		ts[i] = NULL;
		if (!skip)
			err = ret;
	}
	for (i = 0, k = 0; i < *n; i++) {
		if (!ts[i])
			continue;
		ts[k] = ts[i];
		idx[k++] = idx[i];
	}
	*n = k;
	return err;
}

/**
 * lbr_targets_add_batch - add the targets of @nr entries at once
 * @e: the entries (struct lbr_snap_target_entry); each gets its result
 * @nr: how many, at most LBR_SNAP_MAX_BATCH
 * @skip: leave refused entries out, rather than add none
 * @fallback: a function fexit cannot take takes a kretprobe
 * @done: how many were added
 *
 * Return: 0, or the first refusal's error (with @skip, only an error
 * that refused the whole batch).
 */
int lbr_targets_add_batch(struct lbr_snap_target_entry *e, unsigned int nr,
			  bool skip, bool fallback, unsigned int *done)
{
	struct lbr_target **ts, **order = NULL;
	unsigned int i, n = 0, k, nfx;
	bool whole, by_entry = false, registered = false;
	struct lbr_btf *btf = NULL;
	int ret = 0, first = 0;
	u32 *idx;

	*done = 0;
	ts = kvcalloc(nr, sizeof(*ts), GFP_KERNEL);
	idx = kvcalloc(nr, sizeof(*idx), GFP_KERNEL);
	if (!ts || !idx) {
		ret = -ENOMEM;
		goto out_free;
	}
	/*
	 * Past fexit's room, refused whole, @skip or not: nothing to skip;
	 * with @fallback, what fexit has no room for takes kretprobes.
	 */
	nfx = fallback ? 0 : lbr_batch_fexit_specs(e, nr);
	ret = nfx ? lbr_fexit_batch_room(nfx) : 0;
	for (i = 0; i < nr; i++) {
		e[i].id = 0;
		e[i].hook = 0;
		e[i].error = ret;
	}
	if (ret)
		goto out_free;
	lbr_kretprobe_init();
	/*
	 * Each entry's function found and checked before the targets' lock
	 * (nothing there needs the list), which a module's coming or going
	 * takes too.  A fatal signal stops it: by name, each function costs
	 * a walk of kallsyms and a grace period.
	 */
	for (i = 0; i < nr; i++) {
		struct lbr_target *t;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		t = lbr_batch_target(&e[i], &btf, fallback);
		if (IS_ERR(t)) {
			e[i].error = PTR_ERR(t);
			if (!skip)
				break;
			continue;
		}
		ts[n] = t;
		idx[n++] = i;
		cond_resched();
	}
	/* Every entry looked at: else one was refused, and so is the batch. */
	whole = skip || i == nr;
	if (!ret && whole)
		ret = lbr_batch_kprobe_check(ts, idx, n, e);
	mutex_lock(&lbr_targets_lock);
	if (!ret)
		ret = lbr_targets_grow_locked(nr);
	if (!ret && whole)
		ret = lbr_batch_check_dups_locked(ts, idx, n, e);
	/*
	 * A void target only with capture=all, which may have changed since
	 * the check outside the lock (lbr_targets_set_capture()).
	 */
	for (i = 0; !ret && i < n; i++) {
		if (ts[i]->ret_type != LBR_SNAP_RET_VOID ||
		    lbr_capture_every_return() || e[idx[i]].error)
			continue;
		pr_err("target '%s': returns void: capture=errors has no error to catch\n",
		       ts[i]->name);
		e[idx[i]].error = -EINVAL;
	}
	if (!ret && whole)
		lbr_batch_past_quota_locked(ts, idx, n, e, fallback);
	/* Disarmed until the fexit ones are in; a refusal is an entry's. */
	if (!ret && whole) {
		ret = lbr_batch_kretprobes(ts, idx, n, e, skip);
		ret = ret < 0 ? ret : 0;
		registered = true;
	}
	/* The first refusal is the answer. */
	for (i = 0; i < nr && !first; i++)
		first = e[i].error;
	if (!ret && first && !skip) {
		ret = first;
		by_entry = true;
	}
	if (ret) {
		/* Kretprobes only if lbr_batch_kretprobes() ran. */
		lbr_batch_drop(ts, idx, n, e, registered);
		goto out;
	}
	/* Those refused had no hook: freed, the others kept. */
	n = lbr_batch_keep(ts, idx, n, e);
	order = kvmalloc_array(n ?: 1, sizeof(*order), GFP_KERNEL);
	if (!order) {
		lbr_batch_drop(ts, idx, n, e, true);
		ret = -ENOMEM;
		goto out;
	}
	/* Ids first: a target records from the moment it is hooked. */
	for (i = 0; i < n; i++) {
		ts[i]->id = lbr_next_id + i;
		e[idx[i]].id = ts[i]->id;
	}
	/* Taken either way: records may carry them already. */
	lbr_next_id += n;
	ret = lbr_batch_arm(ts, idx, &n, e, skip);
	if (ret) {
		by_entry = true;
		lbr_batch_drop(ts, idx, n, e, true);
		goto out;
	}
	/*
	 * The fexit ones in their own array: lbr_fexit_attach_many()
	 * reorders them, and frees them if it fails.  @ts stays in the order
	 * of ids, the list's.
	 */
	for (i = 0, k = 0; i < n; i++)
		if (ts[i]->hook == LBR_SNAP_HOOK_FEXIT)
			order[k++] = ts[i];
	ret = lbr_fexit_attach_many(order, k);
	if (ret) {
		for (i = 0, k = 0; i < n; i++)
			if (ts[i]->hook == LBR_SNAP_HOOK_KRETPROBE)
				order[k++] = ts[i];
		lbr_targets_detach(order, k);
		goto out;
	}
	for (i = 0, k = 0; i < n; i++) {
		lbr_targets[lbr_nr_targets++] = ts[i];
		e[idx[i]].hook = ts[i]->hook;
		k += ts[i]->hook == LBR_SNAP_HOOK_KRETPROBE;
	}
	lbr_targets_counted_locked();
	*done = n;
	if (n)
		pr_info("targets %u to %u: %u functions of a batch, %u by fexit, %u by kretprobe\n",
			ts[0]->id, ts[n - 1]->id, n, n - k, k);
out:
	if (ret) {
		/* Not added: an entry that was good says why not. */
		for (i = 0; i < nr; i++) {
			e[i].id = 0;
			e[i].hook = 0;
			if (!e[i].error)
				e[i].error = by_entry ? -ECANCELED : ret;
		}
	}
	mutex_unlock(&lbr_targets_lock);
	lbr_targets_btf_done(btf, !ret);
out_free:
	kvfree(order);
	kvfree(idx);
	kvfree(ts);
	return ret;
}

/* The index of the target with id @id: the list is in the order of ids. */
static int lbr_target_by_id_locked(u32 id)
{
	unsigned int lo = 0, hi = lbr_nr_targets;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (lbr_targets[mid]->id == id)
			return mid;
		if (lbr_targets[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

/**
 * lbr_targets_del_batch - remove the targets whose ids @nr entries give
 * @e: the entries; each gets 0 or -ENOENT
 * @nr: how many
 * @done: how many were removed
 *
 * Return: 0, or -ENOENT if some id is no target's (the others are
 * removed), or -ENOMEM (none is).
 */
int lbr_targets_del_batch(struct lbr_snap_target_entry *e, unsigned int nr,
			  unsigned int *done)
{
	struct lbr_target **gone;
	unsigned int i, k, n = 0;
	bool *out;
	int ret = 0;

	*done = 0;
	gone = kvcalloc(nr, sizeof(*gone), GFP_KERNEL);
	mutex_lock(&lbr_targets_lock);
	out = kvcalloc(lbr_nr_targets ?: 1, sizeof(*out), GFP_KERNEL);
	if (!gone || !out) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		int j = lbr_target_by_id_locked(e[i].id);

		e[i].error = j < 0 || out[j] ? -ENOENT : 0;
		if (e[i].error) {
			ret = -ENOENT;
			continue;
		}
		out[j] = true;
		gone[n++] = lbr_targets[j];
	}
	for (i = 0, k = 0; i < lbr_nr_targets; i++)
		if (!out[i])
			lbr_targets[k++] = lbr_targets[i];
	lbr_nr_targets = k;
	lbr_targets_counted_locked();
	if (n)
		pr_info("%u targets removed\n", n);
	lbr_targets_detach(gone, n);
	*done = n;
out:
	mutex_unlock(&lbr_targets_lock);
	kvfree(out);
	kvfree(gone);
	return ret;
}
