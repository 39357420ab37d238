#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo-trace`: runs in the test guest, with the kernel's -dbg vmlinux
# (tests/vm/dbg-vmlinux.sh), and shows where cat's ENOENT comes from: a
# whole source file hooked in a batch, LBR recording every branch.
set -e
modprobe msr 2>/dev/null || true
echo "# lbr-snap trace -e ':fs/namei.c' -e do_sys_openat2 --lbr=any -- cat /no/such/file"
lbr-snap trace -e ':fs/namei.c' -e do_sys_openat2 --lbr=any -- \
	cat /no/such/file >/tmp/demo.out 2>/tmp/demo.err || true
cat /tmp/demo.err
echo
echo "# cat's records that returned -ENOENT, the deepest first"
awk '/^[0-9.]+ cpu[0-9]+ cat\[/ { p = /ENOENT/ } /^$/ { if (p) print; p = 0 } p' \
	/tmp/demo.out
