// SPDX-License-Identifier: GPL-2.0
/*
 * The record buffers: one per CPU, read back merged in time order, with
 * readers woken from any context.
 *
 * Records go to the kernel's own ring buffer (kernel/trace/ring_buffer.c):
 * per-CPU, lockless for writers and safe in NMI context.  It runs in
 * non-overwrite mode: a full buffer refuses the record, and the capture
 * path counts it as dropped.  Its own reader wait (ring_buffer_wait(),
 * ring_buffer_poll_wait()) is not exported to modules, so readers sleep on
 * lbr_read_wq here, woken the way the ring buffer wakes its own: a commit
 * queues an irq_work and never touches the wait-queue lock itself.
 */
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/ring_buffer.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "lbr_snap.h"

static struct trace_buffer *lbr_rb;
static unsigned int lbr_buf_kb_per_cpu;

static DECLARE_WAIT_QUEUE_HEAD(lbr_read_wq);
static struct irq_work lbr_wake_work;

/* Serialises readers: a record is peeked, copied, then consumed. */
static DEFINE_MUTEX(lbr_read_lock);
static u64 lbr_records_read;
static u64 lbr_records_flushed;
/* Commits per CPU, for the books at unload (lbr_buf_exit()). */
static DEFINE_PER_CPU(u64, lbr_records_committed);

static void lbr_wake_readers(struct irq_work *work)
{
	wake_up_interruptible_all(&lbr_read_wq);
}

/**
 * lbr_buf_reserve - room for a record of @len bytes on this CPU
 * @len: its size
 * @evp: what lbr_buf_commit() needs
 *
 * Any context, NMI included, with preemption off.
 * Return: the record's memory, or NULL when the buffer is full.
 */
notrace void *lbr_buf_reserve(unsigned long len,
			      struct ring_buffer_event **evp)
{
	*evp = ring_buffer_lock_reserve(lbr_rb, len);
	return *evp ? ring_buffer_event_data(*evp) : NULL;
}
NOKPROBE_SYMBOL(lbr_buf_reserve);

/**
 * lbr_buf_commit - publish a reserved record and wake its readers
 * @ev: from lbr_buf_reserve()
 */
void notrace lbr_buf_commit(struct ring_buffer_event *ev)
{
	lbr_rb_unlock_commit(lbr_rb, ev);
	this_cpu_inc(lbr_records_committed);
	/* wq_has_sleeper() orders the commit before the check (its smp_mb). */
	if (wq_has_sleeper(&lbr_read_wq))
		irq_work_queue(&lbr_wake_work);
}
NOKPROBE_SYMBOL(lbr_buf_commit);

/* The CPU whose oldest record is the oldest of all, or -1 if none. */
static int lbr_oldest_cpu(struct lbr_snap_record **recp)
{
	struct lbr_snap_record *rec, *best = NULL;
	struct ring_buffer_event *ev;
	int cpu, best_cpu = -1;

	for_each_possible_cpu(cpu) {
		ev = ring_buffer_peek(lbr_rb, cpu, NULL, NULL);
		if (!ev)
			continue;
		rec = ring_buffer_event_data(ev);
		if (!best || rec->ts_ns < best->ts_ns) {
			best = rec;
			best_cpu = cpu;
		}
	}
	*recp = best;
	return best_cpu;
}

/* Copy whole records, oldest first, while they fit. */
static ssize_t lbr_copy_records(char __user *buf, size_t count)
{
	struct lbr_snap_record *rec;
	size_t done = 0;
	int cpu;

	while ((cpu = lbr_oldest_cpu(&rec)) >= 0) {
		if (rec->size > count - done)
			return done ? done : -EINVAL;
		if (copy_to_user(buf + done, rec, rec->size))
			return done ? done : -EFAULT;
		done += rec->size;
		ring_buffer_consume(lbr_rb, cpu, NULL, NULL);
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
		ret = wait_event_interruptible(lbr_read_wq,
					       !ring_buffer_empty(lbr_rb));
		if (ret)
			return ret;
	}
}

/**
 * lbr_buf_poll - EPOLLIN when a record is there
 * @file: the reader's file
 * @wait: its poll table
 */
__poll_t lbr_buf_poll(struct file *file, poll_table *wait)
{
	poll_wait(file, &lbr_read_wq, wait);
	/* Pairs with the barrier in wq_has_sleeper() on the writer side. */
	smp_mb();
	return ring_buffer_empty(lbr_rb) ? 0 : EPOLLIN | EPOLLRDNORM;
}

/**
 * lbr_buf_flush - discard what is buffered
 *
 * One record at a time, so that every one is counted.
 */
int lbr_buf_flush(void)
{
	unsigned long left = ring_buffer_entries(lbr_rb);
	struct lbr_snap_record *rec;
	int cpu;

	if (mutex_lock_interruptible(&lbr_read_lock))
		return -ERESTARTSYS;
	/* What was there when it began: new records must not keep it going. */
	while (left-- && (cpu = lbr_oldest_cpu(&rec)) >= 0) {
		ring_buffer_consume(lbr_rb, cpu, NULL, NULL);
		WRITE_ONCE(lbr_records_flushed, lbr_records_flushed + 1);
		cond_resched();
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

/**
 * lbr_buf_init - allocate @kb KiB per possible CPU
 * @kb: per CPU
 */
int lbr_buf_init(unsigned int kb)
{
	init_irq_work(&lbr_wake_work, lbr_wake_readers);
	lbr_rb = ring_buffer_alloc((unsigned long)kb * 1024, 0);
	if (!lbr_rb)
		return -ENOMEM;
	lbr_buf_kb_per_cpu = kb;
	return 0;
}

/* The size of each CPU's buffer, in KiB. */
unsigned int lbr_buf_kb(void)
{
	return lbr_buf_kb_per_cpu;
}

/*
 * Every record committed was read, flushed or is still buffered where a
 * reader finds it.  If not, say so with the ring buffer's own view of each
 * CPU: a record lost without a count is a defect, and this is where it
 * shows.
 */
static void lbr_buf_check_books(void)
{
	u64 committed = 0, left = ring_buffer_entries(lbr_rb);
	bool unseen = false;
	int cpu;

	for_each_possible_cpu(cpu) {
		committed += per_cpu(lbr_records_committed, cpu);
		if (ring_buffer_entries_cpu(lbr_rb, cpu) &&
		    !ring_buffer_peek(lbr_rb, cpu, NULL, NULL))
			unseen = true;
	}
	if (committed == lbr_records_read + lbr_records_flushed + left &&
	    !unseen)
		return;
	pr_warn("%llu records committed, %llu read, %llu flushed, %llu buffered: %lld unaccounted%s\n",
		committed, lbr_records_read, lbr_records_flushed, left,
		(s64)(committed - lbr_records_read - lbr_records_flushed -
		      left),
		unseen ? "; buffered records no reader can see" : "");
	/* Offline CPUs keep their buffers: every CPU that has anything. */
	for_each_possible_cpu(cpu)
		if (per_cpu(lbr_records_committed, cpu) ||
		    ring_buffer_entries_cpu(lbr_rb, cpu) ||
		    ring_buffer_read_events_cpu(lbr_rb, cpu))
			pr_warn("cpu%d: committed %llu; ring buffer entries %lu (%s) read %lu overrun %lu commit_overrun %lu dropped %lu\n",
				cpu, per_cpu(lbr_records_committed, cpu),
				ring_buffer_entries_cpu(lbr_rb, cpu),
				ring_buffer_peek(lbr_rb, cpu, NULL, NULL) ?
				"the oldest readable" : "none readable",
				ring_buffer_read_events_cpu(lbr_rb, cpu),
				ring_buffer_overrun_cpu(lbr_rb, cpu),
				ring_buffer_commit_overrun_cpu(lbr_rb, cpu),
				ring_buffer_dropped_events_cpu(lbr_rb, cpu));
}

/* After the last commit can happen. */
void lbr_buf_exit(void)
{
	irq_work_sync(&lbr_wake_work);
	lbr_buf_check_books();
	ring_buffer_free(lbr_rb);
}
