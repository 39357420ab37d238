#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit test of the fexit trampolines' quiet test (src/ret_class.h and the
# instructions of src/ret_quiet.S), in user space: it must let a return
# go exactly when the capture's own filter would not record it, for every
# return type and capture mode (tests/unit/ret_class_test.c).  Then four
# broken copies of it must fail: a JBE for the JB (the errno at the edge
# of the range let go), no SAR (an int judged with its upper half), a
# pointer test without its bias (NULL let go), and a capture=all that
# changes the shift too (a mode change would then not be one store).
# No module, kernel headers or root needed.
#
#   tests/unit/ret_class.sh           build, run, print TAP
#   CC=clang tests/unit/ret_class.sh  another compiler
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CC=${CC:-gcc}
CFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# $1 = directory holding ret_class.h and ret_quiet.S, $2 = binary
build() {
	"$CC" "${CFLAGS[@]}" "-I$ROOT/include" "-I$1" -D__ASSEMBLY__ \
		-c "$HERE/ret_quiet_test.S" -o "$2.o" 2>"$2.err" &&
	"$CC" "${CFLAGS[@]}" "-I$ROOT/include" "-I$1" -o "$2" \
		"$HERE/ret_class_test.c" "$2.o" 2>>"$2.err"
}

if ! build "$ROOT/src" "$T/ret_class_test"; then
	sed 's/^/# /' "$T/ret_class_test.err"
	echo "Bail out! cannot build tests/unit/ret_class_test.c"
	echo "# Totals: pass:0 fail:1 skip:0"
	exit 1
fi
"$T/ret_class_test" >"$T/out"
rc=$?
grep -v '^# Totals' "$T/out" | sed 's/^1\.\.26$/1..30/'
pass=$(sed -n 's/^# Totals: pass:\([0-9]*\).*/\1/p' "$T/out")
fail=$(sed -n 's/^# Totals: pass:[0-9]* fail:\([0-9]*\).*/\1/p' "$T/out")
[ -n "$pass" ] && [ -n "$fail" ] || { pass=0; fail=1; }
[ "$rc" = 0 ] || [ "$fail" != 0 ] || fail=1

n=26
broken() {	# $1 name, $2 file, $3 sed expression
	local d=$T/${1// /_}
	n=$((n + 1))
	mkdir -p "$d"
	cp "$ROOT/src/ret_class.h" "$ROOT/src/ret_quiet.S" "$d/"
	sed -i "$3" "$d/$2"
	if cmp -s "$d/$2" "$ROOT/src/$2"; then
		echo "not ok $n - broken: $1: the sed changed nothing in $2"
		fail=$((fail + 1))
	elif ! build "$d" "$d/t"; then
		echo "not ok $n - broken: $1: does not build"
		sed 's/^/# /' "$d/t.err"
		fail=$((fail + 1))
	elif "$d/t" >"$d/out"; then
		echo "not ok $n - broken: $1: passes"
		fail=$((fail + 1))
	else
		echo "ok $n - broken: $1: fails ($(grep -m1 '^not ok' "$d/out" | sed 's/^not ok [0-9]* - //'))"
		pass=$((pass + 1))
	fi
}
broken "JBE for JB" ret_quiet.S 's/^\tjb\t/\tjbe\t/'
broken "no SAR" ret_quiet.S '/^\tsarq\t/d'
broken "a pointer without its bias" ret_class.h '/case LBR_SNAP_RET_PTR:/,/break;/s/q.bias = 1;/q.bias = 0;/'
broken "capture=all changing the shift" ret_class.h 's/^\tif (!errors_only)$/\tif (!errors_only \&\& (q.shift = 0, 1))/'
echo "# Totals: pass:$pass fail:$fail skip:0"
[ "$fail" = 0 ]
