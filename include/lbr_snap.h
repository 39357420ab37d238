/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * lbr_snap user ABI: the records read from /dev/lbr_snap and its ioctls.
 *
 * This header is shared by the kernel module and user space; it uses only
 * fixed-width types so a 64-bit kernel and any user space agree on layout.
 *
 * Records
 * -------
 * read() on /dev/lbr_snap returns whole records only, back to back, merged
 * across CPUs in timestamp order.  Each record starts with a struct
 * lbr_snap_record whose @size is the full length of the record (header,
 * branch entries and call stack).  A reader must step from one record to the next by @size
 * and find the entries at @hdr_size, each @entry_size bytes long, so that
 * fields added at the end of the header or of an entry in later versions are
 * skipped by older readers.  If the user buffer is too small for the next
 * record, read() fails with EINVAL; LBR_SNAP_RECORD_MAX bytes are always
 * enough.
 *
 * The call stack (stack_depth=): when @nr_stack is not 0, that many __u64
 * kernel return addresses follow the entries, at @hdr_size + @nr_entries *
 * @entry_size: the first is @caller, where the target returned to, the
 * next where its caller returns to, and so on outwards.  Readers that step
 * by @size skip them.
 */
#ifndef _UAPI_LBR_SNAP_H
#define _UAPI_LBR_SNAP_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define LBR_SNAP_DEVICE		"/dev/lbr_snap"
#define LBR_SNAP_ABI_VERSION	1

#define LBR_SNAP_MAX_ENTRIES	64	/* deepest LBR any backend reads */
#define LBR_SNAP_MAX_TARGETS	64	/* targets= accepts at most this many */
#define LBR_SNAP_MAX_ALL_TARGETS 65536	/* with batches (ADD_TARGETS) */
#define LBR_SNAP_MAX_BATCH	16384	/* entries of one ADD/DEL_TARGETS */
#define LBR_SNAP_NAME_LEN	128	/* symbol names, including the NUL */
#define LBR_SNAP_COMM_LEN	16
#define LBR_SNAP_MAX_STACK	64	/* stack_depth= takes at most this */

/* struct lbr_snap_branch.flags */
#define LBR_SNAP_BR_MISPRED	(1u << 0)	/* branch was mispredicted */
#define LBR_SNAP_BR_PREDICTED	(1u << 1)	/* hardware says predicted */
#define LBR_SNAP_BR_IN_TX	(1u << 2)	/* inside a TSX transaction */
#define LBR_SNAP_BR_ABORT	(1u << 3)	/* TSX abort */
#define LBR_SNAP_BR_CYCLES	(1u << 4)	/* @cycles is valid */
#define LBR_SNAP_BR_SPEC	(1u << 5)	/* AMD: recorded speculatively */
#define LBR_SNAP_BR_WRONG_PATH	(1u << 6)	/* AMD: on a mispredicted path;
						 * never set: such entries
						 * are dropped, as holes are
						 */

/* struct lbr_snap_branch.type, when the hardware reports it (Arch LBR) */
enum lbr_snap_branch_type {
	LBR_SNAP_BT_UNKNOWN	= 0,
	LBR_SNAP_BT_JCC		= 1,
	LBR_SNAP_BT_JMP		= 2,	/* near relative jump */
	LBR_SNAP_BT_IND_JMP	= 3,
	LBR_SNAP_BT_CALL	= 4,	/* near relative call */
	LBR_SNAP_BT_IND_CALL	= 5,
	LBR_SNAP_BT_RET		= 6,
	LBR_SNAP_BT_FAR		= 7,	/* other: far branch, interrupt,
					 * exception (Arch LBR type 1xxxb)
					 */
};

/* One taken branch, as the LBR stack recorded it. */
struct lbr_snap_branch {
	__u64 from;		/* address of the branch instruction */
	__u64 to;		/* branch target */
	__u32 flags;		/* LBR_SNAP_BR_* */
	__u16 cycles;		/* cycles since the previous entry, if valid */
	__u8  type;		/* enum lbr_snap_branch_type */
	__u8  reserved;
};

/* struct lbr_snap_record.flags */
#define LBR_SNAP_REC_NO_LBR	(1u << 0)	/* no entries: backend "none",
						 * or a CPU lbr_snap reads no
						 * LBR from (one going offline
						 * or coming online, one perf
						 * gave no LBR event)
						 */
#define LBR_SNAP_REC_NO_RETURN	(1u << 1)	/* the target's return is not
						 * among the entries (an
						 * interrupt's IRET to the
						 * return site is not it);
						 * all of them count as
						 * probe_entries
						 */
#define LBR_SNAP_REC_WAS_OFF	(1u << 2)	/* the freeze found LBR off
						 * already (another owner, a
						 * freeze never undone, or
						 * perf's PMI froze it): the
						 * entries may be old
						 */
#define LBR_SNAP_REC_RAN_AGAIN	(1u << 3)	/* LBR was recording again
						 * when the read ended (perf
						 * turned it back on, e.g. in
						 * a PMI): some entries may be
						 * the capture's own
						 */
#define LBR_SNAP_REC_NO_STACK	(1u << 4)	/* stack_depth= asked for the
						 * call stack and the unwinder
						 * did not reach the target's
						 * caller: @nr_stack is 0
						 */
#define LBR_SNAP_REC_XSAVES	(1u << 5)	/* the entries were read by
						 * one XSAVES of Arch LBR's
						 * state (lbr_read=), not by
						 * RDMSRs
						 */
#define LBR_SNAP_REC_RET_FILTERED (1u << 6)	/* the LBR filter leaves
						 * the target's return out
						 * (no kernel returns): it
						 * cannot be among the
						 * entries, so probe_entries
						 * is 0, not NO_RETURN's
						 * all; a kretprobe's own
						 * path may have left the
						 * newest entries
						 */
#define LBR_SNAP_REC_SYSCALL	(1u << 7)	/* syscall_nr, syscall_seq and
						 * syscall_ns are set: the
						 * task is one the tree
						 * filter follows, in a
						 * system call, and the
						 * target returned in its
						 * context, not an interrupt's
						 */
#define LBR_SNAP_REC_SYSCALL_COMPAT (1u << 8)	/* ... a system call of the
						 * 32-bit ABI: syscall_nr is
						 * of its table
						 */
#define LBR_SNAP_REC_AFTER_DROP	(1u << 9)	/* this CPU dropped records
						 * (its buffer was full)
						 * since its previous one
						 */

/* Return types a target can declare with sym%type. */
enum lbr_snap_ret_type {
	LBR_SNAP_RET_INT	= 0,	/* default */
	LBR_SNAP_RET_LONG	= 1,
	LBR_SNAP_RET_PTR	= 2,
	LBR_SNAP_RET_BOOL	= 3,
	/* No return value: capture=all only; retval is 0. */
	LBR_SNAP_RET_VOID	= 4,
};

/* How a target is hooked (sym@hook, hook=). */
enum lbr_snap_hook {
	LBR_SNAP_HOOK_KRETPROBE	= 0,	/* default */
	LBR_SNAP_HOOK_FEXIT	= 1,	/* ftrace direct call, fexit style */
};

enum lbr_snap_backend {
	LBR_SNAP_BACKEND_NONE		= 0,
	LBR_SNAP_BACKEND_INTEL		= 1,	/* legacy LBR, MSR 0x680.. */
	LBR_SNAP_BACKEND_ARCH		= 2,	/* Intel Arch LBR */
	LBR_SNAP_BACKEND_AMD		= 3,	/* AMD LbrExtV2 */
};

/*
 * One captured return.  @ts_ns is CLOCK_MONOTONIC in nanoseconds, taken by
 * the kernel's ktime_get_mono_fast_ns() in the return handler, LBR frozen,
 * before the capture reads it; user space can
 * compare it with clock_gettime(CLOCK_MONOTONIC).
 */
struct lbr_snap_record {
	__u32 size;		/* bytes in this record, entries and stack
				 * included
				 */
	__u16 version;		/* LBR_SNAP_ABI_VERSION of the writer */
	__u16 hdr_size;		/* offset of entries[] from the record start */
	__u16 entry_size;	/* bytes per entry */
	__u16 nr_entries;	/* branch entries that follow, oldest first */
	__u32 flags;		/* LBR_SNAP_REC_* */
	__u64 ts_ns;		/* CLOCK_MONOTONIC, ns */
	__u32 cpu;
	__u32 pid;		/* thread id (kernel pid) */
	__u32 tgid;		/* process id */
	__u32 target_id;	/* index in GET_STATS */
	__u64 func_addr;	/* entry address of the target function */
	__u64 caller;		/* address the target returned to (with a
				 * call stack, as the unwinder recovered it
				 * from a tracer's trampoline: stack[0])
				 */
	__s64 retval;		/* sign-extended from the declared width */
	__u8  ret_type;		/* enum lbr_snap_ret_type */
	__u8  backend;		/* enum lbr_snap_backend */
	__u8  lbr_format;	/* legacy LBR format, see GET_INFO */
	__u8  hook;		/* enum lbr_snap_hook that took it */
	__u16 probe_entries;	/* newest entries made by the probe path */
	__u16 nr_stack;		/* call stack frames after the entries
				 * (0 from modules before them)
				 */
	char  comm[LBR_SNAP_COMM_LEN];
	/*
	 * With LBR_SNAP_REC_SYSCALL, the system call the target returned
	 * in; 0 without (and not there from modules before them: a
	 * reader takes hdr_size from LBR_SNAP_RECORD_SIZE_V1 on).
	 */
	__u32 syscall_seq;	/* the task's system calls begun since the
				 * tree filter took it: the first is 1
				 */
	__s32 syscall_nr;	/* its number, in the task's ABI */
	__u64 syscall_ns;	/* CLOCK_MONOTONIC when it began, ns */
	/*
	 * CLOCK_MONOTONIC when the target was called, ns, from the TSC its
	 * hook read then: @ts_ns - @entry_ns is the call's duration, the
	 * hook's way in and out included (@ts_ns is taken as the capture
	 * begins).  0 when not known: a kretprobe without its entry handler
	 * (no tree filter was set since lbr_snap loaded, or the call was in
	 * flight when the first one was), a module before it, no TSC rate,
	 * a TSC read earlier on return than on entry or over an hour apart.
	 * A task moved between CPUs whose TSCs are not in step (the kernel
	 * then does not use the TSC as its clock) may get a duration off by
	 * their difference.
	 */
	__u64 entry_ns;
	/* struct lbr_snap_branch entries[nr_entries] at hdr_size */
	/* __u64 stack[nr_stack] after them */
};

/* The header's size before the syscall fields. */
#define LBR_SNAP_RECORD_SIZE_V1	88
/* ... and before entry_ns. */
#define LBR_SNAP_RECORD_SIZE_V2	104

#define LBR_SNAP_RECORD_MAX	(sizeof(struct lbr_snap_record) + \
				 LBR_SNAP_MAX_ENTRIES * sizeof(struct lbr_snap_branch) + \
				 LBR_SNAP_MAX_STACK * sizeof(__u64))

/*
 * One kind of CPU (GET_INFO): on a hybrid part (Alder Lake and later) the
 * P-cores and the E-cores, which may have LBR of different depths; one
 * kind on other CPUs.  The CPUs lbr_snap read when it loaded.
 */
struct lbr_snap_cpu_type {
	__u32 core_type;	/* 0 not hybrid, 0x40 P-core (Intel Core),
				 * 0x20 E-core (Intel Atom): CPUID.0x1a:EAX[31:24]
				 */
	__u32 backend;		/* enum lbr_snap_backend these CPUs have */
	__u32 lbr_format;
	__u32 lbr_depth;	/* entries each of these CPUs reads */
	__u32 nr_cpus;
	__u32 reserved;
	char  cpus[40];		/* CPU list, "0-7,16" (cut if longer) */
};

#define LBR_SNAP_MAX_CPU_TYPES	4

/*
 * LBR_SNAP_IOC_GET_INFO.  lbr_depth is the deepest CPU's (record_max is
 * sized by it); cpu_types[] has each kind's.
 */
struct lbr_snap_info {
	__u32 abi_version;	/* LBR_SNAP_ABI_VERSION of the module */
	__u32 backend;		/* enum lbr_snap_backend */
	__u32 lbr_format;	/* IA32_PERF_CAPABILITIES[5:0] for legacy LBR */
	__u32 lbr_depth;	/* entries the backend reads per record */
	__u32 nr_cpus;		/* possible CPUs, one ring buffer each */
	__u32 buffer_kb;	/* ring buffer size per CPU */
	__u32 nr_targets;
	__u32 capture;		/* 0 errors, 1 all */
	char  backend_name[16];
	char  reason[96];	/* why this backend (e.g. why "none") */
	char  version[32];	/* module version string */
	char  mode[8];		/* how LBR stays on: "perf", "raw", "none" */
	__u32 record_max;	/* bytes of the largest record this module
				 * writes (0 from modules before it:
				 * LBR_SNAP_RECORD_MAX then)
				 */
	__u32 stack_depth;	/* frames a record's call stack holds at
				 * most (stack_depth=), 0: none
				 */
	__u32 lbr_read;		/* LBR_SNAP_READ_* (0 from modules before it) */
	__u32 lbr_cpl;		/* the LBR filter now (SET_LBR_FILTER):
				 * LBR_SNAP_LBR_KERNEL, _USER
				 */
	__u32 lbr_kinds;	/* LBR_SNAP_KIND_ bits; both 0 from modules
				 * before them
				 */
	__u32 nr_batch_targets;	/* of nr_targets, those batches added
				 * (ADD_TARGETS); LBR_SNAP_MAX_TARGETS
				 * bounds the others (0 from modules
				 * before it: count them all)
				 */
	/* Only when the caller's struct covers them (see below): */
	__u32 nr_cpu_types;	/* kinds of CPU in cpu_types[] (0 from
				 * modules before them)
				 */
	__u32 reserved2;
	struct lbr_snap_cpu_type cpu_types[LBR_SNAP_MAX_CPU_TYPES];
	/* Only when the caller's struct covers them: */
	__u32 tree_tasks;	/* tasks the tree filter follows now */
	__u32 tree_missed;	/* tasks it could not follow since it was
				 * set (LBR_SNAP_TREE_MAX): their returns
				 * are filtered
				 */
	/* Only when the caller's struct covers them: */
	__u32 nr_cpus_failed;	/* online CPUs the check of each CPU's
				 * LBR gave none: one of their LBR MSRs
				 * faulted, or (mode=raw) their LBR did not
				 * record a chain of calls; their records
				 * say NO_LBR.  Refusals of other kinds
				 * are logged only.
				 */
	__u32 reserved3;
	char  cpus_failed[40];	/* which ("1,3", cut if longer) */
	char  cpu_failure[96];	/* the first one's reason */
	/* Only when the caller's struct covers it: */
	char  hypervisor[16];	/* the hypervisor this kernel runs under
				 * ("kvm", "hyper-v", "vmware", "xen",
				 * "xen-pv", "acrn", "jailhouse", "tcg",
				 * else its CPUID signature), "" on bare
				 * metal
				 */
	/* Only when the caller's struct covers them: */
	__u32 capture_msrs;	/* RDMSRs and WRMSRs a recorded return
				 * makes on a CPU of lbr_depth entries:
				 * the freeze, the read (none where one
				 * XSAVES reads it), the check that LBR
				 * stayed frozen and the unfreeze; 0
				 * without LBR
				 */
	__u32 filtered_msrs;	/* those of a return filtered after the
				 * freeze (its freeze and unfreeze): every
				 * kretprobe's, an fexit one's left out by
				 * the task filter; an fexit trampoline
				 * lets go with none the returns it can
				 * filter by value (successes when only
				 * errors are wanted: capture=errors or an
				 * errno list).  Both 0 from modules
				 * before them
				 */
	/* Only when the caller's struct covers them: */
	__u32 nr_cpus_perf_off;	/* mode=perf: online CPUs where perf
				 * does not run lbr_snap's event now: in
				 * error state (another pinned event holds
				 * its counter or the LBR filter; records
				 * say WAS_OFF; the module asks perf again
				 * about once a second), or never created
				 * (records say NO_LBR; the log says why).
				 * Every online CPU while no event is
				 * there: during a filter change, and for
				 * good after SET_LBR_FILTER failed with
				 * EIO (records say NO_LBR; a CPU refused
				 * by its check is then in both lists).
				 * 0 from modules before it
				 */
	__u32 reserved4;
	char  cpus_perf_off[40];	/* which ("1,3", cut if longer) */
};

/* The size of struct lbr_snap_info before nr_cpu_types, tree_tasks, ... */
#define LBR_SNAP_INFO_SIZE_V1	208
#define LBR_SNAP_INFO_SIZE_V2	472
#define LBR_SNAP_INFO_SIZE_V3	480	/* before nr_cpus_failed */
#define LBR_SNAP_INFO_SIZE_V4	624	/* before hypervisor */
#define LBR_SNAP_INFO_SIZE_V5	640	/* before capture_msrs */
#define LBR_SNAP_INFO_SIZE_V6	648	/* before nr_cpus_perf_off */

/* struct lbr_snap_info.lbr_read */
#define LBR_SNAP_READ_MSR	0	/* RDMSR of each FROM, TO (, INFO) */
#define LBR_SNAP_READ_XSAVES	1	/* one XSAVES of Arch LBR's state */

#define LBR_SNAP_CAPTURE_ERRORS	0
#define LBR_SNAP_CAPTURE_ALL	1

/* Counters of one target.  hits == captured + filtered + dropped. */
struct lbr_snap_target_stats {
	char  name[LBR_SNAP_NAME_LEN];
	__u64 func_addr;
	__u32 id;
	__u32 ret_type;		/* enum lbr_snap_ret_type */
	__u64 hits;		/* returns seen by the handler */
	__u64 captured;		/* records written to the ring buffer */
	__u64 filtered;		/* returns the capture mode did not want */
	__u64 dropped;		/* wanted but lost: the buffer was full */
	__u64 missed;		/* returns kretprobes could not probe */
	/* Only when lbr_snap_stats.entry_size covers them: */
	__u32 hook;		/* enum lbr_snap_hook */
	__s32 nr_args;		/* register arguments (sym/N), -1 unknown */
	__u64 recursion;	/* returns inside lbr_snap's own capture
				 * (the target is on its path, or returned
				 * in an NMI that came during one):
				 * counted, not recorded; an fexit
				 * target's successes under
				 * capture=errors leave before the capture
				 * and count as filtered
				 */
	__s64 inflight;		/* fexit: calls inside the function now */
	/* Only when lbr_snap_stats.entry_size covers it: */
	__u64 lbr_off;		/* returns whose freeze found LBR already
				 * off (summed over CPUs): their records
				 * carry LBR_SNAP_REC_WAS_OFF, and LBR was
				 * lost on some CPU (another writer, or a
				 * CPU reset)
				 */
	/* Only when lbr_snap_stats.entry_size covers it: */
	__u32 state;		/* LBR_SNAP_TARGET_* */
	__u32 __reserved;
};

/*
 * struct lbr_snap_target_stats.state: the function's module was unloaded,
 * taking the hook with it.  The target records nothing more, and stays
 * listed until DEL_TARGET, or an ADD_TARGET of the same name (once the
 * module is back), replaces it.
 */
#define LBR_SNAP_TARGET_GONE	(1U << 0)

/* The size of struct lbr_snap_target_stats before hook and nr_args. */
#define LBR_SNAP_TARGET_STATS_SIZE_V1	184
/* ... and before lbr_off. */
#define LBR_SNAP_TARGET_STATS_SIZE_V2	208
/* ... and before state. */
#define LBR_SNAP_TARGET_STATS_SIZE_V3	216

/*
 * LBR_SNAP_IOC_GET_STATS: set @nr to the room in @stats_ptr (an array of
 * @entry_size-byte struct lbr_snap_target_stats); the module fills
 * min(@nr, targets) entries, each cut to @entry_size, and sets @nr to the
 * number of targets.  @entry_size is 0 (LBR_SNAP_TARGET_STATS_SIZE_V1) or
 * from LBR_SNAP_TARGET_STATS_SIZE_V1 to 4096: each caller gets the fields
 * its size covers, and zeros past the module's.
 */
struct lbr_snap_stats {
	__u32 nr;
	__u32 entry_size;	/* sizeof(struct lbr_snap_target_stats) the
				 * caller was built with; 0 means
				 * LBR_SNAP_TARGET_STATS_SIZE_V1
				 */
	__u64 stats_ptr;
	__u64 read;		/* records returned by read() */
	__u64 flushed;		/* records discarded by LBR_SNAP_IOC_FLUSH */
	__u32 flags;		/* none yet: 0, or EINVAL */
	__u32 reserved[3];	/* 0, or EINVAL */
};

#define LBR_SNAP_STATS_SIZE_V1	32

/*
 * LBR_SNAP_IOC_ADD_TARGET: @spec is "sym[%type][/N][@hook][=-ERR,...]"
 * and is validated as targets= is; the new target's id comes back in @id and the
 * hook it got (enum lbr_snap_hook) in @hook.
 * LBR_SNAP_IOC_DEL_TARGET: @spec is the symbol name of a target.
 * Both, and LBR_SNAP_IOC_SET_CAPTURE (LBR_SNAP_CAPTURE_*), need
 * CAP_SYS_ADMIN, of the caller and of whoever opened the descriptor, and
 * fail with EPERM without it, changing nothing.
 */
struct lbr_snap_target_ctl {
	char  spec[LBR_SNAP_NAME_LEN + 8];
	__u32 id;
	__u32 hook;		/* out: enum lbr_snap_hook */
	__u32 flags;		/* none yet: 0, or EINVAL */
	__u32 reserved[3];	/* 0, or EINVAL */
};

#define LBR_SNAP_TARGET_CTL_SIZE_V1	(LBR_SNAP_NAME_LEN + 16)

/*
 * LBR_SNAP_IOC_ADD_TARGETS: attach @nr functions (at most
 * LBR_SNAP_MAX_BATCH) in one call, one struct lbr_snap_target_entry of
 * @entry_size bytes each at @entries_ptr: @spec as ADD_TARGET's; @addr
 * the function's entry as /proc/kallsyms gives it (0: found by name, a
 * much slower walk of kallsyms per function).  Functions of vmlinux
 * only, hooked by fexit: those of one return class share a trampoline,
 * reached through one ftrace_ops, so the whole batch costs ftrace a few
 * registrations rather than one per function.  A spec's "@kretprobe"
 * gives its function a kretprobe, and "@auto" a kretprobe where fexit
 * cannot take it (no BTF prototype, stack arguments fexit cannot bound,
 * no room left for direct calls or trampolines); LBR_SNAP_BATCH_FALLBACK
 * treats a spec with no hook as "@auto", and the ceiling below no longer
 * refuses the batch: its functions past the room take kretprobes.  A
 * kretprobe costs its function's records some 13 entries, taken by the
 * kretprobe's return path before the freeze, and its registration and
 * removal are one each, against one ftrace_ops for many fexit functions;
 * the module parameter batch_kretprobes bounds them all (E2BIG past
 * it).  A spec with no hook is fexit's (the hook= parameter is for
 * targets added one by one).  All or nothing: if any entry is refused, or the hooks cannot be set,
 * no target is added.  With LBR_SNAP_BATCH_SKIP, refused entries are
 * left out and the others added.  Each entry's @error says what became
 * of it: 0 (added, @id its id) or a negative errno; @done counts those
 * added.  The kernel log names each refusal.  A batch of more entries
 * than ftrace takes direct calls (E2BIG, where its table grows entry by
 * entry and would leak past 8,192 of them, less lbr_snap_fexit's
 * direct_margin parameter: Debian's 6.1) or, where a trampoline takes
 * one function (kernels without an ftrace_ops of many direct calls:
 * Debian's 5.10), more than there are free trampolines (ENOSPC) is
 * refused whole, before any entry is looked at (those asking for
 * "@kretprobe" or "@auto" not counted), LBR_SNAP_BATCH_SKIP or not,
 * unless LBR_SNAP_BATCH_FALLBACK.  The room is given to "@fexit" specs
 * first.  A batch's fexit functions that share trampolines may still
 * find none free (ENOSPC), or one held by another direct caller (EBUSY):
 * the batch fails, LBR_SNAP_BATCH_FALLBACK or not.
 *
 * LBR_SNAP_IOC_DEL_TARGETS: remove the targets whose @id the entries give
 * (@spec and @addr are ignored): every one found; the others get
 * -ENOENT in @error, and the call fails with ENOENT after removing the
 * rest.  Removing some fexit targets of a batch hooks the others of
 * their groups anew: their returns in between are not seen.
 *
 * Both need CAP_SYS_ADMIN as ADD_TARGET does.  Per-target counters of a
 * batch's fexit targets leave out the successes its trampolines let go
 * under capture=errors, and their calls in flight (GET_STATS' inflight
 * is 0).
 */
struct lbr_snap_target_entry {
	char  spec[LBR_SNAP_NAME_LEN + 8];
	__u64 addr;
	__u32 id;		/* out */
	__s32 error;		/* out: 0, or -errno */
	__u32 hook;		/* out: enum lbr_snap_hook, where error
				 * is 0 and the module knows
				 * LBR_SNAP_BATCH_FALLBACK (older ones
				 * leave it, and hook with fexit only)
				 */
	__u32 reserved;		/* 0, or EINVAL */
};

/* The entry before @hook: the caller is not told each one's hook. */
#define LBR_SNAP_TARGET_ENTRY_SIZE_V1	(LBR_SNAP_NAME_LEN + 24)

struct lbr_snap_targets {
	__u64 entries_ptr;
	__u32 nr;
	__u32 entry_size;	/* sizeof(struct lbr_snap_target_entry) */
	__u32 flags;		/* LBR_SNAP_BATCH_* */
	__u32 done;		/* out: entries added, or removed */
	__u32 reserved[2];	/* 0, or EINVAL */
};

#define LBR_SNAP_BATCH_SKIP	(1U << 0)	/* ADD_TARGETS: skip refusals */
/* ADD_TARGETS: kretprobes where fexit cannot */
#define LBR_SNAP_BATCH_FALLBACK	(1U << 1)

/*
 * LBR_SNAP_IOC_SET_FILTER: record only the returns made by a task that
 * matches every field @flags names (the task running when the target
 * returned: in an interrupt, the one it interrupted); flags 0 records
 * every task again.  A filtered return counts as filtered.  Ids are the
 * initial pid namespace's; a field @flags does not name must be 0, and a
 * comm end in a NUL (EINVAL).  Needs what ADD_TARGET needs.
 */
#define LBR_SNAP_FILTER_PID	(1u << 0)	/* thread id */
#define LBR_SNAP_FILTER_TGID	(1u << 1)	/* process id */
#define LBR_SNAP_FILTER_COMM	(1u << 2)	/* comm, to its NUL */
/*
 * The tree filter: the threads of process @tgid, and every task they and
 * their descendants create from now on (not with LBR_SNAP_FILTER_PID or
 * _TGID: EINVAL; a @tgid that is no process: ESRCH).  The module follows
 * them from their creation to their exit, and numbers each one's system
 * calls: a record of one in a system call carries its number and when it
 * began (LBR_SNAP_REC_SYSCALL), so that user space puts together what
 * one system call did.  A task created while the module already follows
 * LBR_SNAP_TREE_MAX tasks is not followed: its returns are filtered, and
 * counted in GET_INFO's tree_missed.  A child created while the filter is
 * being set, by a thread not yet taken, is not followed; setting the
 * filter again, even for the same process, starts from its threads anew.
 * While it is set, every system call of every task goes through the
 * kernel's syscall tracepoints and one lookup in that table.  ESRCH and
 * ENOMEM leave the filter as it was.  Modules before it: EINVAL.
 */
#define LBR_SNAP_FILTER_TREE	(1u << 3)
#define LBR_SNAP_TREE_MAX	4096
#define LBR_SNAP_FILTER_ALL	(LBR_SNAP_FILTER_PID | LBR_SNAP_FILTER_TGID | \
				 LBR_SNAP_FILTER_COMM | LBR_SNAP_FILTER_TREE)

struct lbr_snap_filter {
	__u32 flags;		/* LBR_SNAP_FILTER_*; others: EINVAL */
	__s32 pid;
	__s32 tgid;
	char  comm[LBR_SNAP_COMM_LEN];	/* NUL-padded */
	__u32 reserved[5];	/* 0, or EINVAL */
};

/*
 * LBR_SNAP_IOC_SET_LBR_FILTER: what LBR records from now on, on every CPU,
 * without a reload: the privilege levels branches end in (@cpl) and the
 * kinds of branch (@kinds), as lbr_filter= sets them at load.  perf's
 * names are sets of kinds: any (all), any_call (REL_CALL | IND_CALL |
 * FAR), any_return (RET | FAR), cond (JCC), call (REL_CALL), ind_call,
 * ind_jump (IND_JMP).  At least one of each (EINVAL), and what the CPU
 * can filter: Arch LBR without branch filtering (CPUID.0x1c:EBX[1]) takes
 * every kind only, and mode=perf cannot ask perf for REL_JMP or FAR
 * without the others (EOPNOTSUPP).  Raw mode rewrites LBR_SELECT (legacy,
 * AMD) or ARCH_LBR_CTL on each CPU where it still holds what lbr_snap
 * wrote; mode=perf replaces its events, and records taken meanwhile
 * carry NO_LBR.  GET_INFO's lbr_cpl and lbr_kinds say what is set.
 * Needs what ADD_TARGET needs.  Modules before it: ENOTTY.
 */
#define LBR_SNAP_LBR_KERNEL	(1u << 0)	/* branches ending in CPL 0 */
#define LBR_SNAP_LBR_USER	(1u << 1)	/* ending in CPL > 0 */

/* The order of legacy LBR_SELECT's suppress bits 2..8. */
#define LBR_SNAP_KIND_JCC	(1u << 0)	/* conditional jumps */
#define LBR_SNAP_KIND_REL_CALL	(1u << 1)	/* near relative calls */
#define LBR_SNAP_KIND_IND_CALL	(1u << 2)	/* near indirect calls */
#define LBR_SNAP_KIND_RET	(1u << 3)	/* near returns */
#define LBR_SNAP_KIND_IND_JMP	(1u << 4)	/* near indirect jumps */
#define LBR_SNAP_KIND_REL_JMP	(1u << 5)	/* near relative jumps */
#define LBR_SNAP_KIND_FAR	(1u << 6)	/* far: interrupts, syscalls,
						 * their returns
						 */
#define LBR_SNAP_KIND_ALL	0x7fu

struct lbr_snap_lbr_filter {
	__u32 cpl;		/* LBR_SNAP_LBR_*; others: EINVAL */
	__u32 kinds;		/* LBR_SNAP_KIND_*; others: EINVAL */
	__u32 reserved[4];	/* 0, or EINVAL */
};

/*
 * LBR_SNAP_IOC_SET_WAKEUP (arg: bytes): poll() and epoll on this open
 * file (its dup()s too) report it readable, and wake, only once some
 * CPU's ring buffer holds @arg bytes, where 0 (the default) is any
 * record (a poller with a lower mark, or none, has them woken with it,
 * to poll again): fewer wakeups for a reader that takes many records at
 * a time, as ftrace's buffer_percent and perf's wakeup_watermark give.  The
 * bytes are the ring's: each record as captured, which read() may give
 * longer, and 8 bytes of slot header.  Such a reader needs another way
 * to the last records of a burst: a poll timeout, or the mark taken off.
 * At most half of buffer_kb, and no more than a buffer holds when it
 * must refuse the largest record, which is less only with buffer_kb=8
 * (EINVAL); needs a descriptor opened for reading (EBADF).  read() is
 * not changed; /proc/PID/fdinfo shows the mark (lbr_snap_wakeup_bytes).
 * Modules before it: ENOTTY.
 */

/*
 * Growing structs: the size is part of each command number, and the module
 * takes any size from the _V1 one on (up to the 16 KiB a command number
 * holds): what the caller's struct lacks counts as 0; what it has past
 * the module's must be 0 (E2BIG), as copy_struct_from_user() has it; the
 * flags and reserved words the module does not know must be 0 (EINVAL).
 * A caller built against an older header, or a newer one, keeps working.
 */
#define LBR_SNAP_IOC_MAGIC	0xB7
#define LBR_SNAP_IOC_GET_INFO	_IOR(LBR_SNAP_IOC_MAGIC, 1, struct lbr_snap_info)
#define LBR_SNAP_IOC_GET_STATS	_IOWR(LBR_SNAP_IOC_MAGIC, 2, struct lbr_snap_stats)
#define LBR_SNAP_IOC_FLUSH	_IO(LBR_SNAP_IOC_MAGIC, 3)
#define LBR_SNAP_IOC_ADD_TARGET	_IOWR(LBR_SNAP_IOC_MAGIC, 4, struct lbr_snap_target_ctl)
#define LBR_SNAP_IOC_DEL_TARGET	_IOW(LBR_SNAP_IOC_MAGIC, 5, struct lbr_snap_target_ctl)
#define LBR_SNAP_IOC_SET_CAPTURE _IO(LBR_SNAP_IOC_MAGIC, 6)	/* arg: LBR_SNAP_CAPTURE_* */
#define LBR_SNAP_IOC_SET_FILTER	_IOW(LBR_SNAP_IOC_MAGIC, 7, struct lbr_snap_filter)
#define LBR_SNAP_IOC_SET_WAKEUP	_IO(LBR_SNAP_IOC_MAGIC, 8)	/* arg: bytes */
#define LBR_SNAP_IOC_SET_LBR_FILTER _IOW(LBR_SNAP_IOC_MAGIC, 9, struct lbr_snap_lbr_filter)
#define LBR_SNAP_IOC_ADD_TARGETS _IOWR(LBR_SNAP_IOC_MAGIC, 10, struct lbr_snap_targets)
#define LBR_SNAP_IOC_DEL_TARGETS _IOWR(LBR_SNAP_IOC_MAGIC, 11, struct lbr_snap_targets)

#endif /* _UAPI_LBR_SNAP_H */
