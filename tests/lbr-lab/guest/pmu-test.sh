#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of the lab PMU proof (test-pmu.sh): perf's view of the lab
# PMU, then lbrtest's counting, sampling, branch-stack and freeze checks
# and the cost measurement.  Booted with nmi_watchdog=0 so that no
# counter runs unless a check enables one.
cd "$(dirname "$0")" || exit 1
echo "PMUTEST-BEGIN"
dmesg | grep -E 'Performance Events|PMU|NMI watchdog|\.\.\. version:' | sed 's/^/DMESG /'
echo "EVENT_SOURCES $(ls /sys/bus/event_source/devices 2>/dev/null | tr '\n' ' ')"
if [ ! -e /dev/cpu/0/msr ]; then
	modprobe msr allow_writes=on 2>/dev/null ||
		insmod "/lib/modules/$(uname -r)/kernel/arch/x86/kernel/msr.ko" \
			allow_writes=on
fi
./lbrtest info
# TCG runs the PMI handler slowly in wall-clock time; keep perf from
# lowering its sample rate and throttling the sampling checks.
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
./lbrtest pmu
rc=$?
./lbrtest pmu-bench 5000000
echo "PMUTEST-END $rc"
exit $rc
