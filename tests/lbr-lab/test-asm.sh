#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Proof (a): hand-written user-space branch sequences with known
# addresses, recorded by the lab's legacy, arch and AMD LbrExtV2 LBR in a
# guest and compared exactly (from, to, and LBR_INFO by the lab's rule:
# cycle count, mispredict, and for arch LBR CYC_CNT_VALID and branch
# type; on AMD mispredict, FROM's bit 63, and TO's valid bit), plus the
# CPL and branch-kind filters; each guest's kernel log must pass the
# kernel-log gate.  Guest side: guest/asm-tests.sh + guest/lbrtest.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

lab_guest_setup
"$LAB/boot/mkinitramfs.sh" "$work/initrd.gz" "$LAB_KVER" \
	"$LAB/guest/asm-tests.sh" "$work/lbrtest" || lab_die "initramfs"

# TCG ops of lbr_seq's translation blocks, to show the per-TB flag at work
seq=$(nm "$work/lbrtest" | awk '/ lbr_seq$/ {print $1}')
seq_end=$(nm "$work/lbrtest" | awk '/ lbr_chain$/ {print $1}')

for cpu in "$LAB_CPU_LEGACY" "$LAB_CPU_ARCH" "$LAB_CPU_AMD"; do
	log=$work/$cpu.log
	start=$(date +%s)
	"$LAB/boot/run-guest.sh" "$LAB_QEMU" "$cpu" "$LAB_KERNEL" \
		"$work/initrd.gz" asm-tests.sh -d op -D "$work/$cpu.op" \
		-dfilter "0x$seq..0x$seq_end" </dev/null >"$log" 2>&1
	echo "# $cpu: guest ran in $(( $(date +%s) - start ))s"
	if ! grep -q '^LBRLAB-EXIT' "$log"; then
		tap_fail "$cpu: guest did not finish"
		tail -n 30 "$log" | sed 's/^/#   /'
		continue
	fi
	lab_guest_tap "$log" "$cpu"
	grep -q '^LBRLAB-EXIT 0' "$log"
	tap_check $? "$cpu: guest lbrtest exit status 0"
	lab_klog_check "$log" "$cpu"
	# lbr_seq ran both with LBR off and on: its TBs were translated both
	# ways, and only the LBR-on translations call the helper.
	with=$(awk '/^OP:/ {if (n) c += h; n = 1; h = 0} /call lbr_branch/ {h = 1}
		END {if (n) c += h; print c + 0}' "$work/$cpu.op")
	all=$(grep -c '^OP:' "$work/$cpu.op")
	[ "$with" -gt 0 ] && [ $((all - with)) -gt 0 ]
	tap_check $? "$cpu: zero cost while off: of $all TBs translated from lbr_seq, $((all - with)) (LBR off) contain no LBR code, $with (LBR on) call helper_lbr_branch"
done
tap_done
