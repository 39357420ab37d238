// SPDX-License-Identifier: GPL-2.0
/*
 * The call stack of a captured return (stack_depth=): saved by the
 * kernel's unwinder once the LBR is read and unfrozen, so it costs the
 * record no entries.
 *
 * The unwind starts in lbr_snap's own frames (the capture, the hook and,
 * for a kretprobe, kretprobe's trampoline handler): the record keeps the
 * frames from the target's caller on, found by the return address the
 * hook knows.  The unwinder reports a return address that a tracer
 * replaced (a kretprobe's, the function graph tracer's) as the real one
 * (unwind_recover_ret_addr(), arch/x86/include/asm/unwind.h): the
 * kretprobe hook gives the real one too (lbr_kretprobe_caller()), but
 * the fexit trampoline reads the slot, which such a tracer on the same
 * function may have replaced.  There the frame after the fentry call's
 * return into the target, ORC's next, is the caller.
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
	if (depth && !LBR_HAVE_STACKTRACE) {
		pr_info("stack_depth=%u: this kernel has no stack_trace_save() (CONFIG_STACKTRACE): no call stacks\n",
			depth);
		depth = 0;
	}
	lbr_stack_max = depth;
	return 0;
}

/* From the capture path too: notrace, and no kprobe. */
notrace unsigned int lbr_stack_depth(void)
{
	return READ_ONCE(lbr_stack_max);
}
NOKPROBE_SYMBOL(lbr_stack_depth);

/**
 * lbr_stack_save - the call stack from where the target returned to
 * @out: room for @max frames
 * @max: lbr_stack_depth() when the record was reserved
 * @caller: the target's return address, as the hook saw it
 * @lo: for the fexit hook, the target function's start; else 0
 * @hi: its end
 *
 * From lbr_capture_record(), inside its nesting guard, interrupts off.
 * Return: the frames written to @out, 0 if the unwinder did not reach
 * the caller.
 */
noinline unsigned int notrace lbr_stack_save(u64 *out, unsigned int max,
					     unsigned long caller,
					     unsigned long lo,
					     unsigned long hi)
{
	unsigned long *s = this_cpu_ptr(lbr_stack_scratch);
	unsigned int n, i, j;

	n = lbr_stack_trace_save(s, max + LBR_STACK_OWN_FRAMES);
	for (i = 0; i < n && s[i] != caller; i++)
		;
	/*
	 * fexit, its caller's slot replaced: after the target's own frame,
	 * which ORC unwinds by the fentry call's return address.  The frame
	 * pointer unwinder skips the caller there (the trampoline saved the
	 * caller's RBP), so without ORC there is no stack rather than a
	 * wrong one.
	 */
	if (i == n && lo && IS_ENABLED(CONFIG_UNWINDER_ORC)) {
		for (i = 0; i < n && !(s[i] > lo && s[i] < hi); i++)
			;
		i++;
	}
	if (i >= n)
		return 0;
	n = min(n - i, max);
	for (j = 0; j < n; j++)
		out[j] = s[i + j];
	return n;
}
NOKPROBE_SYMBOL(lbr_stack_save);
