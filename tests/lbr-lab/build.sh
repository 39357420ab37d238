#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build the LBR lab QEMU: Debian bookworm's qemu source package plus the
# patches in tests/lbr-lab/patches, configured for a minimal TCG-only
# x86_64-softmmu, building only qemu-system-x86_64.
#
# The result is cached under
#   ${LBR_SNAP_CACHE:-<repo>/.cache}/lbr-lab/<qemu-version>-<hash>/
# where <hash> covers the patches and this script; a cached run takes a
# second.  Prints the build time; the LAST stdout line is the absolute
# path of qemu-system-x86_64.  Progress goes to stderr, the full build log
# to <cache dir>/build.log; a failed build leaves its log in
# ${LBR_SNAP_CACHE}/lbr-lab/build-failed.log and prints its last lines.
#
# Needs root on a fresh Debian 12 to install the build dependencies
# (tests/deps/install.sh; skipped when they are installed).  Environment:
#   LBR_SNAP_CACHE        cache root (default <repo>/.cache)
#   LBR_LAB_JOBS          parallel build jobs (default 2)
#   LBR_LAB_DEBIAN_MIRROR Debian archive (default http://deb.debian.org/debian)
#   LBR_LAB_SECURITY_MIRROR (default http://deb.debian.org/debian-security)
#   LBR_LAB_SRC_CACHE     where the source package is kept (default
#                         <cache>/lbr-lab/src)
#   LBR_LAB_CONFIGURE_EXTRA  more configure options (the failure test)
set -euo pipefail

QEMU_DEB_VERSION=1:7.2+dfsg-7+deb12u18   # = bookworm's qemu-system-x86
QEMU_UPSTREAM=7.2+dfsg
DSC=qemu_7.2+dfsg-7+deb12u18.dsc
# sha256 of the .dsc as published in the Debian archive; the .dsc in turn
# pins the sha256 of the tarballs, which dpkg-source -x verifies.
DSC_SHA256=6b6bd27b947ec89e40a1d6b26d9c9f3c698ca691da13163e0483f6061bbb20b3

# Build and run-time packages (firmware comes from Debian's packages, -L
# /usr/share/qemu -L /usr/share/seabios, never from our build): groups
# lab-build and lab-run of tests/deps/packages.

t0=$(date +%s)
lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$lab/../.." && pwd)
cache_root=${LBR_SNAP_CACHE:-$repo/.cache}/lbr-lab
mkdir -p "$cache_root"
cache_root=$(cd "$cache_root" && pwd)
jobs=${LBR_LAB_JOBS:-2}
mirror=${LBR_LAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
secmirror=${LBR_LAB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

log() { echo "lbr-lab build: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

hash=$( (cd "$lab" && sha256sum build.sh patches/*.patch) | sha256sum |
	cut -c1-12)
out=$cache_root/${QEMU_DEB_VERSION#*:}-$hash
qemu=$out/qemu-system-x86_64

# Serialise concurrent builds (CI and a developer, or two test targets)
exec 9>"$cache_root/.lock"
flock 9

finish() {
	local secs=$(( $(date +%s) - t0 ))
	echo "lbr-lab: qemu-system-x86_64 ($QEMU_DEB_VERSION + $(ls "$lab"/patches/*.patch | wc -l) patches, $1) in ${secs}s"
	echo "$qemu"
	exit 0
}

if [ -x "$qemu" ] && "$qemu" --version >/dev/null 2>&1; then
	finish "cached"
fi

# --- dependencies ---------------------------------------------------------
"$repo/tests/deps/install.sh" lab-build lab-run || die "installing packages failed"

# --- source ---------------------------------------------------------------
src_cache=${LBR_LAB_SRC_CACHE:-$cache_root/src}
mkdir -p "$src_cache"
fetch_ok() {
	[ -f "$src_cache/$DSC" ] &&
		echo "$DSC_SHA256  $src_cache/$DSC" | sha256sum -c --quiet - 2>/dev/null
}
if ! fetch_ok; then
	# deb-src through a private apt configuration: the system's sources
	# and package lists are left alone.
	aptdir=$(mktemp -d)
	mkdir -p "$aptdir/lists/partial" "$aptdir/archives/partial"
	cat > "$aptdir/sources.list" <<EOF
deb-src $mirror bookworm main
deb-src $mirror bookworm-updates main
deb-src $secmirror bookworm-security main
EOF
	apt_priv=(-o "Dir::Etc::sourcelist=$aptdir/sources.list"
		-o "Dir::Etc::sourceparts=$aptdir/none"
		-o "Dir::State::Lists=$aptdir/lists"
		-o "Dir::Cache::archives=$aptdir/archives"
		-o APT::Get::List-Cleanup=0)
	log "fetching qemu $QEMU_DEB_VERSION source (deb-src, private apt lists)"
	if apt-get "${apt_priv[@]}" update -q >&2 &&
	   (cd "$src_cache" && apt-get "${apt_priv[@]}" source --download-only \
		-q "qemu=$QEMU_DEB_VERSION" >&2); then
		:
	else
		# No deb-src index: take the files straight from the archive pool.
		log "deb-src unavailable; fetching from the pool directly"
		for base in "$mirror" "$secmirror"; do
			ok=1
			for f in "$DSC" qemu_7.2+dfsg-7+deb12u18.debian.tar.xz \
				 "qemu_$QEMU_UPSTREAM.orig.tar.xz"; do
				python3 - "$base/pool/main/q/qemu/$f" "$src_cache/$f" <<'PY' || { ok=0; break; }
import sys, urllib.request, shutil
with urllib.request.urlopen(sys.argv[1], timeout=120) as r, open(sys.argv[2], "wb") as o:
    shutil.copyfileobj(r, o)
PY
			done
			[ $ok = 1 ] && break
		done
	fi
	rm -rf "$aptdir"
	fetch_ok || die "could not fetch $DSC with sha256 $DSC_SHA256"
fi

# --- unpack, patch, configure, build --------------------------------------
work=$out.tmp.$$
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
blog=$work/build.log
# A failed build keeps its log where the trap above cannot remove it.
failed=$cache_root/build-failed.log
build_fail() {
	log "ERROR: $*"
	if [ -f "$blog" ]; then
		mv -f "$blog" "$failed"
		log "the log is kept in $failed; its last lines:"
		tail -n 25 "$failed" | sed 's/^/  /' >&2
	fi
	exit 1
}
log "unpacking (dpkg-source -x, Debian's patches applied)"
dpkg-source -x "$src_cache/$DSC" "$work/src" >>"$blog" 2>&1 ||
	build_fail "dpkg-source failed"
for p in "$lab"/patches/*.patch; do
	log "applying $(basename "$p")"
	patch -d "$work/src" -p1 --batch --forward -s < "$p" >>"$blog" 2>&1 ||
		build_fail "patch $(basename "$p") does not apply"
done

mkdir -p "$work/build"
log "configuring (x86_64-softmmu, TCG only)"
tc=$(date +%s)
# configure runs the system python and meson (bookworm's meson 1.0.1
# is new enough for 7.2); /usr/bin first so no pyenv shim is picked.
(cd "$work/build" && PATH=/usr/sbin:/usr/bin:/sbin:/bin ../src/configure \
	--meson=/usr/bin/meson \
	--target-list=x86_64-softmmu \
	--without-default-features --enable-tcg \
	--disable-docs --disable-werror --disable-install-blobs \
	--disable-debug-info ${LBR_LAB_CONFIGURE_EXTRA:-}) >>"$blog" 2>&1 ||
	build_fail "configure failed"
tb=$(date +%s)
log "configured in $((tb - tc))s; building qemu-system-x86_64 with -j$jobs"
(cd "$work/build" && PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	ninja -j"$jobs" qemu-system-x86_64) >>"$blog" 2>&1 ||
	build_fail "build failed"
te=$(date +%s)
log "built in $((te - tb))s"

"$work/build/qemu-system-x86_64" --version >>"$blog" 2>&1 ||
	build_fail "the built binary does not run"
rm -rf "$out"
mkdir -p "$out"
cp "$work/build/qemu-system-x86_64" "$out/"
cp "$blog" "$out/build.log"
{
	echo "qemu source: $QEMU_DEB_VERSION ($DSC sha256 $DSC_SHA256)"
	echo "patches:"; (cd "$lab" && sha256sum patches/*.patch)
	echo "configure: $((tb - tc))s, ninja: $((te - tb))s, jobs: $jobs"
} > "$out/BUILD-INFO"
rm -rf "$work" "$failed"
trap - EXIT
finish "built: configure $((tb - tc))s, compile $((te - tb))s"
