/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Branch sequences with known addresses for the LBR lab proof tests.
 *
 * Every routine is called as
 *     routine(int fd, const uint64_t *on, const uint64_t *off, uint64_t msr)
 * and brackets its branches between two raw pwrite64(fd, buf, 8, msr)
 * system calls on /dev/cpu/0/msr: the first one enables LBR, the second
 * one disables it.  No libc code runs between them, so with CPL0
 * suppressed the LBR holds exactly the branches below (plus the SYSRET or
 * IRET back from the enabling call, a far branch, when far branches are
 * recorded).
 */
	.text

.macro	SYS_PWRITE bufreg
	mov	$18, %eax		/* __NR_pwrite64 */
	mov	%r12, %rdi		/* fd */
	mov	\bufreg, %rsi		/* buf */
	mov	$8, %edx		/* count */
	mov	%r14, %r10		/* offset = MSR number */
	syscall
.endm

.macro	PROLOGUE
	push	%rbx
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	mov	%rdi, %r12
	mov	%rsi, %r15		/* &on */
	mov	%rdx, %r13		/* &off */
	mov	%rcx, %r14		/* msr */
.endm

.macro	EPILOGUE
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbx
	ret
.endm

/* One of each near branch kind; see EXPECTED_SEQ in lbrtest.c */
	.globl	lbr_seq
	.type	lbr_seq, @function
lbr_seq:
	PROLOGUE
	SYS_PWRITE %r15
	.globl	lbr_seq_L0
lbr_seq_L0:
	xor	%eax, %eax
	test	%eax, %eax
	jnz	lbr_seq_bad		/* not taken: not recorded */
	.globl	lbr_seq_b1
lbr_seq_b1:
	jz	lbr_seq_L1		/* JCC */
	ud2
	.globl	lbr_seq_L1
lbr_seq_L1:
	.globl	lbr_seq_b2
lbr_seq_b2:
	jmp	lbr_seq_L2		/* NEAR_REL_JMP */
	ud2
	.globl	lbr_seq_L2
lbr_seq_L2:
	.globl	lbr_seq_b3
lbr_seq_b3:
	call	lbr_seq_F1		/* NEAR_REL_CALL */
	.globl	lbr_seq_r1
lbr_seq_r1:
	lea	lbr_seq_F2(%rip), %rax
	.globl	lbr_seq_b5
lbr_seq_b5:
	call	*%rax			/* NEAR_IND_CALL */
	.globl	lbr_seq_r2
lbr_seq_r2:
	lea	lbr_seq_L3(%rip), %rax
	.globl	lbr_seq_b7
lbr_seq_b7:
	jmp	*%rax			/* NEAR_IND_JMP */
	ud2
	.globl	lbr_seq_L3
lbr_seq_L3:
	mov	$3, %ecx
	.globl	lbr_seq_L4
lbr_seq_L4:
	.globl	lbr_seq_b8
lbr_seq_b8:
	loop	lbr_seq_L4		/* JCC, taken twice */
	xor	%ecx, %ecx
	.globl	lbr_seq_b9
lbr_seq_b9:
	jrcxz	lbr_seq_L5		/* JCC */
	ud2
	.globl	lbr_seq_L5
lbr_seq_L5:
	.globl	lbr_seq_b10
lbr_seq_b10:
	.byte	0xeb, 0x00		/* jmp .+2: NEAR_REL_JMP to the next insn */
	.globl	lbr_seq_L6
lbr_seq_L6:
	SYS_PWRITE %r13
	EPILOGUE

	.globl	lbr_seq_F1
lbr_seq_F1:
	.globl	lbr_seq_b4
lbr_seq_b4:
	ret				/* NEAR_RET */
	.globl	lbr_seq_F2
lbr_seq_F2:
	.globl	lbr_seq_b6
lbr_seq_b6:
	ret	$0			/* NEAR_RET (ret imm16) */
lbr_seq_bad:
	ud2
	.size	lbr_seq, . - lbr_seq

/* 40 distinct taken jumps (4 bytes each): more than the 32 entries */
	.globl	lbr_chain
	.type	lbr_chain, @function
lbr_chain:
	PROLOGUE
	SYS_PWRITE %r15
	.globl	lbr_chain_start
lbr_chain_start:
	.rept	40
	.byte	0xeb, 0x02		/* jmp .+4 */
	ud2
	.endr
	.globl	lbr_chain_end
lbr_chain_end:
	SYS_PWRITE %r13
	EPILOGUE
	.size	lbr_chain, . - lbr_chain

/*
 * Migration: enable, two branches, announce on stdout, block in read(0)
 * while the host migrates the VM, two more branches, disable.
 */
	.globl	lbr_mig
	.type	lbr_mig, @function
lbr_mig:
	PROLOGUE
	SYS_PWRITE %r15
	.globl	lbr_mig_b1
lbr_mig_b1:
	jmp	lbr_mig_L1		/* NEAR_REL_JMP */
	ud2
	.globl	lbr_mig_L1
lbr_mig_L1:
	.globl	lbr_mig_b2
lbr_mig_b2:
	call	lbr_mig_F		/* NEAR_REL_CALL */
	.globl	lbr_mig_r1
lbr_mig_r1:
	mov	$1, %eax		/* write(1, msg, len) */
	mov	$1, %edi
	lea	lbr_mig_msg(%rip), %rsi
	mov	$lbr_mig_msg_len, %edx
	syscall
	sub	$72, %rsp		/* read(0, buf, 64): host migrates */
	xor	%eax, %eax
	xor	%edi, %edi
	mov	%rsp, %rsi
	mov	$64, %edx
	syscall
	add	$72, %rsp
	.globl	lbr_mig_b4
lbr_mig_b4:
	jmp	lbr_mig_L2		/* NEAR_REL_JMP */
	ud2
	.globl	lbr_mig_L2
lbr_mig_L2:
	.globl	lbr_mig_b5
lbr_mig_b5:
	call	lbr_mig_F		/* NEAR_REL_CALL */
	.globl	lbr_mig_r2
lbr_mig_r2:
	SYS_PWRITE %r13
	EPILOGUE
	.globl	lbr_mig_F
lbr_mig_F:
	.globl	lbr_mig_b3
lbr_mig_b3:
	ret				/* NEAR_RET */
	.size	lbr_mig, . - lbr_mig

	.section .rodata
lbr_mig_msg:
	.ascii	"LBRLAB-MIGRATE-READY\n"
	.set	lbr_mig_msg_len, . - lbr_mig_msg
	.text

/*
 * PMU proofs (lbrtest pmu): pmu_loop(n), n >= 1, executes exactly
 * 2n + 2 instructions of its own (mov, n x (dec, jnz), ret) of which
 * n + 1 are branch instructions (n x jnz, taken n - 1 times, and ret);
 * with the caller's call: 2n + 3 instructions, n + 2 branches.  The
 * back-edge is pmu_loop_br -> pmu_loop_top.
 */
	.globl	pmu_loop
	.type	pmu_loop, @function
pmu_loop:
	mov	%rdi, %rcx
	.globl	pmu_loop_top
pmu_loop_top:
	dec	%rcx
	.globl	pmu_loop_br
pmu_loop_br:
	jnz	pmu_loop_top
	ret
	.globl	pmu_loop_end
pmu_loop_end:
	.size	pmu_loop, . - pmu_loop

	.section .note.GNU-stack, "", @progbits
