// SPDX-License-Identifier: GPL-2.0
/*
 * The record buffers: one ring per possible CPU, read back merged in time
 * order, with readers woken from any context.
 *
 * Not the kernel's ring buffer (kernel/trace/ring_buffer.c), which this
 * file used until its fuzzer showed it losing committed records.  When the
 * reader has read all of the reader page and the writer is on that page,
 * rb_get_reader_page() reads the page's commit index and then, in a
 * separate load, cpu_buffer->commit_page.  A writer that commits a record
 * on the page and moves on to the next page between the two loads makes
 * the reader take the page as fully read: it resets the page and swaps
 * it out, and the record is gone while the buffer still counts it as an
 * entry (ring_buffer_entries_cpu() stays above zero with nothing to peek).
 * A reader is rarely stalled that long on hardware (an NMI, a preempted
 * vCPU), but it is a loss nobody counts, and a single-threaded TCG guest
 * showed it in about one fuzzer run in twenty.
 *
 * lbr_snap needs far less than that buffer's generality: each CPU's ring
 * has one writer at a time (lbr_capture() runs with interrupts off, and
 * its nesting guard turns away a return in an NMI that interrupts it)
 * and one reader at a time (lbr_read_lock).  A single-producer,
 * single-consumer ring takes two indices and a release/acquire pair on
 * each, and nothing else: NMI-safe, no atomics, no lock on the writer's
 * side.  A full ring refuses the record, and the capture path counts it
 * as dropped.
 *
 * Readers sleep on lbr_read_wq, woken the way the kernel's ring buffer
 * wakes its own: a commit queues an irq_work and never touches the
 * wait-queue lock itself.  Pollers wait on lbr_mark_wq, each for a mark:
 * the bytes a CPU's ring must hold, 1 (any record) unless its descriptor
 * asked for fewer wakeups (LBR_SNAP_IOC_SET_WAKEUP, as ftrace's
 * buffer_percent and perf's wakeup_watermark batch theirs).
 */
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "lbr_read.h"
#include "lbr_snap.h"

/* The rings' index loads: pair with the other side's release (lbr_ring.h). */
#define LBR_RING_LOAD_ACQUIRE(p)	smp_load_acquire(p)
/* The rings' index stores: after the bytes they hand over (lbr_ring.h). */
#define LBR_RING_STORE_RELEASE(p, v)	smp_store_release(p, v)
#define LBR_RING_BAD(cond)		WARN_ON_ONCE(cond)
#include "lbr_ring.h"

static DEFINE_PER_CPU(struct lbr_ring, lbr_rings);
/* Each ring's size (lbr_ring.size), in bytes. */
static unsigned long lbr_ring_size __read_mostly;

static DECLARE_WAIT_QUEUE_HEAD(lbr_read_wq);
static struct irq_work lbr_wake_work;

/*
 * lbr_wake_mark.bytes is the smallest mark published since the last
 * wakeup of lbr_mark_wq, ULONG_MAX if none: each poller publishes its own
 * before it looks at the rings, and the wakeup resets it and wakes them
 * all, under the queue's lock and with no poll key, so that each poller,
 * epoll's included, polls again and publishes its mark anew.  So a poller
 * with a lower mark (1 without one) has the others woken with it, to poll
 * and sleep again.  On a cache line of its own (the type's alignment pads
 * it): every commit reads it, and readers write the queues' locks.
 */
static DECLARE_WAIT_QUEUE_HEAD(lbr_mark_wq);
static struct lbr_wake_mark {
	unsigned long bytes;
} ____cacheline_aligned_in_smp lbr_wake_mark = { ULONG_MAX };

/* Serialises readers: a record is peeked, copied, then consumed. */
static DEFINE_MUTEX(lbr_read_lock);
static u64 lbr_records_read;
static u64 lbr_records_flushed;

static bool lbr_buf_holds(unsigned long bytes);

/*
 * Blocking readers at every record; pollers only once their smallest mark
 * is reached, not each time the work runs for a reader.
 */
static void lbr_wake_readers(struct irq_work *work)
{
	unsigned long flags;

	wake_up_interruptible_all(&lbr_read_wq);
	if (READ_ONCE(lbr_wake_mark.bytes) == ULONG_MAX)
		return;
	spin_lock_irqsave(&lbr_mark_wq.lock, flags);
	/*
	 * No poller waits (a poll() that did not sleep published it):
	 * nothing to wake.  poll_wait() queues before its mark is published.
	 */
	if (!waitqueue_active(&lbr_mark_wq)) {
		WRITE_ONCE(lbr_wake_mark.bytes, ULONG_MAX);
	} else if (lbr_buf_holds(lbr_wake_mark.bytes)) {
		WRITE_ONCE(lbr_wake_mark.bytes, ULONG_MAX);
		wake_up_all_locked(&lbr_mark_wq);
	}
	spin_unlock_irqrestore(&lbr_mark_wq.lock, flags);
}

/**
 * lbr_buf_reserve - room for a record of @len bytes on this CPU
 * @len: its size
 * @res: what lbr_buf_commit() needs
 *
 * Any context, NMI included, with interrupts off and no other
 * reservation open on this CPU (lbr_capture()'s nesting guard).
 * Return: the record's memory, 8-byte aligned, or NULL when the ring is
 * full.
 */
notrace void *lbr_buf_reserve(unsigned long len, struct lbr_buf_resv *res)
{
	struct lbr_ring *r = this_cpu_ptr(&lbr_rings);

	res->ring = r;
	return lbr_ring_reserve(r, len, &res->head);
}
NOKPROBE_SYMBOL(lbr_buf_reserve);

/**
 * lbr_buf_trim - give back the end of a reservation before its commit
 * @res: from lbr_buf_reserve(), on this CPU, not yet committed
 * @rec: the record lbr_buf_reserve() returned
 * @len: its size now, no more than it reserved
 *
 * The slot is the newest of the ring, so its end can move back; a wrap
 * marker before it stays valid.
 */
notrace void lbr_buf_trim(struct lbr_buf_resv *res, void *rec,
			  unsigned long len)
{
	WARN_ON_ONCE(!lbr_ring_trim(rec, len, &res->head));
}
NOKPROBE_SYMBOL(lbr_buf_trim);

/**
 * lbr_buf_commit - publish a reserved record and wake its readers
 * @res: from lbr_buf_reserve(), on this CPU
 */
notrace void lbr_buf_commit(const struct lbr_buf_resv *res)
{
	struct lbr_ring *r = res->ring;

	lbr_ring_publish(r, res->head);
	/*
	 * The commit before the checks, as wq_has_sleeper() orders it: a
	 * reader or poller that found too little (lbr_buf_read(),
	 * lbr_buf_poll(), their barriers) is seen waiting, a poller with
	 * its mark.
	 */
	smp_mb();
	/* waitqueue_active(): ordered by the smp_mb() above. */
	if (waitqueue_active(&lbr_read_wq) ||
	    res->head - READ_ONCE(r->tail) >= READ_ONCE(lbr_wake_mark.bytes))
		irq_work_queue(&lbr_wake_work);
}
NOKPROBE_SYMBOL(lbr_buf_commit);

/* The oldest record of @r, or NULL; see lbr_ring_slot(). */
static struct lbr_snap_record *lbr_ring_peek(struct lbr_ring *r,
					     unsigned long *next)
{
	struct lbr_slot *s = lbr_ring_slot(r, next);

	return s ? (struct lbr_snap_record *)(s + 1) : NULL;
}

/* Does some CPU's ring hold @bytes or more (records, wrap markers)? */
static bool lbr_buf_holds(unsigned long bytes)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct lbr_ring *r = per_cpu_ptr(&lbr_rings, cpu);
		/* The tail first: a reader may move it up to the head. */
		unsigned long tail = smp_load_acquire(&r->tail);

		if (READ_ONCE(r->head) - tail >= bytes)
			return true;
	}
	return false;
}

/* The ring whose oldest record is the oldest of all, or NULL if none. */
static struct lbr_ring *lbr_oldest(struct lbr_snap_record **recp,
				   unsigned long *nextp)
{
	struct lbr_snap_record *rec, *best = NULL;
	struct lbr_ring *r, *best_r = NULL;
	unsigned long next;
	int cpu;

	for_each_possible_cpu(cpu) {
		r = per_cpu_ptr(&lbr_rings, cpu);
		rec = lbr_ring_peek(r, &next);
		if (!rec)
			continue;
		if (!best || rec->ts_ns < best->ts_ns) {
			best = rec;
			best_r = r;
			*nextp = next;
		}
	}
	*recp = best;
	return best_r;
}

/*
 * Where a record is decoded before it is copied out (lbr_record_decode()):
 * one, under lbr_read_lock.
 */
static u64 lbr_read_bounce[LBR_RECORD_DECODED_MAX / sizeof(u64)];

/*
 * Copy whole records, oldest first, while they fit.  One the decoder
 * refuses (a defect; it WARNs) is consumed and not counted as read.
 */
static ssize_t lbr_copy_records(char __user *buf, size_t count)
{
	struct lbr_snap_record *rec;
	struct lbr_ring *r;
	unsigned long next;
	unsigned int len;
	size_t done = 0;

	while ((r = lbr_oldest(&rec, &next))) {
		len = lbr_record_decode(rec, rec->size,
					(struct lbr_snap_record *)lbr_read_bounce);
		if (!len) {
			lbr_ring_consume(r, next);
			continue;
		}
		if (len > count - done)
			return done ? done : -EINVAL;
		if (copy_to_user(buf + done, lbr_read_bounce, len))
			return done ? done : -EFAULT;
		done += len;
		lbr_ring_consume(r, next);
		WRITE_ONCE(lbr_records_read, lbr_records_read + 1);
		cond_resched();
	}
	return done;
}

/**
 * lbr_buf_read - copy whole records, oldest first, into @buf
 * @buf: the reader's buffer
 * @count: its size
 * @nonblock: return -EAGAIN rather than wait for a record
 *
 * Return: the bytes copied, -EINVAL if the oldest record does not fit.
 */
ssize_t lbr_buf_read(char __user *buf, size_t count, bool nonblock)
{
	ssize_t ret;

	for (;;) {
		if (mutex_lock_interruptible(&lbr_read_lock))
			return -ERESTARTSYS;
		ret = lbr_copy_records(buf, count);
		mutex_unlock(&lbr_read_lock);
		if (ret)
			return ret;
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(lbr_read_wq, lbr_buf_holds(1));
		if (ret)
			return ret;
	}
}

/**
 * lbr_buf_poll - EPOLLIN when a record is there, or @mark bytes
 * @file: the reader's file
 * @wait: its poll table
 * @mark: 0 (any record), or the bytes of records and slot headers a CPU's
 *	ring must hold (at most half of it)
 *
 * Every poller waits on lbr_mark_wq, whatever its mark, so that a mark
 * changed while epoll holds the file still has it woken.
 */
__poll_t lbr_buf_poll(struct file *file, poll_table *wait,
		      unsigned long mark)
{
	mark = max(mark, 1UL);
	poll_wait(file, &lbr_mark_wq, wait);
	/* Lower only, under the lock: a wakeup's reset comes after it. */
	if (mark < READ_ONCE(lbr_wake_mark.bytes)) {
		spin_lock_irq(&lbr_mark_wq.lock);
		if (mark < lbr_wake_mark.bytes)
			WRITE_ONCE(lbr_wake_mark.bytes, mark);
		spin_unlock_irq(&lbr_mark_wq.lock);
	}
	/* Pairs with the barrier in lbr_buf_commit(). */
	smp_mb();
	return lbr_buf_holds(mark) ? EPOLLIN | EPOLLRDNORM : 0;
}

/**
 * lbr_buf_mark_set - a descriptor's mark changed to @mark
 * @mark: 0 (any record), or bytes as lbr_buf_poll() takes them
 *
 * Its pollers, and epoll holding it, published the old one: a lower mark
 * is published now, and wakes them if the rings already hold it.  (A
 * higher one takes effect at their next poll.)
 */
void lbr_buf_mark_set(unsigned long mark)
{
	mark = max(mark, 1UL);
	spin_lock_irq(&lbr_mark_wq.lock);
	if (mark < lbr_wake_mark.bytes)
		WRITE_ONCE(lbr_wake_mark.bytes, mark);
	/* Pairs with the barrier in lbr_buf_commit(), as above. */
	smp_mb();
	if (lbr_buf_holds(mark)) {
		WRITE_ONCE(lbr_wake_mark.bytes, ULONG_MAX);
		wake_up_all_locked(&lbr_mark_wq);
	}
	spin_unlock_irq(&lbr_mark_wq.lock);
}

/*
 * Records in @r, with no writer left (the books at unload): walked slot
 * by slot, not taken from the counters they check.
 */
static unsigned long lbr_ring_count(struct lbr_ring *r)
{
	unsigned long tail = r->tail, n = 0;
	struct lbr_slot *s;

	while ((s = lbr_ring_slot(r, &r->tail))) {
		n++;
		cond_resched();
	}
	r->tail = tail;
	return n;
}

/**
 * lbr_buf_flush - discard what is buffered
 *
 * Ring by ring, one record at a time so that every one is counted, up to
 * where each ring's writer was when it began: new records must not keep
 * it going.
 */
int lbr_buf_flush(void)
{
	unsigned long next, end;
	struct lbr_ring *r;
	int cpu;

	if (mutex_lock_interruptible(&lbr_read_lock))
		return -ERESTARTSYS;
	for_each_possible_cpu(cpu) {
		r = per_cpu_ptr(&lbr_rings, cpu);
		end = READ_ONCE(r->head);
		while (r->tail != end && lbr_ring_slot(r, &next)) {
			lbr_ring_consume(r, next);
			WRITE_ONCE(lbr_records_flushed,
				   lbr_records_flushed + 1);
			cond_resched();
		}
	}
	mutex_unlock(&lbr_read_lock);
	return 0;
}

/**
 * lbr_buf_counts - records read and flushed since load
 * @read: read
 * @flushed: flushed
 */
void lbr_buf_counts(u64 *read, u64 *flushed)
{
	/*
	 * Not under lbr_read_lock: a reader holds it across copy_to_user(),
	 * which may wait on a slow page for as long as it likes.  Written
	 * under it, read whole (64-bit).
	 */
	*read = READ_ONCE(lbr_records_read);
	*flushed = READ_ONCE(lbr_records_flushed);
}

static void lbr_rings_free(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct lbr_ring *r = per_cpu_ptr(&lbr_rings, cpu);

		kvfree(r->data);
		memset(r, 0, sizeof(*r));
	}
}

/**
 * lbr_buf_init - allocate @kb KiB for each possible CPU
 * @kb: per CPU
 *
 * Each CPU's ring on its own node.  A failure is an -ENOMEM, never a
 * WARN (__GFP_NOWARN) nor the OOM killer (__GFP_RETRY_MAYFAIL, as the
 * kernel's ring buffer allocates).
 */
int lbr_buf_init(unsigned int kb)
{
	int cpu;

	init_irq_work(&lbr_wake_work, lbr_wake_readers);
	lbr_ring_size = (unsigned long)kb * 1024;
	for_each_possible_cpu(cpu) {
		struct lbr_ring *r = per_cpu_ptr(&lbr_rings, cpu);

		r->size = lbr_ring_size;
		r->data = kvmalloc_node(lbr_ring_size, GFP_KERNEL |
					__GFP_NOWARN | __GFP_RETRY_MAYFAIL,
					cpu_to_node(cpu));
		if (!r->data) {
			lbr_rings_free();
			return -ENOMEM;
		}
	}
	return 0;
}

/* The size of each CPU's buffer, in KiB. */
unsigned int lbr_buf_kb(void)
{
	return lbr_ring_size / 1024;
}

/*
 * The highest wakeup mark every ring reaches before it refuses a record:
 * lbr_buf_reserve() refuses one only when the ring holds more than its
 * size less the record and a wrap's skip (less than a record), so more
 * than its size less two of the largest slots; and at most half of it.
 */
unsigned long lbr_buf_mark_max(void)
{
	unsigned long slot = ALIGN(sizeof(struct lbr_slot) +
				   sizeof(struct lbr_raw_record) +
				   (LBR_RAW_MAX_MSRS + LBR_SNAP_MAX_STACK) *
				   sizeof(u64), 8);

	if (lbr_ring_size <= 2 * slot)
		return 0;
	return min(lbr_ring_size / 2, lbr_ring_size - 2 * slot);
}

/*
 * Every record committed was read, flushed or is still buffered.  If not,
 * say so, CPU by CPU: a record lost without a count is a defect, and this
 * is where it shows.
 */
static void lbr_buf_check_books(void)
{
	u64 committed = 0, left = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct lbr_ring *r = per_cpu_ptr(&lbr_rings, cpu);

		committed += r->committed;
		left += lbr_ring_count(r);
	}
	if (committed == lbr_records_read + lbr_records_flushed + left)
		return;
	pr_warn("%llu records committed, %llu read, %llu flushed, %llu buffered: %lld unaccounted\n",
		committed, lbr_records_read, lbr_records_flushed, left,
		(s64)(committed - lbr_records_read - lbr_records_flushed -
		      left));
	for_each_possible_cpu(cpu) {
		struct lbr_ring *r = per_cpu_ptr(&lbr_rings, cpu);

		if (r->committed)
			pr_warn("cpu%d: committed %llu, buffered %lu, head %lu tail %lu\n",
				cpu, r->committed, lbr_ring_count(r), r->head,
				r->tail);
	}
}

/* After the last commit can happen. */
void lbr_buf_exit(void)
{
	irq_work_sync(&lbr_wake_work);
	lbr_buf_check_books();
	lbr_rings_free();
}
