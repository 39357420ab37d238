#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make the test guest's initramfs: busybox, lbr_snap and the test target
# installed as modules of KVER (modprobe works), lbr-snap and the tests on
# PATH, and SCRIPT as /script.sh.
# Usage: tests/vm/mkinitramfs.sh KVER BUILD_DIR SCRIPT OUT.cpio.gz
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kver=$1 bin=$2 script=$3 out=$4
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

# mktemp made it 0700: the guest's / would be, and every user but root
# would get EACCES before any check of the device's own.
chmod 755 "$root"
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,root,usr/bin,usr/sbin} \
	 "$root/usr/local/bin" "$root/lib/modules/$kver/extra" \
	 "$root/usr/share/lbr_snap"
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$LBR_TOP/tests/vm/guest-init.sh" "$root/init"
install -m 755 "$LBR_TOP/tests/vm/kernel-log-gate.sh" "$root/bin/kernel-log-gate"
cp "$script" "$root/script.sh"
chmod 755 "$root/init"

mods=$root/lib/modules/$kver
kmods=$(lbr_kernel_root "$kver")/lib/modules/$kver
cp "$bin/lbr_snap.ko" "$bin/lbr_snap_fexit.ko" "$bin/lbr_snap_test_target.ko" \
	"$mods/extra/"
# msr.ko lets tests and the lab proofs read MSRs from user space.
# Staged uncompressed: busybox's modprobe may not read .ko.xz (7.x) or .zst.
msr=$(find "$kmods/kernel/arch/x86/kernel" -name 'msr.ko*' | head -n1)
mkdir -p "$mods/kernel/arch/x86/kernel"
case $msr in
'') ;;
*.xz) xz -dc "$msr" >"$mods/kernel/arch/x86/kernel/msr.ko" ;;
*.zst) zstd -qdc "$msr" >"$mods/kernel/arch/x86/kernel/msr.ko" ;;
*) install -m 644 "$msr" "$mods/kernel/arch/x86/kernel/msr.ko" ;;
esac
for f in modules.builtin modules.builtin.modinfo modules.order; do
	cp "$kmods/$f" "$mods/" 2>/dev/null || true
done
depmod -b "$root" "$kver"

for f in "$bin"/lbr-snap "$bin"/lbr_snap_*test "$bin"/lbr_snap_bpf_bench \
	 "$bin"/lbr_snap_attach_bench \
	 "$bin"/lbr_snap_cost "$bin"/why_fail; do
	[ -f "$f" ] && cp "$f" "$root/usr/local/bin/"
done
cp -r "$LBR_TOP/tests/guest/." "$root/usr/share/lbr_snap/" 2>/dev/null || true
cp -r "$LBR_TOP/dist" "$root/usr/share/lbr_snap/dist"
cp "$bin/lbr_snap_test_target.ko" "$bin/lbr_snap.ko" "$bin/lbr_snap_fexit.ko" \
	"$root/usr/share/lbr_snap/"

cat >"$root/etc/passwd" <<'PW'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/tmp:/bin/sh
PW
cat >"$root/etc/group" <<'GR'
root:x:0:
nogroup:x:65534:
GR

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
