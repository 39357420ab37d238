#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Throwaway initramfs for the LBR lab proofs (to be replaced by the shared
# tests/vm harness): busybox-static, msr.ko of the guest kernel, and the
# given files under /lab.  /init runs /lab/<script> named by
# "lbrlab.run=<script>" on the kernel command line, then powers off.
#
#   mkinitramfs.sh OUT.cpio.gz KVER FILE...
# LAB_MODDIR: the kernel's modules (default /lib/modules/KVER).
set -eu
out=$1 kver=$2
shift 2
busybox=${BUSYBOX:-/usr/bin/busybox}
msr=/lib/modules/$kver/kernel/arch/x86/kernel/msr.ko
src=${LAB_MODDIR:-/lib/modules/$kver}/kernel/arch/x86/kernel/msr.ko
for f in "$busybox" "$src"; do
	[ -r "$f" ] || { echo "mkinitramfs: missing $f" >&2; exit 1; }
done
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" \
	"$root/lab" "$root/$(dirname "$msr")"
cp "$busybox" "$root/bin/busybox"
cp "$src" "$root/$msr"
for f in "$@"; do
	cp "$f" "$root/lab/"
done
cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
script=$(sed -n 's/.*lbrlab\.run=\([^ ]*\).*/\1/p' /proc/cmdline)
echo "LBRLAB-BOOTED $(uname -r)"
cd /lab && sh "./$script"
echo "LBRLAB-EXIT $?"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
