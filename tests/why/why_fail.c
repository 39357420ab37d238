// SPDX-License-Identifier: GPL-2.0
/*
 * why_fail [-t FILE] [-n N] SCENARIO...: make one system call fail, as
 * each SCENARIO names it, one after another in this process; with -n, N
 * times each (a flood of errors: their preparation once).
 *
 *   why_fail -l   lists the scenarios: name, system call, expected errno
 *                 (its name and number)
 *
 * Each scenario first prepares what its call needs (a directory, a file,
 * a socket), then makes the one call that must fail, with the task's name
 * (comm) set to "wf-NN", NN its index in -l's list, so that a record of the
 * call says which scenario it came from.
 *
 * -t FILE: write "1" to FILE just before each failing call and "0" just
 * after: tracefs's tracing_on, so that the kernel's tracers (the oracle,
 * tests/why/oracle.sh) see that call and not the preparation.
 *
 * Exits 0 when each call failed with the error its scenario expects, 1
 * when one did not (it says which on stderr), 2 on bad usage.  Static, for
 * the test guest's busybox, which has no command for most.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define DIR	"/tmp/why_fail.d"

/* A descriptor a scenario's preparation opened for its failing call. */
static int fd = -1;

static void prep_dir(void)
{
	mkdir(DIR, 0755);
	chmod(DIR, 0755);
}

static void prep_file(void)
{
	prep_dir();
	close(open(DIR "/f", O_CREAT | O_WRONLY, 0600));
}

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
	return syscall(SYS_mmap, NULL, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0);
}

static long timerfd_bad_flags(void)
{
	return syscall(SYS_timerfd_create, CLOCK_MONOTONIC, 0x40000000);
}

static long memfd_bad_flags(void)
{
	return syscall(SYS_memfd_create, "why", 0x80000000u);
}

static void prep_udp(void)
{
	close(fd);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
}

static long setsockopt_bad(void)
{
	int v = 1;

	/* An option number SOL_SOCKET does not have: ENOPROTOOPT. */
	return syscall(SYS_setsockopt, fd, SOL_SOCKET, 12345, &v, sizeof(v));
}

static long bind_short_addr(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	/* Shorter than a sockaddr_in: EINVAL. */
	return syscall(SYS_bind, fd, &a, 4);
}

static long socket_bad_family(void)
{
	return syscall(SYS_socket, 1000, SOCK_STREAM, 0);
}

static void prep_exists(void)
{
	prep_dir();
	mkdir(DIR "/e", 0700);
}

static long mkdir_exists(void)
{
	return syscall(SYS_mkdir, DIR "/e", 0700);
}

static void prep_nonempty(void)
{
	prep_dir();
	mkdir(DIR "/n", 0700);
	mkdir(DIR "/n/sub", 0700);
}

static long rmdir_nonempty(void)
{
	return syscall(SYS_rmdir, DIR "/n");
}

static void prep_loop(void)
{
	prep_dir();
	unlink(DIR "/loop");
	symlink("loop", DIR "/loop");
}

static long symlink_loop(void)
{
	return syscall(SYS_openat, AT_FDCWD, DIR "/loop", O_RDONLY);
}

static long not_a_dir(void)
{
	return syscall(SYS_openat, AT_FDCWD, DIR "/f/x", O_RDONLY);
}

static long no_such_file(void)
{
	return syscall(SYS_openat, AT_FDCWD, "/no/such/file", O_RDONLY);
}

static void prep_secret(void)
{
	prep_file();
	/* The saved uid stays 0: after() takes root back. */
	if (setresuid(-1, 65534, -1))
		perror("why_fail: setresuid");
}

static long open_eacces(void)
{
	return syscall(SYS_openat, AT_FDCWD, DIR "/f", O_RDONLY);
}

static void after_secret(void)
{
	if (setresuid(-1, 0, -1))
		perror("why_fail: setresuid");
}

static long open_dir_write(void)
{
	return syscall(SYS_openat, AT_FDCWD, DIR, O_WRONLY);
}

static void prep_subdir(void)
{
	prep_dir();
	mkdir(DIR "/u", 0700);
}

static long unlink_dir(void)
{
	return syscall(SYS_unlink, DIR "/u");
}

static long rename_into_itself(void)
{
	return syscall(SYS_rename, DIR "/u", DIR "/u/in");
}

static long truncate_dir(void)
{
	return syscall(SYS_truncate, DIR, 0);
}

static long link_across_mounts(void)
{
	/* /dev is devtmpfs, /tmp tmpfs: no hard link between them. */
	return syscall(SYS_link, DIR "/f", "/dev/why_fail.link");
}

static long close_bad_fd(void)
{
	return syscall(SYS_close, 12345);
}

static void prep_dirfd(void)
{
	prep_dir();
	close(fd);
	fd = open(DIR, O_RDONLY | O_DIRECTORY);
}

static long read_dir(void)
{
	char c;

	return syscall(SYS_read, fd, &c, 1);
}

static long fcntl_bad_cmd(void)
{
	return syscall(SYS_fcntl, fd, 12345, 0);
}

static long pipe2_bad_flags(void)
{
	int p[2];

	return syscall(SYS_pipe2, p, 0x10000000);
}

static void prep_epoll(void)
{
	close(fd);
	fd = epoll_create1(0);
}

static long epoll_add_itself(void)
{
	struct epoll_event ev = { .events = EPOLLIN };

	return syscall(SYS_epoll_ctl, fd, EPOLL_CTL_ADD, fd, &ev);
}

static long kill_no_such_pid(void)
{
	/* Above pid_max's highest possible value (PID_MAX_LIMIT). */
	return syscall(SYS_kill, 0x7ffffff0, 0);
}

static long sched_bad_policy(void)
{
	struct sched_param p = { 0 };

	return syscall(SYS_sched_setscheduler, 0, 12345, &p);
}

static long prctl_bad_option(void)
{
	return syscall(SYS_prctl, 0x7ffffff0, 0, 0, 0, 0);
}

#define S(n, c, e, p, f) \
	{ .name = n, .call = c, .err = e, .prep = p, .fail = f }

static const struct scenario {
	const char *name;
	const char *call;	/* the system call, as its __x64_sys_ names it */
	int err;
	void (*prep)(void);
	long (*fail)(void);
	void (*after)(void);
} scenarios[] = {
	S("perf-bad-attr", "perf_event_open", EINVAL, NULL, perf_bad_attr),
	S("bpf-bad-cmd", "bpf", EINVAL, NULL, bpf_bad_cmd),
	S("mmap-bad-flags", "mmap", EINVAL, NULL, mmap_bad_flags),
	S("timerfd-bad-flags", "timerfd_create", EINVAL, NULL, timerfd_bad_flags),
	S("memfd-bad-flags", "memfd_create", EINVAL, NULL, memfd_bad_flags),
	S("setsockopt-bad", "setsockopt", ENOPROTOOPT, prep_udp, setsockopt_bad),
	S("mkdir-exists", "mkdir", EEXIST, prep_exists, mkdir_exists),
	S("rmdir-nonempty", "rmdir", ENOTEMPTY, prep_nonempty, rmdir_nonempty),
	S("symlink-loop", "openat", ELOOP, prep_loop, symlink_loop),
	S("not-a-dir", "openat", ENOTDIR, prep_file, not_a_dir),
	S("no-such-file", "openat", ENOENT, NULL, no_such_file),
	{ .name = "open-eacces", .call = "openat", .err = EACCES, .prep = prep_secret,
	  .fail = open_eacces, .after = after_secret },
	S("open-dir-write", "openat", EISDIR, prep_dir, open_dir_write),
	S("unlink-dir", "unlink", EISDIR, prep_subdir, unlink_dir),
	S("rename-into-itself", "rename", EINVAL, prep_subdir, rename_into_itself),
	S("truncate-dir", "truncate", EISDIR, prep_dir, truncate_dir),
	S("link-across-mounts", "link", EXDEV, prep_file, link_across_mounts),
	S("close-bad-fd", "close", EBADF, NULL, close_bad_fd),
	S("read-dir", "read", EISDIR, prep_dirfd, read_dir),
	S("fcntl-bad-cmd", "fcntl", EINVAL, prep_dirfd, fcntl_bad_cmd),
	S("pipe2-bad-flags", "pipe2", EINVAL, NULL, pipe2_bad_flags),
	S("epoll-add-itself", "epoll_ctl", EINVAL, prep_epoll, epoll_add_itself),
	S("socket-bad-family", "socket", EAFNOSUPPORT, NULL, socket_bad_family),
	S("bind-short-addr", "bind", EINVAL, prep_udp, bind_short_addr),
	S("kill-no-such-pid", "kill", ESRCH, NULL, kill_no_such_pid),
	S("sched-bad-policy", "sched_setscheduler", EINVAL, NULL, sched_bad_policy),
	S("prctl-bad-option", "prctl", EINVAL, NULL, prctl_bad_option),
};

#define NR_SCENARIOS	(sizeof(scenarios) / sizeof(scenarios[0]))

static void gate(int tfd, const char *on)
{
	if (tfd >= 0 && write(tfd, on, 1) != 1)
		perror("why_fail: tracing_on");
}

/* Run scenario @i @n times; 0 when its call failed as expected. */
static int run(size_t i, int tfd, unsigned long n)
{
	const struct scenario *s = &scenarios[i];
	char comm[16];
	long ret;
	int err;

	snprintf(comm, sizeof(comm), "wf-%02zu", i);
	prctl(PR_SET_NAME, comm);
	if (s->prep)
		s->prep();
	gate(tfd, "1");
	do {
		ret = s->fail();
		err = errno;
	} while (--n && ret == -1 && err == s->err);
	gate(tfd, "0");
	if (s->after)
		s->after();
	if (ret != -1 || err != s->err) {
		fprintf(stderr, "why_fail: %s: %s, expected %s\n", s->name,
			ret == -1 ? strerror(err) : "no error",
			strerror(s->err));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, ret = 0, tfd = -1;
	unsigned long n = 1;
	size_t j;

	if (argc > 1 && !strcmp(argv[1], "-l")) {
		for (j = 0; j < NR_SCENARIOS; j++)
			printf("%s %s %s %d\n", scenarios[j].name,
			       scenarios[j].call,
			       strerrorname_np(scenarios[j].err),
			       scenarios[j].err);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "-t")) {
		tfd = open(argv[2], O_WRONLY);
		if (tfd < 0) {
			perror(argv[2]);
			return 2;
		}
		i = 3;
	}
	if (i + 1 < argc && !strcmp(argv[i], "-n")) {
		n = strtoul(argv[i + 1], NULL, 10);
		i += 2;
	}
	if (i >= argc || !n) {
		fprintf(stderr, "usage: why_fail [-t FILE] [-n N] SCENARIO... | -l\n");
		return 2;
	}
	for (; i < argc; i++) {
		for (j = 0; j < NR_SCENARIOS; j++)
			if (!strcmp(argv[i], scenarios[j].name))
				break;
		if (j == NR_SCENARIOS) {
			fprintf(stderr, "why_fail: no scenario %s\n", argv[i]);
			return 2;
		}
		ret |= run(j, tfd, n);
	}
	return ret;
}
