/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fexit trampolines' table, shared by fexit_tramp.S and fexit_hook.c.
 */
#ifndef LBR_SNAP_FEXIT_TRAMP_H
#define LBR_SNAP_FEXIT_TRAMP_H

/*
 * One trampoline per target slot: as many as targets= accepts.
 * fexit_tramp.S lists the slot numbers and checks it made this many.
 */
#define LBR_FEXIT_SLOTS		64

#ifndef __ASSEMBLY__
#include <linux/types.h>

/* fexit_tramp.S: [0] freezes LBR, [1] is for the "none" backend. */
extern const unsigned long lbr_fexit_tramps[2][LBR_FEXIT_SLOTS];
/* Offset from a trampoline to the instruction the traced function returns to. */
extern const u32 lbr_fexit_ret_offs[2][LBR_FEXIT_SLOTS];

/* Calls inside each slot's traced function (lock inc/dec in the trampoline). */
extern atomic_long_t lbr_fexit_inflight[LBR_FEXIT_SLOTS];

/* The freeze the trampolines do: clear ~@lbr_fexit_keep bits of @lbr_fexit_ctl_msr. */
extern u32 lbr_fexit_ctl_msr;
extern u64 lbr_fexit_keep;

void lbr_fexit_capture_lbr(unsigned int slot, unsigned long ax,
			   unsigned long caller, u64 ctl);
void lbr_fexit_capture_nolbr(unsigned int slot, unsigned long ax,
			     unsigned long caller);
#endif

#endif /* LBR_SNAP_FEXIT_TRAMP_H */
