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
# three.  The lab's AMD CPU (lbr-amd: LbrExtV2, 16 entries, and its
# PMU) boots sid's kernel: bpf_get_branch_snapshot() works on AMD from
# 6.10.  Prints a table, the BPF path of one record per setting, then
# per CPU and mitigation setting
#   probe_entries cpu=<cpu> mitigations=<on|off> kretprobe=<N> fexit=<M> bpf=<B>
# where N, M and B are the largest probe_entries of any record of any
# function through that path; bpf=none bpf_why=return-pushed-out where
# every snapshot of the BPF path had lost the return and held all of the
# LBR's entries (caps/branches): its own branches filled it.  A row
# without records fails it.  Then
# the cost table and the reader line of tests/bench/cost.sh, with their
# goals; then the attach line of tests/bench/attach.sh, with its goal;
# then the why cost and why origin lines of tests/bench/why.sh.
#
# BENCH_CPUS="lbr-amd" narrows the probe_entries part to those CPUs.
# KVER=RELEASE boots another kernel (tests/vm/kernel.sh's, e.g.
# KVER=7.2.13+deb14-amd64 for sid's), single-threaded TCG unless it is
# 6.1 (sid's and trixie's kernels die of int3 oopses under MTTCG,
# tests/run-all.sh).
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
lbr_bench_setup
cpus=${BENCH_CPUS:-lbr-legacy-pmu lbr-arch-pmu lbr-amd}
# The lab's AMD CPU boots sid's kernel (BENCH_AMD_KVER= another):
# bpf_get_branch_snapshot() has an AMD implementation from 6.10 on
# (amd_pmu_v2_snapshot_branch_stack()).
akver=
if [[ " $cpus " == *" lbr-amd "* ]]; then
	akver=${BENCH_AMD_KVER:-$("$LBR_TOP/tests/vm/kernel.sh" sid)} ||
		die "fetching sid's kernel for lbr-amd (tests/vm/kernel.sh sid)"
	"$LBR_TOP/tests/vm/build.sh" "$akver" >/dev/null
fi
# kver_of CPU: the kernel that CPU's rows boot.
kver_of() {
	if [ "$1" = lbr-amd ]; then echo "$akver"; else echo "$kver"; fi
}
# accel_of KVER: sid's and trixie's kernels die of int3 oopses under MTTCG.
accel_of() {
	case "$1" in 6.1.*) echo tcg ;; *) echo tcg,thread=single ;; esac
}
for cpu in $cpus; do
	echo "# $cpu: kernel $(kver_of $cpu), accel $(accel_of "$(kver_of $cpu)")"
done

status=0
for cpu in $cpus; do
	for mit in on off; do
		append=
		[ $mit = off ] && append=mitigations=off
		kv=$(kver_of $cpu)
		if ! "$LBR_TOP/tests/vm/run-vm.sh" --kver "$kv" --cpu $cpu \
			--smp 2 --accel "$(accel_of "$kv")" --append "$append" \
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
for cpu in $cpus; do
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
for cpu in $cpus; do
	for mit in on off; do
		if sed -n 's/^BENCH //p' "$out/$cpu-$mit.log" | tr -d '\r' |
		   grep 'records=0' | grep -qv 'why='; then
			echo "bench: a row without records ($cpu, mitigations=$mit)" >&2
			status=1
		fi
	done
done
echo
for cpu in $cpus; do
	for mit in on off; do
		echo "BPF path of one do_sys_openat2() record, $cpu, mitigations=$mit (oldest first):"
		sed -n 's/^# BENCH-PATH func=do_sys_openat2 hook=bpf /  /p' \
			"$out/$cpu-$mit.log" | tr -d '\r'
	done
done
echo
for cpu in $cpus; do
	for mit in on off; do
		f=$out/$cpu-$mit.log
		k=$(sed -n 's/^BENCH .*hook=kretprobe .*max=\([0-9]*\).*/\1/p' "$f" | sort -n | tail -n1)
		x=$(sed -n 's/^BENCH .*hook=fexit .*max=\([0-9]*\).*/\1/p' "$f" | sort -n | tail -n1)
		b=$(sed -n 's/^BENCH .*hook=bpf .*max=\([0-9]*\).*/\1/p' "$f" | sort -n | tail -n1)
		# No BPF figure where every snapshot lost the return: the
		# BPF path took the whole LBR (AMD's 16 entries).
		bw=
		if [ -z "$b" ] && sed -n 's/^BENCH func=do_sys_openat2 hook=bpf //p' "$f" |
		   grep -q 'records=0 .*why=return-pushed-out'; then
			bw=" bpf_why=return-pushed-out"
		fi
		echo "probe_entries cpu=$cpu mitigations=$mit kretprobe=${k:-none} fexit=${x:-none} bpf=${b:-none}$bw"
		[ -n "$k" ] && [ -n "$x" ] && { [ -n "$b" ] || [ -n "$bw" ]; } || status=1
	done
done

# The entries of a nested hooked call (tests/bench/guest.sh), with
# mitigations on (return thunks) and off, beside the goal of 4.
echo
for cpu in $cpus; do
	for mit in on off; do
		while read -r line; do
			case "$line" in
			*per_call=*)
				echo "nested_entries cpu=$cpu mitigations=$mit $line"
				pc=${line##*per_call=}
				pc=${pc%% *}
				# A figure, not a test: said, not failed.
				if [ "$pc" -le 4 ]; then
					echo "goal cpu=$cpu mitigations=$mit nested per_call $pc <= 4 met"
				else
					echo "goal cpu=$cpu mitigations=$mit nested per_call $pc <= 4 not met"
				fi
				;;
			*)
				echo "bench: no nested figure ($cpu, mitigations=$mit): $line" >&2
				status=1
				;;
			esac
		done < <(sed -n 's/^NESTED //p' "$out/$cpu-$mit.log" | tr -d '\r')
	done
done

# What a return costs, and how fast the tool drains a storm
# (tests/bench/cost.sh): "cost ..." and "reader ..." lines, the goals.
echo
KVER=$kver "$LBR_TOP/tests/bench/cost.sh" || status=1

# Attaching thousands of functions beside BPF (tests/bench/attach.sh):
# "attach ..." lines, the goal.
echo
"$LBR_TOP/tests/bench/attach.sh" || status=1

# What why's default sets cost a task it does not follow, and the why
# scenarios' origins (tests/bench/why.sh): "why cost", "why origin".
echo
"$LBR_TOP/tests/bench/why.sh" || status=1
exit $status
