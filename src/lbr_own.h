/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Giving LBR control MSRs back (mode=raw), shared by the module
 * (lbr_msr.c) and the user-space unit test (tests/unit/decode_test.c).
 */
#ifndef LBR_OWN_H
#define LBR_OWN_H

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

#endif /* LBR_OWN_H */
