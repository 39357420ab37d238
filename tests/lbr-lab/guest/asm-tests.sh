#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of proof (a): run lbrtest's hand-written branch sequences.
# Needs root, msr.ko and the static lbrtest binary next to this script.
cd "$(dirname "$0")" || exit 1
if [ ! -e /dev/cpu/0/msr ]; then
	modprobe msr allow_writes=on 2>/dev/null ||
		insmod "/lib/modules/$(uname -r)/kernel/arch/x86/kernel/msr.ko" \
			allow_writes=on
fi
[ -e /dev/cpu/0/msr ] || { echo "not ok - /dev/cpu/0/msr missing"; exit 1; }
./lbrtest asm
