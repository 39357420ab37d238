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
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "print.h"
#include "record.h"
#include "stream.h"
#include "util.h"

/* Initial buffer: many records per read(); it grows for bigger ones. */
#define BUF_SIZE	(64 * 1024)

#define READ_AHEAD_EVERY	8			/* records printed */
#define READ_AHEAD_MAX		(64 * 1024 * 1024)	/* bytes unprinted */

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
};

static volatile sig_atomic_t stop;
static int stream_fd = -1;
static int eof_fd = -1;		/* read end of a pipe with no writer */

/*
 * Stop the stream.  A read() the signal interrupted fails with EINTR or is
 * restarted; either way it, or one about to start, now reads the writerless
 * pipe in place of the device and returns 0 at once: no signal is lost.
 */
static void on_signal(int sig)
{
	int saved_errno = errno;

	(void)sig;
	stop = 1;
	dup2(eof_fd, stream_fd);
	errno = saved_errno;
}

static int setup_signals(int fd)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	int p[2];

	if (pipe(p) < 0) {
		pr_err("pipe: %s", strerror(errno));
		return -EXIT_ERROR;
	}
	close(p[1]);
	eof_fd = p[0];
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

/* What the input holds now, queued behind what is still to print. */
static void read_ahead(struct stream *s)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	struct chunk *c;
	ssize_t n;

	if (stop || s->q_bytes > READ_AHEAD_MAX ||
	    poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLIN))
		return;
	c = xrealloc(NULL, sizeof(*c) + BUF_SIZE);
	/* An error shows again at the next fill(), which reports it. */
	n = read(s->fd, c->data, BUF_SIZE);
	if (n <= 0) {
		free(c);
		return;
	}
	/* READ_AHEAD_MAX bounds the memory held, not just the bytes read. */
	if (n < BUF_SIZE)
		c = xrealloc(c, sizeof(*c) + n);
	c->len = n;
	c->next = NULL;
	if (s->q_tail)
		s->q_tail->next = c;
	else
		s->q_head = c;
	s->q_tail = c;
	s->q_bytes += n;
}

/* The oldest chunk read ahead, appended to the buffer; 0 if none. */
static size_t unqueue(struct stream *s)
{
	struct chunk *c = s->q_head;
	size_t n;

	if (!c)
		return 0;
	reserve(s, s->len + c->len);
	memcpy(s->buf + s->len, c->data, c->len);
	n = c->len;
	s->q_head = c->next;
	if (!s->q_head)
		s->q_tail = NULL;
	s->q_bytes -= n;
	free(c);
	return n;
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

/* Handle one whole record; returns 1 when -n is reached, or -exit code. */
static int one_record(struct stream *s, size_t at)
{
	const struct stream_opts *o = s->o;
	struct rec r = { .raw = s->buf + at };
	char why[128];

	memcpy(&r.hdr, r.raw, sizeof(r.hdr));
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
	if (!s->q_head)
		fflush(stdout);
	return ret;
}

/*
 * What was read ahead, else read() into the buffer; returns the bytes
 * added, 0 at the end, or -exit code.  Read ahead is printed even once
 * stopped: the kernel has handed those records out.
 */
static ssize_t fill(struct stream *s, int fd)
{
	ssize_t n = unqueue(s);

	if (n)
		return n;
	do {
		n = read(fd, s->buf + s->len, s->cap - s->len);
	} while (n < 0 && errno == EINTR && !stop);

	if (n >= 0)
		return n;
	if (stop || errno == EAGAIN)
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
	if (s->len && !stop)
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
	ret = read_loop(&s, fd);
	queue_free(&s);
	free(s.buf);
	if (s.skipped > 1)
		pr_err("%s: skipped %llu records of a newer ABI version",
		       o->path, s.skipped);
	return ret;
}
