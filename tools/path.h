/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_PATH_H
#define LBR_SNAP_PATH_H

#include <stdbool.h>

#include "ksym.h"
#include "record.h"

/*
 * Which entries of a record are the function's own path.  Entries
 * [@probe, nr) were made by the kretprobe path after the function returned;
 * entries [0, @target) come before the first one whose source or target
 * lies inside the target function (0 when no entry touches it, @found
 * false).  The path is [@target, @probe).
 */
struct rec_span {
	unsigned int nr;
	unsigned int target;
	unsigned int probe;
	bool found;
};

void rec_span(const struct rec *r, const struct ksyms *ks,
	      struct rec_span *sp);

#endif /* LBR_SNAP_PATH_H */
