#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo-why`: runs in the test guest, with the kernel's -dbg vmlinux
# (tests/vm/dbg-vmlinux.sh), and asks lbr-snap why two commands fail: cat
# of a missing file (the origin in fs/namei.c) and a perf_event_open()
# with a bad attr (tests/why/why_fail.c; the origin in kernel/events/).
set -e
modprobe msr 2>/dev/null || true
for cmd in "cat /no/such/file" "why_fail perf-bad-attr"; do
	echo "# lbr-snap why -- $cmd"
	# shellcheck disable=SC2086
	lbr-snap why -- $cmd >/tmp/why.out 2>/tmp/why.err || true
	grep -v '^lbr-snap:   ' /tmp/why.err
	cat /tmp/why.out
done
