// SPDX-License-Identifier: GPL-2.0
/*
 * The task filter (LBR_SNAP_IOC_SET_FILTER): record only the returns of
 * a thread, a process or a comm.
 *
 * Read by the capture path in any context, NMI included, with interrupts
 * off; set from an ioctl.  So no lock and no RCU on the reader's side
 * (a target may return where RCU is not watching): the filter is static
 * words, and a writer turns it off, writes the fields, then turns it on
 * again, each step ordered before the next.  A capture that read the
 * filter on just before a change may compare its task with fields half
 * changed: a return that races a change of filter may go either way,
 * as it would a moment earlier or later.  Two changes at once are
 * serialised by a mutex.
 */
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "lbr_snap.h"

static struct {
	u32 flags;
	pid_t pid, tgid;
	char comm[TASK_COMM_LEN];
} lbr_task_filter;
static DEFINE_MUTEX(lbr_task_filter_lock);

/**
 * lbr_task_wanted - whether the current task's returns are recorded
 *
 * Any context; one load when no filter is set.
 */
notrace bool lbr_task_wanted(void)
{
	u32 flags = READ_ONCE(lbr_task_filter.flags);

	if (!flags)
		return true;
	/* Pairs with the smp_wmb() in lbr_task_filter_set(). */
	smp_rmb();
	if ((flags & LBR_SNAP_FILTER_PID) &&
	    current->pid != READ_ONCE(lbr_task_filter.pid))
		return false;
	if ((flags & LBR_SNAP_FILTER_TGID) &&
	    current->tgid != READ_ONCE(lbr_task_filter.tgid))
		return false;
	/* current->comm may change under us (prctl): a torn name differs. */
	if ((flags & LBR_SNAP_FILTER_COMM) &&
	    strncmp(current->comm, lbr_task_filter.comm, TASK_COMM_LEN))
		return false;
	return true;
}
NOKPROBE_SYMBOL(lbr_task_wanted);

/**
 * lbr_task_filter_set - the filter from LBR_SNAP_IOC_SET_FILTER
 * @f: checked by the caller for unknown flags and reserved words
 *
 * Return: 0, or -EINVAL for a negative id.
 */
int lbr_task_filter_set(const struct lbr_snap_filter *f)
{
	static_assert(LBR_SNAP_COMM_LEN == TASK_COMM_LEN);

	if (((f->flags & LBR_SNAP_FILTER_PID) && f->pid < 0) ||
	    ((f->flags & LBR_SNAP_FILTER_TGID) && f->tgid < 0))
		return -EINVAL;
	mutex_lock(&lbr_task_filter_lock);
	WRITE_ONCE(lbr_task_filter.flags, 0);
	/* Off before the fields change: pairs with lbr_task_wanted(). */
	smp_wmb();
	WRITE_ONCE(lbr_task_filter.pid, f->pid);
	WRITE_ONCE(lbr_task_filter.tgid, f->tgid);
	memcpy(lbr_task_filter.comm, f->comm, TASK_COMM_LEN);
	lbr_task_filter.comm[TASK_COMM_LEN - 1] = '\0';
	/* The fields, then on: pairs with the smp_rmb() there. */
	smp_wmb();
	WRITE_ONCE(lbr_task_filter.flags, f->flags);
	mutex_unlock(&lbr_task_filter_lock);
	return 0;
}
