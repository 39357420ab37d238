// SPDX-License-Identifier: GPL-2.0
/*
 * LBR backends: detect, enable, read.
 *
 * Detection trusts nothing it has not seen work: CPUID and capability bits
 * first, then an enable bit that must read back after a write, all through
 * the *_safe MSR accessors.  Hypervisors that hide LBR, and QEMU's TCG which
 * reads unknown MSRs as 0 and drops writes, end in the "none" backend with
 * the reason logged once.
 *
 * MSR numbers and layouts are those of arch/x86/include/asm/msr-index.h and
 * arch/x86/events/{intel,amd}/lbr.c (Linux 6.1); they are spelled out here
 * because the kernel keeps several of them private to perf.
 */
#include <linux/cpuhotplug.h>
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/perf_event.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <asm/cpufeature.h>
#include <asm/hypervisor.h>
#include <asm/perf_event.h>
#include <asm/processor.h>

#include "lbr_snap.h"
#include "lbr_own.h"
#include "lbr_cpu.h"

#define LBR_MSR_DEBUGCTL		0x1d9
#define LBR_DEBUGCTL_LBR		(1ULL << 0)
#define LBR_DEBUGCTL_BTF		(1ULL << 1)	/* the kernel's block-step */
#define LBR_DEBUGCTL_FREEZE_LBRS_ON_PMI	(1ULL << 11)
#define LBR_MSR_SELECT		0x1c8
#define LBR_MSR_TOS		0x1c9
#define LBR_MSR_CORE_FROM	0x40
#define LBR_MSR_CORE_TO		0x60
#define LBR_MSR_NHM_FROM	0x680
#define LBR_MSR_NHM_TO		0x6c0
#define LBR_MSR_INFO_0		0xdc0
#define LBR_MSR_PERF_CAPS	0x345
#define LBR_PERF_CAP_FMT	0x3f

#define LBR_ARCH_CTL_LBREN	(1ULL << 0)
#define LBR_ARCH_CTL_OS		(1ULL << 1)
#define LBR_ARCH_CTL_USR	(1ULL << 2)

#define LBR_MSR_AMD_SELECT	0xc000010e
#define LBR_MSR_AMD_DBG_EXTN_CFG	0xc000010f
#define LBR_AMD_LBRV2EN	(1ULL << 6)

/* lbr_hw_freeze() changes only the control MSR's low half. */
static_assert(!((LBR_DEBUGCTL_LBR | LBR_ARCH_CTL_LBREN | LBR_AMD_LBRV2EN) >> 32));
#define LBR_MSR_AMD_BR_FROM	0xc0010300

#define LBR_MSR_PERF_GLOBAL_STATUS	0x38e
#define LBR_MSR_AMD_PERF_GLOBAL_STATUS	0xc0000300

#define LBR_CPUID_PDCM		(1U << 15)	/* CPUID.1:ECX */
#define LBR_CPUID_ARCH_LBR		(1U << 19)	/* CPUID.(7,0):EDX */
#define LBR_CPUID_AMD_PERFMON_V2	(1U << 0)	/* CPUID.0x80000022:EAX */
#define LBR_CPUID_AMD_LBR_V2	(1U << 1)
#define LBR_CPUID_AMD_LBR_PMC_FREEZE	(1U << 2)

struct lbr_hw lbr_hw __read_mostly = {
	.backend = LBR_SNAP_BACKEND_NONE,
	.name = "none",
};

/* LBR_SELECT must let jumps through for calls (LBR_Q_JMP_FOR_CALLS). */
static bool lbr_jmp_for_calls;

/* Legacy LBR depth and MSR bases by model, as intel_pmu_init() picks them. */
struct lbr_model {
	u8 model;
	u8 depth;
	u16 from;
	u16 to;
	u16 info;
	u8 quirks;
};

/* intel_pmu_lbr_init_knl(): FROM bit 63 is a mispredict flag even in LIP. */
#define LBR_Q_KNL_FLAGS		BIT(0)
/* Haswell writes a TSX abort twice (x86_pmu.lbr_double_abort). */
#define LBR_Q_DOUBLE_ABORT	BIT(1)
/*
 * No LBR_SELECT: Core2, Bonnell and Saltwell (intel_pmu_lbr_init_core(),
 * _atom() set no lbr_sel_map); they record every CPL and kind.
 */
#define LBR_Q_NO_SELECT		BIT(2)
/* Calls are recorded only with jumps (perf's nhm_lbr_sel_map). */
#define LBR_Q_JMP_FOR_CALLS	BIT(3)
/* Bonnell before stepping 10: "LBR disabled due to erratum" (_atom()). */
#define LBR_Q_BONNELL_ERRATUM	BIT(4)

static const struct lbr_model lbr_models[] = {
	/* Core2 Merom, Merom-L, Penryn, Dunnington: intel_pmu_lbr_init_core() */
	{ 0x0f, 4, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_NO_SELECT },
	{ 0x16, 4, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_NO_SELECT },
	{ 0x17, 4, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_NO_SELECT },
	{ 0x1d, 4, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_NO_SELECT },
	/* Atom Bonnell, Saltwell: _atom() */
	{ 0x1c, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0,
	  LBR_Q_NO_SELECT | LBR_Q_BONNELL_ERRATUM },
	{ 0x26, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_NO_SELECT },
	{ 0x27, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_NO_SELECT },
	{ 0x35, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_NO_SELECT },
	{ 0x36, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_NO_SELECT },
	/* Silvermont, Airmont: _slm(), with Nehalem's LBR_SELECT map */
	{ 0x37, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_JMP_FOR_CALLS },
	{ 0x4a, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_JMP_FOR_CALLS },
	{ 0x4c, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_JMP_FOR_CALLS },
	{ 0x4d, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_JMP_FOR_CALLS },
	{ 0x5a, 8, LBR_MSR_CORE_FROM, LBR_MSR_CORE_TO, 0, LBR_Q_JMP_FOR_CALLS },
	/* Knights Landing and Mill: intel_pmu_lbr_init_knl() */
	{ 0x57, 8, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_KNL_FLAGS },
	{ 0x85, 8, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_KNL_FLAGS },
	/* Nehalem, Westmere: _nhm() */
	{ 0x1a, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_JMP_FOR_CALLS },
	{ 0x1e, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_JMP_FOR_CALLS },
	{ 0x2e, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_JMP_FOR_CALLS },
	{ 0x25, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_JMP_FOR_CALLS },
	{ 0x2c, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_JMP_FOR_CALLS },
	{ 0x2f, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_JMP_FOR_CALLS },
	/* Sandy/Ivy Bridge, Haswell, Broadwell */
	{ 0x2a, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0 },
	{ 0x2d, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0 },
	{ 0x3a, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0 },
	{ 0x3e, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0 },
	{ 0x3c, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_DOUBLE_ABORT },
	{ 0x3f, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_DOUBLE_ABORT },
	{ 0x45, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_DOUBLE_ABORT },
	{ 0x46, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0, LBR_Q_DOUBLE_ABORT },
	{ 0x3d, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0 },
	{ 0x47, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0 },
	{ 0x4f, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0 },
	{ 0x56, 16, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, 0 },
	/*
	 * Skylake, Kaby/Coffee/Comet Lake, Ice Lake, Tiger Lake, Rocket Lake,
	 * Goldmont, Goldmont Plus, Tremont: intel_pmu_lbr_init_skl()
	 */
	{ 0x4e, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x5e, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x55, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x8e, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x9e, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0xa5, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0xa6, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x6a, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x6c, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x7d, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x7e, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x8c, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x8d, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0xa7, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x5c, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x5f, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x7a, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x86, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x96, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
	{ 0x9c, 32, LBR_MSR_NHM_FROM, LBR_MSR_NHM_TO, LBR_MSR_INFO_0 },
};

static __printf(1, 2) int lbr_none(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(lbr_hw.reason, sizeof(lbr_hw.reason), fmt, args);
	va_end(args);
	return -ENODEV;
}

/*
 * Set @bits in @msr, check they read back, then put the old value back,
 * all on one CPU and with no interrupt in between: moved to another CPU
 * after the write, the task would give that CPU this one's value and leave
 * the bits set here.  A perf PMI (an NMI) can still come in between and
 * change the MSR, which the restore then undoes: detection runs before
 * lbr_snap keeps LBR on, and perf's own users rewrite it at their next
 * PMI or context switch.
 */
static bool lbr_msr_bits_stick(u32 msr, u64 bits)
{
	unsigned long flags;
	u64 old, val;
	bool ok = false;

	local_irq_save(flags);
	if (!lbr_rdmsr_safe(msr, &old) && !lbr_wrmsr_safe(msr, old | bits)) {
		ok = !lbr_rdmsr_safe(msr, &val) && (val & bits) == bits;
		lbr_wrmsr_safe(msr, old);
	}
	local_irq_restore(flags);
	return ok;
}

/* The model table against perf's (@info: the table's LBR_INFO_0, or 0). */
static void lbr_cross_check_perf(u32 info)
{
	struct x86_pmu_lbr perf = { 0 };

	lbr_x86_perf_get_lbr(&perf);
	if (perf.nr && (perf.nr != lbr_hw.depth ||
			perf.from != lbr_hw.from_msr ||
			perf.to != lbr_hw.to_msr || perf.info != info))
		pr_warn("LBR table (depth %u, from %#x, to %#x, info %#x) disagrees with perf (depth %u, from %#x, to %#x, info %#x); using the table\n",
			lbr_hw.depth, lbr_hw.from_msr, lbr_hw.to_msr,
			info, perf.nr, perf.from, perf.to, perf.info);
}

/*
 * Where a freeze by perf's PMI shows when the enable bit does not: with
 * FREEZE_LBRS_ON_PMI, perfmon version 4 and AMD's LbrAndPmcFreeze set
 * bit 58 of the global status MSR (LBR_FRZ, Linux's
 * GLOBAL_STATUS_LBRS_FROZEN) and leave DEBUGCTL.LBR, LBR_CTL.LBREn or
 * LBRV2EN set; LBR records nothing until perf's handler acknowledges it.
 * Earlier Intel PMUs clear DEBUGCTL.LBR, which the enable bit shows.
 */
static void lbr_probe_pmi_freeze(void)
{
	struct cpuinfo_x86 *c = &boot_cpu_data;
	u32 msr = 0, amd = LBR_CPUID_AMD_PERFMON_V2 |
			   LBR_CPUID_AMD_LBR_PMC_FREEZE;
	u64 v;

	if (c->x86_vendor == X86_VENDOR_INTEL && c->cpuid_level >= 0xa &&
	    (cpuid_eax(0xa) & 0xff) >= 4)
		msr = LBR_MSR_PERF_GLOBAL_STATUS;
	else if (c->x86_vendor == X86_VENDOR_AMD &&
		 (cpuid_eax(0x80000022) & amd) == amd)
		msr = LBR_MSR_AMD_PERF_GLOBAL_STATUS;
	if (msr && !lbr_rdmsr_safe(msr, &v))
		lbr_hw.frz_msr = msr;
}

static int lbr_probe_intel(void)
{
	struct cpuinfo_x86 *c = &boot_cpu_data;
	const struct lbr_model *m = NULL;
	unsigned int i;
	long info;
	u64 caps;

	if (c->x86_vendor != X86_VENDOR_INTEL)
		return lbr_none("not an Intel CPU");
	if (!(cpuid_ecx(1) & LBR_CPUID_PDCM))
		return lbr_none("CPUID.1:ECX.PDCM is clear (no PERF_CAPABILITIES)");
	if (lbr_rdmsr_safe(LBR_MSR_PERF_CAPS, &caps))
		return lbr_none("IA32_PERF_CAPABILITIES faults");
	if (c->x86 != 6)
		return lbr_none("no LBR table for family %u", c->x86);
	for (i = 0; i < ARRAY_SIZE(lbr_models); i++)
		if (lbr_models[i].model == c->x86_model)
			m = &lbr_models[i];
	if (!m)
		return lbr_none("no LBR table for model %#x", c->x86_model);
	if ((m->quirks & LBR_Q_BONNELL_ERRATUM) && c->x86_stepping < 10)
		return lbr_none("model %#x stepping %u: LBR disabled due to erratum, as perf does",
				c->x86_model, c->x86_stepping);

	lbr_hw.fmt.format = caps & LBR_PERF_CAP_FMT;
	if ((m->quirks & LBR_Q_KNL_FLAGS) && lbr_hw.fmt.format == LBR_FMT_LIP)
		lbr_hw.fmt.format = LBR_FMT_EIP_FLAGS;
	lbr_hw.double_abort = m->quirks & LBR_Q_DOUBLE_ABORT;
	if (lbr_hw.fmt.format > LBR_FMT_MAX_KNOWN)
		return lbr_none("unknown LBR format %u", lbr_hw.fmt.format);
	info = lbr_format_info_msr(lbr_hw.fmt.format, m->info);
	if (info < 0)
		return lbr_none("LBR format %u needs LBR_INFO, which model %#x does not have",
				lbr_hw.fmt.format, c->x86_model);

	lbr_hw.depth = m->depth;
	lbr_hw.from_msr = m->from;
	lbr_hw.to_msr = m->to;
	lbr_hw.info_msr = info;
	lbr_hw.from_stride = 1;
	lbr_hw.tos_msr = LBR_MSR_TOS;
	lbr_hw.ctl_msr = LBR_MSR_DEBUGCTL;
	lbr_hw.enable_mask = LBR_DEBUGCTL_LBR;
	lbr_hw.fmt.tsx = boot_cpu_has(X86_FEATURE_HLE) ||
			 boot_cpu_has(X86_FEATURE_RTM);
	lbr_hw.filter_cpl = !(m->quirks & LBR_Q_NO_SELECT);
	lbr_hw.filter_kinds = lbr_hw.filter_cpl;
	lbr_jmp_for_calls = m->quirks & LBR_Q_JMP_FOR_CALLS;

	if (!lbr_msr_bits_stick(LBR_MSR_DEBUGCTL, LBR_DEBUGCTL_LBR))
		return lbr_none("IA32_DEBUGCTL.LBR does not stay set (LBR hidden by a hypervisor or emulator)");
	if (lbr_rdmsr_safe(lbr_hw.from_msr, &caps) ||
	    lbr_rdmsr_safe(lbr_hw.tos_msr, &caps))
		return lbr_none("LBR FROM/TOS MSRs fault");

	lbr_cross_check_perf(m->info);
	lbr_probe_pmi_freeze();
	/* The control MSR is DEBUGCTL: its copy says if a PMI freezes. */
	lbr_hw.frz_gate = LBR_DEBUGCTL_FREEZE_LBRS_ON_PMI;
	snprintf(lbr_hw.reason, sizeof(lbr_hw.reason),
		 "legacy LBR, model %#x, format %u, depth %u%s",
		 c->x86_model, lbr_hw.fmt.format, lbr_hw.depth,
		 !lbr_hw.filter_cpl ? ", no LBR_SELECT" :
		 lbr_jmp_for_calls ? ", calls with jumps" : "");
	return 0;
}

static int lbr_probe_arch(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (boot_cpu_data.x86_vendor != X86_VENDOR_INTEL)
		return lbr_none("not an Intel CPU");
	if (boot_cpu_data.cpuid_level < 0x1c)
		return lbr_none("CPUID leaf 0x1c absent");
	cpuid_count(7, 0, &eax, &ebx, &ecx, &edx);
	if (!(edx & LBR_CPUID_ARCH_LBR))
		return lbr_none("CPUID.(7,0):EDX.ARCH_LBR is clear");
	cpuid_count(0x1c, 0, &eax, &ebx, &ecx, &edx);
	/* Depth mask bit n means depth 8 * (n + 1); use the deepest. */
	if (!(eax & 0xff))
		return lbr_none("CPUID.0x1c reports no Arch LBR depth");
	lbr_hw.depth = fls(eax & 0xff) * 8;
	lbr_hw.filter_cpl = ebx & BIT(0);
	lbr_hw.filter_kinds = ebx & BIT(1);

	lbr_hw.ctl_msr = LBR_MSR_ARCH_CTL;
	lbr_hw.enable_mask = LBR_ARCH_CTL_LBREN;
	lbr_hw.from_msr = LBR_MSR_ARCH_FROM_0;
	lbr_hw.to_msr = LBR_MSR_ARCH_TO_0;
	lbr_hw.info_msr = LBR_MSR_ARCH_INFO_0;
	lbr_hw.from_stride = 1;
	if (!lbr_msr_bits_stick(LBR_MSR_ARCH_CTL, LBR_ARCH_CTL_LBREN))
		return lbr_none("ARCH_LBR_CTL.LBREn does not stay set (Arch LBR hidden by a hypervisor or emulator)");
	lbr_probe_pmi_freeze();
	snprintf(lbr_hw.reason, sizeof(lbr_hw.reason), "Arch LBR, depth %u%s%s",
		 lbr_hw.depth, lbr_hw.filter_cpl ? "" : ", every CPL recorded",
		 lbr_hw.filter_kinds ? "" : ", every kind recorded");
	return 0;
}

static int lbr_probe_amd(void)
{
	if (boot_cpu_data.x86_vendor != X86_VENDOR_AMD)
		return lbr_none("not an AMD CPU");
	if (boot_cpu_data.extended_cpuid_level < 0x80000022)
		return lbr_none("CPUID leaf 0x80000022 absent");
	if (!(cpuid_eax(0x80000022) & LBR_CPUID_AMD_LBR_V2))
		return lbr_none("CPUID.0x80000022:EAX.LbrExtV2 is clear");
	/* EBX[9:4] is the LBR stack size (lbr_v2_stack_sz). */
	lbr_hw.depth = (cpuid_ebx(0x80000022) >> 4) & 0x3f;
	if (!lbr_hw.depth || lbr_hw.depth > LBR_SNAP_MAX_ENTRIES)
		return lbr_none("AMD LBR depth %u unsupported", lbr_hw.depth);

	lbr_hw.ctl_msr = LBR_MSR_AMD_DBG_EXTN_CFG;
	lbr_hw.enable_mask = LBR_AMD_LBRV2EN;
	lbr_hw.from_msr = LBR_MSR_AMD_BR_FROM;
	lbr_hw.to_msr = LBR_MSR_AMD_BR_FROM + 1;
	lbr_hw.from_stride = 2;
	lbr_hw.fmt.virt_bits = boot_cpu_data.x86_virt_bits;
	lbr_hw.filter_cpl = true;
	lbr_hw.filter_kinds = true;
	if (!lbr_msr_bits_stick(LBR_MSR_AMD_DBG_EXTN_CFG, LBR_AMD_LBRV2EN))
		return lbr_none("DBG_EXTN_CFG.LBRV2EN does not stay set (LBR hidden by a hypervisor or emulator)");
	lbr_probe_pmi_freeze();
	snprintf(lbr_hw.reason, sizeof(lbr_hw.reason),
		 "AMD LbrExtV2, depth %u", lbr_hw.depth);
	return 0;
}

/*
 * Per CPU: what each CPU has (src/lbr_cpu.c).  Detection above runs on the
 * CPU that loads the module; on a hybrid part the others may differ.  Each
 * online CPU is read on itself (CPUID leaves 7, 0x1a, 0x1c and
 * IA32_PERF_CAPABILITIES with the *_safe accessor); a mix lbr_snap cannot
 * work with refuses the backend, naming the CPUs of each kind.  Each CPU
 * then reads its own depth (lbr_cpu_depth); a CPU that comes online later
 * is read when it does (lbr_hw_cpu_online(), from lbr_cpu_start() or
 * lbr_vlbr_online()).
 */
DEFINE_PER_CPU(unsigned int, lbr_cpu_depth);
/* Does this CPU's LBR filter, as written, keep the kernel's returns? */
DEFINE_PER_CPU(bool, lbr_cpu_rets);

static struct lbr_cpu_group lbr_groups[LBR_SNAP_MAX_CPU_TYPES];
static unsigned int lbr_nr_groups;
static unsigned int lbr_legacy_depth;	/* the model table's, for all CPUs */

static void lbr_cpu_read_id(void *arg)
{
	struct lbr_cpu_id *id = arg;
	unsigned int level = cpuid_eax(0), eax, ebx, ecx, edx;

	memset(id, 0, sizeof(*id));
	if (level >= 7) {
		cpuid_count(7, 0, &eax, &ebx, &ecx, &edx);
		id->cpuid7_edx = edx;
	}
	if (level >= 0x1a)
		id->cpuid1a_eax = cpuid_eax(0x1a);
	if (level >= 0x1c) {
		cpuid_count(0x1c, 0, &eax, &ebx, &ecx, &edx);
		id->cpuid1c_eax = eax;
	}
	if (boot_cpu_data.x86_vendor == X86_VENDOR_INTEL &&
	    (cpuid_ecx(1) & LBR_CPUID_PDCM))
		id->perf_caps_ok = !lbr_rdmsr_safe(LBR_MSR_PERF_CAPS,
						   &id->perf_caps);
}

/* What this CPU has; the legacy format is the one detection decided. */
static void lbr_this_cpu_kind(struct lbr_cpu_kind *k)
{
	struct lbr_cpu_id id;

	lbr_cpu_read_id(&id);
	lbr_cpu_kind_of(&id, lbr_hw.backend, lbr_legacy_depth, k);
	/* Knights Landing's quirk, as lbr_probe_intel() applies it. */
	if (k->backend == LBR_SNAP_BACKEND_INTEL &&
	    k->format == LBR_FMT_LIP && lbr_hw.fmt.format == LBR_FMT_EIP_FLAGS)
		k->format = LBR_FMT_EIP_FLAGS;
}

static int lbr_check_cpus(void)
{
	struct lbr_cpu_kind *k;
	struct lbr_cpu_id id;
	unsigned int cpu, depth = 0;
	char why[256];
	int ret;

	k = kcalloc(nr_cpu_ids, sizeof(*k), GFP_KERNEL);
	if (!k)
		return lbr_none("no memory to read each CPU's LBR");
	lbr_legacy_depth = lbr_hw.depth;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (smp_call_function_single(cpu, lbr_cpu_read_id, &id, 1))
			continue;
		lbr_cpu_kind_of(&id, lbr_hw.backend, lbr_legacy_depth, &k[cpu]);
		if (k[cpu].backend == LBR_SNAP_BACKEND_INTEL &&
		    k[cpu].format == LBR_FMT_LIP &&
		    lbr_hw.fmt.format == LBR_FMT_EIP_FLAGS)
			k[cpu].format = LBR_FMT_EIP_FLAGS;
	}
	cpus_read_unlock();

	ret = lbr_cpu_check(k, nr_cpu_ids, why, sizeof(why));
	if (ret) {
		pr_warn("%s LBR: %s\n", lbr_hw.name, why);
		kfree(k);
		return lbr_none("%s", why);
	}
	lbr_nr_groups = lbr_cpu_groups(k, nr_cpu_ids, lbr_groups,
				       ARRAY_SIZE(lbr_groups));
	for_each_possible_cpu(cpu) {
		/*
		 * Not online now: no LBR read there until it comes online and
		 * lbr_hw_cpu_online() has read what it has.
		 */
		per_cpu(lbr_cpu_depth, cpu) = k[cpu].seen ? k[cpu].depth : 0;
		depth = max(depth, per_cpu(lbr_cpu_depth, cpu));
	}
	kfree(k);
	lbr_hw.depth = depth;
	if (lbr_nr_groups > 1)
		pr_info("hybrid CPUs: %u kinds, each CPU reads its own depth (lbr-snap info lists them)\n",
			lbr_nr_groups);
	return 0;
}

/**
 * lbr_hw_cpu_online - read what this CPU has, before LBR is used on it
 * @cpu: this CPU (a hotplug callback, or a resume)
 * @probe: read every LBR MSR to be read here (mode=perf; mode=raw checks
 *	once it programmed the depth, lbr_cpu_check_raw())
 *
 * Both modes call it when a CPU comes online, and publish what it returns
 * in lbr_cpu_depth only once LBR is on there (lbr_cpu_start(),
 * lbr_vlbr_online()); until then the capture path reads nothing.
 * Return: the depth to read this CPU with, 0 (no read) for a CPU of
 * another kind than lbr_snap works with, or deeper than the record size
 * chosen at load.
 */
unsigned int lbr_hw_cpu_online(unsigned int cpu, bool probe)
{
	struct lbr_cpu_kind k;
	u64 depth;

	lbr_cpu_health_clear(cpu);
	lbr_this_cpu_kind(&k);
	if (k.backend != lbr_hw.backend || !k.depth || k.depth > lbr_hw.depth ||
	    (lbr_nr_groups && k.format != lbr_groups[0].kind.format)) {
		pr_warn("cpu%u (%s): its LBR (%s, format %u, depth %u) is not the other CPUs': no LBR records from it\n",
			cpu, lbr_core_type_name(k.core_type),
			k.backend == lbr_hw.backend ? lbr_hw.name : "none",
			k.format, k.depth);
		return 0;
	}
	if (!probe)
		return k.depth;
	/*
	 * mode=perf: perf writes one depth, the boot CPU's, into every CPU's
	 * ARCH_LBR_DEPTH (intel_pmu_arch_lbr_reset()); on a hybrid part the
	 * other kind may be deeper, and its entries past that depth are not
	 * to be read.
	 */
	if (lbr_hw.backend == LBR_SNAP_BACKEND_ARCH &&
	    !lbr_rdmsr_safe(LBR_MSR_ARCH_DEPTH, &depth) && depth &&
	    depth < k.depth)
		k.depth = depth;
	/* Every MSR the capture path will read here (lbr_selftest.c). */
	if (lbr_cpu_probe_msrs(cpu, k.depth)) {
		lbr_cpu_health_report(cpu);
		return 0;
	}
	return k.depth;
}

/**
 * lbr_hw_cpu_types - the kinds of CPU, for GET_INFO
 * @t: room for @max kinds
 * @max: the room
 * Return: how many were filled.
 */
unsigned int lbr_hw_cpu_types(struct lbr_snap_cpu_type *t, unsigned int max)
{
	unsigned int i;

	for (i = 0; i < lbr_nr_groups && i < max; i++) {
		t[i].core_type = lbr_groups[i].kind.core_type;
		t[i].backend = lbr_groups[i].kind.backend;
		t[i].lbr_format = lbr_groups[i].kind.format;
		t[i].lbr_depth = lbr_groups[i].kind.depth;
		t[i].nr_cpus = lbr_groups[i].nr;
		strscpy(t[i].cpus, lbr_groups[i].cpus, sizeof(t[i].cpus));
	}
	return i;
}

static const struct {
	const char *name;
	enum lbr_snap_backend id;
	int (*probe)(void);
} lbr_backends[] = {
	{ "arch", LBR_SNAP_BACKEND_ARCH, lbr_probe_arch },
	{ "intel", LBR_SNAP_BACKEND_INTEL, lbr_probe_intel },
	{ "amd", LBR_SNAP_BACKEND_AMD, lbr_probe_amd },
};

static void lbr_hw_reset(void)
{
	unsigned int cpu;

	lbr_nr_groups = 0;
	for_each_possible_cpu(cpu)
		per_cpu(lbr_cpu_depth, cpu) = 0;
	memset(&lbr_hw, 0, sizeof(lbr_hw));
	lbr_jmp_for_calls = false;
	lbr_hw.backend = LBR_SNAP_BACKEND_NONE;
	lbr_hw.name = "none";
}

/* The hypervisor under this kernel, "" on bare metal (lbr_hw_hypervisor()). */
static char lbr_hyper[16];

/*
 * Named once at detection: by the kernel's own finding where it has one
 * (x86_hyper_type: a KVM or Xen guest with Hyper-V enlightenments shows
 * Microsoft's signature at leaf 0x40000000 and its own further up), else
 * by the signature there (QEMU's TCG says "TCGTCGTCGTCG"), printed as it
 * is when unknown.
 */
static void lbr_hyper_detect(void)
{
	static const struct {
		enum x86_hypervisor_type type;
		const char *name;
	} known[] = {
		{ X86_HYPER_KVM, "kvm" },
		{ X86_HYPER_MS_HYPERV, "hyper-v" },
		{ X86_HYPER_VMWARE, "vmware" },
		{ X86_HYPER_XEN_HVM, "xen" },
		{ X86_HYPER_XEN_PV, "xen-pv" },
		{ X86_HYPER_ACRN, "acrn" },
		{ X86_HYPER_JAILHOUSE, "jailhouse" },
	};
	unsigned int eax, sig[3], i;
	char s[13];

	lbr_hyper[0] = '\0';
	if (!boot_cpu_has(X86_FEATURE_HYPERVISOR))
		return;
	for (i = 0; i < ARRAY_SIZE(known); i++) {
		if (hypervisor_is_type(known[i].type)) {
			strscpy(lbr_hyper, known[i].name, sizeof(lbr_hyper));
			return;
		}
	}
	cpuid(0x40000000, &eax, &sig[0], &sig[1], &sig[2]);
	memcpy(s, sig, sizeof(sig));
	s[12] = '\0';
	if (!strcmp(s, "TCGTCGTCGTCG"))
		strscpy(lbr_hyper, "tcg", sizeof(lbr_hyper));
	else
		snprintf(lbr_hyper, sizeof(lbr_hyper), "%s", s[0] ? s : "unknown");
}

const char *lbr_hw_hypervisor(void)
{
	return lbr_hyper;
}

/**
 * lbr_hw_detect - pick the LBR backend
 * @force: "auto", "none" or a backend name
 *
 * "auto" takes the first backend whose probe passes and falls back to
 * "none"; a forced backend that fails its probe fails with -ENODEV.
 */
int lbr_hw_detect(const char *force)
{
	bool is_auto = sysfs_streq(force, "auto");
	char why[ARRAY_SIZE(lbr_backends)][sizeof(lbr_hw.reason)];
	unsigned int i;

	lbr_hw_reset();
	lbr_hyper_detect();
	if (sysfs_streq(force, "none")) {
		strscpy(lbr_hw.reason, "backend=none", sizeof(lbr_hw.reason));
		return 0;
	}
	/*
	 * A Xen PV guest has no LBR to read, and the capture path's native
	 * CLI (kretprobe_hook.c, fexit_tramp.S) would fault there.
	 */
	if (cpu_feature_enabled(X86_FEATURE_XENPV)) {
		if (!is_auto) {
			pr_err("backend=%s unavailable: a Xen PV guest\n", force);
			return -ENODEV;
		}
		strscpy(lbr_hw.reason, "a Xen PV guest: no LBR", sizeof(lbr_hw.reason));
		return 0;
	}

	for (i = 0; i < ARRAY_SIZE(lbr_backends); i++) {
		if (!is_auto && !sysfs_streq(force, lbr_backends[i].name))
			continue;
		lbr_hw_reset();
		lbr_hw.fmt.backend = lbr_backends[i].id;
		lbr_hw.backend = lbr_backends[i].id;
		lbr_hw.name = lbr_backends[i].name;
		if (!lbr_backends[i].probe() && !lbr_check_cpus()) {
			lbr_hw.freeze_keep = ~(u32)lbr_hw.enable_mask;
			return 0;
		}
		strscpy(why[i], lbr_hw.reason, sizeof(why[i]));
		if (!is_auto) {
			pr_err("backend=%s unavailable: %s\n", force, why[i]);
			return -ENODEV;
		}
	}
	if (!is_auto) {
		pr_err("backend=%s: unknown backend (auto, intel, arch, amd, none)\n",
		       force);
		return -EINVAL;
	}

	lbr_hw_reset();
	/* The probe that got furthest on this vendor says why. */
	i = boot_cpu_data.x86_vendor == X86_VENDOR_AMD ? 2 :
	    (boot_cpu_data.cpuid_level >= 0x1c &&
	     (cpuid_edx(7) & LBR_CPUID_ARCH_LBR)) ? 0 : 1;
	strscpy(lbr_hw.reason, why[i], sizeof(lbr_hw.reason));
	return 0;
}

static int lbr_perf_fallback;	/* why mode=auto is raw, not perf */

/*
 * What detection found, said once the module has loaded: a load refused
 * for a bad parameter logs that reason alone.
 */
void lbr_hw_report(void)
{
	const char *hv = lbr_hw_hypervisor();

	if (lbr_hw.backend == LBR_SNAP_BACKEND_NONE)
		pr_info("no usable LBR, records carry no branches: %s\n",
			lbr_hw.reason);
	else
		pr_info("backend %s: %s\n", lbr_hw.name, lbr_hw.reason);
	if (lbr_perf_fallback)
		pr_info("perf cannot keep LBR on (%d): mode raw\n",
			lbr_perf_fallback);
	if (*hv && !strcmp(lbr_hw_mode(), "raw"))
		pr_info("in a guest (%s): mode=raw writes the LBR control MSR twice a capture, a VM exit each where the hypervisor traps it (KVM does)\n",
			hv);
}

/*
 * lbr_filter=: "kernel" (default), "user" or "any", then optionally the
 * kinds of branch to keep, e.g. "kernel,jcc,ret"; the kinds alone keep
 * the kernel's branches ("any_return").  The kinds are in the order of the
 * LBR_SELECT suppress bits 2..8, LBR_SNAP_KIND_*; perf's names stand for
 * sets of them as perf maps them onto LBR_SELECT (arch/x86/events/intel/
 * lbr.c, hsw_lbr_sel_map; "any" after the first word is every kind).
 */
static const char * const lbr_kind_names[] = {
	"jcc", "rel_call", "ind_call", "ret", "ind_jmp", "rel_jmp", "far",
};

static const struct {
	const char *name;
	u8 kinds;
} lbr_perf_names[] = {
	{ "any", LBR_SNAP_KIND_ALL },
	{ "any_call", LBR_SNAP_KIND_REL_CALL | LBR_SNAP_KIND_IND_CALL |
		      LBR_SNAP_KIND_FAR },
	{ "any_return", LBR_SNAP_KIND_RET | LBR_SNAP_KIND_FAR },
	{ "cond", LBR_SNAP_KIND_JCC },
	{ "call", LBR_SNAP_KIND_REL_CALL },
	{ "ind_jump", LBR_SNAP_KIND_IND_JMP },
};

#define LBR_KINDS_ALL		LBR_SNAP_KIND_ALL
static_assert(ARRAY_SIZE(lbr_kind_names) == 7 && LBR_KINDS_ALL == 0x7f);

struct lbr_filter {
	bool kernel;
	bool user;
	u8 kinds;		/* bit i: keep lbr_kind_names[i] */
};

/*
 * What LBR records: set at load, changed by lbr_hw_set_filter() with CPU
 * hotplug held off, so that lbr_cpu_start() programs a CPU with the same
 * filter as the others.
 */
static struct lbr_filter lbr_filter;
static DEFINE_MUTEX(lbr_filter_lock);
/* GET_INFO's copy, read without the mutex: LBR_SNAP_LBR_* << 8 | kinds. */
static u32 lbr_filter_word;

static void lbr_filter_publish(void)
{
	WRITE_ONCE(lbr_filter_word,
		   ((lbr_filter.kernel ? LBR_SNAP_LBR_KERNEL : 0) |
		    (lbr_filter.user ? LBR_SNAP_LBR_USER : 0)) << 8 |
		   lbr_filter.kinds);
}

/*
 * Does @f, as this CPU applies it, keep the kernel's returns?  Arch LBR
 * without CPL (or kind) filtering records every CPL (every kind).  Each
 * CPU's answer is set where its filter is written (lbr_cpu_rets), and a
 * record without those returns says LBR_SNAP_REC_RET_FILTERED.
 */
static bool lbr_filter_keeps_rets(const struct lbr_filter *f)
{
	return (f->kernel || !lbr_hw.filter_cpl) &&
	       ((f->kinds & LBR_SNAP_KIND_RET) || !lbr_hw.filter_kinds);
}

/* The same for the filter in force, for mode=perf's events (vlbr_event.c). */
bool lbr_hw_filter_keeps_rets(void)
{
	return lbr_filter_keeps_rets(&lbr_filter);
}

static int lbr_kind_parse(const char *tok, u8 *kinds)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lbr_kind_names); i++) {
		if (!strcmp(tok, lbr_kind_names[i])) {
			*kinds |= BIT(i);
			return 0;
		}
	}
	for (i = 0; i < ARRAY_SIZE(lbr_perf_names); i++) {
		if (!strcmp(tok, lbr_perf_names[i].name)) {
			*kinds |= lbr_perf_names[i].kinds;
			return 0;
		}
	}
	return -EINVAL;
}

static int lbr_filter_parse(const char *spec)
{
	char buf[128], *cur = buf, *tok;
	struct lbr_filter f = { };

	if (strscpy(buf, spec, sizeof(buf)) < 0)
		return -EINVAL;
	tok = strsep(&cur, ",");
	f.kernel = !strcmp(tok, "kernel") || !strcmp(tok, "any");
	f.user = !strcmp(tok, "user") || !strcmp(tok, "any");
	if (!f.kernel && !f.user) {
		/* No privilege word: the kernel's, and this is a kind. */
		f.kernel = true;
		if (lbr_kind_parse(tok, &f.kinds))
			return -EINVAL;
	} else if (!cur) {
		f.kinds = LBR_KINDS_ALL;
	}
	while ((tok = strsep(&cur, ",")) != NULL) {
		if (lbr_kind_parse(tok, &f.kinds))
			return -EINVAL;
	}
	lbr_filter = f;
	lbr_filter_publish();
	return 0;
}

/* LBR_SELECT, legacy and AMD alike: set bits suppress. */
#define LBR_SELECT_CPL_NEQ_0	BIT(1)	/* suppressed: the kernel's only */

static u64 lbr_select_value(void)
{
	/* No LBR_SELECT to write (lbr_sel_msr()): Core2, Bonnell, Saltwell. */
	if (!lbr_hw.filter_kinds)
		return 0;
	return lbr_select_bits(lbr_filter.kernel, lbr_filter.user,
			       lbr_filter.kinds, lbr_jmp_for_calls);
}

/* ARCH_LBR_CTL: set bits enable, what this CPU can filter (lbr_own.h). */
static u64 lbr_arch_ctl_value(void)
{
	return lbr_arch_ctl_bits(lbr_filter.kernel, lbr_filter.user,
				 lbr_filter.kinds, lbr_hw.filter_cpl,
				 lbr_hw.filter_kinds);
}

/*
 * The same filter as perf's branch_sample_type, for mode=perf.  perf has
 * no kind for a relative jump, nor for a far branch alone: ANY_RETURN and
 * ANY_CALL bring far branches with them (hsw_lbr_sel_map, amd
 * lbr_select_map), and RET alone is asked as ANY_RETURN.
 */
static int lbr_perf_branch_type(const struct lbr_filter *f, u64 *type)
{
	static const u64 perf_kind[] = {
		PERF_SAMPLE_BRANCH_COND, PERF_SAMPLE_BRANCH_CALL,
		PERF_SAMPLE_BRANCH_IND_CALL, PERF_SAMPLE_BRANCH_ANY_RETURN,
		PERF_SAMPLE_BRANCH_IND_JUMP,
	};
	const u8 calls = LBR_SNAP_KIND_REL_CALL | LBR_SNAP_KIND_IND_CALL;
	unsigned int i;

	*type = (f->kernel ? PERF_SAMPLE_BRANCH_KERNEL : 0) |
		(f->user ? PERF_SAMPLE_BRANCH_USER : 0);
	if (f->kinds == LBR_KINDS_ALL) {
		*type |= PERF_SAMPLE_BRANCH_ANY;
		return 0;
	}
	if (f->kinds & LBR_SNAP_KIND_REL_JMP)
		return -EOPNOTSUPP;
	for (i = 0; i < ARRAY_SIZE(perf_kind); i++) {
		if (f->kinds & BIT(i))
			*type |= perf_kind[i];
	}
	/*
	 * Nehalem-class maps have no CALL (nhm_lbr_sel_map: 0, every kind
	 * suppressed, nothing recorded): ANY_CALL, which brings the jumps
	 * and far branches with it.
	 */
	if (lbr_jmp_for_calls && (f->kinds & LBR_SNAP_KIND_REL_CALL))
		*type = (*type & ~PERF_SAMPLE_BRANCH_CALL) |
			PERF_SAMPLE_BRANCH_ANY_CALL;
	if (f->kinds & LBR_SNAP_KIND_FAR) {
		if ((f->kinds & calls) == calls)
			*type |= PERF_SAMPLE_BRANCH_ANY_CALL;
		else if (!(f->kinds & LBR_SNAP_KIND_RET))
			return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * mode=raw: lbr_snap programs LBR itself on every online CPU and gives back
 * what it took when it is done (unload, CPU offline, suspend).
 *
 * Others write these MSRs too: KVM puts the host's DEBUGCTL back after a
 * guest ran (vmx_vcpu_run() in arch/x86/kvm/vmx/vmx.c), perf programs LBR
 * for its own events (intel_pmu_lbr_enable_all() in
 * arch/x86/events/intel/lbr.c), and root can write /dev/cpu/N/msr.  So
 * what lbr_snap gives back is decided bit by bit (lbr_give_back()): a bit
 * that lbr_snap changed and that still holds what lbr_snap wrote gets the
 * value lbr_snap found; every other bit keeps the value it has now, so a
 * change made by someone else since the load stays.  ARCH_LBR_DEPTH is a
 * number, not bits: it is put back only when it still holds what lbr_snap
 * wrote.  A change found underneath is logged once per CPU and stop.
 */
struct lbr_saved {
	u64 ctl;	/* the control MSR as lbr_snap found it */
	u64 select;	/* LBR_SELECT (legacy, AMD) or ARCH_LBR_DEPTH, found */
	u64 ctl_set;	/* what lbr_snap wrote */
	u64 select_set;
	bool valid;
};

static DEFINE_PER_CPU(struct lbr_saved, lbr_saved);
static enum cpuhp_state lbr_cpuhp_state;
static bool lbr_perf_mode;

/* The second MSR raw mode programs: the filter, or the Arch LBR depth. */
static u32 lbr_sel_msr(void)
{
	switch (lbr_hw.backend) {
	case LBR_SNAP_BACKEND_INTEL:
		/* None on Core2, Bonnell, Saltwell: lbr_sel_rdmsr() says 0. */
		return lbr_hw.filter_kinds ? LBR_MSR_SELECT : 0;
	case LBR_SNAP_BACKEND_AMD:
		return LBR_MSR_AMD_SELECT;
	default:
		return LBR_MSR_ARCH_DEPTH;
	}
}

/* The second MSR, or none (@msr 0): it reads 0 and takes any write. */
static int lbr_sel_rdmsr(u32 msr, u64 *v)
{
	*v = 0;
	return msr ? lbr_rdmsr_safe(msr, v) : 0;
}

static int lbr_sel_wrmsr(u32 msr, u64 v)
{
	return msr ? lbr_wrmsr_safe(msr, v) : 0;
}

/* What raw mode writes: the control MSR, and the filter or Arch depth. */
static void lbr_raw_values(const struct lbr_saved *s, unsigned int depth,
			   u64 *ctl, u64 *sel)
{
	if (lbr_hw.backend == LBR_SNAP_BACKEND_ARCH) {
		*ctl = lbr_arch_ctl_value();
		*sel = depth;
		return;
	}
	*ctl = s->ctl | lbr_hw.enable_mask;
	*sel = lbr_select_value();
	/*
	 * A FREEZE_LBRS_ON_PMI left set (perf sets it while it has an LBR
	 * user) would let the next PMI, the NMI watchdog's, turn LBR off:
	 * before perfmon version 4 the freeze clears DEBUGCTL.LBR, and only
	 * perf sets it again, for its own LBR users
	 * (intel_pmu_lbr_enable_all() in arch/x86/events/intel/lbr.c).
	 * Cleared while lbr_snap holds LBR, given back with the rest.
	 */
	if (lbr_hw.backend == LBR_SNAP_BACKEND_INTEL)
		*ctl &= ~LBR_DEBUGCTL_FREEZE_LBRS_ON_PMI;
}

/*
 * mode=raw's check of this CPU's LBR (lbr_selftest.c): the test's filter,
 * every kind of the kernel's branches (ARCH_LBR_CTL says so itself, with
 * ARCH_LBR_DEPTH the depth; LBR_SELECT suppresses CPL > 0 only), then
 * every entry's MSRs read (on Arch LBR, once the depth is written), then
 * the chain of calls looked for.  Interrupts off throughout; on failure
 * the MSRs written get the values found back before they are on again.
 * The caller writes its own values after a success (LBR frozen till then).
 */
static int lbr_cpu_check_raw(unsigned int cpu, const struct lbr_saved *s,
			     u32 sel_msr, unsigned int depth)
{
	u64 ctl = s->ctl_set, sel = LBR_SELECT_CPL_NEQ_0;
	unsigned long flags;
	int ret;

	if (lbr_hw.backend == LBR_SNAP_BACKEND_ARCH) {
		ctl = lbr_arch_ctl_bits(true, false, LBR_KINDS_ALL,
					lbr_hw.filter_cpl, lbr_hw.filter_kinds);
		sel = depth;
	}
	local_irq_save(flags);
	if (lbr_sel_wrmsr(sel_msr, sel)) {
		lbr_cpu_write_faulted(cpu, sel_msr);
		local_irq_restore(flags);
		return -EIO;
	}
	ret = lbr_cpu_probe_msrs(cpu, depth);
	/* The control MSR is written only by the test, and left frozen. */
	if (!ret) {
		ret = lbr_cpu_selftest(cpu, depth, ctl);
		if (ret)
			lbr_wrmsr_safe(lbr_hw.ctl_msr, s->ctl);
	}
	/* A depth of 0 was never programmed (as lbr_cpu_stop()). */
	if (ret && (s->select || lbr_hw.backend != LBR_SNAP_BACKEND_ARCH))
		lbr_sel_wrmsr(sel_msr, s->select);
	local_irq_restore(flags);
	return ret;
}

static int lbr_cpu_start(unsigned int cpu)
{
	struct lbr_saved *s = this_cpu_ptr(&lbr_saved);
	u32 sel_msr = lbr_sel_msr();
	unsigned int depth;

	/*
	 * A CPU that was offline at load (or a CPU back from a reset) is read
	 * now: one of another kind than lbr_snap works with is left alone.
	 * Its depth is published only once LBR is programmed: a capture in
	 * between reads nothing (lbr_cpu_stop() or the load left it 0).
	 */
	__this_cpu_write(lbr_cpu_depth, 0);
	depth = lbr_hw_cpu_online(cpu, false);
	if (!depth)
		return 0;

	if (lbr_rdmsr_safe(lbr_hw.ctl_msr, &s->ctl) ||
	    lbr_sel_rdmsr(sel_msr, &s->select)) {
		pr_warn("cpu%u: cannot read LBR control MSRs: no LBR records from it\n",
			cpu);
		return 0;
	}
	lbr_raw_values(s, depth, &s->ctl_set, &s->select_set);
	if (lbr_cpu_check_raw(cpu, s, sel_msr, depth)) {
		lbr_cpu_health_report(cpu);
		return 0;
	}
	/* Writing ARCH_LBR_DEPTH also clears the entries. */
	if (lbr_sel_wrmsr(sel_msr, s->select_set) ||
	    lbr_wrmsr_safe(lbr_hw.ctl_msr, s->ctl_set)) {
		pr_warn("cpu%u: the LBR control MSRs refused lbr_snap's values: no LBR records from it\n",
			cpu);
		lbr_sel_wrmsr(sel_msr, s->select);
		lbr_wrmsr_safe(lbr_hw.ctl_msr, s->ctl);
		return 0;
	}
	/* lbr_rearm_after_db() may interrupt this: it reads ctl_set once valid. */
	barrier();
	WRITE_ONCE(s->valid, true);
	__this_cpu_write(lbr_cpu_rets, lbr_filter_keeps_rets(&lbr_filter));
	barrier();	/* a capture here reads rets once depth is set */
	__this_cpu_write(lbr_cpu_depth, depth);
	return 0;
}

static int lbr_cpu_stop(unsigned int cpu)
{
	struct lbr_saved *s = this_cpu_ptr(&lbr_saved);
	u32 sel_msr = lbr_sel_msr();
	u64 now_ctl, now_sel, ctl, sel;

	/* Nothing read from here once LBR is given back. */
	__this_cpu_write(lbr_cpu_depth, 0);
	if (!s->valid)
		return 0;
	WRITE_ONCE(s->valid, false);
	barrier();
	if (lbr_rdmsr_safe(lbr_hw.ctl_msr, &now_ctl) ||
	    lbr_sel_rdmsr(sel_msr, &now_sel)) {
		pr_warn("cpu%u: cannot read LBR control MSRs: left as they are\n",
			cpu);
		return 0;
	}
	if (lbr_hw.backend == LBR_SNAP_BACKEND_ARCH) {
		ctl = lbr_give_back_whole(s->ctl, s->ctl_set, now_ctl);
		/* A depth of 0 was never programmed: leave the reset value. */
		sel = (now_sel == s->select_set && s->select) ? s->select :
								now_sel;
	} else {
		/* DEBUGCTL, DBG_EXTN_CFG: bits; LBR_SELECT: one filter. */
		ctl = lbr_give_back(s->ctl, s->ctl_set, now_ctl);
		sel = lbr_give_back_whole(s->select, s->select_set, now_sel);
	}
	/* Without LBR_SELECT (Core 2, Bonnell) the control MSR alone. */
	if (sel_msr && (now_ctl != s->ctl_set || now_sel != s->select_set))
		pr_warn("cpu%u: LBR control changed underneath lbr_snap: %#x = %#llx (set %#llx, found %#llx), %#x = %#llx (set %#llx, found %#llx); leaving %#llx, %#llx\n",
			cpu, lbr_hw.ctl_msr, now_ctl, s->ctl_set, s->ctl,
			sel_msr, now_sel, s->select_set, s->select, ctl, sel);
	else if (!sel_msr && now_ctl != s->ctl_set)
		pr_warn("cpu%u: LBR control changed underneath lbr_snap: %#x = %#llx (set %#llx, found %#llx); leaving %#llx\n",
			cpu, lbr_hw.ctl_msr, now_ctl, s->ctl_set, s->ctl, ctl);
	if (ctl != now_ctl)
		lbr_wrmsr_safe(lbr_hw.ctl_msr, ctl);
	if (sel != now_sel)
		lbr_sel_wrmsr(sel_msr, sel);
	return 0;
}

/*
 * After a debug exception on this CPU (lbr_db.c), or a hook that found
 * LBR off: the CPU clears the enable bit on #DB (and, legacy, DEBUGCTL.BTF,
 * which lbr_snap never sets: the kernel sets it for a task that
 * block-steps).  Put the enable bit back only if the control MSR holds
 * exactly what lbr_snap wrote but for it, and (legacy) LBR_SELECT the
 * filter lbr_snap wrote: perf, turning its own LBR off, leaves its filter
 * behind, and any other change stays its writer's, as at unload.  A
 * writer that clears the enable bit alone cannot be told from a #DB, nor
 * perf's disable where its filter equals lbr_snap's: LBR comes back on.
 * One RDMSR, a second and a WRMSR when LBR was off; interrupts off, so
 * that no hook's freeze and unfreeze lands in between.
 */
static void lbr_rearm_after_db(void)
{
	struct lbr_saved *s = this_cpu_ptr(&lbr_saved);
	u64 now, sel;
	unsigned long flags;

	local_irq_save(flags);
	if (READ_ONCE(s->valid) && !lbr_rdmsr_safe(lbr_hw.ctl_msr, &now) &&
	    now == (s->ctl_set & ~lbr_hw.enable_mask) &&
	    (lbr_hw.backend != LBR_SNAP_BACKEND_INTEL ||
	     (!lbr_sel_rdmsr(lbr_sel_msr(), &sel) && sel == s->select_set)))
		lbr_wrmsr_safe(lbr_hw.ctl_msr, now | lbr_hw.enable_mask);
	local_irq_restore(flags);
}

/*
 * Suspend and resume.  Going to S3 (or hibernating), the non-boot CPUs go
 * offline through CPU hotplug (suspend_disable_secondary_cpus() in
 * kernel/power/suspend.c), which runs lbr_cpu_stop() on each, and come
 * back through it, which runs lbr_cpu_start(); the boot CPU does neither,
 * and comes back from firmware with DEBUGCTL and the LBR MSRs reset.  So
 * the boot CPU gets the same two calls from syscore operations
 * (include/linux/syscore_ops.h): syscore_suspend() runs on the boot CPU
 * alone, interrupts off, after the other CPUs went offline, and
 * syscore_resume() likewise before they come back and before any task
 * runs (suspend_enter() in kernel/power/suspend.c; create_image() and
 * resume_target_kernel() in kernel/power/hibernate.c for hibernation).
 * A PM notifier (PM_POST_SUSPEND) would run only once tasks are thawed,
 * leaving CPU 0 recording nothing for a while and needing a cross call,
 * and it is also called when a suspend failed before the CPUs were reset.
 * Both callbacks only use the *_safe MSR accessors: nothing sleeps.
 * Suspend-to-idle resets no CPU and calls neither.
 */
static int lbr_syscore_suspend(void)
{
	lbr_cpu_stop(smp_processor_id());
	return 0;
}

static void lbr_syscore_resume(void)
{
	lbr_cpu_start(smp_processor_id());
}

LBR_SYSCORE_DEFINE(lbr_syscore, lbr_syscore_suspend, lbr_syscore_resume);
static bool lbr_syscore_on;

/**
 * lbr_hw_start - keep LBR recording on every CPU
 * @mode: "auto", "perf" or "raw"
 * @filter: lbr_filter= string
 *
 * "auto" asks perf first and programs LBR itself when perf cannot, but
 * not when perf refuses with -EBUSY (it keeps LBR for another user).
 * Return: 0, or a negative errno.
 */
int lbr_hw_start(const char *mode, const char *filter)
{
	bool is_auto = sysfs_streq(mode, "auto");
	u64 type;
	int ret;

	if (!is_auto && !sysfs_streq(mode, "perf") && !sysfs_streq(mode, "raw")) {
		pr_err("mode=%s: use auto, perf or raw\n", mode);
		return -EINVAL;
	}
	if (lbr_filter_parse(filter)) {
		pr_err("lbr_filter=%s: use kernel, user or any, then kinds among jcc, rel_call, ind_call, ret, ind_jmp, rel_jmp, far, or perf's any, any_call, any_return, cond, call, ind_jump\n",
		       filter);
		return -EINVAL;
	}
	if (lbr_hw.backend == LBR_SNAP_BACKEND_NONE)
		return 0;
	/*
	 * Arch LBR without kind filtering (lbr_own.h), and legacy LBR without
	 * LBR_SELECT, record every kind and CPL.
	 */
	if (!lbr_hw.filter_kinds && lbr_filter.kinds != LBR_KINDS_ALL) {
		pr_err("lbr_filter=%s: this CPU's LBR does not filter by kind of branch (%s)\n",
		       filter, lbr_hw.backend == LBR_SNAP_BACKEND_ARCH ?
		       "CPUID.0x1c:EBX[1] clear" : "no LBR_SELECT");
		return -EINVAL;
	}
	/*
	 * What cannot be filtered by CPL records every CPL: the filter in
	 * force says so (GET_INFO, SET_LBR_FILTER take no other), and a
	 * filter asked for other than the default is told.
	 */
	if (!lbr_hw.filter_cpl && !(lbr_filter.kernel && lbr_filter.user)) {
		if (strcmp(filter, LBR_FILTER_DEFAULT))
			pr_warn("lbr_filter=%s: this CPU's LBR does not filter by CPL (%s): records hold every CPL's branches\n",
				filter, lbr_hw.backend == LBR_SNAP_BACKEND_ARCH ?
				"CPUID.0x1c:EBX[0] clear" : "no LBR_SELECT");
		lbr_filter.kernel = true;
		lbr_filter.user = true;
		lbr_filter_publish();
	}
	if (lbr_jmp_for_calls &&
	    (lbr_select_bits(lbr_filter.kernel, lbr_filter.user,
			     lbr_filter.kinds, true) !=
	     lbr_select_bits(lbr_filter.kernel, lbr_filter.user,
			     lbr_filter.kinds, false)))
		pr_info("lbr_filter=%s: this CPU records calls and returns only with jumps: jumps are recorded too\n",
			filter);

	if (!sysfs_streq(mode, "raw")) {
		ret = lbr_perf_branch_type(&lbr_filter, &type);
		if (ret)
			pr_err("lbr_filter=%s: perf selects no relative jumps, nor far branches without the returns or the calls; use mode=raw\n",
			       filter);
		else
			ret = lbr_vlbr_start(type);
		if (!ret) {
			lbr_perf_mode = true;
			return 0;
		}
		/*
		 * EBUSY: perf has LBR and keeps it from lbr_snap on purpose,
		 * for another user of the branch-tracing hardware that
		 * excludes LBR (x86_add_exclusive(): Intel PT before Ice
		 * Lake, BTS).  mode=raw would take it behind perf's back:
		 * auto does not, only a mode=raw asked for.
		 */
		if (ret == -EBUSY)
			pr_err("mode=%s: perf keeps LBR from a new user (-EBUSY; on Intel, most likely Intel PT or BTS in use); lbr_snap does not take it behind perf's back: stop that user, or load with mode=raw to override\n",
			       mode);
		else if (!is_auto)
			pr_err("mode=perf: perf cannot keep LBR on (%d)\n", ret);
		if (!is_auto || ret == -EBUSY)
			return ret;
		lbr_perf_fallback = ret;	/* said by lbr_hw_report() */
	}

	/*
	 * Debug exceptions first, so that none between programming a CPU and
	 * watching goes unseen; the re-arm waits for the CPU's valid copy.
	 * Not on AMD: no source at hand says that #DB clears LBRV2EN (the
	 * lab's LbrExtV2 keeps it), and perf's own disable writes exactly
	 * what a re-arm would take for one (amd_pmu_lbr_disable_all()).
	 */
	if (lbr_hw.backend != LBR_SNAP_BACKEND_AMD) {
		ret = lbr_db_start(lbr_rearm_after_db);
		if (ret)
			return ret;
	}
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "lbr_snap:online",
				lbr_cpu_start, lbr_cpu_stop);
	if (ret < 0) {
		lbr_db_stop();
		return ret;
	}
	lbr_cpuhp_state = ret;
	lbr_syscore_register(&lbr_syscore);
	lbr_syscore_on = true;
	return 0;
}

void lbr_hw_stop(void)
{
	if (lbr_perf_mode)
		lbr_vlbr_stop();
	if (lbr_syscore_on)
		lbr_syscore_unregister(&lbr_syscore);
	lbr_syscore_on = false;
	if (lbr_cpuhp_state > 0)
		cpuhp_remove_state(lbr_cpuhp_state);
	lbr_cpuhp_state = 0;
	/* After the CPUs are given back: a #DB until then is no change. */
	lbr_db_stop();
	lbr_perf_mode = false;
	lbr_perf_fallback = 0;
}

/*
 * On each CPU, interrupts off (an IPI): the new filter where the MSR
 * still holds lbr_snap's; a CPU whose MSR someone else changed is left
 * as it is, as at unload (lbr_cpu_stop()), and counted.  No hook's
 * freeze and unfreeze can be under way here; an NMI's is over before the
 * write.  ARCH_LBR_CTL keeps its LBREn as it is (a #DB may have cleared
 * it: lbr_rearm_after_db() compares with ctl_set, updated with it).
 */
static void lbr_cpu_refilter(void *info)
{
	struct lbr_saved *s = this_cpu_ptr(&lbr_saved);
	atomic_t *changed = info;
	u32 sel_msr = lbr_sel_msr();
	u64 now, ctl, sel, mask;

	if (!READ_ONCE(s->valid))
		return;
	if (lbr_hw.backend == LBR_SNAP_BACKEND_ARCH) {
		if (lbr_rdmsr_safe(lbr_hw.ctl_msr, &now) ||
		    (now & ~lbr_hw.enable_mask) !=
		    (s->ctl_set & ~lbr_hw.enable_mask)) {
			atomic_inc(changed);
			return;
		}
		ctl = lbr_arch_ctl_value();
		if (lbr_wrmsr_safe(lbr_hw.ctl_msr,
				   (ctl & ~lbr_hw.enable_mask) |
				   (now & lbr_hw.enable_mask))) {
			atomic_inc(changed);
			return;
		}
		s->ctl_set = ctl;
		__this_cpu_write(lbr_cpu_rets,
				 lbr_filter_keeps_rets(&lbr_filter));
		return;
	}
	/*
	 * LBR_SELECT alone cannot tell: perf, taking LBR over with the same
	 * filter, changes the control MSR's other bits (legacy: it sets
	 * FREEZE_LBRS_ON_PMI, which lbr_snap clears).  Not DEBUGCTL.BTF,
	 * which the kernel sets while a block-stepping task runs.  A CPU
	 * left alone keeps its lbr_cpu_rets, lbr_snap's last filter's.
	 */
	sel = lbr_select_value();
	mask = lbr_hw.enable_mask |
	       (lbr_hw.backend == LBR_SNAP_BACKEND_INTEL ? LBR_DEBUGCTL_BTF : 0);
	if (lbr_rdmsr_safe(lbr_hw.ctl_msr, &ctl) ||
	    (ctl & ~mask) != (s->ctl_set & ~mask) ||
	    lbr_sel_rdmsr(sel_msr, &now) || now != s->select_set ||
	    lbr_sel_wrmsr(sel_msr, sel)) {
		atomic_inc(changed);
		return;
	}
	s->select_set = sel;
	__this_cpu_write(lbr_cpu_rets, lbr_filter_keeps_rets(&lbr_filter));
}

/**
 * lbr_hw_set_filter - change what LBR records, on every CPU
 * @cpl: LBR_SNAP_LBR_KERNEL, LBR_SNAP_LBR_USER
 * @kinds: LBR_SNAP_KIND_*
 *
 * Process context.  Return: 0; -EINVAL for a filter that names nothing;
 * -ENODEV without LBR; -EOPNOTSUPP for one this CPU or perf cannot apply;
 * -EBUSY when some CPUs' filter MSRs were changed by someone else (those
 * keep theirs, the others and GET_INFO have the new filter); -EINTR if
 * killed waiting for another change; perf's error when it refused the new
 * filter's events and took the old ones back, -EIO when it took neither.
 */
int lbr_hw_set_filter(u32 cpl, u32 kinds)
{
	struct lbr_filter f = {
		.kernel = cpl & LBR_SNAP_LBR_KERNEL,
		.user = cpl & LBR_SNAP_LBR_USER,
		.kinds = kinds,
	}, old;
	atomic_t changed = ATOMIC_INIT(0);
	u64 type, old_type;
	int ret = 0;

	if (!cpl || (cpl & ~(LBR_SNAP_LBR_KERNEL | LBR_SNAP_LBR_USER)) ||
	    !kinds || (kinds & ~LBR_KINDS_ALL))
		return -EINVAL;
	if (lbr_hw.backend == LBR_SNAP_BACKEND_NONE)
		return -ENODEV;
	/* As perf's arch_lbr_ctl_map has it: what the CPU cannot, refused. */
	if ((!lbr_hw.filter_kinds && kinds != LBR_KINDS_ALL) ||
	    (!lbr_hw.filter_cpl &&
	     cpl != (LBR_SNAP_LBR_KERNEL | LBR_SNAP_LBR_USER)))
		return -EOPNOTSUPP;

	if (mutex_lock_killable(&lbr_filter_lock))
		return -EINTR;
	old = lbr_filter;
	if (lbr_perf_mode) {
		ret = lbr_perf_branch_type(&f, &type);
		/* The old filter was perf's: it cannot fail. */
		if (ret || WARN_ON_ONCE(lbr_perf_branch_type(&old, &old_type)))
			goto out;
		lbr_filter = f;
		lbr_filter_publish();
		if (type == old_type && lbr_vlbr_running())
			goto out;
		/* One LBR event per CPU: the old ones go first. */
		lbr_vlbr_stop();
		ret = lbr_vlbr_start(type);
		if (ret) {
			pr_warn_ratelimited("perf refused the branch filter's events (%d): the old filter stays\n",
					    ret);
			lbr_filter = old;
			lbr_filter_publish();
			if (lbr_vlbr_start(old_type))
				ret = -EIO;
			if (ret == -EIO)
				pr_warn_ratelimited("perf took the old filter's events back neither: no LBR records until a filter perf takes\n");
		}
		goto out;
	}
	cpus_read_lock();
	lbr_filter = f;
	lbr_filter_publish();
	if (lbr_cpuhp_state > 0)
		on_each_cpu(lbr_cpu_refilter, &changed, 1);
	cpus_read_unlock();
	if (atomic_read(&changed)) {
		pr_warn_ratelimited("%d CPUs' LBR filter was changed by someone else: left as it is there\n",
				    atomic_read(&changed));
		ret = -EBUSY;
	}
out:
	mutex_unlock(&lbr_filter_lock);
	return ret;
}

/* What lbr_hw_set_filter() or lbr_filter= set: LBR_SNAP_LBR_*, _KIND_*. */
void lbr_hw_get_filter(u32 *cpl, u32 *kinds)
{
	u32 w = READ_ONCE(lbr_filter_word);

	*cpl = w >> 8;
	*kinds = w & 0xff;
}

const char *lbr_hw_mode(void)
{
	if (lbr_hw.backend == LBR_SNAP_BACKEND_NONE)
		return "none";
	return lbr_perf_mode ? "perf" : "raw";
}
