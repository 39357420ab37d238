// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, fexit and a function's arguments: the count needed
 * without BTF, stack arguments passed on intact, too many or variadic
 * ones left to a kretprobe, hook names checked; and its record is the
 * kretprobe's.
 */

/*
 * fexit on a function without BTF (the target module's) needs its
 * argument count: asked for by name without one, it is refused.  auto:
 * fexit only where BTF bounds the stack arguments, so a kretprobe for
 * these, as where ftrace cannot hook the function (no fentry).
 */
TEST_F(fexit, arg_count_needed_without_btf_or_falls_back)
{
	EXPECT_EQ(-EOPNOTSUPP, load("targets=lbr_test_int@fexit capture=all"));
	ASSERT_EQ(0, load("targets=lbr_test_int/1@fexit,lbr_test_long%long/7@fexit capture=all"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, stats_hook(self->fd, 0));
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, stats_hook(self->fd, 1));
	ASSERT_EQ(0, trigger("int", -3, 2));
	ASSERT_EQ(0, trigger("long", 4, 3));
	EXPECT_EQ(5, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	close(self->fd);
	self->fd = -1;

	ASSERT_EQ(0, load("targets=lbr_test_int/1,lbr_test_notrace%long hook=auto"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, stats_hook(self->fd, 0));
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, stats_hook(self->fd, 1));
	EXPECT_FALSE(direct_listed("lbr_test_int"));
	EXPECT_TRUE(kprobe_listed("lbr_test_int"));
	EXPECT_TRUE(kprobe_listed("lbr_test_notrace"));
	ASSERT_EQ(0, trigger("int", -3, 2));
	ASSERT_EQ(0, trigger("notrace", -4, 3));
	EXPECT_EQ(5, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unload());
	/* Only fexit asked for, where it cannot be: the load fails. */
	EXPECT_NE(0, load("targets=lbr_test_notrace/1@fexit"));
}

/*
 * Arguments on the stack (eight longs; a 40-byte struct by value) reach
 * the function as passed, whatever "/N" says within the trampoline's copy:
 * the trampoline passes the caller's stack words on.  The target module
 * checks every call and fails the write with EIO otherwise.  Its functions
 * have no BTF, so fexit needs a count: without one, or with one beyond the
 * copy, fexit is refused.
 */
TEST_F(fexit, stack_arguments_intact_whatever_n)
{
	static const char *const specs[] = {
		"targets=lbr_test_args8%long/1@fexit,lbr_test_struct%long/2@fexit capture=all",
		"targets=lbr_test_args8%long/3@fexit,lbr_test_struct%long/0@fexit capture=all",
		"targets=lbr_test_args8%long/8@fexit,lbr_test_struct%long/22@fexit capture=all",
	};
	long want8 = 0, want7 = 0;
	unsigned int v, i;
	int n, j;

	for (i = 1; i <= 8; i++)
		want8 += i * (100 + i);
	for (i = 1; i <= 7; i++)
		want7 += i * (-50 + (long)i);
	for (v = 0; v < sizeof(specs) / sizeof(specs[0]); v++) {
		ASSERT_EQ(0, load(specs[v])) TH_LOG("%s", specs[v]);
		self->fd = dev_open(O_NONBLOCK);
		ASSERT_LE(0, self->fd);
		EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, stats_hook(self->fd, 0));
		EXPECT_EQ(0, trigger("args8", 100, 3)) TH_LOG("%s", specs[v]);
		EXPECT_EQ(0, trigger("big", -50, 3)) TH_LOG("%s", specs[v]);
		n = drain(self->fd, self->recs, MAX_RECS);
		EXPECT_EQ(6, n) TH_LOG("%s", lbr_why);
		for (j = 0; j < n; j++)
			EXPECT_EQ(self->recs[j].h.target_id == 0 ? want8 : want7,
				  self->recs[j].h.retval);
		close(self->fd);
		self->fd = -1;
	}
	EXPECT_EQ(-EOPNOTSUPP, load("targets=lbr_test_args8%long@fexit"));
	EXPECT_EQ(-E2BIG, load("targets=lbr_test_struct%long/23@fexit"));
}

/*
 * More stack arguments than the trampoline passes on (24 longs: 18 words
 * on the stack), and variable arguments: "auto" takes a kretprobe, and
 * every call gets its arguments (the target module fails the write with
 * EIO otherwise).  fexit asked for by name is refused: with a count that
 * says too many, or with none (no BTF for the module's functions).
 */
TEST_F(fexit, more_stack_arguments_than_the_copy)
{
	long want = 0;
	int n, j;

	for (j = 1; j <= 24; j++)
		want += j * (7L + j);
	ASSERT_EQ(0, load("targets=lbr_test_stack24%long,lbr_test_va%long capture=all hook=auto"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, stats_hook(self->fd, 0));
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, stats_hook(self->fd, 1));
	EXPECT_EQ(0, trigger("stack24", 7, 3));
	EXPECT_EQ(0, trigger("va", 7, 3));
	n = drain(self->fd, self->recs, MAX_RECS);
	EXPECT_EQ(6, n) TH_LOG("%s", lbr_why);
	for (j = 0; j < n; j++)
		EXPECT_EQ(want, self->recs[j].h.retval);
	close(self->fd);
	self->fd = -1;

	EXPECT_EQ(-E2BIG, load("targets=lbr_test_stack24%long/24@fexit"));
	EXPECT_EQ(-EOPNOTSUPP, load("targets=lbr_test_stack24%long@fexit"));
	EXPECT_EQ(-EOPNOTSUPP, load("targets=lbr_test_va%long@fexit"));
	EXPECT_EQ(0, unload());
}

/* Kernel text, from /proc/kallsyms (root): [_stext, _etext). */
static bool kernel_text(unsigned long long v)
{
	static unsigned long long lo, hi;

	if (!lo) {
		lo = ksym("_stext");
		hi = ksym("_etext");
	}
	return lo && v >= lo && v < hi;
}

/*
 * The line of /proc/net/tcp6 of the socket listening on @port, read by
 * "nobody" into @line; 0, or why not.
 */
static int tcp6_line_as_nobody(unsigned int port, char *line, size_t len)
{
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -2;
	if (!pid) {
		char buf[512], want[16];
		FILE *f;

		close(p[0]);
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		f = fopen("/proc/net/tcp6", "r");
		if (!f)
			_exit(11);
		snprintf(want, sizeof(want), ":%04X ", port);
		while (fgets(buf, sizeof(buf), f)) {
			char *local = strchr(buf, ':');

			/* "sl: local remote ...": the local address's port. */
			if (local && (local = strchr(local + 1, ':')) &&
			    !strncmp(local, want, strlen(want))) {
				n = write(p[1], buf, strlen(buf));
				_exit(n == (ssize_t)strlen(buf) ? 0 : 12);
			}
		}
		_exit(13);
	}
	close(p[1]);
	n = read(p[0], line, len - 1);
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -100 - WEXITSTATUS(status);
	if (n <= 0)
		return -3;
	line[n] = '\0';
	return 0;
}

/*
 * seq_printf() takes variable arguments: get_tcp6_sock() passes it 29,
 * 23 of them on the stack.  BTF says it is variadic, so "auto" hooks it
 * with a kretprobe, and what "nobody" reads of /proc/net/tcp6 with it
 * hooked is what it reads without: no kernel return address in its
 * columns, no argument shifted.  With fexit it would read the trampoline's
 * frame as arguments 17 to 19 (a KASLR leak) and the rest shifted.
 */
TEST_F(fexit, variadic_seq_printf_leaks_nothing)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	char before[512], after[512], *tok, *save;
	socklen_t alen = sizeof(a);
	int s, ret;

	s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		SKIP(return, "no IPv6 sockets here: %s", strerror(errno));
	ASSERT_EQ(0, bind(s, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, listen(s, 1));
	ASSERT_EQ(0, getsockname(s, (struct sockaddr *)&a, &alen));
	ret = tcp6_line_as_nobody(ntohs(a.sin6_port), before, sizeof(before));
	ASSERT_EQ(0, ret);

	ASSERT_EQ(0, load("targets=seq_printf capture=all hook=auto"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, stats_hook(self->fd, 0));
	ret = tcp6_line_as_nobody(ntohs(a.sin6_port), after, sizeof(after));
	EXPECT_EQ(0, ret);
	EXPECT_STREQ(before, after);
	for (tok = strtok_r(after, " \n", &save); !ret && tok;
	     tok = strtok_r(NULL, " \n", &save)) {
		unsigned long long v = strtoull(tok, NULL, 16);

		EXPECT_FALSE(kernel_text(v)) TH_LOG("%s", tok);
		EXPECT_FALSE(kernel_text(strtoull(tok, NULL, 10))) TH_LOG("%s", tok);
	}
	close(self->fd);
	self->fd = -1;
	close(s);
	EXPECT_EQ(0, unload());
}

TEST_F(fexit, hook_names_checked)
{
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int@nope"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int hook=nope"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int/x@fexit"));
	EXPECT_EQ(0, load("targets=lbr_test_int%int/1@kretprobe hook=fexit"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, stats_hook(self->fd, 0));
}

/* The branches of lbr_test_int() and lbr_test_fail() in @r, in order. */
static int body_branches(const struct rec *r, unsigned long long fn,
			 unsigned long long fail, struct lbr_snap_branch *out)
{
	unsigned long long fn_end = ksym_end(fn), fail_end = ksym_end(fail);
	unsigned int i;
	int n = 0;

	for (i = 0; i < r->h.nr_entries; i++) {
		const struct lbr_snap_branch *b = &r->br[i];

		/* Not the fentry call itself: the hook's own entry. */
		if (b->from >= fn && b->from <= fn + 4)
			continue;
		if ((b->from > fn && b->from < fn_end) ||
		    (b->from >= fail && b->from < fail_end))
			out[n++] = *b;
	}
	return n;
}

TEST_F_TIMEOUT(fexit, same_record_as_kretprobe, 120)
{
	unsigned long long fn = ksym("lbr_test_int");
	unsigned long long fail = ksym("lbr_test_fail");
	struct lbr_snap_branch kb[LBR_SNAP_MAX_ENTRIES], fb[LBR_SNAP_MAX_ENTRIES];
	struct lbr_snap_info info;
	struct rec kr, fr;
	__u32 hook;
	int nk, nf, i, ret;

	ASSERT_EQ(0, load("targets=lbr_test_long%long"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_info(self->fd, &info));

	/* The same call, once through each hook. */
	ASSERT_EQ(0, add_target(self->fd, "lbr_test_int%int@kretprobe", &hook));
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, hook);
	ASSERT_EQ(0, trigger("int", -22, 1));
	ASSERT_EQ(1, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	kr = self->recs[0];
	ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET,
				"lbr_test_int", NULL));
	ASSERT_EQ(0, add_target(self->fd, "lbr_test_int%int/1@fexit", &hook));
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, hook);
	ASSERT_EQ(0, trigger("int", -22, 1));
	ASSERT_EQ(1, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	fr = self->recs[0];

	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, kr.h.hook);
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, fr.h.hook);
	EXPECT_EQ(kr.h.retval, fr.h.retval);
	EXPECT_EQ(kr.h.ret_type, fr.h.ret_type);
	EXPECT_EQ(kr.h.pid, fr.h.pid);
	EXPECT_EQ(kr.h.tgid, fr.h.tgid);
	EXPECT_STREQ(kr.h.comm, fr.h.comm);
	EXPECT_EQ(kr.h.func_addr, fr.h.func_addr);
	EXPECT_EQ(kr.h.caller, fr.h.caller);
	EXPECT_EQ(kr.h.backend, fr.h.backend);
	/*
	 * Before 5.15 a kretprobe record has no stack, and an interrupt may
	 * push either return out (checked below): the rest agree.
	 */
	EXPECT_EQ(kr.h.flags & ~(LBR_SNAP_REC_NO_STACK | LBR_SNAP_REC_NO_RETURN),
		  fr.h.flags & ~(LBR_SNAP_REC_NO_STACK | LBR_SNAP_REC_NO_RETURN));
	if (info.backend == LBR_SNAP_BACKEND_NONE)
		SKIP(return, "no LBR here to compare branches: %s", info.reason);
	if ((kr.h.flags | fr.h.flags) & LBR_SNAP_REC_NO_RETURN)
		SKIP(return, "an interrupt pushed a return out of the LBR");
	ASSERT_TRUE(ksyms_snapshot());
	if (find_return(&kr, fail, KRETPROBE_SITE) < 0 &&
	    return_cut(&kr, KRETPROBE_SITE) && NONE_FAILED()) {
		ksyms_drop();
		SKIP(return, "the kretprobe path took %u of %u entries: only its return's last hop is left to compare",
		     kr.h.probe_entries, kr.h.nr_entries);
	}
	ksyms_drop();

	/*
	 * The function's own branches, return included, are the same; the
	 * return goes where each hook put its return site: the kretprobe
	 * trampoline, or the fexit trampoline's.
	 */
	nk = body_branches(&kr, fn, fail, kb);
	nf = body_branches(&fr, fn, fail, fb);
	ASSERT_LE(3, nk);
	ASSERT_EQ(nk, nf);
	for (i = 0; i < nk; i++) {
		EXPECT_EQ(kb[i].from, fb[i].from) TH_LOG("branch %d", i);
		if (i < nk - 1)
			EXPECT_EQ(kb[i].to, fb[i].to) TH_LOG("branch %d", i);
	}
	/* (Through the return thunk, where the kernel uses one, for both.) */
	if (kb[nk - 1].to != fb[nk - 1].to) {
		EXPECT_TRUE(ksym_is(fb[nk - 1].to, "lbr_fexit_lbr_"))
			TH_LOG("the return went to %llx", fb[nk - 1].to);
		EXPECT_FALSE(ksym_is(kb[nk - 1].to, "lbr_fexit_"));
	}
	/*
	 * What follows the return is the hook's tail: fexit has none (but
	 * an interrupt that came in between the return and the freeze).
	 */
	ASSERT_TRUE(ksyms_snapshot());
	ret = find_return(&fr, fail, FEXIT_SITE);
	if (ret >= 0 && !interrupted_after(&fr, ret))
		EXPECT_EQ(0, fr.h.probe_entries);
	ksyms_drop();
	ASSERT_LE(0, ret);
	EXPECT_LT(fr.h.probe_entries, kr.h.probe_entries);
	TH_LOG("probe_entries: kretprobe %u, fexit %u", kr.h.probe_entries,
	       fr.h.probe_entries);
}
