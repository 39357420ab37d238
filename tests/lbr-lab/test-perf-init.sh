#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Proof (c): boot the stock Debian guest kernel on both lab CPU models
# with "enforce" (QEMU refuses to start if the model asks for a feature
# TCG lacks), and report what the kernel's perf init says.  Without
# pmu=on (the default) there is no architectural PMU (CPUID leaf 0xA is
# 0), so perf registers no hardware PMU and cannot use the LBR; the test
# checks exactly that, that the LBR CPUID bits are visible to the kernel,
# and that its kernel log passes the kernel-log gate (no WARNING, BUG,
# Oops...).  With pmu=on (the lab PMU, patch 0005) the same kernel must
# register its Intel PMU driver with full-width counters and the 32-deep
# LBR, with no "PMU not available due to virtualization" and no "no PMU
# driver", and start its NMI watchdog on a PMU counter.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

lab_guest_setup
"$LAB/boot/mkinitramfs.sh" "$work/initrd.gz" "$LAB_KVER" \
	"$LAB/guest/perf-init.sh" "$work/lbrtest" || lab_die "initramfs"

for cpu in "$LAB_CPU_LEGACY" "$LAB_CPU_ARCH" \
	   "$LAB_CPU_LEGACY,pmu=on" "$LAB_CPU_ARCH,pmu=on"; do
	log=$work/$cpu.log err=$work/$cpu.err
	"$LAB/boot/run-guest.sh" "$LAB_QEMU" "$cpu,enforce" "$LAB_KERNEL" \
		"$work/initrd.gz" perf-init.sh </dev/null >"$log" 2>"$err"
	! grep -qi 'warning\|support' "$err"
	tap_check $? "$cpu,enforce: QEMU starts with no unsupported-feature warning"
	sed 's/^/#   qemu: /' "$err"
	grep -q '^PERFINIT-END' "$log"
	tap_check $? "$cpu: stock $LAB_KVER kernel boots to user space"
	lab_klog_check "$log" "$cpu"
	tr -d '\r' < "$log" | sed -n 's/^DMESG /#   dmesg: /p'
	tr -d '\r' < "$log" | grep -E '^(CPUFLAGS|MODEL|EVENT_SOURCES|INFO) ' | sed 's/^/#   /'
	perf=$(tr -d '\r' < "$log" | sed -n 's/^DMESG .*\(Performance Events: .*\)/\1/p' | head -n1)
	[ -n "$perf" ]
	tap_check $? "$cpu: perf init reports: ${perf:-(no Performance Events line)}"
	flags=$(tr -d '\r' < "$log" | sed -n 's/^CPUFLAGS //p')
	if [ "${cpu%,pmu=on}" = "$LAB_CPU_ARCH" ]; then want=arch_lbr; else want=pdcm; fi
	case " $flags " in *" $want "*) r=0 ;; *) r=1 ;; esac
	tap_check $r "$cpu: the kernel sees CPUID flag $want (flags: $flags)"
	src=$(tr -d '\r' < "$log" | sed -n 's/^EVENT_SOURCES //p')
	dm=$(tr -d '\r' < "$log" | grep '^DMESG ')
	case "$cpu" in *,pmu=on)
		# The lab PMU: Intel PMU driver, full-width counters, LBR
		if [ "${cpu%,pmu=on}" = "$LAB_CPU_ARCH" ]; then
			want='Architectural LBR, Sapphire Rapids events, 32-deep LBR, full-width counters, Intel PMU driver.'
		else
			want='Skylake events, 32-deep LBR, full-width counters, Intel PMU driver.'
		fi
		[ "$perf" = "Performance Events: $want" ]
		tap_check $? "$cpu: perf registers the Intel PMU driver: Performance Events: $want"
		! grep -q 'PMU not available due to virtualization\|no PMU driver' <<<"$dm"
		tap_check $? "$cpu: no \"PMU not available due to virtualization\", no \"no PMU driver\" (check_hw_exists() passed)"
		case " $flags " in *" arch_perfmon "*) r=0 ;; *) r=1 ;; esac
		tap_check $r "$cpu: the kernel sees CPUID flag arch_perfmon"
		case " $src " in *" cpu "*) r=0 ;; *) r=1 ;; esac
		tap_check $r "$cpu: the \"cpu\" hardware PMU is registered (event sources: $src)"
		grep -q 'NMI watchdog: Enabled. Permanently consumes one hw-PMU counter.' <<<"$dm"
		tap_check $? "$cpu: the NMI watchdog runs on a PMU counter"
		continue
	esac
	# No architectural PMU under TCG: no "cpu" event source, no LBR in perf
	case " $src " in *" cpu "*) r=1 ;; *) r=0 ;; esac
	tap_check $r "$cpu: no hardware PMU registered (CPUID 0xA is 0 under TCG), so perf cannot use the LBR (event sources: $src)"
	! tr -d '\r' < "$log" | grep '^DMESG ' | grep -v 'LBR lab' | grep -q 'LBR'
	tap_check $? "$cpu: perf init prints no LBR line (it never reaches its LBR setup)"
done
tap_done
