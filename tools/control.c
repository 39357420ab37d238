// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap add, del and capture: change the targets and the capture mode
 * of the loaded module with LBR_SNAP_IOC_ADD_TARGET, DEL_TARGET and
 * SET_CAPTURE, on a descriptor opened for writing (the module wants
 * CAP_SYS_ADMIN and FMODE_WRITE for them).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "btf.h"
#include "control.h"
#include "device.h"
#include "lbrfilter.h"
#include "record.h"
#include "stream.h"
#include "util.h"

/* Why @req failed for @name, said for a kernel engineer; the exit code. */
static int ctl_error(const char *what, const char *name, int err)
{
	const char *why;
	int code = EXIT_ERROR;

	switch (err) {
	case EPERM:
	case EACCES:
		why = !strcmp(what, "add") ?
		      "not permitted: needs CAP_SYS_ADMIN and the device opened for writing, or the function is on lbr_snap's own capture path (see the kernel log)" :
		      "not permitted: needs CAP_SYS_ADMIN and the device opened for writing";
		code = EXIT_PERM;
		break;
	case EBADF:
		why = "the device is not open for writing";
		code = EXIT_PERM;
		break;
	case ENOENT:
		why = !strcmp(what, "add") ?
		      "no such function in the kernel, or no entry to hook (see the kernel log)" :
		      "not a target (lbr-snap stats lists them)";
		break;
	case EEXIST:
		why = "already a target (or an alias of one)";
		break;
	case EBUSY:
		if (!strncmp(name, "lbr=", 4)) {
			why = "someone else (perf, /dev/cpu/N/msr) changed the LBR filter on some CPUs: left as it is there, the others have the new one (see the kernel log)";
			break;
		}
		why = !strcmp(what, "capture") ?
		      "a void target is attached, which has no error to catch: del it first (see the kernel log)" :
		      "busy: another tracer or direct call holds the function, or the hook is in use (see the kernel log)";
		break;
	case E2BIG:
		why = !strcmp(name, "a batch") ?
		      "too many targets: more than the module's 65536, or than this kernel's ftrace takes as direct calls (see the kernel log)" :
		      "too many targets (at most 64 outside batches)";
		break;
	case ENAMETOOLONG:
		why = "name too long";
		break;
	case EINVAL:
		if (!strcmp(what, "capture"))
			why = "invalid capture mode";
		else if (!strncmp(name, "lbr=", 4))
			why = "invalid LBR filter";
		else
			why = "invalid: expected SYM[%type][/N][@hook] with type int, long, ptr, bool or void and hook kretprobe or fexit, or kprobes refuse the function (see the kernel log)";
		break;
	case ENODEV:
		why = "no LBR on this machine (lbr-snap info says why)";
		break;
	case EOPNOTSUPP:
		why = "this CPU cannot filter so (an Arch LBR that filters no kind of branch), or perf cannot (no relative jumps, no far branches without the calls or returns): mode=raw can";
		break;
	case ENOTTY:
		why = "not an lbr_snap device, or its module is too old for this";
		break;
	default:
		why = strerror(err);
		break;
	}
	pr_err("%s %s: %s", what, name, why);
	return code;
}

/* Open the device for writing and check its ABI; fd or -exit code. */
static int open_ctl(const char *path, struct lbr_snap_info *info)
{
	int fd = open_device(path, O_RDWR), ret;

	if (fd < 0)
		return fd;
	ret = get_device_info(fd, path, info);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int control_add(const char *path, char **specs)
{
	char spec[sizeof(((struct lbr_snap_target_ctl *)0)->spec)], why[128];
	struct lbr_snap_info info;
	int fd = open_ctl(path, &info), ret = 0, err;

	if (fd < 0)
		return -fd;
	for (; *specs; specs++) {
		struct lbr_snap_target_ctl ctl = { 0 };

		if (btf_complete_spec(*specs, spec, sizeof(spec), why,
				      sizeof(why))) {
			err = ctl_error("add", *specs, ENAMETOOLONG);
			ret = ret ? ret : err;
			continue;
		}
		memcpy(ctl.spec, spec, sizeof(ctl.spec));
		if (ioctl(fd, LBR_SNAP_IOC_ADD_TARGET, &ctl) < 0) {
			if (errno == EINVAL && strstr(spec, "%void") &&
			    info.capture == LBR_SNAP_CAPTURE_ERRORS) {
				pr_err("add %s: returns void: capture errors has no error to catch; `lbr-snap capture all` first records every return",
				       spec);
				err = EXIT_ERROR;
			} else {
				err = ctl_error("add", spec, errno);
			}
			ret = ret ? ret : err;
			continue;
		}
		printf("added %s: target %u, hook %s\n", spec, ctl.id,
		       hook_name(ctl.hook));
	}
	close(fd);
	return ret;
}

static volatile sig_atomic_t batch_interrupted;

static void on_batch_signal(int sig)
{
	batch_interrupted = sig;
}

static int targets_ioc(int fd, unsigned long req,
		       struct lbr_snap_target_entry *e, size_t n,
		       unsigned int flags)
{
	struct lbr_snap_targets t = {
		.entries_ptr = (uintptr_t)e, .nr = n,
		.entry_size = sizeof(*e), .flags = flags,
	};

	return ioctl(fd, req, &t);
}

/* Did the module refuse an entry of @e[0..@k)? */
static bool chunk_refused(const struct lbr_snap_target_entry *e, size_t k)
{
	size_t j;

	for (j = 0; j < k; j++)
		if (e[j].error)
			return true;
	return false;
}

/*
 * One chunk of ADD_TARGETS or DEL_TARGETS.  A module before kretprobes
 * in a batch refuses LBR_SNAP_BATCH_FALLBACK with EINVAL before it looks
 * at an entry, and says no entry's hook: the chunk goes again without
 * the flag, *@flags loses it, and what such a module adds is fexit's.
 * The entries' hook is 0 going in, as such a module wants.
 */
static int batch_chunk(int fd, unsigned long req,
		       struct lbr_snap_target_entry *e, size_t k,
		       unsigned int *flags, bool *fexit_only)
{
	size_t j;
	int ret;

	unsigned int kflags = *flags & ~CONTROL_FIT;

	for (j = 0; j < k; j++)
		e[j].hook = e[j].reserved = 0;
	ret = targets_ioc(fd, req, e, k, kflags);
	if (ret && errno == EINVAL && (*flags & LBR_SNAP_BATCH_FALLBACK) &&
	    !chunk_refused(e, k)) {
		*flags &= ~LBR_SNAP_BATCH_FALLBACK;
		*fexit_only = true;
		ret = targets_ioc(fd, req, e, k, kflags & ~LBR_SNAP_BATCH_FALLBACK);
	}
	for (j = 0; *fexit_only && j < k; j++)
		e[j].hook = LBR_SNAP_HOOK_FEXIT;
	return ret;
}

int control_batch(int fd, unsigned long req, struct lbr_snap_target_entry *e,
		  size_t n, unsigned int flags,
		  const volatile sig_atomic_t *stop, size_t *through)
{
	bool fexit_only = false;
	bool add = req == LBR_SNAP_IOC_ADD_TARGETS;
	bool progress = isatty(STDERR_FILENO) && n > CONTROL_CHUNK;
	size_t i = 0, k, chunk = CONTROL_CHUNK, j;
	int err = 0;

	while (i < n) {
		k = n - i < chunk ? n - i : chunk;
		if (progress)
			fprintf(stderr, "\rlbr-snap: %s %zu of %zu",
				add ? "attaching" : "detaching", i, n);
		if (stop && *stop) {
			err = EINTR;
			break;
		}
		if (batch_chunk(fd, req, e + i, k, &flags, &fexit_only)) {
			/*
			 * CONTROL_FIT: a chunk past the room, refused whole,
			 * goes again in halves; past the room with one, the
			 * rest is refused (E2BIG each), and that is all.  The
			 * room is ftrace's direct calls (E2BIG), or on a
			 * kernel that gives each function its own trampoline
			 * (before 5.16), lbr_snap_fexit's slots (ENOSPC).
			 */
			if (add && (errno == E2BIG || errno == ENOSPC) &&
			    (flags & CONTROL_FIT)) {
				int full = errno;

				if (k > 1) {
					chunk = k / 2;
					continue;
				}
				for (j = i; j < n; j++)
					e[j].error = -full;
				i = n;
				break;
			}
			/* DEL_TARGETS' ENOENT: it removed the others. */
			if (add || errno != ENOENT) {
				err = errno;
				break;
			}
			err = ENOENT;
		}
		i += k;
	}
	if (progress && i == n)
		fprintf(stderr, "\rlbr-snap: %s %zu of %zu\n",
			add ? "attaching" : "detaching", n, n);
	else if (progress)
		fputc('\n', stderr);
	*through = i;
	errno = err;
	return err ? -1 : 0;
}

/* Remove the targets of @e's first @n entries (ids), in chunks. */
static void batch_undo(int fd, struct lbr_snap_target_entry *e, size_t n)
{
	size_t through;

	if (control_batch(fd, LBR_SNAP_IOC_DEL_TARGETS, e, n, 0, NULL,
			  &through) && errno != ENOENT)
		pr_err("del: %s: %zu targets of this batch stay attached (lbr-snap stats lists them)",
		       strerror(errno), n - through);
}

int control_add_batch(const char *path, char **specs,
		      const unsigned long long *addrs, size_t n)
{
	struct sigaction sa = { .sa_handler = on_batch_signal }, old[2];
	struct lbr_snap_target_entry *e;
	struct lbr_snap_info info;
	int fd = open_ctl(path, &info), ret = 0;
	size_t i, j, through;

	if (fd < 0)
		return -fd;
	e = xrealloc(NULL, (n ? n : 1) * sizeof(*e));
	memset(e, 0, (n ? n : 1) * sizeof(*e));
	for (i = 0; i < n; i++) {
		snprintf(e[i].spec, sizeof(e[i].spec), "%s", specs[i]);
		e[i].addr = addrs[i];
	}
	/* ^C between two chunks takes back what went in: all or nothing. */
	batch_interrupted = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);
	ret = control_batch(fd, LBR_SNAP_IOC_ADD_TARGETS, e, n,
			    LBR_SNAP_BATCH_FALLBACK, &batch_interrupted,
			    &through);
	/* A signal in the last chunk's call: taken back all the same. */
	if (!ret && batch_interrupted) {
		through = n;
		errno = EINTR;
		ret = -1;
	}
	if (ret) {
		int err = errno;

		i = through;
		/* The entry the module refused first, if it was one. */
		for (j = i; err != EINTR && j < n && j < i + CONTROL_CHUNK; j++)
			if (e[j].error && e[j].error != -ECANCELED)
				break;
		if (err == EINTR)
			ret = EXIT_ERROR;
		else if (j < n && j < i + CONTROL_CHUNK)
			ret = ctl_error("add", e[j].spec, -e[j].error);
		else
			ret = ctl_error("add", "a batch", err);
		if (batch_interrupted)
			pr_err("add: interrupted: the %zu functions attached are taken back", i);
		else if (i)
			pr_err("add: nothing attached: the %zu functions before are taken back", i);
		batch_undo(fd, e, i);
	} else if (n) {
		for (i = 0, j = 0; i < n; i++)
			j += e[i].hook == LBR_SNAP_HOOK_KRETPROBE;
		printf("added %zu functions in a batch: targets %u to %u, hook %s",
		       n, e[0].id, e[n - 1].id,
		       hook_name(j ? LBR_SNAP_HOOK_KRETPROBE :
				 LBR_SNAP_HOOK_FEXIT));
		if (j && j < n)
			printf(" for %zu of them, fexit for the others (past the direct calls this kernel's ftrace takes, or without what fexit needs)",
			       j);
		putchar('\n');
	}
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	free(e);
	close(fd);
	if (batch_interrupted)
		return 128 + batch_interrupted;
	return ret;
}

int control_del(const char *path, char **syms)
{
	struct lbr_snap_info info;
	int fd = open_ctl(path, &info), ret = 0, err;

	if (fd < 0)
		return -fd;
	for (; *syms; syms++) {
		struct lbr_snap_target_ctl ctl = { 0 };

		/* DEL_TARGET takes the name: a spec's %type/N@hook go. */
		snprintf(ctl.spec, sizeof(ctl.spec), "%.*s",
			 (int)strcspn(*syms, "%/@="), *syms);
		if (ioctl(fd, LBR_SNAP_IOC_DEL_TARGET, &ctl) < 0) {
			err = ctl_error("del", ctl.spec, errno);
			ret = ret ? ret : err;
			continue;
		}
		printf("deleted %s\n", ctl.spec);
	}
	close(fd);
	return ret;
}

/*
 * "pid=N", "tgid=N", "comm=NAME", any of them, or "off": the module's
 * task filter (LBR_SNAP_IOC_SET_FILTER); "lbr=SPEC", alone or with them:
 * what LBR records (LBR_SNAP_IOC_SET_LBR_FILTER, lbrfilter.h).
 */
int control_filter(const char *path, char **words)
{
	struct task_match m = { 0 };
	struct lbr_snap_filter f = { 0 };
	struct lbr_snap_lbr_filter lf;
	const char *first = NULL, *lbr = NULL;
	struct lbr_snap_info info;
	bool task = false;
	char key[8], why[300], name[128];
	int fd, ret = 0;

	for (; *words; words++) {
		const char *eq = strchr(*words, '=');

		if (!strncmp(*words, "lbr=", 4)) {
			lbr = *words + 4;
			if (lbr_filter_parse(lbr, &lf, why, sizeof(why))) {
				pr_err("filter: %s", why);
				return EXIT_USAGE;
			}
			continue;
		}
		if (!task)
			first = *words;
		task = true;
		if (!strcmp(*words, "off") && !m.flags && !words[1])
			break;
		if (!eq || eq - *words >= (long)sizeof(key))
			goto bad;
		memcpy(key, *words, eq - *words);
		key[eq - *words] = '\0';
		if (parse_task_opt(key, eq + 1, &m))
			goto bad;
	}
	f.flags = m.flags;
	f.pid = m.pid;
	f.tgid = m.tgid;
	memcpy(f.comm, m.comm, sizeof(f.comm));
	fd = open_ctl(path, &info);
	if (fd < 0)
		return -fd;
	/* EBUSY: applied but where someone else holds the MSR. */
	if (lbr && ioctl(fd, LBR_SNAP_IOC_SET_LBR_FILTER, &lf) < 0)
		ret = ctl_error("filter", lbr - 4, errno);
	if (lbr && (!ret || errno == EBUSY) &&
	    !ioctl(fd, LBR_SNAP_IOC_GET_INFO, &info)) {
		lbr_filter_name(info.lbr_cpl, info.lbr_kinds, name,
				sizeof(name));
		printf("LBR filter: %s\n", name);
	}
	if (!ret && task && ioctl(fd, LBR_SNAP_IOC_SET_FILTER, &f) < 0)
		ret = ctl_error("filter", first, errno);
	close(fd);
	return ret;
bad:
	pr_err("filter: '%s': expected pid=N, tgid=N, comm=NAME (15 bytes at most), off or lbr=KINDS",
	       *words);
	return EXIT_USAGE;
}

int control_capture(const char *path, const char *mode)
{
	unsigned long arg = !strcmp(mode, "all") ? LBR_SNAP_CAPTURE_ALL :
			    LBR_SNAP_CAPTURE_ERRORS;
	struct lbr_snap_info info;
	int fd = open_ctl(path, &info), ret = 0;

	if (fd < 0)
		return -fd;
	if (ioctl(fd, LBR_SNAP_IOC_SET_CAPTURE, arg) < 0)
		ret = ctl_error("capture", mode, errno);
	close(fd);
	return ret;
}

/*
 * A line on a target that has recorded nothing, and the likely why, after
 * @prefix (stats' counters, or trace's while its command ran).
 */
void print_target_hint(FILE *f, const char *prefix,
		       const struct lbr_snap_target_stats *t)
{
	int n = (int)strnlen(t->name, sizeof(t->name));

	if (t->state & LBR_SNAP_TARGET_GONE)
		fprintf(f, "%s%.*s is gone: its module was unloaded, and the hook with it; add it again once the module is back (lbr-snap add), or delete it\n",
			prefix, n, t->name);
	else if (!t->hits)
		fprintf(f, "%s%.*s has had no hits: is it called, and not inlined into its callers?\n",
			prefix, n, t->name);
	else if (!t->captured && t->filtered == t->hits)
		fprintf(f, "%s%.*s: all %llu returns filtered (as success, or by an errno list or the task filter): is its return type (%s) right? see `lbr-snap spec %.*s`\n",
			prefix, n, t->name, t->hits, ret_type_name(t->ret_type),
			n, t->name);
}
