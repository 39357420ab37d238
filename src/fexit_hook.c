// SPDX-License-Identifier: GPL-2.0
/*
 * The fexit hook: an ftrace direct call from a target's fentry site to one
 * of the trampolines of fexit_tramp.S, which calls the function and freezes
 * LBR on the instruction it returns to.  The kretprobe path puts a dozen
 * branches of its own between the function's RET and the freeze; this one
 * puts none (the return thunk's JMP and RET, where the kernel uses one,
 * belong to the function's return).
 *
 * Compare samples/ftrace/ftrace-direct.c (the API) and the x86 BPF
 * trampoline (calling the original function, then skipping its frame).
 */
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "capture.h"
#include "fexit_slots.h"
#include "lbr_own_names.h"

static_assert(LBR_FEXIT_SLOTS >= LBR_SNAP_MAX_TARGETS);

/* The fentry call's size: its return address is the site + this. */
#define LBR_FENTRY_CALL_SIZE	5

/*
 * Many targets on one trampoline: the functions of a batch
 * (LBR_SNAP_IOC_ADD_TARGETS) that share a return class share one slot,
 * whose direct call reaches them all through one ftrace_ops.  What the
 * trampoline tests before it freezes depends on the return class alone
 * (ret_class.h), so it looks nothing up on the way in or before the
 * freeze; after the freeze, the capture finds the function from the
 * return address of its fentry call (as retsnoop's BPF program does), in
 * the group's table sorted by address.
 *
 * A group's functions stay fixed while its slot hooks them: 6.1's direct
 * calls cannot take one function out of an ops.  Removing some targets
 * of a group makes a new group of the others and moves them there; their
 * returns in between are not seen.  A group is freed with the targets it
 * was last home to once its slot has drained (->released()), or when
 * lbr_snap goes (lbr_fexit_stop()).
 */
struct lbr_group {
	struct list_head pending;	/* given back, calls maybe in flight */
	struct list_head leave;		/* lbr_fexit_detach()'s */
	int slot;			/* or -1: not hooked */
	unsigned int nr;
	struct lbr_target *ts[];	/* by address */
};

/* A slot's data is a target, or a group tagged with this bit. */
#define LBR_GROUP_TAG		1UL

/*
 * Functions that never return: a call would stay in flight for good and
 * keep lbr_snap_fexit loaded (the list is shared with the tool).  Those
 * an offline CPU's idle task stays inside no hook takes (targets.c).
 */
static const char *const lbr_fexit_noreturn[] = {
	LBR_NORETURN_NAMES,
};

/*
 * Targets whose slots were given back and may still have calls in flight:
 * freed by ->released() when the last one returns, or by lbr_fexit_stop().
 */
static LIST_HEAD(lbr_fexit_pending);
static LIST_HEAD(lbr_group_pending);
static DEFINE_MUTEX(lbr_fexit_pending_lock);

static struct lbr_group *lbr_group_of(void *data)
{
	unsigned long v = (unsigned long)data;

	return v & LBR_GROUP_TAG ? (struct lbr_group *)(v & ~LBR_GROUP_TAG) :
				   NULL;
}

/*
 * The target of @g whose function called the trampoline: @fentry_ret is
 * the return address of its fentry call.  A binary search written out,
 * not lib/bsearch.c's, a function ftrace can hook: a group on it would
 * come back here from its own lookup.  No lock: the table does not change
 * while the group's slot hooks it.
 */
static __always_inline struct lbr_target *
lbr_group_find(const struct lbr_group *g, unsigned long fentry_ret)
{
	unsigned long site = fentry_ret - LBR_FENTRY_CALL_SIZE;
	unsigned int lo = 0, hi = g->nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		struct lbr_target *t = g->ts[mid];

		if (site < t->start)
			hi = mid;
		else if (site >= t->start + t->size)
			lo = mid + 1;
		else
			return t;
	}
	return NULL;
}

/* lbr_snap_fexit's ->capture(): interrupts off, LBR frozen if it can be. */
static void notrace lbr_fexit_capture(void *data, unsigned long ax,
				      unsigned long caller, u32 ctl,
				      unsigned long ret_site,
				      unsigned long fentry_ret, u64 entry_tsc)
{
	bool frozen = lbr_hw.backend != LBR_SNAP_BACKEND_NONE;
	struct lbr_group *g = lbr_group_of(data);
	struct lbr_target *t = g ? lbr_group_find(g, fentry_ret) : data;

	/*
	 * Not one of the group's (its slot hooks nothing else), or one
	 * removed whose group stays (lbr_group_leave()).  The trampoline
	 * unfreezes as it leaves.
	 */
	if (unlikely(!t || (g && READ_ONCE(t->leaving)))) {
		WARN_ON_ONCE(!t);
		return;
	}
	lbr_capture(t, ax, caller, frozen, ctl, ret_site, entry_tsc, false);
}
NOKPROBE_SYMBOL(lbr_fexit_capture);

/*
 * Free @g, and each of its targets no other group's table holds: a
 * target moved to a new group stays in the old one's table until that
 * has drained (lbr_group_leave()).
 */
static void lbr_group_free(struct lbr_group *g)
{
	unsigned int i;

	for (i = 0; i < g->nr; i++)
		if (refcount_dec_and_test(&g->ts[i]->grefs))
			lbr_target_free(g->ts[i]);
	kvfree(g);
}

static void lbr_fexit_released(void *data)
{
	struct lbr_group *g = lbr_group_of(data);
	struct lbr_target *t = data;

	mutex_lock(&lbr_fexit_pending_lock);
	list_del(g ? &g->pending : &t->pending);
	mutex_unlock(&lbr_fexit_pending_lock);
	if (g)
		lbr_group_free(g);
	else
		lbr_target_free(t);
}

static struct lbr_fexit_client lbr_fexit_client = {
	.capture = lbr_fexit_capture,
	.released = lbr_fexit_released,
};

/**
 * lbr_fexit_start - become lbr_snap_fexit's client
 *
 * After lbr_hw_start(): the trampolines freeze with what it chose.
 */
int lbr_fexit_start(void)
{
	lbr_fexit_client.ctl_msr = lbr_hw.ctl_msr;
	lbr_fexit_client.keep = lbr_hw.freeze_keep;
	lbr_fexit_client.freeze = lbr_hw.backend != LBR_SNAP_BACKEND_NONE;
	return lbr_fexit_register(&lbr_fexit_client);
}

/**
 * lbr_fexit_stop - stop being called by the trampolines
 *
 * After every fexit target is detached.  Calls still inside their
 * functions record nothing when they return; their targets are freed now.
 * Waits for a grace period, never for a traced function.
 */
void lbr_fexit_stop(void)
{
	struct lbr_target *t, *tmp;
	struct lbr_group *g, *gtmp;

	lbr_fexit_unregister();
	mutex_lock(&lbr_fexit_pending_lock);
	list_for_each_entry_safe(t, tmp, &lbr_fexit_pending, pending) {
		list_del(&t->pending);
		lbr_target_free(t);
	}
	list_for_each_entry_safe(g, gtmp, &lbr_group_pending, pending) {
		list_del(&g->pending);
		lbr_group_free(g);
	}
	mutex_unlock(&lbr_fexit_pending_lock);
}

static bool lbr_fexit_never_returns(const char *name)
{
	return match_string(lbr_fexit_noreturn, ARRAY_SIZE(lbr_fexit_noreturn),
			    name) >= 0;
}

/*
 * Why @t cannot have fexit: an error if it was asked for; for "auto", kept
 * for the line that announces its kretprobe (targets.c), so that a load
 * that fails for another target still logs one line.
 */
#define lbr_fexit_refuse(t, asked, fmt, ...)				\
do {									\
	if (asked)							\
		pr_err("target '%s': fexit: " fmt "\n", (t)->name,	\
		       ##__VA_ARGS__);					\
	else								\
		snprintf((t)->no_fexit, sizeof((t)->no_fexit), fmt,	\
			 ##__VA_ARGS__);				\
} while (0)

/*
 * Can @t's stack arguments all be passed on?  The trampoline copies
 * LBR_FEXIT_STACK_WORDS words of its caller's stack for the function: one
 * given more would read the trampoline's own frame (its entry TSC, saved
 * RBP and return addresses) as its further arguments, and the real ones
 * shifted.
 * The count comes from BTF (targets.c); without BTF, from the user's "/N"
 * (N register-sized arguments; a struct returned in memory takes one more
 * register, which N must then count) on an fexit asked for by name or by
 * "@fexit" in a batch's spec, never guessed for "auto".
 */
static int lbr_fexit_check_stack(struct lbr_target *t, bool asked)
{
	int words = t->stack_words;

	/* The user's count: asked, or "@fexit" in a batch's spec. */
	if (words == LBR_BTF_STACK_UNKNOWN && t->nargs >= 0 &&
	    (asked || t->want == LBR_WANT_FEXIT))
		words = max(0, t->nargs - LBR_FEXIT_REG_ARGS);
	if (words == LBR_BTF_STACK_UNBOUNDED) {
		lbr_fexit_refuse(t, asked, "BTF says it takes variable arguments or a struct of over 16 bytes by value, whose stack words the trampoline cannot pass on");
		return -EOPNOTSUPP;
	}
	if (words < 0) {
		lbr_fexit_refuse(t, asked, "no BTF prototype, so its stack arguments are not known%s",
				 asked || t->want == LBR_WANT_FEXIT ?
				 ": give its argument count (sym/N) to hook it with fexit" : "");
		return -EOPNOTSUPP;
	}
	if (words > LBR_FEXIT_STACK_WORDS) {
		lbr_fexit_refuse(t, asked, "takes up to %d words of stack arguments, the trampoline passes on %d",
				 words, LBR_FEXIT_STACK_WORDS);
		return -E2BIG;
	}
	return 0;
}

/*
 * The returns @t's trampoline lets go before the freeze, under
 * capture=all if @all: those the capture would filter by value alone.
 */
static struct lbr_ret_quiet lbr_fexit_quiet_of(const struct lbr_target *t,
					       bool all)
{
	return lbr_ret_quiet_for(t->ret_type, all, t->nr_errnos > 0);
}

/**
 * lbr_fexit_recapture - tell @t's trampoline of a new capture mode
 * @t: an attached fexit target
 * @all: capture=all
 *
 * Under the targets' lock, as lbr_fexit_attach().  A group's targets share
 * a class, and each sets the same limit.
 */
void lbr_fexit_recapture(const struct lbr_target *t, bool all)
{
	if (t->slot >= 0)
		lbr_fexit_slot_set_limit(t->slot,
					 lbr_fexit_quiet_of(t, all).limit);
}

/*
 * Calls @t's trampoline let go (successes before the freeze, a task left
 * out at the entry), on top of its counters; a group's trampoline counts
 * them for all its targets: none for one of them.
 */
u64 lbr_fexit_quiet_returns(const struct lbr_target *t)
{
	return t->slot < 0 || t->group ? 0 : lbr_fexit_slot_quiet(t->slot);
}

/*
 * Can @t be hooked with fexit at all?  A refusal says why, as an error
 * if @asked, else in @t->no_fexit.
 */
static int lbr_fexit_check(struct lbr_target *t, bool asked)
{
	if (!LBR_HAVE_DIRECT_CALLS) {
		lbr_fexit_refuse(t, asked, "this kernel has no ftrace direct calls");
		return -EOPNOTSUPP;
	}
	if (lbr_fexit_never_returns(t->name)) {
		lbr_fexit_refuse(t, asked, "the function never returns, a call would stay inside for good");
		return -EINVAL;
	}
	return lbr_fexit_check_stack(t, asked);
}

/**
 * lbr_fexit_attach - hook @t with a trampoline of its own
 * @t: a resolved target
 * @asked: fexit was asked for, not "auto": refusals are errors, and a
 *	function without BTF may be hooked on the user's argument count
 *
 * The trampoline passes the function its arguments as they came, stack
 * ones too (fexit_tramp.S), up to LBR_FEXIT_STACK_WORDS of them.
 */
int lbr_fexit_attach(struct lbr_target *t, bool asked)
{
	struct lbr_ret_quiet q;
	int ret;

	ret = lbr_fexit_check(t, asked);
	if (ret)
		return ret;
	/* ftrace maps sym+0 to its fentry site. */
	q = lbr_fexit_quiet_of(t, lbr_capture_every_return());
	ret = lbr_fexit_slot_get(&t->start, 1, t,
				 t->btf_reg_args >= 0 ? LBR_FEXIT_REGS_ONLY : 0,
				 &q);
	if (ret == -EBUSY) {
		lbr_fexit_refuse(t, asked, "busy: another direct caller such as a BPF trampoline has the function, or every free trampoline still has calls of a removed target inside (%d)",
				 ret);
		return ret;
	}
	if (ret == -E2BIG) {
		lbr_fexit_refuse(t, asked, "this kernel's ftrace takes no more direct calls without leaking memory: %u are lbr_snap's, others' (BPF) are not counted but left lbr_snap_fexit's direct_margin (%d)",
				 lbr_fexit_direct_calls(NULL), ret);
		return ret;
	}
	if (ret < 0) {
		lbr_fexit_refuse(t, asked, "no trampoline (%d)", ret);
		return ret;
	}
	t->slot = ret;
	return 0;
}

/* The class of a target: the targets of a group share it. */
static u32 lbr_group_class(const struct lbr_target *t)
{
	return t->ret_type << 2 | (t->nr_errnos > 0) << 1 |
	       (t->btf_reg_args >= 0);
}

static int lbr_group_cmp(const void *a, const void *b)
{
	const struct lbr_target *x = *(const struct lbr_target * const *)a;
	const struct lbr_target *y = *(const struct lbr_target * const *)b;
	u32 cx = lbr_group_class(x), cy = lbr_group_class(y);

	if (cx != cy)
		return cx < cy ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* A group of @n targets by address, in its table; not hooked yet. */
static struct lbr_group *lbr_group_new(struct lbr_target **ts, unsigned int n)
{
	struct lbr_group *g;
	unsigned int i;

	g = kvmalloc(struct_size(g, ts, n), GFP_KERNEL);
	if (!g)
		return NULL;
	INIT_LIST_HEAD(&g->pending);
	INIT_LIST_HEAD(&g->leave);
	g->slot = -1;
	g->nr = n;
	for (i = 0; i < n; i++) {
		g->ts[i] = ts[i];
		/* Under the targets' lock: a new target is in no table. */
		if (!refcount_inc_not_zero(&ts[i]->grefs))
			refcount_set(&ts[i]->grefs, 1);
		ts[i]->group = g;
		ts[i]->slot = -1;
	}
	return g;
}

/* Hook @g's functions with one slot.  Return: 0, or nothing is hooked. */
static int lbr_group_hook(struct lbr_group *g)
{
	struct lbr_ret_quiet q = lbr_fexit_quiet_of(g->ts[0],
						    lbr_capture_every_return());
	unsigned long *ips;
	unsigned int i;
	int ret;

	ips = kvmalloc_array(g->nr, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return -ENOMEM;
	for (i = 0; i < g->nr; i++)
		ips[i] = g->ts[i]->start;
	ret = lbr_fexit_slot_get(ips, g->nr,
				 (void *)((unsigned long)g | LBR_GROUP_TAG),
				 g->ts[0]->btf_reg_args >= 0 ?
				 LBR_FEXIT_REGS_ONLY : 0, &q);
	kvfree(ips);
	if (ret < 0)
		return ret;
	g->slot = ret;
	for (i = 0; i < g->nr; i++) {
		g->ts[i]->slot = ret;
		WRITE_ONCE(g->ts[i]->gone, false);
	}
	return 0;
}

/*
 * Give @g up: unhook it, to be freed once drained, or free it now if it
 * was never hooked.
 */
static void lbr_group_put(struct lbr_group *g)
{
	if (g->slot < 0) {
		lbr_group_free(g);
		return;
	}
	mutex_lock(&lbr_fexit_pending_lock);
	list_add(&g->pending, &lbr_group_pending);
	mutex_unlock(&lbr_fexit_pending_lock);
	lbr_fexit_slot_put(g->slot);
}

/*
 * The most functions a group may take when ftrace's table holds @ips
 * direct calls of lbr_snap's (compat.h).  The table holds up to twice its
 * buckets and one more before it doubles: a group of ips - 1 (or 64, its
 * first size) doubles it once at most.  Others' entries only make the
 * table larger.  Where a trampoline takes one function, one.
 */
static unsigned int lbr_group_room(unsigned int ips)
{
	if (LBR_DIRECT_ONE_EACH)
		return 1;
	return LBR_DIRECT_GROWS_EACH ? max(64U, ips ? ips - 1 : 0) : UINT_MAX;
}

/**
 * lbr_fexit_batch_room - can a batch of @n functions be hooked?
 * @n: how many the batch names, refused ones included
 *
 * Before any per-function work: a batch past the direct calls ftrace
 * takes (compat.h), or past the free trampolines where each takes one
 * function, is refused whole.  Says why in the log.
 *
 * Return: 0, -E2BIG or -ENOSPC.
 */
int lbr_fexit_batch_room(unsigned int n)
{
	unsigned int room, ips = lbr_fexit_direct_calls(&room), slots;

	if (!LBR_HAVE_DIRECT_CALLS)
		return -EOPNOTSUPP;
	if (n > room) {
		pr_err_ratelimited("a batch of %u functions: this kernel's ftrace takes %u more direct calls without leaking memory (%u are lbr_snap's; others', such as BPF's, are not counted but left lbr_snap_fexit's direct_margin)\n",
				   n, room, ips);
		return -E2BIG;
	}
	if (LBR_DIRECT_ONE_EACH) {
		slots = lbr_fexit_slots_free(n);
		if (slots < n) {
			pr_err_ratelimited("a batch of %u functions: this kernel's ftrace gives each its own trampoline, and %u are free\n",
					   n, slots);
			return -ENOSPC;
		}
	}
	return 0;
}

/**
 * lbr_fexit_batch_quota - how many of @want functions a batch can hook by
 *	fexit now
 * @want: the batch's functions fexit could take
 *
 * What lbr_fexit_batch_room() lets through: the direct calls ftrace
 * takes without leaking, and where a trampoline takes one function, the
 * free trampolines; 0 without direct calls.  Not the trampolines a
 * batch's groups need where they share one (lbr_fexit_attach_many()
 * then fails with ENOSPC).  Under the targets' lock, for a batch whose
 * other functions take a kretprobe each.
 */
unsigned int lbr_fexit_batch_quota(unsigned int want)
{
	unsigned int room;

	if (!LBR_HAVE_DIRECT_CALLS || !want)
		return 0;
	lbr_fexit_direct_calls(&room);
	room = min(room, want);
	if (LBR_DIRECT_ONE_EACH)
		room = min(room, lbr_fexit_slots_free(room));
	return room;
}

/*
 * Undo lbr_groups_make() from @made[@first] on: the targets back in
 * @was (NULL: none), the groups freed, none of the targets.
 */
static void lbr_groups_unmake(struct lbr_group **made, unsigned int *nr_made,
			      unsigned int first, struct lbr_group *was)
{
	struct lbr_group *g;
	unsigned int i;

	while (*nr_made > first) {
		g = made[--*nr_made];
		for (i = 0; i < g->nr; i++) {
			/* 0 for a new target: the caller frees it. */
			if (!refcount_dec_not_one(&g->ts[i]->grefs))
				refcount_set(&g->ts[i]->grefs, 0);
			g->ts[i]->group = was;
			g->ts[i]->slot = was ? was->slot : -1;
		}
		kvfree(g);
	}
}

/*
 * Groups for @n targets of one class, each of the size lbr_group_room()
 * allows once those before it are hooked, from @ips on groups; added to
 * @made (at *@nr_made), not hooked.  Return: 0, or -ENOMEM with none made
 * and the targets back in @was.
 */
static int lbr_groups_make(struct lbr_target **ts, unsigned int n,
			   unsigned int ips, struct lbr_group **made,
			   unsigned int *nr_made, struct lbr_group *was)
{
	unsigned int i, k, first = *nr_made;
	struct lbr_group *g;

	for (i = 0; i < n; i += k) {
		k = min(n - i, lbr_group_room(ips));
		g = lbr_group_new(ts + i, k);
		if (!g) {
			lbr_groups_unmake(made, nr_made, first, was);
			return -ENOMEM;
		}
		made[(*nr_made)++] = g;
		ips += k;
	}
	return 0;
}

/* Hook @nr groups of @made; stop at the first that fails.  Return: 0 or it. */
static int lbr_groups_hook(struct lbr_group **made, unsigned int nr)
{
	unsigned int i;
	int ret;

	for (i = 0; i < nr; i++) {
		ret = lbr_group_hook(made[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * lbr_fexit_check_many - can fexit hook @t in a batch?
 * @t: a resolved target of vmlinux
 *
 * Says nothing in the log: the reason goes to @t->no_fexit.
 */
int lbr_fexit_check_many(struct lbr_target *t)
{
	return lbr_fexit_check(t, false);
}

/**
 * lbr_fexit_attach_many - hook @n targets, in groups by class
 * @ts: targets lbr_fexit_check_many() took, of vmlinux; reordered
 * @n: how many
 *
 * All or nothing.  Either way the targets are no longer the caller's:
 * on success they are attached, on failure freed (once drained, for
 * those some group hooked for a while).  Under the targets' lock.
 *
 * Return: 0, or the first error.
 */
int lbr_fexit_attach_many(struct lbr_target **ts, unsigned int n)
{
	unsigned int i, j, ips, nr_made = 0;
	struct lbr_group **made;
	int ret = 0;

	if (!n)
		return 0;
	/* Again under the targets' lock: others may have taken the room. */
	ret = lbr_fexit_batch_room(n);
	if (ret) {
		for (i = 0; i < n; i++)
			lbr_target_free(ts[i]);
		return ret;
	}
	ips = lbr_fexit_direct_calls(NULL);
	/* A group per target at worst. */
	made = kvcalloc(n, sizeof(*made), GFP_KERNEL);
	if (!made) {
		for (i = 0; i < n; i++)
			lbr_target_free(ts[i]);
		return -ENOMEM;
	}
	sort(ts, n, sizeof(*ts), lbr_group_cmp, NULL);
	for (i = 0; i < n && !ret; i = j) {
		for (j = i + 1; j < n; j++)
			if (lbr_group_class(ts[j]) != lbr_group_class(ts[i]))
				break;
		ret = lbr_groups_make(ts + i, j - i, ips, made, &nr_made,
				      NULL);
		ips += j - i;
	}
	if (!ret && lbr_fexit_slots_free(nr_made) < nr_made)
		ret = -ENOSPC;
	if (!ret) {
		ret = lbr_groups_hook(made, nr_made);
		if (ret == -E2BIG)
			pr_err_ratelimited("a batch of %u functions: past this kernel's ftrace's direct calls as its groups were hooked (lbr_snap_fexit's direct_margin changed?)\n",
					   n);
	}
	if (ret) {
		/* Those in no group first: a group's put may free its own. */
		for (i = 0; i < n; i++)
			if (!refcount_read(&ts[i]->grefs))
				lbr_target_free(ts[i]);
		for (i = 0; i < nr_made; i++)
			lbr_group_put(made[i]);
	}
	kvfree(made);
	return ret;
}

/* @g was not hooked: its targets, still listed, record nothing. */
static void lbr_groups_mark_gone(struct lbr_group *g)
{
	unsigned int i;

	for (i = 0; i < g->nr; i++)
		WRITE_ONCE(g->ts[i]->gone, true);
}

/*
 * Unhook those of @g's targets marked leaving: all of them, or @g
 * replaced by groups of the others (hooked after @g is unhooked: a
 * function has one direct call).  When the slots or the memory for that
 * are missing, @g stays and its leaving targets record nothing more.
 */
static void lbr_group_leave(struct lbr_group *g)
{
	struct lbr_target **rest = NULL;
	struct lbr_group **made = NULL;
	unsigned int i, n = 0, nr_made = 0, ips;
	const char *why = "memory";
	int ret;

	for (i = 0; i < g->nr; i++)
		n += !g->ts[i]->leaving;
	if (!n) {
		lbr_group_put(g);
		return;
	}
	rest = kvmalloc_array(n, sizeof(*rest), GFP_KERNEL);
	made = kvcalloc(n, sizeof(*made), GFP_KERNEL);
	if (!rest || !made)
		goto stay;
	for (i = 0, n = 0; i < g->nr; i++)
		if (!g->ts[i]->leaving)
			rest[n++] = g->ts[i];
	/*
	 * Sized for ftrace's table once @g is off it: at least that many
	 * calls, a group no larger than lbr_group_room() allows.
	 */
	ips = lbr_fexit_direct_calls(NULL);
	if (g->slot >= 0)
		ips -= min(ips, g->nr);
	if (lbr_groups_make(rest, n, ips, made, &nr_made, g))
		goto stay;
	if (lbr_fexit_slots_free(nr_made) < nr_made) {
		lbr_groups_unmake(made, &nr_made, 0, g);
		why = "free trampoline";
		goto stay;
	}
	lbr_group_put(g);
	ret = lbr_groups_hook(made, nr_made);
	if (ret) {
		/*
		 * The others stay listed, those of the groups not hooked
		 * gone, as if their module had gone, until deleted.
		 */
		pr_warn("targets of a batch: not all hooked again after others of theirs were removed (%d): those not record nothing; delete them and add them again\n",
			ret);
		for (i = 0; i < nr_made; i++)
			if (made[i]->slot < 0)
				lbr_groups_mark_gone(made[i]);
	}
	kvfree(made);
	kvfree(rest);
	return;
stay:
	pr_warn("%u targets of a batch stay hooked, recording nothing, until the rest of it goes: no %s to hook the rest alone\n",
		g->nr - n, why);
	kvfree(made);
	kvfree(rest);
}

/**
 * lbr_fexit_detach - unhook @n fexit targets; free each once drained
 * @ts: the targets, no longer on the targets' list
 * @n: how many
 *
 * Returns at once: a target is freed after the last call through its
 * trampoline (lbr_fexit_released()), or by lbr_fexit_stop().  Under the
 * targets' lock.
 */
void lbr_fexit_detach(struct lbr_target **ts, unsigned int n)
{
	struct lbr_group *g, *tmp;
	LIST_HEAD(groups);
	unsigned int i;

	for (i = 0; i < n; i++) {
		g = ts[i]->group;
		if (g) {
			/* Each group once: it may free @ts[i] as it goes. */
			if (list_empty(&g->leave))
				list_add(&g->leave, &groups);
			WRITE_ONCE(ts[i]->leaving, true);
			continue;
		}
		mutex_lock(&lbr_fexit_pending_lock);
		list_add(&ts[i]->pending, &lbr_fexit_pending);
		mutex_unlock(&lbr_fexit_pending_lock);
		lbr_fexit_slot_put(ts[i]->slot);
	}
	list_for_each_entry_safe(g, tmp, &groups, leave) {
		list_del_init(&g->leave);
		lbr_group_leave(g);
	}
}

/*
 * Calls inside @t's function right now (a racy sum: never below 0).  A
 * group's trampoline counts them for all its targets: none for one.
 */
long lbr_fexit_inflight(const struct lbr_target *t)
{
	return t->slot < 0 || t->group ? 0 :
	       max(0L, lbr_fexit_slot_inflight(t->slot));
}
