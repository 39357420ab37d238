// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, real branches (LBR needed: the lab CPUs or hardware):
 * the error path in order, the hook's entries after the return pinned
 * per kernel, LBR_INFO as the lab writes it and only when asked, an IRET
 * onto the return site not taken for the return.
 */

/*
 * Does the record hold lbr_test_int's error path in order: the taken
 * "v < 0" branch inside lbr_test_int, then the tail call to lbr_test_fail?
 */
static bool has_error_path(const struct rec *r, unsigned long long fn,
			   unsigned long long fn_end, unsigned long long fail)
{
	int i, inside = -1;

	for (i = 0; i < r->h.nr_entries; i++) {
		const struct lbr_snap_branch *b = &r->br[i];

		if (inside < 0 && b->from >= fn && b->from < fn_end &&
		    b->to >= fn && b->to < fn_end)
			inside = i;
		if (inside >= 0 && b->to == fail)
			return !(r->h.flags & LBR_SNAP_REC_NO_RETURN);
	}
	return false;
}

/* Does /proc/cmdline hold @word (a whole word)? */
static bool cmdline_has(const char *word)
{
	char buf[4096], *p;
	size_t n = strlen(word);
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f)
		return false;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	for (; p && (p = strstr(p, word)); p += n)
		if ((p == buf || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' ||
						   !p[n]))
			return true;
	return false;
}

/* Is this one of the LBR lab's CPUs (tests/lbr-lab), not hardware? */
static bool lbr_lab_cpu(void)
{
	char line[256];
	bool lab = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && !lab && fgets(line, sizeof(line), f))
		lab = !strncmp(line, "model name", 10) && strstr(line, "LBR lab");
	if (f)
		fclose(f);
	return lab;
}

/*
 * Entries the kretprobe path takes after the traced function's return, in
 * the LBR lab, per kernel and mitigation setting: what
 * docs/performance.md's table and `make bench` report.  The path is the
 * same code whatever the target, so any change in it (one more call on
 * the way to the freeze) changes the figure.
 */
#define PATH_FILLS_LBR	1000	/* more than any LBR holds: never a return */

static const struct {
	const char *release;	/* uname -r prefix ("*suffix": suffix) */
	bool mitigations_off;
	const char *cmdline;	/* and this word on the command line */
	bool amd;		/* an AMD CPU (its return thunks), else Intel */
	unsigned int entries;
} kretprobe_entries[] = {
	{ "5.10.", false, NULL, false, 16 },
	{ "6.1.0-", false, NULL, false, 13 },
	{ "6.1.0-", true, NULL, false, 7 },
	{ "6.12.", false, NULL, false, 13 },
	/* KASAN and lockdep in the kprobe and rethook code: 32 and more. */
	{ "*-lbrdebug", false, NULL, false, PATH_FILLS_LBR },
	{ "7.2.", false, "retbleed=stuff", false, 11 },
	/*
	 * The lab's AMD CPU: every RET of the path goes through SRSO's
	 * return thunk, and of 16 entries only the last hop of the traced
	 * function's return is left (return_cut()).
	 */
	{ "6.1.0-", false, NULL, true, 15 },
	{ "7.2.", false, NULL, true, 15 },	/* make bench, sid's 7.2 */
};

/* An AMD CPU: /proc/cpuinfo's vendor_id. */
static bool cpu_is_amd(void)
{
	char line[256];
	bool amd = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "vendor_id", 9)) {
			amd = strstr(line, "AuthenticAMD");
			break;
		}
	if (f)
		fclose(f);
	return amd;
}

static bool release_is(const char *release, const char *pattern)
{
	size_t n = strlen(release), m = strlen(pattern);

	if (*pattern == '*')
		return n >= m - 1 && !strcmp(release + n - (m - 1), pattern + 1);
	return !strncmp(release, pattern, m);
}

/* The pinned figure for this kernel, or -1. */
static int kretprobe_pinned(char *key, size_t len)
{
	bool off = cmdline_has("mitigations=off");
	struct utsname u;
	unsigned int i;

	uname(&u);
	snprintf(key, len, "%s, mitigations %s%s", u.release,
		 off ? "off" : "on", cpu_is_amd() ? ", AMD" : "");
	for (i = 0; i < ARRAY_SIZE(kretprobe_entries); i++)
		if (release_is(u.release, kretprobe_entries[i].release) &&
		    kretprobe_entries[i].mitigations_off == off &&
		    kretprobe_entries[i].amd == cpu_is_amd() &&
		    (!kretprobe_entries[i].cmdline ||
		     cmdline_has(kretprobe_entries[i].cmdline)))
			return kretprobe_entries[i].entries;
	return -1;
}

/*
 * The hooks' return sites: the fexit trampolines (lbr_fexit_lbr_N), and
 * the kretprobe trampoline under each name it had (rethook on x86 since
 * 5.19; __kretprobe_trampoline since 5.15).  A name ending in '_' is a
 * prefix.
 */
#define FEXIT_SITE	"lbr_fexit_lbr_"
#define KRETPROBE_SITE	"arch_rethook_trampoline __kretprobe_trampoline kretprobe_trampoline"

static bool site_is(const char *sites, const char *name)
{
	size_t n;

	for (; *sites; sites += n + !!sites[n]) {
		n = strcspn(sites, " ");
		if (n && sites[n - 1] == '_' ? !strncmp(name, sites, n) :
		    strlen(name) == n && !strncmp(name, sites, n))
			return true;
	}
	return false;
}

/*
 * Does the hook's own path leave the traced function's return in the LBR?
 * Not the kretprobe's on a debug kernel (PATH_FILLS_LBR).
 */
static bool return_fits(const FIXTURE_VARIANT(cap) *variant)
{
	char key[128];

	return is_fexit(variant) ||
	       kretprobe_pinned(key, sizeof(key)) != PATH_FILLS_LBR;
}

/*
 * Where in @r the traced function returned (ksyms_snapshot() taken), found
 * from addresses alone (never from the module's NO_RETURN flag or its
 * probe_entries): the newest branch landing on one of @site (site_is())
 * that leaves @ret_fn, or ends a chain of branches through thunks that
 * starts in @ret_fn.  -1 if no entry is that return.
 */
static int find_return(const struct rec *r, unsigned long long ret_fn,
		       const char *site)
{
	unsigned long long ret_end, s0, ss, se;
	char name[256];
	int i, j;

	if (!ksym_range(ret_fn, name, sizeof(name), &s0, &ret_end))
		return -1;
	for (i = r->h.nr_entries - 1; i >= 0; i--) {
		const struct lbr_snap_branch *b = &r->br[i];

		if (!ksym_range(b->to, name, sizeof(name), &ss, &se) ||
		    !site_is(site, name))
			continue;
		/*
		 * Walk back through the thunks (return thunk, SRSO's safe
		 * RET, call depth stuffing): each older entry must land in
		 * the symbol the next newer one leaves from, until one leaves
		 * @ret_fn itself.
		 */
		for (j = i; j >= 0; j--) {
			if (r->br[j].from >= ret_fn && r->br[j].from < ret_end)
				return i;
			if (!j || !ksym_range(r->br[j].from, name, sizeof(name),
					      &ss, &se) ||
			    r->br[j - 1].to < ss || r->br[j - 1].to >= se)
				break;
		}
	}
	return -1;
}

/* A return thunk: retbleed's, ITS', or SRSO's safe RET. */
static bool is_return_thunk(const char *name)
{
	return strstr(name, "return_thunk") || strstr(name, "safe_ret");
}

/*
 * Only the last hop of the return is in @r: its oldest entry lands on
 * @site from a return thunk (find_return() found no chain from the
 * function), and the module, seeing it land, counted every newer entry
 * as the hook's.  The hook's path took all the others: 15 of AMD's 16
 * entries for the kretprobe path behind SRSO's return thunk.
 */
static bool return_cut(const struct rec *r, const char *site)
{
	unsigned long long s, e;
	char name[256];

	return r->h.nr_entries &&
	       ksym_range(r->br[0].to, name, sizeof(name), &s, &e) &&
	       site_is(site, name) &&
	       ksym_range(r->br[0].from, name, sizeof(name), &s, &e) &&
	       is_return_thunk(name) &&
	       !(r->h.flags & LBR_SNAP_REC_NO_RETURN) &&
	       r->h.probe_entries == r->h.nr_entries - 1u;
}

/*
 * SKIP() marks the test passed: after a failed EXPECT it would hide the
 * failure.  Whether none failed so far (the 6.1 harness's field).
 */
#define NONE_FAILED()	(_metadata->passed)

/*
 * Did an interrupt or exception come in after the return?  Then it, not
 * the hook alone, put the entries after the return.
 */
static bool interrupted_after(const struct rec *r, int ret)
{
	char name[256];
	unsigned long long s, e;
	int i;

	for (i = ret + 1; i < r->h.nr_entries; i++)
		if (ksym_range(r->br[i].to, name, sizeof(name), &s, &e) &&
		    !strncmp(name, "asm_", 4))
			return true;
	return false;
}

TEST_F(cap, error_path_branches)
{
	unsigned long long fn = ksym("lbr_test_int");
	unsigned long long fn_end = ksym_end(fn);
	unsigned long long fail = ksym("lbr_test_fail");
	const char *site = is_fexit(variant) ? FEXIT_SITE : KRETPROBE_SITE;
	int i, n, ret, pinned, found = 0, checked = 0, cut = 0, no_ret = 0;
	int touched = 0;
	char key[128];

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	if (self->info.backend == LBR_SNAP_BACKEND_NONE)
		SKIP(return, "no LBR here: %s", self->info.reason);
	/* The kretprobe figure is the lab's; a real CPU's mitigations vary. */
	pinned = is_fexit(variant) ? 0 : kretprobe_pinned(key, sizeof(key));
	if (!is_fexit(variant) && !lbr_lab_cpu() && pinned != PATH_FILLS_LBR)
		pinned = -1;
	ASSERT_EQ(0, trigger("int", -22, 5));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(5, n)
		TH_LOG("%s", lbr_why);
	ASSERT_TRUE(ksyms_snapshot());
	if (pinned == PATH_FILLS_LBR) {
		/* The pin: every record is the path's alone, and says so. */
		for (i = 0; i < n; i++) {
			const struct rec *r = &self->recs[i];

			EXPECT_GT(0, find_return(r, fail, site));
			EXPECT_TRUE(r->h.flags & LBR_SNAP_REC_NO_RETURN);
			EXPECT_EQ(r->h.nr_entries, r->h.probe_entries);
			EXPECT_EQ(self->info.lbr_depth, r->h.nr_entries);
		}
		ksyms_drop();
		TH_LOG("%s: the kretprobe path fills all %u entries", key,
		       self->info.lbr_depth);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct rec *r = &self->recs[i];
		unsigned int after;

		/* lbr_test_int tail-calls lbr_test_fail, whose RET returns. */
		ret = find_return(r, fail, site);
		TH_LOG("record %d: return at %d of %u, probe_entries %u%s", i,
		       ret, r->h.nr_entries, r->h.probe_entries,
		       r->h.flags & LBR_SNAP_REC_NO_RETURN ? ", no return" : "");
		if (ret < 0 && return_cut(r, site)) {
			/*
			 * The path leaves its return's last hop alone: a RET
			 * (mispredicted, by the lab's rule) out of the thunk.
			 */
			cut++;
			EXPECT_EQ(self->info.lbr_depth, r->h.nr_entries);
			EXPECT_TRUE(r->br[0].flags & LBR_SNAP_BR_MISPRED);
			if (pinned >= 0)
				EXPECT_EQ(pinned, (int)r->h.probe_entries);
			continue;
		}
		if (ret < 0) {
			/* Only an interrupt may push it out, and then says so. */
			EXPECT_TRUE(r->h.flags & LBR_SNAP_REC_NO_RETURN);
			EXPECT_EQ(r->h.nr_entries, r->h.probe_entries);
			no_ret++;
			continue;
		}
		after = r->h.nr_entries - 1 - ret;
		EXPECT_FALSE(r->h.flags & LBR_SNAP_REC_NO_RETURN);
		EXPECT_EQ(after, r->h.probe_entries);
		if (has_error_path(r, fn, fn_end, fail)) {
			found++;
		} else if (interrupted(r)) {
			touched++;
		} else if (lbr_lab_cpu()) {
			/* The lab is deterministic but for interrupts. */
			EXPECT_FALSE(1)
				TH_LOG("record %d: no error path, and no interrupt",
				       i);
		}
		if (interrupted_after(r, ret))
			continue;
		checked++;
		if (pinned >= 0)
			EXPECT_EQ(pinned, (int)after)
				TH_LOG("record %d: %u entries after the return through %s (%s)",
				       i, after, variant->hook,
				       is_fexit(variant) ? "0 by construction" : key);
	}
	ksyms_drop();
	/*
	 * Every return cut to its last hop, but those an interrupt pushed
	 * out (at most one, as elsewhere).
	 */
	if (cut && cut + no_ret == n && no_ret <= 1 && !is_fexit(variant) &&
	    pinned >= 0 && NONE_FAILED())
		SKIP(return, "the kretprobe path takes %d of %u entries here (%s): only the return's last hop is left, as pinned; hook=fexit keeps the function's branches",
		     pinned, self->info.lbr_depth, key);
	if (lbr_lab_cpu()) {
		/*
		 * Exact in the lab: every record has the error path and the
		 * pinned figure, but those an interrupt came into (above).  A
		 * loaded host gives the guest's timer more ticks a call: two
		 * of five at most.
		 */
		EXPECT_LE(n - 2, found);
		EXPECT_LE(n - 2, checked);
		EXPECT_GE(2, touched + no_ret);
	} else {
		EXPECT_LE(3, found);
		EXPECT_LE(3, checked);
	}
	/* The lab is deterministic: a kernel it boots has its figure here. */
	if (pinned < 0 && !lbr_lab_cpu())
		TH_LOG("kretprobe figure not pinned for %s (not the LBR lab)",
		       key);
	else
		EXPECT_LE(0, pinned)
			TH_LOG("no pinned kretprobe figure for %s: measured %u; add it to kretprobe_entries[]",
			       key, self->recs[0].h.probe_entries);
}

/*
 * The LBR lab fills LBR_INFO by a fixed rule (tests/lbr-lab/README.md,
 * "LBR_INFO: a fixed rule"): cycles ((from ^ to) >> 1) & 0xffff, 1 for 0;
 * MISPRED for near returns, indirect jumps and indirect calls; on Arch LBR
 * the branch type as well.  Every entry's flags, cycles and type must be
 * what the lab wrote for its own from and to: a reader that pairs INFO i
 * with another entry's FROM/TO, reads INFO from the wrong MSR or decodes
 * a field wrongly fails here.
 */
TEST_F(cap, branch_info_as_the_lab_made_it)
{
	unsigned long long fn = ksym("lbr_test_int");
	unsigned long long fn_end = ksym_end(fn);
	unsigned long long fail = ksym("lbr_test_fail");
	const char *site = is_fexit(variant) ? FEXIT_SITE : KRETPROBE_SITE;
	const unsigned int odd = LBR_SNAP_BR_IN_TX | LBR_SNAP_BR_ABORT |
				 LBR_SNAP_BR_SPEC | LBR_SNAP_BR_WRONG_PATH;
	int i, j, n, ret, bad = 0, known = 0, cut = 0, no_ret = 0;
	bool arch, amd;

	cap_load(_metadata, self, variant, "targets=lbr_test_int lbr_info=1",
		 O_NONBLOCK);
	if (self->info.backend == LBR_SNAP_BACKEND_NONE)
		SKIP(return, "no LBR here: %s", self->info.reason);
	if (!lbr_lab_cpu())
		SKIP(return, "not the LBR lab: a CPU's cycle counts and predictions cannot be known in advance");
	arch = self->info.backend == LBR_SNAP_BACKEND_ARCH;
	amd = self->info.backend == LBR_SNAP_BACKEND_AMD;
	ASSERT_EQ(0, trigger("int", -22, 3));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(3, n)
		TH_LOG("%s", lbr_why);
	ASSERT_TRUE(ksyms_snapshot());
	for (i = 0; i < n; i++) {
		const struct rec *r = &self->recs[i];

		for (j = 0; j < r->h.nr_entries; j++) {
			const struct lbr_snap_branch *b = &r->br[j];
			unsigned int cyc = ((b->from ^ b->to) >> 1) & 0xffff;
			bool mis = b->flags & LBR_SNAP_BR_MISPRED;
			bool ind = b->type == LBR_SNAP_BT_RET ||
				   b->type == LBR_SNAP_BT_IND_JMP ||
				   b->type == LBR_SNAP_BT_IND_CALL;

			if (!cyc)
				cyc = 1;
			/*
			 * AMD has no LBR_INFO: mispredict (FROM's bit 63) and
			 * nothing else, not even the kind.
			 */
			if (amd && !b->cycles && !(b->flags & LBR_SNAP_BR_CYCLES) &&
			    !(b->flags & odd) &&
			    mis != !!(b->flags & LBR_SNAP_BR_PREDICTED) &&
			    b->type == LBR_SNAP_BT_UNKNOWN)
				continue;
			if (!amd && b->cycles == cyc &&
			    (b->flags & LBR_SNAP_BR_CYCLES) &&
			    !(b->flags & odd) &&
			    mis != !!(b->flags & LBR_SNAP_BR_PREDICTED) &&
			    (arch ? b->type != LBR_SNAP_BT_UNKNOWN && mis == ind :
				    b->type == LBR_SNAP_BT_UNKNOWN))
				continue;
			if (!bad++)
				TH_LOG("record %d entry %d: %llx -> %llx flags %#x cycles %u type %u; the lab wrote cycles %u",
				       i, j, b->from, b->to, b->flags,
				       b->cycles, b->type, cyc);
		}

		/* The branches whose kind the test knows, on both flavours. */
		ret = find_return(r, fail, site);
		if (ret < 0) {
			if (return_cut(r, site)) {
				/* Its last hop, a RET out of the thunk. */
				EXPECT_TRUE(r->br[0].flags & LBR_SNAP_BR_MISPRED);
				cut++;
			} else {
				no_ret++;
			}
			continue;
		}
		known++;
		EXPECT_TRUE(r->br[ret].flags & LBR_SNAP_BR_MISPRED)
			TH_LOG("record %d: the return is a RET: mispredicted", i);
		if (arch)
			EXPECT_EQ(LBR_SNAP_BT_RET, r->br[ret].type);
		for (j = 0; j < ret; j++) {
			const struct lbr_snap_branch *b = &r->br[j];

			/* lbr_test_int's tail call: a direct JMP. */
			if (b->to != fail || b->from < fn || b->from >= fn_end)
				continue;
			EXPECT_TRUE(b->flags & LBR_SNAP_BR_PREDICTED);
			if (arch)
				EXPECT_EQ(LBR_SNAP_BT_JMP, b->type);
		}
	}
	ksyms_drop();
	EXPECT_EQ(0, bad);
	/*
	 * Every return cut to its last hop (return_cut()) but one an
	 * interrupt pushed out: none is known.
	 */
	if (return_fits(variant) && !(cut && cut + no_ret == n && no_ret <= 1))
		EXPECT_LE(2, known);
}

/*
 * lbr_info=0, the default: LBR_INFO is not read.  Where the flags live in
 * it (format 5 and 7, Arch LBR; the lab's two CPUs), no entry has a
 * prediction, a cycle count or a type; the path itself is all there, the
 * target's return included.  With lbr_info=1 the same entries have them
 * (branch_info_as_the_lab_made_it).
 */
TEST_F(cap, branch_info_only_when_asked)
{
	unsigned long long fail = ksym("lbr_test_fail");
	const char *site = is_fexit(variant) ? FEXIT_SITE : KRETPROBE_SITE;
	const unsigned int info = LBR_SNAP_BR_MISPRED | LBR_SNAP_BR_PREDICTED |
				  LBR_SNAP_BR_CYCLES;
	int i, j, n, bad = 0, known = 0;

	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	if (self->info.backend == LBR_SNAP_BACKEND_NONE)
		SKIP(return, "no LBR here: %s", self->info.reason);
	if (self->info.backend != LBR_SNAP_BACKEND_ARCH &&
	    self->info.lbr_format != 5 && self->info.lbr_format != 7)
		SKIP(return, "LBR format %u keeps its flags in FROM, not LBR_INFO",
		     self->info.lbr_format);
	ASSERT_EQ(0, trigger("int", -22, 3));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(3, n)
		TH_LOG("%s", lbr_why);
	ASSERT_TRUE(ksyms_snapshot());
	for (i = 0; i < n; i++) {
		const struct rec *r = &self->recs[i];

		EXPECT_LT(8, r->h.nr_entries);
		for (j = 0; j < r->h.nr_entries; j++) {
			const struct lbr_snap_branch *b = &r->br[j];

			if (!(b->flags & info) && !b->cycles &&
			    b->type == LBR_SNAP_BT_UNKNOWN)
				continue;
			if (!bad++)
				TH_LOG("record %d entry %d: %llx -> %llx flags %#x cycles %u type %u, with lbr_info=0",
				       i, j, b->from, b->to, b->flags,
				       b->cycles, b->type);
		}
		if (find_return(r, fail, site) >= 0)
			known++;
	}
	ksyms_drop();
	EXPECT_EQ(0, bad);
	if (return_fits(variant))
		EXPECT_LE(2, known);
}

/*
 * An entry that lands on the hook's return site but is not the function's
 * return: lbr_test_iret() returns by an IRET there (a tail call into
 * lbr_test_iret_tail), as an interrupt taken at the return site before
 * the freeze would, with no delivery entry before it.  The record says
 * NO_RETURN and counts every entry as the probe's, though an entry lands
 * on the site; calls of lbr_test_int in the same load keep their return.
 * A real interrupt in a record's window may push the crafted landing out
 * (the record still says NO_RETURN), or give a control call NO_RETURN:
 * two of the five and one of the three controls may miss (a loaded host
 * gives the guest's timer more ticks a call).
 */
TEST_F(cap, iret_onto_the_return_site_is_no_return)
{
	const char *site = is_fexit(variant) ? FEXIT_SITE : KRETPROBE_SITE;
	unsigned long long tail = ksym("lbr_test_iret_tail");
	unsigned long long tail_end = ksym_end(tail), s, e;
	unsigned long long fail = ksym("lbr_test_fail");
	int i, k, n, ret, landed, unlanded = 0, controls = 0, kept = 0;
	char name[256];

	ASSERT_NE(0, tail);
	ASSERT_NE(0, fail);
	cap_load(_metadata, self, variant,
		 "targets=lbr_test_iret,lbr_test_int capture=all", O_NONBLOCK);
	if (self->info.backend == LBR_SNAP_BACKEND_NONE)
		SKIP(return, "no LBR here: %s", self->info.reason);
	if (!return_fits(variant))
		SKIP(return, "the kretprobe path fills every entry here");
	ret = trigger("iret", -11, 5);
	if (ret == -EOPNOTSUPP)
		SKIP(return, "lbr_test_iret() does not tail-call its IRET here (frame pointers?)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, trigger("int", -22, 3));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(8, n) TH_LOG("%s", lbr_why);
	ASSERT_TRUE(ksyms_snapshot());
	for (i = 0; i < n; i++) {
		const struct rec *r = &self->recs[i];

		if (r->h.retval == -22) {
			/*
			 * The control: a RET onto the site is the return (its
			 * last hop alone where the path takes all but one
			 * entry: AMD behind SRSO).
			 */
			controls++;
			kept += (find_return(r, fail, site) >= 0 ||
				 return_cut(r, site)) &&
				!(r->h.flags & LBR_SNAP_REC_NO_RETURN);
			continue;
		}
		EXPECT_EQ(-11, r->h.retval);
		/* The crafted shape is there: the IRET lands on the site. */
		for (landed = -1, k = r->h.nr_entries - 1; k >= 0; k--)
			if (r->br[k].from >= tail && r->br[k].from < tail_end &&
			    ksym_range(r->br[k].to, name, sizeof(name), &s, &e) &&
			    site_is(site, name)) {
				landed = k;
				break;
			}
		if (landed < 0) {
			unlanded++;
			TH_LOG("record %d: no entry from lbr_test_iret_tail onto the return site",
			       i);
		}
		EXPECT_EQ(LBR_SNAP_REC_NO_RETURN,
			  r->h.flags & LBR_SNAP_REC_NO_RETURN)
			TH_LOG("record %d: the IRET at %d of %u taken for the return",
			       i, landed, r->h.nr_entries);
		EXPECT_EQ(r->h.nr_entries, r->h.probe_entries);
	}
	ksyms_drop();
	EXPECT_EQ(3, controls);
	EXPECT_LE(2, kept);
	EXPECT_GE(2, unlanded);
}

/*
 * AMD Zen 4 and 5 put entries of a wrong path (valid 0, spec 1), holes
 * (valid 0, spec 0) and erratum 1452's bogus records (reserved bit)
 * between retired branches.  The lab does so where LBR_LAB_AMD_SPEC says
 * (lbr-lab-amd-spec=N: after every Nth branch, every 2Nth and every 3Nth,
 * each newer than the branch).  Records must hold retired branches only,
 * none of those: no entry flagged WRONG_PATH and none from or to 0, and
 * a hole must not end the stack (some records then have fewer than the
 * 16 entries, never fewer than 8: at lbr-lab-amd-spec=3 a third of the
 * slots hold such entries, and a hole comes every 6 branches, so a stack
 * that ended at one would keep 6 at most).  With fexit every record
 * still has its function's return newest (probe_entries 0): a wrong path
 * after the return, kept, would count as the hook's.  A kretprobe's path
 * takes 15 of the 16 entries without them: no room is left there.
 */
TEST_F(cap, amd_wrong_path_and_holes)
{
	const char *env = getenv("LBR_LAB_AMD_SPEC");
	int i, j, n, fewer = 0, least = LBR_SNAP_MAX_ENTRIES;

	if (!env || !*env)
		SKIP(return, "LBR_LAB_AMD_SPEC not set: the lab records retired branches only");
	if (!is_fexit(variant))
		SKIP(return, "a kretprobe's path takes 15 of AMD's 16 entries: none left with these");
	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	ASSERT_EQ(LBR_SNAP_BACKEND_AMD, self->info.backend);
	ASSERT_EQ(0, trigger("int", -22, 30));
	n = drain(self->fd, self->recs, MAX_RECS);
	ASSERT_EQ(30, n) TH_LOG("%s", lbr_why);
	for (i = 0; i < n; i++) {
		const struct rec *r = &self->recs[i];

		for (j = 0; j < r->h.nr_entries; j++) {
			EXPECT_FALSE(r->br[j].flags & LBR_SNAP_BR_WRONG_PATH)
				TH_LOG("record %d, entry %d: a wrong path's", i, j);
			EXPECT_TRUE(r->br[j].from && r->br[j].to)
				TH_LOG("record %d, entry %d: 0x%llx -> 0x%llx", i,
				       j, (unsigned long long)r->br[j].from,
				       (unsigned long long)r->br[j].to);
		}
		EXPECT_FALSE(r->h.flags & LBR_SNAP_REC_NO_RETURN)
			TH_LOG("record %d: no return", i);
		EXPECT_EQ(0, r->h.probe_entries)
			TH_LOG("record %d: %u entries after the return", i,
			       r->h.probe_entries);
		fewer += r->h.nr_entries < self->info.lbr_depth;
		if (r->h.nr_entries < least)
			least = r->h.nr_entries;
	}
	EXPECT_LT(0, fewer) TH_LOG("no record lost an entry: is the quirk on?");
	EXPECT_LE((int)self->info.lbr_depth / 2, least)
		TH_LOG("a record of %d entries: did a hole end the stack?", least);
}
