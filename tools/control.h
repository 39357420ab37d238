/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_CONTROL_H
#define LBR_SNAP_CONTROL_H

#include <signal.h>
#include <stddef.h>
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
/*
 * control_batch()'s flag, not the module's: add what fits in fexit's
 * room (a chunk past it goes again in halves), refuse the rest (E2BIG).
 */
#define CONTROL_FIT	(1u << 31)
int control_add_batch(const char *path, char **specs,
		      const unsigned long long *addrs, size_t n);
/*
 * LBR_SNAP_IOC_ADD_TARGETS (@flags) or DEL_TARGETS of @e[0..@n) on @fd,
 * CONTROL_CHUNK at a time, a progress line on a terminal.  Stops before a
 * chunk once *@stop (errno EINTR), and at a call that fails, whose
 * entries' results are filled in; DEL_TARGETS goes on after ENOENT (the
 * call removed the others) and fails with it at the end.  *@through: the
 * entries of the chunks done.  ADD_TARGETS' LBR_SNAP_BATCH_FALLBACK is
 * dropped for a module that does not know it, and each entry's hook is
 * then fexit.  Returns 0, or -1 and errno.
 */
int control_batch(int fd, unsigned long req, struct lbr_snap_target_entry *e,
		  size_t n, unsigned int flags,
		  const volatile sig_atomic_t *stop, size_t *through);
int control_del(const char *path, char **syms);
int control_filter(const char *path, char **words);
int control_capture(const char *path, const char *mode);	/* errors|all */

void print_target_hint(FILE *f, const char *prefix,
		       const struct lbr_snap_target_stats *t);

#endif /* LBR_SNAP_CONTROL_H */
