// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/lbr_snap: read() gives whole records, oldest first; ioctls give
 * information and statistics and change targets and the capture mode.
 *
 * Who may do what follows perf (perf_event_open() in kernel/events/core.c,
 * Documentation/admin-guide/perf-security.rst), whatever the file mode:
 * - records and statistics hold kernel addresses, and with
 *   lbr_filter=user|any other users' addresses: opening for reading needs
 *   CAP_PERFMON (or CAP_SYS_ADMIN, perfmon_capable()), checked against the
 *   opener's credentials at open, as perf checks them when an event is
 *   opened.  GET_STATS needs a descriptor opened for reading.
 * - FLUSH, ADD_TARGET, DEL_TARGET, SET_CAPTURE, SET_FILTER and
 *   SET_LBR_FILTER change what everyone sees: CAP_SYS_ADMIN of the opener
 *   (as perf checks an event's rights against its opener) and at the
 *   call, on a descriptor opened for writing.
 * - GET_INFO (the backend, the buffer size) is anyone's who may open it.
 * - SET_WAKEUP changes only its own descriptor's poll(): a descriptor
 *   opened for reading.
 *
 * An open /dev/lbr_snap holds a reference on the module (fops.owner), so a
 * reader blocked in read() or poll() makes rmmod fail with EBUSY rather
 * than leave it sleeping on freed memory.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "lbr_snap.h"
#include "lbr_xsave.h"

static_assert(offsetof(struct lbr_snap_target_stats, hook) ==
	      LBR_SNAP_TARGET_STATS_SIZE_V1);
static_assert(offsetof(struct lbr_snap_target_stats, lbr_off) ==
	      LBR_SNAP_TARGET_STATS_SIZE_V2);
static_assert(offsetof(struct lbr_snap_target_stats, state) ==
	      LBR_SNAP_TARGET_STATS_SIZE_V3);
static_assert(offsetof(struct lbr_snap_info, nr_cpu_types) ==
	      LBR_SNAP_INFO_SIZE_V1);
static_assert(offsetof(struct lbr_snap_info, tree_tasks) ==
	      LBR_SNAP_INFO_SIZE_V2);
static_assert(offsetof(struct lbr_snap_info, nr_cpus_failed) ==
	      LBR_SNAP_INFO_SIZE_V3);
static_assert(offsetof(struct lbr_snap_info, hypervisor) ==
	      LBR_SNAP_INFO_SIZE_V4);
static_assert(offsetof(struct lbr_snap_info, capture_msrs) ==
	      LBR_SNAP_INFO_SIZE_V5);
static_assert(offsetof(struct lbr_snap_info, nr_cpus_perf_off) ==
	      LBR_SNAP_INFO_SIZE_V6);
static_assert(sizeof(struct lbr_snap_info) == LBR_SNAP_INFO_SIZE_V6 + 48);
static_assert(offsetof(struct lbr_snap_stats, flags) ==
	      LBR_SNAP_STATS_SIZE_V1);
static_assert(offsetof(struct lbr_snap_target_ctl, flags) ==
	      LBR_SNAP_TARGET_CTL_SIZE_V1);
static_assert(offsetof(struct lbr_snap_target_entry, hook) ==
	      LBR_SNAP_TARGET_ENTRY_SIZE_V1);
/* id, error and hook are written back as one run. */
static_assert(offsetof(struct lbr_snap_target_entry, hook) ==
	      offsetof(struct lbr_snap_target_entry, id) + 8);

/* An open descriptor's own state (file->private_data). */
struct lbr_dev_file {
	unsigned long wake_bytes;	/* LBR_SNAP_IOC_SET_WAKEUP's, or 0 */
};

static int lbr_dev_open(struct inode *inode, struct file *file)
{
	struct lbr_dev_file *f;

	if ((file->f_mode & FMODE_READ) && !perfmon_capable())
		return -EPERM;
	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;
	/* misc_open() left the miscdevice there: lbr_snap does not use it. */
	file->private_data = f;
	return nonseekable_open(inode, file);
}

static int lbr_dev_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

/* /proc/PID/fdinfo/FD: the wakeup mark, as eventfd shows its count. */
static void lbr_dev_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct lbr_dev_file *f = file->private_data;

	seq_printf(m, "lbr_snap_wakeup_bytes:\t%lu\n", READ_ONCE(f->wake_bytes));
}

/*
 * What changes the records or targets of everyone: CAP_SYS_ADMIN of the
 * caller, and of whoever opened the descriptor, whose rights perf's events
 * carry.  A privileged process that was handed a descriptor an
 * unprivileged one opened (a set-uid program's inherited descriptor, say)
 * acts for it no more than that one could.
 */
static int lbr_may_control(struct file *file)
{
	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (!file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN) ||
	    !capable(CAP_SYS_ADMIN))
		return -EPERM;
	return 0;
}

/* Not even whether records come, to a descriptor that may not read them. */
static __poll_t lbr_dev_poll(struct file *file, poll_table *wait)
{
	struct lbr_dev_file *f = file->private_data;

	if (!(file->f_mode & FMODE_READ))
		return EPOLLERR;
	return lbr_buf_poll(file, wait, READ_ONCE(f->wake_bytes));
}

static ssize_t lbr_dev_read(struct file *file, char __user *buf,
			    size_t count, loff_t *ppos)
{
	return lbr_buf_read(buf, count, file->f_flags & O_NONBLOCK);
}

/*
 * Is @cmd the command @ref with its struct at any size from @v1 on?  The
 * growing structs of include/lbr_snap.h: an older caller's is smaller, a
 * newer one's larger (what it has past the module's struct must be 0).
 */
static bool lbr_ioc_is(unsigned int cmd, unsigned int ref, size_t v1)
{
	const unsigned int size_bits = _IOC_SIZEMASK << _IOC_SIZESHIFT;

	return (cmd & ~size_bits) == (ref & ~size_bits) &&
	       _IOC_SIZE(cmd) >= v1;
}

/*
 * The caller's struct of @usize bytes into @k of @ksize, as
 * copy_struct_from_user() does: what it lacks is 0, what it has past
 * @ksize must be 0 (E2BIG); and flags and reserved words must be 0
 * (EINVAL).
 */
static int lbr_struct_in(void *k, size_t ksize, const void __user *u,
			 size_t usize, const void *must_be_zero, size_t zlen)
{
	int ret = copy_struct_from_user(k, ksize, u, usize);

	if (ret)
		return ret;
	return memchr_inv(must_be_zero, 0, zlen) ? -EINVAL : 0;
}

/* Back to a caller's struct of @usize bytes: ours, then zeros. */
static int lbr_struct_out(void __user *u, size_t usize, const void *k,
			  size_t ksize)
{
	size_t n = min(usize, ksize);

	if (copy_to_user(u, k, n) || clear_user(u + n, usize - n))
		return -EFAULT;
	return 0;
}

/* Append @cpu to a GET_INFO list of CPUs ("1,3"), cut to @len. */
void lbr_cpu_list_add(char *list, size_t len, size_t *at, unsigned int cpu)
{
	char one[16];
	int n = snprintf(one, sizeof(one), "%s%u", *at ? "," : "", cpu);

	if (*at + n < len) {
		memcpy(list + *at, one, n + 1);
		*at += n;
	}
}

static long lbr_ioc_info(void __user *arg, size_t usize)
{
	struct lbr_snap_info info = {
		.abi_version = LBR_SNAP_ABI_VERSION,
		.backend = lbr_hw.backend,
		.lbr_format = lbr_hw.fmt.format,
		.lbr_depth = lbr_hw.depth,
		.nr_cpus = num_possible_cpus(),
		.buffer_kb = lbr_buf_kb(),
		.nr_targets = lbr_targets_count(),
		.capture = lbr_capture_every_return() ? LBR_SNAP_CAPTURE_ALL :
							LBR_SNAP_CAPTURE_ERRORS,
		.record_max = sizeof(struct lbr_snap_record) +
			      lbr_hw.depth * sizeof(struct lbr_snap_branch) +
			      lbr_stack_depth() * sizeof(u64),
		.stack_depth = lbr_stack_depth(),
	};

	lbr_hw_get_filter(&info.lbr_cpl, &info.lbr_kinds);
	/* Read apart from nr_targets, unlocked: never more than it. */
	info.nr_batch_targets = min(lbr_targets_count_batch(), info.nr_targets);

	/* Logged first: why lbr_read may say msr since the load. */
	lbr_xsave_report();
	info.lbr_read = lbr_xsave_used() ? LBR_SNAP_READ_XSAVES :
					   LBR_SNAP_READ_MSR;
	strscpy(info.backend_name, lbr_hw.name, sizeof(info.backend_name));
	strscpy(info.mode, lbr_hw_mode(), sizeof(info.mode));
	strscpy(info.reason, lbr_hw.reason, sizeof(info.reason));
	strscpy(info.version, LBR_SNAP_VERSION, sizeof(info.version));
	info.nr_cpu_types = lbr_hw_cpu_types(info.cpu_types,
					     LBR_SNAP_MAX_CPU_TYPES);
	lbr_tree_counts(&info.tree_tasks, &info.tree_missed);
	strscpy(info.hypervisor, lbr_hw_hypervisor(), sizeof(info.hypervisor));
	info.nr_cpus_failed = lbr_cpu_failed(info.cpus_failed,
					     sizeof(info.cpus_failed),
					     info.cpu_failure,
					     sizeof(info.cpu_failure));
	info.capture_msrs = lbr_capture_msrs(&info.filtered_msrs);
	/* A look under the events' lock: only for a caller that has room. */
	if (usize > LBR_SNAP_INFO_SIZE_V6 &&
	    lbr_vlbr_cpus_off(!strcmp(lbr_hw_mode(), "perf"),
			      info.cpus_perf_off, sizeof(info.cpus_perf_off),
			      &info.nr_cpus_perf_off))
		return -EINTR;
	/* An older caller's struct is smaller: it gets what it knows. */
	return lbr_struct_out(arg, usize, &info, sizeof(info));
}

static long lbr_ioc_stats(void __user *arg, size_t usize)
{
	struct lbr_snap_target_stats *st;
	struct lbr_snap_stats hdr;
	unsigned int i, n, room;
	long ret;

	ret = lbr_struct_in(&hdr, sizeof(hdr), arg, usize, &hdr.flags,
			    sizeof(hdr) - offsetof(struct lbr_snap_stats, flags));
	if (ret)
		return ret;
	/*
	 * Older callers know fewer fields (none of hook, nr_args, recursion,
	 * inflight in the first ABI, no lbr_off in the second, no state in
	 * the third): each gets
	 * the entries cut to its size, newer ones the rest zeroed.
	 */
	if (!hdr.entry_size)
		hdr.entry_size = LBR_SNAP_TARGET_STATS_SIZE_V1;
	if (hdr.entry_size < LBR_SNAP_TARGET_STATS_SIZE_V1 ||
	    hdr.entry_size > PAGE_SIZE)
		return -EINVAL;
	room = min(hdr.nr, lbr_targets_count());
	st = kvcalloc(room ?: 1, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	n = lbr_targets_stats(st, room);
	for (i = 0; i < min(n, room) && !ret; i++) {
		void __user *dst = u64_to_user_ptr(hdr.stats_ptr +
						   (u64)i * hdr.entry_size);
		size_t len = min_t(size_t, hdr.entry_size, sizeof(*st));

		if (copy_to_user(dst, &st[i], len) ||
		    clear_user(dst + len, hdr.entry_size - len))
			ret = -EFAULT;
	}
	kvfree(st);
	if (ret)
		return ret;

	hdr.nr = n;
	lbr_buf_counts(&hdr.read, &hdr.flushed);
	return lbr_struct_out(arg, usize, &hdr, sizeof(hdr));
}

static long lbr_ioc_target(bool add, void __user *arg, size_t usize)
{
	struct lbr_snap_target_ctl ctl;
	long ret;

	ret = lbr_struct_in(&ctl, sizeof(ctl), arg, usize, &ctl.flags,
			    sizeof(ctl) -
			    offsetof(struct lbr_snap_target_ctl, flags));
	if (ret)
		return ret;
	ctl.spec[sizeof(ctl.spec) - 1] = '\0';
	if (!add)
		return lbr_target_del(ctl.spec);
	ret = lbr_target_add(ctl.spec, &ctl.id, &ctl.hook);
	if (ret)
		return ret;
	return lbr_struct_out(arg, usize, &ctl, sizeof(ctl));
}

/*
 * LBR_SNAP_IOC_ADD_TARGETS and DEL_TARGETS: the entries in, each one's
 * result out, whether the call worked or not.
 */
static long lbr_ioc_targets(bool add, void __user *arg, size_t usize)
{
	const size_t res_off = offsetof(struct lbr_snap_target_entry, id);
	struct lbr_snap_target_entry *e;
	struct lbr_snap_targets hdr;
	size_t res_size;
	unsigned int i;
	long ret;

	ret = lbr_struct_in(&hdr, sizeof(hdr), arg, usize, hdr.reserved,
			    sizeof(hdr.reserved));
	if (ret)
		return ret;
	if (!hdr.nr || hdr.nr > LBR_SNAP_MAX_BATCH ||
	    hdr.entry_size < LBR_SNAP_TARGET_ENTRY_SIZE_V1 ||
	    hdr.entry_size > PAGE_SIZE ||
	    hdr.flags & ~(LBR_SNAP_BATCH_SKIP | LBR_SNAP_BATCH_FALLBACK) ||
	    (!add && hdr.flags))
		return -EINVAL;
	/* The header is written back too: writable before anything is done. */
	hdr.done = 0;
	ret = lbr_struct_out(arg, usize, &hdr, sizeof(hdr));
	if (ret)
		return ret;
	/* What each entry gets back: id, error, and hook if it holds one. */
	res_size = LBR_SNAP_TARGET_ENTRY_SIZE_V1 - res_off;
	if (hdr.entry_size >= offsetofend(struct lbr_snap_target_entry, hook))
		res_size += sizeof(e->hook);
	e = kvcalloc(hdr.nr, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	for (i = 0; i < hdr.nr; i++) {
		const void __user *src = u64_to_user_ptr(hdr.entries_ptr +
							 (u64)i * hdr.entry_size);

		ret = copy_struct_from_user(&e[i], sizeof(*e), src,
					    hdr.entry_size);
		if (!ret && e[i].reserved)
			ret = -EINVAL;
		if (ret)
			goto out;
		/*
		 * The results must be writable before anything is done: a
		 * batch added is not to be told as failed.  The id stays
		 * as given: DEL_TARGETS reads it.
		 */
		e[i].error = 0;
		e[i].hook = 0;
		if (copy_to_user((void __user *)src + res_off, &e[i].id,
				 res_size)) {
			ret = -EFAULT;
			goto out;
		}
	}
	if (add)
		ret = lbr_targets_add_batch(e, hdr.nr,
					    hdr.flags & LBR_SNAP_BATCH_SKIP,
					    hdr.flags & LBR_SNAP_BATCH_FALLBACK,
					    &hdr.done);
	else
		ret = lbr_targets_del_batch(e, hdr.nr, &hdr.done);
	for (i = 0; i < hdr.nr; i++) {
		void __user *dst = u64_to_user_ptr(hdr.entries_ptr +
						   (u64)i * hdr.entry_size);

		if (copy_to_user(dst + res_off, &e[i].id, res_size)) {
			ret = -EFAULT;
			goto out;
		}
	}
	if (lbr_struct_out(arg, usize, &hdr, sizeof(hdr)))
		ret = -EFAULT;
out:
	kvfree(e);
	return ret;
}

static long lbr_ioc_set_capture(unsigned long arg)
{
	if (arg != LBR_SNAP_CAPTURE_ERRORS && arg != LBR_SNAP_CAPTURE_ALL)
		return -EINVAL;
	return lbr_targets_set_capture(arg == LBR_SNAP_CAPTURE_ALL);
}

static long lbr_ioc_set_filter(void __user *arg, size_t usize)
{
	struct lbr_snap_filter f;
	long ret;

	ret = lbr_struct_in(&f, sizeof(f), arg, usize, f.reserved,
			    sizeof(f.reserved));
	if (ret)
		return ret;
	if (f.flags & ~LBR_SNAP_FILTER_ALL)
		return -EINVAL;
	return lbr_task_filter_set(&f);
}

static long lbr_ioc_set_lbr_filter(void __user *arg, size_t usize)
{
	struct lbr_snap_lbr_filter f;
	long ret;

	ret = lbr_struct_in(&f, sizeof(f), arg, usize, f.reserved,
			    sizeof(f.reserved));
	if (ret)
		return ret;
	return lbr_hw_set_filter(f.cpl, f.kinds);
}

/*
 * poll() on @file (the open file description: its dup()s too) reports
 * records once a CPU's ring holds @arg bytes, 0 at every record; at most
 * half a ring, and below what a ring holds when it refuses a record
 * (lbr_buf_mark_max()), so that the mark is always reached.  read() is
 * not changed.
 */
static long lbr_ioc_set_wakeup(struct file *file, unsigned long arg)
{
	struct lbr_dev_file *f = file->private_data;

	if (!(file->f_mode & FMODE_READ))
		return -EBADF;
	if (arg > lbr_buf_mark_max())
		return -EINVAL;
	WRITE_ONCE(f->wake_bytes, arg);
	lbr_buf_mark_set(arg);
	return 0;
}

static long lbr_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	bool add;
	long ret;

	if (lbr_ioc_is(cmd, LBR_SNAP_IOC_GET_INFO, LBR_SNAP_INFO_SIZE_V1))
		return lbr_ioc_info(uarg, _IOC_SIZE(cmd));
	if (lbr_ioc_is(cmd, LBR_SNAP_IOC_GET_STATS, LBR_SNAP_STATS_SIZE_V1)) {
		if (!(file->f_mode & FMODE_READ))
			return -EBADF;
		return lbr_ioc_stats(uarg, _IOC_SIZE(cmd));
	}
	add = lbr_ioc_is(cmd, LBR_SNAP_IOC_ADD_TARGET,
			 LBR_SNAP_TARGET_CTL_SIZE_V1);
	if (add || lbr_ioc_is(cmd, LBR_SNAP_IOC_DEL_TARGET,
			      LBR_SNAP_TARGET_CTL_SIZE_V1)) {
		ret = lbr_may_control(file);
		return ret ? ret : lbr_ioc_target(add, uarg, _IOC_SIZE(cmd));
	}

	add = lbr_ioc_is(cmd, LBR_SNAP_IOC_ADD_TARGETS,
			 sizeof(struct lbr_snap_targets));
	if (add || lbr_ioc_is(cmd, LBR_SNAP_IOC_DEL_TARGETS,
			      sizeof(struct lbr_snap_targets))) {
		ret = lbr_may_control(file);
		return ret ? ret : lbr_ioc_targets(add, uarg, _IOC_SIZE(cmd));
	}

	if (lbr_ioc_is(cmd, LBR_SNAP_IOC_SET_FILTER,
		       sizeof(struct lbr_snap_filter))) {
		ret = lbr_may_control(file);
		return ret ? ret : lbr_ioc_set_filter(uarg, _IOC_SIZE(cmd));
	}

	if (lbr_ioc_is(cmd, LBR_SNAP_IOC_SET_LBR_FILTER,
		       sizeof(struct lbr_snap_lbr_filter))) {
		ret = lbr_may_control(file);
		return ret ? ret : lbr_ioc_set_lbr_filter(uarg, _IOC_SIZE(cmd));
	}

	switch (cmd) {
	case LBR_SNAP_IOC_FLUSH:
		ret = lbr_may_control(file);
		return ret ? ret : lbr_buf_flush();
	case LBR_SNAP_IOC_SET_CAPTURE:
		ret = lbr_may_control(file);
		return ret ? ret : lbr_ioc_set_capture(arg);
	case LBR_SNAP_IOC_SET_WAKEUP:
		return lbr_ioc_set_wakeup(file, arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations lbr_dev_fops = {
	.owner = THIS_MODULE,
	.open = lbr_dev_open,
	.release = lbr_dev_release,
	.show_fdinfo = lbr_dev_show_fdinfo,
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

int lbr_dev_register(void)
{
	return misc_register(&lbr_miscdev);
}

void lbr_dev_unregister(void)
{
	misc_deregister(&lbr_miscdev);
}
