# SPDX-License-Identifier: GPL-2.0
# Shared settings of the QEMU test harness; sourced, not run.

LBR_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LBR_CACHE=${LBR_SNAP_CACHE:-$LBR_TOP/.cache}
LBR_BUILD=${LBR_SNAP_BUILD:-$LBR_TOP/build}
mkdir -p "$LBR_CACHE" "$LBR_BUILD"

die() { echo "lbr_snap: $*" >&2; exit 1; }

# Install the missing packages of the named groups of tests/deps/packages
# (default: what building for and booting the test guest needs).
lbr_install_deps() {
	[ $# -gt 0 ] || set -- build kernel guest
	"$LBR_TOP/tests/deps/install.sh" "$@" || die "installing packages ($*) failed"
}

# The guest kernel: KVER if set, else Debian bookworm's kernel, fetched and
# unpacked into the cache by tests/vm/kernel.sh (never installed).
lbr_guest_kver() {
	if [ -n "${KVER:-}" ]; then echo "$KVER"; return; fi
	"$LBR_TOP/tests/vm/kernel.sh" bookworm ||
		die "cannot fetch Debian bookworm's kernel (tests/vm/kernel.sh)"
}

# Where KVER's kernel (boot/vmlinuz-KVER, lib/modules/KVER) is: a Debian
# release's root unpacked by tests/vm/kernel.sh, or the debug kernel's of
# tests/vm/debug-kernel.sh, else / when installed (KVER=).  The cache comes
# first: the host may run the very kernel the cache holds, without headers.
lbr_kernel_root() {
	local r
	for r in "$LBR_CACHE"/matrix/*/root "$LBR_CACHE"/debug-kernel/*/root; do
		[ -f "$r/.lbr-kernel-$1" ] || [ -f "$r/lib/modules/$1/build/Makefile" ] ||
			continue
		[ -f "$r/boot/vmlinuz-$1" ] && { echo "$r"; return; }
	done
	if [ -f "/boot/vmlinuz-$1" ]; then echo /; return; fi
	die "no kernel $1 in $LBR_CACHE nor in /boot (see tests/vm/kernel.sh, debug-kernel.sh)"
}

# KVER's kernel build tree when the host's gcc builds against it: the
# installed kernel's, the debug kernel's (built here), a release's whose
# headers tests/vm/kernel.sh found built for the host's gcc (its "ready"
# file).  Fails for a release whose headers need its own chroot
# (tests/matrix/matrix.sh builds there).
lbr_host_kdir() {
	local kroot k inchroot
	kroot=$(lbr_kernel_root "$1") || return 1
	case $kroot in
	/|"$LBR_CACHE"/debug-kernel/*)
		echo "${kroot%/}/lib/modules/$1/build" ;;
	*)	read -r _ k inchroot _ <"$(dirname "$kroot")/ready" ||
			die "no $(dirname "$kroot")/ready for $1"
		[ "$inchroot" = 0 ] && echo "$k" ;;
	esac
}

# kselftest_harness.h and checkpatch.pl come from Debian's linux-source.
lbr_kernel_source_files() {
	local dir=$LBR_CACHE/linux-source tar
	if [ -f "$dir/.done" ]; then echo "$dir"; return; fi
	tar=$(ls /usr/src/linux-source-*.tar.* 2>/dev/null | sort -V | tail -n1)
	[ -n "$tar" ] || die "linux-source not installed"
	rm -rf "$dir" && mkdir -p "$dir"
	tar -xf "$tar" -C "$dir" --strip-components=1 --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest.h' \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch' >&2 ||
		die "cannot extract from $tar"
	touch "$dir/.done"
	echo "$dir"
}

# -cpu and the QEMU binary for
# CPU=stock|skylake|lbr-legacy|lbr-arch|lbr-legacy-pmu|lbr-arch-pmu|lbr-arch-xsaves|lbr-legacy-pmu3|lbr-amd|lbr-amd-nopmu.
# The *-pmu names are the same lab models with the lab PMU (pmu=on):
# the guest's perf has its Intel PMU driver and the LBR
# (tests/lbr-lab/README.md, "Lab PMU"); lbr-legacy-pmu3 has perfmon
# version 3, whose PMI clears DEBUGCTL.LBR (the legacy freeze).
# lbr-amd is the lab's AMD model as a Zen 4 is: LbrExtV2 (patch 0007)
# and the PerfMonV2 PMU (patch 0008, pmu=on), so that the guest's perf
# has its AMD PMU driver with the LBR; lbr-amd-nopmu is it without the
# PMU.  lbr-arch-xsaves is lbr-arch-pmu with XSAVES and Arch LBR's XSAVE
# state component (patches 0009/0010, lbr-lab-xsaves=on): the guest
# kernel switches FPU state with XSAVES, perf reads LBR with it, and so
# does lbr_snap (lbr_read=auto).
#
# A lab name may be followed by more of the lab's -cpu properties, its
# quirks among them: "lbr-legacy,lbr-lab-dead=on,lbr-lab-quirk-cpus=2"
# (tests/lbr-lab/README.md, "Quirks").
lbr_qemu_for_cpu() {
	local extra=
	case "$1" in
	lbr-*,*) extra=,${1#*,} ;;
	esac
	case "${1%%,*}" in
	stock)
		QEMU=qemu-system-x86_64
		QEMU_CPU=qemu64
		QEMU_ARGS=
		;;
	skylake)
		# Stock QEMU as an Intel Skylake: a CPU the kernel finds
		# vulnerable to Retbleed, so that retbleed=stuff turns on call
		# depth tracking (no LBR: TCG has none).
		QEMU=qemu-system-x86_64
		QEMU_CPU=Skylake-Client
		QEMU_ARGS=
		;;
	lbr-legacy|lbr-arch|lbr-legacy-pmu|lbr-arch-pmu|lbr-arch-xsaves|lbr-legacy-pmu3|lbr-amd|lbr-amd-nopmu)
		# The LBR lab's QEMU (tests/lbr-lab/README.md), firmware from
		# Debian's packages.
		QEMU=${LBR_LAB_QEMU:-$("$LBR_TOP/tests/lbr-lab/build.sh" | tail -n1)} ||
			die "building the LBR lab QEMU failed"
		[ -x "$QEMU" ] || die "building the LBR lab QEMU failed"
		QEMU_ARGS="-L /usr/share/qemu -L /usr/share/seabios"
		case "${1%%,*}" in
		lbr-legacy) QEMU_CPU=Skylake-Client-LBR ;;
		lbr-arch) QEMU_CPU=SapphireRapids-LBR ;;
		lbr-legacy-pmu) QEMU_CPU=Skylake-Client-LBR,pmu=on ;;
		lbr-arch-pmu) QEMU_CPU=SapphireRapids-LBR,pmu=on ;;
		lbr-arch-xsaves)
			QEMU_CPU=SapphireRapids-LBR,pmu=on,lbr-lab-xsaves=on ;;
		lbr-legacy-pmu3)
			QEMU_CPU=Skylake-Client-LBR,pmu=on,lbr-lab-pmu-version=3 ;;
		lbr-amd) QEMU_CPU=EPYC-Genoa-LBR,pmu=on ;;
		lbr-amd-nopmu) QEMU_CPU=EPYC-Genoa-LBR ;;
		esac
		QEMU_CPU=$QEMU_CPU$extra
		;;
	*)
		die "CPU=$1: use stock, skylake, lbr-legacy, lbr-arch, lbr-legacy-pmu, lbr-arch-pmu, lbr-arch-xsaves, lbr-legacy-pmu3, lbr-amd or lbr-amd-nopmu"
		;;
	esac
}

# The benches' guests: the lab QEMU, KVER's build (prebuilt from now on);
# sets kver.
lbr_bench_setup() {
	export LBR_LAB_QEMU=${LBR_LAB_QEMU:-$("$LBR_TOP/tests/lbr-lab/build.sh" | tail -n1)}
	[ -x "$LBR_LAB_QEMU" ] || die "building the LBR lab QEMU failed"
	kver=$(lbr_guest_kver)
	"$LBR_TOP/tests/vm/build.sh" "$kver" >/dev/null
	export LBR_PREBUILT=1
}
