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
 * - task_newtask, in the parent's context before the child can run:
 *   a child of a followed task takes a free slot (cmpxchg);
 * - sys_enter and sys_exit, in the task's own context: a followed task
 *   numbers its system call and says when it began, and that it is out;
 * - sched_process_exit, in the exiting task's context: its slot becomes a
 *   tombstone, which the next insertion may take.
 * Only a task writes its own slot's numbers, so they need no atomics; the
 * capture path reads them (lbr_tree_syscall()) only in the same task's
 * context, never an interrupt's.  The task pointer of a slot is written
 * by cmpxchg and read with READ_ONCE(), from any context, NMI included:
 * no lock, no RCU on the reader's side.
 *
 * A slot holds a reference on its task, so a pointer in the table is never
 * that of a task freed and its memory given to another: the exit probe
 * takes the task out and drops it; the table is emptied, and the rest
 * dropped, once no probe can run any more (the filter changed, or the
 * module unloads: tracepoint_synchronize_unregister()).  A thread in the
 * middle of its exit when the filter is set is taken out again (PF_EXITING,
 * checked after the insertion, pairs with the exit path setting it before
 * the exit probe runs).  A slot out of use says "in no system call" (nr
 * -1), so a task that takes it reads nothing of the last one.
 *
 * What it costs the tasks not followed: with the filter set, every
 * system call of every task goes through the kernel's syscall tracepoints
 * (SYSCALL_WORK_SYSCALL_TRACEPOINT) and a lookup that misses here, as
 * with any syscall tracer; nothing without it.
 */
#include <linux/atomic.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/pid_namespace.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>

#include "lbr_snap.h"

#define LBR_TREE_BITS		12
#define LBR_TREE_PROBE		32
#define LBR_TREE_TOMB		((struct task_struct *)1UL)

static_assert(LBR_SNAP_TREE_MAX == 1 << LBR_TREE_BITS);

struct lbr_tree_slot {
	struct task_struct *task;	/* NULL: never used; LBR_TREE_TOMB */
	u32 seq;			/* system calls begun */
	s32 nr;				/* the one it is in, or -1 */
	u64 begun_ns;
};

static struct lbr_tree_slot *lbr_tree;	/* LBR_SNAP_TREE_MAX slots */
static bool lbr_tree_on;		/* probes registered */
static atomic_t lbr_tree_tasks = ATOMIC_INIT(0);
static atomic_t lbr_tree_missed = ATOMIC_INIT(0);
static DEFINE_MUTEX(lbr_tree_lock);

static __always_inline unsigned int lbr_tree_hash(const struct task_struct *t)
{
	return hash_ptr(t, LBR_TREE_BITS);
}

/* The slot of @t, or NULL: any context. */
static __always_inline struct lbr_tree_slot *
lbr_tree_find(const struct task_struct *t)
{
	struct lbr_tree_slot *tab = READ_ONCE(lbr_tree);
	unsigned int i, h;

	if (!tab)
		return NULL;
	h = lbr_tree_hash(t);
	for (i = 0; i < LBR_TREE_PROBE; i++) {
		struct lbr_tree_slot *s = &tab[(h + i) & (LBR_SNAP_TREE_MAX - 1)];
		struct task_struct *p = READ_ONCE(s->task);

		if (p == t)
			return s;
		if (!p)
			return NULL;
	}
	return NULL;
}

/* Take a slot for @t; false when the probe window is full. */
static bool lbr_tree_insert(struct task_struct *t)
{
	unsigned int i, h = lbr_tree_hash(t);

	for (i = 0; i < LBR_TREE_PROBE; i++) {
		struct lbr_tree_slot *s = &lbr_tree[(h + i) & (LBR_SNAP_TREE_MAX - 1)];
		struct task_struct *p = READ_ONCE(s->task);

		if (p && p != LBR_TREE_TOMB)
			continue;
		get_task_struct(t);
		if (cmpxchg(&s->task, p, t) == p) {
			/* nr is -1 already: in no system call yet. */
			s->seq = 0;
			atomic_inc(&lbr_tree_tasks);
			return true;
		}
		put_task_struct(t);
	}
	atomic_inc(&lbr_tree_missed);
	return false;
}

/* Take @t out; its own context, or the filter's change. */
static void lbr_tree_remove(struct task_struct *t)
{
	struct lbr_tree_slot *s = lbr_tree_find(t);

	if (!s)
		return;
	WRITE_ONCE(s->nr, -1);
	if (cmpxchg(&s->task, t, LBR_TREE_TOMB) != t)
		return;
	atomic_dec(&lbr_tree_tasks);
	/* Not the last reference: @t runs, or the caller holds one. */
	put_task_struct(t);
}

static void notrace lbr_tree_newtask(void *data, struct task_struct *child,
				     unsigned long clone_flags)
{
	if (lbr_tree_find(current))
		lbr_tree_insert(child);
}

static void notrace lbr_tree_sys_enter(void *data, struct pt_regs *regs,
				       long id)
{
	struct lbr_tree_slot *s = lbr_tree_find(current);

	if (!s)
		return;
	/* Out of the window in which the capture path reads it. */
	WRITE_ONCE(s->nr, -1);
	barrier();
	s->begun_ns = ktime_get_mono_fast_ns();
	s->seq++;
	barrier();
	WRITE_ONCE(s->nr, id);
}

static void notrace lbr_tree_sys_exit(void *data, struct pt_regs *regs,
				      long ret)
{
	struct lbr_tree_slot *s = lbr_tree_find(current);

	if (s)
		WRITE_ONCE(s->nr, -1);
}

static void notrace lbr_tree_exit(void *data, struct task_struct *p)
{
	lbr_tree_remove(current);
}

/**
 * lbr_tree_follows - whether the tree filter follows the current task
 *
 * Any context, NMI included.
 */
notrace bool lbr_tree_follows(void)
{
	return lbr_tree_find(current);
}
NOKPROBE_SYMBOL(lbr_tree_follows);

/**
 * lbr_tree_syscall - the system call the current task is in
 * @seq: its number among the task's
 * @nr: the system call's number
 * @begun_ns: when it began, CLOCK_MONOTONIC
 *
 * Capture path, interrupts off.  Only in task context: an interrupt's
 * return is not the system call's, even where it came in one.
 * Return: false when the task is not followed, or not in a system call.
 */
notrace bool lbr_tree_syscall(u32 *seq, s32 *nr, u64 *begun_ns)
{
	struct lbr_tree_slot *s;

	if (!in_task())
		return false;
	s = lbr_tree_find(current);
	if (!s)
		return false;
	*nr = READ_ONCE(s->nr);
	if (*nr < 0)
		return false;
	*seq = s->seq;
	*begun_ns = s->begun_ns;
	return true;
}
NOKPROBE_SYMBOL(lbr_tree_syscall);

void lbr_tree_counts(u32 *tasks, u32 *missed)
{
	*tasks = max(atomic_read(&lbr_tree_tasks), 0);
	*missed = atomic_read(&lbr_tree_missed);
}

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
		tracepoint_probe_unregister(lbr_tree_tp[n],
					    lbr_tree_tps[n].probe, NULL);
	/* No probe runs after this: the table can be emptied. */
	tracepoint_synchronize_unregister();
}

static int lbr_tree_register(void)
{
	unsigned int i;
	int ret;

	for_each_kernel_tracepoint(lbr_tree_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(lbr_tree_tps); i++) {
		if (!lbr_tree_tp[i]) {
			pr_warn("tree filter: no tracepoint %s in this kernel\n",
				lbr_tree_tps[i].name);
			ret = -EOPNOTSUPP;
			goto err;
		}
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
		s->nr = -1;
		s->seq = 0;
		if (p && p != LBR_TREE_TOMB)
			put_task_struct(p);
	}
	atomic_set(&lbr_tree_tasks, 0);
	atomic_set(&lbr_tree_missed, 0);
}

/* Follow every thread of @tgid; -ESRCH if there is no such process. */
static int lbr_tree_add_process(pid_t tgid)
{
	struct task_struct *leader, *t;
	int ret = -ESRCH;

	rcu_read_lock();
	leader = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	if (leader) {
		ret = 0;
		for_each_thread(leader, t) {
			if (!lbr_tree_insert(t))
				continue;
			/* Pairs with the exit path's PF_EXITING. */
			smp_mb();
			if (READ_ONCE(t->flags) & PF_EXITING)
				lbr_tree_remove(t);
		}
	}
	rcu_read_unlock();
	return ret;
}

/**
 * lbr_tree_set - follow the tree of process @tgid, or stop following
 * @tgid: the root process, or 0 to stop
 *
 * Process context; the task filter's caller serialises it with the rest
 * of the filter.  The table is emptied first, the probes stopped before.
 * Return: 0, -ESRCH, -ENOMEM, or the tracepoint's error.
 */
int lbr_tree_set(pid_t tgid)
{
	int ret = 0;

	mutex_lock(&lbr_tree_lock);
	if (lbr_tree_on) {
		lbr_tree_unregister(ARRAY_SIZE(lbr_tree_tps));
		lbr_tree_on = false;
	}
	if (lbr_tree)
		lbr_tree_clear();
	if (!tgid)
		goto out;
	if (!lbr_tree) {
		struct lbr_tree_slot *tab;

		unsigned int i;

		tab = kvcalloc(LBR_SNAP_TREE_MAX, sizeof(*tab), GFP_KERNEL);
		if (!tab) {
			ret = -ENOMEM;
			goto out;
		}
		for (i = 0; i < LBR_SNAP_TREE_MAX; i++)
			tab[i].nr = -1;
		WRITE_ONCE(lbr_tree, tab);
	}
	/* The probes first: a thread created meanwhile is followed. */
	ret = lbr_tree_register();
	if (ret)
		goto out;
	lbr_tree_on = true;
	ret = lbr_tree_add_process(tgid);
	if (ret) {
		lbr_tree_unregister(ARRAY_SIZE(lbr_tree_tps));
		lbr_tree_on = false;
		lbr_tree_clear();
	}
out:
	mutex_unlock(&lbr_tree_lock);
	return ret;
}

/* Module exit: the probes gone, the table freed. */
void lbr_tree_exit_module(void)
{
	struct lbr_tree_slot *tab;

	lbr_tree_set(0);
	tab = lbr_tree;
	WRITE_ONCE(lbr_tree, NULL);
	kvfree(tab);
}
