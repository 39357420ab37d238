#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# DKMS round trip: install lbr_snap through DKMS for the guest kernel (its
# headers unpacked in the cache; it is not the running kernel), check the module
# lands in that kernel's updates/dkms, boot that kernel in QEMU with the
# DKMS-built module and run a smoke test, then uninstall and check that
# nothing is left.  Nothing is loaded on this host.
# Prints TAP "ok"/"not ok" lines and "# Totals: pass:N fail:N skip:0".
set -uo pipefail
. "$(dirname "$0")/../vm/lib.sh"
lbr_install_deps build kernel guest dkms

kver=$(lbr_guest_kver)
ver=$(sed -n 's/^#define LBR_SNAP_VERSION[ \t]*"\(.*\)"/\1/p' "$LBR_TOP/src/lbr_snap.h")
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }
finish() {
	echo "# Totals: pass:$pass fail:$fail skip:0"
	[ "$fail" = 0 ]
	exit
}

if dkms status -m lbr_snap | grep -q .; then
	notok "lbr_snap is in DKMS already; make dkms-uninstall first"
	finish
fi
# DKMS builds against /lib/modules/KVER/build.  Where the guest kernel is
# not on this host (its headers are unpacked in the cache), for the test
# /lib/modules/KVER holds only that link (and a marker saying so) and
# DKMS's install; all of it goes away afterwards, with the signing key DKMS
# makes on its first build if there was none.  Where the host has that
# kernel's headers package and nothing else of it (/lib/modules/KVER holds
# only its build and source links, as linux-headers-KVER leaves it), DKMS
# builds against those, as on a lab machine, and afterwards only what the
# test added to it is removed.  A kernel of the host's own, with modules
# installed, is never touched.  Nothing in /boot is.
moddir=/lib/modules/$kver
marker=$moddir/.lbr_snap-roundtrip
mok=$(ls /var/lib/dkms/mok.key /var/lib/dkms/mok.pub 2>/dev/null)
hostkeep=	# the host's headers-only entries of $moddir, one per line
cleanup() {
	local f
	make -s -C "$LBR_TOP" dkms-uninstall >/dev/null 2>&1
	[ ! -f "$marker" ] || rm -rf "$moddir"
	if [ -n "$hostkeep" ]; then
		for f in $(ls -A "$moddir"); do
			grep -qxF "$f" <<<"$hostkeep" || rm -rf "${moddir:?}/$f"
		done
	fi
	for f in /var/lib/dkms/mok.key /var/lib/dkms/mok.pub; do
		grep -qxF "$f" <<<"$mok" || rm -f "$f"
	done
	[ -z "${bin:-}" ] || rm -rf "$bin"
}
trap cleanup EXIT
# Only the links of a headers package, the build one to a tree with a
# Makefile: nothing else there to disturb.
headers_only() {
	local f
	[ -f "$moddir/build/Makefile" ] || return 1
	for f in $(ls -A "$moddir"); do
		case $f in build | source) [ -L "$moddir/$f" ] || return 1 ;; *) return 1 ;; esac
	done
}
if [ -e "$moddir" ] && [ ! -f "$marker" ]; then
	if ! headers_only; then
		echo "ok - # SKIP $moddir holds an installed $kver of the host's own, not only its headers: not touching it"
		echo "# Totals: pass:$pass fail:$fail skip:1"
		exit 0
	fi
	hostkeep=$(ls -A "$moddir")
	echo "# DKMS builds against the host's linux-headers-$kver ($(readlink "$moddir/build"))"
else
	kroot=$(lbr_kernel_root "$kver")
	[ "$kroot" != / ] && read -r _ kdir inchroot _ <"$(dirname "$kroot")/ready" ||
		{ notok "no headers for $kver in the cache"; finish; }
	[ "$inchroot" = 0 ] ||
		{ notok "$kver's headers need a chroot: not a host DKMS build"; finish; }
	mkdir -p "$moddir"
	touch "$marker"
	ln -sfn "$kdir" "$moddir/build"
fi

if make -s -C "$LBR_TOP" dkms-install KVER="$kver" >&2; then
	ok "make dkms-install KVER=$kver"
else
	notok "make dkms-install KVER=$kver"
	finish
fi
ko=$(ls /lib/modules/"$kver"/updates/dkms/lbr_snap.ko* 2>/dev/null | head -n1)
if [ -n "$ko" ] && ls /lib/modules/"$kver"/updates/dkms/lbr_snap_fexit.ko* >/dev/null 2>&1 &&
   dkms status -m lbr_snap -v "$ver" -k "$kver" | grep -q ': installed'; then
	ok "installed as $ko"
else
	notok "no lbr_snap.ko and lbr_snap_fexit.ko in /lib/modules/$kver/updates/dkms"
	finish
fi

# The guest gets the DKMS-built module instead of the one make check built.
bin=$(mktemp -d)
mkdir -p "$bin/$kver"
out=$("$LBR_TOP/tests/vm/build.sh" "$kver") && [ -d "$out" ] ||
	{ notok "building the test binaries for $kver"; finish; }
cp -r "$out/." "$bin/$kver/"
for k in "$ko" "$(ls /lib/modules/"$kver"/updates/dkms/lbr_snap_fexit.ko* | head -n1)"; do
	m=$(basename "$k"); m=${m%%.ko*}
	case $k in
	*.xz) xz -dc "$k" >"$bin/$kver/$m.ko" ;;
	*.zst) zstd -qdc "$k" >"$bin/$kver/$m.ko" ;;
	*) cp "$k" "$bin/$kver/$m.ko" ;;
	esac
done
cat >"$bin/smoke.sh" <<'SMOKE'
modprobe lbr_snap_test_target || exit 1
modprobe lbr_snap targets=lbr_test_int || exit 1
echo "int -22 3" > /dev/lbr_snap_test
n=$(lbr-snap --nonblock --json | grep -c '"retval":-22')
echo "smoke: $n records"
rmmod lbr_snap || exit 1
[ "$n" = 3 ]
SMOKE
if LBR_SNAP_BUILD=$bin LBR_PREBUILT=1 "$LBR_TOP/tests/vm/run-vm.sh" \
	--kver "$kver" --script "$bin/smoke.sh"; then
	ok "the DKMS-built module loads in a $kver guest and captures 3 of 3 returns"
else
	notok "smoke test of the DKMS-built module in a $kver guest"
fi

if make -s -C "$LBR_TOP" dkms-uninstall >&2 &&
   ! ls /lib/modules/"$kver"/updates/dkms/lbr_snap*.ko* >/dev/null 2>&1 &&
   [ ! -e "/usr/src/lbr_snap-$ver" ] && ! dkms status -m lbr_snap | grep -q .; then
	ok "make dkms-uninstall leaves nothing behind"
else
	notok "make dkms-uninstall left something behind"
fi
cleanup
trap - EXIT
if [ -z "$hostkeep" ] && [ -e "$moddir" ]; then
	notok "$moddir is left on the host"
elif [ -n "$hostkeep" ] && [ "$(ls -A "$moddir")" != "$hostkeep" ]; then
	notok "$moddir holds more than the host's headers links: $(ls -A "$moddir" | tr '\n' ' ')"
elif [ "$(ls /var/lib/dkms/mok.key /var/lib/dkms/mok.pub 2>/dev/null)" != "$mok" ]; then
	notok "DKMS's signing key is left on the host"
else
	ok "nothing of the test is left in /lib/modules or /var/lib/dkms"
fi
finish
