// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, who may read and control the device: the opener's
 * rights, unprivileged users, CAP_PERFMON and the device's group.
 */

/*
 * A descriptor opened for writing by an unprivileged user, with the device
 * world-writable, and then used by root (a set-uid program's inherited
 * descriptor): root acts for it no more than its opener could, as perf's
 * events carry their opener's rights.  Root's own descriptor still works.
 */
TEST_F(cap, control_needs_the_opener_privileged)
{
	struct lbr_snap_target_ctl ctl = { .spec = "lbr_test_long" };
	struct lbr_snap_lbr_filter lf = {
		.cpl = LBR_SNAP_LBR_USER, .kinds = LBR_SNAP_KIND_ALL,
	};
	int fd, status, bad = 0;
	pid_t pid;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	ASSERT_EQ(0, chmod(LBR_SNAP_DEVICE, 0666));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Opened as "nobody" (no capability), used as root again. */
		if (setresuid(0, 65534, 0))
			_exit(100);
		fd = open(LBR_SNAP_DEVICE, O_WRONLY);
		if (fd < 0)
			_exit(101);
		if (setresuid(0, 0, 0))
			_exit(102);
		if (!ioctl(fd, LBR_SNAP_IOC_ADD_TARGET, &ctl) || errno != EPERM)
			bad |= 1;
		if (!ioctl(fd, LBR_SNAP_IOC_FLUSH) || errno != EPERM)
			bad |= 2;
		if (!ioctl(fd, LBR_SNAP_IOC_SET_CAPTURE, LBR_SNAP_CAPTURE_ALL) ||
		    errno != EPERM)
			bad |= 4;
		if (!ioctl(fd, LBR_SNAP_IOC_SET_LBR_FILTER, &lf) ||
		    errno != EPERM)
			bad |= 16;
		close(fd);
		/* Opened by root, it controls. */
		fd = open(LBR_SNAP_DEVICE, O_WRONLY);
		if (fd < 0 || ioctl(fd, LBR_SNAP_IOC_FLUSH))
			bad |= 8;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, chmod(LBR_SNAP_DEVICE, 0600));
	EXPECT_FALSE(hooked("lbr_test_long"));
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	EXPECT_EQ(LBR_SNAP_CAPTURE_ERRORS, self->info.capture);
}

TEST_F(cap, unprivileged_users_change_nothing)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	int status;
	pid_t pid;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct lbr_snap_target_ctl ctl = { .spec = "lbr_test_long" };
		int bad = 0;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		/* The device is root's (0600)... */
		if (open(LBR_SNAP_DEVICE, O_RDONLY) >= 0 || errno != EACCES)
			bad |= 1;
		/* ...and an inherited descriptor still cannot control it. */
		if (!ioctl(self->fd, LBR_SNAP_IOC_ADD_TARGET, &ctl) || errno != EPERM)
			bad |= 2;
		snprintf(ctl.spec, sizeof(ctl.spec), "lbr_test_int");
		if (!ioctl(self->fd, LBR_SNAP_IOC_DEL_TARGET, &ctl) || errno != EPERM)
			bad |= 4;
		if (!ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE, LBR_SNAP_CAPTURE_ALL) ||
		    errno != EPERM)
			bad |= 8;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	EXPECT_EQ(1, hdr.nr);
	EXPECT_STREQ("lbr_test_int", st[0].name);
	EXPECT_FALSE(hooked("lbr_test_long"));
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	EXPECT_EQ(LBR_SNAP_CAPTURE_ERRORS, self->info.capture);
}

/*
 * Become user @uid, group @gid (supplementary groups none), keeping only
 * CAP_PERFMON when @perfmon.  0, or the step that failed.
 */
static int become(uid_t uid, gid_t gid, bool perfmon)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return 1;
	if (perfmon) {
		d[CAP_TO_INDEX(CAP_PERFMON)].permitted = CAP_TO_MASK(CAP_PERFMON);
		d[CAP_TO_INDEX(CAP_PERFMON)].effective = CAP_TO_MASK(CAP_PERFMON);
	}
	return syscall(SYS_capset, &h, d) ? 2 : 0;
}

/*
 * Try everything on @fd, expecting these errors (0: allowed) of read(),
 * of the ioctls that change things and of GET_STATS; bit n set when step
 * n went otherwise.
 */
static int try_device(struct __test_metadata *_metadata, int fd, int rd_err,
		      int ctl_err, int stats_err)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_target_ctl ctl = { .spec = "lbr_test_long" };
	struct lbr_snap_stats hdr;
	struct lbr_snap_info info;
	int bad = 0;

#define IOC_ERR(x)	((x) ? -errno : 0)
	if (IOC_ERR(ioctl(fd, LBR_SNAP_IOC_GET_INFO, &info)))
		bad |= 1 << 0;
	if (IOC_ERR(get_stats(fd, &hdr, st, LBR_SNAP_MAX_TARGETS)) != stats_err)
		bad |= 1 << 1;
	if (IOC_ERR(ioctl(fd, LBR_SNAP_IOC_FLUSH)) != ctl_err)
		bad |= 1 << 2;
	if (IOC_ERR(ioctl(fd, LBR_SNAP_IOC_ADD_TARGET, &ctl)) != ctl_err)
		bad |= 1 << 3;
	if (IOC_ERR(ioctl(fd, LBR_SNAP_IOC_DEL_TARGET, &ctl)) != ctl_err)
		bad |= 1 << 4;
	if (IOC_ERR(ioctl(fd, LBR_SNAP_IOC_SET_CAPTURE,
			  LBR_SNAP_CAPTURE_ALL)) != ctl_err)
		bad |= 1 << 5;
	if (rd_err && read(fd, st, sizeof(st)) >= 0)
		bad |= 1 << 6;
#undef IOC_ERR
	return bad;
}

/*
 * perf's rule, whatever the file mode: reading needs CAP_PERFMON at open,
 * changing anything CAP_SYS_ADMIN on a descriptor opened for writing.
 * Seen by root with a read-only descriptor, by "nobody" with the device
 * made world-accessible, and by a member of the device's group (the mode
 * and group dist/70-lbr_snap.rules gives it) with and without CAP_PERFMON.
 */
TEST_F(cap, who_may_read_and_control)
{
	int fd, status, bad;
	pid_t pid;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	ASSERT_EQ(0, trigger("int", -5, 3));

	/* Root, read-only: reads, changes nothing. */
	fd = open(LBR_SNAP_DEVICE, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, try_device(_metadata, fd, 0, -EBADF, 0));
	close(fd);

	/* "nobody", the device world read-writable (a relaxed rule). */
	ASSERT_EQ(0, chmod(LBR_SNAP_DEVICE, 0666));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (become(65534, 65534, false))
			_exit(100);
		fd = open(LBR_SNAP_DEVICE, O_RDONLY);
		if (fd >= 0 || errno != EPERM) {
			fprintf(stderr, "# nobody: O_RDONLY: %d, %m\n", fd);
			_exit(101);
		}
		fd = open(LBR_SNAP_DEVICE, O_RDWR);
		if (fd >= 0 || errno != EPERM) {
			fprintf(stderr, "# nobody: O_RDWR: %d, %m\n", fd);
			_exit(102);
		}
		fd = open(LBR_SNAP_DEVICE, O_WRONLY | O_NONBLOCK);
		if (fd < 0) {
			fprintf(stderr, "# nobody: O_WRONLY: %m\n");
			_exit(103);
		}
		{
			/* Not even whether records come. */
			struct pollfd p = { .fd = fd, .events = POLLIN };

			if (poll(&p, 1, 0) != 1 || p.revents != POLLERR)
				_exit(104);
		}
		_exit(try_device(_metadata, fd, -EBADF, -EPERM, -EBADF));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* A member of the device's group: 0640 root:lbrsnap, as the rule. */
	ASSERT_EQ(0, chown(LBR_SNAP_DEVICE, 0, 4242));
	ASSERT_EQ(0, chmod(LBR_SNAP_DEVICE, 0640));
	for (int perfmon = 0; perfmon < 2; perfmon++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			if (become(4242, 4242, perfmon))
				_exit(100);
			fd = open(LBR_SNAP_DEVICE, O_RDONLY | O_NONBLOCK);
			if (fd < 0 && perfmon)
				fprintf(stderr, "# member, CAP_PERFMON: %m\n");
			if (!perfmon)
				_exit(fd >= 0 || errno != EPERM ? 101 : 0);
			if (fd < 0)
				_exit(102);
			bad = try_device(_metadata, fd, 0, -EBADF, 0);
			/* It reads the records, all three. */
			if (!bad && drain(fd, self->recs, MAX_RECS) != 3)
				bad = 104;
			_exit(bad);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("CAP_PERFMON: %d", perfmon);
	}
	EXPECT_EQ(0, chown(LBR_SNAP_DEVICE, 0, 0));
	EXPECT_EQ(0, chmod(LBR_SNAP_DEVICE, 0600));
}
