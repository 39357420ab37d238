#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel-log gate on crafted logs: each kind of report, as the kernel
# prints it, must fail it; boot notes and lbr_snap's own messages must not.
# Prints TAP and "# Totals:".
set -uo pipefail
gate=$(dirname "$0")/kernel-log-gate.sh
pass=0 fail=0
t() {	# $1 = want (bad|good), $2 = log line
	if printf '[   12.345678] %s\n' "$2" | "$gate" >/dev/null; then got=good; else got=bad; fi
	if [ "$got" = "$1" ]; then
		echo "ok - $1: $2"; pass=$((pass + 1))
	else
		echo "not ok - want $1, the gate says $got: $2"; fail=$((fail + 1))
	fi
}
t bad 'WARNING: CPU: 1 PID: 123 at kernel/trace/ftrace.c:2180 ftrace_bug+0x2f0/0x320'
t bad 'WARNING: possible circular locking dependency detected'
t bad 'WARNING: suspicious RCU usage'
t bad 'BUG: unable to handle page fault for address: ffffc90000123000'
t bad 'BUG: KASAN: slab-use-after-free in lbr_capture+0x10/0x200 [lbr_snap]'
t bad 'kernel BUG at mm/slub.c:456!'
t bad 'Oops: 0000 [#1] PREEMPT SMP NOPTI'
t bad 'general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP'
t bad 'BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580'
t bad 'BUG: scheduling while atomic: lbr_snap_test/123/0x00000002'
t bad 'WARNING: inconsistent lock state'
t bad 'INFO: lockdep is turned off.'
t bad 'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'
t bad 'rcu: INFO: rcu_sched self-detected stall on CPU'
t bad 'INFO: task rmmod:345 blocked for more than 120 seconds.'
t bad 'watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [sh:99]'
t bad 'list_add corruption. prev->next should be next (ffff888003c1e0f8), but was 0000000000000000.'
t bad 'unchecked MSR access error: WRMSR to 0x1d9 (tried to write 0x0000000000000001) at rIP: 0xffffffffc0123456 (lbr_fexit_lbr_0+0x31/0x80 [lbr_snap])'
t bad 'kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)'
t bad 'UBSAN: array-index-out-of-bounds in src/lbr_decode.c:120:9'
t bad 'Kernel panic - not syncing: Fatal exception'
t bad 'lbr_snap: 1200 records committed, 1000 read, 199 flushed, 0 buffered: 1 unaccounted'
t good 'RETBleed: WARNING: Spectre v2 mitigation leaves CPU vulnerable to RETBleed attacks, data leaks possible!'
t good 'lbr_snap: legacy LBR, model 0x5e, format 5, depth 32'
t good 'lbr_snap: target do_sys_openat2: kretprobe'
t good 'x86/fpu: x87 FPU will use FXSAVE'
t good 'Freeing unused kernel image (initmem) memory: 2760K'
echo "# Totals: pass:$pass fail:$fail skip:0"
[ "$fail" = 0 ]
