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
 * (kretprobe_hook.c), from the first tree filter on.  For a task the
 * filter follows the trampoline's one branch is not taken, at a
 * function's entry at that: its records are as before (a kretprobe's
 * gain the entry handler's call and return at the function's entry).  A
 * task left out pays the freeze once per stretch on a CPU (its first
 * return turned away there, after another's), and nothing after.
 *
 * Learnt, not kept by a probe of sched_switch, which would name the task
 * at every switch: registering one patches __schedule(), which perf and
 * ftrace do all the time, but in the LBR lab's guests (multi-threaded
 * TCG) a vCPU in __schedule() then looped on the int3 of a patch already
 * undone, an artefact of the emulator that make check cannot afford.
 *
 * It is only ever an early "no": NULL, or a task not the current one,
 * skips nothing, and the capture's filter decides.  Only the tree filter
 * is used, by a task's place in the tree's table.  A filter of a pid, a
 * tgid or a comm is applied after the freeze, as before: a thread's exec
 * takes its leader's pid, and a comm changes with no tracepoint.  A word
 * names a task the filter follows for no longer than a capture racing a
 * change takes (such a return may be filtered, as lbr_task_wanted() says
 * of its own):
 * - a learner writes the word, then (a full barrier) reads the filter,
 *   the table and whether learning is on again, and takes the word back
 *   if it is wrong now; whoever changes those (a change of filter, a task
 *   put in the table) changes them, then (a full barrier) reads and
 *   clears the words.  One of the two sees the other: no grace period,
 *   so a capture where RCU is not watching (an idle CPU's) is covered;
 * - a change of filter stops learning and clears every word before the
 *   filter changes, and clears them again after;
 * - a task put in the table has every word naming it cleared: a running
 *   thread as the filter is set, and a new task, before it runs, whose
 *   memory may be an old one's that a word still names.
 * A call entered just before a change may be let go just after it: the
 * word compared was read as the call came in.
 */
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/sched.h>

#include "compat.h"
#include "fexit_slots.h"
#include "lbr_snap.h"

/*
 * Set while the filter in force is the tree's: captures may learn (read
 * inline by them first, lbr_follow_learn() in lbr_snap.h).
 */
bool lbr_follow_on __read_mostly;

/**
 * __lbr_follow_learn - a return of the current task was turned away
 *
 * Capture path, preemption off, through lbr_follow_learn(): if the tree
 * filter leaves this task out, its next calls on this CPU are let go
 * before the freeze.  An interrupt in between learns the same task: both
 * per-CPU operations are single instructions.
 */
notrace void __lbr_follow_learn(void)
{
	/* Known already (a call entered before it was learnt, an NMI's). */
	if (this_cpu_read(lbr_fexit_unfollowed) == current)
		return;
	/* Pairs with lbr_follow_update()'s release: the words cleared. */
	if (!smp_load_acquire(&lbr_follow_on) ||
	    !lbr_task_surely_out(current))
		return;
	this_cpu_write(lbr_fexit_unfollowed, current);
	/* Pairs with the barrier of lbr_follow_clear() and of unname. */
	smp_mb();
	if (!READ_ONCE(lbr_follow_on) || !lbr_task_surely_out(current))
		this_cpu_cmpxchg(lbr_fexit_unfollowed, current, NULL);
}
NOKPROBE_SYMBOL(__lbr_follow_learn);

/**
 * lbr_follow_unname - no word names @t, which the tree now follows
 * @t: a task just put in the tree's table
 *
 * Any context but NMI.  Only a CPU running @t writes @t, so a word that
 * does not name it now will not, but by a learner that then sees @t in
 * the table and takes it back: a read, and a write only where it does.
 */
void lbr_follow_unname(struct task_struct *t)
{
	unsigned int cpu;

	/* After the insertion: pairs with lbr_follow_learn()'s barrier. */
	smp_mb();
	for_each_possible_cpu(cpu) {
		struct task_struct **w = per_cpu_ptr(&lbr_fexit_unfollowed, cpu);

		if (READ_ONCE(*w) == t)
			cmpxchg(w, t, NULL);
	}
}

/*
 * Every CPU's word cleared, after what changed: pairs with
 * lbr_follow_learn()'s barrier.
 */
static void lbr_follow_clear(void)
{
	unsigned int cpu;

	/* What changed before, the words after: pairs with the learner's. */
	smp_mb();
	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu(lbr_fexit_unfollowed, cpu), NULL);
}

/**
 * lbr_follow_pause - no learning while the filter changes
 *
 * Process context, under the task filter's lock, before the filter or
 * the tree's table changes.  Nothing to do where no learning was on.
 */
void lbr_follow_pause(void)
{
	if (!READ_ONCE(lbr_follow_on))
		return;
	WRITE_ONCE(lbr_follow_on, false);
	lbr_follow_clear();
}

/**
 * lbr_follow_update - what the hooks skip, after the filter changed
 * @flags: the filter now in force
 *
 * Process context, under the task filter's lock, after lbr_follow_pause()
 * and once the tree's table is filled.  Captures learn while @flags name
 * a tree (with a comm or not: a task out of the tree is out whatever its
 * name).
 */
void lbr_follow_update(u32 flags)
{
	if (!(flags & LBR_SNAP_FILTER_TREE))
		return;
	/*
	 * What was learnt meanwhile (belt and braces: a learner that sees
	 * learning on sees the table filled, and the pause's clear and the
	 * learner's re-check already cover the change).
	 */
	lbr_follow_clear();
	/* The words cleared before: pairs with lbr_follow_learn()'s acquire. */
	smp_store_release(&lbr_follow_on, true);
}
