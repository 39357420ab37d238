# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# record -o and -i: the recording (0600, its header, kallsyms whole),
# replayed with its own symbols (text, JSON, report, -n), a vmlinux of
# another build ID named, a recording of a recording, cut or wrong inputs
# (exit 6), what record refuses.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

# A recording of the synthetic stream made with kallsyms.txt replays with
# those symbols on this machine, whatever its own kallsyms, and the same
# stream read with other symbols prints other names: the recording, not
# the machine, symbolizes.
sed 's/^ffffffff81/ffffffff82/' kallsyms.txt >moved.txt
t "record -o: the synthetic stream, recorded" 0 /dev/null - \
	"$LBR" -d stream.bin --kallsyms kallsyms.txt record -o rec.bin
recording_header()
{
	local mode
	mode=$(stat -c %a rec.bin) || return 1
	[ "$mode" = 600 ] || { echo "rec.bin has mode $mode, not 600"; return 1; }
	head -n 4 rec.bin | python3 -c '
import re, sys
lines = sys.stdin.read().split("\n")
want = [r"lbr-snap recording 1$", r"release \S+$", r"build-id ([0-9a-f]+|-)$",
	r"(module \S+ \S+ \S+|kallsyms \d+)$"]
for l, w in zip(lines, want):
	if not re.match(w, l):
		sys.exit("header line %r is not %s" % (l, w))
'
	grep -aq "^kallsyms $(stat -c %s kallsyms.txt)$" rec.bin ||
		{ echo "no 'kallsyms $(stat -c %s kallsyms.txt)' line"; return 1; }
}
check "record -o: a 0600 file, its header, then kallsyms.txt whole" \
	recording_header
t "-i: the recording prints as the stream did with its kallsyms" 0 \
	"$EXP/stream.txt" /dev/null "$LBR" -i rec.bin
t "-i --json: the same records as --json of the stream" 0 - /dev/null \
	"$LBR" -i rec.bin --json
mv out.txt replay.json
"$LBR" -d stream.bin "${KS[@]}" --json >direct.json 2>/dev/null
check "-i --json: equal to the stream's --json" cmp direct.json replay.json
other_symbols()
{
	"$LBR" -d stream.bin --kallsyms moved.txt >moved-out.txt 2>/dev/null
	! cmp -s "$EXP/stream.txt" moved-out.txt ||
		{ echo "other symbols printed the same"; return 1; }
	"$LBR" -d stream.bin --kallsyms moved.txt record -o moved.bin 2>/dev/null &&
		"$LBR" -i moved.bin >moved-replay.txt 2>/dev/null &&
		cmp moved-out.txt moved-replay.txt
}
check "-i: a recording made with other symbols replays with those" \
	other_symbols
t "-i report: the recording's report is the stream's" 0 - - \
	"$LBR" -i rec.bin report
mv out.txt replay-report.txt
"$LBR" -d stream.bin "${KS[@]}" report >direct-report.txt 2>/dev/null
check "-i report: equal to the stream's report" \
	cmp direct-report.txt replay-report.txt
t "record -n 2: two records" 0 /dev/null - \
	"$LBR" -d stream.bin "${KS[@]}" -n 2 record -o two.bin
"$LBR" -i two.bin --json >two.json 2>/dev/null
check "record -n 2: the recording holds two records" \
	test "$(wc -l <two.json)" = 2

# A vmlinux that is not the recorded kernel is named.
printf 'int main(void) { return 0; }\n' >elf.c
gcc -o elf-a -Wl,--build-id=0x00112233 elf.c
python3 - rec.bin <<'PY'
import sys
p = sys.argv[1]
d = open(p, "rb").read()
head, rest = d.split(b"\nbuild-id ", 1)
rest = rest.split(b"\n", 1)[1]
open("rec-id.bin", "wb").write(head + b"\nbuild-id 00112233\n" + rest)
open("rec-other.bin", "wb").write(head + b"\nbuild-id 44556677\n" + rest)
PY
t "-i -k: the recorded kernel's vmlinux: no warning" 0 "$EXP/stream.txt" \
	/dev/null "$LBR" -i rec-id.bin -k elf-a
want mismatch.err "lbr-snap: elf-a: build ID 00112233, not the recorded kernel's (44556677): its source lines may be wrong"
t "-i -k: another vmlinux is named" 0 "$EXP/stream.txt" mismatch.err \
	"$LBR" -i rec-other.bin -k elf-a
want verbose.err "lbr-snap: rec-id.bin: recorded on $(sed -n 's/^release //p' rec.bin | head -n 1), kernel build ID 00112233"
t "-i -v: where it was recorded" 0 "$EXP/stream.txt" - \
	"$LBR" -i rec-id.bin -v
check "-i -v: says the release and build ID" grep -qF -f verbose.err err.txt

# A recording made from a recording says where the records were made,
# not where they were copied: its header (release, build ID, modules,
# lines not known yet) and kallsyms are the input's.  It once got this
# machine's release and build ID (and -i did not take record at all).
python3 - rec.bin <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
head, rest = d.split(b"\nkallsyms ", 1)
open("rec-far.bin", "wb").write(
    b"lbr-snap recording 1\nrelease 9.9.9-far\nbuild-id 8899aabb\n"
    b"module far_mod 0xffffffffc0400000 ccdd\nfuture-line x\n"
    b"kallsyms " + rest)
PY
rerecord()
{
	"$LBR" -i rec-far.bin record -o rerec.bin || return 1
	python3 - rec-far.bin rerec.bin <<'PY' || return 1
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:])
if a.split(b"\nrecords\n", 1)[0] != b.split(b"\nrecords\n", 1)[0]:
    sys.exit("the header and kallsyms are not the input's:\n" +
             b.split(b"\nkallsyms ", 1)[0].decode(errors="replace"))
PY
	"$LBR" -i rec-far.bin --json >far.json 2>/dev/null &&
		"$LBR" -i rerec.bin --json >rerec.json 2>/dev/null &&
		cmp far.json rerec.json || return 1
	"$LBR" -n 2 -i rec-far.bin record -o rerec2.bin &&
		"$LBR" -i rerec2.bin --json >rerec2.json 2>/dev/null &&
		[ "$(wc -l <rerec2.json)" = 2 ] ||
		{ echo "-n 2 -i record: not two records"; return 1; }
	"$LBR" -i rerec2.bin -v >/dev/null 2>rerec.err
	grep -qx "lbr-snap: rerec2.bin: recorded on 9.9.9-far, kernel build ID 8899aabb" rerec.err ||
		{ cat rerec.err; return 1; }
}
check "-i IN record -o OUT: the input's header and kallsyms, its records" \
	rerecord

# Not a recording, or a cut one: exit 6, saying why.
want notrec.err "lbr-snap: stream.bin: not an lbr-snap recording: no 'lbr-snap recording 1' line"
t "-i of a record stream: exit 6" 6 /dev/null notrec.err "$LBR" -i stream.bin
# Cut 100 bytes into its kallsyms: a file says its size is wrong, a pipe
# runs out before the records line.
at=$(grep -abo '^kallsyms [0-9]*$' rec.bin | cut -d: -f1)
head -c $((at + 120)) rec.bin >cut.bin
want cut.err "lbr-snap: cut.bin: not an lbr-snap recording: a bad kallsyms size"
t "-i of a recording cut in its kallsyms: exit 6" 6 /dev/null cut.err \
	"$LBR" -i cut.bin
want cutpipe.err "lbr-snap: /dev/stdin: not an lbr-snap recording: no records line after kallsyms"
t "-i of a cut recording through a pipe: exit 6" 6 /dev/null cutpipe.err \
	sh -c 'cat cut.bin | "$1" -i /dev/stdin' sh "$LBR"
t "-i from a pipe: the records as from the file" 0 "$EXP/stream.txt" /dev/null \
	sh -c 'cat rec.bin | "$1" -i /dev/stdin' sh "$LBR"
# An existing file of other mode becomes 0600; a symlink is not followed.
printf 'old\n' >old.bin
chmod 644 old.bin
t "record -o over an existing 0644 file" 0 /dev/null - \
	"$LBR" -d stream.bin "${KS[@]}" record -o old.bin
check "record -o: the existing file is now 0600, a recording" \
	sh -c 'test "$(stat -c %a old.bin)" = 600 && head -n 1 old.bin | grep -qx "lbr-snap recording 1"'
ln -sf old.bin link.bin
t "record -o a symlink: refused, exit 1" 1 /dev/null - \
	"$LBR" -d stream.bin "${KS[@]}" record -o link.bin
# kptr_restrict's zeros: nothing to symbolize with, refused (exit 4).
want zeros.err "lbr-snap: restricted.txt: no addresses (kernel.kptr_restrict): run as root, or set kernel.kptr_restrict=0, to record"
t "record with a kallsyms of zeros: exit 4" 4 /dev/null zeros.err \
	"$LBR" -d stream.bin --kallsyms restricted.txt record -o zeros.bin
# Not the device: -i of a character device reads nothing.
want chr.err "lbr-snap: /dev/null: not a file or a pipe: -i replays a recording (record -o)"
t "-i of a character device: refused, exit 2" 2 /dev/null chr.err \
	"$LBR" -i /dev/null
usage "record --json" "--json does not apply to record" \
	-d stream.bin --json record -o j.bin
usage "record -k" "-k and -v do not apply to record" \
	-d stream.bin -k x record -o j.bin
usage "record without -o" "record needs -o FILE" -d stream.bin record
usage "-o without record" "-o only applies to record and why" -o x.bin stats
usage "-i with info" "-i only applies to streaming, report, record and why" -i rec.bin info
usage "-i with -d" "-i replays a recording: not with -d" -i rec.bin -d stream.bin
usage "-i with --kallsyms" "-i brings its own symbols: not with --kallsyms" \
	-i rec.bin --kallsyms kallsyms.txt
