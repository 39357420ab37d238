// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding a stored record for read(): what the capture path left for
 * later.
 *
 * lbr_capture() copies the frozen LBR MSRs into the ring as they are
 * (struct lbr_raw_record) and unfreezes.  The record user space reads is
 * made here, in the reader's process context: the entries decoded
 * (lbr_raw_decode()), oldest first, and the probe's own entries counted
 * (lbr_return_entries()).  The ABI is the same as when the capture path
 * did all this: readers never see a raw record.
 */
#include <linux/build_bug.h>
#include <linux/bug.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "lbr_snap.h"

/* The ABI header has no padding: the capture path sets every byte. */
static_assert(sizeof(struct lbr_snap_record) ==
	      offsetofend(struct lbr_snap_record, entry_ns));
static_assert(offsetofend(struct lbr_snap_record, comm) ==
	      LBR_SNAP_RECORD_SIZE_V1);
static_assert(offsetofend(struct lbr_snap_record, syscall_ns) ==
	      LBR_SNAP_RECORD_SIZE_V2);
static_assert(offsetof(struct lbr_raw_record, msr) % 8 == 0);

/*
 * Whether the branch taken at @from is the return of an interrupt or an
 * exception: IRETQ, IRET or ERETS there.  The kernel's are in its entry
 * code, never freed or patched, so the text read now is the text run.
 * Anything else, and text that cannot be read, is not: a RET, a return
 * thunk's, or whatever lands on the return site in its place.
 */
static bool lbr_event_return(u64 from)
{
	const void *ip = (const void *)(unsigned long)from;
	u8 op[4];

	if (copy_from_kernel_nofault(op, ip, 1))
		return false;
	if (op[0] == 0xcf)
		return true;
	if (op[0] != 0x48 && op[0] != 0xf2)
		return false;
	if (copy_from_kernel_nofault(op + 1, ip + 1, 1))
		return false;
	if (op[0] == 0x48)
		return op[1] == 0xcf;
	return op[1] == 0x0f &&
	       !copy_from_kernel_nofault(op + 2, ip + 2, 2) &&
	       op[2] == 0x01 && op[3] == 0xca;
}

/**
 * lbr_record_decode - the record read() returns for a stored one
 * @stored: the record in a ring (struct lbr_raw_record)
 * @len: its bytes
 * @out: room for LBR_RECORD_DECODED_MAX bytes
 *
 * Under the read lock, with lbr_hw as the capture had it.
 * Return: the bytes of @out, or 0 for a record that is not one the
 * capture path wrote (a defect: WARNs).
 */
unsigned int lbr_record_decode(const struct lbr_snap_record *stored,
			       unsigned int len, struct lbr_snap_record *out)
{
	const struct lbr_raw_record *raw =
		container_of(stored, struct lbr_raw_record, hdr);
	struct lbr_snap_branch *br = (struct lbr_snap_branch *)(out + 1);
	unsigned int nr = 0, nmsr;
	bool found;

	if (WARN_ON_ONCE(len < sizeof(*raw) ||
			 raw->depth > LBR_SNAP_MAX_ENTRIES ||
			 raw->hdr.nr_stack > LBR_SNAP_MAX_STACK ||
			 raw->planes & ~(LBR_RAW_TO | LBR_RAW_INFO |
					 LBR_RAW_XSAVES | LBR_RAW_RET_FILTERED)))
		return 0;
	nmsr = lbr_raw_msrs(raw->planes, raw->depth);
	if (WARN_ON_ONCE(len != sizeof(*raw) +
				(nmsr + raw->hdr.nr_stack) * sizeof(u64)))
		return 0;
	*out = raw->hdr;
	if (raw->depth) {
		nr = lbr_raw_decode(raw->msr, raw->depth, raw->planes,
				    raw->tos, br);
		if (raw->planes & LBR_RAW_RET_FILTERED) {
			out->flags |= LBR_SNAP_REC_RET_FILTERED;
		} else {
			out->probe_entries =
				lbr_return_entries(br, nr, raw->ret_site,
						   lbr_event_return, &found);
			if (!found)
				out->flags |= LBR_SNAP_REC_NO_RETURN;
		}
		if (raw->planes & LBR_RAW_XSAVES)
			out->flags |= LBR_SNAP_REC_XSAVES;
	}
	out->nr_entries = nr;
	/* The stack after the entries, as the ABI has it. */
	memcpy(br + nr, &raw->msr[nmsr], out->nr_stack * sizeof(u64));
	out->size = sizeof(*out) + nr * sizeof(*br) +
		    out->nr_stack * sizeof(u64);
	BUILD_BUG_ON(sizeof(*out) + LBR_SNAP_MAX_ENTRIES * sizeof(*br) +
		     LBR_SNAP_MAX_STACK * sizeof(u64) >
		     LBR_RECORD_DECODED_MAX);
	return out->size;
}
