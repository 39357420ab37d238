// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding of raw LBR MSR images, shared by the module and a user-space test.
 *
 * Legacy formats follow intel_pmu_lbr_read_32() and intel_pmu_lbr_read_64()
 * in arch/x86/events/intel/lbr.c, Arch LBR follows intel_pmu_store_lbr()
 * there, and AMD LbrExtV2 follows amd_pmu_lbr_read() in
 * arch/x86/events/amd/lbr.c (Linux 6.1).
 */
#include "lbr_decode.h"

/* Legacy FROM flag bits (LBR_FROM_FLAG_* in lbr.c). */
#define FROM_MISPRED		(1ULL << 63)
#define FROM_IN_TX		(1ULL << 62)
#define FROM_ABORT		(1ULL << 61)

/* LBR_INFO bits, arch/x86/include/asm/msr-index.h. */
#define INFO_MISPRED		(1ULL << 63)
#define INFO_IN_TX		(1ULL << 62)
#define INFO_ABORT		(1ULL << 61)
#define INFO_CYC_CNT_VALID	(1ULL << 60)
#define INFO_BR_TYPE_SHIFT	56
#define INFO_BR_TYPE_MASK	0xfULL
#define INFO_CYCLES		0xffffULL

/* AMD TO bits, struct branch_entry in arch/x86/events/amd/lbr.c. */
#define AMD_TO_VALID		(1ULL << 63)
#define AMD_TO_SPEC		(1ULL << 62)
#define AMD_TO_RESERVED		(1ULL << 61)
#define AMD_IP_BITS		58

static __always_inline u64 sign_extend(u64 val, unsigned int bits)
{
	unsigned int shift = 64 - bits;

	return (u64)((s64)(val << shift) >> shift);
}

/* Formats whose flags live in LBR_INFO (x86_pmu.lbr_has_info). */
bool lbr_format_has_info(unsigned int format)
{
	return format == LBR_FMT_INFO || format == LBR_FMT_INFO2;
}

/**
 * lbr_format_info_msr - the LBR_INFO MSR legacy LBR reads on a model
 * @format: IA32_PERF_CAPABILITIES' LBR format
 * @model_info: the model's LBR_INFO_0, or 0 for a model without one
 *
 * The format says whether the flags live in LBR_INFO, as
 * intel_pmu_lbr_init() decides x86_pmu.lbr_has_info; the model table only
 * says where it is.  intel_pmu_lbr_init_skl() names LBR_INFO_0 for
 * Goldmont too, whose format 6 keeps the flags in FROM and the cycles in
 * TO, and for Goldmont Plus and Tremont, whatever format they report.
 *
 * Return: the MSR, 0 when the format reads none, or -1 when the format
 * needs one the model does not have.
 */
long lbr_format_info_msr(unsigned int format, u32 model_info)
{
	if (!lbr_format_has_info(format))
		return 0;
	return model_info ? (long)model_info : -1L;
}

/*
 * Index of the i-th newest legacy entry: the TOS points at the newest one
 * and the stack wraps at @depth, a power of two.
 */
notrace unsigned int lbr_legacy_index(u64 tos, unsigned int i,
				  unsigned int depth)
{
	return (unsigned int)((tos - i) & (depth - 1));
}
LBR_DECODE_NOKPROBE(lbr_legacy_index);

static __always_inline void set_mispred(struct lbr_snap_branch *out,
					bool mispred)
{
	out->flags |= mispred ? LBR_SNAP_BR_MISPRED : LBR_SNAP_BR_PREDICTED;
}

static __always_inline void set_cycles(struct lbr_snap_branch *out,
				       u64 cycles)
{
	out->cycles = (u16)cycles;
	out->flags |= LBR_SNAP_BR_CYCLES;
}

static __always_inline enum lbr_decode_result
decode_legacy(const struct lbr_decode_fmt *fmt, const struct lbr_raw_entry *raw,
	      struct lbr_snap_branch *out)
{
	u64 from = raw->from, to = raw->to;
	unsigned int skip = 0;

	if (fmt->format == LBR_FMT_32) {
		/* FROM and TO packed in one MSR: FROM low, TO high. */
		to = from >> 32;
		from &= 0xffffffffULL;
	}
	if (!from && !to)
		return LBR_DECODE_END;

	switch (fmt->format) {
	case LBR_FMT_EIP_FLAGS:
	case LBR_FMT_TIME:
		set_mispred(out, from & FROM_MISPRED);
		skip = 1;
		break;
	case LBR_FMT_EIP_FLAGS2:
		set_mispred(out, from & FROM_MISPRED);
		/* Without TSX the two bits are sign extension, not flags. */
		if (fmt->tsx) {
			if (from & FROM_IN_TX)
				out->flags |= LBR_SNAP_BR_IN_TX;
			if (from & FROM_ABORT)
				out->flags |= LBR_SNAP_BR_ABORT;
		}
		skip = 3;
		break;
	case LBR_FMT_INFO:
	case LBR_FMT_INFO2:
		if (fmt->no_info)
			break;
		set_mispred(out, raw->info & INFO_MISPRED);
		if (fmt->format == LBR_FMT_INFO) {
			if (raw->info & INFO_IN_TX)
				out->flags |= LBR_SNAP_BR_IN_TX;
			if (raw->info & INFO_ABORT)
				out->flags |= LBR_SNAP_BR_ABORT;
		}
		set_cycles(out, raw->info & INFO_CYCLES);
		break;
	default:	/* 32, LIP, EIP: addresses only */
		break;
	}

	if (skip)
		from = sign_extend(from, 64 - skip);
	if (fmt->format == LBR_FMT_TIME) {
		/* TO bits 63:48 hold the cycle count. */
		set_cycles(out, (to >> 48) & INFO_CYCLES);
		to = sign_extend(to, 48);
	}
	out->from = from;
	out->to = to;
	return LBR_DECODE_OK;
}

/* ARCH_LBR_INFO branch type (bits 59:56) to the ABI's types. */
static __always_inline u8 arch_br_type(u64 info)
{
	static const u8 map[8] = {
		[0] = LBR_SNAP_BT_JCC,
		[1] = LBR_SNAP_BT_IND_JMP,
		[2] = LBR_SNAP_BT_JMP,
		[3] = LBR_SNAP_BT_IND_CALL,
		[4] = LBR_SNAP_BT_CALL,
		[5] = LBR_SNAP_BT_RET,
	};
	unsigned int type = (info >> INFO_BR_TYPE_SHIFT) & INFO_BR_TYPE_MASK;

	/* 1xxxb is OTHER_BRANCH: far transfers, interrupts, exceptions. */
	if (type & 8)
		return LBR_SNAP_BT_FAR;
	return map[type];
}

static __always_inline enum lbr_decode_result
decode_arch(const struct lbr_decode_fmt *fmt, const struct lbr_raw_entry *raw,
	    struct lbr_snap_branch *out)
{
	/* Entries fill from 0; the first FROM of 0 ends the stack. */
	if (!raw->from)
		return LBR_DECODE_END;

	out->from = raw->from;
	out->to = raw->to;
	if (fmt->no_info)
		return LBR_DECODE_OK;
	set_mispred(out, raw->info & INFO_MISPRED);
	if (raw->info & INFO_IN_TX)
		out->flags |= LBR_SNAP_BR_IN_TX;
	if (raw->info & INFO_ABORT)
		out->flags |= LBR_SNAP_BR_ABORT;
	if (raw->info & INFO_CYC_CNT_VALID)
		set_cycles(out, raw->info & INFO_CYCLES);
	out->type = arch_br_type(raw->info);
	return LBR_DECODE_OK;
}

static __always_inline enum lbr_decode_result
decode_amd(const struct lbr_decode_fmt *fmt, const struct lbr_raw_entry *raw,
	   struct lbr_snap_branch *out)
{
	u64 mask = (1ULL << AMD_IP_BITS) - 1;
	unsigned int bits = fmt->virt_bits ? fmt->virt_bits : 48;

	/*
	 * valid = 0 and spec = 0: nothing was recorded in this entry, and
	 * erratum 1452's reserved bit marks a bogus record.  Neither ends the
	 * stack: real parts leave holes, and amd_pmu_lbr_read() skips both
	 * and goes on to the older entries.  valid = 0 and spec = 1 is a
	 * branch of a wrong path, which perf keeps (PERF_BR_SPEC_WRONG_PATH):
	 * lbr_snap's records are the path the CPU took, so it goes too, and
	 * what looks for the function's return or a hook's entries never
	 * meets a branch that did not happen.
	 */
	if (!(raw->to & AMD_TO_VALID) || (raw->to & AMD_TO_RESERVED))
		return LBR_DECODE_SKIP;

	out->from = sign_extend(raw->from & mask, bits);
	out->to = sign_extend(raw->to & mask, bits);
	set_mispred(out, raw->from & FROM_MISPRED);
	if (raw->to & AMD_TO_SPEC)
		out->flags |= LBR_SNAP_BR_SPEC;
	return LBR_DECODE_OK;
}

/**
 * lbr_decode_entry - decode one raw LBR entry
 * @fmt: the backend's encoding
 * @raw: MSR values of the entry
 * @out: where the branch goes; fully written when LBR_DECODE_OK
 */
notrace enum lbr_decode_result
lbr_decode_entry(const struct lbr_decode_fmt *fmt,
		 const struct lbr_raw_entry *raw, struct lbr_snap_branch *out)
{
	out->from = 0;
	out->to = 0;
	out->flags = 0;
	out->cycles = 0;
	out->type = LBR_SNAP_BT_UNKNOWN;
	out->reserved = 0;

	switch (fmt->backend) {
	case LBR_SNAP_BACKEND_INTEL:
		return decode_legacy(fmt, raw, out);
	case LBR_SNAP_BACKEND_ARCH:
		return decode_arch(fmt, raw, out);
	case LBR_SNAP_BACKEND_AMD:
		return decode_amd(fmt, raw, out);
	default:
		return LBR_DECODE_END;
	}
}
LBR_DECODE_NOKPROBE(lbr_decode_entry);

/**
 * lbr_probe_entries - count the entries the probe path itself made
 * @br: branches, oldest first
 * @nr: number of branches
 * @ret_site: where the traced function returned to (the kretprobe
 *	trampoline), so the branch landing there is the function's return
 * @found: set when that branch is among the entries
 *
 * Everything newer than the function's return was made by the probe
 * machinery.  With return thunks the return is two branches, the jump to
 * __x86_return_thunk and the thunk's RET; the RET is the one that lands on
 * @ret_site.  If no entry lands there, all @nr count and @found is false.
 */
notrace unsigned int lbr_probe_entries(const struct lbr_snap_branch *br,
				       unsigned int nr, u64 ret_site,
				       bool *found)
{
	unsigned int i;

	for (i = nr; i > 0; i--) {
		if (br[i - 1].to == ret_site) {
			*found = true;
			return nr - i;
		}
	}
	*found = false;
	return nr;
}
LBR_DECODE_NOKPROBE(lbr_probe_entries);

/**
 * lbr_return_entries - lbr_probe_entries(), past an interrupt's return
 * @br: branches, oldest first
 * @nr: number of branches
 * @ret_site: where the traced function returned to
 * @event_return: whether the branch at a source address is the return of
 *	an interrupt or exception (IRET, ERETS)
 * @found: set when the function's return is among the entries
 *
 * An interrupt taken at @ret_site, after the return and before the hook
 * froze LBR, returns there too: its IRET is then the newest landing.  Its
 * delivery leaves @ret_site (the instruction there is not a branch), and
 * the function's return is the entry just before that delivery.  Walking
 * back, each older IRET onto @ret_site is a nested interrupt's, paired
 * with the next delivery from @ret_site, and a RET onto @ret_site between
 * them a nested call's: neither is taken.  An interrupt delivered just as
 * an earlier one returned to @ret_site chains to that one's delivery.  An
 * IRET whose delivery is not there (pushed out; LBR frozen by a PMI before
 * it) leaves the return unknown.  Only the reader calls this (no
 * notrace, unlike the capture path's helpers above).
 *
 * Return: the entries newer than the function's return, or @nr.
 */
unsigned int lbr_return_entries(const struct lbr_snap_branch *br,
				unsigned int nr, u64 ret_site,
				bool (*event_return)(u64 from), bool *found)
{
	unsigned int after, i, depth = 1;

	after = lbr_probe_entries(br, nr, ret_site, found);
	if (!*found)
		return nr;
	i = nr - after - 1;
	if (!event_return(br[i].from))
		return after;
	*found = false;
	while (i--) {
		if (br[i].to == ret_site) {
			/* A nested interrupt's IRET, or a nested call's RET. */
			depth += event_return(br[i].from);
			continue;
		}
		if (br[i].from != ret_site || --depth)
			continue;
		/* br[i] delivered the outermost IRET: br[i - 1] returned. */
		if (!i || br[i - 1].to != ret_site)
			return nr;
		if (event_return(br[i - 1].from)) {
			/* Delivered as an earlier interrupt returned. */
			depth = 1;
			i--;
			continue;
		}
		*found = true;
		return nr - i;
	}
	return nr;
}
