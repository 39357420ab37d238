#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the test guest under QEMU (TCG) and run a script in it as root.
# The script's output is printed; the exit status is the script's, or
# non-zero when the guest's kernel log shows a WARNING, BUG, Oops, lockdep
# or sleeping-in-atomic report, or when the guest never finishes.
#
# Usage: tests/vm/run-vm.sh --script FILE [--smp N]
#                           [--cpu stock|skylake|lbr-legacy|lbr-arch|lbr-legacy-pmu|lbr-arch-pmu|lbr-arch-xsaves|lbr-legacy-pmu3|lbr-amd|lbr-amd-nopmu]
#                           [--kver KVER] [--append "kernel args"] [--timeout SEC]
#                           [--accel tcg[,thread=single]] [--icount SHIFT]
#                           [--files DIR]
# --icount SHIFT: QEMU's -icount shift=SHIFT (single-threaded TCG), so a
# guest nanosecond is 2^SHIFT instructions (make bench's cost table).
# --files DIR: DIR's tree is added to the guest's root (a -dbg vmlinux at
# /usr/lib/debug/boot, say).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

smp=2 cpu=stock script= append= timeout=1500 kver= accel=tcg icount= files=
while [ $# -gt 0 ]; do
	case "$1" in
	--smp) smp=$2; shift ;;
	--cpu) cpu=$2; shift ;;
	--script) script=$2; shift ;;
	--kver) kver=$2; shift ;;
	--append) append=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--accel) accel=$2; shift ;;
	--icount) icount=$2; accel=tcg,thread=single; shift ;;
	--files) files=$2; shift ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift
done
[ -n "$script" ] && [ -f "$script" ] || die "--script FILE is required"

lbr_install_deps
kver=${kver:-$(lbr_guest_kver)}
if [ -n "${LBR_PREBUILT:-}" ] && [ -f "$LBR_BUILD/$kver/lbr_snap.ko" ] &&
   [ -f "$LBR_BUILD/$kver/lbr_snap_fexit.ko" ]; then
	bin=$LBR_BUILD/$kver
else
	bin=$("$LBR_TOP/tests/vm/build.sh" "$kver")
fi
lbr_qemu_for_cpu "$cpu"
case $icount in
'') ;;
*[!0-9]*) die "--icount $icount: a shift, 0 to 10" ;;
*) QEMU_ARGS="$QEMU_ARGS -icount shift=$icount" ;;
esac

# A guest with a host thread per vCPU is told so (LBR_MTTCG=1 in its
# environment): a test that multi-threaded TCG cannot run skips there.
[[ "$smp" != 1 && "$accel" != *thread=single* ]] && append="LBR_MTTCG=1 $append"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Not while build.sh rewrites the build (it holds the lock alone).
flock -s "$bin.lock" \
	"$LBR_TOP/tests/vm/mkinitramfs.sh" "$kver" "$bin" "$script" "$work/initrd.gz"
# --files: DIR's tree added to the guest's root, as a second, uncompressed
# cpio archive after the first (the kernel unpacks one after the other,
# zeros between them skipped); the guest gets the memory it takes twice.
mem=1536
if [ -n "$files" ]; then
	[ -d "$files" ] || die "--files $files: not a directory"
	truncate -s %512 "$work/initrd.gz"
	(cd "$files" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) \
		>>"$work/initrd.gz"
	mem=$((mem + 2 * $(du -sm "$files" | cut -f1)))
fi

# -no-reboot turns a guest panic into a QEMU exit; no network, no disks.
# No tsc=reliable: it was tried against an int3 oops in sched_clock_cpu
# on a 7.2 guest whose clocksource watchdog marked the TSC unstable on an
# overloaded host, but with it a 6.12 guest on lbr-arch did not survive
# resume from S3 (QEMU resets the TSC; cap.suspend_resume_...), and
# without it that test passes.
boot() {
	# shellcheck disable=SC2086
	timeout "$timeout" "$QEMU" $QEMU_ARGS -nodefaults -nographic -no-reboot \
		-machine pc -accel "$accel" -cpu "$QEMU_CPU" -smp "$smp" -m "$mem" \
		-kernel "$(lbr_kernel_root "$kver")/boot/vmlinuz-$kver" \
		-initrd "$work/initrd.gz" -pidfile "$work/qemu.pid" \
		-append "console=ttyS0 quiet panic=-1 $append" \
		-serial stdio -monitor none -display none -net none </dev/null |
		tee "$work/console.log" |
		sed -u -e '1,/lbr_snap guest: /{/lbr_snap guest: /!d}' -e '/^LBR_SNAP_VM_EXIT=/d'
	qrc=${PIPESTATUS[0]}
}

# Now and then a TCG guest hangs in early boot, spinning before it runs
# /init (seen once in dozens of boots of the lab CPUs).  A guest that has
# not reached the script after $LBR_BOOT_TIMEOUT seconds is killed and
# booted once more; a hang once the script runs is the test's own failure.
watchdog() {
	local t=0
	while [ "$t" -lt "${LBR_BOOT_TIMEOUT:-300}" ]; do
		grep -q 'lbr_snap guest: ' "$work/console.log" 2>/dev/null && return
		sleep 2
		t=$((t + 2))
	done
	touch "$work/boot-hung"
	kill "$(cat "$work/qemu.pid" 2>/dev/null)" 2>/dev/null
}
set +e
for try in 1 2; do
	rm -f "$work/boot-hung" "$work/qemu.pid"
	# Not on our stdout: a leftover sleep would hold the caller's pipe.
	watchdog </dev/null >/dev/null 2>&1 &
	wd=$!
	boot
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	[ -e "$work/boot-hung" ] || break
	echo "lbr_snap: the guest hung before running the script (try $try)" >&2
done
set -e

rc=$(sed -n 's/^LBR_SNAP_VM_EXIT=\([0-9]*\).*/\1/p' "$work/console.log" | tr -d '\r' | tail -n1)
if [ -z "$rc" ]; then
	# Boot never reached the script, or the guest died: show why.
	grep -q 'lbr_snap guest: ' "$work/console.log" || tail -n 40 "$work/console.log"
	echo "lbr_snap: the guest did not finish (qemu exit $qrc; timeout ${timeout}s)" >&2
	exit 125
fi
exit "$rc"
