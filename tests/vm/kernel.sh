#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make a Debian release's kernel bootable by the test guest without
# installing it (nothing changes how the host boots): the headers and, for
# a kernel built with a newer gcc than the host's, the build chroot of
# tests/matrix/matrix.sh,
# plus its linux-image package (vmlinuz and /lib/modules/KVER)
# unpacked with dpkg-deb -x into the same root, .cache/matrix/RELEASE/root.
# Then build.sh and run-vm.sh --kver KVER find it there (lbr_kernel_root).
# Usage: tests/vm/kernel.sh RELEASE        (prints KVER)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
rel=${1:?usage: $0 RELEASE}
lbr_install_deps build kernel
set +u
# shellcheck source=../matrix/matrix.sh
. "$LBR_TOP/tests/matrix/matrix.sh"
set -u

# One fetch at a time: make check, make demo and make bench may share a cache.
mkdir -p "$CACHE/$rel"
exec 8>"$CACHE/$rel/.lock"
flock 8
info=$(prepare "$rel") || die "$rel: cannot prepare the headers (matrix.sh)"
read -r kver _ _ root <<<"$info"
# The stamp is written last: an interrupted unpack is done again.
stamp=$root/.lbr-kernel-$kver
if [ ! -f "$stamp" ]; then
	d=$CACHE/$rel
	[ -d "$d/apt/lists" ] || papt_init "$rel" || die "apt-get update for $rel failed"
	mkdir -p "$d/img" && rm -f "$d/img/"*.deb
	# The image of exactly the headers' version; since 7.x it is split
	# into linux-binary- (vmlinuz) and linux-modules- (modules) packages.
	v=$(dpkg-deb -f "$d"/debs/linux-headers-"$kver"_*.deb Version)
	pkgs="linux-image-$kver $(deps_of "$rel" "linux-image-$kver" |
		{ grep -Fx -e "linux-binary-$kver" -e "linux-modules-$kver" || :; } |
		tr '\n' ' ')"
	# shellcheck disable=SC2046,SC2086
	(cd "$d/img" && papt "$rel" apt-get download $(printf "%s=$v " $pkgs) >&2) ||
		die "cannot download $pkgs ($v); gone from $rel? MATRIX_REFRESH=1 $0 $rel"
	for deb in "$d"/img/*.deb; do
		dpkg-deb -x "$deb" "$root" || die "cannot unpack $deb"
	done
	# 7.x ships it as /usr/lib/modules/KVER/vmlinuz (installed to /boot
	# by kernel-install): put it where the guest harness looks.
	[ -f "$root/boot/vmlinuz-$kver" ] || [ ! -f "$root/usr/lib/modules/$kver/vmlinuz" ] ||
		ln -s "../usr/lib/modules/$kver/vmlinuz" "$root/boot/vmlinuz-$kver"
	[ -f "$root/boot/vmlinuz-$kver" ] || die "no /boot/vmlinuz-$kver in linux-image-$kver"
	[ -d "$root/lib/modules/$kver/kernel" ] ||
		[ -d "$root/usr/lib/modules/$kver/kernel" ] ||
		die "no modules of $kver in $pkgs"
	rm -rf "$d/img"
	touch "$stamp"
fi
echo "$kver"
