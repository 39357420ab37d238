// SPDX-License-Identifier: GPL-2.0
/*
 * The module's record ring (src/lbr_ring.h) in user space: a writer and a
 * reader thread, as a CPU's capture path and a reader are, through a
 * small ring that wraps thousands of times.  Every record must come out
 * once, in order and whole, and no slot may look bad.  Built with
 * -fsanitize=thread by tests/unit/ring.sh, which also builds three broken
 * variants that must fail: RING_BREAK_ACQUIRE (the index loads without
 * acquire: the reader may read a record before it is written),
 * RING_BREAK_EARLY_CONSUME (the reader gives the bytes back before it has
 * read them) and RING_BREAK_TRIM (a trim that moves the head 8 bytes too
 * far back: the next record overlaps).  ThreadSanitizer decides from the
 * happens-before order of the accesses, not from their timing.  Neither
 * thread waits for good: each gives up once the other is done.
 *
 *   ring_test [RECORDS]     prints TAP; exits 1 on a failure
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lbr_snap.h>

typedef uint32_t u32;
typedef uint64_t u64;
#ifndef __always_inline
#define __always_inline			inline __attribute__((always_inline))
#endif
#define ____cacheline_aligned_in_smp	__attribute__((aligned(64)))
#define ALIGN(x, a)			(((x) + (a) - 1) & ~((unsigned long)(a) - 1))

#ifdef RING_BREAK_ACQUIRE
#define LBR_RING_LOAD_ACQUIRE(p)	__atomic_load_n(p, __ATOMIC_RELAXED)
#else
#define LBR_RING_LOAD_ACQUIRE(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#endif
#define LBR_RING_STORE_RELEASE(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

static unsigned long bad_slots;
static int writer_done, reader_done;
#define LBR_RING_BAD(cond)		((cond) ? (bad_slots++, 1) : 0)

#include "lbr_ring.h"

#ifdef RING_BREAK_TRIM
static inline bool broken_trim(void *rec, unsigned long len,
			       unsigned long *head)
{
	bool ok = lbr_ring_trim(rec, len, head);

	*head -= 8;
	return ok;
}
#define lbr_ring_trim broken_trim
#endif

#define RING_SIZE	4096
#define PAYLOAD_MAX	600

static struct lbr_ring ring;
static unsigned long nr_records = 200000;
static unsigned long full_spins, wraps;

/* Record @i's payload bytes: some sizes near the ring's end make wraps. */
static unsigned long payload_of(unsigned long i)
{
	return (i * 37) % PAYLOAD_MAX;
}

static void *writer(void *unused)
{
	unsigned long i, len, head, extra;
	struct lbr_snap_record *rec;
	unsigned char *p;

	(void)unused;
	for (i = 0; i < nr_records; i++) {
		len = sizeof(*rec) + payload_of(i);
		/* Every third reserves more and trims back, as captures do. */
		extra = i % 3 ? 0 : 64;
		while (!(rec = lbr_ring_reserve(&ring, len + extra, &head))) {
			if (__atomic_load_n(&reader_done, __ATOMIC_ACQUIRE))
				goto out;
			full_spins++;
			sched_yield();
		}
		if (extra && !lbr_ring_trim(rec, len, &head))
			abort();
		memset(rec, 0, sizeof(*rec));
		rec->size = len;
		rec->ts_ns = i;
		p = (unsigned char *)(rec + 1);
		memset(p, (int)(i & 0xff), len - sizeof(*rec));
		if ((char *)rec - ring.data < (long)sizeof(struct lbr_slot) * 2 &&
		    i)
			wraps++;
		lbr_ring_publish(&ring, head);
	}
out:
	__atomic_store_n(&writer_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static unsigned long got, out_of_order, torn;

static void *reader(void *unused)
{
	const struct lbr_snap_record *rec;
	unsigned long next, len, k;
	const unsigned char *p;
	struct lbr_slot *s;

	(void)unused;
	while (got < nr_records && !bad_slots && !out_of_order && !torn) {
		int done = __atomic_load_n(&writer_done, __ATOMIC_ACQUIRE);

		s = lbr_ring_slot(&ring, &next);
		if (!s) {
			/* Empty with the writer gone: what is missing is lost. */
			if (done)
				break;
			sched_yield();
			continue;
		}
		rec = (const struct lbr_snap_record *)(s + 1);
#ifdef RING_BREAK_EARLY_CONSUME
		lbr_ring_consume(&ring, next);
#endif
		if (rec->ts_ns != got)
			out_of_order++;
		len = sizeof(*rec) + payload_of(got);
		p = (const unsigned char *)(rec + 1);
		if (rec->size != len)
			torn++;
		else
			for (k = 0; k < len - sizeof(*rec); k++)
				if (p[k] != (got & 0xff)) {
					torn++;
					break;
				}
#ifndef RING_BREAK_EARLY_CONSUME
		lbr_ring_consume(&ring, next);
#endif
		got++;
	}
	__atomic_store_n(&reader_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w, r;

	if (argc > 1)
		nr_records = strtoul(argv[1], NULL, 0);
	ring.size = RING_SIZE;
	ring.data = aligned_alloc(64, RING_SIZE);
	if (!ring.data)
		return 2;
	printf("1..2\n");
	if (pthread_create(&r, NULL, reader, NULL) ||
	    pthread_create(&w, NULL, writer, NULL))
		return 2;
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	printf("%sok 1 - %lu records through a %d-byte ring (%lu wraps, writer found it full %lu times): %lu read, %lu out of order, %lu torn\n",
	       got == nr_records && !out_of_order && !torn && wraps > 100 ?
	       "" : "not ",
	       nr_records, RING_SIZE, wraps, full_spins, got, out_of_order,
	       torn);
	printf("%sok 2 - no slot looked bad (%lu), the ring is empty after (%s), %llu committed\n",
	       !bad_slots && ring.head == ring.tail &&
	       ring.committed == nr_records ? "" : "not ",
	       bad_slots, ring.head == ring.tail ? "yes" : "no",
	       (unsigned long long)ring.committed);
	free(ring.data);
	return got == nr_records && !out_of_order && !torn && !bad_slots &&
	       wraps > 100 && ring.head == ring.tail ? 0 : 1;
}
