/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_LBRFILTER_H
#define LBR_SNAP_LBRFILTER_H

#include <stddef.h>

#include <lbr_snap.h>

/*
 * An LBR filter as lbr-snap filter lbr=SPEC and trace --lbr=SPEC take
 * it: privilege words (kernel or k, user or u; the kernel's when none)
 * and kinds, perf's names (any, any_call, any_return, cond, call,
 * ind_call, ind_jump) or lbr_snap's own (jcc, rel_call, ret, ind_jmp,
 * rel_jmp, far), comma-separated, in any order; a privilege word alone
 * keeps every kind.  0, or -1 with @why set.
 */
int lbr_filter_parse(const char *spec, struct lbr_snap_lbr_filter *f,
		     char *why, size_t len);

/* @cpl, @kinds in the same words, perf's names first: "kernel,any_return". */
void lbr_filter_name(unsigned int cpl, unsigned int kinds, char *buf,
		     size_t len);

#endif /* LBR_SNAP_LBRFILTER_H */
