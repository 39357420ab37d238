/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure decoding of raw LBR MSR images into struct lbr_snap_branch.
 *
 * Nothing here touches hardware, so the same code is built into the module
 * and into a user-space unit test (tests/unit/decode_test.c).
 */
#ifndef LBR_DECODE_H
#define LBR_DECODE_H

/*
 * The capture path calls the decoder with LBR frozen: in the kernel it is
 * neither traced nor probed (LBR_DECODE_NOKPROBE(); its helpers are
 * always inlined, whatever the compiler's options); in user space, where
 * the unit tests build it, that means nothing.
 */
#ifdef __KERNEL__
#include <linux/kprobes.h>
#include <linux/types.h>
#define LBR_DECODE_NOKPROBE(fn)	NOKPROBE_SYMBOL(fn)
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
#define notrace		/* __always_inline: glibc's <sys/cdefs.h> */
#define LBR_DECODE_NOKPROBE(fn)
#endif

#include "../include/lbr_snap.h"

/* Legacy LBR formats, IA32_PERF_CAPABILITIES[5:0] (LBR_FORMAT_* in Linux). */
enum lbr_legacy_format {
	LBR_FMT_32		= 0,
	LBR_FMT_LIP		= 1,
	LBR_FMT_EIP		= 2,
	LBR_FMT_EIP_FLAGS	= 3,
	LBR_FMT_EIP_FLAGS2	= 4,
	LBR_FMT_INFO		= 5,
	LBR_FMT_TIME		= 6,
	LBR_FMT_INFO2		= 7,
	LBR_FMT_MAX_KNOWN	= LBR_FMT_INFO2,
};

/* How one backend encodes its entries. */
struct lbr_decode_fmt {
	u8 backend;		/* enum lbr_snap_backend */
	u8 format;		/* legacy: enum lbr_legacy_format */
	u8 tsx;			/* legacy: the CPU has TSX, in_tx/abort valid */
	u8 virt_bits;		/* AMD: virtual address width to sign-extend */
	u8 no_info;		/* LBR_INFO was not read (lbr_info=0): no
				 * prediction, cycles or type from it
				 */
};

/* One entry as read from the MSRs, before decoding. */
struct lbr_raw_entry {
	u64 from;
	u64 to;
	u64 info;		/* LBR_INFO / ARCH_LBR_INFO, 0 if none */
};

enum lbr_decode_result {
	LBR_DECODE_OK,		/* @out holds a branch */
	LBR_DECODE_SKIP,	/* not a branch (AMD: erratum, hole), go on */
	LBR_DECODE_END,		/* empty entry: no older entries follow */
};

bool lbr_format_has_info(unsigned int format);
long lbr_format_info_msr(unsigned int format, u32 model_info);
unsigned int lbr_legacy_index(u64 tos, unsigned int i, unsigned int depth);
enum lbr_decode_result lbr_decode_entry(const struct lbr_decode_fmt *fmt,
					const struct lbr_raw_entry *raw,
					struct lbr_snap_branch *out);
unsigned int lbr_probe_entries(const struct lbr_snap_branch *br,
			       unsigned int nr, u64 ret_site, bool *found);
unsigned int lbr_return_entries(const struct lbr_snap_branch *br,
				unsigned int nr, u64 ret_site,
				bool (*event_return)(u64 from), bool *found);

#endif /* LBR_DECODE_H */
