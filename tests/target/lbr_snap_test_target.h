/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test target's functions: global and noinline, so their names stay in
 * kallsyms unchanged (no .isra or .constprop clones) for kretprobes.
 */
#ifndef LBR_SNAP_TEST_TARGET_H
#define LBR_SNAP_TEST_TARGET_H

#include <linux/types.h>

int lbr_test_fail(int v);
int lbr_test_int(int v);
long lbr_test_long(long v);
void *lbr_test_ptr(long v);
bool lbr_test_bool(long v);
int lbr_test_sleep(long ms);
int lbr_test_wait(long ms);
int lbr_test_exit_inside(long v);

#endif
