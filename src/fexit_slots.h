/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbr_snap_fexit: the fexit trampolines and their slots, a module of their
 * own (fexit_slots.c says why), and what lbr_snap uses of it.
 */
#ifndef LBR_SNAP_FEXIT_SLOTS_H
#define LBR_SNAP_FEXIT_SLOTS_H

/*
 * One trampoline per slot: a slot hooks one function (a target of its
 * own), or many (a batch's functions of one return class, told apart by
 * where they called the trampoline from).  fexit_tramp.S lists the slot
 * numbers and checks it made this many.
 */
#define LBR_FEXIT_SLOTS		256

/*
 * The words of the caller's stack the trampoline passes on to the traced
 * function: its stack arguments, up to this many (fexit_tramp.S).  128
 * bytes: sixteen 8-byte arguments past the six in registers, say.  A
 * function given more (a variadic call with many arguments) would read
 * past the copy: lbr_snap hooks with fexit only a function whose stack
 * arguments BTF bounds (btf_func.c), or, asked for by name or by "@fexit"
 * in a batch's spec, one whose count the user gave (fexit_hook.c).
 */
#define LBR_FEXIT_STACK_WORDS	16
#define LBR_FEXIT_REG_ARGS	6	/* x86-64: RDI, RSI, RDX, RCX, R8, R9 */

#ifndef __ASSEMBLY__
#include <linux/percpu.h>
#include <linux/types.h>

#include "ret_class.h"

struct task_struct;

/**
 * struct lbr_fexit_client - what lbr_snap gives lbr_snap_fexit
 * @capture: a traced function of the slot got with @data returned @ax
 *	to @caller.  Called with interrupts off; with LBR frozen if @freeze,
 *	@ctl being the control MSR's low half before the freeze (the high
 *	half is left as it is).  The trampoline unfreezes once @capture has
 *	returned, as it leaves: @capture does not.  @ret_site is
 *	the instruction the function returned to; @fentry_ret, the return
 *	address of its fentry call (its ftrace site + 5): which function,
 *	for a slot of many; @entry_tsc, the TSC as the call came in.
 * @released: the slot got with @data, given back with lbr_fexit_slot_put(),
 *	has no call in flight any more and will not call @capture again.
 *	Process context, under lbr_snap_fexit's lock: may not call it.
 * @ctl_msr: the LBR control MSR the trampolines freeze
 * @keep: the bits of @ctl_msr's low half the freeze keeps (it keeps the
 *	whole high half)
 * @freeze: false for the "none" backend: trampolines that do not freeze
 */
struct lbr_fexit_client {
	void (*capture)(void *data, unsigned long ax, unsigned long caller,
			u32 ctl, unsigned long ret_site,
			unsigned long fentry_ret, u64 entry_tsc);
	void (*released)(void *data);
	u32 ctl_msr;
	u32 keep;
	bool freeze;
};

/*
 * The interface between lbr_snap and lbr_snap_fexit, versioned in the
 * names the linker sees: lbr_snap_fexit may stay loaded across an
 * lbr_snap upgrade (calls still inside a traced function), and a newer
 * lbr_snap must not bind to an older one whose struct lbr_fexit_client
 * or lbr_fexit_slot_get() differ.  A kernel with MODVERSIONS would refuse
 * it by CRC; one without would not.  Version 2: @keep is the low half's,
 * the capture gets that half, lbr_fexit_slot_get() takes @regs_only.
 * Version 3: lbr_fexit_slot_unhook().  Version 4: a slot lets the
 * returns of its struct lbr_ret_quiet go without calling ->capture().
 * Version 5: a slot hooks one function or many, ->capture() is told
 * which.  Version 6: lbr_fexit_slot_get() takes @flags, with no
 * one-by-one registration among them.  Version 7: lbr_snap_fexit counts
 * the direct calls ftrace holds of its slots, lbr_fexit_slot_get()
 * refuses one past the ceiling (compat.h) with -E2BIG, and
 * lbr_fexit_direct_calls() tells the count; the trampoline unfreezes
 * LBR as it leaves, not ->capture().
 * Version 8: lbr_fexit_unfollowed, the task a trampoline lets go at
 * its entry.
 * Version 9: ->capture() gets the TSC the trampoline read at the entry.
 */
#define lbr_fexit_register	lbr_fexit_register_v9
#define lbr_fexit_slot_get	lbr_fexit_slot_get_v9
#define lbr_fexit_slot_unhook	lbr_fexit_slot_unhook_v9
#define lbr_fexit_direct_calls	lbr_fexit_direct_calls_v9

int lbr_fexit_register(const struct lbr_fexit_client *client);
void lbr_fexit_unregister(void);
/* lbr_fexit_slot_get()'s @flags */
#define LBR_FEXIT_REGS_ONLY	(1U << 0)	/* no stack argument to copy */
int lbr_fexit_slot_get(const unsigned long *ips, unsigned int nr, void *data,
		       unsigned int flags, const struct lbr_ret_quiet *quiet);
void lbr_fexit_slot_set_limit(unsigned int slot, u64 limit);
u64 lbr_fexit_slot_quiet(unsigned int slot);
void lbr_fexit_slot_put(unsigned int slot);
unsigned int lbr_fexit_slots_free(unsigned int want);
unsigned int lbr_fexit_direct_calls(unsigned int *room);
void lbr_fexit_slot_unhook(unsigned int slot, const char *mod);
long lbr_fexit_slot_inflight(unsigned int slot);
bool lbr_fexit_owns(unsigned long addr);

/* fexit_tramp.S: [0] freezes LBR, [1] does not. */
extern const unsigned long lbr_fexit_tramps[2][LBR_FEXIT_SLOTS];
/* Offset from a trampoline to the instruction the traced function returns to. */
extern const u32 lbr_fexit_ret_offs[2][LBR_FEXIT_SLOTS];

/*
 * The freeze the trampolines do: clear the ~@lbr_fexit_keep bits of
 * @lbr_fexit_ctl_msr's low half.
 */
extern u32 lbr_fexit_ctl_msr;
extern u32 lbr_fexit_keep;

/* Read by the trampolines (fexit_tramp.S). */
extern u8 lbr_fexit_regs_only[LBR_FEXIT_SLOTS];
extern struct lbr_ret_quiet lbr_fexit_rets[LBR_FEXIT_SLOTS];

/* Calls inside each slot's function on this CPU, in and out. */
struct lbr_fexit_calls {
	long n[LBR_FEXIT_SLOTS];	/* 8 bytes each: fexit_tramp.S */
};
DECLARE_PER_CPU(struct lbr_fexit_calls, lbr_fexit_calls);
/*
 * Returns each slot's trampoline let go on this CPU (no freeze, no
 * client), and calls it let go at its entry (lbr_fexit_unfollowed).
 */
DECLARE_PER_CPU(struct lbr_fexit_calls, lbr_fexit_quiet);

/*
 * Per CPU, a task the client's filter leaves out, or NULL; the client
 * keeps it (task_follow.c) and never names a task it follows there, on
 * any CPU.  A trampoline entered by that task counts the call as let go
 * and returns into the traced function at once: the function returns
 * straight to its caller, with no copy, no count in flight, and no
 * freeze, so no MSR access.  The word is read as the call comes in, on
 * the CPU it came in on: a task moved between the load and the compare
 * compares another CPU's word with itself, which is as good, and a call
 * entered just before the client changes its filter may be let go just
 * after.  All NULL whenever no client is registered.
 */
DECLARE_PER_CPU(struct task_struct *, lbr_fexit_unfollowed);

void lbr_fexit_enter(unsigned int slot, const unsigned long *args,
		     unsigned long *copy);
void lbr_fexit_exit_lbr(unsigned int slot, unsigned long ax,
			unsigned long caller, u32 ctl,
			unsigned long fentry_ret, u64 entry_tsc);
void lbr_fexit_exit_nolbr(unsigned int slot, unsigned long ax,
			  unsigned long caller, unsigned long fentry_ret,
			  u64 entry_tsc);
#endif

#endif /* LBR_SNAP_FEXIT_SLOTS_H */
