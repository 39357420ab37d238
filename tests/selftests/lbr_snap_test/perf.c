// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, perf alongside: a PMI inside the frozen window, returns
 * inside perf's PMI freeze, `perf record -b -a` beside mode=perf.
 */

/*
 * The PMU's version as perf takes it: Intel's architectural perfmon
 * version (CPUID 0xA), or on AMD 2 with PerfMonV2 (CPUID 0x80000022 EAX
 * bit 0, amd_core_pmu_init() in arch/x86/events/amd/core.c), 1 with the
 * core counters only (0x80000001 ECX bit 23, PerfCtrExtCore), else 0.
 */
static unsigned int perfmon_version(void)
{
	unsigned int a, b, c, d;

	__cpuid(0, a, b, c, d);
	if (b == 0x68747541) {	/* "Auth"enticAMD */
		if (__get_cpuid_max(0x80000000, NULL) >= 0x80000022) {
			__cpuid(0x80000022, a, b, c, d);
			if (a & 1)
				return 2;
		}
		__cpuid(0x80000001, a, b, c, d);
		return c & (1U << 23) ? 1 : 0;
	}
	if (__get_cpuid_max(0, NULL) < 0xa)
		return 0;
	__cpuid_count(0xa, 0, a, b, c, d);
	return a & 0xff;
}

/* Counts of pmi_window_round(): records, flagged, read loop after return. */
struct pmi_counts {
	unsigned int total, flagged, flagged_own, own_unflagged;
};

/*
 * Call lbr_test_int @n times and sort the records: flagged with
 * LBR_SNAP_REC_RAN_AGAIN or not, and holding a branch of lbr_hw_read_raw()
 * (the copy loop, [@rd, @rd_end)) among the entries after the target's return
 * (probe_entries) or not.  Older entries may hold a previous capture's
 * read loop, recorded after its own PMI turned LBR back on; those after
 * the return can only be this capture's.
 */
static void pmi_window_round(struct __test_metadata *_metadata,
			     FIXTURE_DATA(cap) *self, unsigned long n,
			     unsigned long long rd, unsigned long long rd_end,
			     struct pmi_counts *c)
{
	int i, got;

	ASSERT_EQ(0, trigger("int", -22, n));
	got = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ((int)n, got) TH_LOG("%s", lbr_why);
	for (i = 0; i < got; i++) {
		const struct rec *r = &self->recs[i];
		bool flagged = r->h.flags & LBR_SNAP_REC_RAN_AGAIN;
		bool own = false;
		unsigned int j;

		for (j = r->h.nr_entries - r->h.probe_entries;
		     j < r->h.nr_entries; j++)
			own |= r->br[j].from >= rd && r->br[j].from < rd_end;
		c->total++;
		c->flagged += flagged;
		c->flagged_own += flagged && own;
		if (own && !flagged && c->own_unflagged++ < 3)
			TH_LOG("record %u: lbr_hw_read_raw's branches after the return, and no RAN_AGAIN",
			       c->total);
	}
}

/* 1 if /proc/sys/kernel/nmi_watchdog reads 1 (its PMIs are then about). */
static int nmi_watchdog_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/nmi_watchdog", "r");
	int on = 0;

	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 0;
		fclose(f);
	}
	return on;
}

/*
 * A perf PMI inside the frozen window.  Before perfmon version 4, perf's
 * PMI handler turns LBR back on as it returns (__intel_pmu_lbr_enable(),
 * arch/x86/events/intel/lbr.c), whatever froze it: the entries read after
 * it are the capture's own.  mode=perf keeps perf's LBR user on every CPU.
 * With no PMI (the NMI watchdog off) no record is flagged or holds
 * lbr_hw_read_raw()'s branches after its return; with a sampling event on
 * this thread's kernel instructions firing PMIs through the captures, every
 * record that holds them carries LBR_SNAP_REC_RAN_AGAIN, and some do.
 * Needs the lab's lbr-legacy-pmu3 CPU (perfmon version 3); elsewhere it
 * says why not, and where LBR_EXPECT_PMU3 says that CPU is there, fails.
 */
TEST_F_TIMEOUT(cap, pmi_in_the_frozen_window_is_flagged, 300)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_INSTRUCTIONS,
		.sample_period = 20000,
		.exclude_user = 1,
		.exclude_hv = 1,
	};
	const char *env = getenv("LBR_EXPECT_PMU3");
	bool expect = env && !strcmp(env, "1");
	unsigned long long t0;
	struct pmi_counts quiet = { 0 }, pmi = { 0 };
	unsigned int v = perfmon_version(), round;
	unsigned long long rd, rd_end;

	if (!v || v >= 4) {
		ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_PMU3, and perfmon version %u", v);
		SKIP(return, "perfmon version %u: %s", v,
		     v ? "from version 4 a PMI leaves LBR frozen" :
		     "no PMU, no PMI");
	}
	if (load(vparams(variant, "targets=lbr_test_int capture=all mode=perf buffer_kb=4096"))) {
		ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_PMU3, and mode=perf does not load");
		SKIP(return, "mode=perf does not load: perf has no LBR here");
	}
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	if (self->info.backend != LBR_SNAP_BACKEND_INTEL) {
		ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_PMU3, and backend %s",
					    self->info.backend_name);
		SKIP(return, "backend %s: only legacy LBR has perfmon before version 4",
		     self->info.backend_name);
	}
	rd = ksym("lbr_hw_read_raw");
	ASSERT_NE(0, rd);
	rd_end = ksym_end(rd);
	ASSERT_LT(rd, rd_end);

	pmi_window_round(_metadata, self, 500, rd, rd_end, &quiet);
	TH_LOG("no sampling event (NMI watchdog %s): %u records, %u with RAN_AGAIN, %u hold lbr_hw_read_raw's branches after the return",
	       nmi_watchdog_on() ? "on" : "off", quiet.total, quiet.flagged,
	       quiet.own_unflagged + quiet.flagged_own);
	EXPECT_EQ(0, quiet.own_unflagged);
	/* The watchdog's own PMIs may land in a window too. */
	if (!nmi_watchdog_on())
		EXPECT_EQ(0, quiet.flagged);

	ASSERT_EQ(0, perf_unthrottled(self));
	self->pfd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	ASSERT_LT(0, self->pfd) TH_LOG("perf_event_open: %s", strerror(errno));
	/*
	 * Until records show the read loop after their return: bounded in
	 * rounds and, well inside the test's timeout (the harness kills it
	 * there and the teardown does not run), in time.
	 */
	t0 = now_ns();
	for (round = 0; round < 40 && now_ns() - t0 < 150000000000ULL &&
	     (pmi.flagged_own < 3 || pmi.total < 2000); round++)
		pmi_window_round(_metadata, self, 500, rd, rd_end, &pmi);
	close(self->pfd);
	self->pfd = 0;
	TH_LOG("a PMI every %llu kernel instructions: %u records, %u with RAN_AGAIN (%u of them hold lbr_hw_read_raw's branches after the return), %u unflagged that do",
	       attr.sample_period, pmi.total, pmi.flagged, pmi.flagged_own,
	       pmi.own_unflagged);
	EXPECT_EQ(0, pmi.own_unflagged);
	EXPECT_LT(0, pmi.flagged_own);
	EXPECT_GT(pmi.total, pmi.flagged);
}

/* AMD's LbrAndPmcFreeze: CPUID 0x80000022 EAX bit 2. */
static bool amd_lbr_pmc_freeze(void)
{
	unsigned int a, b, c, d;

	if (__get_cpuid_max(0x80000000, NULL) < 0x80000022)
		return false;
	__cpuid(0x80000022, a, b, c, d);
	return a & (1U << 2);
}

/*
 * Returns inside perf's PMI handler, whose PMI may have frozen LBR:
 * perf sets FREEZE_LBRS_ON_PMI while it has an LBR user, here lbr_snap's
 * own mode=perf events.  The test module's sampling counter calls
 * lbr_test_in_pmi() from its overflow handler, a success then an error;
 * capture=errors records the errors, and the successes take the short
 * path of the filter (lbr_capture()) on a kretprobe, or leave the fexit
 * trampoline before its freeze, where nothing looks at LBR.
 *  - AMD's LbrAndPmcFreeze sets the global status's LBRSF and leaves
 *    LBRV2EN set, and perf runs the overflow handlers before it unfreezes
 *    (amd_pmu_v2_handle_irq()): each record says WAS_OFF, its entries
 *    older than its return; the target's lbr_off counts every return
 *    that froze, recorded or filtered (on fexit, the errors).
 *  - Intel before perfmon version 4 clears DEBUGCTL.LBR in the PMI and
 *    sets it back after the overflow handlers: WAS_OFF likewise.
 *  - From version 4 Intel's handler unfreezes before it calls them
 *    (intel_pmu_handle_irq()): no WAS_OFF, no lbr_off, and each record
 *    holds its return.
 */
TEST_F_TIMEOUT(cap, return_inside_the_pmi_freeze, 180)
{
	const char *env = getenv("LBR_EXPECT_PERF");
	bool expect = env && !strcmp(env, "1");
	unsigned long long fn = ksym("lbr_test_in_pmi");
	const char *site = is_fexit(variant) ? FEXIT_SITE : KRETPROBE_SITE;
	unsigned int v = perfmon_version(), off = 0, ret = 0;
	struct lbr_snap_target_stats st[1];
	struct lbr_snap_stats hdr;
	bool frozen;
	int i, n;

	ASSERT_NE(0, fn);
	if (!v) {
		ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_PERF, and no PMU");
		SKIP(return, "no PMU: no PMI");
	}
	if (load(vparams(variant, "targets=lbr_test_in_pmi mode=perf"))) {
		ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_PERF, and mode=perf does not load");
		SKIP(return, "mode=perf does not load: perf has no LBR here");
	}
	self->fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_info(self->fd, &self->info));
	frozen = self->info.backend == LBR_SNAP_BACKEND_AMD ?
		 amd_lbr_pmc_freeze() : v < 4;
	ASSERT_EQ(0, perf_unthrottled(self));

	ASSERT_EQ(0, trigger("pmi", 20, 1)) TH_LOG("%s", strerror(errno));
	n = drain(self->fd, self->recs, MAX_RECS);
	/* A PMI may come between the module's count and the release. */
	ASSERT_LE(20, n) TH_LOG("%s", lbr_why);
	ASSERT_TRUE(ksyms_snapshot());
	for (i = 0; i < n; i++) {
		const struct rec *r = &self->recs[i];

		EXPECT_FALSE(r->h.flags & LBR_SNAP_REC_NO_LBR);
		off += !!(r->h.flags & LBR_SNAP_REC_WAS_OFF);
		ret += find_return(r, fn, site) >= 0;
	}
	ksyms_drop();
	ASSERT_EQ(0, get_stats(self->fd, &hdr, st, 1));
	TH_LOG("%s, perfmon version %u: %d errors in the PMI recorded, %u say WAS_OFF, %u hold their return; %llu returns, %llu found LBR off",
	       self->info.backend_name, v, n, off, ret,
	       (unsigned long long)st[0].hits,
	       (unsigned long long)st[0].lbr_off);
	EXPECT_EQ(2 * (__u64)n, st[0].hits);
	EXPECT_EQ((__u64)n, st[0].captured);
	if (frozen) {
		EXPECT_EQ((unsigned int)n, off);
		/* fexit's successes do not freeze: they find nothing. */
		EXPECT_EQ(is_fexit(variant) ? st[0].captured : st[0].hits,
			  st[0].lbr_off);
	} else {
		EXPECT_EQ(0, off);
		EXPECT_EQ(0, st[0].lbr_off);
		if (return_fits(variant))
			EXPECT_EQ((unsigned int)n, ret);
	}
}

/* One CPU's event of perf_record_b_a(): its fd and its sample ring. */
struct perf_b {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t len;
};

#define PERF_B_PAGES	64

/*
 * What `perf record -b -a` opens: on every CPU a cycles event sampled at
 * 4000 Hz (or, as perf record does, at the most the kernel allows now:
 * kernel.perf_event_max_sample_rate), with a branch stack of any branch,
 * user and kernel.
 */
static int perf_b_open(struct perf_b *p, int cpu, unsigned long hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.freq = 1,
		.sample_freq = hz,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_BRANCH_STACK,
		.branch_sample_type = PERF_SAMPLE_BRANCH_ANY,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
		.disabled = 1,
	};
	void *m;

	p->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0);
	if (p->fd < 0)
		return -errno;
	p->len = (PERF_B_PAGES + 1) * getpagesize();
	m = mmap(NULL, p->len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (m == MAP_FAILED) {
		close(p->fd);
		return -errno;
	}
	p->pg = m;
	return 0;
}

static void perf_b_close(struct perf_b *p)
{
	munmap(p->pg, p->len);
	close(p->fd);
}

/* What perf saw on one CPU. */
struct perf_b_seen {
	unsigned long long enabled, running;
	unsigned int samples, with_branches, kernel_branches;
};

/* Count the samples in @p's ring (it never wraps: 64 pages), then empty it. */
static void perf_b_collect(struct perf_b *p, struct perf_b_seen *s)
{
	unsigned long long v[3];
	char *data = (char *)p->pg + getpagesize();
	size_t size = PERF_B_PAGES * getpagesize();
	__u64 head = __atomic_load_n(&p->pg->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = p->pg->data_tail;

	if (read(p->fd, v, sizeof(v)) == sizeof(v)) {
		s->enabled += v[1];
		s->running += v[2];
	}
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		char rec[65536];
		size_t i, off;

		for (i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		for (i = 0; i < h.size; i++)
			rec[i] = data[(tail + i) % size];
		tail += h.size;
		if (h.type != PERF_RECORD_SAMPLE)
			continue;
		s->samples++;
		/* ip, pid/tid, time, period, then bnr and the entries. */
		off = sizeof(h) + 4 * sizeof(__u64);
		if (off + sizeof(__u64) > h.size)
			continue;
		{
			__u64 bnr = *(__u64 *)(rec + off);
			struct perf_branch_entry *b = (void *)(rec + off + 8);

			if (!bnr)
				continue;
			s->with_branches++;
			for (i = 0; i < bnr && (char *)(b + i + 1) <= rec + h.size; i++)
				if (b[i].from >= 0xffff800000000000ULL) {
					s->kernel_branches++;
					break;
				}
		}
	}
	__atomic_store_n(&p->pg->data_tail, tail, __ATOMIC_RELEASE);
}

/* Burn about @ms of CPU in the kernel and in user space. */
static void perf_b_work(unsigned int ms)
{
	unsigned long long t0 = now_ns();
	volatile unsigned long x = 0;

	while (now_ns() - t0 < ms * 1000000ULL) {
		getppid();
		for (int i = 0; i < 1000; i++)
			x += i;
	}
}

/*
 * Where the hook's return site can be, from addresses: the kretprobe
 * trampoline's symbol, or lbr_snap's code for the fexit trampolines.
 */
static bool site_span(const FIXTURE_VARIANT(cap) *variant,
		      unsigned long long *lo, unsigned long long *hi)
{
	char names[] = KRETPROBE_SITE, *name, *save;
	unsigned long long a, size;

	if (is_fexit(variant)) {
		if (!module_span("lbr_snap", lo, &size))
			return false;
		*hi = *lo + size;
		return true;
	}
	for (name = strtok_r(names, " ", &save); name;
	     name = strtok_r(NULL, " ", &save)) {
		a = ksym(name);
		if (a) {
			*lo = a;
			*hi = ksym_end(a);
			return *hi > a;
		}
	}
	return false;
}

/*
 * The entry the module took for @r's return, checked from addresses
 * alone: the one before its probe_entries, landing in [@lo, @hi) from
 * @fn's code or a return thunk's.  -1 if it is not that.
 */
static int counted_return(const struct rec *r, unsigned long long fn,
			  unsigned long long fn_end, unsigned long long lo,
			  unsigned long long hi)
{
	unsigned long long s, e;
	char name[256];
	int k;

	if (r->h.probe_entries >= r->h.nr_entries)
		return -1;
	k = r->h.nr_entries - 1 - r->h.probe_entries;
	if (r->br[k].to < lo || r->br[k].to >= hi)
		return -1;
	if (r->br[k].from >= fn && r->br[k].from < fn_end)
		return k;
	if (ksym_range(r->br[k].from, name, sizeof(name), &s, &e) &&
	    is_return_thunk(name))
		return k;
	return -1;
}

/* Every entry of @r, newest first, named where kallsyms can. */
static void log_entries(struct __test_metadata *_metadata,
			const struct rec *r, int i)
{
	char n0[128], n1[128];
	unsigned long long a0, a1;
	int k;

	TH_LOG("record %d: flags %#x, %u entries, probe_entries %u", i,
	       r->h.flags, r->h.nr_entries, r->h.probe_entries);
	for (k = r->h.nr_entries - 1; k >= 0; k--) {
		if (!ksym_range(r->br[k].from, n0, sizeof(n0), &a0, &a1))
			snprintf(n0, sizeof(n0), "%llx", r->br[k].from);
		if (!ksym_range(r->br[k].to, n1, sizeof(n1), &a0, &a1))
			snprintf(n1, sizeof(n1), "%llx", r->br[k].to);
		TH_LOG("  %2d %s -> %s", k, n0, n1);
	}
}

/* What lbr_snap's records of one round hold. */
struct perf_b_kept {
	unsigned int ret;	/* the return, where the module said */
	unsigned int whole;	/* ... and the path back into the function */
	unsigned int no_ret;	/* NO_RETURN, every entry the probe's */
	unsigned int flagged;	/* RAN_AGAIN or WAS_OFF */
};

/*
 * Drain the round's 200 records and check each against what it says of
 * itself: a record that says NO_RETURN counts every entry as the probe's;
 * any other has its return where the module counted it (counted_return()).
 * Records without the return are logged entry by entry, not classified.
 */
static void perf_b_round(struct __test_metadata *_metadata,
			 FIXTURE_DATA(cap) *self,
			 const FIXTURE_VARIANT(cap) *variant, const char *round,
			 struct perf_b_kept *kept)
{
	const char *site = is_fexit(variant) ? FEXIT_SITE : KRETPROBE_SITE;
	unsigned long long fail = ksym("lbr_test_fail");
	unsigned long long fail_end = ksym_end(fail), lo, hi;
	int i, n;

	memset(kept, 0, sizeof(*kept));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(200, n) TH_LOG("%s: %s", round, lbr_why);
	ASSERT_TRUE(ksyms_snapshot());
	ASSERT_TRUE(site_span(variant, &lo, &hi));
	for (i = 0; i < n; i++) {
		const struct rec *r = &self->recs[i];

		kept->flagged += !!(r->h.flags & (LBR_SNAP_REC_RAN_AGAIN |
						  LBR_SNAP_REC_WAS_OFF));
		if (r->h.flags & LBR_SNAP_REC_NO_LBR) {
			EXPECT_FALSE(1) TH_LOG("%s: record %d: no LBR read",
					       round, i);
		} else if (r->h.flags & LBR_SNAP_REC_NO_RETURN) {
			EXPECT_EQ(r->h.nr_entries, r->h.probe_entries);
			kept->no_ret++;
			if (return_fits(variant)) {
				TH_LOG("%s: record %d says NO_RETURN", round, i);
				log_entries(_metadata, r, i);
			}
		} else if (counted_return(r, fail, fail_end, lo, hi) >= 0) {
			kept->ret++;
			kept->whole += find_return(r, fail, site) >= 0;
		} else {
			EXPECT_FALSE(1)
				TH_LOG("%s: record %d: entry %d is not the return, and no NO_RETURN",
				       round, i,
				       (int)r->h.nr_entries - 1 - (int)r->h.probe_entries);
			log_entries(_metadata, r, i);
		}
	}
	ksyms_drop();
}

/* The round's calls: 200 errors, with work in between. */
static void perf_b_calls(struct __test_metadata *_metadata)
{
	int i;

	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, trigger("int", -5, 20));
		perf_b_work(50);
	}
}

/*
 * `perf record -b -a` beside mode=perf, both ways round (issue: a
 * concurrent perf record -b -a neither breaks lbr_snap's captures nor is
 * broken by them).  lbr_snap keeps LBR on with a pinned cycles event on
 * every CPU (src/vlbr_event.c); perf's own scheduler then decides who
 * runs.  Intel perf keeps one LBR filter per CPU (the LBR_SELECT /
 * LBR_CTL extra register, __intel_shared_reg_get_constraints() in
 * arch/x86/events/intel/core.c): an event asking for another filter cannot
 * be scheduled beside the pinned one.  So:
 *  - lbr_filter=any (user and kernel, every kind: perf record -b's own
 *    filter): both run; perf's samples carry branch stacks, and lbr_snap
 *    captures every call.  A perf PMI (or any interrupt) in a record's
 *    window can push the return out with its own branches, or, before
 *    perfmon version 4, perf turns LBR back on inside the freeze, or the
 *    PMI's own freeze (DEBUGCTL.LBR cleared) is still on when the hook
 *    freezes.  Whatever happened, each record must say what it holds:
 *    its return where the module counted it (probe_entries), from the
 *    function's RET or a return thunk's onto the hook's return site, or
 *    LBR_SNAP_REC_NO_RETURN with every entry the probe's; and the
 *    returns kept beside perf have a floor, those of the same calls
 *    without it, less 5 %;
 *  - lbr_filter=kernel (the default): perf's events never run while
 *    lbr_snap is loaded (time running 0, no sample), and lbr_snap captures
 *    as before; once lbr_snap is unloaded, perf's events run and sample
 *    with branch stacks.  Not on AMD, whose perf arbitrates no filter:
 *    there perf's events run beside lbr_snap's, and the two share the
 *    filter of the event scheduled last.
 * Where the guest's perf has no LBR, it says why; LBR_EXPECT_PERF makes
 * that a failure.
 */
TEST_F_TIMEOUT(cap, perf_record_b_a_alongside, 300)
{
	const char *env = getenv("LBR_EXPECT_PERF");
	bool expect = env && !strcmp(env, "1");
	static const char *const filters[] = { "any", "kernel" };
	unsigned long long fail = ksym("lbr_test_fail");
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), cpu, f;
	unsigned long hz = 4000, max_hz = 0;
	struct perf_b p[64];
	char params[256];
	FILE *fp;

	ASSERT_GT(64, ncpu);
	ASSERT_NE(0, fail);
	if (!perfmon_version()) {
		ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_PERF, and no PMU");
		SKIP(return, "no PMU: perf has no LBR here");
	}
	/* And from lowering the rate more. */
	ASSERT_EQ(0, perf_unthrottled(self));
	fp = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	ASSERT_NE(NULL, fp);
	ASSERT_EQ(1, fscanf(fp, "%lu", &max_hz));
	fclose(fp);
	if (max_hz < hz)
		hz = max_hz;
	for (f = 0; f < 2; f++) {
		struct perf_b_seen seen = { 0 }, after = { 0 };
		struct perf_b_kept alone, beside;
		char round[64];
		bool amd;

		snprintf(params, sizeof(params),
			 "targets=lbr_test_int capture=all mode=perf lbr_filter=%s buffer_kb=1024",
			 filters[f]);
		if (load(vparams(variant, params))) {
			ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_PERF, and mode=perf does not load");
			/* A SKIP would hide the first filter's failures. */
			ASSERT_EQ(0, f) TH_LOG("mode=perf loaded with lbr_filter=%s, not with %s",
					       filters[0], filters[f]);
			SKIP(return, "mode=perf does not load: perf has no LBR here");
		}
		self->fd = dev_open(O_NONBLOCK);
		ASSERT_LE(0, self->fd);
		ASSERT_EQ(0, get_info(self->fd, &self->info));
		amd = self->info.backend == LBR_SNAP_BACKEND_AMD;

		/* The same calls without perf: the returns to keep. */
		perf_b_calls(_metadata);
		snprintf(round, sizeof(round), "lbr_filter=%s alone", filters[f]);
		perf_b_round(_metadata, self, variant, round, &alone);

		for (cpu = 0; cpu < ncpu; cpu++)
			ASSERT_EQ(0, perf_b_open(&p[cpu], cpu, hz))
				TH_LOG("cpu%d at %lu Hz", cpu, hz);
		for (cpu = 0; cpu < ncpu; cpu++)
			ASSERT_EQ(0, ioctl(p[cpu].fd, PERF_EVENT_IOC_ENABLE, 0));
		perf_b_calls(_metadata);
		for (cpu = 0; cpu < ncpu; cpu++) {
			ioctl(p[cpu].fd, PERF_EVENT_IOC_DISABLE, 0);
			perf_b_collect(&p[cpu], &seen);
		}
		snprintf(round, sizeof(round), "lbr_filter=%s beside perf",
			 filters[f]);
		perf_b_round(_metadata, self, variant, round, &beside);
		close(self->fd);
		self->fd = -1;

		/* perf's side once lbr_snap is gone. */
		ASSERT_EQ(0, unload());
		for (cpu = 0; cpu < ncpu; cpu++)
			ASSERT_EQ(0, ioctl(p[cpu].fd, PERF_EVENT_IOC_ENABLE, 0));
		perf_b_work(300);
		for (cpu = 0; cpu < ncpu; cpu++) {
			ioctl(p[cpu].fd, PERF_EVENT_IOC_DISABLE, 0);
			perf_b_collect(&p[cpu], &after);
			perf_b_close(&p[cpu]);
		}
		after.enabled -= seen.enabled;
		after.running -= seen.running;

		TH_LOG("lbr_filter=%s: lbr_snap, 200 calls alone: %u with the return (%u with the path into it), %u NO_RETURN, %u RAN_AGAIN or WAS_OFF",
		       filters[f], alone.ret, alone.whole, alone.no_ret,
		       alone.flagged);
		TH_LOG("lbr_filter=%s: lbr_snap, 200 calls beside perf: %u with the return (%u with the path into it), %u NO_RETURN, %u RAN_AGAIN or WAS_OFF",
		       filters[f], beside.ret, beside.whole, beside.no_ret,
		       beside.flagged);
		TH_LOG("lbr_filter=%s: perf record -b -a at %lu Hz beside it: ran %llu of %llu us, %u samples, %u with a branch stack, %u with kernel branches",
		       filters[f], hz, seen.running / 1000, seen.enabled / 1000,
		       seen.samples, seen.with_branches, seen.kernel_branches);
		TH_LOG("lbr_filter=%s: perf record -b -a after unload: ran %llu of %llu us, %u samples, %u with a branch stack",
		       filters[f], after.running / 1000, after.enabled / 1000,
		       after.samples, after.with_branches);
		/*
		 * Each record was checked against what it says of itself
		 * (perf_b_round()).  The returns kept beside perf have a floor,
		 * the same calls' without it, less 5 %: a module that lost
		 * them to perf's PMIs fails.  Without perf, where the hook's
		 * path leaves room, 190 of 200 at least.
		 */
		if (return_fits(variant))
			EXPECT_LE(190, alone.ret);
		EXPECT_LE(alone.ret - (alone.ret < 10 ? alone.ret : 10),
			  beside.ret);
		if (f == 0 || amd) {
			/*
			 * AMD's perf keeps one LBR_SELECT per CPU and no
			 * constraint on it: the branch event scheduled last
			 * sets it (amd_pmu_lbr_add() and
			 * amd_pmu_lbr_enable_all() in
			 * arch/x86/events/amd/lbr.c), so perf's events run
			 * beside lbr_snap's whatever the filters.
			 */
			EXPECT_LT(0, seen.running);
			EXPECT_LT(0, seen.with_branches);
		} else {
			EXPECT_EQ(0, seen.running);
			EXPECT_EQ(0, seen.samples);
		}
		EXPECT_LT(0, after.running);
		EXPECT_LT(0, after.with_branches);
	}
}

#define PERF_HOGS	12	/* pinned events a CPU: more than any PMU's counters */

/* A pinned cycles event on @cpu that counts at once, or -errno. */
static int perf_hog_open(int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.pinned = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0);

	return fd < 0 ? -errno : fd;
}

/* One lbr_test_int error return on @cpu: its record's flags and entries. */
static void perf_hog_capture(struct __test_metadata *_metadata, int fd,
			     int cpu, struct rec *r)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, trigger("int", -22, 1));
	ASSERT_EQ(1, drain(fd, r, MAX_RECS)) TH_LOG("%s", lbr_why);
}

/*
 * mode=perf where other pinned events already hold every counter of each
 * CPU: perf cannot schedule lbr_snap's event (pinned: it goes into error
 * state and stays there), so LBR is off.  GET_INFO names those CPUs
 * (cpus_perf_off), the log says so, the records say WAS_OFF.  Once the
 * counters are free again, the module asks perf again (each second):
 * within 3 s no CPU is off and the records carry LBR.
 */
TEST_F_TIMEOUT(load, perf_event_without_a_counter, 120)
{
	const char *env = getenv("LBR_EXPECT_PERF");
	bool expect = env && !strcmp(env, "1");
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), cpu, k, fd, n;
	static int hogs[64][PERF_HOGS];
	struct lbr_snap_info info;
	cpu_set_t all;
	struct rec *r;

	ASSERT_GT(64, ncpu);
	if (!perfmon_version()) {
		ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_PERF, and no PMU");
		SKIP(return, "no PMU: no mode=perf here");
	}
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	for (cpu = 0; cpu < ncpu; cpu++)
		for (k = 0; k < PERF_HOGS; k++) {
			hogs[cpu][k] = perf_hog_open(cpu);
			ASSERT_LE(0, hogs[cpu][k]) TH_LOG("cpu%d, event %d", cpu, k);
		}
	if (load("targets=lbr_test_int%int mode=perf")) {
		ASSERT_FALSE(expect) TH_LOG("LBR_EXPECT_PERF, and mode=perf does not load");
		SKIP(goto out, "mode=perf does not load: perf has no LBR here");
	}
	r = calloc(MAX_RECS, sizeof(*r));
	ASSERT_NE(NULL, r);
	fd = dev_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, get_info(fd, &info));
	ASSERT_NE(LBR_SNAP_BACKEND_NONE, info.backend);
	EXPECT_EQ(ncpu, info.nr_cpus_perf_off)
		TH_LOG("cpus off: \"%.*s\"", (int)sizeof(info.cpus_perf_off),
		       info.cpus_perf_off);
	for (cpu = 0; cpu < ncpu; cpu++) {
		perf_hog_capture(_metadata, fd, cpu, r);
		EXPECT_TRUE(r->h.flags & LBR_SNAP_REC_WAS_OFF)
			TH_LOG("cpu%d: flags 0x%x with every counter taken",
			       cpu, r->h.flags);
	}
	usleep(1500 * 1000);
	EXPECT_TRUE(kmsg_has(self->kmsg, "perf cannot schedule lbr_snap's branch-stack event"));

	for (cpu = 0; cpu < ncpu; cpu++)
		for (k = 0; k < PERF_HOGS; k++)
			close(hogs[cpu][k]);
	for (n = 0; n < 30; n++) {
		ASSERT_EQ(0, get_info(fd, &info));
		if (!info.nr_cpus_perf_off)
			break;
		usleep(100 * 1000);
	}
	EXPECT_EQ(0, info.nr_cpus_perf_off)
		TH_LOG("3 s after the counters were freed, cpus \"%.*s\" still off",
		       (int)sizeof(info.cpus_perf_off), info.cpus_perf_off);
	for (cpu = 0; cpu < ncpu; cpu++) {
		perf_hog_capture(_metadata, fd, cpu, r);
		EXPECT_FALSE(r->h.flags & LBR_SNAP_REC_WAS_OFF)
			TH_LOG("cpu%d: flags 0x%x with the counters free", cpu,
			       r->h.flags);
		EXPECT_LT(0, r->h.nr_entries);
	}
	close(fd);
	free(r);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	return;
out:
	for (cpu = 0; cpu < ncpu; cpu++)
		for (k = 0; k < PERF_HOGS; k++)
			close(hogs[cpu][k]);
}
