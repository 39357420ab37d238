// SPDX-License-Identifier: GPL-2.0
/*
 * mode=perf: keep LBR on through perf, with one kernel counter per online
 * CPU that asks for a branch stack and never samples.  This is the per-CPU
 * "VLBR event" of the design lbr_snap descends from; the kernel's own
 * get_branch_snapshot selftest and retsnoop do the same from user space.
 * Perf then owns enabling LBR, context switches and conflicts with other
 * LBR users.  A cycles event is used: the raw VLBR event 0x1b00 proved
 * unreliable (commit 3ebf5212bf04, "selftests/bpf: Use cycles instead of
 * raw event in get_branch_snapshot").
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/percpu.h>

#include "lbr_snap.h"

static DEFINE_PER_CPU(struct perf_event *, lbr_vlbr_event);
static enum cpuhp_state lbr_vlbr_state;
static u64 lbr_vlbr_branch_type;
static int lbr_vlbr_error;	/* the first failure while setting up */

static int lbr_vlbr_online(unsigned int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		/* Never overflows in practice: perf only keeps LBR running. */
		.sample_period = 1ULL << 62,
		.sample_type = PERF_SAMPLE_BRANCH_STACK,
		.branch_sample_type = lbr_vlbr_branch_type,
		.pinned = 1,
	};
	struct perf_event *ev;
	unsigned int depth;

	/*
	 * On @cpu itself (CPUHP_AP_ONLINE_DYN): the depth to read it with,
	 * published once the event exists (a pinned event perf cannot
	 * schedule leaves LBR off: those records carry WAS_OFF).
	 */
	__this_cpu_write(lbr_cpu_depth, 0);
	depth = lbr_hw_cpu_online(cpu, true);
	if (!depth)
		return 0;
	ev = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
	if (IS_ERR(ev)) {
		/*
		 * Never fail a CPU's onlining for this: at setup the error
		 * makes lbr_vlbr_start() fail, later the CPU goes without.
		 */
		if (!lbr_vlbr_error)
			lbr_vlbr_error = PTR_ERR(ev);
		if (lbr_vlbr_state > 0)
			pr_warn("cpu%u: no branch-stack event (%ld): no LBR records from it\n",
				cpu, PTR_ERR(ev));
		return 0;
	}
	per_cpu(lbr_vlbr_event, cpu) = ev;
	/* As raw mode's: perf maps the kinds and CPLs the same way. */
	__this_cpu_write(lbr_cpu_rets, lbr_hw_filter_keeps_rets());
	barrier();	/* a capture here reads rets once depth is set */
	__this_cpu_write(lbr_cpu_depth, depth);
	return 0;
}

static int lbr_vlbr_offline(unsigned int cpu)
{
	struct perf_event *ev = per_cpu(lbr_vlbr_event, cpu);

	/* Nothing read from here once perf may let LBR go. */
	__this_cpu_write(lbr_cpu_depth, 0);
	per_cpu(lbr_vlbr_event, cpu) = NULL;
	if (ev)
		perf_event_release_kernel(ev);
	return 0;
}

/**
 * lbr_vlbr_start - create the per-CPU events, now and on CPUs coming online
 * @branch_type: PERF_SAMPLE_BRANCH_* filter
 */
int lbr_vlbr_start(u64 branch_type)
{
	int ret;

	lbr_vlbr_branch_type = branch_type;
	lbr_vlbr_error = 0;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "lbr_snap:vlbr",
				lbr_vlbr_online, lbr_vlbr_offline);
	if (ret < 0)
		return ret;
	if (lbr_vlbr_error) {
		cpuhp_remove_state(ret);
		return lbr_vlbr_error;
	}
	lbr_vlbr_state = ret;
	return 0;
}

/* Are the events there (lbr_hw_set_filter() may have failed to renew them)? */
bool lbr_vlbr_running(void)
{
	return lbr_vlbr_state > 0;
}

void lbr_vlbr_stop(void)
{
	if (lbr_vlbr_state > 0)
		cpuhp_remove_state(lbr_vlbr_state);
	lbr_vlbr_state = 0;
}
