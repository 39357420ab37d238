/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbr-snap selftest's state, shared by the run (selftest.c) and the
 * report (selftest_report.c).
 */
#ifndef LBR_SNAP_SELFTEST_INT_H
#define LBR_SNAP_SELFTEST_INT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* cpu_set_t's macros */
#endif
#include <sched.h>
#include <stdbool.h>
#include <sys/utsname.h>

#include <lbr_snap.h>

#include "ksym.h"

#define ST_MAX_CONFIGS	4
#define ST_MAX_PROBLEMS	32

enum { ST_FEXIT, ST_KRETPROBE, ST_HOOKS };
extern const char *const st_hook_names[ST_HOOKS];

struct st_cpu {
	int cpu;
	unsigned int records;
	unsigned int no_lbr, was_off, no_return;
	unsigned int no_room;		/* records whose every entry was taken */
	/*
	 * The fewest a record's hook took, of the records with room; the
	 * most, where none had room.  Fewest: an interrupt that lands in a
	 * kretprobe's return path, before its handler freezes, adds its own.
	 */
	unsigned int hook_entries;
	unsigned int hook_most;		/* the most, of any record */
	bool refused;			/* GET_INFO names it */
	const char *verdict;
};

/* Records with LBR where the hook left an entry of the function's path. */
static inline unsigned int st_with_room(const struct st_cpu *sc)
{
	return sc->records - sc->no_lbr - sc->no_room;
}

/* Per open(): TSC cycles, and what the CPU counted (-1: it counts none). */
struct st_time {
	double cycles, msrs;
};

struct st_cost {
	int cpu;
	struct st_time fail, ok;	/* with the hook */
};

struct st_hook {
	char error[160];	/* why it could not attach, or "" */
	unsigned int nr_cpus;
	struct st_cpu *cpus;
	struct st_cost cost;
	bool cost_done;
};

struct st_config {
	char mode[8];		/* mode= */
	char read[8];		/* lbr_read= */
	char error[256];	/* why it did not load, or "" */
	struct lbr_snap_info info;
	bool have_info;
	struct st_time base_fail, base_ok;
	int cost_cpu;
	struct st_hook hooks[ST_HOOKS];
};

struct st {
	struct ksyms ks;
	int *cpus;		/* online when the selftest began */
	unsigned int nr_cpus;
	unsigned int nr_not_allowed;	/* online, outside our affinity */
	cpu_set_t *affinity;	/* the caller's, put back at the end */
	size_t affinity_size;
	bool was_loaded;
	struct lbr_snap_info loaded_info;
	struct st_config configs[ST_MAX_CONFIGS];
	unsigned int nr_configs;
	char problems[ST_MAX_PROBLEMS][256];
	unsigned int nr_problems;
	unsigned char *buf;
	size_t buf_len;
	unsigned int calls;	/* open()s a timed run makes */
	bool loaded_fexit;	/* lbr_snap_fexit was not there before */
};

void st_print_json(const struct st *s, const struct utsname *u,
		   const char *verdict);
void st_print_text(const struct st *s, const struct utsname *u,
		   const char *verdict);

#endif /* LBR_SNAP_SELFTEST_INT_H */
