// SPDX-License-Identifier: GPL-2.0
/*
 * Each CPU's LBR checked before lbr_snap uses it.
 *
 * Detection reads one FROM and the TOS (lbr_probe_intel()); every other
 * entry is first read in a hook, where a fault is fixed up as 0, and an
 * enable bit that reads back set proves nothing is recorded: a hypervisor
 * may expose part of the stack, or keep the bit and record nothing.  perf
 * writes and reads back every FROM and TO at init (check_msr() in
 * arch/x86/events/intel/core.c) and gives up LBR on the first that fails.
 * lbr_snap, on each CPU as it starts to use it:
 * - reads every FROM, TO and INFO MSR it will read, with the _safe
 *   accessor (lbr_cpu_probe_msrs()): no write, so nothing another LBR
 *   user holds is lost;
 * - in mode=raw, where it programs LBR itself, records every kernel
 *   branch, runs a chain of four functions whose last freezes LBR before
 *   any return, and looks for its three calls as the newest entries
 *   (lbr_cpu_selftest()).  In mode=perf the filter is perf's to program:
 *   a pattern it may not record proves nothing.
 * A CPU that fails gets no LBR (its records say NO_LBR), is logged each
 * time it comes online, and GET_INFO names it with the first failure's
 * reason (lbr_cpu_failed()).  Not counted there: CPUs refused for other
 * reasons (another kind of LBR, control MSRs that refuse lbr_snap's
 * values), which have their own log lines.
 */
#include <linux/bug.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/spinlock.h>

#include "compat.h"
#include "lbr_snap.h"

enum lbr_cpu_fault {
	LBR_CPU_OK,
	LBR_CPU_MSR_FAULTS,	/* reading an entry's MSR faulted */
	LBR_CPU_WRITE_FAULTS,	/* writing a control MSR faulted */
	LBR_CPU_RECORDS_NOTHING,/* the chain's calls were not recorded */
};

/*
 * One CPU's result, in one word so that GET_INFO reads it whole while the
 * CPU may be checked again: fault (8 bits), then for RECORDS_NOTHING the
 * calls found (8) and the entries held (16) on the best try, or the MSR.
 */
static DEFINE_PER_CPU(u64, lbr_cpu_health);

static u64 lbr_health(enum lbr_cpu_fault fault, u32 msr, u8 found,
		      u16 entries)
{
	return fault | (u64)found << 8 | (u64)entries << 16 | (u64)msr << 32;
}

static void lbr_health_set(unsigned int cpu, u64 h)
{
	WARN_ON_ONCE(cpu != raw_smp_processor_id());
	WRITE_ONCE(*per_cpu_ptr(&lbr_cpu_health, cpu), h);
}

/* Of the chain: calls, and tries (an NMI may come in between). */
#define LBR_SELFTEST_CALLS	3	/* into _b, _c and _d */
#define LBR_SELFTEST_TRIES	3

/* The self-test's copy of the LBR, one CPU at a time. */
static DEFINE_RAW_SPINLOCK(lbr_selftest_lock);
static u64 lbr_selftest_raw[LBR_RAW_MAX_MSRS];
static struct lbr_snap_branch lbr_selftest_br[LBR_SNAP_MAX_ENTRIES];

/**
 * lbr_cpu_health_clear - forget what an earlier time online found
 * @cpu: this CPU
 */
void lbr_cpu_health_clear(unsigned int cpu)
{
	lbr_health_set(cpu, LBR_CPU_OK);
}

static bool lbr_msr_faults(unsigned int cpu, u32 msr)
{
	u64 v;

	if (!lbr_rdmsr_safe(msr, &v))
		return false;
	lbr_health_set(cpu, lbr_health(LBR_CPU_MSR_FAULTS, msr, 0, 0));
	return true;
}

/**
 * lbr_cpu_probe_msrs - can this CPU read every LBR MSR of @depth entries?
 * @cpu: this CPU
 * @depth: the entries lbr_snap will read here
 *
 * On the CPU itself; sleeping or not.  Each FROM, TO and (if read) INFO
 * MSR once, as the capture path reads them.
 * Return: 0, or -EIO (the first MSR that faulted is kept for GET_INFO).
 */
int lbr_cpu_probe_msrs(unsigned int cpu, unsigned int depth)
{
	u32 stride = lbr_hw.from_stride;
	unsigned int i;

	if (lbr_hw.tos_msr && lbr_msr_faults(cpu, lbr_hw.tos_msr))
		return -EIO;
	for (i = 0; i < depth; i++) {
		if (lbr_msr_faults(cpu, lbr_hw.from_msr + i * stride) ||
		    ((lbr_hw.planes & LBR_RAW_TO) &&
		     lbr_msr_faults(cpu, lbr_hw.to_msr + i * stride)) ||
		    ((lbr_hw.planes & LBR_RAW_INFO) &&
		     lbr_msr_faults(cpu, lbr_hw.info_msr + i)))
			return -EIO;
	}
	return 0;
}

/**
 * lbr_cpu_write_faulted - a control MSR refused a write while checking
 * @cpu: this CPU
 * @msr: the MSR
 */
void lbr_cpu_write_faulted(unsigned int cpu, u32 msr)
{
	lbr_health_set(cpu, lbr_health(LBR_CPU_WRITE_FAULTS, msr, 0, 0));
}

/*
 * The chain: lbr_selftest_a() calls _b(), which calls _c(), which calls
 * _d(), which freezes LBR first thing.  No return comes before the
 * freeze, so the calls are the newest entries whatever returns cost
 * (return thunks, SRSO's safe return, call depth tracking), and the three
 * looked for (into _b(), _c(), _d()), made from functions of a few bytes,
 * fit any LBR.  No instrumentation (notrace; KCOV and the sanitizers off
 * for this file in Kbuild: a KASAN or KCSAN call on lbr_hw's loads would
 * come before the freeze), no kprobe.
 */
static noinline notrace void lbr_selftest_d(void)
{
	lbr_hw_freeze();
	barrier();
}
NOKPROBE_SYMBOL(lbr_selftest_d);

static noinline notrace void lbr_selftest_c(void)
{
	lbr_selftest_d();
	barrier();
}
NOKPROBE_SYMBOL(lbr_selftest_c);

static noinline notrace void lbr_selftest_b(void)
{
	lbr_selftest_c();
	barrier();
}
NOKPROBE_SYMBOL(lbr_selftest_b);

static noinline notrace void lbr_selftest_a(void)
{
	lbr_selftest_b();
	barrier();
}
NOKPROBE_SYMBOL(lbr_selftest_a);

/*
 * Is @b the call of @callee made from @caller?  From the first bytes of
 * @caller (an ENDBR and a frame pointer's push and move come before the
 * call), to @callee, or just before it where call depth tracking's thunk
 * sits in the padding (16 bytes, 32 with CALL_THUNKS_DEBUG), or past an
 * ENDBR a direct call may skip.
 */
static bool lbr_selftest_call(const struct lbr_snap_branch *b,
			      void (*caller)(void), void (*callee)(void))
{
	unsigned long from = (unsigned long)caller;
	unsigned long to = (unsigned long)callee;

	return b->from >= from && b->from < from + 16 &&
	       b->to + 32 >= to && b->to <= to + 4;
}

/* One run of the chain: how many of its calls are the newest entries. */
static unsigned int lbr_selftest_once(unsigned int depth, u16 *entries)
{
	/* Callee, then its caller: the newest call first. */
	static void (* const chain[])(void) = {
		lbr_selftest_d, lbr_selftest_c, lbr_selftest_b, lbr_selftest_a,
	};
	unsigned int planes, n, i, found = 0;
	u32 tos;

	BUILD_BUG_ON(ARRAY_SIZE(chain) != LBR_SELFTEST_CALLS + 1);
	lbr_selftest_a();
	planes = lbr_hw_read_raw(lbr_selftest_raw, depth, &tos);
	n = lbr_raw_decode(lbr_selftest_raw, depth, planes, tos,
			   lbr_selftest_br);
	*entries = n;
	/*
	 * Oldest first: the newest at the end (AMD's wrong-path entries are
	 * not among them: lbr_raw_decode() drops them).
	 */
	for (i = n; i-- && found < LBR_SELFTEST_CALLS;) {
		if (!lbr_selftest_call(&lbr_selftest_br[i], chain[found + 1],
				       chain[found]))
			break;
		found++;
	}
	return found;
}

/**
 * lbr_cpu_selftest - does this CPU's LBR record the branches it takes?
 * @cpu: this CPU
 * @depth: the entries lbr_snap reads here
 * @ctl: a control MSR value that records every kind of kernel branch
 *
 * mode=raw, on the CPU itself, interrupts off, with the LBR filter
 * (LBR_SELECT or ARCH_LBR_DEPTH) already set to record the kernel's
 * branches of every kind.  Writes @ctl, runs the chain, which freezes
 * LBR, and looks for its calls, up to LBR_SELFTEST_TRIES times.  Leaves
 * LBR frozen: the caller writes its own values next.
 * Return: 0, or -EIO (what was found is kept for GET_INFO).
 */
int lbr_cpu_selftest(unsigned int cpu, unsigned int depth, u64 ctl)
{
	unsigned int try, found = 0, best = 0;
	u16 entries = 0, best_entries = 0;

	lockdep_assert_irqs_disabled();
	/* 32-bit FROM and TO in one MSR hold no kernel address: no test. */
	if (lbr_hw.backend == LBR_SNAP_BACKEND_INTEL &&
	    lbr_hw.fmt.format == LBR_FMT_32)
		return 0;
	raw_spin_lock(&lbr_selftest_lock);
	for (try = 0; try < LBR_SELFTEST_TRIES; try++) {
		if (lbr_wrmsr_safe(lbr_hw.ctl_msr, ctl)) {
			raw_spin_unlock(&lbr_selftest_lock);
			lbr_cpu_write_faulted(cpu, lbr_hw.ctl_msr);
			return -EIO;
		}
		found = lbr_selftest_once(depth, &entries);
		if (found > best || !try) {
			best = found;
			best_entries = entries;
		}
		if (found == LBR_SELFTEST_CALLS)
			break;
	}
	raw_spin_unlock(&lbr_selftest_lock);
	if (found == LBR_SELFTEST_CALLS)
		return 0;
	lbr_health_set(cpu, lbr_health(LBR_CPU_RECORDS_NOTHING, 0, best,
				       best_entries));
	return -EIO;
}

static int lbr_health_desc(unsigned int cpu, u64 h, char *s, size_t len)
{
	u32 msr = h >> 32;

	switch ((u8)h) {
	case LBR_CPU_MSR_FAULTS:
		return snprintf(s, len, "cpu%u: reading LBR MSR %#x faults",
				cpu, msr);
	case LBR_CPU_WRITE_FAULTS:
		return snprintf(s, len, "cpu%u: writing LBR MSR %#x faults",
				cpu, msr);
	default:
		return snprintf(s, len,
				"cpu%u: LBR recorded %u of %u test calls (%u entries)",
				cpu, (u8)(h >> 8), LBR_SELFTEST_CALLS,
				(u16)(h >> 16));
	}
}

/* The pr_warn() of a CPU that failed, on it. */
void lbr_cpu_health_report(unsigned int cpu)
{
	char why[96];

	lbr_health_desc(cpu, READ_ONCE(*per_cpu_ptr(&lbr_cpu_health, cpu)),
			why, sizeof(why));
	pr_warn("%s: no LBR records from it\n", why);
}

/**
 * lbr_cpu_failed - the online CPUs the check gave no LBR, for GET_INFO
 * @cpus: their list ("1,3"), whole numbers only, cut to @clen
 * @clen: the room in @cpus
 * @why: the first one's reason, cut to @wlen
 * @wlen: the room in @why
 * Return: how many (all of them, listed or not).
 */
unsigned int lbr_cpu_failed(char *cpus, size_t clen, char *why, size_t wlen)
{
	unsigned int cpu, nr = 0;
	size_t at = 0;
	u64 h;

	cpus[0] = '\0';
	why[0] = '\0';
	for_each_online_cpu(cpu) {
		h = READ_ONCE(*per_cpu_ptr(&lbr_cpu_health, cpu));
		if ((u8)h == LBR_CPU_OK)
			continue;
		if (!nr++)
			lbr_health_desc(cpu, h, why, wlen);
		lbr_cpu_list_add(cpus, clen, &at, cpu);
	}
	return nr;
}
