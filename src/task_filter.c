// SPDX-License-Identifier: GPL-2.0
/*
 * The task filter (LBR_SNAP_IOC_SET_FILTER): record only the returns of
 * a thread, a process or a comm.
 *
 * Read by the capture path in any context, NMI included, with interrupts
 * off; set from an ioctl.  So no lock and no RCU on the reader's side
 * (a target may return where RCU is not watching): the filter is static
 * words under a sequence count.  The writer makes the count odd, writes
 * the words, makes it even again, with preemption off in between; a
 * reader that finds the count odd, or changed across its reads, records
 * nothing: a return that races a change of filter counts as filtered,
 * never as a task neither filter names.  Two changes at once are
 * serialised by a mutex.
 */
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "lbr_snap.h"

static struct {
	unsigned int seq;
	u32 flags;
	pid_t pid, tgid;
	char comm[TASK_COMM_LEN];
} lbr_task_filter;
static DEFINE_MUTEX(lbr_task_filter_lock);

/* @comm as the filter's: all TASK_COMM_LEN bytes, no call (strncmp()). */
static __always_inline bool lbr_comm_is(const char *comm)
{
	unsigned int i;

	for (i = 0; i < TASK_COMM_LEN; i++) {
		/* One load a byte: a rename between two would mix names. */
		char c = READ_ONCE(comm[i]);

		if (c != READ_ONCE(lbr_task_filter.comm[i]))
			return false;
		if (!c)
			break;
	}
	return true;
}

/**
 * lbr_task_wanted - whether the current task's returns are recorded
 *
 * Any context; two loads when no filter is set.
 */
notrace bool lbr_task_wanted(void)
{
	unsigned int seq = READ_ONCE(lbr_task_filter.seq);
	bool ok = true;
	u32 flags;

	/* Pairs with the first smp_wmb() in lbr_task_filter_set(). */
	smp_rmb();
	flags = READ_ONCE(lbr_task_filter.flags);
	if (!(seq & 1) && !flags)
		return true;
	if (flags & LBR_SNAP_FILTER_PID)
		ok &= current->pid == READ_ONCE(lbr_task_filter.pid);
	if (flags & LBR_SNAP_FILTER_TGID)
		ok &= current->tgid == READ_ONCE(lbr_task_filter.tgid);
	/* current->comm may change under us (prctl): a torn name differs. */
	if (flags & LBR_SNAP_FILTER_COMM)
		ok &= lbr_comm_is(current->comm);
	if (flags & LBR_SNAP_FILTER_TREE)
		ok &= lbr_tree_has(current);
	/* Pairs with the second smp_wmb() there: the words were whole. */
	smp_rmb();
	return ok && !(seq & 1) && READ_ONCE(lbr_task_filter.seq) == seq;
}
NOKPROBE_SYMBOL(lbr_task_wanted);

/**
 * lbr_task_surely_out - whether the filter leaves task @t out, for certain
 * @t: a task that cannot go while this runs
 *
 * Any context.  What task_follow.c lets the hooks skip before they
 * freeze: only by the tree filter's table.  A pid, a tgid or a comm
 * leaves no task out here (a thread's exec takes its leader's pid, a
 * comm changes with no tracepoint): their returns are filtered after the
 * freeze.  False while the filter changes.
 */
notrace bool lbr_task_surely_out(const struct task_struct *t)
{
	unsigned int seq = READ_ONCE(lbr_task_filter.seq);
	bool out;

	/* Pairs with the first smp_wmb() in lbr_task_filter_publish(). */
	smp_rmb();
	if (seq & 1 || !(READ_ONCE(lbr_task_filter.flags) & LBR_SNAP_FILTER_TREE))
		return false;
	out = !lbr_tree_has(t);
	/* Pairs with the second smp_wmb() there: the words were whole. */
	smp_rmb();
	return out && READ_ONCE(lbr_task_filter.seq) == seq;
}
NOKPROBE_SYMBOL(lbr_task_surely_out);

/* Make @f the filter, under the lock: a reader sees the old or the new. */
static void lbr_task_filter_publish(const struct lbr_snap_filter *f)
{
	unsigned int i;

	/* Odd for as short a time as can be: captures meanwhile are lost. */
	preempt_disable();
	WRITE_ONCE(lbr_task_filter.seq, lbr_task_filter.seq + 1);
	/* Odd before the words change: pairs with lbr_task_wanted(). */
	smp_wmb();
	WRITE_ONCE(lbr_task_filter.flags, f->flags);
	WRITE_ONCE(lbr_task_filter.pid, f->pid);
	WRITE_ONCE(lbr_task_filter.tgid, f->tgid);
	for (i = 0; i < TASK_COMM_LEN; i++)
		WRITE_ONCE(lbr_task_filter.comm[i], f->comm[i]);
	/* The words, then even again: pairs with the second smp_rmb(). */
	smp_wmb();
	WRITE_ONCE(lbr_task_filter.seq, lbr_task_filter.seq + 1);
	preempt_enable();
}

/**
 * lbr_task_filter_set - the filter from LBR_SNAP_IOC_SET_FILTER
 * @f: checked by the caller for unknown flags and reserved words
 *
 * The tree filter's table (task_tree.c) is emptied before any new filter
 * is published, and filled after a tree filter is: in between, a tree
 * filter records nothing, never a task neither filter names.  A refusal
 * leaves the filter as it was (an old tree filter's tree is let go all
 * the same: it then records nothing).
 *
 * Return: 0, -EINVAL for a negative id, a field @f->flags does not name
 * that is not 0, a comm of 16 bytes with no NUL, or a tree filter with a
 * pid or tgid one; or lbr_tree_set()'s error.
 */
int lbr_task_filter_set(const struct lbr_snap_filter *f)
{
	static_assert(LBR_SNAP_COMM_LEN == TASK_COMM_LEN);
	bool comm = f->flags & LBR_SNAP_FILTER_COMM;
	bool tree = f->flags & LBR_SNAP_FILTER_TREE;
	struct lbr_snap_filter old;
	int ret = 0;

	if (tree && ((f->flags & (LBR_SNAP_FILTER_PID | LBR_SNAP_FILTER_TGID)) ||
		     f->tgid <= 0))
		return -EINVAL;
	if (((f->flags & LBR_SNAP_FILTER_PID) ? f->pid < 0 : f->pid) ||
	    (!tree &&
	     ((f->flags & LBR_SNAP_FILTER_TGID) ? f->tgid < 0 : f->tgid)) ||
	    (comm && !memchr(f->comm, '\0', sizeof(f->comm))) ||
	    (!comm && memchr_inv(f->comm, 0, sizeof(f->comm))))
		return -EINVAL;
	/*
	 * The kretprobes' entry test, before the filter's lock: it may wait
	 * for a batch being attached (task_follow.c).
	 */
	if (tree && lbr_targets_check_entry())
		return -EINTR;
	/* The tree's tracepoints may take long to let go: killable. */
	if (mutex_lock_killable(&lbr_task_filter_lock))
		return -EINTR;
	if (tree) {
		ret = lbr_tree_check(f->tgid);
		if (ret) {
			mutex_unlock(&lbr_task_filter_lock);
			return ret;
		}
	}
	/* Nothing let go before the freeze on the old filter's word. */
	lbr_follow_pause();
	/* The old tree let go first: its filter then records nothing. */
	lbr_tree_set(0);
	old = (struct lbr_snap_filter){
		.flags = lbr_task_filter.flags, .pid = lbr_task_filter.pid,
		.tgid = lbr_task_filter.tgid,
	};
	memcpy(old.comm, lbr_task_filter.comm, sizeof(old.comm));
	lbr_task_filter_publish(f);
	/* Then the new one filled: its filter takes its tasks as they come. */
	if (tree)
		ret = lbr_tree_set(f->tgid);
	/* Refused after all (the process exited meanwhile): the old words. */
	if (ret)
		lbr_task_filter_publish(&old);
	/* Learning again, of the filter now in force. */
	lbr_follow_update(lbr_task_filter.flags);
	mutex_unlock(&lbr_task_filter_lock);
	return ret;
}
