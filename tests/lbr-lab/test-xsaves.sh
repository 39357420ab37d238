#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Proof (e): XSAVES and the Arch LBR state component (patches 0009 and
# 0010), opt-in with lbr-lab-xsaves=on on the Arch LBR CPU with the lab
# PMU.  The stock kernel switches to the compacted XSAVE format and
# perf to reading the LBR with XSAVES ("XSAVE Architectural LBR");
# every process keeps its x87/SSE/AVX state across context switches and
# signals while the kernel saves it with XSAVES (guest/fputest.c), the
# user-mode XSAVEC layout is the SDM's, XSAVES faults at CPL 3, and
# lbrtest's PMU checks pass with perf's branch stacks read by XSAVES.
# A control boot of the same CPU without the property shows neither
# line, so the property is what turns them on.
# Guest side: guest/xsaves-test.sh, booted with nmi_watchdog=0.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

lab_guest_setup
gcc -static -O2 -Wall -o "$work/fputest" "$LAB/guest/fputest.c" ||
	lab_die "cannot build fputest (gcc -static, libc6-dev)"
"$LAB/boot/mkinitramfs.sh" "$work/initrd.gz" "$LAB_KVER" \
	"$LAB/guest/xsaves-test.sh" "$work/lbrtest" "$work/fputest" ||
	lab_die "initramfs"

# dmesg_has LOG TEXT: the guest's dmesg holds TEXT
dmesg_has() {
	tr -d '\r' < "$1" | grep '^DMESG ' | grep -qF -- "$2"
}
fpu='x86/fpu: Enabled xstate features 0x7, context size is 832 bytes, using '\''compacted'\'' format.'
perf='Performance Events: XSAVE Architectural LBR, Sapphire Rapids events, 32-deep LBR, full-width counters, Intel PMU driver.'

cpu="$LAB_CPU_ARCH,pmu=on,lbr-lab-xsaves=on"
log=$work/xsaves.log
start=$(date +%s)
APPEND=nmi_watchdog=0 "$LAB/boot/run-guest.sh" "$LAB_QEMU" "$cpu" \
	"$LAB_KERNEL" "$work/initrd.gz" xsaves-test.sh </dev/null >"$log" 2>&1
echo "# $cpu: guest ran in $(( $(date +%s) - start ))s"
tr -d '\r' < "$log" | sed -n 's/^DMESG /#   dmesg: /p'
dmesg_has "$log" "$fpu"
tap_check $? "$cpu: the kernel saves state with XSAVES, compacted ($fpu)"
dmesg_has "$log" "$perf"
tap_check $? "$cpu: perf reads Arch LBR with XSAVES ($perf)"
lab_guest_tap "$log" "$cpu"
grep -q '^LBRLAB-EXIT 0' "$log"
tap_check $? "$cpu: guest xsaves-test.sh exit status 0"
lab_klog_check "$log" "$cpu"

cpu="$LAB_CPU_ARCH,pmu=on"
log=$work/control.log
APPEND="nmi_watchdog=0 XSAVES_CONTROL=1" "$LAB/boot/run-guest.sh" \
	"$LAB_QEMU" "$cpu" "$LAB_KERNEL" "$work/initrd.gz" xsaves-test.sh \
	</dev/null >"$log" 2>&1
tr -d '\r' < "$log" | sed -n 's/^DMESG /#   control dmesg: /p'
if grep -q '^LBRLAB-EXIT 0' "$log" && dmesg_has "$log" 'Performance Events: ' &&
   ! dmesg_has "$log" "compacted" && ! dmesg_has "$log" "XSAVE Architectural LBR"; then
	tap_ok "$cpu (control, no lbr-lab-xsaves): standard format, Arch LBR read by MSRs"
else
	tap_fail "$cpu (control, no lbr-lab-xsaves): standard format, Arch LBR read by MSRs"
	tail -n 10 "$log" | tr -d '\r' | sed 's/^/#   /'
fi
lab_klog_check "$log" "$cpu (control)"
tap_done
