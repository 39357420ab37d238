// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap fuzzer: every entry point of /dev/lbr_snap with hostile input,
 * from several threads at once, with unload attempts in between.
 *
 * Usage: lbr_snap_fuzz_test [OPS [SEED]]   (OPS defaults to
 * $LBR_FUZZ_OPS, else 20000)
 *
 * Random command numbers and sizes; pointers that are NULL, unmapped, in
 * the kernel, -1 or at the very end of a mapping; target specs of random
 * bytes, too long, or known names with every separator in every place;
 * ADD, DEL, FLUSH, SET_CAPTURE, read, poll and write racing each other
 * and the test target's calls.  Then: the counters add up (with every
 * record drained, the targets' captured == read + flushed, and hits ==
 * captured + filtered + dropped) and the module still loads and captures.
 * Kernel reports (KASAN, lockdep, kmemleak, UBSAN, WARN) fail the guest
 * run through its log gate.  Prints the operations done and the errors
 * seen, by errno.  TAP, "# Totals:" last.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "lbr_test_util.h"

#define THREADS		4
#define MAX_ERRNO_SEEN	150

static unsigned long ops_done;
static unsigned long errs[MAX_ERRNO_SEEN + 1];	/* [0]: successes */
static unsigned long unload_tries;
static char *unmapped, *map_end;
static volatile int stop;
static int pass, fail;

static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", pass + fail + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (ok)
		pass++;
	else
		fail++;
}

static void count(long ret)
{
	int e = ret < 0 ? errno : 0;

	__atomic_fetch_add(&errs[e > MAX_ERRNO_SEEN ? MAX_ERRNO_SEEN : e], 1,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&ops_done, 1, __ATOMIC_RELAXED);
}

/* xorshift: reproducible from the seed, per thread. */
static unsigned long rnd(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *hostile_ptr(unsigned long *s, void *good)
{
	switch (rnd(s) % 7) {
	case 0: return NULL;
	case 1: return unmapped;
	case 2: return (void *)0xffffffff81000000UL;	/* kernel text */
	case 3: return (void *)-1L;
	case 4: return map_end - (rnd(s) % 16);		/* runs off the end */
	default: return good;
	}
}

static const char *const names[] = {
	"lbr_test_bool", "lbr_test_ptr", "lbr_test_int", "lbr_test_long",
	"do_sys_openat2", "", "lbr_snap_no_such_function",
};
static const char seps[] = "%/@,: \t\n";

static void random_spec(unsigned long *s, char *spec, size_t len)
{
	size_t i, n;

	switch (rnd(s) % 4) {
	case 0:		/* random bytes */
		n = rnd(s) % len;
		for (i = 0; i < n; i++)
			spec[i] = rnd(s) & 0xff;
		spec[n] = '\0';
		if (rnd(s) & 1)		/* sometimes no NUL at all */
			memset(spec, 'a' + rnd(s) % 26, len);
		return;
	case 1:		/* too long */
		memset(spec, 'x', len - 1);
		spec[len - 1] = '\0';
		return;
	default:	/* names and separators anywhere */
		spec[0] = '\0';
		n = 1 + rnd(s) % 6;
		for (i = 0; i < n && strlen(spec) + 32 < len; i++) {
			const char *w = rnd(s) & 1 ? names[rnd(s) % 2] :
				(const char *[]){ "int", "long", "ptr", "bool",
						  "void", "fexit", "kretprobe",
						  "auto", "7", "-1",
						  "99999999999", "" }[rnd(s) % 12];
			size_t l = strlen(spec);

			snprintf(spec + l, len - l, "%s%c", w,
				 seps[rnd(s) % (sizeof(seps) - 1)]);
		}
		if (rnd(s) & 1)
			spec[strlen(spec) - 1] = '\0';
	}
}

static unsigned int random_cmd(unsigned long *s)
{
	static const unsigned int known[] = {
		LBR_SNAP_IOC_GET_INFO, LBR_SNAP_IOC_GET_STATS,
		LBR_SNAP_IOC_FLUSH, LBR_SNAP_IOC_ADD_TARGET,
		LBR_SNAP_IOC_DEL_TARGET, LBR_SNAP_IOC_SET_CAPTURE,
		LBR_SNAP_IOC_ADD_TARGETS, LBR_SNAP_IOC_DEL_TARGETS,
	};
	unsigned int cmd = known[rnd(s) % 8];

	switch (rnd(s) % 4) {
	case 0:		/* another size */
		cmd = (cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
		      ((rnd(s) % 512) << _IOC_SIZESHIFT);
		break;
	case 1:		/* another direction */
		cmd ^= (rnd(s) % 4) << _IOC_DIRSHIFT;
		break;
	case 2:		/* anything */
		cmd = rnd(s);
		if (rnd(s) & 1)
			cmd = (cmd & ~(_IOC_TYPEMASK << _IOC_TYPESHIFT)) |
			      (LBR_SNAP_IOC_MAGIC << _IOC_TYPESHIFT);
		break;
	}
	return cmd;
}

struct worker {
	pthread_t th;
	unsigned long seed, ops;
};

/*
 * A batch to add, or to remove, refused whole or in part: its functions
 * are the test module's (a batch takes vmlinux's only), or a function of
 * vmlinux at an address past its entry, or anything at all; ids to remove
 * are no target's.  Nothing it does may capture: the counters stay exact.
 * A removal read at a stride not its own takes its ids from any four
 * bytes: there every byte but the ids is 0xa5, and what the module writes
 * back is zeros, so no window names the two targets that capture (ids 2
 * and 3, main()).  Zeros once named id 0, then lbr_test_int: its records
 * stayed counted as read, its captures went with it.
 */
static void random_batch(unsigned long *s, int fd, unsigned long long past)
{
	struct lbr_snap_target_entry e[4];
	struct lbr_snap_targets t = { 0 };
	unsigned int i, n = 1 + rnd(s) % 4;
	bool del = rnd(s) & 1;

	memset(e, del ? 0xa5 : 0, sizeof(e));
	for (i = 0; i < n; i++) {
		e[i].id = (1U << 20) + rnd(s) % 1000;
		if (del) {
			e[i].reserved = 0;
			continue;
		}
		random_spec(s, e[i].spec, sizeof(e[i].spec));
		switch (rnd(s) % 4) {
		case 0:
			e[i].addr = past;
			break;
		case 1:
			e[i].addr = rnd(s);
			break;
		case 2:
			e[i].addr = rnd(s) | 0xffffffff80000000ULL;
			break;
		}
	}
	t.entries_ptr = (unsigned long)hostile_ptr(s, e);
	t.nr = rnd(s) % 8 ? n : rnd(s);
	t.entry_size = rnd(s) % 8 ? sizeof(e[0]) : rnd(s) % 512;
	if (t.entry_size > sizeof(e[0]) &&
	    t.entries_ptr == (unsigned long)e)
		t.entry_size = sizeof(e[0]);
	if (t.nr > n && t.entries_ptr == (unsigned long)e)
		t.nr = n;
	t.flags = rnd(s) % 4 ? rnd(s) % 2 : rnd(s);
	count(ioctl(fd, del ? LBR_SNAP_IOC_DEL_TARGETS :
			      LBR_SNAP_IOC_ADD_TARGETS, &t));
}

static void *work(void *p)
{
	struct worker *w = p;
	/*
	 * A random command may claim any size its number holds (16 KiB),
	 * and GET_INFO, GET_STATS and ADD_TARGET take any size from their
	 * first ABI's on: the buffer must hold what the module may write.
	 */
	char buf[1 << _IOC_SIZEBITS];
	struct lbr_snap_target_stats st[8];
	struct lbr_snap_target_ctl ctl;
	struct lbr_snap_stats hdr;
	struct pollfd pfd;
	unsigned long i, s = w->seed;
	int fd = dev_open(O_NONBLOCK), tfd = open(TEST_DEV, O_WRONLY);
	unsigned long long past = ksym("vfs_read") + 1;

	for (i = 0; i < w->ops && !stop; i++) {
		switch (rnd(&s) % 12) {
		case 0: case 1:	/* any command, any argument */
			memset(buf, rnd(&s) & 0xff, sizeof(buf));
			count(ioctl(fd, random_cmd(&s),
				    hostile_ptr(&s, buf)));
			break;
		case 2: case 3: {	/* a target to add */
			memset(&ctl, 0, sizeof(ctl));
			random_spec(&s, ctl.spec, sizeof(ctl.spec));
			/*
			 * Only targets nothing calls: the counters stay exact.
			 * do_sys_openat2 is called by every open() in the
			 * guest: once added (DEL below never removes it), an
			 * open() between the last drain and GET_STATS was a
			 * record captured and never read (captured 20424 =
			 * read 1042 + flushed 19381 on the debug kernel).
			 */
			if (strstr(ctl.spec, "lbr_test_int") ||
			    strstr(ctl.spec, "lbr_test_long") ||
			    strstr(ctl.spec, "do_sys_openat2"))
				ctl.spec[0] = '\0';
			if (rnd(&s) % 8 == 0)
				ctl.flags = rnd(&s);
			count(ioctl(fd, LBR_SNAP_IOC_ADD_TARGET,
				    hostile_ptr(&s, &ctl)));
			break;
		}
		case 4:		/* one to remove, never the two that capture */
			memset(&ctl, 0, sizeof(ctl));
			snprintf(ctl.spec, sizeof(ctl.spec), "%s",
				 names[rnd(&s) % 2]);
			count(ioctl(fd, LBR_SNAP_IOC_DEL_TARGET, &ctl));
			break;
		case 5:
			count(ioctl(fd, LBR_SNAP_IOC_FLUSH));
			break;
		case 6:
			count(ioctl(fd, LBR_SNAP_IOC_SET_CAPTURE,
				    rnd(&s) % 3 ? rnd(&s) % 2 : rnd(&s)));
			break;
		case 7:		/* any size, any place */
			count(read(fd, hostile_ptr(&s, buf),
				   rnd(&s) % sizeof(buf)));
			break;
		case 8:
			pfd.fd = fd;
			pfd.events = POLLIN;
			count(poll(&pfd, 1, 0));
			break;
		case 9:
			if (rnd(&s) & 1)
				random_batch(&s, fd, past);
			else
				count(write(fd, hostile_ptr(&s, buf),
					    rnd(&s) % 64));
			break;
		case 10: {	/* GET_STATS with hostile sizes and places */
			memset(&hdr, 0, sizeof(hdr));
			hdr.nr = rnd(&s) % 3 ? rnd(&s) % 9 : rnd(&s);
			hdr.entry_size = rnd(&s) % 3 ? sizeof(st[0]) : rnd(&s);
			hdr.stats_ptr = (unsigned long)hostile_ptr(&s, st);
			if (hdr.nr > 8 && hdr.stats_ptr == (unsigned long)st)
				hdr.nr = 8;
			if (hdr.entry_size > sizeof(st[0]) &&
			    hdr.stats_ptr == (unsigned long)st)
				hdr.entry_size = sizeof(st[0]);
			count(ioctl(fd, LBR_SNAP_IOC_GET_STATS, &hdr));
			break;
		}
		default: {	/* records to fight over */
			const char *call = rnd(&s) & 1 ? "int -5 4" :
							   "long -22 4";

			count(write(tfd, call, strlen(call)));
			break;
		}
		}
		if (w->seed % THREADS == 0 && i % 500 == 0) {
			/* An unload attempt: the open descriptors hold it. */
			if (!syscall(SYS_delete_module, "lbr_snap", O_NONBLOCK))
				stop = 1;
			__atomic_fetch_add(&unload_tries, 1, __ATOMIC_RELAXED);
		}
	}
	close(tfd);
	close(fd);
	return NULL;
}

/*
 * The books did not balance: each target's counters, then whether records
 * turn up late (a second drain half a second on) or are gone.
 */
static void explain(int fd, const struct lbr_snap_target_stats *st,
		    unsigned int nr)
{
	struct lbr_snap_target_stats again[LBR_SNAP_MAX_TARGETS];
	struct lbr_snap_stats hdr;
	struct rec *recs = calloc(MAX_RECS, sizeof(*recs));
	unsigned int i;
	int n;

	for (i = 0; i < nr; i++)
		printf("# %s (hook %u): hits %llu captured %llu filtered %llu dropped %llu recursion %llu missed %llu lbr_off %llu\n",
		       st[i].name, st[i].hook,
		       (unsigned long long)st[i].hits,
		       (unsigned long long)st[i].captured,
		       (unsigned long long)st[i].filtered,
		       (unsigned long long)st[i].dropped,
		       (unsigned long long)st[i].recursion,
		       (unsigned long long)st[i].missed,
		       (unsigned long long)st[i].lbr_off);
	usleep(500000);
	n = recs ? drain(fd, recs, MAX_RECS) : -1;
	if (!get_stats(fd, &hdr, again, LBR_SNAP_MAX_TARGETS))
		printf("# half a second later: %d more drained; read %llu, flushed %llu\n",
		       n, (unsigned long long)hdr.read,
		       (unsigned long long)hdr.flushed);
	free(recs);
}

int main(int argc, char **argv)
{
	const char *env = getenv("LBR_FUZZ_OPS");
	unsigned long ops = argc > 1 ? strtoul(argv[1], NULL, 0) :
			    env ? strtoul(env, NULL, 0) : 20000;
	unsigned long seed = argc > 2 ? strtoul(argv[2], NULL, 0) :
			     (unsigned long)time(NULL);
	struct lbr_snap_target_stats st[LBR_SNAP_MAX_TARGETS];
	struct worker w[THREADS];
	unsigned long captured = 0, bad_hits = 0;
	struct lbr_snap_stats hdr;
	struct rec *recs;
	char *page;
	unsigned int i;
	int fd, n, e;

	printf("TAP version 13\n1..4\n# seed %lu, %lu operations\n", seed, ops);
	page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	munmap(page + 4096, 4096);
	unmapped = page + 4096;
	map_end = page + 4096;
	recs = calloc(MAX_RECS, sizeof(*recs));

	load_target_module();
	/* Ids 0 and 1 go to two targets nothing calls (random_batch()). */
	tap(!load("targets=lbr_test_bool%bool,lbr_test_ptr%ptr,lbr_test_int%int,lbr_test_long%long@kretprobe capture=all buffer_kb=64"),
	    "lbr_snap loads for the fuzzer");
	for (i = 0; i < THREADS; i++) {
		w[i].seed = seed * THREADS + i + 1;
		w[i].seed = w[i].seed ? w[i].seed : 1;
		w[i].ops = ops / THREADS;
		pthread_create(&w[i].th, NULL, work, &w[i]);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(w[i].th, NULL);
	printf("# %lu operations, %lu unload attempts; results:", ops_done,
	       unload_tries);
	for (e = 0; e <= MAX_ERRNO_SEEN; e++)
		if (errs[e])
			printf(" %s %lu", e ? strerrorname_np(e) ?: "?" : "ok",
			       errs[e]);
	printf("\n");
	tap(!stop, "no unload while descriptors were open");

	/* Drain everything, then the books must balance. */
	fd = dev_open(O_NONBLOCK);
	n = fd < 0 ? -1 : drain(fd, recs, MAX_RECS);
	if (fd < 0 || get_stats(fd, &hdr, st, LBR_SNAP_MAX_TARGETS)) {
		tap(false, "counters add up: no device or no stats");
	} else {
		for (i = 0; i < hdr.nr; i++) {
			captured += st[i].captured;
			bad_hits += st[i].hits != st[i].captured +
					st[i].filtered + st[i].dropped;
		}
		tap(captured == hdr.read + hdr.flushed && !bad_hits && n >= 0,
		    "counters add up: captured %lu = read %llu + flushed %llu (%d drained last), %lu targets off",
		    captured, (unsigned long long)hdr.read,
		    (unsigned long long)hdr.flushed, n, bad_hits);
		if (captured != hdr.read + hdr.flushed || bad_hits)
			explain(fd, st, hdr.nr);
	}
	if (fd >= 0)
		close(fd);

	/* And it still works, loaded afresh. */
	n = -1;
	if (!load("targets=lbr_test_int%int") && !trigger("int", -5, 3)) {
		fd = dev_open(O_NONBLOCK);
		n = fd < 0 ? -1 : drain(fd, recs, MAX_RECS);
		if (fd >= 0)
			close(fd);
	}
	tap(n == 3, "still loads and captures afterwards (%d records of 3)", n);
	unload();
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       pass, fail);
	return fail ? 1 : 0;
}
