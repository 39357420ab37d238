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
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>

#include "lbr_snap.h"

static DEFINE_PER_CPU(struct perf_event *, lbr_vlbr_event);
/* perf_event_create_kernel_counter()'s error on this CPU, or 0. */
static DEFINE_PER_CPU(int, lbr_vlbr_create_err);
/* Said once a CPU's event is in error, until it runs again. */
static DEFINE_PER_CPU(bool, lbr_vlbr_said);
static enum cpuhp_state lbr_vlbr_state;
static u64 lbr_vlbr_branch_type;
static int lbr_vlbr_error;	/* the first failure while setting up */

/*
 * Held while the events are set up or taken down, and by GET_INFO's look
 * at them: cpus_read_lock() alone does not keep cpuhp_remove_state()'s
 * callbacks from releasing them meanwhile.
 */
static DEFINE_MUTEX(lbr_vlbr_lock);

/*
 * Does perf not run @cpu's event now?  In error state (no counter, or
 * the LBR filter, free for a pinned event), or none was created there
 * (perf_event_create_kernel_counter() failed: its records say NO_LBR).
 * A CPU whose LBR check failed has no event and is not counted here.
 */
static bool lbr_vlbr_off(unsigned int cpu)
{
	struct perf_event *ev = per_cpu(lbr_vlbr_event, cpu);

	if (!ev)
		return per_cpu(lbr_vlbr_create_err, cpu) != 0;
	return READ_ONCE(ev->state) == PERF_EVENT_STATE_ERROR;
}

/*
 * A pinned event perf cannot schedule goes into error state and stays
 * there: perf tries it again only when it is enabled again.  LBR is off
 * on that CPU meanwhile, and its records say WAS_OFF.  Once a second
 * (deferrable: no idle CPU is woken for it), each such event is enabled
 * again (perf_event_enable() takes it out of error and schedules it if
 * it can), and the first time a CPU's fails, the log says so.  An event
 * perf would not create is not tried again: the log said why.
 */
#define LBR_VLBR_RETRY	HZ

static void lbr_vlbr_retry(struct work_struct *work)
{
	struct perf_event *ev;
	unsigned int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		ev = per_cpu(lbr_vlbr_event, cpu);
		if (!ev || !lbr_vlbr_off(cpu)) {
			per_cpu(lbr_vlbr_said, cpu) = false;
			continue;
		}
		if (!per_cpu(lbr_vlbr_said, cpu)) {
			per_cpu(lbr_vlbr_said, cpu) = true;
			pr_warn("cpu%u: perf cannot schedule lbr_snap's branch-stack event (another pinned event holds its counter or the LBR filter): LBR is off there, its records say WAS_OFF, until perf can\n",
				cpu);
		}
		perf_event_enable(ev);
	}
	cpus_read_unlock();
	schedule_delayed_work(to_delayed_work(work), LBR_VLBR_RETRY);
}

static DECLARE_DEFERRABLE_WORK(lbr_vlbr_work, lbr_vlbr_retry);

/**
 * lbr_vlbr_cpus_off - the online CPUs where perf does not run the event
 * @perf_mode: lbr_snap runs in mode=perf
 * @cpus: their list ("1,3"), cut to @len
 * @len: the room in @cpus
 * @nr: set to how many (all of them, listed or not)
 *
 * Process context (GET_INFO).  In mode=perf with no events at all (a
 * filter perf took neither new nor old, lbr_hw_set_filter()), every
 * online CPU; outside mode=perf, none.
 * Return: 0, or -EINTR.
 */
int lbr_vlbr_cpus_off(bool perf_mode, char *cpus, size_t len,
		      unsigned int *nr)
{
	unsigned int cpu;
	size_t at = 0;

	cpus[0] = '\0';
	*nr = 0;
	if (!perf_mode)
		return 0;
	if (mutex_lock_killable(&lbr_vlbr_lock))
		return -EINTR;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (lbr_vlbr_state > 0 && !lbr_vlbr_off(cpu))
			continue;
		(*nr)++;
		lbr_cpu_list_add(cpus, len, &at, cpu);
	}
	cpus_read_unlock();
	mutex_unlock(&lbr_vlbr_lock);
	return 0;
}

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
	per_cpu(lbr_vlbr_create_err, cpu) = 0;
	per_cpu(lbr_vlbr_said, cpu) = false;
	depth = lbr_hw_cpu_online(cpu, true);
	if (!depth)
		return 0;
	ev = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
	per_cpu(lbr_vlbr_create_err, cpu) = PTR_ERR_OR_ZERO(ev);
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
	per_cpu(lbr_vlbr_create_err, cpu) = 0;
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

	mutex_lock(&lbr_vlbr_lock);
	lbr_vlbr_branch_type = branch_type;
	lbr_vlbr_error = 0;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "lbr_snap:vlbr",
				lbr_vlbr_online, lbr_vlbr_offline);
	if (ret >= 0 && lbr_vlbr_error) {
		cpuhp_remove_state(ret);
		ret = lbr_vlbr_error;
	}
	if (ret > 0) {
		lbr_vlbr_state = ret;
		ret = 0;
		schedule_delayed_work(&lbr_vlbr_work, LBR_VLBR_RETRY);
	}
	mutex_unlock(&lbr_vlbr_lock);
	return ret;
}

/* Are the events there (lbr_hw_set_filter() may have failed to renew them)? */
bool lbr_vlbr_running(void)
{
	return lbr_vlbr_state > 0;
}

/* Process context, never under cpus_read_lock(): the work takes it. */
void lbr_vlbr_stop(void)
{
	/* Before the events go: the work reads them. */
	cancel_delayed_work_sync(&lbr_vlbr_work);
	mutex_lock(&lbr_vlbr_lock);
	if (lbr_vlbr_state > 0)
		cpuhp_remove_state(lbr_vlbr_state);
	lbr_vlbr_state = 0;
	mutex_unlock(&lbr_vlbr_lock);
}
