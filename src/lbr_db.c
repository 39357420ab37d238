// SPDX-License-Identifier: GPL-2.0
/*
 * LBR back on after a debug exception (mode=raw).
 *
 * Delivering #DB turns LBR off: legacy LBR's IA32_DEBUGCTL.LBR ("the
 * processor automatically clears the LBR flag" on a debug exception, SDM
 * vol. 3B, "Monitoring Branches, Exceptions, and Interrupts") and Arch
 * LBR's IA32_LBR_CTL.LBREn ("on a debug breakpoint event (#DB),
 * IA32_LBR_CTL.LBREn is cleared", SDM vol. 3B, Architectural LBR).
 * Linux's #DB handler (exc_debug_kernel(), exc_debug_user() in
 * arch/x86/kernel/traps.c) sets neither again, and perf does so only at
 * its next PMU enable, which mode=raw does not have.  Without this stage a
 * single ptrace step, a hardware watchpoint or a uprobe's out-of-line step
 * would leave that CPU without LBR until unload, every record of it
 * WAS_OFF.
 *
 * notify_debug() runs the die chain with DIE_DEBUG for the #DBs it
 * handles.  The notifier only queues an irq_work on its CPU, whose callback
 * puts the enable bit back (lbr_db_start()'s @rearm): a self-IPI per #DB.
 * Not in the notifier: a kernel #DB may be taken inside a hook's frozen
 * window (a hardware watchpoint on data the hook touches), where the
 * enable bit is clear on purpose; both hooks keep interrupts off over that
 * window, and the work runs in hard interrupt context (on PREEMPT_RT too),
 * so after it, never inside.  A user #DB's work runs as soon as
 * exc_debug_user() turns interrupts on, before any hook of that CPU can
 * run; a kernel #DB's, once the interrupted code turns them on.  What
 * returns in between finds LBR off and says so (lbr_off, WAS_OFF).
 *
 * Not every #DB reaches the chain.  For those that do not, a hook that
 * finds LBR off queues the same work (lbr_db_check_soon()): the first
 * return after one that freezes is counted and recorded WAS_OFF, the next
 * ones find LBR on.  On fexit only the returns a target records freeze
 * (a success under capture=errors leaves the trampoline first, with no
 * MSR access): there it is the first error after such a #DB that comes
 * out WAS_OFF.  They are:
 * - the chain stops at the first notifier that returns NOTIFY_STOP.  Ours
 *   runs before uprobes' (INT_MAX - 1) and after the hardware breakpoint
 *   layer's (INT_MAX, registered at boot), which stops it for a #DB caused
 *   only by perf breakpoint events the CPL excludes (a ptrace watchpoint
 *   the kernel hits, copying to the watched buffer) or that are not
 *   ptrace's (perf record -e mem:ADDR); ptrace's watchpoints the task hits
 *   and single steps reach it;
 * - exc_debug_kernel() returns before the chain for a step of SYSENTER
 *   with TF set (a debugger stepping a 32-bit task into the vDSO) and for
 *   INT1 in the kernel, and, on kernels whose kprobes still single-step
 *   with TF, for a kprobe's step.
 */
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/notifier.h>
#include <linux/percpu.h>
#include <linux/smp.h>

#include "compat.h"
#include "lbr_snap.h"

static DEFINE_PER_CPU(struct irq_work, lbr_db_work);
/* jiffies of this CPU's last lbr_db_check_soon() queueing. */
static DEFINE_PER_CPU(unsigned long, lbr_db_checked);
static void (*lbr_db_rearm)(void);
static bool lbr_db_on;

static void lbr_db_work_fn(struct irq_work *work)
{
	lbr_db_rearm();
}

/* From the #DB handler: NMI-like for a kernel #DB, interrupts off. */
static int notrace lbr_db_notify(struct notifier_block *nb, unsigned long val,
				 void *data)
{
	/* Not on a CPU lbr_snap holds nothing of (offline, going, coming). */
	if (val == DIE_DEBUG && __this_cpu_read(lbr_cpu_depth))
		irq_work_queue(this_cpu_ptr(&lbr_db_work));
	return NOTIFY_DONE;
}
NOKPROBE_SYMBOL(lbr_db_notify);

static struct notifier_block lbr_db_nb = {
	.notifier_call = lbr_db_notify,
	.priority = INT_MAX,
};

/**
 * lbr_db_check_soon - a hook found LBR's enable bit clear on this CPU
 *
 * From any context, NMI included; after lbr_db_stop() (every hook is gone
 * by then) or where nothing is watched (mode=perf, AMD), nothing.  The
 * re-arm tells a #DB's clear from another writer's as after a #DB.  At
 * most once a jiffy per CPU: while another writer keeps LBR off the
 * re-arm refuses, and every return there would otherwise cost a
 * self-IPI and an RDMSR.
 */
void notrace lbr_db_check_soon(void)
{
	unsigned long now = jiffies;

	if (!READ_ONCE(lbr_db_on) || __this_cpu_read(lbr_db_checked) == now)
		return;
	__this_cpu_write(lbr_db_checked, now);
	irq_work_queue(this_cpu_ptr(&lbr_db_work));
}
NOKPROBE_SYMBOL(lbr_db_check_soon);

/**
 * lbr_db_start - call @rearm on a CPU after each debug exception there
 * @rearm: puts this CPU's LBR enable bit back if a #DB cleared it; called
 *	in hard interrupt context (an irq_work)
 *
 * Return: 0, or the notifier chain's error.
 */
int lbr_db_start(void (*rearm)(void))
{
	unsigned int cpu;
	int ret;

	lbr_db_rearm = rearm;
	for_each_possible_cpu(cpu)
		lbr_init_irq_work_hard(per_cpu_ptr(&lbr_db_work, cpu),
				       lbr_db_work_fn);
	ret = register_die_notifier(&lbr_db_nb);
	WRITE_ONCE(lbr_db_on, !ret);
	return ret;
}

/* No @rearm call runs or is pending once this returns. */
void lbr_db_stop(void)
{
	unsigned int cpu;

	if (!lbr_db_on)
		return;
	/* Waits for the notifiers running (synchronize_rcu()). */
	unregister_die_notifier(&lbr_db_nb);
	WRITE_ONCE(lbr_db_on, false);
	for_each_possible_cpu(cpu)
		irq_work_sync(per_cpu_ptr(&lbr_db_work, cpu));
}
