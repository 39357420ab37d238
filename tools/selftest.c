// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap selftest: what lbr_snap does on this machine, as one report a
 * user can attach to a bug.
 *
 * For each way lbr_snap can run here (mode=raw and mode=perf; Arch LBR
 * read by XSAVES and by RDMSR), it loads the module and reads GET_INFO:
 * the backend, its depth, and the CPUs whose LBR failed the module's
 * check.  Then, for each hook (fexit, kretprobe), it attaches
 * do_sys_openat2 and, on every online CPU, makes open() fail: each
 * record must carry LBR, found on, whose newest entry before the hook's
 * own is do_sys_openat2's return.  It says how many entries the hook
 * took and how many it leaves to the user, and what open() costs in TSC
 * cycles on one CPU with the hook and without it, a failure (recorded)
 * and a success (filtered), beside the MSR accesses the module makes for
 * each (GET_INFO) and, on a CPU that counts its own (the LBR lab's MSR
 * LAB_MSR_COUNT, read through /dev/cpu/N/msr where the msr module is
 * loaded), what the CPU counted.
 *
 * It unloads what it loaded, and restores its CPU affinity.  A module
 * already loaded is only described: its records are its reader's, and
 * its parameters someone's choice.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <x86intrin.h>

#include "btf.h"
#include "device.h"
#include "ksym.h"
#include "module.h"
#include "record.h"
#include "selftest.h"
#include "selftest_int.h"
#include "util.h"

#ifndef LBR_SNAP_TOOL_VERSION
#define LBR_SNAP_TOOL_VERSION	"unknown"
#endif

#define ST_TARGET	"do_sys_openat2"
#define ST_MISSING	"/lbr-snap-selftest-no-such-file"
#define ST_EXISTING	"/"
#define ST_PER_CPU	4	/* failing open()s on each CPU */
#define ST_CALLS	200	/* open()s a timed run makes, at most */
#define ST_RUNS		5	/* timed runs; the median counts */
#define ST_MAX_CPUS	4096
/* The LBR lab's count of a vCPU's RDMSRs and WRMSRs (tests/lbr-lab). */
#define LAB_MSR_COUNT	0x4c4252

const char *const st_hook_names[ST_HOOKS] = { "fexit", "kretprobe" };


static volatile sig_atomic_t st_stop;

static void st_on_signal(int sig)
{
	(void)sig;
	st_stop = 1;
}

__printf(2, 3) static void problem(struct st *s, const char *fmt, ...)
{
	va_list ap;

	if (s->nr_problems == ST_MAX_PROBLEMS)
		return;
	va_start(ap, fmt);
	vsnprintf(s->problems[s->nr_problems++], sizeof(s->problems[0]), fmt,
		  ap);
	va_end(ap);
}

/* The CPUs online now, in /sys/devices/system/cpu/online's list. */
static unsigned int online_cpus(int *cpus, unsigned int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	unsigned int n = 0;
	int a, b;
	char sep;

	if (!f)
		return 0;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		sep = 0;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' &&
		    fscanf(f, "%d%c", &b, &sep) < 1)
			break;
		for (; a <= b && n < max; a++)
			cpus[n++] = a;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n;
}

/* Is @cpu in GET_INFO's cpus_failed list ("1,3" or "0-3")? */
static bool cpu_listed(const char *list, size_t len, int cpu)
{
	char buf[64], *p, *end;
	long a, b;

	snprintf(buf, sizeof(buf), "%.*s", (int)len, list);
	for (p = buf; *p; p = *end ? end + 1 : end) {
		a = strtol(p, &end, 10);
		if (end == p)
			return false;
		b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (cpu >= a && cpu <= b)
			return true;
	}
	return false;
}

static bool pin(const struct st *s, int cpu)
{
	cpu_set_t *set = CPU_ALLOC(ST_MAX_CPUS);
	bool ok;

	if (!set)
		oom();
	CPU_ZERO_S(s->affinity_size, set);
	CPU_SET_S(cpu, s->affinity_size, set);
	ok = !sched_setaffinity(0, s->affinity_size, set);
	CPU_FREE(set);
	return ok;
}

/* The lab's MSR count of @cpu, or -1 where the CPU keeps none. */
static long long lab_count(int msr_fd)
{
	unsigned long long v;

	if (msr_fd < 0 ||
	    pread(msr_fd, &v, sizeof(v), LAB_MSR_COUNT) != sizeof(v))
		return -1;
	return (long long)v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void drain(struct st *s, int fd, unsigned int id, struct st_cpu *sc);

/*
 * ST_RUNS runs of s->calls open(@path) (closed when it succeeds) on the
 * CPU the caller is pinned to: the median run's cycles and MSR accesses
 * per call.  The records go between runs (@fd), so that none is dropped:
 * a dropped one is not read, and costs less.
 */
static struct st_time time_opens(struct st *s, const char *path, int msr_fd,
				 int fd)
{
	struct st_cpu scratch = { .cpu = -1 };
	double cyc[ST_RUNS], sorted[ST_RUNS], msr[ST_RUNS];
	struct st_time t = { .msrs = -1 };
	unsigned long long t0, t1;
	long long m0, m1;
	unsigned int r, i;
	int f;

	for (r = 0; r < ST_RUNS; r++) {
		m0 = lab_count(msr_fd);
		t0 = __rdtsc();
		for (i = 0; i < s->calls; i++) {
			f = open(path, O_RDONLY);
			if (f >= 0)
				close(f);
		}
		t1 = __rdtsc();
		m1 = lab_count(msr_fd);
		cyc[r] = (double)(t1 - t0) / s->calls;
		msr[r] = m0 >= 0 && m1 >= m0 ? (double)(m1 - m0) / s->calls : -1;
		if (fd >= 0)
			drain(s, fd, 0, &scratch);
	}
	memcpy(sorted, cyc, sizeof(sorted));
	qsort(sorted, ST_RUNS, sizeof(double), cmp_double);
	t.cycles = sorted[ST_RUNS / 2];
	for (r = 0; r < ST_RUNS; r++)
		if (cyc[r] == t.cycles)
			t.msrs = msr[r];
	return t;
}

static int open_msr(int cpu)
{
	char path[64];

	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
	return open(path, O_RDONLY);
}

/* The last line of the kernel log that names lbr_snap, since @fd was opened. */
static void kmsg_reason(int fd, char *out, size_t len)
{
	char rec[1024];
	ssize_t n;
	char *msg;

	if (fd < 0)
		return;
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg || !strstr(msg, "lbr_snap"))
			continue;
		msg++;
		msg[strcspn(msg, "\n")] = '\0';
		snprintf(out, len, "%s", msg);
	}
}

static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * modprobe lbr_snap for @c; its error, from the kernel log, if it fails.
 * Never over a module still loaded (a failed unload): modprobe would say
 * yes and the old one would be tested under @c's name.
 */
static bool load(struct st *s, struct st_config *c)
{
	char mode[32], read[32];
	/* It loads with one target at least: run_config() takes it off. */
	char *argv[] = { "modprobe", "lbr_snap", mode, read,
			 "targets=" ST_TARGET, NULL };
	int kmsg = kmsg_open();
	int ret;

	if (!access("/sys/module/lbr_snap", F_OK)) {
		snprintf(c->error, sizeof(c->error),
			 "not tried: lbr_snap is still loaded");
		problem(s, "mode=%s: lbr_snap could not be unloaded before it",
			c->mode);
		if (kmsg >= 0)
			close(kmsg);
		return false;
	}
	snprintf(mode, sizeof(mode), "mode=%s", c->mode);
	snprintf(read, sizeof(read), "lbr_read=%s", c->read);
	if (access("/sys/module/lbr_snap_fexit", F_OK))
		s->loaded_fexit = true;
	ret = module_run(argv);
	if (ret) {
		snprintf(c->error, sizeof(c->error), "modprobe exited %d", ret);
		kmsg_reason(kmsg, c->error, sizeof(c->error));
	}
	if (kmsg >= 0)
		close(kmsg);
	return !ret;
}

/* @name is @func, or a clone of it (func.isra.0, func.constprop.0). */
static bool same_function(const char *name, const char *func)
{
	size_t n = strlen(func);

	return !strncmp(name, func, n) && (!name[n] || name[n] == '.');
}

/* Read every record there is; check those of this process and @id. */
static void drain(struct st *s, int fd, unsigned int id, struct st_cpu *sc)
{
	struct lbr_snap_branch b;
	unsigned long long off;
	unsigned int reads, size;
	const char *name;
	struct rec r;
	size_t at;
	ssize_t n;
	int i;

	/* Bounded: other tasks' failing open()s may keep coming. */
	for (reads = 0; reads < 256 &&
	     (n = read(fd, s->buf, s->buf_len)) > 0; reads++) {
		for (at = 0; at + LBR_SNAP_RECORD_SIZE_V1 <= (size_t)n;
		     at += size) {
			char why[128];

			memcpy(&size, s->buf + at, sizeof(size));
			if (rec_check_size(size, why, sizeof(why)) ==
			    REC_CORRUPT || at + size > (size_t)n) {
				problem(s, "a corrupt record: %s", why);
				return;
			}
			rec_load(&r, s->buf + at);
			if (rec_check(&r, why, sizeof(why)) != REC_OK)
				continue;
			if (r.hdr.tgid != (__u32)getpid() ||
			    r.hdr.target_id != id || (int)r.hdr.cpu != sc->cpu)
				continue;
			sc->records++;
			if (r.hdr.flags & LBR_SNAP_REC_NO_LBR) {
				sc->no_lbr++;
				continue;
			}
			if (r.hdr.flags & LBR_SNAP_REC_WAS_OFF)
				sc->was_off++;
			if (r.hdr.probe_entries > sc->hook_most)
				sc->hook_most = r.hdr.probe_entries;
			/*
			 * The newest entry before the hook's, return thunks
			 * passed over: a branch out of do_sys_openat2.
			 */
			name = NULL;
			for (i = (int)r.hdr.nr_entries - 1 - r.hdr.probe_entries;
			     i >= 0; i--) {
				rec_from_to(&r, i, &b);
				name = ksyms_name(&s->ks, b.from, &off);
				if (!name || (!strstr(name, "return_thunk") &&
					      strncmp(name, "srso_", 5) &&
					      strncmp(name, "retbleed_", 9) &&
					      strcmp(name, "__x86_return_skl")))
					break;
			}
			/*
			 * The hook and a return thunk took every entry there
			 * is (AMD's 16, a hole or two fewer): nothing of the
			 * function is left.
			 */
			if (i < 0) {
				sc->no_room++;
				continue;
			}
			if (r.hdr.probe_entries < sc->hook_entries)
				sc->hook_entries = r.hdr.probe_entries;
			if ((r.hdr.flags & LBR_SNAP_REC_NO_RETURN) ||
			    !name || !same_function(name, ST_TARGET))
				sc->no_return++;
		}
	}
}

static void check_cpu(struct st *s, struct st_config *c, int fd,
		      unsigned int id, struct st_cpu *sc)
{
	int i, f;

	sc->refused = c->info.nr_cpus_failed &&
		      cpu_listed(c->info.cpus_failed,
				 sizeof(c->info.cpus_failed), sc->cpu);
	if (!pin(s, sc->cpu)) {
		sc->verdict = "could not run there";
		return;
	}
	for (i = 0; i < ST_PER_CPU; i++) {
		f = open(ST_MISSING, O_RDONLY);
		if (f >= 0)
			close(f);
	}
	sc->hook_entries = UINT_MAX;
	drain(s, fd, id, sc);
	if (sc->hook_entries == UINT_MAX)	/* no record with room */
		sc->hook_entries = sc->hook_most;
	if (sc->records < ST_PER_CPU)
		sc->verdict = "records missing";
	else if (c->info.backend == LBR_SNAP_BACKEND_NONE)
		sc->verdict = sc->no_lbr == sc->records ? "no LBR" :
			      "branches without LBR";
	else if (sc->refused)
		sc->verdict = sc->no_lbr == sc->records ? "refused" :
			      "refused, but branches";
	else if (sc->no_lbr)
		sc->verdict = "records without LBR";
	else if (sc->was_off)
		sc->verdict = "LBR found off";
	else if (sc->no_return)
		sc->verdict = "the return is not the newest entry";
	else if (!st_with_room(sc))
		/* Every record: the hook (and a return thunk) took it all. */
		sc->verdict = "no entry left";
	else
		sc->verdict = "ok";
}

static bool verdict_ok(const struct st_cpu *sc)
{
	return !strcmp(sc->verdict, "ok") || !strcmp(sc->verdict, "no LBR") ||
	       !strcmp(sc->verdict, "refused") ||
	       !strcmp(sc->verdict, "no entry left");
}

/*
 * The MSR accesses the CPU counted against the module's, where it counts
 * them and lbr_snap alone touches LBR's: in mode=perf, perf's own (the
 * PMU disabled and enabled around its scheduling, its PMIs) come and go
 * with time, not with the returns.
 */
static void check_msrs(struct st *s, const struct st_config *c, int h,
		       const struct st_hook *hk)
{
	double fail, ok, want_fail = c->info.capture_msrs;
	double want_ok = h == ST_FEXIT ? 0 : c->info.filtered_msrs;

	/* A counter that did not move (an MSR a hypervisor reads as 0). */
	if (strcmp(c->info.mode, "raw") || !c->info.capture_msrs ||
	    hk->cost.fail.msrs <= 0 ||
	    hk->cost.fail.msrs < 0 || c->base_fail.msrs < 0 ||
	    hk->cost.ok.msrs < 0 || c->base_ok.msrs < 0)
		return;
	fail = hk->cost.fail.msrs - c->base_fail.msrs;
	ok = hk->cost.ok.msrs - c->base_ok.msrs;
	if (fail < want_fail - 0.5 || fail > want_fail + 0.5)
		problem(s, "mode=%s %s: a recorded return made %.2f MSR accesses, the module says %.0f",
			c->mode, st_hook_names[h], fail, want_fail);
	if (ok < want_ok - 0.5 || ok > want_ok + 0.5)
		problem(s, "mode=%s %s: a filtered return made %.2f MSR accesses, the module says %.0f",
			c->mode, st_hook_names[h], ok, want_ok);
}

static int del_target(int fd)
{
	struct lbr_snap_target_ctl ctl = { .spec = ST_TARGET };

	return ioctl(fd, LBR_SNAP_IOC_DEL_TARGET, &ctl);
}

static void run_hook(struct st *s, struct st_config *c, int fd, int h)
{
	struct st_hook *hk = &c->hooks[h];
	struct lbr_snap_target_ctl ctl = { 0 };
	char spec[sizeof(ctl.spec)], why[128];
	unsigned int i;
	int msr_fd;

	/*
	 * Its return type from BTF (long on 6.1, int on 7.2); without BTF
	 * the default int, which reads either's errno right.
	 */
	snprintf(spec, sizeof(spec), "%s@%s", ST_TARGET, st_hook_names[h]);
	if (btf_complete_spec(spec, ctl.spec, sizeof(ctl.spec), why,
			      sizeof(why)))
		snprintf(ctl.spec, sizeof(ctl.spec), "%s", spec);
	if (ioctl(fd, LBR_SNAP_IOC_ADD_TARGET, &ctl) < 0) {
		snprintf(hk->error, sizeof(hk->error), "cannot attach: %s",
			 strerror(errno));
		return;
	}
	hk->cpus = calloc(s->nr_cpus, sizeof(*hk->cpus));
	if (!hk->cpus)
		oom();
	for (i = 0; i < s->nr_cpus && !st_stop; i++) {
		hk->cpus[i].cpu = s->cpus[i];
		check_cpu(s, c, fd, ctl.id, &hk->cpus[i]);
		hk->nr_cpus++;
		if (!verdict_ok(&hk->cpus[i]))
			problem(s, "mode=%s %s, cpu %d: %s (%u records: %u without LBR, %u found it off, %u without the return)",
				c->mode, st_hook_names[h], s->cpus[i],
				hk->cpus[i].verdict, hk->cpus[i].records,
				hk->cpus[i].no_lbr, hk->cpus[i].was_off,
				hk->cpus[i].no_return);
	}
	if (c->cost_cpu >= 0 && !st_stop && pin(s, c->cost_cpu)) {
		msr_fd = open_msr(c->cost_cpu);
		hk->cost.cpu = c->cost_cpu;
		hk->cost.fail = time_opens(s, ST_MISSING, msr_fd, fd);
		hk->cost.ok = time_opens(s, ST_EXISTING, msr_fd, fd);
		hk->cost_done = true;
		if (msr_fd >= 0)
			close(msr_fd);
		check_msrs(s, c, h, hk);
	}
	if (del_target(fd))
		problem(s, "mode=%s: DEL_TARGET %s: %s", c->mode, ST_TARGET,
			strerror(errno));
}

/* The first online CPU the module did not refuse: the one timed. */
static int cost_cpu(const struct st *s, const struct st_config *c)
{
	unsigned int i;

	for (i = 0; i < s->nr_cpus; i++)
		if (!c->info.nr_cpus_failed ||
		    !cpu_listed(c->info.cpus_failed,
				sizeof(c->info.cpus_failed), s->cpus[i]))
			return s->cpus[i];
	return -1;
}

static void run_config(struct st *s, struct st_config *c)
{
	int fd, h, msr_fd;

	if (!load(s, c))
		goto out;
	fd = open_device(LBR_SNAP_DEVICE, O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		snprintf(c->error, sizeof(c->error), "loaded, but %s cannot be opened",
			 LBR_SNAP_DEVICE);
		goto out;
	}
	if (get_device_info(fd, LBR_SNAP_DEVICE, &c->info)) {
		snprintf(c->error, sizeof(c->error), "loaded, but GET_INFO failed");
		goto out_close;
	}
	/* Without LBR the mode is "none", whichever was asked for. */
	if (c->info.backend != LBR_SNAP_BACKEND_NONE &&
	    strncmp(c->info.mode, c->mode, sizeof(c->info.mode))) {
		char got[sizeof(c->info.mode) + 1] = "";

		memcpy(got, c->info.mode, sizeof(c->info.mode));
		snprintf(c->error, sizeof(c->error), "loaded, but in mode=%s",
			 got);
		problem(s, "mode=%s: the module loaded in mode=%s", c->mode,
			got);
		goto out_close;
	}
	c->have_info = true;
	if (c->info.nr_cpus_perf_off)
		problem(s, "mode=%s: perf does not run lbr_snap's event on cpus %.*s",
			c->mode, (int)sizeof(c->info.cpus_perf_off),
			c->info.cpus_perf_off);
	if (c->info.nr_cpus_failed)
		problem(s, "mode=%s: cpus %.*s refused: %.*s", c->mode,
			(int)sizeof(c->info.cpus_failed), c->info.cpus_failed,
			(int)sizeof(c->info.cpu_failure), c->info.cpu_failure);
	if (del_target(fd)) {
		snprintf(c->error, sizeof(c->error), "DEL_TARGET %s: %s",
			 ST_TARGET, strerror(errno));
		goto out_close;
	}
	s->buf_len = (c->info.record_max ? c->info.record_max :
		      LBR_SNAP_RECORD_MAX) * 64;
	s->buf = xrealloc(s->buf, s->buf_len);
	/* A run's records fit in half a CPU's buffer. */
	s->calls = c->info.buffer_kb * 1024ULL / (s->buf_len / 64) / 2;
	if (s->calls > ST_CALLS)
		s->calls = ST_CALLS;
	if (s->calls < 10)
		s->calls = 10;
	c->cost_cpu = cost_cpu(s, c);
	if (c->cost_cpu >= 0 && pin(s, c->cost_cpu)) {
		msr_fd = open_msr(c->cost_cpu);
		c->base_fail = time_opens(s, ST_MISSING, msr_fd, fd);
		c->base_ok = time_opens(s, ST_EXISTING, msr_fd, fd);
		if (msr_fd >= 0)
			close(msr_fd);
	}
	for (h = 0; h < ST_HOOKS && !st_stop; h++)
		run_hook(s, c, fd, h);
out_close:
	close(fd);
out:
	/* lbr_snap_fexit, if the selftest loaded it, once at the end. */
	module_unload(false);
}

static void add_config(struct st *s, const char *mode, const char *read)
{
	struct st_config *c;

	if (s->nr_configs == ST_MAX_CONFIGS)
		return;
	c = &s->configs[s->nr_configs++];
	snprintf(c->mode, sizeof(c->mode), "%s", mode);
	snprintf(c->read, sizeof(c->read), "%s", read);
	c->cost_cpu = -1;
}


static const char *verdict(const struct st *s)
{
	unsigned int i, loaded = 0;
	bool lbr = false;

	for (i = 0; i < s->nr_configs; i++) {
		loaded += s->configs[i].have_info;
		if (s->configs[i].have_info &&
		    s->configs[i].info.backend != LBR_SNAP_BACKEND_NONE)
			lbr = true;
	}
	if (s->nr_problems)
		return "failed";
	if (s->was_loaded)
		return "described";
	if (st_stop)
		return "interrupted";
	return lbr ? "ok" : "no LBR";
}

int selftest_run(const char *kallsyms, bool json)
{
	struct sigaction sa = { .sa_handler = st_on_signal };
	struct st s = { 0 };
	struct utsname u;
	const char *v;
	unsigned int i, n;
	int fd, ret;

	if (!has_cap_sys_admin()) {
		pr_err("selftest loads the module: needs root (CAP_SYS_ADMIN)");
		return EXIT_PERM;
	}
	uname(&u);
	s.cpus = calloc(ST_MAX_CPUS, sizeof(*s.cpus));
	s.affinity = CPU_ALLOC(ST_MAX_CPUS);
	if (!s.cpus || !s.affinity)
		oom();
	s.affinity_size = CPU_ALLOC_SIZE(ST_MAX_CPUS);
	if (sched_getaffinity(0, s.affinity_size, s.affinity)) {
		pr_err("sched_getaffinity: %s", strerror(errno));
		return EXIT_ERROR;
	}
	/* The online CPUs this task may run on; the others are said. */
	n = online_cpus(s.cpus, ST_MAX_CPUS);
	for (i = 0; i < n; i++) {
		if (CPU_ISSET_S(s.cpus[i], s.affinity_size, s.affinity))
			s.cpus[s.nr_cpus++] = s.cpus[i];
		else
			s.nr_not_allowed++;
	}
	if (!s.nr_cpus)
		problem(&s, "no online CPU this task may run on");
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	s.was_loaded = !access("/sys/module/lbr_snap", F_OK);
	if (s.was_loaded) {
		fd = open_device(LBR_SNAP_DEVICE, O_RDONLY);
		if (fd < 0)
			return -fd;
		ret = get_device_info(fd, LBR_SNAP_DEVICE, &s.loaded_info);
		close(fd);
		if (ret)
			return -ret;
		if (s.loaded_info.nr_cpus_failed)
			problem(&s, "cpus %.*s refused: %.*s",
				(int)sizeof(s.loaded_info.cpus_failed),
				s.loaded_info.cpus_failed,
				(int)sizeof(s.loaded_info.cpu_failure),
				s.loaded_info.cpu_failure);
	} else {
		ksyms_load(&s.ks, kallsyms);
		/*
		 * perf first: where it keeps LBR for another user (EBUSY),
		 * raw, which would take it behind perf's back, is not tried.
		 */
		add_config(&s, "perf", "auto");
		add_config(&s, "raw", "auto");
		for (i = 0; i < s.nr_configs && !st_stop; i++) {
			struct st_config *c = &s.configs[i];

			if (!strcmp(c->mode, "raw") &&
			    strstr(s.configs[0].error, "EBUSY")) {
				snprintf(c->error, sizeof(c->error),
					 "not tried: perf keeps LBR for another user");
				continue;
			}
			fprintf(stderr, "lbr-snap: selftest: mode=%s lbr_read=%s\n",
				c->mode, c->read);
			run_config(&s, c);
			/* Arch LBR read by one XSAVES: by RDMSR too. */
			if (c->have_info &&
			    c->info.lbr_read == LBR_SNAP_READ_XSAVES &&
			    !strcmp(c->read, "auto")) {
				char mode[sizeof(c->mode)];

				memcpy(mode, c->mode, sizeof(mode));
				add_config(&s, mode, "msr");
			}
		}
		if (s.loaded_fexit)
			module_unload(true);
		for (i = n = 0; i < s.nr_configs; i++)
			n += s.configs[i].have_info;
		if (!n && !st_stop)
			problem(&s, "lbr_snap loaded in no mode");
		ksyms_free(&s.ks);
	}
	sched_setaffinity(0, s.affinity_size, s.affinity);
	v = verdict(&s);
	if (json)
		st_print_json(&s, &u, v);
	else
		st_print_text(&s, &u, v);
	for (i = 0; i < s.nr_configs; i++)
		for (n = 0; n < ST_HOOKS; n++)
			free(s.configs[i].hooks[n].cpus);
	free(s.buf);
	free(s.cpus);
	CPU_FREE(s.affinity);
	return !strcmp(v, "failed") ? EXIT_ERROR : 0;
}
