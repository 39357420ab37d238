/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The LBR control values mode=raw writes, and giving them back, shared
 * by the module (lbr_msr.c) and the user-space unit test
 * (tests/unit/decode_test.c).
 */
#ifndef LBR_OWN_H
#define LBR_OWN_H

#ifdef __KERNEL__
#include <linux/types.h>
#endif

/*
 * The value to leave in an MSR that held @found when lbr_snap wrote @set
 * and that holds @now: the bits lbr_snap changed (found ^ set) that nobody
 * changed since (now == set there) go back to @found; every other bit
 * keeps its value in @now, so what another writer did since stays.
 */
static inline u64 lbr_give_back(u64 found, u64 set, u64 now)
{
	u64 ours = (found ^ set) & ~(now ^ set);

	return (now & ~ours) | (found & ours);
}

/*
 * The same for a register whose fields mean something only together (a
 * filter, ARCH_LBR_CTL, which lbr_snap writes whole): it goes back to
 * @found only if it still holds exactly what lbr_snap wrote; otherwise
 * another writer owns it now and it stays.  Given back bit by bit, a mix
 * of the two values could be one nobody wrote (USR without LBREn).
 */
static inline u64 lbr_give_back_whole(u64 found, u64 set, u64 now)
{
	return now == set ? found : now;
}

/*
 * The IA32_LBR_CTL value raw mode writes for a filter: LBREn, then OS (CPL
 * 0) and USR (CPL > 0) if the CPU filters by CPL, @cpl
 * (CPUID.(0x1c,0):EBX[0]), and the kinds of branch to keep if it filters
 * by kind, @by_kind (EBX[1]).  Without those the SDM lets software set
 * only zeroes there (bits 2:1, 22:16), and the CPU records every CPL, or
 * every kind; intel_pmu_arch_lbr_init() (arch/x86/events/intel/lbr.c)
 * marks the perf filters that need them unsupported.  @kinds: bit i keeps
 * the i-th of jcc, rel_call, ind_call, ret, ind_jmp, rel_jmp, far (the
 * order of legacy LBR_SELECT's suppress bits 2..8).
 */
static inline u64 lbr_arch_ctl_bits(bool kernel, bool user, u8 kinds,
				    bool cpl, bool by_kind)
{
	/* JCC 16, REL_CALL 19, IND_CALL 20, RET 21, IND_JMP 18, REL_JMP 17, OTHER 22 */
	static const u8 arch_bit[] = { 16, 19, 20, 21, 18, 17, 22 };
	u64 ctl = 1;	/* LBREn */
	unsigned int i;

	if (cpl)
		ctl |= (kernel ? 1ULL << 1 : 0) | (user ? 1ULL << 2 : 0);
	if (by_kind)
		for (i = 0; i < sizeof(arch_bit); i++)
			if (kinds & (1U << i))
				ctl |= 1ULL << arch_bit[i];
	return ctl;
}

/*
 * LBR_SELECT (legacy and AMD) for a filter: set bits suppress, CPL 0 in
 * bit 0, CPL > 0 in bit 1, then the kinds of branch in @kinds' order in
 * bits 2..8.  @jmp_for_calls: Nehalem, Westmere, Silvermont and Airmont,
 * whose calls are recorded only when jumps are not suppressed, nor
 * indirect calls when indirect jumps are (perf's nhm_lbr_sel_map: "NHM/
 * WSM erratum: must include REL_JMP+IND_JMP to get CALL branches", and it
 * asks for the jumps with the returns too); those jumps are then recorded
 * beside what @kinds asked.
 */
static inline u64 lbr_select_bits(bool kernel, bool user, u8 kinds,
				  bool jmp_for_calls)
{
	if (jmp_for_calls) {
		if (kinds & (LBR_SNAP_KIND_REL_CALL | LBR_SNAP_KIND_RET))
			kinds |= LBR_SNAP_KIND_REL_JMP | LBR_SNAP_KIND_IND_JMP;
		if (kinds & LBR_SNAP_KIND_IND_CALL)
			kinds |= LBR_SNAP_KIND_IND_JMP;
	}
	return (kernel ? 0 : 1ULL << 0) | (user ? 0 : 1ULL << 1) |
	       ((u64)(~kinds & LBR_SNAP_KIND_ALL) << 2);
}

#endif /* LBR_OWN_H */
