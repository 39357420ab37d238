// SPDX-License-Identifier: GPL-2.0
/*
 * The fexit hook: an ftrace direct call from a target's fentry site to one
 * of the trampolines of fexit_tramp.S, which calls the function and freezes
 * LBR on the instruction it returns to.  The kretprobe path puts a dozen
 * branches of its own between the function's RET and the freeze; this one
 * puts none (the return thunk's JMP and RET, where the kernel uses one,
 * belong to the function's return).
 *
 * Compare samples/ftrace/ftrace-direct.c (the API) and the x86 BPF
 * trampoline (calling the original function, then skipping its frame).
 */
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "capture.h"
#include "fexit_slots.h"

static_assert(LBR_FEXIT_SLOTS >= LBR_SNAP_MAX_TARGETS);

/*
 * Functions that never return: a call would stay in flight for good and
 * keep lbr_snap_fexit loaded.  The ones the BPF verifier refuses fexit on
 * (noreturn_deny in kernel/bpf/verifier.c), the other noreturn functions
 * a task can exit through (tools/objtool/noreturns.h).  Those an offline
 * CPU's idle task stays inside no hook takes (targets.c).
 */
static const char *const lbr_fexit_noreturn[] = {
	"__x64_sys_exit", "__x64_sys_exit_group", "__ia32_sys_exit",
	"__ia32_sys_exit_group", "do_exit", "do_group_exit", "do_task_dead",
	"make_task_dead", "rewind_stack_and_make_dead", "kthread_exit",
	"kthread_complete_and_exit", "__module_put_and_kthread_exit",
	"panic", "vpanic", "nmi_panic_self_stop", "panic_smp_self_stop",
	"__stack_chk_fail", "__fortify_panic", "usercopy_abort",
	"machine_real_restart", "stop_this_cpu", "cpu_startup_entry",
	"cpu_bringup_and_idle",
};

/*
 * Targets whose slots were given back and may still have calls in flight:
 * freed by ->released() when the last one returns, or by lbr_fexit_stop().
 */
static LIST_HEAD(lbr_fexit_pending);
static DEFINE_MUTEX(lbr_fexit_pending_lock);

/* lbr_snap_fexit's ->capture(): interrupts off, LBR frozen if it can be. */
static void notrace lbr_fexit_capture(void *data, unsigned long ax,
				      unsigned long caller, u32 ctl,
				      unsigned long ret_site)
{
	lbr_capture(data, ax, caller,
		    lbr_hw.backend != LBR_SNAP_BACKEND_NONE, ctl, ret_site,
		    false);
}
NOKPROBE_SYMBOL(lbr_fexit_capture);

static void lbr_fexit_released(void *data)
{
	struct lbr_target *t = data;

	mutex_lock(&lbr_fexit_pending_lock);
	list_del(&t->pending);
	mutex_unlock(&lbr_fexit_pending_lock);
	lbr_target_free(t);
}

static struct lbr_fexit_client lbr_fexit_client = {
	.capture = lbr_fexit_capture,
	.released = lbr_fexit_released,
};

/**
 * lbr_fexit_start - become lbr_snap_fexit's client
 *
 * After lbr_hw_start(): the trampolines freeze with what it chose.
 */
int lbr_fexit_start(void)
{
	lbr_fexit_client.ctl_msr = lbr_hw.ctl_msr;
	lbr_fexit_client.keep = lbr_hw.freeze_keep;
	lbr_fexit_client.freeze = lbr_hw.backend != LBR_SNAP_BACKEND_NONE;
	return lbr_fexit_register(&lbr_fexit_client);
}

/**
 * lbr_fexit_stop - stop being called by the trampolines
 *
 * After every fexit target is detached.  Calls still inside their
 * functions record nothing when they return; their targets are freed now.
 * Waits for a grace period, never for a traced function.
 */
void lbr_fexit_stop(void)
{
	struct lbr_target *t, *tmp;

	lbr_fexit_unregister();
	mutex_lock(&lbr_fexit_pending_lock);
	list_for_each_entry_safe(t, tmp, &lbr_fexit_pending, pending) {
		list_del(&t->pending);
		lbr_target_free(t);
	}
	mutex_unlock(&lbr_fexit_pending_lock);
}

static bool lbr_fexit_never_returns(const char *name)
{
	return match_string(lbr_fexit_noreturn, ARRAY_SIZE(lbr_fexit_noreturn),
			    name) >= 0;
}

/*
 * Why @t cannot have fexit: an error if it was asked for; for "auto", kept
 * for the line that announces its kretprobe (targets.c), so that a load
 * that fails for another target still logs one line.
 */
#define lbr_fexit_refuse(t, asked, fmt, ...)				\
do {									\
	if (asked)							\
		pr_err("target '%s': fexit: " fmt "\n", (t)->name,	\
		       ##__VA_ARGS__);					\
	else								\
		snprintf((t)->no_fexit, sizeof((t)->no_fexit), fmt,	\
			 ##__VA_ARGS__);				\
} while (0)

/*
 * Can @t's stack arguments all be passed on?  The trampoline copies
 * LBR_FEXIT_STACK_WORDS words of its caller's stack for the function: one
 * given more would read the trampoline's own frame (its saved RBP, its
 * return addresses) as its further arguments, and the real ones shifted.
 * The count comes from BTF (targets.c); without BTF, from the user's "/N"
 * (N register-sized arguments; a struct returned in memory takes one more
 * register, which N must then count) on an fexit asked for by name, never
 * guessed for "auto".
 */
static int lbr_fexit_check_stack(struct lbr_target *t, bool asked)
{
	int words = t->stack_words;

	if (words == LBR_BTF_STACK_UNKNOWN && asked && t->nargs >= 0)
		words = max(0, t->nargs - LBR_FEXIT_REG_ARGS);
	if (words == LBR_BTF_STACK_UNBOUNDED) {
		lbr_fexit_refuse(t, asked, "BTF says it takes variable arguments or a struct of over 16 bytes by value, whose stack words the trampoline cannot pass on");
		return -EOPNOTSUPP;
	}
	if (words < 0) {
		lbr_fexit_refuse(t, asked, "no BTF prototype, so its stack arguments are not known%s",
				 asked ? ": give its argument count (sym/N) to hook it with fexit" : "");
		return -EOPNOTSUPP;
	}
	if (words > LBR_FEXIT_STACK_WORDS) {
		lbr_fexit_refuse(t, asked, "takes up to %d words of stack arguments, the trampoline passes on %d",
				 words, LBR_FEXIT_STACK_WORDS);
		return -E2BIG;
	}
	return 0;
}

/*
 * The returns @t's trampoline lets go before the freeze, under
 * capture=all if @all: those the capture would filter by value alone.
 */
static struct lbr_ret_quiet lbr_fexit_quiet_of(const struct lbr_target *t,
					       bool all)
{
	return lbr_ret_quiet_for(t->ret_type, all, t->nr_errnos > 0);
}

/**
 * lbr_fexit_recapture - tell @t's trampoline of a new capture mode
 * @t: an attached fexit target
 * @all: capture=all
 *
 * Under the targets' lock, as lbr_fexit_attach().
 */
void lbr_fexit_recapture(const struct lbr_target *t, bool all)
{
	lbr_fexit_slot_set_limit(t->slot, lbr_fexit_quiet_of(t, all).limit);
}

/* Returns @t's trampoline let go, on top of its counters. */
u64 lbr_fexit_quiet_returns(const struct lbr_target *t)
{
	return t->slot < 0 ? 0 : lbr_fexit_slot_quiet(t->slot);
}

/**
 * lbr_fexit_attach - hook @t with a trampoline of its own
 * @t: a resolved target
 * @asked: fexit was asked for, not "auto": refusals are errors, and a
 *	function without BTF may be hooked on the user's argument count
 *
 * The trampoline passes the function its arguments as they came, stack
 * ones too (fexit_tramp.S), up to LBR_FEXIT_STACK_WORDS of them.
 */
int lbr_fexit_attach(struct lbr_target *t, bool asked)
{
	struct lbr_ret_quiet q;
	int ret;

	if (!LBR_HAVE_DIRECT_CALLS) {
		lbr_fexit_refuse(t, asked, "this kernel has no ftrace direct calls");
		return -EOPNOTSUPP;
	}
	if (lbr_fexit_never_returns(t->name)) {
		lbr_fexit_refuse(t, asked, "the function never returns, a call would stay inside for good");
		return -EINVAL;
	}
	ret = lbr_fexit_check_stack(t, asked);
	if (ret)
		return ret;
	/* ftrace maps sym+0 to its fentry site. */
	q = lbr_fexit_quiet_of(t, lbr_capture_every_return());
	ret = lbr_fexit_slot_get(t->start, t, t->btf_reg_args >= 0, &q);
	if (ret == -EBUSY) {
		lbr_fexit_refuse(t, asked, "busy: another direct caller such as a BPF trampoline has the function, or every free trampoline still has calls of a removed target inside (%d)",
				 ret);
		return ret;
	}
	if (ret < 0) {
		lbr_fexit_refuse(t, asked, "no trampoline (%d)", ret);
		return ret;
	}
	t->slot = ret;
	return 0;
}

/**
 * lbr_fexit_detach - unhook @n fexit targets; free each once drained
 * @ts: the targets, no longer on the targets' list
 * @n: how many
 *
 * Returns at once: a target is freed after the last call through its
 * trampoline (lbr_fexit_released()), or by lbr_fexit_stop().
 */
void lbr_fexit_detach(struct lbr_target **ts, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		mutex_lock(&lbr_fexit_pending_lock);
		list_add(&ts[i]->pending, &lbr_fexit_pending);
		mutex_unlock(&lbr_fexit_pending_lock);
		lbr_fexit_slot_put(ts[i]->slot);
	}
}

/* Calls inside @t's function right now (a racy sum: never below 0). */
long lbr_fexit_inflight(const struct lbr_target *t)
{
	return t->slot < 0 ? 0 : max(0L, lbr_fexit_slot_inflight(t->slot));
}
