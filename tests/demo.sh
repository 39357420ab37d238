#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo`: runs in the test guest and shows lbr_snap capturing real
# error returns of a kernel function and of the test target module.
set -e
modprobe lbr_snap_test_target
echo "# modprobe lbr_snap targets=do_sys_openat2,lbr_test_int"
modprobe lbr_snap targets=do_sys_openat2,lbr_test_int
echo "# lbr-snap info"
lbr-snap info
echo
echo "# cat /no/such/file   (do_sys_openat2 returns -ENOENT)"
cat /no/such/file 2>/dev/null || true
echo "# echo 'int -22' > /dev/lbr_snap_test   (lbr_test_int returns -EINVAL)"
echo "int -22" > /dev/lbr_snap_test
echo
echo "# lbr-snap --nonblock"
lbr-snap --nonblock
echo
echo "# lbr-snap stats"
lbr-snap stats
echo
echo "# lbr-snap trace -e lbr_test_ptr%ptr/1@fexit --only-target -- sh -c 'echo \"ptr -12\" > /dev/lbr_snap_test'"
lbr-snap trace -e lbr_test_ptr%ptr/1@fexit --only-target -- \
	sh -c 'echo "ptr -12" > /dev/lbr_snap_test'
rmmod lbr_snap
echo
echo "# lbr-snap trace -e lbr_test_int/1@fexit -e do_sys_openat2@fexit -- sh -c 'echo \"int -22\" > /dev/lbr_snap_test'"
lbr-snap trace -e lbr_test_int/1@fexit -e do_sys_openat2@fexit -- \
	sh -c 'echo "int -22" > /dev/lbr_snap_test' 
