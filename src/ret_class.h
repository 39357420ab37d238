/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which returns of a target are errors, told from its return register and
 * its declared return type: the capture's filter (capture.h) and the test
 * an fexit trampoline makes before it freezes LBR (fexit_tramp.S).
 *
 * Nothing here touches hardware, so the same code is built into the module
 * and into a user-space unit test (tests/unit/ret_class_test.c), which
 * runs the trampoline's own instructions (ret_quiet.S) against
 * lbr_is_error() for every return type.
 */
#ifndef LBR_SNAP_RET_CLASS_H
#define LBR_SNAP_RET_CLASS_H

/* struct lbr_ret_quiet's layout, for LBR_RET_QUIET (ret_quiet.S). */
#define LBR_RET_QUIET_LIMIT	0
#define LBR_RET_QUIET_BIAS	8
#define LBR_RET_QUIET_SHIFT	16
#define LBR_RET_QUIET_SIZE	32

#ifndef __ASSEMBLY__
#ifdef __KERNEL__
#include <linux/err.h>
#include <linux/limits.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
#include <sys/cdefs.h>		/* __always_inline */
#define MAX_ERRNO		4095
#define IS_ERR_VALUE(x)		((unsigned long)(x) >= (unsigned long)-MAX_ERRNO)
#define U64_MAX			UINT64_MAX
#endif

#include "../include/lbr_snap.h"

/* The return value, sign-extended from the declared width. */
static __always_inline s64 lbr_retval(u8 type, unsigned long ax)
{
	switch (type) {
	case LBR_SNAP_RET_INT:
		return (s32)ax;
	case LBR_SNAP_RET_BOOL:
		return (u8)ax != 0;
	default:
		return (s64)ax;
	}
}

/* errors mode: a negative errno, NULL or ERR_PTR, or false. */
static __always_inline bool lbr_is_error(u8 type, s64 ret)
{
	switch (type) {
	case LBR_SNAP_RET_PTR:
		return !ret || IS_ERR_VALUE((unsigned long)ret);
	case LBR_SNAP_RET_BOOL:
		return !ret;
	default:
		return ret < 0 && ret >= -MAX_ERRNO;
	}
}

/**
 * struct lbr_ret_quiet - the returns a hook lets go without freezing LBR
 * @limit: a return is let go when v < @limit, unsigned, where
 * @bias: v = (the return register sign-extended from its low
 *	64 - @shift bits) - @bias
 * @shift: 32 for an int, 56 for a bool or void, 0 for 64-bit values
 * @reserved: 0; an entry is 32 bytes, none across two cache lines
 *
 * One unsigned compare tells an error from a success whatever the type,
 * with no branch before it: the branch that lets a success go is not
 * taken for an error, and a branch not taken leaves no LBR entry.  A
 * @limit of 0 lets nothing go.  @bias and @shift depend on the return
 * type alone; a change of capture mode changes @limit only, one aligned
 * store, so that a test running meanwhile sees the old test or the new
 * one and never a mix of them.  lbr_ret_quiet_for() gives the values,
 * LBR_RET_QUIET (ret_quiet.S) the instructions.
 */
struct lbr_ret_quiet {
	u64 limit;
	u64 bias;
	u64 shift;
	u64 reserved;
};

_Static_assert(sizeof(struct lbr_ret_quiet) == LBR_RET_QUIET_SIZE,
	       "LBR_RET_QUIET_SIZE");
_Static_assert(__builtin_offsetof(struct lbr_ret_quiet, limit) ==
	       LBR_RET_QUIET_LIMIT, "LBR_RET_QUIET_LIMIT");
_Static_assert(__builtin_offsetof(struct lbr_ret_quiet, bias) ==
	       LBR_RET_QUIET_BIAS, "LBR_RET_QUIET_BIAS");
_Static_assert(__builtin_offsetof(struct lbr_ret_quiet, shift) ==
	       LBR_RET_QUIET_SHIFT, "LBR_RET_QUIET_SHIFT");

/**
 * lbr_ret_quiet_for - the quiet test of a target
 * @type: its return type (enum lbr_snap_ret_type)
 * @capture_all: capture=all
 * @errno_list: the target records only the errors it lists
 *
 * Lets go exactly the returns the capture's filter would not record by
 * their value alone (lbr_is_error() says they are no error, and the mode
 * or the errno list wants errors only); with an errno list, the errors it
 * does not list still go to the capture, which filters them.  A void
 * target records only under capture=all (targets.c): under errors, all
 * its returns go.  A type this does not know lets nothing go.
 */
static inline struct lbr_ret_quiet lbr_ret_quiet_for(u8 type,
						     bool capture_all,
						     bool errno_list)
{
	struct lbr_ret_quiet q = { 0 };
	bool errors_only = !capture_all || errno_list;

	switch (type) {
	case LBR_SNAP_RET_INT:
		/* [-MAX_ERRNO, -1] of the low 32 bits: the top of the range */
		q.shift = 32;
		q.limit = (u64)-MAX_ERRNO;
		break;
	case LBR_SNAP_RET_LONG:
		q.limit = (u64)-MAX_ERRNO;
		break;
	case LBR_SNAP_RET_PTR:
		/* NULL wraps to U64_MAX, ERR_PTRs move down by one */
		q.bias = 1;
		q.limit = (u64)-MAX_ERRNO - 1;
		break;
	case LBR_SNAP_RET_BOOL:
		/* false, a zero low byte, wraps to U64_MAX; nothing else can */
		q.shift = 56;
		q.bias = 1;
		q.limit = U64_MAX;
		break;
	case LBR_SNAP_RET_VOID:
		/* The low byte sign-extended, less -128, is at most 255. */
		q.shift = 56;
		q.bias = (u64)-128;
		q.limit = U64_MAX;
		break;
	default:
		return q;
	}
	if (!errors_only)
		q.limit = 0;
	return q;
}

#endif /* !__ASSEMBLY__ */
#endif /* LBR_SNAP_RET_CLASS_H */
