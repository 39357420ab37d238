#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Boot the stock Debian guest kernel with an initramfs from mkinitramfs.sh
# on the LBR lab QEMU under TCG; the serial console is stdin/stdout.
#
#   run-guest.sh QEMU CPU KERNEL INITRD SCRIPT [extra qemu args...]
#
# TIMEOUT (seconds, default 240), APPEND (extra kernel command line).
set -eu
qemu=$1 cpu=$2 kernel=$3 initrd=$4 script=$5
shift 5
exec timeout -k 5 "${TIMEOUT:-240}" "$qemu" \
	-nodefaults -accel tcg -M pc -cpu "$cpu" -smp 1 -m 512 \
	-L /usr/share/qemu -L /usr/share/seabios -net none \
	-display none -serial stdio -no-reboot \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 nokaslr lbrlab.run=$script ${APPEND:-}" \
	"$@"
