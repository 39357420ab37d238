#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Proof (d): the lab PMU (patches 0005 and 0006) on both Intel lab CPUs with
# pmu=on and on the legacy one with perfmon version 3
# (lbr-lab-pmu-version=3), and the lab's AMD PMU (patch 0008, PerfMonV2) on
# EPYC-Genoa-LBR,pmu=on.  The stock kernel registers its Intel or AMD PMU
# driver with the LBR; perf counts a known loop exactly (instructions and
# branches, user-only and kernel-only), RDPMC reads the counter, perf
# samples the loop at the expected rate, its branch stacks hold the loop's
# back-edge, and FREEZE_LBRS_ON_PMI freezes the LBR at the MSR level until
# LBR_FRZ (AMD: LBRSF) is cleared.  The TCG ops of the loop show that
# only TBs translated while a counter counts call the counting helper.
# Guest side: guest/pmu-test.sh + guest/lbrtest pmu, booted with
# nmi_watchdog=0 so that no counter runs unless a check enables one.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

lab_guest_setup
"$LAB/boot/mkinitramfs.sh" "$work/initrd.gz" "$LAB_KVER" \
	"$LAB/guest/pmu-test.sh" "$work/lbrtest" || lab_die "initramfs"

loop=$(nm "$work/lbrtest" | awk '/ pmu_loop$/ {print $1}')
loop_end=$(nm "$work/lbrtest" | awk '/ pmu_loop_end$/ {print $1}')

# The legacy CPU twice: version 4 (streamlined freeze) and version 3
# (legacy freeze: a PMI clears DEBUGCTL.LBR, perf sets it again as its PMI
# handler returns, the case lbr_snap re-checks after its read).
# LBR_LAB_PMU_CPUS (a space-separated list of -cpu strings) runs only those.
cpus=("$LAB_CPU_LEGACY,pmu=on" "$LAB_CPU_LEGACY,pmu=on,lbr-lab-pmu-version=3"
      "$LAB_CPU_ARCH,pmu=on" "$LAB_CPU_AMD,pmu=on")
[ -n "${LBR_LAB_PMU_CPUS:-}" ] && read -r -a cpus <<<"$LBR_LAB_PMU_CPUS"
for cpu in "${cpus[@]}"; do
	log=$work/$cpu.log
	start=$(date +%s)
	APPEND=nmi_watchdog=0 "$LAB/boot/run-guest.sh" "$LAB_QEMU" "$cpu" \
		"$LAB_KERNEL" "$work/initrd.gz" pmu-test.sh -d op \
		-D "$work/$cpu.op" -dfilter "0x$loop..0x$loop_end" \
		</dev/null >"$log" 2>&1
	echo "# $cpu: guest ran in $(( $(date +%s) - start ))s"
	if ! grep -q '^LBRLAB-EXIT' "$log"; then
		tap_fail "$cpu: guest did not finish"
		tail -n 30 "$log" | sed 's/^/#   /'
		continue
	fi
	perf=$(tr -d '\r' < "$log" | sed -n 's/^DMESG .*\(Performance Events: .*\)/\1/p' | head -n1)
	echo "#   dmesg: $perf"
	# AMD: amd_core_pmu_init() prints "Fam17h+ ", amd_pmu_lbr_init()
	# "16-deep LBR, ", then "core perfctr, " (arch/x86/events/amd/core.c,
	# amd/lbr.c), and x86_pmu.version is 2 with PerfMonV2.
	case "$cpu" in
	"$LAB_CPU_ARCH"*) want='Architectural LBR, Sapphire Rapids events, 32-deep LBR, full-width counters, Intel PMU driver' vendor=Intel ;;
	"$LAB_CPU_AMD"*) want='Performance Events: Fam17h+ 16-deep LBR, core perfctr, AMD PMU driver.' vendor=AMD ;;
	*) want='Skylake events, 32-deep LBR, full-width counters, Intel PMU driver' vendor=Intel ;;
	esac
	case "$perf" in *"$want"*) r=0 ;; *) r=1 ;; esac
	tap_check $r "$cpu: perf registers the $vendor PMU driver with its LBR ($want)"
	v=$(tr -d '\r' < "$log" | sed -n 's/^DMESG .*\.\.\. version: *\([0-9]*\)$/\1/p' | head -n1)
	case "$cpu" in
	*lbr-lab-pmu-version=3*) wantv=3 what="architectural perfmon version" ;;
	"$LAB_CPU_AMD"*) wantv=2 what="PMU version (PerfMonV2)" ;;
	*) wantv=4 what="architectural perfmon version" ;;
	esac
	[ "$v" = "$wantv" ]
	tap_check $? "$cpu: perf reports $what $wantv (dmesg: '${v:-none}')"
	lab_guest_tap "$log" "$cpu" PMU-BENCH INFO
	grep -q '^LBRLAB-EXIT 0' "$log"
	tap_check $? "$cpu: guest lbrtest pmu exit status 0"
	lab_klog_check "$log" "$cpu"
	# pmu_loop ran with no counter and with counters: its TBs were
	# translated both ways, and only the counting ones call the helper.
	with=$(awk '/^OP:/ {if (n) c += h; n = 1; h = 0} /call pmu_tb/ {h = 1}
		END {if (n) c += h; print c + 0}' "$work/$cpu.op")
	all=$(grep -c '^OP:' "$work/$cpu.op")
	[ "$with" -gt 0 ] && [ $((all - with)) -gt 0 ]
	tap_check $? "$cpu: zero cost while no counter counts: of $all TBs translated from pmu_loop, $((all - with)) contain no PMU code, $with call helper_pmu_tb"
done
tap_done
