#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of guest-lbr-quirks: the selftests LBR_TESTS names, on a lab
# CPU whose LBR is broken on purpose (tests/lbr-lab/README.md, "Quirks").
modprobe lbr_snap_test_target || exit 1
modprobe msr || exit 1
lbr_snap_test
rc=$?
# The report a user attaches to a bug, checked on the host against what
# the suites found on this CPU (tests/guest/check-report.py).
report=$(lbr-snap --json selftest)
echo "# selftest-report rc=$? $report"
exit $rc
