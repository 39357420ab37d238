#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench's why lines.
#
# The price of why's default sets: guest instructions per open() of an
# existing file (a success) and of a missing one (an error) of a task why
# does not follow, with nothing attached and while `lbr-snap why -- sleep`
# runs beside it (tests/bench/why-guest.sh; -smp 1 under -icount shift=0,
# the 6.1 guest, with its -dbg vmlinux so that why takes its default
# layers), given as system calls per second of a 1 GHz one-instruction-
# a-cycle machine, and the MSR accesses each adds (the lab counts them;
# -icount counts one as one instruction, real silicon as hundreds of
# cycles):
#   why cost cpu=<cpu> kernel=K case=<success|error> syscalls_per_s_without=N syscalls_per_s_with=M ratio=R msr_per_call=X
#   goal why cost cpu=<cpu> case=<case> ratio R >= 0.5 met|not met
# Then the why scenarios (tests/why/oracle-vm.sh) on 6.1 lbr-legacy and
# 7.2 lbr-arch:
#   why origin cpu=<cpu> kernel=K scenarios=N found=M
#   goal why origin cpu=<cpu> kernel=K found M of N met|not met
# Exits 1 if a guest gave no figure.
#
# WHY_BENCH_ORIGIN=0 leaves out the scenarios.
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
lbr_bench_setup
status=0
dbg=$("$LBR_TOP/tests/vm/dbg-vmlinux.sh" "$kver")
for cpu in lbr-legacy lbr-arch; do
	"$LBR_TOP/tests/vm/run-vm.sh" --kver "$kver" --cpu "$cpu" --smp 1 \
		--icount 0 --timeout 5400 --files "$dbg" \
		--script "$LBR_TOP/tests/bench/why-guest.sh" \
		>"$out/$cpu.log" 2>&1 || true
	tr -d '\r' <"$out/$cpu.log" | grep '^# \(lbr-snap\|why\)' || true
	if grep -q WHYCOST_BAD "$out/$cpu.log"; then
		grep -a -A20 WHYCOST_BAD "$out/$cpu.log" | tr -d '\r' >&2
		status=1
	fi
	for c in hit:success miss:error; do
		base=$(sed -n "s/^WHYCOST what=base-${c%%:*} .*median=\([0-9.]*\).*/\1/p" \
			"$out/$cpu.log" | tr -d '\r')
		with=$(sed -n "s/^WHYCOST what=why-${c%%:*} .*median=\([0-9.]*\).*/\1/p" \
			"$out/$cpu.log" | tr -d '\r')
		msr=$(sed -n "s/^WHYCOST what=why-${c%%:*} .*msr=\([0-9.]*\).*/\1/p" \
			"$out/$cpu.log" | tr -d '\r')
		if [ -z "$base" ] || [ -z "$with" ]; then
			echo "bench: no why cost figure ($cpu, ${c#*:})" >&2
			status=1
			continue
		fi
		awk -v cpu="$cpu" -v k="$kver" -v c="${c#*:}" -v b="$base" \
		    -v w="$with" -v m="${msr:-na}" 'BEGIN {
			r = b / w
			printf "why cost cpu=%s kernel=%s case=%s syscalls_per_s_without=%.0f syscalls_per_s_with=%.0f ratio=%.2f msr_per_call=%s\n",
				cpu, k, c, 1e9 / b, 1e9 / w, r, m
			printf "goal why cost cpu=%s case=%s ratio %.2f >= 0.5 %s\n",
				cpu, c, r, (r >= 0.5 ? "met" : "not met")
		}'
	done
done

[ "${WHY_BENCH_ORIGIN:-1}" = 0 ] && exit $status
for rc in bookworm:lbr-legacy sid:lbr-arch; do
	"$LBR_TOP/tests/why/oracle-vm.sh" "$rc" >"$out/origin.log" 2>&1 || true
	line=$(grep '^why scenarios=' "$out/origin.log") || {
		echo "bench: no why origin figure ($rc)" >&2
		status=1
		continue
	}
	set -- $line
	n=${2#scenarios=} m=${3#origin_found=} k=${4#kernel=} c=${5#cpu=}
	echo "why origin cpu=$c kernel=$k scenarios=$n found=$m"
	echo "goal why origin cpu=$c kernel=$k found $m of $n $([ "$m" = "$n" ] && echo met || echo not met)"
	grep '^not ok' "$out/origin.log" | sed 's/^/# /' || true
done
exit $status
