#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench's cost table and reader line: what a return costs the traced
# code, and how fast lbr-snap drains a storm beside cat trace_pipe.
#
# Each figure is guest instructions: the guest runs under QEMU's -icount
# shift=0, where a nanosecond of guest time is one instruction, so the
# host's load does not matter.  One boot per LBR lab CPU (lbr-legacy,
# lbr-arch) with -smp 1 for the cost table (tests/bench/cost-guest.sh,
# 20,000 open()s per run, median of 3 runs).  The reader line needs -smp
# 2, with which a guest under -icount hangs in its boot: it comes from
# one boot in guest time under multi-threaded TCG, lbr-snap and
# trace_pipe side by side, so the ratio is of one run.  "added" is instructions per open() above the same open()
# with no probe, measured in the same boot: a missing file (do_sys_openat2
# returns -ENOENT: captured) and an existing one (a success: filtered).
# Prints per CPU
#   cost cpu=<cpu> hook=<hook> case=<captured|filtered> added=N ftrace_event=M ratio=R floor=F msr_accesses=A
#   cost cpu=<cpu> hook=<kretprobe|fexit> case=captured-stack added=N ftrace_event=M ratio=R floor=F
#   hooked cpu=<cpu> case=<success|error> added_insns=N msr_accesses=A bpf_added_insns=B
#   reader cpu=<cpu> lbr_snap_rps=N trace_pipe_rps=M ratio=R lost=L
#          text_rps=T text_ratio=TR text_lost=L trace_pipe_lost=L
#          storm_rps=S text_storm_rps=S trace_pipe_storm_rps=S
#          text_trace_pipe_rps=M text_trace_pipe_lost=L
#          cpu_us=U text_cpu_us=U trace_pipe_cpu_us=U text_trace_pipe_cpu_us=U
#          load=none|spinner
# The reader line twice per CPU: load=none alone on the host, and
# load=spinner (part reader-loaded) beside a second guest whose two vCPUs
# spin, as other guests do on a shared machine.
# ftrace_event is what an ftrace kretprobe event (r:... ret=$retval) adds
# to the same open(); floor what a kretprobe with an empty handler adds
# (the kretprobe machinery itself).  hook=none is backend=none (no LBR).
# msr_accesses is RDMSRs and WRMSRs per open() above the same open()
# with no probe, counted by the LBR lab's vCPU (MSR 0x4c4252): -icount
# counts each as one instruction, real silicon as hundreds of cycles and
# a KVM guest's WRMSR of DEBUGCTL as a VM exit.  The hooked lines put the
# fexit hook's figures beside an empty BPF fexit program's on the same
# function (the least a BPF tool such as retsnoop attaches): success is
# an existing file's open() (do_sys_openat2 returns an fd), error a
# missing one's.
# captured and filtered are without call stacks (stack_depth=0), as the
# event has none; captured-stack is with the default stack_depth= (16),
# its ftrace_event the event with a stacktrace trigger.
# rps are the storm's records per second of guest time, from the
# storm's start to the reader's last write (the output file's mtime);
# lost counts the storm's records the reader did not print (dropped
# ones included).  Each lbr-snap reader and its trace_pipe reader drain
# one storm side by side (lbr_snap and the ftrace event both on
# do_sys_openat2): trace_pipe_rps is the --json storm's,
# text_trace_pipe_rps the text one's.  *cpu_us are the CPU time each
# reader used per record, in guest us (cat's is the kernel formatting the
# events in its read()s): what its rate would be in a faster storm.
#
# The goals, each checked, "goal ... FAIL" and exit 1 if not:
#   captured, kretprobe: added <= 1.0 x ftrace_event; fexit: <= 0.8 x
#   filtered, fexit: added <= 120 and msr_accesses <= 0.01 (a success
#           leaves the trampoline before the freeze); kretprobe: added
#           <= floor + 60
#   hooked success (fexit, a success of the hooked function): fewer
#           instructions than an empty BPF fexit program on it adds
#           (bpf_added_insns), and no MSR access
#   reader: lbr-snap --json and text drain at least as fast as
#           trace_pipe, nothing lost (as_fast(): on the exact figures,
#           a tick's slack on the last write)
#   reader, load=spinner: each lbr-snap reader loses no more of its
#           storm than the trace_pipe reader beside it, at the default
#           buffer sizes
#
# And what every task's exit pays while lbr_snap_fexit is loaded (it
# looks for calls the task leaves inside traced functions), per fork(),
# exit() and wait() of a child that exits at once:
#   exit cpu=<cpu> base=B no_slot=N slot=S slot_pct=P
# B with no module, N and S added with lbr_snap loaded and no fexit slot
# used (a kretprobe target) or one (an fexit target); P is S - N in
# percent of B.  Goal: a used slot adds at most 0.5% of the exit.
#
# And where Arch LBR can be read by one XSAVES (lbr-arch-xsaves, one more
# -smp 1 boot under -icount; cost-guest.sh's read part), what a
# capture's read of the frozen LBR adds, each way:
#   read cpu=<cpu> depth=D msr=N xsaves=M xsaves_to_msr=R rdmsr=3D
# N and M are guest instructions per captured open() above the same
# open() with backend=none (no freeze, no read): the freeze, the read of
# FROM, TO and INFO (lbr_info=1) by 3 x depth RDMSRs or by one XSAVES
# and its copy, the unfreeze.  Under TCG an RDMSR is one instruction; on
# real hardware each is far dearer, hence perf's XSAVES.  No goal: a
# missing figure, or a read not made the way asked, fails.
#
# COST_CPUS="lbr-legacy", COST_READ_CPUS= and COST_PARTS="cost" narrow
# it; KVER= as in make bench.
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

cpus=${COST_CPUS:-lbr-legacy lbr-arch}
read_cpus=${COST_READ_CPUS-lbr-arch-xsaves}
parts=${COST_PARTS:-cost reader reader-loaded read}
status=0
if [ -n "${COST_LOGS:-}" ]; then
	# The figures of guest logs already there, $COST_LOGS/CPU-PART.log
	# (tests/test-plan.sh feeds it crafted ones).
	out=$COST_LOGS
else
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
	lbr_bench_setup
	echo "# cost: kernel $kver, guest instructions (-icount shift=0)"
fi

# vm CPU PART: one guest boot of cost-guest.sh.  The reader beside the
# storm needs two vCPUs, and a guest with two under -icount hangs in its
# boot: that one runs in time (multi-threaded TCG), both readers and
# trace_pipe in the same boot.
# vm CPU reader loaded: the same reader boot, its log CPU-reader-loaded.
vm() {
	local -a how=(--smp 1 --icount 0)

	[ "$2" = reader ] && how=(--smp 2 --accel tcg)
	"$LBR_TOP/tests/vm/run-vm.sh" --kver "$kver" --cpu "$1" "${how[@]}" \
		--append "LBR_BENCH_PART=$2" \
		--script "$LBR_TOP/tests/bench/cost-guest.sh" \
		>"$out/$1-$2${3:+-$3}.log" 2>&1
}

# The reader again with the host loaded: a second guest whose two vCPUs
# spin beside it, as other guests do on a shared machine.  Its own
# session, so that all of it goes when the reader guest is done.
vm_loaded() {
	local spin

	printf '#!/bin/sh\nfor i in 1 2; do (while :; do :; done) & done\nwait\n' \
		>"$out/spin.sh"
	setsid "$LBR_TOP/tests/vm/run-vm.sh" --smp 2 --accel tcg \
		--timeout 7200 --script "$out/spin.sh" >"$out/spin.log" 2>&1 &
	spin=$!
	sleep 20
	vm "$1" reader loaded
	local rc=$?
	kill -- -"$spin" 2>/dev/null
	wait "$spin" 2>/dev/null
	return $rc
}

# The cost guests of every CPU at once: icount figures do not depend on
# the host's load.  The reader guests one at a time, after: in time, a
# busy host would starve one vCPU and not the other.
pids=()
if [ -z "${COST_LOGS:-}" ]; then
	for cpu in $cpus; do
		[[ " $parts " != *" cost "* ]] || { vm "$cpu" cost & pids+=($!); }
	done
	for cpu in $read_cpus; do
		[[ " $parts " != *" read "* ]] || { vm "$cpu" read & pids+=($!); }
	done
	for p in "${pids[@]}"; do
		wait "$p" || status=1
	done
	for cpu in $cpus; do
		[[ " $parts " != *" reader "* ]] || vm "$cpu" reader || status=1
		[[ " $parts " != *" reader-loaded "* ]] ||
			vm_loaded "$cpu" || status=1
	done
fi
if [ $status != 0 ]; then
	for f in "$out"/*.log; do
		echo "cost: $(basename "$f" .log):" >&2
		tail -n 20 "$f" >&2
	done
fi

# median WHAT LOG: the median of a COST line, "" if there is none.
median() {
	sed -n "s/^COST what=$1 .*median=\([0-9.]*\).*/\1/p" "$2" | tr -d '\r' | head -n1
}

# msr WHAT LOG: the MSR accesses per call of a COST line's median run,
# "" where the guest had no LBR lab counter.
msr() {
	sed -n "s/^COST what=$1 .* msr=\([0-9.]*\).*/\1/p" "$2" | tr -d '\r' | head -n1
}

# goal NAME OK: print the verdict; a FAIL fails the run.
goal() {
	if [ "$2" = 1 ]; then
		echo "goal $1 ok"
	else
		echo "goal $1 FAIL"
		status=1
	fi
}

for cpu in $cpus; do
	f=$out/$cpu-cost.log
	[[ " $parts " == *" cost "* ]] || continue
	if grep -q '^COST_BAD' "$f"; then
		grep '^COST_BAD' "$f" | tr -d '\r' | sed 's/^/cost: /' >&2
		status=1
	fi
	{ grep '^# lbr_snap' "$f" || true; } | tr -d '\r' | sed "s/^# /# $cpu: /"
	bm=$(median base-miss "$f")
	bh=$(median base-hit "$f")
	fm=$(median ftrace-miss "$f")
	flm=$(median floor-miss "$f")
	flh=$(median floor-hit "$f")
	if [ -z "$bm" ] || [ -z "$bh" ] || [ -z "$fm" ] || [ -z "$flh" ]; then
		echo "cost: no baseline figures for $cpu" >&2
		status=1
		continue
	fi
	ev=$(awk -v a="$fm" -v b="$bm" 'BEGIN { printf "%.0f", a - b }')
	for hook in kretprobe fexit none; do
		for case in captured filtered; do
			if [ $case = captured ]; then
				w=$(median $hook-miss "$f") base=$bm floor=$flm
				mw=$(msr $hook-miss "$f") mb=$(msr base-miss "$f")
			else
				w=$(median $hook-hit "$f") base=$bh floor=$flh
				mw=$(msr $hook-hit "$f") mb=$(msr base-hit "$f")
			fi
			if [ -z "$w" ]; then
				echo "cost: no figure for $hook $case on $cpu" >&2
				status=1
				continue
			fi
			read -r added ratio fl < <(awk -v w="$w" -v b="$base" \
				-v e="$ev" -v fl="$floor" 'BEGIN {
				printf "%.0f %.2f %.0f\n", w - b, (w - b) / e, fl - b }')
			# MSR accesses per call above the base: where the
			# guest counts them (the LBR lab), else "-".
			ma=-
			if [ -n "$mw" ] && [ -n "$mb" ]; then
				ma=$(awk -v w="$mw" -v b="$mb" 'BEGIN { printf "%.2f", w - b }')
			else
				echo "cost: no MSR access count for $hook $case on $cpu (no LBR lab counter?)" >&2
				status=1
			fi
			echo "cost cpu=$cpu hook=$hook case=$case added=$added ftrace_event=$ev ratio=$ratio floor=$fl msr_accesses=$ma"
			case $hook-$case in
			kretprobe-captured)
				goal "cpu=$cpu kretprobe captured: added $added <= ftrace_event $ev" \
					$((added <= ev)) ;;
			fexit-captured)
				goal "cpu=$cpu fexit captured: added $added <= 0.8 x ftrace_event $ev" \
					$((added * 10 <= ev * 8)) ;;
			kretprobe-filtered)
				goal "cpu=$cpu kretprobe filtered: added $added <= floor $fl + 60" \
					$((added <= fl + 60)) ;;
			fexit-filtered)
				goal "cpu=$cpu fexit filtered: added $added <= 120" \
					$((added <= 120))
				goal "cpu=$cpu fexit filtered: msr_accesses $ma <= 0.01" \
					$(awk -v m="$ma" 'BEGIN { print (m != "-" && m <= 0.01) }') ;;
			esac
		done
	done
	# A hooked call on fexit beside an empty BPF fexit program on the
	# same function: instructions and MSR accesses added, per case.
	for case in success error; do
		if [ $case = error ]; then
			w=$(median fexit-miss "$f") b=$bm bw=$(median bpf-miss "$f")
			mw=$(msr fexit-miss "$f") mb=$(msr base-miss "$f")
		else
			w=$(median fexit-hit "$f") b=$bh bw=$(median bpf-hit "$f")
			mw=$(msr fexit-hit "$f") mb=$(msr base-hit "$f")
		fi
		if [ -z "$w" ] || [ -z "$bw" ] || [ -z "$mw" ] || [ -z "$mb" ]; then
			echo "cost: no hooked figure for $case on $cpu" >&2
			status=1
			continue
		fi
		read -r added bpf ma < <(awk -v w="$w" -v b="$b" -v bw="$bw" \
			-v mw="$mw" -v mb="$mb" 'BEGIN {
			printf "%.0f %.0f %.2f\n", w - b, bw - b, mw - mb }')
		echo "hooked cpu=$cpu case=$case added_insns=$added msr_accesses=$ma bpf_added_insns=$bpf"
		if [ $case = success ]; then
			goal "cpu=$cpu hooked success: added_insns $added < bpf_added_insns $bpf" \
				$((added < bpf))
			goal "cpu=$cpu hooked success: msr_accesses $ma = 0" \
				$(awk -v m="$ma" 'BEGIN { print (m <= 0.01) }')
		fi
	done
	# The captured return with its call stack (stack_depth=, the
	# default) beside the ftrace event with a stacktrace trigger.
	fsm=$(median ftrace-stack-miss "$f")
	for hook in kretprobe fexit; do
		w=$(median $hook-stack-miss "$f")
		if [ -z "$w" ] || [ -z "$fsm" ]; then
			echo "cost: no call stack figure for $hook on $cpu" >&2
			status=1
			continue
		fi
		read -r added evs ratio < <(awk -v w="$w" -v b="$bm" -v e="$fsm" \
			'BEGIN { printf "%.0f %.0f %.2f\n", w - b, e - b, (w - b) / (e - b) }')
		echo "cost cpu=$cpu hook=$hook case=captured-stack added=$added ftrace_event=$evs ratio=$ratio floor=$(awk -v a="$flm" -v b="$bm" 'BEGIN { printf "%.0f", a - b }')"
	done
	# What every task's exit pays while lbr_snap_fexit is loaded: the
	# look for calls it leaves inside traced functions.
	be=$(median base-exit "$f")
	ke=$(median kretprobe-exit "$f")
	xe=$(median fexit-exit "$f")
	if [ -z "$be" ] || [ -z "$ke" ] || [ -z "$xe" ]; then
		echo "cost: no exit figures for $cpu" >&2
		status=1
		continue
	fi
	read -r base noslot slot pct < <(awk -v b="$be" -v k="$ke" -v x="$xe" \
		'BEGIN { printf "%.0f %.0f %.0f %.2f\n", b, k - b, x - b, (x - k) * 100 / b }')
	echo "exit cpu=$cpu base=$base no_slot=$noslot slot=$slot slot_pct=$pct"
	goal "cpu=$cpu exit: a slot adds $((slot - noslot)) <= 0.5% of the exit ($base)" \
		$(((slot - noslot) * 200 <= base))
done

for cpu in $read_cpus; do
	[[ " $parts " == *" read "* ]] || continue
	f=$out/$cpu-read.log
	if grep -q '^COST_BAD' "$f"; then
		grep '^COST_BAD' "$f" | tr -d '\r' | sed 's/^/cost: /' >&2
		status=1
	fi
	{ grep '^# lbr_snap' "$f" || true; } | tr -d '\r' | sed "s/^# /# $cpu: /"
	rn=$(median read-none-miss "$f")
	rm=$(median read-msr-miss "$f")
	rx=$(median read-xsaves-miss "$f")
	depth=$(sed -n 's/^# lbr_snap .*lbr_read=xsaves: .*lbr_depth: \([0-9]*\).*/\1/p' "$f" |
		tr -d '\r' | head -n1)
	if [ -z "$rn" ] || [ -z "$rm" ] || [ -z "$rx" ] || [ -z "$depth" ]; then
		echo "cost: no read figures for $cpu" >&2
		status=1
		continue
	fi
	awk -v c="$cpu" -v d="$depth" -v n="$rn" -v m="$rm" -v x="$rx" 'BEGIN {
		printf "read cpu=%s depth=%d msr=%.0f xsaves=%.0f xsaves_to_msr=%.2f rdmsr=%d\n",
		       c, d, m - n, x - n, (x - n) / (m - n), 3 * d }'
done

# reader_fields LOG READER: "produced read dropped ns storm_ns us" of a
# READER line, us its reader's CPU time a record ("-" without cpu_ms=).
reader_fields() {
	sed -n "s/^READER reader=$2 produced=\([0-9]*\) read=\([0-9]*\) dropped=\([0-9]*\) ns=\([0-9]*\) storm_ns=\([0-9]*\)\( cpu_ms=\([0-9]*\)\)\{0,1\}.*/\1 \2 \3 \4 \5 \7/p" \
		"$1" | tr -d '\r' | head -n1 |
		awk '{ print $1, $2, $3, $4, $5,
		       (NF > 5 ? sprintf("%.0f", $6 * 1000 / $1) : "-") }'
}

# as_fast READ NS TP_READ TP_NS LOST: 1 if a reader that read READ
# records by NS ns kept up with trace_pipe's TP_READ by TP_NS, and lost
# none.  On the exact figures, not the ratio printed at two decimals
# (that let a reader 0.5% behind pass as 1.00): a rate not lower, or as
# many records with its last write at most one jiffy after trace_pipe's
# (the guest runs HZ=250, and a file's mtime is coarse time, a tick).
as_fast() {
	awk -v r="$1" -v n="$2" -v tr="$3" -v tn="$4" -v l="$5" 'BEGIN {
		print (l == 0 && (r * tn >= tr * n ||
				  (r >= tr && n - tn <= 4000000))) }'
}

# reader_line CPU LOG LOAD: the reader line of one boot's log, and its
# goals.  LOAD none: each reader as fast as trace_pipe, nothing lost;
# spinner (the host loaded): each reader loses no more than trace_pipe.
reader_line() {
	local cpu=$1 f=$2 load=$3
	local jp jr jd jn js jcpu tp tr td tn ts tcpu fp fr fd fn fs fcpu
	local gp gr gd gn gs gcpu jrps trps frps grps jratio tratio
	local jsrps tsrps fsrps jlost tlost flost glost

	read -r jp jr jd jn js jcpu < <(reader_fields "$f" lbr-snap-json) || true
	read -r tp tr td tn ts tcpu < <(reader_fields "$f" lbr-snap-text) || true
	# The trace_pipe reader beside each: the same storm.
	read -r fp fr fd fn fs fcpu < <(reader_fields "$f" trace_pipe) || true
	read -r gp gr gd gn gs gcpu < <(reader_fields "$f" trace_pipe-text) ||
		true
	if [ -z "${js:-}" ] || [ -z "${ts:-}" ] || [ -z "${fs:-}" ] ||
	   [ -z "${gs:-}" ]; then
		echo "cost: no reader figures for $cpu (load $load)" >&2
		return 1
	fi
	read -r jrps trps frps grps jratio tratio < <(awk -v jr="$jr" \
		-v jn="$jn" -v tr="$tr" -v tn="$tn" -v fr="$fr" -v fn="$fn" \
		-v gr="$gr" -v gn="$gn" 'BEGIN {
		j = jr / jn * 1e9; t = tr / tn * 1e9; f = fr / fn * 1e9
		g = gr / gn * 1e9
		printf "%.0f %.0f %.0f %.0f %.2f %.2f\n", j, t, f, g, j / f,
		       t / g }')
	# Each storm's own rate: no reader prints faster than its storm
	# captures.  trace_pipe's storm is the JSON reader's.
	read -r jsrps tsrps fsrps < <(awk -v p="$jp" -v j="$js" -v t="$ts" \
		-v f="$fs" 'BEGIN { printf "%.0f %.0f %.0f\n", p / j * 1e9,
		p / t * 1e9, p / f * 1e9 }')
	jlost=$((jp - jr))
	tlost=$((tp - tr))
	flost=$((fp - fr))
	glost=$((gp - gr))
	echo "reader cpu=$cpu lbr_snap_rps=$jrps trace_pipe_rps=$frps ratio=$jratio lost=$jlost text_rps=$trps text_ratio=$tratio text_lost=$tlost trace_pipe_lost=$flost storm_rps=$jsrps text_storm_rps=$tsrps trace_pipe_storm_rps=$fsrps text_trace_pipe_rps=$grps text_trace_pipe_lost=$glost cpu_us=$jcpu text_cpu_us=$tcpu trace_pipe_cpu_us=$fcpu text_trace_pipe_cpu_us=$gcpu load=$load"
	if [ "$load" = spinner ]; then
		goal "cpu=$cpu reader --json, host loaded: lost $jlost (dropped $jd) <= trace_pipe_lost $flost" \
			"$(awk -v a="$jlost" -v b="$flost" 'BEGIN { print (a <= b) }')"
		goal "cpu=$cpu reader text, host loaded: lost $tlost (dropped $td) <= text_trace_pipe_lost $glost" \
			"$(awk -v a="$tlost" -v b="$glost" 'BEGIN { print (a <= b) }')"
		return 0
	fi
	goal "cpu=$cpu reader --json: $jrps records/s >= trace_pipe $frps in the same storm, lost $jlost (dropped $jd)" \
		"$(as_fast "$jr" "$jn" "$fr" "$fn" "$jlost")"
	goal "cpu=$cpu reader text: $trps records/s >= trace_pipe $grps in the same storm, lost $tlost (dropped $td)" \
		"$(as_fast "$tr" "$tn" "$gr" "$gn" "$tlost")"
}

for cpu in $cpus; do
	if [[ " $parts " == *" reader "* ]]; then
		reader_line "$cpu" "$out/$cpu-reader.log" none || status=1
	fi
	if [[ " $parts " == *" reader-loaded "* ]]; then
		reader_line "$cpu" "$out/$cpu-reader-loaded.log" spinner ||
			status=1
	fi
done
exit $status
