/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The capture stage's interface to the hooks: lbr_capture(), whose
 * filter is inline in each hook, since most returns are successes that
 * capture=errors leaves out, and a call and its arguments were a fifth of
 * what such a return cost (make bench's cost table).  The record itself
 * is lbr_capture_record() in capture.c.
 */
#ifndef LBR_SNAP_CAPTURE_H
#define LBR_SNAP_CAPTURE_H

#include <asm/irqflags.h>
#include <linux/err.h>
#include <linux/percpu.h>

#include "lbr_snap.h"
#include "ret_class.h"

DECLARE_PER_CPU(unsigned int, lbr_capture_nesting);
extern bool lbr_capture_all;

void lbr_capture_record(struct lbr_target *t, unsigned long ax,
			unsigned long caller, bool frozen, u32 ctl,
			unsigned long ret_site, u64 entry_tsc);

/*
 * A freeze found LBR off: if the enable bit itself was clear (not a PMI's
 * freeze, which leaves it set), a debug exception may have cleared it:
 * ask for the re-arm (lbr_db.c).
 */
static __always_inline void lbr_capture_found_off(u32 ctl)
{
	if (!(ctl & lbr_hw.enable_mask))
		lbr_db_check_soon();
}

/**
 * lbr_capture - record one return of a target
 * @t: the target
 * @ax: the raw return value register
 * @caller: where the target returns to
 * @frozen: LBR was frozen by the hook (false for the "none" backend)
 * @ctl: the control MSR's low half as lbr_hw_freeze() found it
 * @ret_site: where the target's RET landed (see lbr_probe_entries())
 * @entry_tsc: the TSC as the call came in, 0 if the hook did not read it
 * @irqs_on: interrupts may be on (the "none" backend's kretprobe
 *	handler); the hooks that freeze have them off
 *
 * From a hook, with preemption off.  Unfreezes LBR after a kretprobe's
 * freeze; an fexit trampoline unfreezes as it leaves, so that what the
 * capture does after its read is no entry of an outer record.
 *
 * Most returns are successes, which capture=errors leaves out.  On fexit
 * the trampoline lets them go before it freezes (ret_class.h); on a
 * kretprobe they are counted and LBR unfrozen right here, a few dozen
 * instructions, with per-CPU increments that an interrupt cannot tear
 * (one instruction each), interrupts off only for the unfreeze.  Not
 * inside a capture on this CPU (a target on the capture path, or
 * returning in an NMI): that one is counted as recursion by
 * lbr_capture_record().  An NMI's return
 * between another return's freeze and lbr_capture_record() (or in this
 * short path) finds LBR frozen by it: counted in lbr_off, and recorded
 * WAS_OFF if it is one to record, its entries the interrupted return's.
 */
static __always_inline void lbr_capture(struct lbr_target *t,
					unsigned long ax, unsigned long caller,
					bool frozen, u32 ctl,
					unsigned long ret_site, u64 entry_tsc,
					bool irqs_on)
{
	struct lbr_counters __percpu *c = t->counters;
	unsigned long flags;

	if (READ_ONCE(lbr_capture_all) ||
	    lbr_is_error(t->ret_type, lbr_retval(t->ret_type, ax)) ||
	    __this_cpu_read(lbr_capture_nesting)) {
		lbr_capture_record(t, ax, caller, frozen, ctl, ret_site,
				   entry_tsc);
		return;
	}
	this_cpu_inc(c->hits);
	this_cpu_inc(c->filtered);
	/*
	 * It froze all the same (a kretprobe's): a task the tree filter
	 * leaves out may have its next calls let go before (task_follow.c).
	 */
	lbr_follow_learn();
	/* See lbr_capture_record(). */
	if (frozen) {
		if (__this_cpu_read(lbr_cpu_depth) && lbr_hw_was_off(ctl)) {
			this_cpu_inc(c->lbr_off);
			lbr_capture_found_off(ctl);
		}
		if (t->hook == LBR_SNAP_HOOK_FEXIT)
			return;
		/*
		 * The unfreeze reads and writes the control MSR: an interrupt
		 * in between that changed it (perf turning LBR off in an
		 * IPI or the tick) would be undone.  Both hooks that freeze
		 * come with interrupts off; the native flag operations are
		 * for any other (lbr_hw_detect() gives a Xen PV guest no LBR).
		 */
		if (!irqs_on) {
			lbr_hw_unfreeze(ctl);
			return;
		}
		flags = native_save_fl();
		native_irq_disable();
		lbr_hw_unfreeze(ctl);
		if (flags & X86_EFLAGS_IF)
			native_irq_enable();
	}
}

/*
 * A call of @t let go at its entry: its task is one the task filter
 * surely leaves out (task_follow.c).  A hit, filtered; one instruction
 * each, any context.
 */
static __always_inline void lbr_capture_skipped(struct lbr_target *t)
{
	this_cpu_inc(t->counters->hits);
	this_cpu_inc(t->counters->filtered);
}

#endif /* LBR_SNAP_CAPTURE_H */
