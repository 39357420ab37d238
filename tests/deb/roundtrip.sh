#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages' round trip: `make deb`, lintian on both packages,
# then in a Debian 12 root made with debootstrap (this host's dpkg database
# and /lib/modules are never touched):
#   - the root gets dkms and the headers of one bookworm kernel (the ABI
#     before linux-headers-amd64's); installing lbr-snap-dkms and lbr-snap
#     must build and install lbr_snap.ko and lbr_snap_fexit.ko for it
#     (dh_dkms's postinst);
#   - then linux-headers-amd64 brings the newest kernel's headers, and DKMS
#     must build the module for it too, through the headers' postinst hook
#     (/etc/kernel/header_postinst.d/dkms: AUTOINSTALL);
#   - purging both packages must leave nothing: no /usr/src/lbr_snap-*, no
#     /var/lib/dkms/lbr_snap, no lbr_snap*.ko under /lib/modules, none of
#     the tool's files.
# Nothing is loaded: DKMS only builds and installs into the root.
#
# Cached in $LBR_SNAP_CACHE/deb: debootstrap's minbase tarball (or make
# check-fresh's), apt's lists and .debs, and the root with dkms and the
# first kernel's headers as a tar (600 MB), used again while that kernel
# and the deb-chroot group stay the same: about 3 minutes on 2 cores then,
# 6 to 8 without it.  The root is unpacked in build/deb-root and removed
# afterwards (LBR_DEB_KEEP=1 keeps it).  Prints TAP.
set -uo pipefail
. "$(dirname "$0")/../vm/lib.sh"
lbr_install_deps deb deb-test

MIRROR=${LBR_DEB_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${LBR_DEB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
SUITE=bookworm
cache=$LBR_CACHE/deb
debs=$LBR_BUILD/deb-check
root=$LBR_BUILD/deb-root
ver=$(sed -n 's/^#define LBR_SNAP_VERSION[ \t]*"\(.*\)"/\1/p' "$LBR_TOP/src/lbr_snap.h")
git() { command git -c safe.directory='*' -C "$LBR_TOP" "$@"; }

N=9 n=0 pass=0 fail=0 dead='' t_step=$SECONDS
echo "1..$N"
# Each result with the seconds its step took.
took() { echo "#   ($((SECONDS - t_step)) s)"; t_step=$SECONDS; }
ok() { n=$((n + 1)) pass=$((pass + 1)); echo "ok $n - $*"; took; }
notok() { n=$((n + 1)) fail=$((fail + 1)); echo "not ok $n - $*"; took; }
# A step the others need failed: the rest fail with its reason.
finish() {
	while [ "$n" -lt "$N" ]; do notok "not run: $dead"; done
	echo "# Totals: pass:$pass fail:$fail skip:0"
	[ "$fail" = 0 ]
	exit
}
fatal() { notok "$*"; dead=$*; finish; }
# Output of a failed step, indented, at most its last $2 lines.
show() { tail -n "${2:-20}" "$1" | sed 's/^/#   /'; }

mkdir -p "$cache/archives/partial" "$cache/lists/partial"
exec 9>"$cache/.lock"
flock -n 9 || { echo "# waiting for $cache/.lock"; flock 9; }
tmp=$(mktemp -d)

# Remove the root of this script (its marker), if nothing is mounted in it.
remove_root() {
	[ -d "$root" ] || return 0
	[ -f "$root/.lbr_snap-deb-root" ] ||
		{ echo "# $root is not this test's root: not removing it"; return 1; }
	findmnt -rn -o TARGET | grep -q "^$root" &&
		{ echo "# something is mounted under $root: not removing it"; return 1; }
	rm -rf --one-file-system "$root"
}
cleanup() {
	[ -n "${LBR_DEB_KEEP:-}" ] || remove_root
	rm -rf "$tmp"
}
trap cleanup EXIT

# 1-2: make deb, and nothing of it in the tree or beside it.
parent=$(dirname "$LBR_TOP")
before=$(git status --porcelain 2>&1; ls -d "$parent"/lbr-snap[-_]* 2>/dev/null)
if make -s -C "$LBR_TOP" deb DEB_DIR="$debs" >"$tmp/make-deb.log" 2>&1 &&
   [ -f "$debs/lbr-snap-dkms_${ver}_all.deb" ] && [ -f "$debs/lbr-snap_${ver}_amd64.deb" ]; then
	ok "make deb builds lbr-snap-dkms_${ver}_all.deb and lbr-snap_${ver}_amd64.deb"
else
	show "$tmp/make-deb.log" 30
	fatal "make deb"
fi
after=$(git status --porcelain 2>&1; ls -d "$parent"/lbr-snap[-_]* 2>/dev/null)
if [ "$before" = "$after" ]; then
	ok "make deb leaves the tree and its parent as they were (git status, no .deb beside it)"
else
	diff <(echo "$before") <(echo "$after") | grep '^[<>]' | sed 's/^/#   /'
	notok "make deb left files in the tree or beside it"
fi
dkms_deb=$debs/lbr-snap-dkms_${ver}_all.deb
tool_deb=$debs/lbr-snap_${ver}_amd64.deb

# 3: lintian, every error and warning a failure (overrides need a reason
# in a comment: debian/*.lintian-overrides).
lintian --fail-on error,warning "$dkms_deb" "$tool_deb" >"$tmp/lintian.log" 2>&1
rc=$?
if [ "$rc" = 0 ] && ! grep -q '^[EW]: ' "$tmp/lintian.log"; then
	ok "lintian: no error, no warning on both packages"
else
	grep '^[EW]: ' "$tmp/lintian.log" | sed 's/^/#   /'
	notok "lintian (exit $rc)"
fi

# 4: what the packages hold, from the .debs.
dpkg-deb -c "$tool_deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/tool.list"
dpkg-deb -c "$dkms_deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/dkms.list"
missing=
for f in /usr/sbin/lbr-snap /usr/share/man/man8/lbr-snap.8.gz \
	 /usr/share/man/man4/lbr_snap.4.gz \
	 /usr/share/bash-completion/completions/lbr-snap \
	 /lib/udev/rules.d/70-lbr_snap.rules; do
	grep -qxF "$f" "$tmp/tool.list" || missing="$missing lbr-snap:$f"
done
for f in dkms.conf Makefile Kbuild src/fexit_tramp.S include/lbr_snap.h; do
	grep -qxF "/usr/src/lbr_snap-$ver/$f" "$tmp/dkms.list" ||
		missing="$missing lbr-snap-dkms:/usr/src/lbr_snap-$ver/$f"
done
dpkg-deb --fsys-tarfile "$dkms_deb" | tar -xO "./usr/src/lbr_snap-$ver/dkms.conf" >"$tmp/dkms.conf"
grep -qx 'AUTOINSTALL="yes"' "$tmp/dkms.conf" || missing="$missing AUTOINSTALL=\"yes\""
grep -qx "PACKAGE_VERSION=\"$ver\"" "$tmp/dkms.conf" || missing="$missing PACKAGE_VERSION=\"$ver\""
dpkg-deb -f "$dkms_deb" Depends | grep -qw dkms || missing="$missing Depends:dkms"
if [ -z "$missing" ]; then
	ok "the packages hold the tool, both manual pages, the completion, the udev rule, and the sources with dkms.conf (AUTOINSTALL)"
else
	notok "missing from the packages:$missing"
fi

# 5: the root: bookworm minbase, dkms and one kernel's headers.
tarball=$cache/$SUITE-minbase.tgz
if [ ! -s "$tarball" ]; then
	if [ -s "$LBR_CACHE/fresh/$SUITE-minbase.tgz" ]; then
		cp "$LBR_CACHE/fresh/$SUITE-minbase.tgz" "$tarball.tmp"
	else
		debootstrap --variant=minbase --make-tarball="$tarball.tmp" "$SUITE" \
			"$tmp/tarball" "$MIRROR" >"$tmp/debootstrap.log" 2>&1 ||
			{ show "$tmp/debootstrap.log"; fatal "debootstrap --make-tarball $SUITE"; }
	fi
	mv "$tarball.tmp" "$tarball"
fi
# The root made with dkms and the first kernel's headers is kept as
# $prepared, and later runs start from it while that kernel, the
# deb-chroot group and the minbase tarball stay the same.
prepared=$cache/$SUITE-root.tar
chroot_pkgs=$("$LBR_TOP/tests/deps/install.sh" --list deb-chroot)

# A command in the root, with /proc, /sys, /dev and the cached apt lists
# and .debs mounted in a private mount namespace: they go away with it.
run() {
	unshare --mount --propagation private /bin/sh -c '
		r=$0 c=$1; shift
		mount --bind "$r" "$r" && mount -t proc proc "$r/proc" &&
		mount --rbind /sys "$r/sys" && mount --rbind /dev "$r/dev" &&
		mount --bind "$c/lists" "$r/var/lib/apt/lists" &&
		mount --bind "$c/archives" "$r/var/cache/apt/archives" &&
		exec chroot "$r" "$@"' "$root" "$cache" \
		/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

new_root() {	# $1 = the tar to start from, or "" for debootstrap's
	remove_root || fatal "a root of an earlier run is in the way: $root"
	mkdir -p "$root"
	if [ -n "$1" ]; then
		tar -C "$root" -xf "$1" ||
			{ rm -f "$1"; fatal "unpacking $1 (removed: run again)"; }
	else
		touch "$root/.lbr_snap-deb-root"
		debootstrap --variant=minbase --unpack-tarball="$tarball" "$SUITE" "$root" \
			"$MIRROR" >"$tmp/debootstrap.log" 2>&1 ||
			{ show "$tmp/debootstrap.log"; fatal "debootstrap --unpack-tarball $SUITE"; }
	fi
	# bookworm and its security suite (where its current kernels are), and
	# this host's apt settings (its archive may be a snapshot past
	# Valid-Until), but the one that deletes the .debs the cache keeps.
	printf 'deb %s %s main\ndeb %s %s-security main\n' "$MIRROR" "$SUITE" \
		"$SECURITY_MIRROR" "$SUITE" >"$root/etc/apt/sources.list"
	cp /etc/apt/apt.conf.d/* "$root/etc/apt/apt.conf.d/" 2>/dev/null
	rm -f "$root/etc/apt/apt.conf.d/docker-clean"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	run apt-get -q update >"$tmp/apt.log" 2>&1 ||
		{ show "$tmp/apt.log"; fatal "apt-get update in the $SUITE root"; }
}

from=
[ -s "$prepared" ] && [ -s "$prepared.key" ] && from=$prepared
new_root "$from"
# The kernels: kv2 is linux-headers-amd64's (the newest), kv1 the ABI
# before it of the same series with headers to install (LBR_DEB_KVER1=).
kv2=$(run apt-cache depends linux-headers-amd64 |
      sed -n 's/^ *Depends: linux-headers-\(.*-amd64\)$/\1/p' | head -n1)
series=${kv2%-*-amd64}
kv1=${LBR_DEB_KVER1:-$(run apt-cache pkgnames "linux-headers-$series-" |
	sed -n "s/^linux-headers-\($series-[0-9]*-amd64\)$/\1/p" | sort -V |
	awk -v k="$kv2" '$0 == k { exit } { print }' | tail -n1)}
[ -n "$kv2" ] && [ -n "$kv1" ] ||
	fatal "no two kernels' headers in $SUITE (linux-headers-amd64: '$kv2', the one before: '$kv1')"
echo "# kernels: $kv1 first, then $kv2 (linux-headers-amd64)"
first=linux-headers-$kv1
# shellcheck disable=SC2086
key=$(echo "$SUITE" $chroot_pkgs "$first" "$(cksum <"$tarball")")
if [ -n "$from" ] && [ "$(cat "$prepared.key")" != "$key" ]; then
	from=
	new_root ""
fi
# shellcheck disable=SC2086
if [ -n "$from" ]; then
	ok "a Debian 12 root with dkms and $first (from $prepared)"
elif run apt-get -q -y -o DPkg::Lock::Timeout=600 install --no-install-recommends \
	$chroot_pkgs $first >"$tmp/apt.log" 2>&1 &&
   run test -f "/lib/modules/$kv1/build/Makefile"; then
	rm -f "$prepared.key"
	tar -C "$root" -cf "$prepared.tmp" . && mv "$prepared.tmp" "$prepared" &&
		echo "$key" >"$prepared.key"
	ok "a Debian 12 root with dkms and $first"
else
	show "$tmp/apt.log"
	fatal "installing dkms and $first in the $SUITE root"
fi
mkdir -p "$root/tmp/debs"
cp "$dkms_deb" "$tool_deb" "$root/tmp/debs/"

# The modules DKMS installed for $1 in the root: both, of this version,
# for that kernel, and dkms status saying so.
installed_for() {	# $1 = kernel; prints what is wrong
	local kv=$1 m ko v vm
	for m in lbr_snap lbr_snap_fexit; do
		ko=$(ls "$root/lib/modules/$kv/updates/dkms/$m.ko"* 2>/dev/null | head -n1)
		if [ -z "$ko" ]; then
			echo "no $m.ko in /lib/modules/$kv/updates/dkms"
			continue
		fi
		v=$(modinfo -F version "$ko") vm=$(modinfo -F vermagic "$ko")
		[ "$v" = "$ver" ] || echo "$m: version '$v', want $ver"
		[ "${vm%% *}" = "$kv" ] || echo "$m: vermagic '$vm', want $kv"
	done
	run dkms status -m lbr_snap -v "$ver" -k "$kv" | grep -q ': installed$' ||
		echo "dkms status: '$(run dkms status -m lbr_snap -k "$kv")'"
}

# 6: both packages; dh_dkms's postinst builds for the kernel there is.
debs_in_root="/tmp/debs/$(basename "$dkms_deb") /tmp/debs/$(basename "$tool_deb")"
# shellcheck disable=SC2086
run apt-get -q -y -o DPkg::Lock::Timeout=600 install --no-install-recommends \
	$debs_in_root >"$tmp/apt.log" 2>&1
rc=$?
wrong=$(installed_for "$kv1")
if [ "$rc" = 0 ] && [ -z "$wrong" ]; then
	ok "installing both packages builds and installs lbr_snap.ko and lbr_snap_fexit.ko for $kv1 (DKMS)"
else
	echo "$wrong" | sed 's/^/#   /'
	show "$tmp/apt.log"
	cat "$root/var/lib/dkms/lbr_snap/$ver/build/make.log" 2>/dev/null | tail -n 20 | sed 's/^/#   /'
	fatal "installing both packages (exit $rc): no module for $kv1"
fi

# 7: the tool runs there (its shared libraries are the package's
# dependencies), and the group of the udev rule is there.
out=$(run lbr-snap --version 2>&1)
wrong=
grep -q "lbr-snap $ver " <<<"$out" ||
	wrong="lbr-snap --version: '$(head -n1 <<<"$out")'"
run getent group lbrsnap >/dev/null || wrong="$wrong; no group lbrsnap"
run bash -c '. /usr/share/bash-completion/completions/lbr-snap && complete -p lbr-snap' \
	>/dev/null 2>&1 || wrong="$wrong; bash does not complete lbr-snap"
if [ -z "$wrong" ]; then
	ok "lbr-snap --version runs in the root ($(head -n1 <<<"$out")), the group lbrsnap and the completion are there"
else
	notok "lbr-snap in the root: ${wrong#; }"
fi

# 8: a new kernel's headers: DKMS builds for it on its own (AUTOINSTALL).
second=$("$LBR_TOP/tests/deps/install.sh" --list deb-chroot-kernel)
wrong=
# shellcheck disable=SC2086
if run apt-get -q -y -o DPkg::Lock::Timeout=600 install --no-install-recommends \
	$second >"$tmp/apt.log" 2>&1 &&
   wrong=$(installed_for "$kv2") && [ -z "$wrong" ]; then
	ok "linux-headers-amd64 ($kv2): DKMS AUTOINSTALL built and installed both modules for it"
else
	echo "${wrong:-}" | sed 's/^/#   /'
	grep -i 'dkms\|lbr_snap\|error' "$tmp/apt.log" | tail -n 15 | sed 's/^/#   /'
	notok "linux-headers-amd64 ($kv2): no module for it from DKMS"
fi

# 9: purge both; nothing of them left.  The same look before the purge
# must find them (a check that finds nothing anywhere would pass too).
leftovers() {
	local f
	ls -d "$root"/usr/src/lbr_snap-* "$root/var/lib/dkms/lbr_snap" 2>/dev/null
	find "$root/lib/modules" -name 'lbr_snap*.ko*' 2>/dev/null
	while read -r f; do
		[ -d "$root$f" ] || [ ! -e "$root$f" ] || echo "$root$f"
	done < <(cat "$tmp/tool.list" "$tmp/dkms.list")
	run dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' lbr-snap lbr-snap-dkms 2>/dev/null |
		grep -v '^un \|^pn '
}
seen=$(leftovers | wc -l)
run apt-get -q -y -o DPkg::Lock::Timeout=600 purge lbr-snap lbr-snap-dkms >"$tmp/apt.log" 2>&1
rc=$?
left=$(leftovers)
if [ "$rc" = 0 ] && [ -z "$left" ] && [ "$seen" -gt 10 ]; then
	ok "purging both packages leaves nothing of them ($seen paths there before)"
else
	echo "$left" | head -n 20 | sed 's/^/#   left: /'
	show "$tmp/apt.log" 10
	notok "purging both packages (exit $rc; $seen paths found before it)"
fi
finish
