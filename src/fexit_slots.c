// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_fexit: the fexit trampolines (fexit_tramp.S) and their slots.
 *
 * A module of its own because of what a trampoline's text must outlive.
 * A task may sleep inside a traced function for as long as it likes (an
 * open of a FIFO, a pipe read) and then return into the trampoline; until
 * it has, the trampoline may not go away.  A module's exit cannot refuse to
 * run and must not wait without bound, so lbr_snap, which holds everything
 * else, keeps no trampoline: it can always unload at once.  This module
 * takes a reference on itself while a slot given back still has calls in
 * flight, so rmmod of it says "in use" until they return, and it never
 * waits for them.  The same as a BPF trampoline image, which outlives its
 * program until the last call through it returns (bpf_tramp_image_put() in
 * kernel/bpf/trampoline.c).
 *
 * Calls in flight are counted per CPU and per slot (in at the trampoline's
 * entry, out after the capture), summed only when a slot drains: no shared
 * cache line on the way through.  A call may enter on one CPU and leave on
 * another; only the sum means anything.
 */
#include <linux/bitmap.h>
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "fexit_slots.h"
#include "func_lookup.h"
#include "lbr_snap.h"		/* LBR_SNAP_VERSION, the one version */

struct lbr_fexit_slot {
	struct lbr_direct direct;
	void *data;			/* the client's, for its callbacks */
	unsigned long put_at;		/* jiffies when given back */
	bool told;			/* said it is still draining */
};

/*
 * Slot state changes under lbr_fexit_lock.  A slot is "used" from
 * lbr_fexit_slot_get() until it has drained, or for good if ftrace would
 * not remove its direct call ("lost").  An "orphan" is a slot whose client
 * has gone, or a lost one: its calls restore LBR and record nothing.  An
 * "unhooked" slot lost its direct call when its function's module went;
 * the client has yet to give it back.
 */
static DEFINE_MUTEX(lbr_fexit_lock);
static struct lbr_fexit_slot lbr_fexit_slots[LBR_FEXIT_SLOTS];
static DECLARE_BITMAP(lbr_fexit_used, LBR_FEXIT_SLOTS);
static DECLARE_BITMAP(lbr_fexit_draining, LBR_FEXIT_SLOTS);
static DECLARE_BITMAP(lbr_fexit_synced, LBR_FEXIT_SLOTS);
static DECLARE_BITMAP(lbr_fexit_lost, LBR_FEXIT_SLOTS);
static DECLARE_BITMAP(lbr_fexit_orphan, LBR_FEXIT_SLOTS);
static DECLARE_BITMAP(lbr_fexit_unhooked, LBR_FEXIT_SLOTS);
static bool lbr_fexit_pinned;		/* our reference on ourselves */
static const struct lbr_fexit_client *lbr_fexit_client;

/* The functions @d hooks: @nr, or one. */
static unsigned int lbr_direct_funcs(const struct lbr_direct *d)
{
	return d->nr ?: 1;
}

/*
 * A message of @slot: "slot N (FUNC): ...", or for a batch's slot, whose
 * one trampoline serves them all, "slot N (FIRST and M more): ...".
 */
static __printf(3, 4) void lbr_slot_log(const char *level, unsigned int slot,
					const char *fmt, ...)
{
	const struct lbr_direct *d = &lbr_fexit_slots[slot].direct;
	unsigned int more = lbr_direct_funcs(d) - 1;
	struct va_format vaf;
	va_list args;

	lockdep_assert_held(&lbr_fexit_lock);
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	if (more)
		printk("%s" pr_fmt("slot %u (%ps and %u more): %pV"), level,
		       slot, (void *)d->ip, more, &vaf);
	else
		printk("%s" pr_fmt("slot %u (%ps): %pV"), level, slot,
		       (void *)d->ip, &vaf);
	va_end(args);
}

/*
 * Direct calls ftrace holds of the slots, under lbr_fexit_lock: a slot's
 * functions from its attach until ftrace removed them (a lost slot's
 * stay counted).  Where ftrace's table grows entry by entry (compat.h),
 * they stay below LBR_DIRECT_TABLE_MAX less direct_margin.
 */
static unsigned int lbr_fexit_direct_nr;
static unsigned int direct_margin = 512;
module_param(direct_margin, uint, 0644);
MODULE_PARM_DESC(direct_margin,
		 "where ftrace grows its table of direct calls entry by entry (register_ftrace_direct_multi(), as in Debian's 6.1), the entries of 8192 left to other users such as BPF trampolines, which lbr_snap_fexit cannot count (default 512); raising it can make the re-hooking of a batch's rest fail (E2BIG)");

/* Global: the trampolines count a call in themselves (fexit_tramp.S). */
DEFINE_PER_CPU(struct lbr_fexit_calls, lbr_fexit_calls);

/*
 * Slots whose function takes every argument in a register (its BTF says,
 * lbr_fexit_slot_get()): their trampoline copies no stack words and makes
 * no call on the way in.  Set before the slot's direct call is live.
 */
u8 lbr_fexit_regs_only[LBR_FEXIT_SLOTS];

/*
 * Each slot's test of the return value (ret_class.h): the returns its
 * trampoline lets go without freezing, counted in lbr_fexit_quiet.  A
 * limit of 0 lets none go: every return reaches the client.
 */
struct lbr_ret_quiet lbr_fexit_rets[LBR_FEXIT_SLOTS]
	__read_mostly __aligned(LBR_RET_QUIET_SIZE);
DEFINE_PER_CPU(struct lbr_fexit_calls, lbr_fexit_quiet);

/*
 * The task the client leaves out on each CPU, or NULL (fexit_slots.h):
 * written by the client, read by the trampolines on every call; all NULL
 * whenever no client is registered (cleared once one has gone).
 */
DEFINE_PER_CPU(struct task_struct *, lbr_fexit_unfollowed);
EXPORT_PER_CPU_SYMBOL_GPL(lbr_fexit_unfollowed);

/* No task left out on any CPU: what a client that has gone left. */
static void lbr_fexit_follow_all(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu(lbr_fexit_unfollowed, cpu), NULL);
}

static void lbr_fexit_drain(struct work_struct *work);
static DECLARE_DELAYED_WORK(lbr_fexit_drain_work, lbr_fexit_drain);
static void lbr_fexit_detach_locked(unsigned int slot);

/* The drain polls slots with calls inside, less often the longer it waits. */
#define LBR_FEXIT_POLL_MIN	msecs_to_jiffies(100)
#define LBR_FEXIT_POLL_MAX	(5 * HZ)
static unsigned long lbr_fexit_poll;

u32 lbr_fexit_ctl_msr __read_mostly;
u32 lbr_fexit_keep __read_mostly = ~0U;

static __always_inline unsigned long lbr_fexit_ret_site(unsigned int kind,
							unsigned int slot)
{
	return lbr_fexit_tramps[kind][slot] + lbr_fexit_ret_offs[kind][slot];
}

/*
 * Can the word at @p be read?  With the exception table and page faults
 * off, inline: copy_from_kernel_nofault() is a function ftrace can trace,
 * and a trampoline on it would call itself from here.
 */
static __always_inline bool lbr_fexit_readable(const unsigned long *p)
{
	unsigned long word;
	bool ok = false;

	pagefault_disable();
	__get_kernel_nofault(&word, p, unsigned long, out);
	ok = true;
out:
	pagefault_enable();
	return ok;
}

/*
 * How many of the LBR_FEXIT_STACK_WORDS words from @args can be read: on
 * the task's stack, up to its top; on another (an interrupt's), as far as
 * it is mapped.  The traced function reads no further than its caller
 * wrote, so what cannot be read is not its arguments.
 */
static __always_inline unsigned int
lbr_fexit_args_room(const unsigned long *args)
{
	unsigned long a = (unsigned long)args;
	unsigned long stack = (unsigned long)task_stack_page(current);

	if (a >= stack && a < stack + THREAD_SIZE)
		return min_t(unsigned long, LBR_FEXIT_STACK_WORDS,
			     (stack + THREAD_SIZE - a) / sizeof(long));
	if (lbr_fexit_readable(args + LBR_FEXIT_STACK_WORDS - 1))
		return LBR_FEXIT_STACK_WORDS;
	/* The window ends in an unmapped page: stop where it starts. */
	if (!lbr_fexit_readable(args))
		return 0;
	return min_t(unsigned long, LBR_FEXIT_STACK_WORDS,
		     (PAGE_ALIGN(a + 1) - a) / sizeof(long));
}

/* The copy of a window that is not all on the task's stack. */
static noinline void notrace __no_sanitize_address
lbr_fexit_copy_slow(const unsigned long *args, unsigned long *copy)
{
	unsigned int i, n = lbr_fexit_args_room(args);

	for (i = 0; i < n; i++)
		copy[i] = READ_ONCE_NOCHECK(args[i]);
	for (; i < LBR_FEXIT_STACK_WORDS; i++)
		copy[i] = 0;
}
NOKPROBE_SYMBOL(lbr_fexit_copy_slow);

/* Sixteen words, in straight-line code: a loop would fill LBR with its jumps. */
#define LBR_COPY4(d, s, i) do {						\
	(d)[(i) + 0] = READ_ONCE_NOCHECK((s)[(i) + 0]);			\
	(d)[(i) + 1] = READ_ONCE_NOCHECK((s)[(i) + 1]);			\
	(d)[(i) + 2] = READ_ONCE_NOCHECK((s)[(i) + 2]);			\
	(d)[(i) + 3] = READ_ONCE_NOCHECK((s)[(i) + 3]);			\
} while (0)
static_assert(LBR_FEXIT_STACK_WORDS == 16);

/*
 * Called by a trampoline before the traced function runs: count the call
 * in and copy the caller's stack arguments from @args to @copy.  The
 * words above the caller's return address are the caller's frame beyond
 * the arguments too, redzones on a KASAN kernel: READ_ONCE_NOCHECK().
 * Every taken branch here costs an LBR entry of the caller's history, so
 * the usual case (the whole window on the task's stack: one compare, not
 * taken) takes none but the call and the return.
 */
void notrace __no_sanitize_address
lbr_fexit_enter(unsigned int slot, const unsigned long *args,
		unsigned long *copy)
{
	unsigned long off = (unsigned long)args -
			    (unsigned long)task_stack_page(current);

	if (likely(off <= THREAD_SIZE - LBR_FEXIT_STACK_WORDS * sizeof(long))) {
		LBR_COPY4(copy, args, 0);
		LBR_COPY4(copy, args, 4);
		LBR_COPY4(copy, args, 8);
		LBR_COPY4(copy, args, 12);
	} else {
		lbr_fexit_copy_slow(args, copy);
	}
	this_cpu_inc(lbr_fexit_calls.n[slot]);
}
NOKPROBE_SYMBOL(lbr_fexit_enter);

/*
 * Called by a "lbr" trampoline, interrupts off and LBR frozen; @ctl is
 * the control MSR's low half before the freeze.  The trampoline
 * unfreezes when this returns, client or not.
 */
void notrace lbr_fexit_exit_lbr(unsigned int slot, unsigned long ax,
				unsigned long caller, u32 ctl,
				unsigned long fentry_ret, u64 entry_tsc)
{
	const struct lbr_fexit_client *c = READ_ONCE(lbr_fexit_client);

	if (c && !test_bit(slot, lbr_fexit_orphan))
		c->capture(lbr_fexit_slots[slot].data, ax, caller, ctl,
			   lbr_fexit_ret_site(0, slot), fentry_ret, entry_tsc);
	this_cpu_dec(lbr_fexit_calls.n[slot]);
}
NOKPROBE_SYMBOL(lbr_fexit_exit_lbr);

/* Called by a "nolbr" trampoline (the "none" backend), interrupts off. */
void notrace lbr_fexit_exit_nolbr(unsigned int slot, unsigned long ax,
				  unsigned long caller, unsigned long fentry_ret,
				  u64 entry_tsc)
{
	const struct lbr_fexit_client *c = READ_ONCE(lbr_fexit_client);

	if (c && !test_bit(slot, lbr_fexit_orphan))
		c->capture(lbr_fexit_slots[slot].data, ax, caller, 0, 0,
			   fentry_ret, entry_tsc);
	this_cpu_dec(lbr_fexit_calls.n[slot]);
}
NOKPROBE_SYMBOL(lbr_fexit_exit_nolbr);

/* @slot's count in @counts summed over CPUs, without a lock. */
static long lbr_fexit_sum(struct lbr_fexit_calls __percpu *counts,
			  unsigned int slot)
{
	long sum = 0;
	int cpu;

	if (slot >= LBR_FEXIT_SLOTS)
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(counts, cpu)->n[slot]);
	return sum;
}

/**
 * lbr_fexit_slot_inflight - calls inside @slot's function right now
 * @slot: a slot
 */
long lbr_fexit_slot_inflight(unsigned int slot)
{
	return lbr_fexit_sum(&lbr_fexit_calls, slot);
}
EXPORT_SYMBOL_GPL(lbr_fexit_slot_inflight);

/**
 * lbr_fexit_owns - is @addr in this module (its trampolines, its code)?
 * @addr: an address
 *
 * The client refuses such targets: they are on its capture path.
 */
bool lbr_fexit_owns(unsigned long addr)
{
	return within_module(addr, THIS_MODULE);
}
EXPORT_SYMBOL_GPL(lbr_fexit_owns);

/**
 * lbr_fexit_register - become the client of the trampolines
 * @client: its callbacks and the freeze; must stay valid until
 *	lbr_fexit_unregister()
 *
 * Return: 0, or -EBUSY if another client has them.
 */
int lbr_fexit_register(const struct lbr_fexit_client *client)
{
	int ret = 0;

	mutex_lock(&lbr_fexit_lock);
	if (lbr_fexit_client) {
		ret = -EBUSY;
	} else {
		/*
		 * A client that does not freeze leaves the MSR as it is: the
		 * "lbr" trampolines of an earlier one may still return, and
		 * write it back as they read it (all bits kept).  A late call
		 * that freezes a new client's MSR restores that same one.
		 */
		if (client->freeze)
			WRITE_ONCE(lbr_fexit_ctl_msr, client->ctl_msr);
		WRITE_ONCE(lbr_fexit_keep, client->freeze ? client->keep : ~0U);
		WRITE_ONCE(lbr_fexit_client, client);
	}
	mutex_unlock(&lbr_fexit_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(lbr_fexit_register);

/**
 * lbr_fexit_unregister - stop calling the client
 *
 * The client has given back every slot it got.  When this returns, no
 * callback of the client runs or will run: calls still inside functions
 * of slots that are draining, or lost, find no client when they return,
 * and their freeze keeps every bit.  Waits for a grace period, never for
 * a traced function.
 */
void lbr_fexit_unregister(void)
{
	DECLARE_BITMAP(left, LBR_FEXIT_SLOTS);
	unsigned int slot;

	mutex_lock(&lbr_fexit_lock);
	/* A slot the client did not give back would call it after this. */
	bitmap_andnot(left, lbr_fexit_used, lbr_fexit_draining, LBR_FEXIT_SLOTS);
	bitmap_andnot(left, left, lbr_fexit_lost, LBR_FEXIT_SLOTS);
	bitmap_andnot(left, left, lbr_fexit_orphan, LBR_FEXIT_SLOTS);
	for_each_set_bit(slot, left, LBR_FEXIT_SLOTS) {
		lbr_slot_log(KERN_WARNING, slot,
			     "the client left it attached: detached\n");
		lbr_fexit_detach_locked(slot);
	}
	bitmap_or(lbr_fexit_orphan, lbr_fexit_orphan, lbr_fexit_used,
		  LBR_FEXIT_SLOTS);
	WRITE_ONCE(lbr_fexit_keep, ~0U);
	WRITE_ONCE(lbr_fexit_client, NULL);
	mutex_unlock(&lbr_fexit_lock);
	/*
	 * Every callback runs with interrupts off, from the freeze on: an RCU
	 * grace period waits for those that began before; RCU Tasks Rude for
	 * any that run where RCU is not watching.
	 */
	synchronize_rcu();
	lbr_synchronize_rcu_tasks_rude();
	/*
	 * No callback runs now: what the client left of no use to the next,
	 * and it may name a task freed since.
	 */
	lbr_fexit_follow_all();
}
EXPORT_SYMBOL_GPL(lbr_fexit_unregister);

static unsigned int lbr_fexit_count_free(void)
{
	unsigned int n;

	mutex_lock(&lbr_fexit_lock);
	n = LBR_FEXIT_SLOTS - bitmap_weight(lbr_fexit_used, LBR_FEXIT_SLOTS);
	mutex_unlock(&lbr_fexit_lock);
	return n;
}

/**
 * lbr_fexit_slots_free - how many slots lbr_fexit_slot_get() can give now
 * @want: how many the caller needs
 *
 * Fewer free than @want: slots still draining count when one pass of the
 * drain frees them (its grace periods), as lbr_fexit_slot_get() waits for
 * one.  With no other client, the count holds until the caller gets them.
 */
unsigned int lbr_fexit_slots_free(unsigned int want)
{
	unsigned int n = lbr_fexit_count_free();

	if (n >= want)
		return n;
	flush_delayed_work(&lbr_fexit_drain_work);
	return lbr_fexit_count_free();
}
EXPORT_SYMBOL_GPL(lbr_fexit_slots_free);

/**
 * lbr_fexit_slot_set_limit - change the returns @slot lets go
 * @slot: from lbr_fexit_slot_get()
 * @limit: the new limit of its struct lbr_ret_quiet, for a change of
 *	what the client records (capture=errors or all); bias and shift
 *	depend on the function's return type only and stay
 *
 * One store: a call on its way through the test sees the old limit or
 * the new one.  Calls already past the test are the client's to filter.
 */
void lbr_fexit_slot_set_limit(unsigned int slot, u64 limit)
{
	if (slot >= LBR_FEXIT_SLOTS)
		return;
	mutex_lock(&lbr_fexit_lock);
	if (test_bit(slot, lbr_fexit_used))
		WRITE_ONCE(lbr_fexit_rets[slot].limit, limit);
	mutex_unlock(&lbr_fexit_lock);
}
EXPORT_SYMBOL_GPL(lbr_fexit_slot_set_limit);

/**
 * lbr_fexit_slot_quiet - calls @slot's trampoline let go since it was got
 * @slot: from lbr_fexit_slot_get()
 *
 * Returns it let go before the freeze, and calls it let go at its entry
 * (lbr_fexit_unfollowed).  A sum over CPUs taken without a lock: a figure
 * for statistics.
 */
u64 lbr_fexit_slot_quiet(unsigned int slot)
{
	return lbr_fexit_sum(&lbr_fexit_quiet, slot);
}
EXPORT_SYMBOL_GPL(lbr_fexit_slot_quiet);

/* How many more direct calls ftrace takes of ours; under lbr_fexit_lock. */
static unsigned int lbr_fexit_direct_room_locked(void)
{
	unsigned int ceiling;

	lockdep_assert_held(&lbr_fexit_lock);
	if (!LBR_DIRECT_GROWS_EACH)
		return UINT_MAX;
	ceiling = LBR_DIRECT_TABLE_MAX - min_t(unsigned int,
					       READ_ONCE(direct_margin),
					       LBR_DIRECT_TABLE_MAX);
	return ceiling > lbr_fexit_direct_nr ? ceiling - lbr_fexit_direct_nr :
	       0;
}

/**
 * lbr_fexit_direct_calls - the direct calls ftrace holds of the slots
 * @room: if not NULL, set to how many more lbr_fexit_slot_get() takes
 *	(UINT_MAX where it sets no ceiling)
 *
 * Counted from each slot's attach until ftrace removed its functions;
 * other users' (BPF trampolines) are not counted.
 */
unsigned int lbr_fexit_direct_calls(unsigned int *room)
{
	unsigned int n;

	mutex_lock(&lbr_fexit_lock);
	n = lbr_fexit_direct_nr;
	if (room)
		*room = lbr_fexit_direct_room_locked();
	mutex_unlock(&lbr_fexit_lock);
	return n;
}
EXPORT_SYMBOL_GPL(lbr_fexit_direct_calls);

/**
 * lbr_fexit_slot_get - hook the functions at @ips with a trampoline
 * @ips: the functions' addresses (ftrace maps each to its fentry site);
 *	functions of vmlinux, not of a module, when more than one
 * @nr: how many, at least one; one where a trampoline takes one
 *	function (LBR_DIRECT_ONE_EACH)
 * @data: given back to the client's callbacks for this slot
 * @flags: LBR_FEXIT_REGS_ONLY: every argument of each function is in a
 *	register (the caller knows it from BTF, not from a user), the
 *	trampoline copies none of the caller's stack words
 * @quiet: the returns the trampoline lets go without freezing LBR or
 *	calling the client (lbr_fexit_slot_set_limit()): one test for all
 *	of them, so they share a return class
 *
 * All or nothing: when ftrace refuses one function, none is hooked.
 * When every slot is taken and some are draining, waits for one pass of
 * the drain (its grace periods, never a traced call) and tries again.
 *
 * Return: the slot, or -ENOSPC when all are in use, -EBUSY when the free
 * ones still have calls inside, -E2BIG when ftrace's table would pass
 * its ceiling (lbr_fexit_direct_calls()), or what ftrace said.
 */
int lbr_fexit_slot_get(const unsigned long *ips, unsigned int nr, void *data,
		       unsigned int flags, const struct lbr_ret_quiet *quiet)
{
	unsigned long *copy = NULL;
	bool retried = false;
	struct lbr_fexit_slot *s;
	unsigned int slot;
	int cpu, ret;

	if (!LBR_HAVE_DIRECT_CALLS)
		return -EOPNOTSUPP;
	if (!nr || flags & ~LBR_FEXIT_REGS_ONLY)
		return -EINVAL;
	if (LBR_DIRECT_ONE_EACH && nr > 1)
		return -EOPNOTSUPP;
	if (nr > 1) {
		/* Kept for the filter and the module check (lbr_fexit_slot_in()). */
		copy = kvmalloc_array(nr, sizeof(*ips), GFP_KERNEL);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, ips, nr * sizeof(*ips));
	}
again:
	mutex_lock(&lbr_fexit_lock);
	if (!lbr_fexit_client) {
		ret = -ENODEV;
		goto out;
	}
	if (nr > lbr_fexit_direct_room_locked()) {
		ret = -E2BIG;
		goto out;
	}
	slot = find_first_zero_bit(lbr_fexit_used, LBR_FEXIT_SLOTS);
	if (slot >= LBR_FEXIT_SLOTS) {
		ret = bitmap_empty(lbr_fexit_draining, LBR_FEXIT_SLOTS) ?
		      -ENOSPC : -EBUSY;
		if (ret == -EBUSY && !retried) {
			mutex_unlock(&lbr_fexit_lock);
			flush_delayed_work(&lbr_fexit_drain_work);
			retried = true;
			goto again;
		}
		goto out;
	}
	s = &lbr_fexit_slots[slot];
	s->data = data;
	WRITE_ONCE(lbr_fexit_regs_only[slot], !!(flags & LBR_FEXIT_REGS_ONLY));
	/* No call of an earlier user is left: the slot drained. */
	lbr_fexit_rets[slot] = *quiet;
	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu_ptr(&lbr_fexit_quiet, cpu)->n[slot], 0);
	s->direct.ip = ips[0];
	s->direct.ips = copy;
	s->direct.nr = copy ? nr : 0;
	s->direct.tramp = lbr_fexit_tramps[!lbr_fexit_client->freeze][slot];
	/* Used before the first call can come: the exit probe looks at it. */
	__set_bit(slot, lbr_fexit_used);
	ret = lbr_direct_attach(&s->direct);
	if (ret) {
		__clear_bit(slot, lbr_fexit_used);
		s->data = NULL;
		s->direct.ips = NULL;
		s->direct.nr = 0;
		goto out;
	}
	lbr_fexit_direct_nr += nr;
	copy = NULL;
	ret = slot;
out:
	mutex_unlock(&lbr_fexit_lock);
	kvfree(copy);
	return ret;
}
EXPORT_SYMBOL_GPL(lbr_fexit_slot_get);

/*
 * Remove @slot's direct call and start its drain; under lbr_fexit_lock.
 * The module holds itself while a slot drains.  __module_get() is safe:
 * the caller is lbr_snap, which holds this module through its dependency,
 * or this module's own client-less path, which runs only while it does.
 */
static void lbr_fexit_drain_start_locked(unsigned int slot)
{
	struct lbr_fexit_slot *s = &lbr_fexit_slots[slot];

	__set_bit(slot, lbr_fexit_draining);
	s->put_at = jiffies;
	s->told = false;
	if (!lbr_fexit_pinned) {
		__module_get(THIS_MODULE);
		lbr_fexit_pinned = true;
	}
	lbr_fexit_poll = LBR_FEXIT_POLL_MIN;
	mod_delayed_work(system_long_wq, &lbr_fexit_drain_work, 0);
}

static void lbr_fexit_detach_locked(unsigned int slot)
{
	struct lbr_fexit_slot *s = &lbr_fexit_slots[slot];
	int ret;

	lockdep_assert_held(&lbr_fexit_lock);
	if (__test_and_clear_bit(slot, lbr_fexit_unhooked)) {
		/* Its module went, and took the direct call along. */
		lbr_fexit_drain_start_locked(slot);
		return;
	}
	ret = lbr_direct_detach(&s->direct);
	if (!ret)
		lbr_fexit_direct_nr -= lbr_direct_funcs(&s->direct);
	if (ret) {
		/*
		 * The call site may still jump here: the trampoline and this
		 * module stay, until a retry works (lbr_fexit_module_event()).
		 * Its calls go on, recording nothing (an orphan), as the
		 * client has given the slot back.
		 */
		lbr_slot_log(KERN_WARNING, slot,
			     "ftrace would not remove the direct call (%d): the slot stays in use and lbr_snap_fexit loaded\n",
			     ret);
		__set_bit(slot, lbr_fexit_lost);
		__set_bit(slot, lbr_fexit_orphan);
		__module_get(THIS_MODULE);
		return;
	}
	lbr_fexit_drain_start_locked(slot);
}

/**
 * lbr_fexit_slot_put - unhook @slot's function
 * @slot: from lbr_fexit_slot_get()
 *
 * Returns at once.  The client's ->released() runs once the last call
 * through the trampoline is over; until then this module holds itself.
 * If ftrace will not remove the direct call, the slot is never reused and
 * the module never unloads: its call site may still reach the trampoline.
 */
void lbr_fexit_slot_put(unsigned int slot)
{
	if (WARN_ON_ONCE(slot >= LBR_FEXIT_SLOTS))
		return;
	mutex_lock(&lbr_fexit_lock);
	if (!WARN_ON_ONCE(!test_bit(slot, lbr_fexit_used) ||
			  test_bit(slot, lbr_fexit_draining) ||
			  test_bit(slot, lbr_fexit_lost)))
		lbr_fexit_detach_locked(slot);
	mutex_unlock(&lbr_fexit_lock);
}
EXPORT_SYMBOL_GPL(lbr_fexit_slot_put);

/*
 * Give back the slots that have drained.  A slot's trampoline, and the
 * client's data for it, must outlive every call in flight:
 * 1. (lbr_fexit_slot_put()) remove the direct call: no new call enters;
 * 2. RCU Tasks: every task between the fentry call and the count in has
 *    passed it (a preempted task does not end the grace period, a
 *    voluntary switch does); RCU Tasks Rude for the idle tasks and code
 *    where RCU is not watching, which RCU Tasks does not wait for;
 * 3. the sum of the counts is zero: nobody is inside;
 * 4. RCU Tasks (and Rude) again for the instructions after the count out.
 * Step 3 is polled, never waited for: a call may never return.
 */
static void lbr_fexit_drain(struct work_struct *work)
{
	DECLARE_BITMAP(fresh, LBR_FEXIT_SLOTS);
	DECLARE_BITMAP(done, LBR_FEXIT_SLOTS);
	const struct lbr_fexit_client *c;
	unsigned int slot;
	long left;

	mutex_lock(&lbr_fexit_lock);
	bitmap_andnot(fresh, lbr_fexit_draining, lbr_fexit_synced,
		      LBR_FEXIT_SLOTS);
	mutex_unlock(&lbr_fexit_lock);
	if (!bitmap_empty(fresh, LBR_FEXIT_SLOTS)) {
		synchronize_rcu_tasks();
		lbr_synchronize_rcu_tasks_rude();
		mutex_lock(&lbr_fexit_lock);
		bitmap_or(lbr_fexit_synced, lbr_fexit_synced, fresh,
			  LBR_FEXIT_SLOTS);
		mutex_unlock(&lbr_fexit_lock);
	}

	bitmap_zero(done, LBR_FEXIT_SLOTS);
	mutex_lock(&lbr_fexit_lock);
	for_each_set_bit(slot, lbr_fexit_synced, LBR_FEXIT_SLOTS) {
		struct lbr_fexit_slot *s = &lbr_fexit_slots[slot];

		left = lbr_fexit_slot_inflight(slot);
		if (!left) {
			__set_bit(slot, done);
		} else if (!s->told && time_after(jiffies, s->put_at + HZ)) {
			lbr_slot_log(KERN_INFO, slot,
				     "%ld call(s) still inside; lbr_snap_fexit stays loaded until they return\n",
				     left);
			s->told = true;
		}
	}
	mutex_unlock(&lbr_fexit_lock);

	if (!bitmap_empty(done, LBR_FEXIT_SLOTS)) {
		synchronize_rcu_tasks();
		lbr_synchronize_rcu_tasks_rude();
	}

	mutex_lock(&lbr_fexit_lock);
	c = lbr_fexit_client;
	for_each_set_bit(slot, done, LBR_FEXIT_SLOTS) {
		struct lbr_fexit_slot *s = &lbr_fexit_slots[slot];

		if (s->told)
			lbr_slot_log(KERN_INFO, slot,
				     "the last call has returned\n");
		if (c && !test_bit(slot, lbr_fexit_orphan) && c->released)
			c->released(s->data);
		s->data = NULL;
		kvfree(s->direct.ips);
		s->direct.ips = NULL;
		s->direct.nr = 0;
		__clear_bit(slot, lbr_fexit_synced);
		__clear_bit(slot, lbr_fexit_draining);
		__clear_bit(slot, lbr_fexit_orphan);
		__clear_bit(slot, lbr_fexit_used);
	}
	if (!bitmap_empty(lbr_fexit_draining, LBR_FEXIT_SLOTS)) {
		queue_delayed_work(system_long_wq, &lbr_fexit_drain_work,
				   lbr_fexit_poll);
		lbr_fexit_poll = min(2 * lbr_fexit_poll, LBR_FEXIT_POLL_MAX);
	} else if (lbr_fexit_pinned) {
		lbr_fexit_pinned = false;
		module_put(THIS_MODULE);
	}
	mutex_unlock(&lbr_fexit_lock);
}

/*
 * A task that exits inside a traced function (a kthread calling
 * kthread_exit(), anything calling do_exit()) never comes back through the
 * trampoline to count its call out, and the slot would never drain.  When
 * a task exits, count out every call its stack shows inside a traced
 * function: a frame returning to a trampoline's return site, among the
 * callers of do_exit() only, since the frames above it (this probe's,
 * the unwinder's) do return.  The stack is the task's own and still whole.
 * (An oops inside a traced function rewinds the stack before do_exit():
 * that call stays counted, and this module stays loaded.)
 */
#define LBR_FEXIT_EXIT_DEPTH	256

struct lbr_fexit_trace {
	unsigned long entries[LBR_FEXIT_EXIT_DEPTH];
};

/*
 * Allocated, not static: a module's static per-CPU data comes out of a
 * reserve the whole kernel's modules share (PERCPU_MODULE_RESERVE: 8 KiB
 * in Debian's 5.10 and 6.1, 64 KiB where allocations are profiled), which
 * the trampolines' counts take 4 KiB of already.
 */
static struct lbr_fexit_trace __percpu *lbr_fexit_trace;
static unsigned long lbr_fexit_text_lo, lbr_fexit_text_hi;
static unsigned long lbr_fexit_do_exit, lbr_fexit_do_exit_end;
static struct tracepoint *lbr_fexit_tp_exit;

static int lbr_fexit_slot_of(unsigned long ret)
{
	unsigned int kind, slot;

	if (ret < lbr_fexit_text_lo || ret > lbr_fexit_text_hi)
		return -1;
	for (kind = 0; kind < 2; kind++)
		for (slot = 0; slot < LBR_FEXIT_SLOTS; slot++)
			if (ret == lbr_fexit_ret_site(kind, slot))
				return slot;
	return -1;
}

/*
 * Can the exiting task be inside a traced function?  Only if a word of its
 * live stack, from here to its saved user registers, lies among the
 * trampolines' return sites: a call in flight keeps its function's return
 * address to the trampoline there until it returns.  One compare a word,
 * up to the stack's size, where the unwind below walks ORC tables for
 * every frame: nearly every exit stops here.  Off the task's stack (never
 * at exit), the unwind decides.
 */
static bool notrace __no_sanitize_address lbr_fexit_may_be_inside(void)
{
	unsigned long stack = (unsigned long)task_stack_page(current);
	unsigned long top = (unsigned long)task_pt_regs(current);
	unsigned long sp = current_stack_pointer;
	const unsigned long *p;

	if (sp < stack || sp >= top)
		return true;
	for (p = (const unsigned long *)sp; (unsigned long)p < top; p++) {
		unsigned long w = READ_ONCE_NOCHECK(*p);

		if (w >= lbr_fexit_text_lo && w <= lbr_fexit_text_hi)
			return true;
	}
	return false;
}

static void notrace lbr_fexit_task_exit(void *data, LBR_TP_EXIT_ARGS)
{
	struct lbr_fexit_trace *tr;
	unsigned int n, i;
	bool below = false;
	int slot;

	if (bitmap_empty(lbr_fexit_used, LBR_FEXIT_SLOTS) ||
	    !lbr_fexit_may_be_inside())
		return;
	tr = get_cpu_ptr(lbr_fexit_trace);
	n = stack_trace_save(tr->entries, LBR_FEXIT_EXIT_DEPTH, 0);
	for (i = 0; i < n; i++) {
		unsigned long ret = tr->entries[i];

		if (!below) {
			below = ret > lbr_fexit_do_exit &&
				ret <= lbr_fexit_do_exit_end;
			continue;
		}
		slot = lbr_fexit_slot_of(ret);
		if (slot >= 0)
			this_cpu_dec(lbr_fexit_calls.n[slot]);
	}
	put_cpu_ptr(lbr_fexit_trace);
	if (!below)
		pr_warn_once("sched_process_exit: no do_exit() on the exiting task's stack: its calls inside traced functions cannot be counted out\n");
}

static void lbr_fexit_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		lbr_fexit_tp_exit = tp;
}

/* Where do_exit() is: found through kprobes, as targets.c finds targets. */
static int __init lbr_fexit_find_do_exit(void)
{
	unsigned long size;
	int ret;

	ret = lbr_func_lookup("do_exit", &lbr_fexit_do_exit, &size);
	if (!ret)
		lbr_fexit_do_exit_end = lbr_fexit_do_exit + size;
	return ret;
}

/* Count out the calls of exiting tasks; without it they stay counted. */
static void __init lbr_fexit_watch_exits(void)
{
	int ret;

	for_each_kernel_tracepoint(lbr_fexit_find_tp, NULL);
	ret = lbr_fexit_find_do_exit();
	if (!ret && lbr_fexit_tp_exit) {
		lbr_fexit_trace = alloc_percpu(struct lbr_fexit_trace);
		if (!lbr_fexit_trace)
			ret = -ENOMEM;
	}
	if (!lbr_fexit_tp_exit || ret) {
		pr_warn("no sched_process_exit tracepoint, no do_exit or no memory (%d): a task exiting inside a traced function will keep this module loaded\n",
			ret);
		lbr_fexit_tp_exit = NULL;
		return;
	}
	ret = tracepoint_probe_register(lbr_fexit_tp_exit, lbr_fexit_task_exit,
					NULL);
	if (ret) {
		free_percpu(lbr_fexit_trace);
		lbr_fexit_trace = NULL;
		pr_warn("sched_process_exit: cannot probe it (%d): a task exiting inside a traced function will keep this module loaded\n",
			ret);
		lbr_fexit_tp_exit = NULL;
	}
}

/*
 * Remove @slot's direct call as its function's module @mod goes; its
 * client gives the slot back later.  Under lbr_fexit_lock.
 */
static void lbr_fexit_unhook_locked(unsigned int slot, const char *mod)
{
	struct lbr_fexit_slot *s = &lbr_fexit_slots[slot];

	lockdep_assert_held(&lbr_fexit_lock);
	if (!test_bit(slot, lbr_fexit_used) ||
	    test_bit(slot, lbr_fexit_draining) ||
	    test_bit(slot, lbr_fexit_unhooked) || test_bit(slot, lbr_fexit_lost))
		return;
	if (lbr_direct_detach(&s->direct)) {
		lbr_slot_log(KERN_WARNING, slot,
			     "ftrace would not remove the direct call from %s, which goes\n",
			     mod);
		return;
	}
	lbr_fexit_direct_nr -= lbr_direct_funcs(&s->direct);
	__set_bit(slot, lbr_fexit_unhooked);
}

/**
 * lbr_fexit_slot_unhook - remove @slot's direct call: its module goes
 * @slot: from lbr_fexit_slot_get()
 * @mod: the module's name, for the log
 *
 * For a slot got while its function's module was already going, after
 * this module's own notifier looked (the client's notifier runs after
 * it, and before ftrace drops the module's records).  The client gives
 * the slot back as usual.
 */
void lbr_fexit_slot_unhook(unsigned int slot, const char *mod)
{
	if (WARN_ON_ONCE(slot >= LBR_FEXIT_SLOTS))
		return;
	mutex_lock(&lbr_fexit_lock);
	lbr_fexit_unhook_locked(slot, mod);
	mutex_unlock(&lbr_fexit_lock);
}
EXPORT_SYMBOL_GPL(lbr_fexit_slot_unhook);

/*
 * When a module goes, ftrace drops the records of its functions and could
 * no longer find their direct calls to remove them (on 6.1, the removal
 * then fails for good): unhook the slots in it now, while the records are
 * there; each drains when its client gives it back.  A lost slot there
 * gets its removal tried again.  If that still fails, ftrace keeps the
 * address in its filter and would hook what a new module puts there: such
 * a module is refused.  (The module cannot be held instead:
 * __module_text_address() is not exported.)
 */
/* Does @s hook a function of @mod?  A slot of many should not. */
static bool lbr_fexit_slot_in(const struct lbr_fexit_slot *s,
			      const struct module *mod)
{
	unsigned int i;

	if (!s->direct.nr)
		return within_module(s->direct.ip, mod);
	for (i = 0; i < s->direct.nr; i++)
		if (WARN_ON_ONCE(within_module(s->direct.ips[i], mod)))
			return true;
	return false;
}

static int lbr_fexit_module_event(struct notifier_block *nb,
				  unsigned long state, void *data)
{
	struct module *mod = data;
	unsigned int slot;
	int ret = 0;

	if (state != MODULE_STATE_GOING && state != MODULE_STATE_COMING)
		return NOTIFY_DONE;
	mutex_lock(&lbr_fexit_lock);
	for_each_set_bit(slot, lbr_fexit_used, LBR_FEXIT_SLOTS) {
		struct lbr_fexit_slot *s = &lbr_fexit_slots[slot];
		bool lost = test_bit(slot, lbr_fexit_lost);

		if (!lbr_fexit_slot_in(s, mod) ||
		    test_bit(slot, lbr_fexit_draining) ||
		    test_bit(slot, lbr_fexit_unhooked))
			continue;
		if (state == MODULE_STATE_COMING) {
			if (!lost)
				continue;
			pr_err("%s: refused: slot %u's direct call, which ftrace would not remove, is at %#lx in it\n",
			       mod->name, slot, s->direct.ip);
			ret = -EBUSY;
			break;
		}
		if (!lost) {
			lbr_fexit_unhook_locked(slot, mod->name);
			continue;
		}
		if (lbr_direct_detach(&s->direct)) {
			lbr_slot_log(KERN_WARNING, slot,
				     "ftrace would not remove the direct call from %s, which goes\n",
				     mod->name);
			continue;
		}
		lbr_slot_log(KERN_INFO, slot,
			     "the direct call is removed now that %s goes\n",
			     mod->name);
		lbr_fexit_direct_nr -= lbr_direct_funcs(&s->direct);
		__clear_bit(slot, lbr_fexit_lost);
		lbr_fexit_drain_start_locked(slot);
		module_put(THIS_MODULE);	/* the lost slot's */
	}
	mutex_unlock(&lbr_fexit_lock);
	return notifier_from_errno(ret);
}

static struct notifier_block lbr_fexit_module_nb = {
	.notifier_call = lbr_fexit_module_event,
};

static int __init lbr_fexit_init(void)
{
	unsigned int kind, slot;
	int ret;

	ret = register_module_notifier(&lbr_fexit_module_nb);
	if (ret)
		return ret;
	lbr_fexit_text_lo = ULONG_MAX;
	for (kind = 0; kind < 2; kind++) {
		for (slot = 0; slot < LBR_FEXIT_SLOTS; slot++) {
			unsigned long r = lbr_fexit_ret_site(kind, slot);

			lbr_fexit_text_lo = min(lbr_fexit_text_lo, r);
			lbr_fexit_text_hi = max(lbr_fexit_text_hi, r);
		}
	}
	lbr_fexit_watch_exits();
	return 0;
}

/*
 * Runs only when nothing holds the module: no client (lbr_snap depends on
 * us) and no slot draining or lost (we hold ourselves then).
 */
static void __exit lbr_fexit_exit(void)
{
	unregister_module_notifier(&lbr_fexit_module_nb);
	if (lbr_fexit_tp_exit) {
		tracepoint_probe_unregister(lbr_fexit_tp_exit,
					    lbr_fexit_task_exit, NULL);
		tracepoint_synchronize_unregister();
	}
	free_percpu(lbr_fexit_trace);
	cancel_delayed_work_sync(&lbr_fexit_drain_work);
}

module_init(lbr_fexit_init);
module_exit(lbr_fexit_exit);

MODULE_AUTHOR("lbr_snap developers");
MODULE_DESCRIPTION("lbr_snap's fexit trampolines, kept while a call is inside a traced function");
MODULE_LICENSE("GPL");
MODULE_VERSION(LBR_SNAP_VERSION);
