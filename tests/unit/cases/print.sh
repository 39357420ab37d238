# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# How a record prints: the text layout, source paths (text, JSON, report,
# a module built out of tree), --full and --only-target, JSON's ts past
# 2^53 and its probe and before_target flags.  Reads burst.sh's bulk.bin;
# writes paths.jsonl, which report.sh reads.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

# Readable text: each record's arrows in one column, its indexes padded,
# the caller and the numbering under the header (and its call stack), a
# blank line after it.
text_layout()
{
	"$LBR" -d bulk.bin --kallsyms bulk-kallsyms.txt -n 50 --full >layout.txt ||
		return 1
	cat "$EXP/stream.txt" "$EXP/paths-only-target-full.txt" >>layout.txt
	python3 - layout.txt <<'EOF'
import re, sys
recs = open(sys.argv[1]).read().split("\n\n")
if recs.pop() != "":
    sys.exit("no blank line after the last record")
wide = 0
for n, rec in enumerate(recs, 1):
    lines = rec.split("\n")
    # the call stack, or the note on its absence, comes first
    at = 1
    if lines[1] == "  call stack (the caller first):":
        at = 2
        while lines[at].startswith("    "):
            at += 1
        if at == 2:
            sys.exit(f"record {n}: a call stack without frames")
    elif lines[1].startswith("  (no call stack"):
        at = 2
    m = re.match(r"  returned to \S+; (no branches|1 branch, #0|(\d+) branches, #0 \(oldest\) to #(\d+) \(newest\))$", lines[at])
    if not m or (m.group(2) and int(m.group(3)) != int(m.group(2)) - 1):
        sys.exit(f"record {n}: line {at + 1} {lines[at]!r}")
    br = [l for l in lines if l.startswith("  [#")]
    cols = {l.index(" -> ") for l in br}
    starts = {len(re.match(r"  \[#\d+\] +", l).group(0)) for l in br}
    if len(cols) > 1 or len(starts) > 1:
        sys.exit(f"record {n}: not aligned:\n" + "\n".join(br))
    wide = max(wide, len(br))
if wide < 10:
    sys.exit("no record with 10 branches or more to check")
EOF
}
check "text: arrows and indexes aligned, caller and numbering, blank lines" \
	text_layout

# Source paths: relative to the compilation directory in text, as the
# debug info has them in JSON.
src_paths()
{
	local text start addr

	mkdir -p "$T/src/sub"
	printf 'int x;\nvoid _text(void) {}\nvoid _start(void) { x++; }\n' >"$T/src/sub/vm2.c"
	(cd "$T/src" && gcc -g -O0 -nostdlib -static -o "$T/vm2.elf" "$T/src/sub/vm2.c") ||
		return 1
	text=$(nm "$T/vm2.elf" | awk '$3 == "_text" { print $1 }')
	start=$(nm "$T/vm2.elf" | awk '$3 == "_start" { print $1 }')
	addr=$(printf '0x%x' $((0xffffffff81000000 + 0x$start - 0x$text + 4)))
	./gen-records addr "$addr" >addr.bin
	"$LBR" -d addr.bin "${KS[@]}" -k "$T/vm2.elf" >addr.txt || return 1
	grep -q '^  \[#0\] _stext+0x[0-9a-f]* (sub/vm2\.c:3) -> _stext+0x[0-9a-f]* (sub/vm2\.c:3)$' addr.txt ||
		{ echo "text:"; cat addr.txt; return 1; }
	"$LBR" -d addr.bin "${KS[@]}" -k "$T/vm2.elf" --json >addr.jsonl || return 1
	grep -q "\"from_file\":\"$T/src/sub/vm2.c\",\"from_line\":3," addr.jsonl ||
		{ echo "JSON:"; cat addr.jsonl; return 1; }
	# Source lines too come from memory for a list printed before.
	cat addr.bin addr.bin addr.bin >addr3.bin
	one_by_one addr3.bin kallsyms.txt -k "$T/vm2.elf" || return 1
	one_by_one addr3.bin kallsyms.txt -k "$T/vm2.elf" --json || return 1
	[ "$(grep -c '"from_line":3,' whole.out)" = 3 ] ||
		{ echo "3 records, not all with their line:"; cat whole.out; return 1; }
	# report shows them as the records do (it once printed none).
	"$LBR" -d addr3.bin "${KS[@]}" -k "$T/vm2.elf" report >addr-report.txt ||
		return 1
	grep -q '^    \[#0\] _stext+0x[0-9a-f]* (sub/vm2\.c:3) -> _stext+0x[0-9a-f]* (sub/vm2\.c:3)$' addr-report.txt ||
		{ echo "report:"; cat addr-report.txt; return 1; }
	"$LBR" -d addr3.bin "${KS[@]}" -k "$T/vm2.elf" report --json \
		>addr-report.jsonl || return 1
	python3 "$HERE/check-json.py" report addr-report.jsonl || return 1
	grep -q "\"from_file\":\"$T/src/sub/vm2.c\",\"from_line\":3," addr-report.jsonl ||
		{ echo "report --json:"; cat addr-report.jsonl; return 1; }
}
if "$LBR" --help | grep -q '^Source lines: built in'; then
	check "source paths: relative to the build directory in text, whole in JSON; report too" \
		src_paths
fi

# A module built out of tree: kbuild compiles it in the kernel's tree
# (DW_AT_comp_dir) from sources elsewhere, whose absolute paths text
# showed whole.  Now they are relative to the module's source root, the
# directory common to its units outside comp_dir; JSON keeps them whole.
# Two units, one in a subdirectory, built from a directory of their own.
module_paths()
{
	local text addr name want

	rm -rf "$T/modsrc" "$T/modbuild"
	mkdir -p "$T/modsrc/sub" "$T/modbuild"
	printf 'int y;\nvoid helper(void)\n{\n\ty++;\n}\n' >"$T/modsrc/sub/b.c"
	printf 'int x;\nvoid helper(void);\nvoid _text(void) {}\nvoid _start(void) { x++; helper(); }\n' \
		>"$T/modsrc/a.c"
	(cd "$T/modbuild" &&
	 gcc -g -O0 -nostdlib -static -o "$T/mod.elf" "$T/modsrc/a.c" "$T/modsrc/sub/b.c") ||
		return 1
	text=$(nm "$T/mod.elf" | awk '$3 == "_text" { print $1 }')
	for name in _start:a.c:4 helper:sub/b.c:4; do
		want=${name#*:}
		addr=$(nm "$T/mod.elf" | awk -v s="${name%%:*}" '$3 == s { print $1 }')
		addr=$(printf '0x%x' $((0xffffffff81000000 + 0x$addr - 0x$text + 8)))
		./gen-records addr "$addr" >modaddr.bin
		"$LBR" -d modaddr.bin "${KS[@]}" -k "$T/mod.elf" >modaddr.txt || return 1
		grep -q "^  \[#0\] _stext+0x[0-9a-f]* ($want) -> " modaddr.txt ||
			{ echo "want $want:"; cat modaddr.txt; return 1; }
		"$LBR" -d modaddr.bin "${KS[@]}" -k "$T/mod.elf" --json >modaddr.jsonl ||
			return 1
		grep -q "\"from_file\":\"$T/modsrc/${want%:*}\"" modaddr.jsonl ||
			{ echo "JSON, want $T/modsrc/${want%:*}:"; cat modaddr.jsonl; return 1; }
	done
}
if "$LBR" --help | grep -q '^Source lines: built in'; then
	check "source paths outside the build directory: relative to the module's source root" \
		module_paths
fi

# ---------------------------------------------------------- trimming, JSON

t "--full shows the probe-path entries" 0 "$EXP/stream-full.txt" \
	"$EXP/stream.err" "$LBR" -d stream.bin "${KS[@]}" --full
t "--only-target --full: entries before the target cut, said how many" 0 \
	"$EXP/paths-only-target-full.txt" /dev/null \
	"$LBR" -d paths.bin "${KS[@]}" --only-target --full

# Timestamps past 2^53 ns: ts_sec and ts_nsec exact where a double is not.
./gen-records bigts >bigts.bin
big_ts()
{
	"$LBR" -d bigts.bin --json >bigts.jsonl || return 1
	python3 "$HERE/check-json.py" record bigts.jsonl || return 1
	grep -c '^{"ts":9007199254740993,"ts_sec":9007199,"ts_nsec":254740993,' bigts.jsonl |
		grep -qx 1 || { echo "no exact ts_sec/ts_nsec for 2^53 + 1"; return 1; }
	grep -c '^{"ts":18446744073709551615,"ts_sec":18446744073,"ts_nsec":709551615,' bigts.jsonl |
		grep -qx 1 || { echo "no exact ts_sec/ts_nsec for 2^64 - 1"; return 1; }
	# As a reader with double-precision numbers sees them.
	python3 -c '
import json, sys
for line in open("bigts.jsonl"):
    r = json.loads(line, parse_int=float)
    if int(r["ts_sec"]) * 10**9 + int(r["ts_nsec"]) not in (2**53 + 1, 2**64 - 1):
        sys.exit(f"ts_sec, ts_nsec lose digits as doubles: {r}")
'
	"$LBR" -d bigts.bin | grep -c '^9007199\.254740 \|^18446744073\.709551 ' |
		grep -qx 2 || { echo "text TIME of the late records wrong"; return 1; }
}
check "JSON ts past 2^53: ts_sec and ts_nsec exact, ts kept" big_ts

# The JSON flags must mark what text output hides and what it cuts.
json_flags()
{
	"$LBR" -d paths.bin "${KS[@]}" --json >paths.jsonl || return 1
	python3 "$HERE/check-json.py" record paths.jsonl || return 1
	python3 -c '
import json, sys
for n, line in enumerate(open("paths.jsonl"), 1):
    r = json.loads(line)
    br = r["branches"]
    probe = [b["probe"] for b in br]
    want = [i >= len(br) - r["probe_entries"] for i in range(len(br))]
    if probe != want:
        sys.exit(f"record {n}: probe flags {probe}")
    cut = [b["before_target"] for b in br]
    k = cut.count(True)
    if cut != [True] * k + [False] * (len(br) - k) or k != (n - 1) % 3 and br:
        sys.exit(f"record {n}: before_target flags {cut}")
'
}
check "JSON keeps every branch, flags probe and before_target" json_flags
