// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, fexit on the kernel's own functions: return types and
 * argument counts from BTF, read from a chroot too; the real caller
 * under function_graph; functions that never return refused.
 */

/*
 * Where vmlinux has BTF the module reads it: do_sys_openat2 with no %type
 * and no /N gets its return type from BTF (long on 6.1, int on 7.2) and
 * its 3 arguments, all in registers, so its fexit trampoline copies no
 * stack word on the way in.  Through that trampoline every open() does
 * what it should, and the ENOENTs come back as -2.  A spec BTF
 * contradicts, or a void function, gets a warning.
 */
TEST_F(fexit, btf_types_and_register_arguments)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	int k, i, n, fd, enoent = 0;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP(return, "no /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF)");
	if (!ftrace_can_trace("do_sys_openat2"))
		SKIP(return, "do_sys_openat2 is not one fexit can hook here");
	k = kmsg_open();
	ASSERT_LE(0, k);
	ASSERT_EQ(0, load("targets=do_sys_openat2@auto"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	/* Every kernel's BTF is read: 7.2's header is the short one too. */
	EXPECT_FALSE(kmsg_has(k, "no BTF from /sys/kernel/btf/vmlinux"));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(1, hdr.nr);
	EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, st[0].hook);
	EXPECT_EQ(3, st[0].nr_args);
	EXPECT_TRUE(st[0].ret_type == LBR_SNAP_RET_LONG ||
		    st[0].ret_type == LBR_SNAP_RET_INT)
		TH_LOG("ret_type %u", st[0].ret_type);
	for (i = 0; i < 20; i++) {
		errno = 0;
		EXPECT_EQ(-1, open("/lbr-snap-no-such-file", O_RDONLY));
		EXPECT_EQ(ENOENT, errno);
		fd = open("/proc/self/stat", O_RDONLY);
		EXPECT_LE(0, fd);
		if (fd >= 0)
			close(fd);
	}
	n = drain(self->fd, self->recs, MAX_RECS);
	for (i = 0; i < n; i++)
		if (self->recs[i].h.tgid == (__u32)getpid() &&
		    self->recs[i].h.retval == -ENOENT)
			enoent++;
	EXPECT_EQ(20, enoent)
		TH_LOG("%d records, %s", n, lbr_why);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unload());

	ASSERT_EQ(0, load("targets=do_sys_openat2%bool@kretprobe"));
	EXPECT_TRUE(kmsg_has(k, "target 'do_sys_openat2': BTF says it returns "));
	ASSERT_EQ(0, unload());
	/* BTF's void: refused with capture=errors, and with a %type. */
	EXPECT_EQ(-EINVAL, load("targets=kfree@kretprobe"));
	EXPECT_TRUE(kmsg_has(k, "target 'kfree': returns void: capture=errors has no error to catch; capture=all records every return"));
	EXPECT_EQ(-EINVAL, load("targets=kfree%long@kretprobe capture=all"));
	EXPECT_TRUE(kmsg_has(k, "target 'kfree': BTF says it returns void, the spec says long"));
	ASSERT_EQ(0, load("targets=kfree@kretprobe capture=all buffer_kb=8"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	EXPECT_EQ(LBR_SNAP_RET_VOID, st[0].ret_type);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unload());
	close(k);
}

/* A function that never returns would hold its trampoline for good. */
/* ADD_TARGET @spec from inside an empty chroot; 0 or -errno. */
static int add_target_in_chroot(int fd, const char *spec)
{
	char dir[] = "/tmp/lbr-snap-chroot.XXXXXX";
	int p[2], status, ret = -EIO;
	pid_t pid;

	if (!mkdtemp(dir) || pipe(p))
		return -errno;
	pid = fork();
	if (!pid) {
		struct lbr_snap_target_ctl ctl = { 0 };
		int err = 0;

		snprintf(ctl.spec, sizeof(ctl.spec), "%s", spec);
		if (chroot(dir) || chdir("/"))
			err = -1000 - errno;
		else if (ioctl(fd, LBR_SNAP_IOC_ADD_TARGET, &ctl))
			err = -errno;
		_exit(write(p[1], &err, sizeof(err)) == sizeof(err) ? 0 : 1);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], &ret, sizeof(ret)) != sizeof(ret))
		ret = -EIO;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	rmdir(dir);
	return ret;
}

/*
 * The module reads BTF through a sysfs mount of its own: a target added
 * from a chroot, where no /sys is, gets the same return type and argument
 * count from BTF as one added outside.
 */
TEST_F(fexit, btf_read_from_a_chroot)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_target_ctl ctl = { .spec = "do_sys_openat2" };
	struct lbr_snap_stats hdr;
	__u32 hook;
	int k;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP(return, "no /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF)");
	k = kmsg_open();
	ASSERT_LE(0, k);
	ASSERT_EQ(0, load("targets=lbr_test_int@kretprobe"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, add_target(self->fd, "do_sys_openat2@kretprobe", &hook));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(2, hdr.nr);
	/* The file is there and readable: the module must read it. */
	EXPECT_FALSE(kmsg_has(k, "no BTF from /sys/kernel/btf/vmlinux"));
	close(k);
	EXPECT_EQ(3, st[1].nr_args);
	EXPECT_TRUE(st[1].ret_type == LBR_SNAP_RET_LONG ||
		    st[1].ret_type == LBR_SNAP_RET_INT);
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_DEL_TARGET, &ctl));

	ASSERT_EQ(0, add_target_in_chroot(self->fd, "do_sys_openat2@kretprobe"));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st + 2, LBR_SNAP_MAX_TARGETS - 2));
	ASSERT_EQ(2, hdr.nr);
	EXPECT_STREQ("do_sys_openat2", st[3].name);
	EXPECT_EQ(st[1].nr_args, st[3].nr_args);
	EXPECT_EQ(st[1].ret_type, st[3].ret_type);
}

/* The fexit records of do_sys_openat2's ENOENTs, five, with real callers. */
static void expect_real_callers(struct __test_metadata *_metadata,
				FIXTURE_DATA(fexit) *self, unsigned long long rth)
{
	int i, n, mine = 0;

	for (i = 0; i < 5; i++)
		EXPECT_EQ(-1, open("/lbr-snap-no-such-file", O_RDONLY));
	n = drain(self->fd, self->recs, MAX_RECS);
	for (i = 0; i < n; i++) {
		unsigned long long caller = self->recs[i].h.caller;

		if (self->recs[i].h.tgid != (__u32)getpid())
			continue;
		mine++;
		EXPECT_NE(rth, caller);
		EXPECT_TRUE(ksym_is(caller, "do_sys_open") ||
			    ksym_is(caller, "__x64_sys_open"))
			TH_LOG("caller %#llx", caller);
	}
	EXPECT_EQ(5, mine) TH_LOG("%d records, %s", n, lbr_why);
}

/*
 * function_graph on the traced function takes the caller's return slot
 * (return_to_handler) before the fexit trampoline reads it, whichever
 * came first: the record's caller is still the real one, recovered by the
 * unwinder, without call stacks too.
 */
TEST_F_TIMEOUT(fexit, caller_under_function_graph, 120)
{
	unsigned long long rth = ksym("return_to_handler");
	int first;

	if (!rth)
		SKIP(return, "no function_graph tracer (return_to_handler) here");
	if (!ftrace_can_trace("do_sys_openat2"))
		SKIP(return, "do_sys_openat2 is not one fexit can hook here");
	/* The filter, not set_graph_function: only that function patched. */
	ASSERT_EQ(0, tracefs_write("set_ftrace_filter", "do_sys_openat2", O_TRUNC));
	self->graphed = true;
	for (first = 0; first < 2; first++) {
		/* 0: the tracer first, then the hook; 1: the other way. */
		if (!first)
			ASSERT_EQ(0, tracefs_write("current_tracer", "function_graph", 0));
		/* int: long up to 6.12, int in 7.2 (its low half either way). */
		ASSERT_EQ(0, load("targets=do_sys_openat2%int/3@fexit stack_depth=0"));
		if (first)
			ASSERT_EQ(0, tracefs_write("current_tracer", "function_graph", 0));
		self->fd = dev_open(O_NONBLOCK);
		ASSERT_LE(0, self->fd);
		expect_real_callers(_metadata, self, rth);
		close(self->fd);
		self->fd = -1;
		ASSERT_EQ(0, unload());
		ASSERT_EQ(0, tracefs_write("current_tracer", "nop", 0));
	}
}

TEST_F(fexit, noreturn_refused)
{
	int k = kmsg_open();

	ASSERT_LE(0, k);
	/* void: capture=all, or it is refused for that. */
	EXPECT_EQ(-EINVAL, load("targets=do_group_exit/1@fexit capture=all"));
	EXPECT_TRUE(kmsg_has(k, "target 'do_group_exit': fexit: the function never returns"));
	close(k);
	/* auto: a kretprobe, which the kernel's own trampoline returns through. */
	ASSERT_EQ(0, load("targets=do_group_exit/1 hook=auto capture=all"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(LBR_SNAP_HOOK_KRETPROBE, stats_hook(self->fd, 0));
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, unload());
}
