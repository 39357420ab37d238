#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The return handler must freeze LBR before any taken branch: disassemble
# the built module and fail if a jump, call or return comes before the
# first WRMSR of each freezing entry point.
# Usage: tests/check-freeze-first.sh lbr_snap.ko
set -euo pipefail
ko=${1:?usage: $0 lbr_snap.ko}
fns="lbr_ret_handler"
status=0
dis=$(objdump -d --no-show-raw-insn "$ko")
for fn in $fns; do
	body=$(printf '%s\n' "$dis" |
	       awk -v f="<$fn>:" '$2 == f { on = 1; next } on && /^$/ { on = 0 } on')
	if [ -z "$body" ]; then
		echo "not ok - $fn: not found in $ko"
		status=1
		continue
	fi
	before=$(printf '%s\n' "$body" | awk '/\twrmsr/ { stop = 1 } !stop')
	if ! printf '%s\n' "$body" | grep -q $'\twrmsr'; then
		echo "not ok - $fn: no WRMSR at all"
		status=1
	elif printf '%s\n' "$before" | grep -E $'\t(j[a-z]+|call|ret|loop[a-z]*|jmp)[ \t]'; then
		echo "not ok - $fn: a branch precedes the freeze (above)"
		status=1
	else
		echo "ok - $fn: $(printf '%s\n' "$before" | wc -l) instructions, none a branch, before the WRMSR"
	fi
done
exit $status
