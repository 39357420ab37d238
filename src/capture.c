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

/**
 * lbr_capture - record one return of a target
 * @t: the target
 * @ax: the raw return value register
 * @caller: where the target returns to
 * @frozen: LBR was frozen by the hook (false for the "none" backend)
 * @ctl: the control MSR as lbr_hw_freeze() found it
 * @ret_site: where the target's RET landed (see lbr_probe_entries())
 *
 * Interrupts stay off from here to the commit: the LBR read must not be
 * disturbed and the per-CPU counters need no atomics.  Unfreezes LBR.
 */
void notrace lbr_capture(struct lbr_target *t, unsigned long ax,
			 unsigned long caller, bool frozen, u64 ctl,
			 unsigned long ret_site)
{
	s64 ret = lbr_retval(t->ret_type, ax);
	struct lbr_snap_branch *br;
	struct lbr_buf_resv res;
	struct lbr_snap_record *rec;
	struct lbr_counters *c;
	unsigned long flags;
	unsigned int nr = 0, depth;
	bool ran_again = false;
	bool found;

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
	if (!READ_ONCE(lbr_capture_all) && !lbr_is_error(t->ret_type, ret)) {
		c->filtered++;
		goto out_unfreeze;
	}

	rec = lbr_buf_reserve(sizeof(*rec) + lbr_hw.depth * sizeof(*br), &res);
	if (!rec) {
		c->dropped++;
		goto out_unfreeze;
	}
	br = (struct lbr_snap_branch *)(rec + 1);
	if (depth) {
		nr = lbr_hw_read(br, depth);
		ran_again = lbr_hw_ran_again();
	}
	if (frozen)
		lbr_hw_unfreeze(ctl);

	memset(rec, 0, sizeof(*rec));
	rec->size = sizeof(*rec) + nr * sizeof(*br);
	rec->version = LBR_SNAP_ABI_VERSION;
	rec->hdr_size = sizeof(*rec);
	rec->entry_size = sizeof(*br);
	rec->nr_entries = nr;
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
	if (depth && !(ctl & lbr_hw.enable_mask))
		rec->flags |= LBR_SNAP_REC_WAS_OFF;
	if (ran_again)
		rec->flags |= LBR_SNAP_REC_RAN_AGAIN;
	if (depth) {
		rec->probe_entries = lbr_probe_entries(br, nr, ret_site,
						       &found);
		if (!found)
			rec->flags |= LBR_SNAP_REC_NO_RETURN;
	} else {
		rec->flags |= LBR_SNAP_REC_NO_LBR;
	}
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
NOKPROBE_SYMBOL(lbr_capture);
