// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fputest: guest check that a kernel using XSAVES/XRSTORS (or whatever it
 * uses) keeps each process's SSE/AVX/x87 state across context switches
 * and signal delivery.  Static; run in the LBR lab guest.
 *
 *   fputest switch NPROC ITERS   NPROC processes on one CPU, each with its
 *                                own ymm0-15/mxcsr/x87 values, sched_yield()
 *                                from inside asm and check the registers
 *   fputest signal ITERS         a SIGALRM-style handler (raise()) that
 *                                clobbers all ymm regs; state back after it
 *   fputest xsavec               user-mode XSAVEC layout + compacted XRSTOR
 *   fputest xsaves-user          XSAVES at CPL 3 must fault (SIGSEGV)
 *
 * Prints "ok - ..." / "not ok - ..." lines; exit status 0 when all pass.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <signal.h>
#include <setjmp.h>
#include <unistd.h>
#include <sched.h>
#include <cpuid.h>
#include <sys/wait.h>
#include <sys/syscall.h>

static int failures;

static void check(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

/* 16 ymm registers, 32 bytes each */
struct ymmset { uint64_t q[16][4]; } __attribute__((aligned(32)));

#define LOAD_YMM(p) asm volatile( \
	"vmovdqu 0(%0), %%ymm0\n\t vmovdqu 32(%0), %%ymm1\n\t" \
	"vmovdqu 64(%0), %%ymm2\n\t vmovdqu 96(%0), %%ymm3\n\t" \
	"vmovdqu 128(%0), %%ymm4\n\t vmovdqu 160(%0), %%ymm5\n\t" \
	"vmovdqu 192(%0), %%ymm6\n\t vmovdqu 224(%0), %%ymm7\n\t" \
	"vmovdqu 256(%0), %%ymm8\n\t vmovdqu 288(%0), %%ymm9\n\t" \
	"vmovdqu 320(%0), %%ymm10\n\t vmovdqu 352(%0), %%ymm11\n\t" \
	"vmovdqu 384(%0), %%ymm12\n\t vmovdqu 416(%0), %%ymm13\n\t" \
	"vmovdqu 448(%0), %%ymm14\n\t vmovdqu 480(%0), %%ymm15\n\t" \
	:: "r"(p) : "memory")
#define STORE_YMM(p) asm volatile( \
	"vmovdqu %%ymm0, 0(%0)\n\t vmovdqu %%ymm1, 32(%0)\n\t" \
	"vmovdqu %%ymm2, 64(%0)\n\t vmovdqu %%ymm3, 96(%0)\n\t" \
	"vmovdqu %%ymm4, 128(%0)\n\t vmovdqu %%ymm5, 160(%0)\n\t" \
	"vmovdqu %%ymm6, 192(%0)\n\t vmovdqu %%ymm7, 224(%0)\n\t" \
	"vmovdqu %%ymm8, 256(%0)\n\t vmovdqu %%ymm9, 288(%0)\n\t" \
	"vmovdqu %%ymm10, 320(%0)\n\t vmovdqu %%ymm11, 352(%0)\n\t" \
	"vmovdqu %%ymm12, 384(%0)\n\t vmovdqu %%ymm13, 416(%0)\n\t" \
	"vmovdqu %%ymm14, 448(%0)\n\t vmovdqu %%ymm15, 480(%0)\n\t" \
	:: "r"(p) : "memory")

static void fill(struct ymmset *s, uint64_t seed)
{
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 4; j++)
			s->q[i][j] = seed * 0x9e3779b97f4a7c15ULL ^
				     ((uint64_t)i << 40) ^ ((uint64_t)j << 56) ^
				     (0x1111111111111111ULL * (j + 1));
}

static int diff(const struct ymmset *a, const struct ymmset *b, char *why,
		size_t n)
{
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 4; j++)
			if (a->q[i][j] != b->q[i][j]) {
				snprintf(why, n, "ymm%d q%d: %016llx, want %016llx",
					 i, j, (unsigned long long)b->q[i][j],
					 (unsigned long long)a->q[i][j]);
				return 1;
			}
	return 0;
}

/*
 * Load ymm0-15, MXCSR and an x87 value, yield with a raw syscall (no libc
 * code between load and store), store and compare.
 */
static int one_child(int id, int iters)
{
	struct ymmset want, got;
	char why[160];
	uint32_t mxcsr_want = 0x1f80 ^ ((id & 3) << 13), mxcsr_got; /* RC */
	double x87_want = 1.0 + id / 8.0, x87_got;
	long nyield = 0;

	for (int it = 0; it < iters; it++) {
		fill(&want, (uint64_t)id * 1000003 + it);
		memset(&got, 0, sizeof(got));
		asm volatile("ldmxcsr %0" :: "m"(mxcsr_want));
		asm volatile("fldl %0" :: "m"(x87_want));
		LOAD_YMM(&want);
		for (int k = 0; k < 3; k++) {
			long r;
			asm volatile("syscall" : "=a"(r)
				     : "0"((long)SYS_sched_yield)
				     : "rcx", "r11", "memory");
			nyield++;
		}
		STORE_YMM(&got);
		asm volatile("fstpl %0" : "=m"(x87_got));
		asm volatile("stmxcsr %0" : "=m"(mxcsr_got));
		if (diff(&want, &got, why, sizeof(why))) {
			printf("# child %d iteration %d: %s\n", id, it, why);
			return 1;
		}
		if (mxcsr_got != mxcsr_want || x87_got != x87_want) {
			printf("# child %d iteration %d: mxcsr %#x want %#x, "
			       "x87 %g want %g\n", id, it, mxcsr_got,
			       mxcsr_want, x87_got, x87_want);
			return 1;
		}
	}
	asm volatile("vzeroupper");
	return 0;
}

static void test_switch(int nproc, int iters)
{
	pid_t pids[64];
	int bad = 0;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (int i = 0; i < nproc; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(one_child(i, iters));
	}
	for (int i = 0; i < nproc; i++) {
		int st;

		waitpid(pids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	check(bad == 0, "%d processes x %d iterations keep ymm0-15, MXCSR and "
	      "x87 across sched_yield (%d failed)", nproc, iters, bad);
}

static volatile int handled;
static void clobber(int sig)
{
	static struct ymmset junk;

	(void)sig;
	fill(&junk, 0xdeadULL + handled);
	LOAD_YMM(&junk);
	handled++;
}

static void test_signal(int iters)
{
	struct ymmset want, got;
	char why[160];
	int bad = 0;

	signal(SIGUSR1, clobber);
	for (int it = 0; it < iters && !bad; it++) {
		fill(&want, 77 + it);
		LOAD_YMM(&want);
		/* raw kill(getpid(), SIGUSR1): the handler runs on return */
		long pid, r;
		asm volatile("syscall" : "=a"(pid) : "0"((long)SYS_getpid)
			     : "rcx", "r11", "memory");
		asm volatile("syscall" : "=a"(r)
			     : "0"((long)SYS_kill), "D"(pid), "S"((long)SIGUSR1)
			     : "rcx", "r11", "memory");
		STORE_YMM(&got);
		if (diff(&want, &got, why, sizeof(why))) {
			printf("# signal iteration %d: %s\n", it, why);
			bad = 1;
		}
	}
	check(!bad && handled == iters, "ymm0-15 survive %d signal handlers "
	      "that clobber them (%d handled)", iters, handled);
}

static void test_xsavec(void)
{
	static uint8_t area[4096] __attribute__((aligned(64)));
	unsigned a, b, c, d;
	uint64_t bv, comp, xcr0;
	struct ymmset want, got;
	char why[160];

	__cpuid_count(0xd, 1, a, b, c, d);
	printf("# CPUID.0xD.1: eax %#x ebx %u ecx %#x edx %#x\n", a, b, c, d);
	if (!(a & 2)) {
		check(0, "CPUID reports XSAVEC");
		return;
	}
	asm volatile("xgetbv" : "=a"(a), "=d"(d) : "c"(0));
	xcr0 = ((uint64_t)d << 32) | a;
	memset(area, 0, sizeof(area));
	fill(&want, 4242);
	LOAD_YMM(&want);
	asm volatile("xsavec %0" : "+m"(area) : "a"(0xff), "d"(0));
	memcpy(&bv, area + 512, 8);
	memcpy(&comp, area + 520, 8);
	printf("# XSAVEC: xcr0 %#llx xstate_bv %#llx xcomp_bv %#llx\n",
	       (unsigned long long)xcr0, (unsigned long long)bv,
	       (unsigned long long)comp);
	check(comp == ((xcr0 & 0xff) | 1ULL << 63),
	      "XSAVEC: XCOMP_BV = XCR0 & EDX:EAX | bit 63");
	/* ymm upper halves of ymm0 at 576 (only FP/SSE before it) */
	uint64_t hi[2];
	memcpy(hi, area + 576, 16);
	check(hi[0] == want.q[0][2] && hi[1] == want.q[0][3],
	      "XSAVEC: ymm0 upper half at offset 576 (%016llx %016llx)",
	      (unsigned long long)hi[0], (unsigned long long)hi[1]);
	uint64_t lo[2];
	memcpy(lo, area + 160, 16);
	check(lo[0] == want.q[0][0] && lo[1] == want.q[0][1],
	      "XSAVEC: xmm0 at offset 160");
	/* compacted XRSTOR puts them back */
	asm volatile("vpxor %%ymm0, %%ymm0, %%ymm0\n\t"
		     "vpxor %%ymm7, %%ymm7, %%ymm7\n\t"
		     "vpxor %%ymm15, %%ymm15, %%ymm15" ::: "memory");
	asm volatile("xrstor %0" :: "m"(area), "a"(0xff), "d"(0));
	STORE_YMM(&got);
	check(!diff(&want, &got, why, sizeof(why)),
	      "XRSTOR of XSAVEC's compacted area restores ymm0-15 %s",
	      diff(&want, &got, why, sizeof(why)) ? why : "");
	/* reserved header bytes set: #GP (SIGSEGV) tested in xsaves-user */

	/* MXCSR in the compacted form (SDM 13.8.2, 13.10) */
	uint32_t m1 = 0x3f80, m2 = 0, m;
	asm volatile("ldmxcsr %0" :: "m"(m1));
	memset(area, 0, sizeof(area));
	asm volatile("xsavec %0" : "+m"(area) : "a"(4), "d"(0));
	memcpy(&m, area + 24, 4);
	memcpy(&bv, area + 512, 8);
	check(m == 0, "XSAVEC with RFBM = AVX only does not write MXCSR "
	      "(area %#x, XSTATE_BV %#llx)", m, (unsigned long long)bv);
	memset(area, 0, sizeof(area));
	asm volatile("xsavec %0" : "+m"(area) : "a"(7), "d"(0));
	memcpy(&m, area + 24, 4);
	check(m == 0x3f80, "XSAVEC with RFBM = x87|SSE|AVX writes MXCSR "
	      "(%#x)", m);
	m = 0x1f80;
	memcpy(area + 24, &m, 4);
	asm volatile("xrstor %0" :: "m"(area), "a"(4), "d"(0));
	asm volatile("stmxcsr %0" : "=m"(m2));
	check(m2 == 0x3f80, "compacted XRSTOR with RFBM = AVX only leaves "
	      "MXCSR alone (%#x)", m2);
	bv = 5;		/* XSTATE_BV[1] = 0 */
	memcpy(area + 512, &bv, 8);
	asm volatile("xrstor %0" :: "m"(area), "a"(7), "d"(0));
	asm volatile("stmxcsr %0" : "=m"(m2));
	check(m2 == 0x1f80, "compacted XRSTOR with XSTATE_BV[1] = 0 "
	      "initializes MXCSR to 0x1f80 (%#x)", m2);
}

static sigjmp_buf jb;
static void segv(int sig)
{
	siglongjmp(jb, sig);
}

static void test_xsaves_user(void)
{
	static uint8_t area[4096] __attribute__((aligned(64)));
	int sig;

	signal(SIGSEGV, segv);
	signal(SIGILL, segv);
	if ((sig = sigsetjmp(jb, 1)) == 0) {
		asm volatile("xsaves %0" : "+m"(area) : "a"(-1), "d"(-1));
		sig = 0;
	}
	check(sig == SIGSEGV, "XSAVES at CPL 3 raises #GP (signal %d)", sig);
	if ((sig = sigsetjmp(jb, 1)) == 0) {
		asm volatile("xrstors %0" :: "m"(area), "a"(-1), "d"(-1));
		sig = 0;
	}
	check(sig == SIGSEGV, "XRSTORS at CPL 3 raises #GP (signal %d)", sig);
	/* compacted XRSTOR with a reserved header byte set: #GP */
	unsigned a, b, c, d;
	__cpuid_count(0xd, 1, a, b, c, d);
	if (!(a & 2)) {
		check(0, "CPUID reports XSAVEC (eax %#x)", a);
		signal(SIGSEGV, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		return;
	}
	memset(area, 0, sizeof(area));
	asm volatile("xsavec %0" : "+m"(area) : "a"(0xff), "d"(0));
	area[512 + 20] = 1;
	if ((sig = sigsetjmp(jb, 1)) == 0) {
		asm volatile("xrstor %0" :: "m"(area), "a"(0xff), "d"(0));
		sig = 0;
	}
	check(sig == SIGSEGV, "compacted XRSTOR with header bytes 16-63 not "
	      "zero raises #GP (signal %d)", sig);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGILL, SIG_DFL);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "switch"))
		test_switch(argc > 2 ? atoi(argv[2]) : 4,
			    argc > 3 ? atoi(argv[3]) : 2000);
	else if (!strcmp(argv[1], "signal"))
		test_signal(argc > 2 ? atoi(argv[2]) : 200);
	else if (!strcmp(argv[1], "xsavec"))
		test_xsavec();
	else if (!strcmp(argv[1], "xsaves-user"))
		test_xsaves_user();
	else
		return 2;
	return failures ? 1 : 0;
}
