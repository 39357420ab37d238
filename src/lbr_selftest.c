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
 *   accessor (lbr_cpu_probe_msrs(), both modes): no write, so nothing is
 *   lost of what another LBR user holds;
 * - in mode=raw, where it programs LBR itself, runs a known pattern of
 *   calls with LBR recording every kernel branch, freezes LBR and looks
 *   for the calls in it (lbr_cpu_selftest()).  In mode=perf the filter is
 *   perf's to program: a pattern it may not record proves nothing.
 * A CPU that fails gets no LBR (no records read there), is logged once
 * each time it comes online, and GET_INFO names it with the first
 * failure's reason (lbr_cpu_failed()).
 */
#include <linux/compiler.h>
#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>

#include "compat.h"
#include "lbr_snap.h"

enum lbr_cpu_fault {
	LBR_CPU_OK,
	LBR_CPU_MSR_FAULTS,	/* an entry's MSR faulted */
	LBR_CPU_RECORDS_NOTHING,/* the pattern's calls were not recorded */
};

struct lbr_cpu_health {
	u8 fault;		/* enum lbr_cpu_fault */
	u8 found;		/* RECORDS_NOTHING: the calls found, best try */
	u8 entries;		/* and the entries the LBR held */
	u32 msr;		/* MSR_FAULTS: the first MSR that faulted */
};

static DEFINE_PER_CPU(struct lbr_cpu_health, lbr_cpu_health);

/* Of the pattern: calls, and tries (an NMI may push calls out). */
#define LBR_SELFTEST_CALLS	3
#define LBR_SELFTEST_TRIES	3

/* The self-test's copy of the LBR, one CPU at a time. */
static DEFINE_RAW_SPINLOCK(lbr_selftest_lock);
static u64 lbr_selftest_raw[LBR_RAW_MAX_MSRS];
static struct lbr_snap_branch lbr_selftest_br[LBR_SNAP_MAX_ENTRIES];

/* Forget what an earlier time online found (lbr_hw_cpu_online()). */
void lbr_cpu_health_clear(void)
{
	struct lbr_cpu_health *h = this_cpu_ptr(&lbr_cpu_health);

	memset(h, 0, sizeof(*h));
}

static bool lbr_msr_faults(u32 msr, struct lbr_cpu_health *h)
{
	u64 v;

	if (!lbr_rdmsr_safe(msr, &v))
		return false;
	h->fault = LBR_CPU_MSR_FAULTS;
	h->msr = msr;
	return true;
}

/**
 * lbr_cpu_probe_msrs - can this CPU read every LBR MSR of @depth entries?
 * @depth: the entries lbr_snap will read here
 *
 * On the CPU itself, sleeping or not.  Each FROM, TO and (if read) INFO
 * MSR once, in the order the capture path reads them.
 * Return: 0, or -EIO (the first MSR that faulted is kept for GET_INFO).
 */
int lbr_cpu_probe_msrs(unsigned int depth)
{
	struct lbr_cpu_health *h = this_cpu_ptr(&lbr_cpu_health);
	u32 stride = lbr_hw.from_stride;
	unsigned int i;

	if (lbr_hw.tos_msr && lbr_msr_faults(lbr_hw.tos_msr, h))
		return -EIO;
	for (i = 0; i < depth; i++) {
		if (lbr_msr_faults(lbr_hw.from_msr + i * stride, h) ||
		    ((lbr_hw.planes & LBR_RAW_TO) &&
		     lbr_msr_faults(lbr_hw.to_msr + i * stride, h)) ||
		    ((lbr_hw.planes & LBR_RAW_INFO) &&
		     lbr_msr_faults(lbr_hw.info_msr + i, h)))
			return -EIO;
	}
	return 0;
}

/* The pattern: LBR_SELFTEST_CALLS direct calls of a leaf, nothing else. */
static noinline notrace void lbr_selftest_leaf(void)
{
	barrier();
}
NOKPROBE_SYMBOL(lbr_selftest_leaf);

static noinline notrace void lbr_selftest_pattern(void)
{
	lbr_selftest_leaf();
	barrier();
	lbr_selftest_leaf();
	barrier();
	lbr_selftest_leaf();
	barrier();
}
NOKPROBE_SYMBOL(lbr_selftest_pattern);
static_assert(LBR_SELFTEST_CALLS == 3);

/*
 * A call of the pattern's: from inside lbr_selftest_pattern() (its size
 * is a few dozen bytes), to the leaf or just before it, where call depth
 * tracking's thunk sits in the padding.
 */
static bool lbr_selftest_call(const struct lbr_snap_branch *b)
{
	unsigned long leaf = (unsigned long)lbr_selftest_leaf;
	unsigned long pat = (unsigned long)lbr_selftest_pattern;

	return b->from >= pat && b->from < pat + 256 &&
	       b->to <= leaf && b->to + 64 >= leaf;
}

/* One run of the pattern: the calls found in the frozen LBR. */
static unsigned int lbr_selftest_once(unsigned int depth, u8 *entries)
{
	unsigned int planes, n, i, found = 0;
	u32 tos;

	lbr_selftest_pattern();
	lbr_hw_freeze();
	planes = lbr_hw_read_raw(lbr_selftest_raw, depth, &tos);
	n = lbr_raw_decode(lbr_selftest_raw, depth, planes, tos,
			   lbr_selftest_br);
	for (i = 0; i < n; i++)
		found += lbr_selftest_call(&lbr_selftest_br[i]);
	*entries = n;
	return found;
}

/**
 * lbr_cpu_selftest - does this CPU's LBR record the branches it takes?
 * @depth: the entries lbr_snap reads here
 * @ctl: a control MSR value that records every kind of kernel branch
 *
 * mode=raw, on the CPU itself, interrupts off, with the LBR filter
 * (LBR_SELECT or ARCH_LBR_DEPTH) already set to record the kernel's
 * branches of every kind.  Writes @ctl, runs the pattern, freezes LBR and
 * looks for its calls, up to LBR_SELFTEST_TRIES times.  Leaves LBR
 * frozen: the caller writes its own values next.
 * Return: 0, or -EIO (what was found is kept for GET_INFO).
 */
int lbr_cpu_selftest(unsigned int depth, u64 ctl)
{
	struct lbr_cpu_health *h = this_cpu_ptr(&lbr_cpu_health);
	unsigned int try, found = 0, best = 0;
	u8 entries = 0, best_entries = 0;

	lockdep_assert_irqs_disabled();
	raw_spin_lock(&lbr_selftest_lock);
	for (try = 0; try < LBR_SELFTEST_TRIES; try++) {
		if (lbr_wrmsr_safe(lbr_hw.ctl_msr, ctl))
			break;
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
	h->fault = LBR_CPU_RECORDS_NOTHING;
	h->found = best;
	h->entries = best_entries;
	return -EIO;
}

static int lbr_cpu_health_desc(unsigned int cpu, char *s, size_t len)
{
	const struct lbr_cpu_health *h = per_cpu_ptr(&lbr_cpu_health, cpu);

	if (h->fault == LBR_CPU_MSR_FAULTS)
		return snprintf(s, len, "cpu%u: LBR MSR %#x faults", cpu,
				h->msr);
	return snprintf(s, len,
			"cpu%u: LBR recorded %u of %u test calls (%u entries)",
			cpu, h->found, LBR_SELFTEST_CALLS, h->entries);
}

/* The pr_warn() of a CPU that failed, on it or for it. */
void lbr_cpu_health_report(unsigned int cpu)
{
	char why[96];

	lbr_cpu_health_desc(cpu, why, sizeof(why));
	pr_warn("%s: no LBR records from it\n", why);
}

/**
 * lbr_cpu_failed - the online CPUs given no LBR, for GET_INFO
 * @cpus: their list ("1,3-4"), cut to @clen
 * @clen: the room in @cpus
 * @why: the first one's reason, cut to @wlen
 * @wlen: the room in @why
 * Return: how many.
 */
unsigned int lbr_cpu_failed(char *cpus, size_t clen, char *why, size_t wlen)
{
	unsigned int cpu, nr = 0;
	size_t at = 0;

	cpus[0] = '\0';
	why[0] = '\0';
	for_each_online_cpu(cpu) {
		if (per_cpu(lbr_cpu_health, cpu).fault == LBR_CPU_OK)
			continue;
		if (!nr++)
			lbr_cpu_health_desc(cpu, why, wlen);
		if (at < clen)
			at += snprintf(cpus + at, clen - at, "%s%u",
				       at ? "," : "", cpu);
	}
	return nr;
}
