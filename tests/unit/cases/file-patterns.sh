# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# :FILE patterns, from the DWARF of a small kernel tree built with gcc -g
# standing in for vmlinux.  Reads patterns.sh's pat-help.txt.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

# notes_file FILE HEX: a /sys/kernel/notes holding build ID HEX.
notes_file()
{
	python3 -c '
import struct, sys
d = bytes.fromhex(sys.argv[2])
open(sys.argv[1], "wb").write(struct.pack("<III", 4, len(d), 3) + b"GNU\0" + d)
' "$1" "$2"
}

# An ELF built from a small kernel tree with gcc -g stands in for vmlinux:
# fs/namei.c has a declaration, a function inlined everywhere and a static
# do_walk(), which kernel/bpf/verifier.c has too; lib/string.c is built
# as with O=, in a directory of its own from its absolute path (so named
# in DWARF, as Debian's assembly units are), and has an alias that nm
# lists first.  Its kallsyms are its functions moved as KASLR would, all
# of them traceable, and the running kernel's build ID is the ELF's.
file_root()
{
	local r=$1 id

	mkdir -p ksrc/fs ksrc/kernel/bpf ksrc/init ksrc/lib ksrc/obj "$r/proc" \
		"$r/sys/kernel/tracing" || return 1
	cat >ksrc/init/main.c <<'EOC'
void _text(void) {}
int path_lookup(int);
int bpf_check(int);
void _start(void) { path_lookup(1); bpf_check(2); for (;;); }
EOC
	cat >ksrc/fs/namei.c <<'EOC'
int bpf_helper(int);
static inline __attribute__((always_inline)) int inlined_only(int x)
{
	return x * 3;
}
static __attribute__((noinline)) int do_walk(int x)
{
	return inlined_only(x) + bpf_helper(x);
}
void __attribute__((cold, noinline)) report(int x)
{
	__asm__ volatile("" :: "r"(x));
}
/* gcc splits it: its DWARF has ranges, not low_pc; kallsyms split_walk.cold */
__attribute__((noinline)) int split_walk(int x)
{
	if (x > 100) {
		report(x);
		report(x + 1);
		return -22;
	}
	return x + 1;
}
__attribute__((noinline)) int path_lookup(int x)
{
	return do_walk(x) - split_walk(x);
}
EOC
	cat >ksrc/kernel/bpf/verifier.c <<'EOC'
static __attribute__((noinline)) int do_walk(int x)
{
	return x + 7;
}
__attribute__((noinline)) int bpf_check(int x)
{
	return do_walk(x) ? -22 : 0;
}
EOC
	cat >ksrc/kernel/bpf/helpers.c <<'EOC'
__attribute__((noinline)) int bpf_helper(int x)
{
	return x ^ 5;
}
EOC
	cat >ksrc/lib/string.c <<'EOC'
__attribute__((noinline)) int strscpy(int x)
{
	return x - 3;
}
int a_strscpy(int x) __attribute__((alias("strscpy")));
EOC
	(cd ksrc/obj && gcc -g -O2 -c -o string.o "$T/ksrc/lib/string.c") &&
	(cd ksrc && gcc -g -O2 -nostdlib -static -Wl,--build-id \
		-o ../file-vmlinux init/main.c fs/namei.c \
		kernel/bpf/verifier.c kernel/bpf/helpers.c obj/string.o) ||
		return 1
	nm -n file-vmlinux | python3 -c '
import sys
for l in sys.stdin:
    a, t, n = l.split()
    if t in "tT":
        print("%x %s %s" % (int(a, 16) + 0xffffffff80c00000, t, n))
' >"$r/proc/kallsyms"
	awk '$3 != "_text" { print $3 }' "$r/proc/kallsyms" \
		>"$r/sys/kernel/tracing/available_filter_functions"
	id=$(readelf -n file-vmlinux | sed -n 's/.*Build ID: //p')
	[ -n "$id" ] || { echo "file-vmlinux has no build ID"; return 1; }
	notes_file "$r/sys/kernel/notes" "$id"
}

# :FILE patterns, from the DWARF of an ELF standing in for vmlinux.
FR=$T/file-root
if ! grep -q '^Source lines: built in' pat-help.txt; then
	skipped ":FILE patterns" "lbr-snap built without libdw"
elif check "the crafted kernel tree and vmlinux for :FILE" file_root "$FR"; then
want pat-file.out path_lookup split_walk report do_walk
t ":FILE: the functions of a compile unit, not its declarations nor inlined-only ones, one split hot and cold" \
	0 pat-file.out /dev/null env "LBR_SNAP_ROOT=$FR" "$LBR" \
	-k file-vmlinux spec :fs/namei.c
want pat-fglob.out "attach bpf_check" \
	"refuse do_walk: one of 2 functions of this name: lbr_snap hooks by name, and gets the first in kallsyms, vmlinux's" \
	"attach bpf_helper" "attach path_lookup" "attach split_walk" \
	"attach report" "attach do_walk: one of 2 functions of this name: the module hooks this one, the first in kallsyms"
want pat-fglob.err "lbr-snap: dry run: 6 to attach, 1 refused (capture errors); nothing attached"
t ":FILE: a glob on the path; same-named statics told apart by address" 0 \
	pat-fglob.out pat-fglob.err env "LBR_SNAP_ROOT=$FR" "$LBR" \
	-d "$T/no-device" -k file-vmlinux add --dry-run ':kernel/bpf/*.c' \
	':fs/*.c'
want pat-fnot.out "attach bpf_check" \
	"refuse do_walk: one of 2 functions of this name: lbr_snap hooks by name, and gets the first in kallsyms, vmlinux's" \
	"attach bpf_helper" "attach path_lookup" \
	"attach do_walk: one of 2 functions of this name: the module hooks this one, the first in kallsyms"
want pat-fnot.err "lbr-snap: dry run: 4 to attach, 1 refused (capture errors); nothing attached"
t ":FILE: !PAT leaves out what it matches, wherever it comes" 0 \
	pat-fnot.out pat-fnot.err env "LBR_SNAP_ROOT=$FR" "$LBR" \
	-d "$T/no-device" -k file-vmlinux add --dry-run ':kernel/bpf/*.c' \
	':fs/*.c' '!split_walk' '!:lib/*' '!rep*'
want pat-fabs.out strscpy
t ":FILE: a unit named from the source tree, out of its build directory; an alias told by name" \
	0 pat-fabs.out /dev/null env "LBR_SNAP_ROOT=$FR" "$LBR" \
	-k file-vmlinux spec :lib/string.c
want pat-fnone.err "lbr-snap: :fs/nosuch.c: no source file of file-vmlinux matches"
t ":FILE: no unit matches: exit 1" 1 /dev/null pat-fnone.err \
	env "LBR_SNAP_ROOT=$FR" "$LBR" -k file-vmlinux spec :fs/nosuch.c
mkdir -p "$FR/usr/lib/debug/boot"
cp file-vmlinux "$FR/usr/lib/debug/boot/vmlinux-$(uname -r)"
t ":FILE: without -k, the -dbg package's vmlinux" 0 pat-file.out - \
	env "LBR_SNAP_ROOT=$FR" "$LBR" spec :fs/namei.c
id=$(readelf -n file-vmlinux | sed -n 's/.*Build ID: //p')
notes_file "$FR/sys/kernel/notes" 00112233445566778899aabbccddeeff00112233
want pat-fid.err "lbr-snap: file-vmlinux is not the running kernel's: build ID $id, the kernel's 00112233445566778899aabbccddeeff00112233"
t ":FILE: a vmlinux of another build ID: exit 1, nothing attached" 1 \
	/dev/null pat-fid.err env "LBR_SNAP_ROOT=$FR" "$LBR" -d "$T/no-device" \
	-k file-vmlinux add :fs/namei.c
want pat-fscope.err "lbr-snap: :fs/namei.c [ext4]: a source file is vmlinux's: no module scope"
t ":FILE: with a module scope: exit 2" 2 /dev/null pat-fscope.err \
	env "LBR_SNAP_ROOT=$FR" "$LBR" -k file-vmlinux spec ':fs/namei.c [ext4]'
fi
