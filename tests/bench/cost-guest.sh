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
# nothing (the floor), with an empty BPF fexit program (bpf: the anchor
# of a hook's cost), and with lbr_snap on each hook and on backend=none,
# all without call stacks; then the captured open() with call stacks:
# the ftrace event with a stacktrace trigger, lbr_snap with its default
# stack_depth= on each hook.  And per fork() of a child that exits at
# once (and its wait): with no module, and with lbr_snap on a kretprobe
# (no fexit slot used) and on fexit (one used):
#   COST what=<base|kretprobe|fexit>-exit runs=A,B,C median=M
# One line per configuration:
#   COST what=<configuration>-<miss|hit> runs=A,B,C median=M
# A configuration whose records were dropped (the buffer is sized so
# none are) or not all captured prints "COST_BAD what=... why=...".
#
# LBR_BENCH_PART=reader (-smp 2, in time): two storms of 30,000 failing
# open()s, each captured by lbr_snap at its default buffer size and
# traced by an ftrace kretprobe event on the same function (a filter
# keeps the same errors), with two readers beside it: lbr-snap --json
# (the first storm) or lbr-snap (text, the second), symbolized from
# /proc/kallsyms, and cat trace_pipe.  Both readers drain the very same
# storm: under TCG a storm's speed in time depends on what probes it
# (the MSR accesses of a capture are helper calls), so rates of two
# different storms did not compare.  The readers start two seconds
# before their storm.  One line each:
#   READER reader=<lbr-snap-json|trace_pipe|lbr-snap-text|trace_pipe-text>
#          produced=P read=R dropped=D ns=T storm_ns=S cpu_ms=C
# P the storm's failing open()s, R how many of them the reader printed,
# D what the module (or ftrace) dropped, T from the storm's start to
# the reader's last write (the output file's mtime), S the storm's own
# time (its open()s, as it measured them), both in guest ns, C the CPU
# time the reader used (for cat, the kernel's formatting of the events
# in its read()s) from the storm's start to its last record.
#
# LBR_BENCH_PART=read (as cost, on a CPU where Arch LBR can be read by
# XSAVES: lbr-arch-xsaves): the captured open() with lbr_snap on the
# kretprobe hook, without call stacks and with LBR_INFO, so that both
# reads take FROM, TO and INFO of every entry, read by MSRs
# (lbr_read=msr: 3 x depth RDMSRs), by one XSAVES (lbr_read=xsaves), and
# with backend=none (no freeze, no read):
#   COST what=read-<msr|xsaves|none>-miss runs=A,B,C median=M
#   # lbr_snap ...: backend: ... lbr_depth: D ... lbr_read: ...
# and COST_BAD where the module did not read the way asked.
N=${LBR_BENCH_CALLS:-20000}
# The reader's storm: the issue's, 30,000 failing open()s.
RN=${LBR_BENCH_READER_CALLS:-30000}
# fork()s whose child exits at once, per run.
XN=${LBR_BENCH_EXITS:-1000}
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

# measure_exits WHAT: a fork(), the child's exit() and the wait
measure_exits() {
	lbr_snap_cost exits "$XN" "$RUNS" | sed "s/^EXITS /COST what=$1 /"
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

# captured_all WHAT: COST_BAD unless every miss of the runs was captured
# and none dropped.
captured_all() {
	set -- "$1" $(target_counts)
	want=$((N * RUNS + N / 2 + 1))
	if [ "${5:-x}" != 0 ] || [ "${3:-0}" -lt "$want" ]; then
		echo "COST_BAD what=$1 why=captured_${3:-?}_of_${want}_dropped_${5:-?}"
	fi
}

cost() {
	# The LBR lab's MSR access count, read through /dev/cpu/0/msr.
	modprobe msr 2>/dev/null
	measure base-miss $MISS
	measure base-hit $HIT
	measure_exits base-exit

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

	# The anchor of a hook's cost: an empty BPF fexit program on the
	# same function (lbr_snap_bpf_bench hold), attached while measured.
	lbr_snap_bpf_bench hold do_sys_openat2 >/tmp/hold.out &
	hpid=$!
	i=0
	while ! grep -q '^HELD' /tmp/hold.out && kill -0 $hpid 2>/dev/null &&
	      [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if grep -q '^HELD' /tmp/hold.out; then
		measure bpf-miss $MISS
		measure bpf-hit $HIT
	else
		echo "COST_BAD what=bpf-miss why=$(sed -n 's/.*why=//p' /tmp/hold.out)_not_held"
	fi
	kill $hpid 2>/dev/null
	wait $hpid 2>/dev/null

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
		captured_all $conf-miss
		case $conf in
		*-stack) ;;
		*) measure $conf-hit $HIT ;;
		esac
		# Every exit while lbr_snap_fexit is loaded looks for calls
		# the task leaves inside a traced function: with no fexit
		# slot used (kretprobe) and with one (fexit).
		case $conf in
		kretprobe | fexit) measure_exits $conf-exit ;;
		esac
		rmmod lbr_snap || exit 1
	done
}

read_cost() {
	for conf in none msr xsaves; do
		params="targets=$spec@kretprobe stack_depth=0"
		case $conf in
		none) params="$params backend=none" ;;
		*) params="$params lbr_info=1 lbr_read=$conf" ;;
		esac
		if ! modprobe lbr_snap buffer_kb=65536 $params; then
			echo "COST_BAD what=read-$conf-miss why=modprobe_failed"
			continue
		fi
		info=$(lbr-snap info | grep -E '^(backend|mode|lbr_depth|lbr_read):' | tr '\n' ' ')
		echo "# lbr_snap $params: $info"
		case $conf-$info in
		none-* | *"lbr_read: $conf "*) ;;
		*) echo "COST_BAD what=read-$conf-miss why=not_read_by_$conf" ;;
		esac
		measure read-$conf-miss $MISS
		captured_all read-$conf-miss
		rmmod lbr_snap || exit 1
	done
}

# cpu_ms PID: the CPU time (user and system, every thread) process PID
# has used, in ms (USER_HZ is 100 on x86).
cpu_ms() {
	awk '{ print ($14 + $15) * 10 }' /proc/$1/stat
}

reader() {
	for fmt in json text; do
		# One storm, both consumers: lbr_snap capturing and the ftrace
		# event on the same function, each read by its reader, side by
		# side, so that both drain the very same storm.
		modprobe lbr_snap "targets=$spec" || exit 1
		ftrace_on 'ret == -2'
		if [ $fmt = json ]; then
			lbr-snap --json >/tmp/reader.out &
		else
			lbr-snap >/tmp/reader.out &
		fi
		rpid=$!
		cat $T/trace_pipe >/tmp/trace.out &
		tpid=$!
		sleep 2
		# Their CPU time from here: not lbr-snap's loading of kallsyms.
		rcpu0=$(cpu_ms $rpid)
		tcpu0=$(cpu_ms $tpid)
		t0=$(lbr_snap_cost now)
		st=$(lbr_snap_cost storm $MISS "$RN")
		# Both outputs settle before anything else runs: the counts
		# below take processes of their own (lbr-snap, sed), which
		# took a vCPU from a reader still writing its last records
		# (in one boot, eight storms each alternated: the --json
		# reader's last write 0 to 47 ms after cat's with this wait,
		# 0 to 80 without).  The times are the files' mtimes,
		# whenever they are read.
		lbr_snap_cost settle /tmp/reader.out /tmp/trace.out
		pid=${st#STORM pid=}
		pid=${pid%% *}
		sns=${st##* ns=}
		set -- $(target_counts)
		# The storm is over: what either side dropped is known, and
		# never comes (waiting for it was 300 s lost).
		over=0
		for f in $T/per_cpu/cpu*/stats; do
			o=$(sed -n 's/^overrun: //p' "$f")
			over=$((over + ${o:-0}))
		done
		w=$(lbr_snap_cost wait /tmp/reader.out $fmt "$pid" $((RN - ${4:-0})) 300)
		wt=$(lbr_snap_cost wait /tmp/trace.out lines "$pid" $((RN - over)) 300)
		rcpu=$(($(cpu_ms $rpid) - rcpu0))
		tcpu=$(($(cpu_ms $tpid) - tcpu0))
		kill -INT $rpid
		wait $rpid
		kill $tpid
		wait $tpid 2>/dev/null
		t1=${w##*ns=}
		t1=${t1%% *}
		got=${w#WAIT records=}
		got=${got%% *}
		echo "READER reader=lbr-snap-$fmt produced=$RN read=$got dropped=$4 ns=$((t1 - t0)) storm_ns=$sns cpu_ms=$rcpu"
		t1=${wt##*ns=}
		t1=${t1%% *}
		got=${wt#WAIT records=}
		got=${got%% *}
		# The JSON storm's keeps the name it always had.
		name=trace_pipe
		[ $fmt = json ] || name=trace_pipe-$fmt
		echo "READER reader=$name produced=$RN read=$got dropped=$over ns=$((t1 - t0)) storm_ns=$sns cpu_ms=$tcpu"
		ftrace_off
		rmmod lbr_snap || exit 1
	done
}

case ${LBR_BENCH_PART:-cost} in
cost) cost ;;
reader) reader ;;
read) read_cost ;;
*) echo "LBR_BENCH_PART=$LBR_BENCH_PART: cost, reader or read" >&2; exit 1 ;;
esac
