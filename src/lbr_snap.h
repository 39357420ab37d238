/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbr_snap internals shared between the module's files.
 */
#ifndef LBR_SNAP_INTERNAL_H
#define LBR_SNAP_INTERNAL_H

#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/refcount.h>
#include <linux/types.h>

#include "../include/lbr_snap.h"
#include "compat.h"
#include "lbr_decode.h"
#include "lbr_read.h"

#define LBR_SNAP_VERSION	"0.2.0"

/*
 * --- LBR hardware (lbr_msr.c; struct lbr_hw, lbr_hw and lbr_hw_read_raw() in
 * lbr_read.h, shared with the unit test) ---
 */

int lbr_hw_detect(const char *force);
void lbr_hw_report(void);
const char *lbr_hw_hypervisor(void);
/* lbr_filter='s default: the kernel's branches of every kind. */
#define LBR_FILTER_DEFAULT	"kernel"
int lbr_hw_start(const char *mode, const char *filter);
void lbr_hw_stop(void);
const char *lbr_hw_mode(void);
int lbr_hw_set_filter(u32 cpl, u32 kinds);
void lbr_hw_get_filter(u32 *cpl, u32 *kinds);
bool lbr_hw_filter_keeps_rets(void);
unsigned int lbr_hw_cpu_types(struct lbr_snap_cpu_type *t, unsigned int max);
unsigned int lbr_hw_cpu_online(unsigned int cpu, bool probe);
/* Entries this CPU reads: its own depth (hybrid CPUs differ). */
DECLARE_PER_CPU(unsigned int, lbr_cpu_depth);
/* Does its LBR filter, as written, keep the kernel's returns? */
DECLARE_PER_CPU(bool, lbr_cpu_rets);

/*
 * Stop recording by clearing the backend's enable bit and return the
 * control MSR's low half as it was.  RDMSR, a copy and an AND of the low
 * half, WRMSR: no branch or call may come before the WRMSR (checked by
 * tests/check-freeze-first.sh).  Every backend's enable bit is in the low
 * half (lbr_hw.freeze_keep is the rest of it); the high half is written
 * back as it was read.
 */
static __always_inline u32 lbr_hw_freeze(void)
{
	u32 lo, hi;

	lbr_rdmsr_lohi(lbr_hw.ctl_msr, &lo, &hi);
	lbr_wrmsr_lohi(lbr_hw.ctl_msr, lo & lbr_hw.freeze_keep, hi);
	return lo;
}

/* Resume recording if it was on when lbr_hw_freeze() returned @ctl. */
static __always_inline void lbr_hw_unfreeze(u32 ctl)
{
	u32 lo, hi;

	if (ctl & lbr_hw.enable_mask) {
		lbr_rdmsr_lohi(lbr_hw.ctl_msr, &lo, &hi);
		lbr_wrmsr_lohi(lbr_hw.ctl_msr, lo | (u32)lbr_hw.enable_mask,
			       hi);
	}
}

/*
 * Did LBR record again between lbr_hw_freeze() and now?  Called after
 * lbr_hw_read_raw(), before lbr_hw_unfreeze(): one RDMSR.  perf turns LBR back
 * on whatever froze it: before perfmon version 4 as its PMI handler
 * returns (__intel_pmu_lbr_enable(), arch/x86/events/intel/lbr.c, returns
 * early in a PMI only from version 4 on), and on any version wherever it
 * re-enables the PMU (perf_pmu_enable(); bpf_get_branch_snapshot()).
 * Both hooks freeze with interrupts off, so on this path it is the PMI,
 * an NMI.
 */
static __always_inline bool lbr_hw_ran_again(void)
{
	return lbr_rdmsr(lbr_hw.ctl_msr) & lbr_hw.enable_mask;
}

/*
 * Did perf's PMI freeze LBR without clearing the enable bit (the global
 * status's LBR_FRZ, lbr_hw.frz_msr)?  The entries then end where the
 * counter overflowed, before the return.  perf's NMI handler unfreezes
 * before the NMI ends (on Intel before it calls the overflow handlers,
 * on AMD after), so only a return in an NMI looks: one RDMSR there, none
 * elsewhere, and none where @ctl says nothing freezes on a PMI
 * (lbr_hw.frz_gate, DEBUGCTL's FREEZE_LBRS_ON_PMI on legacy Intel).  A
 * return in the few instructions between the overflow and the NMI is not
 * seen: it is missing from its own entries.
 */
#define LBR_GLOBAL_STATUS_LBR_FRZ	BIT_ULL(58)

static __always_inline bool lbr_hw_pmi_frozen(u32 ctl)
{
	return lbr_hw.frz_msr && (!lbr_hw.frz_gate || (ctl & lbr_hw.frz_gate)) &&
	       in_nmi() &&
	       (lbr_rdmsr(lbr_hw.frz_msr) & LBR_GLOBAL_STATUS_LBR_FRZ);
}

/*
 * Was LBR off before the hook froze it, as lbr_hw_freeze() found @ctl?
 * Someone else turned it off (perf, KVM, /dev/cpu/N/msr) or perf's PMI
 * froze it, or the CPU came back from a reset without it.
 */
static __always_inline bool lbr_hw_was_off(u32 ctl)
{
	return !(ctl & lbr_hw.enable_mask) || lbr_hw_pmi_frozen(ctl);
}

/* --- each CPU's LBR checked before use (lbr_selftest.c) --- */

void lbr_cpu_health_clear(unsigned int cpu);
int lbr_cpu_probe_msrs(unsigned int cpu, unsigned int depth);
void lbr_cpu_write_faulted(unsigned int cpu, u32 msr);
int lbr_cpu_selftest(unsigned int cpu, unsigned int depth, u64 ctl);
void lbr_cpu_health_report(unsigned int cpu);
unsigned int lbr_cpu_failed(char *cpus, size_t clen, char *why, size_t wlen);
/* device.c: a CPU appended to a GET_INFO list ("1,3"), cut to @len. */
void lbr_cpu_list_add(char *list, size_t len, size_t *at, unsigned int cpu);

/* --- mode=perf (vlbr_event.c) --- */

int lbr_vlbr_start(u64 branch_type);
void lbr_vlbr_stop(void);
bool lbr_vlbr_running(void);
int lbr_vlbr_cpus_off(bool perf_mode, char *cpus, size_t len,
		      unsigned int *nr);

/* --- LBR back on after a debug exception, mode=raw (lbr_db.c) --- */

int lbr_db_start(void (*rearm)(void));
void lbr_db_stop(void);
void lbr_db_check_soon(void);

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

/* Errnos a target's spec can list (sym=-ERR,...). */
#define LBR_TARGET_ERRNOS	8

struct lbr_target {
	struct kretprobe rp;	/* the kretprobe hook */
	int slot;		/* the fexit hook's trampoline, or -1 */
	struct list_head pending; /* fexit: detached, calls maybe in flight */
	struct lbr_group *group; /* fexit: the batch's group it is in */
	refcount_t grefs;	/* fexit: groups whose table holds it */
	bool leaving;		/* fexit: removed, its group not yet */
	unsigned long start;	/* function entry */
	unsigned long size;
	u32 id;
	u8 ret_type;		/* enum lbr_snap_ret_type */
	u8 hook;		/* enum lbr_snap_hook, once attached */
	u8 want;		/* enum lbr_hook_want */
	s8 nargs;		/* register arguments (sym/N or BTF), -1: unknown */
	s8 btf_reg_args;	/* BTF: all this many arguments are in
				 * registers; -1: not so, or unknown
				 */
	int stack_words;	/* BTF: words of stack arguments at most,
				 * or LBR_BTF_STACK_*
				 */
	bool typed;		/* the spec gave %type */
	bool gone;		/* its module went, and the hook with it */
	bool batch;		/* added by a batch (ADD_TARGETS) */
	char no_fexit[192];	/* "auto" took a kretprobe: why not fexit */
	u8 nr_errnos;		/* errnos listed: 0, every error */
	u16 errnos[LBR_TARGET_ERRNOS];	/* positive */
	struct lbr_counters __percpu *counters;
	char name[LBR_SNAP_NAME_LEN];
};

int lbr_targets_set_hook(const char *hook);
void lbr_target_free(struct lbr_target *t);
const char *lbr_hook_name(u8 hook);
int lbr_targets_register(const char *spec);
int lbr_targets_watch_modules(void);
void lbr_targets_unwatch_modules(void);
int lbr_targets_set_capture(bool all);
int lbr_targets_check_entry(void);

/* --- the call stack of a record (call_stack.c) --- */
int lbr_stack_set_depth(unsigned int depth);
unsigned int lbr_stack_depth(void);
unsigned int lbr_stack_save(u64 *out, unsigned int max, unsigned long caller,
			    unsigned long lo, unsigned long hi);

/* errno_names.c */
int lbr_errno_by_name(const char *name);

/* --- the task filter (task_filter.c) --- */
struct task_struct;
bool lbr_task_wanted(void);
bool lbr_task_surely_out(const struct task_struct *t);
int lbr_task_filter_set(const struct lbr_snap_filter *f);

/* --- what the hooks skip before they freeze (task_follow.c) --- */
void lbr_follow_pause(void);
void lbr_follow_update(u32 flags);
void __lbr_follow_learn(void);
extern bool lbr_follow_on;

/* A return turned away: learn its task, where the tree filter is set. */
static __always_inline void lbr_follow_learn(void)
{
	if (READ_ONCE(lbr_follow_on))
		__lbr_follow_learn();
}
void lbr_follow_unname(struct task_struct *t);

/* --- the tree filter's tasks and their system calls (task_tree.c) --- */
bool lbr_tree_has(const struct task_struct *t);
bool lbr_tree_syscall(u32 *seq, s32 *nr, u64 *begun_ns, bool *compat);
void lbr_tree_counts(u32 *tasks, u32 *missed);
int lbr_tree_check(pid_t tgid);
int lbr_tree_set(pid_t tgid);
void lbr_tree_exit_module(void);
void lbr_targets_unregister(void);
int lbr_target_add(const char *spec, u32 *id, u32 *hook);
int lbr_target_del(const char *name);
unsigned int lbr_targets_count(void);
unsigned int lbr_targets_count_batch(void);
unsigned int lbr_targets_stats(struct lbr_snap_target_stats *st,
			       unsigned int room);
int lbr_targets_add_batch(struct lbr_snap_target_entry *e, unsigned int nr,
			  bool skip, bool fallback, unsigned int *done);
int lbr_targets_del_batch(struct lbr_snap_target_entry *e, unsigned int nr,
			  unsigned int *done);

/* btf_func.c: what vmlinux's BTF says of a function */
#define LBR_BTF_RET_UNKNOWN	(-1)	/* no BTF, or not a scalar */
#define LBR_BTF_RET_VOID	(-2)
#define LBR_BTF_STACK_UNKNOWN	(-1)	/* no prototype in BTF */
#define LBR_BTF_STACK_UNBOUNDED	(-2)	/* variadic, or a large struct */
struct lbr_btf_func {
	int ret_type;		/* enum lbr_snap_ret_type or LBR_BTF_RET_* */
	int nargs;		/* all in registers: how many; else -1 */
	int stack_words;	/* stack arguments at most, or LBR_BTF_STACK_* */
};
struct lbr_btf;
struct lbr_btf *lbr_btf_open(void);
void lbr_btf_close(struct lbr_btf *b);
int lbr_btf_func(struct lbr_btf *b, const char *name,
		 struct lbr_btf_func *fi);

/* capture.c (and capture.h: lbr_capture(), inline in the hooks) */
void lbr_capture_set_every_return(bool all);
void __init lbr_capture_init(void);
u32 lbr_capture_msrs(u32 *filtered);
bool lbr_capture_every_return(void);

/* kretprobe_hook.c */
void lbr_kretprobe_init(void);
int lbr_kretprobe_attach(struct lbr_target *t);
bool lbr_kretprobe_entry_checked(void);
void lbr_kretprobe_check_entry(struct lbr_target *t);
int lbr_kretprobe_enable(struct lbr_target *t);
void lbr_kretprobe_set_max(unsigned int max);
unsigned int lbr_kretprobe_max(void);
unsigned int lbr_kretprobe_room(void);
void lbr_kretprobe_detach(struct lbr_target **ts, unsigned int n);
unsigned long lbr_kretprobe_missed(const struct lbr_target *t);

/* fexit_hook.c */
int lbr_fexit_start(void);
void lbr_fexit_stop(void);
int lbr_fexit_attach(struct lbr_target *t, bool asked);
int lbr_fexit_check_many(struct lbr_target *t);
int lbr_fexit_batch_room(unsigned int n);
unsigned int lbr_fexit_batch_quota(unsigned int want);
int lbr_fexit_attach_many(struct lbr_target **ts, unsigned int n);
void lbr_fexit_detach(struct lbr_target **ts, unsigned int n);
long lbr_fexit_inflight(const struct lbr_target *t);
void lbr_fexit_recapture(const struct lbr_target *t, bool all);
u64 lbr_fexit_quiet_returns(const struct lbr_target *t);

/*
 * A record as the capture path leaves it in a ring: the ABI's header, then
 * the LBR as lbr_hw_read_raw() copied it (or lbr_read_frozen() from one
 * XSAVES, laid out alike), then hdr.nr_stack frames of its
 * call stack.  read() hands out the decoded record instead
 * (lbr_record_decode(), record_decode.c), whose nr_entries, size,
 * probe_entries and LBR_SNAP_REC_NO_RETURN it sets.
 */
struct lbr_raw_record {
	struct lbr_snap_record hdr;	/* hdr.size: this record's bytes */
	u64 ret_site;		/* where the target's RET lands */
	u16 depth;		/* entries copied, 0: none */
	u8 planes;		/* LBR_RAW_* */
	u8 reserved;
	u32 tos;		/* legacy TOS at the freeze */
	u64 msr[];		/* lbr_raw_msrs(planes, depth) values,
				 * then the stack
				 */
};

/* record_decode.c */
#define LBR_RECORD_DECODED_MAX	LBR_SNAP_RECORD_MAX
unsigned int lbr_record_decode(const struct lbr_snap_record *stored,
			       unsigned int len, struct lbr_snap_record *out);

/* record_buffer.c: what the capture path needs of the buffers */
struct lbr_ring;
struct lbr_buf_resv {
	struct lbr_ring *ring;
	unsigned long head;
};
void *lbr_buf_reserve(unsigned long len, struct lbr_buf_resv *res);
void lbr_buf_trim(struct lbr_buf_resv *res, void *rec, unsigned long len);
void lbr_buf_commit(const struct lbr_buf_resv *res);
/* and what the device needs */
struct file;
struct poll_table_struct;
ssize_t lbr_buf_read(char __user *buf, size_t count, bool nonblock);
__poll_t lbr_buf_poll(struct file *file, struct poll_table_struct *wait,
		      unsigned long mark);
void lbr_buf_mark_set(unsigned long mark);
int lbr_buf_flush(void);
void lbr_buf_counts(u64 *read, u64 *flushed);
unsigned int lbr_buf_kb(void);
unsigned long lbr_buf_mark_max(void);
int lbr_buf_init(unsigned int kb);
void lbr_buf_exit(void);

/* device.c */
int lbr_dev_register(void);
void lbr_dev_unregister(void);

#endif /* LBR_SNAP_INTERNAL_H */
