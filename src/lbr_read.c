// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the frozen LBR stack, shared by the module and a user-space test
 * (lbr_read.h says how).
 */
#ifdef __KERNEL__
#include "lbr_snap.h"
#else
#include "lbr_read.h"
#endif

/**
 * lbr_hw_read - read the frozen LBR stack of this CPU
 * @out: room for @depth branches
 * @depth: this CPU's LBR depth (at most lbr_hw.depth; hybrid CPUs differ)
 *
 * Called with LBR frozen and interrupts off.  Reads newest first, stops at
 * the first empty entry, and stores the result oldest first.  The legacy
 * TOS points at the newest entry; Arch LBR and AMD have entry 0 newest.
 * AMD interleaves its FROM and TO MSRs, hence the stride; LBR_INFO, where
 * there is one, has none.
 * Return: the number of branches in @out.
 */
notrace unsigned int lbr_hw_read(struct lbr_snap_branch *out,
				  unsigned int depth)
{
	bool legacy = lbr_hw.backend == LBR_SNAP_BACKEND_INTEL;
	struct lbr_raw_entry raw = { 0 };
	struct lbr_snap_branch tmp;
	unsigned int i, n = 0, idx;
	u64 tos;

	/* A CPU without lbr_snap's kind of LBR: not one MSR of it. */
	if (!depth)
		return 0;
	tos = legacy ? lbr_rdmsr(lbr_hw.tos_msr) : 0;

	for (i = 0; i < depth; i++) {
		idx = legacy ? lbr_legacy_index(tos, i, depth) : i;
		raw.from = lbr_rdmsr(lbr_hw.from_msr + idx * lbr_hw.from_stride);
		if (lbr_hw.fmt.format != LBR_FMT_32 || !legacy)
			raw.to = lbr_rdmsr(lbr_hw.to_msr + idx * lbr_hw.from_stride);
		if (lbr_hw.info_msr)
			raw.info = lbr_rdmsr(lbr_hw.info_msr + idx);

		switch (lbr_decode_entry(&lbr_hw.fmt, &raw, &out[n])) {
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
LBR_DECODE_NOKPROBE(lbr_hw_read);
