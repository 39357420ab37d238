#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Packages the LBR lab proofs need at run time (besides build.sh's): group
# lab-run of tests/deps/packages (a static libc for the guest binary,
# busybox-static and cpio for the throwaway initramfs, Debian's firmware for
# QEMU).  Installs the missing ones when run as root; the guest kernel is
# fetched into the cache, never installed (tests/vm/kernel.sh).
exec "$(dirname "$0")/../deps/install.sh" lab-run
