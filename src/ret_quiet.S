/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LBR_RET_QUIET: the test an fexit trampoline makes on the instruction the
 * traced function returns to, before it freezes LBR (ret_class.h says
 * what it computes).  Not an object of its own: included by
 * fexit_tramp.S, and by the user-space unit test that runs these very
 * instructions (tests/unit/ret_quiet_test.S).
 *
 * @q: the displacement of the slot's struct lbr_ret_quiet, from
 * @base: a base register (%rip for a symbol)
 * @quiet: where to go for a return the slot does not record
 *
 * Reads %rax; clobbers %rcx, %r10 and the flags.  One branch, a JB that is
 * taken only for a return let go: for an error it falls through, and a
 * branch not taken leaves no LBR entry.  A change of capture mode
 * changes the limit alone (struct lbr_ret_quiet).
 * tests/freeze-first/check.py knows this shape.
 */
#include "ret_class.h"

.macro LBR_RET_QUIET q:req, base:req, quiet:req
	movq	\q+LBR_RET_QUIET_SHIFT(\base), %rcx
	movq	%rax, %r10
	shlq	%cl, %r10
	sarq	%cl, %r10
	subq	\q+LBR_RET_QUIET_BIAS(\base), %r10
	cmpq	\q+LBR_RET_QUIET_LIMIT(\base), %r10
	jb	\quiet
.endm
