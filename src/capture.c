// SPDX-License-Identifier: GPL-2.0
/*
 * Writing a record: what both hooks do once LBR is frozen.
 */
#include <asm/tsc.h>
#include <linux/irqflags.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "capture.h"
#include "func_lookup.h"
#include "lbr_xsave.h"

/*
 * Nesting of lbr_capture() on this CPU.  A target that lbr_snap's own
 * capture path reaches (a clocksource read, irq_work) and
 * that the denylist of targets.c missed would enter the capture again from
 * inside it: the nested return is counted and not recorded.  Interrupts
 * are off in the capture, so only such a call, or a target returning in
 * an NMI, can nest.
 */
DEFINE_PER_CPU(unsigned int, lbr_capture_nesting);
/* This CPU dropped a record since its last: its next one says so. */
static DEFINE_PER_CPU(bool, lbr_capture_dropped);

/* capture=all: every return, not only errors. */
bool lbr_capture_all __read_mostly;

void lbr_capture_set_every_return(bool all)
{
	WRITE_ONCE(lbr_capture_all, all);
}

bool lbr_capture_every_return(void)
{
	return READ_ONCE(lbr_capture_all);
}

/*
 * Whether @ret is one of the errors @t lists; a pointer's ERR_PTR too.
 * Not a boolean's or a void's: the spec is refused for those.
 */
static __always_inline bool lbr_errno_listed(const struct lbr_target *t,
					     s64 ret)
{
	unsigned int i;

	if (!lbr_is_error(LBR_SNAP_RET_LONG, ret))
		return false;
	for (i = 0; i < t->nr_errnos; i++)
		if (ret == -(s64)t->errnos[i])
			return true;
	return false;
}

/*
 * function_graph's return trampoline (return_to_handler), or 0: what an
 * fexit target's caller reads as when the tracer is on the same function.
 */
static unsigned long lbr_fgraph_return __read_mostly;

/* Learn return_to_handler's address, where the kernel has one. */
void __init lbr_capture_init(void)
{
	unsigned long size;

	if (lbr_func_lookup("return_to_handler", &lbr_fgraph_return, &size))
		lbr_fgraph_return = 0;
}

/**
 * lbr_capture_msrs - what a return costs in MSR accesses, for GET_INFO
 * @filtered: set to those of a return filtered after the freeze
 *
 * A recorded return, of either hook: the freeze's RDMSR and WRMSR
 * (lbr_hw_freeze(), or the trampoline's), lbr_read_frozen() on a CPU of
 * lbr_hw.depth entries (the legacy TOS and each entry's planes, or one
 * XSAVES), lbr_hw_ran_again()'s RDMSR and the unfreeze's RDMSR and WRMSR.
 * A return filtered after the freeze (every kretprobe's; an fexit one's
 * left out by the task filter) freezes and unfreezes; an fexit
 * trampoline lets go before the freeze what it filters by value, and
 * both hooks let go at the entry the calls of a task the tree filter
 * leaves out, once its CPU knows it (task_follow.c): @filtered is what
 * such a return costs at most.
 * Not counted: the PMI check of a return in an NMI (lbr_hw_pmi_frozen()),
 * the unfreeze of a return that found LBR already off, an XSAVES read
 * that falls back to the MSRs, a CPU of fewer entries (hybrid parts), and
 * the wakeup of a waiting reader (irq_work: a self-IPI, an x2APIC's a
 * WRMSR).  The LBR lab counts what a CPU does (tests/lbr-lab), and the
 * selftest compares the two.
 * Return: the accesses of a recorded return, 0 without LBR.
 */
u32 lbr_capture_msrs(u32 *filtered)
{
	u32 n;

	*filtered = 0;
	if (lbr_hw.backend == LBR_SNAP_BACKEND_NONE || !lbr_hw.depth)
		return 0;
	/* The freeze's RDMSR and WRMSR, and the unfreeze's. */
	*filtered = 4;
	/* Those, and lbr_hw_ran_again()'s RDMSR. */
	n = 4 + 1;
	if (lbr_xsave_used())
		return n;
	/* lbr_hw_read_raw(): the legacy TOS, and each MSR of the copy. */
	if (lbr_hw.backend == LBR_SNAP_BACKEND_INTEL)
		n++;
	return n + lbr_raw_msrs(lbr_hw.planes, lbr_hw.depth);
}

/*
 * When the call came in, in CLOCK_MONOTONIC ns, from the TSC its hook read
 * then (@entry_tsc) and the TSC and the clock now (@now_ns): 0 when not
 * known.  The TSC is read by RDTSC, no MSR access; its rate is the
 * kernel's calibration (tsc_khz).  A task moved to another CPU in between
 * compares two CPUs' TSCs, which are in step where the kernel uses the
 * TSC as its clock (not gated on check_tsc_unstable(): the LBR lab's
 * emulated TSC is found unstable, and a task that did not move is timed
 * right all the same).  One read before the other, or over an hour apart,
 * is no duration (0).
 */
static __always_inline u64 lbr_entry_ns(u64 entry_tsc, u64 now_ns)
{
	unsigned int khz;
	u64 now, d;

	/* No entry time (a kretprobe before any tree filter): no RDTSC. */
	if (!entry_tsc)
		return 0;
	khz = READ_ONCE(tsc_khz);
	now = rdtsc();
	if (!khz || now < entry_tsc)
		return 0;
	d = now - entry_tsc;
	/*
	 * Over an hour is no call's duration; the bound also keeps the
	 * quotient below 2^64, or the DIVQ of mul_u64_u32_div() would raise
	 * #DE.
	 */
	if (d > (u64)khz * 1000 * 3600)
		return 0;
	d = mul_u64_u32_div(d, NSEC_PER_MSEC, khz);
	return d < now_ns ? now_ns - d : 0;
}

/*
 * lbr_capture()'s record: everything but a return it filters out.  The
 * hook froze LBR; interrupts stay off from here to the commit: the LBR
 * read must not be disturbed and the per-CPU counters need no atomics.
 * Unfreezes LBR after a kretprobe's freeze (an fexit trampoline does as
 * it leaves).  The record keeps the MSRs as read: decoding, ordering and
 * counting the probe's entries wait for read() (record_decode.c), out of
 * this window.
 */
noinline void notrace lbr_capture_record(struct lbr_target *t,
					 unsigned long ax, unsigned long caller,
					 bool frozen, u32 ctl,
					 unsigned long ret_site, u64 entry_tsc)
{
	/*
	 * A void function's RAX is whatever it held.  Void targets are
	 * attached only with capture=all (lbr_targets_set_capture()), so the
	 * filter in lbr_capture() needs no case for them: the one it can
	 * see is an fexit return in flight when its target was detached and
	 * the mode then set to errors, and with ret 0 it is filtered below.
	 */
	s64 ret = t->ret_type == LBR_SNAP_RET_VOID ? 0 :
		  lbr_retval(t->ret_type, ax);
	struct lbr_raw_record *raw;
	struct lbr_snap_record *rec;
	struct lbr_buf_resv res;
	struct lbr_counters *c;
	unsigned long flags;
	unsigned int depth, size, nmsr, stack_max, nr_stack = 0;
	u64 ts_ns, entry_ns;
	bool fexit = t->hook == LBR_SNAP_HOOK_FEXIT;
	/* A kretprobe's freeze is undone here, a trampoline's as it leaves. */
	bool thaw = frozen && !fexit;
	bool ran_again = false, was_off, compat;

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
	 * froze (and this, or the trampoline, unfreezes).
	 */
	depth = frozen ? __this_cpu_read(lbr_cpu_depth) : 0;
	/*
	 * LBR was off before this return froze it (lbr_hw_was_off()).
	 * Counted per CPU with interrupts off, no atomics; not on a CPU
	 * lbr_snap reads nothing from (lbr_hw_cpu_online()).  Both hooks
	 * freeze with interrupts off, so no interrupt's return lands in
	 * another's frozen window; an NMI's in here is counted as recursion,
	 * one before it finds LBR off (see lbr_capture()).
	 */
	was_off = depth && lbr_hw_was_off(ctl);
	if (was_off) {
		c->lbr_off++;
		lbr_capture_found_off(ctl);
	}
	/* capture=errors and a success that came in nested: not recorded. */
	if (!READ_ONCE(lbr_capture_all) && !lbr_is_error(t->ret_type, ret)) {
		c->filtered++;
		goto out_unfreeze;
	}
	/* An errno list: those errors only, whatever the capture mode. */
	if (t->nr_errnos && !lbr_errno_listed(t, ret)) {
		c->filtered++;
		goto out_unfreeze;
	}
	if (!lbr_task_wanted()) {
		c->filtered++;
		/* Its next calls here may go before the freeze. */
		lbr_follow_learn();
		goto out_unfreeze;
	}

	/*
	 * The return's time, and so the call's duration, before the capture
	 * costs any: LBR is frozen, the clock's branches are no entries.
	 */
	ts_ns = ktime_get_mono_fast_ns();
	entry_ns = lbr_entry_ns(entry_tsc, ts_ns);

	/* Room for the whole stack: what it does not take is given back. */
	stack_max = lbr_stack_depth();
	nmsr = lbr_raw_msrs(lbr_hw.planes, depth);
	size = sizeof(*raw) + (nmsr + stack_max) * sizeof(u64);
	raw = lbr_buf_reserve(size, &res);
	if (!raw) {
		c->dropped++;
		__this_cpu_write(lbr_capture_dropped, true);
		goto out_unfreeze;
	}
	if (depth) {
		raw->planes = lbr_read_frozen(raw->msr, depth, &raw->tos);
		ran_again = lbr_hw_ran_again();
	}
	if (thaw)
		lbr_hw_unfreeze(ctl);
	/* What this CPU's filter, as written, records (interrupts still off). */
	if (depth && !__this_cpu_read(lbr_cpu_rets))
		raw->planes |= LBR_RAW_RET_FILTERED;
	/*
	 * After the read: the unwinder's branches are not in the record.
	 * Its first frame is the caller, as the unwinder recovered it from
	 * any tracer's trampoline (call_stack.c): the record's too.
	 */
	if (stack_max) {
		if (fexit || LBR_UNWINDS_KRETPROBE)
			nr_stack = lbr_stack_save(&raw->msr[nmsr], stack_max,
						  caller, fexit ? t->start : 0,
						  fexit ? t->start + t->size : 0);
		if (nr_stack)
			caller = raw->msr[nmsr];
		size -= (stack_max - nr_stack) * sizeof(u64);
		lbr_buf_trim(&res, raw, size);
	} else if (fexit && unlikely(caller == lbr_fgraph_return)) {
		/*
		 * function_graph on the same function took the caller's
		 * return slot before the fexit trampoline read it: the
		 * unwinder recovers the real one, a frame's walk, only then.
		 */
		u64 real;

		if (lbr_stack_save(&real, 1, caller, t->start,
				   t->start + t->size))
			caller = real;
	}

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
	rec->ts_ns = ts_ns;
	rec->entry_ns = entry_ns;
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
	rec->nr_stack = nr_stack;
	if (was_off)
		rec->flags |= LBR_SNAP_REC_WAS_OFF;
	if (ran_again)
		rec->flags |= LBR_SNAP_REC_RAN_AGAIN;
	if (!depth)
		rec->flags |= LBR_SNAP_REC_NO_LBR;
	if (stack_max && !nr_stack)
		rec->flags |= LBR_SNAP_REC_NO_STACK;
	/* Under the nesting guard: no other capture of this CPU in between. */
	if (__this_cpu_read(lbr_capture_dropped)) {
		rec->flags |= LBR_SNAP_REC_AFTER_DROP;
		__this_cpu_write(lbr_capture_dropped, false);
	}
	memcpy(rec->comm, current->comm, sizeof(rec->comm));
	rec->comm[sizeof(rec->comm) - 1] = '\0';
	if (lbr_tree_syscall(&rec->syscall_seq, &rec->syscall_nr,
			     &rec->syscall_ns, &compat)) {
		rec->flags |= LBR_SNAP_REC_SYSCALL;
		if (compat)
			rec->flags |= LBR_SNAP_REC_SYSCALL_COMPAT;
	} else {
		rec->syscall_seq = 0;
		rec->syscall_nr = 0;
		rec->syscall_ns = 0;
	}

	c->captured++;
	/* Still inside the guard: the wakeup is on the capture path too. */
	lbr_buf_commit(&res);
	this_cpu_dec(lbr_capture_nesting);
	local_irq_restore(flags);
	return;

out_unfreeze:
	if (thaw)
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
	if (thaw)
		lbr_hw_unfreeze(ctl);
	this_cpu_dec(lbr_capture_nesting);
	local_irq_restore(flags);
}
NOKPROBE_SYMBOL(lbr_capture_record);

