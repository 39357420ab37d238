// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: read records and print them until end of input, -n, EAGAIN
 * (--nonblock) or SIGINT/SIGTERM.
 *
 * The device returns whole records per read(), but a regular file or a pipe
 * replaying a capture does not, so an incomplete record at the end of the
 * buffer is kept and completed by the next read().
 *
 * A read() takes as many records as the buffer holds (the device gives
 * whole records up to its size), and their output is flushed once, after
 * the last of them: a burst costs a few syscalls, not one per record or
 * per line.
 *
 * The module's ring buffer is small (256 KiB a CPU, some 400 records of 32
 * entries) and drops what does not fit, while printing a record, JSON
 * above all, takes far longer than the kernel takes to write one.  So
 * from the device or a pipe, every few records printed, what the input
 * holds by then is read too, into a queue of chunks behind the records
 * still to print: a burst waits in this process's memory (up to
 * READ_AHEAD_MAX) rather than overflowing the kernel's.  Not with -n,
 * which would take records it does not print away from other readers,
 * nor from a regular file.
 *
 * The queue is chunks, not one buffer: a read ahead must never stall.
 * Moving or growing a buffer that holds a burst copies megabytes, which
 * in a slow guest took longer than the kernel's ring lasts at a storm's
 * rate, and the records that came meanwhile were dropped.  A chunk is
 * copied once, bounded, when its turn to print comes.
 *
 * Streaming (stream_records()) reads ahead in a thread of its own, the
 * drain thread, which does nothing but move what the input holds into
 * the queue.  Reading ahead between records cannot help while a write()
 * of the output blocks: a pipe to a consumer that falls behind, or a
 * megabyte of JSON into a slow file system, took longer than the
 * kernel's ring lasts in a storm, and those records were dropped.
 * trace's loop (stream_pump()) reads ahead between records as above.
 *
 * The first SIGINT or SIGTERM ends the reading; what was read is still
 * printed, since the kernel has handed those records out.  Behind a slow
 * consumer that can be READ_AHEAD_MAX of records: a second signal stops
 * the printing too, and says how many records read were not printed.
 */
#define _GNU_SOURCE	/* pipe2() */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "out.h"
#include "print.h"
#include "record.h"
#include "stream.h"
#include "util.h"

/* Initial buffer: many records per read(); it grows for bigger ones. */
#define BUF_SIZE	(64 * 1024)

#define READ_AHEAD_EVERY	8			/* records printed */
#define READ_AHEAD_MAX		(64 * 1024 * 1024)	/* bytes unprinted */

/*
 * The drain thread's pause after a read that emptied the input: the
 * module wakes a sleeping reader at every record, and a thread woken for
 * each preempts the one printing on the same CPU.  In make bench's storm
 * (lab guest, one run each) the JSON reader printed 3,755 and 4,038
 * records a second with a 1 ms pause, 3,235 and 3,264 without.  Also while
 * the queue is empty, the reader keeping up: then each record cost two
 * wakeups (this thread's, the printer's) and a write(), where a pause
 * takes the records of a pause in one (lbr-legacy, the reader beside cat
 * trace_pipe: CPU time a record 279 to 172 us for JSON, 200 to 87 us
 * for text), at most a pause later.  2 ms rather than 1: beside the same
 * storm (lbr-legacy, eight storms each, alternated in one boot) the
 * --json reader used 0.71 to 0.79 of the storm's time in CPU against
 * 0.81 to 0.89, and the storms ran faster (7.0 to 10.6 s against 10.1 to
 * 14.6).  2 ms is 5 to 10 records at the storm's rate there; the default
 * ring (256 KiB a CPU, some 300 records) lasts that long up to 150,000
 * records a second.
 */
#define DRAIN_PAUSE_NS		2000000

/*
 * While the printer is behind (two chunks queued or more), reading the
 * device sooner gains nothing but the thread's own cycles, some 300 us
 * each in the lab guest, taken from the printer: the drain thread then
 * sleeps until a CPU's ring is a quarter full (LBR_SNAP_IOC_SET_WAKEUP,
 * at most DRAIN_MARK_MAX) or the printer has taken the last chunk, and
 * pauses again once it has.  The other three quarters of the default
 * ring (some 220 records) last 1.5 ms at 150,000 records a second, for
 * the thread to wake and read.
 */
#define DRAIN_MARK_MAX		(64 * 1024)

/* Input read ahead, waiting its turn to print. */
struct chunk {
	struct chunk *next;
	size_t len;
	unsigned char data[];
};

struct stream {
	const struct stream_opts *o;
	unsigned char *buf;
	size_t cap;			/* bytes allocated */
	size_t len;			/* bytes held, from the buffer start */
	unsigned long long offset;	/* input offset of the buffer start */
	unsigned long long printed;
	unsigned long long skipped;	/* records of a newer ABI version */
	int fd;				/* the input, -1 until known */
	bool ahead;			/* read ahead while printing */
	struct chunk *q_head, *q_tail;	/* read ahead, oldest first */
	size_t q_bytes;
	/* The drain thread (stream_records()); the lock guards q_* above. */
	bool threaded;
	pthread_t drain;
	int drain_fd;			/* the thread's own descriptor of the input */
	int drain_fl;			/* the input's file status flags before it */
	pthread_mutex_t lock;
	pthread_cond_t queued;		/* a chunk queued, or drain_done */
	pthread_cond_t room;		/* q_bytes fell, or quit */
	bool drain_done;		/* the thread ended: see drain_err */
	bool quit;			/* the thread is to end */
	int drain_err;			/* why it ended: an errno, 0 at the end */
	bool eagain_ends;		/* --nonblock: EAGAIN is the end */
	unsigned long mark;		/* the wakeup mark when behind, 0: none */
	bool marked;			/* the mark is set: wake the thread
					 * when the queue runs dry
					 */
	unsigned long long unprinted;	/* records read, not printed (stopped) */
};

/*
 * 1 after SIGINT or SIGTERM, 2 after a second one.  Read by both threads
 * and written by the handler: atomic, lock-free for an int and so safe in
 * a signal handler.
 */
static int stop;
static int stream_fd = -1;
static int eof_fd = -1;		/* read end of a pipe with no writer */
static int wake_fd[2] = { -1, -1 };	/* a byte: the drain thread is to end */

static int stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

/* Wake the drain thread's poll(); async-signal-safe. */
static void wake_drain(void)
{
	ssize_t r;

	if (wake_fd[1] < 0)
		return;
	/* EAGAIN: the pipe is full, a byte is there already. */
	r = write(wake_fd[1], "", 1);
	(void)r;
}

/*
 * Stop the stream.  A read() the signal interrupted fails with EINTR or is
 * restarted; either way it, or one about to start, now reads the writerless
 * pipe in place of the device and returns 0 at once: no signal is lost.
 * The drain thread, whose poll() the signal may not interrupt (it may be
 * handled by the other thread), wakes on the byte written to wake_fd.
 */
static void on_signal(int sig)
{
	int saved_errno = errno;

	(void)sig;
	__atomic_store_n(&stop, stopped() ? 2 : 1, __ATOMIC_RELAXED);
	dup2(eof_fd, stream_fd);
	wake_drain();
	errno = saved_errno;
}

static int setup_signals(int fd)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	int p[2];

	if (eof_fd < 0) {
		if (pipe2(p, O_CLOEXEC) < 0) {
			pr_err("pipe: %s", strerror(errno));
			return -EXIT_ERROR;
		}
		close(p[1]);
		eof_fd = p[0];
	}
	/*
	 * Non-blocking: a full pipe never blocks the signal handler, and
	 * the drain thread empties it without waiting.
	 */
	if (wake_fd[0] < 0 && pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK) < 0) {
		pr_err("pipe: %s", strerror(errno));
		return -EXIT_ERROR;
	}
	stream_fd = fd;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return 0;
}

/* Make room for @need bytes in all and for a full record after them. */
static void reserve(struct stream *s, size_t need)
{
	size_t want = need + LBR_SNAP_RECORD_MAX;

	if (want <= s->cap)
		return;
	s->cap = want > 2 * s->cap ? want : 2 * s->cap;
	s->buf = xrealloc(s->buf, s->cap);
}

static void warn_newer(struct stream *s, const struct rec *r)
{
	if (!s->skipped++)
		pr_err("%s: skipping records of ABI version %u (this tool knows %u)",
		       s->o->path, r->hdr.version, LBR_SNAP_ABI_VERSION);
}

static int bad_record(const struct stream *s, size_t at, const char *why)
{
	pr_err("%s: corrupt record at offset %llu: %s", s->o->path,
	       s->offset + at, why);
	return -EXIT_CORRUPT;
}

/* As the module's filter judges a task (src/task_filter.c). */
bool task_matches(const struct task_match *m,
		  const struct lbr_snap_record *h)
{
	if ((m->flags & LBR_SNAP_FILTER_PID) && h->pid != (__u32)m->pid)
		return false;
	if ((m->flags & LBR_SNAP_FILTER_TGID) && h->tgid != (__u32)m->tgid)
		return false;
	return !(m->flags & LBR_SNAP_FILTER_COMM) ||
	       !strncmp(h->comm, m->comm, LBR_SNAP_COMM_LEN);
}

/*
 * @key ("pid", "tgid" or "comm") = @val into @m; 0, or -1 for another
 * key, an id that is not a number from 0 to INT_MAX, or a comm that does
 * not fit (15 bytes).
 */
int parse_task_opt(const char *key, const char *val, struct task_match *m)
{
	unsigned long v;
	char *end;

	if (!strcmp(key, "comm")) {
		if (!*val || strlen(val) >= sizeof(m->comm))
			return -1;
		memset(m->comm, 0, sizeof(m->comm));
		memcpy(m->comm, val, strlen(val));
		m->flags |= LBR_SNAP_FILTER_COMM;
		return 0;
	}
	errno = 0;
	v = strtoul(val, &end, 10);
	if (*val < '0' || *val > '9' || *end || errno || v > INT_MAX)
		return -1;
	if (!strcmp(key, "pid")) {
		m->pid = v;
		m->flags |= LBR_SNAP_FILTER_PID;
	} else if (!strcmp(key, "tgid")) {
		m->tgid = v;
		m->flags |= LBR_SNAP_FILTER_TGID;
	} else {
		return -1;
	}
	return 0;
}

/* The input is @fd: read ahead from it unless it is a file or -n is given. */
static void set_fd(struct stream *s, int fd)
{
	struct stat st;

	if (s->fd == fd)
		return;
	s->fd = fd;
	s->ahead = !s->o->max && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode);
}

/*
 * What a chunk of @n bytes costs: READ_AHEAD_MAX bounds the memory held,
 * not just the bytes read, however small the reads (a pipe written a
 * few bytes at a time); its header and malloc's own, about two words.
 */
static size_t chunk_cost(size_t n)
{
	return sizeof(struct chunk) + 2 * sizeof(size_t) + n;
}

/* @c, with room for BUF_SIZE bytes, shrunk to the @n read; NULL: no memory. */
static struct chunk *chunk_fit(struct chunk *c, size_t n)
{
	struct chunk *fit;

	c->len = n;
	c->next = NULL;
	if (n == BUF_SIZE)
		return c;
	fit = realloc(c, sizeof(*c) + n);
	return fit ? fit : c;	/* a shrink that fails keeps the chunk */
}

/* Queue @c, fitted, behind what is still to print. */
static void enqueue(struct stream *s, struct chunk *c)
{
	if (s->q_tail)
		s->q_tail->next = c;
	else
		s->q_head = c;
	s->q_tail = c;
	s->q_bytes += chunk_cost(c->len);
}

/* What the input holds now, queued behind what is still to print. */
static void read_ahead(struct stream *s)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	struct chunk *c;
	ssize_t n;

	if (stopped() || s->q_bytes > READ_AHEAD_MAX ||
	    poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLIN))
		return;
	c = xrealloc(NULL, sizeof(*c) + BUF_SIZE);
	/* An error shows again at the next fill(), which reports it. */
	n = read(s->fd, c->data, BUF_SIZE);
	if (n <= 0) {
		free(c);
		return;
	}
	enqueue(s, chunk_fit(c, n));
}

/* The oldest chunk read ahead, taken off the queue; NULL if none. */
static struct chunk *dequeue(struct stream *s)
{
	struct chunk *c = s->q_head;

	if (!c)
		return NULL;
	s->q_head = c->next;
	if (!s->q_head)
		s->q_tail = NULL;
	s->q_bytes -= chunk_cost(c->len);
	return c;
}

/* @c appended to the buffer, and freed; returns its length. */
static size_t take_chunk(struct stream *s, struct chunk *c)
{
	size_t n = c->len;

	reserve(s, s->len + n);
	/* A chunk is up to 64 KiB: copied in pieces (util.h). */
	copy_pieces(s->buf + s->len, c->data, n);
	free(c);
	return n;
}

/* The oldest chunk read ahead, appended to the buffer; 0 if none. */
static size_t unqueue(struct stream *s)
{
	struct chunk *c = dequeue(s);

	return c ? take_chunk(s, c) : 0;
}

/*
 * Set the device's wakeup mark (@on: s->marked already set, under the
 * lock, so that the printer wakes this thread when it takes the last
 * chunk) or take it off.  If the device refuses a mark: never again.
 * Taking one off cannot fail where setting it did not (EBADF is the
 * only error of a mark the module takes).
 */
static void drain_mark(struct stream *s, bool on)
{
	if (ioctl(s->drain_fd, LBR_SNAP_IOC_SET_WAKEUP, on ? s->mark : 0UL))
		s->mark = 0;
	else if (on)
		return;
	pthread_mutex_lock(&s->lock);
	s->marked = false;
	pthread_mutex_unlock(&s->lock);
}

/* The mark drain_mark() sets: a quarter of a CPU's ring, or none. */
static unsigned long drain_mark_size(int fd)
{
	struct lbr_snap_info info = { 0 };

	/* The first ABI's size, which every module takes. */
	if (ioctl(fd, _IOR(LBR_SNAP_IOC_MAGIC, 1, char[LBR_SNAP_INFO_SIZE_V1]),
		  &info) < 0)
		return 0;
	return info.buffer_kb * 1024UL / 4 < DRAIN_MARK_MAX ?
	       info.buffer_kb * 1024UL / 4 : DRAIN_MARK_MAX;
}

/*
 * The drain thread: poll() the input and the wake pipe, read() what the
 * input holds into a new chunk, queue it, until the end of the input, an
 * error, a signal (stop) or quit.  It has a descriptor of its own for the
 * input, non-blocking meanwhile (drain_start()), so that only poll()
 * waits: a read() another reader beat to the records would wait for the
 * next one, deaf to wake_fd.  (An input that ignores O_NONBLOCK could
 * still block it: the device, pipes and FIFOs do not.)  Its memory comes
 * from malloc(), never oom(), which would exit from this thread: it ends
 * with ENOMEM, which the main thread reports.
 */
static void *drain_run(void *arg)
{
	struct stream *s = arg;
	struct pollfd pfd[2] = {
		{ .fd = s->drain_fd, .events = POLLIN },
		{ .fd = wake_fd[0], .events = POLLIN },
	};
	const struct timespec pause = { .tv_nsec = DRAIN_PAUSE_NS };
	struct chunk *c = NULL;
	char b[16];
	int err = 0;
	ssize_t n;

	for (;;) {
		bool end, mark_on = false, mark_off = false;

		/*
		 * A signal cannot wake this wait (a handler cannot signal a
		 * condition); the printer makes room, or drain_stop() ends it.
		 */
		pthread_mutex_lock(&s->lock);
		while (s->q_bytes > READ_AHEAD_MAX && !s->quit && !stopped())
			pthread_cond_wait(&s->room, &s->lock);
		end = s->quit || stopped();
		/* Marked in the printer's sight before the device is. */
		if (!end && s->mark && !s->marked && s->q_head &&
		    s->q_head != s->q_tail)
			mark_on = s->marked = true;
		else if (!end && s->marked && !s->q_head)
			mark_off = true;
		pthread_mutex_unlock(&s->lock);
		if (end)
			break;
		if (mark_on || mark_off)
			drain_mark(s, mark_on);
		/* --nonblock: no wait at all, EAGAIN ends the stream. */
		if (!s->eagain_ends) {
			if (poll(pfd, 2, -1) < 0) {
				if (errno == EINTR)
					continue;
				err = errno;
				break;
			}
			if (pfd[1].revents) {
				/* quit or stop, seen above */
				while (read(wake_fd[0], b, sizeof(b)) > 0)
					;
				continue;
			}
		}
		if (!c)
			c = malloc(sizeof(*c) + BUF_SIZE);
		if (!c) {
			err = ENOMEM;
			break;
		}
		n = read(s->drain_fd, c->data, BUF_SIZE);
		if (n < 0 && (errno == EINTR ||
			      (errno == EAGAIN && !s->eagain_ends)))
			continue;
		if (n <= 0) {
			err = n < 0 && errno != EAGAIN ? errno : 0;
			break;
		}
		c = chunk_fit(c, n);
		pthread_mutex_lock(&s->lock);
		enqueue(s, c);
		pthread_cond_signal(&s->queued);
		pthread_mutex_unlock(&s->lock);
		c = NULL;
		/* --nonblock ends at the first read that finds nothing. */
		if (n < BUF_SIZE && !s->eagain_ends && !s->marked)
			nanosleep(&pause, NULL);
	}
	free(c);
	pthread_mutex_lock(&s->lock);
	s->drain_err = err;
	s->drain_done = true;
	pthread_cond_signal(&s->queued);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * Start the drain thread on the input; if it cannot start, the stream
 * reads ahead between records.  Signals are blocked in the thread, which
 * wake_fd wakes instead, so that on_signal() runs in the main thread: a
 * wait there (for a chunk, or in a write() of the output) is what a
 * signal must not leave unnoticed.  Its descriptor is a dup() of the
 * input: on_signal()'s dup2() replaces the input's, and the file's flags
 * are given back through this one.
 */
static void drain_start(struct stream *s)
{
	sigset_t all, old;
	char b[16];

	/* Bytes of an earlier stream's end would wake the thread at once. */
	while (read(wake_fd[0], b, sizeof(b)) > 0)
		;
	s->drain_fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
	if (s->drain_fd < 0)
		return;
	s->drain_fl = fcntl(s->drain_fd, F_GETFL);
	if (s->drain_fl < 0 ||
	    fcntl(s->drain_fd, F_SETFL, s->drain_fl | O_NONBLOCK) < 0) {
		close(s->drain_fd);
		return;
	}
	s->eagain_ends = s->drain_fl & O_NONBLOCK;
	/* The live device only (o->self is set there): no foreign ioctls. */
	s->mark = s->eagain_ends || !s->o->self ? 0 :
		  drain_mark_size(s->drain_fd);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->queued, NULL);
	pthread_cond_init(&s->room, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&s->drain, NULL, drain_run, s)) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_cond_destroy(&s->room);
		pthread_cond_destroy(&s->queued);
		pthread_mutex_destroy(&s->lock);
		fcntl(s->drain_fd, F_SETFL, s->drain_fl);
		close(s->drain_fd);
		return;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	s->threaded = true;
	s->ahead = false;
}

/* End the drain thread, and give the input back its flags. */
static void drain_stop(struct stream *s)
{
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_cond_signal(&s->room);
	pthread_mutex_unlock(&s->lock);
	wake_drain();
	pthread_join(s->drain, NULL);
	s->threaded = false;
	/* The descriptor is the caller's again: as it was. */
	if (s->marked)
		drain_mark(s, false);
	fcntl(s->drain_fd, F_SETFL, s->drain_fl);
	close(s->drain_fd);
	pthread_cond_destroy(&s->room);
	pthread_cond_destroy(&s->queued);
	pthread_mutex_destroy(&s->lock);
}

/*
 * The oldest chunk the drain thread queued, appended to the buffer: it
 * waits for one.  Returns its length, 0 at the end of the input or once
 * stopped with nothing queued, or -exit code for a read that failed.
 */
static ssize_t drain_fill(struct stream *s)
{
	struct chunk *c;
	bool dry;
	int err;

	pthread_mutex_lock(&s->lock);
	while (!(c = dequeue(s)) && !s->drain_done)
		pthread_cond_wait(&s->queued, &s->lock);
	if (c && s->q_bytes <= READ_AHEAD_MAX)
		pthread_cond_signal(&s->room);
	/* Caught up: the drain thread is to read what came meanwhile. */
	dry = c && !s->q_head && s->marked;
	err = s->drain_err;
	pthread_mutex_unlock(&s->lock);
	if (dry)
		wake_drain();
	if (c)
		return take_chunk(s, c);
	if (!err || stopped())
		return 0;
	pr_err("%s: read: %s", s->o->path, strerror(err));
	return -EXIT_ERROR;
}

static void queue_free(struct stream *s)
{
	while (s->q_head) {
		struct chunk *c = s->q_head;

		s->q_head = c->next;
		free(c);
	}
	s->q_tail = NULL;
	s->q_bytes = 0;
}

static bool queue_empty(struct stream *s)
{
	bool empty;

	if (!s->threaded)
		return !s->q_head;
	pthread_mutex_lock(&s->lock);
	empty = !s->q_head;
	pthread_mutex_unlock(&s->lock);
	return empty;
}

/* Handle one whole record; returns 1 when -n is reached, or -exit code. */
static int one_record(struct stream *s, size_t at)
{
	const struct stream_opts *o = s->o;
	struct rec r;
	char why[128];

	rec_load(&r, s->buf + at);
	switch (rec_check(&r, why, sizeof(why))) {
	case REC_CORRUPT:
		return bad_record(s, at, why);
	case REC_NEWER:
		warn_newer(s, &r);
		return 0;
	case REC_OK:
		break;
	}
	if (o->self && r.hdr.tgid == (__u32)o->self)
		return 0;
	if (!task_matches(&o->task, &r.hdr))
		return 0;
	if (stopped() > 1) {
		s->unprinted++;
		return 0;
	}
	if (o->handle) {
		if (!o->handle(&r, o->arg))
			return 0;
	} else if (o->json) {
		print_rec_json(stdout, &r, o->ks);
	} else {
		print_rec_text(stdout, &r, o->ks, &o->po);
	}
	return o->max && ++s->printed == o->max;
}

/*
 * Handle the whole records in the buffer and move an incomplete one to its
 * start.  Returns 1 when -n is reached, 0 to read on, or -exit code.
 */
static int consume(struct stream *s)
{
	size_t at = 0;
	__u32 size;
	char why[128];
	unsigned int n = 0;
	int ret = 0;

	/*
	 * Printing a branch takes dozens of stdio calls; each locks stdout
	 * with atomic operations, unless the lock is held already.
	 */
	flockfile(stdout);
	while (!ret && s->len - at >= sizeof(size)) {
		if (s->ahead && ++n % READ_AHEAD_EVERY == 0)
			read_ahead(s);
		memcpy(&size, s->buf + at, sizeof(size));
		if (rec_check_size(size, why, sizeof(why)) != REC_OK) {
			funlockfile(stdout);
			return bad_record(s, at, why);
		}
		if (s->len - at < size) {
			reserve(s, size);
			break;
		}
		ret = one_record(s, at);
		at += size;
		/*
		 * While a backlog waits (a storm), no batch ends: hand the
		 * output over before stdio's own flush would write it here.
		 */
		if (out_pending() >= OUT_HANDOFF) {
			funlockfile(stdout);
			out_flush();
			flockfile(stdout);
		}
	}
	funlockfile(stdout);
	memmove(s->buf, s->buf + at, s->len - at);
	s->len -= at;
	s->offset += at;
	/*
	 * stdout is fully buffered (stdout_buffered()): what these records
	 * printed goes out now, before a read() that may wait for more, not
	 * before a chunk read ahead.
	 */
	if (queue_empty(s))
		out_flush();
	return ret;
}

/*
 * What was read ahead, else read() into the buffer; returns the bytes
 * added, 0 at the end, or -exit code.  Read ahead is printed even once
 * stopped: the kernel has handed those records out.
 */
static ssize_t fill(struct stream *s, int fd)
{
	ssize_t n;

	if (s->threaded)
		return drain_fill(s);
	n = unqueue(s);
	if (n)
		return n;
	do {
		n = read(fd, s->buf + s->len, s->cap - s->len);
	} while (n < 0 && errno == EINTR && !stopped());

	if (n >= 0)
		return n;
	if (stopped() || errno == EAGAIN)
		return 0;
	pr_err("%s: read: %s", s->o->path, strerror(errno));
	return -EXIT_ERROR;
}

static int read_loop(struct stream *s, int fd)
{
	ssize_t n;
	int ret;

	if (s->len) {
		ret = consume(s);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	for (;;) {
		n = fill(s, fd);
		if (n < 0)
			return n;
		if (!n)
			break;
		s->len += n;
		ret = consume(s);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	if (s->len && !stopped())
		return bad_record(s, 0, "truncated at the end of the input");
	return 0;
}

struct stream *stream_new(const struct stream_opts *o)
{
	struct stream *s = xrealloc(NULL, sizeof(*s));

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->fd = -1;
	reserve(s, BUF_SIZE);
	return s;
}

/*
 * One read() from @fd, a non-blocking device, and the records it completes.
 * Returns 1 if it read something, 0 if there was nothing (EAGAIN or end of
 * input), 2 when -n is reached, or -exit code.
 */
int stream_pump(struct stream *s, int fd)
{
	ssize_t n;
	int ret;

	set_fd(s, fd);
	n = fill(s, fd);
	if (n <= 0)
		return n;
	s->len += n;
	ret = consume(s);
	if (ret)
		return ret < 0 ? ret : 2;
	return 1;
}

void stream_free(struct stream *s)
{
	queue_free(s);
	free(s->buf);
	free(s);
}

/* Print the records read from @fd; returns 0 or -exit code. */
int stream_records(int fd, const struct stream_opts *o)
{
	struct stream s = { .o = o, .fd = -1 };
	int ret;

	ret = setup_signals(fd);
	if (ret)
		return ret;
	set_fd(&s, fd);
	reserve(&s, o->pre_len + BUF_SIZE);
	if (o->pre_len) {
		memcpy(s.buf, o->pre, o->pre_len);
		s.len = o->pre_len;
	}
	if (!o->handle)
		out_start();
	if (s.ahead)
		drain_start(&s);
	ret = read_loop(&s, fd);
	if (s.threaded)
		drain_stop(&s);
	out_stop();
	queue_free(&s);
	free(s.buf);
	if (s.skipped > 1)
		pr_err("%s: skipped %llu records of a newer ABI version",
		       o->path, s.skipped);
	if (s.unprinted)
		pr_err("%s: %llu records read were not printed: stopped by a second signal",
		       o->path, s.unprinted);
	return ret;
}
