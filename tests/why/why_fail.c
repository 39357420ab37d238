// SPDX-License-Identifier: GPL-2.0
/*
 * why_fail SCENARIO...: make one system call fail, as a scenario of
 * `lbr-snap why` names it, for each SCENARIO; `why_fail -l` lists them.
 * Exits 0 when each failed with the error its scenario expects, 1 when
 * one did not (it says which on stderr), 2 for an unknown scenario.
 * Static, for the test guest's busybox, which has no command for most.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define DIR	"/tmp/why_fail.d"

static long perf_bad_attr(void)
{
	struct perf_event_attr attr;

	/* A sample type bit no kernel has: perf_copy_attr() says EINVAL. */
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.size = sizeof(attr);
	attr.sample_type = 1ULL << 63;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static long bpf_bad_cmd(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	return syscall(SYS_bpf, 1000, &attr, sizeof(attr));
}

static long mmap_bad_flags(void)
{
	/* Neither MAP_SHARED nor MAP_PRIVATE. */
	void *p = mmap(NULL, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? -1 : 0;
}

static long timerfd_bad_flags(void)
{
	return timerfd_create(CLOCK_MONOTONIC, 0x40000000);
}

static long memfd_bad_flags(void)
{
	return syscall(SYS_memfd_create, "why", 0x80000000u);
}

static long setsockopt_bad(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), v = 1;
	long ret;

	if (fd < 0)
		return 0;
	/* An option level/number UDP does not have: ENOPROTOOPT. */
	ret = setsockopt(fd, SOL_SOCKET, 12345, &v, sizeof(v));
	close(fd);
	return ret;
}

static long mkdir_exists(void)
{
	mkdir(DIR, 0700);
	return mkdir(DIR, 0700);
}

static long rmdir_nonempty(void)
{
	mkdir(DIR, 0700);
	mkdir(DIR "/sub", 0700);
	return rmdir(DIR);
}

static long symlink_loop(void)
{
	mkdir(DIR, 0700);
	unlink(DIR "/loop");
	symlink("loop", DIR "/loop");
	return open(DIR "/loop", O_RDONLY);
}

static long not_a_dir(void)
{
	return open("/proc/self/status/x", O_RDONLY);
}

static long no_such_file(void)
{
	return open("/no/such/file", O_RDONLY);
}

static const struct {
	const char *name;
	long (*fail)(void);
	int err;
} scenarios[] = {
	{ "perf-bad-attr", perf_bad_attr, EINVAL },
	{ "bpf-bad-cmd", bpf_bad_cmd, EINVAL },
	{ "mmap-bad-flags", mmap_bad_flags, EINVAL },
	{ "timerfd-bad-flags", timerfd_bad_flags, EINVAL },
	{ "memfd-bad-flags", memfd_bad_flags, EINVAL },
	{ "setsockopt-bad", setsockopt_bad, ENOPROTOOPT },
	{ "mkdir-exists", mkdir_exists, EEXIST },
	{ "rmdir-nonempty", rmdir_nonempty, ENOTEMPTY },
	{ "symlink-loop", symlink_loop, ELOOP },
	{ "not-a-dir", not_a_dir, ENOTDIR },
	{ "no-such-file", no_such_file, ENOENT },
};

int main(int argc, char **argv)
{
	int i, ret = 0;
	size_t j;

	if (argc > 1 && !strcmp(argv[1], "-l")) {
		for (j = 0; j < sizeof(scenarios) / sizeof(scenarios[0]); j++)
			printf("%s %s\n", scenarios[j].name,
			       strerrorname_np(scenarios[j].err));
		return 0;
	}
	for (i = 1; i < argc; i++) {
		for (j = 0; j < sizeof(scenarios) / sizeof(scenarios[0]); j++)
			if (!strcmp(argv[i], scenarios[j].name))
				break;
		if (j == sizeof(scenarios) / sizeof(scenarios[0])) {
			fprintf(stderr, "why_fail: no scenario %s\n", argv[i]);
			return 2;
		}
		errno = 0;
		if (scenarios[j].fail() != -1 || errno != scenarios[j].err) {
			fprintf(stderr, "why_fail: %s: %s, expected %s\n",
				argv[i], strerror(errno),
				strerror(scenarios[j].err));
			ret = 1;
		}
	}
	return ret;
}
