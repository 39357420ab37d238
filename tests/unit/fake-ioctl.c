// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for the lbr_snap module's ioctls, linked into a test build of
 * lbr-snap with "ld --wrap=ioctl", so info, stats, flush and the ABI check
 * can be tested without the module.  Any file then acts as the device.
 *
 *   FAKE_LBR_ABI=N     GET_INFO reports ABI version N
 *   FAKE_LBR_ERRNO=N   every lbr_snap ioctl fails with errno N
 *
 *   FAKE_LBR_ADD_FAIL=SPEC  ADD_TARGET of SPEC fails with EINVAL, and
 *                      so does an ADD_TARGETS with it (its entry -EINVAL,
 *                      the others -ECANCELED)
 *   FAKE_LBR_ADD_EXISTS=SPEC  ADD_TARGET of SPEC fails with EEXIST, and
 *                      an ADD_TARGETS entry of SPEC (-EEXIST)
 *   FAKE_LBR_CTL_ERRNO=N  ADD_TARGET, DEL_TARGET and SET_CAPTURE fail
 *                         with errno N (after printing their line)
 *   FAKE_LBR_VERSION=S  GET_INFO reports module version S ("" for none)
 *   FAKE_LBR_NR_TARGETS=N  GET_INFO reports N targets attached (3)
 *   FAKE_LBR_BATCH_TARGETS=N  GET_INFO reports N of them a batch's (0)
 *   FAKE_LBR_FEXIT_ROOM=N  ADD_TARGETS hooks N functions by fexit in all,
 *                      across calls; past them LBR_SNAP_BATCH_FALLBACK
 *                      gives kretprobes, else the call fails with E2BIG
 *   FAKE_LBR_NO_TREE=1  SET_FILTER refuses the tree filter (EINVAL), as a
 *                       module from before it
 *   FAKE_LBR_STACK_DEPTH=N  GET_INFO reports stack_depth N (16)
 *   FAKE_LBR_NO_DIRECT=1  ADD_TARGETS as on a kernel without ftrace direct
 *                      calls: EOPNOTSUPP, but with LBR_SNAP_BATCH_FALLBACK
 *                      and no "@fexit" spec, which gives kretprobes
 *   FAKE_LBR_BATCH_OLD=1  ADD_TARGETS as a module before kretprobes in a
 *                      batch: LBR_SNAP_BATCH_FALLBACK fails with EINVAL,
 *                      no entry's hook is written, and an entry's hook
 *                      or reserved not 0 fails the call with E2BIG (as
 *                      copy_struct_from_user() does)
 *   FAKE_LBR_STATS_ERRNO=N  GET_STATS fails with errno N
 *   FAKE_LBR_MANY_STATS=N  GET_STATS lists N more targets (batch_NNNN)
 *   FAKE_LBR_LBR_ERRNO=N  SET_LBR_FILTER fails with errno N
 *
 * GET_INFO's LBR filter is kernel,any_return until SET_LBR_FILTER sets
 * another (in this process).
 *   FAKE_LBR_ALL_FILTERED=1  kmalloc_trace's 7 returns were all filtered
 *   FAKE_LBR_TRACE_COUNTS=C,F,D  a target ADD_TARGET attached shows in
 *                         GET_STATS with 0 counters the first time, then
 *                         C captured, F filtered and D dropped returns
 *                         (0,0,0 without it), as if its command made them
 *
 * ADD_TARGET gives the new target id 7 and the hook its spec names
 * (fexit if it ends in "@fexit", else kretprobe).
 *
 * FLUSH, ADD_TARGET, DEL_TARGET, SET_CAPTURE, SET_FILTER and
 * SET_LBR_FILTER print "fake: NAME [ARG]" on stderr so tests can see they
 * were called, and in which order (SET_FILTER's ARG: flags, pid, tgid and
 * comm; SET_LBR_FILTER's: cpl and kinds).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lbr_snap.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

int __real_ioctl(int fd, unsigned long req, ...);

static const struct lbr_snap_target_stats targets[] = {
	{ "do_sys_openat2", 0xffffffff81001000ull, 0, LBR_SNAP_RET_INT,
	  120, 100, 15, 5, 0, LBR_SNAP_HOOK_FEXIT, 3, 4, 1, 6, 0, 0 },
	{ "kmalloc_trace", 0xffffffff81004000ull, 1, LBR_SNAP_RET_PTR,
	  7, 7, 0, 0, 2, LBR_SNAP_HOOK_KRETPROBE, -1, 0, 0, 0, 0, 0 },
	{ "ext4_file_open", 0xffffffffc0200000ull, 2, LBR_SNAP_RET_LONG,
	  0, 0, 0, 0, 0, LBR_SNAP_HOOK_KRETPROBE, 2, 0, 0, 0, 0, 0 },
	{ "nfs_open", 0xffffffffc0300000ull, 3, LBR_SNAP_RET_INT,
	  5, 5, 0, 0, 0, LBR_SNAP_HOOK_FEXIT, 2, 0, 0, 0,
	  LBR_SNAP_TARGET_GONE, 0 },
};

/*
 * The targets ADD_TARGET and ADD_TARGETS attached, until DEL_TARGET(S):
 * listed by GET_STATS (id 7 for ADD_TARGET's).
 */
static struct {
	char name[LBR_SNAP_NAME_LEN];
	unsigned int ret_type, hook, seen, id;
} added[1024];
static unsigned int nr_added;

static unsigned int spec_ret_type(const char *spec)
{
	static const char *const types[] = {
		[LBR_SNAP_RET_INT] = "%int", [LBR_SNAP_RET_LONG] = "%long",
		[LBR_SNAP_RET_PTR] = "%ptr", [LBR_SNAP_RET_BOOL] = "%bool",
		[LBR_SNAP_RET_VOID] = "%void",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(types); i++)
		if (strstr(spec, types[i]))
			return i;
	return LBR_SNAP_RET_INT;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v ? atoi(v) : def;
}

static unsigned int fake_lbr_cpl = LBR_SNAP_LBR_KERNEL;
static unsigned int fake_lbr_kinds = LBR_SNAP_KIND_RET | LBR_SNAP_KIND_FAR;

static int fake_info(struct lbr_snap_info *info)
{
	memset(info, 0, sizeof(*info));
	info->abi_version = env_int("FAKE_LBR_ABI", LBR_SNAP_ABI_VERSION);
	info->backend = LBR_SNAP_BACKEND_INTEL;
	info->lbr_format = 5;
	info->lbr_depth = 32;
	info->nr_cpus = 2;
	info->buffer_kb = 64;
	info->stack_depth = env_int("FAKE_LBR_STACK_DEPTH", 16);
	info->nr_targets = env_int("FAKE_LBR_NR_TARGETS", 3);
	info->nr_batch_targets = env_int("FAKE_LBR_BATCH_TARGETS", 0);
	info->capture = LBR_SNAP_CAPTURE_ERRORS;
	strcpy(info->backend_name, "intel");
	if (getenv("FAKE_LBR_ARCH")) {
		info->backend = LBR_SNAP_BACKEND_ARCH;
		strcpy(info->backend_name, "arch");
	}
	strcpy(info->mode, "raw");
	info->lbr_read = LBR_SNAP_READ_XSAVES;
	info->lbr_cpl = fake_lbr_cpl;
	info->lbr_kinds = fake_lbr_kinds;
	strcpy(info->reason, "legacy LBR, format 5 (\"EIP+flags+cycles\")");
	snprintf(info->version, sizeof(info->version), "%s",
		 getenv("FAKE_LBR_VERSION") ? getenv("FAKE_LBR_VERSION") :
		 "0.1-test");
	return 0;
}

/* A hybrid part's kinds of CPU, past the first ABI's struct. */
static void fake_cpu_types(struct lbr_snap_info *info)
{
	static const struct lbr_snap_cpu_type types[] = {
		{ 0x40, LBR_SNAP_BACKEND_ARCH, 0, 32, 8, 0, "0-7" },
		{ 0x20, LBR_SNAP_BACKEND_ARCH, 0, 16, 4, 0, "8-11" },
	};

	info->nr_cpu_types = ARRAY_SIZE(types);
	memcpy(info->cpu_types, types, sizeof(types));
	/* And one whose LBR failed its check at load. */
	info->nr_cpus_failed = 1;
	strcpy(info->cpus_failed, "11");
	strcpy(info->cpu_failure, "cpu11: LBR MSR 0x1510 faults");
	strcpy(info->hypervisor, "kvm");
	info->capture_msrs = 70;
	info->filtered_msrs = 4;
	info->nr_cpus_perf_off = 1;
	strcpy(info->cpus_perf_off, "3");
}

static int fake_stats(struct lbr_snap_stats *st)
{
	struct lbr_snap_target_stats *out;
	unsigned int i, nr = ARRAY_SIZE(targets);

	/*
	 * The tool knows the entries with hook, nr_args, recursion,
	 * inflight, lbr_off and state: it must say so.
	 */
	if (st->entry_size != sizeof(*out)) {
		errno = EINVAL;
		return -1;
	}
	out = (struct lbr_snap_target_stats *)(unsigned long)st->stats_ptr;
	for (i = 0; i < nr && i < st->nr; i++)
		out[i] = targets[i];
	if (env_int("FAKE_LBR_ALL_FILTERED", 0) && st->nr > 1) {
		out[1].filtered = out[1].hits;
		out[1].captured = 0;
	}
	for (i = 0; i < nr_added && nr + i < st->nr; i++) {
		struct lbr_snap_target_stats *t = &out[nr + i];
		unsigned long long c = 0, f = 0, d = 0;
		const char *counts = getenv("FAKE_LBR_TRACE_COUNTS");

		memset(t, 0, sizeof(*t));
		memcpy(t->name, added[i].name, sizeof(t->name));
		t->func_addr = 0xffffffff81001000ull;
		t->id = added[i].id;
		t->ret_type = added[i].ret_type;
		t->hook = added[i].hook;
		t->nr_args = -1;
		if (added[i].seen++ && counts)
			sscanf(counts, "%llu,%llu,%llu", &c, &f, &d);
		t->captured = c;
		t->filtered = f;
		t->dropped = d;
		t->hits = c + f + d;
	}
	/* FAKE_LBR_MANY_STATS=N: N more targets, as a batch would add. */
	for (i = 0; i < (unsigned int)env_int("FAKE_LBR_MANY_STATS", 0); i++) {
		struct lbr_snap_target_stats *t = &out[nr + nr_added + i];

		if (nr + nr_added + i >= st->nr)
			continue;
		memset(t, 0, sizeof(*t));
		snprintf(t->name, sizeof(t->name), "batch_%04u", i);
		t->id = 100 + i;
		t->hook = LBR_SNAP_HOOK_FEXIT;
		t->nr_args = -1;
	}
	st->nr = nr + nr_added + env_int("FAKE_LBR_MANY_STATS", 0);
	st->read = 107;
	st->flushed = 3;
	return 0;
}

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

/* The line "fake: NAME ARG"; then fail with FAKE_LBR_CTL_ERRNO if set. */
static int fake_ctl(const char *name, const char *arg)
{
	int err = env_int("FAKE_LBR_CTL_ERRNO", 0);

	fprintf(stderr, "fake: %s %s\n", name, arg);
	if (!err)
		return 0;
	errno = err;
	return -1;
}

static int fake_add(struct lbr_snap_target_ctl *ctl)
{
	const char *hook = strrchr(ctl->spec, '@');

	if (fake_ctl("ADD_TARGET", ctl->spec))
		return -1;
	if (env_is("FAKE_LBR_ADD_FAIL", ctl->spec))
		errno = EINVAL;
	else if (env_is("FAKE_LBR_ADD_EXISTS", ctl->spec))
		errno = EEXIST;
	else {
		ctl->id = 7;
		ctl->hook = hook && !strcmp(hook, "@fexit") ?
			    LBR_SNAP_HOOK_FEXIT : LBR_SNAP_HOOK_KRETPROBE;
		if (nr_added < ARRAY_SIZE(added)) {
			snprintf(added[nr_added].name, sizeof(added[0].name),
				 "%.*s", (int)strcspn(ctl->spec, "%/@="),
				 ctl->spec);
			added[nr_added].ret_type = spec_ret_type(ctl->spec);
			added[nr_added].hook = ctl->hook;
			added[nr_added].id = 7;
			added[nr_added++].seen = 0;
		}
		return 0;
	}
	return -1;
}

static void fake_del(const char *name)
{
	unsigned int i;

	for (i = 0; i < nr_added; i++) {
		if (strcmp(added[i].name, name))
			continue;
		added[i] = added[--nr_added];
		return;
	}
}

/* Remember a target ADD_TARGETS attached, for GET_STATS. */
static void fake_added(const struct lbr_snap_target_entry *e,
		       unsigned int hook)
{
	if (nr_added == ARRAY_SIZE(added))
		return;
	snprintf(added[nr_added].name, sizeof(added[0].name), "%.*s",
		 (int)strcspn(e->spec, "%/@="), e->spec);
	added[nr_added].ret_type = spec_ret_type(e->spec);
	added[nr_added].hook = hook;
	added[nr_added].id = e->id;
	added[nr_added++].seen = 0;
}

/*
 * ADD_TARGETS: "fake: ADD_TARGETS N FIRST..LAST (0xADDR)[ skip]", ids
 * from 100 on across calls; all or nothing on FAKE_LBR_ADD_FAIL, unless
 * LBR_SNAP_BATCH_SKIP, which leaves it out, and FAKE_LBR_ADD_EXISTS, with
 * -EEXIST.  DEL_TARGETS: "fake: DEL_TARGETS N FIRST-ID".
 */
static int fake_targets(unsigned long req, struct lbr_snap_targets *t)
{
	struct lbr_snap_target_entry *e = (void *)(uintptr_t)t->entries_ptr;
	bool skip = t->flags & LBR_SNAP_BATCH_SKIP;
	bool fallback = t->flags & LBR_SNAP_BATCH_FALLBACK;
	bool old = getenv("FAKE_LBR_BATCH_OLD");
	const char *room_env = getenv("FAKE_LBR_FEXIT_ROOM");
	bool no_direct = getenv("FAKE_LBR_NO_DIRECT");
	static unsigned int next_id = 100, fexit_used;
	unsigned int i, j, room = room_env ? (unsigned int)atoi(room_env) : ~0U;
	unsigned int hook;
	int bad = -1;

	if (!t->nr || t->entry_size != sizeof(*e) ||
	    (old && fallback)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; old && i < t->nr; i++) {
		if (e[i].hook || e[i].reserved) {
			errno = E2BIG;
			return -1;
		}
	}
	if (req == LBR_SNAP_IOC_DEL_TARGETS) {
		fprintf(stderr, "fake: DEL_TARGETS %u %u\n", t->nr, e[0].id);
		for (i = 0; i < t->nr; i++)
			for (j = 0; j < nr_added; j++)
				if (added[j].id == e[i].id) {
					added[j] = added[--nr_added];
					break;
				}
		t->done = t->nr;
		return 0;
	}
	fprintf(stderr, "fake: ADD_TARGETS %u %s..%s (%#llx)%s%s\n", t->nr,
		e[0].spec, e[t->nr - 1].spec, (unsigned long long)e[0].addr,
		skip ? " skip" : "", fallback ? " fallback" : "");
	if (!fallback && room != ~0U && fexit_used + t->nr > room) {
		errno = E2BIG;
		return -1;
	}
	if (no_direct && req == LBR_SNAP_IOC_ADD_TARGETS) {
		for (i = 0; i < t->nr; i++)
			if (!fallback || strstr(e[i].spec, "@fexit")) {
				errno = EOPNOTSUPP;
				return -1;
			}
		room = 0;
	}
	for (i = 0; i < t->nr; i++) {
		e[i].error = 0;
		if (env_is("FAKE_LBR_ADD_FAIL", e[i].spec))
			e[i].error = -EINVAL;
		else if (env_is("FAKE_LBR_ADD_EXISTS", e[i].spec))
			e[i].error = -EEXIST;
		if (e[i].error && bad < 0)
			bad = i;
	}
	t->done = 0;
	for (i = 0; i < t->nr; i++) {
		if (bad >= 0 && !skip) {
			e[i].error = e[i].error ? e[i].error : -ECANCELED;
			e[i].id = 0;
			continue;
		}
		if (e[i].error)
			continue;
		e[i].id = next_id++;
		t->done++;
		hook = fexit_used < room ? LBR_SNAP_HOOK_FEXIT :
		       LBR_SNAP_HOOK_KRETPROBE;
		fexit_used += hook == LBR_SNAP_HOOK_FEXIT;
		if (!old)
			e[i].hook = hook;
		fake_added(&e[i], hook);
	}
	if (bad >= 0 && !skip) {
		errno = -e[bad].error;
		return -1;
	}
	return 0;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	int err = env_int("FAKE_LBR_ERRNO", 0);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) == LBR_SNAP_IOC_MAGIC && err) {
		errno = err;
		return -1;
	}
	/* As the module: changes need a descriptor opened for writing. */
	if ((req == LBR_SNAP_IOC_FLUSH || req == LBR_SNAP_IOC_ADD_TARGET ||
	     req == LBR_SNAP_IOC_DEL_TARGET || req == LBR_SNAP_IOC_SET_CAPTURE ||
	     req == LBR_SNAP_IOC_SET_FILTER ||
	     req == LBR_SNAP_IOC_SET_LBR_FILTER) &&
	    (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY) {
		fputs("fake: read-only descriptor\n", stderr);
		errno = EBADF;
		return -1;
	}
	switch (req) {
	case LBR_SNAP_IOC_GET_INFO:
		/* FAKE_LBR_OLD_INFO: a module that knows only the first size. */
		if (env_is("FAKE_LBR_OLD_INFO", "1")) {
			errno = ENOTTY;
			return -1;
		}
		if (fake_info(arg))
			return -1;
		fake_cpu_types(arg);
		return 0;
	case _IOR(LBR_SNAP_IOC_MAGIC, 1, char[LBR_SNAP_INFO_SIZE_V1]):
		/* What a module before cpu_types (and lbr_read) answers. */
		if (fake_info(arg))
			return -1;
		((struct lbr_snap_info *)arg)->lbr_read = 0;
		((struct lbr_snap_info *)arg)->lbr_cpl = 0;
		((struct lbr_snap_info *)arg)->lbr_kinds = 0;
		return 0;
	case LBR_SNAP_IOC_GET_STATS:
		if (env_int("FAKE_LBR_STATS_ERRNO", 0)) {
			errno = env_int("FAKE_LBR_STATS_ERRNO", 0);
			return -1;
		}
		return fake_stats(arg);
	case LBR_SNAP_IOC_FLUSH:
		fputs("fake: FLUSH\n", stderr);
		return 0;
	case LBR_SNAP_IOC_ADD_TARGET:
		return fake_add(arg);
	case LBR_SNAP_IOC_ADD_TARGETS:
	case LBR_SNAP_IOC_DEL_TARGETS:
		return fake_targets(req, arg);
	case LBR_SNAP_IOC_DEL_TARGET:
		fake_del(((struct lbr_snap_target_ctl *)arg)->spec);
		return fake_ctl("DEL_TARGET",
				((struct lbr_snap_target_ctl *)arg)->spec);
	case LBR_SNAP_IOC_SET_CAPTURE: {
		char mode[24];

		snprintf(mode, sizeof(mode), "%lu", (unsigned long)arg);
		return fake_ctl("SET_CAPTURE", mode);
	}
	case LBR_SNAP_IOC_SET_FILTER: {
		const struct lbr_snap_filter *f = arg;
		char what[96];

		snprintf(what, sizeof(what), "flags=%u pid=%d tgid=%d comm=%.16s",
			 f->flags, f->pid, f->tgid, f->comm);
		if ((f->flags & LBR_SNAP_FILTER_TREE) &&
		    getenv("FAKE_LBR_NO_TREE")) {
			fprintf(stderr, "fake: SET_FILTER %s: EINVAL\n", what);
			errno = EINVAL;
			return -1;
		}
		return fake_ctl("SET_FILTER", what);
	}
	case LBR_SNAP_IOC_SET_LBR_FILTER: {
		const struct lbr_snap_lbr_filter *f = arg;
		char what[64];

		snprintf(what, sizeof(what), "cpl=%u kinds=%#x", f->cpl,
			 f->kinds);
		fprintf(stderr, "fake: SET_LBR_FILTER %s\n", what);
		if (getenv("FAKE_LBR_LBR_ERRNO")) {
			errno = env_int("FAKE_LBR_LBR_ERRNO", EINVAL);
			return -1;
		}
		fake_lbr_cpl = f->cpl;
		fake_lbr_kinds = f->kinds;
		return 0;
	}
	default:
		return __real_ioctl(fd, req, arg);
	}
}
