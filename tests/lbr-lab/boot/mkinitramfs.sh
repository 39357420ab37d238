#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Throwaway initramfs for the LBR lab proofs (to be replaced by the shared
# tests/vm harness): busybox-static, msr.ko of the guest kernel, and the
# given files under /lab.  /init runs /lab/<script> named by
# "lbrlab.run=<script>" on the kernel command line, then passes the
# kernel log through the project's kernel-log gate
# (tests/vm/kernel-log-gate.sh, as the test guest's /init does) and
# powers off.  Console lines the host checks (lib.sh lab_klog_check,
# lablib.py klog_check):
#   LBRLAB-KLOG clean              no kernel report
#   LBRLAB-KLOG-REPORT <line>      a report line (up to 20), then
#   LBRLAB-KLOG-CONTEXT <line>     the log from the first report on (40)
#   LBRLAB-KLOG reports N          the gate failed
# and then "LBRLAB-EXIT <status of the script>".
#
#   mkinitramfs.sh OUT.cpio.gz KVER FILE...
# LAB_MODDIR: the kernel's modules (default /lib/modules/KVER).
set -eu
out=$1 kver=$2
shift 2
busybox=${BUSYBOX:-/usr/bin/busybox}
gate=$(cd "$(dirname "$0")/../../vm" && pwd)/kernel-log-gate.sh
msr=/lib/modules/$kver/kernel/arch/x86/kernel/msr.ko
src=${LAB_MODDIR:-/lib/modules/$kver}/kernel/arch/x86/kernel/msr.ko
for f in "$busybox" "$src" "$gate"; do
	[ -r "$f" ] || { echo "mkinitramfs: missing $f" >&2; exit 1; }
done
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" \
	"$root/lab" "$root/$(dirname "$msr")"
cp "$busybox" "$root/bin/busybox"
cp "$src" "$root/$msr"
install -m 755 "$gate" "$root/bin/kernel-log-gate"
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
rc=$?
cd /
# Any kernel report fails the proof that booted this guest
if bad=$(dmesg | kernel-log-gate); then
	echo "LBRLAB-KLOG clean"
else
	echo "$bad" | head -n 20 | sed 's/^/LBRLAB-KLOG-REPORT /'
	first=$(echo "$bad" | head -n1 | sed 's/^\[[^]]*\] //')
	[ -n "$first" ] && dmesg | grep -F -A 39 -- "$first" | head -n 40 |
		sed 's/^/LBRLAB-KLOG-CONTEXT /'
	echo "LBRLAB-KLOG reports $(echo "$bad" | grep -c .)"
fi
echo "LBRLAB-EXIT $rc"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
