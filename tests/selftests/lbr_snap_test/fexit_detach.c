// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, fexit detached: the target's module goes while hooked
 * and comes back, a target deleted while a call sleeps inside, the drain
 * waits for idle and RCU-idle code.
 */

/*
 * The traced function's module goes while hooked: ftrace drops its
 * records, so the direct call is removed as it goes, and the target's
 * removal later frees the trampoline (before, ftrace would no longer find
 * the call on 6.1, and lbr_snap_fexit stayed loaded for good).
 */
TEST_F_TIMEOUT(fexit, target_module_goes_while_hooked, 120)
{
	int k = kmsg_open();

	ASSERT_LE(0, k);
	ASSERT_EQ(0, load("targets=lbr_test_int%int/1@fexit capture=all"));
	ASSERT_EQ(0, trigger("int", 3, 2));
	ASSERT_TRUE(direct_listed("lbr_test_int"));
	ASSERT_EQ(0, syscall(SYS_delete_module, "lbr_snap_test_target",
			     O_NONBLOCK));
	EXPECT_FALSE(direct_listed("lbr_test_int"));
	ASSERT_EQ(0, unload());
	EXPECT_TRUE(refcnt_becomes("lbr_snap_fexit", 0, 10000))
		TH_LOG("lbr_snap_fexit held by %d", module_refcnt("lbr_snap_fexit"));
	EXPECT_FALSE(kmsg_has(k, "ftrace would not remove"));
	EXPECT_EQ(0, rmmod_nonblock("lbr_snap_fexit"));
	close(k);
	/* It comes back unhooked, and can be hooked again. */
	EXPECT_EQ(0, load_module_file("lbr_snap_test_target"));
	EXPECT_FALSE(direct_listed("lbr_test_int"));
	ASSERT_EQ(0, load("targets=lbr_test_int%int/1@fexit capture=all"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, trigger("int", 3, 2));
	EXPECT_EQ(2, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
}

/*
 * A target's module goes while lbr_snap stays: the targets on it, with
 * either hook, stay listed with their counters and say they are gone;
 * adding the name again fails while the module is away, leaving them,
 * and once it is back replaces each, which records again.
 */
TEST_F_TIMEOUT(fexit, target_module_goes_then_added_again, 120)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	__u32 hook;
	int i;

	ASSERT_EQ(0, load("targets=lbr_test_int%int/1@fexit,lbr_test_long%long/1@kretprobe capture=all"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, trigger("int", 3, 2));
	ASSERT_EQ(0, trigger("long", 3, 2));
	EXPECT_EQ(4, drain(self->fd, self->recs, MAX_RECS)) TH_LOG("%s", lbr_why);
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(2, hdr.nr);
	EXPECT_EQ(0, st[0].state);
	EXPECT_EQ(0, st[1].state);

	ASSERT_EQ(0, syscall(SYS_delete_module, "lbr_snap_test_target",
			     O_NONBLOCK));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(2, hdr.nr);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(LBR_SNAP_TARGET_GONE, st[i].state) TH_LOG("%s", st[i].name);
		EXPECT_EQ(2, st[i].hits) TH_LOG("%s", st[i].name);
	}
	EXPECT_EQ(-ENOENT, add_target(self->fd, "lbr_test_int%int/1@fexit", &hook));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	EXPECT_EQ(2, hdr.nr);

	ASSERT_EQ(0, load_module_file("lbr_snap_test_target"));
	ASSERT_EQ(0, add_target(self->fd, "lbr_test_int%int/1@fexit", &hook));
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, hook);
	ASSERT_EQ(0, add_target(self->fd, "lbr_test_long%long/1@kretprobe", &hook));
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, hook);
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(2, hdr.nr);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, st[i].state) TH_LOG("%s", st[i].name);
		EXPECT_EQ(0, st[i].hits) TH_LOG("%s", st[i].name);
	}
	EXPECT_TRUE(direct_listed("lbr_test_int"));
	EXPECT_TRUE(kprobe_listed("lbr_test_long"));
	ASSERT_EQ(0, trigger("int", 3, 2));
	ASSERT_EQ(0, trigger("long", 3, 2));
	EXPECT_EQ(4, drain(self->fd, self->recs, MAX_RECS)) TH_LOG("%s", lbr_why);
}

TEST_F_TIMEOUT(fexit, delete_while_sleeping_then_readd, 120)
{
	struct sleeper s = { .ret = -1 };
	pthread_t th;
	__u32 hook;
	int n, i, slept = 0;

	ASSERT_EQ(0, load("targets=lbr_test_sleep%int/1@fexit capture=all"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, sleeper_thread, &s));
	/* The sleeper is inside (1.5 s of it): the module counts it in. */
	ASSERT_TRUE(inflight_becomes(self->fd, 0, 1, 10000));
	/* DEL returns at once; the call in flight still finishes and records. */
	ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET,
				"lbr_test_sleep", NULL));
	EXPECT_FALSE(direct_listed("lbr_test_sleep"));
	ASSERT_EQ(0, add_target(self->fd, "lbr_test_sleep%int/1@fexit", &hook));
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, hook);
	pthread_join(th, NULL);
	EXPECT_EQ(0, s.ret);
	ASSERT_EQ(0, trigger("sleep", 1, 1));
	n = drain(self->fd, self->recs, MAX_RECS);
	EXPECT_EQ(2, n)
		TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(-EINTR, self->recs[i].h.retval);
		slept += self->recs[i].h.target_id == 0;
	}
	EXPECT_EQ(1, slept);
}


/* tracefs, where debugfs has it or where it is mounted itself. */
static const char *tracefs(void)
{
	return access("/sys/kernel/debug/tracing/kprobe_events", F_OK) ?
	       "/sys/kernel/tracing" : "/sys/kernel/debug/tracing";
}

/* Write @str to tracefs file @name; 0 or -errno. */
static int tracefs_write(const char *name, const char *str, int flags)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", tracefs(), name);
	fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	if (write(fd, str, strlen(str)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Events of kprobe event @ev in the trace whose stack (the trace option
 * "stacktrace" puts one after each event) shows @with and not @without.
 */
static int traced_from(const char *ev, const char *with, const char *without)
{
	bool in = false, has = false, hasnt = false;
	char line[512], tag[80];
	int n = 0;
	FILE *f;

	snprintf(line, sizeof(line), "%s/trace", tracefs());
	f = fopen(line, "r");
	if (!f)
		return -1;
	snprintf(tag, sizeof(tag), " %s: ", ev);
	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);

		if (eof || (!strstr(line, "=> ") &&
			    !strstr(line, "<stack trace>"))) {
			n += in && has && !hasnt;
			if (eof)
				break;
			in = strstr(line, tag);
			has = hasnt = false;
		} else if (strstr(line, "=> ")) {
			has |= !!strstr(line, with);
			hasnt |= without && strstr(line, without);
		}
	}
	fclose(f);
	return n;
}

/*
 * Removing a trampoline waits for the tasks that may be on it: RCU Tasks
 * for the others, RCU Tasks Rude for the idle tasks and for code where
 * RCU is not watching, which RCU Tasks does not wait for.  ftrace pairs
 * them the same way when it frees a trampoline.  Seen through a kprobe
 * event on synchronize_rcu_tasks_rude(), with the stack of each call.
 */
TEST_F_TIMEOUT(fexit, drain_waits_for_idle_and_rcu_idle_code, 120)
{
	const char *ev = "lbr_snap_rude";
	int drains, unreg;

	char dump[160];
	int ret;

	/*
	 * Under QEMU 7.2's multi-threaded TCG this test hung its guest three
	 * times (in guest-lbr-legacy-pmu, guest-lbr-arch and an SMP stock
	 * guest): CPU 0 in a soft lockup in the rmmod, CPU 1 taking no
	 * timer interrupt; never on single-threaded TCG, where most guests
	 * of make check run it (guest-5.10, guest-6.12, guest-sid-7.2, the
	 * lab PMU and AMD guests, guest-lbr-arch).
	 */
	if (getenv("LBR_MTTCG"))
		SKIP(return, "multi-threaded TCG hangs in it (a vCPU stops taking timer interrupts); the single-threaded guests run it");
	self->traced = true;	/* the teardown undoes what follows */
	tracefs_write("kprobe_events", "-:lbr_snap_rude", O_APPEND);
	ret = tracefs_write("kprobe_events",
			    "p:lbr_snap_rude synchronize_rcu_tasks_rude",
			    O_APPEND);
	if (ret && !ksym("synchronize_rcu_tasks_rude"))
		SKIP(return, "this kernel has no synchronize_rcu_tasks_rude()");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, tracefs_write("trace", "", O_TRUNC));
	ASSERT_EQ(0, tracefs_write("options/stacktrace", "1", 0));
	ASSERT_EQ(0, tracefs_write("events/kprobes/lbr_snap_rude/enable", "1", 0));

	ASSERT_EQ(0, load("targets=lbr_test_int%int/1@fexit"));
	ASSERT_EQ(0, trigger("int", 1, 10));
	ASSERT_EQ(0, unload());
	EXPECT_TRUE(refcnt_becomes("lbr_snap_fexit", 0, 10000))
		TH_LOG("lbr_snap_fexit held by %d", module_refcnt("lbr_snap_fexit"));

	tracefs_write("events/kprobes/lbr_snap_rude/enable", "0", 0);
	drains = traced_from(ev, "lbr_fexit_drain", NULL);
	/*
	 * lbr_fexit_unregister() calls it last, maybe as a tail call, from
	 * rmmod, not through ftrace's own removal of the direct call
	 * (lbr_snap's addresses, gone by now, show as numbers).
	 */
	unreg = traced_from(ev, "sys_delete_module",
			    "unregister_ftrace_direct");
	snprintf(dump, sizeof(dump), "grep -v '^#' %s/trace | head -60",
		 tracefs());
	if ((unreg < 1 || drains < 2) && !system(dump))
		TH_LOG("the trace is above");
	/* Before the count is looked at, and after it is found 0. */
	EXPECT_LE(2, drains);
	/* Before lbr_snap's callbacks may go. */
	EXPECT_LE(1, unreg);
}
