/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Giving LBR control MSRs back (mode=raw), shared by the module
 * (lbr_msr.c) and the user-space unit test (tests/unit/decode_test.c).
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

#endif /* LBR_OWN_H */
