# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# Symbols and source lines: kallsyms restricted or unreadable, names of
# odd bytes in JSON, the debug files' lookup order under a fake root,
# compressed vmlinux, -v with no source lines to be had.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

want restricted.err \
	"lbr-snap: restricted.txt: all addresses are 0 (kernel.kptr_restrict): printing raw addresses; run as root or set kernel.kptr_restrict=0" \
	"lbr-snap: stream.bin: skipping records of ABI version 2 (this tool knows 1)"
t "kptr_restrict (all-zero kallsyms): said once, raw hex" 0 \
	"$EXP/restricted.txt" restricted.err \
	"$LBR" -d stream.bin --kallsyms restricted.txt

want nokallsyms.err \
	"lbr-snap: nokallsyms.txt: No such file or directory: printing raw addresses" \
	"lbr-snap: stream.bin: skipping records of ABI version 2 (this tool knows 1)"
t "unreadable kallsyms: said once, raw hex" 0 "$EXP/restricted.txt" \
	nokallsyms.err "$LBR" -d stream.bin --kallsyms nokallsyms.txt

# Symbol and module names are bytes: JSON escapes them as it does a comm.
odd_names()
{
	printf 'ffffffff81000000 T _text\n' >odd.txt
	printf 'ffffffff81001000 T a"b\\c\001\177\303\251\377\342\202\n' >>odd.txt
	printf 'ffffffff81001200 t getname\360\237\230\200x\t[m"o\\d]\n' >>odd.txt
	"$LBR" -d stream.bin --kallsyms odd.txt --json >odd.jsonl 2>/dev/null ||
		return 1
	python3 "$HERE/check-json.py" record odd.jsonl || return 1
	python3 - <<'EOF'
import sys
# JSON escapes: \" \\ \u00XX; UTF-8 (é, U+1F600) is copied as it is.
want = (b'"from_sym":"a\\"b\\\\c\\u0001\\u007f\xc3\xa9\\u00ff\\u00e2\\u0082'
        b'+0x30","to_sym":"getname\xf0\x9f\x98\x80x+0x0 [m\\"o\\\\d]"')
if want not in open("odd.jsonl", "rb").read():
    sys.exit(f"no {want!r} in the JSON")
EOF
}
check "symbol names with quotes, control bytes, UTF-8, bad UTF-8: JSON" \
	odd_names

# The debug files for source lines under a fake root (LBR_SNAP_ROOT): the
# lookup order of vmlinux and of modules' files, as -v says it.
debug_lookup()
{
	local rel r=$T/root
	rel=$(uname -r)

	mkdir -p "$r/boot" "$r/proc" "$r/usr/lib/debug/boot" \
		"$r/usr/lib/debug/lib/modules/$rel/kernel/fs/ext4" \
		"$r/lib/modules/$rel/kernel/fs/ext4" \
		"$r/lib/modules/$rel/kernel/fs/xfs" "$r/lib/modules/$rel/extra"
	# An ELF with _text and DWARF stands in for vmlinux.
	printf 'void _text(void) {}\nvoid _start(void) {}\n' >vm.c
	gcc -g -O0 -nostdlib -static -o vm.elf vm.c || return 1
	echo junk >"$r/boot/vmlinux-$rel"	# found first, not an ELF
	cp vm.elf "$r/usr/lib/debug/boot/vmlinux-$rel"
	cp vm.elf "$r/usr/lib/debug/lib/modules/$rel/vmlinux"	# not reached
	printf '%s 4096 0 - Live 0xffffffffc0200000\n' ext4 xfs foo_bar gone \
		>"$r/proc/modules"
	# The -dbg tree first, then /lib/modules; .ko, .ko.xz, .ko.zst, .ko.gz.
	: >"$r/usr/lib/debug/lib/modules/$rel/kernel/fs/ext4/ext4.ko"
	: >"$r/lib/modules/$rel/kernel/fs/ext4/ext4.ko"
	: >"$r/lib/modules/$rel/kernel/fs/xfs/xfs.ko.zst"
	: >"$r/lib/modules/$rel/kernel/fs/xfs/xfs.ko.xz"
	: >"$r/lib/modules/$rel/extra/foo-bar.ko.gz"
	LBR_SNAP_ROOT=$r "$LBR" -v -d stream.bin "${KS[@]}" >/dev/null 2>lookup.err
	grep -v 'skipping records' lookup.err |
		sed "s|$r|ROOT|g; s|$rel|REL|g; s|\(/boot/vmlinux-REL: not usable: \).*|\1WHY|" \
		>lookup.txt
	want lookup.want \
		"lbr-snap: vmlinux ROOT/boot/vmlinux-REL: not usable: WHY" \
		"lbr-snap: vmlinux: ROOT/usr/lib/debug/boot/vmlinux-REL" \
		"lbr-snap: module ext4: ROOT/usr/lib/debug/lib/modules/REL/kernel/fs/ext4/ext4.ko" \
		"lbr-snap: module xfs: ROOT/lib/modules/REL/kernel/fs/xfs/xfs.ko.xz" \
		"lbr-snap: module foo_bar: ROOT/lib/modules/REL/extra/foo-bar.ko.gz" \
		"lbr-snap: module gone: no gone.ko, .ko.xz, .ko.zst or .ko.gz under ROOT/usr/lib/debug/lib/modules/REL or ROOT/lib/modules/REL: its addresses get no file:line"
	diff -u lookup.want lookup.txt || return 1

	# Nothing at all: where it looked is said.
	rm -rf "${r:?}/boot" "$r/usr/lib/debug/boot" "$r/usr/lib/debug/lib/modules/$rel/vmlinux"
	LBR_SNAP_ROOT=$r "$LBR" -v -d stream.bin "${KS[@]}" 2>&1 >/dev/null |
		grep 'vmlinux' | sed "s|$r|ROOT|g; s|$rel|REL|g" >lookup2.txt
	want lookup2.want \
		"lbr-snap: no vmlinux: looked for ROOT/boot/vmlinux-REL, ROOT/lib/modules/REL/build/vmlinux, ROOT/usr/lib/debug/boot/vmlinux-REL, ROOT/usr/lib/debug/lib/modules/REL/vmlinux (-k PATH gives one): kernel addresses get no file:line"
	diff -u lookup2.want lookup2.txt
}
if grep -q '^Source lines: built in' help.txt 2>/dev/null ||
   "$LBR" --help | grep -q '^Source lines: built in'; then
	check "-v: vmlinux and modules' debug files, in lookup order (fake root)" \
		debug_lookup
else
	skipped "-v debug file lookup" "built without libdw"
fi
# Compressed debug files: libdwfl decompresses xz, lbr-snap zstd.
compressed_vmlinux()
{
	local f rc=0

	printf 'void _text(void) {}\nvoid _start(void) {}\n' >vm.c
	gcc -g -O0 -nostdlib -static -o vm.elf vm.c || return 1
	xz -kf vm.elf && zstd -qf vm.elf -o vm.elf.zst || return 1
	head -c 100 vm.elf.zst >cut.zst
	for f in vm.elf vm.elf.xz vm.elf.zst; do
		"$LBR" -v -k "$f" -d paths.bin "${KS[@]}" 2>&1 >/dev/null |
			grep -qx "lbr-snap: vmlinux: $f" && continue
		echo "-k $f: not used"
		rc=1
	done
	"$LBR" -v -k cut.zst -d paths.bin "${KS[@]}" 2>&1 >/dev/null |
		grep -qx "lbr-snap: vmlinux cut.zst: not usable: bad zstd data" ||
		{ echo "a truncated .zst not said"; rc=1; }
	return "$rc"
}
if "$LBR" --help | grep -q '^Source lines: built in'; then
	check "-k vmlinux.xz, .zst: decompressed, a truncated .zst said" \
		compressed_vmlinux
fi
want noroot.err "lbr-snap: no source lines: kallsyms.txt is not /proc/kallsyms, and no -k vmlinux"
no_lines_said()
{
	{ "$LBR" -v -d paths.bin "${KS[@]}" >/dev/null; } 2>&1
}
t "-v: a kallsyms file and no -k: no source lines, said" 0 noroot.err - \
	no_lines_said
