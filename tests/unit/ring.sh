#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's record ring, src/lbr_ring.h, in user space under
# ThreadSanitizer (tests/unit/ring_test.c): a writer and a reader thread
# through a 4 KiB ring, every record out once, in order, whole.  Then
# broken builds that must fail, with a data race report or on the records
# they give: the index loads without acquire, a reader that gives the
# bytes back before it has read them, a trim that moves the head too far.
# Each run is bounded (timeout).  Prints TAP; no module or root.
#
#   tests/unit/ring.sh           CC=clang tests/unit/ring.sh
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CC=${CC:-gcc}
CFLAGS=(-std=gnu11 -O1 -g -Wall -Wextra -Werror -pthread -fsanitize=thread
	"-I$ROOT/include" "-I$ROOT/src")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TSAN_OPTIONS="halt_on_error=1 exitcode=66"
fail=0 nr=0

result() {	# result OK NAME [LOG]
	nr=$((nr + 1))
	if [ "$1" = 1 ]; then
		echo "ok $nr - $2"
	else
		fail=$((fail + 1))
		echo "not ok $nr - $2"
		[ -z "${3:-}" ] || sed 's/^/# /' "$3" | head -n 30
	fi
}

echo "1..4"
for v in ring RING_BREAK_ACQUIRE RING_BREAK_EARLY_CONSUME RING_BREAK_TRIM; do
	def=()
	[ "$v" = ring ] || def=("-D$v")
	if ! "$CC" "${CFLAGS[@]}" "${def[@]}" -o "$T/$v" "$HERE/ring_test.c" \
		2>"$T/$v.err"; then
		result 0 "$v: builds with -fsanitize=thread" "$T/$v.err"
		continue
	fi
	timeout 120 "$T/$v" 50000 >"$T/$v.out" 2>&1
	rc=$?
	if [ "$v" = ring ]; then
		sed 's/^/# /' "$T/$v.out" | grep -v '^# 1\.\.'
		ok=0
		[ "$rc" = 0 ] && ! grep -q 'ThreadSanitizer' "$T/$v.out" && ok=1
		result $ok "the ring under ThreadSanitizer: every record once, in order, whole; no race" "$T/$v.out"
	else
		# A race report, or torn or lost records seen first: the
		# reader stops at the first, and which comes first is the
		# threads' timing.
		ok=0
		{ [ "$rc" = 66 ] && grep -q 'ThreadSanitizer: data race' "$T/$v.out"; } ||
			{ [ "$rc" = 1 ] && grep -q '^not ok 1 ' "$T/$v.out"; } &&
			ok=1
		result $ok "$v: the broken ring fails (exit $rc)" "$T/$v.out"
	fi
done
echo "# Totals: pass:$((nr - fail)) fail:$fail skip:0"
[ "$fail" = 0 ]
