#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-fresh: the README's two commands on a machine that has nothing.
#
# Debootstraps a minimal Debian 12 (bookworm, --variant=minbase) root, puts
# a clean `git clone` of this checkout's HEAD in it, mounts /proc, /sys and
# /dev in a private mount namespace and runs there, as root and with no
# cache: `make demo`, then `make check`.  Packages installed by hand on this
# machine cannot help: the root has only what debootstrap and the project's
# own install steps (tests/deps/packages) put in it.
#
# Only debootstrap's tarball of .debs is cached (.cache/fresh/); the root,
# everything installed in it and every build are made anew each run, in
# build/fresh/ (removed after a passing run; LBR_FRESH_KEEP=1 keeps it).
# Prints the time of each step and ends with "N passed, N failed, N
# skipped": make check's line, plus make demo (which must show captured
# branches).  Takes about as long as `.ci/run` from nothing, plus the
# debootstrap: run it whenever a dependency or an install step changes.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=$(realpath -m "${LBR_SNAP_CACHE:-$TOP/.cache}/fresh")
WORK=$(realpath -m "${LBR_FRESH_DIR:-${LBR_SNAP_BUILD:-$TOP/build}/fresh}")
git() { command git -c safe.directory='*' "$@"; }
MIRROR=${LBR_FRESH_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
root=$WORK/root
t_all=$(date +%s)

say() { echo "check-fresh: $*"; }
die() { say "ERROR: $*"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
step() {	# $1 = name, $2 = start time
	say "$1: $(($(date +%s) - $2)) s"
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"
"$TOP/tests/deps/install.sh" fresh || die "installing the fresh group failed"
if [ -n "$(git -C "$TOP" status --porcelain --untracked-files=no)" ]; then
	say "note: uncommitted changes are not tested; the clone is of HEAD $(git -C "$TOP" rev-parse --short HEAD)"
fi

# One run at a time; a run that died may have left its root, which is
# removed only if it is ours (the marker) and nothing is mounted in it.
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -n 9 || die "another make check-fresh is running"
remove_work() {
	[ -d "$WORK" ] || return 0
	[ -f "$WORK/.lbr_snap-fresh" ] ||
		die "$WORK exists and is not a check-fresh directory: not removing it"
	findmnt -rn -o TARGET | grep -q "^$WORK" &&
		die "something is mounted under $WORK; unmount it first"
	rm -rf --one-file-system "$WORK"
}
remove_work
mkdir -p "$WORK"
touch "$WORK/.lbr_snap-fresh"

t=$(date +%s)
tarball=$CACHE/$SUITE-minbase.tgz
if [ ! -s "$tarball" ]; then
	say "downloading debootstrap's packages for $SUITE (cached as $tarball)"
	debootstrap --variant=minbase --make-tarball="$tarball.tmp" "$SUITE" \
		"$WORK/tarball" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$WORK/debootstrap.log"; die "debootstrap --make-tarball failed"; }
	mv "$tarball.tmp" "$tarball"
	rm -rf "$WORK/tarball"
fi
debootstrap --variant=minbase --unpack-tarball="$tarball" "$SUITE" "$root" \
	"$MIRROR" >>"$WORK/debootstrap.log" 2>&1 ||
	{ tail -n 20 "$WORK/debootstrap.log"; die "debootstrap failed"; }
# What a new Debian 12 machine has of apt: bookworm with its updates and
# security suites, and this machine's apt settings (its archive may be a
# snapshot whose Release files are past Valid-Until); nothing else.
cat >"$root/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb ${LBR_FRESH_SECURITY_MIRROR:-http://deb.debian.org/debian-security} $SUITE-security main
EOF
mkdir -p "$root/etc/apt/apt.conf.d"
cp /etc/apt/apt.conf.d/* "$root/etc/apt/apt.conf.d/" 2>/dev/null
cp /etc/resolv.conf "$root/etc/resolv.conf"
step "a minimal Debian 12 root (debootstrap --variant=minbase)" "$t"

t=$(date +%s)
git clone -q --no-hardlinks "$TOP" "$root/root/lbr_snap" || die "git clone failed"
step "git clone of HEAD $(git -C "$root/root/lbr_snap" rev-parse --short HEAD)" "$t"

# Run a command in the root: /proc, /sys and /dev mounted in a private
# mount namespace, so they go away with it whatever happens.  The root is
# a mount point of its own, as / is on a machine (unshare --propagation,
# which make matrix uses, needs that).
in_root() {
	unshare --mount --propagation private /bin/sh -c '
		r=$0
		mount --bind "$r" "$r" &&
		mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" &&
		mount --rbind /dev "$r/dev" && exec chroot "$r" "$@"' "$root" \
		/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
		/bin/bash -c "cd /root/lbr_snap && $1"
}

log=$WORK/fresh.log
t=$(date +%s)
in_root 'tests/deps/install.sh bootstrap' 2>&1 | tee -a "$log" | tail -n 3
[ "${PIPESTATUS[0]}" = 0 ] || die "installing make (tests/deps/install.sh bootstrap) failed"
step "make itself (apt-get install make)" "$t"

t=$(date +%s)
in_root 'make demo' 2>&1 | tee "$WORK/demo.log"
demo_rc=${PIPESTATUS[0]}
step "make demo from nothing" "$t"
t_demo=$(($(date +%s) - t))
# Captured branches: the demo's records list entries "from -> to".
nbr=$(grep -c -- '->' "$WORK/demo.log")
if [ "$demo_rc" = 0 ] && [ "$nbr" -gt 0 ]; then
	demo="ok - make demo from nothing in $t_demo s: $nbr lines of captured branches"
	dp=1 df=0
else
	demo="not ok - make demo from nothing (exit $demo_rc, $nbr branch lines)"
	dp=0 df=1
fi
echo "$demo"

t=$(date +%s)
in_root 'make check' 2>&1 | tee "$WORK/check.log"
check_rc=${PIPESTATUS[0]}
step "make check after make demo" "$t"
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$WORK/check.log" | tail -n 1)
if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
	p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
else
	say "make check did not end with its totals line (exit $check_rc)"
	p=0 f=1 s=0
fi
[ "$check_rc" = 0 ] || [ "$f" != 0 ] || f=1

echo
say "summary"
echo "$demo"
grep -h '^== .*passed' "$WORK/check.log" | sed 's/^/  /'
step "total" "$t_all"
if [ $((f + df)) = 0 ] && [ -z "${LBR_FRESH_KEEP:-}" ]; then
	remove_work
else
	say "the root and its logs are kept in $WORK"
fi
echo "$((p + dp)) passed, $((f + df)) failed, $s skipped"
[ $((f + df)) = 0 ]
