/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The LBR hardware description and the loop that reads the stack from it,
 * lbr_hw_read() in lbr_read.c.
 *
 * lbr_read.c is compiled both into the module, where lbr_hw_read() runs on
 * the capture path, and into the user-space unit test
 * (tests/unit/decode_test.c), where it runs on simulated MSR files.  The
 * test used to carry a hand copy of the loop, which drifted from it (no MSR
 * stride, no double-abort handling); with one source it cannot.
 *
 * The loop reads MSRs with lbr_rdmsr(): in the module the raw RDMSR of
 * compat.h, always inlined (LBR is frozen and interrupts are off: no
 * tracepoint, no paravirt call); in the test a function of the test's that
 * looks the MSR up in the simulated file.  Everything else the loop calls
 * is in lbr_decode.c, built into both.
 */
#ifndef LBR_READ_H
#define LBR_READ_H

#include "lbr_decode.h"

struct lbr_hw {
	enum lbr_snap_backend backend;
	const char *name;
	u32 ctl_msr;		/* its enable bit freezes and unfreezes */
	u64 enable_mask;
	u32 tos_msr;		/* legacy only */
	u32 from_msr;
	u32 to_msr;
	u32 info_msr;		/* 0: no LBR_INFO */
	u32 from_stride;	/* MSR step between entries */
	unsigned int depth;
	bool double_abort;	/* drop Haswell's duplicated abort entries */
	struct lbr_decode_fmt fmt;
	char reason[96];	/* why this backend, shown by GET_INFO */
};

/* Set by lbr_hw_detect() (lbr_msr.c), or by the unit test. */
extern struct lbr_hw lbr_hw;

unsigned int lbr_hw_read(struct lbr_snap_branch *out, unsigned int depth);

#ifndef __KERNEL__
/* The unit test's simulated RDMSR (compat.h has the module's). */
u64 lbr_rdmsr(u32 msr);
#endif

#endif /* LBR_READ_H */
