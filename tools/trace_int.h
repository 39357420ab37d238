/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbr-snap trace's state, shared by trace.c (the command, its processes
 * and records) and trace_targets.c (the targets: attach, detach, their
 * counters, what is said of them).
 */
#ifndef LBR_SNAP_TRACE_INT_H
#define LBR_SNAP_TRACE_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ksym.h"
#include "recording.h"
#include "trace.h"
#include "why.h"
#include "why_rec.h"

/* Above this many targets, the summary goes by -e, not by target. */
#define LIST_MAX	16
/* ... and names at most this many targets that captured. */
#define LIST_CAPTURED	20

/* A function trace attaches, and what became of it. */
struct tgt {
	char spec[LBR_SNAP_NAME_LEN + 8];	/* completed from BTF */
	unsigned long long addr;	/* kallsyms, for a batch */
	unsigned int arg;		/* the -e it came of */
	bool batch;			/* through ADD_TARGETS */
	bool added;			/* we attached it */
	bool existed;			/* it was a target already */
	bool loaded;			/* modprobe's targets= had it */
	unsigned int hook;		/* the hook ADD_TARGET(S) gave */
	__u32 id;			/* ... and the id, of a batch's */
	/* Its counters when the command started; found: listed */
	struct lbr_snap_target_stats before;
	bool found;
};

struct tracer {
	const struct trace_opts *t;
	struct tgt *tg;
	size_t nr;
	size_t nr_batch;		/* of them, attached in a batch */
	int fd;
	const volatile sig_atomic_t *stop;	/* a signal came: its number */
	bool loaded;			/* we ran modprobe */
	bool loaded_fexit;		/* ... and it loaded lbr_snap_fexit */
	unsigned long long printed;	/* records of the command printed */
	unsigned long long others;	/* records read, not the command's */
	bool spawned;			/* the command was started */
	bool capture_set;
	unsigned int old_capture;
	bool lbr_set;			/* --lbr set the LBR filter */
	struct lbr_snap_lbr_filter old_lbr;
	unsigned long long start_ns;
	pid_t *pids;			/* the command and its descendants */
	size_t nr_pids, cap_pids;
	int procev_fd;			/* fork events, or -1 */
	bool procev_lost;		/* fall back to /proc */
	struct ksyms ks;
	struct why *why;		/* lbr-snap why's records */
	/*
	 * why: its entry functions and every target, sorted, and GET_INFO's
	 * stack_depth (what why -o keeps besides the records)
	 */
	struct why_rec wr;
	bool tree;			/* the tree filter follows the command */
	unsigned long long setup_ns;	/* loading and attaching took */
	struct recording *rec;		/* why -o, until it fails */
	bool rec_started;		/* its header is written */
	bool rec_failed;
	unsigned long long rec_nr;	/* records in it */
};

/* trace_targets.c; each says what went wrong on stderr. */
int trace_attach(struct tracer *tr);		/* 0 or -exit code */
void trace_detach(struct tracer *tr);
void trace_read_before(struct tracer *tr);
void trace_say_attached(const struct tracer *tr);
void trace_say_summary(struct tracer *tr);

#endif /* LBR_SNAP_TRACE_INT_H */
