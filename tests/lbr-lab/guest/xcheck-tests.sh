#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of proof (b): LBR windows over kernel code that the host
# compares with QEMU's own execution trace.  The host answers each
# LBRLAB-XCHECK-READY / -DONE line with a line on the console.
cd "$(dirname "$0")" || exit 1
if [ ! -e /dev/cpu/0/msr ]; then
	modprobe msr allow_writes=on 2>/dev/null ||
		insmod "/lib/modules/$(uname -r)/kernel/arch/x86/kernel/msr.ko" \
			allow_writes=on
fi
[ -e /dev/cpu/0/msr ] || { echo "not ok - /dev/cpu/0/msr missing"; exit 1; }
stty -echo 2>/dev/null
./lbrtest xcheck all calls far
