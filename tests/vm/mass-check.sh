#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-mass: 10,000 functions of vmlinux attached at once, made to
# capture and detached (tests/guest/mass-attach.sh) under a debug kernel
# large enough to have them (tests/vm/debug-mass.config: debug.config's
# checkers, plus networking and ext4), on the lab's legacy LBR with
# single-threaded TCG, the kernel log gate judging the kernel's side.
# make check runs the same script under debug.config's kernel, which has
# some 7,900 such functions; this one's build takes minutes more, so it
# is not part of make check.  Prints TAP and a last line
# "N passed, N failed, N skipped"; exits 1 on a failure.
set -o pipefail
. "$(dirname "$0")/lib.sh"
. "$LBR_TOP/tests/tap-count.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if kv=$("$LBR_TOP/tests/vm/debug-kernel.sh" mass); then
	LBR_PREBUILT='' "$LBR_TOP/tests/vm/run-vm.sh" --kver "$kv" --smp 2 \
		--cpu lbr-legacy --accel tcg,thread=single --timeout 3600 \
		--script "$LBR_TOP/tests/guest/mass-attach.sh" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
else
	echo "not ok - building the mass-attach debug kernel" | tee "$out"
	rc=1
fi
tap_count check-mass "$rc" "$out"
echo "$TAP_PASS passed, $TAP_FAIL failed, $TAP_SKIP skipped"
[ "$TAP_FAIL" = 0 ]
