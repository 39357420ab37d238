// SPDX-License-Identifier: GPL-2.0
/*
 * Copying the frozen LBR stack out of the MSRs, and decoding the copy;
 * shared by the module and a user-space test (lbr_read.h says how).
 */
#ifdef __KERNEL__
#include "lbr_snap.h"
#else
#include "lbr_read.h"
#endif

/**
 * lbr_hw_set_planes - what lbr_hw_read_raw() is to copy
 * @read_info: LBR_INFO as well, where the backend has it
 *
 * Once the backend is known, before any capture.
 */
void lbr_hw_set_planes(bool read_info)
{
	lbr_hw.planes = 0;
	if (lbr_hw.backend != LBR_SNAP_BACKEND_INTEL ||
	    lbr_hw.fmt.format != LBR_FMT_32)
		lbr_hw.planes |= LBR_RAW_TO;
	if (read_info && lbr_hw.info_msr)
		lbr_hw.planes |= LBR_RAW_INFO;
	lbr_hw.fmt.no_info = !(lbr_hw.planes & LBR_RAW_INFO);
}

/*
 * Copy @n MSRs, from @msr on, @stride apart, to @p; returns where the copy
 * ends.  Four to a turn of the loop, with the MSR numbers as offsets from
 * one register: every LBR depth there is (4, 8, 16 and 32 legacy, a
 * multiple of 8 for Arch LBR, 16 on AMD) is a multiple of four, and any
 * rest is copied one at a time.
 */
static __always_inline u64 *lbr_copy_msrs(u64 *p, u32 msr, unsigned int n,
					  const unsigned int stride)
{
	u64 *end = p + (n & ~3U);

	while (p != end) {
		lbr_rdmsr_to(msr, &p[0]);
		lbr_rdmsr_to(msr + stride, &p[1]);
		lbr_rdmsr_to(msr + 2 * stride, &p[2]);
		lbr_rdmsr_to(msr + 3 * stride, &p[3]);
		p += 4;
		msr += 4 * stride;
	}
	for (n &= 3; n; n--, msr += stride)
		lbr_rdmsr_to(msr, p++);
	return p;
}

/**
 * lbr_hw_read_raw - copy the frozen LBR stack of this CPU
 * @msr: room for lbr_raw_msrs(lbr_hw.planes, @depth) values
 * @depth: this CPU's LBR depth (at most lbr_hw.depth; hybrid CPUs differ)
 * @tos: the legacy TOS MSR (the newest entry's index), else 0
 *
 * Called with LBR frozen and interrupts off.  Every entry, empty or not,
 * in the hardware's order and undecoded: no test or branch per entry,
 * only RDMSR and a store; lbr_raw_decode() makes branches of the copy.
 * AMD interleaves its FROM and TO MSRs, hence the stride; LBR_INFO,
 * where there is one, has none.  A CPU without lbr_snap's kind of LBR
 * (@depth 0) reads not one MSR.
 * Return: lbr_hw.planes, what @msr holds.
 */
notrace unsigned int lbr_hw_read_raw(u64 *msr, unsigned int depth, u32 *tos)
{
	unsigned int planes = lbr_hw.planes;

	*tos = 0;
	if (!depth)
		return planes;
	if (lbr_hw.backend == LBR_SNAP_BACKEND_AMD) {
		/* FROM and TO interleaved; no TOS, no LBR_INFO. */
		msr = lbr_copy_msrs(msr, lbr_hw.from_msr, depth, 2);
		lbr_copy_msrs(msr, lbr_hw.to_msr, depth, 2);
		return planes;
	}
	if (lbr_hw.backend == LBR_SNAP_BACKEND_INTEL)
		*tos = lbr_rdmsr(lbr_hw.tos_msr);
	msr = lbr_copy_msrs(msr, lbr_hw.from_msr, depth, 1);
	if (planes & LBR_RAW_TO)
		msr = lbr_copy_msrs(msr, lbr_hw.to_msr, depth, 1);
	if (planes & LBR_RAW_INFO)
		lbr_copy_msrs(msr, lbr_hw.info_msr, depth, 1);
	return planes;
}
LBR_DECODE_NOKPROBE(lbr_hw_read_raw);

/**
 * lbr_raw_decode - the branches of a copy lbr_hw_read_raw() made
 * @msr: the copy
 * @depth: entries in it
 * @planes: what it holds (lbr_hw_read_raw()'s return)
 * @tos: the legacy TOS it read
 * @out: room for @depth branches
 *
 * In process context, with lbr_hw as the copy's CPU had it.  Walks the
 * copy newest first, stops at the first empty entry (AMD's are holes,
 * skipped as perf does), and stores the result oldest first.  The legacy
 * TOS points at the newest entry; Arch LBR and AMD have entry 0 newest.
 * Return: the number of branches in @out.
 */
notrace unsigned int lbr_raw_decode(const u64 *msr, unsigned int depth,
				    unsigned int planes, u32 tos,
				    struct lbr_snap_branch *out)
{
	bool legacy = lbr_hw.backend == LBR_SNAP_BACKEND_INTEL;
	struct lbr_decode_fmt fmt = lbr_hw.fmt;
	const u64 *to = msr + depth;
	const u64 *info = to + ((planes & LBR_RAW_TO) ? depth : 0);
	struct lbr_raw_entry raw = { 0 };
	struct lbr_snap_branch tmp;
	unsigned int i, n = 0, idx;

	fmt.no_info = !(planes & LBR_RAW_INFO);
	for (i = 0; i < depth; i++) {
		idx = legacy ? lbr_legacy_index(tos, i, depth) : i;
		raw.from = msr[idx];
		if (planes & LBR_RAW_TO)
			raw.to = to[idx];
		if (planes & LBR_RAW_INFO)
			raw.info = info[idx];

		switch (lbr_decode_entry(&fmt, &raw, &out[n])) {
		case LBR_DECODE_OK:
			/*
			 * A duplicated abort: the entry read just before (newer)
			 * is the copy without the abort bit; this one replaces
			 * it, as intel_pmu_lbr_read_64() does.
			 */
			if (lbr_hw.double_abort && n &&
			    (out[n].flags & LBR_SNAP_BR_ABORT))
				out[n - 1] = out[n];
			else
				n++;
			continue;
		case LBR_DECODE_SKIP:
			continue;
		case LBR_DECODE_END:
			break;
		}
		break;
	}

	/* Newest first from the hardware; the ABI wants oldest first. */
	for (i = 0; i < n / 2; i++) {
		tmp = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = tmp;
	}
	return n;
}
LBR_DECODE_NOKPROBE(lbr_raw_decode);
