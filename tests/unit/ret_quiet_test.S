/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fexit trampolines' quiet test (src/ret_quiet.S), as a function
 * of user space: int ret_quiet(u64 ax, const struct lbr_ret_quiet *q)
 * returns 1 when the test lets @ax go (the JB is taken), 0 when it falls
 * through to the freeze.
 */
#include "ret_quiet.S"

	.text
	.globl	ret_quiet
	.type	ret_quiet, @function
ret_quiet:
	movq	%rdi, %rax
	LBR_RET_QUIET	0, %rsi, 1f
	xorl	%eax, %eax
	ret
1:	movl	$1, %eax
	ret
	.size	ret_quiet, . - ret_quiet
	.section .note.GNU-stack, "", @progbits
