#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of tools/lbr-snap.  No module is needed: synthetic record
# streams written by gen-records.c (with the ABI header) and a synthetic
# kallsyms are fed to the tool as regular files, pipes and FIFOs, and a test
# build with fake-ioctl.c stands in for the module's ioctls.  Output is
# compared exactly with tests/unit/expected/ or with inline expectations;
# check-json.py validates the JSON, check-report.py recounts what report
# prints from the records, test-errname.c checks the errno table.
#
# This file has the helpers, builds, writes the inputs and keeps the
# count; the cases are in cases/, a file an area, sourced at its end.
#
# Needs gcc, make, python3, readelf, nm, mkfifo, timeout, xz, zstd, man
# (the man pages are skipped without it), libbpf for gen-btf.c (the
# patterns' crafted BTF), /proc/PID/io (task I/O accounting, for the
# syscall counts) and, as root, setpriv.
#
#   tests/unit/run.sh           build what is needed, run the tests, print TAP
#   KEEP=1 tests/unit/run.sh    keep the scratch directory for a look
#
# Exits 0 if every test passed.

# The test functions are called through t() and check(), not directly;
# the areas' files are found from this one's directory (shellcheck -x, or
# given cases/*.sh too).
# shellcheck disable=SC2317 source-path=SCRIPTDIR

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
EXP=$HERE/expected
LBR=$ROOT/tools/lbr-snap
CFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror "-I$ROOT/include")

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
cd "$T" || exit 1

nr=0
pass=0
fail=0
skip=0

# Print "ok" or "not ok" for test $1, with why.txt as the reason if not empty.
result()
{
	nr=$((nr + 1))
	if [ -s why.txt ]; then
		fail=$((fail + 1))
		echo "not ok $nr - $1"
		sed 's/^/# /' why.txt
	else
		pass=$((pass + 1))
		echo "ok $nr - $1"
	fi
	: >why.txt
}

# Note in why.txt how file $2 differs from the expected file $1 ("-": any).
same()
{
	[ "$1" = - ] && return
	cmp -s "$1" "$2" && return
	echo "$3 differs from $1:" >>why.txt
	diff -u "$1" "$2" | head -40 >>why.txt
}

# t NAME RC OUT ERR CMD...: run CMD; it passes if it exits with RC and its
# stdout and stderr equal the files OUT and ERR ("-" for no check).
t()
{
	local name=$1 rc=$2 out=$3 err=$4 got

	shift 4
	"$@" >out.txt 2>err.txt </dev/null
	got=$?
	[ "$got" = "$rc" ] || echo "exit status $got, expected $rc" >>why.txt
	same "$out" out.txt stdout
	same "$err" err.txt stderr
	result "$name"
}

# Write the expected output file $1 from the remaining arguments, one a line.
want()
{
	local f=$1

	shift
	printf '%s\n' "$@" >"$f"
}

# skipped NAME WHY: a test that cannot run here, counted as a skip.
skipped()
{
	nr=$((nr + 1))
	skip=$((skip + 1))
	echo "ok $nr - # SKIP $1: $2"
}

# check NAME CMD...: pass if CMD succeeds; its output is the reason if not.
check()
{
	local name=$1

	shift
	"$@" >why.txt 2>&1 || { [ -s why.txt ] || echo "failed: $*" >why.txt; }
	result "$name"
}

totals()
{
	echo "# Totals: pass:$pass fail:$fail skip:$skip"
	[ "$fail" = 0 ]
	exit
}

# ------------------------------------------------ helpers of several areas

one_by_one()	# FILE KALLSYMS [OPTIONS]: whole and per record must match
{
	local in=$1 ks=$2

	shift 2
	"$LBR" -d "$in" --kallsyms "$ks" "$@" >whole.out 2>/dev/null
	python3 - "$LBR" "$in" "$ks" "$@" <<'EOF' >each.out || return 1
import struct, subprocess, sys
lbr, path, ks, opts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
data = open(path, "rb").read()
# A record alone prints the same each time: the storm's 720 records are
# 12, each printed alone once.
alone = {}
at = 0
while at + 4 <= len(data):
    size = struct.unpack_from("<I", data, at)[0]
    one = data[at:at + size]
    if one not in alone:
        with open("one.bin", "wb") as f:
            f.write(one)
        alone[one] = subprocess.run(
            [lbr, "-d", "one.bin", "--kallsyms", ks] + opts,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    sys.stdout.buffer.write(alone[one])
    at += size
EOF
	[ -s whole.out ] || { echo "no output"; return 1; }
	diff -u each.out whole.out | head -n 12 | cut -c1-160
	cmp -s each.out whole.out
}

# usage NAME MSG ARGS...: lbr-snap ARGS is a usage error, exit 2; MSG said
# ("": not checked), then where --help is.
TRY_HELP="Try 'lbr-snap --help' for more information."
usage()
{
	local name=$1 msg=$2

	shift 2
	if [ -n "$msg" ]; then
		want usage.err "lbr-snap: $msg" "$TRY_HELP"
		t "usage: $name: exit 2" 2 /dev/null usage.err "$LBR" "$@"
	else
		t "usage: $name: exit 2" 2 /dev/null - "$LBR" "$@"
	fi
}

# ---------------------------------------------------------------- building

rm -f "$LBR"
check "make -C tools builds lbr-snap (-Werror)" \
	make -s -B -C "$ROOT/tools"
if [ ! -x "$LBR" ]; then
	echo "Bail out! no tools/lbr-snap"
	totals
fi

not_dynamic()
{
	if readelf -lW "$LBR" | grep -q INTERP; then
		echo "tools/lbr-snap has a program interpreter: not static"
		return 1
	fi
}
check "lbr-snap is linked statically" not_dynamic

# Built again when its flags change (libbpf or libdw installed since the
# last build, another CFLAGS): a copy of tools/ is up to date after its
# build, and out of date for make with other flags.
rebuilt_on_new_flags()
{
	rm -rf flags && mkdir flags && cp -r "$ROOT/tools" flags/ &&
		ln -s "$ROOT/include" "$ROOT/src" flags/ ||
		{ echo "cannot copy tools/"; return 1; }
	make -s -C flags/tools clean >/dev/null &&
		make -s -C flags/tools >/dev/null ||
		{ echo "the copy does not build"; return 1; }
	make -q -C flags/tools >/dev/null ||
		{ echo "make -q: out of date right after the build"; return 1; }
	# CFLAGS=-O1: flags that differ whatever this host has installed.
	make -q -C flags/tools CFLAGS=-O1 >/dev/null
	case $? in
	0) echo "make -q CFLAGS=-O1: up to date, built with other flags"
	   return 1 ;;
	2) echo "make -q CFLAGS=-O1: make failed"; return 1 ;;
	esac
}
check "lbr-snap is built again when its flags change" rebuilt_on_new_flags

check "build gen-records" \
	gcc "${CFLAGS[@]}" -o gen-records "$HERE/gen-records.c"
VER=$(sed -n 's/^#define LBR_SNAP_VERSION[ \t]*"\(.*\)"/\1/p' "$ROOT/src/lbr_snap.h")
check "build lbr-snap with fake ioctls" \
	gcc "${CFLAGS[@]}" "-DLBR_SNAP_TOOL_VERSION=\"$VER\"" \
	-Wl,--wrap=ioctl -o lbr-snap-fake \
	"$ROOT"/tools/*.c "$HERE/fake-ioctl.c"
FAKE=$T/lbr-snap-fake

check "build test-errname" \
	gcc "${CFLAGS[@]}" "-I$ROOT/tools" -o test-errname \
	"$HERE/test-errname.c" "$ROOT/tools/errname.c"
check "errno names match glibc's for 1..133 and the kernel's 512..531" \
	./test-errname

./gen-records stream >stream.bin
./gen-records paths >paths.bin
./gen-records stackpaths >stackpaths.bin
for mode in small-size bad-hdr-size overrun version0 truncated stack-overrun; do
	./gen-records "$mode" >"$mode.bin"
done
cp "$HERE/kallsyms.txt" kallsyms.txt
sed 's/^[0-9a-f]\{16\}/0000000000000000/' kallsyms.txt >restricted.txt
KS=(--kallsyms kallsyms.txt)	# as most cases read it

# ------------------------------------------------------------------- areas

# A file of cases that does not parse would end at its error, sourced:
# the rest of its cases left out, and the run going on to pass.
for f in "$HERE"/cases/*.sh; do
	bash -n "$f" 2>parse.err && continue
	sed 's/^/# /' parse.err
	echo "Bail out! tests/unit/cases/${f##*/} does not parse"
	fail=$((fail + 1))
	totals
done

# A file an area under cases/, sourced in this order, which numbers the
# cases.  An area may read what an earlier one wrote in the scratch
# directory: its head says what.
# shellcheck source=cases/stream.sh
. "$HERE/cases/stream.sh"		# text and JSON; pipes, FIFOs, signals
# shellcheck source=cases/burst.sh
. "$HERE/cases/burst.sh"		# a burst: syscalls, threads; ASan
# shellcheck source=cases/print.sh
. "$HERE/cases/print.sh"		# layout, source paths, trimming, JSON
# shellcheck source=cases/report.sh
. "$HERE/cases/report.sh"		# report
# shellcheck source=cases/symbols.sh
. "$HERE/cases/symbols.sh"		# kallsyms, debug files, source lines
# shellcheck source=cases/records.sh
. "$HERE/cases/records.sh"		# notes, folded entries, corrupt input
# shellcheck source=cases/device.sh
. "$HERE/cases/device.sh"		# the device; info, stats, flush
# shellcheck source=cases/trace.sh
. "$HERE/cases/trace.sh"		# trace
# shellcheck source=cases/why.sh
. "$HERE/cases/why.sh"			# why
# shellcheck source=cases/control.sh
. "$HERE/cases/control.sh"		# add, del, capture, filter
# shellcheck source=cases/version.sh
. "$HERE/cases/version.sh"		# --version
# shellcheck source=cases/install.sh
. "$HERE/cases/install.sh"		# install, man pages, completion
# shellcheck source=cases/usage.sh
. "$HERE/cases/usage.sh"		# usage errors, --help
# shellcheck source=cases/replay.sh
. "$HERE/cases/replay.sh"		# record -o, -i
# shellcheck source=cases/patterns.sh
. "$HERE/cases/patterns.sh"		# patterns: globs, scopes, refusals
# shellcheck source=cases/attach.sh
. "$HERE/cases/attach.sh"		# patterns attached, batches
# shellcheck source=cases/file-patterns.sh
. "$HERE/cases/file-patterns.sh"	# :FILE patterns

totals
