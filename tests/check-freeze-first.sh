#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# LBR must be frozen before any taken branch of ours: disassemble the built
# module and fail if a jump, call or return comes
# - in the kretprobe return handler, before its first WRMSR;
# - in each fexit trampoline that freezes (lbr_fexit_lbr_N), between the
#   CALL of the traced function's rest (what the function returns to) and
#   the WRMSR.
# Usage: tests/check-freeze-first.sh lbr_snap.ko
set -euo pipefail
ko=${1:?usage: $0 lbr_snap.ko}
status=0
dis=$(objdump -d --no-show-raw-insn "$ko")
branch=$'\t(j[a-z]+|call|ret|loop[a-z]*|jmp)[ \t]'

body_of() {
	printf '%s\n' "$dis" |
		awk -v f="<$1>:" '$2 == f { on = 1; next } on && /^$/ { on = 0 } on'
}

# $1 name, $2 the instructions from where no branch may come
check() {
	local before
	before=$(printf '%s\n' "$2" | awk '/\twrmsr/ { stop = 1 } !stop')
	if ! printf '%s\n' "$2" | grep -q $'\twrmsr'; then
		echo "not ok - $1: no WRMSR at all"
		status=1
	elif printf '%s\n' "$before" | grep -E "$branch"; then
		echo "not ok - $1: a branch precedes the freeze (above)"
		status=1
	else
		echo "ok - $1: $(printf '%s\n' "$before" | grep -c .) instructions, none a branch, before the WRMSR"
	fi
}

body=$(body_of lbr_ret_handler)
if [ -z "$body" ]; then
	echo "not ok - lbr_ret_handler: not found in $ko"
	status=1
else
	check lbr_ret_handler "$body"
fi

tramps=$(printf '%s\n' "$dis" | sed -n 's/^[0-9a-f]* <\(lbr_fexit_lbr_[0-9]*\)>:$/\1/p')
n=0 bad=0
for t in $tramps; do
	body=$(body_of "$t")
	call=$(printf '%s\n' "$body" | grep -m1 -E $'\tcall')
	case $call in
	*"<lbr_fexit_call_rest>"*) ;;
	*)
		echo "not ok - $t: its first call is not to lbr_fexit_call_rest: $call"
		status=1 bad=$((bad + 1))
		continue
		;;
	esac
	# What the traced function returns to: everything after that CALL.
	out=$(check "$t" "$(printf '%s\n' "$body" | awk 'on; /\tcall/ && !on { on = 1 }')")
	case $out in
	ok*) n=$((n + 1)) ;;
	*) printf '%s\n' "$out"; status=1 bad=$((bad + 1)) ;;
	esac
done
if [ -z "$tramps" ]; then
	echo "not ok - no fexit trampolines (lbr_fexit_lbr_N) in $ko"
	status=1
elif [ "$bad" = 0 ]; then
	echo "ok - fexit trampolines: all $n freeze before any branch after the traced function returns"
fi
exit $status
