#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of make bench's "why cost" line (tests/bench/why.sh): boot
# with -smp 1 under QEMU's -icount shift=0 (a nanosecond of guest time is
# one guest instruction).  Guest time per open() of an existing file (a
# success) and of a missing one (an error), 2000 a run, median of 3, with
# nothing attached, then while `lbr-snap why -- sleep` watches another
# task with its default entry and allowed sets (the open()s' task is not
# followed: it pays the hooks' and the filter's price only); the MSR
# accesses per open() with them (the lab's counter).  One line each:
#   WHYCOST what=<base|why>-<hit|miss> runs=A,B,C median=M [msr=X]
# and "WHYCOST_BAD why=..." if why did not attach or left something.
modprobe msr 2>/dev/null
touch /tmp/hit
run() {	# $1 = what
	for f in hit miss; do
		p=/tmp/$f
		[ $f = miss ] && p=/no/such/file
		lbr_snap_cost opens $p 2000 3 | sed "s/^OPENS /WHYCOST what=$1-$f /"
	done
}
run base
lbr-snap why -- sleep 100000 2>/tmp/why.err &
why=$!
i=0
while ! grep -q 'running sleep' /tmp/why.err; do
	i=$((i + 1))
	if [ $i -gt 1800 ] || ! kill -0 $why 2>/dev/null; then
		echo "WHYCOST_BAD why=why did not attach"
		grep -v '^lbr-snap:   ' /tmp/why.err | head -n 20
		exit 1
	fi
	sleep 1
done
grep '^lbr-snap: loaded\|^lbr-snap: attached\|not attached' /tmp/why.err |
	cut -c1-300 | sed 's/^/# /'
run why
kill -INT $why
wait $why
echo "# why exited $?"
if [ -n "$(cat /sys/kernel/debug/tracing/enabled_functions 2>/dev/null)" ] ||
   grep -q '^lbr_snap ' /proc/modules; then
	echo "WHYCOST_BAD why=something left attached after ^C"
fi
exit 0
