#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# LBR is frozen before any control transfer of ours, by a WRMSR of the LBR
# control MSR: tests/freeze-first/check.py on a built module (make check,
# make matrix and tests/vm/build.sh run it on every build).
# With --its, the trampolines' returns are where the ITS mitigation leaves
# them a plain ret (src/fexit_tramp.S).
# Usage: tests/check-freeze-first.sh lbr_snap.ko lbr_snap_fexit.ko
exec python3 "$(dirname "$0")/freeze-first/check.py" --its "$@"
