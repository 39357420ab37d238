// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap stress kselftests: load and unload under a syscall storm (with
 * the kretprobes' entry handler too), and targets added and removed at run
 * time while other threads call them.
 *
 * Kept apart from lbr_snap_test because `make check` runs it in a guest
 * with single-threaded TCG: under QEMU 7.2's multi-threaded TCG, arming and
 * disarming any kretprobe on a function that another vCPU is executing in a
 * tight loop crashes Debian's 6.1 guest kernel, with the kernel's own
 * sample-sized kretprobe module just as with lbr_snap (tests/README.md, "Known
 * limits of the test lab").  Single-threaded TCG still switches vCPUs
 * while they run, so the races between load, unload and the storm remain.
 */
#include <limits.h>

#include "kselftest_harness.h"
#include "lbr_test_util.h"
#include "lbr_test_filter.h"

FIXTURE(storm) {
	struct rec *recs;
	pid_t pid[2];
	int fd;
};

FIXTURE_SETUP(storm)
{
	load_target_module();
	self->recs = calloc(MAX_RECS, sizeof(struct rec));
	ASSERT_NE(NULL, self->recs);
	self->fd = -1;
}

FIXTURE_TEARDOWN(storm)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (self->pid[i] > 0) {
			kill(self->pid[i], SIGKILL);
			waitpid(self->pid[i], NULL, 0);
		}
	}
	if (self->fd >= 0)
		close(self->fd);
	free(self->recs);
	unload();
}

static pid_t start_storm(void)
{
	pid_t pid = fork();
	int fd;

	if (pid)
		return pid;
	/* Error returns from a syscall and from the test target, forever. */
	fd = open(TEST_DEV, O_WRONLY);
	for (;;) {
		open("/lbr-snap-no-such-file", O_RDONLY);
		if (fd >= 0 && write(fd, "int -2 20", 9) < 0)
			_exit(1);
	}
}

TEST_F_TIMEOUT(storm, load_unload_50_cycles, 600)
{
	int cycle, fd, n, got = 0;
	struct rec *recs = self->recs;

	self->pid[0] = start_storm();
	self->pid[1] = start_storm();
	for (cycle = 0; cycle < 50; cycle++) {
		ASSERT_EQ(0, load("targets=do_sys_openat2%int,lbr_test_int buffer_kb=16"))
			TH_LOG("cycle %d", cycle);
		fd = dev_open(O_NONBLOCK);
		ASSERT_LE(0, fd);
		usleep(20 * 1000);
		n = drain(fd, recs, MAX_RECS);
		ASSERT_LE(0, n)
			TH_LOG("%s", lbr_why);
		got += n;
		close(fd);
		ASSERT_EQ(0, unload()) TH_LOG("cycle %d", cycle);
	}
	EXPECT_LT(0, got);
	TH_LOG("50 cycles, %d records read", got);
}

static int tree_filter(int fd, pid_t tgid)
{
	struct lbr_snap_filter f = {
		.flags = tgid ? LBR_SNAP_FILTER_TREE : 0, .tgid = tgid,
	};

	return ioctl(fd, LBR_SNAP_IOC_SET_FILTER, &f) ? -errno : 0;
}

/*
 * The kretprobe's entry handler, which kretprobes get from the first tree
 * filter on and which hands a left-out task's instance back at the entry,
 * under load and unload while two storms call the target: each cycle
 * loads, leaves the storms out (every call's instance given back at its
 * entry), follows one storm (armed, recorded), follows none, and unloads
 * with calls in flight.  What it shows is in the kernel log: no oops,
 * KASAN or lockdep report (run-vm.sh's gate), and unload never refused.
 */
TEST_F_TIMEOUT(storm, kretprobe_entry_handler_under_load_unload, 600)
{
	int cycle, n, got = 0;
	pid_t kid;

	self->pid[0] = start_storm();
	self->pid[1] = start_storm();
	kid = idle_child();
	ASSERT_LT(0, kid);
	for (cycle = 0; cycle < 20; cycle++) {
		ASSERT_EQ(0, load("targets=lbr_test_int@kretprobe buffer_kb=16"))
			TH_LOG("cycle %d", cycle);
		self->fd = dev_open(O_NONBLOCK);
		ASSERT_LE(0, self->fd);
		ASSERT_EQ(0, tree_filter(self->fd, kid));
		usleep(20 * 1000);
		ASSERT_EQ(0, tree_filter(self->fd, self->pid[cycle % 2]));
		usleep(20 * 1000);
		ASSERT_EQ(0, tree_filter(self->fd, 0));
		n = drain(self->fd, self->recs, MAX_RECS);
		ASSERT_LE(0, n) TH_LOG("%s", lbr_why);
		got += n;
		close(self->fd);
		self->fd = -1;
		ASSERT_EQ(0, unload()) TH_LOG("cycle %d", cycle);
	}
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	/* The storm followed was recorded. */
	EXPECT_LT(0, got);
	TH_LOG("20 cycles, %d records read", got);
}

static void *producer_loop(void *p)
{
	volatile int *stop = p;

	while (!*stop) {
		trigger("int", -7, 20);
		trigger("long", -9, 20);
	}
	return NULL;
}

/*
 * Sort what one drain read: the steady target's records (id 0, -9) and the
 * runtime-added ones (-7, from an id an ADD returned: no stray record).
 */
static void tally(struct __test_metadata *_metadata, const struct rec *recs,
		  int n, const __u32 *ids, int nids, int *steady, int *added)
{
	int i, j;

	for (i = 0; i < n; i++) {
		const struct lbr_snap_record *h = &recs[i].h;

		if (h->target_id == 0) {
			EXPECT_EQ(-9, h->retval);
			(*steady)++;
			continue;
		}
		for (j = 0; j < nids && ids[j] != h->target_id; j++)
			;
		EXPECT_GT(nids, j) TH_LOG("record of unknown target %u", h->target_id);
		EXPECT_EQ(-7, h->retval);
		(*added)++;
	}
}

/*
 * A target added and removed 20 times while two threads call it and a
 * steady one.  The device is drained after each cycle, so that the steady
 * target cannot fill the buffers before the added one fires (it once did:
 * every check ran on the steady target's records only); the added target
 * must have produced records.
 */
TEST_F_TIMEOUT(storm, runtime_add_remove_under_load, 300)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	volatile int stop = 0;
	__u32 ids[20];
	pthread_t th[2];
	int i, d, n, steady = 0, added = 0, total = 0;

	/*
	 * Buffers that hold several cycles of the steady target: an ADD that
	 * attaches through fexit patches text for most of a second under TCG,
	 * and on a lab CPU (records with 32 LBR entries) the default 256 KiB
	 * filled in that time, so that every record of the added target was
	 * refused as a drop.
	 */
	ASSERT_EQ(0, load("targets=lbr_test_long%long buffer_kb=4096"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, producer_loop,
					    (void *)&stop));
	for (i = 0; i < 20; i++) {
		/*
		 * An empty buffer, so that the added target has room; a few
		 * drains at most, the producers never stop.
		 */
		for (d = 0; d == 0 || (lbr_drain_full && d < 10); d++) {
			n = drain(self->fd, self->recs, MAX_RECS);
			ASSERT_LE(0, n) TH_LOG("cycle %d: %s", i, lbr_why);
			tally(_metadata, self->recs, n, ids, i, &steady, &added);
			total += n;
		}
		ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
					"lbr_test_int", &ids[i]));
		usleep(10000);
		ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET,
					"lbr_test_int", NULL));
	}
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	/* The producers have stopped: this ends. */
	do {
		n = drain(self->fd, self->recs, MAX_RECS);
		ASSERT_LE(0, n) TH_LOG("%s", lbr_why);
		tally(_metadata, self->recs, n, ids, 20, &steady, &added);
		total += n;
	} while (lbr_drain_full);

	EXPECT_LT(0, steady);
	EXPECT_LT(0, added) TH_LOG("no record of the runtime-added target");
	/*
	 * The target that stayed: every record it captured was read, and the
	 * ones a full buffer refused are counted, none silently lost.
	 */
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(1, hdr.nr);
	EXPECT_EQ(st[0].captured, (unsigned long long)steady);
	EXPECT_EQ(st[0].hits, st[0].captured + st[0].filtered + st[0].dropped);
	TH_LOG("%d records, %d of the steady target, %d of the added one",
	       total, steady, added);
}

/*
 * The fexit hook attached and detached 1000 times (by default) while other threads call
 * the function and a storm of failing syscalls runs: detaching never waits
 * for a call in flight (the drain does), no record is stray, and the debug
 * kernel's checkers stay silent.  LBR_FEXIT_CYCLES (an init environment
 * variable from the kernel command line) makes it fewer: each cycle patches
 * kernel text twice, about 0.6 s under single-threaded TCG.
 *
 * How fast a cycle goes depends on the host (a busy CI machine can be
 * several times slower), so the test does not: it stops at a time budget
 * well inside its timeout and says how many it did.  Stopped before half
 * of the cycles asked for (and FEXIT_MIN_CYCLES), it fails: a slowdown of
 * over twice what the budget allows is a finding, not noise.  Each drain is bounded too, since the producers can
 * write as fast as it reads (drain() stops when its array is full; the
 * rest is read in the next cycle).
 */
#define FEXIT_MIN_CYCLES	20
#define FEXIT_BUDGET_S		900

TEST_F_TIMEOUT(storm, fexit_attach_detach_cycles, 1500)
{
	const char *env = getenv("LBR_FEXIT_CYCLES");
	int cycles = env ? atoi(env) : 1000, full = 0, done, want;
	unsigned long long t0 = now_ns();
	struct lbr_snap_target_ctl ctl;
	volatile int stop = 0;
	pthread_t th[2];
	int i, n, ints = 0;

	self->pid[0] = start_storm();
	/*
	 * A steady fexit target too: ftrace then keeps its direct-call ops
	 * registered and each cycle only edits its filter, as on a machine
	 * with other direct callers (whole ops registration costs RCU Tasks
	 * grace periods, seconds per cycle under TCG).
	 */
	ASSERT_EQ(0, load("targets=lbr_test_long%long/1@fexit buffer_kb=64"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, producer_loop,
					    (void *)&stop));
	ASSERT_LT(0, cycles);
	for (i = 0; i < cycles; i++) {
		if (now_ns() - t0 > FEXIT_BUDGET_S * 1000000000ULL) {
			TH_LOG("time budget of %d s spent after %d of %d cycles",
			       FEXIT_BUDGET_S, i, cycles);
			break;
		}
		memset(&ctl, 0, sizeof(ctl));
		strcpy(ctl.spec, "lbr_test_int%int/1@fexit");
		ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_ADD_TARGET, &ctl))
			TH_LOG("cycle %d: %s", i, strerror(errno));
		ASSERT_EQ(LBR_SNAP_HOOK_FEXIT, ctl.hook);
		if (i % 100 == 0)
			usleep(5000);
		ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET,
					"lbr_test_int", NULL))
			TH_LOG("cycle %d", i);
		n = drain(self->fd, self->recs, MAX_RECS);
		ASSERT_LE(0, n)
			TH_LOG("cycle %d: %s", i, lbr_why);
		full += lbr_drain_full;
		while (n-- > 0) {
			const struct lbr_snap_record *h = &self->recs[n].h;

			if (h->target_id == 0)
				continue;
			/* -7 from the producers, -2 from the storm. */
			EXPECT_TRUE(h->retval == -7 || h->retval == -2)
				TH_LOG("retval %lld", h->retval);
			EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, h->hook);
			ints++;
		}
	}
	done = i;
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unload());
	want = cycles / 2 > FEXIT_MIN_CYCLES ? cycles / 2 : FEXIT_MIN_CYCLES;
	EXPECT_LE(want < cycles ? want : cycles, done)
		TH_LOG("only %d of %d cycles within %d s", done, cycles,
		       FEXIT_BUDGET_S);
	/* The cycled target was attached long enough to be seen. */
	EXPECT_LT(0, ints) TH_LOG("no record of the cycled fexit target");
	TH_LOG("%d cycles in %llu s, %d records of the fexit target, %d drains stopped full",
	       done, (now_ns() - t0) / 1000000000, ints, full);
}

/*
 * Lines of @fd that hold @pat, counted until @want of them, the end, or
 * @secs without input; @bytes adds up what was read.
 */
static int count_lines(int fd, const char *pat, int want, int secs,
		       size_t *bytes)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	static char line[4096], buf[65536];
	size_t len = 0;
	ssize_t r, i;
	int n = 0;

	while (n < want && poll(&pfd, 1, secs * 1000) == 1) {
		r = read(fd, buf, sizeof(buf));
		if (r <= 0)
			break;
		*bytes += r;
		for (i = 0; i < r; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			n += !!strstr(line, pat);
			len = 0;
		}
	}
	return n;
}

#define TOOL_HEADER	"lbr_test_int() = -E2BIG"

/* The largest wakeup mark of @pid's descriptors of the device, -1: none. */
static long wakeup_bytes(pid_t pid)
{
	char path[320], line[128];
	struct dirent *d;
	long v, max = -1;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid,
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "lbr_snap_wakeup_bytes: %ld", &v) == 1 &&
			    v > max)
				max = v;
		fclose(f);
	}
	closedir(dir);
	return max;
}

/*
 * lbr-snap behind a consumer that stops reading (its stdout a pipe nobody
 * reads during a burst of some 4 MiB of text): the burst waits in the
 * tool's queue, none dropped, while its drain thread sleeps on the
 * device's wakeup mark; once the consumer reads again, every record is
 * printed, the last ones too, which came below the mark and are still in
 * the ring: the printer wakes the drain thread when it takes the last
 * chunk.
 */
TEST_F_TIMEOUT(storm, tool_behind_a_stalled_reader_prints_every_record, 600)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	size_t bytes = 0;
	int p[2], i, n, batches, status;
	pid_t pid;

	ASSERT_EQ(0, load("targets=lbr_test_int"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		execlp("lbr-snap", "lbr-snap", (char *)NULL);
		_exit(127);
	}
	self->pid[0] = pid;
	close(p[1]);

	/* The tool streams: a first record, then ten to size the burst. */
	ASSERT_EQ(0, trigger("int", -7, 1));
	ASSERT_EQ(1, count_lines(p[0], TOOL_HEADER, 1, 60, &bytes));
	bytes = 0;
	ASSERT_EQ(0, trigger("int", -7, 10));
	ASSERT_EQ(10, count_lines(p[0], TOOL_HEADER, 10, 60, &bytes));
	/* 4 MiB: past the pipe and the tool's two 1 MiB output buffers. */
	batches = (4 << 20) / (bytes / 10) / 50 + 1;
	TH_LOG("%zu bytes a record: %d records", bytes / 10, batches * 50);

	/* Nobody reads meanwhile: the tool sets its mark. */
	for (i = 0; i < batches; i++) {
		ASSERT_EQ(0, trigger("int", -7, 50));
		usleep(2000);
	}
	EXPECT_LT(0, wakeup_bytes(pid));
	/* Every one, within 30 s of the last line before it. */
	n = count_lines(p[0], TOOL_HEADER, batches * 50, 30, &bytes);
	EXPECT_EQ(batches * 50, n);
	/* Caught up: the mark is off again. */
	for (i = 0; i < 100 && wakeup_bytes(pid); i++)
		usleep(100 * 1000);
	EXPECT_EQ(0, wakeup_bytes(pid));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	EXPECT_EQ(0, st[0].dropped);
	EXPECT_EQ(1 + 10 + batches * 50, st[0].captured);

	kill(pid, SIGINT);
	/* What it still prints, read; then its exit. */
	count_lines(p[0], "", INT_MAX, 30, &bytes);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	self->pid[0] = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("lbr-snap: status %#x", status);
	close(p[0]);
}

LBR_TESTS_MAIN
