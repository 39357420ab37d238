// SPDX-License-Identifier: GPL-2.0
/*
 * Reading Arch LBR with one XSAVES of its state component instead of
 * 3 x depth RDMSRs, as perf does where the kernel has enabled the
 * component (intel_pmu_arch_lbr_read_xsave() in
 * arch/x86/events/intel/lbr.c).
 *
 * The kernel puts the LBR component (XFEATURE_LBR, 15) in IA32_XSS when
 * the CPU has Arch LBR (xfeatures_mask_independent() in
 * arch/x86/kernel/fpu/xstate.h), so XSAVES at CPL 0 can save it; it is
 * never part of a task's FPU state, and XSAVES only reads it.  The area
 * is the compacted form with that one component: the 512-byte legacy
 * region (not written: x87 and SSE are not asked for), the 64-byte
 * header, then struct arch_lbr_state (arch/x86/include/asm/fpu/types.h)
 * at offset 576, as perf's struct x86_perf_task_context_arch_lbr_xsave
 * lays it out.  One per CPU, 64-byte aligned as XSAVES wants.
 *
 * The capture path (capture.c) calls lbr_read_frozen() with LBR frozen
 * and interrupts off; a return inside a capture is recursion and not
 * recorded, so nothing else uses this CPU's area meanwhile.  The entries
 * are copied into the planes lbr_hw_read_raw() would have filled, so the
 * record and its decoding are the same whichever read made it.
 */
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/cpu.h>
#include <linux/errno.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <asm/asm.h>
#include <asm/cpufeature.h>
#include <asm/processor.h>

#include "lbr_snap.h"
#include "lbr_cpu.h"
#include "lbr_xsave.h"

#define LBR_XFEATURE		15	/* XFEATURE_LBR, asm/fpu/types.h */
#define LBR_XFEATURE_MASK	BIT_ULL(LBR_XFEATURE)
#define LBR_MSR_IA32_XSS	0xda0
#define LBR_CPUID_XSAVES	BIT(3)	/* CPUID.(0xd,1):EAX */

struct lbr_xsave_entry {
	u64 from;
	u64 to;
	u64 info;
};

/* struct arch_lbr_state, then up to the deepest Arch LBR there is. */
struct lbr_xsave_area {
	u8 legacy[512];
	u64 xstate_bv;
	u64 xcomp_bv;
	u64 header_reserved[6];
	u64 lbr_ctl;
	u64 lbr_depth;
	u64 ler_from;
	u64 ler_to;
	u64 ler_info;
	struct lbr_xsave_entry entries[LBR_SNAP_MAX_ENTRIES];
} __aligned(64);

/* The layout of struct arch_lbr_state after the compacted header. */
static_assert(offsetof(struct lbr_xsave_area, lbr_ctl) == 576);
static_assert(offsetof(struct lbr_xsave_area, entries) == 576 + 40);
static_assert(sizeof(struct lbr_xsave_entry) == 24);

/* Bytes of the component up to and with @depth entries. */
#define LBR_XSAVE_SIZE(depth) \
	(offsetof(struct lbr_xsave_area, entries) - \
	 offsetof(struct lbr_xsave_area, lbr_ctl) + \
	 (depth) * sizeof(struct lbr_xsave_entry))

enum lbr_read_choice { LBR_READ_AUTO, LBR_READ_MSR, LBR_READ_XSAVES };

static struct lbr_xsave_area __percpu *lbr_xsave_areas __read_mostly;
static enum lbr_read_choice lbr_read_choice __initdata;
static bool lbr_xsave_on __read_mostly;
static int lbr_xsave_fault_cpu = -1;	/* the first CPU whose XSAVES faulted */
static char lbr_xsave_why[96];

/* lbr_xsave_check_cpu()'s findings, or-ed over the CPUs. */
#define LBR_XSAVE_NO_XSS	BIT(0)	/* IA32_XSS without the LBR bit */
#define LBR_XSAVE_NOT_ENABLED	BIT(1)	/* XCOMP_BV without it */
#define LBR_XSAVE_MISMATCH	BIT(2)	/* saved LBR_CTL/DEPTH differ */
#define LBR_XSAVE_FAULT		BIT(3)	/* XSAVES or an MSR read faulted */
#define LBR_XSAVE_NOT_SAVED	BIT(4)	/* LBR on, and XSAVES saved nothing */
#define LBR_XSAVE_DEPTH		BIT(5)	/* DEPTH is not the one captures read */

/*
 * XSAVES of the LBR component alone, encoded as the kernel's XSAVES
 * (arch/x86/kernel/fpu/xstate.h: xsaves64 (%rdi)) for assemblers that
 * lack the mnemonic.  lbr_xsave_start() has seen it work on the CPUs
 * online then; should it fault anyway (a CPU that came later, a
 * hypervisor), the fixup skips to 2: leaving -EIO, and the caller turns
 * XSAVES off (lbr_xsave_fault()).
 */
static __always_inline int lbr_xsaves(struct lbr_xsave_area *a)
{
	int err = -EIO;

	asm volatile("1:	.byte 0x48, 0x0f, 0xc7, 0x2f\n"
		     "	xorl %[err], %[err]\n"
		     "2:\n"
		     _ASM_EXTABLE(1b, 2b)
		     : [err] "+r" (err), "+m" (*a)
		     : "D" (a), "a" ((u32)LBR_XFEATURE_MASK), "d" (0)
		     : "memory");
	return err;
}

/*
 * An XSAVES faulted in a capture.  As the kernel's own XSAVES into a
 * kernel buffer it should never (xsaves() in arch/x86/kernel/fpu/
 * xstate.h WARNs); not again: the MSRs from here on, GET_INFO's lbr_read
 * says msr, and lbr_xsave_report() logs why from process context.  No
 * printk here: a traced function may return holding a console's lock.
 */
static noinline __cold notrace void lbr_xsave_fault(void)
{
	cmpxchg(&lbr_xsave_fault_cpu, -1, raw_smp_processor_id());
	WRITE_ONCE(lbr_xsave_on, false);
}
NOKPROBE_SYMBOL(lbr_xsave_fault);

/**
 * lbr_read_frozen - copy the frozen LBR stack of this CPU
 * @msr: as for lbr_hw_read_raw()
 * @depth: this CPU's LBR depth
 * @tos: as for lbr_hw_read_raw()
 *
 * With LBR frozen and interrupts off.  One XSAVES where lbr_xsave_start()
 * chose it, else the MSRs one by one.  A component XSAVES did not write
 * (XSTATE_BV bit 15 clear: the state in its initial configuration, or an
 * IA32_XSS without the LBR bit on a CPU that came later) is read from
 * the MSRs too: no record loses its branches for the path.  A record
 * read by XSAVES says so (LBR_RAW_XSAVES, LBR_SNAP_REC_XSAVES once
 * decoded): the read that was asked for is the one that was made.
 * Return: what @msr holds, as lbr_hw_read_raw().
 */
notrace unsigned int lbr_read_frozen(u64 *msr, unsigned int depth, u32 *tos)
{
	unsigned int planes = lbr_hw.planes;
	struct lbr_xsave_area *a;
	unsigned int i;
	u64 *to, *info;

	if (!READ_ONCE(lbr_xsave_on) || !depth)
		return lbr_hw_read_raw(msr, depth, tos);
	a = this_cpu_ptr(lbr_xsave_areas);
	if (unlikely(lbr_xsaves(a))) {
		lbr_xsave_fault();
		return lbr_hw_read_raw(msr, depth, tos);
	}
	/*
	 * Nothing saved (the component in its initial configuration), or
	 * DEPTH changed since the load (/dev/cpu/N/msr, a hypervisor):
	 * XSAVES saves only DEPTH entries, and the rest of the buffer would
	 * be an earlier capture's.
	 */
	if (!(a->xstate_bv & LBR_XFEATURE_MASK) || a->lbr_depth != depth)
		return lbr_hw_read_raw(msr, depth, tos);
	/*
	 * Arch LBR: FROM, TO, and INFO if wanted, planes of @depth as
	 * lbr_hw_read_raw() lays them out (Arch LBR always has TO); entry 0
	 * newest, no TOS.
	 */
	*tos = 0;
	to = msr + depth;
	info = to + depth;
	for (i = 0; i < depth; i++) {
		msr[i] = a->entries[i].from;
		to[i] = a->entries[i].to;
	}
	if (planes & LBR_RAW_INFO)
		for (i = 0; i < depth; i++)
			info[i] = a->entries[i].info;
	return planes | LBR_RAW_XSAVES;
}
NOKPROBE_SYMBOL(lbr_read_frozen);

/* Process context (GET_INFO, unload): log, once, an XSAVES that faulted. */
void lbr_xsave_report(void)
{
	int cpu = READ_ONCE(lbr_xsave_fault_cpu);

	if (cpu >= 0)
		pr_warn_once("XSAVES of the LBR state faulted on CPU %d in a capture: reading the MSRs from now on\n",
			     cpu);
}

/* Whether captures read LBR by XSAVES now. */
bool lbr_xsave_used(void)
{
	return READ_ONCE(lbr_xsave_on);
}

const char *lbr_xsave_reason(void)
{
	if (READ_ONCE(lbr_xsave_fault_cpu) >= 0)
		return "XSAVES faulted in a capture";
	return lbr_xsave_why;
}

/*
 * On each CPU that reads LBR (on_each_cpu(): interrupts off), a
 * functional check, not only CPUID's word: IA32_XSS has the LBR bit, and
 * one XSAVES asked for the component alone writes it into XCOMP_BV,
 * which XSAVES sets to what it was asked for and XCR0 | IA32_XSS enables
 * (SDM vol. 1, 13.11; RFBM[15] is IA32_XSS[15], XCR0 cannot hold a
 * supervisor component: a check of what XSAVES itself did).  Where
 * XSTATE_BV has it too, the saved LBR_CTL and DEPTH are the MSRs', and
 * DEPTH the one captures read; perf may rewrite LBR_CTL in between (a
 * PMI, an NMI): a few tries.  XSTATE_BV without it is the component in
 * its initial configuration (SDM vol. 1, 13.6: every LBR MSR but DEPTH
 * zero), so only with LBR_CTL 0 (LBR off on that CPU, as under
 * mode=perf before perf schedules its event): nothing to compare, and
 * lbr_read_frozen() reads the MSRs for such a save.  With LBR on it is
 * an XSAVES that does not save the component.
 */
static void __init lbr_xsave_check_cpu(void *arg)
{
	struct lbr_xsave_area *a = this_cpu_ptr(lbr_xsave_areas);
	atomic_t *bad = arg;
	u64 xss, ctl, depth;
	int tries;

	if (!__this_cpu_read(lbr_cpu_depth))
		return;
	if (lbr_rdmsr_safe(LBR_MSR_IA32_XSS, &xss)) {
		atomic_or(LBR_XSAVE_FAULT, bad);
		return;
	}
	if (!(xss & LBR_XFEATURE_MASK)) {
		atomic_or(LBR_XSAVE_NO_XSS, bad);
		return;
	}
	for (tries = 0; tries < 3; tries++) {
		memset(a, 0, sizeof(*a));
		if (lbr_xsaves(a) || lbr_rdmsr_safe(lbr_hw.ctl_msr, &ctl) ||
		    lbr_rdmsr_safe(LBR_MSR_ARCH_DEPTH, &depth)) {
			atomic_or(LBR_XSAVE_FAULT, bad);
			return;
		}
		if (!(a->xcomp_bv & LBR_XFEATURE_MASK)) {
			atomic_or(LBR_XSAVE_NOT_ENABLED, bad);
			return;
		}
		if (!(a->xstate_bv & LBR_XFEATURE_MASK)) {
			if (!ctl)
				return;
			continue;
		}
		if (depth != __this_cpu_read(lbr_cpu_depth)) {
			atomic_or(LBR_XSAVE_DEPTH, bad);
			return;
		}
		if (a->lbr_ctl == ctl && a->lbr_depth == depth)
			return;
	}
	atomic_or(a->xstate_bv & LBR_XFEATURE_MASK ? LBR_XSAVE_MISMATCH :
		  LBR_XSAVE_NOT_SAVED, bad);
}

static int __init lbr_xsave_no(const char *why)
{
	strscpy(lbr_xsave_why, why, sizeof(lbr_xsave_why));
	if (lbr_read_choice != LBR_READ_XSAVES)
		return 0;
	pr_err("lbr_read=xsaves unavailable: %s\n", why);
	return -ENODEV;
}

/**
 * lbr_xsave_parse - check lbr_read= before anything is started
 * @how: "auto" (XSAVES where it works), "msr" or "xsaves" (or fail)
 *
 * Return: 0, or -EINVAL for anything else.
 */
int __init lbr_xsave_parse(const char *how)
{
	if (sysfs_streq(how, "auto")) {
		lbr_read_choice = LBR_READ_AUTO;
	} else if (sysfs_streq(how, "msr")) {
		lbr_read_choice = LBR_READ_MSR;
	} else if (sysfs_streq(how, "xsaves")) {
		lbr_read_choice = LBR_READ_XSAVES;
	} else {
		pr_err("lbr_read=%s: use auto, msr or xsaves\n", how);
		return -EINVAL;
	}
	return 0;
}

/**
 * lbr_xsave_start - choose how captures read LBR, as lbr_xsave_parse() set
 *
 * After lbr_hw_start(): LBR runs, so a saved LBR_CTL can be compared.
 * Return: 0, -ENODEV when lbr_read=xsaves cannot be had, -ENOMEM.
 */
int __init lbr_xsave_start(void)
{
	unsigned int eax, ebx, ecx, edx;
	atomic_t bad = ATOMIC_INIT(0);
	int found;

	if (lbr_read_choice == LBR_READ_MSR)
		return lbr_xsave_no("lbr_read=msr");
	if (lbr_hw.backend != LBR_SNAP_BACKEND_ARCH)
		return lbr_xsave_no("not Arch LBR");
	if (!boot_cpu_has(X86_FEATURE_XSAVES))
		return lbr_xsave_no("the kernel does not use XSAVES");
	cpuid_count(0xd, 1, &eax, &ebx, &ecx, &edx);
	if (!(eax & LBR_CPUID_XSAVES))
		return lbr_xsave_no("CPUID.(0xd,1):EAX.XSAVES is clear");
	/*
	 * EAX: the component's size, which XSAVES writes whole: at least
	 * the depth read, at most the buffer (perf wants it exact:
	 * is_arch_lbr_xsave_available()).  ECX bit 0: a supervisor (XSS)
	 * component.
	 */
	cpuid_count(0xd, LBR_XFEATURE, &eax, &ebx, &ecx, &edx);
	if (!(ecx & 1) || eax < LBR_XSAVE_SIZE(lbr_hw.depth) ||
	    eax > LBR_XSAVE_SIZE(LBR_SNAP_MAX_ENTRIES))
		return lbr_xsave_no("CPUID.(0xd,15) has no LBR component of a size lbr_snap reads");

	lbr_xsave_areas = alloc_percpu(struct lbr_xsave_area);
	if (!lbr_xsave_areas) {
		lbr_xsave_no("no memory for XSAVES buffers");
		return lbr_read_choice == LBR_READ_XSAVES ? -ENOMEM : 0;
	}
	/*
	 * The CPUs online now; one that comes later is read by XSAVES too,
	 * and by the MSRs if its XSAVES saves nothing (lbr_read_frozen()).
	 */
	cpus_read_lock();
	on_each_cpu(lbr_xsave_check_cpu, &bad, 1);
	cpus_read_unlock();
	found = atomic_read(&bad);
	if (found) {
		free_percpu(lbr_xsave_areas);
		lbr_xsave_areas = NULL;
		return lbr_xsave_no(found & LBR_XSAVE_FAULT ?
				    "XSAVES or an MSR read faulted" :
				    found & LBR_XSAVE_NO_XSS ?
				    "IA32_XSS lacks the LBR component" :
				    found & LBR_XSAVE_NOT_ENABLED ?
				    "XSAVES did not save the LBR component: not enabled" :
				    found & LBR_XSAVE_DEPTH ?
				    "IA32_LBR_DEPTH is not the depth lbr_snap reads" :
				    found & LBR_XSAVE_NOT_SAVED ?
				    "XSAVES saved no LBR state while LBR was on" :
				    "XSAVES did not save the LBR state the MSRs hold");
	}
	strscpy(lbr_xsave_why, "XSAVES of the LBR state component",
		sizeof(lbr_xsave_why));
	WRITE_ONCE(lbr_xsave_on, true);
	return 0;
}

/* After every capture has ended (the hooks are gone). */
void lbr_xsave_stop(void)
{
	lbr_xsave_report();
	WRITE_ONCE(lbr_xsave_on, false);
	free_percpu(lbr_xsave_areas);
	lbr_xsave_areas = NULL;
}
