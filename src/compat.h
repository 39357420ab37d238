/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences lbr_snap builds across (5.10 to 7.3).
 *
 * Every entry names the kernel where the API changed.  Keep version checks
 * here and nowhere else; the rest of the module uses the lbr_* names below.
 */
#ifndef LBR_SNAP_COMPAT_H
#define LBR_SNAP_COMPAT_H

#include <linux/version.h>

#include <asm/asm.h>

/*
 * Exception table entries for RDMSR and WRMSR written in assembly (the
 * fexit trampoline, lbr_rdmsr_to()), the same as __rdmsr() and
 * native_write_msr() emit: warn once and go on, with 0 read.  Typed entries (EX_TYPE_RDMSR/WRMSR) since 5.16 (commit
 * "x86/extable: Provide EX_TYPE_DEFAULT_MCE_SAFE and EX_TYPE_FAULT_MCE_SAFE"
 * series; checked: 6.1.192, 6.12.117, 7.2.13); 5.10.223 has handler
 * functions, ex_handler_rdmsr_unsafe and ex_handler_wrmsr_unsafe.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 16, 0)
#include <asm/extable_fixup_types.h>
#define LBR_ASM_EXTABLE_RDMSR(from, to) _ASM_EXTABLE_TYPE(from, to, EX_TYPE_RDMSR)
#define LBR_ASM_EXTABLE_WRMSR(from, to) _ASM_EXTABLE_TYPE(from, to, EX_TYPE_WRMSR)
#else
#define LBR_ASM_EXTABLE_RDMSR(from, to) \
	_ASM_EXTABLE_HANDLE(from, to, ex_handler_rdmsr_unsafe)
#define LBR_ASM_EXTABLE_WRMSR(from, to) \
	_ASM_EXTABLE_HANDLE(from, to, ex_handler_wrmsr_unsafe)
#endif

/*
 * The current task's per-CPU word, for assembly: current_task in 5.10.262,
 * 6.1.192 and 7.2.13, the first word of struct pcpu_hot in 6.12.118 (from
 * 6.2 until the hot per-CPU section took its words apart).  Probed in
 * Kbuild from arch/x86/include/asm/current.h (LBR_CURRENT_IN_PCPU_HOT);
 * the offset is checked below.
 */
#ifdef LBR_CURRENT_IN_PCPU_HOT
#define LBR_CURRENT_TASK	pcpu_hot
#else
#define LBR_CURRENT_TASK	current_task
#endif

#ifdef __ASSEMBLY__
/* --- for fexit_tramp.S --- */

/*
 * Call depth tracking (the retbleed mitigation for Skylake) came in 6.2:
 * code reached by a CALL that is not the compiler's accounts the call with
 * CALL_DEPTH_ACCOUNT (an assembler macro in 6.12.117 and 7.2.13).  Before
 * 6.2 there is nothing to account.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
.macro CALL_DEPTH_ACCOUNT
.endm
#endif

/* ENDBR (<asm/ibt.h>, through <linux/linkage.h>) came with IBT in 5.18. */
#ifndef ENDBR
#define ENDBR
#endif

#else /* !__ASSEMBLY__ */
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/stddef.h>
#include <asm/current.h>
#include <asm/msr.h>

/* LBR_CURRENT_TASK above: the word at pcpu_hot's start is current_task. */
#ifdef LBR_CURRENT_IN_PCPU_HOT
static_assert(offsetof(struct pcpu_hot, current_task) == 0);
#endif

/*
 * Per-function sanitizer opt-outs for the code before the freeze.
 * __no_sanitize_coverage came in 5.13 (commit "kcov: add
 * __no_sanitize_coverage to fix noinstr for all architectures") and
 * __no_sanitize_memory with KMSAN in 6.1; Debian's 5.10.262 headers have
 * both as backports (checked 5.10.262, 6.1.192, 6.12.118, 7.2.13).  Keyed
 * on what the tree declares: where one is absent, so is its sanitizer's
 * per-function opt-out, and it is empty.
 */
#ifndef __no_sanitize_coverage
#define __no_sanitize_coverage
#endif
#ifndef __no_sanitize_memory
#define __no_sanitize_memory
#endif

/*
 * Raw MSR access for the capture path: always inline, no tracepoint and no
 * paravirt call, so no branch precedes the freeze.  A fault is fixed up by
 * the exception table (EX_TYPE_RDMSR / EX_TYPE_WRMSR) and warns once.
 * __rdmsr(msr) exists since 5.9 (commit "x86/msr: Add __rdmsr()/__wrmsr() as
 * noinstr primitives") and still has that signature in 7.3 (checked 5.10.223,
 * 6.1.192, 6.12.117, 7.2.13, 7.3.4).
 * __wrmsr(msr, lo, hi) is gone by 7.2: there the raw write is
 * __wrmsrq(msr, val), wrapped by the macro native_wrmsrq(msr, val) (checked
 * 7.2.13, 7.3.4; upstream renamed native_wrmsrl() to native_wrmsrq() in 6.16,
 * and no Debian headers between 6.12 and 7.2 exist to check).  Keyed on the
 * feature: where native_wrmsrq is a macro it is the raw primitive; before it
 * (5.10.223, 6.1.192, 6.12.117 checked) __wrmsr() is.
 */
static __always_inline u64 lbr_rdmsr(u32 msr)
{
	return __rdmsr(msr);
}

/*
 * RDMSR into the u64 at @p, its halves stored as EDX:EAX hold them: the
 * shift and OR that make __rdmsr()'s value are two of the five
 * instructions per MSR of lbr_hw_read_raw()'s copy.  The same
 * exception-table entry as __rdmsr() (arch/x86/include/asm/msr.h): a
 * fault gives 0, as there.  x86 is little-endian: the low half first.
 */
static __always_inline void lbr_rdmsr_to(u32 msr, u64 *p)
{
	u32 lo, hi;

	asm volatile("1: rdmsr\n"
		     "2:\n"
		     LBR_ASM_EXTABLE_RDMSR(1b, 2b)
		     : "=a" (lo), "=d" (hi) : "c" (msr));
	((u32 *)p)[0] = lo;
	((u32 *)p)[1] = hi;
}

/*
 * RDMSR and WRMSR by halves, as EDX:EAX hold them: the freeze changes one
 * bit of the low half and leaves the high half as it came, with no shift
 * or OR before its WRMSR.  Raw, with the exception-table entries of
 * __rdmsr() and __wrmsr() (arch/x86/include/asm/msr.h): no tracepoint, no
 * paravirt call.
 */
static __always_inline void lbr_rdmsr_lohi(u32 msr, u32 *lo, u32 *hi)
{
	asm volatile("1: rdmsr\n"
		     "2:\n"
		     LBR_ASM_EXTABLE_RDMSR(1b, 2b)
		     : "=a" (*lo), "=d" (*hi) : "c" (msr));
}

static __always_inline void lbr_wrmsr_lohi(u32 msr, u32 lo, u32 hi)
{
	asm volatile("1: wrmsr\n"
		     "2:\n"
		     LBR_ASM_EXTABLE_WRMSR(1b, 2b)
		     : : "c" (msr), "a" (lo), "d" (hi) : "memory");
}

static __always_inline void lbr_wrmsr(u32 msr, u64 val)
{
#ifdef native_wrmsrq
	native_wrmsrq(msr, val);
#else
	__wrmsr(msr, (u32)val, (u32)(val >> 32));
#endif
}

/*
 * rdmsrl_safe()/wrmsrl_safe() became rdmsrq_safe()/wrmsrq_safe() in 6.16
 * (checked: 6.12.117 has only the l names, 7.2.13 and 7.3.4 only the q names).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define lbr_rdmsr_safe(msr, p)	rdmsrq_safe(msr, p)
#define lbr_wrmsr_safe(msr, v)	wrmsrq_safe(msr, v)
#else
#define lbr_rdmsr_safe(msr, p)	rdmsrl_safe(msr, p)
#define lbr_wrmsr_safe(msr, v)	wrmsrl_safe(msr, v)
#endif

/*
 * cpuid_eax() and friends: <asm/processor.h> has them in 5.10.223 and
 * 6.1.192, and includes <asm/cpuid.h> with them in 6.12.117; in 7.2.13 they
 * are in <asm/cpuid/api.h>, which <asm/processor.h> no longer includes (all
 * checked; 7.3.4 as 7.2.13).  Keyed on the header's presence.
 */
#if __has_include("asm/cpuid/api.h")
#include <asm/cpuid/api.h>
#endif

/*
 * kretprobe_instance lost ->rp in 5.11 (get_kretprobe()) and ->ret_addr when
 * kretprobes moved onto rethook in 5.18 (get_kretprobe_retaddr()).  Checked:
 * 5.10.223 has ->rp and ->ret_addr and neither helper; 6.1.192, 6.12.117,
 * 7.2.13 and 7.3.4 have both helpers.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 18, 0)
#define lbr_kretprobe_retaddr(ri)	get_kretprobe_retaddr(ri)
#else
#define lbr_kretprobe_retaddr(ri)	((unsigned long)(ri)->ret_addr)
#endif

/*
 * Where the probed function returned to, as the kretprobe handler sees
 * it.  With rethook (5.18 on) the node's saved address is another
 * rethook's trampoline when two users hook the function, and
 * rethook_trampoline_handler() (kernel/trace/rethook.c) sets regs->ip to
 * the real one before any handler runs; before, ri->ret_addr is it
 * (__kretprobe_trampoline_handler() sets it to the corrected address
 * before the handler, 5.10 included).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 18, 0)
#define lbr_kretprobe_caller(ri, regs)	instruction_pointer(regs)
#else
#define lbr_kretprobe_caller(ri, regs)	lbr_kretprobe_retaddr(ri)
#endif

/*
 * Whether the unwinder goes through kretprobe's trampoline back to the
 * probed function's caller: unwind_recover_ret_addr()
 * (arch/x86/include/asm/unwind.h) does from 5.15 on, by
 * unwind_recover_kretprobe() and, since kretprobes moved onto rethook in
 * 5.18, unwind_recover_rethook().  5.10.223 has neither: a kretprobe
 * record there gets no call stack (LBR_SNAP_REC_NO_STACK), without an
 * unwind that would only end in the trampoline.
 */
#define LBR_UNWINDS_KRETPROBE	\
	(LINUX_VERSION_CODE >= KERNEL_VERSION(5, 15, 0))

/*
 * stack_trace_save() is built with CONFIG_STACKTRACE only, which tracing
 * selects and kprobes do not: without it there are no call stacks
 * (lbr_stack_set_depth() says so and keeps none).
 */
#ifdef CONFIG_STACKTRACE
#define LBR_HAVE_STACKTRACE	1
#define lbr_stack_trace_save(store, size)	stack_trace_save(store, size, 0)
#else
#define LBR_HAVE_STACKTRACE	0
#define lbr_stack_trace_save(store, size)	0u
#endif
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
#define lbr_get_kretprobe(ri)		((ri)->rp)
#else
#define lbr_get_kretprobe(ri)		get_kretprobe(ri)
#endif

/*
 * x86_perf_get_lbr() is EXPORT_SYMBOL_GPL in 5.10.223, 6.1.192 and 6.12.117
 * (Module.symvers checked) and exported to KVM only ("module:kvm,kvm-amd,
 * kvm-intel") in 7.2.13 and 7.3.4 (checked), where modpost refuses a module
 * using it.
 * No Debian headers between 6.12 and 7.2 exist to pin the release, so 6.13 is
 * the first kernel without it here; it is only a cross-check.  It returns int
 * in 5.10.223 and void in 6.1.192 on (checked); the result is not used.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#define lbr_x86_perf_get_lbr(lbr)	x86_perf_get_lbr(lbr)
#else
/* nr == 0 means "perf has no LBR": nothing to cross-check against. */
#define lbr_x86_perf_get_lbr(lbr)	memset(lbr, 0, sizeof(*(lbr)))
#endif

/*
 * ftrace direct calls (fexit_hook.c).  The old register_ftrace_direct()
 * takes the fentry address and the trampoline; commits "ftrace: Remove the
 * legacy _ftrace_direct API" and "ftrace: Rename _ftrace_direct_multi APIs
 * to _ftrace_direct APIs" (one series, in 6.5, not 6.6 as a version check
 * here once assumed) make it take an ftrace_ops whose filter names the
 * function, freed by unregister_ftrace_direct(..., true).  Which one the
 * target tree has is probed in Kbuild from its include/linux/ftrace.h
 * (LBR_DIRECT_OPS), not guessed from its version.  Checked: 5.10.262 and
 * 6.1.192 have (ip, addr); 6.12.118 and 7.2.13 have (ops, addr); make
 * matrix prints which one each build used.  Kernels without
 * CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS have no fexit hook at all.
 */
struct lbr_direct {
#if defined(LBR_DIRECT_OPS) || defined(LBR_DIRECT_MULTI)
	struct ftrace_ops ops;
#endif
	unsigned long ip;
	unsigned long tramp;
	const unsigned long *ips;	/* or these @nr, all to @tramp */
	unsigned int nr;
};

/*
 * Many functions to one trampoline: one ftrace_ops whose filter names
 * them all, set in one call (ftrace_set_filter_ips(), 5.18), so that ftrace
 * patches their sites in one pass and a detach costs one ops' teardown.
 * The ops API is register_ftrace_direct() from 6.5 (LBR_DIRECT_OPS),
 * register_ftrace_direct_multi() from 5.16 to 6.4 (LBR_DIRECT_MULTI, probed
 * with ftrace_set_filter_ips() in Kbuild).  Before, there is only the
 * per-function register_ftrace_direct(), and its unregister frees a
 * function's entry only with the trampoline's last function (checked in
 * 6.1.192, whose per-function API is 5.10's): a trampoline shared by n
 * functions would leak n - 1 entries at each detach.  There a trampoline takes one function
 * (LBR_DIRECT_ONE_EACH), and a batch as many functions as there are free
 * trampolines.
 */
#if !defined(LBR_DIRECT_OPS) && !defined(LBR_DIRECT_MULTI)
#define LBR_DIRECT_ONE_EACH	1
#else
#define LBR_DIRECT_ONE_EACH	0
#endif
/*
 * register_ftrace_direct_multi() (5.16 to 6.4) grows ftrace's table of
 * direct calls entry by entry and leaks the table it replaces when it
 * grows it twice in one call (checked in 6.1.192; 6.5's rewrite sizes it
 * once).  The table has at most 4096 buckets (FTRACE_HASH_MAX_BITS), and
 * past twice that many entries (LBR_DIRECT_TABLE_MAX) each one added
 * grows it anew, so that a call of many leaks a table per function.
 * fexit_hook.c sizes its groups so that a call grows it once at most, and
 * lbr_snap_fexit keeps the direct calls it holds below that, less a margin
 * (its direct_margin parameter) for other users of direct calls (BPF
 * trampolines), which it cannot count.
 */
#if defined(LBR_DIRECT_MULTI) && !defined(LBR_DIRECT_OPS)
#define LBR_DIRECT_GROWS_EACH	1
#else
#define LBR_DIRECT_GROWS_EACH	0
#endif
#define LBR_DIRECT_TABLE_MAX	(2 * 4096)

#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
#define LBR_HAVE_DIRECT_CALLS	1
#if defined(LBR_DIRECT_OPS) || defined(LBR_DIRECT_MULTI)
#ifdef LBR_DIRECT_OPS
#define lbr_register_direct_ops(ops, tramp) register_ftrace_direct(ops, tramp)
#define lbr_unregister_direct_ops(ops, tramp)				\
	unregister_ftrace_direct(ops, tramp, true)
#else
#define lbr_register_direct_ops(ops, tramp)				\
	register_ftrace_direct_multi(ops, tramp)
static inline int lbr_unregister_direct_ops(struct ftrace_ops *ops,
					    unsigned long tramp)
{
	int ret = unregister_ftrace_direct_multi(ops, tramp);

	if (!ret)
		ftrace_free_filter(ops);
	return ret;
}
#endif

static inline int lbr_direct_attach(struct lbr_direct *d)
{
	int ret;

#ifndef LBR_DIRECT_OPS
	/* One function: the API it has always had. */
	if (!d->nr)
		return register_ftrace_direct(d->ip, d->tramp);
#endif
	memset(&d->ops, 0, sizeof(d->ops));
	if (d->nr)
		ret = ftrace_set_filter_ips(&d->ops, (unsigned long *)d->ips,
					    d->nr, 0, 0);
	else
		ret = ftrace_set_filter_ip(&d->ops, d->ip, 0, 0);
	if (ret)
		goto out;
	ret = lbr_register_direct_ops(&d->ops, d->tramp);
out:
	if (ret)
		ftrace_free_filter(&d->ops);
	return ret;
}

static inline int lbr_direct_detach(struct lbr_direct *d)
{
#ifndef LBR_DIRECT_OPS
	if (!d->nr)
		return unregister_ftrace_direct(d->ip, d->tramp);
#endif
	return lbr_unregister_direct_ops(&d->ops, d->tramp);
}
#else
/* One function a trampoline: @nr is 0 (LBR_DIRECT_ONE_EACH). */
static inline int lbr_direct_attach(struct lbr_direct *d)
{
	if (WARN_ON_ONCE(d->nr))
		return -EOPNOTSUPP;
	return register_ftrace_direct(d->ip, d->tramp);
}

static inline int lbr_direct_detach(struct lbr_direct *d)
{
	return unregister_ftrace_direct(d->ip, d->tramp);
}
#endif
#else
#define LBR_HAVE_DIRECT_CALLS	0
static inline int lbr_direct_attach(struct lbr_direct *d)
{
	return -EOPNOTSUPP;
}

static inline int lbr_direct_detach(struct lbr_direct *d)
{
	return -EOPNOTSUPP;
}
#endif

/*
 * RCU Tasks Rude: waits for every CPU to schedule, which covers code that
 * runs where RCU is not watching and the idle tasks that RCU Tasks skips.
 * ftrace pairs it with synchronize_rcu_tasks() when it frees a trampoline
 * (ftrace_shutdown() in kernel/trace/ftrace.c).  It exists where
 * CONFIG_TASKS_RUDE_RCU is set (5.10.262, 6.1.192, 6.12.118, 7.2.13 all
 * declare it in <linux/rcupdate.h> under that option).  On architectures
 * with noinstr (x86 among them) it returns at once from 6.13 on
 * (kernel/rcu/tasks.h): RCU Tasks itself covers the idle tasks and the
 * code where RCU is not watching there.  Without it, a plain RCU grace
 * period is the most the kernel offers.
 */
#include <linux/rcupdate.h>
#ifdef CONFIG_TASKS_RUDE_RCU
#define lbr_synchronize_rcu_tasks_rude()	synchronize_rcu_tasks_rude()
#else
#define lbr_synchronize_rcu_tasks_rude()	synchronize_rcu()
#endif

/*
 * A probe of the sched_process_exit tracepoint (fexit_slots.c) takes the
 * tracepoint's arguments: (task) in 5.10.262, 6.1.192 and 6.12.118, (task,
 * group_dead) in 7.2.13.  Probed in Kbuild from include/trace/events/sched.h
 * (LBR_TP_EXIT_GROUP_DEAD).
 */
#ifdef LBR_TP_EXIT_GROUP_DEAD
#define LBR_TP_EXIT_ARGS	struct task_struct *p, bool group_dead
#else
#define LBR_TP_EXIT_ARGS	struct task_struct *p
#endif

/*
 * A probe of the task_newtask tracepoint (task_tree.c): the clone flags
 * are an unsigned long in 5.10.262, 6.1.192 and 6.12.118, a u64 in 7.2.13
 * (include/trace/events/task.h; probed in Kbuild, LBR_TP_NEWTASK_U64).
 */
#ifdef LBR_TP_NEWTASK_U64
#define LBR_TP_NEWTASK_ARGS	struct task_struct *task, u64 clone_flags
#else
#define LBR_TP_NEWTASK_ARGS	struct task_struct *task, unsigned long clone_flags
#endif

/*
 * syscore operations (lbr_msr.c re-arms LBR on the boot CPU at resume):
 * callbacks without arguments in a struct syscore_ops that holds the list
 * node, registered with register_syscore_ops(), in 5.10.262 and 6.1.192;
 * callbacks taking a data pointer, the node and the data in a struct
 * syscore registered with register_syscore(), in 6.12.118 (Debian's 6.12
 * has it) and 7.2.13 (all checked in include/linux/syscore_ops.h).  Probed
 * in Kbuild (LBR_SYSCORE_DATA), as the version does not tell.
 * LBR_SYSCORE_DEFINE(name, suspend, resume) defines "name" from two
 * functions taking no argument; lbr_syscore_register(&name) and
 * lbr_syscore_unregister(&name) register and unregister it.
 */
#include <linux/syscore_ops.h>
#ifdef LBR_SYSCORE_DATA
#define LBR_SYSCORE_DEFINE(name, sus, res)				\
	static int name##_cb_suspend(void *data) { return sus(); }	\
	static void name##_cb_resume(void *data) { res(); }		\
	static const struct syscore_ops name##_ops = {			\
		.suspend = name##_cb_suspend,				\
		.resume = name##_cb_resume,				\
	};								\
	static struct syscore name = { .ops = &name##_ops }
#define lbr_syscore_register(s)		register_syscore(s)
#define lbr_syscore_unregister(s)	unregister_syscore(s)
#else
#define LBR_SYSCORE_DEFINE(name, sus, res)				\
	static struct syscore_ops name = { .suspend = sus, .resume = res }
#define lbr_syscore_register(s)		register_syscore_ops(s)
#define lbr_syscore_unregister(s)	unregister_syscore_ops(s)
#endif

/*
 * Open @name from the root of @mnt (btf_func.c): file_open_root_mnt() where
 * the tree has it (6.1.192 on), file_open_root() of the mount's root
 * dentry before (5.10.262).  Kbuild probes <linux/fs.h>.
 */
#include <linux/fs.h>
#include <linux/mount.h>
static inline struct file *lbr_file_open_root_mnt(struct vfsmount *mnt,
						  const char *name, int flags,
						  umode_t mode)
{
#ifdef LBR_FILE_OPEN_ROOT_MNT
	return file_open_root_mnt(mnt, name, flags, mode);
#else
	return file_open_root(mnt->mnt_root, mnt, name, flags, mode);
#endif
}

/*
 * An irq_work that runs in hard interrupt context, on PREEMPT_RT too
 * (lbr_db.c): IRQ_WORK_INIT_HARD where the tree has it (6.1.192 on);
 * 5.10.262 has no PREEMPT_RT of its own, and init_irq_work() runs there in
 * hard interrupt context.  Kbuild probes <linux/irq_work.h>.
 */
#include <linux/irq_work.h>
static inline void lbr_init_irq_work_hard(struct irq_work *work,
					  void (*func)(struct irq_work *))
{
#ifdef LBR_IRQ_WORK_HARD
	*work = IRQ_WORK_INIT_HARD(func);
#else
	init_irq_work(work, func);
#endif
}

#endif /* !__ASSEMBLY__ */

#endif /* LBR_SNAP_COMPAT_H */
