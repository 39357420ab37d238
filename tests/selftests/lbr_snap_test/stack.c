// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, call stacks (stack_depth=): from the target's caller
 * outwards, none of the hook's own frames.
 */

/* The running kernel is @major.@minor or later. */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	uname(&u);
	sscanf(u.release, "%d.%d", &ma, &mi);
	return ma > major || (ma == major && mi >= minor);
}

/*
 * The call stack of a record (stack_depth=): from the target's caller
 * outwards, through the write() the test target serves, to the system
 * call entry; none of lbr_snap's or kretprobe's own frames.  Before
 * 5.15 the unwinder stops in kretprobe's trampoline: such a record says
 * so (LBR_SNAP_REC_NO_STACK) rather than carry a wrong stack.
 */
TEST_F(cap, call_stack_from_the_caller)
{
	static const char * const own[] = {
		"lbr_capture", "lbr_ret_handler", "lbr_fexit", "lbr_stack",
		"trampoline_handler", "__kretprobe_trampoline", "kretprobe_",
		"rethook_", "arch_rethook_", "stack_trace_", "arch_stack_walk",
	};
	bool unwinds = is_fexit(variant) || kernel_at_least(5, 15);
	unsigned long long start, end;
	bool in_write, in_vfs, in_entry;
	const struct rec *r;
	char name[256];
	unsigned int i, k;
	int n, j;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	EXPECT_EQ(16, self->info.stack_depth);
	ASSERT_EQ(0, trigger("int", -22, 3));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(3, n) TH_LOG("%s", lbr_why);
	ASSERT_TRUE(ksyms_snapshot());
	for (j = 0; j < n; j++) {
		r = &self->recs[j];
		if (!unwinds) {
			EXPECT_EQ(0, r->h.nr_stack);
			EXPECT_EQ(LBR_SNAP_REC_NO_STACK,
				  r->h.flags & LBR_SNAP_REC_NO_STACK);
			continue;
		}
		EXPECT_EQ(0, r->h.flags & LBR_SNAP_REC_NO_STACK);
		ASSERT_LT(3, r->h.nr_stack);
		EXPECT_GE(16, r->h.nr_stack);
		EXPECT_EQ(r->h.caller, r->stack[0]);
		in_write = in_vfs = in_entry = false;
		for (i = 0; i < r->h.nr_stack; i++) {
			ksym_range(r->stack[i], name, sizeof(name), &start, &end);
			if (!j)
				TH_LOG("frame %u: %s+0x%llx", i, name,
				       r->stack[i] - start);
			if (i == 0)
				EXPECT_STREQ("call_int", name);
			in_write |= !strcmp(name, "lbr_test_write");
			in_vfs |= !strcmp(name, "vfs_write");
			in_entry |= !strncmp(name, "entry_SYSCALL_64", 16) ||
				    !strcmp(name, "do_syscall_64");
			for (k = 0; k < ARRAY_SIZE(own); k++)
				EXPECT_NE(0, strncmp(name, own[k],
						     strlen(own[k])))
					TH_LOG("frame %u is lbr_snap's own: %s",
					       i, name);
		}
		EXPECT_TRUE(in_write);
		EXPECT_TRUE(in_vfs);
		EXPECT_TRUE(in_entry);
	}
	ksyms_drop();
	cap_unload(_metadata, self);

	/* A shallower stack: its innermost frames. */
	cap_load(_metadata, self, variant, "targets=lbr_test_int stack_depth=2",
		 O_NONBLOCK);
	EXPECT_EQ(2, self->info.stack_depth);
	ASSERT_EQ(0, trigger("int", -22, 1));
	ASSERT_EQ(1, drain(self->fd, self->recs, MAX_RECS)) TH_LOG("%s", lbr_why);
	EXPECT_EQ(unwinds ? 2 : 0, self->recs[0].h.nr_stack);
	if (unwinds)
		EXPECT_EQ(self->recs[0].h.caller, self->recs[0].stack[0]);
	cap_unload(_metadata, self);

	/* None: no stack, no flag, the record as before stacks. */
	cap_load(_metadata, self, variant, "targets=lbr_test_int stack_depth=0",
		 O_NONBLOCK);
	EXPECT_EQ(0, self->info.stack_depth);
	EXPECT_EQ(sizeof(struct lbr_snap_record) +
		  self->info.lbr_depth * sizeof(struct lbr_snap_branch),
		  self->info.record_max);
	ASSERT_EQ(0, trigger("int", -22, 1));
	ASSERT_EQ(1, drain(self->fd, self->recs, MAX_RECS)) TH_LOG("%s", lbr_why);
	EXPECT_EQ(0, self->recs[0].h.nr_stack);
	EXPECT_EQ(0, self->recs[0].h.flags & LBR_SNAP_REC_NO_STACK);
	cap_unload(_metadata, self);

	/* Past the ABI's bound; and the unwinder is no target with stacks. */
	EXPECT_EQ(-EINVAL, load("targets=lbr_test_int stack_depth=65"));
	EXPECT_EQ(-EPERM, load("targets=stack_trace_save%int@kretprobe"));
	EXPECT_EQ(0, load("targets=stack_trace_save%int@kretprobe stack_depth=0"));
	EXPECT_EQ(0, unload());
}
