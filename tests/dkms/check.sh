#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# DKMS packaging test: builds lbr_snap through dkms.conf and checks the
# module DKMS made (version, vermagic, freeze-first).  Nothing is loaded and
# nothing is installed into /lib/modules: DKMS only adds and builds.
#
#   tests/dkms/check.sh [KVER]     on this host, with `make dkms-install
#                                  DKMS_STEPS="add build"`, then
#                                  `make dkms-uninstall` (KVER: newest
#                                  installed headers)
#   tests/dkms/check.sh --chroot RELEASE
#                                  in the chroot `make matrix` keeps for
#                                  RELEASE (e.g. sid: its dkms and kernel)
#
# Prints TAP-style "ok"/"not ok" lines; exits non-zero on a failure.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${LBR_SNAP_CACHE:-$TOP/.cache}/matrix
VER=$(sed -n 's/^#define LBR_SNAP_VERSION[ \t]*"\(.*\)"/\1/p' "$TOP/src/lbr_snap.h")
[ -n "$VER" ] || { echo "not ok - no LBR_SNAP_VERSION in src/lbr_snap.h"; exit 1; }
fail=0

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=1; }

# A module DKMS built ($1, maybe compressed), uncompressed into $2.
unpack_ko() {
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# Checks on the modules DKMS built ($1: lbr_snap.ko, maybe compressed, with
# lbr_snap_fexit.ko beside it), for kernel $2.
check_ko() {
	local ko=$1 kver=$2 tmp v vm m fx
	tmp=$(mktemp -d)
	fx=$(ls "$(dirname "$ko")"/lbr_snap_fexit.ko* 2>/dev/null | head -n1)
	unpack_ko "$ko" "$tmp/lbr_snap.ko"
	if [ -n "$fx" ]; then
		unpack_ko "$fx" "$tmp/lbr_snap_fexit.ko"
	else
		notok "no lbr_snap_fexit.ko beside $ko"
	fi
	for m in lbr_snap lbr_snap_fexit; do
		[ -f "$tmp/$m.ko" ] || continue
		v=$(modinfo -F version "$tmp/$m.ko")
		vm=$(modinfo -F vermagic "$tmp/$m.ko")
		[ "$v" = "$VER" ] && ok "$m: module version $v" ||
			notok "$m: module version '$v', want $VER"
		[ "${vm%% *}" = "$kver" ] && ok "$m: vermagic $kver" ||
			notok "$m: vermagic '$vm', want $kver"
	done
	if "$TOP/tests/check-freeze-first.sh" "$tmp"/*.ko; then :; else fail=1; fi
	rm -rf "$tmp"
}

host() {
	local kver=${1:-} ko
	if [ -z "$kver" ]; then
		kver=$(ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n1)
		kver=$(basename "$(dirname "$kver")")
	fi
	[ -f "/lib/modules/$kver/build/Makefile" ] ||
		{ notok "no headers for '$kver'"; return; }
	"$TOP/tests/deps/install.sh" dkms || { notok "dkms is not installed"; return; }
	if dkms status -m lbr_snap -v "$VER" | grep -q .; then
		notok "lbr_snap/$VER is already in DKMS; not touching it (make dkms-uninstall first)"
		return
	fi
	trap 'make -s -C "$TOP" dkms-uninstall >/dev/null 2>&1' EXIT
	if make -s -C "$TOP" dkms-install KVER="$kver" DKMS_STEPS="add build" >&2; then
		ok "make dkms-install KVER=$kver DKMS_STEPS=\"add build\""
	else
		notok "make dkms-install KVER=$kver DKMS_STEPS=\"add build\""
		return
	fi
	dkms status -m lbr_snap -v "$VER" -k "$kver" | grep -q ': built' &&
		ok "dkms status: $(dkms status -m lbr_snap -v "$VER" -k "$kver")" ||
		notok "dkms status: $(dkms status -m lbr_snap -v "$VER" -k "$kver")"
	ko=$(ls /var/lib/dkms/lbr_snap/"$VER"/"$kver"/*/module/lbr_snap.ko* 2>/dev/null | head -n1)
	[ -n "$ko" ] && check_ko "$ko" "$kver" || notok "no lbr_snap.ko from DKMS"
	if make -s -C "$TOP" dkms-uninstall >&2 && [ ! -e "/usr/src/lbr_snap-$VER" ] &&
	   ! dkms status -m lbr_snap -v "$VER" | grep -q .; then
		ok "make dkms-uninstall"
	else
		notok "make dkms-uninstall"
	fi
	trap - EXIT
}

# In a matrix chroot: dkms of that release, its kernel headers.
in_chroot() {
	local rel=$1 root kver kdir ko src pkgs
	[ -s "$CACHE/$rel/ready" ] ||
		{ notok "no matrix chroot for $rel (run make matrix RELEASES=$rel)"; return; }
	read -r kver kdir inchroot root <"$CACHE/$rel/ready"
	[ "$inchroot" = 1 ] || { notok "$rel is not built in a chroot"; return; }
	run() {
		unshare --mount --propagation private /bin/sh -c \
			'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" \
			/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	}
	pkgs=$("$TOP/tests/deps/install.sh" --list dkms-chroot)
	# shellcheck disable=SC2086
	if run dpkg-query -W -f='${Status}\n' $pkgs 2>&1 | grep -qv 'ok installed'; then
		# shellcheck disable=SC2086
		run apt-get install -y -q --no-install-recommends $pkgs >&2 ||
			{ notok "apt-get install $pkgs in the $rel chroot"; return; }
	fi
	mkdir -p "$root/lib/modules/$kver"
	ln -sfn "$kdir" "$root/lib/modules/$kver/build"
	# What make dkms-install copies, into the chroot (make dkms-source):
	# the chroot has no checkout, and its dkms is the one under test.
	src=$root/usr/src/lbr_snap-$VER
	run dkms remove "lbr_snap/$VER" --all >/dev/null 2>&1
	make -s -C "$TOP" dkms-source DESTDIR="$root" >&2 ||
		{ notok "$rel: make dkms-source DESTDIR=$root"; return; }
	if run dkms add "lbr_snap/$VER" >&2 && run dkms build "lbr_snap/$VER" -k "$kver" >&2; then
		ok "$rel ($(run dkms --version)): dkms add + build -k $kver"
	else
		notok "$rel: dkms build -k $kver"
		cat "$root/var/lib/dkms/lbr_snap/$VER/build/make.log" 2>/dev/null | tail -n 30 >&2
	fi
	ko=$(ls "$root"/var/lib/dkms/lbr_snap/"$VER"/"$kver"/*/module/lbr_snap.ko* 2>/dev/null | head -n1)
	[ -n "$ko" ] && check_ko "$ko" "$kver" || notok "$rel: no lbr_snap.ko from DKMS"
	run dkms remove "lbr_snap/$VER" --all >/dev/null 2>&1
	rm -rf "$src"
}

if [ "${1:-}" = --chroot ]; then
	in_chroot "${2:?usage: $0 --chroot RELEASE}"
else
	host "${1:-}"
fi
exit $fail
