#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The why scenario suite: for each RELEASE:CPU, boot that Debian release's
# kernel on that lab CPU with its -dbg vmlinux, run tests/why/oracle.sh
# (the kernel's tracers find each failing call's origin, then lbr-snap why
# does), and compare on the host (tests/why/check-oracle.py): one TAP
# stream per guest, and its line "why scenarios=N origin_found=M kernel=
# cpu=".  Exits 1 if a test failed.
#
#   tests/why/oracle-vm.sh [RELEASE:CPU[:flood]...]
#       (default: bookworm:lbr-legacy:flood bookworm:lbr-arch sid:lbr-legacy
#        sid:lbr-arch:flood)
#
# ":flood" adds a flood of 20,000 failing open()s (some 20 s of
# TCG): why keeps 8 and counts the rest.
#
# LBR_LAB_QEMU is passed on to tests/vm/run-vm.sh.  The guests run
# single-threaded TCG, as make check's other lane guests.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
BUILD=${LBR_SNAP_BUILD:-$TOP/build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

[ $# -gt 0 ] ||
	set -- bookworm:lbr-legacy:flood bookworm:lbr-arch sid:lbr-legacy \
		sid:lbr-arch:flood
rc=0
for rc_cpu in "$@"; do
	rel=${rc_cpu%%:*} cpu=${rc_cpu#*:} flood=0
	[ "${cpu%:flood}" = "$cpu" ] || { cpu=${cpu%:flood}; flood=1; }
	echo "# why scenarios: Debian $rel on CPU $cpu"
	# make check's build of bookworm's (LBR_PREBUILT=1), else one of its
	# own (build.sh takes the kernel's lock: a lane's guest may build
	# the same).
	if ! kv=$("$TOP/tests/vm/kernel.sh" "$rel"); then
		bin=
	elif [ -n "${LBR_PREBUILT:-}" ] && [ "$rel" = bookworm ] &&
	     [ -f "$BUILD/$kv/why_fail" ] && [ -f "$BUILD/$kv/lbr_snap.ko" ]; then
		bin=$BUILD/$kv
	else
		bin=$("$TOP/tests/vm/build.sh" "$kv") || bin=
	fi
	if [ -z "$bin" ] ||
	   ! files=$("$TOP/tests/vm/dbg-vmlinux.sh" "$kv") ||
	   ! "$bin/why_fail" -l >"$T/list"; then
		echo "1..1"
		echo "not ok 1 - [$cpu $rel] the kernel, lbr_snap's build or the -dbg vmlinux"
		rc=1
		continue
	fi
	LBR_PREBUILT=1 \
		"$TOP/tests/vm/run-vm.sh" --kver "$kv" --cpu "$cpu" --smp 2 \
		--accel tcg,thread=single --files "$files" \
		--append "LBR_WHY_FLOOD=$flood" \
		--script "$HERE/oracle.sh" >"$T/console" 2>&1
	vm=$?
	grep -a -v -e '^@@' -e '^{' "$T/console" | grep -a -e '^# ' \
		-e 'LBR_SNAP_VM_EXIT' -e 'lbr_snap guest:' | head -n 60
	args=()
	[ "$flood" = 0 ] || args=(--flood)
	python3 "$HERE/check-oracle.py" "${args[@]}" "$T/list" "$cpu" \
		"$T/console" "$vm" || rc=1
done
exit $rc
