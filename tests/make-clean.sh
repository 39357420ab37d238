#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make clean removes what make built and nothing else: in a copy of the
# sources with a cache beside them (.cache/ holding a guest kernel's
# modules, as tests/vm/kernel.sh unpacks them, and build/ a guest build),
# `make KDIR=...` then `make clean` must leave exactly the files there were
# before.  kbuild's own `make M=. clean` once deleted every module of the
# cached guest kernels (it finds over the whole M tree).
# Usage: tests/make-clean.sh KDIR            Prints TAP.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: $0 KDIR}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "1..2"

tree=$T/tree
mkdir -p "$tree"
(cd "$TOP" && cp -r Makefile Kbuild src include tools "$tree/") || exit 1
# Sources only, whatever this checkout has built.
make -s -C "$tree/tools" clean >/dev/null
(cd "$tree" && find src include -maxdepth 1 -type f \
	! -name '*.[chS]' -delete)
m=$tree/.cache/matrix/rel/root/lib/modules/6.1.0-1-amd64
mkdir -p "$m/kernel/arch/x86" "$tree/build/6.1.0-1-amd64/mod/src"
for f in "$m/kernel/arch/x86/msr.ko" "$m/modules.order" "$m/modules.dep" \
	 "$m/kernel/.msr.ko.cmd" "$tree/build/6.1.0-1-amd64/lbr_snap.ko" \
	 "$tree/build/6.1.0-1-amd64/mod/src/capture.o" \
	 "$tree/build/6.1.0-1-amd64/mod/Module.symvers"; do
	echo sentinel >"$f"
done
list() { (cd "$tree" && find . | LC_ALL=C sort); }
list >"$T/before"

if make -C "$tree" KDIR="$kdir" all >"$T/make.log" 2>&1 &&
   [ -f "$tree/lbr_snap.ko" ] && [ -f "$tree/lbr_snap_fexit.ko" ] &&
   [ -x "$tree/tools/lbr-snap" ]; then
	echo "ok 1 - make builds lbr_snap.ko, lbr_snap_fexit.ko and lbr-snap in a copy"
else
	echo "not ok 1 - make in a copy of the sources"
	tail -n 20 "$T/make.log" | sed 's/^/# /'
fi

make -C "$tree" KDIR="$kdir" clean >"$T/clean.log" 2>&1
rc=$?
list >"$T/after"
if [ "$rc" = 0 ] && cmp -s "$T/before" "$T/after"; then
	echo "ok 2 - make clean leaves the files there were before make, .cache/ and build/ untouched"
else
	echo "not ok 2 - make clean (exit $rc) left the tree other than before make:"
	diff "$T/before" "$T/after" | grep '^[<>]' | head -n 20 |
		sed 's/^</# removed:/; s/^>/# left:/'
fi
