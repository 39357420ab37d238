#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build everything the guest needs for kernel KVER into build/KVER/:
# lbr_snap.ko, lbr_snap_fexit.ko, the test target module, lbr-snap and the static test binaries.
# Usage: tests/vm/build.sh [KVER]      (prints the output directory)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kver=${1:-$(lbr_guest_kver)}
kroot=$(lbr_kernel_root "$kver")
# Built for directly where the host's gcc can (the installed kernel, the
# debug kernel, a release's headers built for it), else in the release's
# chroot.
if kdir=$(lbr_host_kdir "$kver"); then
	host=1
else
	host= kdir=${kroot%/}/lib/modules/$kver/build
fi
[ -z "$host" ] || [ -f "$kdir/Makefile" ] || die "no headers for $kver in $kdir"
out=$LBR_BUILD/$kver
ks=$(lbr_kernel_source_files)
mkdir -p "$out"
# One build of a kernel's at a time: make check's lanes ask for the same
# one together (the why scenarios beside a release's guest), and the
# copies and objects below are the kernel's.
exec 7>"$out.lock"
flock 7

# A kernel built with an older gcc than the host's (bullseye's gcc-10) is
# built for with the host's, as tests/matrix/matrix.sh does.
cc=()
kgcc=
[ ! -f "$kdir/.kernelvariables" ] ||
	kgcc=$(sed -n 's/^CC = .*gcc-\([0-9]*\).*/\1/p' "$kdir/.kernelvariables" | head -n1)
[ -z "$kgcc" ] || [ "$kgcc" = "$(gcc -dumpversion | cut -d. -f1)" ] || cc=(CC=gcc)

# Build from a copy so several kernels never share objects.
build_module() {	# $1 = source dir in the repo, $2 = copy dir
	rm -rf "$2" && mkdir -p "$2"
	(cd "$LBR_TOP/$1" && cp -r --parents $3 "$2")
	make -s -C "$kdir" M="$2" W=1 "${cc[@]}" modules >"$2/build.log" 2>&1 ||
		{ cat "$2/build.log" >&2; die "module build in $1 failed"; }
	if grep -E 'warning:|error:' "$2/build.log" >&2; then
		die "module build in $1 has warnings"
	fi
}
if [ -n "$host" ]; then
	build_module . "$out/mod" "Kbuild src include"
	build_module tests/target "$out/target" "Kbuild lbr_snap_test_target.c lbr_snap_test_target.h"
	cp "$out/mod/lbr_snap.ko" "$out/mod/lbr_snap_fexit.ko" \
		"$out/target/lbr_snap_test_target.ko" "$out/"
	# Every build, the debug kernel's (KASAN instrumentation) included.
	# Its TAP lines in a file, not on stderr: a guest's console that
	# carries the build's stderr would read them as its own results.
	"$LBR_TOP/tests/check-freeze-first.sh" "$out/lbr_snap.ko" \
		"$out/lbr_snap_fexit.ko" >"$out/freeze-first.tap" 2>&1 || {
		sed 's/^/# /' "$out/freeze-first.tap" >&2
		die "$kver: the freeze is not first (tests/freeze-first/check.py)"
	}
else
	# A kernel from tests/vm/kernel.sh: build in its release's chroot.
	m=$(dirname "$kroot")
	grep -q "^$kver " "$m/ready" || die "$m/ready is not for $kver"
	"$LBR_TOP/tests/matrix/matrix.sh" "$(basename "$m")" >&2 ||
		die "module build for $kver (tests/matrix/matrix.sh) failed"
	if grep -E 'warning:|error:' "$m/out/lbr_snap.log" "$m/out/target.log" >&2; then
		die "module build for $kver has warnings"
	fi
	cp "$m/out/lbr_snap.ko" "$m/out/lbr_snap_fexit.ko" \
		"$m/out/lbr_snap_test_target.ko" "$out/"
fi

# tools/ is every kernel's: one make of it at a time.
flock "$LBR_BUILD/.tools.lock" make -s -C "$LBR_TOP/tools" >&2
cp "$LBR_TOP/tools/lbr-snap" "$out/"

# The functions the source keeps out of kprobes' reach (NOKPROBE_SYMBOL,
# LBR_DECODE_NOKPROBE, _ASM_NOKPROBE): the capture path, which
# cap.capture_path_neither_probed_nor_traced checks one by one.
gen=$out/gen
mkdir -p "$gen"
{
	echo "/* Made by tests/vm/build.sh from src/: the capture path. */"
	echo "#define LBR_NOKPROBE_FUNCS \\"
	grep -ho -E '(NOKPROBE_SYMBOL|LBR_DECODE_NOKPROBE|_ASM_NOKPROBE)\([a-z_0-9]+\)' \
		"$LBR_TOP"/src/*.c "$LBR_TOP"/src/*.S |
		sed -E 's/.*\((.*)\)/\t"\1", \\/' | sort -u
	echo
} >"$gen/lbr_nokprobe.h"

CFLAGS="-O2 -g -Wall -Werror -static -pthread -D_GNU_SOURCE \
	-I$LBR_TOP/include -I$ks/tools/testing/selftests -I$gen"
# libbpf (static) for the test that gives a function to a BPF program.
LIBS="-lbpf -lelf -lz -lzstd"
# Each tests/selftests/*.c is one binary, built anew on every run.  The
# files of its subdirectories are parts of one (lbr_snap_test/*.c, which
# lbr_snap_test.c includes), never built alone.
for t in "$LBR_TOP"/tests/selftests/*.c; do
	[ -f "$t" ] || continue
	# shellcheck disable=SC2086
	gcc $CFLAGS -o "$out/$(basename "$t" .c)" "$t" $LIBS ||
		die "building $t failed"
done
# make bench's BPF side (tests/bench/lbr_snap_bpf_bench.c).
# shellcheck disable=SC2086
gcc $CFLAGS -o "$out/lbr_snap_bpf_bench" \
	"$LBR_TOP/tests/bench/lbr_snap_bpf_bench.c" $LIBS ||
	die "building lbr_snap_bpf_bench failed"
# make bench's attach line (tests/bench/lbr_snap_attach_bench.c).
# shellcheck disable=SC2086
gcc $CFLAGS -o "$out/lbr_snap_attach_bench" \
	"$LBR_TOP/tests/bench/lbr_snap_attach_bench.c" $LIBS ||
	die "building lbr_snap_attach_bench failed"
# make bench's cost table and reader line (tests/bench/lbr_snap_cost.c).
# shellcheck disable=SC2086
gcc $CFLAGS -o "$out/lbr_snap_cost" "$LBR_TOP/tests/bench/lbr_snap_cost.c" ||
	die "building lbr_snap_cost failed"
# lbr-snap why's failing system calls (tests/why/why_fail.c).
# shellcheck disable=SC2086
gcc $CFLAGS -o "$out/why_fail" "$LBR_TOP/tests/why/why_fail.c" ||
	die "building why_fail failed"
echo "$out"
