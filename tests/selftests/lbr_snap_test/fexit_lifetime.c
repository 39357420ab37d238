// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, fexit and calls that do not come back: rmmod with a
 * call inside, a kthread exiting inside, a dying CPU's functions, the
 * exit probe.  Its helpers (ftrace_can_trace(), module_refcnt(),
 * refcnt_becomes(), stack_shows(), rmmod_nonblock() ...) serve the later
 * files too.
 */

struct sleeper {
	int ret;
	pid_t tid;
};

static void *sleeper_thread(void *p)
{
	struct sleeper *s = p;

	s->tid = syscall(SYS_gettid);
	s->ret = trigger("sleep", 1500, 1);
	return NULL;
}

/* Does /proc/@tid/stack show @a, then @b, then @c? */
static bool stack_has(pid_t tid, const char *a, const char *b, const char *c)
{
	const char *want[] = { a, b, c };
	char path[64], line[256];
	unsigned int i = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stack", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (i < 3 && fgets(line, sizeof(line), f))
		if (strstr(line, want[i]))
			i++;
	fclose(f);
	return i == 3;
}

/* Is @fn one ftrace can trace (and so fexit can hook)? */
static bool ftrace_can_trace(const char *fn)
{
	FILE *f = fopen("/sys/kernel/debug/tracing/available_filter_functions", "r");
	char line[256];
	size_t len = strlen(fn);
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, fn, len) &&
			(line[len] == '\n' || line[len] == ' ');
	fclose(f);
	return found;
}

/* /sys/module/@name/refcnt, or -1 when @name is not loaded. */
static int module_refcnt(const char *name)
{
	char path[128];
	int n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/* Wait up to @ms for module @name to be held by @want references. */
static bool refcnt_becomes(const char *name, int want, int ms)
{
	for (; ms > 0; ms -= 20) {
		if (module_refcnt(name) == want)
			return true;
		usleep(20000);
	}
	return module_refcnt(name) == want;
}

/*
 * Wait up to @ms for target @i's calls inside to become @want.  A task
 * that exits inside a traced function is counted out by the exit probe
 * (sched_process_exit, in do_exit()), after whatever it completed on its
 * way out has woken the test.
 */
static bool inflight_becomes(int fd, int i, long long want, int ms)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;

	for (;; ms -= 20) {
		if (get_stats(fd, &hdr, st, LBR_SNAP_MAX_TARGETS))
			return false;
		if (st[i].inflight == want)
			return true;
		if (ms <= 0)
			return false;
		usleep(20000);
	}
}

/* Wait up to @ms for the kernel to log @text. */
static bool kmsg_waits(int k, const char *text, int ms)
{
	for (; ms > 0; ms -= 100) {
		if (kmsg_has(k, text))
			return true;
		usleep(100000);
	}
	return kmsg_has(k, text);
}

/* Wait up to @ms for the kernel stack of @tid to show @fn. */
static bool stack_shows(pid_t tid, const char *fn, int ms)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stack", tid);
	for (; ms > 0 && !found; ms -= 50) {
		f = fopen(path, "r");
		if (!f)
			return false;
		while (!found && fgets(line, sizeof(line), f))
			found = strstr(line, fn);
		fclose(f);
		if (!found)
			usleep(50000);
	}
	return found;
}

static int rmmod_nonblock(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

/*
 * rmmod never waits for a call inside a traced function: lbr_snap goes at
 * once, lbr_snap_fexit (the trampolines) holds itself and says why, and
 * goes too once the call is over: here, a task SIGKILLed while it sleeps
 * inside the function.
 */
TEST_F_TIMEOUT(fexit, rmmod_with_a_call_inside, 120)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	unsigned long long t0, t1;
	int k = kmsg_open(), status;
	pid_t child;

	ASSERT_LE(0, k);
	ASSERT_EQ(0, load("targets=lbr_test_wait%int/1@fexit capture=all"));
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(trigger("wait", 60000, 1) ? 1 : 0);
	ASSERT_TRUE(stack_shows(child, "lbr_test_wait", 10000));
	/* The stack unwinds through the trampoline to the real caller. */
	EXPECT_TRUE(stack_has(child, "lbr_test_wait", "lbr_fexit_",
			      "call_wait"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	EXPECT_EQ(1, st[0].inflight);
	close(self->fd);
	self->fd = -1;

	t0 = now_ns();
	ASSERT_EQ(0, unload());
	t1 = now_ns();
	/* Unloaded while the call (a minute's wait) is still inside. */
	EXPECT_TRUE(stack_shows(child, "lbr_test_wait", 1))
		TH_LOG("the unload returned after the call (%llu ms)",
		       (t1 - t0) / 1000000);
	TH_LOG("unloaded in %llu ms, a call inside", (t1 - t0) / 1000000);
	EXPECT_FALSE(direct_listed("lbr_test_wait"));
	/* The trampoline stays, held, and the log says why. */
	EXPECT_EQ(1, module_refcnt("lbr_snap_fexit"));
	EXPECT_EQ(-EWOULDBLOCK, rmmod_nonblock("lbr_snap_fexit"));
	EXPECT_TRUE(kmsg_waits(k, "1 call(s) still inside; lbr_snap_fexit stays loaded",
			       10000));

	ASSERT_EQ(0, kill(child, SIGKILL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_TRUE(refcnt_becomes("lbr_snap_fexit", 0, 10000));
	EXPECT_TRUE(kmsg_has(k, "the last call has returned"));
	EXPECT_EQ(0, rmmod_nonblock("lbr_snap_fexit"));
	close(k);

	/* Both load again and capture. */
	ASSERT_EQ(0, load("targets=lbr_test_int/1@fexit"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, trigger("int", -5, 2));
	EXPECT_EQ(2, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
}

/*
 * A kthread that exits inside a traced function never returns through
 * the trampoline: its exit counts the call out, so nothing stays held.
 */
TEST_F_TIMEOUT(fexit, kthread_exits_inside, 120)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	int n;

	ASSERT_EQ(0, load("targets=lbr_test_exit_inside%int/1@fexit capture=all"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, trigger("kexit", 1, 3));	/* exits inside, three times */
	ASSERT_EQ(0, trigger("kexit", 0, 2));	/* returns */
	n = drain(self->fd, self->recs, MAX_RECS);
	EXPECT_EQ(2, n) TH_LOG("%s", lbr_why);
	/* The last kthread woke us before its do_exit() counted it out. */
	EXPECT_TRUE(inflight_becomes(self->fd, 0, 0, 10000));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	EXPECT_EQ(0, st[0].inflight);
	EXPECT_EQ(2, st[0].hits);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unload());
	EXPECT_TRUE(refcnt_becomes("lbr_snap_fexit", 0, 10000))
		TH_LOG("lbr_snap_fexit held by %d", module_refcnt("lbr_snap_fexit"));
	EXPECT_EQ(0, rmmod_nonblock("lbr_snap_fexit"));
}

/*
 * A CPU going offline ends in its idle task inside functions that never
 * return (native_play_dead() and what it calls): hooked by fexit, that
 * call would never come back through the trampoline and keep
 * lbr_snap_fexit loaded for good.  No hook takes them.
 */
TEST_F_TIMEOUT(fexit, cpu_dies_inside, 120)
{
	static const char *const fns[] = {
		"do_idle", "native_play_dead", "hlt_play_dead",
		"cpuidle_play_dead",
	};
	static const char *const hooks[] = { "fexit", "auto", "kretprobe" };
	char spec[64];
	unsigned int i, h;

	for (i = 0; i < ARRAY_SIZE(fns); i++) {
		if (!ftrace_can_trace(fns[i]))
			continue;
		for (h = 0; h < ARRAY_SIZE(hooks); h++) {
			/* /0: the debug kernel has no BTF for their arguments. */
			snprintf(spec, sizeof(spec),
				 "targets=%s/0@%s capture=all", fns[i], hooks[h]);
			EXPECT_EQ(-EINVAL, load(spec)) TH_LOG("%s", spec);
		}
	}
}

/*
 * The exit probe unwinds the exiting task's stack with stack_trace_save():
 * hooked too, its own call is inside while it unwinds, and returns.  Only
 * the callers of do_exit() count, or that call is counted out twice and
 * its trampoline never drains.  (Without call stacks: with them the
 * unwinder is no target.)
 */
TEST_F_TIMEOUT(fexit, exit_probe_counts_only_calls_that_never_return, 120)
{
	int i, status;
	pid_t pid;

	if (!ftrace_can_trace("stack_trace_save"))
		SKIP(return, "stack_trace_save is not one fexit can hook here");
	ASSERT_EQ(0, load("targets=stack_trace_save%int/3@fexit stack_depth=0"));
	for (i = 0; i < 20; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(0);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
	}
	ASSERT_EQ(0, unload());
	EXPECT_TRUE(refcnt_becomes("lbr_snap_fexit", 0, 10000))
		TH_LOG("lbr_snap_fexit held by %d", module_refcnt("lbr_snap_fexit"));
	EXPECT_EQ(0, rmmod_nonblock("lbr_snap_fexit"));
}
