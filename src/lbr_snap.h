/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbr_snap internals shared between the module's files.
 */
#ifndef LBR_SNAP_INTERNAL_H
#define LBR_SNAP_INTERNAL_H

#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/types.h>

#include "../include/lbr_snap.h"
#include "compat.h"
#include "lbr_decode.h"
#include "lbr_read.h"

#define LBR_SNAP_VERSION	"0.2.0"

/*
 * --- LBR hardware (lbr_msr.c; struct lbr_hw, lbr_hw and lbr_hw_read() in
 * lbr_read.h, shared with the unit test) ---
 */

int lbr_hw_detect(const char *force);
void lbr_hw_report(void);
int lbr_hw_start(const char *mode, const char *filter);
void lbr_hw_stop(void);
const char *lbr_hw_mode(void);
unsigned int lbr_hw_cpu_types(struct lbr_snap_cpu_type *t, unsigned int max);
unsigned int lbr_hw_cpu_online(unsigned int cpu);
/* Entries this CPU reads: its own depth (hybrid CPUs differ). */
DECLARE_PER_CPU(unsigned int, lbr_cpu_depth);

/*
 * Stop recording by clearing the backend's enable bit and return the
 * control MSR as it was.  Only two MSR instructions and an AND: no branch
 * or call may come before the WRMSR (checked by tests/check-freeze-first.sh).
 */
static __always_inline u64 lbr_hw_freeze(void)
{
	u64 ctl = lbr_rdmsr(lbr_hw.ctl_msr);

	lbr_wrmsr(lbr_hw.ctl_msr, ctl & ~lbr_hw.enable_mask);
	return ctl;
}

/* Resume recording if it was on when lbr_hw_freeze() returned @ctl. */
static __always_inline void lbr_hw_unfreeze(u64 ctl)
{
	if (ctl & lbr_hw.enable_mask)
		lbr_wrmsr(lbr_hw.ctl_msr, lbr_rdmsr(lbr_hw.ctl_msr) |
			  lbr_hw.enable_mask);
}

/*
 * Did LBR record again between lbr_hw_freeze() and now?  Called after
 * lbr_hw_read(), before lbr_hw_unfreeze(): one RDMSR.  perf turns LBR back
 * on whatever froze it: before perfmon version 4 as its PMI handler
 * returns (__intel_pmu_lbr_enable(), arch/x86/events/intel/lbr.c, returns
 * early in a PMI only from version 4 on), and on any version wherever it
 * re-enables the PMU (perf_pmu_enable() from an interrupt, such as the
 * tick's frequency adjustment, taken in a kretprobe handler's window
 * before lbr_capture() turns interrupts off; bpf_get_branch_snapshot()).
 */
static __always_inline bool lbr_hw_ran_again(void)
{
	return lbr_rdmsr(lbr_hw.ctl_msr) & lbr_hw.enable_mask;
}

/* --- mode=perf (vlbr_event.c) --- */

int lbr_vlbr_start(u64 branch_type);
void lbr_vlbr_stop(void);

/* --- targets (targets.c) and their hooks --- */

struct lbr_counters {
	u64 hits;
	u64 captured;
	u64 filtered;
	u64 dropped;
	u64 recursion;
	u64 lbr_off;	/* returns whose freeze found LBR off */
};

/* The hook a target asks for: @hook in its spec, else hook=. */
enum lbr_hook_want {
	LBR_WANT_KRETPROBE,
	LBR_WANT_FEXIT,
	LBR_WANT_AUTO,		/* fexit where possible, else kretprobe */
	LBR_WANT_DEFAULT,
};

struct lbr_target {
	struct kretprobe rp;	/* the kretprobe hook */
	int slot;		/* the fexit hook's trampoline, or -1 */
	struct list_head pending; /* fexit: detached, calls maybe in flight */
	unsigned long start;	/* function entry */
	unsigned long size;
	u32 id;
	u8 ret_type;		/* enum lbr_snap_ret_type */
	u8 hook;		/* enum lbr_snap_hook, once attached */
	u8 want;		/* enum lbr_hook_want */
	s8 nargs;		/* register arguments (sym/N), -1: unknown */
	struct lbr_counters __percpu *counters;
	char name[LBR_SNAP_NAME_LEN];
};

int lbr_targets_set_hook(const char *hook);
void lbr_target_free(struct lbr_target *t);
const char *lbr_hook_name(u8 hook);
int lbr_targets_register(const char *spec);
void lbr_targets_unregister(void);
int lbr_target_add(const char *spec, u32 *id, u32 *hook);
int lbr_target_del(const char *name);
unsigned int lbr_targets_count(void);
unsigned int lbr_targets_stats(struct lbr_snap_target_stats *st);

/* capture.c */
void lbr_capture(struct lbr_target *t, unsigned long ax, unsigned long caller,
		 bool frozen, u64 ctl, unsigned long ret_site);
void lbr_capture_set_every_return(bool all);
bool lbr_capture_every_return(void);

/* kretprobe_hook.c */
void lbr_kretprobe_init(void);
int lbr_kretprobe_attach(struct lbr_target *t);
void lbr_kretprobe_enable(struct lbr_target *t);
void lbr_kretprobe_detach(struct lbr_target **ts, unsigned int n);
unsigned long lbr_kretprobe_missed(const struct lbr_target *t);

/* fexit_hook.c */
int lbr_fexit_start(void);
void lbr_fexit_stop(void);
int lbr_fexit_attach(struct lbr_target *t);
void lbr_fexit_detach(struct lbr_target **ts, unsigned int n);
long lbr_fexit_inflight(const struct lbr_target *t);

/* record_buffer.c: what the capture path needs of the buffers */
struct lbr_ring;
struct lbr_buf_resv {
	struct lbr_ring *ring;
	unsigned long head;
};
void *lbr_buf_reserve(unsigned long len, struct lbr_buf_resv *res);
void lbr_buf_commit(const struct lbr_buf_resv *res);
/* and what the device needs */
struct file;
struct poll_table_struct;
ssize_t lbr_buf_read(char __user *buf, size_t count, bool nonblock);
__poll_t lbr_buf_poll(struct file *file, struct poll_table_struct *wait);
int lbr_buf_flush(void);
void lbr_buf_counts(u64 *read, u64 *flushed);
unsigned int lbr_buf_kb(void);
int lbr_buf_init(unsigned int kb);
void lbr_buf_exit(void);

/* device.c */
int lbr_dev_register(void);
void lbr_dev_unregister(void);

#endif /* LBR_SNAP_INTERNAL_H */
