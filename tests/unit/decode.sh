#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of the LBR decoder, src/lbr_decode.c, and of the module's read
# loop, src/lbr_read.c, in user space: builds tests/unit/decode_test.c with
# them into a scratch directory and runs it.
# No module, kernel headers or root needed; works from any directory.
#
#   tests/unit/decode.sh            build, run, print TAP
#   CC=clang tests/unit/decode.sh   another compiler
#   SANITIZE=1 tests/unit/decode.sh with -fsanitize=address,undefined
#   KEEP=1 tests/unit/decode.sh     keep the scratch directory
#
# Exits 0 if every test passed.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CC=${CC:-gcc}
CFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror "-I$ROOT/include" "-I$ROOT/src")
if [ -n "${SANITIZE:-}" ]; then
	CFLAGS+=(-g "-fsanitize=address,undefined" -fno-sanitize-recover=all)
fi

T=$(mktemp -d)
cleanup()
{
	if [ -n "${KEEP:-}" ]; then
		echo "# scratch directory kept: $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT

if ! "$CC" "${CFLAGS[@]}" -o "$T/decode_test" "$ROOT/src/lbr_decode.c" \
	"$ROOT/src/lbr_read.c" "$ROOT/src/lbr_cpu.c" "$HERE/decode_test.c" 2>"$T/build.err"; then
	sed 's/^/# /' "$T/build.err"
	echo "Bail out! cannot build tests/unit/decode_test.c"
	echo "# Totals: pass:0 fail:1 skip:0"
	exit 1
fi
sed 's/^/# /' "$T/build.err"

"$T/decode_test"
