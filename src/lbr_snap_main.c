// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap: freeze and read the Last Branch Record when a kernel function
 * returns, to show the branches that led to its return value.
 *
 * Module init/exit, parameters, the per-CPU ring buffers and /dev/lbr_snap.
 *
 * Records go to the kernel's own ring buffer (kernel/trace/ring_buffer.c):
 * per-CPU, lockless for writers and safe in NMI context.  It runs in
 * non-overwrite mode: a full buffer refuses the record, and the handler
 * counts it as dropped.  Its own reader wait (ring_buffer_wait(),
 * ring_buffer_poll_wait()) is not exported to modules, so readers sleep on
 * lbr_read_wq here, woken the way the ring buffer wakes its own: the
 * handler queues an irq_work and never touches the wait-queue lock itself.
 *
 * An open /dev/lbr_snap holds a reference on the module (fops.owner), so a
 * reader blocked in read() or poll() makes rmmod fail with EBUSY rather
 * than leave it sleeping on freed memory.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/ring_buffer.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "lbr_snap.h"

static char *targets;
module_param(targets, charp, 0444);
MODULE_PARM_DESC(targets,
		 "Functions to probe: sym[%type][/N][@hook],... with type int (default), long, ptr or bool, N the argument count (optional; no hook needs it), hook as hook=; at most 64");

static char *hook = "auto";
module_param(hook, charp, 0444);
MODULE_PARM_DESC(hook,
		 "Hook of targets without @hook: auto (default: fexit where the kernel and the function allow, else kretprobe), fexit (an ftrace direct call) or kretprobe");

static char *capture = "errors";
module_param(capture, charp, 0444);
MODULE_PARM_DESC(capture,
		 "errors (default): negative errno, NULL/ERR_PTR, false; all: every return");

static unsigned int buffer_kb = 256;
module_param(buffer_kb, uint, 0444);
MODULE_PARM_DESC(buffer_kb, "Ring buffer size per CPU in KiB (default 256)");

static char *backend = "auto";
module_param(backend, charp, 0444);
MODULE_PARM_DESC(backend, "LBR backend: auto (default), intel, arch, amd, none");

static char *mode = "auto";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode,
		 "How LBR stays on: auto (default: perf if it can, else raw), perf (a branch-stack perf event per CPU), raw (lbr_snap programs the MSRs)");

static char *lbr_filter = "kernel";
module_param(lbr_filter, charp, 0444);
MODULE_PARM_DESC(lbr_filter,
		 "kernel (default), user or any, then optionally kinds to keep: jcc,rel_call,ind_call,ret,ind_jmp,rel_jmp,far");

static_assert(offsetof(struct lbr_snap_target_stats, hook) ==
	      LBR_SNAP_TARGET_STATS_SIZE_V1);

struct trace_buffer *lbr_rb;
int lbr_capture_all __read_mostly;

static DECLARE_WAIT_QUEUE_HEAD(lbr_read_wq);
static struct irq_work lbr_wake_work;

static void lbr_wake_readers(struct irq_work *work)
{
	wake_up_interruptible_all(&lbr_read_wq);
}

/* Called by the handler after a commit, in any context, NMI included. */
void lbr_records_committed(void)
{
	/* wq_has_sleeper() orders the commit before the check (its smp_mb). */
	if (wq_has_sleeper(&lbr_read_wq))
		irq_work_queue(&lbr_wake_work);
}

/* Serialises readers: a record is peeked, copied, then consumed. */
static DEFINE_MUTEX(lbr_read_lock);
static u64 lbr_records_read;
static u64 lbr_records_flushed;

/* The CPU whose oldest record is the oldest of all, or -1 if none. */
static int lbr_oldest_cpu(struct lbr_snap_record **recp)
{
	struct lbr_snap_record *rec, *best = NULL;
	struct ring_buffer_event *ev;
	int cpu, best_cpu = -1;

	for_each_possible_cpu(cpu) {
		ev = ring_buffer_peek(lbr_rb, cpu, NULL, NULL);
		if (!ev)
			continue;
		rec = ring_buffer_event_data(ev);
		if (!best || rec->ts_ns < best->ts_ns) {
			best = rec;
			best_cpu = cpu;
		}
	}
	*recp = best;
	return best_cpu;
}

/* Copy whole records, oldest first, while they fit. */
static ssize_t lbr_copy_records(char __user *buf, size_t count)
{
	struct lbr_snap_record *rec;
	size_t done = 0;
	int cpu;

	while ((cpu = lbr_oldest_cpu(&rec)) >= 0) {
		if (rec->size > count - done)
			return done ? done : -EINVAL;
		if (copy_to_user(buf + done, rec, rec->size))
			return done ? done : -EFAULT;
		done += rec->size;
		ring_buffer_consume(lbr_rb, cpu, NULL, NULL);
		lbr_records_read++;
	}
	return done;
}

static ssize_t lbr_dev_read(struct file *file, char __user *buf,
			    size_t count, loff_t *ppos)
{
	ssize_t ret;

	for (;;) {
		if (mutex_lock_interruptible(&lbr_read_lock))
			return -ERESTARTSYS;
		ret = lbr_copy_records(buf, count);
		mutex_unlock(&lbr_read_lock);
		if (ret)
			return ret;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(lbr_read_wq,
					       !ring_buffer_empty(lbr_rb));
		if (ret)
			return ret;
	}
}

static __poll_t lbr_dev_poll(struct file *file, poll_table *wait)
{
	poll_wait(file, &lbr_read_wq, wait);
	/* Pairs with the barrier in wq_has_sleeper() on the writer side. */
	smp_mb();
	return ring_buffer_empty(lbr_rb) ? 0 : EPOLLIN | EPOLLRDNORM;
}

static long lbr_ioc_info(void __user *arg)
{
	struct lbr_snap_info info = {
		.abi_version = LBR_SNAP_ABI_VERSION,
		.backend = lbr_hw.backend,
		.lbr_format = lbr_hw.fmt.format,
		.lbr_depth = lbr_hw.depth,
		.nr_cpus = num_possible_cpus(),
		.buffer_kb = buffer_kb,
		.nr_targets = lbr_targets_count(),
		.capture = lbr_capture_all ? LBR_SNAP_CAPTURE_ALL :
					     LBR_SNAP_CAPTURE_ERRORS,
	};

	strscpy(info.backend_name, lbr_hw.name, sizeof(info.backend_name));
	strscpy(info.mode, lbr_hw_mode(), sizeof(info.mode));
	strscpy(info.reason, lbr_hw.reason, sizeof(info.reason));
	strscpy(info.version, LBR_SNAP_VERSION, sizeof(info.version));
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long lbr_ioc_stats(void __user *arg)
{
	struct lbr_snap_target_stats *st;
	struct lbr_snap_stats hdr;
	unsigned int i, n;
	long ret = 0;

	if (copy_from_user(&hdr, arg, sizeof(hdr)))
		return -EFAULT;
	/*
	 * Older callers know fewer fields (none of hook, nr_args, recursion,
	 * inflight in the first ABI): each gets the entries cut to its size,
	 * newer ones the rest zeroed.
	 */
	if (!hdr.entry_size)
		hdr.entry_size = LBR_SNAP_TARGET_STATS_SIZE_V1;
	if (hdr.entry_size < LBR_SNAP_TARGET_STATS_SIZE_V1 ||
	    hdr.entry_size > PAGE_SIZE)
		return -EINVAL;
	st = kcalloc(LBR_SNAP_MAX_TARGETS, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	n = lbr_targets_stats(st);
	for (i = 0; i < min(n, hdr.nr) && !ret; i++) {
		void __user *dst = u64_to_user_ptr(hdr.stats_ptr +
						   (u64)i * hdr.entry_size);
		size_t len = min_t(size_t, hdr.entry_size, sizeof(*st));

		if (copy_to_user(dst, &st[i], len) ||
		    clear_user(dst + len, hdr.entry_size - len))
			ret = -EFAULT;
	}
	kfree(st);
	if (ret)
		return ret;

	hdr.nr = n;
	mutex_lock(&lbr_read_lock);
	hdr.read = lbr_records_read;
	hdr.flushed = lbr_records_flushed;
	mutex_unlock(&lbr_read_lock);
	return copy_to_user(arg, &hdr, sizeof(hdr)) ? -EFAULT : 0;
}

/* Runtime control: CAP_SYS_ADMIN, whoever may open the device. */
static long lbr_ioc_target(unsigned int cmd, void __user *arg)
{
	struct lbr_snap_target_ctl ctl;
	long ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&ctl, arg, sizeof(ctl)))
		return -EFAULT;
	ctl.spec[sizeof(ctl.spec) - 1] = '\0';
	if (cmd == LBR_SNAP_IOC_DEL_TARGET)
		return lbr_target_del(ctl.spec);
	ret = lbr_target_add(ctl.spec, &ctl.id, &ctl.hook);
	if (ret)
		return ret;
	return copy_to_user(arg, &ctl, sizeof(ctl)) ? -EFAULT : 0;
}

static long lbr_ioc_set_capture(unsigned long arg)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (arg != LBR_SNAP_CAPTURE_ERRORS && arg != LBR_SNAP_CAPTURE_ALL)
		return -EINVAL;
	WRITE_ONCE(lbr_capture_all, arg == LBR_SNAP_CAPTURE_ALL);
	return 0;
}

/* Discard what is buffered, one record at a time, so every one is counted. */
static long lbr_ioc_flush(void)
{
	struct lbr_snap_record *rec;
	int cpu;

	if (mutex_lock_interruptible(&lbr_read_lock))
		return -ERESTARTSYS;
	while ((cpu = lbr_oldest_cpu(&rec)) >= 0) {
		ring_buffer_consume(lbr_rb, cpu, NULL, NULL);
		lbr_records_flushed++;
	}
	mutex_unlock(&lbr_read_lock);
	return 0;
}

static long lbr_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	switch (cmd) {
	case LBR_SNAP_IOC_GET_INFO:
		return lbr_ioc_info((void __user *)arg);
	case LBR_SNAP_IOC_GET_STATS:
		return lbr_ioc_stats((void __user *)arg);
	case LBR_SNAP_IOC_FLUSH:
		return lbr_ioc_flush();
	case LBR_SNAP_IOC_ADD_TARGET:
	case LBR_SNAP_IOC_DEL_TARGET:
		return lbr_ioc_target(cmd, (void __user *)arg);
	case LBR_SNAP_IOC_SET_CAPTURE:
		return lbr_ioc_set_capture(arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations lbr_dev_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.read = lbr_dev_read,
	.poll = lbr_dev_poll,
	.unlocked_ioctl = lbr_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice lbr_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "lbr_snap",
	.fops = &lbr_dev_fops,
	.mode = 0600,
};

static int __init lbr_snap_init(void)
{
	int ret;

	if (sysfs_streq(capture, "all")) {
		lbr_capture_all = 1;
	} else if (!sysfs_streq(capture, "errors")) {
		pr_err("capture=%s: use errors or all\n", capture);
		return -EINVAL;
	}
	if (buffer_kb < 8 || buffer_kb > 1024 * 1024) {
		pr_err("buffer_kb=%u: use 8 to 1048576\n", buffer_kb);
		return -EINVAL;
	}

	ret = lbr_targets_set_hook(hook);
	if (ret)
		return ret;
	ret = lbr_hw_detect(backend);
	if (ret)
		return ret;

	init_irq_work(&lbr_wake_work, lbr_wake_readers);
	lbr_rb = ring_buffer_alloc((unsigned long)buffer_kb * 1024, 0);
	if (!lbr_rb)
		return -ENOMEM;

	ret = lbr_hw_start(mode, lbr_filter);
	if (ret)
		goto err_rb;
	ret = lbr_fexit_start();
	if (ret) {
		pr_err("lbr_snap_fexit has another client (%d)\n", ret);
		goto err_hw;
	}
	ret = lbr_targets_register(targets);
	/*
	 * Init must not fail with -EEXIST: modprobe reads it as "already
	 * loaded" and succeeds, and since 7.1 the module loader turns it into
	 * -EBUSY (commit 743f8cae549a, "module: Override -EEXIST module
	 * return").  A duplicate target is a bad parameter.
	 */
	if (ret == -EEXIST)
		ret = -EINVAL;
	if (ret)
		goto err_fexit;
	ret = misc_register(&lbr_miscdev);
	if (ret)
		goto err_targets;
	pr_info("loaded: %u targets, capture=%s, backend %s, mode %s, %u KiB per CPU\n",
		lbr_targets_count(), lbr_capture_all ? "all" : "errors",
		lbr_hw.name, lbr_hw_mode(), buffer_kb);
	return 0;

err_targets:
	lbr_targets_unregister();
err_fexit:
	lbr_fexit_stop();
	irq_work_sync(&lbr_wake_work);
err_hw:
	lbr_hw_stop();
err_rb:
	ring_buffer_free(lbr_rb);
	return ret;
}

static void __exit lbr_snap_exit(void)
{
	misc_deregister(&lbr_miscdev);
	lbr_targets_unregister();
	lbr_fexit_stop();
	lbr_hw_stop();
	irq_work_sync(&lbr_wake_work);
	ring_buffer_free(lbr_rb);
	pr_info("unloaded\n");
}

module_init(lbr_snap_init);
module_exit(lbr_snap_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("lbr_snap developers");
MODULE_DESCRIPTION("Capture the Last Branch Record when kernel functions return");
MODULE_VERSION(LBR_SNAP_VERSION);
