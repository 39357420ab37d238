// SPDX-License-Identifier: GPL-2.0
/*
 * Writing a record: what both hooks do once LBR is frozen.
 */
#include <linux/irqflags.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "lbr_snap.h"

/* The return value, sign-extended from the declared width. */
static __always_inline s64 lbr_retval(u8 type, unsigned long ax)
{
	switch (type) {
	case LBR_SNAP_RET_INT:
		return (s32)ax;
	case LBR_SNAP_RET_BOOL:
		return (u8)ax != 0;
	default:
		return (s64)ax;
	}
}

/* errors mode: a negative errno, NULL or ERR_PTR, or false. */
static __always_inline bool lbr_is_error(u8 type, s64 ret)
{
	switch (type) {
	case LBR_SNAP_RET_PTR:
		return !ret || IS_ERR_VALUE((unsigned long)ret);
	case LBR_SNAP_RET_BOOL:
		return !ret;
	default:
		return ret < 0 && ret >= -MAX_ERRNO;
	}
}

/*
 * Nesting of lbr_capture() on this CPU.  A target that lbr_snap's own
 * capture path reaches (a clocksource read, irq_work) and
 * that the denylist of targets.c missed would enter the capture again from
 * inside it: the nested return is counted and not recorded.  Interrupts
 * are off in the capture, so only such a call, or a target returning in
 * an NMI, can nest.
 */
static DEFINE_PER_CPU(unsigned int, lbr_capture_nesting);

/* capture=all: every return, not only errors. */
static bool lbr_capture_all __read_mostly;

void lbr_capture_set_every_return(bool all)
{
	WRITE_ONCE(lbr_capture_all, all);
}

bool lbr_capture_every_return(void)
{
	return READ_ONCE(lbr_capture_all);
}

/*
 * lbr_capture()'s record: everything but a return it filters out.  The
 * hook froze LBR; interrupts stay off from here to the commit: the LBR
 * read must not be disturbed and the per-CPU counters need no atomics.
 * Unfreezes LBR.  The record keeps the MSRs as read: decoding, ordering
 * and counting the probe's entries wait for read() (record_decode.c),
 * out of this window.
 */
static noinline void notrace lbr_capture_record(struct lbr_target *t,
						unsigned long ax,
						unsigned long caller,
						bool frozen, u32 ctl,
						unsigned long ret_site)
{
	s64 ret = lbr_retval(t->ret_type, ax);
	struct lbr_raw_record *raw;
	struct lbr_snap_record *rec;
	struct lbr_buf_resv res;
	struct lbr_counters *c;
	unsigned long flags;
	unsigned int depth, size;
	bool ran_again = false;

	local_irq_save(flags);
	c = this_cpu_ptr(t->counters);
	if (this_cpu_inc_return(lbr_capture_nesting) > 1) {
		c->recursion++;
		goto out_nested;
	}
	c->hits++;
	/*
	 * A CPU lbr_snap reads nothing from (lbr_hw_cpu_online(), a CPU
	 * going or coming): its record is one without LBR, though the hook
	 * froze and this unfreezes.
	 */
	depth = frozen ? __this_cpu_read(lbr_cpu_depth) : 0;
	/*
	 * LBR was off before this return froze it: someone else turned it off
	 * (perf, KVM, /dev/cpu/N/msr), or the CPU came back from a reset
	 * without it.  Counted per CPU with interrupts off, no atomics; not
	 * on a CPU lbr_snap reads nothing from (lbr_hw_cpu_online()).  A
	 * kretprobe handler runs with interrupts on until here, so a target
	 * returning in an interrupt taken between another return's freeze
	 * and this point finds LBR frozen, i.e. off, and is counted too.
	 */
	if (depth && !(ctl & lbr_hw.enable_mask))
		c->lbr_off++;
	/* capture=errors and a success that came in nested: not recorded. */
	if (!READ_ONCE(lbr_capture_all) && !lbr_is_error(t->ret_type, ret)) {
		c->filtered++;
		goto out_unfreeze;
	}

	size = sizeof(*raw) + lbr_raw_msrs(lbr_hw.planes, depth) * sizeof(u64);
	raw = lbr_buf_reserve(size, &res);
	if (!raw) {
		c->dropped++;
		goto out_unfreeze;
	}
	if (depth) {
		raw->planes = lbr_hw_read_raw(raw->msr, depth, &raw->tos);
		ran_again = lbr_hw_ran_again();
	}
	if (frozen)
		lbr_hw_unfreeze(ctl);

	raw->ret_site = ret_site;
	raw->depth = depth;
	raw->reserved = 0;
	if (!depth) {
		raw->planes = 0;
		raw->tos = 0;
	}
	rec = &raw->hdr;
	rec->size = size;
	rec->version = LBR_SNAP_ABI_VERSION;
	rec->hdr_size = sizeof(*rec);
	rec->entry_size = sizeof(struct lbr_snap_branch);
	rec->nr_entries = 0;
	rec->flags = 0;
	rec->ts_ns = ktime_get_mono_fast_ns();
	rec->cpu = smp_processor_id();
	rec->pid = current->pid;
	rec->tgid = current->tgid;
	rec->target_id = t->id;
	rec->func_addr = t->start;
	rec->caller = caller;
	rec->retval = ret;
	rec->ret_type = t->ret_type;
	rec->backend = lbr_hw.backend;
	rec->lbr_format = lbr_hw.fmt.format;
	rec->hook = t->hook;
	rec->probe_entries = 0;
	rec->reserved1 = 0;
	if (depth && !(ctl & lbr_hw.enable_mask))
		rec->flags |= LBR_SNAP_REC_WAS_OFF;
	if (ran_again)
		rec->flags |= LBR_SNAP_REC_RAN_AGAIN;
	if (!depth)
		rec->flags |= LBR_SNAP_REC_NO_LBR;
	memcpy(rec->comm, current->comm, sizeof(rec->comm));
	rec->comm[sizeof(rec->comm) - 1] = '\0';

	c->captured++;
	/* Still inside the guard: the wakeup is on the capture path too. */
	lbr_buf_commit(&res);
	this_cpu_dec(lbr_capture_nesting);
	local_irq_restore(flags);
	return;

out_unfreeze:
	if (frozen)
		lbr_hw_unfreeze(ctl);
	this_cpu_dec(lbr_capture_nesting);
	local_irq_restore(flags);
	return;

out_nested:
	/*
	 * Before the outer capture unfroze LBR, @ctl is its frozen value and
	 * writing it changes nothing; after, this return froze LBR again and
	 * must undo it.
	 */
	if (frozen)
		lbr_hw_unfreeze(ctl);
	this_cpu_dec(lbr_capture_nesting);
	local_irq_restore(flags);
}
NOKPROBE_SYMBOL(lbr_capture_record);

/**
 * lbr_capture - record one return of a target
 * @t: the target
 * @ax: the raw return value register
 * @caller: where the target returns to
 * @frozen: LBR was frozen by the hook (false for the "none" backend)
 * @ctl: the control MSR's low half as lbr_hw_freeze() found it
 * @ret_site: where the target's RET landed (see lbr_probe_entries())
 *
 * From a hook, with preemption off; interrupts are off in the fexit hook
 * and may be on in the kretprobe one.  Unfreezes LBR.
 *
 * Most returns are successes, which capture=errors leaves out: they are
 * counted and LBR unfrozen right here, a few dozen instructions, with
 * per-CPU increments that an interrupt cannot tear (one instruction
 * each) and no interrupt turned off.  Not inside a capture on this CPU
 * (a target on the capture path, or returning in an NMI): that one is
 * counted as recursion by lbr_capture_record().
 */
void notrace lbr_capture(struct lbr_target *t, unsigned long ax,
			 unsigned long caller, bool frozen, u32 ctl,
			 unsigned long ret_site)
{
	struct lbr_counters __percpu *c = t->counters;

	if (READ_ONCE(lbr_capture_all) ||
	    lbr_is_error(t->ret_type, lbr_retval(t->ret_type, ax)) ||
	    __this_cpu_read(lbr_capture_nesting)) {
		lbr_capture_record(t, ax, caller, frozen, ctl, ret_site);
		return;
	}
	this_cpu_inc(c->hits);
	this_cpu_inc(c->filtered);
	/* See lbr_capture_record(). */
	if (frozen) {
		if (__this_cpu_read(lbr_cpu_depth) &&
		    !(ctl & lbr_hw.enable_mask))
			this_cpu_inc(c->lbr_off);
		lbr_hw_unfreeze(ctl);
	}
}
NOKPROBE_SYMBOL(lbr_capture);
