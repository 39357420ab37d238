/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_TRACE_H
#define LBR_SNAP_TRACE_H

#include <stdbool.h>
#include <sys/types.h>

#include "print.h"

/* -e options, and why's -a (64 of each at most) or its default layers */
#define TRACE_MAX_SPECS	(2 * LBR_SNAP_MAX_TARGETS)

/* A function the -e patterns resolved to (pattern.h). */
struct trace_target {
	const char *spec;		/* completed from BTF */
	unsigned long long addr;	/* from kallsyms; 0 unknown */
	unsigned int arg;		/* the -e it matched */
	bool batch;			/* attached in a batch (ADD_TARGETS) */
};

struct trace_opts {
	const char *device;
	const char *kallsyms;
	const char *vmlinux;
	const char *specs[TRACE_MAX_SPECS];	/* -e SYM[%type] */
	unsigned int nr_specs;
	bool capture_all;			/* --all */
	const char *lbr;			/* --lbr=KINDS, or NULL */
	struct lbr_snap_lbr_filter lbr_filter;	/* ... parsed */
	bool all_tasks;				/* --all-tasks */
	bool json;
	struct print_opts po;
	char **argv;				/* CMD ARGS, NULL-terminated */
	/*
	 * lbr-snap why: the first @nr_entry specs are its entry functions,
	 * the others its allowed ones; the records go to why.c, the
	 * command runs under the tree filter, and a function the module
	 * has no room for is counted, not an error.
	 */
	bool why;
	unsigned int nr_entry;
	bool lbr_default;	/* @lbr is why's, not the user's */
	pid_t pid;		/* why -p: a running process, not @argv */
	unsigned int duration;	/* --duration: seconds, 0 for no limit */
	const char *output;	/* why -o: a recording of the run */
	/* The functions of the -e patterns; NULL: the -e specs as given. */
	const struct trace_target *targets;
	size_t nr_targets;
};

int trace_run(const struct trace_opts *t);

#endif /* LBR_SNAP_TRACE_H */
