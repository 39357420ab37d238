// SPDX-License-Identifier: GPL-2.0
/*
 * The tree filter (LBR_SNAP_FILTER_TREE): the threads of a process and
 * every task they and their descendants create, each with its system
 * calls numbered, so that user space can put together what one system
 * call of a command did (lbr-snap why).
 *
 * The tasks followed are in a table of LBR_SNAP_TREE_MAX slots, keyed by
 * the task pointer, open addressing with linear probing over at most
 * LBR_TREE_PROBE slots.  Four tracepoints keep it:
 * - task_newtask, in the parent's context before the child runs (it is
 *   on its thread group's list already): a child of a followed task
 *   takes a slot;
 * - sys_enter and sys_exit, in the task's own context: a followed task
 *   numbers its system call and notes when it began, and that it is out;
 * - sched_process_exit, in the exiting task's context: its slot becomes
 *   free (NULL where no chain runs through it, else a tombstone).
 * Slots are taken and given back under lbr_tree_slots_lock, a find before
 * each insertion, so no task has two.  Lookups take no lock: the task
 * word of a slot is published with a release once its numbers are reset,
 * and read with READ_ONCE(), from any context, NMI included (on x86 a load
 * is not reordered with an older load: no acquire needed).  A slot's
 * numbers are written by its task only while it holds the slot (the
 * syscall probes), else under the lock; the capture path reads them only
 * in the same task's context, never an interrupt's.
 *
 * A slot holds a reference on its task, so a pointer in the table is never
 * that of a task freed and its memory given to another: the exit probe
 * takes the task out and drops it; the table is emptied, and the rest
 * dropped, once no probe can run any more (the filter changed, or the
 * module unloads: tracepoint_synchronize_unregister()).  A thread in the
 * middle of its exit when the filter is set is taken out again (PF_EXITING,
 * checked after the insertion, pairs with the exit path setting it before
 * the exit probe runs).
 *
 * What it costs the tasks not followed: with the filter set, every
 * system call of every task goes through the kernel's syscall tracepoints
 * (SYSCALL_WORK_SYSCALL_TRACEPOINT) and a lookup that misses here, as
 * with any syscall tracer; nothing without it.
 */
#include <linux/atomic.h>
#include <linux/compat.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <trace/events/sched.h>
#include <trace/events/syscalls.h>
#include <trace/events/task.h>

#include "compat.h"
#include "lbr_snap.h"

#define LBR_TREE_BITS		12
#define LBR_TREE_PROBE		32
#define LBR_TREE_TOMB		((struct task_struct *)1UL)
#define LBR_TREE_MASK		(LBR_SNAP_TREE_MAX - 1)

static_assert(LBR_SNAP_TREE_MAX == 1 << LBR_TREE_BITS);

struct lbr_tree_slot {
	struct task_struct *task;	/* NULL: end of chains; LBR_TREE_TOMB */
	u32 seq;			/* system calls begun */
	s32 nr;				/* the one it is in, or -1 */
	u64 begun_ns;
	bool compat;			/* ... in the 32-bit ABI */
};

static struct lbr_tree_slot *lbr_tree;	/* LBR_SNAP_TREE_MAX slots */
static bool lbr_tree_on;		/* probes registered */
static bool lbr_tree_live;		/* records may take the numbers */
static int lbr_tree_tasks;		/* under lbr_tree_slots_lock */
static atomic_t lbr_tree_missed = ATOMIC_INIT(0);
static DEFINE_RAW_SPINLOCK(lbr_tree_slots_lock);

static __always_inline unsigned int lbr_tree_hash(const struct task_struct *t)
{
	return hash_64((unsigned long)t, LBR_TREE_BITS);
}

/* The slot of @t, or NULL: any context. */
static __always_inline struct lbr_tree_slot *
lbr_tree_find(const struct lbr_tree_slot *tab, const struct task_struct *t)
{
	unsigned int i, h;

	if (!tab)
		return NULL;
	h = lbr_tree_hash(t);
	for (i = 0; i < LBR_TREE_PROBE; i++) {
		const struct lbr_tree_slot *s = &tab[(h + i) & LBR_TREE_MASK];
		struct task_struct *p = READ_ONCE(s->task);

		if (p == t)
			return (struct lbr_tree_slot *)s;
		if (!p)
			return NULL;
	}
	return NULL;
}

/* Take a slot for @t, unless it has one; false when none is free. */
static bool lbr_tree_insert(struct task_struct *t)
{
	unsigned int i, h = lbr_tree_hash(t);
	struct lbr_tree_slot *s, *free = NULL;
	unsigned long flags;
	bool ok = true;

	raw_spin_lock_irqsave(&lbr_tree_slots_lock, flags);
	for (i = 0; i < LBR_TREE_PROBE; i++) {
		struct task_struct *p;

		s = &lbr_tree[(h + i) & LBR_TREE_MASK];
		p = s->task;
		if (p == t)
			goto out;
		if (!free && (!p || p == LBR_TREE_TOMB))
			free = s;
		if (!p)
			break;
	}
	if (!free) {
		atomic_inc(&lbr_tree_missed);
		ok = false;
		goto out;
	}
	WRITE_ONCE(free->seq, 0);
	WRITE_ONCE(free->nr, -1);
	WRITE_ONCE(free->begun_ns, 0);
	WRITE_ONCE(free->compat, false);
	get_task_struct(t);
	/* The numbers reset before any lookup finds @t. */
	smp_store_release(&free->task, t);
	lbr_tree_tasks++;
out:
	raw_spin_unlock_irqrestore(&lbr_tree_slots_lock, flags);
	/* A word that names its memory (an old task's) skips it no more. */
	if (ok)
		lbr_follow_unname(t);
	return ok;
}

/*
 * Take @t out: its own context, or the filter's setting (a thread that
 * is exiting).  A slot that ends no chain (the next is NULL) becomes NULL,
 * and the tombstones before it with it: a lookup stops at the first NULL,
 * and no task sits past one.
 */
static void lbr_tree_remove(struct task_struct *t)
{
	struct lbr_tree_slot *s;
	unsigned long flags;
	unsigned int i, n;

	raw_spin_lock_irqsave(&lbr_tree_slots_lock, flags);
	s = lbr_tree_find(lbr_tree, t);
	if (!s) {
		raw_spin_unlock_irqrestore(&lbr_tree_slots_lock, flags);
		return;
	}
	i = s - lbr_tree;
	if (!lbr_tree[(i + 1) & LBR_TREE_MASK].task) {
		WRITE_ONCE(s->task, NULL);
		for (n = 1, i = (i - 1) & LBR_TREE_MASK;
		     n < LBR_SNAP_TREE_MAX && lbr_tree[i].task == LBR_TREE_TOMB;
		     n++, i = (i - 1) & LBR_TREE_MASK)
			WRITE_ONCE(lbr_tree[i].task, NULL);
	} else {
		WRITE_ONCE(s->task, LBR_TREE_TOMB);
	}
	WRITE_ONCE(s->nr, -1);
	lbr_tree_tasks--;
	raw_spin_unlock_irqrestore(&lbr_tree_slots_lock, flags);
	/*
	 * Not the last reference: @t runs (the exit probe), or the caller's
	 * RCU section saw it on its thread list (lbr_tree_add_process()).
	 */
	put_task_struct(t);
}

static void notrace lbr_tree_newtask(void *data, LBR_TP_NEWTASK_ARGS)
{
	if (lbr_tree_find(READ_ONCE(lbr_tree), current))
		lbr_tree_insert(task);
}

static void notrace lbr_tree_sys_enter(void *data, struct pt_regs *regs,
				       long id)
{
	struct lbr_tree_slot *s = lbr_tree_find(READ_ONCE(lbr_tree), current);

	if (!s)
		return;
	/* Out of the window in which the capture path reads them. */
	WRITE_ONCE(s->nr, -1);
	barrier();
	WRITE_ONCE(s->begun_ns, ktime_get_mono_fast_ns());
	WRITE_ONCE(s->seq, s->seq + 1);
	WRITE_ONCE(s->compat, in_compat_syscall());
	barrier();
	WRITE_ONCE(s->nr, id);
}

static void notrace lbr_tree_sys_exit(void *data, struct pt_regs *regs,
				      long ret)
{
	struct lbr_tree_slot *s = lbr_tree_find(READ_ONCE(lbr_tree), current);

	if (s)
		WRITE_ONCE(s->nr, -1);
}

static void notrace lbr_tree_exit(void *data, LBR_TP_EXIT_ARGS)
{
	/*
	 * Pairs with lbr_tree_add_process(): PF_EXITING is set, and the
	 * insertion it may have raced seen.
	 */
	smp_mb();
	/* Most exits are of tasks not followed: no lock for them. */
	if (lbr_tree_find(READ_ONCE(lbr_tree), p))
		lbr_tree_remove(p);
}

/**
 * lbr_tree_has - whether the tree filter follows task @t
 * @t: a task that cannot go while this runs
 *
 * Any context, NMI included.
 */
notrace bool lbr_tree_has(const struct task_struct *t)
{
	return lbr_tree_find(READ_ONCE(lbr_tree), t) != NULL;
}
NOKPROBE_SYMBOL(lbr_tree_has);

/**
 * lbr_tree_syscall - the system call the current task is in
 * @seq: its number among the task's
 * @nr: the system call's number
 * @begun_ns: when it began, CLOCK_MONOTONIC
 * @compat: whether @nr is of the 32-bit ABI
 *
 * Capture path, interrupts off.  Only in task context: an interrupt's
 * return is not the system call's, even where it came in one.
 * Return: false when the tree filter is off, the task is not followed,
 * or it is in no system call.
 */
notrace bool lbr_tree_syscall(u32 *seq, s32 *nr, u64 *begun_ns, bool *compat)
{
	struct lbr_tree_slot *s;

	if (!in_task() || !READ_ONCE(lbr_tree_live))
		return false;
	s = lbr_tree_find(READ_ONCE(lbr_tree), current);
	if (!s)
		return false;
	*nr = READ_ONCE(s->nr);
	if (*nr < 0)
		return false;
	*seq = READ_ONCE(s->seq);
	*begun_ns = READ_ONCE(s->begun_ns);
	*compat = READ_ONCE(s->compat);
	return true;
}
NOKPROBE_SYMBOL(lbr_tree_syscall);

void lbr_tree_counts(u32 *tasks, u32 *missed)
{
	*tasks = READ_ONCE(lbr_tree_tasks);
	*missed = atomic_read(&lbr_tree_missed);
}

/* The probes, of the tracepoints' own types (checked below). */
static const struct {
	const char *name;
	void *probe;
} lbr_tree_tps[] = {
	{ "task_newtask", lbr_tree_newtask },
	{ "sys_enter", lbr_tree_sys_enter },
	{ "sys_exit", lbr_tree_sys_exit },
	{ "sched_process_exit", lbr_tree_exit },
};

static struct tracepoint *lbr_tree_tp[ARRAY_SIZE(lbr_tree_tps)];

static void lbr_tree_find_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lbr_tree_tps); i++)
		if (!strcmp(tp->name, lbr_tree_tps[i].name))
			lbr_tree_tp[i] = tp;
}

static void lbr_tree_unregister(unsigned int n)
{
	while (n--)
		WARN_ON_ONCE(tracepoint_probe_unregister(lbr_tree_tp[n],
							 lbr_tree_tps[n].probe,
							 NULL));
	/* No probe runs after this: the table can be emptied. */
	tracepoint_synchronize_unregister();
}

static int lbr_tree_register(void)
{
	unsigned int i;
	int ret;

	check_trace_callback_type_task_newtask(lbr_tree_newtask);
	check_trace_callback_type_sys_enter(lbr_tree_sys_enter);
	check_trace_callback_type_sys_exit(lbr_tree_sys_exit);
	check_trace_callback_type_sched_process_exit(lbr_tree_exit);
	/* lbr_tree_check() found them. */
	for (i = 0; i < ARRAY_SIZE(lbr_tree_tps); i++) {
		ret = tracepoint_probe_register(lbr_tree_tp[i],
						lbr_tree_tps[i].probe, NULL);
		if (ret)
			goto err;
	}
	return 0;
err:
	lbr_tree_unregister(i);
	return ret;
}

/* Empty the table, no probe running: its references dropped. */
static void lbr_tree_clear(void)
{
	unsigned int i;

	for (i = 0; i < LBR_SNAP_TREE_MAX; i++) {
		struct lbr_tree_slot *s = &lbr_tree[i];
		struct task_struct *p = s->task;

		WRITE_ONCE(s->task, NULL);
		WRITE_ONCE(s->nr, -1);
		if (p && p != LBR_TREE_TOMB)
			put_task_struct(p);
	}
	lbr_tree_tasks = 0;
	atomic_set(&lbr_tree_missed, 0);
}

/* Follow every thread of the process of @pid; -ESRCH if none is taken. */
static int lbr_tree_add_process(struct pid *pid)
{
	struct task_struct *leader, *t;
	int ret = -ESRCH;

	rcu_read_lock();
	leader = pid_task(pid, PIDTYPE_TGID);
	if (leader) {
		for_each_thread(leader, t) {
			if (!lbr_tree_insert(t))
				continue;
			/* Pairs with lbr_tree_exit()'s. */
			smp_mb();
			if (READ_ONCE(t->flags) & PF_EXITING)
				lbr_tree_remove(t);
			else
				ret = 0;
		}
	}
	rcu_read_unlock();
	return ret;
}

/* Under the task filter's lock; the filter reads no tree now. */
static void lbr_tree_stop(void)
{
	/*
	 * No capture still reading a slot's numbers when the table is
	 * emptied and refilled: they read with interrupts off, which
	 * tracepoint_synchronize_unregister() does not wait for from 7.x
	 * (tasks-trace RCU and SRCU only).
	 */
	if (lbr_tree_live) {
		WRITE_ONCE(lbr_tree_live, false);
		synchronize_rcu();
	}
	if (lbr_tree_on) {
		lbr_tree_unregister(ARRAY_SIZE(lbr_tree_tps));
		lbr_tree_on = false;
	}
	if (lbr_tree)
		lbr_tree_clear();
}

/**
 * lbr_tree_check - whether lbr_tree_start() can follow process @tgid
 * @tgid: in the initial pid namespace, as the other filter fields
 *
 * Before the filter changes (lbr_tree_set()), so that a refusal leaves it
 * as it was: a
 * thread that is not exiting, the tracepoints, the table's memory (taken
 * on the first call).
 * Return: 0, -ESRCH, -EOPNOTSUPP or -ENOMEM.
 */
int lbr_tree_check(pid_t tgid)
{
	struct task_struct *leader, *t;
	struct lbr_tree_slot *tab;
	bool alive = false;
	unsigned int i;

	rcu_read_lock();
	leader = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	if (leader)
		for_each_thread(leader, t)
			alive |= !(READ_ONCE(t->flags) & PF_EXITING);
	rcu_read_unlock();
	if (!alive)
		return -ESRCH;
	for_each_kernel_tracepoint(lbr_tree_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(lbr_tree_tps); i++) {
		if (!lbr_tree_tp[i]) {
			pr_warn("tree filter: no tracepoint %s in this kernel\n",
				lbr_tree_tps[i].name);
			return -EOPNOTSUPP;
		}
	}
	if (lbr_tree)
		return 0;
	tab = kvcalloc(LBR_SNAP_TREE_MAX, sizeof(*tab), GFP_KERNEL);
	if (!tab)
		return -ENOMEM;
	for (i = 0; i < LBR_SNAP_TREE_MAX; i++)
		tab[i].nr = -1;
	/* Its slots before it: lookups take it without a lock. */
	smp_store_release(&lbr_tree, tab);
	return 0;
}

/**
 * lbr_tree_set - follow the tree of process @tgid, or stop following
 * @tgid: the root process, or 0 to stop
 *
 * Process context, under the task filter's lock, which publishes a filter
 * that reads the tree only after this; lbr_tree_check() said yes.  The
 * old tree is let go first (its probes stopped, its table emptied).
 * Return: 0, -ESRCH (the process went meanwhile: nothing followed), or
 * the tracepoints' error.
 */
int lbr_tree_set(pid_t tgid)
{
	struct pid *pid;
	int ret;

	lbr_tree_stop();
	if (!tgid || !lbr_tree)
		return 0;
	rcu_read_lock();
	pid = get_pid(find_pid_ns(tgid, &init_pid_ns));
	rcu_read_unlock();
	if (!pid)
		return -ESRCH;
	/* The probes first: a thread created meanwhile is followed. */
	ret = lbr_tree_register();
	if (!ret) {
		lbr_tree_on = true;
		ret = lbr_tree_add_process(pid);
	}
	put_pid(pid);
	if (ret)
		lbr_tree_stop();
	else
		WRITE_ONCE(lbr_tree_live, true);
	return ret;
}

/*
 * Module exit, once no capture can run (lbr_fexit_stop()): the probes
 * gone, the table freed.
 */
void lbr_tree_exit_module(void)
{
	struct lbr_tree_slot *tab = lbr_tree;

	lbr_tree_stop();
	lbr_tree = NULL;
	kvfree(tab);
}
