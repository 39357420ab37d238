/* SPDX-License-Identifier: GPL-2.0 */
/* target_spec.c: what a target's spec says, for the list (targets.c). */
#ifndef LBR_SNAP_TARGET_SPEC_H
#define LBR_SNAP_TARGET_SPEC_H

#include "lbr_snap.h"

struct lbr_btf;

/* The hook of targets without @hook: the hook= parameter. */
extern enum lbr_hook_want lbr_default_hook;
extern const char * const lbr_ret_type_names[];

int lbr_spec_chars_ok(const char *spec);
struct lbr_target *lbr_target_new(char *tok, unsigned long addr,
				  struct lbr_btf **btf);
void lbr_targets_btf_done(struct lbr_btf *btf, bool ok);
bool lbr_target_in_module(const struct lbr_target *t);

#endif /* LBR_SNAP_TARGET_SPEC_H */
