// SPDX-License-Identifier: GPL-2.0
/*
 * The kretprobe hook: a kretprobe per target whose return handler freezes
 * LBR first and then writes a record.
 */
#include <asm/irqflags.h>
#include <asm/tsc.h>
#include <linux/cpumask.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/random.h>

#include "capture.h"
#include "fexit_slots.h"

/*
 * Where a probed function's RET lands: the kretprobe (rethook) trampoline.
 * By the time the handler runs regs->ip already holds the real return
 * address, and the trampoline's symbol is not exported, so
 * lbr_kretprobe_init() learns it once.
 */
static unsigned long lbr_ret_site __read_mostly;

/*
 * An instance's data: the TSC as its call came in, for the record's
 * duration, and the task it was armed for, mixed with a value drawn at
 * load (@tag).  Written by the entry handler only, which kretprobes get
 * from the first tree filter on: the data of an instance armed before is
 * whatever its memory held (kmalloc()ed on 5.10, where a freed instance
 * of an earlier load may have left a tag under that load's key), and the
 * return handler takes it only if the tag names the task returning under
 * this load, then clears it.
 */
struct lbr_kr_entry {
	u64 tsc;
	unsigned long tag;
};

static unsigned long lbr_kr_tag_key __read_mostly;

static __always_inline unsigned long lbr_kr_tag(void)
{
	return (unsigned long)current ^ lbr_kr_tag_key;
}

/* The TSC @ri's call came in at, 0 if its entry handler did not run. */
static __always_inline u64 lbr_kr_entry_tsc(struct kretprobe_instance *ri)
{
	struct lbr_kr_entry *e = (struct lbr_kr_entry *)ri->data;

	if (e->tag != lbr_kr_tag())
		return 0;
	e->tag = 0;
	return e->tsc;
}

/*
 * The return handler when LBR is on.  The freeze is the first thing it
 * executes: notrace keeps __fentry__ out, and lbr_hw_freeze() is inline
 * RDMSR/AND/WRMSR, so no branch the user wants is overwritten by ours.
 * No sanitizer either: on a KASAN kernel the load of lbr_hw.ctl_msr got
 * an inline shadow check, a test and a conditional jump, before the WRMSR
 * (found by tests/freeze-first on the debug kernel); KMSAN, KCSAN and KCOV
 * would add calls.  (KCOV with compilers that lack the attribute is
 * turned off for this file in Kbuild.)
 *
 * Interrupts go off first, as in the fexit trampolines (PUSHF, CLI: no
 * control transfer), and come back once LBR is unfrozen: an interrupt
 * between the freeze and the unfreeze would find LBR frozen (counted as
 * lbr_off, its record WAS_OFF) or change the control MSR under the
 * read-modify-write of the unfreeze, which would undo it.  The native
 * flag operations, no paravirt call: lbr_hw_detect() gives a Xen PV
 * guest no LBR, so this handler is never attached there.
 */
static int notrace __no_sanitize_address __no_sanitize_memory __no_kcsan
__no_sanitize_coverage
lbr_ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned long flags = native_save_fl();
	struct kretprobe *rp;
	u32 ctl;

	native_irq_disable();
	ctl = lbr_hw_freeze();
	rp = lbr_get_kretprobe(ri);
	if (likely(rp))
		lbr_capture(container_of(rp, struct lbr_target, rp),
			    regs_return_value(regs),
			    lbr_kretprobe_caller(ri, regs), true, ctl,
			    lbr_ret_site, lbr_kr_entry_tsc(ri), false);
	else
		lbr_hw_unfreeze(ctl);
	if (flags & X86_EFLAGS_IF)
		native_irq_enable();
	return 0;
}
NOKPROBE_SYMBOL(lbr_ret_handler);

/*
 * The return handler of the "none" backend: records without branches.
 * Both handlers read the instance's kretprobe again, after the kernel's
 * own check of it: from 5.11 until x86's kretprobes ran on rethook (5.19)
 * unregister_kretprobes() clears it (rph->rp) without waiting for handlers
 * past that check, so it can be NULL here.  That return is the target's
 * last, as it goes: no record.  (5.10 clears ri->rp only under
 * kretprobe_table_lock, which its handlers run under; on rethook it is
 * the rethook's data, which stays: get_kretprobe() in 6.1.)
 */
static int notrace lbr_ret_handler_nolbr(struct kretprobe_instance *ri,
					 struct pt_regs *regs)
{
	struct kretprobe *rp = lbr_get_kretprobe(ri);

	if (likely(rp))
		lbr_capture(container_of(rp, struct lbr_target, rp),
			    regs_return_value(regs),
			    lbr_kretprobe_caller(ri, regs), false, 0, 0,
			    lbr_kr_entry_tsc(ri), true);
	return 0;
}
NOKPROBE_SYMBOL(lbr_ret_handler_nolbr);

/*
 * The entry handler: the call of a task the tree filter leaves out
 * (task_follow.c) is not armed, so its return neither goes through the
 * kretprobe's trampoline nor freezes LBR (no MSR access).  For any other
 * task its call and return are at the function's entry, before the
 * function's own branches, with kprobes' own; it notes when the call came
 * in, as the fexit trampolines do.
 */
static int notrace lbr_ret_entry(struct kretprobe_instance *ri,
				 struct pt_regs *regs)
{
	struct lbr_kr_entry *e = (struct lbr_kr_entry *)ri->data;
	struct kretprobe *rp;

	/* The fexit trampolines' test (fexit_tramp.S), inline. */
	if (likely(this_cpu_read(lbr_fexit_unfollowed) != current)) {
		e->tsc = rdtsc();
		e->tag = lbr_kr_tag();
		return 0;
	}
	rp = lbr_get_kretprobe(ri);
	if (rp)
		lbr_capture_skipped(container_of(rp, struct lbr_target, rp));
	return 1;
}
NOKPROBE_SYMBOL(lbr_ret_entry);

/*
 * Whether kretprobes get the entry handler: from the first tree filter
 * on (task_follow.c), not before, since its indirect call, RDTSC and two
 * stores cost every call some 25 instructions (make bench's kretprobe
 * lines) when no task is left out.  Never taken back: kprobes read
 * rp->entry_handler twice, with no READ_ONCE(), so it may go from NULL
 * to the handler while armed, never back.
 */
static bool lbr_kr_entry_check;

/* Whether kretprobes attached from now on get the entry handler. */
bool lbr_kretprobe_entry_checked(void)
{
	return READ_ONCE(lbr_kr_entry_check);
}

/**
 * lbr_kretprobe_check_entry - @t's kretprobe, and those attached after,
 *	test the task left out at their entry
 * @t: a target, of any hook, or NULL for those attached after only;
 *	under the targets' lock, which lbr_kretprobe_attach() is called
 *	under too
 */
void lbr_kretprobe_check_entry(struct lbr_target *t)
{
	WRITE_ONCE(lbr_kr_entry_check, true);
	if (t && t->hook == LBR_SNAP_HOOK_KRETPROBE && !t->rp.entry_handler)
		WRITE_ONCE(t->rp.entry_handler, lbr_ret_entry);
}

/* Returns the address it will return to: the trampoline once probed. */
static noinline unsigned long lbr_ret_site_probe(void)
{
	return (unsigned long)__builtin_return_address(0);
}

static int lbr_ret_site_nop(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	return 0;
}

/*
 * Probe lbr_ret_site_probe() with a kretprobe and call it: the return
 * address it sees is the one every kretprobe installs.
 */
void lbr_kretprobe_init(void)
{
	struct kretprobe rp = {
		.kp.addr = (kprobe_opcode_t *)lbr_ret_site_probe,
		.handler = lbr_ret_site_nop,
		.maxactive = 1,
	};
	unsigned long site;

	/* Once a load, whatever follows: calls in flight keep their tags. */
	if (!lbr_kr_tag_key)
		lbr_kr_tag_key = get_random_long() | 1;
	if (lbr_ret_site)
		return;
	if (register_kretprobe(&rp)) {
		pr_warn("cannot find the kretprobe trampoline: probe_entries unknown\n");
		return;
	}
	site = lbr_ret_site_probe();
	unregister_kretprobe(&rp);
	if (!within_module(site, THIS_MODULE))
		lbr_ret_site = site;
}

/* Kretprobes of batches: at most lbr_kr_batch_max (batch_kretprobes=). */
static unsigned int lbr_kr_batch_max = 4096;
static atomic_t lbr_kr_batch_nr = ATOMIC_INIT(0);

void lbr_kretprobe_set_max(unsigned int max)
{
	lbr_kr_batch_max = max;
}

unsigned int lbr_kretprobe_max(void)
{
	return lbr_kr_batch_max;
}

/* How many more kretprobes batches may register now. */
unsigned int lbr_kretprobe_room(void)
{
	unsigned int nr = atomic_read(&lbr_kr_batch_nr);

	return nr < lbr_kr_batch_max ? lbr_kr_batch_max - nr : 0;
}

/*
 * Register @t's kretprobe, disarmed until lbr_kretprobe_enable().  A
 * batch's goes at the address its entry gave (t->start), not by name: a
 * static function may share it, and a lookup by name walks kallsyms.
 */
int lbr_kretprobe_attach(struct lbr_target *t)
{
	int ret;

	if (t->batch)
		t->rp.kp.addr = (kprobe_opcode_t *)t->start;
	else
		t->rp.kp.symbol_name = t->name;
	t->rp.kp.flags = KPROBE_FLAG_DISABLED;
	t->rp.handler = lbr_hw.backend == LBR_SNAP_BACKEND_NONE ?
			lbr_ret_handler_nolbr : lbr_ret_handler;
	t->rp.entry_handler = READ_ONCE(lbr_kr_entry_check) ? lbr_ret_entry :
			      NULL;
	/* 16 bytes more an instance, used once a tree filter is set. */
	t->rp.data_size = sizeof(struct lbr_kr_entry);
	/*
	 * A batch's may be thousands: the kernel's default instances each
	 * (max(10, 2 * CPUs) on 6.1 and later, one a CPU on 5.10), where a
	 * target of its own has 64 at least; a return that finds none free
	 * is counted in nmissed.
	 */
	if (t->batch)
		t->rp.maxactive = 0;
	else
		t->rp.maxactive = max_t(int, 64, 4 * num_possible_cpus());

	ret = register_kretprobe(&t->rp);
	if (ret) {
		pr_err("target '%s': kretprobes refuse this function (%d)\n",
		       t->name, ret);
		return ret;
	}
	/*
	 * A batch's only where ftrace has a site: there kprobes count a
	 * probe hit inside another's handler as missed, where an int3 one
	 * hit so (a function of the unwinder the capture calls, which no
	 * list of names covers) is a BUG().  One by one, lbr_func_lookup()
	 * refuses the capture path by name first.
	 */
	if (t->batch && !(t->rp.kp.flags & KPROBE_FLAG_FTRACE)) {
		unregister_kretprobe(&t->rp);
		pr_err("target '%s': not traceable: no ftrace site at its entry, and a batch's kretprobe needs one\n",
		       t->name);
		return -EINVAL;
	}
	if (t->batch)
		atomic_inc(&lbr_kr_batch_nr);
	return 0;
}

/* Arm @t's kretprobe, if it has one.  Return: 0, or -errno. */
int lbr_kretprobe_enable(struct lbr_target *t)
{
	if (t->hook != LBR_SNAP_HOOK_KRETPROBE)
		return 0;
	return enable_kretprobe(&t->rp);
}

/*
 * Unregister @n kretprobe targets and wait for their handlers, in calls
 * of 64: each holds kprobes' mutex through its probes and waits a grace
 * period, so that a batch's thousands block other kprobe users a little
 * at a time.
 */
void lbr_kretprobe_detach(struct lbr_target **ts, unsigned int n)
{
	struct kretprobe *rps[64];
	unsigned int i, j, k, batch;

	for (i = 0; i < n; i += k) {
		k = min_t(unsigned int, n - i, ARRAY_SIZE(rps));
		for (j = 0, batch = 0; j < k; j++) {
			rps[j] = &ts[i + j]->rp;
			batch += ts[i + j]->batch;
		}
		unregister_kretprobes(rps, k);
		atomic_sub(batch, &lbr_kr_batch_nr);
		cond_resched();
	}
	/* Handlers run with preemption off: let the last ones finish. */
	if (n)
		synchronize_rcu();
}

unsigned long lbr_kretprobe_missed(const struct lbr_target *t)
{
	if (t->hook != LBR_SNAP_HOOK_KRETPROBE)
		return 0;
	return t->rp.nmissed + t->rp.kp.nmissed;
}
