# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# The device: missing, unreadable, another driver's, a regular file; then
# info, stats, flush, the ABI check and ioctl errors through fake-ioctl.c.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

want nodev.err "lbr-snap: nodev not found: is the lbr_snap module loaded? (modprobe lbr_snap targets=...)"
t "missing device: exit 3, module hint" 3 /dev/null nodev.err \
	"$LBR" -d nodev

want perm.err "lbr-snap: secret.bin: permission denied: reading needs CAP_PERFMON (or root) and read permission on the device; flush and targets need CAP_SYS_ADMIN"
unreadable()
{
	cp stream.bin secret.bin
	if [ "$(id -u)" = 0 ]; then
		chmod 600 secret.bin
		chmod 755 .
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$LBR" -d secret.bin
	else
		chmod 000 secret.bin
		"$LBR" -d secret.bin
	fi
}
t "permission denied: exit 4, needs root" 4 /dev/null perm.err unreadable

want null.err "lbr-snap: /dev/null: not an lbr_snap device, or its module speaks another ABI version"
t "character device without our ioctls: exit 5" 5 /dev/null null.err \
	"$LBR" -d /dev/null

want notdev.err "lbr-snap: stream.bin: not an lbr_snap device"
t "info on a regular file: exit 1" 1 /dev/null notdev.err \
	"$LBR" -d stream.bin info

# ------------------------------------------ ioctls, through fake-ioctl.c

t "info" 0 "$EXP/info.txt" /dev/null "$FAKE" -d stream.bin info
t "info --json" 0 "$EXP/info.json" /dev/null "$FAKE" -d stream.bin info --json
check "info --json has the documented keys" \
	python3 "$HERE/check-json.py" info out.txt
# A KVM host with Arch LBR: its guests' branches may be in the records.
mkdir -p kvmroot/sys/module/kvm_intel nokvmroot
kvm_lines()	# $1 = the root, then env's assignments
{
	local root=$PWD/$1

	shift
	env LBR_SNAP_ROOT="$root" "$@" "$FAKE" -d stream.bin info |
		grep '^kvm_host:\|^in_guest:' | cut -c1-40
	env LBR_SNAP_ROOT="$root" "$@" "$FAKE" -d stream.bin info --json |
		grep -o '"kvm_host":[^}]*'
}
want kvm-arch.out "in_guest: in mode=raw each capture reads" \
	"kvm_host: kvm_intel is present and KVM l" '"kvm_host":"kvm_intel"'
t "info: a KVM host with Arch LBR says guest branches may show" 0 \
	kvm-arch.out - kvm_lines kvmroot FAKE_LBR_ARCH=1
want kvm-none.out "in_guest: in mode=raw each capture reads" '"kvm_host":null'
t "info: Arch LBR without KVM: no kvm_host" 0 \
	kvm-none.out - kvm_lines nokvmroot FAKE_LBR_ARCH=1
t "info: legacy LBR on a KVM host: no kvm_host" 0 \
	kvm-none.out - kvm_lines kvmroot
t "info from a module before cpu_types (first GET_INFO size)" 0 \
	"$EXP/info-old.txt" /dev/null env FAKE_LBR_OLD_INFO=1 "$FAKE" -d stream.bin info
t "stats" 0 "$EXP/stats.txt" /dev/null "$FAKE" -d stream.bin stats
want stats-filtered.out \
	"hint: kmalloc_trace: all 7 returns filtered (as success, or by an errno list or the task filter): is its return type (ptr) right? see \`lbr-snap spec kmalloc_trace\`" \
	"hint: ext4_file_open has had no hits: is it called, and not inlined into its callers?" \
	"hint: nfs_open is gone: its module was unloaded, and the hook with it; add it again once the module is back (lbr-snap add), or delete it"
stats_hints()
{
	FAKE_LBR_ALL_FILTERED=1 "$FAKE" -d stream.bin stats | grep '^hint'
}
t "stats: hints for no hits, for returns all filtered, for a gone target" 0 \
	stats-filtered.out - stats_hints
t "stats --json" 0 "$EXP/stats.json" /dev/null "$FAKE" --json -d stream.bin stats
check "stats --json has the documented keys" \
	python3 "$HERE/check-json.py" stats out.txt

want flush.err "fake: FLUSH"
t "flush calls LBR_SNAP_IOC_FLUSH" 0 /dev/null flush.err \
	"$FAKE" -d stream.bin flush

t "streaming passes the GET_INFO check on a device" 0 "$EXP/stream.txt" \
	"$EXP/stream.err" "$FAKE" -d stream.bin "${KS[@]}"

want abi.err "lbr-snap: stream.bin: module ABI version 2, but this tool speaks version 1: use the lbr-snap built with the module"
t "ABI version mismatch refuses to stream: exit 5" 5 /dev/null abi.err \
	env FAKE_LBR_ABI=2 "$FAKE" -d stream.bin "${KS[@]}"
t "ABI version mismatch refuses info: exit 5" 5 /dev/null abi.err \
	env FAKE_LBR_ABI=2 "$FAKE" -d stream.bin info

want eperm.err "lbr-snap: stream.bin: GET_INFO: Operation not permitted: needs root (CAP_SYS_ADMIN)"
t "ioctl EPERM: exit 4" 4 /dev/null eperm.err \
	env FAKE_LBR_ERRNO=1 "$FAKE" -d stream.bin stats
want eio.err "lbr-snap: stream.bin: GET_INFO: Input/output error"
t "ioctl EIO: exit 1" 1 /dev/null eio.err \
	env FAKE_LBR_ERRNO=5 "$FAKE" -d stream.bin info
