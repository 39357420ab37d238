#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build lbr_snap.ko, lbr_snap_fexit.ko and the test target module with W=1 against Debian's
# kernel headers of several releases, check freeze-first on each build and
# print a table: kernel | result | warnings.
#
# Usage: tests/matrix/matrix.sh [RELEASE...]    (default: bullseye bookworm
#        trixie sid; make matrix [RELEASES="..."]).  A RELEASE may also be a
#        backports suite (e.g. trixie-backports: its newest kernel, built in a
#        chroot of its base release).
#
# Headers (.debs fetched with apt through a private apt configuration; the
# system's sources are never touched) are unpacked with dpkg-deb -x into
# ${LBR_SNAP_CACHE:-.cache}/matrix/RELEASE/root.  A kernel built with a newer
# gcc than the host's is built in a debootstrap (minbase) chroot of its
# release with that gcc, and then root/ is that chroot.  All of it is cached:
# later runs only copy the sources and build.  MATRIX_REFRESH=1 looks for
# newer headers in the archive.  A stable release's security suite is
# searched too.  Nothing is installed on the host but the packages of
# tests/deps/packages (groups build, kernel).
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${LBR_SNAP_CACHE:-$TOP/.cache}/matrix
MIRROR=${MATRIX_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${MATRIX_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
JOBS=${MATRIX_JOBS:-2}
RELEASES=${*:-${RELEASES:-bullseye bookworm trixie sid}}
HOST_GCC=$(gcc -dumpversion | cut -d. -f1)
NICE="nice -n 10"

log() { echo "matrix: $*" >&2; }

# apt with a private configuration, state and cache under $CACHE/$rel/apt.
papt() {	# $1 = release, $2 = apt-get|apt-cache, then arguments
	local d=$CACHE/$1/apt tool=$2
	shift 2
	"$tool" -q -o Dir::Etc::sourcelist="$d/sources.list" \
		-o Dir::Etc::sourceparts="$d/empty" \
		-o Dir::Etc::preferences="$d/empty/none" \
		-o Dir::Etc::preferencesparts="$d/empty" \
		-o Dir::State::Lists="$d/lists" \
		-o Dir::State::status="$d/empty/status" \
		-o Dir::Cache="$d/cache" \
		-o APT::Architectures::=amd64 -o APT::Architecture=amd64 \
		-o Acquire::Languages=none -o APT::Sandbox::User=root "$@"
}

papt_init() {	# $1 = release
	local d=$CACHE/$1/apt
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/empty"
	: >"$d/empty/status"
	echo "deb [signed-by=$KEYRING] $MIRROR $1 main" >"$d/sources.list"
	# A stable release's kernel updates come through its security suite
	# (bookworm's current kernel is there, not in the point release).
	case $1 in
	sid|unstable|experimental|*-*) ;;
	*) echo "deb [signed-by=$KEYRING] $SECURITY_MIRROR $1-security main" \
		>>"$d/sources.list" ;;
	esac
	papt "$1" apt-get update >&2 || return 1
}

# Package names a package depends on (first of each alternative group).
deps_of() {	# $1 = release, $2 = package
	papt "$1" apt-cache show --no-all-versions "$2" |
		sed -n 's/^Depends: //p' | tr ',' '\n' |
		sed 's/|.*//; s/(.*//; s/:any//; s/^ *//; s/ *$//' | grep -v '^$'
}

# The .debs of the newest linux-headers-*-amd64 of a release: the flavour
# package, its -common and its kbuild (and base, if it has one).
fetch_headers() {	# $1 = release; prints the flavour package name
	local rel=$1 d=$CACHE/$1 flav pkgs p
	papt_init "$rel" || { log "apt-get update for $rel failed"; return 1; }
	flav=$(deps_of "$rel" linux-headers-amd64 | grep '^linux-headers-.*-amd64$' | head -n1)
	[ -n "$flav" ] || { log "no linux-headers-*-amd64 in $rel"; return 1; }
	pkgs="$flav $(deps_of "$rel" "$flav" | grep -E '^linux-(headers-.*-common|kbuild-)')"
	rm -rf "$d/debs" && mkdir -p "$d/debs"
	# shellcheck disable=SC2086
	(cd "$d/debs" && papt "$rel" apt-get download $pkgs >&2) ||
		{ log "apt-get download $pkgs failed"; return 1; }
	echo "$flav"
}

# Packages the chroot needs: make, libc headers, libelf, bc, the kernel's
# gcc (its gcc-N or gcc-N-for-host dependency) and what kbuild's programs
# link against.
chroot_pkgs() {	# $1 = release, $2 = flavour package
	local rel=$1 flav=$2 p kb
	# perl (kernel-doc up to 6.x) and python3 (kernel-doc in 7.x) for W=1.
	"$TOP/tests/deps/install.sh" --list matrix-chroot
	kb=$(deps_of "$rel" "$flav" | grep '^linux-kbuild-')
	for p in $(deps_of "$rel" "$flav") $(deps_of "$rel" "$kb"); do
		case $p in
		linux-*) ;;
		gcc-*-for-host) printf '%s\n' "$p" "${p%-for-host}" ;;
		*) echo "$p" ;;
		esac
	done
}

# The gcc major version a headers package wants ("CC = ... gcc-N").
kernel_gcc() {	# $1 = flavour headers dir
	sed -n 's/^CC = .*gcc-\([0-9]*\).*/\1/p' "$1/.kernelvariables" | head -n1
}

# Prepare $CACHE/$rel: root/ with the headers (a chroot if needed).
# Prints "KVER KDIR CHROOT(0|1) ROOT": with a chroot KDIR is a path inside
# ROOT; without, KDIR is the full path of the headers unpacked in ROOT.
prepare() {	# $1 = release
	local rel=$1 d=$CACHE/$1 flav kver kdir gccv pkgs deb missing root
	if [ -s "$d/ready" ] && [ -z "${MATRIX_REFRESH:-}" ]; then
		read -r kver kdir gccv root <"$d/ready"	# gccv: chroot or not
		# (A root of / is an older layout: set it up again.)
		if { [ "$gccv" = 1 ] && [ -f "$root$kdir/Makefile" ]; } ||
		   { [ "$gccv" = 0 ] && [ "$root" != / ] && [ -f "$kdir/Makefile" ]; }; then
			cat "$d/ready"
			return 0
		fi
		rm -f "$d/ready"	# the tree went away: set it up again
	fi
	mkdir -p "$d"
	flav=$(fetch_headers "$rel") || return 1
	kver=${flav#linux-headers-}
	kdir=/usr/src/$flav
	rm -rf "$d/hdr" && mkdir -p "$d/hdr"
	for deb in "$d"/debs/*.deb; do
		dpkg-deb -x "$deb" "$d/hdr" || return 1
	done
	gccv=$(kernel_gcc "$d/hdr$kdir")
	[ -n "$gccv" ] || { log "$rel: no CC in $kdir/.kernelvariables"; return 1; }
	if [ "$gccv" -gt "$HOST_GCC" ]; then
		# Newer gcc than the host's: a chroot of the release.
		if [ ! -f "$d/root/.matrix-chroot" ]; then
			pkgs=$(chroot_pkgs "$rel" "$flav" | sort -u | tr '\n' ,)
			log "$rel: debootstrap --variant=minbase with ${pkgs%,}"
			rm -rf "$d/root"
			$NICE debootstrap --variant=minbase --include="${pkgs%,}" \
				--keyring="$KEYRING" "${rel%-backports}" "$d/root" "$MIRROR" \
				>"$d/debootstrap.log" 2>&1 ||
				{ log "$rel: debootstrap failed, see $d/debootstrap.log"; return 1; }
			rm -rf "$d/root/var/cache/apt/archives/"*.deb
			touch "$d/root/.matrix-chroot"
		fi
		# A chroot made by an older version of this script may lack some.
		pkgs=$(chroot_pkgs "$rel" "$flav" | sort -u)
		# shellcheck disable=SC2086
		missing=$(chroot "$d/root" dpkg-query -W -f='${Package} ${Status}\n' $pkgs 2>&1 |
			  grep -v ' ok installed$' | sed 's/^dpkg-query: no packages found matching //; s/ .*//')
		if [ -n "$missing" ]; then
			log "$rel: installing in the chroot:" $missing
			# shellcheck disable=SC2086
			chroot "$d/root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
				DEBIAN_FRONTEND=noninteractive \
				apt-get install -y -q --no-install-recommends $missing \
				>>"$d/debootstrap.log" 2>&1 &&
				chroot "$d/root" apt-get clean ||
				{ log "$rel: apt-get install in the chroot failed, see $d/debootstrap.log"; return 1; }
		fi
		# Headers go into the chroot, where their absolute paths hold.
		cp -a "$d/hdr/." "$d/root/" || return 1
		rm -rf "$d/hdr"
		echo "$kver $kdir 1 $d/root" >"$d/ready"
	else
		# Host gcc: the flavour Makefile includes -common by absolute
		# path; point it into the unpacked tree.
		rm -rf "$d/root" && mv "$d/hdr" "$d/root"
		sed -i "s|^include /usr/src/|include $d/root/usr/src/|" \
			"$d/root$kdir/Makefile"
		echo "$kver $d/root$kdir 0 $d/root" >"$d/ready"
	fi
	cat "$d/ready"
}

# Build one module dir with W=1; prints the warning count, fails on error.
build_one() {	# $1 = rel, $2 = kdir, $3 = chroot?, $4 = root, $5 = src dir in root, $6 = log
	local cc=() rc
	# A kernel built with an older gcc than the host's: build with the host's.
	[ "$3" = 1 ] || [ "$(kernel_gcc "$2")" = "$HOST_GCC" ] || cc=(CC=gcc)
	if [ "$3" = 1 ]; then
		# objtool (7.x) reads /proc: mount it in a private mount
		# namespace, so that it goes away with the build.
		$NICE unshare --mount --propagation private /bin/sh -c \
			'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$4" \
			/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 \
			make -C "$2" M="$5" W=1 -j"$JOBS" modules >"$6" 2>&1
	else
		LANG=C $NICE make -C "$2" M="$5" W=1 -j"$JOBS" "${cc[@]}" modules >"$6" 2>&1
	fi
	rc=$?
	grep -ci 'warning:' "$6"
	return $rc
}

# Sourced (tests/vm/kernel.sh): the functions only.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

"$TOP/tests/deps/install.sh" build kernel || exit 1
declare -a rows
fail=0
t_all=$(date +%s)
for rel in $RELEASES; do
	t0=$(date +%s)
	# tests/vm/kernel.sh and build.sh use the same trees.
	mkdir -p "$CACHE/$rel"
	exec 8>"$CACHE/$rel/.lock"
	flock 8
	if ! info=$(prepare "$rel"); then
		rows+=("$rel|? (no headers)|FAIL|-|-|-|$(($(date +%s) - t0))s")
		fail=1
		continue
	fi
	read -r kver kdir inchroot root <<<"$info"
	# Sources are copied: several kernels never share objects, and the
	# checkout's own build is left alone.
	if [ "$inchroot" = 1 ]; then
		rp=$root src=/tmp/lbr_snap-matrix hk=$root$kdir
	else
		rp='' src=$CACHE/$rel/src hk=$kdir
	fi
	out=$CACHE/$rel/out
	rm -rf "$rp$src" "$out" && mkdir -p "$rp$src/target" "$out"
	(cd "$TOP" && cp -r Kbuild src include "$rp$src/")
	(cd "$TOP/tests/target" && cp Kbuild ./*.c ./*.h "$rp$src/target/")
	res=ok warn=0 freeze=- api=-
	if w=$(build_one "$rel" "$kdir" "$inchroot" "$root" "$src" "$out/lbr_snap.log"); then
		warn=$w
	else
		res="FAIL"; warn=$w
	fi
	if w=$(build_one "$rel" "$kdir" "$inchroot" "$root" "$src/target" "$out/target.log"); then
		warn=$((warn + w))
	else
		res="FAIL"; warn=$((warn + w))
	fi
	if [ "$res" = ok ]; then
		cp "$rp$src/lbr_snap.ko" "$rp$src/lbr_snap_fexit.ko" \
			"$rp$src/target/lbr_snap_test_target.ko" "$out/"
		# The ftrace direct-call API the Kbuild probe chose (compat.h).
		api=$(nm -u "$out/lbr_snap_fexit.ko" | awk '
			/ ftrace_set_filter_ip$/ { ops = 1 }
			/ register_ftrace_direct$/ { d = 1 }
			END { print d ? (ops ? "ops" : "ip") : "none" }')
		if "$TOP/tests/check-freeze-first.sh" "$out/lbr_snap.ko" \
			"$out/lbr_snap_fexit.ko" >"$out/freeze.log" 2>&1; then
			freeze=ok
		else
			freeze=FAIL res=FAIL
		fi
	fi
	[ "$warn" = 0 ] || grep -hi 'warning:' "$out/lbr_snap.log" "$out/target.log" | sed "s/^/$rel: /" >&2
	[ "$res" = ok ] || { fail=1; grep -h -B2 -A3 'error' "$out"/*.log | head -n 40 | sed "s/^/$rel: /" >&2; }
	gcc_used=$( [ "$inchroot" = 1 ] && echo "gcc-$(kernel_gcc "$hk") (chroot)" || echo "host gcc-$HOST_GCC")
	rows+=("$rel|$kver|$res|$warn|$freeze|$api|$gcc_used|$(($(date +%s) - t0))s")
	rm -rf "$rp$src"
	exec 8>&-
done

printf '\n%-16s | %-26s | %-6s | %-8s | %-12s | %-10s | %-19s | %s\n' \
	release kernel result warnings freeze-first direct-api compiler time
printf -- '-----------------+----------------------------+--------+----------+--------------+------------+---------------------+------\n'
for r in "${rows[@]}"; do
	IFS='|' read -r a b c d e f g h <<<"$r"
	printf '%-16s | %-26s | %-6s | %-8s | %-12s | %-10s | %-19s | %s\n' "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h"
done
echo "total $(($(date +%s) - t_all))s; logs and .ko files in $CACHE/RELEASE/out"
exit $fail
