// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, fixture lost: a direct call ftrace will not remove
 * keeps its trampoline.
 */

/*
 * The last fixture of lbr_snap_test (this file is included last), so its
 * test runs last: should it fail, it may leave a trampoline that ftrace
 * would not unhook, and lbr_snap_fexit with it, loaded for good.
 */
FIXTURE(lost) {
	int fd;
	struct rec *recs;
};

FIXTURE_SETUP(lost)
{
	load_target_module();
	self->fd = -1;
	self->recs = calloc(MAX_RECS, sizeof(struct rec));
	ASSERT_NE(NULL, self->recs);
}

FIXTURE_TEARDOWN(lost)
{
	trigger("faildetach", 0, 1);
	if (self->fd >= 0)
		close(self->fd);
	free(self->recs);
	unload();
}

/*
 * When ftrace will not remove a direct call (here made to fail, as the
 * kernel's fail_function would), the call site still jumps into the
 * trampoline: it is never freed or reused, lbr_snap_fexit does not unload,
 * the refusal is logged once, and the calls go on unharmed, recording
 * nothing, before and after lbr_snap has gone; until the function's module
 * goes, when the removal is tried again.
 */
TEST_F_TIMEOUT(lost, failed_detach_keeps_the_trampoline, 120)
{
	const char *refused = "ftrace would not remove the direct call";
	int k = kmsg_open(), k2 = kmsg_open();
	char last[512];
	__u32 hook;
	int ret;

	ASSERT_LE(0, k);
	ASSERT_LE(0, k2);
	ASSERT_EQ(0, load("targets=lbr_test_lost%long/1@fexit capture=all"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, trigger("lost", 7, 2));
	EXPECT_EQ(2, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);

	ASSERT_EQ(0, trigger("faildetach", EBUSY, 1));
	EXPECT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET,
				"lbr_test_lost", NULL));
	ASSERT_EQ(0, trigger("faildetach", 0, 1));
	EXPECT_TRUE(kmsg_waits(k, "ftrace would not remove the direct call (-16)",
			       5000));
	EXPECT_TRUE(direct_listed("lbr_test_lost"));
	/* Through the trampoline still: right values, no record. */
	ASSERT_EQ(0, trigger("lost", 7, 3));
	EXPECT_EQ(0, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	/* The function cannot be hooked again. */
	EXPECT_EQ(-EBUSY, add_target(self->fd, "lbr_test_lost%long/1@fexit",
				     &hook));

	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unload());
	/* Held by the lost slot alone, once earlier tests' slots drained. */
	EXPECT_TRUE(refcnt_becomes("lbr_snap_fexit", 1, 10000))
		TH_LOG("lbr_snap_fexit held by %d", module_refcnt("lbr_snap_fexit"));
	EXPECT_EQ(-EWOULDBLOCK, rmmod_nonblock("lbr_snap_fexit"));
	/* No client: the calls still come back, and it still holds. */
	ASSERT_EQ(0, trigger("lost", 7, 3));
	usleep(500 * 1000);
	EXPECT_EQ(1, module_refcnt("lbr_snap_fexit"));
	EXPECT_EQ(-EWOULDBLOCK, rmmod_nonblock("lbr_snap_fexit"));
	EXPECT_EQ(1, kmsg_new_lines(k2, refused, last, sizeof(last)));
	EXPECT_FALSE(kmsg_has(k, "the client left it attached"));
	close(k);

	/* Its other trampolines still serve. */
	ASSERT_EQ(0, load("targets=lbr_test_long%long/1@fexit capture=all"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, trigger("long", 3, 2));
	EXPECT_EQ(2, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unload());

	/*
	 * When the function's module goes (ftrace would go on hooking its
	 * address, and whatever a module loaded there puts at it), the
	 * removal is tried again: ftrace takes it now, the slot drains and
	 * lbr_snap_fexit is free to go.  The module loads again, unhooked.
	 */
	ASSERT_EQ(0, syscall(SYS_delete_module, "lbr_snap_test_target",
			     O_NONBLOCK));
	EXPECT_EQ(1, kmsg_new_lines(k2, "the direct call is removed now that lbr_snap_test_target goes",
				    last, sizeof(last)));
	EXPECT_TRUE(refcnt_becomes("lbr_snap_fexit", 0, 10000))
		TH_LOG("lbr_snap_fexit held by %d", module_refcnt("lbr_snap_fexit"));
	ret = load_module_file("lbr_snap_test_target");
	EXPECT_EQ(0, ret);
	EXPECT_FALSE(direct_listed("lbr_test_lost"));
	EXPECT_EQ(0, trigger("lost", 7, 3));
	EXPECT_EQ(0, rmmod_nonblock("lbr_snap_fexit"));
	close(k2);
}
