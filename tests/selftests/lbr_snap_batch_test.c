// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap batch kselftests: many functions of vmlinux attached in one
 * LBR_SNAP_IOC_ADD_TARGETS, sharing trampolines by return class; records
 * from functions deep inside a failing syscall; removal of some and all;
 * all or nothing; unload with thousands attached; lbr-snap trace of a
 * pattern of more than 64 functions.
 *
 * LBR_BATCH_MAX (default 1000) bounds the functions of batch.scale.
 */
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "lbr_test_util.h"
#include "lbr_test_funcs.h"

#define BATCH_CHUNK	2000

/* The path lookup of an open(): fs/namei.c and the open around it. */
static bool path_lookup_func(const char *name, void *priv)
{
	static const char *const prefixes[] = {
		"path_", "link_path_walk", "walk_component", "lookup_",
		"filename_", "do_filp_open", "do_sys_openat2", "getname",
		"step_into", "may_lookup", "complete_walk", "handle_dots",
		"vfs_open", "do_open",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static bool any_func(const char *name, void *priv)
{
	return true;
}

static int targets_ioc(int fd, unsigned long cmd,
		       struct lbr_snap_target_entry *e, size_t n, __u32 flags,
		       __u32 *done)
{
	struct lbr_snap_targets t = {
		.entries_ptr = (unsigned long)e,
		.nr = n,
		.entry_size = sizeof(*e),
		.flags = flags,
	};
	int ret = ioctl(fd, cmd, &t) ? -errno : 0;

	if (done)
		*done = t.done;
	return ret;
}

static void entry_set(struct lbr_snap_target_entry *e, const char *spec,
		      unsigned long long addr)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->spec, sizeof(e->spec), "%s", spec);
	e->addr = addr;
}

static unsigned int nr_targets(int fd)
{
	struct lbr_snap_info info;

	return get_info(fd, &info) ? UINT_MAX : info.nr_targets;
}

/* GET_INFO's count of a batch's targets; UINT_MAX on error. */
static unsigned int nr_batch_targets(int fd)
{
	struct lbr_snap_info info;

	return get_info(fd, &info) ? UINT_MAX : info.nr_batch_targets;
}

/* The entries of @f, added with LBR_SNAP_BATCH_SKIP; each one's result. */
static struct lbr_snap_target_entry *add_funcs(int fd, const struct func *f,
					       size_t n, __u32 *added)
{
	struct lbr_snap_target_entry *e = calloc(n ? n : 1, sizeof(*e));
	size_t i, k;
	__u32 done;
	int ret;

	*added = 0;
	if (!e)
		return NULL;
	for (i = 0; i < n; i++)
		entry_set(&e[i], f[i].name, f[i].addr);
	for (i = 0; i < n; i += k) {
		k = n - i < BATCH_CHUNK ? n - i : BATCH_CHUNK;
		/* Past the direct calls 6.1 takes (7,680), kretprobes. */
		ret = targets_ioc(fd, LBR_SNAP_IOC_ADD_TARGETS, e + i, k,
				  LBR_SNAP_BATCH_SKIP | LBR_SNAP_BATCH_FALLBACK,
				  &done);
		if (ret) {
			free(e);
			return NULL;
		}
		*added += done;
	}
	return e;
}

/* Remove the targets @e added, by id; how many went, or -errno. */
static int del_added(int fd, struct lbr_snap_target_entry *e, size_t n)
{
	struct lbr_snap_target_entry *d = calloc(n ? n : 1, sizeof(*d));
	size_t i, k = 0, off;
	__u32 done, total = 0;
	int ret = 0;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (!e[i].error)
			d[k++].id = e[i].id;
	for (off = 0; off < k && !ret; off += BATCH_CHUNK) {
		size_t m = k - off < BATCH_CHUNK ? k - off : BATCH_CHUNK;

		ret = targets_ioc(fd, LBR_SNAP_IOC_DEL_TARGETS, d + off, m, 0,
				  &done);
		total += done;
	}
	free(d);
	return ret ? ret : (int)total;
}

FIXTURE(batch) {
	struct rec *recs;
	int fd;
};

/*
 * A batch takes what BTF describes: no BTF, no batch. A skip in the
 * setup does not stop the test body with every harness (6.1's runs it),
 * so the body skips too, on the setup's sign: no record array.
 */
#define NEEDS_BTF_REASON "no vmlinux BTF: a batch refuses every function"
#define SKIP_WITHOUT_BTF()						\
	do {								\
		if (!self->recs)					\
			SKIP(return, NEEDS_BTF_REASON);			\
	} while (0)

FIXTURE_SETUP(batch)
{
	self->fd = -1;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP(return, NEEDS_BTF_REASON);
	load_target_module();
	self->recs = calloc(MAX_RECS, sizeof(struct rec));
	ASSERT_NE(NULL, self->recs);
	ASSERT_EQ(0, load("targets=lbr_test_leaf"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
}

#define DIRECT_MARGIN	"/sys/module/lbr_snap_fexit/parameters/direct_margin"

/* lbr_snap_fexit's direct_margin: 0 or -errno. */
static int set_direct_margin(unsigned int margin)
{
	FILE *f = fopen(DIRECT_MARGIN, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fprintf(f, "%u\n", margin) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

FIXTURE_TEARDOWN(batch)
{
	set_direct_margin(512);
	if (!self->recs)
		return;
	if (self->fd >= 0)
		close(self->fd);
	free(self->recs);
	unload();
}

/*
 * The path lookup's functions in one batch: a failed open() leaves
 * records from inside it (a function deeper than do_sys_openat2,
 * returning -ENOENT), ids in the batch; the stats list them; removing
 * half keeps the other half recording; removing the rest ends it.
 */
TEST_F(batch, path_lookup_records_from_inside)
{
	struct lbr_snap_target_entry *e;
	unsigned long long openat2;
	size_t nf, i, j;
	struct func *f = vmlinux_funcs(&nf, path_lookup_func, NULL);
	__u32 added, min_id = UINT_MAX, max_id = 0;
	int n, inside = 0, del;
	struct stat st;

	SKIP_WITHOUT_BTF();
	ASSERT_NE(NULL, f);
	ASSERT_LT(20, nf) TH_LOG("only %zu path lookup functions", nf);
	openat2 = ksym("do_sys_openat2");
	ASSERT_NE(0, openat2);
	e = add_funcs(self->fd, f, nf, &added);
	ASSERT_NE(NULL, e) TH_LOG("ADD_TARGETS: %s", strerror(errno));
	ASSERT_LT(20, added) TH_LOG("%u of %zu added", added, nf);
	EXPECT_EQ(1 + added, nr_targets(self->fd));
	EXPECT_EQ(added, nr_batch_targets(self->fd));
	for (i = 0; i < nf; i++) {
		if (e[i].error)
			continue;
		min_id = e[i].id < min_id ? e[i].id : min_id;
		max_id = e[i].id > max_id ? e[i].id : max_id;
	}
	EXPECT_EQ(added - 1, max_id - min_id);

	ioctl(self->fd, LBR_SNAP_IOC_FLUSH);
	for (i = 0; i < 5; i++)
		EXPECT_NE(0, stat("/no/such/file", &st));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_LE(0, n) TH_LOG("%s", lbr_why);
	for (j = 0; j < (size_t)n; j++) {
		const struct lbr_snap_record *h = &self->recs[j].h;

		if (h->target_id < min_id || h->target_id > max_id ||
		    h->retval != -ENOENT || h->func_addr == openat2)
			continue;
		inside++;
	}
	EXPECT_LE(5, inside) TH_LOG("%d records of %d from a function of the lookup returning -ENOENT", inside, n);

	/* Half of them out: the rest go on recording. */
	del = del_added(self->fd, e, nf / 2);
	EXPECT_LT(0, del);
	EXPECT_EQ(1 + added - del, nr_targets(self->fd));
	EXPECT_EQ(added - del, nr_batch_targets(self->fd));
	for (i = 0; i < nf / 2; i++)
		e[i].error = -1;
	ioctl(self->fd, LBR_SNAP_IOC_FLUSH);
	for (i = 0; i < 5; i++)
		EXPECT_NE(0, stat("/no/such/file", &st));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_LE(0, n) TH_LOG("%s", lbr_why);
	for (j = 0, inside = 0; j < (size_t)n; j++) {
		const struct lbr_snap_record *h = &self->recs[j].h;
		bool kept = false;

		for (i = nf / 2; i < nf && !kept; i++)
			kept = !e[i].error && e[i].id == h->target_id;
		if (h->target_id == 0)
			continue;
		EXPECT_TRUE(kept) TH_LOG("record of removed target %u", h->target_id);
		inside += kept;
	}
	EXPECT_LT(0, inside);

	EXPECT_EQ((int)added - del, del_added(self->fd, e, nf));
	EXPECT_EQ(1, nr_targets(self->fd));
	EXPECT_EQ(0, nr_batch_targets(self->fd));
	ioctl(self->fd, LBR_SNAP_IOC_FLUSH);
	EXPECT_NE(0, stat("/no/such/file", &st));
	n = drain(self->fd, self->recs, MAX_RECS);
	EXPECT_EQ(0, n);
	free(e);
	free(f);
}

/*
 * "@fexit" with the user's argument count takes a function whose
 * prototype BTF does not tell (x86-64's __x64_sys_madvise, which 6.1's
 * BTF has twice), in a batch as one by one: the count bounds its stack
 * arguments.  lbr-snap why hooks every system call so.
 */
TEST_F(batch, fexit_on_the_users_argument_count)
{
	unsigned long long a = ksym("__x64_sys_madvise");
	struct lbr_snap_target_entry e;
	int n, i, found = 0;
	__u32 done = 0;

	SKIP_WITHOUT_BTF();
	ASSERT_NE(0, a);
	entry_set(&e, "__x64_sys_madvise%long/1@fexit", a);
	ASSERT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, &e, 1, 0,
				 &done))
		TH_LOG("entry error %d", e.error);
	EXPECT_EQ(1, done);
	EXPECT_EQ(0, e.error);
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, e.hook);
	ioctl(self->fd, LBR_SNAP_IOC_FLUSH);
	/* No such advice: -EINVAL from the system call. */
	EXPECT_EQ(-1, syscall(SYS_madvise, NULL, 0, 12345));
	EXPECT_EQ(EINVAL, errno);
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_LE(0, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		const struct lbr_snap_record *h = &self->recs[i].h;

		found += h->target_id == e.id && h->retval == -EINVAL &&
			 h->hook == LBR_SNAP_HOOK_FEXIT &&
			 h->pid == (__u32)syscall(SYS_gettid);
	}
	EXPECT_EQ(1, found) TH_LOG("%d records", n);
	EXPECT_EQ(1, del_added(self->fd, &e, 1));
}

/*
 * One bad entry refuses the batch: nothing is added, it says why, the
 * good ones say they were not added.  Each kind of bad entry.
 */
TEST_F(batch, all_or_nothing)
{
	struct lbr_snap_target_entry e[3];
	unsigned long long a = ksym("vfs_read"), b = ksym("vfs_write");
	unsigned long long leaf = ksym("lbr_test_chain");
	static const struct {
		const char *spec;
		int addr;		/* 0: none, 1: a's, 2: leaf's */
		int err;
	} bad[] = {
		{ "no_such_function_at_all", 0, -ENOENT },
		{ "vfs_write", 1, -ENOENT },		/* another's address */
		{ "vfs_read", 1, -EEXIST },		/* twice */
		{ "lbr_test_chain", 2, -EINVAL },	/* in a module */
		{ "vfs_write%void", 0, -EINVAL },	/* capture=errors */
		{ "vfs_wr\nite", 0, -EINVAL },
	};
	size_t i;
	__u32 done;

	SKIP_WITHOUT_BTF();
	ASSERT_NE(0, a);
	ASSERT_NE(0, b);
	ASSERT_NE(0, leaf);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		entry_set(&e[0], "vfs_read", a);
		entry_set(&e[1], bad[i].spec,
			  bad[i].addr == 1 ? a : bad[i].addr == 2 ? leaf : 0);
		entry_set(&e[2], "vfs_write", b);
		EXPECT_EQ(bad[i].err, targets_ioc(self->fd,
						  LBR_SNAP_IOC_ADD_TARGETS, e,
						  3, 0, &done))
			TH_LOG("entry '%s'", bad[i].spec);
		EXPECT_EQ(0, done);
		EXPECT_EQ(bad[i].err, e[1].error) TH_LOG("entry '%s'", bad[i].spec);
		EXPECT_EQ(-ECANCELED, e[0].error);
		EXPECT_EQ(-ECANCELED, e[2].error);
		EXPECT_EQ(1, nr_targets(self->fd));
		EXPECT_FALSE(hooked("vfs_read"));
	}
	/*
	 * A kretprobe entry of a batch refused before any was registered:
	 * none is unregistered (an oops), and the next batch takes one.
	 */
	entry_set(&e[0], "vfs_read@kretprobe", a);
	entry_set(&e[1], "no_such_function_at_all", 0);
	EXPECT_EQ(-ENOENT, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e,
				       2, 0, &done));
	EXPECT_EQ(1, nr_targets(self->fd));
	entry_set(&e[0], "vfs_read@kretprobe", a);
	EXPECT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e, 1, 0,
				 &done));
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, e[0].hook);
	EXPECT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_DEL_TARGETS, e, 1, 0,
				 &done));
	/* With LBR_SNAP_BATCH_SKIP the good ones go in. */
	entry_set(&e[0], "vfs_read", a);
	entry_set(&e[1], "no_such_function_at_all", 0);
	entry_set(&e[2], "vfs_write", b);
	EXPECT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e, 3,
				 LBR_SNAP_BATCH_SKIP, &done));
	EXPECT_EQ(2, done);
	EXPECT_EQ(0, e[0].error);
	EXPECT_EQ(-ENOENT, e[1].error);
	EXPECT_EQ(0, e[2].error);
	EXPECT_EQ(3, nr_targets(self->fd));
	/* Unknown ids: the known ones go, ENOENT for the rest. */
	e[1].id = 999999;
	EXPECT_EQ(-ENOENT, targets_ioc(self->fd, LBR_SNAP_IOC_DEL_TARGETS, e,
				       3, 0, &done));
	EXPECT_EQ(2, done);
	EXPECT_EQ(-ENOENT, e[1].error);
	EXPECT_EQ(1, nr_targets(self->fd));
	/* Bad headers. */
	EXPECT_EQ(-EINVAL, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e,
				       0, 0, &done));
	EXPECT_EQ(-EINVAL, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e,
				       LBR_SNAP_MAX_BATCH + 1, 0, &done));
	EXPECT_EQ(-EINVAL, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e,
				       3, 1U << 5, &done));
	/* Entries of the first layout, without hook: nothing past them. */
	{
		const size_t v1 = LBR_SNAP_TARGET_ENTRY_SIZE_V1;
		unsigned char buf[2 * LBR_SNAP_TARGET_ENTRY_SIZE_V1 + 8];
		struct lbr_snap_targets t = {
			.entries_ptr = (unsigned long)buf, .nr = 2,
			.entry_size = v1,
		};
		struct lbr_snap_target_entry x;

		memset(buf, 0xa5, sizeof(buf));
		entry_set(&x, "vfs_read", a);
		memcpy(buf, &x, v1);
		entry_set(&x, "vfs_write", b);
		memcpy(buf + v1, &x, v1);
		EXPECT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_ADD_TARGETS, &t));
		EXPECT_EQ(2, t.done);
		EXPECT_EQ(0, memcmp(buf + v1, "vfs_write", 10));
		EXPECT_EQ(0xa5, buf[2 * v1]);
		memcpy(&x, buf + v1, v1);
		EXPECT_EQ(0, x.error);
		EXPECT_EQ(3, nr_targets(self->fd));
		EXPECT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_DEL_TARGETS, &t));
		EXPECT_EQ(1, nr_targets(self->fd));
	}
	/* An entry's reserved word not 0. */
	entry_set(&e[0], "vfs_read", a);
	entry_set(&e[1], "vfs_write", b);
	e[1].reserved = 1;
	EXPECT_EQ(-EINVAL, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e,
				       2, 0, &done));
	EXPECT_EQ(1, nr_targets(self->fd));
	EXPECT_EQ(-EFAULT, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS,
				       (void *)8, 3, 0, &done));
}

/* A child blocked in read() of an empty pipe: inside pipe_read(). */
static pid_t reader(int *p)
{
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		int fd;

		/* The device too: it would hold lbr_snap loaded. */
		for (fd = 3; fd < 1024; fd++)
			if (fd != p[0])
				close(fd);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	close(p[0]);
	usleep(300 * 1000);
	return pid;
}

static int wait_child(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ?
	       WEXITSTATUS(st) : -1;
}

/*
 * pipe_read() and pipe_write() share a return class: one group.  A call
 * of pipe_read() sleeps in it; pipe_write() is removed (the group is
 * rebuilt with pipe_read() alone), then pipe_read() (the new group
 * drains at once); the sleeping call then returns through the first
 * group's trampoline, whose table still holds pipe_read()'s target.
 * Then the same with the module unloaded in place of the second removal.
 * The kernel log gate (and KASAN on a debug kernel) is the judge.
 */
TEST_F(batch, removed_in_parts_while_a_call_sleeps)
{
	/* An anonymous pipe's read and write, by the kernel's names. */
	static const char *const names[][2] = {
		{ "anon_pipe_read", "anon_pipe_write" },	/* 6.15 on */
		{ "pipe_read", "pipe_write" },
	};
	struct lbr_snap_target_entry e[2];
	unsigned long long rd = 0, wr = 0;
	int p[2], round, k;
	__u32 done;
	pid_t pid;

	SKIP_WITHOUT_BTF();
	for (k = 0; k < 2 && !(rd && wr); k++) {
		rd = ksym(names[k][0]);
		wr = ksym(names[k][1]);
	}
	if (!rd || !wr)
		SKIP(return, "no pipe_read or pipe_write in kallsyms");
	k--;
	for (round = 0; round < 2; round++) {
		if (round) {
			close(self->fd);
			ASSERT_EQ(0, load("targets=lbr_test_leaf"));
			self->fd = dev_open(O_NONBLOCK);
			ASSERT_LE(0, self->fd);
		}
		entry_set(&e[0], names[k][0], rd);
		entry_set(&e[1], names[k][1], wr);
		ASSERT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e,
					 2, 0, &done));
		ASSERT_EQ(2, done);
		pid = reader(p);
		ASSERT_LT(0, pid);
		/* pipe_write() out: pipe_read() on a group of its own. */
		EXPECT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_DEL_TARGETS,
					 &e[1], 1, 0, &done));
		if (!round) {
			EXPECT_EQ(0, targets_ioc(self->fd,
						 LBR_SNAP_IOC_DEL_TARGETS, &e[0],
						 1, 0, &done));
			EXPECT_EQ(1, nr_targets(self->fd));
		} else {
			close(self->fd);
			self->fd = -1;
			EXPECT_EQ(0, unload());
		}
		/*
		 * Long enough for the new group to drain and be freed: two
		 * RCU Tasks grace periods and a poll, seconds under TCG.
		 */
		sleep(4);
		EXPECT_EQ(1, write(p[1], "x", 1));
		EXPECT_EQ(0, wait_child(pid));
		close(p[1]);
	}
}

/*
 * LBR_BATCH_MAX functions of vmlinux (1,000 unless said) attached in
 * chunks, tried in an order spread over the kernel until that many are
 * in (a void one is refused under capture=errors): none is refused for
 * want of room (past 6.1's 7,680 direct calls, kretprobes), a storm of
 * syscalls runs through them, they detach, and the module unloads with
 * nothing left inside.
 */
TEST_F_TIMEOUT(batch, scale, 3600)
{
	const char *env = getenv("LBR_BATCH_MAX");
	size_t max = env ? strtoul(env, NULL, 0) : 1000, nf, i, k, p;
	size_t tried = 0, kr = 0, roomless = 0;
	struct lbr_snap_target_entry *e;
	struct func *f = vmlinux_funcs(&nf, any_func, NULL);
	unsigned long long t0, t1, t2;
	__u32 added = 0, done;
	int del, ret = 0;

	SKIP_WITHOUT_BTF();
	ASSERT_NE(NULL, f);
	ASSERT_LT(0, nf);
	e = calloc(nf, sizeof(*e));
	ASSERT_NE(NULL, e);
	/* A stride prime to nf: each function once, all over the kernel. */
	for (p = 7919; nf % p == 0; p += 2)
		;
	for (i = 0; i < nf; i++)
		entry_set(&e[i], f[(i * p) % nf].name, f[(i * p) % nf].addr);
	t0 = now_ns();
	while (added < max && tried < nf && !ret) {
		/* What is still wanted, and half again for the refusals. */
		k = (max - added) + (max - added) / 2 + 16;
		k = k < BATCH_CHUNK ? k : BATCH_CHUNK;
		k = k < nf - tried ? k : nf - tried;
		ret = targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS,
				  e + tried, k,
				  LBR_SNAP_BATCH_SKIP | LBR_SNAP_BATCH_FALLBACK,
				  &done);
		tried += k;
		added += done;
	}
	t1 = now_ns();
	EXPECT_EQ(0, ret) TH_LOG("ADD_TARGETS: %s", strerror(-ret));
	EXPECT_LE(max, added) TH_LOG("%u added of %zu tried, %zu in all",
				     added, tried, nf);
	for (i = 0; i < tried; i++) {
		kr += !e[i].error && e[i].hook == LBR_SNAP_HOOK_KRETPROBE;
		roomless += e[i].error == -E2BIG || e[i].error == -ENOSPC;
	}
	EXPECT_EQ(0, roomless) TH_LOG("%zu refused for want of room", roomless);
	/* On 6.1 fexit takes 7,680 at most (its ftrace leaks past). */
	EXPECT_GE(8192 - 512, added - kr);
	EXPECT_EQ(1 + added, nr_targets(self->fd));
	EXPECT_EQ(added, nr_batch_targets(self->fd));
	for (i = 0; i < 200; i++) {
		struct stat st;

		stat("/no/such/file", &st);
		stat("/proc/self/status", &st);
		usleep(100);
	}
	del = del_added(self->fd, e, tried);
	t2 = now_ns();
	EXPECT_EQ((int)added, del);
	EXPECT_EQ(1, nr_targets(self->fd));
	TH_LOG("%u functions, %zu by kretprobe, of %zu tried: attach %.2f s, detach %.2f s",
	       added, kr, tried, (t1 - t0) / 1e9, (t2 - t1) / 1e9);
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, unload());
	free(e);
	free(f);
}

/* The running kernel's version as major * 1000 + minor. */
static unsigned int kernel_version(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	uname(&u);
	sscanf(u.release, "%u.%u", &major, &minor);
	return major * 1000 + minor;
}

/* ADD_TARGETS of the @n good functions from @e's, with SKIP; -errno. */
static int add_good(int fd, const struct lbr_snap_target_entry *good,
		    struct lbr_snap_target_entry *e, size_t n, __u32 *done)
{
	size_t i;

	for (i = 0; i < n; i++)
		entry_set(&e[i], good[i].spec, good[i].addr);
	return targets_ioc(fd, LBR_SNAP_IOC_ADD_TARGETS, e, n,
			   LBR_SNAP_BATCH_SKIP, done);
}

/*
 * Where ftrace's table of direct calls leaks past 8,192 entries (5.18 to
 * 6.4: compat.h), lbr_snap_fexit counts what ftrace holds of it and
 * stops at 8,192 less direct_margin: a batch past the room is refused
 * whole, before any entry is looked at, SKIP or not; a single fexit
 * target too, and an "auto" one falls back to a kretprobe without an
 * error in the log.  The count follows what ftrace holds: a single
 * target whose module went, and targets of a batch removed (the rest
 * hooked anew), give their room back, exactly.  Elsewhere there is no
 * ceiling; before 5.18 each function of a batch takes a trampoline of
 * its own, and a batch past the free ones is refused whole.
 */
#define CEILING		60

TEST_F_TIMEOUT(batch, direct_call_ceiling, 900)
{
	unsigned int v = kernel_version(), half, room;
	bool ceiling = v >= 5018 && v < 6005, one_each = v < 5018;
	struct lbr_snap_target_entry *good, *e;
	char spec[LBR_SNAP_NAME_LEN];
	size_t nf, i, ng = 0, tried = 0;
	struct func *f;
	__u32 done, id;
	int kmsg, round;

	SKIP_WITHOUT_BTF();
	f = vmlinux_funcs(&nf, any_func, NULL);
	ASSERT_NE(NULL, f);
	ASSERT_LT(1000, nf);
	good = calloc(300, sizeof(*good));
	e = calloc(300, sizeof(*e));
	ASSERT_NE(NULL, good);
	ASSERT_NE(NULL, e);
	/*
	 * Functions a batch takes, spread over the kernel: 200, and 100
	 * more between them where fewer than 2 * CEILING were taken (the
	 * void ones are refused under capture=errors, and a small kernel
	 * such as the debug one has more of them).
	 */
	for (round = 0; round < 2 && ng < 2 * CEILING; round++) {
		size_t first = tried, cnt = round ? 100 : 200, at;

		for (i = 0; i < cnt; i++, tried++) {
			at = round ? i * (nf / 100) + nf / 400 : i * (nf / 200);
			entry_set(&e[tried], f[at].name, f[at].addr);
		}
		ASSERT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS,
					 e + first, cnt, LBR_SNAP_BATCH_SKIP,
					 &done));
		for (i = first; i < tried; i++)
			if (!e[i].error)
				good[ng++] = e[i];
	}
	ASSERT_LE(2 * CEILING, ng)
		TH_LOG("%zu of %zu taken in a batch", ng, tried);
	ASSERT_EQ((int)ng, del_added(self->fd, e, tried));
	ASSERT_EQ(1, nr_targets(self->fd));

	/* The one target, lbr_test_leaf of lbr_snap_test_target, by fexit. */
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, load("targets=lbr_test_leaf/1@fexit"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, set_direct_margin(8192 - CEILING));

	if (!ceiling) {
		/* No ceiling: CEILING + 5 attach. */
		EXPECT_EQ(0, add_good(self->fd, good, e, CEILING + 5, &done));
		EXPECT_EQ(CEILING + 5, done);
		EXPECT_EQ(CEILING + 5, del_added(self->fd, e, CEILING + 5));
		if (one_each) {
			/* 256 trampolines in all: 257 functions, refused whole. */
			struct lbr_snap_target_entry *big = calloc(257, sizeof(*big));

			ASSERT_NE(NULL, big);
			for (i = 0; i < 257; i++)
				entry_set(&big[i], good[i % ng].spec,
					  good[i % ng].addr);
			EXPECT_EQ(-ENOSPC, targets_ioc(self->fd,
						       LBR_SNAP_IOC_ADD_TARGETS,
						       big, 257,
						       LBR_SNAP_BATCH_SKIP,
						       &done));
			EXPECT_EQ(0, done);
			for (i = 0; i < 257; i++)
				EXPECT_EQ(-ENOSPC, big[i].error);
			free(big);
		}
		goto out;
	}

	/* lbr_test_leaf holds one: CEILING entries are one too many. */
	EXPECT_EQ(-E2BIG, add_good(self->fd, good, e, CEILING, &done));
	EXPECT_EQ(0, done);
	for (i = 0; i < CEILING; i++)
		EXPECT_EQ(-E2BIG, e[i].error) TH_LOG("entry %zu", i);
	EXPECT_EQ(1, nr_targets(self->fd));
	ASSERT_EQ(0, add_good(self->fd, good, e, CEILING - 1, &done));
	ASSERT_EQ(CEILING - 1, done);

	/* Full: one more fexit is refused, an auto one takes a kretprobe. */
	EXPECT_EQ(-E2BIG, add_good(self->fd, good + CEILING, e + CEILING, 1,
				   &done));
	snprintf(spec, sizeof(spec), "%.100s@fexit", good[ng - 1].spec);
	EXPECT_EQ(-E2BIG, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET, spec,
				     NULL));
	kmsg = kmsg_open();
	EXPECT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
				good[ng - 1].spec, &id));
	/* Said as the kretprobe's reason, not as an error. */
	EXPECT_TRUE(kmsg >= 0 &&
		    kmsg_has(kmsg, "(not fexit: this kernel's ftrace takes no more direct calls"));
	EXPECT_FALSE(kmsg >= 0 && kmsg_has(kmsg, "': fexit: this kernel"))
		TH_LOG("an auto target that fell back logged the ceiling as an error");
	if (kmsg >= 0)
		close(kmsg);
	EXPECT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET,
				good[ng - 1].spec, NULL));

	/* lbr_test_leaf's module goes: its direct call's room comes back. */
	EXPECT_EQ(0, syscall(SYS_delete_module, "lbr_snap_test_target",
			     O_NONBLOCK));
	EXPECT_EQ(0, add_good(self->fd, good + CEILING, e + CEILING, 1, &done));
	EXPECT_EQ(1, done);

	/* Half of the batch out, the rest hooked anew: exactly half back. */
	half = (CEILING - 1) / 2;
	EXPECT_EQ((int)half, del_added(self->fd, e, half));
	room = half;
	EXPECT_EQ(-E2BIG, add_good(self->fd, good + CEILING + 1,
				   e + CEILING + 1, room + 1, &done));
	EXPECT_EQ(0, add_good(self->fd, good + CEILING + 1, e + CEILING + 1,
			      room, &done));
	EXPECT_EQ(room, done);
out:
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, unload());
	load_target_module();
	free(e);
	free(good);
	free(f);
}

/* Records of the targets of @e[0..@n) that @hook took, returning @ret. */
static int recs_of(const struct rec *r, int nr,
		   const struct lbr_snap_target_entry *e, size_t n,
		   unsigned int hook, long long ret)
{
	int j, k = 0;
	size_t i;

	for (j = 0; j < nr; j++)
		for (i = 0; i < n; i++)
			if (!e[i].error && e[i].id == r[j].h.target_id &&
			    e[i].hook == hook && r[j].h.hook == hook &&
			    r[j].h.retval == ret) {
				k++;
				break;
			}
	return k;
}

/*
 * Five stat()s of a missing file, from a flushed buffer: the records
 * drained into @recs, how many, or -1 (lbr_why says why).
 */
static int failed_stats(int fd, struct rec *recs)
{
	struct stat st;
	int i;

	ioctl(fd, LBR_SNAP_IOC_FLUSH);
	for (i = 0; i < 5; i++)
		if (!stat("/no/such/file", &st))
			return -1;
	return drain(fd, recs, MAX_RECS);
}

/* Of @e[0..@n), the entries added with @hook. */
static size_t nr_hooked(const struct lbr_snap_target_entry *e, size_t n,
			unsigned int hook)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += !e[i].error && e[i].hook == hook;
	return k;
}

/*
 * Kretprobes in a batch: a spec's "@kretprobe" takes one, and says so in
 * its entry; such a target records (its records say kretprobe), counts
 * as a batch's, and goes with DEL_TARGETS.  Where ftrace's direct calls
 * have a ceiling (5.18 to 6.4), LBR_SNAP_BATCH_FALLBACK gives the
 * functions past the room kretprobes, the first ones fexit; an "@fexit"
 * one past it is refused; removing them all gives the room back whole.
 */
#define ROOM	10

TEST_F_TIMEOUT(batch, kretprobes_where_fexit_cannot, 900)
{
	unsigned int v = kernel_version();
	bool ceiling = v >= 5018 && v < 6005;
	struct lbr_snap_target_entry *e, one;
	size_t nf, na, i, n, lf;
	struct func *f, *any;
	__u32 done, added;
	int nr, del;

	SKIP_WITHOUT_BTF();
	f = vmlinux_funcs(&nf, path_lookup_func, NULL);
	ASSERT_NE(NULL, f);
	ASSERT_LT(2 * ROOM + 4, nf) TH_LOG("only %zu path lookup functions", nf);
	e = calloc(nf, sizeof(*e));
	ASSERT_NE(NULL, e);

	/* Every other one asks for a kretprobe: each gets what it asked. */
	for (i = 0; i < nf; i++) {
		char spec[LBR_SNAP_NAME_LEN + 8];

		snprintf(spec, sizeof(spec), "%.100s%s", f[i].name,
			 i % 2 ? "@kretprobe" : "");
		entry_set(&e[i], spec, f[i].addr);
	}
	ASSERT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e, nf,
				 LBR_SNAP_BATCH_SKIP, &done));
	for (i = 0; i < nf; i++)
		EXPECT_TRUE(e[i].error ||
			    e[i].hook == (i % 2 ? LBR_SNAP_HOOK_KRETPROBE :
					  LBR_SNAP_HOOK_FEXIT))
			TH_LOG("%s: hook %u", e[i].spec, e[i].hook);
	EXPECT_LT(ROOM, nr_hooked(e, nf, LBR_SNAP_HOOK_KRETPROBE));
	EXPECT_EQ(done, nr_batch_targets(self->fd));
	nr = failed_stats(self->fd, self->recs);
	ASSERT_LE(0, nr) TH_LOG("%s", lbr_why);
	EXPECT_LE(5, recs_of(self->recs, nr, e, nf, LBR_SNAP_HOOK_KRETPROBE,
			     -ENOENT))
		TH_LOG("%d records, none of a kretprobe returning -ENOENT", nr);
	EXPECT_LE(5, recs_of(self->recs, nr, e, nf, LBR_SNAP_HOOK_FEXIT,
			     -ENOENT));
	/* The last function fexit took, for the room's order below. */
	for (lf = nf - 1; lf > 0; lf--)
		if (!e[lf].error && e[lf].hook == LBR_SNAP_HOOK_FEXIT)
			break;
	EXPECT_EQ((int)done, del_added(self->fd, e, nf));
	EXPECT_EQ(1, nr_targets(self->fd));
	EXPECT_EQ(0, nr_batch_targets(self->fd));

	/*
	 * A batch's kretprobe only at an ftrace site: tsc.c is built
	 * without one, and an int3 kprobe hit inside the capture (as the
	 * unwinder's would be) is a BUG() of kprobes.
	 */
	entry_set(&one, "check_tsc_unstable@kretprobe",
		  ksym("check_tsc_unstable"));
	if (one.addr) {
		EXPECT_EQ(-EINVAL, targets_ioc(self->fd,
					       LBR_SNAP_IOC_ADD_TARGETS, &one,
					       1, 0, &done));
		EXPECT_EQ(-EINVAL, one.error);
		EXPECT_FALSE(kprobe_listed("check_tsc_unstable"));
	}

	/* batch_kretprobes bounds them: past it E2BIG, back once removed. */
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load("targets=lbr_test_leaf batch_kretprobes=3"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < 5; i++) {
		char spec[LBR_SNAP_NAME_LEN + 8];

		snprintf(spec, sizeof(spec), "%.100s@kretprobe", f[i].name);
		entry_set(&e[i], spec, f[i].addr);
	}
	EXPECT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e, 5,
				 LBR_SNAP_BATCH_SKIP, &done));
	EXPECT_EQ(3, done);
	EXPECT_EQ(-E2BIG, e[3].error);
	EXPECT_EQ(-E2BIG, e[4].error);
	EXPECT_EQ(3, del_added(self->fd, e, 5));
	EXPECT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e + 2, 3,
				 0, &done));
	EXPECT_EQ(3, done);
	EXPECT_EQ(3, del_added(self->fd, e + 2, 3));
	if (!ceiling)
		goto out;

	/* lbr_test_leaf holds one direct call: ROOM left. */
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, load("targets=lbr_test_leaf/1@fexit"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, set_direct_margin(8192 - ROOM - 1));
	/*
	 * The last fexit takes asks for it: it is given the room first,
	 * ahead of the ROOM before it.
	 */
	EXPECT_LT(2 * ROOM, lf);
	for (i = 0; i < nf; i++)
		entry_set(&e[i], f[i].name, f[i].addr);
	snprintf(e[lf].spec, sizeof(e[lf].spec), "%.100s@fexit", f[lf].name);
	ASSERT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e, nf,
				 LBR_SNAP_BATCH_SKIP | LBR_SNAP_BATCH_FALLBACK,
				 &done));
	added = done;
	n = nr_hooked(e, nf, LBR_SNAP_HOOK_FEXIT);
	EXPECT_EQ(ROOM, n);
	EXPECT_EQ(0, e[lf].error) TH_LOG("%s", e[lf].spec);
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, e[lf].hook);
	EXPECT_EQ(done - ROOM, nr_hooked(e, nf, LBR_SNAP_HOOK_KRETPROBE));
	EXPECT_LT(nf - 4, done) TH_LOG("%u of %zu added", done, nf);
	EXPECT_EQ(done, nr_batch_targets(self->fd));
	nr = failed_stats(self->fd, self->recs);
	ASSERT_LE(0, nr) TH_LOG("%s", lbr_why);
	EXPECT_LE(5, recs_of(self->recs, nr, e, nf, LBR_SNAP_HOOK_KRETPROBE,
			     -ENOENT));

	/* Full: "@fexit" is refused, "@auto" and no hook take kretprobes. */
	any = vmlinux_funcs(&na, any_func, NULL);
	ASSERT_NE(NULL, any);
	for (i = 0; i < na && path_lookup_func(any[i].name, NULL); i++)
		;
	ASSERT_GT(na, i);
	entry_set(&one, any[i].name, any[i].addr);
	snprintf(one.spec, sizeof(one.spec), "%.100s@fexit", any[i].name);
	EXPECT_EQ(-E2BIG, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, &one,
				      1, LBR_SNAP_BATCH_FALLBACK, &done));
	EXPECT_EQ(-E2BIG, one.error);
	entry_set(&one, any[i].name, any[i].addr);
	EXPECT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, &one, 1,
				 LBR_SNAP_BATCH_FALLBACK, &done));
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, one.hook);
	EXPECT_EQ(1, del_added(self->fd, &one, 1));
	/* Without the flag, refused whole as before. */
	entry_set(&one, any[i].name, any[i].addr);
	EXPECT_EQ(-E2BIG, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, &one,
				      1, 0, &done));
	free(any);

	/* All out: the room is whole again, for fexit alone. */
	del = del_added(self->fd, e, nf);
	EXPECT_EQ((int)added, del);
	EXPECT_EQ(1, nr_targets(self->fd));
	for (i = 0, n = 0; i < nf && n < ROOM; i++)
		if (!e[i].error)
			entry_set(&e[n++], f[i].name, f[i].addr);
	EXPECT_EQ(0, targets_ioc(self->fd, LBR_SNAP_IOC_ADD_TARGETS, e, ROOM,
				 0, &done));
	EXPECT_EQ(ROOM, nr_hooked(e, ROOM, LBR_SNAP_HOOK_FEXIT));
	EXPECT_EQ(ROOM, del_added(self->fd, e, ROOM));
out:
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, unload());
	free(e);
	free(f);
}

/* Lines of @path that hold every one of @a and @b (NULL: any), but not @not. */
static int count_lines(const char *path, const char *a, const char *b,
		       const char *not)
{
	char line[8192];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, a) && (!b || strstr(line, b)) &&
		     (!not || !strstr(line, not));
	fclose(f);
	return n;
}

/*
 * The tool: lbr-snap trace of a pattern past the module's own 64 targets
 * attaches the functions of vmlinux in a batch, to the loaded module and
 * to one it loads itself; a failed open() leaves a record from inside
 * the path lookup; it all goes at the end.
 */
TEST_F_TIMEOUT(batch, trace_pattern_in_a_batch, 600)
{
	static const char *const cmd =
		"LC_ALL=C lbr-snap --json trace -e '*path* [vmlinux]' "
		"-e do_sys_openat2 -- "
		"cat /lbr-no-such-file >/tmp/tr.out 2>/tmp/tr.err";
	int round, status;

	SKIP_WITHOUT_BTF();
	if (system("command -v lbr-snap >/dev/null"))
		SKIP(return, "no lbr-snap in PATH");
	for (round = 0; round < 2; round++) {
		/* Round 1: the module loaded; round 2: trace loads it. */
		if (round) {
			close(self->fd);
			self->fd = -1;
			ASSERT_EQ(0, unload());
		}
		status = system(cmd);
		if (system("sed 's/^/# /' /tmp/tr.err"))
			TH_LOG("no /tmp/tr.err");
		/* cat's own status: 1. */
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(1, WEXITSTATUS(status));
		/* More than 64 functions, the -e counted, not listed. */
		EXPECT_EQ(1, count_lines("/tmp/tr.err", "running cat",
					 "*path* [vmlinux] (", NULL));
		EXPECT_EQ(1, count_lines("/tmp/tr.err", "-e *path* [vmlinux]: ",
					 " functions (", NULL));
		EXPECT_LE(1, count_lines("/tmp/tr.out", "\"errno\":\"ENOENT\"",
					 "\"hook\":\"fexit\"",
					 "\"func\":\"do_sys_openat2\""))
			TH_LOG("no record from inside the path lookup");
		EXPECT_LE(1, count_lines("/tmp/tr.out",
					 "\"func\":\"do_sys_openat2\"",
					 "\"errno\":\"ENOENT\"", NULL));
		if (!round) {
			EXPECT_EQ(1, nr_targets(self->fd));
		} else {
			EXPECT_NE(0, access("/sys/module/lbr_snap", F_OK))
				TH_LOG("trace left the module it loaded");
		}
	}
}

TEST_HARNESS_MAIN
