/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_WHY_H
#define LBR_SNAP_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ksym.h"
#include "record.h"

struct why;

struct why *why_new(const struct ksyms *ks, bool json);
/* Records without their system call: grouped by thread alone. */
void why_no_tree(struct why *w);
/*
 * The functions hooked (@addrs sorted, kept by the caller), and the
 * frames a record's call stack holds at most: a record's depth is the
 * hooked functions among its frames.
 */
void why_hooked(struct why *w, const unsigned long long *addrs, size_t nr,
		unsigned int stack_max);
/* A record of the command's, @entry if an entry function's. */
void why_add(struct why *w, const struct rec *r, bool entry);
size_t why_report(struct why *w, FILE *o);
void why_free(struct why *w);

#endif /* LBR_SNAP_WHY_H */
