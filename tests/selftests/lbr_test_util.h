/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by lbr_snap's kselftests: loading the module with
 * parameters, triggering the test target, reading and checking records.
 * Include after kselftest_harness.h.
 */
#ifndef LBR_TEST_UTIL_H
#define LBR_TEST_UTIL_H

#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lbr_snap.h"

#define TEST_DEV	"/dev/lbr_snap_test"
#define MAX_RECS	20000

struct rec {
	struct lbr_snap_record h;
	struct lbr_snap_branch br[LBR_SNAP_MAX_ENTRIES];
	__u64 stack[LBR_SNAP_MAX_STACK];	/* h.nr_stack of them */
};

static char module_path[256];

static inline const char *module_file(const char *name)
{
	struct utsname u;

	uname(&u);
	snprintf(module_path, sizeof(module_path),
		 "/lib/modules/%s/extra/%s.ko", u.release, name);
	return module_path;
}

static inline int unload(void)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (!syscall(SYS_delete_module, "lbr_snap", O_NONBLOCK))
			return 0;
		if (errno == ENOENT)
			return 0;
		usleep(20000);
	}
	return -errno;
}

/*
 * lbr_snap depends on lbr_snap_fexit (the fexit trampolines), which
 * modprobe would load first: finit_module() does not.  EEXIST is fine.
 */
static inline void load_fexit_module(void)
{
	int fd = open(module_file("lbr_snap_fexit"), O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		syscall(SYS_finit_module, fd, "", 0);
		close(fd);
	}
}

/* finit_module() with @params; 0 or -errno. */
static inline int load(const char *params)
{
	int fd, ret;

	unload();
	load_fexit_module();
	fd = open(module_file("lbr_snap"), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1000 - errno;
	ret = syscall(SYS_finit_module, fd, params, 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

/* finit_module() of @name's .ko with no parameters; 0 or -errno. */
static inline int load_module_file(const char *name)
{
	int fd = open(module_file(name), O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static inline void load_target_module(void)
{
	int fd = open(module_file("lbr_snap_test_target"), O_RDONLY);

	if (fd >= 0) {
		syscall(SYS_finit_module, fd, "", 0);	/* EEXIST is fine */
		close(fd);
	}
}

/* Call a test target function @count times through the test device. */
static inline int trigger(const char *fn, long value, unsigned long count)
{
	char buf[64];
	int fd, len, ret;

	fd = open(TEST_DEV, O_WRONLY);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%s %ld %lu", fn, value, count);
	ret = write(fd, buf, len) == len ? 0 : -errno;
	close(fd);
	return ret;
}

/* A child that waits to be killed (and dies with the test): a live tgid. */
static inline pid_t idle_child(void)
{
	pid_t pid = fork();

	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

static inline int dev_open(int flags)
{
	/* Root's: reads, and changes targets (which needs FMODE_WRITE). */
	return open(LBR_SNAP_DEVICE, O_RDWR | O_CLOEXEC | flags);
}

/*
 * Why the last parse() or drain() failed or stopped early: the errno, the
 * record and field that did not parse, the counts.  Tests print it with
 * TH_LOG("%s", lbr_why).
 */
static char lbr_why[512] = "no failure";

#define lbr_fail(fmt, ...) \
	(snprintf(lbr_why, sizeof(lbr_why), fmt, ##__VA_ARGS__), -1)

/*
 * Split a read() buffer into records; returns how many, or -1 if a record
 * is malformed (torn or of an unknown layout) or there is no room for it
 * in @out, with the reason in lbr_why.
 */
static inline int parse(const char *buf, ssize_t len, struct rec *out, int max)
{
	const struct lbr_snap_record *h;
	ssize_t off = 0;
	int n = 0;

	while (off < len) {
		h = (const void *)(buf + off);
		if (len - off < (ssize_t)sizeof(*h))
			return lbr_fail("record %d at offset %zd: %zd bytes left, a header is %zu",
					n, off, len - off, sizeof(*h));
		if (h->size > len - off)
			return lbr_fail("record %d at offset %zd: size %u, %zd bytes left",
					n, off, h->size, len - off);
		if (h->version != LBR_SNAP_ABI_VERSION)
			return lbr_fail("record %d at offset %zd: version %u, want %u",
					n, off, h->version, LBR_SNAP_ABI_VERSION);
		if (h->hdr_size != sizeof(*h))
			return lbr_fail("record %d at offset %zd: hdr_size %u, want %zu",
					n, off, h->hdr_size, sizeof(*h));
		if (h->entry_size != sizeof(struct lbr_snap_branch))
			return lbr_fail("record %d at offset %zd: entry_size %u, want %zu",
					n, off, h->entry_size,
					sizeof(struct lbr_snap_branch));
		if (h->nr_entries > LBR_SNAP_MAX_ENTRIES)
			return lbr_fail("record %d at offset %zd: nr_entries %u > %u",
					n, off, h->nr_entries, LBR_SNAP_MAX_ENTRIES);
		if (h->nr_stack > LBR_SNAP_MAX_STACK)
			return lbr_fail("record %d at offset %zd: nr_stack %u > %u",
					n, off, h->nr_stack, LBR_SNAP_MAX_STACK);
		if (h->size != h->hdr_size + h->nr_entries * h->entry_size +
			       h->nr_stack * 8)
			return lbr_fail("record %d at offset %zd: size %u != %u + %u * %u + %u * 8",
					n, off, h->size, h->hdr_size,
					h->nr_entries, h->entry_size,
					h->nr_stack);
		if (n >= max)
			return lbr_fail("record %d at offset %zd: no room, the caller has %d",
					n, off, max);
		/* The stack follows the entries: into its own array. */
		memcpy(&out[n], h, h->size - h->nr_stack * 8);
		memcpy(out[n].stack, buf + off + h->size - h->nr_stack * 8,
		       h->nr_stack * 8);
		n++;
		off += h->size;
	}
	return n;
}

/*
 * Set when the last drain() stopped with records maybe left in the device,
 * because @out could not take a full read() more.  Producers that keep
 * writing as fast as drain() reads would otherwise never let it end.
 */
static bool lbr_drain_full;

/*
 * Read without blocking until the device has nothing more (EAGAIN) or @out
 * is nearly full; returns the records read, or -1 with lbr_why set.  Each
 * read() asks for no more bytes than the records @out can still take, so
 * nothing read is ever thrown away.
 */
static inline int drain(int fd, struct rec *out, int max)
{
	static char buf[1 << 16];
	int n = 0, got, reads = 0;
	size_t want;
	ssize_t len;

	lbr_drain_full = false;
	for (;;) {
		/* A record is at least a header: this many always fit. */
		want = (size_t)(max - n) * sizeof(struct lbr_snap_record);
		if (want > sizeof(buf))
			want = sizeof(buf);
		if (want < LBR_SNAP_RECORD_MAX) {
			lbr_drain_full = true;
			snprintf(lbr_why, sizeof(lbr_why),
				 "drain stopped after %d reads: %d records, room for %d",
				 reads, n, max);
			return n;
		}
		len = read(fd, buf, want);
		if (len < 0 && errno == EAGAIN) {
			snprintf(lbr_why, sizeof(lbr_why),
				 "drain: %d records in %d reads, then EAGAIN", n, reads);
			return n;
		}
		if (len < 0)
			return lbr_fail("read %d (%zu bytes) after %d records: %s (errno %d)",
					reads + 1, want, n, strerror(errno), errno);
		if (len == 0)
			return lbr_fail("read %d after %d records: 0 bytes (EOF)",
					reads + 1, n);
		reads++;
		got = parse(buf, len, out + n, max - n);
		if (got < 0) {
			char why[sizeof(lbr_why) - 96];

			memcpy(why, lbr_why, sizeof(why) - 1);
			why[sizeof(why) - 1] = '\0';
			return lbr_fail("read %d of %zd bytes after %d records: %.*s",
					reads, len, n, (int)sizeof(why), why);
		}
		n += got;
	}
}

/*
 * Does this CPU's LBR filter by CPL and by kind of branch?  Arch LBR says
 * so in CPUID.(0x1c,0):EBX[1:0] (the lab's lbr-lab-arch-nofilter clears
 * both); legacy LBR with LBR_SELECT and AMD's LbrExtV2 do (no lab CPU
 * lacks LBR_SELECT).
 */
static inline bool lbr_cpu_filters(void)
{
	unsigned int a, b, c, d;

	if (__get_cpuid_max(0, NULL) < 0x1c)
		return true;
	__cpuid_count(7, 0, a, b, c, d);
	if (!(d & (1u << 19)))
		return true;
	__cpuid_count(0x1c, 0, a, b, c, d);
	return (b & 3) == 3;
}

/* Take @cpu offline (@on 0) or online: 0 or -errno. */
static inline int set_online(int cpu, int on)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

/* 1 online, 0 offline, or -errno. */
static inline int cpu_is_online(int cpu)
{
	char path[64], c = 0;
	int fd, n;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, &c, 1);
	close(fd);
	return n == 1 ? c == '1' : -EIO;
}

static inline int get_info(int fd, struct lbr_snap_info *info)
{
	return ioctl(fd, LBR_SNAP_IOC_GET_INFO, info);
}

/* Load with @params and fetch GET_INFO; 0 or -errno. */
static inline int load_get_info(const char *params, struct lbr_snap_info *info)
{
	int fd, ret = load(params);

	if (ret)
		return ret;
	fd = dev_open(0);
	if (fd < 0)
		return -errno;
	ret = get_info(fd, info) ? -errno : 0;
	close(fd);
	return ret;
}

static inline int get_stats(int fd, struct lbr_snap_stats *hdr,
		     struct lbr_snap_target_stats *st, unsigned int nr)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->nr = nr;
	hdr->entry_size = sizeof(*st);
	hdr->stats_ptr = (unsigned long)st;
	return ioctl(fd, LBR_SNAP_IOC_GET_STATS, hdr);
}

/* Address of a text symbol in /proc/kallsyms, 0 if absent. */
static inline unsigned long long ksym(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    !strcmp(sym, name) && (type == 't' || type == 'T')) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

/* The first symbol address above @addr: the end of @addr's function. */
static inline unsigned long long ksym_end(unsigned long long addr)
{
	char line[512];
	unsigned long long a, end = ~0ULL;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx", &a) == 1 && a > addr && a < end)
			end = a;
	fclose(f);
	return end;
}

/* Does the symbol @addr is in (the nearest at or below it) start with @prefix? */
static inline bool ksym_is(unsigned long long addr, const char *prefix)
{
	char line[512], sym[256], best[256] = "";
	unsigned long long a, at = 0;
	char type;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 &&
		    a <= addr && a >= at) {
			at = a;
			strcpy(best, sym);
		}
	fclose(f);
	return !strncmp(best, prefix, strlen(prefix));
}

/*
 * A snapshot of /proc/kallsyms sorted by address, for tests that look up
 * many addresses (a scan per lookup takes seconds under TCG).  Take it
 * after the modules of interest are loaded; ksyms_drop() frees it.
 */
struct ksym_ent {
	unsigned long long addr;
	size_t line;		/* kallsyms order, among equal addresses */
	char *name;
};

static struct ksym_ent *ksyms;
static size_t nr_ksyms;

static inline int ksym_cmp(const void *a, const void *b)
{
	const struct ksym_ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static inline void ksyms_drop(void)
{
	while (nr_ksyms)
		free(ksyms[--nr_ksyms].name);
	free(ksyms);
	ksyms = NULL;
}

static inline bool ksyms_snapshot(void)
{
	char line[512], sym[256], type;
	unsigned long long a;
	size_t cap = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	ksyms_drop();
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3 || !a)
			continue;
		if (nr_ksyms == cap) {
			struct ksym_ent *n;

			cap = cap ? 2 * cap : 65536;
			n = realloc(ksyms, cap * sizeof(*n));
			if (!n)
				break;
			ksyms = n;
		}
		ksyms[nr_ksyms].addr = a;
		ksyms[nr_ksyms].line = nr_ksyms;
		ksyms[nr_ksyms++].name = strdup(sym);
	}
	fclose(f);
	qsort(ksyms, nr_ksyms, sizeof(*ksyms), ksym_cmp);
	return nr_ksyms;
}

/*
 * The symbol @addr is in, from the snapshot: its name, start and end (the
 * next symbol up).  False if none is at or below @addr.
 */
static inline bool ksym_range(unsigned long long addr, char *name, size_t len,
			      unsigned long long *start,
			      unsigned long long *end)
{
	size_t lo = 0, hi = nr_ksyms, i;

	name[0] = 0;
	*start = 0;
	*end = ~0ULL;
	while (lo < hi) {		/* first entry above @addr */
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nr_ksyms)
		*end = ksyms[lo].addr;
	if (!lo)
		return false;
	/* Of aliases at one address, the first kallsyms listed. */
	for (i = lo - 1; i > 0 && ksyms[i - 1].addr == ksyms[lo - 1].addr; i--)
		;
	*start = ksyms[i].addr;
	snprintf(name, len, "%s", ksyms[i].name);
	return true;
}

/* Is @name among the kprobes the kernel has registered? */
static inline bool kprobe_listed(const char *name)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/sys/kernel/debug/kprobes/list", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, name))
			found = true;
	fclose(f);
	return found;
}

/* Does ftrace list a direct call (an fexit hook) on @name? */
static inline bool direct_listed(const char *name)
{
	char line[512];
	bool found = false, on = false;
	size_t len = strlen(name);
	FILE *f = fopen("/sys/kernel/debug/tracing/enabled_functions", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		/* "name [mod] (n) R D ..." then "\tdirect-->tramp" */
		if (line[0] != '\t')
			on = !strncmp(line, name, len) &&
			     (line[len] == ' ' || line[len] == '\t');
		if (on && strstr(line, "direct-->"))
			found = true;
	}
	fclose(f);
	return found;
}

/* Is @name hooked by a kretprobe or an ftrace direct call? */
static inline bool hooked(const char *name)
{
	return kprobe_listed(name) || direct_listed(name);
}

/* A reader of /dev/kmsg positioned at the end: it sees only new lines. */
static inline int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Has the kernel logged @text since kmsg_open()?  Keeps what it read. */
static inline bool kmsg_has(int fd, const char *text)
{
	static char log[1 << 16];
	static size_t used;
	ssize_t len;

	while (used < sizeof(log) - 1) {
		len = read(fd, log + used, sizeof(log) - 1 - used);
		if (len < 0 && errno == EPIPE)
			continue;	/* overwritten records: skip on */
		if (len <= 0)
			break;
		used += len;
	}
	log[used] = '\0';
	return strstr(log, text) != NULL;
}

static inline unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline int nr_cpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

/* LBR_SNAP_IOC_ADD_TARGET or _DEL_TARGET; 0 or -errno. */
static inline int target_ctl(int fd, unsigned long cmd, const char *spec, __u32 *id)
{
	struct lbr_snap_target_ctl ctl = { 0 };

	snprintf(ctl.spec, sizeof(ctl.spec), "%s", spec);
	if (ioctl(fd, cmd, &ctl))
		return -errno;
	if (id)
		*id = ctl.id;
	return 0;
}

#endif /* LBR_TEST_UTIL_H */
