/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fexit trampolines: what an ftrace direct call on a target's fentry site
 * jumps to.  Modelled on the x86 BPF trampoline with BPF_TRAMP_F_CALL_ORIG
 * and BPF_TRAMP_F_SKIP_FRAME (arch/x86/net/bpf_jit_comp.c), fixed in the
 * module instead of generated: one per slot, so the slot number is an
 * immediate and the trampoline needs no lookup.
 *
 * On entry the stack holds the address after the fentry call (the rest of
 * the traced function) and, above it, the traced function's return address
 * into its caller.  The trampoline notes the TSC in its frame, for the
 * record's duration, counts the call in (lbr_fexit_enter(),
 * the argument registers saved around it, as the BPF trampoline does
 * around __bpf_tramp_enter()), then calls the rest of the function with
 * the argument registers as they came and, above its return address, a
 * copy of the words the caller left above its own: the function finds
 * its stack arguments (beyond six, or structs by value) where it would
 * without the trampoline, whatever it is and whatever the user said of
 * its arguments.  The BPF trampoline copies them the same way, knowing
 * their size from BTF; this one copies LBR_FEXIT_STACK_WORDS.
 *
 * The instruction the function returns to turns interrupts off and tests
 * the value against the slot's struct lbr_ret_quiet (ret_class.h): a
 * return the slot does not record, a success under capture=errors, is
 * counted and goes straight back, with no MSR access (on real silicon
 * each costs hundreds of cycles, and a WRMSR of DEBUGCTL in a guest is a
 * VM exit).  For any other the test's one branch is not taken, so it
 * leaves no LBR entry, and the trampoline freezes LBR with
 * RDMSR/AND/WRMSR, with no branch in between: the function's RET (or its
 * JMP to the return thunk and the thunk's RET) is the last branch
 * recorded, and nothing can move the task to another CPU or run an
 * interrupt handler between the return and the read.  Then the capture
 * code runs in C (lbr_fexit_exit_*(), which counts the call out), LBR is
 * unfrozen only then, interrupts are restored and the trampoline returns
 * straight to the caller with the function's return value, skipping the
 * frame of the fentry call: of a hooked call nested in a traced one, the
 * outer record holds the entries of the trampoline's way in and of its
 * return, not those of the capture (unless perf's PMI turned LBR back on
 * in between, as it does before perfmon version 4).
 *
 * Before all that, on entry: a call of the task the client's filter
 * leaves out on this CPU (lbr_fexit_unfollowed) is counted as let go and
 * returns into the traced function at once, which then returns to its
 * caller as if it were not hooked.  For any other task the JE is not
 * taken, and the way in is as above.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm.h>
#include <asm/unwind_hints.h>
#include <asm/nospec-branch.h>
#include <asm/percpu.h>

#include "compat.h"
#include "fexit_slots.h"
#include "ret_quiet.S"

/*
 * Under the ITS mitigation the kernel turns a RET into a plain `ret` only
 * where bit 5 of its address is set, and sends the others through
 * its_return_thunk, an LBR entry more (cpu_wants_rethunk_at(),
 * arch/x86/kernel/alternative.c).  The returns of hooked calls go there,
 * at an offset of 32 to 63 in a 64-byte line of a section aligned to 64
 * (tests/freeze-first/check.py --its checks each build): the quiet path's
 * and lbr_fexit_call_rest's with padding that never runs, the capture
 * path's after up to 95 bytes of long NOPs.
 */
.macro LBR_RET_AT_BIT5
	.p2align 6
	.nops	32
.endm

.macro LBR_FEXIT_TRAMP kind, n
/*
 * SYM_FUNC_START_LOCAL() adds the ENDBR up to 6.12 and no longer in 7.2:
 * SYM_START() and an explicit ENDBR give one in every kernel with IBT.
 * The call from the fentry site is ftrace's, not a call the kernel gave a
 * call-depth thunk: account it here, once.  The calls below are direct
 * calls of this module, which get their thunk when it loads, as in
 * samples/ftrace/ftrace-direct.c.
 */
SYM_START(lbr_fexit_\kind\()_\n, SYM_L_LOCAL, SYM_A_ALIGN)
	ENDBR
	CALL_DEPTH_ACCOUNT
	/*
	 * A task the client's filter leaves out: the call goes on as if not
	 * hooked (fexit_slots.h, lbr_fexit_unfollowed).  R11 is free at a
	 * function's entry: no argument is passed in it, the call-site
	 * thunks (retpoline, kCFI, FineIBT, ITS) use it before the call
	 * only, and ftrace_regs_caller does not restore it before jumping
	 * here.  Any other task falls through.
	 */
	movq	PER_CPU_VAR(lbr_fexit_unfollowed), %r11
	cmpq	PER_CPU_VAR(LBR_CURRENT_TASK), %r11
	je	.Lunfollowed_\kind\()_\n
	pushq	%rbp
	movq	%rsp, %rbp
	/*
	 * When the call came in, for its record's duration: the TSC at
	 * -8(%rbp), under the copy, handed to the capture on the way out.
	 * RDTSC is no MSR access and no branch (some 25 cycles); it takes
	 * EAX (AL: the vector registers of a varargs call) and EDX (the
	 * third argument), kept in R11 and on the stack.
	 */
	movq	%rax, %r11
	pushq	%rdx
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	popq	%rdx
	pushq	%rax
	movq	%r11, %rax
	/* Room for the caller's stack arguments, just above .Lret's slot. */
	subq	$8 * LBR_FEXIT_STACK_WORDS, %rsp
	/*
	 * A function whose arguments are all in registers reads none of
	 * them: count the call in (lbr_fexit_calls.n[slot]) and go.
	 */
	cmpb	$0, lbr_fexit_regs_only + \n(%rip)
	je	.Lcopy_\kind\()_\n
	incq	PER_CPU_VAR(lbr_fexit_calls + 8 * \n)
	jmp	.Lcall_\kind\()_\n
.Lcopy_\kind\()_\n:
	/* Count the call in and copy them, keeping the register arguments. */
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%r8
	pushq	%r9
	pushq	%rax		/* vector registers used, for varargs */
	movl	$\n, %edi
	leaq	24(%rbp), %rsi		/* above the caller's return address */
	leaq	-8 * (LBR_FEXIT_STACK_WORDS + 1)(%rbp), %rdx
	call	lbr_fexit_enter
	popq	%rax
	popq	%r9
	popq	%r8
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
.Lcall_\kind\()_\n:
	call	lbr_fexit_call_rest
.Lret_\kind\()_\n:
	/*
	 * Back from the traced function: %rax and %rdx hold its value, and
	 * %rsp points at the copy.  Interrupts off first: none may come
	 * between the function's return and the freeze.  A return the slot
	 * does not record (a success, under capture=errors) goes: no MSR
	 * touched.  Any other falls through that test, no branch taken, to
	 * the freeze, no branch before the WRMSR.  An interrupt taken right
	 * here is delivered from .Lret, not a branch itself: how the reader
	 * tells its IRET back here from the return (lbr_return_entries()).
	 */
	pushfq
	cli
	LBR_RET_QUIET	lbr_fexit_rets+LBR_RET_QUIET_SIZE*\n, %rip, .Lquiet_\kind\()_\n
	movq	%rax, %r10
	movq	%rdx, %r11
.ifc \kind, lbr
	/* The enable bit is in the low half: the high one goes back as is. */
	movl	lbr_fexit_ctl_msr(%rip), %ecx
1:	rdmsr
2:	movl	%eax, %r9d
	andl	lbr_fexit_keep(%rip), %eax
3:	wrmsr
4:
	LBR_ASM_EXTABLE_RDMSR(1b, 2b)
	LBR_ASM_EXTABLE_WRMSR(3b, 4b)
	/* For the unfreeze: the MSR, and the bits the freeze cleared. */
	xorl	%r9d, %eax
	shlq	$32, %rcx
	orq	%rax, %rcx
	pushq	%rcx
	movl	%r9d, %ecx		/* the low half before the freeze */
	movq	8(%rbp), %r8		/* which function: its fentry call's return */
	movq	-8(%rbp), %r9		/* the TSC when it was called */
.else
	movq	8(%rbp), %rcx		/* which function: its fentry call's return */
	movq	-8(%rbp), %r8		/* the TSC when it was called */
.endif
	pushq	%r10
	pushq	%r11
	movl	$\n, %edi
	movq	%r10, %rsi
	movq	16(%rbp), %rdx		/* the traced function's caller */
	call	lbr_fexit_exit_\kind
.ifc \kind, lbr
	/*
	 * Unfreeze as the trampoline leaves, not in the capture: what the
	 * capture did after its read is no LBR entry of the caller's (a
	 * nested hooked call's capture took 15 to 29 of an outer record's).
	 * The bits go back into what the MSR holds now, as perf or a #DB
	 * may have changed the others.  None cleared (LBR was off, or no
	 * client): no MSR access, and the JZ taken (an LBR entry if LBR is
	 * on; when the freeze cleared bits, it is not taken).
	 */
	movq	16(%rsp), %r10
	testl	%r10d, %r10d
	jz	.Lthawed_\kind\()_\n
	movq	%r10, %rcx
	shrq	$32, %rcx
5:	rdmsr
6:	orl	%r10d, %eax
7:	wrmsr
8:
	LBR_ASM_EXTABLE_RDMSR(5b, 6b)
	LBR_ASM_EXTABLE_WRMSR(7b, 8b)
.Lthawed_\kind\()_\n:
.endif
	popq	%rdx
	popq	%rax
.ifc \kind, lbr
	addq	$8, %rsp
.endif
	popfq
	leave				/* the copy goes too */
	/* Drop the return into the traced function: back to its caller. */
	addq	$8, %rsp
	UNWIND_HINT_FUNC
	LBR_RET_AT_BIT5
	RET
	/* The quiet path's RET at offset 32 of a line, its padding not run. */
	.p2align 6, 0xcc
	.skip	32 - (.Lquiet_ret_\kind\()_\n - .Lquiet_\kind\()_\n), 0xcc
.Lquiet_\kind\()_\n:
	/* Counted, and counted out: a success costs this and no MSR access. */
	incq	PER_CPU_VAR(lbr_fexit_quiet + 8 * \n)
	decq	PER_CPU_VAR(lbr_fexit_calls + 8 * \n)
	popfq
	leave
	addq	$8, %rsp
	UNWIND_HINT_FUNC
.Lquiet_ret_\kind\()_\n:
	RET
	/*
	 * The call of a task left out, in the same line, its RET at bit 5
	 * too (at most 5 + 9 bytes after the one above, at 32; the --its
	 * check of tests/freeze-first sees each build): counted as let go,
	 * back into the traced function, whose own return then goes to its
	 * caller.  Nothing to undo: the entry touched no register but R11
	 * and the flags.
	 */
.Lunfollowed_\kind\()_\n:
	incq	PER_CPU_VAR(lbr_fexit_quiet + 8 * \n)
.Lunfollowed_ret_\kind\()_\n:
	RET
SYM_FUNC_END(lbr_fexit_\kind\()_\n)
_ASM_NOKPROBE(lbr_fexit_\kind\()_\n)
.endm

	.text
/*
 * Called by a trampoline, with its frame pointer in %rbp: jump to the rest
 * of the traced function (the fentry call's return address, 8(%rbp)), so
 * that the function returns to the trampoline.  PUSH and RET rather than an
 * indirect CALL in the trampoline: the target is no ENDBR, and IBT would
 * refuse an indirect branch to it.
 */
	/* Its RET at offset 32 to 63 of a line: the padding is not run. */
	.p2align 6, 0x90
	.skip	32, 0x90
SYM_FUNC_START_LOCAL(lbr_fexit_call_rest)
	pushq	8(%rbp)
	UNWIND_HINT_FUNC
	RET
SYM_FUNC_END(lbr_fexit_call_rest)
_ASM_NOKPROBE(lbr_fexit_call_rest)

/* Apply macro @m to (@kind, slot) for every slot. */
.macro LBR_FOR_EACH_SLOT m, kind
	.set	lbr_fexit_nr, 0
.irp n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, \
	13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, \
	26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, \
	39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, \
	52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, \
	65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, \
	78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, \
	91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, \
	104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, \
	117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, \
	130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, \
	143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, \
	156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, \
	169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, \
	182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, \
	195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, \
	208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, \
	221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, \
	234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, \
	247, 248, 249, 250, 251, 252, 253, 254, 255
	\m \kind, \n
	.set	lbr_fexit_nr, lbr_fexit_nr + 1
.endr
.if lbr_fexit_nr - LBR_FEXIT_SLOTS
	.error "the slot list does not match LBR_FEXIT_SLOTS"
.endif
.endm

.macro LBR_FEXIT_ADDR kind, n
	.quad	lbr_fexit_\kind\()_\n
.endm

.macro LBR_FEXIT_RET_OFF kind, n
	.long	.Lret_\kind\()_\n - lbr_fexit_\kind\()_\n
.endm

	LBR_FOR_EACH_SLOT LBR_FEXIT_TRAMP, lbr
	LBR_FOR_EACH_SLOT LBR_FEXIT_TRAMP, nolbr

	.section .rodata
	.balign 8
SYM_DATA_START(lbr_fexit_tramps)
	LBR_FOR_EACH_SLOT LBR_FEXIT_ADDR, lbr
	LBR_FOR_EACH_SLOT LBR_FEXIT_ADDR, nolbr
SYM_DATA_END(lbr_fexit_tramps)

	.balign 4
SYM_DATA_START(lbr_fexit_ret_offs)
	LBR_FOR_EACH_SLOT LBR_FEXIT_RET_OFF, lbr
	LBR_FOR_EACH_SLOT LBR_FEXIT_RET_OFF, nolbr
SYM_DATA_END(lbr_fexit_ret_offs)
