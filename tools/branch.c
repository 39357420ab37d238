// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: what a branch is: perf's name for its type, and whether it
 * enters or leaves an interrupt.
 *
 * The module gives the type Arch LBR reports (struct lbr_snap_branch.type,
 * decoded by src/lbr_decode.c): a near branch's kind, or
 * LBR_SNAP_BT_FAR for everything else (interrupts, exceptions, their
 * IRETs, far transfers); legacy LBR and AMD give no type at all
 * (LBR_SNAP_BT_UNKNOWN).  Which far transfer a branch is comes from the
 * symbols it goes between, as perf's software decode does it from the
 * instruction: into an interrupt's or exception's entry point (x86-64's
 * asm_sysvec_*, asm_common_interrupt, asm_exc_*, since Linux 5.8, and
 * FRED's asm_fred_entrypoint_kernel), or out of the IRET
 * (native_irq_return_iret).  A branch whose type says it is a near one
 * is never taken for an interrupt's.
 */
#include <string.h>

#include "branch.h"
#include "util.h"

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool in_list(const char *name, const char *const *list, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (starts(name, list[i]))
			return true;
	return false;
}

/* Entry points of interrupts (NMIs included): prefixes of their names. */
static const char *const irq_entries[] = {
	"asm_sysvec_", "asm_common_interrupt", "asm_spurious_interrupt",
	"irq_entries_start", "spurious_entries_start", "asm_exc_nmi",
};

/* Where IRET (or FRED's ERETS) returns from an interrupt or exception. */
static const char *const irq_returns[] = {
	"native_irq_return_iret", "xen_iret", "nmi_restore",
	"asm_fred_entrypoint_kernel",
};

#define FRED_ENTRY	"asm_fred_entrypoint_kernel"

enum irq_edge branch_irq_edge(const struct lbr_snap_branch *b,
			      const struct ksyms *ks)
{
	unsigned long long off = 0;
	const char *to, *from;

	if (b->type != LBR_SNAP_BT_FAR && b->type != LBR_SNAP_BT_UNKNOWN)
		return IRQ_NONE;
	/*
	 * An interrupt enters at the start of asm_*: without a type, a
	 * return into the middle of one, from the handler it called, is
	 * none.  irq_entries_start's stubs, one a vector, are only jumped
	 * to by the CPU.
	 */
	to = ksyms_name(ks, b->to, &off);
	if (to && (off && b->type == LBR_SNAP_BT_UNKNOWN) &&
	    !starts(to, "irq_entries_start") &&
	    !starts(to, "spurious_entries_start"))
		to = NULL;
	if (to && !off && !strcmp(to, FRED_ENTRY))
		return IRQ_ENTER_ANY;
	if (to && in_list(to, irq_entries, ARRAY_SIZE(irq_entries)))
		return IRQ_ENTER;
	if (to && starts(to, "asm_exc_"))
		return IRQ_ENTER_EXC;
	/*
	 * Without a type, a jump inside the return path is not its IRET;
	 * FRED's CPUs have Arch LBR, which gives the type.
	 */
	from = ksyms_name(ks, b->from, &off);
	if (!from || (b->type == LBR_SNAP_BT_UNKNOWN &&
		      (to == from || !strcmp(from, FRED_ENTRY))))
		return IRQ_NONE;
	if (in_list(from, irq_returns, ARRAY_SIZE(irq_returns)))
		return IRQ_LEAVE;
	return IRQ_NONE;
}

/* A kernel address: the upper half of the address space. */
static bool kernel_addr(unsigned long long a)
{
	return a >> 63;
}

/*
 * perf's name for the branch's type, as tools/perf/util/branch.c's
 * branch_type_name() has them: LBR_SNAP_BT_FAR as perf's x86 decode
 * sorts far transfers (IRQ into an interrupt or exception, ERET out of
 * one, SYSCALL and SYSRET between user space and the kernel), "N/A"
 * for a type not known.
 */
const char *branch_type_name(const struct lbr_snap_branch *b,
			     const struct ksyms *ks)
{
	static const char *const names[] = {
		[LBR_SNAP_BT_UNKNOWN]	= "N/A",
		[LBR_SNAP_BT_JCC]	= "COND",
		[LBR_SNAP_BT_JMP]	= "UNCOND",
		[LBR_SNAP_BT_IND_JMP]	= "IND",
		[LBR_SNAP_BT_CALL]	= "CALL",
		[LBR_SNAP_BT_IND_CALL]	= "IND_CALL",
		[LBR_SNAP_BT_RET]	= "RET",
	};

	if (b->type < ARRAY_SIZE(names))
		return names[b->type];
	if (b->type != LBR_SNAP_BT_FAR)
		return "N/A";
	switch (branch_irq_edge(b, ks)) {
	case IRQ_ENTER:
	case IRQ_ENTER_EXC:
	case IRQ_ENTER_ANY:
		return "IRQ";
	case IRQ_LEAVE:
		return "ERET";
	default:
		break;
	}
	if (!kernel_addr(b->from) && kernel_addr(b->to))
		return "SYSCALL";
	if (kernel_addr(b->from) && !kernel_addr(b->to))
		return "SYSRET";
	return "N/A";
}

/*
 * Functions an interrupt's handler calls and an exception's does not:
 * what tells an interrupt whose entry is not among the entries (an
 * IRET with nothing before it) from an exception's.
 */
static const char *const irq_handlers[] = {
	"irq_enter_rcu", "irq_exit_rcu", "irq_enter", "irq_exit",
	"__irq_exit_rcu", "sysvec_", "__sysvec_", "common_interrupt",
	"__common_interrupt",
};

/* Whether a branch of entries @first to @last goes into an irq handler. */
static bool irq_handler_in(const struct rec *r, const struct ksyms *ks,
			   unsigned int first, unsigned int last)
{
	unsigned long long off;
	struct lbr_snap_branch b;
	const char *to;
	unsigned int i;

	for (i = first; i <= last; i++) {
		rec_from_to(r, i, &b);
		to = ksyms_name(ks, b.to, &off);
		if (to && in_list(to, irq_handlers, ARRAY_SIZE(irq_handlers)))
			return true;
	}
	return false;
}

/* Add [@first, @last], in place of the folds it holds (nested ones). */
static unsigned int add_fold(struct irq_fold *folds, unsigned int nr,
			     unsigned int first, unsigned int last,
			     bool headless)
{
	while (nr && folds[nr - 1].first >= first)
		nr--;
	folds[nr].first = first;
	folds[nr].last = last;
	folds[nr].headless = headless;
	return nr + 1;
}

/**
 * irq_folds - the interrupts inside entries @first to @last - 1 of a record
 * @r: the record
 * @ks: its symbols
 * @first: the first entry to look at
 * @last: the entry after the last
 * @folds: IRQ_FOLDS_MAX of them, filled oldest first
 *
 * An interrupt runs from the branch into its entry point to the IRET
 * that matches it (nested entries and IRETs counted): an interrupt in
 * an exception is one, an exception in an interrupt part of it, an
 * exception none (it is synchronous: the path's own, a page fault
 * say).  FRED's one entry point is an interrupt's if the handler calls
 * irq_enter_rcu() or the like.  An IRET before any entry ends an
 * interrupt that started before @first, if that handler shows; an
 * entry never returned from (the target called in an interrupt) is
 * not folded: it is the path.
 *
 * Return: how many.
 */
unsigned int irq_folds(const struct rec *r, const struct ksyms *ks,
		       unsigned int first, unsigned int last,
		       struct irq_fold *folds)
{
	struct {
		enum irq_edge kind;
		unsigned int at;
	} st[8];
	unsigned int depth = 0, nr = 0, i;
	struct lbr_snap_branch b;
	bool edges = false;
	enum irq_edge e;

	for (i = first; i < last && nr < IRQ_FOLDS_MAX; i++) {
		rec_branch(r, i, &b);
		e = branch_irq_edge(&b, ks);
		if (e == IRQ_NONE)
			continue;
		if (e != IRQ_LEAVE) {
			if (depth < ARRAY_SIZE(st)) {
				st[depth].kind = e;
				st[depth].at = i;
			}
			depth++;
			edges = true;
			continue;
		}
		if (!depth) {
			if (!edges && i > first &&
			    irq_handler_in(r, ks, first, i))
				nr = add_fold(folds, nr, first, i, true);
			edges = true;
			continue;
		}
		if (--depth >= ARRAY_SIZE(st))
			continue;
		e = st[depth].kind;
		if (e == IRQ_ENTER ||
		    (e == IRQ_ENTER_ANY && irq_handler_in(r, ks, st[depth].at, i)))
			nr = add_fold(folds, nr, st[depth].at, i, false);
	}
	return nr;
}

/* In lbr_snap's modules: its fexit trampolines, or its capture. */
static bool in_hook(const struct ksyms *ks, unsigned long long a)
{
	const char *mod = ksyms_module(ks, a);

	return mod && (!strcmp(mod, "lbr_snap_fexit") ||
		       !strcmp(mod, "lbr_snap"));
}

/*
 * A return thunk the trampolines return through under the kernel's
 * mitigations (__x86_return_thunk, its_return_thunk, srso_*...).
 */
static bool in_thunk(const struct ksyms *ks, unsigned long long a)
{
	unsigned long long off;
	const char *name = ksyms_name(ks, a, &off);

	return name && !ksyms_in_module(ks, a) &&
	       (strstr(name, "return_thunk") || starts(name, "srso_") ||
		starts(name, "retbleed_"));
}

/**
 * hook_folds - the nested hooked calls inside entries @first to @last - 1
 * @r: the record
 * @ks: its symbols
 * @first: the first entry to look at
 * @last: the entry after the last
 * @folds: HOOK_FOLDS_MAX of them, filled oldest first
 *
 * A hooked function called inside the path enters lbr_snap_fexit's
 * trampoline at its start (the fentry call) and again at its return,
 * and leaves it each time for the function or its caller: a run of
 * entries from a branch into lbr_snap's modules, through branches from
 * them, from a return thunk or from the functions lbr_snap calls (a call
 * enters a function at its start; it ends back in lbr_snap), to the
 * branch that goes out of them.  A
 * nested call whose error was captured runs lbr_snap's capture after
 * the freeze ends, in the outer record's LBR: at the oldest entry such
 * a run may have begun before (headless).  A run still inside at @last
 * is the record's own capture: not folded.
 *
 * Return: how many.
 */
unsigned int hook_folds(const struct rec *r, const struct ksyms *ks,
			unsigned int first, unsigned int last,
			struct hook_fold *folds)
{
	struct lbr_snap_branch b;
	unsigned int nr = 0, i, start;
	unsigned long long off;
	bool headless, out, helper;

	for (i = first; i < last && nr < HOOK_FOLDS_MAX; i++) {
		rec_from_to(r, i, &b);
		/*
		 * Into lbr_snap, or, at the oldest entry, already inside:
		 * the end of a nested call's capture, its start not recorded.
		 */
		headless = i == first && (in_hook(ks, b.from) ||
					  in_thunk(ks, b.from)) &&
			   (in_hook(ks, b.to) || in_thunk(ks, b.to));
		if (!headless && (in_hook(ks, b.from) || !in_hook(ks, b.to)))
			continue;
		out = false;
		helper = false;
		for (start = i++; i < last; i++) {
			rec_from_to(r, i, &b);
			/* In a function lbr_snap called, until back in it. */
			if (helper) {
				helper = !in_hook(ks, b.to);
				continue;
			}
			if (!in_hook(ks, b.from) && !in_thunk(ks, b.from))
				break;
			if (in_hook(ks, b.to) || in_thunk(ks, b.to))
				continue;
			/* A call from lbr_snap enters at a function's start. */
			if (in_hook(ks, b.from) && ksyms_name(ks, b.to, &off) &&
			    !off) {
				helper = true;
				continue;
			}
			out = true;
			break;
		}
		/* Out at entry i: a whole visit to the trampoline. */
		if (out) {
			folds[nr].first = start;
			folds[nr].headless = headless;
			folds[nr++].last = i;
		} else {
			i = start;	/* not one: on from the next entry */
		}
	}
	return nr;
}
