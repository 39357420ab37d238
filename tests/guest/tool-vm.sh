#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of the lbr-snap tool tests: boot the test guest on each CPU,
# run tests/guest/tool-tests.sh in it, and validate on the host the JSON it
# printed (tests/unit/check-json.py, check-report.py; the guest has no
# python3).  Prints one TAP stream: the plan "1..N" first, "[cpu] " before
# each test name, and "# Totals: pass:N fail:N skip:N"; exits 1 if a test
# failed.
#
#   tests/guest/tool-vm.sh [--console DIR] [CPU...]   (default: stock lbr-legacy)
#
# The plan is fixed here, per CPU (plan_cpu below), never taken from what
# the guest printed: a guest that dies, hangs, or prints a test or a JSON
# block fewer gets a "not ok" for each missing one, and N stays the same.
#
# --console DIR: boot nothing; take each CPU's guest output from
# DIR/CPU.console (run-vm.sh's exit status from DIR/CPU.rc, 0 without it).
# The host-side checks alone, on crafted output (tests/test-plan.sh).
#
# LBR_SNAP_BUILD and LBR_LAB_QEMU are passed on to tests/vm/run-vm.sh.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
UNIT=$ROOT/tests/unit
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# ------------------------------------------------------------------ plan
#
# What each CPU's guest must print, and so the tests this script reports
# for it (a guest that printed no block lost its tests without
# a failure, 20 tests on one CPU and 22 on the other).  A CPU without a
# plan here is an error.
#
# Every CPU: tool-tests.sh's 16 results (its first line is "1..16"; the
# LBR-only ones skip, with the reason, where the backend is none), then
# one test that the guest printed exactly these, its "# Totals:", the
# planned number of skips, and that run-vm.sh exited 0 (the kernel-log
# gate).  Then one test per planned JSON block ("@@JSON KIND NAME" ...
# "@@END"; missing, unended or invalid fails), the recount of report
# against its records, and last the guest's recording ("@@B64
# recording") replayed on the host (check_replay).
#
# stock, skylake (no LBR): 4 guest skips (the known path, report paths,
# source lines, trimming); blocks trace-all, report, report-records,
# fexit, replay.  16 + 1 + 5 + 1 + 1 = 24 tests.
#
# lbr-legacy, lbr-arch (the lab's LBR CPUs): no skip; the source-lines
# records (srclines) as well, and one more test that their line numbers
# match the test target's source.  16 + 1 + 6 + 1 + 1 + 1 = 26 tests.
#
# The host's tools/lbr-snap replays: built here if it is not.
GUEST_TESTS=16
BLOCKS_ALL="record:trace-all report:report record:report-records record:fexit
	record:replay"

plan_cpu()	# plan_cpu CPU: set SKIPS, BLOCKS, LINES (1: check_lines), NTESTS
{
	case "$1" in
	stock|skylake)
		SKIPS=4 BLOCKS=$BLOCKS_ALL LINES=0 ;;
	lbr-legacy|lbr-arch|lbr-legacy-pmu|lbr-arch-pmu|lbr-legacy-pmu3)
		SKIPS=0 BLOCKS="$BLOCKS_ALL record:srclines" LINES=1 ;;
	*)
		return 1 ;;
	esac
	set -- $BLOCKS
	NTESTS=$((GUEST_TESTS + 1 + $# + 1 + LINES + 1))
}

# ------------------------------------------------------------------- TAP

nr=0 pass=0 fail=0 skip=0

tap()	# tap ok|not-ok|skip NAME [REASON-FILE]
{
	nr=$((nr + 1))
	case "$1" in
	ok)
		pass=$((pass + 1))
		echo "ok $nr - $2" ;;
	skip)
		skip=$((skip + 1))
		echo "ok $nr - $2" ;;
	*)
		fail=$((fail + 1))
		echo "not ok $nr - $2"
		[ -n "${3:-}" ] && sed 's/^/# /' "$3" ;;
	esac
}

# The guest's TAP lines, renumbered, the rest as comments.  Only results
# numbered 1..GUEST_TESTS, each once, are relayed; the others, the
# guest's plan and its totals are noted in $dir/extra, $dir/plan and
# $dir/totals for the end-of-guest test; $dir/seen.K marks result K.
relay()
{
	local cpu=$1 dir=$2 line k kind name

	while IFS= read -r line; do
		line=${line%$'\r'}
		case "$line" in
		"ok "*|"not ok "*)
			kind=${line%%ok *}ok
			k=${line#"$kind "}
			k=${k%% *}
			name=${line#"$kind $k"}
			name=${name#" - "}
			if [[ "$k" =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] &&
			   [ "$k" -le "$GUEST_TESTS" ] && [ ! -e "$dir/seen.$k" ]; then
				: >"$dir/seen.$k"
				case "$line" in
				"not ok "*) tap not-ok "[$cpu] $name" ;;
				*"# SKIP"*) tap skip "[$cpu] $name" ;;
				*) tap ok "[$cpu] $name" ;;
				esac
			else
				echo "# (not in the plan) $line"
				echo "result beyond the plan or repeated: $line" >>"$dir/extra"
			fi ;;
		"1.."*) echo "${line#1..}" >>"$dir/plan" ;;
		"# Totals:"*) echo "$line" >>"$dir/totals" ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done
}

# Split the guest's output: @@JSON KIND NAME ... @@END blocks into files
# NAME.KIND, and NAME.KIND.end once @@END closed the block.
split_json()
{
	awk -v dir="$2" '
		{ sub(/\r$/, "") }
		/^@@JSON / { if (f) close(f); f = dir "/" $3 "." $2; next }
		/^@@B64 / { if (f) close(f); f = dir "/" $2 ".b64"; next }
		/^@@END$/ { if (f) { close(f); printf "" > (f ".end"); close(f ".end") }
			    f = ""; next }
		f { print > f; next }
		{ print }' "$1"
}

# block_ok NAME.KIND DIR WHY: the guest printed that block to its @@END.
block_ok()
{
	local name=${1%.*} kind=${1##*.}

	if [ ! -e "$2/$1" ]; then
		echo "the guest printed no '@@JSON $kind $name' block" >"$3"
		return 1
	fi
	if [ ! -e "$2/$1.end" ]; then
		echo "the '@@JSON $kind $name' block has no @@END (the guest died in it?)" >"$3"
		return 1
	fi
}

# The end of one guest: all of its plan printed, nothing more, cleanly.
check_guest_end()
{
	local cpu=$1 dir=$2 rc=$3 k missing='' gp gt sum f b planned

	: >"$T/why"
	for k in $(seq "$GUEST_TESTS"); do
		[ -e "$dir/seen.$k" ] || missing="$missing $k"
	done
	[ -z "$missing" ] ||
		echo "guest results missing:$missing" >>"$T/why"
	gp=$(cat "$dir/plan" 2>/dev/null)
	[ "$gp" = "$GUEST_TESTS" ] ||
		echo "the guest's plan is '1..${gp:-(none)}', this script's 1..$GUEST_TESTS" >>"$T/why"
	[ -e "$dir/extra" ] && cat "$dir/extra" >>"$T/why"
	gt=$(cat "$dir/totals" 2>/dev/null)
	if [ -z "$gt" ]; then
		echo "the guest printed no '# Totals:' (it died or hung); its last lines:" >>"$T/why"
		tail -n 20 "$dir/console" | sed 's/^/  /' >>"$T/why"
	else
		if [[ "$gt" =~ ^"# Totals: pass:"([0-9]+)" fail:"([0-9]+)" skip:"([0-9]+)$ ]]; then
			sum=$((BASH_REMATCH[1] + BASH_REMATCH[2] + BASH_REMATCH[3]))
			[ "$sum" = "$GUEST_TESTS" ] ||
				echo "the guest's '$gt' adds up to $sum, not $GUEST_TESTS" >>"$T/why"
			[ "${BASH_REMATCH[3]}" = "$SKIPS" ] ||
				echo "the guest's '$gt': the plan for $cpu is skip:$SKIPS" >>"$T/why"
		else
			echo "the guest's totals are not one '# Totals: pass:N fail:N skip:N': $gt" >>"$T/why"
		fi
		if [ "$rc" != 0 ] && grep -q ' fail:0 ' <<<"$gt"; then
			echo "run-vm.sh exit $rc (kernel log report?)" >>"$T/why"
		fi
	fi
	planned=" $(echo $BLOCKS) "
	for f in "$dir"/*.record "$dir"/*.report; do
		[ -e "$f" ] || continue
		b=$(basename "$f")
		[[ "$planned" == *" ${b##*.}:${b%.*} "* ]] ||
			echo "a block not in the plan for $cpu: @@JSON ${b##*.} ${b%.*}" >>"$T/why"
	done
	if [ -s "$T/why" ]; then
		tap not-ok "[$cpu] the guest printed its $GUEST_TESTS planned results ($SKIPS skipped) and # Totals, and exited cleanly" "$T/why"
	else
		tap ok "[$cpu] the guest printed its $GUEST_TESTS planned results ($SKIPS skipped) and # Totals, and exited cleanly"
	fi
}

check_json()
{
	local cpu=$1 dir=$2 b kind name

	for b in $BLOCKS; do
		kind=${b%%:*} name=${b#*:}
		if ! block_ok "$name.$kind" "$dir" "$T/why"; then
			tap not-ok "[$cpu] JSON of $name is valid ($kind)" "$T/why"
		elif python3 "$UNIT/check-json.py" "$kind" "$dir/$name.$kind" >"$T/why" 2>&1; then
			tap ok "[$cpu] JSON of $name is valid ($kind)"
		else
			tap not-ok "[$cpu] JSON of $name is valid ($kind)" "$T/why"
		fi
	done
	if ! block_ok report.report "$dir" "$T/why" ||
	   ! block_ok report-records.record "$dir" "$T/why"; then
		tap not-ok "[$cpu] report --json equals a recount of the records" "$T/why"
	elif python3 "$UNIT/check-report.py" "$dir/report-records.record" \
		"$dir/report.report" >"$T/why" 2>&1; then
		tap ok "[$cpu] report --json equals a recount of the records"
	else
		tap not-ok "[$cpu] report --json equals a recount of the records" "$T/why"
	fi
}

# Line numbers of the test target's source that srclines.record must show.
check_lines()
{
	local cpu=$1 rec=$2/srclines.record src=$ROOT/tests/target/lbr_snap_test_target.c

	if ! block_ok srclines.record "$2" "$T/why"; then
		tap not-ok "[$cpu] source lines of lbr_test_int match $(basename "$src")" "$T/why"
		return
	fi
	if python3 - "$rec" "$src" >"$T/why" 2>&1 <<'PY'
import json, re, sys

rec_path, src_path = sys.argv[1], sys.argv[2]
src = open(src_path).read().split("\n")


def line_of(pattern):
    for n, text in enumerate(src, 1):
        if re.search(pattern, text):
            return n
    sys.exit(f"{src_path}: no line matches {pattern}")


start = line_of(r"^noinline int lbr_test_int\(")
end = next(n for n in range(start, len(src) + 1) if src[n - 1] == "}")
call = line_of(r"return lbr_test_fail\(v\);")
fail = line_of(r"^noinline int lbr_test_fail\(")
target = "lbr_snap_test_target.c"
seen_call = False
for line in open(rec_path):
    for b in json.loads(line)["branches"]:
        for side in ("from", "to"):
            sym = b[side + "_sym"] or ""
            if not sym.startswith("lbr_test_int+"):
                continue
            f, n = b[side + "_file"], b[side + "_line"]
            if not f or not f.endswith(target) or not start <= n <= end:
                sys.exit(f"{sym} at {f}:{n}, not in {target}:{start}-{end}")
        if b["to_sym"] == "lbr_test_fail+0x0 [lbr_snap_test_target]":
            seen_call = True
            if b["from_line"] != call or not fail <= b["to_line"] <= fail + 1:
                sys.exit(f"jump to lbr_test_fail from line {b['from_line']} "
                         f"to {b['to_line']}; source: {call} to {fail}")
if not seen_call:
    sys.exit("no jump to lbr_test_fail in the records")
print(f"lbr_test_int {start}-{end}, call at {call}, lbr_test_fail at {fail}")
PY
	then
		tap ok "[$cpu] source lines of lbr_test_int match $(basename "$src") ($(cat "$T/why"))"
	else
		tap not-ok "[$cpu] source lines of lbr_test_int match $(basename "$src")" "$T/why"
	fi
}

# The guest's recordings, replayed on the host by this tree's lbr-snap:
# exactly the JSON the guest's own replay printed (its symbols, not the
# host's); record -o's, and why -o's through why -i (its origin
# step_into(), and in fs/namei.c where the cache holds the recorded
# kernel's debug vmlinux: tests/vm/dbg-vmlinux.sh).
check_why_replay()
{
	local dir=$1 rel dbg

	block_ok why-replay.why "$dir" "$T/why" || return 1
	if ! grep -q '^@@B64 why-recording' "$dir/console"; then
		echo "the guest printed no '@@B64 why-recording' block" >"$T/why"
		return 1
	fi
	base64 -d "$dir/why-recording.b64" | gunzip >"$dir/why.rec" 2>"$T/why" &&
	"$ROOT/tools/lbr-snap" --json why -i "$dir/why.rec" >"$dir/host-why.json" 2>"$T/why" &&
	diff "$dir/why-replay.why" "$dir/host-why.json" >"$T/why" || return 1
	if ! grep -q '"origin":{"func":"' "$dir/host-why.json"; then
		echo "no failure with an origin in why -i's answer" >"$T/why"
		return 1
	fi
	rel=$(grep -a -m1 '^release ' "$dir/why.rec" | cut -d' ' -f2)
	dbg=${LBR_SNAP_CACHE:-$ROOT/.cache}/dbg/$rel/root/usr/lib/debug/boot/vmlinux-$rel
	WHY_LINES=
	# A line needs the origin's branch: none without LBR (stock).
	[ -n "$rel" ] && [ -s "$dbg" ] &&
		grep -q '^{"syscall":"openat",.*"origin":{"func":"step_into","off":[0-9]' \
			"$dir/host-why.json" || return 0
	"$ROOT/tools/lbr-snap" -k "$dbg" --json why -i "$dir/why.rec" \
		>"$dir/host-why-lines.json" 2>"$T/why" || return 1
	if ! grep -q '^{"syscall":"openat",.*"origin":{"func":"step_into","off":[0-9]*,"file":"fs/namei.c","line":[1-9]' \
		"$dir/host-why-lines.json"; then
		{ echo "no origin in fs/namei.c with $dbg:"; head -c 800 "$dir/host-why-lines.json"; } >"$T/why"
		return 1
	fi
	WHY_LINES=", why's origin in fs/namei.c with the debug vmlinux"
}

check_replay()
{
	local cpu=$1 dir=$2 name="[$1] recordings made in the guest (record, why) replay on the host as in the guest"

	if ! block_ok recording.b64 "$dir" "$T/why" ||
	   ! block_ok replay.record "$dir" "$T/why"; then
		tap not-ok "$name" "$T/why"
		return
	fi
	if ! base64 -d "$dir/recording.b64" | gunzip >"$dir/rec.bin" 2>"$T/why"; then
		tap not-ok "$name" "$T/why"
	elif ! "$ROOT/tools/lbr-snap" -i "$dir/rec.bin" --json >"$dir/host.json" 2>"$T/why"; then
		tap not-ok "$name" "$T/why"
	elif ! diff "$dir/replay.record" "$dir/host.json" >"$T/why"; then
		tap not-ok "$name" "$T/why"
	elif ! grep -q '"func":"[A-Za-z_]' "$dir/host.json"; then
		echo "no record with a symbolized function in the replay:" >"$T/why"
		head -c 600 "$dir/host.json" >>"$T/why"
		tap not-ok "$name" "$T/why"
	elif ! check_why_replay "$dir"; then
		tap not-ok "$name" "$T/why"
	else
		tap ok "$name ($(wc -l <"$dir/host.json") records, $(wc -c <"$dir/rec.bin") bytes; why: $(wc -l <"$dir/host-why.json") failures$WHY_LINES)"
	fi
}

run_cpu()
{
	local cpu=$1 dir=$T/$1 rc k

	plan_cpu "$cpu"
	mkdir -p "$dir"
	if [ -n "$consoles" ]; then
		cp "$consoles/$cpu.console" "$dir/console" 2>/dev/null ||
			: >"$dir/console"
		rc=$(cat "$consoles/$cpu.rc" 2>/dev/null || echo 0)
	else
		"$ROOT/tests/vm/run-vm.sh" --cpu "$cpu" \
			--script "$HERE/tool-tests.sh" >"$dir/console" 2>&1
		rc=$?
	fi
	split_json "$dir/console" "$dir" >"$dir/tap"
	relay "$cpu" "$dir" <"$dir/tap"
	for k in $(seq "$GUEST_TESTS"); do
		[ -e "$dir/seen.$k" ] ||
			tap not-ok "[$cpu] guest test $k of $GUEST_TESTS: no result (the guest did not print it)"
	done
	check_guest_end "$cpu" "$dir" "$rc"
	check_json "$cpu" "$dir"
	[ "$LINES" = 1 ] && check_lines "$cpu" "$dir"
	check_replay "$cpu" "$dir"
	[ "$nr" = "$((start + NTESTS))" ] ||
		{ echo "tool-vm.sh: $cpu: $((nr - start)) tests, its plan $NTESTS" >&2; exit 2; }
}

consoles=
if [ "${1:-}" = --console ]; then
	consoles=$2
	shift 2
fi
cpus=("$@")
[ ${#cpus[@]} = 0 ] && cpus=(stock lbr-legacy)
total=0
for cpu in "${cpus[@]}"; do
	if ! plan_cpu "$cpu"; then
		echo "1..1"
		echo "not ok 1 - no test plan for CPU $cpu in $0 (plan_cpu)"
		echo "# Totals: pass:0 fail:1 skip:0"
		exit 1
	fi
	total=$((total + NTESTS))
done
echo "1..$total"
[ -x "$ROOT/tools/lbr-snap" ] || make -s -C "$ROOT/tools" >&2
for cpu in "${cpus[@]}"; do
	start=$nr
	run_cpu "$cpu"
done
echo "# Totals: pass:$pass fail:$fail skip:$skip"
[ "$fail" = 0 ]
