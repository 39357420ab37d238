#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of make bench's cost table and reader line
# (tests/bench/cost.sh).
#
# LBR_BENCH_PART=cost (default; boot with -smp 1 under QEMU's -icount
# shift=0, where a nanosecond of guest time is one guest instruction):
# guest instructions per
# open() of a missing file (do_sys_openat2 returns -ENOENT: an error, so
# captured) and of an existing one (a success: filtered), with no probe,
# with an ftrace kretprobe event, with a kretprobe whose handler does
# nothing (the floor), and with lbr_snap on each hook and on backend=none,
# all without call stacks; then the captured open() with call stacks:
# the ftrace event with a stacktrace trigger, lbr_snap with its default
# stack_depth= on each hook.
# One line per configuration:
#   COST what=<configuration>-<miss|hit> runs=A,B,C median=M
# A configuration whose records were dropped (the buffer is sized so
# none are) or not all captured prints "COST_BAD what=... why=...".
#
# LBR_BENCH_PART=reader (-smp 2, in time): a storm of 30,000 failing
# open()s, lbr_snap at its default buffer size, with one reader beside
# it, lbr-snap --json and lbr-snap (text), both symbolized from
# /proc/kallsyms, then cat trace_pipe of an ftrace kretprobe event
# with a filter keeping the same errors, lbr_snap loaded on another
# target so that LBR records as in the first two (the lab's recording
# slows the guest).  Each reader starts a second before its storm.  One
# line each:
#   READER reader=<lbr-snap-json|lbr-snap-text|trace_pipe> produced=P
#          read=R dropped=D ns=T
# P the storm's failing open()s, R how many of them the reader printed,
# D what the module (or ftrace) dropped, T from the storm's start to
# the reader's last write (the output file's mtime), in guest ns.
N=${LBR_BENCH_CALLS:-20000}
# The reader's storm: the issue's, 30,000 failing open()s.
RN=${LBR_BENCH_READER_CALLS:-30000}
RUNS=3
MISS=/lbr-cost-no-such-file
HIT=/etc/passwd
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null

spec=$(lbr-snap spec do_sys_openat2) || exit 1
echo "# do_sys_openat2 from BTF: $spec"

# measure WHAT PATH
measure() {
	lbr_snap_cost opens "$2" "$N" "$RUNS" | sed "s/^OPENS /COST what=$1 /"
}

# target_counts: "hits captured filtered dropped" of the only target
target_counts() {
	lbr-snap stats --json |
		sed 's/.*"hits":\([0-9]*\),"captured":\([0-9]*\),"filtered":\([0-9]*\),"dropped":\([0-9]*\).*/\1 \2 \3 \4/'
}

ftrace_on() {	# ftrace_on [FILTER]
	echo 'r:lbrcost do_sys_openat2 ret=$retval:s64' >$T/kprobe_events || exit 1
	[ -z "${1:-}" ] || echo "$1" >$T/events/kprobes/lbrcost/filter || exit 1
	echo >$T/trace
	echo 1 >$T/events/kprobes/lbrcost/enable || exit 1
	echo 1 >$T/tracing_on
}

ftrace_off() {
	echo 0 >$T/events/kprobes/lbrcost/enable
	echo '!stacktrace' >$T/events/kprobes/lbrcost/trigger 2>/dev/null
	echo >$T/kprobe_events
	echo >$T/trace
}

cost() {
	measure base-miss $MISS
	measure base-hit $HIT

	ftrace_on
	measure ftrace-miss $MISS
	measure ftrace-hit $HIT
	# The event with the call stack, as lbr_snap's stack_depth= keeps it.
	echo stacktrace >$T/events/kprobes/lbrcost/trigger || exit 1
	measure ftrace-stack-miss $MISS
	ftrace_off

	modprobe lbr_snap_test_target nop_kretprobe=do_sys_openat2 || exit 1
	measure floor-miss $MISS
	measure floor-hit $HIT
	rmmod lbr_snap_test_target || exit 1

	# 64 MiB holds every record of the runs (about 620 bytes each, 800
	# with a stack).  The ftrace event keeps no call stack: lbr_snap is
	# measured without one (stack_depth=0), then with its default
	# stack_depth= beside the event with a stacktrace trigger.
	for conf in kretprobe fexit none kretprobe-stack fexit-stack; do
		case $conf in
		none) params="targets=$spec@kretprobe backend=none stack_depth=0" ;;
		*-stack) params="targets=$spec@${conf%-stack}" ;;
		*) params="targets=$spec@$conf stack_depth=0" ;;
		esac
		modprobe lbr_snap buffer_kb=65536 $params || exit 1
		echo "# lbr_snap $params: $(lbr-snap info | grep -E '^(backend|mode|stack_depth):' | tr '\n' ' ')"
		measure $conf-miss $MISS
		set -- $(target_counts)
		want=$((N * RUNS + N / 2 + 1))
		if [ "${4:-x}" != 0 ] || [ "${2:-0}" -lt "$want" ]; then
			echo "COST_BAD what=$conf-miss why=captured_${2:-?}_of_${want}_dropped_${4:-?}"
		fi
		case $conf in
		*-stack) ;;
		*) measure $conf-hit $HIT ;;
		esac
		rmmod lbr_snap || exit 1
	done
}

reader() {
	for fmt in json text; do
		modprobe lbr_snap "targets=$spec" || exit 1
		if [ $fmt = json ]; then
			lbr-snap --json >/tmp/reader.out &
		else
			lbr-snap >/tmp/reader.out &
		fi
		rpid=$!
		sleep 2
		t0=$(lbr_snap_cost now)
		pid=$(lbr_snap_cost storm $MISS "$RN" | sed -n 's/^STORM pid=\([0-9]*\).*/\1/p')
		set -- $(target_counts)
		w=$(lbr_snap_cost wait /tmp/reader.out $fmt "$pid" "$RN" 300)
		kill -INT $rpid
		wait $rpid
		t1=${w##*ns=}
		t1=${t1%% *}
		got=${w#WAIT records=}
		got=${got%% *}
		echo "READER reader=lbr-snap-$fmt produced=$RN read=$got dropped=$4 ns=$((t1 - t0))"
		rmmod lbr_snap || exit 1
	done

	# The same storm: LBR on as lbr_snap has it (the lab records every
	# branch, which slows the guest), on a target the storm never calls.
	modprobe lbr_snap_test_target || exit 1
	modprobe lbr_snap targets=lbr_test_int || exit 1
	ftrace_on 'ret == -2'
	cat $T/trace_pipe >/tmp/reader.out &
	rpid=$!
	sleep 2
	t0=$(lbr_snap_cost now)
	pid=$(lbr_snap_cost storm $MISS "$RN" | sed -n 's/^STORM pid=\([0-9]*\).*/\1/p')
	w=$(lbr_snap_cost wait /tmp/reader.out lines "$pid" "$RN" 300)
	over=0
	for f in $T/per_cpu/cpu*/stats; do
		o=$(sed -n 's/^overrun: //p' "$f")
		over=$((over + ${o:-0}))
	done
	kill $rpid
	wait $rpid 2>/dev/null
	t1=${w##*ns=}
	t1=${t1%% *}
	got=${w#WAIT records=}
	got=${got%% *}
	echo "READER reader=trace_pipe produced=$RN read=$got dropped=$over ns=$((t1 - t0))"
	ftrace_off
	rmmod lbr_snap lbr_snap_test_target
}

case ${LBR_BENCH_PART:-cost} in
cost) cost ;;
reader) reader ;;
*) echo "LBR_BENCH_PART=$LBR_BENCH_PART: cost or reader" >&2; exit 1 ;;
esac
