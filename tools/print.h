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
	bool unfold;		/* -v: an interrupt's entries one by one */
};

void print_rec_text(FILE *f, const struct rec *r, const struct ksyms *ks,
		    const struct print_opts *po);
void print_rec_json(FILE *f, const struct rec *r, const struct ksyms *ks);
/* "U.UUU us" */
void put_duration(FILE *f, unsigned long long ns);

/* For report: an address and its source, as a record's branch has them. */
struct srcloc;
void print_addr_line(FILE *f, const struct ksyms *ks, unsigned long long addr,
		     unsigned long long line_addr, struct srcloc *loc);
void print_inlines(FILE *f, int indent, const char *side,
		   const struct srcloc *loc);
/* @loc's file, relative to its source tree where it lies in it. */
const char *srcloc_path(const struct srcloc *loc);
void json_srcloc(FILE *f, const char *side, const struct ksyms *ks,
		 unsigned long long addr);

#endif /* LBR_SNAP_PRINT_H */
