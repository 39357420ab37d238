#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The -dbg vmlinux of a Debian kernel, for a guest: downloads
# linux-image-KVER-dbg (some 860 MB for 6.1) once, keeps vmlinux's DWARF
# and symbols without its relocations, location lists and frame tables,
# compressed (some 145 MB of 630), and prints a directory whose tree holds
# it at usr/lib/debug/boot/vmlinux-KVER, where lbr-snap looks for it:
#
#   tests/vm/run-vm.sh --files "$(tests/vm/dbg-vmlinux.sh)" --script ...
#
# Usage: tests/vm/dbg-vmlinux.sh [KVER]   (default: the guest kernel)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kver=${1:-$(lbr_guest_kver)}
dir=$LBR_CACHE/dbg/$kver
out=$dir/root/usr/lib/debug/boot/vmlinux-$kver
if [ -s "$out" ]; then
	echo "$dir/root"
	exit 0
fi
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [ ! -s "$out" ]; then
	# Without a .deb yet, ls fails: not an error (set -e, pipefail).
	deb=$(ls "$dir"/linux-image-"$kver"-dbg_*.deb 2>/dev/null | head -n1) ||
		deb=
	if [ -z "$deb" ]; then
		echo "lbr_snap: downloading linux-image-$kver-dbg" >&2
		# The host's apt lists, else those of the release whose
		# kernel tests/vm/kernel.sh fetched (sid's 7.2, say).
		if ! (cd "$dir" && apt-get download -q "linux-image-$kver-dbg" >&2); then
			set +u
			# shellcheck source=../matrix/matrix.sh
			. "$LBR_TOP/tests/matrix/matrix.sh"
			set -u
			got=
			for a in "$CACHE"/*/apt; do
				[ -d "$a/lists" ] || continue
				rel=$(basename "$(dirname "$a")")
				(cd "$dir" && papt "$rel" apt-get download \
					"linux-image-$kver-dbg" >&2) && { got=1; break; }
			done
			[ -n "$got" ] ||
				die "no linux-image-$kver-dbg in the apt lists of the host or of .cache/matrix (apt-get update? tests/vm/kernel.sh RELEASE?)"
		fi
		deb=$(ls "$dir"/linux-image-"$kver"-dbg_*.deb | head -n1)
	fi
	# boot/vmlinux-KVER is the file up to 6.12, a link to
	# lib/modules/KVER/vmlinux in 7.2's package.
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$dir" --wildcards './usr/lib/debug/*vmlinux*'
	mkdir -p "$(dirname "$out")"
	objcopy --only-keep-debug --remove-section='.rela*' \
		--remove-section=.debug_loclists --remove-section=.debug_loc \
		--remove-section=.debug_frame --compress-debug-sections=zlib \
		"$(readlink -f "$dir/usr/lib/debug/boot/vmlinux-$kver")" "$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$dir/usr" "$deb"
fi
echo "$dir/root"
