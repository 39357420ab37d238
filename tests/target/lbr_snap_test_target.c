// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test_target: functions with known return values for lbr_snap's
 * tests, called from user space through /dev/lbr_snap_test.
 *
 * write(fd, "FUNC VALUE [COUNT]") calls FUNC(VALUE) COUNT times (default 1)
 * and returns the length written; FUNC is one of
 *   int   lbr_test_int(int)       returns VALUE (through lbr_test_fail()
 *                                 when negative)
 *   long  lbr_test_long(long)     returns VALUE
 *   ptr   lbr_test_ptr(long)      NULL for 0, ERR_PTR(VALUE) for -4095..-1,
 *                                 a valid pointer otherwise
 *   bool  lbr_test_bool(long)     VALUE != 0
 *   sleep lbr_test_sleep(long)    sleeps VALUE ms, returns -EINTR
 *   wait  lbr_test_wait(long)     sleeps VALUE ms or until a signal comes:
 *                                 -EINTR if one did, else 0
 *   kexit lbr_test_exit_inside(long)  called by a new kthread, which exits
 *                                 inside it when VALUE is not 0 (the write
 *                                 returns once it has)
 *   notrace lbr_test_notrace(long)  returns VALUE; no fentry, so ftrace
 *                                 (and fexit) cannot hook it, kprobes can
 *   args8 lbr_test_args8(8 longs) two arguments on the stack; returns a sum
 *                                 weighted by position, VALUE + i for the
 *                                 i-th argument
 *   big   lbr_test_struct(long, struct lbr_test_big, long)  a 40-byte
 *                                 struct by value, on the stack; the same
 *   stack24 lbr_test_stack24(24 longs)  18 words on the stack, more than
 *                                 the fexit trampoline passes on; the same
 *   va    lbr_test_va(int n, ...) 24 longs through variable arguments;
 *                                 the same
 *   lost  lbr_test_lost(long)     returns -VALUE; for the failed-detach
 *                                 test only, which leaves it hooked
 *   void  lbr_test_void(long)     returns nothing, with -VALUE left in
 *                                 RAX: what a void target "returns" is
 *                                 garbage lbr_snap must not take for one
 *   chain lbr_test_chain(long)    calls lbr_test_leaf(i) for i = 0..VALUE-1,
 *                                 each a loop of 4 to 7 conditional jumps,
 *                                 then returns -EIO: a known mix of calls,
 *                                 returns and conditional jumps for the
 *                                 LBR filter's tests
 *   pmi   lbr_test_in_pmi(int)    returns 0, then -EIO, inside perf's PMI:
 *                                 the overflow handler of a sampling counter
 *                                 on the writer's kernel cycles calls it
 *                                 twice a PMI, until VALUE PMIs have come
 *                                 (COUNT is ignored; ENODEV without a PMU,
 *                                 ETIMEDOUT if they do not come in 20 s; one
 *                                 writer at a time)
 *   iret  lbr_test_iret(long)     returns VALUE by an IRET to its return
 *                                 address, not a RET: the landing an
 *                                 interrupt taken at a hook's return site
 *                                 leaves in LBR (EOPNOTSUPP where the
 *                                 compiler made no tail call of it)
 *   faildetach                    from now on unregister_ftrace_direct()
 *                                 fails with -VALUE without doing anything;
 *                                 0 stops it (COUNT is ignored)
 * The write fails with EIO when args8, big, stack24 or va did not get their arguments
 * as passed, or returned something else than it should.
 * so a test knows exactly how many returns it caused and with what value.
 */
#include <linux/capability.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/linkage.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/objtool.h>
#include <linux/rcupdate.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/version.h>

#include "lbr_snap_test_target.h"

/*
 * The results go to a sink: without a use, the compiler may find the
 * functions pure and drop the calls.
 */
static unsigned long lbr_test_sink;

/* Arguments are hidden from the optimiser so every branch stays. */
noinline int lbr_test_fail(int v)
{
	OPTIMIZER_HIDE_VAR(v);
	if (v < -4095)
		return -EINVAL;
	return v;
}

noinline int lbr_test_int(int v)
{
	OPTIMIZER_HIDE_VAR(v);
	if (v < 0)
		return lbr_test_fail(v);
	return v;
}

/*
 * lbr_test_iret_tail(v): returns @v by an IRET frame of its return address
 * and the stack as a RET would leave it, then IRETQ.  In assembly, since
 * C has no such return.  objtool takes no IRET in a callable function, so
 * it skips this one; the return after the IRET never runs, and tells
 * objtool that the function returns.
 */
asm(
"	.pushsection .text, \"ax\"\n"
"	.type lbr_test_iret_tail, @function\n"
"lbr_test_iret_tail:\n"
"	movq %rdi, %rax\n"
"	popq %rcx\n"
"	movq %rsp, %rdx\n"
"	movl %ss, %esi\n"
"	pushq %rsi\n"
"	pushq %rdx\n"
"	pushfq\n"
"	movl %cs, %esi\n"
"	pushq %rsi\n"
"	pushq %rcx\n"
"	iretq\n"
ASM_RET
"	.size lbr_test_iret_tail, . - lbr_test_iret_tail\n"
"	.popsection\n");
long lbr_test_iret_tail(long v);
STACK_FRAME_NON_STANDARD(lbr_test_iret_tail);

/*
 * A tail call: the tail's IRET lands where lbr_test_iret() would have
 * returned to, the hook's return site, as an interrupt taken there would.
 */
noinline long lbr_test_iret(long v)
{
	OPTIMIZER_HIDE_VAR(v);
	return lbr_test_iret_tail(v);
}

/*
 * Whether the compiler made that a tail call (it does not with frame
 * pointers, -fno-optimize-sibling-calls): past ENDBR (or what sealing it
 * left, a 4-byte NOP) and the fentry call (or the NOP ftrace left of it),
 * a JMP to code that starts as the tail does.  The tail is found by its
 * bytes, not its address: a reference to code without ENDBR is what
 * objtool refuses under IBT.
 */
static bool lbr_test_iret_tail_called(void)
{
	static const u8 endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const u8 nop4[] = { 0x66, 0x0f, 0x1f, 0x00 };
	static const u8 nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	/* movq %rdi, %rax; popq %rcx; movq %rsp, %rdx */
	static const u8 tail[] = { 0x48, 0x89, 0xf8, 0x59, 0x48, 0x89, 0xe2 };
	const u8 *p = (const u8 *)lbr_test_iret;
	s32 rel;

	OPTIMIZER_HIDE_VAR(p);
	if (!memcmp(p, endbr, sizeof(endbr)) || !memcmp(p, nop4, sizeof(nop4)))
		p += sizeof(endbr);
	if (p[0] == 0xe8 || !memcmp(p, nop5, sizeof(nop5)))
		p += 5;
	if (p[0] == 0xeb) {
		p += 2 + (s8)p[1];
	} else if (p[0] == 0xe9) {
		memcpy(&rel, p + 1, sizeof(rel));
		p += 5 + rel;
	} else {
		return false;
	}
	return !memcmp(p, tail, sizeof(tail));
}

noinline long lbr_test_long(long v)
{
	OPTIMIZER_HIDE_VAR(v);
	return v;
}

static int lbr_test_object;

noinline void *lbr_test_ptr(long v)
{
	OPTIMIZER_HIDE_VAR(v);
	if (!v)
		return NULL;
	if (IS_ERR_VALUE(v))
		return ERR_PTR(v);
	return &lbr_test_object;
}

noinline bool lbr_test_bool(long v)
{
	OPTIMIZER_HIDE_VAR(v);
	return v != 0;
}

noinline int lbr_test_sleep(long ms)
{
	OPTIMIZER_HIDE_VAR(ms);
	msleep(ms);
	return -EINTR;
}

noinline int lbr_test_wait(long ms)
{
	OPTIMIZER_HIDE_VAR(ms);
	if (msleep_interruptible(ms))
		return -EINTR;
	return 0;
}

noinline notrace long lbr_test_notrace(long v)
{
	OPTIMIZER_HIDE_VAR(v);
	return v;
}

noinline long lbr_test_args8(long a1, long a2, long a3, long a4, long a5,
			    long a6, long a7, long a8)
{
	return a1 + 2 * a2 + 3 * a3 + 4 * a4 + 5 * a5 + 6 * a6 + 7 * a7 +
	       8 * a8;
}

noinline long lbr_test_struct(long x, struct lbr_test_big b, long y)
{
	long sum = x + 7 * y;
	int i;

	for (i = 0; i < 5; i++)
		sum += (i + 2) * b.a[i];
	return sum;
}

noinline long lbr_test_stack24(long a1, long a2, long a3, long a4, long a5,
			      long a6, long a7, long a8, long a9, long a10,
			      long a11, long a12, long a13, long a14, long a15,
			      long a16, long a17, long a18, long a19, long a20,
			      long a21, long a22, long a23, long a24)
{
	const long a[] = { a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12,
			   a13, a14, a15, a16, a17, a18, a19, a20, a21, a22,
			   a23, a24 };
	long sum = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(a); i++)
		sum += (i + 1) * a[i];
	return sum;
}

noinline long lbr_test_va(int n, ...)
{
	long sum = 0;
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 1; i <= n; i++)
		sum += i * va_arg(ap, long);
	va_end(ap);
	return sum;
}

/* Not lbr_test_long()'s body, or the compiler may make them one. */
noinline long lbr_test_lost(long v)
{
	OPTIMIZER_HIDE_VAR(v);
	return -v;
}

/* RAX ends up -@v (the sink's value), which a void function returns not. */
noinline void lbr_test_void(long v)
{
	OPTIMIZER_HIDE_VAR(v);
	WRITE_ONCE(lbr_test_sink, lbr_test_lost(v));
}

/* A loop of 4 to 7 taken conditional jumps back, by @i: not unrolled. */
noinline int lbr_test_leaf(int i)
{
	int k, n = (i & 3) + 4, sum = 0;

	OPTIMIZER_HIDE_VAR(n);
	for (k = 0; k < n; k++) {
		sum += k;
		OPTIMIZER_HIDE_VAR(sum);
	}
	return sum;
}

noinline int lbr_test_chain(long n)
{
	long i;

	OPTIMIZER_HIDE_VAR(n);
	for (i = 0; i < n; i++)
		WRITE_ONCE(lbr_test_sink, lbr_test_leaf(i));
	return -EIO;
}

/*
 * kthread_complete_and_exit() replaced complete_and_exit() in 5.17
 * (commit "exit: Rename complete_and_exit to kthread_complete_and_exit").
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 17, 0)
#define lbr_test_complete_and_exit	kthread_complete_and_exit
#else
#define lbr_test_complete_and_exit	complete_and_exit
#endif

static DECLARE_COMPLETION(lbr_test_exited);

/* The kthread exits in here, without returning, when @v is not 0. */
noinline int lbr_test_exit_inside(long v)
{
	OPTIMIZER_HIDE_VAR(v);
	if (v)
		lbr_test_complete_and_exit(&lbr_test_exited, 0);
	return 0;
}

static int lbr_test_kthread(void *data)
{
	lbr_test_exit_inside((long)data);
	complete(&lbr_test_exited);
	return 0;
}

static void call_chain(long v)
{
	WRITE_ONCE(lbr_test_sink, lbr_test_chain(v));
}

static void call_int(long v)
{
	WRITE_ONCE(lbr_test_sink, lbr_test_int(v));
}

static void call_iret(long v)
{
	WRITE_ONCE(lbr_test_sink, lbr_test_iret(v));
}

static void call_long(long v)
{
	WRITE_ONCE(lbr_test_sink, lbr_test_long(v));
}

static void call_ptr(long v)
{
	WRITE_ONCE(lbr_test_sink, (unsigned long)lbr_test_ptr(v));
}

static void call_bool(long v)
{
	WRITE_ONCE(lbr_test_sink, lbr_test_bool(v));
}

static void call_sleep(long v)
{
	WRITE_ONCE(lbr_test_sink, lbr_test_sleep(v));
}

/* A call that did not get what was passed: the write fails with EIO. */
static bool lbr_test_wrong;

/* The weighted sum of v + 1, ..., v + n: what both functions return. */
static long lbr_test_expect(long v, int n)
{
	long sum = 0;
	int i;

	for (i = 1; i <= n; i++)
		sum += i * (v + i);
	return sum;
}

static void call_args8(long v)
{
	long r = lbr_test_args8(v + 1, v + 2, v + 3, v + 4, v + 5, v + 6,
				v + 7, v + 8);

	WRITE_ONCE(lbr_test_sink, r);
	if (r != lbr_test_expect(v, 8))
		lbr_test_wrong = true;
}

static void call_big(long v)
{
	struct lbr_test_big b = { { v + 2, v + 3, v + 4, v + 5, v + 6 } };
	long r = lbr_test_struct(v + 1, b, v + 7);

	WRITE_ONCE(lbr_test_sink, r);
	if (r != lbr_test_expect(v, 7))
		lbr_test_wrong = true;
}

static void call_stack24(long v)
{
	long r = lbr_test_stack24(v + 1, v + 2, v + 3, v + 4, v + 5, v + 6,
				  v + 7, v + 8, v + 9, v + 10, v + 11, v + 12,
				  v + 13, v + 14, v + 15, v + 16, v + 17,
				  v + 18, v + 19, v + 20, v + 21, v + 22,
				  v + 23, v + 24);

	WRITE_ONCE(lbr_test_sink, r);
	if (r != lbr_test_expect(v, 24))
		lbr_test_wrong = true;
}

static void call_va(long v)
{
	long r = lbr_test_va(24, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6,
			     v + 7, v + 8, v + 9, v + 10, v + 11, v + 12,
			     v + 13, v + 14, v + 15, v + 16, v + 17, v + 18,
			     v + 19, v + 20, v + 21, v + 22, v + 23, v + 24);

	WRITE_ONCE(lbr_test_sink, r);
	if (r != lbr_test_expect(v, 24))
		lbr_test_wrong = true;
}

static void call_notrace(long v)
{
	WRITE_ONCE(lbr_test_sink, lbr_test_notrace(v));
}

static void call_wait(long v)
{
	WRITE_ONCE(lbr_test_sink, lbr_test_wait(v));
}

/*
 * The thread completes from kernel text on its way out, so this module's
 * text is not needed once the wait is over.
 */
static void call_kexit(long v)
{
	struct task_struct *k;

	reinit_completion(&lbr_test_exited);
	k = kthread_run(lbr_test_kthread, (void *)v, "lbr_test_kexit");
	if (!IS_ERR(k))
		wait_for_completion(&lbr_test_exited);
}

static void call_lost(long v)
{
	WRITE_ONCE(lbr_test_sink, lbr_test_lost(v));
}

static void call_void(long v)
{
	lbr_test_void(v);
}

/* Called in perf's PMI, an NMI: see call_pmi(). */
noinline int lbr_test_in_pmi(int v)
{
	OPTIMIZER_HIDE_VAR(v);
	return v;
}

static DEFINE_MUTEX(lbr_test_pmi_lock);

/* A success and an error per PMI; the context counts the PMIs. */
static void lbr_test_overflow(struct perf_event *event,
			      struct perf_sample_data *data,
			      struct pt_regs *regs)
{
	atomic_t *pmis = event->overflow_handler_context;

	if (!lbr_test_in_pmi(0) && lbr_test_in_pmi(-EIO) == -EIO)
		atomic_inc(pmis);
}

/*
 * "pmi": returns inside perf's PMI handler, where perf may have frozen
 * LBR (FREEZE_LBRS_ON_PMI, set while perf has an LBR user such as
 * lbr_snap's mode=perf).  A counter of the writer's kernel cycles samples
 * every 100000; the kernel calls its overflow handler from the PMI.  The
 * writer spins in the kernel until enough have come.
 */
static int call_pmi(long n)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.size = sizeof(attr),
		.sample_period = 100000,
		.exclude_user = 1,
		.exclude_hv = 1,
	};
	unsigned long deadline = jiffies + 20 * HZ;
	struct perf_event *event;
	atomic_t pmis = ATOMIC_INIT(0);
	unsigned int i;
	int ret = 0;

	if (n <= 0 || n > 100000)
		return -EINVAL;
	if (mutex_lock_interruptible(&lbr_test_pmi_lock))
		return -EINTR;
	event = perf_event_create_kernel_counter(&attr, -1, current,
						 lbr_test_overflow, &pmis);
	if (IS_ERR(event)) {
		mutex_unlock(&lbr_test_pmi_lock);
		return PTR_ERR(event) == -ENOENT ? -ENODEV : PTR_ERR(event);
	}
	while (atomic_read(&pmis) < n) {
		if (time_after(jiffies, deadline)) {
			ret = -ETIMEDOUT;
			break;
		}
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		for (i = 0; i < 10000; i++)
			WRITE_ONCE(lbr_test_sink, i);
		cond_resched();
	}
	/* Released, and no overflow handler runs on: @pmis may go. */
	perf_event_release_kernel(event);
	mutex_unlock(&lbr_test_pmi_lock);
	return ret;
}

/*
 * "faildetach": make ftrace refuse to remove a direct call, the way the
 * kernel's fail_function does it (kernel/fail_function.c): a kprobe on the
 * function's entry sets the return value and sends it to a bare return.
 * The function itself never runs, so nothing is removed.
 */
static int lbr_test_detach_err;
static DEFINE_MUTEX(lbr_test_kp_lock);

/* Where the probed function goes instead: no body, %rax left as set. */
static noinline notrace void lbr_test_just_return(void)
{
}

static int lbr_test_fail_pre(struct kprobe *p, struct pt_regs *regs)
{
	int err = READ_ONCE(lbr_test_detach_err);

	if (!err)
		return 0;	/* disarming: let the call run */
	regs->ax = (unsigned long)(long)err;
	regs->ip = (unsigned long)lbr_test_just_return;
	return 1;	/* regs->ip changed: skip the probed instruction */
}

/*
 * A post handler keeps the kprobe from being optimised: an optimised one
 * would ignore the new regs->ip (see fei_post_handler()).
 */
static void lbr_test_fail_post(struct kprobe *p, struct pt_regs *regs,
			       unsigned long flags)
{
}

static struct kprobe lbr_test_fail_kp = {
	.symbol_name = "unregister_ftrace_direct",
	.pre_handler = lbr_test_fail_pre,
	.post_handler = lbr_test_fail_post,
};
static bool lbr_test_fail_armed;

static int lbr_test_fail_detach(long err)
{
	int ret = 0;

	if (err < 0 || err > MAX_ERRNO)
		return -EINVAL;
	mutex_lock(&lbr_test_kp_lock);
	if (err) {
		WRITE_ONCE(lbr_test_detach_err, -(int)err);
		if (!lbr_test_fail_armed) {
			ret = register_kprobe(&lbr_test_fail_kp);
			lbr_test_fail_armed = !ret;
		}
	} else if (lbr_test_fail_armed) {
		/*
		 * Unhook before the error goes: a removal in between must
		 * not look done.  Then wait for a task preempted on
		 * lbr_test_just_return()'s RET: it is this module's text.
		 */
		unregister_kprobe(&lbr_test_fail_kp);
		synchronize_rcu_tasks();
		WRITE_ONCE(lbr_test_detach_err, 0);
		/* A kprobe can be registered only once. */
		memset(&lbr_test_fail_kp, 0, sizeof(lbr_test_fail_kp));
		lbr_test_fail_kp.symbol_name = "unregister_ftrace_direct";
		lbr_test_fail_kp.pre_handler = lbr_test_fail_pre;
		lbr_test_fail_kp.post_handler = lbr_test_fail_post;
		lbr_test_fail_armed = false;
	}
	mutex_unlock(&lbr_test_kp_lock);
	return ret;
}

static const struct {
	const char *name;
	void (*call)(long v);
} lbr_test_fns[] = {
	{ "int", call_int },
	{ "long", call_long },
	{ "ptr", call_ptr },
	{ "bool", call_bool },
	{ "sleep", call_sleep },
	{ "wait", call_wait },
	{ "kexit", call_kexit },
	{ "notrace", call_notrace },
	{ "args8", call_args8 },
	{ "big", call_big },
	{ "stack24", call_stack24 },
	{ "va", call_va },
	{ "lost", call_lost },
	{ "void", call_void },
	{ "chain", call_chain },
	{ "iret", call_iret },
};

static ssize_t lbr_test_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	unsigned long count = 1, i;
	char buf[64], fn[16];
	unsigned int f;
	long v;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%15s %ld %lu", fn, &v, &count) < 2 ||
	    count > 1000000)
		return -EINVAL;
	if (!strcmp(fn, "faildetach")) {
		/* It breaks every ftrace direct call's removal: root only. */
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		ret = lbr_test_fail_detach(v);
		return ret ? ret : len;
	}
	if (!strcmp(fn, "iret") && !lbr_test_iret_tail_called())
		return -EOPNOTSUPP;
	if (!strcmp(fn, "pmi")) {
		ret = call_pmi(v);
		return ret ? ret : len;
	}
	for (f = 0; f < ARRAY_SIZE(lbr_test_fns); f++)
		if (!strcmp(fn, lbr_test_fns[f].name))
			break;
	if (f == ARRAY_SIZE(lbr_test_fns))
		return -EINVAL;

	lbr_test_wrong = false;
	for (i = 0; i < count; i++) {
		lbr_test_fns[f].call(v);
		cond_resched();
	}
	return lbr_test_wrong ? -EIO : len;
}

static const struct file_operations lbr_test_fops = {
	.owner = THIS_MODULE,
	.write = lbr_test_write,
	.llseek = noop_llseek,
};

static struct miscdevice lbr_test_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "lbr_snap_test",
	.fops = &lbr_test_fops,
	.mode = 0666,
};

/*
 * nop_kretprobe=SYM: a kretprobe on SYM whose handler does nothing, the
 * floor make bench's cost table (tests/bench/cost.sh) measures a
 * kretprobe hook against: what any kretprobe costs, handler aside.
 */
static char *nop_kretprobe;
module_param(nop_kretprobe, charp, 0444);
MODULE_PARM_DESC(nop_kretprobe,
		 "A kretprobe with an empty handler on this function (make bench)");

static int lbr_test_nop_handler(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	return 0;
}

static struct kretprobe lbr_test_nop_rp = {
	.handler = lbr_test_nop_handler,
	.maxactive = 64,
};

static int __init lbr_test_init(void)
{
	int ret;

	if (nop_kretprobe && *nop_kretprobe) {
		lbr_test_nop_rp.kp.symbol_name = nop_kretprobe;
		ret = register_kretprobe(&lbr_test_nop_rp);
		if (ret)
			return ret;
	}
	ret = misc_register(&lbr_test_dev);
	if (ret && lbr_test_nop_rp.kp.symbol_name)
		unregister_kretprobe(&lbr_test_nop_rp);
	return ret;
}

static void __exit lbr_test_exit(void)
{
	misc_deregister(&lbr_test_dev);
	lbr_test_fail_detach(0);
	if (lbr_test_nop_rp.kp.symbol_name)
		unregister_kretprobe(&lbr_test_nop_rp);
}

module_init(lbr_test_init);
module_exit(lbr_test_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Functions with known errors for lbr_snap's tests");
