// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, fixture load: the module's load-time parameters.
 * targets= validated all or nothing with a clear errno, every parameter
 * with hostile values, buffer_kb= and the wakeup mark, mode= and
 * lbr_filter=, backend=, what GET_INFO says, each CPU's LBR checked,
 * lbr_read=xsaves.
 */

FIXTURE(load) {
	int kmsg;
};

FIXTURE_SETUP(load)
{
	load_target_module();
	unload();
	self->kmsg = kmsg_open();
	ASSERT_LE(0, self->kmsg);
}

FIXTURE_TEARDOWN(load)
{
	close(self->kmsg);
	unload();
}

TEST_F(load, no_targets)
{
	EXPECT_EQ(-EINVAL, load(""));
	EXPECT_EQ(-EINVAL, load("targets="));
	EXPECT_EQ(-EINVAL, load("targets=,"));
	EXPECT_TRUE(kmsg_has(self->kmsg, "no targets"));
}

TEST_F(load, unknown_symbol)
{
	EXPECT_EQ(-ENOENT, load("targets=lbr_no_such_function"));
	EXPECT_TRUE(kmsg_has(self->kmsg,
				"target 'lbr_no_such_function': unknown symbol"));
}

TEST_F(load, all_or_nothing)
{
	EXPECT_EQ(-ENOENT, load("targets=lbr_test_int,lbr_test_long%long,lbr_no_such_function"));
	EXPECT_FALSE(hooked("lbr_test_int"));
	EXPECT_FALSE(hooked("lbr_test_long"));
	EXPECT_EQ(-ENOENT, access(LBR_SNAP_DEVICE, F_OK) ? -errno : 0);
}

TEST_F(load, kprobes_refuse)
{
	/* Not text: kprobes say EINVAL. */
	EXPECT_EQ(-EINVAL, load("targets=jiffies_64"));
	EXPECT_TRUE(kmsg_has(self->kmsg,
				"target 'jiffies_64': kprobes refuse"));
	/* On the kprobe blacklist (NOKPROBE_SYMBOL). */
	EXPECT_EQ(-EINVAL, load("targets=kprobe_int3_handler"));
}

TEST_F(load, own_capture_path)
{
	EXPECT_EQ(-EPERM, load("targets=irq_work_queue"));
	EXPECT_TRUE(kmsg_has(self->kmsg,
				"target 'irq_work_queue': on lbr_snap's own capture path"));
	EXPECT_EQ(-EPERM, load("targets=lbr_test_int,irq_work_queue"));
	EXPECT_FALSE(hooked("lbr_test_int"));
}

TEST_F(load, duplicate)
{
	/* -EEXIST would read as "already loaded" to modprobe. */
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int,lbr_test_long,lbr_test_int%long"));
	EXPECT_TRUE(kmsg_has(self->kmsg, "target 'lbr_test_int': listed twice"));
	EXPECT_FALSE(hooked("lbr_test_int"));
}

TEST_F(load, name_too_long)
{
	char params[512] = "targets=";

	memset(params + 8, 'a', 200);
	EXPECT_EQ(-ENAMETOOLONG, load(params));
	EXPECT_TRUE(kmsg_has(self->kmsg, "name longer than 127"));
}

TEST_F(load, too_many_targets)
{
	char params[4096] = "targets=lbr_test_int";
	int i;

	for (i = 1; i <= LBR_SNAP_MAX_TARGETS; i++)
		sprintf(params + strlen(params), ",fn%d", i);
	EXPECT_EQ(-E2BIG, load(params));
	EXPECT_TRUE(kmsg_has(self->kmsg, "more than 64 targets"));
	EXPECT_FALSE(hooked("lbr_test_int"));
}

TEST_F(load, bad_type_and_params)
{
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int%float"));
	EXPECT_TRUE(kmsg_has(self->kmsg, "unknown return type 'float'"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int capture=some"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int buffer_kb=1"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int backend=bogus"));
}

/* Lines /dev/kmsg gives on @fd from now on that hold @text. */
static int kmsg_new_lines(int fd, const char *text, char *last, size_t len)
{
	char line[2048];
	ssize_t n;
	int count = 0;

	for (;;) {
		n = read(fd, line, sizeof(line) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		line[n] = '\0';
		if (strstr(line, text)) {
			const char *msg = strchr(line, ';');

			count++;
			msg = msg ? msg + 1 : line;
			strncpy(last, msg, len - 1);
			last[len - 1] = '\0';
		}
	}
	return count;
}

/*
 * Every parameter with hostile values: empty, negative, huge, junk after
 * a number, separators in every place, a name too long.  The load fails
 * with one line in the kernel log, or succeeds with exactly what was
 * asked (@targets: the targets it must then have, in order).
 */
TEST_F(load, hostile_parameters)
{
	static char long_name[200];
	static const struct {
		const char *params;
		const char *targets;	/* NULL: the load must fail */
		unsigned int buffer_kb;	/* when it loads: 0, the default */
		int err;		/* when it fails: 0, -EINVAL */
	} cases[] = {
		{ "targets=lbr_test_int buffer_kb=", NULL },
		{ "targets=lbr_test_int buffer_kb=-1", NULL },
		{ "targets=lbr_test_int buffer_kb=4294967296", NULL, 0, -ERANGE },
		{ "targets=lbr_test_int buffer_kb=99999999999999999999999", NULL, 0, -ERANGE },
		{ "targets=lbr_test_int buffer_kb=12abc", NULL },
		{ "targets=lbr_test_int buffer_kb=7", NULL },
		{ "targets=lbr_test_int buffer_kb=0x100", "lbr_test_int", 256 },
		{ "targets=lbr_test_int capture=", NULL },
		{ "targets=lbr_test_int capture=all,errors", NULL },
		{ "targets=lbr_test_int capture=ALL", NULL },
		{ "targets=lbr_test_int hook=", NULL },
		{ "targets=lbr_test_int hook=fexit,kretprobe", NULL },
		{ "targets=lbr_test_int backend=", NULL },
		{ "targets=lbr_test_int backend=none,intel", NULL },
		{ "targets=lbr_test_int mode=", NULL },
		{ "targets=lbr_test_int mode=raw,perf", NULL },
		{ "targets=lbr_test_int lbr_filter=", NULL },
		{ "targets=lbr_test_int lbr_filter=kernel,,jcc", NULL },
		{ "targets=lbr_test_int lbr_filter=kernel,jcc,", NULL },
		{ "targets=lbr_test_int lbr_filter=,kernel", NULL },
		{ "targets=lbr_test_int lbr_filter=kernel,bogus", NULL },
		{ "targets=,lbr_test_int", NULL },
		{ "targets=lbr_test_int,", NULL },
		{ "targets=lbr_test_int,,lbr_test_long", NULL },
		{ "targets=lbr_test_int%", NULL },
		{ "targets=lbr_test_int%int%long", NULL },
		{ "targets=lbr_test_int/", NULL },
		{ "targets=lbr_test_int/-1", NULL },
		{ "targets=lbr_test_int/99999999999999999999", NULL },
		{ "targets=lbr_test_int/1x", NULL },
		{ "targets=lbr_test_int@", NULL },
		{ "targets=lbr_test_int@fexit@kretprobe", NULL },
		{ "targets=lbr_test_int@bogus", NULL },
		{ "targets=%int", NULL },
		{ "targets=/1", NULL },
		{ "targets=@fexit", NULL },
		{ "targets=lbr_test_int%long/1@kretprobe,lbr_test_long",
		  "lbr_test_int,lbr_test_long" },
		{ long_name, NULL, 0, -ENAMETOOLONG },
	};
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	struct lbr_snap_info info;
	char last[512], got[1024];
	unsigned int c, i;
	int ret, lines, fd;

	snprintf(long_name, sizeof(long_name), "targets=%0150d", 0);
	memset(long_name + 8, 'a', 150);
	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		kmsg_new_lines(self->kmsg, "", last, sizeof(last));
		last[0] = '\0';
		ret = load(cases[c].params);
		lines = kmsg_new_lines(self->kmsg, "lbr_snap", last,
				       sizeof(last));
		if (!cases[c].targets) {
			EXPECT_EQ(cases[c].err ? cases[c].err : -EINVAL, ret)
				TH_LOG("'%s'", cases[c].params);
			EXPECT_EQ(1, lines)
				TH_LOG("'%s': %d lines, the last: %s",
				       cases[c].params, lines, last);
			continue;
		}
		ASSERT_EQ(0, ret) TH_LOG("'%s': %d", cases[c].params, ret);
		fd = dev_open(O_NONBLOCK);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, get_info(fd, &info));
		EXPECT_EQ(cases[c].buffer_kb ? cases[c].buffer_kb : 256,
			  info.buffer_kb);
		ASSERT_EQ(0, get_stats(fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
		got[0] = '\0';
		for (i = 0; i < hdr.nr; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s%s", i ? "," : "", st[i].name);
		EXPECT_STREQ(cases[c].targets, got);
		close(fd);
		unload();
	}

	/* A spec cannot forge kernel log lines. */
	ASSERT_EQ(0, load("targets=lbr_test_int"));
	fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	kmsg_new_lines(self->kmsg, "", last, sizeof(last));
	EXPECT_EQ(-EINVAL, target_ctl(fd, LBR_SNAP_IOC_ADD_TARGET,
				      "lbr_test_long\n<3>lbr_snap: forged",
				      NULL));
	lines = kmsg_new_lines(self->kmsg, "lbr_snap", last, sizeof(last));
	EXPECT_EQ(1, lines) TH_LOG("the last: %s", last);
	EXPECT_NE(NULL, strstr(last, "byte 0x0a at 13"));
	close(fd);
}

/*
 * A buffer_kb in range that the machine cannot hold is refused with one
 * line, never a WARN (panic_on_warn makes a WARN a crash; the log gate
 * fails the run on one) nor an allocation that starves the machine.
 */
TEST_F(load, buffer_larger_than_memory_refused)
{
	EXPECT_EQ(-ENOMEM, load("targets=lbr_test_int buffer_kb=1048576"));
	EXPECT_TRUE(kmsg_has(self->kmsg, "buffer_kb=1048576: "));
	EXPECT_TRUE(kmsg_has(self->kmsg,
			     "is more than half the memory available"));
	EXPECT_EQ(0, load("targets=lbr_test_int buffer_kb=1024"));
}

/*
 * A wakeup mark must be one every ring reaches before it refuses a
 * record: with buffer_kb=8 a ring refuses the largest record (64 entries
 * of three MSRs, 64 frames) below half of it, so half is refused there,
 * and a quarter taken; with 64 KiB half a ring is taken.
 */
TEST_F(load, wakeup_mark_below_a_full_ring)
{
	int fd;

	ASSERT_EQ(0, load("targets=lbr_test_int buffer_kb=8"));
	fd = open(LBR_SNAP_DEVICE, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, LBR_SNAP_IOC_SET_WAKEUP, 4096UL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ioctl(fd, LBR_SNAP_IOC_SET_WAKEUP, 2048UL));
	close(fd);
	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load("targets=lbr_test_int buffer_kb=64"));
	fd = open(LBR_SNAP_DEVICE, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, LBR_SNAP_IOC_SET_WAKEUP, 32 * 1024UL));
	close(fd);
}

TEST_F(load, mode_and_filter)
{
	struct lbr_snap_info info;

	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int mode=fast"));
	EXPECT_TRUE(kmsg_has(self->kmsg, "mode=fast: use auto, perf or raw"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int lbr_filter=all"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int lbr_filter=kernel,jmp"));
	EXPECT_FALSE(hooked("lbr_test_int"));

	/*
	 * A CPU whose LBR cannot filter refuses kinds, and records every CPL
	 * (with LBR there: a CPUID without the MSRs leaves backend none).
	 */
	ASSERT_EQ(0, load_get_info("targets=lbr_test_int", &info));
	if (!lbr_cpu_filters() && info.backend != LBR_SNAP_BACKEND_NONE) {
		EXPECT_EQ(-EINVAL, load("targets=lbr_test_int mode=raw lbr_filter=any,jcc,ret"));
		EXPECT_TRUE(kmsg_has(self->kmsg, "does not filter by kind of branch"));
		ASSERT_EQ(0, load_get_info("targets=lbr_test_int mode=raw lbr_filter=user",
					   &info));
		EXPECT_TRUE(kmsg_has(self->kmsg, "does not filter by CPL"));
		EXPECT_NE(NULL, strstr(info.reason, "every CPL recorded"));
		return;
	}
	ASSERT_EQ(0, load_get_info("targets=lbr_test_int mode=raw lbr_filter=any,jcc,ret",
			       &info));
	EXPECT_STREQ(info.backend == LBR_SNAP_BACKEND_NONE ? "none" : "raw",
		     info.mode);
	EXPECT_EQ(LBR_SNAP_LBR_KERNEL | LBR_SNAP_LBR_USER, info.lbr_cpl);
	EXPECT_EQ(LBR_SNAP_KIND_JCC | LBR_SNAP_KIND_RET, info.lbr_kinds);

	/* perf's names; without a privilege word, the kernel's. */
	ASSERT_EQ(0, load_get_info("targets=lbr_test_int lbr_filter=any_return",
				   &info));
	EXPECT_EQ(LBR_SNAP_LBR_KERNEL, info.lbr_cpl);
	EXPECT_EQ(LBR_SNAP_KIND_RET | LBR_SNAP_KIND_FAR, info.lbr_kinds);
	ASSERT_EQ(0, load_get_info("targets=lbr_test_int lbr_filter=user,any_call,cond,ind_jump",
				   &info));
	EXPECT_EQ(LBR_SNAP_LBR_USER, info.lbr_cpl);
	EXPECT_EQ(LBR_SNAP_KIND_REL_CALL | LBR_SNAP_KIND_IND_CALL |
		  LBR_SNAP_KIND_FAR | LBR_SNAP_KIND_JCC |
		  LBR_SNAP_KIND_IND_JMP, info.lbr_kinds);
	ASSERT_EQ(0, load_get_info("targets=lbr_test_int lbr_filter=kernel,any",
				   &info));
	EXPECT_EQ(LBR_SNAP_KIND_ALL, info.lbr_kinds);
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int lbr_filter=any_return,user"));
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int lbr_filter=any_ret"));
}

/*
 * The LBR depth perf reports (/sys/bus/event_source/devices/cpu/caps/
 * branches, from x86_pmu.lbr_nr), 0 if perf has no LBR; then @why gets
 * the kernel's own word on its PMU ("Performance Events: ...").
 */
static int perf_lbr_depth(char *why, size_t len)
{
	char line[1024], *msg;
	int fd, depth = 0;
	ssize_t n;
	FILE *f = fopen("/sys/bus/event_source/devices/cpu/caps/branches", "r");

	if (f) {
		if (fscanf(f, "%d", &depth) != 1)
			depth = 0;
		fclose(f);
	}
	snprintf(why, len, "no 'Performance Events:' line in the kernel log");
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	while (fd >= 0 && (n = read(fd, line, sizeof(line) - 1)) != 0) {
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten while we read */
		if (n < 0)
			break;
		line[n] = 0;
		msg = strchr(line, ';');
		if (msg && strstr(msg, "Performance Events:")) {
			msg[strcspn(msg, "\n")] = 0;
			snprintf(why, len, "%s", msg + 1);
		}
	}
	if (fd >= 0)
		close(fd);
	return depth;
}

/*
 * mode=perf needs perf's LBR: where perf has it the load must succeed and
 * keep LBR on through perf; where it has none the load fails cleanly and
 * the test says why the kernel has none.
 */
/* 1 if @cmd succeeds and prints the line @line, 0 if not, -1 if it fails. */
static int tool_says(const char *cmd, const char *line)
{
	FILE *p = popen(cmd, "r");
	char buf[256];
	int said = 0;

	if (!p)
		return -1;
	while (fgets(buf, sizeof(buf), p))
		said |= !strcmp(buf, line);
	return pclose(p) ? -1 : said;
}

TEST_F(load, mode_perf)
{
	struct lbr_snap_info info;
	char why[256];
	int ret, depth = perf_lbr_depth(why, sizeof(why));

	ret = load_get_info("targets=lbr_test_int mode=perf", &info);
	if (!depth) {
		/* No LBR at all loads as mode "none"; LBR without perf's fails. */
		/* (ASSERT: a SKIP would hide a failed EXPECT.) */
		if (!ret) {
			ASSERT_STREQ("none", info.mode);
			ASSERT_EQ(LBR_SNAP_BACKEND_NONE, info.backend);
		} else {
			ASSERT_FALSE(hooked("lbr_test_int"));
			ASSERT_TRUE(kmsg_has(self->kmsg,
					     "mode=perf: perf cannot keep LBR on"));
		}
		SKIP(return, "perf has no LBR (load: %s): %s", strerror(-ret),
		     why);
	}
	ASSERT_EQ(0, ret) TH_LOG("perf's LBR depth is %d", depth);
	EXPECT_STREQ("perf", info.mode);
	EXPECT_NE(LBR_SNAP_BACKEND_NONE, info.backend);
	EXPECT_TRUE(hooked("lbr_test_int"));
	/* Where perf has LBR, mode=auto (the default) is perf too. */
	ASSERT_EQ(0, load_get_info("targets=lbr_test_int", &info));
	EXPECT_STREQ("perf", info.mode);
	/* And the tool says so. */
	EXPECT_EQ(1, tool_says("lbr-snap info", "mode: perf\n"));
}

TEST_F(load, forced_backend)
{
	static const char * const names[] = { "intel", "arch", "amd" };
	struct lbr_snap_info info;
	char params[128];
	unsigned int i;

	ASSERT_EQ(0, load_get_info("targets=lbr_test_int", &info));
	/* A forced backend that is not what auto found cannot work here. */
	for (i = 0; i < 3; i++) {
		if (!strcmp(info.backend_name, names[i]))
			continue;
		snprintf(params, sizeof(params),
			 "targets=lbr_test_int backend=%s", names[i]);
		EXPECT_EQ(-ENODEV, load(params));
	}
	EXPECT_EQ(0, load("targets=lbr_test_int backend=none"));
}

/* Does /proc/cpuinfo's first flags line have @flag?  -1: no cpuinfo. */
static int cpuinfo_flag(const char *flag)
{
	char *line = NULL, *p;
	size_t len = 0, n = strlen(flag);
	int found = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return -1;
	while (getline(&line, &len, f) > 0) {
		if (strncmp(line, "flags", 5))
			continue;
		for (p = strstr(line, flag); p && !found; p = strstr(p + 1, flag))
			found = p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n');
		break;
	}
	free(line);
	fclose(f);
	return found;
}

TEST_F(load, info)
{
	struct lbr_snap_info info;

	ASSERT_EQ(0, load_get_info("targets=lbr_test_int,lbr_test_ptr%ptr buffer_kb=64 capture=all",
			       &info));
	EXPECT_EQ(LBR_SNAP_ABI_VERSION, info.abi_version);
	EXPECT_EQ(sysconf(_SC_NPROCESSORS_CONF), info.nr_cpus);
	EXPECT_EQ(64, info.buffer_kb);
	EXPECT_EQ(2, info.nr_targets);
	EXPECT_EQ(LBR_SNAP_CAPTURE_ALL, info.capture);
	EXPECT_NE(0, info.reason[0]);
	if (info.backend == LBR_SNAP_BACKEND_NONE) {
		EXPECT_EQ(0, info.lbr_depth);
		EXPECT_STREQ("none", info.backend_name);
	} else {
		EXPECT_LE(4, info.lbr_depth);
		EXPECT_GE(LBR_SNAP_MAX_ENTRIES, info.lbr_depth);
	}
	TH_LOG("backend %s, format %u, depth %u: %s", info.backend_name,
	       info.lbr_format, info.lbr_depth, info.reason);
	/*
	 * A hypervisor named exactly when the kernel's flags say there is
	 * one; the lab's QEMU by its signature.
	 */
	ASSERT_LE(0, cpuinfo_flag("hypervisor"));
	EXPECT_EQ(cpuinfo_flag("hypervisor"), info.hypervisor[0] != '\0')
		TH_LOG("hypervisor '%s'", info.hypervisor);
	if (lbr_lab_cpu())
		EXPECT_STREQ("tcg", info.hypervisor);
	TH_LOG("hypervisor: '%s'", info.hypervisor);
	/* The lab's CPUs have LBR: there, no LBR test may skip for want of it. */
	if (lbr_lab_cpu()) {
		EXPECT_NE(LBR_SNAP_BACKEND_NONE, info.backend)
			TH_LOG("an LBR lab CPU, and the module found no LBR");
		/* Intel's lab CPUs have 32 entries, the AMD one 16. */
		EXPECT_EQ(info.backend == LBR_SNAP_BACKEND_AMD ? 16 : 32,
			  info.lbr_depth);
	}
	ASSERT_EQ(0, unload());
	EXPECT_FALSE(hooked("lbr_test_int"));
}

/* Is @cpu in @list, "0,2"? */
static bool cpu_listed(const char *list, int cpu)
{
	const char *p = list;
	char *end;

	while (*p) {
		long v = strtol(p, &end, 10);

		if (end == p)
			return false;
		if (v == cpu)
			return true;
		p = *end == ',' ? end + 1 : end;
	}
	return false;
}

/*
 * Each CPU's LBR is checked as lbr_snap starts to use it: every entry's
 * MSRs read, and in mode=raw a pattern of calls looked for in the LBR.  A
 * lab boot with a quirk names its broken CPUs and the quirk in the
 * guest's environment (LBR_LAB_BROKEN_CPUS="1", LBR_LAB_BROKEN=gp or
 * dead, as the harness gives lbr-lab-quirk-cpus): those CPUs and only they
 * are refused, GET_INFO and the log say why, and their error returns
 * carry no branches (NO_LBR) while the others' do.  On every other lab boot no CPU
 * is refused.
 */
/* GET_INFO's word on the CPUs refused, as the test expects it. */
static void expect_refused(struct __test_metadata *_metadata, const char *broken,
			   int nr_broken, const char *how, const char *when)
{
	struct lbr_snap_info info;
	int fd = dev_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, get_info(fd, &info));
	close(fd);
	EXPECT_EQ(nr_broken, info.nr_cpus_failed) TH_LOG("%s", when);
	EXPECT_STREQ(broken, info.cpus_failed) TH_LOG("%s", when);
	if (!strcmp(how, "gp")) {
		EXPECT_NE(NULL, strstr(info.cpu_failure, "reading LBR MSR"));
	} else if (!strcmp(how, "dead")) {
		EXPECT_NE(NULL, strstr(info.cpu_failure,
				       "recorded 0 of 3 test calls"));
	} else {
		EXPECT_STREQ("", info.cpu_failure);
	}
	TH_LOG("%s: %u CPUs refused (%s): %s", when, info.nr_cpus_failed,
	       info.cpus_failed, info.cpu_failure);
}

TEST_F(load, each_cpu_checked)
{
	const char *broken = getenv("LBR_LAB_BROKEN_CPUS") ?: "";
	const char *how = getenv("LBR_LAB_BROKEN") ?: "";
	int c, fd, n, nr_broken = 0, last = -1;
	struct lbr_snap_info info;
	cpu_set_t all, set;
	struct rec *recs;

	for (c = 0; broken[c]; c++)
		nr_broken += !c || broken[c] == ',';
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	ASSERT_EQ(0, load_get_info("targets=lbr_test_int%int mode=raw", &info));
	if (info.backend == LBR_SNAP_BACKEND_NONE) {
		ASSERT_EQ(0, nr_broken) TH_LOG("a quirk named, and no LBR found");
		SKIP(return, "no LBR: no CPU to check");
	}
	expect_refused(_metadata, broken, nr_broken, how, "at load");
	/* The check's own lines, not another refusal's. */
	EXPECT_EQ(nr_broken > 0,
		  kmsg_has(self->kmsg, !strcmp(how, "gp") ? "faults: no LBR records" :
				       "test calls"));

	recs = calloc(MAX_RECS, sizeof(*recs));
	ASSERT_NE(NULL, recs);
	fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	for (c = 0; c < CPU_SETSIZE; c++) {
		bool bad = cpu_listed(broken, c);

		if (!CPU_ISSET(c, &all))
			continue;
		last = c;
		CPU_ZERO(&set);
		CPU_SET(c, &set);
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
		ASSERT_EQ(0, trigger("int", -22, 1));
		n = drain(fd, recs, MAX_RECS);
		ASSERT_EQ(1, n) TH_LOG("%s", lbr_why);
		EXPECT_EQ(c, recs[0].h.cpu);
		if (bad) {
			EXPECT_EQ(0, recs[0].h.nr_entries)
				TH_LOG("cpu%d, refused, gave %u entries", c,
				       recs[0].h.nr_entries);
			EXPECT_TRUE(recs[0].h.flags & LBR_SNAP_REC_NO_LBR);
		} else {
			EXPECT_LT(0, recs[0].h.nr_entries)
				TH_LOG("cpu%d gave no entries", c);
		}
	}
	close(fd);
	free(recs);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	/*
	 * Checked again as it comes online: on the quirk boots (6.1, where
	 * onlining is safe), the last CPU taken offline and back.
	 */
	if (nr_broken && last > 0) {
		ASSERT_EQ(0, set_online(last, 0));
		ASSERT_EQ(0, set_online(last, 1));
		ASSERT_EQ(1, cpu_is_online(last));
		expect_refused(_metadata, broken, nr_broken, how,
			       "after an offline and online");
	}
}

/*
 * The span of @mod's code: from its first symbol in /proc/kallsyms to the
 * next symbol after its last, none of anything else in between (from 6.4
 * /proc/modules sizes all of a module's memory, not its text).
 */
static bool module_span(const char *mod, unsigned long long *base,
			unsigned long long *size)
{
	char line[512], tag[72];
	unsigned long long a, lo = ~0ULL, hi = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	snprintf(tag, sizeof(tag), "[%s]", mod);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, tag) && sscanf(line, "%llx", &a) == 1 && a) {
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
		}
	fclose(f);
	if (!hi)
		return false;
	*base = lo;
	*size = ksym_end(hi) - lo;
	return true;
}

/* @a as an offset into lbr_snap (which may load elsewhere), else as is. */
static unsigned long long in_mod(unsigned long long a,
				 unsigned long long base,
				 unsigned long long size)
{
	return a >= base && a < base + size ? a - base : a;
}

/*
 * Are @x and @y the same capture: branches and return (the flags but the
 * read's own)?  @info: LBR_INFO's cycles and flags too, as the lab makes
 * them the same for the same code; a real CPU's vary from call to call.
 */
static bool same_capture(const struct rec *x, unsigned long long xb,
			 unsigned long long xs, const struct rec *y,
			 unsigned long long yb, unsigned long long ys, bool info)
{
	unsigned int i;

	if (x->h.nr_entries != y->h.nr_entries ||
	    (x->h.flags ^ y->h.flags) &
	    ~(LBR_SNAP_REC_XSAVES | LBR_SNAP_REC_AFTER_DROP) ||
	    x->h.retval != y->h.retval ||
	    x->h.probe_entries != y->h.probe_entries)
		return false;
	for (i = 0; i < x->h.nr_entries; i++) {
		const struct lbr_snap_branch *a = &x->br[i], *b = &y->br[i];

		if (in_mod(a->from, xb, xs) != in_mod(b->from, yb, ys) ||
		    in_mod(a->to, xb, xs) != in_mod(b->to, yb, ys) ||
		    a->type != b->type)
			return false;
		if (info && (a->flags != b->flags || a->cycles != b->cycles))
			return false;
	}
	return true;
}

/* The kernel's interrupt entry and return code, by name. */
static bool irq_code(unsigned long long a)
{
	unsigned long long s, e;
	char name[256];

	return ksym_range(a, name, sizeof(name), &s, &e) &&
	       (!strncmp(name, "asm_", 4) || strstr(name, "sysvec") ||
		strstr(name, "irq_return") || strstr(name, "return_to_kernel") ||
		strstr(name, "native_iret"));
}

/*
 * Did an interrupt or exception come in anywhere in @r's window: an entry
 * into the kernel's interrupt code, or back out of it?  Its branches may
 * then have pushed out what the test looks for.
 */
static bool interrupted(const struct rec *r)
{
	int i;

	for (i = 0; i < r->h.nr_entries; i++)
		if (irq_code(r->br[i].to) || irq_code(r->br[i].from))
			return true;
	return false;
}

/* Load lbr_snap with @params and take GET_INFO; the device or -1. */
static int loaded_info(const char *params, struct lbr_snap_info *info)
{
	int fd;

	if (load(params))
		return -1;
	fd = dev_open(O_NONBLOCK);
	if (fd >= 0 && get_info(fd, info)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * lbr_read=: where the kernel has Arch LBR's XSAVE component, auto reads
 * the LBR with one XSAVES (GET_INFO says so), and a record read that way
 * is the record the MSRs give for the same call, entry for entry, LBR_INFO
 * included.  lbr_snap is loaded once per path and the same calls are
 * made, through the kretprobe hook (whose trampoline stays where it is:
 * an fexit trampoline may be another the second time).  Every record of
 * the one path says it was read by XSAVES (LBR_SNAP_REC_XSAVES), none of
 * the other: a read that fell back to the MSRs would pass the comparison
 * unseen.  Every XSAVES record but two (an interrupt can change a few)
 * must have an identical MSR record, addresses inside lbr_snap compared
 * as offsets from its base; in the lab (LBR_EXPECT_XSAVES) LBR_INFO's
 * cycles and flags too.  Elsewhere lbr_read=xsaves fails to load, saying
 * why, and auto reads the MSRs; LBR_EXPECT_XSAVES makes that a failure.
 */
TEST_F(load, xsaves_read_same_records_as_msr)
{
	const char *env = getenv("LBR_EXPECT_XSAVES");
	bool expect = env && !strcmp(env, "1");
	const char *p = "targets=lbr_test_int capture=all lbr_info=1 hook=kretprobe";
	unsigned long long base[2], size[2];
	struct lbr_snap_info info;
	struct rec *by[2];
	char params[256];
	int n, path, i, j, fd, twins = 0, touched = 0, ret;
	const int calls = 10;

	snprintf(params, sizeof(params), "%s lbr_read=nope", p);
	EXPECT_EQ(-EINVAL, load(params));
	snprintf(params, sizeof(params), "%s lbr_read=xsaves", p);
	ret = load(params);
	if (ret) {
		EXPECT_EQ(-ENODEV, ret);
		EXPECT_TRUE(kmsg_has(self->kmsg, "lbr_read=xsaves unavailable: "));
		fd = loaded_info(p, &info);
		ASSERT_LE(0, fd);
		EXPECT_EQ(LBR_SNAP_READ_MSR, info.lbr_read);
		close(fd);
		ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_XSAVES, and lbr_read=xsaves failed: %d (dmesg)", ret);
		SKIP(return, "lbr_read=xsaves cannot load here (the kernel log says why; backend %s)",
		     info.backend_name);
	}
	/* auto picks it. */
	fd = loaded_info(p, &info);
	ASSERT_LE(0, fd);
	EXPECT_EQ(LBR_SNAP_READ_XSAVES, info.lbr_read);
	close(fd);

	for (path = 0; path < 2; path++) {
		snprintf(params, sizeof(params), "%s lbr_read=%s", p,
			 path ? "xsaves" : "msr");
		fd = loaded_info(params, &info);
		ASSERT_LE(0, fd) TH_LOG("%s", params);
		EXPECT_EQ(path ? LBR_SNAP_READ_XSAVES : LBR_SNAP_READ_MSR,
			  info.lbr_read);
		ASSERT_TRUE(module_span("lbr_snap", &base[path], &size[path]));
		ASSERT_EQ(0, trigger("int", -22, calls));
		by[path] = calloc(256, sizeof(struct rec));
		ASSERT_NE(NULL, by[path]);
		n = drain(fd, by[path], 256);
		ASSERT_EQ(calls, n) TH_LOG("%s", lbr_why);
		for (i = 0; i < calls; i++) {
			const struct lbr_snap_record *h = &by[path][i].h;

			EXPECT_EQ(info.lbr_depth, h->nr_entries)
				TH_LOG("%s record %d: not a full stack",
				       path ? "xsaves" : "msr", i);
			EXPECT_EQ(path ? LBR_SNAP_REC_XSAVES : 0,
				  h->flags & LBR_SNAP_REC_XSAVES)
				TH_LOG("%s record %d: flags %#x",
				       path ? "xsaves" : "msr", i, h->flags);
		}
		close(fd);
		ASSERT_EQ(0, unload());
	}
	ASSERT_TRUE(ksyms_snapshot());
	for (i = 0; i < calls; i++) {
		if (interrupted(&by[1][i])) {
			touched++;
			continue;
		}
		for (j = 0; j < calls; j++)
			if (same_capture(&by[1][i], base[1], size[1], &by[0][j],
					 base[0], size[0], expect))
				break;
		twins += j < calls;
	}
	ksyms_drop();
	TH_LOG("%d of %d XSAVES records have an identical MSR record (%d an interrupt came into)",
	       twins, calls, touched);
	/*
	 * The lab is deterministic but for interrupts: every XSAVES record
	 * an interrupt left alone has its twin, and two at most had one.
	 */
	if (lbr_lab_cpu())
		EXPECT_GE(2, touched);
	EXPECT_LE(lbr_lab_cpu() ? calls - touched : calls - 2, twins) {
		const struct rec *x = &by[1][0], *m = &by[0][0];

		TH_LOG("first ones: %u/%u entries, flags %#x/%#x, probe_entries %u/%u",
		       x->h.nr_entries, m->h.nr_entries, x->h.flags,
		       m->h.flags, x->h.probe_entries, m->h.probe_entries);
		for (i = 0; i < (int)x->h.nr_entries; i++)
			TH_LOG("%2d %llx -> %llx %#x %u | %llx -> %llx %#x %u",
			       i, x->br[i].from, x->br[i].to, x->br[i].flags,
			       x->br[i].cycles, m->br[i].from, m->br[i].to,
			       m->br[i].flags, m->br[i].cycles);
	}
	free(by[0]);
	free(by[1]);
}
