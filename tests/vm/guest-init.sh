#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /init of the test guest: set up, run /script.sh as root, check the kernel
# log, print the verdict on the console and power off.
/bin/busybox --install -s /bin
export PATH=/usr/local/bin:/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
hostname lbr-guest
cd /root

echo "lbr_snap guest: $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
# The debug kernel has kmemleak: forget what boot left, scan at the end.
kml=/sys/kernel/debug/kmemleak
[ -w $kml ] && echo clear >$kml
sh /script.sh
rc=$?
if [ -w $kml ]; then
	# Only objects older than 5 s are reported: scan, wait, scan again.
	echo scan >$kml
	sleep 6
	echo scan >$kml
	leaks=$(cat $kml)
	if [ -n "$leaks" ]; then
		echo "lbr_snap guest: kmemleak reports leaks:"
		echo "$leaks" | head -n 60
		[ "$rc" = 0 ] && rc=98
	else
		echo "lbr_snap guest: kmemleak: no leaks"
	fi
fi

# Any kernel complaint fails the run, whatever the script said
# (/bin/kernel-log-gate: tests/vm/kernel-log-gate.sh).
if ! bad=$(dmesg | kernel-log-gate); then
	echo "lbr_snap guest: the kernel log reports problems:"
	echo "$bad" | head -n 20
	first=$(echo "$bad" | head -n1 | sed 's/^\[[^]]*\] //')
	echo "lbr_snap guest: the log from the first report on:"
	dmesg | grep -F -A 150 -- "$first" | head -n 150
	[ "$rc" = 0 ] && rc=99
fi
echo "LBR_SNAP_VM_EXIT=$rc"
sync
poweroff -f
