/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_STREAM_H
#define LBR_SNAP_STREAM_H

#include <stdbool.h>

#include "ksym.h"
#include "print.h"
#include "record.h"

/*
 * Records of the tasks that match every field @flags names
 * (LBR_SNAP_FILTER_*, as LBR_SNAP_IOC_SET_FILTER takes them); 0: all.
 */
struct task_match {
	unsigned int flags;
	int pid, tgid;
	char comm[LBR_SNAP_COMM_LEN];
};

bool task_matches(const struct task_match *m,
		  const struct lbr_snap_record *h);
int parse_task_opt(const char *key, const char *val, struct task_match *m);

struct stream_opts {
	const char *path;		/* for messages */
	const struct ksyms *ks;
	unsigned long long max;		/* stop after this many records, 0: never */
	bool json;
	int self;			/* skip records of this tgid, 0: none */
	struct task_match task;		/* --pid, --tgid, --comm */
	struct print_opts po;
	/* If set, called per record instead of printing; true: count it. */
	bool (*handle)(const struct rec *r, void *arg);
	void *arg;
	/* Bytes already read from the input, handled before it (may be 0). */
	const unsigned char *pre;
	size_t pre_len;
};

struct stream;

int stream_records(int fd, const struct stream_opts *o);
struct stream *stream_new(const struct stream_opts *o);
int stream_pump(struct stream *s, int fd);
void stream_free(struct stream *s);

#endif /* LBR_SNAP_STREAM_H */
