#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test guest's kernel, for scripts outside this harness (the LBR lab's
# proofs): prints "KVER VMLINUZ MODULES_DIR".  KVER (environment) picks
# one; the default is Debian bookworm's, fetched and unpacked into the cache
# by tests/vm/kernel.sh on first use.
# Usage: tests/vm/guest-kernel.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kver=$(lbr_guest_kver)
root=$(lbr_kernel_root "$kver")
echo "$kver ${root%/}/boot/vmlinuz-$kver ${root%/}/lib/modules/$kver"
