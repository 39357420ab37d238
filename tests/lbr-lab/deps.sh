#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Packages the LBR lab proofs need at run time (besides build.sh's):
# a static libc for the guest binary, busybox-static and cpio for the
# throwaway initramfs, Debian's firmware for QEMU.  Installs the missing
# ones when run as root; the guest kernel itself is not installed here
# (the proofs skip without /boot/vmlinuz-<kver> and its msr.ko).
set -eu
missing=
for p in gcc libc6-dev busybox-static cpio gzip python3 qemu-system-data seabios; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "lbr-lab: missing packages:$missing (run as root to install)" >&2
	exit 1
fi
echo "lbr-lab: installing$missing" >&2
apt-get -o DPkg::Lock::Timeout=600 update -q >&2 || true
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install \
	-y -q --no-install-recommends $missing >&2
