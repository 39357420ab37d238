// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, fixture fexit: what only the fexit hook has.  The
 * fixture, its teardown (clocksource, function_graph, the kprobe event
 * of fexit_detach.c) and add_target(), stats_hook().
 */

FIXTURE(fexit) {
	int fd;
	struct rec *recs;
	char clocksource[64];	/* to restore, if a test changed it */
	bool traced;		/* a test set up the lbr_snap_rude event */
	bool graphed;		/* a test turned function_graph on */
};

static int tracefs_write(const char *name, const char *str, int flags);

static int use_clocksource(const char *cs);
static int kmsg_count(const char *text);

FIXTURE_SETUP(fexit)
{
	load_target_module();
	self->fd = -1;
	self->recs = calloc(MAX_RECS, sizeof(struct rec));
	ASSERT_NE(NULL, self->recs);
}

FIXTURE_TEARDOWN(fexit)
{
	if (self->fd >= 0)
		close(self->fd);
	free(self->recs);
	unload();
	if (self->clocksource[0])
		use_clocksource(self->clocksource);
	if (self->graphed) {
		tracefs_write("current_tracer", "nop", 0);
		tracefs_write("set_ftrace_filter", "", O_TRUNC);
	}
	if (self->traced) {
		tracefs_write("events/kprobes/lbr_snap_rude/enable", "0", 0);
		tracefs_write("options/stacktrace", "0", 0);
		tracefs_write("kprobe_events", "-:lbr_snap_rude", O_APPEND);
	}
}

/* ADD_TARGET returning the hook it got; 0 or -errno. */
static int add_target(int fd, const char *spec, __u32 *hook)
{
	struct lbr_snap_target_ctl ctl = { 0 };

	snprintf(ctl.spec, sizeof(ctl.spec), "%s", spec);
	if (ioctl(fd, LBR_SNAP_IOC_ADD_TARGET, &ctl))
		return -errno;
	*hook = ctl.hook;
	return 0;
}

static __u32 stats_hook(int fd, unsigned int i)
{
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;

	if (get_stats(fd, &hdr, st, LBR_SNAP_MAX_TARGETS) || i >= hdr.nr)
		return ~0u;
	return st[i].hook;
}
