// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, records: the counts of each capture mode, every field of
 * a record, the return types; the ABI's structs as older and newer
 * callers see them, GET_INFO's kinds of CPU.
 */

TEST_F(cap, errors_mode_counts)
{
	int n, i;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	ASSERT_EQ(0, trigger("int", -22, 100));
	ASSERT_EQ(0, trigger("int", 5, 50));
	ASSERT_EQ(0, trigger("int", 0, 10));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(100, n)
		TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++)
		EXPECT_EQ(-22, self->recs[i].h.retval);
	expect_stats(_metadata, variant, self->fd, 0, 160, 100, 60);
}

TEST_F(cap, all_mode_counts)
{
	int n, i, neg = 0, pos = 0;

	cap_load(_metadata, self, variant, "targets=lbr_test_int capture=all",
		 O_NONBLOCK);
	ASSERT_EQ(0, trigger("int", -22, 20));
	ASSERT_EQ(0, trigger("int", 7, 30));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(50, n)
		TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		neg += self->recs[i].h.retval == -22;
		pos += self->recs[i].h.retval == 7;
	}
	EXPECT_EQ(20, neg);
	EXPECT_EQ(30, pos);
	expect_stats(_metadata, variant, self->fd, 0, 50, 50, 0);
}

/* Trigger from a named thread so pid, tgid and comm are all checked. */
struct field_arg {
	pid_t tid;
	unsigned long long t0, t1;
	int ret;
};

static void *field_thread(void *p)
{
	struct field_arg *a = p;

	prctl(PR_SET_NAME, "lbr-fields");
	a->tid = syscall(SYS_gettid);
	a->t0 = now_ns();
	a->ret = trigger("int", -22, 1);
	a->t1 = now_ns();
	return NULL;
}

TEST_F(cap, record_fields)
{
	unsigned long long fn = ksym("lbr_test_int");
	unsigned long long call_int = ksym("call_int");
	struct field_arg a = { 0 };
	const struct lbr_snap_record *h;
	pthread_t th;

	ASSERT_NE(0, fn);
	cap_load(_metadata, self, variant, "targets=lbr_test_long%long,lbr_test_int",
		 O_NONBLOCK);
	ASSERT_EQ(0, pthread_create(&th, NULL, field_thread, &a));
	pthread_join(th, NULL);
	ASSERT_EQ(0, a.ret);
	ASSERT_EQ(1, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	h = &self->recs[0].h;

	EXPECT_EQ(a.tid, h->pid);
	EXPECT_EQ(getpid(), h->tgid);
	EXPECT_NE(h->pid, h->tgid);
	EXPECT_STREQ("lbr-fields", h->comm);
	EXPECT_EQ(-22, h->retval);
	EXPECT_EQ(LBR_SNAP_RET_INT, h->ret_type);
	EXPECT_EQ(1, h->target_id);
	EXPECT_EQ(fn, h->func_addr);
	/* lbr_test_int returns into call_int() of the test module. */
	EXPECT_LT(call_int, h->caller);
	EXPECT_GT(call_int + 64, h->caller);
	EXPECT_LE(a.t0, h->ts_ns);
	EXPECT_GE(a.t1, h->ts_ns);
	EXPECT_GT((unsigned int)nr_cpus(), h->cpu);
	EXPECT_EQ(self->info.backend, h->backend);
	EXPECT_EQ(variant->hook_id, h->hook);
	if (self->info.backend == LBR_SNAP_BACKEND_NONE) {
		/* Without a stack where the unwinder cannot give one. */
		EXPECT_EQ(LBR_SNAP_REC_NO_LBR,
			  h->flags & ~LBR_SNAP_REC_NO_STACK);
		EXPECT_EQ(0, h->nr_entries);
		EXPECT_EQ(0, h->probe_entries);
	} else {
		EXPECT_EQ(0, h->flags & LBR_SNAP_REC_NO_LBR);
		EXPECT_LT(0, h->nr_entries);
		EXPECT_EQ(self->info.lbr_format, h->lbr_format);
	}
}

TEST_F(cap, int_sign_extension)
{
	/* lbr_test_int returns int -22: RAX is 0x00000000ffffffea. */
	cap_load(_metadata, self, variant, "targets=lbr_test_int%long", O_NONBLOCK);
	ASSERT_EQ(0, trigger("int", -22, 3));
	EXPECT_EQ(0, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	expect_stats(_metadata, variant, self->fd, 0, 3, 0, 3);
	close(self->fd);

	cap_load(_metadata, self, variant, "targets=lbr_test_int%int", O_NONBLOCK);
	ASSERT_EQ(0, trigger("int", -22, 3));
	ASSERT_EQ(3, drain(self->fd, self->recs, MAX_RECS))
		TH_LOG("%s", lbr_why);
	EXPECT_EQ(-22, self->recs[0].h.retval);
}

TEST_F(cap, ptr_type)
{
	int n, i, nul = 0, err = 0;

	cap_load(_metadata, self, variant, "targets=lbr_test_ptr%ptr", O_NONBLOCK);
	ASSERT_EQ(0, trigger("ptr", 0, 3));
	ASSERT_EQ(0, trigger("ptr", -12, 4));
	ASSERT_EQ(0, trigger("ptr", 1, 5));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(7, n)
		TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(LBR_SNAP_RET_PTR, self->recs[i].h.ret_type);
		nul += self->recs[i].h.retval == 0;
		err += self->recs[i].h.retval == -12;
	}
	EXPECT_EQ(3, nul);
	EXPECT_EQ(4, err);
	expect_stats(_metadata, variant, self->fd, 0, 12, 7, 5);
}

TEST_F(cap, bool_type)
{
	int n, i;

	cap_load(_metadata, self, variant, "targets=lbr_test_bool%bool", O_NONBLOCK);
	ASSERT_EQ(0, trigger("bool", 0, 3));
	ASSERT_EQ(0, trigger("bool", 9, 4));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(3, n)
		TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, self->recs[i].h.retval);
	expect_stats(_metadata, variant, self->fd, 0, 7, 3, 4);
}


/*
 * The structs grow without breaking older callers: the size in a command
 * number may be any from the first ABI's to the module's, what a caller
 * does not have counts as 0, and flags or reserved words it sets that
 * the module does not know fail with EINVAL.  GET_INFO says how large a
 * record can be, and a buffer of that size always takes the next one.
 */
TEST_F(cap, structs_grow_old_callers_work)
{
	char old[LBR_SNAP_TARGET_CTL_SIZE_V1] = "lbr_test_long/1";
	struct {
		struct lbr_snap_stats hdr;
		__u32 more[4];
	} big;
	const unsigned int big_cmd = _IOWR(LBR_SNAP_IOC_MAGIC, 2, big);
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_target_ctl ctl = { .spec = "lbr_test_bool" };
	struct lbr_snap_stats hdr = { 0 };
	char *buf;
	ssize_t len;
	int i;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	/* Built against the first ABI: its sizes, its command numbers. */
	ASSERT_EQ(0, ioctl(self->fd, _IOWR(LBR_SNAP_IOC_MAGIC, 4,
					   char[LBR_SNAP_TARGET_CTL_SIZE_V1]),
			   old));
	hdr.nr = LBR_SNAP_MAX_TARGETS;
	hdr.entry_size = LBR_SNAP_TARGET_STATS_SIZE_V1;
	hdr.stats_ptr = (unsigned long)st;
	hdr.flags = 0xdead;	/* past the old size: never read */
	ASSERT_EQ(0, ioctl(self->fd, _IOWR(LBR_SNAP_IOC_MAGIC, 2,
					   char[LBR_SNAP_STATS_SIZE_V1]),
			   &hdr));
	EXPECT_EQ(2, hdr.nr);
	EXPECT_EQ(0xdead, hdr.flags);	/* nor written */
	/* DEL_TARGET takes the name alone. */
	strcpy(old, "lbr_test_long");
	EXPECT_EQ(0, ioctl(self->fd, _IOW(LBR_SNAP_IOC_MAGIC, 5,
					  char[LBR_SNAP_TARGET_CTL_SIZE_V1]),
			   old));

	/*
	 * Built before lbr_off: entries of LBR_SNAP_TARGET_STATS_SIZE_V2
	 * bytes, back to back, and nothing written past them.
	 */
	memset(st, 0xa5, sizeof(st));
	memset(&hdr, 0, sizeof(hdr));
	hdr.nr = 2;
	hdr.entry_size = LBR_SNAP_TARGET_STATS_SIZE_V2;
	hdr.stats_ptr = (unsigned long)st;
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_GET_STATS, &hdr));
	EXPECT_EQ(1, hdr.nr);
	EXPECT_EQ(0, memcmp(st[0].name, "lbr_test_int", 13));
	EXPECT_EQ(0, st[0].inflight);
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, st[0].lbr_off)
		TH_LOG("lbr_off written to a caller that does not know it");

	/* Unknown flags and reserved words are refused, changing nothing. */
	ctl.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_ADD_TARGET, &ctl));
	EXPECT_EQ(EINVAL, errno);
	ctl.flags = 0;
	ctl.reserved[2] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_ADD_TARGET, &ctl));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_FALSE(hooked("lbr_test_bool"));
	memset(&hdr, 0, sizeof(hdr));
	hdr.reserved[0] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_GET_STATS, &hdr));
	EXPECT_EQ(EINVAL, errno);
	/* Smaller than the first ABI: unknown. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(LBR_SNAP_IOC_MAGIC, 4,
					    char[LBR_SNAP_TARGET_CTL_SIZE_V1 - 4]),
			    old));
	EXPECT_EQ(ENOTTY, errno);
	/* A newer caller's, larger: its tail must be 0. */
	memset(&big, 0, sizeof(big));
	big.hdr.nr = LBR_SNAP_MAX_TARGETS;
	big.hdr.entry_size = sizeof(st[0]);
	big.hdr.stats_ptr = (unsigned long)st;
	EXPECT_EQ(0, ioctl(self->fd, big_cmd, &big));
	EXPECT_EQ(1, big.hdr.nr);
	big.more[3] = 7;
	EXPECT_EQ(-1, ioctl(self->fd, big_cmd, &big));
	EXPECT_EQ(E2BIG, errno);

	/* record_max: every record fits, and it is no more than the most. */
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	EXPECT_EQ(sizeof(struct lbr_snap_record) +
		  self->info.lbr_depth * sizeof(struct lbr_snap_branch) +
		  self->info.stack_depth * sizeof(__u64),
		  self->info.record_max);
	EXPECT_GE(LBR_SNAP_RECORD_MAX, self->info.record_max);
	buf = malloc(self->info.record_max);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, trigger("int", -5, 3));
	/* A record without its stack is shorter: a read may take two. */
	for (i = 0; i < 3; ) {
		ssize_t off = 0;

		len = read(self->fd, buf, self->info.record_max);
		ASSERT_LT(0, len) TH_LOG("%d of 3 records read", i);
		EXPECT_GE(self->info.record_max, len);
		while (off < len) {
			__u32 size = ((struct lbr_snap_record *)(buf + off))->size;

			ASSERT_LT(0, size);
			off += size;
			i++;
		}
		ASSERT_EQ(len, off);
	}
	EXPECT_EQ(3, i);
	free(buf);
}

/*
 * GET_INFO's kinds of CPU: every online CPU in one of them, each with its
 * depth (the lab's CPUs are not hybrid: one kind, core type 0); and a
 * caller of the first ABI's size gets its 208 bytes and nothing past them.
 */
TEST_F(cap, info_cpu_types_and_first_size)
{
	struct {
		struct lbr_snap_info info;
		char guard[64];
	} old;
	unsigned int i, nr = 0;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	if (self->info.backend == LBR_SNAP_BACKEND_NONE) {
		EXPECT_EQ(0, self->info.nr_cpu_types);
	} else {
		ASSERT_LE(1, self->info.nr_cpu_types);
		ASSERT_GE(LBR_SNAP_MAX_CPU_TYPES, self->info.nr_cpu_types);
		for (i = 0; i < self->info.nr_cpu_types; i++) {
			const struct lbr_snap_cpu_type *t = &self->info.cpu_types[i];

			nr += t->nr_cpus;
			EXPECT_EQ(self->info.backend, t->backend);
			EXPECT_EQ(self->info.lbr_format, t->lbr_format);
			EXPECT_GE(self->info.lbr_depth, t->lbr_depth);
			EXPECT_LT(0, t->lbr_depth);
			EXPECT_EQ(0, t->core_type) TH_LOG("the lab's CPUs are not hybrid");
			EXPECT_NE(0, t->cpus[0]);
		}
		EXPECT_EQ((unsigned int)nr_cpus(), nr);
	}

	memset(&old, 0xa5, sizeof(old));
	ASSERT_EQ(0, ioctl(self->fd, _IOR(LBR_SNAP_IOC_MAGIC, 1,
					  char[LBR_SNAP_INFO_SIZE_V1]), &old));
	EXPECT_EQ(LBR_SNAP_ABI_VERSION, old.info.abi_version);
	EXPECT_EQ(self->info.lbr_depth, old.info.lbr_depth);
	EXPECT_EQ(0xa5a5a5a5, old.info.nr_cpu_types) TH_LOG("written past the first size");
}
