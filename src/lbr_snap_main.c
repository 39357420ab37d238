// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap: freeze and read the Last Branch Record when a kernel function
 * returns, to show the branches that led to its return value.
 *
 * Module init/exit and parameters.  The buffers live in record_buffer.c,
 * /dev/lbr_snap and its ioctls in device.c.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/string.h>

#include "lbr_snap.h"
#include "lbr_xsave.h"

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
		 "How LBR stays on: auto (default: perf if it can, else raw, but not where perf refuses with EBUSY), perf (a branch-stack perf event per CPU), raw (lbr_snap programs the MSRs)");

static char *lbr_filter = LBR_FILTER_DEFAULT;
module_param(lbr_filter, charp, 0444);
MODULE_PARM_DESC(lbr_filter,
		 "kernel (default), user or any, then optionally kinds to keep: jcc,rel_call,ind_call,ret,ind_jmp,rel_jmp,far or perf's any,any_call,any_return,cond,call,ind_jump (without the first word: the kernel's); SET_LBR_FILTER changes it, not this file");

/*
 * Off by default: the path to a return is in FROM and TO, and LBR_INFO
 * (prediction, cycles, Arch LBR's branch type) would add a third RDMSR per
 * entry, 32 more on a 32-deep stack, to every capture, with interrupts off
 * and LBR frozen.  Formats that keep the prediction in FROM (Haswell,
 * Broadwell) have it either way.
 */
static bool lbr_info;
module_param(lbr_info, bool, 0444);
MODULE_PARM_DESC(lbr_info,
		 "Read LBR_INFO too: mispredictions, cycle counts and Arch LBR branch types, at one more RDMSR per entry (default 0)");

/*
 * Arch LBR by one XSAVES of its state component where the kernel enabled
 * it (lbr_xsave.c), as perf reads it; the MSRs one by one otherwise.
 */
static char *lbr_read = "auto";
module_param(lbr_read, charp, 0444);
MODULE_PARM_DESC(lbr_read,
		 "How a capture reads Arch LBR: auto (default: XSAVES where it works, else the MSRs), msr, xsaves (fail if it cannot)");

/*
 * The call stack of every record, as retsnoop shows it: the unwinder runs
 * once the LBR is read and unfrozen, so it costs no entries, only time,
 * and only for a return that is recorded.
 */
static unsigned int stack_depth = 16;
module_param(stack_depth, uint, 0444);
MODULE_PARM_DESC(stack_depth,
		 "Frames of the kernel call stack kept with each record, from the target's caller outwards: 0 (none) to 64 (default 16)");

/*
 * A batch's functions past fexit's room take kretprobes, each with its
 * own instances (some 600 bytes a function on 2 CPUs, more with more
 * CPUs): a bound on them all.
 */
static unsigned int batch_kretprobes = 4096;
module_param(batch_kretprobes, uint, 0444);
MODULE_PARM_DESC(batch_kretprobes,
		 "Kretprobes that batches may take in all, past the functions fexit takes (default 4096)");

/*
 * The buffers take buffer_kb on every possible CPU (record_buffer.c).
 * Their allocation never WARNs, but memory the machine cannot spare would
 * starve it: refuse what would take more than half the memory available
 * now.  A heuristic: memory can go between this check and the
 * allocation, which then fails with ENOMEM.
 */
static int __init lbr_buffer_fits(unsigned int kb)
{
	u64 want = (u64)kb * num_possible_cpus();
	u64 avail = (u64)si_mem_available() << (PAGE_SHIFT - 10);

	if (want <= avail / 2)
		return 0;
	pr_err("buffer_kb=%u: %llu MiB for %u CPUs is more than half the memory available (%llu MiB)\n",
	       kb, want >> 10, num_possible_cpus(), avail >> 10);
	return -ENOMEM;
}

static int __init lbr_snap_init(void)
{
	int ret;

	if (sysfs_streq(capture, "all")) {
		lbr_capture_set_every_return(true);
	} else if (!sysfs_streq(capture, "errors")) {
		pr_err("capture=%s: use errors or all\n", capture);
		return -EINVAL;
	}
	if (buffer_kb < 8 || buffer_kb > 1024 * 1024) {
		pr_err("buffer_kb=%u: use 8 to 1048576\n", buffer_kb);
		return -EINVAL;
	}
	ret = lbr_buffer_fits(buffer_kb);
	if (ret)
		return ret;
	ret = lbr_xsave_parse(lbr_read);
	if (ret)
		return ret;

	lbr_kretprobe_set_max(batch_kretprobes);
	ret = lbr_stack_set_depth(stack_depth);
	if (ret)
		return ret;
	ret = lbr_targets_set_hook(hook);
	if (ret)
		return ret;
	ret = lbr_hw_detect(backend);
	if (ret)
		return ret;
	lbr_hw_set_planes(lbr_info);

	ret = lbr_buf_init(buffer_kb);
	if (ret)
		return ret;

	ret = lbr_hw_start(mode, lbr_filter);
	if (ret)
		goto err_rb;
	ret = lbr_xsave_start();
	if (ret)
		goto err_hw;
	ret = lbr_fexit_start();
	if (ret) {
		pr_err("lbr_snap_fexit has another client (%d)\n", ret);
		goto err_xsave;
	}
	lbr_capture_init();
	ret = lbr_targets_watch_modules();
	if (ret)
		goto err_fexit;
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
		goto err_watch;
	ret = lbr_dev_register();
	if (ret)
		goto err_targets;
	lbr_hw_report();
	pr_info("loaded: %u targets, capture=%s, backend %s, mode %s, read %s, %u KiB per CPU, stack_depth=%u\n",
		lbr_targets_count(),
		lbr_capture_every_return() ? "all" : "errors",
		lbr_hw.name, lbr_hw_mode(),
		lbr_xsave_used() ? "xsaves" : "msr", buffer_kb,
		lbr_stack_depth());
	if (lbr_hw.backend == LBR_SNAP_BACKEND_ARCH)
		pr_info("Arch LBR read by %s: %s\n",
			lbr_xsave_used() ? "XSAVES" : "RDMSR",
			lbr_xsave_reason());
	return 0;

err_targets:
	lbr_targets_unregister();
err_watch:
	lbr_targets_unwatch_modules();
err_fexit:
	lbr_fexit_stop();
err_xsave:
	lbr_xsave_stop();
err_hw:
	lbr_hw_stop();
err_rb:
	lbr_buf_exit();
	return ret;
}

static void __exit lbr_snap_exit(void)
{
	lbr_dev_unregister();
	lbr_targets_unwatch_modules();
	lbr_targets_unregister();
	lbr_fexit_stop();
	/* No capture runs now, a draining trampoline's included. */
	lbr_tree_exit_module();
	lbr_xsave_stop();
	lbr_hw_stop();
	lbr_buf_exit();
	pr_info("unloaded\n");
}

module_init(lbr_snap_init);
module_exit(lbr_snap_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("lbr_snap developers");
MODULE_DESCRIPTION("Capture the Last Branch Record when kernel functions return");
MODULE_VERSION(LBR_SNAP_VERSION);
