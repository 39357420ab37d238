// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, what the fexit trampoline leaves in the LBR: a success
 * leaves before the freeze (the lab counts the MSR accesses), the LBR
 * filter changed at run time, the entries a nested hooked call adds.
 */

/*
 * A return its target does not record leaves the fexit trampoline before
 * the freeze (ret_class.h): counted as a hit and filtered, no record, and
 * on the LBR lab, whose vCPUs count RDMSR and WRMSR, no MSR access at all,
 * where it took a freeze (RDMSR, WRMSR) and an unfreeze (WRMSR) before.
 * An error of every return type still freezes, and is recorded with the
 * function's return as its newest branch; capture=all set at run time
 * makes the trampolines record successes too, and errors takes it back.
 */
TEST_F(fexit, success_leaves_before_the_freeze)
{
	static const struct {
		const char *fn;
		long ok, err;
	} fns[] = {
		{ "int", 5, -22 }, { "long", 5, -22 },
		{ "ptr", 1, 0 }, { "bool", 1, 0 },
	};
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	const unsigned long n = 1000, nerr = 20, runs = 3;
	long long base, cost_ok[4], cost_err[4];
	struct lbr_snap_info info;
	struct lbr_snap_stats hdr;
	cpu_set_t one;
	unsigned int i;
	int got, k;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	/* What the calls cost unhooked: the test device, the syscalls. */
	ASSERT_EQ(0, msr_cost_least("int", 5, n, runs, &base));
	ASSERT_EQ(0, load("targets=lbr_test_int%int/1@fexit,lbr_test_long%long/1@fexit,lbr_test_ptr%ptr/1@fexit,lbr_test_bool%bool/1@fexit"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_info(self->fd, &info));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, msr_cost_least(fns[i].fn, fns[i].ok, n, runs,
					    &cost_ok[i]));
		ASSERT_EQ(0, msr_cost(fns[i].fn, fns[i].err, nerr, &cost_err[i]));
	}
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_EQ(4, hdr.nr);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, st[i].hook) TH_LOG("%s", st[i].name);
		EXPECT_EQ(runs * n + nerr, st[i].hits) TH_LOG("%s", st[i].name);
		EXPECT_EQ(runs * n, st[i].filtered) TH_LOG("%s", st[i].name);
		EXPECT_EQ(nerr, st[i].captured) TH_LOG("%s", st[i].name);
		EXPECT_EQ(0, st[i].dropped) TH_LOG("%s", st[i].name);
		EXPECT_EQ(0, st[i].lbr_off) TH_LOG("%s", st[i].name);
	}
	got = drain(self->fd, self->recs, MAX_RECS);
	EXPECT_EQ(4 * nerr, got) TH_LOG("%s", lbr_why);
	for (k = 0; k < got; k++) {
		const struct rec *r = &self->recs[k];

		EXPECT_EQ(LBR_SNAP_HOOK_FEXIT, r->h.hook);
		EXPECT_EQ(fns[r->h.target_id].err, r->h.retval)
			TH_LOG("record %d of target %u", k, r->h.target_id);
		if (r->h.backend != LBR_SNAP_BACKEND_NONE)
			EXPECT_LT(0, r->h.nr_entries) TH_LOG("record %d", k);
	}

	if (base < 0) {
		TH_LOG("no LBR lab MSR counter on this CPU: MSR accesses not measured");
	} else {
		for (i = 0; i < 4; i++) {
			TH_LOG("%s: %.3f MSR accesses per success (%lld unhooked for %lu calls, least of %lu runs), %.1f per error",
			       fns[i].fn, (double)(cost_ok[i] - base) / n, base,
			       n, runs, (double)cost_err[i] / nerr);
			/*
			 * Timers' accesses only; one access per success would
			 * be n, a freeze and an unfreeze 3n.
			 */
			EXPECT_GE(n / 10, cost_ok[i] - base) TH_LOG("%s", fns[i].fn);
			/* The counter sees this path: each error froze. */
			if (info.backend != LBR_SNAP_BACKEND_NONE)
				EXPECT_LE(2 * nerr, cost_err[i]) TH_LOG("%s", fns[i].fn);
		}
	}

	/* capture=all at run time: the trampolines let nothing go. */
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE, LBR_SNAP_CAPTURE_ALL));
	ASSERT_EQ(0, trigger("int", 5, 3));
	ASSERT_EQ(0, trigger("bool", 1, 2));
	got = drain(self->fd, self->recs, MAX_RECS);
	EXPECT_EQ(5, got) TH_LOG("%s", lbr_why);
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE, LBR_SNAP_CAPTURE_ERRORS));
	ASSERT_EQ(0, trigger("int", 5, 3));
	ASSERT_EQ(0, trigger("bool", 1, 2));
	EXPECT_EQ(0, drain(self->fd, self->recs, MAX_RECS)) TH_LOG("%s", lbr_why);
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	EXPECT_EQ(runs * n + 3, st[0].filtered);
	EXPECT_EQ(nerr + 3, st[0].captured);
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, unload());
}

/*
 * The entries of one lbr_test_chain() record by kind, read from the
 * instruction at FROM (through /proc/kcore): a near call (E8, or FF /2),
 * a near return (C3, C2), a conditional jump (70-7F, 0F 80-8F).  Far
 * transfers are left out (into an interrupt or exception entry, out of
 * IRETQ, or from user space), as is any FROM kcore cannot give.  And the
 * reach: how many leaves returned into the chain within the entries.
 */
struct chain_mix {
	int call, ret, jcc, other;
	int ret_in;	/* into the chain from elsewhere: a leaf's return */
	int user;	/* ending in user space */
	int nr;
};

static int kcore_read(unsigned long long addr, void *buf, size_t len);

/* Can /proc/kcore give kernel text here (CONFIG_PROC_KCORE)? */
static bool kcore_text(void)
{
	unsigned char op;

	return !kcore_read(ksym("lbr_test_chain"), &op, 1);
}

static void chain_mix(const struct rec *r, struct chain_mix *m,
		      unsigned long long chain, unsigned long long chain_end)
{
	unsigned long long s, e;
	unsigned char op[3];
	char name[128];
	int i, k;

	memset(m, 0, sizeof(*m));
	m->nr = r->h.nr_entries - r->h.probe_entries;
	for (i = 0; i < m->nr; i++) {
		unsigned long long from = r->br[i].from, to = r->br[i].to;

		m->user += !(to >> 63);
		m->ret_in += to >= chain && to < chain_end &&
			     !(from >= chain && from < chain_end);
		if (!(from >> 63) ||
		    (ksym_range(to, name, sizeof(name), &s, &e) &&
		     !strncmp(name, "asm_", 4)) ||
		    kcore_read(from, op, sizeof(op)))
			continue;
		k = (op[0] & 0xf0) == 0x40;	/* REX */
		if (op[k] == 0xcf)
			continue;		/* IRETQ */
		if (op[0] == 0xe8 || (op[k] == 0xff && ((op[k + 1] >> 3) & 7) == 2))
			m->call++;
		else if (op[0] == 0xc3 || op[0] == 0xc2)
			m->ret++;
		else if ((op[0] & 0xf0) == 0x70 ||
			 (op[0] == 0x0f && (op[1] & 0xf0) == 0x80))
			m->jcc++;
		else
			m->other++;
	}
}

/*
 * Set @cpl, @kinds, take @nr records of lbr_test_chain(40), and sort the
 * entries of each; *@best gets the one with the most of @most's kind
 * (interrupts put their own branches in some), *@all the sums.
 */
static void chain_records(struct __test_metadata *_metadata,
			  FIXTURE_DATA(fexit) *self, __u32 cpl, __u32 kinds,
			  int nr, int (*most)(const struct chain_mix *),
			  struct chain_mix *best, struct chain_mix *all)
{
	struct lbr_snap_lbr_filter f = { .cpl = cpl, .kinds = kinds };
	unsigned long long chain = ksym("lbr_test_chain");
	unsigned long long chain_end = ksym_end(chain);
	struct lbr_snap_info info;
	struct chain_mix m;
	int i, got;

	memset(best, 0, sizeof(*best));
	memset(all, 0, sizeof(*all));
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_LBR_FILTER, &f))
		TH_LOG("cpl %#x kinds %#x: %s", cpl, kinds, strerror(errno));
	ASSERT_EQ(0, get_info(self->fd, &info));
	EXPECT_EQ(cpl, info.lbr_cpl);
	EXPECT_EQ(kinds, info.lbr_kinds);
	ASSERT_EQ(0, trigger("chain", 40, nr));
	got = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(nr, got) TH_LOG("%s", lbr_why);
	for (i = 0; i < got; i++) {
		const struct lbr_snap_record *h = &self->recs[i].h;

		EXPECT_EQ(0, h->flags & LBR_SNAP_REC_NO_LBR);
		/* Without the kernel's returns, none to find: fexit adds none. */
		EXPECT_EQ(!(cpl & LBR_SNAP_LBR_KERNEL) ||
			  !(kinds & LBR_SNAP_KIND_RET),
			  !!(h->flags & LBR_SNAP_REC_RET_FILTERED));
		if (h->flags & LBR_SNAP_REC_RET_FILTERED) {
			EXPECT_EQ(0, h->flags & LBR_SNAP_REC_NO_RETURN);
			EXPECT_EQ(0, h->probe_entries);
		}
		chain_mix(&self->recs[i], &m, chain, chain_end);
		if (most(&m) >= most(best))
			*best = m;
		all->call += m.call;
		all->ret += m.ret;
		all->jcc += m.jcc;
		all->other += m.other;
		all->ret_in += m.ret_in;
		all->user += m.user;
		all->nr += m.nr;
	}
}

/*
 * Raw mode: a CPU whose filter MSR someone else changed (here through
 * /dev/cpu/1/msr) keeps theirs; the others take the new filter, and the
 * call says EBUSY.
 */
static void filter_msr_taken(struct __test_metadata *_metadata,
			     FIXTURE_DATA(fexit) *self,
			     const struct lbr_snap_info *info)
{
	struct lbr_snap_lbr_filter f = {
		.cpl = LBR_SNAP_LBR_KERNEL,
		.kinds = LBR_SNAP_KIND_RET | LBR_SNAP_KIND_FAR,
	};
	bool arch = info->backend == LBR_SNAP_BACKEND_ARCH;
	unsigned int msr = arch ? 0x14ce :
			   info->backend == LBR_SNAP_BACKEND_AMD ? 0xc000010e :
			   0x1c8;
	/* Arch: the JCC enable; LBR_SELECT: the JCC suppress bit. */
	unsigned long long bit = arch ? 1ULL << 16 : 1ULL << 2;
	unsigned long long v0, v1, foreign, now0, now1;

	if (nr_cpus() < 2 || msr_io(1, msr, &v1, false)) {
		TH_LOG("no second CPU or no /dev/cpu/1/msr: taken MSR not tried");
		return;
	}
	foreign = v1 ^ bit;
	ASSERT_EQ(0, msr_io(1, msr, &foreign, true));
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_SET_LBR_FILTER, &f));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(0, msr_io(1, msr, &now1, false));
	EXPECT_EQ(foreign, now1) TH_LOG("cpu1's filter was overwritten");
	EXPECT_EQ(0, msr_io(0, msr, &now0, false));
	v0 = now0;
	/* any_return there: no conditional jumps. */
	EXPECT_EQ(arch ? 0 : bit, now0 & bit) TH_LOG("cpu0: %#llx", now0);
	/* Given back as lbr_snap left it, then the filter everywhere. */
	EXPECT_EQ(0, msr_io(1, msr, &v1, true));
	f.kinds = LBR_SNAP_KIND_ALL;
	EXPECT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_LBR_FILTER, &f));
	EXPECT_EQ(0, msr_io(0, msr, &now0, false));
	EXPECT_EQ(0, msr_io(1, msr, &now1, false));
	EXPECT_EQ(now0 & ~1ULL, now1 & ~1ULL) TH_LOG("was %#llx", v0);
}

static int mix_ret_in(const struct chain_mix *m)
{
	return m->ret_in;
}

static int mix_call(const struct chain_mix *m)
{
	return m->call;
}

static int mix_jcc(const struct chain_mix *m)
{
	return m->jcc;
}

static int mix_user(const struct chain_mix *m)
{
	return m->user;
}

/*
 * LBR_SNAP_IOC_SET_LBR_FILTER changes what LBR records at run time, in
 * raw mode and in perf mode, and each of perf's kinds has its effect on
 * the records: lbr_test_chain(40) calls lbr_test_leaf() 40 times, each a
 * loop of conditional jumps, then fails.  Every branch (any): the 32
 * entries hold calls, loops and returns, a few leaves back.  any_return:
 * only returns, one per leaf, so the entries reach as many leaves back as
 * LBR is deep; any_call: only the calls; cond: only the loops; user: no
 * entry ends in the kernel.  An interrupt adds its own branches to a
 * record, none of the chain's kinds: each kind's count is taken from the
 * record with the most of it, and what a filter leaves out must be in
 * none.  Bad filters are refused and change nothing.
 */
TEST_F_TIMEOUT(fexit, lbr_filter_at_run_time, 240)
{
	static const char *const modes[] = { "raw", "perf" };
	const char *env = getenv("LBR_EXPECT_PERF");
	bool expect_perf = env && !strcmp(env, "1");
	struct lbr_snap_lbr_filter bad[] = {
		{ .cpl = 0, .kinds = LBR_SNAP_KIND_ALL },
		{ .cpl = LBR_SNAP_LBR_KERNEL, .kinds = 0 },
		{ .cpl = 4, .kinds = LBR_SNAP_KIND_ALL },
		{ .cpl = LBR_SNAP_LBR_KERNEL, .kinds = 0x80 },
		{ .cpl = LBR_SNAP_LBR_KERNEL, .kinds = LBR_SNAP_KIND_ALL,
		  .reserved = { 1 } },
	};
	const __u32 k = LBR_SNAP_LBR_KERNEL;
	bool kcore = kcore_text();
	struct chain_mix best, all;
	struct lbr_snap_info info;
	char params[128];
	unsigned int i, m, depth;

	ASSERT_NE(0, ksym("lbr_test_chain"));
	if (!kcore)
		TH_LOG("no kernel text in /proc/kcore: entries judged by where they go only");
	for (m = 0; m < 2; m++) {
		snprintf(params, sizeof(params),
			 "targets=lbr_test_chain/1@fexit mode=%s", modes[m]);
		if (m && load(params)) {
			ASSERT_FALSE(expect_perf)
				TH_LOG("LBR_EXPECT_PERF, and mode=perf does not load");
			TH_LOG("mode=perf does not load: perf has no LBR here");
			break;
		}
		if (!m)
			ASSERT_EQ(0, load(params));
		self->fd = dev_open(O_NONBLOCK);
		ASSERT_LE(0, self->fd);
		ASSERT_EQ(0, get_info(self->fd, &info));
		/*
		 * Arch LBR without CPL and kind filtering (the lab's
		 * lbr-lab-arch-nofilter): every CPL and kind is recorded, the
		 * filter in force says so, and only that one is taken.
		 */
		if (info.backend == LBR_SNAP_BACKEND_ARCH && !lbr_cpu_filters()) {
			struct lbr_snap_lbr_filter f[] = {
				{ .cpl = k, .kinds = LBR_SNAP_KIND_ALL },
				{ .cpl = k | LBR_SNAP_LBR_USER,
				  .kinds = LBR_SNAP_KIND_JCC },
			};

			EXPECT_EQ(k | LBR_SNAP_LBR_USER, info.lbr_cpl);
			EXPECT_EQ(LBR_SNAP_KIND_ALL, info.lbr_kinds);
			for (i = 0; i < ARRAY_SIZE(f); i++) {
				errno = 0;
				EXPECT_EQ(-1, ioctl(self->fd,
						    LBR_SNAP_IOC_SET_LBR_FILTER,
						    &f[i]));
				EXPECT_EQ(EOPNOTSUPP, errno) TH_LOG("filter %u", i);
			}
			f[0].cpl = k | LBR_SNAP_LBR_USER;
			EXPECT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_LBR_FILTER,
					   &f[0]));
			close(self->fd);
			self->fd = -1;
			ASSERT_EQ(0, unload());
			continue;
		}
		/* What lbr_filter= set, the default. */
		EXPECT_EQ(k, info.lbr_cpl);
		EXPECT_EQ(LBR_SNAP_KIND_ALL, info.lbr_kinds);
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			errno = 0;
			EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_SET_LBR_FILTER,
					    &bad[i])) TH_LOG("bad filter %u", i);
			EXPECT_EQ(EINVAL, errno) TH_LOG("bad filter %u", i);
		}
		ASSERT_EQ(0, get_info(self->fd, &info));
		EXPECT_EQ(k, info.lbr_cpl);
		EXPECT_EQ(LBR_SNAP_KIND_ALL, info.lbr_kinds);
		if (info.backend == LBR_SNAP_BACKEND_NONE) {
			struct lbr_snap_lbr_filter any = {
				.cpl = k, .kinds = LBR_SNAP_KIND_ALL,
			};

			errno = 0;
			EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_SET_LBR_FILTER,
					    &any));
			EXPECT_EQ(ENODEV, errno);
			if (NONE_FAILED())
				SKIP(return, "no LBR here (%s): the filter's effect not seen",
				     info.reason);
			return;
		}
		depth = info.lbr_depth;
		if (m) {
			/* perf has no kind for relative jumps. */
			struct lbr_snap_lbr_filter jmp = {
				.cpl = k, .kinds = LBR_SNAP_KIND_REL_JMP,
			};

			errno = 0;
			EXPECT_EQ(-1, ioctl(self->fd, LBR_SNAP_IOC_SET_LBR_FILTER,
					    &jmp));
			EXPECT_EQ(EOPNOTSUPP, errno);
		}

		/* any: every kind, a few leaves back. */
		chain_records(_metadata, self, k, LBR_SNAP_KIND_ALL, 5,
			      mix_ret_in, &best, &all);
		TH_LOG("mode=%s any: %d entries: %d calls, %d returns (%d leaves'), %d conditional jumps, %d others",
		       modes[m], best.nr, best.call, best.ret, best.ret_in,
		       best.jcc, best.other);
		EXPECT_LE(1, best.ret_in);
		EXPECT_GE((int)depth / 4, best.ret_in);
		EXPECT_EQ(0, all.user);
		if (kcore) {
			EXPECT_LE(1, all.call);
			EXPECT_LE(1, all.ret);
			EXPECT_LE(1, all.jcc);
		}

		/* any_return: only returns, as many leaves back as LBR is deep. */
		chain_records(_metadata, self, k,
			      LBR_SNAP_KIND_RET | LBR_SNAP_KIND_FAR, 5,
			      mix_ret_in, &best, &all);
		TH_LOG("mode=%s any_return: %d entries: %d returns (%d leaves'), %d calls, %d conditional jumps, %d others",
		       modes[m], best.nr, best.ret, best.ret_in, best.call,
		       best.jcc, best.other);
		EXPECT_LE((int)depth - 2, best.ret_in);
		if (kcore) {
			EXPECT_LE((int)depth - 2, best.ret);
			EXPECT_EQ(0, all.call + all.jcc + all.other);
		}

		/* any_call: only the calls. */
		chain_records(_metadata, self, k,
			      LBR_SNAP_KIND_REL_CALL | LBR_SNAP_KIND_IND_CALL |
			      LBR_SNAP_KIND_FAR, 5, mix_call, &best, &all);
		TH_LOG("mode=%s any_call: %d entries: %d calls, %d returns, %d conditional jumps, %d others",
		       modes[m], best.nr, best.call, best.ret, best.jcc,
		       best.other);
		if (kcore) {
			EXPECT_LE((int)depth - 2, best.call);
			EXPECT_EQ(0, all.ret + all.jcc + all.other);
		}

		/* cond: only the loops. */
		chain_records(_metadata, self, k, LBR_SNAP_KIND_JCC, 5,
			      mix_jcc, &best, &all);
		TH_LOG("mode=%s cond: %d entries: %d conditional jumps, %d calls, %d returns, %d others",
		       modes[m], best.nr, best.jcc, best.call, best.ret,
		       best.other);
		EXPECT_EQ(0, all.ret_in);
		if (kcore) {
			EXPECT_LE((int)depth - 2, best.jcc);
			EXPECT_EQ(0, all.call + all.ret + all.other);
		}

		/* user: the branches before the system call, none after. */
		chain_records(_metadata, self, LBR_SNAP_LBR_USER,
			      LBR_SNAP_KIND_ALL, 3, mix_user, &best, &all);
		TH_LOG("mode=%s user: %d entries, %d ending in user space",
		       modes[m], best.nr, best.user);
		EXPECT_LE(1, best.nr);
		EXPECT_EQ(all.nr, all.user);

		/* And back. */
		chain_records(_metadata, self, k, LBR_SNAP_KIND_ALL, 1,
			      mix_ret_in, &best, &all);
		EXPECT_EQ(0, all.user);
		if (!m)
			filter_msr_taken(_metadata, self, &info);
		close(self->fd);
		self->fd = -1;
		EXPECT_EQ(0, unload());
	}
}

/*
 * The spans, in entries, between the last @k+1 returns into
 * lbr_test_chain() of record @r (newest last), summed: what the last @k
 * iterations of its loop took.  -1 if it holds fewer.
 */
static int chain_last_spans(const struct rec *r, int k,
			    unsigned long long chain,
			    unsigned long long chain_end)
{
	int i, seen = 0, last = -1, first = -1;

	for (i = r->h.nr_entries - r->h.probe_entries - 1; i >= 0; i--) {
		unsigned long long from = r->br[i].from, to = r->br[i].to;

		if (!(to >= chain && to < chain_end) ||
		    (from >= chain && from < chain_end))
			continue;
		if (last < 0)
			last = i;
		first = i;
		if (seen++ == k)
			break;
	}
	return seen > k ? last - first : -1;
}

/*
 * The least, over @nr records of lbr_test_chain(40), of the entries its
 * last @k iterations took, or -1; any LBR filter (an interrupt only adds).
 */
static int chain_iterations(struct __test_metadata *_metadata,
			    FIXTURE_DATA(fexit) *self, int nr, int k)
{
	unsigned long long chain = ksym("lbr_test_chain");
	unsigned long long chain_end = ksym_end(chain);
	int i, got, least = -1, n, chains = 0;

	if (trigger("chain", 40, nr))
		return -1;
	got = drain(self->fd, self->recs, MAX_RECS);
	EXPECT_LE(0, got) TH_LOG("%s", lbr_why);
	for (i = 0; i < got; i++) {
		/* Under capture=all the leaf's records come too. */
		if (self->recs[i].h.func_addr != chain)
			continue;
		chains++;
		n = chain_last_spans(&self->recs[i], k, chain, chain_end);
		if (n >= 0 && (least < 0 || n < least))
			least = n;
	}
	EXPECT_EQ(nr, chains);
	return least;
}

/*
 * With many functions hooked, a hooked callee inside the function that
 * fails puts its own trampoline's branches into that function's record:
 * the call to the trampoline, its call of the body, its return (and the
 * return thunk's).  Measured on lbr_test_chain(): its loop calls
 * lbr_test_leaf() 40 times, which succeeds, so with the leaf hooked too
 * its trampoline takes the quiet path every time.  The same last
 * iteration of the chain's loop, leaf unhooked then hooked: the entries
 * each nested hooked call adds.  9 on 6.1 with return thunks: the call
 * into the trampoline, its jump past the argument copy, its call of the
 * body through lbr_fexit_call_rest (a call, then a RET by the return
 * thunk: 3), the quiet test's taken JB and the trampoline's RET (2 with
 * the thunk); the function's own return lands in the trampoline instead of
 * its caller, no more entries.  9 on 7.2 too, 11 on 6.12.  Bounded here
 * at the most measured, so that a change adding more fails; the goal is
 * 4.  AMD's 16 entries hold no whole hooked iteration.
 */
TEST_F_TIMEOUT(fexit, nested_hooked_call_entries, 120)
{
	const int k = 1;
	struct lbr_snap_info info;
	int plain, nested, captured;

	ASSERT_EQ(0, load("targets=lbr_test_chain/1@fexit"));
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_info(self->fd, &info));
	if (info.backend == LBR_SNAP_BACKEND_NONE) {
		if (NONE_FAILED())
			SKIP(return, "no LBR here: %s", info.reason);
		return;
	}
	plain = chain_iterations(_metadata, self, 5, k);
	ASSERT_LT(0, plain) TH_LOG("no %d whole iterations in %u entries",
				   k, info.lbr_depth);
	ASSERT_EQ(0, target_ctl(self->fd, LBR_SNAP_IOC_ADD_TARGET,
				"lbr_test_leaf/1@fexit", NULL));
	nested = chain_iterations(_metadata, self, 5, k);
	if (nested < 0 && info.lbr_depth < 32 && NONE_FAILED())
		SKIP(return, "%u entries hold no whole hooked iteration (%d entries unhooked)",
		     info.lbr_depth, plain);
	ASSERT_LT(0, nested) TH_LOG("no %d whole iterations in %u entries",
				    k, info.lbr_depth);
	TH_LOG("nested_entries cpu=%s per_call=%.2f (the last %d iterations: %d entries, %d with the leaf hooked)",
	       info.backend_name, (double)(nested - plain) / k, k, plain,
	       nested);
	EXPECT_LE(1, nested - plain);
	EXPECT_GE(11 * k, nested - plain);

	/*
	 * The leaf's returns captured too: the trampoline unfreezes only as
	 * it leaves, so what the capture did after its read is no entry of
	 * the chain's record, and a captured nested call costs it what a
	 * quiet one does.  (When the capture unfroze LBR, its stack walk,
	 * timestamp and commit filled the chain's record: no whole
	 * iteration.)
	 */
	ASSERT_EQ(0, ioctl(self->fd, LBR_SNAP_IOC_SET_CAPTURE,
			   LBR_SNAP_CAPTURE_ALL));
	captured = chain_iterations(_metadata, self, 2, k);
	if (retbleed_stuffing()) {
		/*
		 * Call depth tracking: the capture's calls leave the depth
		 * count spent, and the trampoline's RET after the unfreeze
		 * refills the RSB (16 calls), which takes the window (seen
		 * on 7.2 with retbleed=stuff).  Its records came (above).
		 */
		TH_LOG("captured leaf under call depth tracking: %d entries (-1: no whole iteration)",
		       captured);
		return;
	}
	ASSERT_LT(0, captured) TH_LOG("captured leaf: no %d whole iterations in %u entries",
				      k, info.lbr_depth);
	TH_LOG("nested_entries cpu=%s captured per_call=%.2f", info.backend_name,
	       (double)(captured - plain) / k);
	EXPECT_GE(11 * k, captured - plain);
}
