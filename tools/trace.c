// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap trace: attach targets, run a command, print the records it
 * caused, detach, exit with the command's status.
 *
 * With /dev/lbr_snap missing, the module is loaded with
 * "modprobe lbr_snap targets=<the -e list>" and unloaded at the end (and
 * lbr_snap_fexit with it, unless calls are still inside its functions);
 * otherwise each -e is attached with LBR_SNAP_IOC_ADD_TARGET and detached
 * with DEL_TARGET (a target that was already attached is used and left
 * alone).  --all switches the capture mode to all returns and puts back
 * the previous mode.  Cleanup runs on every way out: the command's exit,
 * errors, SIGINT, SIGTERM and SIGHUP (which are passed on to the command).
 *
 * Records are those of the command's process and its descendants, and
 * not older than the command.  Descendants are learnt from the kernel's
 * process events connector (procev.c): each fork of a known process is
 * queued when it happens, so a child that exited and was reaped before its
 * records are read is still known.  Where the connector is not available
 * (no CONFIG_PROC_EVENTS, no CAP_NET_ADMIN) or lost events, the fallback is
 * the /proc parent chain of a record's tgid and a scan of /proc every poll
 * interval (50 ms); it misses a descendant that exits and is reaped between
 * two scans, and its records are not printed.  Either way a pid of the set
 * that is reused by an unrelated process after it exits would be taken as
 * one of the command's.  Records of other processes are read (and so taken
 * from any other reader of the device) but not printed, unless --all-tasks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "device.h"
#include "procev.h"
#include "stream.h"
#include "btf.h"
#include "trace.h"
#include "util.h"

#define POLL_MS		50
#define MAX_DEPTH	64	/* /proc parent chain walked per record */

struct tracer {
	const struct trace_opts *t;
	/* The -e specs completed from BTF (btf_complete_spec()). */
	char specs[TRACE_MAX_SPECS][LBR_SNAP_NAME_LEN + 8];
	int fd;
	bool loaded;			/* we ran modprobe */
	bool loaded_fexit;		/* ... and it loaded lbr_snap_fexit */
	bool added[TRACE_MAX_SPECS];	/* we attached -e number i */
	bool existed[TRACE_MAX_SPECS];	/* -e number i was a target already */
	unsigned int hooks[TRACE_MAX_SPECS];	/* the hook ADD_TARGET gave */
	/* Each -e's counters when the command started; found[i]: listed */
	struct lbr_snap_target_stats before[TRACE_MAX_SPECS];
	bool found[TRACE_MAX_SPECS];
	unsigned long long printed;	/* records of the command printed */
	unsigned long long others;	/* records read, not the command's */
	bool spawned;			/* the command was started */
	bool capture_set;
	unsigned int old_capture;
	bool lbr_set;			/* --lbr set the LBR filter */
	struct lbr_snap_lbr_filter old_lbr;
	unsigned long long start_ns;
	pid_t *pids;			/* the command and its descendants */
	size_t nr_pids, cap_pids;
	int procev_fd;			/* fork events, or -1 */
	bool procev_lost;		/* fall back to /proc */
	struct ksyms ks;
};

static volatile sig_atomic_t got_signal;
static volatile pid_t child_pid;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	got_signal = sig;
	/* A terminal's ^C reached the command already. */
	if (child_pid > 0 && si->si_code != SI_KERNEL)
		kill(child_pid, sig);
}

static void setup_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO | SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static bool has_cap_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data) < 0)
		return geteuid() == 0;
	return data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &
	       CAP_TO_MASK(CAP_SYS_ADMIN);
}

/* Run a command and wait; returns its exit status, or -1. */
static int run_wait(char *const argv[])
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (!pid) {
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int load_module(struct tracer *tr)
{
	char arg[TRACE_MAX_SPECS * (LBR_SNAP_NAME_LEN + 8) + 16] = "targets=";
	/* A void target loads only with capture=all. */
	char *argv[] = { "modprobe", "lbr_snap", arg,
			 tr->t->capture_all ? "capture=all" : NULL, NULL };
	unsigned int i;

	for (i = 0; i < tr->t->nr_specs; i++) {
		if (i)
			strcat(arg, ",");
		strcat(arg, tr->specs[i]);
	}
	tr->loaded_fexit = access("/sys/module/lbr_snap_fexit", F_OK) != 0;
	if (run_wait(argv)) {
		pr_err("modprobe lbr_snap %s failed", arg);
		return -EXIT_ERROR;
	}
	tr->loaded = true;
	return 0;
}

/*
 * rmmod lbr_snap, then, if this run loaded it, its dependency
 * lbr_snap_fexit.  That one holds itself until the removed trampolines
 * have drained: two RCU Tasks grace periods, or as long as a call stays
 * inside a traced function (the kernel log says which).  Wait up to 10 s
 * for the first; say so, not fail, for the second.
 */
static void unload_module(const struct tracer *tr)
{
	int i;

	if (syscall(SYS_delete_module, "lbr_snap", O_NONBLOCK) &&
	    errno != ENOENT) {
		pr_err("rmmod lbr_snap failed: %s", strerror(errno));
		return;
	}
	if (!tr->loaded_fexit)
		return;
	for (i = 0; i < 200; i++) {
		if (!syscall(SYS_delete_module, "lbr_snap_fexit", O_NONBLOCK) ||
		    errno == ENOENT)
			return;
		if (errno != EWOULDBLOCK && errno != EAGAIN)
			break;
		usleep(50 * 1000);
	}
	fprintf(stderr, "lbr-snap: lbr_snap_fexit stays loaded: %s (calls still inside traced functions: see the kernel log)\n",
		strerror(errno));
}

static int target_ctl(struct tracer *tr, unsigned long req, const char *spec,
		      unsigned int *hook)
{
	struct lbr_snap_target_ctl ctl = { 0 };
	int ret;

	snprintf(ctl.spec, sizeof(ctl.spec), "%s", spec);
	if (req == LBR_SNAP_IOC_DEL_TARGET)
		ctl.spec[strcspn(ctl.spec, "%/@=")] = '\0';
	ret = ioctl(tr->fd, req, &ctl);
	if (!ret && hook)
		*hook = ctl.hook;
	return ret;
}

static void detach_all(struct tracer *tr)
{
	unsigned int i;

	for (i = 0; i < tr->t->nr_specs; i++) {
		if (!tr->added[i])
			continue;
		if (target_ctl(tr, LBR_SNAP_IOC_DEL_TARGET, tr->specs[i], NULL))
			pr_err("DEL_TARGET %s: %s", tr->specs[i],
			       strerror(errno));
		tr->added[i] = false;
	}
}

static int attach_all(struct tracer *tr)
{
	const char *spec;
	unsigned int i;

	for (i = 0; i < tr->t->nr_specs; i++) {
		spec = tr->specs[i];
		if (!target_ctl(tr, LBR_SNAP_IOC_ADD_TARGET, spec,
				&tr->hooks[i])) {
			tr->added[i] = true;
		} else if (errno == EEXIST) {
			tr->existed[i] = true;
			pr_err("%s: already a target (or an alias of one): using it, leaving it attached",
			       spec);
		} else {
			pr_err("ADD_TARGET %s: %s", spec, strerror(errno));
			return errno == EPERM ? -EXIT_PERM : -EXIT_ERROR;
		}
	}
	return 0;
}

static int set_capture(struct tracer *tr, const struct lbr_snap_info *info)
{
	if (!tr->t->capture_all)
		return 0;
	tr->old_capture = info->capture;
	if (ioctl(tr->fd, LBR_SNAP_IOC_SET_CAPTURE,
		  (unsigned long)LBR_SNAP_CAPTURE_ALL) < 0)
		return ioctl_error(tr->t->device, "SET_CAPTURE");
	tr->capture_set = true;
	return 0;
}

/* --lbr: the LBR filter for the run; teardown() puts the old one back. */
static int set_lbr_filter(struct tracer *tr, const struct lbr_snap_info *info)
{
	if (!tr->t->lbr)
		return 0;
	tr->old_lbr = (struct lbr_snap_lbr_filter){
		.cpl = info->lbr_cpl, .kinds = info->lbr_kinds,
	};
	if (!ioctl(tr->fd, LBR_SNAP_IOC_SET_LBR_FILTER, &tr->t->lbr_filter)) {
		tr->lbr_set = true;
		return 0;
	}
	if (errno == EBUSY) {
		/* Applied but where someone else holds it: undone at the end. */
		pr_err("--lbr=%s: someone else holds the LBR filter on some CPUs: left as it is there (see the kernel log)",
		       tr->t->lbr);
		tr->lbr_set = true;
		return 0;
	}
	pr_err("--lbr=%s: %s", tr->t->lbr,
	       errno == EOPNOTSUPP ?
	       "this CPU cannot filter so, or perf cannot (mode=raw can)" :
	       errno == ENODEV ? "no LBR on this machine" :
	       errno == ENOTTY ? "the module is too old for it" :
	       strerror(errno));
	return -EXIT_ERROR;
}

static int open_traced_device(struct tracer *tr)
{
	const struct trace_opts *t = tr->t;
	int ret;

	if (access(t->device, F_OK) && errno == ENOENT &&
	    !strcmp(t->device, LBR_SNAP_DEVICE)) {
		ret = load_module(tr);
		if (ret)
			return ret;
	}
	/* Targets and the capture mode change through a writable one. */
	tr->fd = open_device(t->device, O_RDWR | O_NONBLOCK);
	return tr->fd < 0 ? tr->fd : 0;
}

/* Load or attach, and set the capture mode; returns 0 or -exit code. */
static int setup(struct tracer *tr)
{
	struct lbr_snap_info info;
	int ret;

	ret = open_traced_device(tr);
	if (ret)
		return ret;
	ret = get_device_info(tr->fd, tr->t->device, &info);
	if (ret)
		return ret;
	/* Capture mode first: a void target attaches only in mode all. */
	ret = set_capture(tr, &info);
	if (!ret)
		ret = set_lbr_filter(tr, &info);
	if (ret || tr->loaded)
		return ret;
	return attach_all(tr);
}

/* setup() backwards: a void target goes before capture=errors can come. */
static void teardown(struct tracer *tr)
{
	if (tr->fd >= 0)
		detach_all(tr);
	if (tr->capture_set &&
	    ioctl(tr->fd, LBR_SNAP_IOC_SET_CAPTURE,
		  (unsigned long)tr->old_capture) < 0)
		pr_err("SET_CAPTURE: %s: capture mode not restored",
		       strerror(errno));
	if (tr->lbr_set && !tr->loaded &&
	    ioctl(tr->fd, LBR_SNAP_IOC_SET_LBR_FILTER, &tr->old_lbr) < 0)
		pr_err("SET_LBR_FILTER: %s: LBR filter not restored",
		       strerror(errno));
	if (tr->fd >= 0) {
		close(tr->fd);
		tr->fd = -1;
	}
	if (tr->loaded)
		unload_module(tr);
}

static void add_pid(struct tracer *tr, pid_t pid)
{
	if (tr->nr_pids == tr->cap_pids) {
		tr->cap_pids = tr->cap_pids ? 2 * tr->cap_pids : 64;
		tr->pids = xrealloc(tr->pids, tr->cap_pids * sizeof(pid_t));
	}
	tr->pids[tr->nr_pids++] = pid;
}

static bool known_pid(const struct tracer *tr, pid_t pid)
{
	size_t i;

	for (i = 0; i < tr->nr_pids; i++)
		if (tr->pids[i] == pid)
			return true;
	return false;
}

/* The parent of @pid from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* comm may hold spaces and parentheses */
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/* Whether @pid descends from a known pid; if so it becomes known. */
static bool descends(struct tracer *tr, pid_t pid)
{
	pid_t p = pid;
	int depth;

	for (depth = 0; depth < MAX_DEPTH && p > 1; depth++) {
		if (known_pid(tr, p)) {
			if (p != pid)
				add_pid(tr, pid);
			return true;
		}
		p = parent_of(p);
	}
	return false;
}

static void on_fork(pid_t parent, pid_t child, void *arg)
{
	struct tracer *tr = arg;

	if (known_pid(tr, parent) && !known_pid(tr, child))
		add_pid(tr, child);
}

/* Learn the forks queued since the last call; false: use /proc instead. */
static bool read_forks(struct tracer *tr)
{
	if (tr->procev_fd < 0 || tr->procev_lost)
		return false;
	if (!procev_drain(tr->procev_fd, on_fork, tr)) {
		pr_err("process events lost: finding descendants in /proc");
		tr->procev_lost = true;
	}
	return !tr->procev_lost;
}

/* Learn the descendants alive now. */
static void scan_proc(struct tracer *tr)
{
	struct dirent *de;
	DIR *d;
	char *end;
	long pid;

	if (read_forks(tr))
		return;
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 1)
			continue;
		descends(tr, pid);
	}
	closedir(d);
}

static bool wanted(struct tracer *tr, const struct lbr_snap_record *h)
{
	if (h->ts_ns < tr->start_ns)
		return false;
	if (tr->t->all_tasks || known_pid(tr, h->tgid))
		return true;
	if (read_forks(tr))
		return known_pid(tr, h->tgid);
	return descends(tr, h->tgid);
}

/* stream_opts.handle: print the record if the command caused it. */
static bool trace_record(const struct rec *r, void *arg)
{
	struct tracer *tr = arg;

	if (!wanted(tr, &r->hdr)) {
		/* Records older than the command are no one's concern. */
		if (r->hdr.ts_ns >= tr->start_ns)
			tr->others++;
		return false;
	}
	tr->printed++;
	if (tr->t->json)
		print_rec_json(stdout, r, &tr->ks);
	else
		print_rec_text(stdout, r, &tr->ks, &tr->t->po);
	return true;
}

/* Read what is there now; returns 0 or -exit code. */
static int drain(struct stream *s, int fd)
{
	int ret;

	do {
		ret = stream_pump(s, fd);
	} while (ret == 1);
	return ret < 0 ? ret : 0;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The name of spec @spec: up to its %type, /N, @hook or =errors. */
static int spec_name_len(const char *spec)
{
	return strcspn(spec, "%/@=");
}

/*
 * Each -e target's counters now, from GET_STATS, matched by name: @found[i]
 * is false for one the module does not list (or when GET_STATS fails).
 */
static void read_counters(struct tracer *tr,
			  struct lbr_snap_target_stats *out, bool *found)
{
	struct lbr_snap_target_stats ts[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats st = {
		.nr = LBR_SNAP_MAX_TARGETS, .entry_size = sizeof(*ts),
		.stats_ptr = (uintptr_t)ts,
	};
	unsigned int i, j, nr;
	int n;

	memset(ts, 0, sizeof(ts));
	for (i = 0; i < tr->t->nr_specs; i++)
		found[i] = false;
	if (ioctl(tr->fd, LBR_SNAP_IOC_GET_STATS, &st) < 0)
		return;
	nr = st.nr < LBR_SNAP_MAX_TARGETS ? st.nr : LBR_SNAP_MAX_TARGETS;
	for (i = 0; i < tr->t->nr_specs; i++) {
		n = spec_name_len(tr->specs[i]);
		for (j = 0; j < nr; j++) {
			if (strncmp(ts[j].name, tr->specs[i], n) ||
			    ts[j].name[n])
				continue;
			out[i] = ts[j];
			found[i] = true;
			break;
		}
	}
}

/*
 * On stderr, once the targets are attached and the command about to run:
 * "lbr-snap: attached foo (kretprobe), bar%ptr (fexit); running CMD".
 */
static void say_attached(const struct tracer *tr)
{
	const struct trace_opts *t = tr->t;
	unsigned int i;

	fprintf(stderr, "lbr-snap: %s ", tr->loaded ?
		"loaded lbr_snap with" : "attached");
	for (i = 0; i < t->nr_specs; i++) {
		fprintf(stderr, "%s%s", i ? ", " : "", tr->specs[i]);
		if (tr->added[i])
			fprintf(stderr, " (%s)", hook_name(tr->hooks[i]));
		else if (tr->found[i])
			fprintf(stderr, " (%s%s)", hook_name(tr->before[i].hook),
				tr->existed[i] ? ", a target already" : "");
		else if (tr->existed[i])
			fputs(" (a target already)", stderr);
	}
	fprintf(stderr, "%s%s%s; running %s\n",
		t->capture_all ? ", capturing every return" : "",
		t->lbr ? ", LBR filter " : "", t->lbr ? t->lbr : "",
		t->argv[0]);
}

static unsigned long long delta(unsigned long long now,
				unsigned long long then)
{
	return now >= then ? now - then : now;
}

/*
 * On stderr, after the command, while the targets are still attached
 * (their counters go with them): how many records were printed, each
 * target's counters over the command's run (returns seen, captured,
 * filtered, dropped), why there may be no records, and stats' hints.
 */
static void say_summary(struct tracer *tr)
{
	struct lbr_snap_target_stats now[TRACE_MAX_SPECS], *d;
	unsigned long long hits = 0, captured = 0, filtered = 0, dropped = 0;
	bool found[TRACE_MAX_SPECS];
	const struct trace_opts *t = tr->t;
	unsigned int i;

	read_counters(tr, now, found);
	fprintf(stderr, "lbr-snap: trace: %llu %s printed",
		tr->printed, tr->printed == 1 ? "record" : "records");
	if (tr->others)
		fprintf(stderr, " (%llu of other processes not: --all-tasks prints them)",
			tr->others);
	fputc('\n', stderr);
	for (i = 0; i < t->nr_specs; i++) {
		if (!found[i]) {
			fprintf(stderr, "lbr-snap: %s: not listed by the module: no counters\n",
				tr->specs[i]);
			continue;
		}
		d = &now[i];
		if (tr->found[i]) {
			d->hits = delta(d->hits, tr->before[i].hits);
			d->captured = delta(d->captured, tr->before[i].captured);
			d->filtered = delta(d->filtered, tr->before[i].filtered);
			d->dropped = delta(d->dropped, tr->before[i].dropped);
			d->missed = delta(d->missed, tr->before[i].missed);
		}
		fprintf(stderr, "lbr-snap: %s (%s): %llu %s: %llu captured, %llu filtered, %llu dropped",
			tr->specs[i], hook_name(d->hook), d->hits,
			d->hits == 1 ? "return" : "returns", d->captured,
			d->filtered, d->dropped);
		if (d->missed)
			fprintf(stderr, ", %llu missed by kretprobes",
				d->missed);
		fputc('\n', stderr);
		hits += d->hits;
		captured += d->captured;
		filtered += d->filtered;
		dropped += d->dropped;
	}
	if (dropped)
		fprintf(stderr, "lbr-snap: %llu %s dropped: the module's buffer was full (buffer_kb=)\n",
			dropped, dropped == 1 ? "record" : "records");
	if (!tr->printed) {
		if (captured)
			fprintf(stderr, "lbr-snap: no records of %s: the %llu captured were other processes' (--all-tasks prints them)\n",
				t->argv[0], captured);
		else if (filtered && filtered == hits)
			fprintf(stderr, "lbr-snap: no records: every return was filtered%s\n",
				t->capture_all ? "" :
				" (capture errors: --all records every return)");
		else
			fprintf(stderr, "lbr-snap: no records: %s\n",
				hits ? "none of the returns was captured" :
				"no target was hit while it ran");
	}
	for (i = 0; i < t->nr_specs; i++)
		if (found[i])
			print_target_hint(stderr, "lbr-snap: hint: ", &now[i]);
}

/*
 * Fork and exec the command.  Signals are blocked across the fork, so that
 * none is lost in between: one that came before (after setup()'s check)
 * means no command at all, -1 with errno EINTR; one sent after reaches
 * the parent once child_pid is set (the handler passes it on) and the
 * child only with the default action (not our handler, whose copy there
 * has no command to pass it to).
 */
static pid_t spawn(struct tracer *tr, char **argv)
{
	sigset_t all, old;
	pid_t pid;

	fflush(stdout);		/* nothing for the child to print again */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	if (got_signal) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		errno = EINTR;
		return -1;
	}
	say_attached(tr);
	tr->spawned = true;
	fflush(stderr);
	pid = fork();
	if (pid) {
		if (pid > 0)
			child_pid = pid;
		sigprocmask(SIG_SETMASK, &old, NULL);
		return pid;
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	execvp(argv[0], argv);
	pr_err("%s: %s", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/*
 * Run the command, printing its records while it runs; then drain.
 * Returns its exit code, or -exit code on trouble reading records.
 */
static int run_command(struct tracer *tr)
{
	struct stream_opts so = { .path = tr->t->device, .ks = &tr->ks,
				  .handle = trace_record, .arg = tr };
	struct pollfd pfd = { .fd = tr->fd, .events = POLLIN };
	struct stream *s = stream_new(&so);
	int status = 0, ret = 0;
	pid_t pid;

	tr->procev_fd = procev_open();
	tr->start_ns = now_ns();
	read_counters(tr, tr->before, tr->found);
	pid = spawn(tr, tr->t->argv);
	if (pid < 0) {
		/* Signalled before the command ran: as in trace_run(). */
		if (got_signal) {
			ret = -(128 + got_signal);
		} else {
			pr_err("fork: %s", strerror(errno));
			ret = -EXIT_ERROR;
		}
		stream_free(s);
		procev_close(tr->procev_fd);
		return ret;
	}
	add_pid(tr, pid);
	for (;;) {
		scan_proc(tr);
		if (!ret)
			ret = drain(s, tr->fd);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		poll(&pfd, 1, POLL_MS);
	}
	child_pid = 0;
	if (!ret)
		ret = drain(s, tr->fd);
	stream_free(s);
	procev_close(tr->procev_fd);
	return ret ? ret : exit_code(status);
}

/* Returns the command's exit code, or -exit code. */
int trace_run(const struct trace_opts *t)
{
	struct tracer tr = { .t = t, .fd = -1 };
	unsigned int i;
	char why[128];
	int ret;

	if (!has_cap_sys_admin()) {
		fputs("lbr-snap trace needs root (CAP_SYS_ADMIN)\n", stderr);
		return -EXIT_PERM;
	}
	for (i = 0; i < t->nr_specs; i++) {
		if (btf_complete_spec(t->specs[i], tr.specs[i],
				      sizeof(tr.specs[i]), why, sizeof(why))) {
			fprintf(stderr, "lbr-snap: -e %s: too long\n",
				t->specs[i]);
			return -EXIT_USAGE;
		}
		/* The module refuses it too, with less to go on. */
		if (strstr(tr.specs[i], "%void") && !t->capture_all) {
			fprintf(stderr, "lbr-snap: -e %s returns void: there is no error to catch; trace --all records every return\n",
				tr.specs[i]);
			return -EXIT_USAGE;
		}
	}
	stdout_buffered();
	setup_signals();
	ret = setup(&tr);
	if (!ret && got_signal)
		ret = -(128 + got_signal);
	if (!ret) {
		ksyms_load(&tr.ks, t->kallsyms);
		ksyms_load_lines(&tr.ks, t->kallsyms, t->vmlinux);
		ret = run_command(&tr);
		ksyms_free(&tr.ks);
	}
	if (tr.spawned) {
		/* The records first, then what they add up to. */
		fflush(stdout);
		say_summary(&tr);
	}
	teardown(&tr);
	free(tr.pids);
	return ret;
}
