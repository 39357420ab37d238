// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lbrtest: guest-side proof program for the LBR lab QEMU.
 *
 * Runs as root in a guest booted on an LBR lab CPU model, pinned to CPU 0,
 * and drives the LBR MSRs through /dev/cpu/0/msr (msr.ko).  No lbr_snap
 * code is involved.
 *
 *   lbrtest asm            hand-written branch sequences with known
 *                          addresses, compared exactly with the LBR
 *                          (prints "ok - ..." / "not ok - ..." lines)
 *   lbrtest xcheck MODE... for each MODE (all|calls|far): enable LBR for CPL0
 *                          only, run a few syscalls, disable, print the LBR
 *                          as "LBR i from to info" lines (oldest first; the
 *                          host compares them with QEMU's trace)
 *   lbrtest migrate        LBR on across a migration the host performs
 *                          while we block in read(0)
 *   lbrtest bench [N]      rough cost of recording (not a test)
 *   lbrtest pmu            lab PMU (pmu=on; Intel or AMD PerfMonV2):
 *                          perf_event_open counting, RDPMC, sampling and
 *                          branch stacks over a known loop,
 *                          FREEZE_LBRS_ON_PMI at the MSR level, and on
 *                          AMD the PMU registers themselves
 *   lbrtest pmu-bench [N]  cost of counting: a loop with no counter and
 *                          with one (not a test)
 *   lbrtest info           print CPUID / MSR facts
 *
 * Built with gcc -static on the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <cpuid.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define MSR_PERF_CAPABILITIES	0x345
#define MSR_DEBUGCTL		0x1d9
#define MSR_LBR_SELECT		0x1c8
#define MSR_LBR_TOS		0x1c9
#define MSR_LBR_FROM		0x680
#define MSR_LBR_TO		0x6c0
#define MSR_LBR_INFO		0xdc0
#define MSR_ARCH_LBR_CTL	0x14ce
#define MSR_ARCH_LBR_DEPTH	0x14cf
#define MSR_ARCH_LBR_FROM	0x1500
#define MSR_ARCH_LBR_TO		0x1600
#define MSR_ARCH_LBR_INFO	0x1200

#define NR			32
/*
 * AMD LbrExtV2 (lbr-lab=amd): FROM_i = 0xc0010300 + 2i, TO_i the MSR
 * after it, entry 0 the newest; FROM bit 63 mispredict, TO bit 63 valid
 * (arch/x86/events/amd/lbr.c, struct branch_entry).
 */
#define MSR_AMD_LBR_SELECT	0xc000010e
#define MSR_AMD_DBG_EXTN_CFG	0xc000010f
#define AMD_LBRV2EN		(1ULL << 6)
#define MSR_AMD_LBR_FROM	0xc0010300
#define AMD_NR			16
#define AMD_FROM_MISPRED	(1ULL << 63)
#define AMD_TO_VALID		(1ULL << 63)
#define KERNEL_BASE		0xffff800000000000ULL

/* LBR_INFO fields (LBR format 5 and arch LBR) */
#define INFO_MISPRED		(1ULL << 63)	/* 62, 61 (TSX): always 0 */
#define INFO_CYC_CNT_VALID	(1ULL << 60)	/* arch LBR only */
#define INFO_BR_TYPE_SHIFT	56		/* arch LBR only */
#define INFO_CYCLES		0xffffULL

/* Branch kinds: arch LBR_INFO.BR_TYPE values */
enum kind { JCC = 0, IND_JMP = 1, REL_JMP = 2, IND_CALL = 3, REL_CALL = 4,
	    RET = 5, FAR = 8 };
#define K(k)		(1u << (k))
#define ALL_NEAR	(K(JCC) | K(IND_JMP) | K(REL_JMP) | K(IND_CALL) | \
			 K(REL_CALL) | K(RET))
#define ALL_KINDS	(ALL_NEAR | K(FAR))

static const char *kind_name(int k)
{
	switch (k) {
	case JCC: return "JCC";
	case IND_JMP: return "NEAR_IND_JMP";
	case REL_JMP: return "NEAR_REL_JMP";
	case IND_CALL: return "NEAR_IND_CALL";
	case REL_CALL: return "NEAR_REL_CALL";
	case RET: return "NEAR_RET";
	case FAR: return "FAR";
	}
	return "?";
}

/* asm routines and labels (lbrtest-asm.S) */
typedef void lbr_fn(int fd, const uint64_t *on, const uint64_t *off,
		    uint64_t msr);
extern lbr_fn lbr_seq, lbr_chain, lbr_mig;
extern char lbr_seq_L0[], lbr_seq_b1[], lbr_seq_L1[], lbr_seq_b2[],
	lbr_seq_L2[], lbr_seq_b3[], lbr_seq_F1[], lbr_seq_b4[], lbr_seq_r1[],
	lbr_seq_b5[], lbr_seq_F2[], lbr_seq_b6[], lbr_seq_r2[], lbr_seq_b7[],
	lbr_seq_L3[], lbr_seq_b8[], lbr_seq_L4[], lbr_seq_b9[], lbr_seq_L5[],
	lbr_seq_b10[], lbr_seq_L6[], lbr_chain_start[], lbr_chain_end[],
	lbr_mig_b1[], lbr_mig_L1[], lbr_mig_b2[], lbr_mig_F[], lbr_mig_b3[],
	lbr_mig_r1[], lbr_mig_b4[], lbr_mig_L2[], lbr_mig_b5[], lbr_mig_r2[];

struct br {
	uint64_t from, to, info;
	int kind;
};

static int msr_fd = -1;
static bool arch;		/* arch LBR, else legacy */
static bool amd;		/* AMD LbrExtV2, else one of the above */
static int amd_layout_bad;	/* AMD entries read without Linux's layout */

/* Entries in the stack */
static int depth(void)
{
	return amd ? AMD_NR : NR;
}

static const char *flavour(void)
{
	return amd ? "amd" : arch ? "arch" : "legacy";
}

/* A FROM or TO with its flag bits gone: sign-extended from bit 47 */
static uint64_t amd_ip(uint64_t v)
{
	return (uint64_t)((int64_t)(v << 16) >> 16);
}
static int n_ok, n_fail;

/*
 * The LBR_INFO the lab records for a branch (tests/lbr-lab/README.md,
 * "LBR_INFO"): cycle count = ((from ^ to) >> 1) & 0xffff, 1 if that is 0;
 * MISPRED for near returns and near indirect jumps and calls; no TSX
 * bits; arch LBR adds CYC_CNT_VALID and BR_TYPE.
 */
static uint64_t lab_info(uint64_t from, uint64_t to, int kind)
{
	uint64_t info = ((from ^ to) >> 1) & INFO_CYCLES;

	if (!info)
		info = 1;
	/* AMD has no LBR_INFO: only mispredict, FROM's bit 63, is read */
	if (amd)
		info = 0;
	if (kind == RET || kind == IND_JMP || kind == IND_CALL)
		info |= INFO_MISPRED;
	if (arch)
		info |= INFO_CYC_CNT_VALID |
			((uint64_t)kind << INFO_BR_TYPE_SHIFT);
	return info;
}

/*
 * LBR_INFO of a branch whose kind the test does not know (kernel
 * branches): arch LBR names it in BR_TYPE, so all of INFO must follow the
 * rule; on legacy LBR everything but MISPRED must.
 */
static bool lab_info_any_kind(uint64_t from, uint64_t to, uint64_t info)
{
	if (arch)
		return info == lab_info(from, to,
					(info >> INFO_BR_TYPE_SHIFT) & 0xf);
	if (amd)
		return !(info & ~INFO_MISPRED);
	return (info & ~INFO_MISPRED) ==
	       (lab_info(from, to, JCC) & ~INFO_MISPRED);
}

static uint64_t rdmsr(uint32_t msr)
{
	uint64_t v = 0;

	if (pread(msr_fd, &v, 8, msr) != 8) {
		fprintf(stderr, "rdmsr 0x%x: %s\n", msr, strerror(errno));
		exit(2);
	}
	return v;
}

static int wrmsr_try(uint32_t msr, uint64_t v)
{
	return pwrite(msr_fd, &v, 8, msr) == 8 ? 0 : -errno;
}

static void wrmsr(uint32_t msr, uint64_t v)
{
	int r = wrmsr_try(msr, v);

	if (r) {
		fprintf(stderr, "wrmsr 0x%x: %s\n", msr, strerror(-r));
		exit(2);
	}
}

static void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s: ", ok ? "ok" : "not ok", flavour());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		n_ok++;
	else
		n_fail++;
}

/* LBR configuration: which CPLs and which branch kinds to record */
struct cfg {
	bool user, kernel;
	unsigned int kinds;
};

/* Clear all entries (and TOS) while LBR is disabled */
static void lbr_clear(void)
{
	int i;

	if (arch) {
		wrmsr(MSR_ARCH_LBR_CTL, 0);
		wrmsr(MSR_ARCH_LBR_DEPTH, NR);	/* resets all entries */
		return;
	}
	if (amd) {
		/* As amd_pmu_lbr_reset() does */
		wrmsr(MSR_AMD_DBG_EXTN_CFG, 0);
		for (i = 0; i < AMD_NR; i++) {
			wrmsr(MSR_AMD_LBR_FROM + 2 * i, 0);
			wrmsr(MSR_AMD_LBR_FROM + 2 * i + 1, 0);
		}
		return;
	}
	wrmsr(MSR_DEBUGCTL, 0);
	for (i = 0; i < NR; i++) {
		wrmsr(MSR_LBR_FROM + i, 0);
		wrmsr(MSR_LBR_TO + i, 0);
		wrmsr(MSR_LBR_INFO + i, 0);
	}
	wrmsr(MSR_LBR_TOS, 0);
}

/*
 * Program the filter; returns the MSR and the values that the asm routine
 * writes to enable and to disable recording.
 */
static uint32_t lbr_program(const struct cfg *c, uint64_t *on, uint64_t *off)
{
	static const uint64_t legacy_bit[] = {
		[JCC] = 1 << 2, [REL_CALL] = 1 << 3, [IND_CALL] = 1 << 4,
		[RET] = 1 << 5, [IND_JMP] = 1 << 6, [REL_JMP] = 1 << 7,
		[FAR] = 1 << 8,
	};
	static const uint64_t arch_bit[] = {
		[JCC] = 1 << 16, [REL_JMP] = 1 << 17, [IND_JMP] = 1 << 18,
		[REL_CALL] = 1 << 19, [IND_CALL] = 1 << 20, [RET] = 1 << 21,
		[FAR] = 1 << 22,
	};
	uint64_t v = 0;
	int k;

	*off = 0;
	if (arch) {
		v = 1 | (c->kernel ? 2 : 0) | (c->user ? 4 : 0);
		for (k = 0; k <= FAR; k++)
			if (c->kinds & K(k))
				v |= arch_bit[k];
		*on = v;
		return MSR_ARCH_LBR_CTL;
	}
	/* LBR_SELECT bits suppress, AMD's as legacy's */
	v = (c->kernel ? 0 : 1) | (c->user ? 0 : 2);
	for (k = 0; k <= FAR; k++)
		if ((ALL_KINDS & K(k)) && !(c->kinds & K(k)))
			v |= legacy_bit[k];
	if (amd) {
		wrmsr(MSR_AMD_LBR_SELECT, v);
		*on = AMD_LBRV2EN;	/* DBG_EXTN_CFG.LBRV2EN */
		return MSR_AMD_DBG_EXTN_CFG;
	}
	wrmsr(MSR_LBR_SELECT, v);
	*on = 1;			/* DEBUGCTL.LBR */
	return MSR_DEBUGCTL;
}

/*
 * Read the stack, oldest entry first; returns the number of entries.
 * INFO_SKEW != 0 and INFO_ZERO make a wrong reader on purpose (the
 * negative controls in test_asm()): INFO of entry i + INFO_SKEW paired
 * with FROM/TO of entry i, or INFO taken as 0.
 */
static int lbr_read_as(struct br *out, int info_skew, bool info_zero)
{
	struct br tmp[NR];
	int i, n = 0;

	for (i = 0; i < depth(); i++) {
		uint64_t from, to, info;

		if (amd) {
			/* An entry whose TO is not valid is empty */
			from = rdmsr(MSR_AMD_LBR_FROM + 2 * i);
			to = rdmsr(MSR_AMD_LBR_FROM + 2 * i + 1);
			if (!(to & AMD_TO_VALID))
				break;
			/*
			 * As amd_pmu_lbr_read() takes them: FROM 62:48 and TO
			 * 60:48 the sign extension of bit 47, TO's reserved
			 * (61, which Linux drops) and spec (62) bits 0.
			 */
			if ((from & ~AMD_FROM_MISPRED) !=
			    (amd_ip(from) & ~AMD_FROM_MISPRED) ||
			    (to & ~AMD_TO_VALID) !=
			    (amd_ip(to) & ((1ULL << 61) - 1)))
				amd_layout_bad++;
			info = rdmsr(MSR_AMD_LBR_FROM + 2 * ((i + info_skew) &
							    (AMD_NR - 1))) &
			       AMD_FROM_MISPRED ? INFO_MISPRED : 0;
			from = amd_ip(from);
			to = amd_ip(to);
		} else if (arch) {
			from = rdmsr(MSR_ARCH_LBR_FROM + i);
			to = rdmsr(MSR_ARCH_LBR_TO + i);
			info = rdmsr(MSR_ARCH_LBR_INFO +
				     ((i + info_skew) & (NR - 1)));
		} else {
			int tos = rdmsr(MSR_LBR_TOS);
			int idx = (tos - i) & (NR - 1);

			from = rdmsr(MSR_LBR_FROM + idx);
			to = rdmsr(MSR_LBR_TO + idx);
			info = rdmsr(MSR_LBR_INFO +
				     ((tos - i - info_skew) & (NR - 1)));
		}
		if (!from)
			break;
		if (info_zero)
			info = 0;
		tmp[n].from = from;
		tmp[n].to = to;
		tmp[n].info = info;
		tmp[n].kind = arch ? (int)((info >> 56) & 0xf) : -1;
		n++;
	}
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

static int lbr_read(struct br *out)
{
	return lbr_read_as(out, 0, false);
}

static int run(lbr_fn *fn, const struct cfg *c, struct br *out)
{
	uint64_t on, off;
	uint32_t msr;

	lbr_clear();
	msr = lbr_program(c, &on, &off);
	fn(msr_fd, &on, &off, msr);
	return lbr_read(out);
}

#define U(x)	((uint64_t)(uintptr_t)(x))

static int expected_seq(struct br *e, unsigned int kinds)
{
	const struct br all[] = {
		{ U(lbr_seq_b1), U(lbr_seq_L1), 0, JCC },
		{ U(lbr_seq_b2), U(lbr_seq_L2), 0, REL_JMP },
		{ U(lbr_seq_b3), U(lbr_seq_F1), 0, REL_CALL },
		{ U(lbr_seq_b4), U(lbr_seq_r1), 0, RET },
		{ U(lbr_seq_b5), U(lbr_seq_F2), 0, IND_CALL },
		{ U(lbr_seq_b6), U(lbr_seq_r2), 0, RET },
		{ U(lbr_seq_b7), U(lbr_seq_L3), 0, IND_JMP },
		{ U(lbr_seq_b8), U(lbr_seq_L4), 0, JCC },
		{ U(lbr_seq_b8), U(lbr_seq_L4), 0, JCC },
		{ U(lbr_seq_b9), U(lbr_seq_L5), 0, JCC },
		{ U(lbr_seq_b10), U(lbr_seq_L6), 0, REL_JMP },
	};
	int i, n = 0;

	for (i = 0; i < (int)(sizeof(all) / sizeof(all[0])); i++)
		if (kinds & K(all[i].kind))
			e[n++] = all[i];
	return n;
}

static void dump(const char *what, const struct br *b, int n)
{
	int i;

	printf("#   %s (%d entries, oldest first):\n", what, n);
	for (i = 0; i < n; i++)
		printf("#     %2d %016" PRIx64 " -> %016" PRIx64
		       " info %016" PRIx64 " %s\n", i, b[i].from, b[i].to,
		       b[i].info, b[i].kind >= 0 ? kind_name(b[i].kind) : "");
}

/* Expected entries get the lab's LBR_INFO of their from/to/kind */
static void fill_info(struct br *want, int n)
{
	int i;

	for (i = 0; i < n; i++)
		want[i].info = lab_info(want[i].from, want[i].to, want[i].kind);
}

/*
 * Compare got[] with want[] exactly: from, to and the whole LBR_INFO,
 * which must be the lab's rule applied to the wanted from/to/kind
 * (lab_info(): cycle count, MISPRED, no TSX bits; arch LBR also
 * CYC_CNT_VALID and BR_TYPE).  A want entry with from == 0 matches any
 * kernel-space FROM, and its INFO is computed from the FROM read.
 */
static bool same(const struct br *got, int ng, const struct br *want, int nw)
{
	int i;

	if (ng != nw)
		return false;
	for (i = 0; i < ng; i++) {
		uint64_t from = want[i].from ? want[i].from : got[i].from;

		if (want[i].from ? got[i].from != want[i].from
				 : got[i].from < KERNEL_BASE)
			return false;
		if (got[i].to != want[i].to)
			return false;
		if (got[i].info != lab_info(from, want[i].to, want[i].kind))
			return false;
	}
	return true;
}

/*
 * Run FN under CFG and compare with WANT.  An interrupt can add a far
 * branch (IRET) when far branches are recorded, so try up to 3 times.
 */
static void check_exact(const char *name, lbr_fn *fn, const struct cfg *c,
			const struct br *want, int nw)
{
	struct br got[NR];
	int ng = 0, attempt;

	for (attempt = 1; attempt <= 3; attempt++) {
		ng = run(fn, c, got);
		if (same(got, ng, want, nw))
			break;
	}
	result(attempt <= 3, "%s (%d entries%s)", name, nw,
	       attempt > 1 && attempt <= 3 ? ", after a retry" : "");
	if (attempt > 3) {
		struct br exp[2 * NR];

		memcpy(exp, want, nw * sizeof(*want));
		fill_info(exp, nw);
		dump("expected (info by the lab's rule)", exp, nw);
		dump("LBR", got, ng);
	}
}

/*
 * AMD: CPUID 0x80000022 EAX bit 1 LbrExtV2, EBX[9:4] the stack size
 * (union cpuid_0x80000022_ebx in arch/x86/include/asm/perf_event.h).
 */
static void test_cpuid_amd(void)
{
	unsigned int a, b, c, d, max;

	__cpuid(0x80000000, max, b, c, d);
	a = b = 0;
	if (max >= 0x80000022)
		__cpuid(0x80000022, a, b, c, d);
	result(max >= 0x80000022 && a == 2 && ((b >> 4) & 0x3f) == AMD_NR,
	       "CPUID max extended leaf %#x, 0x80000022 eax=%#x (LbrExtV2 "
	       "only) ebx=%#x (16 entries)", max, a, b);
}

static void test_cpuid_msrs(void)
{
	unsigned int a, b, c, d;
	uint64_t caps;

	if (amd) {
		test_cpuid_amd();
		return;
	}
	caps = rdmsr(MSR_PERF_CAPABILITIES);

	__cpuid(1, a, b, c, d);
	bool pdcm = c & (1u << 15);
	__cpuid_count(7, 0, a, b, c, d);
	bool albr = d & (1u << 19);

	if (arch) {
		__cpuid_count(0x1c, 0, a, b, c, d);
		result(pdcm && albr && (caps & 0x3f) == 0x3f &&
		       (a & 0xff) == 0x08 && (b & 7) == 3 && (c & 7) == 7,
		       "CPUID ARCH_LBR, leaf 0x1C eax=%#x ebx=%#x ecx=%#x "
		       "(depth 32, CPL+branch filter, mispredict, timed LBR, "
		       "br_type), PERF_CAPABILITIES=%#" PRIx64, a, b, c, caps);
	} else {
		result(pdcm && !albr && (caps & 0x3f) == 5,
		       "CPUID PDCM=%d ARCH_LBR=%d, PERF_CAPABILITIES[5:0]=%"
		       PRIu64 " (LBR_FORMAT_INFO)", pdcm, albr, caps & 0x3f);
	}
}

static void test_msr_storage(void)
{
	bool ok = true;

	lbr_clear();
	if (amd) {
		wrmsr(MSR_AMD_LBR_FROM + 10, 0x1111);
		wrmsr(MSR_AMD_LBR_FROM + 11, 0x2222);
		wrmsr(MSR_AMD_LBR_SELECT, 0x1ff);
		ok = rdmsr(MSR_AMD_LBR_FROM + 10) == 0x1111 &&
		     rdmsr(MSR_AMD_LBR_FROM + 11) == 0x2222 &&
		     rdmsr(MSR_AMD_LBR_SELECT) == 0x1ff;
		result(ok, "FROM_5/TO_5/LBR_SELECT writes are stored");
		wrmsr(MSR_AMD_LBR_SELECT, 0);
		wrmsr(MSR_AMD_DBG_EXTN_CFG, 0xff);
		ok = rdmsr(MSR_AMD_DBG_EXTN_CFG) == AMD_LBRV2EN;
		wrmsr(MSR_AMD_DBG_EXTN_CFG, 0);
		result(ok && !rdmsr(MSR_AMD_DBG_EXTN_CFG),
		       "DBG_EXTN_CFG keeps LBRV2EN (bit 6) only");
		wrmsr(MSR_DEBUGCTL, 1 | (1 << 11));
		ok = rdmsr(MSR_DEBUGCTL) == (1 << 11);
		wrmsr(MSR_DEBUGCTL, 0);
		result(ok, "DEBUGCTL keeps FREEZE_LBRS_ON_PMI, not LBR");
	} else if (arch) {
		wrmsr(MSR_ARCH_LBR_FROM + 5, 0x1111);
		wrmsr(MSR_ARCH_LBR_TO + 5, 0x2222);
		wrmsr(MSR_ARCH_LBR_INFO + 5, 0x3333);
		ok = rdmsr(MSR_ARCH_LBR_FROM + 5) == 0x1111 &&
		     rdmsr(MSR_ARCH_LBR_TO + 5) == 0x2222 &&
		     rdmsr(MSR_ARCH_LBR_INFO + 5) == 0x3333 &&
		     rdmsr(MSR_ARCH_LBR_DEPTH) == NR;
		result(ok, "FROM/TO/INFO writes are stored, DEPTH reads 32");
		wrmsr(MSR_ARCH_LBR_DEPTH, NR);
		ok = !rdmsr(MSR_ARCH_LBR_FROM + 5) &&
		     !rdmsr(MSR_ARCH_LBR_TO + 5) && !rdmsr(MSR_ARCH_LBR_INFO + 5);
		result(ok, "writing ARCH_LBR_DEPTH resets the entries");
		ok = wrmsr_try(MSR_ARCH_LBR_DEPTH, 16) == -EIO &&
		     wrmsr_try(MSR_ARCH_LBR_CTL, 1 | 8) == -EIO &&
		     wrmsr_try(MSR_ARCH_LBR_CTL, 1ULL << 23) == -EIO &&
		     rdmsr(MSR_ARCH_LBR_CTL) == 0;
		result(ok, "#GP for DEPTH=16, call-stack bit, reserved CTL bit");
	} else {
		wrmsr(MSR_LBR_FROM + 5, 0x1111);
		wrmsr(MSR_LBR_TO + 5, 0x2222);
		wrmsr(MSR_LBR_INFO + 5, 0x3333);
		wrmsr(MSR_LBR_TOS, 7);
		wrmsr(MSR_LBR_SELECT, 0x1ff);
		ok = rdmsr(MSR_LBR_FROM + 5) == 0x1111 &&
		     rdmsr(MSR_LBR_TO + 5) == 0x2222 &&
		     rdmsr(MSR_LBR_INFO + 5) == 0x3333 &&
		     rdmsr(MSR_LBR_TOS) == 7 && rdmsr(MSR_LBR_SELECT) == 0x1ff;
		result(ok, "FROM/TO/INFO/TOS/LBR_SELECT writes are stored");
		wrmsr(MSR_DEBUGCTL, 1 | (1 << 11));
		ok = rdmsr(MSR_DEBUGCTL) == (1 | (1 << 11));
		wrmsr(MSR_DEBUGCTL, 0);
		result(ok && rdmsr(MSR_DEBUGCTL) == 0,
		       "DEBUGCTL LBR and FREEZE_LBRS_ON_PMI bits are stored");
	}
	lbr_clear();
}

/*
 * The lab's count of this vCPU's RDMSRs and WRMSRs (MSR 0x4c4252, the
 * read itself counted): known accesses, one of them faulting, move it by
 * exactly their number.  Tried a few times: an interrupt or a context
 * switch may make an access of its own in between.
 */
#define MSR_LAB_MSR_ACCESSES	0x4c4252

static void test_msr_count(void)
{
	uint32_t ctl = amd ? MSR_AMD_DBG_EXTN_CFG :
		       arch ? MSR_ARCH_LBR_CTL : MSR_DEBUGCTL;
	uint64_t c0 = 0, c1 = 0, v = 0;
	int try, i;

	for (try = 0; try < 5; try++) {
		c0 = rdmsr(MSR_LAB_MSR_ACCESSES);
		for (i = 0; i < 5; i++)
			v = rdmsr(ctl);
		for (i = 0; i < 3; i++)
			wrmsr(ctl, v);
		/* A #GP: the counter is read-only. */
		wrmsr_try(MSR_LAB_MSR_ACCESSES, 1);
		c1 = rdmsr(MSR_LAB_MSR_ACCESSES);
		if (c1 - c0 == 5 + 3 + 1 + 1)
			break;
	}
	result(c1 - c0 == 10,
	       "MSR 0x4c4252 counts RDMSR and WRMSR, a faulting one too: "
	       "%" PRIu64 " for 5 RDMSRs, 3 WRMSRs, 1 #GP and its own read",
	       c1 - c0);
	result(wrmsr_try(MSR_LAB_MSR_ACCESSES, 0) == -EIO,
	       "MSR 0x4c4252 is read-only (#GP on WRMSR)");
}

static void test_asm(void)
{
	const struct cfg user_all = { .user = true, .kinds = ALL_NEAR };
	static const struct { int kind; const char *name; } kinds[] = {
		{ JCC, "JCC" }, { REL_JMP, "NEAR_REL_JMP" },
		{ IND_JMP, "NEAR_IND_JMP" }, { REL_CALL, "NEAR_REL_CALL" },
		{ IND_CALL, "NEAR_IND_CALL" }, { RET, "NEAR_RET" },
	};
	struct br want[48], got[NR];
	struct cfg c;
	int n, ng, i;
	bool ok;

	test_cpuid_msrs();
	test_msr_storage();
	test_msr_count();

	/* LBR off (DEBUGCTL.LBR=0 / LBREn=0): nothing recorded */
	{
		struct cfg off = user_all;
		uint64_t on, zero;
		uint32_t msr;

		lbr_clear();
		msr = lbr_program(&off, &on, &zero);
		on = arch ? on & ~1ULL : 0;	/* AMD: LBRV2EN clear */
		lbr_seq(msr_fd, &on, &zero, msr);
		ng = lbr_read(got);
		result(ng == 0, "LBR disabled: nothing recorded (%d entries)",
		       ng);
	}

	/* Every near branch kind, CPL0 and far branches suppressed */
	n = expected_seq(want, ALL_NEAR);
	check_exact(amd ? "user branches, all near kinds, exact from/to "
			  "and mispredict (FROM bit 63), TO valid"
		    : arch ? "user branches, all near kinds, exact from/to/info "
			   "(cycle count, MISPRED, no TSX, CYC_CNT_VALID, "
			   "BR_TYPE)"
			 : "user branches, all near kinds, exact from/to/info "
			   "(cycle count, MISPRED, no TSX)",
		    lbr_seq, &user_all, want, n);

	/*
	 * Negative controls on the same recording: a reader that pairs the
	 * INFO of the next older entry with FROM/TO, or that takes INFO as
	 * 0 (a wrong or unimplemented LBR_INFO MSR), must fail the compare.
	 */
	{
		struct br skew[NR], zero[NR];
		int ns, nz;

		ng = lbr_read(got);
		ns = lbr_read_as(skew, 1, false);
		nz = lbr_read_as(zero, 0, true);
		ok = same(got, ng, want, n) && !same(skew, ns, want, n) &&
		     !same(zero, nz, want, n);
		fill_info(want, n);
		/* AMD's one bit of INFO: only the first two checks apply */
		for (i = 0; !amd && i + 1 < n; i++)
			if (want[i].info == want[i + 1].info &&
			    (want[i].from != want[i + 1].from ||
			     want[i].to != want[i + 1].to))
				ok = false;
		result(ok, amd ? "the compare bites: mispredict of the "
		       "neighbour entry, or read as 0, does not match"
		       : "the compare bites: INFO of the neighbour entry, "
		       "or INFO read as 0, does not match; neighbours' INFO "
		       "differ");
		if (!ok) {
			dump("LBR", got, ng);
			dump("INFO of entry i+1", skew, ns);
		}
	}

	/* One kind filtered out at a time */
	for (i = 0; i < (int)(sizeof(kinds) / sizeof(kinds[0])); i++) {
		char name[96];

		c = user_all;
		c.kinds &= ~K(kinds[i].kind);
		n = expected_seq(want, c.kinds);
		snprintf(name, sizeof(name), "filter out %s", kinds[i].name);
		check_exact(name, lbr_seq, &c, want, n);
	}

	/* Only calls and returns */
	c = user_all;
	c.kinds = K(REL_CALL) | K(IND_CALL) | K(RET);
	n = expected_seq(want, c.kinds);
	check_exact("only calls and returns", lbr_seq, &c, want, n);

	/* Far branches on: the SYSRET/IRET back to user space comes first */
	c = user_all;
	c.kinds = ALL_KINDS;
	want[0] = (struct br){ 0, U(lbr_seq_L0), 0, FAR };
	n = 1 + expected_seq(want + 1, ALL_NEAR);
	check_exact("far branch: return from the enabling syscall "
		    "(kernel -> lbr_seq_L0) is recorded first",
		    lbr_seq, &c, want, n);

	/* More branches than entries: the newest 32 (16) survive, in order */
	c = user_all;
	for (i = 0; i < 40; i++)
		want[i] = (struct br){ U(lbr_chain_start) + 4 * i,
				       U(lbr_chain_start) + 4 * i + 4, 0,
				       REL_JMP };
	check_exact(amd ? "40 taken jumps: the newest 16 in order"
			: "40 taken jumps: the newest 32 in order", lbr_chain,
		    &c, want + 40 - depth(), depth());
	if (!arch && !amd) {
		uint64_t tos = rdmsr(MSR_LBR_TOS);

		result(tos == (40 & (NR - 1)),
		       "TOS after 40 records from TOS=0 is %" PRIu64
		       " (expected 8)", tos);
	}

	/* CPL filter: kernel only.  User branches must not appear. */
	c = (struct cfg){ .kernel = true, .kinds = ALL_KINDS };
	ng = run(lbr_seq, &c, got);
	ok = ng > 0;
	for (i = 0; i < ng; i++)
		if (got[i].to < KERNEL_BASE || got[i].from < KERNEL_BASE ||
		    !lab_info_any_kind(got[i].from, got[i].to, got[i].info))
			ok = false;
	result(ok, "CPL>0 suppressed: %d entries, all kernel from/to, INFO "
	       "by the rule%s", ng, arch ? "" : " (MISPRED not checked)");
	if (!ok)
		dump("LBR", got, ng);

	/* Both CPL classes suppressed: nothing */
	c = (struct cfg){ .kinds = ALL_KINDS };
	ng = run(lbr_seq, &c, got);
	result(ng == 0, "CPL0 and CPL>0 suppressed: nothing recorded "
	       "(%d entries)", ng);

	/* Every entry read above, user and kernel addresses alike */
	if (amd)
		result(!amd_layout_bad, "every entry had Linux's layout: FROM "
		       "62:48 and TO 60:48 sign extension, TO reserved and "
		       "spec 0 (%d did not)", amd_layout_bad);
}

/* Syscalls the cross-check window contains */
static void xcheck_work(void)
{
	struct utsname u;

	getppid();
	uname(&u);
	getppid();
}

/*
 * One cross-check window per MODE: "all" (every near branch kind),
 * "calls" (calls and returns only, so the 32 entries reach further back)
 * or "far" (far branches only: SYSCALL entries from user space,
 * interrupts).  Branches ending in CPL0 only.  The host traces the guest between our READY and DONE lines:
 * we wait for its "go" line on stdin before enabling LBR, and for another
 * line after DONE before printing (printing is slow under the trace).
 */
static int xcheck(int nmodes, char **modes)
{
	char line[64];
	int m;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (m = 0; m < nmodes; m++) {
		struct cfg c = { .kernel = true, .kinds = ALL_NEAR };
		struct br got[NR];
		uint64_t on, off;
		uint32_t msr;
		int i, n;

		if (!strcmp(modes[m], "calls"))
			c.kinds = K(REL_CALL) | K(IND_CALL) | K(RET);
		if (!strcmp(modes[m], "far"))
			c.kinds = K(FAR);
		lbr_clear();
		msr = lbr_program(&c, &on, &off);
		printf("LBRLAB-XCHECK-READY %s\n", modes[m]);
		if (!fgets(line, sizeof(line), stdin))
			return 2;
		wrmsr(msr, on);
		xcheck_work();
		wrmsr(msr, off);
		n = lbr_read(got);
		printf("LBRLAB-XCHECK-DONE %s\n", modes[m]);
		if (!fgets(line, sizeof(line), stdin))
			return 2;
		printf("XCHECK %s mode=%s n=%d\n", modes[m],
		       arch ? "arch" : "legacy", n);
		for (i = 0; i < n; i++)
			printf("LBR %d %016" PRIx64 " %016" PRIx64 " %016"
			       PRIx64 "\n", i, got[i].from, got[i].to,
			       got[i].info);
	}
	return 0;
}

/* The lab PMU's MSRs (pmu=on): migrate() and the PMU checks below */
#define MSR_PERFEVTSEL0		0x186
#define MSR_A_PMC0		0x4c1
#define MSR_GLOBAL_STATUS	0x38e
#define MSR_GLOBAL_CTRL		0x38f
#define MSR_GLOBAL_OVF_CTRL	0x390
#define GLOBAL_STATUS_LBR_FRZ	(1ULL << 58)
#define DEBUGCTL_LBR		(1ULL << 0)
#define DEBUGCTL_FRZ_LBR_ON_PMI	(1ULL << 11)
/*
 * AMD PerfMonV2 (EPYC-Genoa-LBR,pmu=on; patch 0008): PERF_CTLi =
 * 0xc0010200 + 2i, PERF_CTRi = 0xc0010201 + 2i, the K7 MSRs aliasing
 * counters 0-3, and PerfCntrGlobalStatus/Ctl/StatusClr/StatusSet
 * (arch/x86/include/asm/msr-index.h).  LBRSF is bit 58, as Intel's LBR_FRZ.
 */
#define MSR_AMD_PERF_CTL	0xc0010200
#define MSR_AMD_PERF_CTR	0xc0010201
#define MSR_K7_EVNTSEL0		0xc0010000
#define MSR_K7_PERFCTR0		0xc0010004
#define MSR_AMD_GLOBAL_STATUS	0xc0000300
#define MSR_AMD_GLOBAL_CTL	0xc0000301
#define MSR_AMD_GLOBAL_CLR	0xc0000302
#define MSR_AMD_GLOBAL_SET	0xc0000303
#define AMD_NUM_PMC		6

/*
 * Migration: LBR stays enabled while the host migrates the VM (the guest
 * blocks in read(0) inside lbr_mig).  The entries recorded before must
 * survive, and recording must go on after (HF_LBR restored).
 */
static int migrate(void)
{
	const struct cfg c = { .user = true, .kinds = ALL_NEAR };
	const struct br want[] = {
		{ U(lbr_mig_b1), U(lbr_mig_L1), 0, REL_JMP },
		{ U(lbr_mig_b2), U(lbr_mig_F), 0, REL_CALL },
		{ U(lbr_mig_b3), U(lbr_mig_r1), 0, RET },
		{ U(lbr_mig_b4), U(lbr_mig_L2), 0, REL_JMP },
		{ U(lbr_mig_b5), U(lbr_mig_F), 0, REL_CALL },
		{ U(lbr_mig_b3), U(lbr_mig_r2), 0, RET },
	};
	struct br got[NR];
	unsigned int a, b, cx, d;
	uint64_t pmc = 0, gctl = 0, start = 1ULL << 44;
	/* counter 3's MSRs: Intel's, or AMD's PERF_CTL3/CTR3 (patch 0008) */
	uint32_t sel3 = MSR_PERFEVTSEL0 + 3, ctr3 = MSR_A_PMC0 + 3;
	uint32_t glob = MSR_GLOBAL_CTRL;
	bool pmu;
	int ng;

	setvbuf(stdout, NULL, _IONBF, 0);
	/*
	 * With the lab PMU (pmu=on), GP counter 3 (perf leaves it alone)
	 * counts user instructions across the migration, from 2^44: the
	 * destination must go on from the source's value
	 * (cpu/pmu_lab; AMD PerfMonV2: cpu/amd_pmu_lab), not from 0.
	 */
	__cpuid(0, a, b, cx, d);
	pmu = false;
	if (amd) {
		__cpuid(0x80000022, a, b, cx, d);
		pmu = a & 1;		/* PerfMonV2 */
		sel3 = MSR_AMD_PERF_CTL + 2 * 3;
		ctr3 = MSR_AMD_PERF_CTR + 2 * 3;
		glob = MSR_AMD_GLOBAL_CTL;
	} else if (a >= 0xa) {
		__cpuid_count(0xa, 0, a, b, cx, d);
		pmu = (a & 0xff) >= 2;
	}
	if (pmu) {
		gctl = rdmsr(glob);
		wrmsr(sel3, 0);
		wrmsr(ctr3, start);
		wrmsr(glob, gctl | 8);
		/* instructions retired (0xC0, both vendors), USR, EN */
		wrmsr(sel3, 0xc0 | (1 << 16) | (1 << 22));
	}
	ng = run(lbr_mig, &c, got);
	if (pmu) {
		pmc = rdmsr(ctr3);
		wrmsr(sel3, 0);
		wrmsr(glob, gctl);
		result(pmc > start && pmc < start + 10000000,
		       "pmu: counter 3 went on counting across the migration "
		       "(%#" PRIx64 ", started at %#" PRIx64 ")", pmc, start);
	}
	result(same(got, ng, want, 6), "3 branches before and 3 after a "
	       "migration, exact from/to/info (%d entries)", ng);
	if (!same(got, ng, want, 6)) {
		struct br exp[6];

		memcpy(exp, want, sizeof(exp));
		fill_info(exp, 6);
		dump("expected (info by the lab's rule)", exp, 6);
		dump("LBR", got, ng);
	}
	return n_fail ? 1 : 0;
}

static void __attribute__((noinline)) bench_fn(void)
{
	__asm__ volatile("");
}

static double bench_loop(long n)
{
	struct timespec a, b;
	long i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		bench_fn();
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
}

/* Rough cost of recording: a call/ret/jcc loop with LBR off and on */
static void bench(long n)
{
	const struct cfg c = { .user = true, .kinds = ALL_NEAR };
	uint64_t on, off;
	uint32_t msr;
	double t_off, t_on;

	lbr_clear();
	msr = lbr_program(&c, &on, &off);
	bench_loop(n / 10);
	t_off = bench_loop(n);
	wrmsr(msr, on);
	t_on = bench_loop(n);
	wrmsr(msr, off);
	printf("BENCH %ld iterations (3 taken branches each): LBR off %.3fs, "
	       "on %.3fs (%.1f ns per recorded branch)\n", n, t_off, t_on,
	       (t_on - t_off) * 1e9 / (3.0 * n));
}


/* ---- lab PMU (pmu=on) ------------------------------------------------ */


/* The counter-0 and global MSRs of the freeze check, per vendor */
struct pmu_msrs {
	uint32_t ctl0, ctr0, status, ctrl, clear;
};

static struct pmu_msrs pmu_msrs(void)
{
	if (amd)
		return (struct pmu_msrs){ MSR_AMD_PERF_CTL, MSR_AMD_PERF_CTR,
					  MSR_AMD_GLOBAL_STATUS,
					  MSR_AMD_GLOBAL_CTL,
					  MSR_AMD_GLOBAL_CLR };
	return (struct pmu_msrs){ MSR_PERFEVTSEL0, MSR_A_PMC0,
				  MSR_GLOBAL_STATUS, MSR_GLOBAL_CTRL,
				  MSR_GLOBAL_OVF_CTRL };
}

/* lbrtest-asm.S: 2n + 3 instructions and n + 2 branches with the call */
void pmu_loop(long n);
extern const char pmu_loop_top[], pmu_loop_br[], pmu_loop_end[];
#define LOOP_INSNS(n)		(2 * (uint64_t)(n) + 3)
#define LOOP_BRANCHES(n)	((uint64_t)(n) + 2)

/*
 * Tolerances (tests/lbr-lab/README.md, "Lab PMU"): a count over
 * pmu_loop(n) bracketed by PERF_EVENT_IOC_ENABLE/DISABLE also holds the
 * user-space instructions of the two ioctl() calls around it (a few
 * dozen), so the absolute count may exceed the loop's by up to
 * PMU_SLACK; the difference between two runs of different n cancels
 * them and must be exact.
 */
#define PMU_SLACK		200

static long perf_open(struct perf_event_attr *a)
{
	return syscall(SYS_perf_event_open, a, 0, 0, -1, 0);
}

static void pmu_attr(struct perf_event_attr *a, uint64_t config, bool user,
		     bool kernel)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_HARDWARE;
	a->config = config;
	a->disabled = 1;
	a->exclude_user = !user;
	a->exclude_kernel = !kernel;
	a->exclude_hv = 1;
}

/* Count CONFIG over pmu_loop(n) (or N getppid() calls if SYSCALLS) */
static int64_t pmu_count(uint64_t config, bool user, bool kernel, long n,
			 bool syscalls)
{
	struct perf_event_attr a;
	uint64_t v = 0;
	long fd, i;

	pmu_attr(&a, config, user, kernel);
	fd = perf_open(&a);
	if (fd < 0) {
		printf("# perf_event_open(config %" PRIu64 "): %s\n", config,
		       strerror(errno));
		return -1;
	}
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	if (syscalls) {
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else {
		pmu_loop(n);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &v, 8) != 8)
		v = (uint64_t)-1;
	close(fd);
	return (int64_t)v;
}

static void pmu_counting(void)
{
	const long n1 = 100000, n2 = 300000;
	int64_t i1, i2, b1, b2, ku, kk;

	i1 = pmu_count(PERF_COUNT_HW_INSTRUCTIONS, true, false, n1, false);
	i2 = pmu_count(PERF_COUNT_HW_INSTRUCTIONS, true, false, n2, false);
	b1 = pmu_count(PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true, false, n1, false);
	b2 = pmu_count(PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true, false, n2, false);
	printf("# PMU-COUNT instructions:u pmu_loop(%ld) %" PRId64 " (loop %" PRIu64
	       "), pmu_loop(%ld) %" PRId64 " (loop %" PRIu64 ")\n", n1, i1,
	       LOOP_INSNS(n1), n2, i2, LOOP_INSNS(n2));
	printf("# PMU-COUNT branches:u pmu_loop(%ld) %" PRId64 " (loop %" PRIu64
	       "), pmu_loop(%ld) %" PRId64 " (loop %" PRIu64 ")\n", n1, b1,
	       LOOP_BRANCHES(n1), n2, b2, LOOP_BRANCHES(n2));
	result(i1 >= (int64_t)LOOP_INSNS(n1) &&
	       i1 <= (int64_t)LOOP_INSNS(n1) + PMU_SLACK,
	       "pmu: instructions:u over pmu_loop(%ld) = %" PRId64
	       ", want %" PRIu64 "..+%d", n1, i1, LOOP_INSNS(n1), PMU_SLACK);
	result(i2 - i1 == 2 * (n2 - n1),
	       "pmu: instructions:u, pmu_loop(%ld) - pmu_loop(%ld) = %" PRId64
	       ", want exactly %ld", n2, n1, i2 - i1, 2 * (n2 - n1));
	result(b1 >= (int64_t)LOOP_BRANCHES(n1) &&
	       b1 <= (int64_t)LOOP_BRANCHES(n1) + PMU_SLACK,
	       "pmu: branches:u over pmu_loop(%ld) = %" PRId64
	       ", want %" PRIu64 "..+%d", n1, b1, LOOP_BRANCHES(n1), PMU_SLACK);
	result(b2 - b1 == n2 - n1,
	       "pmu: branches:u, pmu_loop(%ld) - pmu_loop(%ld) = %" PRId64
	       ", want exactly %ld", n2, n1, b2 - b1, n2 - n1);

	/*
	 * USR/OS: 2000 getppid() system calls.  User-only counting sees only
	 * the few user instructions of each call; kernel-only sees the
	 * syscall path (hundreds each), and no loop instructions.
	 */
	ku = pmu_count(PERF_COUNT_HW_INSTRUCTIONS, true, false, 2000, true);
	kk = pmu_count(PERF_COUNT_HW_INSTRUCTIONS, false, true, 2000, true);
	printf("# PMU-COUNT 2000 getppid(): instructions:u %" PRId64
	       ", instructions:k %" PRId64 "\n", ku, kk);
	result(ku > 0 && ku < 2000 * 40,
	       "pmu: user-only count of 2000 syscalls excludes the kernel (%"
	       PRId64 " < 80000)", ku);
	result(kk > 2000 * 40,
	       "pmu: kernel-only count of 2000 syscalls counts the kernel (%"
	       PRId64 " > 80000)", kk);
	/* Only interrupts (the timer) run kernel code during the loop */
	kk = pmu_count(PERF_COUNT_HW_INSTRUCTIONS, false, true, n2, false);
	result(kk >= 0 && kk < (int64_t)LOOP_INSNS(n2) / 10,
	       "pmu: kernel-only count over pmu_loop(%ld) excludes the loop (%"
	       PRId64 " < %" PRIu64 ")", n2, kk, LOOP_INSNS(n2) / 10);
}

struct pmu_samples {
	long n, in_loop, with_stack, entries, backedges;
	uint64_t first_stack[64][2];
	int first_nr;
};

/* Sample CONFIG every PERIOD user instructions over pmu_loop(n) */
static int64_t pmu_sample(long n, uint64_t period, bool stack,
			  struct pmu_samples *r)
{
	const size_t pg = 4096, data = 64 * pg;
	struct perf_event_attr a;
	struct perf_event_mmap_page *mp;
	uint64_t count = 0, head, tail;
	char *base;
	long fd;

	memset(r, 0, sizeof(*r));
	pmu_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, true, false);
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP;
	if (stack) {
		a.sample_type |= PERF_SAMPLE_BRANCH_STACK;
		a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY |
				       PERF_SAMPLE_BRANCH_USER;
	}
	fd = perf_open(&a);
	if (fd < 0) {
		printf("# perf_event_open(sampling%s): %s\n",
		       stack ? ", branch stack" : "", strerror(errno));
		return -1;
	}
	base = mmap(NULL, pg + data, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		printf("# mmap: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	mp = (void *)base;
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	pmu_loop(n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, 8) != 8)
		count = 0;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		char rec[8192];
		size_t i;

		for (i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = base[pg + (tail + i) % data];
		if (h.size < sizeof(h) || h.size > sizeof(rec))
			break;
		for (i = 0; i < h.size; i++)
			rec[i] = base[pg + (tail + i) % data];
		tail += h.size;
		if (h.type != PERF_RECORD_SAMPLE)
			continue;
		{
			uint64_t *p = (uint64_t *)(rec + sizeof(h));
			uint64_t ip = p[0];

			r->n++;
			if (ip >= (uint64_t)pmu_loop &&
			    ip <= (uint64_t)pmu_loop_end)
				r->in_loop++;
			if (stack) {
				uint64_t nr = p[1], k;
				struct perf_branch_entry *e = (void *)&p[2];

				if (nr)
					r->with_stack++;
				for (k = 0; k < nr; k++) {
					r->entries++;
					if (e[k].from == (uint64_t)pmu_loop_br &&
					    e[k].to == (uint64_t)pmu_loop_top)
						r->backedges++;
					if (r->n == 2 && k < 64) {
						r->first_stack[k][0] = e[k].from;
						r->first_stack[k][1] = e[k].to;
						r->first_nr = k + 1;
					}
				}
			}
		}
	}
	munmap(base, pg + data);
	close(fd);
	return (int64_t)count;
}

static void pmu_sampling(void)
{
	const long n = 500000;
	const uint64_t period = 10007;
	struct pmu_samples r;
	int64_t count, want;
	int k;

	count = pmu_sample(n, period, false, &r);
	want = count / (int64_t)period;
	printf("# PMU-SAMPLE instructions:u period %" PRIu64 " over pmu_loop(%ld):"
	       " count %" PRId64 ", %ld samples (%ld in pmu_loop)\n", period, n,
	       count, r.n, r.in_loop);
	result(count >= (int64_t)LOOP_INSNS(n) && r.n >= want - 1 &&
	       r.n <= want + 1,
	       "pmu: sampling every %" PRIu64 " instructions:u over %" PRId64
	       " gives %ld samples, want %" PRId64 " +-1", period, count, r.n,
	       want);
	result(r.n > 0 && r.in_loop >= r.n - 2,
	       "pmu: %ld of %ld sample IPs are in pmu_loop", r.in_loop, r.n);

	count = pmu_sample(n, period, true, &r);
	printf("# PMU-BRANCH-STACK %ld samples, %ld with a branch stack, %ld "
	       "entries, %ld of them the back-edge %p -> %p\n", r.n,
	       r.with_stack, r.entries, r.backedges, (void *)pmu_loop_br,
	       (void *)pmu_loop_top);
	for (k = 0; k < r.first_nr && k < 4; k++)
		printf("# PMU-BRANCH-STACK sample 2 entry %d: %#" PRIx64
		       " -> %#" PRIx64 "\n", k, r.first_stack[k][0],
		       r.first_stack[k][1]);
	result(count >= (int64_t)LOOP_INSNS(n) && r.n > 0 &&
	       r.n >= count / (int64_t)period - 1 && r.with_stack == r.n &&
	       r.entries >= r.n * (depth() / 2) &&
	       r.backedges >= r.entries * 9 / 10,
	       "pmu: PERF_SAMPLE_BRANCH_STACK: %ld samples, each with a "
	       "branch stack (%ld entries, at least %d a sample on average: "
	       "one may hold fewer, after perf reset the LBR), %ld of them "
	       "are pmu_loop's back-edge", r.n, r.entries, depth() / 2,
	       r.backedges);
}

/* The LBR's newest entry and (legacy) TOS, for the freeze check */
static void lbr_newest(uint64_t *tos, uint64_t *from, uint64_t *to)
{
	if (amd) {
		/* Entry 0 is the newest; the flag bits dropped */
		*tos = 0;
		*from = amd_ip(rdmsr(MSR_AMD_LBR_FROM));
		*to = amd_ip(rdmsr(MSR_AMD_LBR_FROM + 1));
		return;
	}
	if (arch) {
		*tos = 0;
		*from = rdmsr(MSR_ARCH_LBR_FROM);
		*to = rdmsr(MSR_ARCH_LBR_TO);
		return;
	}
	*tos = rdmsr(MSR_LBR_TOS);
	*from = rdmsr(MSR_LBR_FROM + *tos);
	*to = rdmsr(MSR_LBR_TO + *tos);
}

/*
 * FREEZE_LBRS_ON_PMI at the MSR level, through msr.ko, with no perf
 * event active (the guest boots with nmi_watchdog=0, so perf's NMI
 * handler leaves the PMI alone and the kernel reports an unknown NMI):
 * counter 0 counts user instructions with its PMI bit set, starting 3000
 * before overflow; the LBR records user branches with the freeze bit
 * set.  After pmu_loop(5000) the PMI has frozen the LBR: the counter's
 * overflow bit is set in PERF_GLOBAL_STATUS, and more branches leave the
 * LBR untouched.  Version 4 (streamlined freeze) sets LBR_FRZ (58), and
 * clearing it through PERF_GLOBAL_OVF_CTRL lets the LBR record again;
 * version 3 (legacy freeze, lbr-lab-pmu-version=3) clears DEBUGCTL.LBR
 * instead, and setting it again does.  AMD (PerfMonV2 with
 * LbrAndPmcFreeze) works as version 4 with its own MSRs: PERF_CTL0/CTR0,
 * PerfCntrGlobalCtl, DebugCtl.FLBRI (bit 11, Linux's
 * DEBUGCTLMSR_FREEZE_LBRS_ON_PMI) and LBRV2EN; the PMI sets LBRSF (58)
 * in PerfCntrGlobalStatus, and PerfCntrGlobalStatusClr clears it.
 */
static void pmu_freeze(void)
{
	uint64_t st, tos0, f0, t0, tos1, f1, t1, tos2, f2, t2, gctl, dbg;
	const struct pmu_msrs m = pmu_msrs();
	unsigned int a, b, c, d;
	bool v4;
	char ver[32];

	__cpuid_count(0xa, 0, a, b, c, d);
	v4 = amd || (a & 0xff) >= 4;
	if (amd)
		snprintf(ver, sizeof(ver), "AMD PerfMonV2");
	else
		snprintf(ver, sizeof(ver), "perfmon v%u", a & 0xff);

	lbr_clear();
	gctl = rdmsr(m.ctrl);
	wrmsr(m.clear, rdmsr(m.status));
	wrmsr(m.ctl0, 0);
	wrmsr(m.ctr0, (1ULL << 48) - 3000);
	/* Instructions retired (0xC0), USR, INT, EN: the same on both */
	wrmsr(m.ctl0, 0xc0 | (1 << 16) | (1 << 20) | (1 << 22));
	if (amd) {
		wrmsr(MSR_AMD_LBR_SELECT, 1);	/* suppress CPL0 */
		wrmsr(MSR_DEBUGCTL, DEBUGCTL_FRZ_LBR_ON_PMI);
		wrmsr(MSR_AMD_DBG_EXTN_CFG, AMD_LBRV2EN);
	} else if (arch) {
		/* LBREn, USR, all branch types */
		wrmsr(MSR_DEBUGCTL, DEBUGCTL_FRZ_LBR_ON_PMI);
		wrmsr(MSR_ARCH_LBR_CTL, 1 | (1 << 2) | (0x7fULL << 16));
	} else {
		wrmsr(MSR_LBR_SELECT, 1);	/* suppress CPL0 */
		wrmsr(MSR_DEBUGCTL, DEBUGCTL_LBR | DEBUGCTL_FRZ_LBR_ON_PMI);
	}
	wrmsr(m.ctrl, gctl | 1);
	pmu_loop(5000);		/* 10003 instructions: overflows inside */
	st = rdmsr(m.status);
	dbg = rdmsr(MSR_DEBUGCTL);
	lbr_newest(&tos0, &f0, &t0);
	pmu_loop(1000);
	lbr_newest(&tos1, &f1, &t1);
	printf("# PMU-FREEZE (%s) global status %#" PRIx64
	       ", DEBUGCTL %#" PRIx64 ", counter 0 %#" PRIx64
	       "; newest LBR tos %" PRIu64 " %#" PRIx64 " -> %#" PRIx64
	       ", after pmu_loop(1000) tos %" PRIu64 " %#" PRIx64 " -> %#"
	       PRIx64 "\n", ver, st, dbg, rdmsr(m.ctr0), tos0, f0, t0,
	       tos1, f1, t1);
	if (v4)
		result((st & GLOBAL_STATUS_LBR_FRZ) && (st & 1),
		       "pmu: counter 0 overflowed with a PMI: %s %#"
		       PRIx64 " has %s (58) and bit 0",
		       amd ? "PerfCntrGlobalStatus" : "PERF_GLOBAL_STATUS", st,
		       amd ? "LBRSF" : "LBR_FRZ");
	else
		result(!(st & GLOBAL_STATUS_LBR_FRZ) && (st & 1) &&
		       dbg == DEBUGCTL_FRZ_LBR_ON_PMI,
		       "pmu: v3: counter 0 overflowed with a PMI: PERF_GLOBAL_STATUS %#"
		       PRIx64 " has bit 0 and no LBR_FRZ, DEBUGCTL %#" PRIx64
		       " lost only LBR (legacy freeze)", st, dbg);
	result(f0 == (uint64_t)pmu_loop_br && t0 == (uint64_t)pmu_loop_top,
	       "pmu: the frozen LBR's newest entry is pmu_loop's back-edge "
	       "(%#" PRIx64 " -> %#" PRIx64 ")", f0, t0);
	result(tos1 == tos0 && f1 == f0 && t1 == t0 &&
	       (!v4 || (rdmsr(m.status) & GLOBAL_STATUS_LBR_FRZ)),
	       "pmu: while frozen the LBR records nothing");
	if (v4) {
		wrmsr(m.clear, GLOBAL_STATUS_LBR_FRZ | 1);
	} else {
		wrmsr(m.clear, 1);
		wrmsr(MSR_DEBUGCTL, DEBUGCTL_LBR | DEBUGCTL_FRZ_LBR_ON_PMI);
	}
	st = rdmsr(m.status);
	pmu_loop(1000);
	lbr_newest(&tos2, &f2, &t2);
	if (amd) {
		wrmsr(MSR_AMD_DBG_EXTN_CFG, 0);
		wrmsr(MSR_DEBUGCTL, 0);
		wrmsr(MSR_AMD_LBR_SELECT, 0);
	} else if (arch) {
		wrmsr(MSR_ARCH_LBR_CTL, 0);
	} else {
		wrmsr(MSR_DEBUGCTL, 0);
	}
	wrmsr(m.ctl0, 0);
	wrmsr(m.ctrl, gctl);
	printf("# PMU-FREEZE after unfreezing: status %#" PRIx64
	       ", newest LBR tos %" PRIu64 " %#" PRIx64 " -> %#" PRIx64 "\n",
	       st, tos2, f2, t2);
	result(!(st & GLOBAL_STATUS_LBR_FRZ) &&
	       (arch || amd ? (f2 != f1 || t2 != t1) : tos2 != tos1),
	       "pmu: after %s the LBR records again (newest %#" PRIx64
	       " -> %#" PRIx64 ")",
	       amd ? "PerfCntrGlobalStatusClr clears LBRSF" :
	       v4 ? "PERF_GLOBAL_OVF_CTRL clears LBR_FRZ" :
	       "DEBUGCTL.LBR is set again", f2, t2);
}

/*
 * AMD (EPYC-Genoa-LBR,pmu=on): the registers as Linux 6.1's
 * amd_core_pmu_init(), check_hw_exists() and amd_pmu_v2_handle_irq() find
 * them, at the MSR level with no perf event active: CPUID
 * 0x80000001 ECX[23] PerfCtrExtCore and 0x80000022 (PerfMonV2, LbrExtV2,
 * LbrAndPmcFreeze; 6 counters, 16 LBR entries); each PERF_CTR keeps a
 * 48-bit value and the K7 MSRs alias counters 0-3; reserved PERF_CTL and
 * PerfCntrGlobalCtl bits and writes to PerfCntrGlobalStatus raise #GP;
 * PerfCntrGlobalStatusSet/Clr set and clear CNT_OF and LBRSF and ignore
 * reserved bits (Linux acknowledges with ~status).
 */
static void pmu_amd_regs(void)
{
	unsigned int a, b, c, d;
	uint64_t st0, st1, st2;
	int i, bad = 0;

	__cpuid(0x80000001, a, b, c, d);
	result(c & (1u << 23), "pmu: CPUID 0x80000001 ECX %#x has "
	       "PerfCtrExtCore (bit 23)", c);
	__cpuid(0x80000022, a, b, c, d);
	result(a == 7 && b == (AMD_NUM_PMC | AMD_NR << 4),
	       "pmu: CPUID 0x80000022 EAX %#x (want 7: PerfMonV2, LbrExtV2, "
	       "LbrAndPmcFreeze), EBX %#x (want %#x: %d core counters, %d "
	       "LBR entries)", a, b, AMD_NUM_PMC | AMD_NR << 4, AMD_NUM_PMC,
	       AMD_NR);

	for (i = 0; i < AMD_NUM_PMC; i++) {
		uint64_t want = 0x8123456789a0ULL + i;

		wrmsr(MSR_AMD_PERF_CTR + 2 * i, want);
		if (rdmsr(MSR_AMD_PERF_CTR + 2 * i) != want)
			bad++;
		if (i < 4 && rdmsr(MSR_K7_PERFCTR0 + i) != want)
			bad++;
		if (i < 4) {
			/* USR and OS, no EN: counts nothing */
			wrmsr(MSR_K7_EVNTSEL0 + i, 0x4300c0 & ~(1 << 22));
			if (rdmsr(MSR_AMD_PERF_CTL + 2 * i) !=
			    (0x4300c0 & ~(1 << 22)))
				bad++;
			wrmsr(MSR_K7_EVNTSEL0 + i, 0);
		}
		wrmsr(MSR_AMD_PERF_CTR + 2 * i, 0);
	}
	result(!bad, "pmu: PERF_CTR0-5 (0xc0010201 + 2i) keep 48-bit values, "
	       "the K7 PerfCtr0-3 and PerfEvtSel0-3 alias counters 0-3 (%d "
	       "mismatches)", bad);
	result(wrmsr_try(MSR_AMD_PERF_CTL, 1ULL << 19) == -EIO &&
	       wrmsr_try(MSR_AMD_PERF_CTL + 10, 1ULL << 42) == -EIO &&
	       wrmsr_try(MSR_AMD_GLOBAL_CTL, 1ULL << AMD_NUM_PMC) == -EIO &&
	       wrmsr_try(MSR_AMD_GLOBAL_STATUS, 1) == -EIO,
	       "pmu: reserved PERF_CTL bits (19, 42), PerfCntrGlobalCtl bit 6 "
	       "and a write to the read-only PerfCntrGlobalStatus raise #GP");

	st0 = rdmsr(MSR_AMD_GLOBAL_STATUS);
	wrmsr(MSR_AMD_GLOBAL_SET, (1ULL << 5) | GLOBAL_STATUS_LBR_FRZ |
				  (1ULL << 40));
	st1 = rdmsr(MSR_AMD_GLOBAL_STATUS);
	wrmsr(MSR_AMD_GLOBAL_CLR, ~0ULL);
	st2 = rdmsr(MSR_AMD_GLOBAL_STATUS);
	result(st0 == 0 && st1 == ((1ULL << 5) | GLOBAL_STATUS_LBR_FRZ) &&
	       st2 == 0,
	       "pmu: PerfCntrGlobalStatus %#" PRIx64 ", after StatusSet of "
	       "CNT_OF 5, LBRSF and reserved bit 40 %#" PRIx64 ", after "
	       "StatusClr of all ones %#" PRIx64, st0, st1, st2);
}

/*
 * RDPMC as perf's user page offers it (cap_user_rdpmc, index): an
 * instructions:u counter read from user space before and after
 * pmu_loop(n) advances by the loop's 2n + 3 instructions plus the few
 * between the two reads.
 */
static void pmu_rdpmc(void)
{
	const long n = 100000;
	struct perf_event_attr a;
	struct perf_event_mmap_page *mp;
	uint64_t c0 = 0, c1 = 0, diff;
	uint32_t idx = 0, lo, hi;
	bool cap = false;
	long fd;

	pmu_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, true, false);
	fd = perf_open(&a);
	if (fd < 0) {
		printf("# perf_event_open: %s\n", strerror(errno));
	} else {
		mp = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (mp != MAP_FAILED) {
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
			cap = mp->cap_user_rdpmc;
			idx = mp->index;
			if (cap && idx) {
				__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi)
						 : "c"(idx - 1));
				c0 = (uint64_t)hi << 32 | lo;
				pmu_loop(n);
				__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi)
						 : "c"(idx - 1));
				c1 = (uint64_t)hi << 32 | lo;
			}
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
			munmap(mp, 4096);
		}
		close(fd);
	}
	diff = (c1 - c0) & ((1ULL << 48) - 1);
	result(cap && idx && diff >= LOOP_INSNS(n) &&
	       diff <= LOOP_INSNS(n) + 20,
	       "pmu: RDPMC %#x (perf's user page, cap_user_rdpmc %d) around "
	       "pmu_loop(%ld) advances by %" PRIu64 ", want %" PRIu64 "..+20",
	       idx ? idx - 1 : 0, cap, n, diff, LOOP_INSNS(n));
}

static int pmu_tests(void)
{
	if (amd)
		pmu_amd_regs();
	pmu_counting();
	pmu_rdpmc();
	pmu_sampling();
	pmu_freeze();
	printf("# lbrtest pmu %s: ok %d, not ok %d\n", flavour(), n_ok,
	       n_fail);
	return n_fail ? 1 : 0;
}

/*
 * Cost of counting: pmu_loop(n) (two instructions per TB) timed with no
 * counter enabled (no TB calls the counting helper) and with an
 * instructions counter (user and kernel) enabled, alternately five
 * times each; the fastest of each is kept (the host is shared).
 */
static double pmu_time(long n)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	pmu_loop(n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
}

static void pmu_bench(long n)
{
	struct perf_event_attr a;
	double off = 1e9, on = 1e9, t;
	long fd;
	int r;

	pmu_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, true, true);
	fd = perf_open(&a);
	if (fd < 0) {
		printf("# perf_event_open: %s\n", strerror(errno));
		return;
	}
	pmu_loop(n / 10);
	for (r = 0; r < 5; r++) {
		t = pmu_time(n);
		if (t < off)
			off = t;
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		t = pmu_time(n);
		if (t < on)
			on = t;
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	}
	close(fd);
	printf("PMU-BENCH pmu_loop(%ld) (one 2-instruction TB per iteration), "
	       "best of 5: no counter %.3fs, counting %.3fs (x%.2f, %.1f ns "
	       "per TB)\n", n, off, on, on / off, (on - off) * 1e9 / n);
}

static void info(void)
{
	unsigned int a, b, c, d;

	__cpuid(1, a, b, c, d);
	printf("INFO cpuid1 ecx=%#x pdcm=%d family/model/stepping=%#x\n", c,
	       !!(c & (1u << 15)), a);
	__cpuid_count(7, 0, a, b, c, d);
	printf("INFO cpuid7 edx=%#x arch_lbr=%d\n", d, !!(d & (1u << 19)));
	__cpuid(0, a, b, c, d);
	if (a >= 0x1c) {
		__cpuid_count(0x1c, 0, a, b, c, d);
		printf("INFO cpuid1c eax=%#x ebx=%#x ecx=%#x\n", a, b, c);
	}
	__cpuid(0, a, b, c, d);
	if (a >= 0xa) {
		__cpuid_count(0xa, 0, a, b, c, d);
		printf("INFO cpuida eax=%#x (arch perfmon version %u)\n", a,
		       a & 0xff);
	}
	printf("INFO perf_capabilities=%#" PRIx64 "\n",
	       rdmsr(MSR_PERF_CAPABILITIES));
}

int main(int argc, char **argv)
{
	unsigned int a, b, c, d;
	cpu_set_t set;

	if (argc < 2) {
		fprintf(stderr, "usage: lbrtest asm | xcheck all|calls... | migrate | info\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 2;
	}
	msr_fd = open("/dev/cpu/0/msr", O_RDWR);
	if (msr_fd < 0) {
		perror("/dev/cpu/0/msr");
		return 2;
	}
	__cpuid_count(7, 0, a, b, c, d);
	arch = d & (1u << 19);
	/* An AMD CPU with LbrExtV2: CPUID 0x80000022 EAX bit 1 */
	__cpuid(0, a, b, c, d);
	if (b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163) {
		__cpuid(0x80000000, a, b, c, d);
		if (a >= 0x80000022) {
			__cpuid(0x80000022, a, b, c, d);
			amd = a & 2;
		}
	}

	if (!strcmp(argv[1], "asm")) {
		test_asm();
		printf("# lbrtest %s: ok %d, not ok %d\n", flavour(), n_ok,
		       n_fail);
		return n_fail ? 1 : 0;
	}
	if (!strcmp(argv[1], "xcheck") && argc > 2)
		return xcheck(argc - 2, argv + 2);
	if (!strcmp(argv[1], "bench"))
		return bench(argc > 2 ? atol(argv[2]) : 20000000), 0;
	if (!strcmp(argv[1], "migrate"))
		return migrate();
	if (!strcmp(argv[1], "pmu"))
		return pmu_tests();
	if (!strcmp(argv[1], "pmu-bench"))
		return pmu_bench(argc > 2 ? atol(argv[2]) : 20000000), 0;
	if (!strcmp(argv[1], "info")) {
		info();
		return 0;
	}
	fprintf(stderr, "unknown command %s\n", argv[1]);
	return 2;
}
