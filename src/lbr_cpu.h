/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LBR per CPU type (hybrid CPUs), shared by the module (lbr_msr.c) and the
 * user-space unit test (tests/unit/decode_test.c), as lbr_read.c is.
 *
 * On a hybrid part (Alder Lake and later: CPUID.(7,0):EDX[15], the
 * kernel's X86_FEATURE_HYBRID_CPU) P-cores and E-cores report themselves
 * apart: CPUID.0x1a:EAX[31:24] is the core type, 0x40 for a Core (P-core)
 * and 0x20 for an Atom (E-core) (get_this_hybrid_cpu_type() in
 * arch/x86/kernel/cpu/intel.c; init_hybrid_pmu() in
 * arch/x86/events/intel/core.c picks the PMU of each CPU by it), and
 * CPUID leaf 0x1c (Arch LBR) and IA32_PERF_CAPABILITIES (the legacy LBR
 * format) are read on each CPU.  Linux 6.1's perf reads leaf 0x1c once, on
 * the boot CPU (intel_pmu_arch_lbr_init() in arch/x86/events/intel/lbr.c),
 * and assumes every CPU has the same LBR; lbr_snap reads each CPU.
 */
#ifndef LBR_CPU_H
#define LBR_CPU_H

#include "lbr_decode.h"

#define LBR_CPUID7_EDX_HYBRID	(1U << 15)	/* CPUID.(7,0):EDX */
#define LBR_CPUID7_EDX_ARCH_LBR	(1U << 19)
#define LBR_CORE_TYPE_ATOM	0x20		/* CPUID.0x1a:EAX[31:24] */
#define LBR_CORE_TYPE_CORE	0x40

/* Arch LBR's MSRs (MSR_ARCH_LBR_* in asm/msr-index.h). */
#define LBR_MSR_ARCH_CTL	0x14ce
#define LBR_MSR_ARCH_DEPTH	0x14cf
#define LBR_MSR_ARCH_FROM_0	0x1500
#define LBR_MSR_ARCH_TO_0	0x1600
#define LBR_MSR_ARCH_INFO_0	0x1200

/* What one CPU reports about itself, read on that CPU. */
struct lbr_cpu_id {
	u32 cpuid7_edx;		/* CPUID.(7,0):EDX */
	u32 cpuid1a_eax;	/* CPUID.0x1a:EAX (0 below leaf 0x1a) */
	u32 cpuid1c_eax;	/* CPUID.0x1c:EAX, Arch LBR depths (0 if none) */
	u64 perf_caps;		/* IA32_PERF_CAPABILITIES, if it read */
	bool perf_caps_ok;
};

/* What lbr_snap makes of one CPU for the backend it chose. */
struct lbr_cpu_kind {
	bool seen;		/* the CPU was read */
	u8 core_type;		/* 0: not hybrid; LBR_CORE_TYPE_* */
	u8 backend;		/* the chosen backend, or NONE: not here */
	u8 format;		/* legacy LBR format */
	u8 depth;
};

/* CPUs of one kind, for GET_INFO and the messages. */
struct lbr_cpu_group {
	struct lbr_cpu_kind kind;
	unsigned int nr;
	char cpus[40];		/* "0-7,16" */
};

void lbr_cpu_kind_of(const struct lbr_cpu_id *id, unsigned int backend,
		     unsigned int legacy_depth, struct lbr_cpu_kind *k);
unsigned int lbr_cpu_groups(const struct lbr_cpu_kind *k, unsigned int n,
			    struct lbr_cpu_group *g, unsigned int max);
int lbr_cpu_check(const struct lbr_cpu_kind *k, unsigned int n,
		  char *why, unsigned int len);
const char *lbr_core_type_name(u8 type);

#endif /* LBR_CPU_H */
