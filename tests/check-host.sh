#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check-host`: the kselftest suite against the running kernel, on a
# real lab machine (never on a build box that must not load modules).
# Builds lbr_snap and the test target for `uname -r`, installs them under
# /lib/modules/$(uname -r)/extra for the duration, runs the suite, and
# removes them again.  Tests that need LBR skip where the CPU has none.
# Then lbr-snap selftest's report, as text and in lbr-snap-selftest.json.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=$(uname -r)
kdir=/lib/modules/$kver/build
extra=/lib/modules/$kver/extra

[ "$(id -u)" = 0 ] || { echo "check-host: run as root (it loads modules)" >&2; exit 2; }
[ -f "$kdir/Makefile" ] || { echo "check-host: no headers for $kver in $kdir" >&2; exit 2; }
if lsmod | grep -q '^lbr_snap '; then
	echo "check-host: lbr_snap is loaded; unload it first" >&2
	exit 2
fi

. "$top/tests/vm/lib.sh"
bin=$(KVER=$kver "$top/tests/vm/build.sh" "$kver")

cleanup() {
	rmmod lbr_snap 2>/dev/null || true
	rmmod lbr_snap_test_target 2>/dev/null || true
	rm -f "$extra/lbr_snap.ko" "$extra/lbr_snap_fexit.ko" \
		"$extra/lbr_snap_test_target.ko"
	depmod -a "$kver"
}
trap cleanup EXIT
install -D -m 644 "$bin/lbr_snap.ko" "$extra/lbr_snap.ko"
install -D -m 644 "$bin/lbr_snap_fexit.ko" "$extra/lbr_snap_fexit.ko"
install -D -m 644 "$bin/lbr_snap_test_target.ko" "$extra/lbr_snap_test_target.ko"
depmod -a "$kver"
modprobe lbr_snap_test_target
modprobe msr
rc=0
"$bin/lbr_snap_test" || rc=1
# Then the report a user attaches to a bug (lbr-snap selftest): as text
# here, and as JSON in lbr-snap-selftest.json.
rmmod lbr_snap 2>/dev/null || true
"$bin/lbr-snap" selftest || rc=1
"$bin/lbr-snap" --json selftest >lbr-snap-selftest.json || rc=1
echo "check-host: the report is in $(pwd)/lbr-snap-selftest.json"
exit $rc
