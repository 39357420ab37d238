// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, runtime control (CAP_SYS_ADMIN): targets added and
 * removed, the capture mode changed, void targets.
 */

TEST_F(cap, runtime_add_remove_and_capture_mode)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	__u32 id = ~0u;
	int n, i;

	cap_load(_metadata, self, variant, "targets=lbr_test_long%long", O_NONBLOCK);
	ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
				vspec(variant, "lbr_test_int%int"), &id));
	EXPECT_EQ(1, id);
	ASSERT_EQ(0, trigger("int", -5, 3));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(3, n)
		TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(id, self->recs[i].h.target_id);
		EXPECT_EQ(-5, self->recs[i].h.retval);
	}

	/* The same validation as targets=. */
	EXPECT_EQ(-ENOENT, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
				      "lbr_no_such_function", NULL));
	EXPECT_EQ(-EEXIST, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
				      "lbr_test_int", NULL));
	EXPECT_EQ(-EINVAL, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
				      "lbr_test_ptr,lbr_test_bool", NULL));
	EXPECT_EQ(-EPERM, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
				     "irq_work_queue", NULL));
	EXPECT_EQ(-EINVAL, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
				      "lbr_test_ptr%float", NULL));
	EXPECT_FALSE(hooked("lbr_test_ptr"));

	ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET,
				"lbr_test_int", NULL));
	EXPECT_EQ(-ENOENT, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET,
				      "lbr_test_int", NULL));
	EXPECT_FALSE(hooked("lbr_test_int"));
	ASSERT_EQ(0, trigger("int", -5, 3));
	EXPECT_EQ(0, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(1, hdr.nr);
	EXPECT_STREQ("lbr_test_long", st[0].name);

	/* Capture mode at run time. */
	ASSERT_EQ(0, trigger("long", 5, 2));
	EXPECT_EQ(0, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE, LBR_SNAP_CAPTURE_ALL));
	ASSERT_EQ(0, trigger("long", 5, 2));
	EXPECT_EQ(2, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	EXPECT_EQ(-EINVAL, ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE, 7) ? -errno : 0);
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	EXPECT_EQ(LBR_SNAP_CAPTURE_ALL, self->info.capture);
}

/*
 * A void function returns nothing: RAX holds what it last held
 * (lbr_test_void() leaves -VALUE there).  Refused with capture=errors, at
 * load and by ADD_TARGET, the message naming capture=all; with
 * capture=all every return is recorded as void with retval 0; and
 * capture=errors is refused while it is attached.
 */
TEST_F(cap, void_target_needs_capture_all)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	int k = kmsg_open(), n, i;

	ASSERT_LE(0, k);
	EXPECT_EQ(-EINVAL, load(vparams(variant, "targets=lbr_test_void%void")));
	EXPECT_TRUE(kmsg_has(k, "target 'lbr_test_void': returns void: capture=errors has no error to catch; capture=all records every return"));
	close(k);
	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	EXPECT_EQ(-EINVAL, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
				      vspec(variant, "lbr_test_void%void"), NULL));
	EXPECT_FALSE(hooked("lbr_test_void"));
	cap_unload(_metadata, self);

	cap_load(_metadata, self, variant,
		 "targets=lbr_test_void%void capture=all", O_NONBLOCK);
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(1, hdr.nr);
	EXPECT_EQ(LBR_SNAP_RET_VOID, st[0].ret_type);
	ASSERT_EQ(0, trigger("void", 22, 5));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(5, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(LBR_SNAP_RET_VOID, self->recs[i].h.ret_type);
		EXPECT_EQ(0, self->recs[i].h.retval);
	}
	expect_stats(_metadata, variant, self->fd, 0, 5, 5, 0);
	k = kmsg_open();
	ASSERT_LE(0, k);
	EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE,
			    LBR_SNAP_CAPTURE_ERRORS));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_TRUE(kmsg_has(k, "capture errors: target 'lbr_test_void' returns void; detach it first"));
	close(k);
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	EXPECT_EQ(LBR_SNAP_CAPTURE_ALL, self->info.capture);
	ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_DEL_TARGET,
				"lbr_test_void", NULL));
	EXPECT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE,
			   LBR_SNAP_CAPTURE_ERRORS));
}
