// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, which returns are recorded: errno lists, the task
 * filter (SET_FILTER).
 */

/*
 * An errno list (sym=-ERR,...): only those errors are recorded, by name
 * (the kernel's own, %pe) or by number, from targets= and ADD_TARGET; the
 * other returns count as filtered.  A target without one records every
 * error.  A list that is not errnos, too long, or on a bool is refused.
 */
TEST_F(cap, errno_list_records_only_those)
{
	const char *fx = is_fexit(variant) ? "/1" : "";
	char params[256], spec[64];
	int n, i, k, inval = 0, noent = 0, other = 0;
	__u32 id = 0;

	snprintf(params, sizeof(params),
		 "targets=lbr_test_int%s=-EINVAL,-2,lbr_test_long%s hook=%s",
		 fx, fx, variant->hook);
	ASSERT_EQ(0, load(params)) TH_LOG("load(%s)", params);
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, trigger("int", -22, 3));
	ASSERT_EQ(0, trigger("int", -2, 2));
	ASSERT_EQ(0, trigger("int", -5, 4));
	ASSERT_EQ(0, trigger("int", 7, 1));
	ASSERT_EQ(0, trigger("long", -5, 2));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(7, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		const struct lbr_snap_record *h = &self->recs[i].h;

		if (h->target_id == 0 && h->retval == -EINVAL)
			inval++;
		else if (h->target_id == 0 && h->retval == -ENOENT)
			noent++;
		else if (h->target_id != 1 || h->retval != -5)
			other++;
	}
	EXPECT_EQ(3, inval);
	EXPECT_EQ(2, noent);
	EXPECT_EQ(0, other);
	expect_stats(_metadata, variant, self->fd, 0, 10, 5, 5);
	expect_stats(_metadata, variant, self->fd, 1, 2, 2, 0);

	/* ADD_TARGET takes one; a pointer's ERR_PTR is its errno. */
	snprintf(spec, sizeof(spec), "lbr_test_ptr%%ptr%s@%s=-ENOMEM", fx,
		 variant->hook);
	ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET, spec, &id));
	ASSERT_EQ(0, trigger("ptr", -12, 2));
	ASSERT_EQ(0, trigger("ptr", -22, 3));
	ASSERT_EQ(0, trigger("ptr", 0, 1));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(2, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++)
		EXPECT_EQ(-ENOMEM, self->recs[i].h.retval);
	expect_stats(_metadata, variant, self->fd, id, 6, 2, 4);
	cap_unload(_metadata, self);

	k = kmsg_open();
	ASSERT_LE(0, k);
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int=-EBOGUS"));
	EXPECT_TRUE(kmsg_has(k, "target 'lbr_test_int': '-EBOGUS' is not an errno (-ENAME or -N, 1 to 4095)"));
	/*
	 * Every name of the kernel's headers, aliases and kernel-internal
	 * ones too, whether or not the kernel prints names
	 * (CONFIG_SYMBOLIC_ERRNAME; the debug kernel does not).
	 */
	EXPECT_EQ(0, load("targets=lbr_test_int=-EWOULDBLOCK,-EPROBE_DEFER,-ENOTSUPP,-ENOGRACE,-EHWPOISON"));
	EXPECT_EQ(0, unload());
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int=-4096"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int=EINVAL"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int=-1,-2,-3,-4,-5,-6,-7,-8,-9"));
	EXPECT_TRUE(kmsg_has(k, "target 'lbr_test_int': more than 8 errnos"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_bool%bool=-EINVAL"));
	EXPECT_TRUE(kmsg_has(k, "target 'lbr_test_bool': returns bool, which has no errno to list"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int,-EINVAL"));
	close(k);
}

/* In a child named @comm: trigger(@fn, @value, @count); 0 if it did. */
static int trigger_in_child(const char *fn, long value, unsigned long count,
			    const char *comm)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		prctl(PR_SET_NAME, comm);
		_exit(trigger(fn, value, count) ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

static int set_filter(int fd, __u32 flags, int pid, int tgid,
		      const char *comm)
{
	struct lbr_snap_filter f = {
		.flags = flags, .pid = pid, .tgid = tgid,
	};

	if (comm)
		strncpy(f.comm, comm, sizeof(f.comm) - 1);
	return ioctl(fd, LBR_SNAP_IOC_SET_FILTER, &f) ? -errno : 0;
}

/*
 * SET_FILTER: only the returns of the task it names, by process id, by
 * comm or by thread id; the others count as filtered.  Cleared, every
 * task is recorded again.  Unknown flags, reserved words, negative ids
 * and a descriptor not open for writing are refused.
 */
TEST_F(cap, task_filter_by_tgid_comm_pid)
{
	struct lbr_snap_filter bad = { .reserved = { 1 } };
	const char *child = "lbr_filter_kid";
	int n, i, rofd;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);

	ASSERT_EQ(0, set_filter(self->fd, LBR_SNAP_FILTER_TGID, 0, getpid(),
				NULL));
	ASSERT_EQ(0, trigger_in_child("int", -5, 3, child));
	ASSERT_EQ(0, trigger("int", -22, 2));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(2, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++)
		EXPECT_EQ((__u32)getpid(), self->recs[i].h.tgid);

	ASSERT_EQ(0, set_filter(self->fd, LBR_SNAP_FILTER_COMM, 0, 0, child));
	ASSERT_EQ(0, trigger_in_child("int", -5, 3, child));
	ASSERT_EQ(0, trigger("int", -22, 2));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(3, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		EXPECT_STREQ(child, self->recs[i].h.comm);
		EXPECT_NE((__u32)getpid(), self->recs[i].h.tgid);
	}

	ASSERT_EQ(0, set_filter(self->fd, LBR_SNAP_FILTER_PID,
				syscall(SYS_gettid), 0, NULL));
	ASSERT_EQ(0, trigger("int", -22, 2));
	ASSERT_EQ(0, trigger_in_child("int", -5, 3, child));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(2, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++)
		EXPECT_EQ((__u32)syscall(SYS_gettid), self->recs[i].h.pid);

	ASSERT_EQ(0, set_filter(self->fd, 0, 0, 0, NULL));
	ASSERT_EQ(0, trigger_in_child("int", -5, 1, child));
	ASSERT_EQ(0, trigger("int", -22, 1));
	EXPECT_EQ(2, drain(self->fd, self->recs, MAX_RECS));
	expect_stats(_metadata, variant, self->fd, 0, 17, 9, 8);

	EXPECT_EQ(-EINVAL, set_filter(self->fd, 1u << 4, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, set_filter(self->fd, LBR_SNAP_FILTER_PID, -1, 0,
				      NULL));
	/* A field the flags do not name must be 0; a comm, NUL-ended. */
	EXPECT_EQ(-EINVAL, set_filter(self->fd, LBR_SNAP_FILTER_TGID, 5, 1,
				      NULL));
	EXPECT_EQ(-EINVAL, set_filter(self->fd, 0, 0, 0, "x"));
	bad = (struct lbr_snap_filter){ .flags = LBR_SNAP_FILTER_COMM };
	memset(bad.comm, 'x', sizeof(bad.comm));
	EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_SET_FILTER, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = (struct lbr_snap_filter){ .reserved = { 1 } };
	EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_SET_FILTER, &bad));
	EXPECT_EQ(EINVAL, errno);
	rofd = open(LBR_SNAP_DEVICE, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rofd);
	EXPECT_EQ(-EBADF, set_filter(rofd, 0, 0, 0, NULL));
	close(rofd);
}

/*
 * A record of the tree filter's: in a write(), its fields set, the call
 * made in that write() (entry_ns) and ended at ts_ns.
 */
static bool in_write(const struct lbr_snap_record *h)
{
	return (h->flags & LBR_SNAP_REC_SYSCALL) && h->syscall_nr == SYS_write &&
	       h->syscall_seq && h->syscall_ns && h->syscall_ns <= h->ts_ns &&
	       h->syscall_ns <= h->entry_ns && h->entry_ns <= h->ts_ns;
}

/*
 * The tree filter: the child it names and the grandchild that child forks
 * after, not the test itself; each record says which system call it
 * returned in: the three of one write() share its number and start, the
 * next write() has a later one, and when the call came in.  The tasks
 * are let go as they exit, and nothing is numbered once the filter is
 * off.  A tgid that is no process, and the tree with a pid or tgid
 * filter, are refused.  When a call came in: an fexit trampoline's always,
 * a kretprobe's from the first tree filter on (its entry handler).
 */
TEST_F(cap, tree_filter_follows_forks_and_numbers_syscalls)
{
	struct lbr_snap_info info = { 0 };
	int go[2], status, n, i, five = 0, six = 0, seven = 0;
	const struct lbr_snap_record *a = NULL, *b = NULL;
	pid_t kid, grandkid = 0;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	ASSERT_EQ(0, trigger("int", -22, 1));
	ASSERT_EQ(1, drain(self->fd, self->recs, MAX_RECS)) TH_LOG("%s", lbr_why);
	if (is_fexit(variant)) {
		EXPECT_TRUE(self->recs[0].h.entry_ns &&
			    self->recs[0].h.entry_ns <= self->recs[0].h.ts_ns)
			TH_LOG("fexit: entry_ns %llu, ts_ns %llu",
			       (unsigned long long)self->recs[0].h.entry_ns,
			       (unsigned long long)self->recs[0].h.ts_ns);
	} else {
		EXPECT_EQ(0, self->recs[0].h.entry_ns);
	}
	ASSERT_EQ(0, pipe(go));
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		char c;
		pid_t g;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		if (trigger("int", -5, 3) || trigger("int", -6, 2))
			_exit(3);
		g = fork();
		if (!g)
			_exit(trigger("int", -7, 1) ? 4 : 0);
		if (g < 0 || waitpid(g, &status, 0) != g ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			_exit(5);
		_exit(0);
	}
	close(go[0]);
	ASSERT_EQ(0, set_filter(self->fd, LBR_SNAP_FILTER_TREE, 0, kid, NULL));
	ASSERT_EQ(0, get_info(self->fd, &info));
	EXPECT_EQ(1, info.tree_tasks);
	ASSERT_EQ(0, trigger("int", -22, 2));
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child status %#x", status);

	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(6, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		const struct lbr_snap_record *h = &self->recs[i].h;

		EXPECT_TRUE(in_write(h))
			TH_LOG("record %d: flags %#x nr %d seq %u ns %llu entry %llu ts %llu",
			       i, h->flags, h->syscall_nr, h->syscall_seq,
			       (unsigned long long)h->syscall_ns,
			       (unsigned long long)h->entry_ns,
			       (unsigned long long)h->ts_ns);
		if (h->retval == -5) {
			EXPECT_EQ((__u32)kid, h->pid);
			if (a) {
				EXPECT_EQ(a->syscall_seq, h->syscall_seq);
				EXPECT_EQ(a->syscall_ns, h->syscall_ns);
			}
			a = h;
			five++;
		} else if (h->retval == -6) {
			EXPECT_EQ((__u32)kid, h->pid);
			if (b) {
				EXPECT_EQ(b->syscall_seq, h->syscall_seq);
				EXPECT_EQ(b->syscall_ns, h->syscall_ns);
			}
			b = h;
			six++;
		} else if (h->retval == -7) {
			grandkid = h->pid;
			seven++;
		}
	}
	EXPECT_EQ(3, five);
	EXPECT_EQ(2, six);
	EXPECT_EQ(1, seven);
	EXPECT_NE(0, grandkid);
	EXPECT_NE(kid, grandkid);
	if (a && b) {
		/* open(), write(), close() of trigger(): one write later. */
		EXPECT_LT(a->syscall_seq, b->syscall_seq);
		EXPECT_LT(a->syscall_ns, b->syscall_ns);
		EXPECT_LT(a->ts_ns, b->syscall_ns);
	}
	ASSERT_EQ(0, get_info(self->fd, &info));
	EXPECT_EQ(0, info.tree_tasks);
	EXPECT_EQ(0, info.tree_missed);

	/* Off: every task again, and no system call numbered. */
	ASSERT_EQ(0, set_filter(self->fd, 0, 0, 0, NULL));
	ASSERT_EQ(0, trigger("int", -22, 2));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(2, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, self->recs[i].h.flags & LBR_SNAP_REC_SYSCALL);
		EXPECT_EQ(0, self->recs[i].h.syscall_seq);
		/* A kretprobe keeps its entry handler. */
		EXPECT_NE(0, self->recs[i].h.entry_ns);
		EXPECT_LE(self->recs[i].h.entry_ns, self->recs[i].h.ts_ns);
	}

	/* kid is reaped: no such process now, and the filter stays. */
	ASSERT_EQ(0, set_filter(self->fd, LBR_SNAP_FILTER_PID,
				syscall(SYS_gettid), 0, NULL));
	EXPECT_EQ(-ESRCH, set_filter(self->fd, LBR_SNAP_FILTER_TREE, 0, kid,
				     NULL));
	ASSERT_EQ(0, trigger("int", -22, 1));
	ASSERT_EQ(0, trigger_in_child("int", -5, 1, "lbr_tree_kid"));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(1, n) TH_LOG("%s", lbr_why);
	EXPECT_EQ((__u32)syscall(SYS_gettid), self->recs[0].h.pid);
	EXPECT_EQ(0, self->recs[0].h.flags & LBR_SNAP_REC_SYSCALL);
	/* A zombie: its thread is exiting; refused, the filter stays. */
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid)
		_exit(0);
	{
		siginfo_t si = { 0 };

		ASSERT_EQ(0, waitid(P_PID, kid, &si, WEXITED | WNOWAIT));
	}
	EXPECT_EQ(-ESRCH, set_filter(self->fd, LBR_SNAP_FILTER_TREE, 0, kid,
				     NULL));
	ASSERT_EQ(0, trigger("int", -22, 1));
	n = drain(self->fd, self->recs, MAX_RECS);
	EXPECT_EQ(1, n) TH_LOG("%s", lbr_why);
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
	EXPECT_EQ(-EINVAL, set_filter(self->fd, LBR_SNAP_FILTER_TREE, 0, 0,
				      NULL));
	EXPECT_EQ(-EINVAL, set_filter(self->fd, LBR_SNAP_FILTER_TREE |
				      LBR_SNAP_FILTER_TGID, 0, getpid(), NULL));
	EXPECT_EQ(-EINVAL, set_filter(self->fd, LBR_SNAP_FILTER_TREE |
				      LBR_SNAP_FILTER_PID, getpid(), getpid(),
				      NULL));
	/* The test itself, and a thread it makes: followed. */
	ASSERT_EQ(0, set_filter(self->fd, LBR_SNAP_FILTER_TREE, 0, getpid(),
				NULL));
	ASSERT_EQ(0, trigger("int", -22, 1));
	ASSERT_EQ(0, trigger_in_child("int", -5, 1, "lbr_tree_kid"));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(2, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++)
		EXPECT_TRUE(in_write(&self->recs[i].h));
	EXPECT_EQ(0, set_filter(self->fd, 0, 0, 0, NULL));
	expect_stats(_metadata, variant, self->fd, 0, 16, 13, 3);
}

/*
 * n errors of lbr_test_int on CPU 0, @runs times: *@cost the MSR
 * accesses of the run that took fewest beyond @base (the same calls
 * unhooked); -1 without the lab's counter.
 */
static int error_cost(unsigned long n, unsigned long runs, long long base,
		      long long *cost)
{
	int ret = msr_cost_least("int", -22, n, runs, cost);

	if (*cost >= 0 && base >= 0)
		*cost -= base;
	else
		*cost = -1;
	return ret;
}

/*
 * A task the tree filter leaves out costs no MSR access once it is
 * known: its first return turned away on a CPU teaches that CPU
 * (task_follow.c), and each hook lets its next calls go at their entry,
 * hits filtered, where each froze and unfroze LBR before (four accesses
 * on these CPUs).  The lab's vCPUs count their RDMSRs and WRMSRs.  Set to
 * the test's own tree, the same task is recorded again, with branches: a
 * change of filter forgets what was learnt.  A filter of a tgid or a comm
 * is applied after the freeze, as it was; with no filter every error is
 * recorded.
 */
TEST_F(cap, left_out_task_costs_no_msr)
{
	const unsigned long n = 100;
	static const struct {
		const char *what;
		__u32 flags;
		bool own;	/* the filter names the test's process */
		bool skipped;	/* the test's calls cost no MSR access */
		bool recorded;
	} cases[] = {
		{ "tree of another process", LBR_SNAP_FILTER_TREE, false, true, false },
		{ "tree of the test's", LBR_SNAP_FILTER_TREE, true, false, true },
		{ "tree of another again", LBR_SNAP_FILTER_TREE, false, true, false },
		{ "tgid of another process", LBR_SNAP_FILTER_TGID, false, false, false },
		{ "comm of another", LBR_SNAP_FILTER_COMM, false, false, false },
		{ "none", 0, false, false, true },
	};
	unsigned long long hits = 0, captured = 0, filtered = 0;
	long long base, base_ok, cost;
	unsigned int c;
	cpu_set_t one;
	pid_t kid;
	int got, k;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(0, msr_cost_least("int", -22, n, 3, &base));
	ASSERT_EQ(0, msr_cost_least("int", 5, n, 3, &base_ok));
	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	kid = idle_child();
	ASSERT_LT(0, kid);

	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		__u32 fl = cases[c].flags;
		pid_t id = cases[c].own ? getpid() : kid;
		/* Least of three where timers could hide a cost of none. */
		unsigned long runs = cases[c].skipped ? 3 : 1;

		ASSERT_EQ(0, set_filter(self->fd, fl, 0,
					fl & (LBR_SNAP_FILTER_TGID |
					      LBR_SNAP_FILTER_TREE) ? id : 0,
					fl == LBR_SNAP_FILTER_COMM ?
					"lbr_no_such" : NULL))
			TH_LOG("%s", cases[c].what);
		ASSERT_EQ(0, error_cost(n, runs, base, &cost))
			TH_LOG("%s", cases[c].what);
		hits += runs * n;
		got = drain(self->fd, self->recs, MAX_RECS);
		if (cases[c].recorded) {
			captured += runs * n;
			EXPECT_EQ(runs * n, got) TH_LOG("%s: %s", cases[c].what,
							 lbr_why);
			for (k = 0; k < got; k++)
				if (self->info.backend != LBR_SNAP_BACKEND_NONE)
					EXPECT_LT(0, self->recs[k].h.nr_entries)
						TH_LOG("%s: record %d",
						       cases[c].what, k);
		} else {
			filtered += runs * n;
			EXPECT_EQ(0, got) TH_LOG("%s", cases[c].what);
		}
		expect_stats(_metadata, variant, self->fd, 0, hits, captured,
			     filtered);
		if (cost < 0 || self->info.backend == LBR_SNAP_BACKEND_NONE)
			continue;
		TH_LOG("%s: %.2f MSR accesses per error return", cases[c].what,
		       (double)cost / n);
		if (cases[c].skipped) {
			/* The first return's freeze, and timers'. */
			EXPECT_GE((long long)n / 10, cost)
				TH_LOG("%s", cases[c].what);
		} else {	/* the freeze's RDMSR and WRMSR at least */
			EXPECT_LE(2 * (long long)n, cost)
				TH_LOG("%s", cases[c].what);
		}
		if (c)
			continue;
		/* Successes too: a kretprobe froze for each of them. */
		ASSERT_EQ(0, msr_cost_least("int", 5, n, 3, &cost));
		hits += 3 * n;
		filtered += 3 * n;
		expect_stats(_metadata, variant, self->fd, 0, hits, captured,
			     filtered);
		TH_LOG("%s: %.2f MSR accesses per success", cases[c].what,
		       (double)(cost - base_ok) / n);
		EXPECT_GE((long long)n / 10, cost - base_ok)
			TH_LOG("%s, successes", cases[c].what);
	}
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	if (base < 0)
		TH_LOG("no LBR lab MSR counter on this CPU: MSR accesses not measured");
}
