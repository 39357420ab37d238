# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# --version: the tool's, a module's through fake-ioctl.c, one of another
# ABI, not a device.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

version_line()
{
	printf 'lbr-snap %s (ABI version 1; source lines: %s; BTF specs: %s)\n' "$VER" \
		"$(grep -q '^Source lines: built in' help.txt && echo libdw || echo no)" \
		"$1"
}
version_tool()
{
	"$LBR" --help >help.txt || return 1
	local bpf=no
	grep -q '^BTF specs: built in' help.txt && bpf=libbpf
	"$LBR" --version -d nodev >version.out || { echo "exit $?"; return 1; }
	{ version_line "$bpf"; echo "lbr_snap module: nodev: No such file or directory (not loaded)"; } >version.want
	diff -u version.want version.out
}
check "--version: the tool's version (src/lbr_snap.h's), no module" version_tool
want version-mod.out "lbr_snap module 0.1-test (ABI version 1) at stream.bin"
version_fake()
{
	"$FAKE" -d stream.bin --version | tail -n 1
}
t "--version: the module's version and ABI from GET_INFO" 0 version-mod.out - \
	version_fake
want version-abi.out "lbr_snap module 0.1-test (ABI version 2, not this tool's: use the lbr-snap built with it) at stream.bin"
version_abi()
{
	FAKE_LBR_ABI=2 "$FAKE" --version -d stream.bin | tail -n 1
}
t "--version: a module of another ABI said so, exit 0" 0 version-abi.out - \
	version_abi
want version-file.out "lbr_snap module: stream.bin: GET_INFO: Inappropriate ioctl for device (not an lbr_snap device)"
version_file()
{
	"$LBR" --version -d stream.bin | tail -n 1
}
t "--version: not a device, said so" 0 version-file.out - version_file
