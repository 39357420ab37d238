#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: how many LBR entries each hook's own path puts after a
# traced function's return (probe_entries), kretprobe against fexit, for
# the test target's error path and for do_sys_openat2(), on both LBR lab
# CPUs, with the default mitigations and with mitigations=off.  Every
# figure comes from records taken in this run, in the same guest boot for
# both hooks.  Prints a table, then per CPU and mitigation setting
#   probe_entries cpu=<flavour> mitigations=<on|off> kretprobe=<N> fexit=<M>
# where N and M are the largest probe_entries of any record of either
# function through that hook.
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export LBR_LAB_QEMU=${LBR_LAB_QEMU:-$("$LBR_TOP/tests/lbr-lab/build.sh" | tail -n1)}
[ -x "$LBR_LAB_QEMU" ] || die "building the LBR lab QEMU failed"
kver=$(lbr_guest_kver)
"$LBR_TOP/tests/vm/build.sh" "$kver" >/dev/null
export LBR_PREBUILT=1

status=0
for cpu in lbr-legacy lbr-arch; do
	for mit in on off; do
		append=
		[ $mit = off ] && append=mitigations=off
		if ! "$LBR_TOP/tests/vm/run-vm.sh" --kver "$kver" --cpu $cpu \
			--smp 2 --append "$append" \
			--script "$LBR_TOP/tests/bench/guest.sh" \
			>"$out/$cpu-$mit.log" 2>&1; then
			echo "bench: the guest failed ($cpu, mitigations=$mit):" >&2
			tail -n 20 "$out/$cpu-$mit.log" >&2
			status=1
		fi
	done
done

printf '%-10s %-11s %-14s %-9s %7s %4s %6s %4s %9s\n' cpu mitigations \
	function hook records min median max no_return
for cpu in lbr-legacy lbr-arch; do
	for mit in on off; do
		sed -n 's/^BENCH //p' "$out/$cpu-$mit.log" | tr -d '\r' |
		while read -r line; do
			eval "$(tr ' ' '\n' <<<"$line" | sed 's/^\([a-z_]*\)=\(.*\)/\1=\2;/')"
			printf '%-10s %-11s %-14s %-9s %7s %4s %6s %4s %9s\n' \
				$cpu $mit "$func" "$hook" "$records" "${min:--}" \
				"${median:--}" "${max:--}" "${no_return:--}"
			unset min median max no_return
		done
	done
done
echo
for cpu in lbr-legacy lbr-arch; do
	for mit in on off; do
		f=$out/$cpu-$mit.log
		k=$(sed -n 's/^BENCH .*hook=kretprobe .*max=\([0-9]*\).*/\1/p' "$f" | sort -n | tail -n1)
		x=$(sed -n 's/^BENCH .*hook=fexit .*max=\([0-9]*\).*/\1/p' "$f" | sort -n | tail -n1)
		echo "probe_entries cpu=$cpu mitigations=$mit kretprobe=${k:-none} fexit=${x:-none}"
		[ -n "$k" ] && [ -n "$x" ] || status=1
	done
done
exit $status
