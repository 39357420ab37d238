// SPDX-License-Identifier: GPL-2.0
/*
 * What the hooks skip before they freeze: the calls of a task the tree
 * filter leaves out.
 *
 * The task filter itself (task_filter.c) is read after the freeze, in the
 * capture, so that its own branches are not in a record: every return it
 * filters has cost a freeze and an unfreeze, four MSR accesses, each
 * hundreds of cycles on real silicon and a WRMSR of the control MSR a VM
 * exit in a guest.  Under `lbr-snap why` thousands of functions are hooked
 * and the tree filter follows one command: the rest of the machine would
 * pay that on every error return (perf's LBR users pay nothing of the
 * kind).
 *
 * So per CPU, lbr_fexit_unfollowed names a task the tree filter leaves
 * out, learnt by the capture when the filter turns one of its returns
 * away (lbr_follow_learn()), or is NULL.  A fexit trampoline compares it
 * with the current task as it is entered and lets the call go at once
 * (fexit_tramp.S); a kretprobe's entry handler does the same
 * (kretprobe_hook.c).  For a task the filter follows the compare's one
 * branch is not taken, at a function's entry at that: its records are as
 * before.  A task left out pays the freeze once per stretch on a CPU (its
 * first return turned away there, after another's), and nothing after.
 *
 * Learnt, not kept by a probe of sched_switch: registering one patches
 * __schedule() at run time, where a CPU runs with interrupts off, and
 * nothing here would need it but a cheaper first return.
 *
 * It is only ever an early "no": NULL, or a task not the current one,
 * skips nothing, and the capture's filter decides.  Only the tree filter
 * is used, by what a task keeps while it runs: its place in the tree's
 * table, which a task joins only as it is created or as the filter is
 * set.  A filter of a pid, a tgid or a comm is applied after the freeze,
 * as before: a thread's exec takes its leader's pid, and a comm changes
 * with no tracepoint.  A word never names a task the filter follows:
 * - every change of filter clears every word once no capture that read
 *   the old filter still runs (captures run with interrupts off);
 * - a task that joins the tree has every word naming it cleared as it is
 *   put in the table, before it runs: a new task may be given the memory
 *   of an old one that a word still names.
 */
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

#include "compat.h"
#include "fexit_slots.h"
#include "lbr_snap.h"

/* Set while the filter in force is the tree's: captures may learn. */
static bool lbr_follow_on;

/**
 * lbr_follow_learn - a return of the current task was turned away
 *
 * Capture path, interrupts off: if the tree filter leaves this task out,
 * its next calls on this CPU are let go before the freeze.
 */
notrace void lbr_follow_learn(void)
{
	if (READ_ONCE(lbr_follow_on) && lbr_task_surely_out(current))
		this_cpu_write(lbr_fexit_unfollowed, current);
}
NOKPROBE_SYMBOL(lbr_follow_learn);

/**
 * lbr_follow_unname - no word names @t, which the tree now follows
 * @t: a task just put in the tree's table, before it runs
 *
 * Any context but NMI.
 */
void lbr_follow_unname(struct task_struct *t)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		cmpxchg(per_cpu_ptr(&lbr_fexit_unfollowed, cpu), t, NULL);
}

/* Every CPU's word cleared: nothing skipped until a capture learns again. */
static void lbr_follow_forget(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu(lbr_fexit_unfollowed, cpu), NULL);
}

/**
 * lbr_follow_update - what the hooks skip, after the filter changed
 * @flags: the filter now in force
 *
 * Process context, under the task filter's lock, after the tree's table
 * was filled.  Captures learn while @flags name a tree (with a comm or
 * not: a task out of the tree is out whatever its name).
 */
void lbr_follow_update(u32 flags)
{
	WRITE_ONCE(lbr_follow_on, flags & LBR_SNAP_FILTER_TREE);
	/*
	 * Once no capture that read the old filter still runs (each runs
	 * with interrupts off), what they learnt is forgotten.  A capture
	 * from now on reads the new filter.
	 */
	synchronize_rcu();
	lbr_follow_forget();
}

/**
 * lbr_follow_skip - whether the current task's call may be let go now
 *
 * Any context with preemption off (a kretprobe's entry handler): the
 * test the fexit trampolines make in assembly.
 */
notrace bool lbr_follow_skip(void)
{
	return this_cpu_read(lbr_fexit_unfollowed) == current;
}
NOKPROBE_SYMBOL(lbr_follow_skip);

/* Module exit, no capture or hook running: no word left for the next. */
void lbr_follow_exit_module(void)
{
	WRITE_ONCE(lbr_follow_on, false);
	lbr_follow_forget();
}
