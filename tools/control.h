/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_CONTROL_H
#define LBR_SNAP_CONTROL_H

#include <stdio.h>

#include <lbr_snap.h>

/* Each returns 0 or an exit code (util.h); messages go to stderr. */
int control_add(const char *path, char **specs);
/*
 * Attach @n functions of vmlinux (@specs, each at @addrs from kallsyms)
 * with LBR_SNAP_IOC_ADD_TARGETS, CONTROL_CHUNK at a time, a progress
 * line on a terminal: all or nothing, ^C included.
 */
#define CONTROL_CHUNK	1000
int control_add_batch(const char *path, char **specs,
		      const unsigned long long *addrs, size_t n);
int control_del(const char *path, char **syms);
int control_filter(const char *path, char **words);
int control_capture(const char *path, const char *mode);	/* errors|all */

void print_target_hint(FILE *f, const char *prefix,
		       const struct lbr_snap_target_stats *t);

#endif /* LBR_SNAP_CONTROL_H */
