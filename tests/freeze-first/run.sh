#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The freeze-first suite of make check: the check on the module just built,
# then on crafted objects, one per forbidden form, each of which must make
# it fail (and one correct object, which must pass).
# Usage: tests/freeze-first/run.sh lbr_snap.ko lbr_snap_fexit.ko
#                                          (TAP, "# Totals:" last)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 lbr_snap.ko lbr_snap_fexit.ko" >&2; exit 2; }
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }

out=$(python3 "$here/check.py" --its "$@")
rc=$?
names=$(for k in "$@"; do basename "$k"; done | paste -sd' ')
printf '%s\n' "$out" | sed 's/^/# /'
if [ "$rc" = 0 ]; then
	ok "$names: $(printf '%s\n' "$out" | grep -c '^ok') checks of the freeze"
else
	notok "$names: the freeze check failed (above)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A handler and a trampoline shaped like the module's; @H@ goes before the
# handler's WRMSR, @T@ before the trampoline's, @ECX@ sets the MSR number.
cat >"$tmp/tmpl.S" <<'ASM'
	.text
	.globl lbr_ret_handler, lbr_fexit_call_rest, lbr_fexit_lbr_0, lbr_detect
	.globl lbr_fexit_enter
lbr_ret_handler:
	@ECX@
	rdmsr
	and $0xfffffffe, %eax
	@H@
	wrmsr
1:	ret
lbr_fexit_call_rest:
	ret
lbr_fexit_enter:
	ret
lbr_fexit_lbr_0:
	push %rbp
	push %rdi
	call lbr_fexit_enter
	pop %rdi
	@PRE@
	call lbr_fexit_call_rest
	pushfq
	@CLI@
	@Q@
	mov lbr_fexit_ctl_msr(%rip), %ecx
	rdmsr
	@T@
	wrmsr
	@POST@
	call lbr_fexit_enter
1:	popfq
	pop %rbp
	ret
9:	@QP@
8:	@SKP@
lbr_detect:
	movl $0x1d9, lbr_hw+0x10(%rip)
	movl $0x14ce, lbr_hw+0x10(%rip)
	ret
	.data
	.globl lbr_hw, lbr_fexit_ctl_msr, lbr_fexit_rets
	.globl lbr_fexit_quiet, lbr_fexit_calls
	.globl lbr_fexit_unfollowed, current_task, pcpu_hot
lbr_hw:	.zero 64
lbr_fexit_ctl_msr:	.long 0
lbr_fexit_rets:	.zero 64
lbr_fexit_quiet:	.zero 16
lbr_fexit_calls:	.zero 16
lbr_fexit_unfollowed:	.zero 16
current_task:	.zero 16
pcpu_hot:	.zero 64
ASM

# The quiet test of slot 0 (src/ret_quiet.S) and its path.
quiet='mov lbr_fexit_rets+16(%rip), %rcx; mov %rax, %r10; shl %cl, %r10; sar %cl, %r10; sub lbr_fexit_rets+8(%rip), %r10; cmp lbr_fexit_rets(%rip), %r10; jb 9f'
qpath='incq %gs:lbr_fexit_quiet; decq %gs:lbr_fexit_calls; popfq; leave; add \$8, %rsp; ret'
# The entry's let-go test (src/fexit_tramp.S) and its path.
skip='mov %gs:lbr_fexit_unfollowed, %r11; cmp %gs:current_task, %r11; je 8f'
spath='incq %gs:lbr_fexit_quiet; ret'

# $1 name, $2 handler line, $3 trampoline line, $4 ECX line, $5 before the
# trampoline's call; $6 = pass|fail; $7 the trampoline's CLI (default cli),
# $8 what follows its WRMSR (default nop), $9 its quiet test (default
# $quiet), $10 its quiet path (default $qpath), $11 the path at label 8
# (default $spath, the entry's let-go path)
crafted() {
	local o=$tmp/$1.o got
	sed -e "s|@H@|$2|" -e "s|@T@|$3|" -e "s|@ECX@|$4|" -e "s|@PRE@|$5|" \
		-e "s|@CLI@|${7-cli}|" -e "s|@POST@|${8-nop}|" \
		-e "s|@Q@|${9-$quiet}|" -e "s|@QP@|${10-$qpath}|" \
		-e "s|@SKP@|${11-$spath}|" \
		"$tmp/tmpl.S" >"$tmp/$1.S"
	if ! as --64 -o "$o" "$tmp/$1.S" 2>"$tmp/$1.as"; then
		notok "$1: the assembler refuses it: $(head -n1 "$tmp/$1.as")"
		return
	fi
	got=$(python3 "$here/check.py" "$o")
	rc=$?
	if [ "$6" = pass ] && [ "$rc" = 0 ]; then
		ok "$1: passes"
	elif [ "$6" = fail ] && [ "$rc" != 0 ]; then
		ok "$1: refused: $(grep -m1 '^not ok' <<<"$got" | sed 's/^not ok - //')"
	else
		notok "$1: check exit $rc, want $6"
		sed 's/^/#   /' <<<"$got"
	fi
}

ecx='mov lbr_hw+0x10(%rip), %ecx'
crafted correct nop nop "$ecx" nop pass
crafted ecx-immediate nop nop 'mov $0x1d9, %ecx' nop pass
# Every control transfer, before the handler's WRMSR and, separately,
# between the trampoline's call and its WRMSR.
forms=(
	'ret' 'ret $8' 'repz ret' 'bnd ret' 'lret' 'lretq' 'iretq' 'iret' 'uiret'
	'jmp 1f' 'jmp *%rax' 'notrack jmp *%rax' 'bnd jmp *%rax' 'ds jmp *%rax'
	'ljmp *(%rax)' 'jne 1f' 'jg 1f' 'jrcxz 1f' 'jecxz 1f' 'loop 1f'
	'loope 1f' 'loopne 1f' 'call 1f' 'call *%rax' 'notrack call *%rax'
	'call *(%rax)' 'lcall *(%rax)' 'syscall' 'sysenter' 'sysretq' 'sysexit'
	'int3' 'int $0x80' 'int1' 'ud2' 'ud1 %eax, %eax' 'ud0 %eax, %eax'
	'xbegin 1f' 'xabort $1' 'vmcall' 'vmmcall' 'vmlaunch' 'vmresume' 'vmrun'
	'vmfunc' 'enclu' 'encls' 'tdcall' 'seamcall' '.byte 0x06'
	'.byte 0x48, 0xc3' '.byte 0x2e, 0x48, 0xff, 0xe0' '.byte 0xf3, 0x48, 0xc3'
)
for f in "${forms[@]}"; do
	crafted "handler: $f" "$f" nop "$ecx" nop fail
	crafted "trampoline: $f" nop "$f" "$ecx" nop fail
done
# The CPU check's chain (src/lbr_selftest.c), beside the correct
# template: as built, then with an instrumentation call before _b's call
# of _c, then before _d's WRMSR.  $1 name, $2 in _b, $3 in _d, $4 pass|fail
chain() {
	local o=$tmp/chain-$1.o got
	cat >"$tmp/chain-$1.S" <<EOF
	.text
	.globl lbr_selftest_a, lbr_selftest_b, lbr_selftest_c, lbr_selftest_d
lbr_selftest_a:
	call lbr_selftest_b
	ret
lbr_selftest_b:
	$2
	call lbr_selftest_c
	ret
lbr_selftest_c:
	call lbr_selftest_d
	ret
lbr_selftest_d:
	mov lbr_hw+0x10(%rip), %ecx
	rdmsr
	$3
	wrmsr
	ret
EOF
	if ! as --64 -o "$o" "$tmp/chain-$1.S" 2>"$tmp/chain-$1.as"; then
		notok "chain $1: the assembler refuses it: $(head -n1 "$tmp/chain-$1.as")"
		return
	fi
	got=$(python3 "$here/check.py" "$tmp/correct.o" "$o")
	rc=$?
	if [ "$4" = pass ] && [ "$rc" = 0 ]; then
		ok "chain $1: passes"
	elif [ "$4" = fail ] && [ "$rc" != 0 ]; then
		ok "chain $1: refused: $(grep -m1 '^not ok' <<<"$got" | sed 's/^not ok - //')"
	else
		notok "chain $1: check exit $rc, want $4"
		sed 's/^/#   /' <<<"$got"
	fi
}
chain correct nop nop pass
chain call-before-the-call 'call __asan_load4' nop fail
chain call-before-the-freeze nop 'call __asan_load4' fail
chain ret-before-the-freeze nop 'ret' fail
# --its: the template's returns fall anywhere, so the placement fails.
if python3 "$here/check.py" --its "$tmp/correct.o" >"$tmp/its.out" 2>&1; then
	notok "--its on returns placed anywhere: passes"
elif grep -q '^not ok - ITS placement' "$tmp/its.out"; then
	ok "--its on returns placed anywhere: refused: $(grep -m1 '^not ok - ITS' "$tmp/its.out" | sed 's/^not ok - //')"
else
	notok "--its on returns placed anywhere: failed for another reason"
	sed 's/^/#   /' "$tmp/its.out"
fi
# Aligned to 64, but with the returns where they fall: bit 5 is clear.
sed 's/^\t\.text$/\t.text\n\t.p2align 6/' "$tmp/correct.S" >"$tmp/its64.S"
if as --64 -o "$tmp/its64.o" "$tmp/its64.S" &&
   ! python3 "$here/check.py" --its "$tmp/its64.o" >"$tmp/its64.out" 2>&1 &&
   grep -q 'bit 5 clear' "$tmp/its64.out"; then
	ok "--its on returns with bit 5 clear: refused: $(grep -m1 'bit 5 clear' "$tmp/its64.out" | sed 's/^not ok - //')"
else
	notok "--its on returns with bit 5 clear: not refused for it"
	sed 's/^/#   /' "$tmp/its64.out"
fi
crafted "trampoline: jmp before the call" nop nop "$ecx" 'jmp 1f' fail
# The regs_only branch: forward, to no further than the call.
crafted "trampoline: jne over a count to the call" nop nop "$ecx" \
	'jne 2f; incq lbr_hw(%rip); 2:' pass
crafted "trampoline: jmp back before the call" nop nop "$ecx" \
	'2: nop; jmp 2b' fail
crafted "trampoline: jmp into the function's rest" nop nop "$ecx" \
	'jmp lbr_fexit_call_rest' fail
crafted "trampoline: jmp to the call's return" nop nop "$ecx" \
	'jmp 3f; call lbr_fexit_call_rest; 3:' fail
crafted "trampoline: a call of another function before the call" nop nop "$ecx" \
	'call lbr_detect' fail
crafted "trampoline: lbr_fexit_call_rest called twice" nop nop "$ecx" \
	'call lbr_fexit_call_rest' fail
# Interrupts off before the freeze, and kept off.
crafted "trampoline: no CLI" nop nop "$ecx" nop fail nop
crafted "trampoline: STI after the CLI" nop sti "$ecx" nop fail
crafted "trampoline: POPF after the CLI" nop 'pushfq; popfq' "$ecx" nop fail
crafted "trampoline: CLI after the freeze" nop nop "$ecx" nop fail nop cli
# Nothing on every call is shared by all CPUs: no atomics.
crafted "trampoline: lock inc of a shared count" nop nop "$ecx" \
	'lock incq lbr_hw(%rip)' fail
crafted "trampoline: xchg with memory (locked anyway)" nop nop "$ecx" \
	'xchg %rax, lbr_hw(%rip)' fail
crafted "trampoline: lock add after the freeze" nop nop "$ecx" nop fail cli \
	'lock addq \$1, lbr_hw(%rip)'
crafted "trampoline: xchg of registers (not locked)" nop nop "$ecx" \
	'xchg %rax, %rdx' pass
# The quiet test: its shape, on its own slot, after PUSHF and CLI, one JB
# past the freeze path's return to a path that is exactly the counts, POPF
# and the return.
q() { printf '%s' "$quiet" | sed "$1"; }
p() { printf '%s' "$qpath" | sed "$1"; }
crafted "quiet test missing" nop nop "$ecx" nop fail cli nop nop
crafted "quiet test: JAE, taken for an error" nop nop "$ecx" nop fail cli nop \
	"$(q 's/jb 9f/jae 9f/')"
crafted "quiet test: JB into the freeze" nop nop "$ecx" nop fail cli nop \
	"$(q 's/jb 9f/jb 8f/'); 8:"
crafted "quiet test: JB to the POPF after the freeze" nop nop "$ecx" nop fail \
	cli nop "$(q 's/jb 9f/jb 1f/')"
crafted "quiet test: a second JB" nop nop "$ecx" nop fail cli nop \
	"$quiet; jb 9f"
crafted "quiet test: another slot's limit" nop nop "$ecx" nop fail cli nop \
	"$(q 's/cmp lbr_fexit_rets(/cmp lbr_fexit_rets+32(/')"
crafted "quiet test: limit from lbr_hw" nop nop "$ecx" nop fail cli nop \
	"$(q 's/cmp lbr_fexit_rets(/cmp lbr_hw(/')"
crafted "quiet test: CMPXCHG for CMP (RAX clobbered)" nop nop "$ecx" nop fail \
	cli nop "$(q 's/cmp lbr_fexit_rets(%rip), %r10/cmpxchg %r10, lbr_fexit_rets(%rip)/')"
crafted "quiet test: no SAR (an int's upper half kept)" nop nop "$ecx" nop fail \
	cli nop "$(q 's/sar %cl, %r10; //')"
crafted "quiet test: RDX tested, not RAX" nop nop "$ecx" nop fail cli nop \
	"$(q 's/mov %rax, %r10/mov %rdx, %r10/')"
crafted "quiet test: before the CLI" nop nop "$ecx" nop fail nop nop \
	"$quiet; cli"
crafted "quiet path: RDMSR" nop nop "$ecx" nop fail cli nop "$quiet" \
	"mov lbr_hw+0x10(%rip), %ecx; rdmsr; $qpath"
crafted "quiet path: a WRMSR behind a JZ" nop nop "$ecx" nop fail cli nop \
	"$quiet" "jz 8f; 8: mov lbr_hw+0x10(%rip), %ecx; wrmsr; $qpath"
crafted "quiet path: a call" nop nop "$ecx" nop fail cli nop "$quiet" \
	"call lbr_detect; $qpath"
crafted "quiet path: JMP back to the exit path" nop nop "$ecx" nop fail cli \
	nop "$quiet" 'jmp 1b'
crafted "quiet path: no count out (the slot never drains)" nop nop "$ecx" nop \
	fail cli nop "$quiet" "$(p 's/decq %gs:lbr_fexit_calls; //')"
crafted "quiet path: another slot's count" nop nop "$ecx" nop fail cli nop \
	"$quiet" "$(p 's/incq %gs:lbr_fexit_quiet/incq %gs:lbr_fexit_quiet+8/')"
crafted "quiet path: no POPF (interrupts stay off)" nop nop "$ecx" nop fail \
	cli nop "$quiet" "$(p 's/popfq; //')"
# The entry's let-go test: the one way around the call of the function's
# rest, JE on the per-CPU task left out being the current one, to exactly
# the count of the slot's let-go calls and a return.
k() { printf '%s' "$skip" | sed "$1"; }
crafted "let-go test at the entry" nop nop "$ecx" "$skip" pass
crafted "let-go test, RIP-relative (6.12 on)" nop nop "$ecx" \
	"$(k 's/%gs:lbr_fexit_unfollowed,/%gs:lbr_fexit_unfollowed(%rip),/; s/%gs:current_task,/%gs:pcpu_hot(%rip),/')" pass
crafted "let-go test: JNE, taken for a task followed" nop nop "$ecx" \
	"$(k 's/je 8f/jne 8f/')" fail
crafted "let-go test: compared with another word" nop nop "$ecx" \
	"$(k 's/%gs:current_task/%gs:lbr_fexit_calls/')" fail
crafted "let-go test: current_task+8" nop nop "$ecx" \
	"$(k 's/%gs:current_task/%gs:current_task+8/')" fail
crafted "let-go test: loaded from another word" nop nop "$ecx" \
	"$(k 's/%gs:lbr_fexit_unfollowed/%gs:lbr_fexit_calls/')" fail
crafted "let-go test: not per CPU" nop nop "$ecx" \
	"$(k 's/%gs:lbr_fexit_unfollowed/lbr_fexit_unfollowed(%rip)/')" fail
crafted "let-go test: another register compared" nop nop "$ecx" \
	"$(k 's/cmp %gs:current_task, %r11/cmp %gs:current_task, %r10/')" fail
crafted "let-go test: JE without the compare" nop nop "$ecx" 'je 8f' fail
crafted "let-go path: no count" nop nop "$ecx" "$skip" fail cli nop \
	"$quiet" "$qpath" 'ret'
crafted "let-go path: another slot's count" nop nop "$ecx" "$skip" fail cli \
	nop "$quiet" "$qpath" 'incq %gs:lbr_fexit_quiet+8; ret'
crafted "let-go path: a call before the return" nop nop "$ecx" "$skip" fail \
	cli nop "$quiet" "$qpath" 'incq %gs:lbr_fexit_quiet; call lbr_detect; ret'
crafted "let-go path: to the exit path's POPF" nop nop "$ecx" \
	"$(k 's/je 8f/je 1f/')" fail
# The WRMSR must write the LBR control MSR.
crafted "WRMSR of MSR 0x10 (TSC)" nop nop 'mov $0x10, %ecx' nop fail
crafted "WRMSR of another lbr_hw field" nop nop 'mov lbr_hw+0x14(%rip), %ecx' nop fail
crafted "ECX set, then CPUID" 'cpuid' nop "$ecx" nop fail
crafted "ECX set, then changed" 'inc %ecx' nop "$ecx" nop fail
crafted "ECX set, then exchanged" 'xchg %eax, %ecx' nop "$ecx" nop fail
crafted "ECX never set" nop nop nop nop fail
sed -i 's/^\twrmsr$/\tnop/' "$tmp/tmpl.S"
crafted "no WRMSR in either" nop nop "$ecx" nop fail

echo "# Totals: pass:$pass fail:$fail skip:0"
[ "$fail" = 0 ]
