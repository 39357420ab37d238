/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The LBR hardware description, the loop that copies the frozen stack out
 * of the MSRs, lbr_hw_read_raw() in lbr_read.c, and the one that decodes
 * the copy, lbr_raw_decode().
 *
 * lbr_read.c is compiled both into the module and into the user-space
 * unit test (tests/unit/decode_test.c), where the loops run on simulated
 * MSR files.  The test used to carry a hand copy of the loop, which
 * drifted from it (no MSR stride, no double-abort handling); with one
 * source it cannot.
 *
 * The capture path, with LBR frozen and interrupts off, only copies: the
 * MSRs in their hardware order, and the legacy TOS, as the ring's record.
 * Decoding, putting the entries in time order and counting the probe's
 * own entries wait for read(), in process context (record_decode.c): the
 * fewer instructions between a return and the unfreeze, the cheaper a
 * capture (tests/bench/cost.sh measures it).
 *
 * The copy reads MSRs with lbr_rdmsr(): in the module the raw RDMSR of
 * compat.h, always inlined (LBR is frozen and interrupts are off: no
 * tracepoint, no paravirt call); in the test a function of the test's that
 * looks the MSR up in the simulated file.  Everything else the loops call
 * is in lbr_decode.c, built into both.
 */
#ifndef LBR_READ_H
#define LBR_READ_H

#include "lbr_decode.h"

struct lbr_hw {
	enum lbr_snap_backend backend;
	const char *name;
	u32 ctl_msr;		/* its enable bit freezes and unfreezes */
	u64 enable_mask;	/* in the low half on every backend */
	u32 freeze_keep;	/* ~enable_mask's low half */
	u32 tos_msr;		/* legacy only */
	u32 from_msr;
	u32 to_msr;
	u32 info_msr;		/* 0: no LBR_INFO */
	u32 frz_msr;		/* global status whose LBR_FRZ perf's PMI sets, or 0 */
	u32 frz_gate;		/* ctl bit without which no PMI freezes, or 0 */
	u32 from_stride;	/* MSR step between entries */
	unsigned int depth;
	bool double_abort;	/* drop Haswell's duplicated abort entries */
	bool filter_cpl;	/* LBR filters by CPL (Arch LBR: CPUID.0x1c
				 * EBX[0]; legacy: LBR_SELECT exists)
				 */
	bool filter_kinds;	/* and by branch kind (EBX[1]; LBR_SELECT) */
	u8 planes;		/* LBR_RAW_*: what lbr_hw_read_raw() copies */
	struct lbr_decode_fmt fmt;
	char reason[96];	/* why this backend, shown by GET_INFO */
};

/* Set by lbr_hw_detect() (lbr_msr.c), or by the unit test. */
extern struct lbr_hw lbr_hw;

/*
 * What a raw copy holds: from[depth] always, then to[depth] unless the
 * format packs both in one MSR (legacy LBR_FMT_32), then info[depth] when
 * LBR_INFO is read (lbr_info=1).
 */
#define LBR_RAW_TO		0x1
#define LBR_RAW_INFO		0x2
/* Not a plane: the copy came from XSAVES (lbr_xsave.c), laid out alike. */
#define LBR_RAW_XSAVES		0x4
/* Nor this: the CPU's filter left the kernel's returns out (lbr_cpu_rets). */
#define LBR_RAW_RET_FILTERED	0x8
#define LBR_RAW_MAX_MSRS	(3 * LBR_SNAP_MAX_ENTRIES)

void lbr_hw_set_planes(bool read_info);

/* MSR values a raw copy of @depth entries with @planes holds. */
static __always_inline unsigned int lbr_raw_msrs(unsigned int planes,
						 unsigned int depth)
{
	return depth * (1 + !!(planes & LBR_RAW_TO) +
			!!(planes & LBR_RAW_INFO));
}

unsigned int lbr_hw_read_raw(u64 *msr, unsigned int depth, u32 *tos);
unsigned int lbr_raw_decode(const u64 *msr, unsigned int depth,
			    unsigned int planes, u32 tos,
			    struct lbr_snap_branch *out);

#ifndef __KERNEL__
/* The unit test's simulated RDMSR (compat.h has the module's). */
u64 lbr_rdmsr(u32 msr);

static inline void lbr_rdmsr_to(u32 msr, u64 *p)
{
	*p = lbr_rdmsr(msr);
}
#endif

#endif /* LBR_READ_H */
