#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of the lab XSAVES proof (test-xsaves.sh): what the kernel
# made of XSAVES and the Arch LBR state component, every process's FPU
# state across context switches and signals while the kernel saves it
# with XSAVES, then lbrtest's PMU checks (perf reads the LBR with XSAVES
# there) and the FPU state again.  Booted with nmi_watchdog=0.
cd "$(dirname "$0")" || exit 1
dmesg | grep -E 'x86/fpu|Performance Events' | sed 's/^/DMESG /'
# The control boot (the same CPU without lbr-lab-xsaves): the kernel's
# view only.
[ -z "$XSAVES_CONTROL" ] || exit 0
if [ ! -e /dev/cpu/0/msr ]; then
	modprobe msr allow_writes=on 2>/dev/null ||
		insmod "/lib/modules/$(uname -r)/kernel/arch/x86/kernel/msr.ko" \
			allow_writes=on
fi
rc=0
./fputest xsavec || rc=1
./fputest xsaves-user || rc=1
./fputest switch 4 1500 || rc=1
./fputest signal 200 || rc=1
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
./lbrtest pmu || rc=1
./fputest switch 4 300 || rc=1
exit $rc
