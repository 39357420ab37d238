# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash disable=SC2034
# Shared helpers of the LBR lab proof scripts (sourced).
#
# Environment:
#   LBR_LAB_QEMU   use this qemu-system-x86_64 instead of running build.sh
#   LBR_LAB_KVER   guest kernel version (default: the test guest's, Debian
#                  bookworm's; tests/vm/guest-kernel.sh)
#   LBR_SNAP_CACHE cache root (see build.sh)

LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_CPU_LEGACY=Skylake-Client-LBR
LAB_CPU_ARCH=SapphireRapids-LBR
LAB_CPU_AMD=EPYC-Genoa-LBR

lab_die() { echo "lbr-lab: $*" >&2; exit 2; }

# TAP output with totals
TAP_N=0 TAP_PASS=0 TAP_FAIL=0 TAP_SKIP=0
tap_ok() { TAP_N=$((TAP_N + 1)); TAP_PASS=$((TAP_PASS + 1)); echo "ok $TAP_N $*"; }
tap_fail() { TAP_N=$((TAP_N + 1)); TAP_FAIL=$((TAP_FAIL + 1)); echo "not ok $TAP_N $*"; }
tap_skip() { TAP_N=$((TAP_N + 1)); TAP_SKIP=$((TAP_SKIP + 1)); echo "ok $TAP_N # SKIP $*"; }
tap_check() { if [ "$1" = 0 ]; then shift; tap_ok "$@"; else shift; tap_fail "$@"; fi; }
tap_done() {
	echo "1..$TAP_N"
	echo "# Totals: pass:$TAP_PASS fail:$TAP_FAIL skip:$TAP_SKIP"
	[ "$TAP_FAIL" = 0 ]
}

"$LAB/deps.sh" || lab_die "missing packages"

# Guest kernel: sets LAB_KVER, LAB_KERNEL and LAB_MODDIR (its modules), or
# returns 1.  The test guest's (tests/vm/guest-kernel.sh: Debian bookworm's,
# unpacked into the cache, never installed), or LBR_LAB_KVER's.
lab_kernel() {
	local info
	info=$(KVER=${LBR_LAB_KVER:-${KVER:-}} "$LAB/../vm/guest-kernel.sh") ||
		return 1
	read -r LAB_KVER LAB_KERNEL LAB_MODDIR <<<"$info"
	export LAB_MODDIR
	[ -r "$LAB_KERNEL" ] &&
		[ -r "$LAB_MODDIR/kernel/arch/x86/kernel/msr.ko" ]
}

# The lab QEMU: sets LAB_QEMU (builds it, or takes it from the cache)
lab_qemu() {
	if [ -n "${LBR_LAB_QEMU:-}" ]; then
		LAB_QEMU=$LBR_LAB_QEMU
	else
		LAB_QEMU=$("$LAB/build.sh" | tail -n1)
	fi
	[ -x "$LAB_QEMU" ] || lab_die "no lab QEMU ($LAB_QEMU)"
}

# The kernel-log gate of a lab guest (boot/mkinitramfs.sh's /init runs
# tests/vm/kernel-log-gate.sh on dmesg after the guest script): one TAP
# check per guest boot; a kernel report fails it and shows the offending
# lines, as does a guest that never got to the gate.
#   lab_klog_check CONSOLE-LOG NAME
lab_klog_check() {
	local log=$1 name=$2
	if tr -d '\r' < "$log" | grep -q '^LBRLAB-KLOG clean$'; then
		tap_ok "$name: guest kernel log has no WARNING/BUG/Oops/... (tests/vm/kernel-log-gate.sh)"
		return 0
	fi
	tap_fail "$name: guest kernel log has no WARNING/BUG/Oops/... (tests/vm/kernel-log-gate.sh)"
	if tr -d '\r' < "$log" | grep -q '^LBRLAB-KLOG reports'; then
		tr -d '\r' < "$log" |
			sed -n 's/^LBRLAB-KLOG-REPORT /#   report: /p; s/^LBRLAB-KLOG-CONTEXT /#   log: /p'
	else
		echo "#   the guest did not reach the kernel-log gate; its console ends:"
		tail -n 10 "$log" | tr -d '\r' | sed 's/^/#   /'
	fi
	return 1
}

# The start of a proof that boots the guest: the guest kernel (else a
# failed test, and exit), the lab QEMU, a scratch directory $work removed
# at exit, and lbrtest built there ($work/lbrtest).
lab_guest_setup() {
	if ! lab_kernel; then
		tap_fail "the guest kernel and its msr.ko (tests/vm/guest-kernel.sh)"
		tap_done; exit 1
	fi
	lab_qemu
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	lab_lbrtest "$work/lbrtest"
}

# A guest's "ok - name" / "not ok - name" lines as TAP tests named
# "NAME: name", its "#" lines, and those starting with a PREFIX, as
# diagnostics.
#   lab_guest_tap CONSOLE-LOG NAME [PREFIX...]
lab_guest_tap() {
	local line p
	while IFS= read -r line; do
		line=${line%$'\r'}
		case "$line" in
		"ok - "*) tap_ok "$2: ${line#ok - }" ;;
		"not ok - "*) tap_fail "$2: ${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		*) for p in "${@:3}"; do
			[[ "$line" == "$p"* ]] && echo "# $line"
		   done ;;
		esac
	done < "$1"
}

# Static guest binary, built on the host
lab_lbrtest() {
	gcc -static -O2 -Wall -o "$1" "$LAB/guest/lbrtest.c" \
		"$LAB/guest/lbrtest-asm.S" || lab_die "cannot build lbrtest (gcc -static, libc6-dev)"
}
