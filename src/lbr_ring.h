/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One CPU's ring of records (record_buffer.c): one writer, the capture
 * path on the ring's CPU in any context, and one reader, under the
 * buffers' read lock.  Two indices and a release/acquire pair on each:
 * no atomics, no lock on the writer's side.
 *
 * Self-contained so that tests/unit/ring_test.c builds the very same code
 * in user space and runs a writer and a reader thread under
 * ThreadSanitizer.  The includer gives LBR_RING_LOAD_ACQUIRE(),
 * LBR_RING_STORE_RELEASE(), LBR_RING_BAD() (a slot the writer did not
 * make: WARN_ON_ONCE() in the kernel), u32/u64, ALIGN() and the ABI's
 * struct lbr_snap_record.
 */
#ifndef LBR_RING_H
#define LBR_RING_H

/*
 * A record in a ring: a slot header, then the record.  Slots start
 * 8-byte aligned; one whose len is LBR_SLOT_WRAP only says that the ring
 * goes on at its start (the record after it did not fit at the end).
 */
struct lbr_slot {
	u32 len;		/* the slot's bytes, this header included */
	u32 reserved;		/* keeps the record 8-byte aligned */
};

#define LBR_SLOT_WRAP	0

/*
 * @head and @tail count bytes since load (64-bit: they never wrap): a
 * record is at offset pos % @size, and as the size (a multiple of 8) and
 * every slot are multiples of 8, a wrap marker always fits at the end.
 * Only the writer writes @head (release, after the record), only the
 * reader writes @tail (release, once it is done with the record).
 */
struct lbr_ring {
	char *data;
	unsigned long size;
	unsigned long head;
	u64 committed;		/* by the writer, for the books at unload */
	unsigned long tail ____cacheline_aligned_in_smp;
};

/*
 * The writer: room for a record of @len bytes, or NULL when the ring is
 * full; *@head is where the head goes once it is committed.
 */
static __always_inline void *lbr_ring_reserve(struct lbr_ring *r,
					      unsigned long len,
					      unsigned long *head)
{
	unsigned long need = ALIGN(sizeof(struct lbr_slot) + len, 8);
	unsigned long h = r->head;
	/* Pairs with lbr_ring_consume(): the reader is done with the bytes. */
	unsigned long tail = LBR_RING_LOAD_ACQUIRE(&r->tail);
	unsigned long off = h % r->size;
	unsigned long skip = 0;
	struct lbr_slot *s;

	if (off + need > r->size)
		skip = r->size - off;
	if (need > r->size || h + skip + need - tail > r->size)
		return NULL;
	if (skip)
		((struct lbr_slot *)(r->data + off))->len = LBR_SLOT_WRAP;
	s = (struct lbr_slot *)(r->data + (skip ? 0 : off));
	s->len = need;
	*head = h + skip + need;
	return s + 1;
}

/*
 * The writer: the reservation @rec ends at @len bytes now, no more than
 * it reserved.  It is the ring's newest slot, so its end moves back; a
 * wrap marker before it stays valid.  False if @len is more.
 */
static __always_inline bool lbr_ring_trim(void *rec, unsigned long len,
					  unsigned long *head)
{
	struct lbr_slot *s = (struct lbr_slot *)rec - 1;
	unsigned long need = ALIGN(sizeof(*s) + len, 8);

	if (need > s->len)
		return false;
	*head -= s->len - need;
	s->len = need;
	return true;
}

/* The writer: publish what was reserved, up to @head. */
static __always_inline void lbr_ring_publish(struct lbr_ring *r,
					     unsigned long head)
{
	r->committed++;
	/* The record, then the index that shows it (lbr_ring_slot()). */
	LBR_RING_STORE_RELEASE(&r->head, head);
}

/* The reader: done with the oldest record, which ends at @next. */
static inline void lbr_ring_consume(struct lbr_ring *r, unsigned long next)
{
	/* Its bytes go back to the writer. */
	LBR_RING_STORE_RELEASE(&r->tail, next);
}

/*
 * The reader: the slot at @r's tail, the wrap marker stepped over, and in
 * @next where it ends; NULL if the ring is empty.  A slot the writer did
 * not make would be a defect: the ring is then given up (emptied, and
 * LBR_RING_BAD() says so) rather than walked on.
 */
static inline struct lbr_slot *lbr_ring_slot(struct lbr_ring *r,
					     unsigned long *next)
{
	/* One load of the head, paired with lbr_ring_publish(). */
	unsigned long head = LBR_RING_LOAD_ACQUIRE(&r->head);
	unsigned long tail = r->tail;
	struct lbr_snap_record *rec;
	struct lbr_slot *s;

	if (tail == head)
		return NULL;
	s = (struct lbr_slot *)(r->data + tail % r->size);
	if (s->len == LBR_SLOT_WRAP) {
		tail += r->size - tail % r->size;
		s = (struct lbr_slot *)r->data;
	}
	rec = (struct lbr_snap_record *)(s + 1);
	/* Whole, aligned, inside the ring and what was published. */
	if (LBR_RING_BAD(tail >= head || s->len % 8 ||
			 s->len < sizeof(*s) + sizeof(*rec) ||
			 s->len > head - tail ||
			 tail % r->size + s->len > r->size ||
			 rec->size < sizeof(*rec) ||
			 rec->size > s->len - sizeof(*s))) {
		lbr_ring_consume(r, head);
		return NULL;
	}
	*next = tail + s->len;
	return s;
}

#endif /* LBR_RING_H */
