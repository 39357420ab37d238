// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/lbr_decode.c and of the module's LBR read loop,
 * src/lbr_read.c, built for user space:
 *
 *   gcc -O2 -Wall -Wextra -Werror -I include -I src \
 *	src/lbr_decode.c src/lbr_read.c tests/unit/decode_test.c
 *
 * (tests/unit/decode.sh does that in a scratch directory and runs it.)
 *
 * Every expected value below is written out by hand from what Linux 6.1
 * does with the same MSR image: intel_pmu_lbr_read_32(),
 * intel_pmu_lbr_read_64() and intel_pmu_store_lbr() in
 * arch/x86/events/intel/lbr.c with the x86_pmu.lbr_* bits that
 * intel_pmu_lbr_init() sets per format, and amd_pmu_lbr_read() in
 * arch/x86/events/amd/lbr.c.  Nothing is computed with the code under
 * test.  Where lbr_snap goes its own way (it stops at the first empty
 * entry, maps Arch LBR types to its ABI) the expectation follows
 * include/lbr_snap.h and src/lbr_read.c.
 *
 * Output is TAP; the exit status is 1 if any test failed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbr_decode.h"
#include "lbr_read.h"
#include "lbr_cpu.h"
#include "lbr_own.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)	__attribute__((format(printf, a, b)))

/* Flag shorthands for the tables. */
#define MIS	LBR_SNAP_BR_MISPRED
#define PRED	LBR_SNAP_BR_PREDICTED
#define TX	LBR_SNAP_BR_IN_TX
#define ABRT	LBR_SNAP_BR_ABORT
#define CYC	LBR_SNAP_BR_CYCLES
#define SPEC	LBR_SNAP_BR_SPEC
#define WRONG	LBR_SNAP_BR_WRONG_PATH

#define OK	LBR_DECODE_OK
#define SKIP	LBR_DECODE_SKIP
#define END	LBR_DECODE_END

static unsigned int nr_tests, nr_pass, nr_fail;

/* Reasons the current test failed, printed as TAP diagnostics. */
static char why[4096];
static size_t why_len;

static __printf(1, 2) void diag(const char *fmt, ...)
{
	va_list args;
	int n;

	if (why_len >= sizeof(why))
		return;
	va_start(args, fmt);
	n = vsnprintf(why + why_len, sizeof(why) - why_len, fmt, args);
	va_end(args);
	if (n > 0)
		why_len += (size_t)n;
}

static __printf(1, 2) void result(const char *fmt, ...)
{
	va_list args;
	char *line, *next;

	nr_tests++;
	if (why_len)
		nr_fail++;
	else
		nr_pass++;
	printf("%s %u - ", why_len ? "not ok" : "ok", nr_tests);
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
	putchar('\n');
	for (line = why; why_len && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		printf("#   %s\n", line);
	}
	why[0] = '\0';
	why_len = 0;
}

static const char *res_name(enum lbr_decode_result res)
{
	switch (res) {
	case LBR_DECODE_OK:
		return "OK";
	case LBR_DECODE_SKIP:
		return "SKIP";
	case LBR_DECODE_END:
		return "END";
	}
	return "?";
}

static void expect_u64(const char *what, u64 want, u64 got)
{
	if (want != got)
		diag("%s: expected 0x%016llx, got 0x%016llx\n", what,
		     (unsigned long long)want, (unsigned long long)got);
}

/* Compare every field of a decoded branch. */
static void expect_branch(const char *what, const struct lbr_snap_branch *want,
			  const struct lbr_snap_branch *got)
{
	char name[64];

#define FIELD(f)							\
	do {								\
		snprintf(name, sizeof(name), "%s" #f, what);		\
		expect_u64(name, want->f, got->f);			\
	} while (0)
	FIELD(from);
	FIELD(to);
	FIELD(flags);
	FIELD(cycles);
	FIELD(type);
	FIELD(reserved);
#undef FIELD
}

/*
 * Decode @raw with @fmt into a struct full of 0xaa bytes, so that a field
 * the decoder forgets to write shows up, and check result and branch.
 */
static void check_decode(const struct lbr_decode_fmt *fmt,
			 const struct lbr_raw_entry *raw,
			 enum lbr_decode_result want_res,
			 const struct lbr_snap_branch *want)
{
	struct lbr_snap_branch got;
	enum lbr_decode_result res;

	memset(&got, 0xaa, sizeof(got));
	res = lbr_decode_entry(fmt, raw, &got);
	if (res != want_res)
		diag("result: expected %s, got %s\n", res_name(want_res),
		     res_name(res));
	else if (res == LBR_DECODE_OK)
		expect_branch("", want, &got);
	if (why_len)
		diag("raw: from 0x%016llx to 0x%016llx info 0x%016llx\n",
		     (unsigned long long)raw->from,
		     (unsigned long long)raw->to,
		     (unsigned long long)raw->info);
}

/* ------------------------------------------------------------- legacy */

struct legacy_case {
	const char *name;
	u8 format;
	u8 tsx;
	struct lbr_raw_entry raw;
	enum lbr_decode_result res;
	u64 from;
	u64 to;
	u32 flags;
	u16 cycles;
};

static const struct legacy_case legacy_cases[] = {
	/* LBR_FORMAT_32: one MSR, FROM in bits 31:0, TO in 63:32. */
	{ "fmt 0 (32): FROM low half, TO high half, zero-extended",
	  LBR_FMT_32, 0, { 0xc0123456c0abcdefULL, 0, 0 },
	  OK, 0xc0abcdefULL, 0xc0123456ULL, 0, 0 },
	{ "fmt 0 (32): raw.to is not an MSR of this format, ignored",
	  LBR_FMT_32, 0, { 0x0804900008048000ULL, 0xdeadbeefdeadbeefULL, 0 },
	  OK, 0x08048000ULL, 0x08049000ULL, 0, 0 },
	{ "fmt 0 (32): TO half 0 is still a branch",
	  LBR_FMT_32, 0, { 0x0000000008048000ULL, 0, 0 },
	  OK, 0x08048000ULL, 0, 0, 0 },
	{ "fmt 0 (32): bit 31 and 63 are address bits, not flags",
	  LBR_FMT_32, 1, { 0x80000010ffff0000ULL, 0, 0xffffffffffffffffULL },
	  OK, 0xffff0000ULL, 0x80000010ULL, 0, 0 },

	/* LBR_FORMAT_LIP / EIP: addresses only, as read. */
	{ "fmt 1 (LIP): kernel addresses as read, bit 63 no mispred",
	  LBR_FMT_LIP, 0, { 0xffffffff81000010ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffffffff81000010ULL, 0xffffffff81000100ULL, 0, 0 },
	{ "fmt 1 (LIP): user addresses stay positive",
	  LBR_FMT_LIP, 1, { 0x0000000000401000ULL, 0x00007fffffffe000ULL, 0 },
	  OK, 0x0000000000401000ULL, 0x00007fffffffe000ULL, 0, 0 },
	{ "fmt 2 (EIP): kernel addresses as read, bit 63 no mispred",
	  LBR_FMT_EIP, 0, { 0xffff800000001234ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffff800000001234ULL, 0xffffffff81000100ULL, 0, 0 },
	{ "fmt 2 (EIP): user addresses stay positive, info ignored",
	  LBR_FMT_EIP, 1, { 0x0000000000401000ULL, 0x0000000000402000ULL,
			    0xf00000000000ffffULL },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL, 0, 0 },

	/* LBR_FORMAT_EIP_FLAGS: FROM bit 63 mispred, 63-bit sign extension. */
	{ "fmt 3 (EIP_FLAGS): mispredicted kernel FROM",
	  LBR_FMT_EIP_FLAGS, 0, { 0xffff800000001234ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffff800000001234ULL, 0xffffffff81000100ULL, MIS, 0 },
	{ "fmt 3 (EIP_FLAGS): predicted kernel FROM sign-extended from bit 62",
	  LBR_FMT_EIP_FLAGS, 0, { 0x7fff800000001234ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffff800000001234ULL, 0xffffffff81000100ULL, PRED, 0 },
	{ "fmt 3 (EIP_FLAGS): mispredicted user FROM stays positive",
	  LBR_FMT_EIP_FLAGS, 0, { 0x8000000000401000ULL, 0x0000000000402000ULL, 0 },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL, MIS, 0 },
	{ "fmt 3 (EIP_FLAGS): predicted user, bits 62:61 are address bits",
	  LBR_FMT_EIP_FLAGS, 1, { 0x0000000000401000ULL, 0x0000000000402000ULL, 0 },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL, PRED, 0 },
	{ "fmt 3 (EIP_FLAGS): 57-bit kernel FROM",
	  LBR_FMT_EIP_FLAGS, 0, { 0x7f00000000000000ULL, 0xff00000000000040ULL, 0 },
	  OK, 0xff00000000000000ULL, 0xff00000000000040ULL, PRED, 0 },

	/* LBR_FORMAT_EIP_FLAGS2: bits 63/62/61 mispred/in_tx/abort. */
	{ "fmt 4 (EIP_FLAGS2, TSX): mispred+in_tx+abort, kernel FROM",
	  LBR_FMT_EIP_FLAGS2, 1, { 0xffff800000001234ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffff800000001234ULL, 0xffffffff81000100ULL, MIS | TX | ABRT, 0 },
	{ "fmt 4 (EIP_FLAGS2, TSX): no flags, FROM sign-extended from bit 60",
	  LBR_FMT_EIP_FLAGS2, 1, { 0x1fff800000001234ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffff800000001234ULL, 0xffffffff81000100ULL, PRED, 0 },
	{ "fmt 4 (EIP_FLAGS2, TSX): in_tx only, user FROM",
	  LBR_FMT_EIP_FLAGS2, 1, { 0x4000000000401000ULL, 0x0000000000402000ULL, 0 },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL, PRED | TX, 0 },
	{ "fmt 4 (EIP_FLAGS2, TSX): abort only, user FROM",
	  LBR_FMT_EIP_FLAGS2, 1, { 0x2000000000401000ULL, 0x0000000000402000ULL, 0 },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL, PRED | ABRT, 0 },
	{ "fmt 4 (EIP_FLAGS2, TSX): mispred only, user FROM",
	  LBR_FMT_EIP_FLAGS2, 1, { 0x8000000000401000ULL, 0x0000000000402000ULL, 0 },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL, MIS, 0 },
	{ "fmt 4 (EIP_FLAGS2, no TSX): hw FROM bits 62:61 = 0, mispred kernel",
	  LBR_FMT_EIP_FLAGS2, 0, { 0x9fff800000001234ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffff800000001234ULL, 0xffffffff81000100ULL, MIS, 0 },
	{ "fmt 4 (EIP_FLAGS2, no TSX): hw FROM bits 62:61 = 0, predicted kernel",
	  LBR_FMT_EIP_FLAGS2, 0, { 0x1fff800000001234ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffff800000001234ULL, 0xffffffff81000100ULL, PRED, 0 },
	{ "fmt 4 (EIP_FLAGS2, no TSX): bits 62:61 set are not in_tx/abort",
	  LBR_FMT_EIP_FLAGS2, 0, { 0x6000000000401000ULL, 0x0000000000402000ULL, 0 },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL, PRED, 0 },
	{ "fmt 4 (EIP_FLAGS2, no TSX): all flag bits set, kernel FROM",
	  LBR_FMT_EIP_FLAGS2, 0, { 0xffffffff81000010ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffffffff81000010ULL, 0xffffffff81000100ULL, MIS, 0 },
	{ "fmt 4 (EIP_FLAGS2, no TSX): 57-bit kernel FROM",
	  LBR_FMT_EIP_FLAGS2, 0, { 0x1f00000000001234ULL, 0xff00000000000040ULL, 0 },
	  OK, 0xff00000000001234ULL, 0xff00000000000040ULL, PRED, 0 },
	{ "fmt 4 (EIP_FLAGS2, TSX): 57-bit kernel FROM, mispred",
	  LBR_FMT_EIP_FLAGS2, 1, { 0x9f00000000001234ULL, 0xff00000000000040ULL, 0 },
	  OK, 0xff00000000001234ULL, 0xff00000000000040ULL, MIS, 0 },

	/* LBR_FORMAT_INFO: flags and cycles in LBR_INFO, TSX bits too. */
	{ "fmt 5 (INFO): mispred+in_tx+abort+cycles from LBR_INFO",
	  LBR_FMT_INFO, 1, { 0xffffffff81000010ULL, 0xffffffff81000100ULL,
			     0xe000000000001234ULL },
	  OK, 0xffffffff81000010ULL, 0xffffffff81000100ULL,
	  MIS | TX | ABRT | CYC, 0x1234 },
	{ "fmt 5 (INFO): info 0 is predicted, 0 cycles (still valid)",
	  LBR_FMT_INFO, 1, { 0xffffffff81000010ULL, 0xffffffff81000100ULL, 0 },
	  OK, 0xffffffff81000010ULL, 0xffffffff81000100ULL, PRED | CYC, 0 },
	{ "fmt 5 (INFO): FROM bit 63 is address, type bits ignored",
	  LBR_FMT_INFO, 1, { 0xffff800000001234ULL, 0x0000000000401000ULL,
			     0x140000000000ffffULL },
	  OK, 0xffff800000001234ULL, 0x0000000000401000ULL, PRED | CYC, 0xffff },
	{ "fmt 5 (INFO): in_tx/abort whatever fmt.tsx (lbr_has_tsx)",
	  LBR_FMT_INFO, 0, { 0x0000000000401000ULL, 0x0000000000402000ULL,
			     0x6000000000000007ULL },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL,
	  PRED | TX | ABRT | CYC, 7 },
	{ "fmt 5 (INFO): 57-bit addresses as read",
	  LBR_FMT_INFO, 1, { 0xff00000000001234ULL, 0xff00000000000040ULL,
			     0x8000000000000010ULL },
	  OK, 0xff00000000001234ULL, 0xff00000000000040ULL, MIS | CYC, 0x10 },

	/* LBR_FORMAT_TIME: FROM bit 63 mispred, TO[63:48] cycles. */
	{ "fmt 6 (TIME): mispred kernel FROM, cycles in TO[63:48]",
	  LBR_FMT_TIME, 0, { 0xffff800000001234ULL, 0x0abcffff81000100ULL, 0 },
	  OK, 0xffff800000001234ULL, 0xffffffff81000100ULL, MIS | CYC, 0x0abc },
	{ "fmt 6 (TIME): predicted user, cycles 0xffff, TO stays positive",
	  LBR_FMT_TIME, 0, { 0x0000000000401000ULL, 0xffff000000402000ULL, 0 },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL, PRED | CYC, 0xffff },
	{ "fmt 6 (TIME): TO sign-extended from bit 47, FROM from bit 62",
	  LBR_FMT_TIME, 1, { 0x7fff800000000000ULL, 0x0000800000000000ULL,
			     0xe00000000000ffffULL },
	  OK, 0xffff800000000000ULL, 0xffff800000000000ULL, PRED | CYC, 0 },

	/* LBR_FORMAT_INFO2: like INFO without TSX bits. */
	{ "fmt 7 (INFO2): mispred+cycles, in_tx/abort bits ignored",
	  LBR_FMT_INFO2, 1, { 0xffffffff81000010ULL, 0xffffffff81000100ULL,
			      0xe000000000000042ULL },
	  OK, 0xffffffff81000010ULL, 0xffffffff81000100ULL, MIS | CYC, 0x42 },
	{ "fmt 7 (INFO2): info 0 is predicted, 0 cycles",
	  LBR_FMT_INFO2, 0, { 0x0000000000401000ULL, 0x0000000000402000ULL, 0 },
	  OK, 0x0000000000401000ULL, 0x0000000000402000ULL, PRED | CYC, 0 },
	{ "fmt 7 (INFO2): FROM bit 63 is address, cycles 0xffff",
	  LBR_FMT_INFO2, 0, { 0xffff800000001234ULL, 0xffff800000002000ULL,
			      0x1000ffffffffffffULL },
	  OK, 0xffff800000001234ULL, 0xffff800000002000ULL, PRED | CYC, 0xffff },

	/* Only FROM = TO = 0 is empty; FROM = 0 alone is a branch. */
	{ "fmt 0 (32): FROM half 0, TO half set is a branch",
	  LBR_FMT_32, 0, { 0x0804800000000000ULL, 0, 0 },
	  OK, 0, 0x08048000ULL, 0, 0 },
	{ "fmt 2 (EIP): FROM 0, TO set is a branch",
	  LBR_FMT_EIP, 0, { 0, 0x0000000000402000ULL, 0 },
	  OK, 0, 0x0000000000402000ULL, 0, 0 },
	{ "fmt 5 (INFO): FROM 0, TO set is a branch",
	  LBR_FMT_INFO, 1, { 0, 0xffffffff81000100ULL, 0x8000000000000003ULL },
	  OK, 0, 0xffffffff81000100ULL, MIS | CYC, 3 },
};

static void test_legacy(void)
{
	struct lbr_decode_fmt fmt = { .backend = LBR_SNAP_BACKEND_INTEL };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(legacy_cases); i++) {
		const struct legacy_case *c = &legacy_cases[i];
		struct lbr_snap_branch want = {
			.from = c->from,
			.to = c->to,
			.flags = c->flags,
			.cycles = c->cycles,
			.type = LBR_SNAP_BT_UNKNOWN,
		};

		fmt.format = c->format;
		fmt.tsx = c->tsx;
		check_decode(&fmt, &c->raw, c->res, &want);
		result("legacy %s", c->name);
	}
}

/*
 * Which formats report mispredictions and cycles (intel_pmu_lbr_init():
 * lbr_from_flags or lbr_has_info, lbr_to_cycles or lbr_has_info).
 */
static const struct {
	u8 format;
	bool mispred;
	bool cycles;
	bool has_info;
} legacy_caps[] = {
	{ LBR_FMT_32,		false,	false,	false },
	{ LBR_FMT_LIP,		false,	false,	false },
	{ LBR_FMT_EIP,		false,	false,	false },
	{ LBR_FMT_EIP_FLAGS,	true,	false,	false },
	{ LBR_FMT_EIP_FLAGS2,	true,	false,	false },
	{ LBR_FMT_INFO,		true,	true,	true },
	{ LBR_FMT_TIME,		true,	true,	false },
	{ LBR_FMT_INFO2,	true,	true,	true },
};

/* Per format: PREDICTED and CYCLES exactly when the format has them. */
static void test_legacy_flags_per_format(void)
{
	struct lbr_decode_fmt fmt = { .backend = LBR_SNAP_BACKEND_INTEL };
	/* A user branch, nothing mispredicted, no TSX, no cycles. */
	struct lbr_raw_entry raw = { 0x401000, 0x402000, 0 };
	struct lbr_snap_branch got;
	unsigned int i, t;
	u32 want;

	for (i = 0; i < ARRAY_SIZE(legacy_caps); i++) {
		for (t = 0; t <= 1; t++) {
			fmt.format = legacy_caps[i].format;
			fmt.tsx = t;
			raw.from = fmt.format == LBR_FMT_32 ?
				   0x0040200000401000ULL : 0x401000;
			want = (legacy_caps[i].mispred ? PRED : 0) |
			       (legacy_caps[i].cycles ? CYC : 0);
			memset(&got, 0xaa, sizeof(got));
			if (lbr_decode_entry(&fmt, &raw, &got) != OK)
				diag("result is not OK\n");
			else
				expect_u64("flags", want, got.flags);
			result("legacy fmt %u tsx %u: predicted %s, cycles %s",
			       fmt.format, t,
			       legacy_caps[i].mispred ? "set" : "clear",
			       legacy_caps[i].cycles ? "set" : "clear");
		}
	}
}

static void test_has_info(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(legacy_caps); i++) {
		expect_u64("lbr_format_has_info", legacy_caps[i].has_info,
			   lbr_format_has_info(legacy_caps[i].format));
		result("lbr_format_has_info(%u) is %s", legacy_caps[i].format,
		       legacy_caps[i].has_info ? "true" : "false");
	}
	expect_u64("lbr_format_has_info", 0, lbr_format_has_info(8));
	expect_u64("lbr_format_has_info", 0, lbr_format_has_info(63));
	result("lbr_format_has_info() of unknown formats 8, 63 is false");
}

/* An empty legacy entry (never written: FROM = TO = 0) ends the stack. */
static void test_legacy_empty(void)
{
	struct lbr_decode_fmt fmt = { .backend = LBR_SNAP_BACKEND_INTEL };
	struct lbr_raw_entry raw = { 0, 0, 0xe000000000001234ULL };
	unsigned int f;

	for (f = 0; f <= LBR_FMT_MAX_KNOWN; f++) {
		fmt.format = f;
		fmt.tsx = f & 1;
		/* LBR_FMT_32 has no TO MSR: whatever raw.to holds is stale. */
		raw.to = f == LBR_FMT_32 ? 0xffffffff81000000ULL : 0;
		check_decode(&fmt, &raw, END, NULL);
		result("legacy fmt %u: FROM = TO = 0 is LBR_DECODE_END", f);
	}
}

/* ---------------------------------------------------------- Arch LBR */

struct arch_case {
	const char *name;
	struct lbr_raw_entry raw;
	enum lbr_decode_result res;
	u32 flags;
	u16 cycles;
	u8 type;
};

#define KFROM	0xffffffff81000010ULL
#define KTO	0xffffffff81000100ULL

static const struct arch_case arch_cases[] = {
	{ "info 0: JCC, predicted, no cycles",
	  { KFROM, KTO, 0 }, OK, PRED, 0, LBR_SNAP_BT_JCC },
	{ "cycles 0x1234 without CYC_CNT_VALID are not reported",
	  { KFROM, KTO, 0x0000000000001234ULL }, OK, PRED, 0, LBR_SNAP_BT_JCC },
	{ "cycles 0x1234 with CYC_CNT_VALID",
	  { KFROM, KTO, 0x1000000000001234ULL }, OK, PRED | CYC, 0x1234,
	  LBR_SNAP_BT_JCC },
	{ "CYC_CNT_VALID with 0 cycles",
	  { KFROM, KTO, 0x1000000000000000ULL }, OK, PRED | CYC, 0,
	  LBR_SNAP_BT_JCC },
	{ "mispred",
	  { KFROM, KTO, 0x8000000000000000ULL }, OK, MIS, 0, LBR_SNAP_BT_JCC },
	{ "in_tx",
	  { KFROM, KTO, 0x4000000000000000ULL }, OK, PRED | TX, 0,
	  LBR_SNAP_BT_JCC },
	{ "abort",
	  { KFROM, KTO, 0x2000000000000000ULL }, OK, PRED | ABRT, 0,
	  LBR_SNAP_BT_JCC },
	{ "everything: mispred, tx, abort, cycles 0xffff, RET",
	  { KFROM, KTO, 0xf50000000000ffffULL }, OK, MIS | TX | ABRT | CYC,
	  0xffff, LBR_SNAP_BT_RET },
	{ "bits 55:16 are ignored",
	  { KFROM, KTO, 0x00ffffffffff0000ULL }, OK, PRED, 0, LBR_SNAP_BT_JCC },
	{ "TO = 0 is still a branch",
	  { KFROM, 0, 0x0400000000000000ULL }, OK, PRED, 0, LBR_SNAP_BT_CALL },
	{ "FROM = 0 ends the stack",
	  { 0, KTO, 0xf50000000000ffffULL }, END, 0, 0, 0 },
	{ "FROM = TO = INFO = 0 ends the stack",
	  { 0, 0, 0 }, END, 0, 0, 0 },
};

static void test_arch(void)
{
	struct lbr_decode_fmt fmt = { .backend = LBR_SNAP_BACKEND_ARCH };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(arch_cases); i++) {
		const struct arch_case *c = &arch_cases[i];
		struct lbr_snap_branch want = {
			.from = c->raw.from,
			.to = c->raw.to,
			.flags = c->flags,
			.cycles = c->cycles,
			.type = c->type,
		};

		check_decode(&fmt, &c->raw, c->res, &want);
		result("arch %s", c->name);
	}
}

/* ARCH_LBR_INFO[59:56] to enum lbr_snap_branch_type. */
static const u8 arch_types[16] = {
	LBR_SNAP_BT_JCC,	/* 0 JCC */
	LBR_SNAP_BT_IND_JMP,	/* 1 NEAR_IND_JMP */
	LBR_SNAP_BT_JMP,	/* 2 NEAR_REL_JMP */
	LBR_SNAP_BT_IND_CALL,	/* 3 NEAR_IND_CALL */
	LBR_SNAP_BT_CALL,	/* 4 NEAR_REL_CALL */
	LBR_SNAP_BT_RET,	/* 5 NEAR_RET */
	LBR_SNAP_BT_UNKNOWN,	/* 6 reserved */
	LBR_SNAP_BT_UNKNOWN,	/* 7 reserved */
	LBR_SNAP_BT_FAR, LBR_SNAP_BT_FAR, LBR_SNAP_BT_FAR, LBR_SNAP_BT_FAR,
	LBR_SNAP_BT_FAR, LBR_SNAP_BT_FAR, LBR_SNAP_BT_FAR, LBR_SNAP_BT_FAR,
};

static const char *const type_names[] = {
	[LBR_SNAP_BT_UNKNOWN] = "UNKNOWN",
	[LBR_SNAP_BT_JCC] = "JCC",
	[LBR_SNAP_BT_JMP] = "JMP",
	[LBR_SNAP_BT_IND_JMP] = "IND_JMP",
	[LBR_SNAP_BT_CALL] = "CALL",
	[LBR_SNAP_BT_IND_CALL] = "IND_CALL",
	[LBR_SNAP_BT_RET] = "RET",
	[LBR_SNAP_BT_FAR] = "FAR",
};

static void test_arch_types(void)
{
	struct lbr_decode_fmt fmt = { .backend = LBR_SNAP_BACKEND_ARCH };
	unsigned int t;

	for (t = 0; t < ARRAY_SIZE(arch_types); t++) {
		/* 57-bit addresses pass through untouched. */
		struct lbr_raw_entry raw = {
			0xff00000000001234ULL, 0x0000000000401000ULL,
			(u64)t << 56,
		};
		struct lbr_snap_branch want = {
			.from = 0xff00000000001234ULL,
			.to = 0x0000000000401000ULL,
			.flags = PRED,
			.type = arch_types[t],
		};

		check_decode(&fmt, &raw, OK, &want);
		result("arch branch type %u is %s", t, type_names[arch_types[t]]);
	}
}

/* ---------------------------------------------------------------- AMD */

struct amd_case {
	const char *name;
	u8 virt_bits;
	struct lbr_raw_entry raw;
	enum lbr_decode_result res;
	u64 from;
	u64 to;
	u32 flags;
};

#define V	0x8000000000000000ULL	/* TO valid */
#define S	0x4000000000000000ULL	/* TO spec */
#define R	0x2000000000000000ULL	/* TO reserved (erratum 1452) */
#define M	0x8000000000000000ULL	/* FROM mispredict */

static const struct amd_case amd_cases[] = {
	{ "valid, not spec: plain branch", 48,
	  { 0x0000000000401000ULL, V | 0x0000000000402000ULL, 0 },
	  OK, 0x401000, 0x402000, PRED },
	{ "valid and spec: SPEC", 48,
	  { 0x0000000000401000ULL, V | S | 0x0000000000402000ULL, 0 },
	  OK, 0x401000, 0x402000, PRED | SPEC },
	{ "spec, not valid: a wrong path's, skipped", 48,
	  { 0x0000000000401000ULL, S | 0x0000000000402000ULL, 0 },
	  SKIP, 0, 0, 0 },
	{ "FROM bit 63: mispredicted", 48,
	  { M | 0x0000000000401000ULL, V | 0x0000000000402000ULL, 0 },
	  OK, 0x401000, 0x402000, MIS },
	{ "mispredicted on the wrong path: skipped", 48,
	  { M | 0x0000000000401000ULL, S | 0x0000000000402000ULL, 0 },
	  SKIP, 0, 0, 0 },
	{ "48-bit kernel ips sign-extended from bit 47", 48,
	  { 0x0000ffff81000010ULL, V | 0x0000ffff81000100ULL, 0 },
	  OK, 0xffffffff81000010ULL, 0xffffffff81000100ULL, PRED },
	{ "sign bits 62:58 / 60:58 ignored, ip only", 48,
	  { 0x7c00ffff81000010ULL, V | 0x1c00000000402000ULL, 0 },
	  OK, 0xffffffff81000010ULL, 0x0000000000402000ULL, PRED },
	{ "canonical kernel FROM with mispredict", 48,
	  { 0xffff800000001234ULL, V | 0x1fff800000000000ULL, 0 },
	  OK, 0xffff800000001234ULL, 0xffff800000000000ULL, MIS },
	{ "57-bit kernel ips sign-extended from bit 56", 57,
	  { 0x0100000000001234ULL, V | 0x01ffffff81000100ULL, 0 },
	  OK, 0xff00000000001234ULL, 0xffffffff81000100ULL, PRED },
	{ "virt_bits 48: bit 56 is above the address", 48,
	  { 0x0100000000001234ULL, V | 0x0100000000002000ULL, 0 },
	  OK, 0x1234, 0x2000, PRED },
	{ "57-bit user ips stay positive", 57,
	  { 0x00007fffffffe000ULL, V | 0x00ff000000402000ULL, 0 },
	  OK, 0x00007fffffffe000ULL, 0x00ff000000402000ULL, PRED },
	{ "reserved bit 61 is SKIP", 48,
	  { 0x0000000000401000ULL, V | R | 0x0000000000402000ULL, 0 },
	  SKIP, 0, 0, 0 },
	{ "reserved bit 61 with spec is SKIP", 57,
	  { 0x0000000000401000ULL, S | R | 0x0000000000402000ULL, 0 },
	  SKIP, 0, 0, 0 },
	{ "not valid, not spec is SKIP (a hole, as perf skips it)", 48,
	  { M | 0x0000000000401000ULL, 0x0000000000402000ULL, 0 },
	  SKIP, 0, 0, 0 },
	{ "not valid, not spec, reserved is SKIP", 48,
	  { 0x0000000000401000ULL, R | 0x0000000000402000ULL, 0 },
	  SKIP, 0, 0, 0 },
	{ "all zero is SKIP", 57, { 0, 0, 0 }, SKIP, 0, 0, 0 },
};

static void test_amd(void)
{
	struct lbr_decode_fmt fmt = { .backend = LBR_SNAP_BACKEND_AMD };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(amd_cases); i++) {
		const struct amd_case *c = &amd_cases[i];
		struct lbr_snap_branch want = {
			.from = c->from,
			.to = c->to,
			.flags = c->flags,
			.type = LBR_SNAP_BT_UNKNOWN,
		};

		fmt.virt_bits = c->virt_bits;
		check_decode(&fmt, &c->raw, c->res, &want);
		result("amd (virt_bits %u) %s", c->virt_bits, c->name);
	}
}

/*
 * Which LBR_INFO MSR a legacy format reads on a model: the format decides,
 * as intel_pmu_lbr_init() sets lbr_has_info from it alone, and
 * intel_pmu_lbr_init_skl() names MSR_LBR_INFO_0 (0xdc0) for Goldmont,
 * Goldmont Plus and Tremont whatever their format.  Goldmont's format 6
 * (cycles in TO) reads none: the table's LBR_INFO_0 must not refuse it.
 */
static void test_format_info_msr(void)
{
	static const struct {
		unsigned int format;
		u32 model_info;
		long want;
		const char *what;
	} c[] = {
		{ LBR_FMT_TIME, 0xdc0, 0, "Goldmont: format 6, LBR_INFO_0 in the table: none read" },
		{ LBR_FMT_INFO, 0xdc0, 0xdc0, "Skylake, Goldmont Plus: format 5 reads LBR_INFO_0" },
		{ LBR_FMT_INFO2, 0xdc0, 0xdc0, "format 7 reads LBR_INFO_0" },
		{ LBR_FMT_EIP_FLAGS2, 0, 0, "Haswell: format 4, no LBR_INFO" },
		{ LBR_FMT_INFO, 0, -1, "format 5 on a model without LBR_INFO: refused" },
	};
	unsigned int i;
	long got;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		got = lbr_format_info_msr(c[i].format, c[i].model_info);
		if (got != c[i].want)
			diag("got %#lx, want %#lx", got, c[i].want);
		result("format info MSR: %s", c[i].what);
	}
}

static void test_backend_none(void)
{
	struct lbr_decode_fmt fmt = { .backend = LBR_SNAP_BACKEND_NONE };
	struct lbr_raw_entry raw = { KFROM, KTO, 0 };

	check_decode(&fmt, &raw, END, NULL);
	result("backend none decodes nothing (LBR_DECODE_END)");
}

/* ------------------------------------------------------ legacy index */

static const struct {
	u64 tos;
	unsigned int i;
	unsigned int depth;
	unsigned int idx;
} index_cases[] = {
	{ 0, 0, 4, 0 }, { 0, 1, 4, 3 }, { 0, 3, 4, 1 }, { 3, 0, 4, 3 },
	{ 2, 3, 4, 3 }, { 1, 1, 4, 0 }, { 1, 2, 4, 3 },
	{ 7, 7, 8, 0 }, { 0, 1, 8, 7 }, { 5, 6, 8, 7 }, { 5, 5, 8, 0 },
	{ 6, 7, 8, 7 },
	{ 15, 0, 16, 15 }, { 0, 15, 16, 1 }, { 4, 5, 16, 15 }, { 4, 4, 16, 0 },
	{ 9, 12, 16, 13 },
	{ 3, 0, 32, 3 }, { 3, 3, 32, 0 }, { 3, 4, 32, 31 }, { 3, 31, 32, 4 },
	{ 31, 31, 32, 0 }, { 0, 1, 32, 31 }, { 16, 17, 32, 31 },
	/* TOS bits above the depth do not matter. */
	{ 0x23, 0, 32, 3 }, { 0x23, 4, 32, 31 }, { 0xfffffffffffffff1ULL, 2, 16, 15 },
};

static void test_legacy_index(void)
{
	unsigned int k, got;

	for (k = 0; k < ARRAY_SIZE(index_cases); k++) {
		got = lbr_legacy_index(index_cases[k].tos, index_cases[k].i,
				       index_cases[k].depth);
		expect_u64("index", index_cases[k].idx, got);
		result("lbr_legacy_index(tos 0x%llx, i %u, depth %u) = %u",
		       (unsigned long long)index_cases[k].tos, index_cases[k].i,
		       index_cases[k].depth, index_cases[k].idx);
	}
}

/* ----------------------------------------------- whole-stack reading */

/*
 * Whole stacks are read by the module's own loops, lbr_hw_read_raw() and
 * lbr_raw_decode() in src/lbr_read.c, built into this test.  It takes the hardware from
 * lbr_hw, set below as lbr_msr.c's probes set it, and reads the MSRs with
 * lbr_rdmsr(), here a lookup in a simulated MSR file: a read of an MSR the
 * simulated CPU does not have (it would fault) fails the test, and the
 * reads are counted.  MSR numbers are written out from the Intel SDM vol. 4
 * and the AMD APM vol. 2 (msr-index.h in Linux), not taken from lbr_msr.c.
 */
#define MSR_LBR_TOS		0x1c9
#define MSR_LBR_CORE_FROM	0x40	/* Core2, Atom: 4 or 8 deep */
#define MSR_LBR_CORE_TO		0x60
#define MSR_LBR_NHM_FROM	0x680	/* Nehalem and later: 16 or 32 deep */
#define MSR_LBR_NHM_TO		0x6c0
#define MSR_LBR_INFO_0		0xdc0	/* Skylake and later */
#define MSR_ARCH_LBR_FROM_0	0x1500
#define MSR_ARCH_LBR_TO_0	0x1600
#define MSR_ARCH_LBR_INFO_0	0x1200
/* AMD LbrExtV2: entry n is FROM at 0xc0010300 + 2n, TO at 0xc0010301 + 2n. */
#define MSR_AMD_SAMP_BR_FROM	0xc0010300

#define SIM_DEPTH_MAX		64	/* LBR_SNAP_MAX_ENTRIES */

struct lbr_hw lbr_hw;

/* The simulated MSR file of one CPU, and the reads made of it. */
#define SIM_MSRS		256
static struct {
	u32 msr;
	u64 val;
} sim_msr[SIM_MSRS];
static unsigned int sim_nr_msrs;
static u32 sim_log[SIM_MSRS];
static unsigned int sim_nr_reads;

static void sim_set(u32 msr, u64 val)
{
	if (sim_nr_msrs == SIM_MSRS) {
		fprintf(stderr, "decode_test: more than %u simulated MSRs\n",
			SIM_MSRS);
		exit(2);
	}
	sim_msr[sim_nr_msrs].msr = msr;
	sim_msr[sim_nr_msrs].val = val;
	sim_nr_msrs++;
}

/* The shim lbr_read.h declares for user space: RDMSR on the simulated CPU. */
u64 lbr_rdmsr(u32 msr)
{
	unsigned int k;

	if (sim_nr_reads < SIM_MSRS)
		sim_log[sim_nr_reads] = msr;
	sim_nr_reads++;
	for (k = 0; k < sim_nr_msrs; k++)
		if (sim_msr[k].msr == msr)
			return sim_msr[k].val;
	diag("RDMSR 0x%x: no such MSR on the simulated CPU\n", msr);
	return 0xdeadbeefdeadbeefULL;
}

/* A simulated LBR: the stack of one CPU, entries by MSR index. */
struct sim_lbr {
	struct lbr_decode_fmt fmt;
	unsigned int depth;
	bool has_info;			/* legacy: LBR_INFO MSRs (Arch: always) */
	bool core_msrs;			/* legacy: at 0x40/0x60, not 0x680/0x6c0 */
	bool double_abort;		/* Haswell's quirk */
	bool skip_info;			/* lbr_info=0: LBR_INFO not read */
	u64 tos;
	u64 from[SIM_DEPTH_MAX];
	u64 to[SIM_DEPTH_MAX];
	u64 info[SIM_DEPTH_MAX];
};

/* Set lbr_hw as the backend's probe does, and the MSRs its CPU has. */
static void sim_load(const struct sim_lbr *s)
{
	u32 from = s->core_msrs ? MSR_LBR_CORE_FROM : MSR_LBR_NHM_FROM;
	u32 to = s->core_msrs ? MSR_LBR_CORE_TO : MSR_LBR_NHM_TO;
	unsigned int k;

	memset(&lbr_hw, 0, sizeof(lbr_hw));
	lbr_hw.backend = s->fmt.backend;
	lbr_hw.fmt = s->fmt;
	lbr_hw.depth = s->depth;
	lbr_hw.double_abort = s->double_abort;
	lbr_hw.from_stride = 1;
	sim_nr_msrs = 0;
	sim_nr_reads = 0;

	switch (s->fmt.backend) {
	case LBR_SNAP_BACKEND_INTEL:
		lbr_hw.tos_msr = MSR_LBR_TOS;
		lbr_hw.from_msr = from;
		lbr_hw.to_msr = to;
		lbr_hw.info_msr = s->has_info ? MSR_LBR_INFO_0 : 0;
		sim_set(MSR_LBR_TOS, s->tos);
		for (k = 0; k < s->depth; k++) {
			sim_set(from + k, s->from[k]);
			/* LBR_FORMAT_32 packs FROM and TO in one MSR. */
			if (s->fmt.format != LBR_FMT_32)
				sim_set(to + k, s->to[k]);
			if (s->has_info)
				sim_set(MSR_LBR_INFO_0 + k, s->info[k]);
		}
		break;
	case LBR_SNAP_BACKEND_ARCH:
		lbr_hw.from_msr = MSR_ARCH_LBR_FROM_0;
		lbr_hw.to_msr = MSR_ARCH_LBR_TO_0;
		lbr_hw.info_msr = MSR_ARCH_LBR_INFO_0;
		for (k = 0; k < s->depth; k++) {
			sim_set(MSR_ARCH_LBR_FROM_0 + k, s->from[k]);
			sim_set(MSR_ARCH_LBR_TO_0 + k, s->to[k]);
			sim_set(MSR_ARCH_LBR_INFO_0 + k, s->info[k]);
		}
		break;
	case LBR_SNAP_BACKEND_AMD:
		lbr_hw.from_msr = MSR_AMD_SAMP_BR_FROM;
		lbr_hw.to_msr = MSR_AMD_SAMP_BR_FROM + 1;
		lbr_hw.from_stride = 2;
		for (k = 0; k < s->depth; k++) {
			sim_set(MSR_AMD_SAMP_BR_FROM + 2 * k, s->from[k]);
			sim_set(MSR_AMD_SAMP_BR_FROM + 2 * k + 1, s->to[k]);
		}
		break;
	}
	lbr_hw_set_planes(!s->skip_info);
}

/*
 * The module's path: lbr_hw_read_raw() copies the MSRs of @depth entries
 * on the capture path, lbr_raw_decode() makes branches of the copy at
 * read().  The copy must fill exactly what lbr_raw_msrs() says it takes.
 */
static unsigned int sim_read(struct lbr_snap_branch *out, unsigned int depth)
{
	u64 msr[LBR_RAW_MAX_MSRS + 1];
	unsigned int planes, used, i;
	u32 tos;

	for (i = 0; i < ARRAY_SIZE(msr); i++)
		msr[i] = 0x5a5a5a5a5a5a5a5aULL;
	planes = lbr_hw_read_raw(msr, depth, &tos);
	used = lbr_raw_msrs(planes, depth);
	for (i = used; i < ARRAY_SIZE(msr); i++)
		if (msr[i] != 0x5a5a5a5a5a5a5a5aULL) {
			diag("raw copy: msr[%u] written, past the %u it takes\n",
			     i, used);
			break;
		}
	return lbr_raw_decode(msr, depth, planes, tos, out);
}

/*
 * Read @s with sim_read() into a buffer of 0xaa bytes and check the
 * branches (oldest first), the number of MSRs read, and that nothing was
 * written past the @s->depth branches the caller has room for.
 */
static void check_stack(const struct sim_lbr *s,
			const struct lbr_snap_branch *want, unsigned int nr,
			unsigned int reads)
{
	struct lbr_snap_branch got[SIM_DEPTH_MAX + 1], poison;
	unsigned int n, i;
	char what[32];

	memset(got, 0xaa, sizeof(got));
	memset(&poison, 0xaa, sizeof(poison));
	sim_load(s);
	n = sim_read(got, lbr_hw.depth);
	expect_u64("nr", nr, n);
	for (i = 0; i < nr && i < n; i++) {
		snprintf(what, sizeof(what), "[%u].", i);
		expect_branch(what, &want[i], &got[i]);
	}
	for (i = s->depth; i < ARRAY_SIZE(got); i++)
		if (memcmp(&got[i], &poison, sizeof(poison)))
			diag("out[%u] written, past the depth %u\n", i, s->depth);
	expect_u64("MSRs read", reads, sim_nr_reads);
	if (reads != sim_nr_reads) {
		diag("read:");
		for (i = 0; i < sim_nr_reads && i < SIM_MSRS; i++)
			diag(" %#x", sim_log[i]);
		diag("\n");
	}
}

/*
 * Skylake-style legacy LBR (INFO, 32 deep), TOS 5.  Recording began at
 * index 20 after a clear: 20..31 and 0..5 hold branches, 6..19 were never
 * written.  Branch at index k: FROM 0xffffffff81000000 + k * 0x100 (FROM
 * is a full address in this format), TO = FROM + 0x40, cycles k + 1,
 * mispredicted when k is a multiple of 3, in a transaction when k is 31.
 */
static const u8 skylake_order[] = {	/* oldest first */
	20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
	0, 1, 2, 3, 4, 5,
};

/* That stack's FROM and TO, the Skylake CPU, LBR_INFO left to the caller. */
static void sim_skylake(struct sim_lbr *s, bool skip_info)
{
	unsigned int k;

	memset(s, 0, sizeof(*s));
	s->fmt.backend = LBR_SNAP_BACKEND_INTEL;
	s->fmt.format = LBR_FMT_INFO;
	s->fmt.tsx = 1;
	s->depth = 32;
	s->has_info = true;
	s->tos = 5;
	s->skip_info = skip_info;
	for (k = 0; k < ARRAY_SIZE(skylake_order); k++) {
		s->from[skylake_order[k]] = 0xffffffff81000000ULL +
					    skylake_order[k] * 0x100;
		s->to[skylake_order[k]] = s->from[skylake_order[k]] + 0x40;
	}
}

static void test_stack_legacy(void)
{
	const u8 *order = skylake_order;
	struct lbr_snap_branch want[ARRAY_SIZE(skylake_order)];
	struct sim_lbr s;
	unsigned int k;

	sim_skylake(&s, false);
	for (k = 0; k < ARRAY_SIZE(skylake_order); k++) {
		u8 idx = order[k];

		s.info[idx] = (idx % 3 ? 0 : 0x8000000000000000ULL) |
			      (idx == 31 ? 0x4000000000000000ULL : 0) | (idx + 1);
	}
	for (k = 0; k < ARRAY_SIZE(skylake_order); k++) {
		u8 idx = order[k];

		want[k] = (struct lbr_snap_branch){
			.from = 0xffffffff81000000ULL + idx * 0x100,
			.to = 0xffffffff81000040ULL + idx * 0x100,
			.flags = (idx % 3 ? PRED : MIS) | CYC |
				 (idx == 31 ? TX : 0),
			.cycles = idx + 1,
		};
	}
	/* The TOS, then FROM, TO and INFO of every entry: the copy is whole. */
	check_stack(&s, want, ARRAY_SIZE(skylake_order), 1 + 32 * 3);
	result("stack: legacy INFO depth 32 TOS 5, wrapped, 6..19 empty: 18 oldest first");
}

/*
 * lbr_info=0 (the default): the same Skylake stack as test_stack_legacy()
 * and an Arch LBR one, with LBR_INFO not read.  Not one INFO MSR is read,
 * and no branch claims a prediction, a cycle count or a type it never
 * had: INFO's bits stay out, even with the INFO MSRs full of them.
 */
static void test_stack_no_info(void)
{
	const u8 *order = skylake_order;
	struct lbr_snap_branch want[ARRAY_SIZE(skylake_order)];
	struct sim_lbr s;
	unsigned int k;

	sim_skylake(&s, true);
	for (k = 0; k < ARRAY_SIZE(skylake_order); k++) {
		s.info[order[k]] = 0xf000000000000000ULL | (order[k] + 1);
		want[k] = (struct lbr_snap_branch){
			.from = 0xffffffff81000000ULL + order[k] * 0x100,
			.to = 0xffffffff81000040ULL + order[k] * 0x100,
		};
	}
	check_stack(&s, want, ARRAY_SIZE(skylake_order), 1 + 32 * 2);
	result("stack: legacy INFO depth 32, lbr_info=0: FROM and TO only, no INFO flags");

	memset(&s, 0, sizeof(s));
	s.fmt.backend = LBR_SNAP_BACKEND_ARCH;
	s.depth = 8;
	s.skip_info = true;
	for (k = 0; k < 8; k++) {
		s.from[k] = 0xffffffff81001000ULL + k;
		s.to[k] = 0xffffffff81002000ULL + k;
		s.info[k] = 0xf500000000000000ULL | (k + 1);
	}
	for (k = 0; k < 8; k++)
		want[k] = (struct lbr_snap_branch){
			.from = 0xffffffff81001000ULL + 7 - k,
			.to = 0xffffffff81002000ULL + 7 - k,
		};
	check_stack(&s, want, 8, 8 * 2);
	result("stack: arch depth 8, lbr_info=0: FROM and TO only, no type, flags or cycles");
}

/*
 * A full 16-deep EIP_FLAGS2 stack without TSX (Haswell with TSX off), TOS
 * 5: all 16 entries, oldest at index 6.  Entry k: FROM 0xffff8000000000k0
 * as read with bits 62:61 clear (bit 63 = mispred when k is odd), TO a user
 * address 0x400000 + k.  No LBR_INFO MSRs.
 */
static void test_stack_legacy_full(void)
{
	static const u8 order[] = {
		6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5,
	};
	struct sim_lbr s = {
		.fmt = { .backend = LBR_SNAP_BACKEND_INTEL,
			 .format = LBR_FMT_EIP_FLAGS2, .tsx = 0 },
		.depth = 16, .tos = 5,
	};
	struct lbr_snap_branch want[ARRAY_SIZE(order)];
	unsigned int k;

	for (k = 0; k < 16; k++) {
		s.from[k] = 0x1fff800000000000ULL + k * 0x10 +
			    (k & 1 ? 0x8000000000000000ULL : 0);
		s.to[k] = 0x400000 + k;
	}
	for (k = 0; k < ARRAY_SIZE(order); k++) {
		u8 idx = order[k];

		want[k] = (struct lbr_snap_branch){
			.from = 0xffff800000000000ULL + idx * 0x10,
			.to = 0x400000 + idx,
			.flags = idx & 1 ? MIS : PRED,
		};
	}
	check_stack(&s, want, ARRAY_SIZE(order), 1 + 16 * 2);
	result("stack: legacy EIP_FLAGS2 no TSX depth 16 TOS 5, full: 16 oldest first");
}

/*
 * A 32-bit format stack, 8 deep at 0x40, TOS 1, entries 0, 1, 7 and 6 written
 * (5 empty).  There is no TO MSR (the simulated CPU has none: a read of
 * one fails the test), and no LBR_INFO.
 */
static void test_stack_legacy_32(void)
{
	static const u8 order[] = { 6, 7, 0, 1 };
	struct sim_lbr s = {
		.fmt = { .backend = LBR_SNAP_BACKEND_INTEL,
			 .format = LBR_FMT_32 },
		.depth = 8, .core_msrs = true, .tos = 1,
	};
	struct lbr_snap_branch want[ARRAY_SIZE(order)];
	unsigned int k;

	for (k = 0; k < 8; k++) {
		if (k >= 2 && k <= 5)
			continue;
		/* TO 0xc1000k00 in the high half, FROM 0xc0000k00 low. */
		s.from[k] = 0xc100000000000000ULL + ((u64)k << 40) +
			    0xc0000000ULL + (k << 8);
	}
	for (k = 0; k < ARRAY_SIZE(order); k++) {
		u8 idx = order[k];

		want[k] = (struct lbr_snap_branch){
			.from = 0xc0000000ULL + (idx << 8),
			.to = 0xc1000000ULL + (idx << 8),
		};
	}
	/* The TOS, then the FROM of 1, 0, 7, 6 and the empty 5. */
	check_stack(&s, want, ARRAY_SIZE(order), 1 + 8);
	result("stack: legacy fmt 32 depth 8 TOS 1, 2..5 empty: 4 oldest first");
}

/*
 * Arch LBR, 32 deep: entry 0 is the newest, 0..9 hold branches, 10 is
 * empty and 11 holds junk that must not be read as a branch.  Entry k:
 * FROM 0xffffffff81001000 + k, TO 0xffffffff81002000 + k, type CALL for
 * even k and RET for odd k, cycles 100 + k valid on even k.  There is no
 * TOS: the simulated CPU has no MSR 0x1c9, a read of it fails the test.
 */
static void test_stack_arch(void)
{
	static const u8 order[] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };
	struct sim_lbr s = {
		.fmt = { .backend = LBR_SNAP_BACKEND_ARCH },
		.depth = 32, .has_info = true, .tos = 17,
	};
	struct lbr_snap_branch want[ARRAY_SIZE(order)];
	unsigned int k;

	for (k = 0; k < 10; k++) {
		s.from[k] = 0xffffffff81001000ULL + k;
		s.to[k] = 0xffffffff81002000ULL + k;
		s.info[k] = k & 1 ? 0x0500000000000000ULL :
			    0x1400000000000000ULL | (100 + k);
	}
	s.to[10] = 0xffffffff81003000ULL;
	s.info[10] = 0x1400000000000001ULL;
	s.from[11] = 0xffffffff81004000ULL;
	s.to[11] = 0xffffffff81005000ULL;
	for (k = 0; k < ARRAY_SIZE(order); k++) {
		u8 idx = order[k];

		want[k] = (struct lbr_snap_branch){
			.from = 0xffffffff81001000ULL + idx,
			.to = 0xffffffff81002000ULL + idx,
			.flags = idx & 1 ? PRED : PRED | CYC,
			.cycles = idx & 1 ? 0 : 100 + idx,
			.type = idx & 1 ? LBR_SNAP_BT_RET : LBR_SNAP_BT_CALL,
		};
	}
	/* FROM, TO, INFO of all 32 entries. */
	check_stack(&s, want, ARRAY_SIZE(order), 32 * 3);
	result("stack: arch depth 32, 0..9 then empty: 10 oldest first, TOS unused");
}

/*
 * AMD LbrExtV2, 16 deep, virt_bits 48: entry 0 is the newest, 0..15 hold
 * branches but 3 is an erratum-1452 record (reserved bit), 5 a wrong
 * path's (valid 0, spec 1) and 7 is empty (valid = spec = 0): a hole,
 * which amd_pmu_lbr_read() skips as it does the erratum record, going on
 * to 8..15; the wrong path's goes too (perf keeps it, flagged).
 * Entry k: FROM 0x0000ffff81000k00 (kernel, sign-extended), TO a user
 * address 0x500000 + k; entry 5 spec on the wrong path, entry 2
 * mispredicted.  FROM and TO MSRs alternate (entry k at 0xc0010300 + 2k
 * and 0xc0010301 + 2k); there is no TOS and no INFO.
 */
static void test_stack_amd(void)
{
	static const u8 order[] = {
		15, 14, 13, 12, 11, 10, 9, 8, 6, 4, 2, 1, 0
	};
	struct sim_lbr s = {
		.fmt = { .backend = LBR_SNAP_BACKEND_AMD, .virt_bits = 48 },
		.depth = 16, .tos = 3,
	};
	struct lbr_snap_branch want[ARRAY_SIZE(order)];
	unsigned int k;

	for (k = 0; k < 16; k++) {
		s.from[k] = 0x0000ffff81000000ULL + (k << 8) + (k == 2 ? M : 0);
		s.to[k] = 0x500000 + k + (k == 5 ? S : V) + (k == 3 ? R : 0);
	}
	s.to[7] = 0x500007;
	for (k = 0; k < ARRAY_SIZE(order); k++) {
		u8 idx = order[k];

		want[k] = (struct lbr_snap_branch){
			.from = 0xffffffff81000000ULL + (idx << 8),
			.to = 0x500000 + idx,
			.flags = idx == 2 ? MIS : PRED,
		};
	}
	/* FROM and TO of all 16. */
	check_stack(&s, want, ARRAY_SIZE(order), 16 * 2);
	result("stack: amd depth 16, 3 skipped, 5 a wrong path's, 7 a hole: 13 oldest first");
}

/*
 * Haswell's duplicated TSX aborts (x86_pmu.lbr_double_abort, which
 * intel_pmu_init() sets for Haswell alone): an abort is recorded twice,
 * the second, newer record without the abort bit.  intel_pmu_lbr_read_64()
 * reads newest first and, on a record with the abort bit when it has kept
 * one before, writes it over the last one kept ("out--"): the copy goes,
 * the abort stays.  lbr_hw.double_abort (lbr_probe_intel(), the Haswell
 * models) asks lbr_raw_decode() for the same.
 *
 * EIP_FLAGS2 with TSX, 16 deep, TOS 4.  FROM bit 63 is mispredict, 62
 * in_tx, 61 abort; the address is sign-extended from bit 60:
 *   0  A   0x1fffffff81000100 -> 0xffffffff81000140
 *   1  X   0x3fffffff81000200 -> 0xffffffff81000300   the abort
 *   2  X'  0x1fffffff81000200 -> 0xffffffff81000300   its copy
 *   3  B   0x9fffffff81000400 -> 0xffffffff81000440   mispredicted
 *   4  C   0x1fffffff81000500 -> 0xffffffff81000540   newest (TOS)
 * and 5..15 empty: 15, read after 0, ends the stack.
 */
static void sim_haswell(struct sim_lbr *s, bool double_abort)
{
	static const u64 from[] = {
		0x1fffffff81000100ULL, 0x3fffffff81000200ULL,
		0x1fffffff81000200ULL, 0x9fffffff81000400ULL,
		0x1fffffff81000500ULL,
	};
	static const u64 to[] = {
		0xffffffff81000140ULL, 0xffffffff81000300ULL,
		0xffffffff81000300ULL, 0xffffffff81000440ULL,
		0xffffffff81000540ULL,
	};
	unsigned int k;

	memset(s, 0, sizeof(*s));
	s->fmt.backend = LBR_SNAP_BACKEND_INTEL;
	s->fmt.format = LBR_FMT_EIP_FLAGS2;
	s->fmt.tsx = 1;
	s->depth = 16;
	s->tos = 4;
	s->double_abort = double_abort;
	for (k = 0; k < ARRAY_SIZE(from); k++) {
		s->from[k] = from[k];
		s->to[k] = to[k];
	}
}

/* A branch with no cycles and no type. */
#define BR(f, t, fl)	{ .from = (f), .to = (t), .flags = (fl) }

#define HSW_A	BR(0xffffffff81000100ULL, 0xffffffff81000140ULL, PRED)
#define HSW_X	BR(0xffffffff81000200ULL, 0xffffffff81000300ULL, PRED | ABRT)
#define HSW_X2	BR(0xffffffff81000200ULL, 0xffffffff81000300ULL, PRED)
#define HSW_B	BR(0xffffffff81000400ULL, 0xffffffff81000440ULL, MIS)
#define HSW_C	BR(0xffffffff81000500ULL, 0xffffffff81000540ULL, PRED)

static void test_stack_double_abort(void)
{
	static const struct lbr_snap_branch quirk[] = {
		HSW_A, HSW_X, HSW_B, HSW_C,
	};
	static const struct lbr_snap_branch no_quirk[] = {
		HSW_A, HSW_X, HSW_X2, HSW_B, HSW_C,
	};
	static const struct lbr_snap_branch newest[] = { HSW_A, HSW_X };
	static const struct lbr_snap_branch twice[] = {
		HSW_A,
		BR(0xffffffff81000600ULL, 0xffffffff81000700ULL, PRED | ABRT),
	};
	static const struct lbr_snap_branch no_tsx[] = {
		BR(0x401000, 0x402000, PRED),
		BR(0x401100, 0x402100, PRED),
		BR(0x401200, 0x402200, PRED),
	};
	struct sim_lbr s;

	/* The TOS, then FROM and TO of 4..0 and the empty 15. */
	sim_haswell(&s, true);
	check_stack(&s, quirk, ARRAY_SIZE(quirk), 1 + 16 * 2);
	result("stack: double abort (Haswell): the abort's newer copy is dropped, 4 of 5");

	/* The same stack on a CPU without the quirk (Broadwell). */
	sim_haswell(&s, false);
	check_stack(&s, no_quirk, ARRAY_SIZE(no_quirk), 1 + 16 * 2);
	result("stack: double abort off: the same stack is 5 branches, the copy kept");

	/*
	 * The abort is the newest entry (TOS 1): nothing kept before it to
	 * drop ("the extra entry cannot be removed"), A and X stay.
	 */
	sim_haswell(&s, true);
	s.tos = 1;
	s.from[2] = s.from[3] = s.from[4] = 0;
	s.to[2] = s.to[3] = s.to[4] = 0;
	check_stack(&s, newest, ARRAY_SIZE(newest), 1 + 16 * 2);
	result("stack: double abort, the abort newest: nothing to drop, 2 of 2");

	/*
	 * Two aborts in a row, C (index 3, TOS) newest, then X (2) and Y (1):
	 * as in intel_pmu_lbr_read_64(), X is written over C, then Y over X:
	 * A and Y are left.
	 */
	sim_haswell(&s, true);
	s.tos = 3;
	s.from[1] = 0x3fffffff81000600ULL;
	s.to[1] = 0xffffffff81000700ULL;
	s.from[2] = 0x3fffffff81000200ULL;
	s.from[3] = 0x1fffffff81000500ULL;
	s.to[3] = 0xffffffff81000540ULL;
	s.from[4] = s.to[4] = 0;
	check_stack(&s, twice, ARRAY_SIZE(twice), 1 + 16 * 2);
	result("stack: double abort, two aborts in a row: each replaces the one before, 2 of 4");

	/*
	 * Haswell with TSX off (fmt.tsx 0): FROM bits 62:61 are no flags, so
	 * index 1's bit 61 is no abort and nothing is dropped.  User
	 * addresses 0x4010k0 -> 0x4020k0, TOS 2, 3..15 empty.
	 */
	sim_haswell(&s, true);
	s.fmt.tsx = 0;
	s.tos = 2;
	s.from[0] = 0x0000000000401000ULL;
	s.from[1] = 0x2000000000401100ULL;
	s.from[2] = 0x0000000000401200ULL;
	s.to[0] = 0x402000;
	s.to[1] = 0x402100;
	s.to[2] = 0x402200;
	s.from[3] = s.from[4] = s.to[3] = s.to[4] = 0;
	check_stack(&s, no_tsx, ARRAY_SIZE(no_tsx), 1 + 16 * 2);
	result("stack: double abort without TSX: bit 61 is no abort, 3 of 3");
}

/*
 * Full stacks at every depth the backends have: 8 (Atom, at 0x40/0x60;
 * Arch), 16 (Nehalem to Broadwell; Arch; AMD Zen 4), 32 (Skylake and later,
 * with LBR_INFO; Arch; AMD), legacy ones at the top, the bottom and the
 * middle of the ring.  Entry at MSR index k: FROM 0xffffffff81000000 +
 * 0x10 k, TO 0xffffffff82000000 + k, as each format encodes them,
 * predicted, with k + 1 cycles where the format has cycles.  The branch of
 * age a (0 the oldest) is at index (TOS + 1 + a) mod depth in legacy LBR,
 * whose TOS is the newest; at depth - 1 - a in Arch and AMD LBR, whose
 * entry 0 is the newest.  No entry is empty: all are read, and no more.
 */
static const struct {
	const char *name;
	u8 backend;
	u8 format;
	bool core_msrs;
	unsigned int depth;
	u64 tos;
	unsigned int reads;	/* TOS, then FROM, TO (INFO) of each entry */
} full_cases[] = {
	{ "legacy EIP_FLAGS at 0x40", LBR_SNAP_BACKEND_INTEL,
	  LBR_FMT_EIP_FLAGS, true, 8, 7, 1 + 8 * 2 },
	{ "legacy EIP_FLAGS at 0x40", LBR_SNAP_BACKEND_INTEL,
	  LBR_FMT_EIP_FLAGS, true, 8, 0, 1 + 8 * 2 },
	{ "legacy EIP_FLAGS at 0x40", LBR_SNAP_BACKEND_INTEL,
	  LBR_FMT_EIP_FLAGS, true, 8, 3, 1 + 8 * 2 },
	{ "legacy EIP_FLAGS2", LBR_SNAP_BACKEND_INTEL,
	  LBR_FMT_EIP_FLAGS2, false, 16, 15, 1 + 16 * 2 },
	{ "legacy EIP_FLAGS2", LBR_SNAP_BACKEND_INTEL,
	  LBR_FMT_EIP_FLAGS2, false, 16, 0, 1 + 16 * 2 },
	{ "legacy EIP_FLAGS2", LBR_SNAP_BACKEND_INTEL,
	  LBR_FMT_EIP_FLAGS2, false, 16, 9, 1 + 16 * 2 },
	{ "legacy INFO", LBR_SNAP_BACKEND_INTEL,
	  LBR_FMT_INFO, false, 32, 31, 1 + 32 * 3 },
	{ "legacy INFO", LBR_SNAP_BACKEND_INTEL,
	  LBR_FMT_INFO, false, 32, 0, 1 + 32 * 3 },
	{ "legacy INFO", LBR_SNAP_BACKEND_INTEL,
	  LBR_FMT_INFO, false, 32, 17, 1 + 32 * 3 },
	{ "arch", LBR_SNAP_BACKEND_ARCH, 0, false, 8, 0, 8 * 3 },
	{ "arch", LBR_SNAP_BACKEND_ARCH, 0, false, 16, 0, 16 * 3 },
	{ "arch", LBR_SNAP_BACKEND_ARCH, 0, false, 32, 0, 32 * 3 },
	{ "amd", LBR_SNAP_BACKEND_AMD, 0, false, 8, 0, 8 * 2 },
	{ "amd", LBR_SNAP_BACKEND_AMD, 0, false, 16, 0, 16 * 2 },
	{ "amd", LBR_SNAP_BACKEND_AMD, 0, false, 32, 0, 32 * 2 },
};

static void test_stack_full(void)
{
	struct lbr_snap_branch want[SIM_DEPTH_MAX];
	struct sim_lbr s;
	unsigned int c, k, a, d;
	u64 from;

	for (c = 0; c < ARRAY_SIZE(full_cases); c++) {
		memset(&s, 0, sizeof(s));
		s.fmt.backend = full_cases[c].backend;
		s.fmt.format = full_cases[c].format;
		s.fmt.tsx = full_cases[c].format == LBR_FMT_INFO;
		s.fmt.virt_bits = 48;
		s.core_msrs = full_cases[c].core_msrs;
		s.has_info = full_cases[c].format == LBR_FMT_INFO;
		s.depth = d = full_cases[c].depth;
		s.tos = full_cases[c].tos;
		memset(want, 0, sizeof(want));
		for (k = 0; k < d; k++) {
			from = 0xffffffff81000000ULL + 0x10 * k;
			s.to[k] = 0xffffffff82000000ULL + k;
			if (s.fmt.backend == LBR_SNAP_BACKEND_AMD) {
				/* 48-bit ips, TO bit 63 valid. */
				s.from[k] = from & 0x0000ffffffffffffULL;
				s.to[k] = V | (s.to[k] & 0x0000ffffffffffffULL);
			} else if (s.fmt.backend == LBR_SNAP_BACKEND_ARCH) {
				s.from[k] = from;
				/* CYC_CNT_VALID, type 0 (JCC) */
				s.info[k] = 0x1000000000000000ULL | (k + 1);
			} else if (s.fmt.format == LBR_FMT_EIP_FLAGS) {
				s.from[k] = from & ~(1ULL << 63);
			} else if (s.fmt.format == LBR_FMT_EIP_FLAGS2) {
				s.from[k] = from & ~(7ULL << 61);
			} else {
				s.from[k] = from;
				s.info[k] = k + 1;
			}
		}
		for (a = 0; a < d; a++) {
			k = s.fmt.backend == LBR_SNAP_BACKEND_INTEL ?
			    (unsigned int)((s.tos + 1 + a) % d) : d - 1 - a;
			want[a].from = 0xffffffff81000000ULL + 0x10 * k;
			want[a].to = 0xffffffff82000000ULL + k;
			want[a].flags = PRED;
			if (s.has_info || s.fmt.backend == LBR_SNAP_BACKEND_ARCH) {
				want[a].flags |= CYC;
				want[a].cycles = k + 1;
			}
			if (s.fmt.backend == LBR_SNAP_BACKEND_ARCH)
				want[a].type = LBR_SNAP_BT_JCC;
		}
		check_stack(&s, want, d, full_cases[c].reads);
		if (s.fmt.backend == LBR_SNAP_BACKEND_INTEL)
			result("stack: full %s depth %u TOS %llu: %u oldest first",
			       full_cases[c].name, d,
			       (unsigned long long)s.tos, d);
		else
			result("stack: full %s depth %u: %u oldest first",
			       full_cases[c].name, d, d);
	}
}

/*
 * The legacy ring wrapping round to its top with an empty entry below:
 * Atom, EIP_FLAGS, 8 deep at 0x40/0x60, TOS 2.  The newest are 2, 1, 0,
 * then 7 and 6 past the wrap; 5 is empty and ends the stack; 4 and 3 hold
 * branches that must not be read.  Entry k: FROM 0x7fffffff81000k00 (a
 * predicted kernel FROM), TO 0xffffffff81000k40.  Then again with TOS bits
 * above the depth set (0x1a): intel_pmu_lbr_read_64() masks them, as
 * lbr_legacy_index() does.
 */
static void test_stack_wrap(void)
{
	static const u8 order[] = { 6, 7, 0, 1, 2 };
	struct sim_lbr s = {
		.fmt = { .backend = LBR_SNAP_BACKEND_INTEL,
			 .format = LBR_FMT_EIP_FLAGS },
		.depth = 8, .core_msrs = true, .tos = 2,
	};
	struct lbr_snap_branch want[ARRAY_SIZE(order)];
	unsigned int k;

	for (k = 0; k < 8; k++) {
		if (k == 5)
			continue;
		s.from[k] = 0x7fffffff81000000ULL + (k << 8);
		s.to[k] = 0xffffffff81000040ULL + (k << 8);
	}
	for (k = 0; k < ARRAY_SIZE(order); k++) {
		want[k] = (struct lbr_snap_branch){
			.from = 0xffffffff81000000ULL + (order[k] << 8),
			.to = 0xffffffff81000040ULL + (order[k] << 8),
			.flags = PRED,
		};
	}
	/* The TOS, then FROM and TO of 2, 1, 0, 7, 6 and the empty 5. */
	check_stack(&s, want, ARRAY_SIZE(order), 1 + 8 * 2);
	result("stack: legacy depth 8 TOS 2 wraps to 7, 6; 5 empty, 4, 3 copied, not decoded: 5 oldest first");
	s.tos = 0x1a;
	check_stack(&s, want, ARRAY_SIZE(order), 1 + 8 * 2);
	result("stack: legacy depth 8 TOS 0x1a is TOS 2: 5 oldest first");
}

/*
 * The newest entry empty: no branch, and nothing read past it, though
 * every other entry holds one.  Legacy EIP_FLAGS2 16 deep, TOS 7, 7 empty;
 * Arch 16 deep, entry 0 FROM 0 (TO and INFO set).  AMD has no end: an
 * entry neither valid nor spec is a hole perf skips, as it skips
 * erratum-1452 records: 16 deep, every entry empty but 2 and 4, and 0 and
 * 1 erratum records, gives those two.
 */
static void test_stack_empty(void)
{
	static const struct lbr_snap_branch amd_want[] = {
		BR(0xffffffff81000040ULL, 0xffffffff82000004ULL, PRED),
		BR(0xffffffff81000020ULL, 0xffffffff82000002ULL, PRED),
	};
	struct sim_lbr s;
	unsigned int k;

	memset(&s, 0, sizeof(s));
	s.fmt.backend = LBR_SNAP_BACKEND_INTEL;
	s.fmt.format = LBR_FMT_EIP_FLAGS2;
	s.depth = 16;
	s.tos = 7;
	for (k = 0; k < 16; k++) {
		s.from[k] = k == 7 ? 0 : 0x1fffffff81000000ULL + 0x10 * k;
		s.to[k] = k == 7 ? 0 : 0xffffffff82000000ULL + k;
	}
	check_stack(&s, NULL, 0, 1 + 16 * 2);
	result("stack: legacy depth 16, the newest (TOS 7) empty: 0 branches, 33 MSRs read");

	memset(&s, 0, sizeof(s));
	s.fmt.backend = LBR_SNAP_BACKEND_ARCH;
	s.depth = 16;
	for (k = 0; k < 16; k++) {
		s.from[k] = k ? 0xffffffff81000000ULL + 0x10 * k : 0;
		s.to[k] = 0xffffffff82000000ULL + k;
		s.info[k] = 0x1000000000000000ULL | (k + 1);
	}
	check_stack(&s, NULL, 0, 16 * 3);
	result("stack: arch depth 16, entry 0 FROM 0: 0 branches, 48 MSRs read");

	memset(&s, 0, sizeof(s));
	s.fmt.backend = LBR_SNAP_BACKEND_AMD;
	s.fmt.virt_bits = 48;
	s.depth = 16;
	for (k = 0; k < 16; k++) {
		s.from[k] = 0x0000ffff81000000ULL + 0x10 * k;
		s.to[k] = 0x0000ffff82000000ULL + k;
	}
	check_stack(&s, NULL, 0, 16 * 2);
	result("stack: amd depth 16, no entry valid nor spec: 0 branches, 32 MSRs read");

	s.to[0] = V | R | 0x0000ffff82000000ULL;
	s.to[1] = V | R | 0x0000ffff82000001ULL;
	s.to[2] |= V;
	s.to[4] |= V;
	check_stack(&s, amd_want, ARRAY_SIZE(amd_want), 16 * 2);
	result("stack: amd depth 16, 0 and 1 erratum records, 2 and 4 branches, the rest holes: 2 branches, 32 MSRs read");
}

/* ---------------------------------------------------- probe entries */

#define RET_SITE	0xffffffff81c00000ULL

static const struct {
	const char *name;
	unsigned int nr;
	u64 to[8];		/* oldest first */
	unsigned int count;
	bool found;
} probe_cases[] = {
	{ "return in the middle: 2 newer entries", 5,
	  { 0x1000, 0x2000, RET_SITE, 0x3000, 0x4000 }, 2, true },
	{ "return is the newest: 0", 3,
	  { 0x1000, 0x2000, RET_SITE }, 0, true },
	{ "return is the oldest: all others count", 4,
	  { RET_SITE, 0x1000, 0x2000, 0x3000 }, 3, true },
	{ "not found: all count, found false", 3,
	  { 0x1000, 0x2000, 0x3000 }, 3, false },
	{ "several land on the return site: the newest wins", 6,
	  { RET_SITE, 0x1000, RET_SITE, 0x2000, RET_SITE, 0x3000 }, 1, true },
	{ "two in a row: the newest wins", 4,
	  { 0x1000, RET_SITE, RET_SITE, 0x2000 }, 1, true },
	{ "one entry, the return", 1, { RET_SITE }, 0, true },
	{ "no entries", 0, { 0 }, 0, false },
	{ "only past nr: not found", 2,
	  { 0x1000, 0x2000, RET_SITE }, 2, false },
};

static void test_probe_entries(void)
{
	struct lbr_snap_branch br[8];
	unsigned int k, i, got;
	bool found;

	for (k = 0; k < ARRAY_SIZE(probe_cases); k++) {
		memset(br, 0, sizeof(br));
		for (i = 0; i < ARRAY_SIZE(br); i++) {
			br[i].to = probe_cases[k].to[i];
			/* FROM never counts, even when it is the site. */
			br[i].from = RET_SITE;
		}
		found = !probe_cases[k].found;
		got = lbr_probe_entries(br, probe_cases[k].nr, RET_SITE, &found);
		expect_u64("count", probe_cases[k].count, got);
		expect_u64("found", probe_cases[k].found, found);
		result("lbr_probe_entries: %s", probe_cases[k].name);
	}
}

/*
 * lbr_return_entries(): an interrupt's IRET onto the return site is not
 * the return; the entry before its delivery (from the site) is, or none.
 */
#define FN	0xffffffffa0001000ULL	/* a RET, the traced function's */
#define FN2	0xffffffffa0002000ULL	/* another call's RET */
#define IRQ	0xffffffff81e00000ULL	/* an interrupt's handler */
#define IRET	0xffffffff81e01000ULL	/* its IRET */

static bool fake_event_return(u64 from)
{
	return from == IRET;
}

static const struct {
	const char *name;
	unsigned int nr;
	u64 br[8][2];		/* from, to; oldest first */
	unsigned int count;
	bool found;
} return_cases[] = {
	{ "a RET onto the site, the newest: 0", 2,
	  { { 0x1000, FN }, { FN, RET_SITE } }, 0, true },
	{ "a RET, then the probe's: those count", 3,
	  { { FN, RET_SITE }, { 0x2000, 0x3000 }, { 0x3000, 0x4000 } }, 2, true },
	{ "an IRET, the return just before its delivery", 5,
	  { { 0x1000, FN }, { FN, RET_SITE }, { RET_SITE, IRQ }, { IRQ, IRET },
	    { IRET, RET_SITE } }, 3, true },
	{ "an IRET, its delivery pushed out: none", 3,
	  { { IRQ, 0x5000 }, { 0x5000, IRET }, { IRET, RET_SITE } }, 3, false },
	{ "an IRET, a nested RET onto the site inside it: the one before the delivery", 5,
	  { { FN, RET_SITE }, { RET_SITE, IRQ }, { FN2, RET_SITE }, { 0x6000, IRET },
	    { IRET, RET_SITE } }, 4, true },
	{ "an IRET, a nested RET, the delivery pushed out: none, not the nested", 3,
	  { { FN2, RET_SITE }, { 0x6000, IRET }, { IRET, RET_SITE } }, 3, false },
	{ "an IRET, the oldest entry: none", 1,
	  { { IRET, RET_SITE } }, 1, false },
	{ "two interrupts in a row at the site: the return before the first", 5,
	  { { FN, RET_SITE }, { RET_SITE, IRQ }, { IRET, RET_SITE },
	    { RET_SITE, IRQ }, { IRET, RET_SITE } }, 4, true },
	{ "two in a row, the first's delivery pushed out: none", 3,
	  { { IRET, RET_SITE }, { RET_SITE, IRQ }, { IRET, RET_SITE } }, 3, false },
	{ "a nested interrupt at the site inside ours: not its nested RET", 8,
	  { { FN, RET_SITE }, { RET_SITE, IRQ }, { FN2, RET_SITE }, { RET_SITE, IRQ },
	    { 0x7000, IRET }, { IRET, RET_SITE }, { 0x8000, IRET }, { IRET, RET_SITE } },
	  7, true },
	{ "another task interrupted at the site while ours was away", 8,
	  { { FN, RET_SITE }, { RET_SITE, IRQ }, { 0x9000, 0xa000 }, { FN2, RET_SITE },
	    { RET_SITE, IRQ }, { IRQ, IRET }, { IRET, RET_SITE }, { IRET, RET_SITE } },
	  7, true },
	{ "an IRET with no delivery, an older pair before it: none", 6,
	  { { FN2, RET_SITE }, { RET_SITE, IRQ }, { IRQ, IRET }, { IRET, RET_SITE },
	    { FN, RET_SITE }, { IRET, RET_SITE } }, 6, false },
	{ "an IRET then the probe's entries: the return before its delivery", 6,
	  { { FN, RET_SITE }, { RET_SITE, IRQ }, { IRQ, IRET }, { IRET, RET_SITE },
	    { 0x2000, 0x3000 }, { 0x3000, 0x4000 } }, 5, true },
	{ "an IRET, its delivery the oldest entry: none", 2,
	  { { RET_SITE, IRQ }, { IRET, RET_SITE } }, 2, false },
	{ "an IRET, no return before the delivery: none", 4,
	  { { 0x1000, 0x2000 }, { RET_SITE, IRQ }, { IRQ, IRET }, { IRET, RET_SITE } },
	  4, false },
	{ "no landing: none", 2,
	  { { 0x1000, 0x2000 }, { 0x2000, 0x3000 } }, 2, false },
};

static void test_return_entries(void)
{
	struct lbr_snap_branch br[8];
	unsigned int k, i, got;
	bool found;

	for (k = 0; k < ARRAY_SIZE(return_cases); k++) {
		memset(br, 0, sizeof(br));
		for (i = 0; i < ARRAY_SIZE(br); i++) {
			br[i].from = return_cases[k].br[i][0];
			br[i].to = return_cases[k].br[i][1];
		}
		found = !return_cases[k].found;
		got = lbr_return_entries(br, return_cases[k].nr, RET_SITE,
					 fake_event_return, &found);
		expect_u64("count", return_cases[k].count, got);
		expect_u64("found", return_cases[k].found, found);
		result("lbr_return_entries: %s", return_cases[k].name);
	}
}

/*
 * Hybrid CPUs (src/lbr_cpu.c): per-CPU images of CPUID and
 * IA32_PERF_CAPABILITIES as each CPU of a part reports them, built by hand
 * from the SDM's layout (CPUID.(7,0):EDX bit 15 hybrid, bit 19 Arch LBR;
 * CPUID.0x1a:EAX[31:24] core type 0x40 Core, 0x20 Atom; CPUID.0x1c:EAX[7:0]
 * depth mask, bit 30 deep C-state reset, bit 31 LIP) and the kernel's use
 * of them (get_this_hybrid_cpu_type(), intel_pmu_arch_lbr_init()).
 */
#define EDX_HYB_ARCH	(LBR_CPUID7_EDX_HYBRID | LBR_CPUID7_EDX_ARCH_LBR)
#define P_CORE_1A	0x40000001u	/* Core, native model id 1 */
#define E_CORE_1A	0x20000001u	/* Atom */

static const struct lbr_cpu_id adl_p = {	/* depth 8..32 */
	.cpuid7_edx = EDX_HYB_ARCH, .cpuid1a_eax = P_CORE_1A,
	.cpuid1c_eax = 0xc000000f, .perf_caps = 0x33f3, .perf_caps_ok = true,
};
static const struct lbr_cpu_id adl_e = {	/* depth 8, 16 */
	.cpuid7_edx = EDX_HYB_ARCH, .cpuid1a_eax = E_CORE_1A,
	.cpuid1c_eax = 0xc0000003, .perf_caps = 0x33f3, .perf_caps_ok = true,
};
static const struct lbr_cpu_id e_no_arch = {	/* E-core, no Arch LBR */
	.cpuid7_edx = LBR_CPUID7_EDX_HYBRID, .cpuid1a_eax = E_CORE_1A,
	.perf_caps = 0x33f3, .perf_caps_ok = true,
};
static const struct lbr_cpu_id skl = {		/* not hybrid, format 5 */
	.cpuid1a_eax = 0x40000000, .perf_caps = 0x33c5, .perf_caps_ok = true,
};
static const struct lbr_cpu_id skl_fmt6 = {	/* same, format 6 */
	.cpuid1a_eax = 0x40000000, .perf_caps = 0x33c6, .perf_caps_ok = true,
};
static const struct lbr_cpu_id hyb_legacy_e = {	/* hybrid, legacy fmt 6 */
	.cpuid7_edx = LBR_CPUID7_EDX_HYBRID, .cpuid1a_eax = E_CORE_1A,
	.perf_caps = 0x33c6, .perf_caps_ok = true,
};
static const struct lbr_cpu_id hyb_legacy_p = {
	.cpuid7_edx = LBR_CPUID7_EDX_HYBRID, .cpuid1a_eax = P_CORE_1A,
	.perf_caps = 0x33c5, .perf_caps_ok = true,
};
static const struct lbr_cpu_id no_caps = {	/* PERF_CAPABILITIES faults */
	.cpuid1a_eax = 0, .perf_caps_ok = false,
};

struct hybrid_case {
	const char *name;
	unsigned int backend, legacy_depth;
	const struct lbr_cpu_id *cpu[16];	/* by CPU number; NULL: not seen */
	int ret;
	unsigned int nr_groups;
	struct {
		u8 type, backend, format, depth;
		unsigned int nr;
		const char *cpus;
	} grp[4];
	const char *why;
};

#define ARCH	LBR_SNAP_BACKEND_ARCH
#define LEG	LBR_SNAP_BACKEND_INTEL
#define NONE	LBR_SNAP_BACKEND_NONE

static const struct hybrid_case hybrid_cases[] = {
	{ "Alder Lake: P-cores depth 32, E-cores depth 16: each its own",
	  ARCH, 0,
	  { &adl_p, &adl_p, &adl_p, &adl_p, &adl_p, &adl_p, &adl_p, &adl_p,
	    &adl_e, &adl_e, &adl_e, &adl_e },
	  0, 2, { { 0x40, ARCH, 0, 32, 8, "0-7" },
		  { 0x20, ARCH, 0, 16, 4, "8-11" } }, "" },
	{ "P-cores and E-cores interleaved: CPU lists with gaps",
	  ARCH, 0,
	  { &adl_p, &adl_p, &adl_e, &adl_e, &adl_p, &adl_p, NULL, &adl_e,
	    &adl_p },
	  0, 2, { { 0x40, ARCH, 0, 32, 5, "0-1,4-5,8" },
		  { 0x20, ARCH, 0, 16, 3, "2-3,7" } }, "" },
	{ "E-cores without Arch LBR: refused, naming both kinds",
	  ARCH, 0,
	  { &adl_p, &adl_p, &adl_p, &adl_p, &e_no_arch, &e_no_arch },
	  -ENODEV, 2, { { 0x40, ARCH, 0, 32, 4, "0-3" },
			{ 0x20, NONE, 0, 0, 2, "4-5" } },
	  "CPUs differ: CPU 0-3 (P-core): depth 32; CPU 4-5 (E-core): no such LBR" },
	{ "legacy LBR, formats 5 and 6 on the two core types: refused",
	  LEG, 32,
	  { &hyb_legacy_p, &hyb_legacy_p, &hyb_legacy_e, &hyb_legacy_e },
	  -ENODEV, 2, { { 0x40, LEG, 5, 32, 2, "0-1" },
			{ 0x20, LEG, 6, 32, 2, "2-3" } },
	  "CPUs differ: CPU 0-1 (P-core): format 5, depth 32; CPU 2-3 (E-core): format 6, depth 32" },
	{ "not hybrid: CPUID.0x1a's type is ignored, one group",
	  LEG, 32, { &skl, &skl, &skl, &skl },
	  0, 1, { { 0, LEG, 5, 32, 4, "0-3" } }, "" },
	{ "not hybrid, one CPU of another format: refused",
	  LEG, 32, { &skl, &skl_fmt6, &skl },
	  -ENODEV, 2, { { 0, LEG, 5, 32, 2, "0,2" },
			{ 0, LEG, 6, 32, 1, "1" } },
	  "CPUs differ: CPU 0,2 (not hybrid): format 5, depth 32; CPU 1 (not hybrid): format 6, depth 32" },
	{ "a CPU whose PERF_CAPABILITIES faults: refused",
	  LEG, 32, { &skl, &no_caps },
	  -ENODEV, 2, { { 0, LEG, 5, 32, 1, "0" },
			{ 0, NONE, 0, 0, 1, "1" } },
	  "CPUs differ: CPU 0 (not hybrid): format 5, depth 32; CPU 1 (not hybrid): no such LBR" },
	{ "Arch LBR asked of a part whose P-cores lack it too: refused",
	  ARCH, 0, { &e_no_arch },
	  -ENODEV, 1, { { 0x20, NONE, 0, 0, 1, "0" } },
	  "CPUs differ: CPU 0 (E-core): no such LBR" },
};

static void test_hybrid(void)
{
	unsigned int c, i, j, nr;

	for (c = 0; c < ARRAY_SIZE(hybrid_cases); c++) {
		const struct hybrid_case *hc = &hybrid_cases[c];
		struct lbr_cpu_kind k[16];
		struct lbr_cpu_group g[8];
		char why[256] = "";
		int ret;

		memset(k, 0, sizeof(k));
		for (i = 0; i < 16; i++)
			if (hc->cpu[i])
				lbr_cpu_kind_of(hc->cpu[i], hc->backend,
						hc->legacy_depth, &k[i]);
		nr = lbr_cpu_groups(k, 16, g, 8);
		ret = lbr_cpu_check(k, 16, why, sizeof(why));
		expect_u64("lbr_cpu_check()", (u64)(s64)hc->ret, (u64)(s64)ret);
		expect_u64("groups", hc->nr_groups, nr);
		for (j = 0; j < nr && j < hc->nr_groups; j++) {
			expect_u64("core type", hc->grp[j].type, g[j].kind.core_type);
			expect_u64("backend", hc->grp[j].backend, g[j].kind.backend);
			expect_u64("format", hc->grp[j].format, g[j].kind.format);
			expect_u64("depth", hc->grp[j].depth, g[j].kind.depth);
			expect_u64("CPUs", hc->grp[j].nr, g[j].nr);
			if (strcmp(hc->grp[j].cpus, g[j].cpus))
				diag("group %u: CPUs \"%s\", want \"%s\"", j,
				     g[j].cpus, hc->grp[j].cpus);
		}
		if (hc->ret && strcmp(why, hc->why))
			diag("why: \"%s\"\n#   want \"%s\"", why, hc->why);
		result("hybrid: %s", hc->name);
	}
}

/*
 * A CPU read with depth 0 (another kind of LBR than lbr_snap's, or not
 * identified yet: lbr_hw_cpu_online()) is not read at all, not even its
 * TOS: on a CPU without the MSRs that read would fault.
 */
static void test_stack_depth_zero(void)
{
	struct sim_lbr s = {
		.fmt = { .backend = LBR_SNAP_BACKEND_INTEL,
			 .format = LBR_FMT_INFO },
		.depth = 32, .has_info = true, .tos = 5,
	};
	struct lbr_snap_branch got[4];
	unsigned int n;

	s.from[5] = 0xffffffff81000000ULL;
	s.to[5] = 0xffffffff81000040ULL;
	sim_load(&s);
	n = sim_read(got, 0);
	expect_u64("branches", 0, n);
	expect_u64("MSRs read", 0, sim_nr_reads);
	result("stack: depth 0 (a CPU of another kind) reads no MSR, not even TOS");
}

/* The give-back rule of mode=raw (src/lbr_own.h), bit by bit. */
static void test_give_back(void)
{
	static const struct {
		const char *name;
		u64 found, set, now, want;
	} cases[] = {
		{ "nobody else: what was found", 0x4000, 0x4001, 0x4001, 0x4000 },
		{ "LBR turned off by another: stays off", 0x0, 0x1, 0x0, 0x0 },
		{ "another's new bit stays, ours goes", 0x0, 0x1, 0x4001, 0x4000 },
		{ "another's bit and LBR off: both stay", 0x0, 0x1, 0x4000, 0x4000 },
		{ "a found bit another cleared stays clear", 0x800, 0x801, 0x1, 0x0 },
		{ "LBR on when found: left on", 0x1, 0x1, 0x1, 0x1 },
	};
	/* ARCH_LBR_CTL and LBR_SELECT: the whole register or nothing. */
	static const struct {
		const char *name;
		u64 found, set, now, want;
	} whole[] = {
		{ "Arch LBR_CTL nobody touched: what was found", 0x0, 0x7f0003,
		  0x7f0003, 0x0 },
		{ "Arch LBR_CTL another rewrote: all of it stays (no USR without LBREn)",
		  0x0, 0x7f0003, 0x7f0007, 0x7f0007 },
		{ "LBR_SELECT another changed: its filter stays", 0x0, 0x1, 0x5, 0x5 },
		{ "LBR_SELECT nobody touched: what was found", 0x3, 0x1, 0x1, 0x3 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		expect_u64("lbr_give_back()", cases[i].want,
			   lbr_give_back(cases[i].found, cases[i].set,
					 cases[i].now));
		result("give back: %s", cases[i].name);
	}
	for (i = 0; i < ARRAY_SIZE(whole); i++) {
		expect_u64("lbr_give_back_whole()", whole[i].want,
			   lbr_give_back_whole(whole[i].found, whole[i].set,
					       whole[i].now));
		result("give back whole: %s", whole[i].name);
	}
}

/*
 * The IA32_LBR_CTL raw mode writes (src/lbr_own.h): only zeroes where the
 * CPU cannot filter (CPUID.0x1c EBX[0] CPL, EBX[1] kind), where a set bit
 * would fault the WRMSR.
 */
static void test_arch_ctl(void)
{
	static const struct {
		const char *name;
		bool kernel, user;
		u8 kinds;
		bool cpl, by_kind;
		u64 want;
	} cases[] = {
		{ "kernel, every kind, both filters", true, false, 0x7f, true, true,
		  0x7f0003 },
		{ "any, ret only", true, true, 0x08, true, true, 0x200007 },
		{ "jcc, rel_call, ind_call",
		  true, false, 0x01 | 0x02 | 0x04, true, true,
		  (1 << 16) | (1 << 19) | (1 << 20) | 0x3 },
		{ "ind_jmp, rel_jmp, far", false, true, 0x10 | 0x20 | 0x40, true,
		  true, (1 << 18) | (1 << 17) | (1 << 22) | 0x5 },
		{ "no CPL filtering: OS and USR stay 0", true, false, 0x7f, false,
		  true, 0x7f0001 },
		{ "no kind filtering: bits 22:16 stay 0", true, false, 0x7f, true,
		  false, 0x3 },
		{ "neither: LBREn alone", true, true, 0x08, false, false, 0x1 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		expect_u64("lbr_arch_ctl_bits()", cases[i].want,
			   lbr_arch_ctl_bits(cases[i].kernel, cases[i].user,
					     cases[i].kinds, cases[i].cpl,
					     cases[i].by_kind));
		result("Arch LBR_CTL: %s", cases[i].name);
	}
}

/*
 * LBR_SELECT raw mode writes (src/lbr_own.h): set bits suppress; on
 * Nehalem, Westmere, Silvermont and Airmont calls and returns need the
 * jumps let through, indirect calls the indirect jumps (perf's
 * nhm_lbr_sel_map).
 */
static void test_select_bits(void)
{
	static const struct {
		const char *name;
		bool kernel, user;
		u8 kinds;
		bool jmp_for_calls;
		u64 want;
	} cases[] = {
		{ "kernel, every kind", true, false, 0x7f, false, 0x2 },
		{ "user, ret only", false, true, 0x08, false,
		  0x1 | (0x77ULL << 2) },
		{ "kernel, any_call", true, false, 0x46, false,
		  0x2 | (0x39ULL << 2) },
		{ "kernel, any_call, jumps for calls", true, false, 0x46, true,
		  0x2 | (0x09ULL << 2) },
		{ "kernel, any_return, jumps for calls", true, false, 0x48, true,
		  0x2 | (0x07ULL << 2) },
		{ "kernel, ind_call, jumps for calls", true, false, 0x04, true,
		  0x2 | (0x6bULL << 2) },
		{ "kernel, jcc, jumps for calls: no jump added", true, false,
		  0x01, true, 0x2 | (0x7eULL << 2) },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		expect_u64("lbr_select_bits()", cases[i].want,
			   lbr_select_bits(cases[i].kernel, cases[i].user,
					   cases[i].kinds,
					   cases[i].jmp_for_calls));
		result("LBR_SELECT: %s", cases[i].name);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");

	test_legacy();
	test_legacy_flags_per_format();
	test_has_info();
	test_legacy_empty();
	test_arch();
	test_arch_types();
	test_amd();
	test_format_info_msr();
	test_backend_none();
	test_legacy_index();
	test_stack_legacy();
	test_stack_no_info();
	test_stack_legacy_full();
	test_stack_legacy_32();
	test_stack_arch();
	test_stack_amd();
	test_stack_double_abort();
	test_stack_full();
	test_stack_wrap();
	test_stack_empty();
	test_stack_depth_zero();
	test_probe_entries();
	test_return_entries();
	test_hybrid();
	test_give_back();
	test_arch_ctl();
	test_select_bits();

	printf("1..%u\n", nr_tests);
	printf("# Totals: pass:%u fail:%u skip:0\n", nr_pass, nr_fail);
	return nr_fail ? EXIT_FAILURE : EXIT_SUCCESS;
}
