// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap stress kselftest: load and unload under a syscall storm.
 *
 * Kept apart from lbr_snap_test because `make check` runs it in a guest
 * with single-threaded TCG: under QEMU 7.2's multi-threaded TCG, arming and
 * disarming any kretprobe on a function that another vCPU is executing in a
 * tight loop crashes Debian's 6.1 guest kernel, with the kernel's own
 * sample-sized kretprobe module just as with lbr_snap (README, "Known
 * limits of the test lab").  Single-threaded TCG still switches vCPUs
 * while they run, so the races between load, unload and the storm remain.
 */
#include "kselftest_harness.h"
#include "lbr_test_util.h"

FIXTURE(storm) {
	struct rec *recs;
	pid_t pid[2];
};

FIXTURE_SETUP(storm)
{
	load_target_module();
	self->recs = calloc(MAX_RECS, sizeof(struct rec));
	ASSERT_NE(NULL, self->recs);
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
		ASSERT_EQ(0, load("targets=do_sys_openat2%long,lbr_test_int buffer_kb=16"))
			TH_LOG("cycle %d", cycle);
		fd = dev_open(O_NONBLOCK);
		ASSERT_LE(0, fd);
		usleep(20 * 1000);
		n = drain(fd, recs, MAX_RECS);
		ASSERT_LE(0, n);
		got += n;
		close(fd);
		ASSERT_EQ(0, unload()) TH_LOG("cycle %d", cycle);
	}
	EXPECT_LT(0, got);
	TH_LOG("50 cycles, %d records read", got);
}

TEST_HARNESS_MAIN
