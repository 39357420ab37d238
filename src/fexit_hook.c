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
#include <linux/bitmap.h>
#include <linux/kprobes.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

#include "lbr_snap.h"
#include "fexit_tramp.h"

/* Arguments beyond six travel on the stack, which the trampoline moves. */
#define LBR_FEXIT_MAX_ARGS	6

struct lbr_fexit_slot {
	struct lbr_direct direct;
	struct lbr_target *target;
	unsigned long ret_site;		/* where the function's RET lands */
};

/*
 * A slot is used from attach until its drain (below) is over.  Slot state
 * changes under lbr_fexit_lock; the drain work never takes the targets'
 * lock, so attach may wait for it while holding that.
 */
static DEFINE_MUTEX(lbr_fexit_lock);
static struct lbr_fexit_slot lbr_fexit_slots[LBR_FEXIT_SLOTS];
static DECLARE_BITMAP(lbr_fexit_used, LBR_FEXIT_SLOTS);
static DECLARE_BITMAP(lbr_fexit_draining, LBR_FEXIT_SLOTS);

static void lbr_fexit_drain(struct work_struct *work);
static DECLARE_WORK(lbr_fexit_drain_work, lbr_fexit_drain);

atomic_long_t lbr_fexit_inflight[LBR_FEXIT_SLOTS];
u32 lbr_fexit_ctl_msr __read_mostly;
u64 lbr_fexit_keep __read_mostly;

static_assert(LBR_FEXIT_SLOTS >= LBR_SNAP_MAX_TARGETS);
static_assert(sizeof(atomic_long_t) == 8);	/* the trampolines' lock inc */

/* Called by a "lbr" trampoline with LBR frozen; @ctl as before the freeze. */
void notrace lbr_fexit_capture_lbr(unsigned int slot, unsigned long ax,
				   unsigned long caller, u64 ctl)
{
	struct lbr_fexit_slot *s = &lbr_fexit_slots[slot];

	lbr_capture(s->target, ax, caller, true, ctl, s->ret_site);
}
NOKPROBE_SYMBOL(lbr_fexit_capture_lbr);

/* Called by a "nolbr" trampoline: the "none" backend. */
void notrace lbr_fexit_capture_nolbr(unsigned int slot, unsigned long ax,
				     unsigned long caller)
{
	lbr_capture(lbr_fexit_slots[slot].target, ax, caller, false, 0, 0);
}
NOKPROBE_SYMBOL(lbr_fexit_capture_nolbr);

/* A free slot, after waiting for detached ones to drain if need be. */
static int lbr_fexit_get_slot(void)
{
	unsigned int slot;
	bool draining;

	mutex_lock(&lbr_fexit_lock);
	slot = find_first_zero_bit(lbr_fexit_used, LBR_FEXIT_SLOTS);
	draining = !bitmap_empty(lbr_fexit_draining, LBR_FEXIT_SLOTS);
	if (slot < LBR_FEXIT_SLOTS)
		__set_bit(slot, lbr_fexit_used);
	mutex_unlock(&lbr_fexit_lock);
	if (slot < LBR_FEXIT_SLOTS || !draining)
		return slot < LBR_FEXIT_SLOTS ? slot : -ENOSPC;
	flush_work(&lbr_fexit_drain_work);
	return lbr_fexit_get_slot();
}

static void lbr_fexit_put_slot(unsigned int slot)
{
	mutex_lock(&lbr_fexit_lock);
	lbr_fexit_slots[slot].target = NULL;
	__clear_bit(slot, lbr_fexit_used);
	mutex_unlock(&lbr_fexit_lock);
}

/**
 * lbr_fexit_attach - hook @t with a trampoline of its own
 * @t: a resolved target; t->nargs says how many arguments it takes
 *
 * The trampoline calls the function with the registers it was called with,
 * so it must know that no argument is on the stack: the count comes from
 * the user ("sym/N") or from BTF through lbr-snap.
 */
int lbr_fexit_attach(struct lbr_target *t)
{
	unsigned int slot, kind = lbr_hw.backend == LBR_SNAP_BACKEND_NONE;
	struct lbr_fexit_slot *s;
	int ret;

	if (!LBR_HAVE_DIRECT_CALLS) {
		pr_err("target '%s': fexit: this kernel has no ftrace direct calls\n",
		       t->name);
		return -EOPNOTSUPP;
	}
	if (t->nargs < 0) {
		pr_err("target '%s': fexit needs the argument count: %s/N, or add it with lbr-snap, which reads BTF\n",
		       t->name, t->name);
		return -EINVAL;
	}
	if (t->nargs > LBR_FEXIT_MAX_ARGS) {
		pr_err("target '%s': fexit: %d arguments, some on the stack\n",
		       t->name, t->nargs);
		return -EOPNOTSUPP;
	}
	ret = lbr_fexit_get_slot();
	if (ret < 0)
		return ret;
	slot = ret;

	/* The same values every time: the backend is chosen at load. */
	lbr_fexit_ctl_msr = lbr_hw.ctl_msr;
	lbr_fexit_keep = ~lbr_hw.enable_mask;
	s = &lbr_fexit_slots[slot];
	s->target = t;
	s->direct.ip = t->start;	/* ftrace maps sym+0 to its fentry */
	s->direct.tramp = lbr_fexit_tramps[kind][slot];
	s->ret_site = s->direct.tramp + lbr_fexit_ret_offs[kind][slot];
	ret = lbr_direct_attach(&s->direct);
	if (ret) {
		pr_err("target '%s': fexit: ftrace refuses a direct call (%d%s)\n",
		       t->name, ret, ret == -EBUSY ?
		       ", another direct caller such as a BPF trampoline has it" :
		       "");
		lbr_fexit_put_slot(slot);
		return ret;
	}
	t->slot = slot;
	return 0;
}

static long lbr_fexit_inflight_sum(const unsigned long *slots)
{
	unsigned int slot;
	long sum = 0;

	for_each_set_bit(slot, slots, LBR_FEXIT_SLOTS)
		sum += atomic_long_read(&lbr_fexit_inflight[slot]);
	return sum;
}

/*
 * Free the slots detached so far, once no task can be running in their
 * trampolines.  A task may sleep inside a traced function and then return
 * into the trampoline, so the slot, its target and the module's text must
 * outlive every call in flight:
 * 1. (done by lbr_fexit_detach()) unregister the direct call: no new call
 *    enters the trampoline;
 * 2. an RCU Tasks grace period: every task that was between the fentry
 *    call and the in-flight increment has passed it (a preempted task does
 *    not end the grace period, a voluntary switch does);
 * 3. wait for the counts to drop to zero, however long that takes;
 * 4. another RCU Tasks grace period for the instructions after the
 *    decrement.
 * One pass serves every slot detached before it started, so detaching
 * many targets, or one many times, costs a few grace periods, not two each.
 */
static void lbr_fexit_drain(struct work_struct *work)
{
	DECLARE_BITMAP(batch, LBR_FEXIT_SLOTS);
	unsigned long waited = 0;
	unsigned int slot;
	long left;

	mutex_lock(&lbr_fexit_lock);
	bitmap_copy(batch, lbr_fexit_draining, LBR_FEXIT_SLOTS);
	mutex_unlock(&lbr_fexit_lock);
	if (bitmap_empty(batch, LBR_FEXIT_SLOTS))
		return;

	synchronize_rcu_tasks();
	while ((left = lbr_fexit_inflight_sum(batch)) > 0) {
		if (waited && waited % 10000 == 0)
			pr_info("waiting for %ld fexit call(s) still inside traced functions\n",
				left);
		schedule_timeout_idle(msecs_to_jiffies(20));
		waited += 20;
	}
	synchronize_rcu_tasks();

	for_each_set_bit(slot, batch, LBR_FEXIT_SLOTS) {
		lbr_target_free(lbr_fexit_slots[slot].target);
		mutex_lock(&lbr_fexit_lock);
		__clear_bit(slot, lbr_fexit_draining);
		mutex_unlock(&lbr_fexit_lock);
		lbr_fexit_put_slot(slot);
	}
	mutex_lock(&lbr_fexit_lock);
	if (!bitmap_empty(lbr_fexit_draining, LBR_FEXIT_SLOTS))
		queue_work(system_long_wq, &lbr_fexit_drain_work);
	mutex_unlock(&lbr_fexit_lock);
}

/**
 * lbr_fexit_detach - unhook @n fexit targets and free them once drained
 * @ts: the targets, no longer on the targets' list
 * @n: how many
 *
 * Returns at once: the targets are freed by the drain work, after the
 * last call through their trampolines (lbr_fexit_drain()).
 */
void lbr_fexit_detach(struct lbr_target **ts, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		lbr_direct_detach(&lbr_fexit_slots[ts[i]->slot].direct);
		mutex_lock(&lbr_fexit_lock);
		__set_bit(ts[i]->slot, lbr_fexit_draining);
		mutex_unlock(&lbr_fexit_lock);
	}
	if (n)
		queue_work(system_long_wq, &lbr_fexit_drain_work);
}

/* Wait until every detached target is drained and freed (module exit). */
void lbr_fexit_flush(void)
{
	bool busy;

	do {
		flush_work(&lbr_fexit_drain_work);
		mutex_lock(&lbr_fexit_lock);
		busy = !bitmap_empty(lbr_fexit_draining, LBR_FEXIT_SLOTS);
		mutex_unlock(&lbr_fexit_lock);
	} while (busy);
}
