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
long lbr_test_iret(long v);
void *lbr_test_ptr(long v);
bool lbr_test_bool(long v);
int lbr_test_sleep(long ms);
int lbr_test_wait(long ms);
int lbr_test_exit_inside(long v);

/* 40 bytes: passed by value on the stack. */
struct lbr_test_big {
	long a[5];
};

long lbr_test_notrace(long v);
long lbr_test_args8(long a1, long a2, long a3, long a4, long a5, long a6,
		    long a7, long a8);
long lbr_test_struct(long x, struct lbr_test_big b, long y);
long lbr_test_stack24(long a1, long a2, long a3, long a4, long a5, long a6,
		      long a7, long a8, long a9, long a10, long a11, long a12,
		      long a13, long a14, long a15, long a16, long a17,
		      long a18, long a19, long a20, long a21, long a22,
		      long a23, long a24);
long lbr_test_va(int n, ...);
long lbr_test_lost(long v);
void lbr_test_void(long v);
int lbr_test_in_pmi(int v);
int lbr_test_leaf(int i);
int lbr_test_chain(long n);

#endif
