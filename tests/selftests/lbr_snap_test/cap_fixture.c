// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, fixture cap: the capture tests' fixture, run once per
 * hook (variants kretprobe and fexit), and its helpers: cap_load(),
 * vspec(), vparams(), expect_stats(), perf_unthrottled().
 */

FIXTURE(cap) {
	int fd;
	struct lbr_snap_info info;
	struct rec *recs;
	char perf_pct[32];	/* perf_cpu_time_max_percent to put back */
	int pfd;		/* a sampling event, closed before that */
};

#define PERF_PCT "/proc/sys/kernel/perf_cpu_time_max_percent"

/* Write @val to the sysctl file @path; 0 or -errno. */
static int sysctl_write(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!f)
		return -errno;
	if (fputs(val, f) < 0)
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/*
 * TCG runs a PMI slowly: keep perf from throttling the test's events
 * (perf_cpu_time_max_percent 0), until the teardown puts it back.
 */
static int perf_unthrottled(FIXTURE_DATA(cap) *self)
{
	FILE *f = fopen(PERF_PCT, "r");

	if (!f)
		return -errno;
	if (!fgets(self->perf_pct, sizeof(self->perf_pct), f)) {
		self->perf_pct[0] = '\0';
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return sysctl_write(PERF_PCT, "0");
}

/*
 * Every capture test runs once per hook.  The test target's functions all
 * take one argument: fexit targets get "/1" (cap_load(), vspec()).
 */
FIXTURE_VARIANT(cap) {
	const char *hook;
	__u32 hook_id;
};

FIXTURE_VARIANT_ADD(cap, kretprobe) {
	.hook = "kretprobe",
	.hook_id = LBR_SNAP_HOOK_KRETPROBE,
};

FIXTURE_VARIANT_ADD(cap, fexit) {
	.hook = "fexit",
	.hook_id = LBR_SNAP_HOOK_FEXIT,
};

FIXTURE_SETUP(cap)
{
	load_target_module();
	self->fd = -1;
	self->recs = calloc(MAX_RECS, sizeof(struct rec));
	ASSERT_NE(NULL, self->recs);
}

FIXTURE_TEARDOWN(cap)
{
	if (self->pfd > 0)
		close(self->pfd);
	if (self->perf_pct[0])
		sysctl_write(PERF_PCT, self->perf_pct);
	if (self->fd >= 0)
		close(self->fd);
	free(self->recs);
	unload();
}

static bool is_fexit(const FIXTURE_VARIANT(cap) *variant)
{
	return variant->hook_id == LBR_SNAP_HOOK_FEXIT;
}

/* @spec for ADD_TARGET with this variant's hook. */
static const char *vspec(const FIXTURE_VARIANT(cap) *variant,
			 const char *spec)
{
	static char buf[LBR_SNAP_NAME_LEN + 8];

	snprintf(buf, sizeof(buf), "%s%s@%s", spec,
		 is_fexit(variant) && !strchr(spec, '/') ? "/1" : "",
		 variant->hook);
	return buf;
}

/* @params with "/1" after each target for fexit, and hook=. */
static const char *vparams(const FIXTURE_VARIANT(cap) *variant,
			   const char *params)
{
	static char buf[1024];
	const char *p = params, *t = strstr(params, "targets=");
	size_t n = 0;

	while (*p && n < sizeof(buf) - 64) {
		if (t && p > t && (*p == ',' || *p == ' ') && is_fexit(variant)) {
			n += snprintf(buf + n, sizeof(buf) - n, "/1");
			if (*p == ' ')
				t = NULL;
		}
		buf[n++] = *p++;
	}
	if (t && is_fexit(variant))
		n += snprintf(buf + n, sizeof(buf) - n, "/1");
	snprintf(buf + n, sizeof(buf) - n, " hook=%s", variant->hook);
	return buf;
}

static void cap_load(struct __test_metadata *_metadata,
		     FIXTURE_DATA(cap) *self,
		     const FIXTURE_VARIANT(cap) *variant, const char *params,
		     int flags)
{
	params = vparams(variant, params);
	ASSERT_EQ(0, load(params)) TH_LOG("load(%s)", params);
	self->fd = dev_open(flags);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, get_info(self->fd, &self->info));
}

/* Close the device and unload the module, as the teardown would. */
static void cap_unload(struct __test_metadata *_metadata,
		       FIXTURE_DATA(cap) *self)
{
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unload());
}

static void expect_stats(struct __test_metadata *_metadata,
			 const FIXTURE_VARIANT(cap) *variant, int fd,
			 unsigned int id, unsigned long long hits,
			 unsigned long long captured,
			 unsigned long long filtered)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;

	ASSERT_EQ(0, get_stats(fd, &hdr, st, LBR_SNAP_MAX_TARGETS));
	ASSERT_LT(id, hdr.nr);
	EXPECT_EQ(hits, st[id].hits);
	EXPECT_EQ(captured, st[id].captured);
	EXPECT_EQ(filtered, st[id].filtered);
	EXPECT_EQ(0, st[id].dropped);
	EXPECT_EQ(0, st[id].missed);
	EXPECT_EQ(st[id].hits, st[id].captured + st[id].filtered +
		  st[id].dropped);
	EXPECT_EQ(variant->hook_id, st[id].hook);
	/* LBR stayed on (or there is none): no freeze found it off. */
	EXPECT_EQ(0, st[id].lbr_off);
}
