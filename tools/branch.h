/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_BRANCH_H
#define LBR_SNAP_BRANCH_H

#include <stdbool.h>

#include "ksym.h"
#include "record.h"

const char *branch_type_name(const struct lbr_snap_branch *b,
			     const struct ksyms *ks);

/* What a branch does with respect to interrupts and exceptions. */
enum irq_edge {
	IRQ_NONE,
	IRQ_ENTER,		/* into an interrupt's entry point */
	IRQ_ENTER_EXC,		/* into an exception's */
	IRQ_ENTER_ANY,		/* into one both take (FRED's) */
	IRQ_LEAVE,		/* out of either, by IRET (ERETS) */
};

enum irq_edge branch_irq_edge(const struct lbr_snap_branch *b,
			      const struct ksyms *ks);

/*
 * An interrupt inside a record: entries @first to @last, both included,
 * from the branch into its entry point to its IRET back; @headless when
 * its entry came before the oldest entry looked at (@first is that one).
 */
struct irq_fold {
	unsigned int first, last;
	bool headless;
};

#define IRQ_FOLDS_MAX	16

unsigned int irq_folds(const struct rec *r, const struct ksyms *ks,
		       unsigned int first, unsigned int last,
		       struct irq_fold *folds);

/*
 * A hooked function called inside the record's path: entries @first to
 * @last, both included, that lbr_snap's fexit trampoline (and capture)
 * took, from the call into it (at the function's entry, or at its
 * return) to the branch back out of it; @headless when it began before
 * the oldest entry looked at.
 */
struct hook_fold {
	unsigned int first, last;
	bool headless;		/* it began before @first */
};

#define HOOK_FOLDS_MAX	32

unsigned int hook_folds(const struct rec *r, const struct ksyms *ks,
			unsigned int first, unsigned int last,
			struct hook_fold *folds);

#endif /* LBR_SNAP_BRANCH_H */
