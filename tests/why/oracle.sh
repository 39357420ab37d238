#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the test guest: the origin of each of why_fail's failing system calls,
# found twice, by the kernel's own tracing (the oracle) and by lbr-snap why,
# printed for tests/why/check-oracle.py to compare on the host.
#
# The oracle knows nothing of lbr_snap:
#   1. the function_graph tracer, set_graph_function on the scenario's
#      system call and set_ftrace_pid on why_fail, with tracing_on raised
#      around the failing call only (why_fail -t), lists the functions the
#      call ran;
#   2. a kretprobe event with $retval on each of them, every scenario run
#      again with set_event_pid: the first to return the scenario's errno
#      is the deepest, and the origin.
# Then lbr_snap is loaded and `lbr-snap why --json -- why_fail ALL` runs
# the scenarios once more, in one process.
#
# Prints "@@ORACLE NAME CALL ERRNO FUNC" per scenario (FUNC "-" when no
# probed function returned the errno), "@@PROBES N of M", the why run's
# JSON between "@@JSON why" and "@@END", its stderr as "# " lines, and
# "@@KERNEL KVER".  Exits 0 unless a step could not run.
T=/sys/kernel/tracing
[ -f $T/trace ] || mount -t tracefs nodev $T 2>/dev/null
[ -f $T/trace ] || T=/sys/kernel/debug/tracing
W=/tmp/oracle
mkdir -p $W
rm -f $W/*
modprobe msr 2>/dev/null

echo "@@KERNEL $(uname -r)"
why_fail -l >$W/list || { echo "oracle: why_fail -l failed"; exit 1; }

# Write $1 to tracefs's $2, saying so when it is refused.
w() {
	echo "$1" 2>/dev/null >"$T/$2" || echo "# oracle: $2 refused '$1'"
}

# Run scenario $1 under the tracer set up: set $2 (set_ftrace_pid or
# set_event_pid) to the pid that then execs why_fail.
traced() {
	echo >$T/trace
	sh -c "echo \$\$ >$T/$2 && exec why_fail -t $T/tracing_on $1" \
		>/dev/null 2>&1
	echo >"$T/$2"
}

w 0 tracing_on
w nop current_tracer
w 0 options/funcgraph-irqs
w 1 options/function-fork
w 1 options/event-fork
w global trace_clock
# The tracer stays on (switching it patches every function, and clears the
# buffer); set_graph_function changes from one scenario to the next, the
# first's before the tracer starts.
w "__x64_sys_$(awk 'NR == 1 { print $2 }' $W/list)" set_graph_function
w function_graph current_tracer
i=0
while read -r name call err num; do
	echo "__x64_sys_$call" >$T/set_graph_function ||
		{ echo "oracle: no __x64_sys_$call to graph"; exit 1; }
	traced "$name" set_ftrace_pid
	grep -o '[A-Za-z_][A-Za-z0-9_.]*()' $T/trace | sed 's/()$//' |
		sort -u >$W/graph.$i
	[ -s $W/graph.$i ] || { echo "# $name: the graph is empty:"; head -n 20 $T/trace | sed 's/^/# /'; }
	i=$((i + 1))
done <$W/list
w nop current_tracer
w '' set_graph_function

# One kretprobe event per function any scenario ran; those kprobes refuse
# (their blacklist, notrace) are left out and counted.
sort -u $W/graph.* >$W/funcs
n=0 m=0
while read -r f; do
	m=$((m + 1))
	if echo "r64:wfo/p$m $f ret=\$retval:s64" >>$T/kprobe_events 2>/dev/null
	then
		echo "p$m $f" >>$W/probes
		n=$((n + 1))
	fi
done <$W/funcs
echo "@@PROBES $n of $m"
echo 1 >$T/events/wfo/enable || { echo "oracle: cannot enable the probes"; exit 1; }
i=0
while read -r name call err num; do
	traced "$name" set_event_pid
	# The first return of -errno, as a long or as an int.
	p=$(awk -v e="$num" '{
		for (k = 1; k < NF; k++)
			if ($k ~ /^p[0-9]+:$/) {
				r = $NF; sub(/^ret=/, "", r)
				if (r == -e || r == 4294967296 - e) {
					sub(/:$/, "", $k); print $k; exit
				}
			}
	}' $T/trace)
	f=-
	[ -z "$p" ] || f=$(awk -v p="$p" '$1 == p { print $2 }' $W/probes)
	echo "@@ORACLE $name $call $err ${f:--}"
	i=$((i + 1))
done <$W/list
w 0 events/wfo/enable
w '' kprobe_events
w '' trace

# lbr_snap's answer, all scenarios in one run.
t0=$(date +%s)
# shellcheck disable=SC2046
lbr-snap why --json -- why_fail $(cut -d' ' -f1 $W/list) >$W/why.json \
	2>$W/why.err
rc=$?
echo "# lbr-snap why: exit $rc in $(($(date +%s) - t0)) s"
sed 's/^/# /' $W/why.err | grep -v '^# lbr-snap:   ' | head -n 40
echo "@@JSON why"
cat $W/why.json
echo "@@END"

# A flood (LBR_WHY_FLOOD=1): 20,000 failing open()s of one kind
# (fs/namei.c's functions hooked).  why keeps the first 8 and counts the
# others; what the module dropped, it says.
[ "${LBR_WHY_FLOOD:-0}" = 1 ] || exit 0
t0=$(date +%s)
lbr-snap why --json -a ':fs/namei.c' -- why_fail -n 20000 no-such-file \
	>$W/flood.json 2>$W/flood.err
echo "# flood: exit $? in $(($(date +%s) - t0)) s"
echo "@@FLOOD"
sed 's/,"record".*/}/' $W/flood.json
grep '^lbr-snap: \(why:\|[0-9]* records dropped\)' $W/flood.err
echo "@@END"
exit 0
