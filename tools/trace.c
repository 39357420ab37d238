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

#include "device.h"
#include "module.h"
#include "procev.h"
#include "recording.h"
#include "stream.h"
#include "btf.h"
#include "trace.h"
#include "trace_int.h"
#include "util.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434	/* 5.3's, the same on every architecture */
#endif

#define POLL_MS		50
#define MAX_DEPTH	64	/* /proc parent chain walked per record */

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
	/* A file too big for RLIMIT_FSIZE fails its write (EFBIG): no kill. */
	signal(SIGXFSZ, SIG_IGN);
}

/*
 * modprobe lbr_snap with one target (it loads with one at least): the
 * first one by one, else the first of the batch; the others are added
 * after (trace_attach()), since a string parameter takes 1,024 bytes at
 * most (param_set_charp()).
 */
/* How many CPUs the kernel may ever have (its per-CPU buffers), or 0. */
static unsigned int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned int a, b, n = 0;
	char sep;

	if (!f)
		return 0;
	while (fscanf(f, "%u", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' &&
		    fscanf(f, "%u%c", &b, &sep) < 1)
			break;
		n += b >= a ? b - a + 1 : 0;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n;
}

static int load_module(struct tracer *tr)
{
	char arg[LBR_SNAP_NAME_LEN + 8 + 16], buf[32];
	char *argv[7] = { "modprobe", "lbr_snap", arg };
	unsigned int n = 3, cpus = possible_cpus();
	struct tgt *g = NULL;
	char *at;
	size_t i;
	int ret;

	/* A void target loads only with capture=all. */
	if (tr->t->capture_all)
		argv[n++] = "capture=all";
	/*
	 * why: call stacks of 64 frames (the default is 16), for a record's
	 * depth among the hooked functions: each hooked call takes three
	 * frames under fexit (its call site, its trampoline, its fentry
	 * call's return), so 16 end some five hooked calls in.
	 */
	if (tr->t->why)
		argv[n++] = "stack_depth=64";
	/*
	 * why: a buffer of 1 MiB a CPU (the default is 256 KiB), 64 MiB in
	 * all at most (down to the default), for the bursts of errors of a
	 * command's thousands of functions.  The module allocates it on
	 * every possible CPU.
	 */
	if (tr->t->why && cpus && cpus < 256) {
		snprintf(buf, sizeof(buf), "buffer_kb=%u",
			 cpus > 64 ? 65536 / cpus : 1024);
		argv[n++] = buf;
	}

	for (i = 0; i < tr->nr && !g; i++)
		if (!tr->tg[i].batch)
			g = &tr->tg[i];
	if (!g && tr->nr)
		g = &tr->tg[0];
	if (g) {
		g->batch = false;
		g->loaded = true;
	}
	snprintf(arg, sizeof(arg), "targets=%s", g ? g->spec : "");
	tr->loaded_fexit = access("/sys/module/lbr_snap_fexit", F_OK) != 0;
	ret = module_run(argv);
	/* A buffer this machine cannot give: the default one. */
	if (ret && argv[n - 1] == buf) {
		argv[n - 1] = NULL;
		ret = module_run(argv);
	}
	/*
	 * why's first target by fexit, on a kernel without ftrace direct
	 * calls: by the module's default hook, a kretprobe (attach_batch()
	 * then says what why falls back to).
	 */
	at = tr->t->why ? strstr(arg, "@fexit") : NULL;
	if (ret && at) {
		memmove(at, at + 6, strlen(at + 6) + 1);
		ret = module_run(argv);
	}
	if (ret) {
		pr_err("modprobe lbr_snap %s failed", arg);
		return -EXIT_ERROR;
	}
	tr->loaded = true;
	return 0;
}

/* rmmod lbr_snap, and lbr_snap_fexit if this run loaded it. */
static void unload_module(const struct tracer *tr)
{
	module_unload(tr->loaded_fexit);
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
	/* why's own default: no LBR, or not that filter, is no failure. */
	if (tr->t->lbr_default && (errno == ENODEV || errno == EOPNOTSUPP)) {
		pr_err("LBR filter %s: %s: the records keep what LBR records as it is",
		       tr->t->lbr, errno == ENODEV ? "no LBR on this machine" :
		       "this CPU or perf cannot filter so");
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
	tr->wr.stack_max = info.stack_depth;
	/* Capture mode first: a void target attaches only in mode all. */
	ret = set_capture(tr, &info);
	if (!ret)
		ret = set_lbr_filter(tr, &info);
	if (ret)
		return ret;
	return trace_attach(tr);
}

/* setup() backwards: a void target goes before capture=errors can come. */
static void teardown(struct tracer *tr)
{
	/* A module this run loaded goes with its targets and settings. */
	if (tr->tree && tr->fd >= 0 && !tr->loaded) {
		struct lbr_snap_filter off = { 0 };

		if (ioctl(tr->fd, LBR_SNAP_IOC_SET_FILTER, &off))
			pr_err("SET_FILTER: %s: the tree filter stays set",
			       strerror(errno));
	}
	if (tr->fd >= 0 && !tr->loaded)
		trace_detach(tr);
	if (tr->capture_set && !tr->loaded &&
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
	/* The module recorded the command's tasks only. */
	if (tr->tree)
		return true;
	if (tr->t->all_tasks || known_pid(tr, h->tgid))
		return true;
	if (read_forks(tr))
		return known_pid(tr, h->tgid);
	return descends(tr, h->tgid);
}

/*
 * why: the addresses of its entry functions, to tell their records, and
 * of every function it hooked, to count a record's depth among them.
 */
static void entry_addrs(struct tracer *tr)
{
	size_t i, n = tr->nr ? tr->nr : 1;
	struct why_rec *wr = &tr->wr;

	wr->entry = xrealloc(NULL, n * sizeof(*wr->entry));
	wr->hooked = xrealloc(NULL, n * sizeof(*wr->hooked));
	for (i = 0; i < tr->nr; i++) {
		const struct tgt *g = &tr->tg[i];
		unsigned long long a = g->addr;

		/* Named, not a pattern's: found by its name. */
		if (!a)
			a = ksyms_addr_of(&tr->ks, g->spec,
					  strcspn(g->spec, "%/@="));
		if (!a)
			continue;
		wr->hooked[wr->nr_hooked++] = a;
		if (g->arg < tr->t->nr_entry)
			wr->entry[wr->nr_entry++] = a;
	}
	qsort(wr->entry, wr->nr_entry, sizeof(*wr->entry), cmp_ull);
	qsort(wr->hooked, wr->nr_hooked, sizeof(*wr->hooked), cmp_ull);
	why_hooked(tr->why, wr->hooked, wr->nr_hooked, wr->stack_max);
}

/*
 * why -o failed: said, and the run goes on without it; the file keeps
 * the whole records written before.
 */
static void rec_fail(struct tracer *tr, int err)
{
	if (err)
		pr_err("%s: %s: the recording stops here, after %llu records",
		       tr->t->output, strerror(err), tr->rec_nr);
	recording_close(tr->rec, tr->rec_started);
	tr->rec = NULL;
	tr->rec_failed = true;
}

/*
 * why -o: the header, once the tree filter is known and before any
 * record of the command, with what why -i needs besides the records.
 */
static void rec_begin(struct tracer *tr)
{
	char *lines;

	if (!tr->rec || tr->rec_started)
		return;
	tr->wr.tree = tr->tree;
	lines = why_rec_lines(&tr->wr);
	if (recording_header(tr->rec, tr->t->kallsyms, NULL, lines))
		rec_fail(tr, 0);
	else
		tr->rec_started = true;
	free(lines);
}

/*
 * why: the tree filter on the command, before it runs; a module before
 * the filter has it read everyone's records, which are grouped by thread
 * alone.  Returns 0, or -1 with errno.
 */
static int follow(struct tracer *tr, pid_t pid)
{
	struct lbr_snap_filter f = {
		.flags = LBR_SNAP_FILTER_TREE, .tgid = pid,
	};

	if (!ioctl(tr->fd, LBR_SNAP_IOC_SET_FILTER, &f)) {
		tr->tree = true;
		rec_begin(tr);
		return 0;
	}
	if (errno != EINVAL)
		return -1;
	pr_err("this lbr_snap module has no tree filter: the command's failures are put together by thread, not by system call (update the module)");
	why_no_tree(tr->why);
	rec_begin(tr);
	return 0;
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
	if (tr->rec) {
		int err = recording_put(tr->rec, r);

		if (err)
			rec_fail(tr, -err);
		else
			tr->rec_nr++;
	}
	if (tr->why)
		why_add(tr->why, r, why_rec_is_entry(&tr->wr, r->hdr.func_addr));
	else if (tr->t->json)
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

/*
 * @name as execvp() finds it in PATH, into @buf; @name itself when it has
 * a slash or is not found (execvp() then says why).  why resolves it
 * before the fork: execvp()'s own search would make the failing execve()
 * calls of the command's.
 */
static const char *find_command(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;
	size_t n;

	if (strchr(name, '/') || !*name)
		return name;
	for (p = path ? path : "/usr/local/bin:/bin:/usr/bin"; *p; p = end) {
		end = strchrnul(p, ':');
		n = end - p;
		if (snprintf(buf, len, "%.*s%s%s", (int)n, p, n ? "/" : "",
			     name) < (int)len && !access(buf, X_OK))
			return buf;
		if (*end)
			end++;
	}
	return name;
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
	int go[2] = { -1, -1 };
	char path[4096];
	const char *file = tr->why ? find_command(argv[0], path, sizeof(path)) :
				     argv[0];
	pid_t pid;

	fflush(stdout);		/* nothing for the child to print again */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	if (got_signal) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		errno = EINTR;
		return -1;
	}
	/* why: the command waits for the tree filter (follow()). */
	if (tr->why && pipe2(go, O_CLOEXEC)) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	trace_say_attached(tr);
	tr->spawned = true;
	fflush(stderr);
	pid = fork();
	if (pid) {
		if (pid > 0)
			child_pid = pid;
		if (pid > 0 && tr->why && follow(tr, pid)) {
			pr_err("SET_FILTER: %s: not running %s",
			       strerror(errno), argv[0]);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			child_pid = 0;
			pid = -2;	/* said */
		}
		if (tr->why) {
			if (pid > 0 && write(go[1], "", 1) != 1)
				kill(pid, SIGKILL);
			close(go[0]);
			close(go[1]);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		return pid;
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (tr->why) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
	}
	if (file != argv[0])
		execv(file, argv);
	execvp(argv[0], argv);
	pr_err("%s: %s", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Whether --duration has passed since the command started. */
static bool duration_over(const struct tracer *tr)
{
	return tr->t->duration &&
	       now_ns() - tr->start_ns >= tr->t->duration * 1000000000ull;
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
	unsigned long long term_ns = 0;
	int status = 0, ret = 0;
	pid_t pid;

	tr->procev_fd = procev_open();
	tr->start_ns = now_ns();
	trace_read_before(tr);
	pid = spawn(tr, tr->t->argv);
	if (pid < 0) {
		/* Signalled before the command ran: as in trace_run(). */
		if (got_signal) {
			ret = -(128 + got_signal);
		} else {
			if (pid == -1)
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
		/* No more reading: the device would wake every poll. */
		if (ret)
			pfd.fd = -1;
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		/* --duration: SIGTERM, and SIGKILL 2 s later. */
		if (!term_ns && duration_over(tr)) {
			pr_err("%u s (--duration) are over: stopping %s",
			       tr->t->duration, tr->t->argv[0]);
			kill(pid, SIGTERM);
			term_ns = now_ns();
		} else if (term_ns && now_ns() - term_ns > 2000000000ull) {
			kill(pid, SIGKILL);
		}
		poll(&pfd, 1, POLL_MS);
	}
	child_pid = 0;
	if (!ret)
		ret = drain(s, tr->fd);
	stream_free(s);
	procev_close(tr->procev_fd);
	return ret ? ret : exit_code(status);
}

/* Whether @pid is a process (a thread group's leader); says why not. */
static bool is_process(pid_t pid)
{
	char path[64], line[128];
	long tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		pr_err("-p %d: no such process", (int)pid);
		return false;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	if (tgid >= 0 && tgid != pid) {
		pr_err("-p %d: a thread of process %ld: -p takes the process",
		       (int)pid, tgid);
		return false;
	}
	return true;
}

/*
 * why -p: watch a running process and what it creates, under the tree
 * filter, until it exits, --duration is over or a signal comes.  Returns
 * 0, or -exit code.
 */
static int run_process(struct tracer *tr)
{
	struct stream_opts so = { .path = tr->t->device, .ks = &tr->ks,
				  .handle = trace_record, .arg = tr };
	struct pollfd pfd[2] = { { .fd = tr->fd, .events = POLLIN },
				 { .fd = -1, .events = POLLIN } };
	pid_t pid = tr->t->pid;
	struct stream *s;
	int ret = 0;

	if (!is_process(pid))
		return -EXIT_ERROR;
	/* Its exit wakes the poll (where pidfd_open() is refused, kill()). */
	pfd[1].fd = syscall(SYS_pidfd_open, pid, 0);
	if (pfd[1].fd < 0 && errno == ESRCH) {
		pr_err("-p %d: no such process", (int)pid);
		return -EXIT_ERROR;
	}
	s = stream_new(&so);
	tr->procev_fd = procev_open();
	tr->start_ns = now_ns();
	trace_read_before(tr);
	if (follow(tr, pid)) {
		pr_err("SET_FILTER: %s: process %d", strerror(errno), (int)pid);
		ret = -EXIT_ERROR;
		goto out;
	}
	trace_say_attached(tr);
	tr->spawned = true;
	add_pid(tr, pid);
	for (;;) {
		scan_proc(tr);
		if (!ret)
			ret = drain(s, tr->fd);
		if (ret || got_signal || duration_over(tr))
			break;
		if (pfd[1].fd >= 0 ? pfd[1].revents & POLLIN :
		    kill(pid, 0) && errno == ESRCH)
			break;
		poll(pfd, pfd[1].fd >= 0 ? 2 : 1, POLL_MS);
	}
	if (!ret)
		ret = drain(s, tr->fd);
out:
	if (pfd[1].fd >= 0)
		close(pfd[1].fd);
	stream_free(s);
	procev_close(tr->procev_fd);
	return ret;
}

/* Returns the command's exit code, or -exit code. */
int trace_run(const struct trace_opts *t)
{
	struct tracer tr = { .t = t, .fd = -1, .stop = &got_signal };
	size_t i;
	char why[128];
	int ret;

	if (!has_cap_sys_admin()) {
		fputs("lbr-snap trace needs root (CAP_SYS_ADMIN)\n", stderr);
		return -EXIT_PERM;
	}
	tr.nr = t->targets ? t->nr_targets : t->nr_specs;
	tr.tg = xrealloc(NULL, (tr.nr ? tr.nr : 1) * sizeof(*tr.tg));
	memset(tr.tg, 0, (tr.nr ? tr.nr : 1) * sizeof(*tr.tg));
	for (i = 0; i < tr.nr; i++) {
		struct tgt *g = &tr.tg[i];
		const char *spec = t->targets ? t->targets[i].spec :
				   t->specs[i];

		if (t->targets) {
			g->addr = t->targets[i].addr;
			g->arg = t->targets[i].arg;
			g->batch = t->targets[i].batch;
		} else {
			g->arg = i;
		}
		if (btf_complete_spec(spec, g->spec, sizeof(g->spec), why,
				      sizeof(why))) {
			fprintf(stderr, "lbr-snap: -e %s: too long\n", spec);
			free(tr.tg);
			return -EXIT_USAGE;
		}
		/* The module refuses it too, with less to go on. */
		if (strstr(g->spec, "%void") && !t->capture_all) {
			fprintf(stderr, "lbr-snap: -e %s returns void: there is no error to catch; trace --all records every return\n",
				g->spec);
			free(tr.tg);
			return -EXIT_USAGE;
		}
	}
	/* What why cannot have without BTF, said before it attaches. */
	if (t->why && (!btf_built_in || !btf_have_vmlinux()))
		pr_err("why: %s: the return types are not known, and fexit takes no function in a batch without its prototype: why hooks the %d functions the module takes one by one, the entry functions first",
		       btf_built_in ?
		       "this kernel has no BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)" :
		       "this lbr-snap is built without libbpf, which reads BTF",
		       LBR_SNAP_MAX_TARGETS);
	/* Before anything is loaded: a file that cannot be, said now. */
	if (t->output) {
		tr.rec = recording_create(t->output);
		if (!tr.rec) {
			free(tr.tg);
			return -EXIT_ERROR;
		}
	}
	stdout_buffered();
	setup_signals();
	tr.setup_ns = now_ns();
	ret = setup(&tr);
	tr.setup_ns = now_ns() - tr.setup_ns;
	if (!ret && got_signal)
		ret = -(128 + got_signal);
	if (!ret) {
		ksyms_load(&tr.ks, t->kallsyms);
		ksyms_load_lines(&tr.ks, t->kallsyms, t->vmlinux);
		if (t->why) {
			tr.why = why_new(&tr.ks, t->json);
			entry_addrs(&tr);
		}
		ret = t->pid ? run_process(&tr) : run_command(&tr);
	}
	if (tr.spawned) {
		/* The records first, then what they add up to. */
		if (tr.why && why_report(tr.why, stdout) == 0)
			pr_err("why: no failing system call of the %s was caught (%llu records)",
			       t->pid ? "process" : "command", tr.printed);
		fflush(stdout);
		trace_say_summary(&tr);
	}
	/* A recording without its header holds nothing. */
	if (tr.rec && !tr.rec_started)
		rec_fail(&tr, 0);
	else if (tr.rec && recording_close(tr.rec, true))
		tr.rec_failed = true;
	if (tr.rec_failed && ret >= 0 && tr.spawned)
		ret = -EXIT_ERROR;
	why_free(tr.why);
	ksyms_free(&tr.ks);
	teardown(&tr);
	why_rec_free(&tr.wr);
	free(tr.pids);
	free(tr.tg);
	return ret;
}
