#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make check`: load/unload under a syscall storm.
modprobe lbr_snap_test_target || exit 1
lbr_snap_stress_test
