#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the debug guest kernel (KASAN, lockdep, kmemleak, atomic-sleep and
# RCU checks; tests/vm/debug.config) from Debian's linux-source with the
# host's compiler, cached by the hash of the source package version and
# the config fragment in .cache/debug-kernel/HASH/. Its root holds
# boot/vmlinuz-KVER and lib/modules/KVER (build/ is the object tree), so
# build.sh and run-vm.sh --kver KVER use it like any other kernel.
# With NAME, tests/vm/debug-NAME.config on top of debug.config, a kernel
# of its own LOCALVERSION (debug-mass.config: make check-mass's).
# Usage: tests/vm/debug-kernel.sh [NAME]        (prints KVER)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
lbr_install_deps build debug-kernel

tar=$(ls /usr/src/linux-source-*.tar.* 2>/dev/null | sort -V | tail -n1)
[ -n "$tar" ] || die "linux-source not installed"
pkg=$(dpkg-query -S "$tar" | cut -d: -f1)
ver=$(dpkg-query -W -f='${Version}' "$pkg")
frags=("$LBR_TOP/tests/vm/debug.config")
if [ -n "${1:-}" ]; then
	[ -f "$LBR_TOP/tests/vm/debug-$1.config" ] ||
		die "no tests/vm/debug-$1.config"
	frags+=("$LBR_TOP/tests/vm/debug-$1.config")
fi
hash=$( { echo "$pkg $ver $(gcc -dumpfullversion)"; cat "${frags[@]}"; } |
	sha256sum | cut -c1-12)
top=$LBR_CACHE/debug-kernel/$hash
root=$top/root
# One build at a time: a second make check (or make bench) on the same
# cache waits for it instead of removing the tree under it.
mkdir -p "$LBR_CACHE/debug-kernel"
exec 8>"$LBR_CACHE/debug-kernel/.lock"
flock 8

if [ ! -f "$top/kver" ]; then
	start=$(date +%s)
	echo "lbr_snap: building the debug kernel from $pkg $ver in $top" >&2
	rm -rf "$top" && mkdir -p "$top/src" "$top/obj" "$root/boot"
	tar -xf "$tar" -C "$top/src" --strip-components=1 ||
		die "cannot extract $tar"
	mk() { make -s -C "$top/src" O="$top/obj" "$@"; }
	mk allnoconfig >&2
	"$top/src/scripts/kconfig/merge_config.sh" -m -O "$top/obj" \
		"$top/obj/.config" "${frags[@]}" >"$top/merge.log" 2>&1 ||
		{ cat "$top/merge.log" >&2; die "merge_config failed"; }
	mk olddefconfig >&2
	# Every option of the fragments, the last's value of each, must have
	# survived (a renamed or unmet dependency would silently drop a
	# checker).
	missing=$(awk -F= '/^CONFIG_/ { v[$1] = $0 } END { for (k in v) print v[k] }' \
			"${frags[@]}" | grep -E '^CONFIG_[A-Z0-9_]+=[ym]' |
		while read -r l; do
			grep -qx "$l" "$top/obj/.config" || echo "$l"
		done)
	[ -z "$missing" ] ||
		die "debug kernel: these did not survive olddefconfig:" $missing
	mk -j"$(nproc)" bzImage modules >"$top/build.log" 2>&1 ||
		{ tail -n 40 "$top/build.log" >&2; die "debug kernel build failed"; }
	kver=$(cat "$top/obj/include/config/kernel.release")
	mk INSTALL_MOD_PATH="$root" modules_install >&2
	cp "$top/obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$kver"
	rm -f "$root/lib/modules/$kver/build" "$root/lib/modules/$kver/source"
	ln -s "$top/obj" "$root/lib/modules/$kver/build"
	echo "$kver" >"$top/kver"
	echo "lbr_snap: debug kernel $kver built in $(($(date +%s) - start)) s" >&2
	# Older builds carry the same KVER: lbr_kernel_root() would find
	# the first of them.  One debug kernel of each KVER in the cache
	# (and none half built).
	for old in "$LBR_CACHE"/debug-kernel/*/; do
		[ "${old%/}" = "$top" ] && continue
		[ ! -f "${old}kver" ] || [ "$(cat "${old}kver")" = "$kver" ] ||
			continue
		rm -rf "${old%/}"
	done
fi
cat "$top/kver"
