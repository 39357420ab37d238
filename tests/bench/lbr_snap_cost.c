// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_cost: the guest side of make bench's cost table and reader
 * line (tests/bench/cost.sh, cost-guest.sh).
 *
 *   lbr_snap_cost opens PATH CALLS RUNS
 *	RUNS times, CALLS open(PATH, O_RDONLY) (closed when they succeed),
 *	timed with CLOCK_MONOTONIC; prints
 *	  OPENS runs=A,B,C median=M
 *	in nanoseconds per call, to 0.1 ns.  Under QEMU's -icount shift=0 a
 *	nanosecond of guest time is one guest instruction.  On the LBR lab,
 *	which counts each vCPU's RDMSRs and WRMSRs (MSR 0x4c4252, read
 *	through /dev/cpu/0/msr: the guest has one CPU), the line goes on
 *	with " msr=X", the median run's MSR accesses per call, to 0.01.
 *   lbr_snap_cost exits CALLS RUNS
 *	the same for CALLS fork()s of a child that exits at once, each
 *	waited for: EXITS runs=A,B,C median=M, per fork, exit and wait.
 *   lbr_snap_cost storm PATH CALLS
 *	CALLS open(PATH) as fast as it can; prints "STORM pid=P ns=N".
 *   lbr_snap_cost now
 *	CLOCK_MONOTONIC in nanoseconds.
 *   lbr_snap_cost wait FILE KIND PID COUNT TIMEOUT_S
 *	waits until FILE holds COUNT records of KIND made by process PID
 *	(the storm's; json: lines starting with '{' that hold "pid":PID,
 *	text: lines starting with a digit that hold "cost[PID]", lines:
 *	lines that hold "cost-PID ", as trace_pipe prints the task) and
 *	prints "WAIT records=N ns=T", T the CLOCK_MONOTONIC time FILE was
 *	last written (its mtime, to a jiffy); after TIMEOUT_S seconds it
 *	prints what it has and exits 1.  Only the storm's records count:
 *	lbr-snap leaves out the records of its own failed open()s (its
 *	symbol and debug-info lookups), and other processes' may come and
 *	go.  trace_pipe prints "<...>-PID" for a task whose comm has left
 *	its cache of them: those lines count too.
 *	FILE is opened once and read as it grows: no open() of its own
 *	while it waits (the storm's function is open()).  It is read only
 *	once its size has held for 100 ms (or after 2 s, or TIMEOUT_S):
 *	scanning the 300 MB of a --json storm takes seconds of a vCPU in
 *	a TCG guest, which the reader, still writing its last records,
 *	needs; a reader that writes again after that is read on as it
 *	grows.
 *   lbr_snap_cost settle FILE...
 *	waits until each FILE's size has held for 100 ms (at most 2 s
 *	each), as wait does before it reads: what runs after the storm
 *	(counting what was dropped, in processes of their own) then does
 *	not take a vCPU from a reader still writing its last records.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end) {
		fprintf(stderr, "lbr_snap_cost: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void calls(const char *path, unsigned long n)
{
	unsigned long i;
	int fd;

	for (i = 0; i < n; i++) {
		fd = open(path, O_RDONLY);
		if (fd >= 0)
			close(fd);
	}
}

/*
 * The LBR lab's count of this CPU's MSR accesses, or -1 (not the lab, or
 * no msr module): tests/lbr-lab/README.md, "Counting MSR accesses".
 */
#define LAB_MSR_ACCESSES	0x4c4252

static long long msr_accesses(void)
{
	unsigned long long v;
	int fd = open("/dev/cpu/0/msr", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, &v, sizeof(v), LAB_MSR_ACCESSES);
	close(fd);
	return n == sizeof(v) ? (long long)v : -1;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* @n children, each exiting at once, each waited for. */
static void exits(const char *unused, unsigned long n)
{
	unsigned long i;
	pid_t pid;

	(void)unused;
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0) {
			perror("lbr_snap_cost: fork");
			exit(2);
		}
		if (!pid)
			_exit(0);
		if (waitpid(pid, NULL, 0) != pid) {
			perror("lbr_snap_cost: waitpid");
			exit(2);
		}
	}
}

/*
 * @runs runs of @n calls of @fn, after a warm-up; prints "@tag runs=...
 * median=..." in nanoseconds per call.
 */
static int timed(const char *tag, void (*fn)(const char *, unsigned long),
		 const char *path, unsigned long n, unsigned long runs)
{
	unsigned long long t[16], sorted[16], t0;
	long long m[16], m0 = msr_accesses(), m1 = msr_accesses();
	/* Stock QEMU reads 0: a counter counts its own read. */
	bool lab = m0 >= 0 && m1 > m0;
	unsigned long r, mid;

	if (!n || !runs || runs > 16) {
		fprintf(stderr, "lbr_snap_cost: 1..16 runs of at least 1 call\n");
		return 2;
	}
	fn(path, n / 2 + 1);	/* warm the caches and the path */
	for (r = 0; r < runs; r++) {
		m0 = lab ? msr_accesses() : 0;
		t0 = now_ns();
		fn(path, n);
		/* Tenths of a nanosecond per call. */
		t[r] = ((now_ns() - t0) * 10 + n / 2) / n;
		m1 = lab ? msr_accesses() : 0;
		/* The two reads' own accesses are the counter's, not fn's. */
		m[r] = m1 - m0 - 1;
	}
	memcpy(sorted, t, sizeof(t));
	qsort(sorted, runs, sizeof(sorted[0]), cmp_ull);
	printf("%s runs=", tag);
	for (r = 0; r < runs; r++)
		printf("%s%llu.%llu", r ? "," : "", t[r] / 10, t[r] % 10);
	printf(" median=%llu.%llu", sorted[runs / 2] / 10,
	       sorted[runs / 2] % 10);
	/* The MSR accesses of the run whose time is the median. */
	for (mid = 0; lab && mid < runs; mid++) {
		if (t[mid] == sorted[runs / 2]) {
			printf(" msr=%.2f", (double)m[mid] / n);
			break;
		}
	}
	printf("\n");
	return 0;
}

/* "<...>" right before @pid_tag ("-PID ") in the line [@p, @end). */
static int find_pid_tag(const char *p, const char *end, const char *pid_tag)
{
	size_t n = strlen(pid_tag);
	const char *at;

	for (at = p; (at = memmem(at, end - at, pid_tag, n)); at++)
		if (at - p >= 5 && !memcmp(at - 5, "<...>", 5))
			return 1;
	return 0;
}

/*
 * Whether the whole line [@p, @end) is a record of KIND with @tag in it;
 * for lines, @tag is "cost-PID " (the comm's end) and @pid_tag "-PID ",
 * which also counts after "<...>", trace's name for a comm not cached.
 */
static int counts(const char *p, const char *end, const char *kind,
		  const char *tag, const char *pid_tag)
{
	if (!strcmp(kind, "json") && *p != '{')
		return 0;
	if (!strcmp(kind, "text") && (*p < '0' || *p > '9'))
		return 0;
	if (memmem(p, end - p, tag, strlen(tag)))
		return 1;
	return !strcmp(kind, "lines") && find_pid_tag(p, end, pid_tag);
}

/*
 * The CLOCK_MONOTONIC time of @fd's last write: its mtime (the kernel's
 * coarse CLOCK_REALTIME, a jiffy's granularity) moved onto the monotonic
 * clock.  This is when the reader wrote, not when this process got round
 * to reading it: scanning hundreds of megabytes of JSON in a TCG guest
 * takes seconds, and must not count as the reader's.
 */
static unsigned long long written_ns(int fd)
{
	struct timespec real, mono;
	struct stat st;
	long long off;

	if (fstat(fd, &st) < 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	off = (long long)(real.tv_sec - mono.tv_sec) * 1000000000LL +
	      (real.tv_nsec - mono.tv_nsec);
	return st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec - off;
}

#define POLL_NS		(20 * 1000 * 1000)
#define SETTLE_POLLS	5			/* 100 ms of one size */
#define SETTLE_MAX_NS	(2000ULL * 1000 * 1000)	/* then read it anyway */

/*
 * Until @fd's size has held for SETTLE_POLLS polls, at most SETTLE_MAX_NS
 * or the timeout: a file that other writes keep growing is read after
 * two seconds, as it grows.
 */
static void settle(int fd, unsigned long long start, unsigned long timeout_s)
{
	struct timespec pause = { 0, POLL_NS };
	unsigned long long limit = timeout_s * 1000000000ULL;
	off_t last = -1;
	int same = 0;
	struct stat st;

	if (limit > SETTLE_MAX_NS)
		limit = SETTLE_MAX_NS;
	while (now_ns() - start <= limit) {
		if (fstat(fd, &st) < 0)
			return;
		same = st.st_size == last ? same + 1 : 0;
		last = st.st_size;
		if (same >= SETTLE_POLLS)
			return;
		nanosleep(&pause, NULL);
	}
}

static int wait_records(const char *file, const char *kind, const char *pid,
			unsigned long want, unsigned long timeout)
{
	unsigned long long start = now_ns();
	unsigned long have = 0;
	struct timespec pause = { 0, POLL_NS };
	static char buf[1 << 20];
	size_t len = 0;
	char tag[64], pid_tag[64], *p, *nl;
	int fd;
	ssize_t n;

	if (strcmp(kind, "json") && strcmp(kind, "text") &&
	    strcmp(kind, "lines")) {
		fprintf(stderr, "lbr_snap_cost: KIND is json, text or lines\n");
		return 2;
	}
	if (!strcmp(kind, "json"))
		snprintf(tag, sizeof(tag), "\"pid\":%s,", pid);
	else if (!strcmp(kind, "text"))
		snprintf(tag, sizeof(tag), "cost[%s]", pid);
	else
		snprintf(tag, sizeof(tag), "cost-%s ", pid);
	snprintf(pid_tag, sizeof(pid_tag), "-%s ", pid);
	fd = open(file, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "lbr_snap_cost: %s: %s\n", file, strerror(errno));
		return 2;
	}
	settle(fd, start, timeout);
	while (have < want) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0) {
			fprintf(stderr, "lbr_snap_cost: read %s: %s\n", file,
				strerror(errno));
			return 2;
		}
		if (n > 0) {
			/* Whole lines; a line longer than the buffer is none. */
			len += n;
			for (p = buf; (nl = memchr(p, '\n', buf + len - p));
			     p = nl + 1)
				have += nl > p &&
					counts(p, nl, kind, tag, pid_tag);
			len = buf + len - p;
			memmove(buf, p, len);
			if (len == sizeof(buf))
				len = 0;
			continue;
		}
		if (now_ns() - start > timeout * 1000000000ULL) {
			printf("WAIT records=%lu ns=%llu timeout\n", have,
			       written_ns(fd));
			return 1;
		}
		nanosleep(&pause, NULL);
	}
	printf("WAIT records=%lu ns=%llu\n", have, written_ns(fd));
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long t0;

	if (argc == 5 && !strcmp(argv[1], "opens"))
		return timed("OPENS", calls, argv[2], num(argv[3]),
			     num(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "exits"))
		return timed("EXITS", exits, NULL, num(argv[2]), num(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "storm")) {
		t0 = now_ns();
		calls(argv[2], num(argv[3]));
		printf("STORM pid=%d ns=%llu\n", (int)getpid(), now_ns() - t0);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "now")) {
		printf("%llu\n", now_ns());
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "settle")) {
		int i, fd;

		for (i = 2; i < argc; i++) {
			fd = open(argv[i], O_RDONLY);
			if (fd < 0) {
				fprintf(stderr, "lbr_snap_cost: %s: %s\n",
					argv[i], strerror(errno));
				return 2;
			}
			settle(fd, now_ns(), 300);
			close(fd);
		}
		return 0;
	}
	if (argc == 7 && !strcmp(argv[1], "wait"))
		return wait_records(argv[2], argv[3], argv[4], num(argv[5]),
				    num(argv[6]));
	fprintf(stderr, "usage: lbr_snap_cost opens PATH CALLS RUNS | exits CALLS RUNS | storm PATH CALLS | now | wait FILE json|text|lines PID COUNT TIMEOUT_S | settle FILE...\n");
	return 2;
}
