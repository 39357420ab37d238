// SPDX-License-Identifier: GPL-2.0
/*
 * The call stack of a captured return (stack_depth=): saved by the
 * kernel's unwinder once the LBR is read and unfrozen, so it costs the
 * record no entries.
 *
 * The unwind starts in lbr_snap's own frames (the capture, the hook and,
 * for a kretprobe, kretprobe's trampoline handler): the record keeps the
 * frames from the target's caller on, found by the return address the
 * hook already knows.  The ORC unwinder goes through kretprobe's
 * trampoline from 5.15 on (unwind_recover_kretprobe(),
 * arch/x86/include/asm/unwind.h); before, it never reaches the caller
 * there and such a record is flagged LBR_SNAP_REC_NO_STACK rather than
 * given a stack of lbr_snap's frames.
 */
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/stacktrace.h>

#include "lbr_snap.h"

/* lbr_snap's frames that can come before the caller's, and some room. */
#define LBR_STACK_OWN_FRAMES	16

static unsigned int lbr_stack_max __read_mostly;

/*
 * What the unwinder writes, before the caller's frame is looked for: one
 * capture at a time per CPU (lbr_capture_nesting), interrupts off.
 */
static DEFINE_PER_CPU(unsigned long [LBR_SNAP_MAX_STACK + LBR_STACK_OWN_FRAMES],
		      lbr_stack_scratch);

/**
 * lbr_stack_set_depth - how many frames a record's stack holds, 0 for none
 * @depth: stack_depth=
 *
 * Before any target is attached.
 * Return: 0, or -EINVAL past LBR_SNAP_MAX_STACK.
 */
int lbr_stack_set_depth(unsigned int depth)
{
	if (depth > LBR_SNAP_MAX_STACK) {
		pr_err("stack_depth=%u: use 0 (no call stacks) to %u\n", depth,
		       LBR_SNAP_MAX_STACK);
		return -EINVAL;
	}
	lbr_stack_max = depth;
	return 0;
}

unsigned int lbr_stack_depth(void)
{
	return lbr_stack_max;
}

/**
 * lbr_stack_save - the call stack from where the target returned to
 * @out: room for lbr_stack_depth() frames
 * @caller: the target's return address
 *
 * From lbr_capture_record(), inside its nesting guard, interrupts off.
 * Return: the frames written to @out, 0 if the unwinder did not reach
 * @caller.
 */
noinline unsigned int notrace lbr_stack_save(u64 *out, unsigned long caller)
{
	unsigned long *s = this_cpu_ptr(lbr_stack_scratch);
	unsigned int n, i, j;

	n = stack_trace_save(s, lbr_stack_max + LBR_STACK_OWN_FRAMES, 0);
	for (i = 0; i < n && s[i] != caller; i++)
		;
	n = min(n - i, lbr_stack_max);
	for (j = 0; j < n; j++)
		out[j] = s[i + j];
	return n;
}
NOKPROBE_SYMBOL(lbr_stack_save);
