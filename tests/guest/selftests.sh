#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make check`: the functional kselftests, as root.
modprobe lbr_snap_test_target || exit 1
modprobe msr || exit 1
lbr_snap_test
rc=$?
# Batches of many functions (ADD_TARGETS).
lbr_snap_batch_test || rc=1
# The fuzzer, bounded (LBR_FUZZ_OPS, or 20000 operations).
lbr_snap_fuzz_test || rc=1
# The report a user attaches to a bug, checked on the host against what
# the suites found on this CPU (tests/guest/check-report.py).
report=$(lbr-snap --json selftest)
echo "# selftest-report rc=$? $report"
exit $rc
