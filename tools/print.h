/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_PRINT_H
#define LBR_SNAP_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "ksym.h"
#include "record.h"

/* Text output: --full shows the probe path, --only-target cuts the front. */
struct print_opts {
	bool full;
	bool only_target;
};

void print_rec_text(FILE *f, const struct rec *r, const struct ksyms *ks,
		    const struct print_opts *po);
void print_rec_json(FILE *f, const struct rec *r, const struct ksyms *ks);

#endif /* LBR_SNAP_PRINT_H */
