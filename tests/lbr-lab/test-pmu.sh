#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Proof (d): the lab PMU (patches 0005 and 0006) on both lab CPUs with pmu=on
# and on the legacy one with perfmon version 3 (lbr-lab-pmu-version=3).  The
# stock kernel registers its Intel PMU driver with the LBR; perf counts
# a known loop exactly (instructions and branches, user-only and
# kernel-only), samples it at the expected rate, its branch stacks hold
# the loop's back-edge, and FREEZE_LBRS_ON_PMI freezes the LBR at the
# MSR level until LBR_FRZ is cleared.  The TCG ops of the loop show that
# only TBs translated while a counter counts call the counting helper.
# Guest side: guest/pmu-test.sh + guest/lbrtest pmu, booted with
# nmi_watchdog=0 so that no counter runs unless a check enables one.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if ! lab_kernel; then
	tap_fail "the guest kernel and its msr.ko (tests/vm/guest-kernel.sh)"
	tap_done; exit 1
fi
lab_qemu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lab_lbrtest "$work/lbrtest"
"$LAB/boot/mkinitramfs.sh" "$work/initrd.gz" "$LAB_KVER" \
	"$LAB/guest/pmu-test.sh" "$work/lbrtest" || lab_die "initramfs"

loop=$(nm "$work/lbrtest" | awk '/ pmu_loop$/ {print $1}')
loop_end=$(nm "$work/lbrtest" | awk '/ pmu_loop_end$/ {print $1}')

# The legacy CPU twice: version 4 (streamlined freeze) and version 3
# (legacy freeze: a PMI clears DEBUGCTL.LBR, perf sets it again as its PMI
# handler returns, the case lbr_snap re-checks after its read).
for cpu in "$LAB_CPU_LEGACY,pmu=on" "$LAB_CPU_LEGACY,pmu=on,lbr-lab-pmu-version=3" \
	   "$LAB_CPU_ARCH,pmu=on"; do
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
	case "$cpu" in
	"$LAB_CPU_ARCH"*) want='Architectural LBR, Sapphire Rapids events, 32-deep LBR, full-width counters, Intel PMU driver' ;;
	*) want='Skylake events, 32-deep LBR, full-width counters, Intel PMU driver' ;;
	esac
	case "$perf" in *"$want"*) r=0 ;; *) r=1 ;; esac
	tap_check $r "$cpu: perf registers the Intel PMU driver with its LBR ($want)"
	v=$(tr -d '\r' < "$log" | sed -n 's/^DMESG .*\.\.\. version: *\([0-9]*\)$/\1/p' | head -n1)
	case "$cpu" in *lbr-lab-pmu-version=3*) wantv=3 ;; *) wantv=4 ;; esac
	[ "$v" = "$wantv" ]
	tap_check $? "$cpu: perf reports architectural perfmon version $wantv (dmesg: '${v:-none}')"
	# Guest lines "ok - name" / "not ok - name" and "#" diagnostics
	while IFS= read -r line; do
		line=${line%$'\r'}
		case "$line" in
		"ok - "*) tap_ok "$cpu: ${line#ok - }" ;;
		"not ok - "*) tap_fail "$cpu: ${line#not ok - }" ;;
		"#"*|PMU-BENCH*|INFO*) echo "# ${line#\# }" ;;
		esac
	done < "$log"
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
