/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_RECORD_H
#define LBR_SNAP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <lbr_snap.h>

/* Sanity limit on a record's size: far above any real one. */
#define REC_SIZE_LIMIT	(1024 * 1024)

/* A record in the stream, its header copied out so it is aligned. */
struct rec {
	struct lbr_snap_record hdr;
	const unsigned char *raw;	/* the record as read, @hdr.size bytes */
};

enum rec_check {
	REC_OK,
	REC_NEWER,	/* newer ABI version: skip it by its size */
	REC_CORRUPT,
};

void rec_load(struct rec *r, const unsigned char *raw);
enum rec_check rec_check_size(unsigned int size, char *why, size_t len);
enum rec_check rec_check(const struct rec *r, char *why, size_t len);
void rec_branch(const struct rec *r, unsigned int i, struct lbr_snap_branch *b);

/* rec_branch() for @b's from and to only, which are all some need. */
static inline void rec_from_to(const struct rec *r, unsigned int i,
			       struct lbr_snap_branch *b)
{
	const size_t n = offsetof(struct lbr_snap_branch, flags);

	if (r->hdr.entry_size < n) {
		rec_branch(r, i, b);
		return;
	}
	memcpy(b, r->raw + r->hdr.hdr_size + (size_t)i * r->hdr.entry_size, n);
}

/* The call stack's frames, as read: @hdr.nr_stack __u64 after the entries. */
static inline const unsigned char *rec_stack_bytes(const struct rec *r)
{
	return r->raw + r->hdr.hdr_size +
	       (size_t)r->hdr.nr_entries * r->hdr.entry_size;
}

unsigned long long rec_stack(const struct rec *r, unsigned int i);

const char *ret_type_name(unsigned int type);
const char *hook_name(unsigned int hook);
const char *backend_name(unsigned int backend);
const char *rec_errno(const struct lbr_snap_record *h);
void rec_format_ret(const struct lbr_snap_record *h, char *buf, size_t len);
/* The call's duration in ns, if the record knows when it was called. */
bool rec_duration(const struct lbr_snap_record *h, unsigned long long *ns);

#endif /* LBR_SNAP_RECORD_H */
