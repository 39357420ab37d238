#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: how many LBR entries each path puts after a traced
# function's return (probe_entries): lbr_snap's kretprobe and fexit hooks,
# and the kernel's own, a BPF fexit program calling
# bpf_get_branch_snapshot() (tests/bench/lbr_snap_bpf_bench.c), for the
# test target's error path and for do_sys_openat2() (BPF: do_sys_openat2
# only, the test target module has no BTF), on both LBR lab CPUs with the
# lab PMU (the BPF path needs perf's LBR; lbr_snap runs mode=perf there),
# with the default mitigations and with mitigations=off.  Every figure
# comes from records taken in this run, in the same guest boot for all
# three.  Prints a table, the BPF path of one record per setting, then
# per CPU and mitigation setting
#   probe_entries cpu=<cpu> mitigations=<on|off> kretprobe=<N> fexit=<M> bpf=<B>
# where N, M and B are the largest probe_entries of any record of any
# function through that path.  A row without records fails it.  Then
# the cost table and the reader line of tests/bench/cost.sh, with their
# goals.
#
# KVER=RELEASE boots another kernel (tests/vm/kernel.sh's, e.g.
# KVER=7.2.13+deb14-amd64 for sid's), single-threaded TCG unless it is
# 6.1 (sid's and trixie's kernels die of int3 oopses under MTTCG,
# tests/run-all.sh).
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
lbr_bench_setup
accel=tcg
case "$kver" in 6.1.*) ;; *) accel=tcg,thread=single ;; esac
echo "# kernel $kver, accel $accel"

status=0
for cpu in lbr-legacy-pmu lbr-arch-pmu; do
	for mit in on off; do
		append=
		[ $mit = off ] && append=mitigations=off
		if ! "$LBR_TOP/tests/vm/run-vm.sh" --kver "$kver" --cpu $cpu \
			--smp 2 --accel "$accel" --append "$append" \
			--script "$LBR_TOP/tests/bench/guest.sh" \
			>"$out/$cpu-$mit.log" 2>&1; then
			echo "bench: the guest failed ($cpu, mitigations=$mit):" >&2
			tail -n 20 "$out/$cpu-$mit.log" >&2
			status=1
		fi
	done
done

printf '%-14s %-11s %-14s %-9s %7s %4s %6s %4s %9s %s\n' cpu mitigations \
	function hook records min median max no_return why
for cpu in lbr-legacy-pmu lbr-arch-pmu; do
	for mit in on off; do
		sed -n 's/^BENCH //p' "$out/$cpu-$mit.log" | tr -d '\r' |
		while read -r line; do
			eval "$(tr ' ' '\n' <<<"$line" | sed 's/^\([a-z_]*\)=\(.*\)/\1=\2;/')"
			printf '%-14s %-11s %-14s %-9s %7s %4s %6s %4s %9s %s\n' \
				$cpu $mit "$func" "$hook" "$records" "${min:--}" \
				"${median:--}" "${max:--}" "${no_return:--}" "${why:-}"
			# An empty row fails the bench (one with a reason, e.g.
			# no BTF for BPF, is an expected gap).
			[ "$records" != 0 ] || [ -n "${why:-}" ] ||
				echo "bench: no $func record through $hook ($cpu, mitigations=$mit)" >&2
			unset min median max no_return why
		done
	done
done > "$out/table"
cat "$out/table"
grep -q . "$out/table" || status=1
for cpu in lbr-legacy-pmu lbr-arch-pmu; do
	for mit in on off; do
		if sed -n 's/^BENCH //p' "$out/$cpu-$mit.log" | tr -d '\r' |
		   grep 'records=0' | grep -qv 'why='; then
			echo "bench: a row without records ($cpu, mitigations=$mit)" >&2
			status=1
		fi
	done
done
echo
for cpu in lbr-legacy-pmu lbr-arch-pmu; do
	for mit in on off; do
		echo "BPF path of one do_sys_openat2() record, $cpu, mitigations=$mit (oldest first):"
		sed -n 's/^# BENCH-PATH func=do_sys_openat2 hook=bpf /  /p' \
			"$out/$cpu-$mit.log" | tr -d '\r'
	done
done
echo
for cpu in lbr-legacy-pmu lbr-arch-pmu; do
	for mit in on off; do
		f=$out/$cpu-$mit.log
		k=$(sed -n 's/^BENCH .*hook=kretprobe .*max=\([0-9]*\).*/\1/p' "$f" | sort -n | tail -n1)
		x=$(sed -n 's/^BENCH .*hook=fexit .*max=\([0-9]*\).*/\1/p' "$f" | sort -n | tail -n1)
		b=$(sed -n 's/^BENCH .*hook=bpf .*max=\([0-9]*\).*/\1/p' "$f" | sort -n | tail -n1)
		echo "probe_entries cpu=$cpu mitigations=$mit kretprobe=${k:-none} fexit=${x:-none} bpf=${b:-none}"
		[ -n "$k" ] && [ -n "$x" ] && [ -n "$b" ] || status=1
	done
done

# What a return costs, and how fast the tool drains a storm
# (tests/bench/cost.sh): "cost ..." and "reader ..." lines, the goals.
echo
KVER=$kver "$LBR_TOP/tests/bench/cost.sh" || status=1
exit $status
