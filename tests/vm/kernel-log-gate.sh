#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel-log gate: reads a kernel log on stdin and fails (exit 1,
# printing the report lines) if the kernel reported a problem: a WARN, a
# BUG or Oops, a fault, lockdep, RCU (suspicious use, stalls), a hung task,
# sleeping in atomic context, list corruption, an unchecked MSR access,
# KASAN, UBSAN, kmemleak, or a panic; and lbr_snap's own books at unload
# not adding up (records committed and never read, flushed or buffered).  Boot-time notes such as "RETBleed:
# WARNING: ..." are not reports.  Runs in the guest's /init (busybox) and
# on the host (tests/vm/test-log-gate.sh proves every kind is caught).
bad='WARNING: (CPU:|at |possible|inconsistent|suspicious)|BUG:|kernel BUG at|Oops|general protection|sleeping function called from invalid context|possible circular locking|possible recursive locking|inconsistent lock state|INFO: lockdep|suspicious RCU usage|rcu: INFO: .*detected stall|self-detected stall|INFO: task .* blocked for more than|list_(add|del) corruption|unchecked MSR access error|kmemleak:.*new suspected|KASAN:|UBSAN:|Kernel panic|lbr_snap: .* unaccounted'
grep -E "$bad"
[ $? = 1 ]
