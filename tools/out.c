// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: stdout written by a thread of its own while records stream.
 *
 * Where the reader's time goes in a storm: a --json record is some 10 KB
 * of output, and in the lab guest (gprof of a replayed storm) write()
 * was well over half of the reader's time a record: the kernel copying
 * the bytes into the page cache (or a pipe).  That copy cannot be made
 * smaller, but it need not hold up the printing of the next records:
 * perf record --aio writes its output beside its reading for the same
 * reason.
 *
 * While out_start() .. out_stop(), stdout is one of two streams of
 * fopencookie(), each with its own 1 MiB stdio buffer.  out_flush()
 * fflush()es the current one, whose cookie write then only queues stdio's
 * buffer for the writer thread, and stdout becomes the other stream, once
 * the writer is done with that one's buffer.  stdio does not touch a
 * buffer it has flushed until the stream is written to again, and that
 * stream is not written to until the writer is done with it.  Any other
 * flush (a record larger than the buffer, exit) writes at once, after
 * whatever is queued; pr_err() waits for the writer (out_sync()).  So the
 * output is what and in the order that plain stdio would write, from at
 * most two buffers at a time.
 *
 * A write error (ENOSPC, EIO; EPIPE when SIGPIPE is ignored) is kept:
 * what is queued after it is dropped, the streams report the error to
 * stdio from then on, and out_failed() tells whoever checks stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out.h"
#include "util.h"

#define OUT_BUF_SIZE	(1024 * 1024)

struct out_buf {
	FILE *f;
	char *mem;		/* stdio's buffer of @f */
	const char *job;	/* queued: @len bytes for the writer */
	size_t len;
	bool handoff;		/* out_flush(): queue, do not write */
};

static struct {
	struct out_buf b[2];
	unsigned int cur;	/* b[cur].f is stdout */
	FILE *plain;		/* stdout before out_start() */
	int fd;
	bool running, quit;
	bool forked;		/* in a child of fork(): no writer here */
	int err;		/* the first write error, or 0 */
	unsigned int queued;	/* buffers queued, not written yet */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work;	/* a job queued, or quit */
	pthread_cond_t done;	/* a job written */
} out = {
	.fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/* Write @len bytes at @p to out.fd; 0 or an errno. */
static int write_all(const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(out.fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* Jobs are taken in the order queued: the other buffer's, then ours. */
static void *out_run(void *arg)
{
	unsigned int next = 0;

	(void)arg;
	pthread_mutex_lock(&out.lock);
	for (;;) {
		struct out_buf *b = &out.b[next];
		int err = 0;

		while (!b->job && !out.quit)
			pthread_cond_wait(&out.work, &out.lock);
		if (!b->job)
			break;
		if (!out.err) {
			pthread_mutex_unlock(&out.lock);
			err = write_all(b->job, b->len);
			pthread_mutex_lock(&out.lock);
			if (err && !out.err)
				out.err = err;
		}
		b->job = NULL;
		out.queued--;
		next ^= 1;
		pthread_cond_broadcast(&out.done);
	}
	pthread_mutex_unlock(&out.lock);
	return NULL;
}

/* Under out.lock: until nothing is queued. */
static void wait_idle(void)
{
	while (out.queued)
		pthread_cond_wait(&out.done, &out.lock);
}

static ssize_t cookie_write(void *cookie, const char *p, size_t len)
{
	struct out_buf *b = cookie;
	int err;

	if (out.forked) {
		/* A child's exit(): the lock may be held, the writer is gone. */
		err = write_all(p, len);
		if (err) {
			errno = err;
			return -1;
		}
		return len;
	}
	pthread_mutex_lock(&out.lock);
	if (b->handoff && !out.err) {
		b->handoff = false;	/* queued: once a flush */
		b->job = p;
		b->len = len;
		out.queued++;
		pthread_cond_signal(&out.work);
		pthread_mutex_unlock(&out.lock);
		return len;
	}
	wait_idle();
	err = out.err;
	pthread_mutex_unlock(&out.lock);
	if (!err)
		err = write_all(p, len);
	if (err) {
		pthread_mutex_lock(&out.lock);
		if (!out.err)
			out.err = err;
		pthread_mutex_unlock(&out.lock);
		errno = err;
		return -1;
	}
	return len;
}

static void close_bufs(void)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		if (out.b[i].f)
			fclose(out.b[i].f);	/* empty: nothing to write */
		free(out.b[i].mem);
		memset(&out.b[i], 0, sizeof(out.b[i]));
	}
}

static void in_child(void)
{
	out.forked = true;
}

static void at_exit(void)
{
	out_stop();
}

/*
 * Let a thread write stdout from here on; plain stdio if it cannot be
 * (no memory, no thread).  Whatever stdout holds goes out first.
 */
void out_start(void)
{
	cookie_io_functions_t io = { .write = cookie_write };
	static bool registered;
	sigset_t all, old;
	unsigned int i;
	int fd;

	if (out.running || out.forked || fflush(stdout) || ferror(stdout))
		return;
	/*
	 * Both or neither: no writer without the exit handler that ends it,
	 * or without the mark a child needs.  Registered again after a
	 * failure; out_stop() twice is harmless.
	 */
	if (!registered) {
		if (atexit(at_exit) || pthread_atfork(NULL, NULL, in_child))
			return;
		registered = true;
	}
	fd = fileno(stdout);
	if (fd < 0)
		return;
	for (i = 0; i < 2; i++) {
		out.b[i].mem = malloc(OUT_BUF_SIZE);
		out.b[i].f = out.b[i].mem ?
			     fopencookie(&out.b[i], "w", io) : NULL;
		if (!out.b[i].f ||
		    setvbuf(out.b[i].f, out.b[i].mem, _IOFBF, OUT_BUF_SIZE)) {
			close_bufs();
			return;
		}
	}
	out.fd = fd;
	out.quit = false;
	out.err = 0;
	out.queued = 0;
	/*
	 * SIGINT and SIGTERM are for the threads that read and print; what
	 * a write() raises (SIGPIPE, SIGXFSZ, SIGTTOU) acts as it did.
	 */
	sigemptyset(&all);
	sigaddset(&all, SIGINT);
	sigaddset(&all, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&out.thread, NULL, out_run, NULL)) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		close_bufs();
		return;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	out.running = true;
	out.cur = 0;
	out.plain = stdout;
	stdout = out.b[0].f;
}

/*
 * What stdout holds goes to the writer; go on printing into the other
 * buffer once it is free.  Plain fflush() outside out_start().
 */
void out_flush(void)
{
	struct out_buf *b, *other;
	bool queued;

	if (!out.running || out.forked) {
		fflush(stdout);
		return;
	}
	b = &out.b[out.cur];
	other = &out.b[out.cur ^ 1];
	b->handoff = true;
	fflush(b->f);
	pthread_mutex_lock(&out.lock);
	queued = !b->handoff;	/* the writer may be done with it already */
	b->handoff = false;
	if (queued) {
		while (other->job)
			pthread_cond_wait(&out.done, &out.lock);
		out.cur ^= 1;
		stdout = other->f;
	}
	pthread_mutex_unlock(&out.lock);
}

/*
 * Everything printed so far written out: what the writer holds, then
 * stdout's own buffer.  pr_err() calls it so that a message on stderr
 * comes after the records printed before it; a plain fflush() could
 * find stdout's buffer empty while the writer still held a full one.
 */
void out_sync(void)
{
	fflush(stdout);
	if (!out.running || out.forked)
		return;
	pthread_mutex_lock(&out.lock);
	wait_idle();
	pthread_mutex_unlock(&out.lock);
}

/* Bytes printed into stdout's buffer and not handed over yet. */
size_t out_pending(void)
{
	return out.running && !out.forked ? __fpending(stdout) : 0;
}

/*
 * Write everything, end the thread, give stdout back.  Returns 0, or -1
 * if a write failed (errno set).  Also at exit(); a no-op in a child.
 */
int out_stop(void)
{
	int err;

	if (!out.running || out.forked)
		return 0;
	fflush(stdout);
	pthread_mutex_lock(&out.lock);
	wait_idle();
	out.quit = true;
	pthread_cond_signal(&out.work);
	pthread_mutex_unlock(&out.lock);
	pthread_join(out.thread, NULL);
	out.running = false;
	stdout = out.plain;
	close_bufs();
	err = out.err;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* A write failed since out_start(), so stdout's output is incomplete. */
bool out_failed(void)
{
	return out.err;
}
