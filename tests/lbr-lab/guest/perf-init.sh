#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of proof (c): what the stock kernel made of the lab CPU.
cd "$(dirname "$0")" || exit 1
echo "PERFINIT-BEGIN"
dmesg | grep -iE 'Performance Events|perf|pmu|lbr' | grep -iv 'command line' |
	sed 's/^/DMESG /'
echo "CPUFLAGS $(grep -m1 '^flags' /proc/cpuinfo | grep -owE 'pdcm|arch_lbr|arch_perfmon' | tr '\n' ' ')"
echo "MODEL $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2-)"
echo "EVENT_SOURCES $(ls /sys/bus/event_source/devices 2>/dev/null | tr '\n' ' ')"
if [ ! -e /dev/cpu/0/msr ]; then
	modprobe msr 2>/dev/null ||
		insmod "/lib/modules/$(uname -r)/kernel/arch/x86/kernel/msr.ko"
fi
./lbrtest info
echo "PERFINIT-END"
