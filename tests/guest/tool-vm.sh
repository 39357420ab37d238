#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of the lbr-snap tool tests: boot the test guest on each CPU,
# run tests/guest/tool-tests.sh in it, and validate on the host the JSON it
# printed (tests/unit/check-json.py, check-report.py; the guest has no
# python3).  Prints one TAP stream, "[cpu] " before each guest test name,
# and "# Totals: pass:N fail:N skip:N"; exits 1 if a test failed.
#
#   tests/guest/tool-vm.sh [CPU...]      (default: stock lbr-legacy)
#
# LBR_SNAP_BUILD and LBR_LAB_QEMU are passed on to tests/vm/run-vm.sh.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
UNIT=$ROOT/tests/unit
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

nr=0 pass=0 fail=0 skip=0

tap()	# tap ok|not-ok NAME [REASON-FILE]
{
	nr=$((nr + 1))
	if [ "$1" = ok ]; then
		pass=$((pass + 1))
		echo "ok $nr - $2"
	else
		fail=$((fail + 1))
		echo "not ok $nr - $2"
		[ -n "${3:-}" ] && sed 's/^/# /' "$3"
	fi
}

# The guest's TAP lines, renumbered; the rest as comments.
relay()
{
	local cpu=$1 line name

	while IFS= read -r line; do
		line=${line%$'\r'}
		case "$line" in
		"ok "*"# SKIP"*)
			name=${line#ok * - }
			nr=$((nr + 1)) skip=$((skip + 1))
			echo "ok $nr - [$cpu] $name" ;;
		"ok "*)
			name=${line#ok * - }
			nr=$((nr + 1)) pass=$((pass + 1))
			echo "ok $nr - [$cpu] $name" ;;
		"not ok "*)
			name=${line#not ok * - }
			nr=$((nr + 1)) fail=$((fail + 1))
			echo "not ok $nr - [$cpu] $name" ;;
		"# Totals:"*) ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done
}

# Split the guest's output: @@JSON KIND NAME ... @@END blocks into files.
split_json()
{
	awk -v dir="$2" '
		{ sub(/\r$/, "") }
		/^@@JSON / { f = dir "/" $3 "." $2; next }
		/^@@END$/ { f = ""; next }
		f { print > f; next }
		{ print }' "$1"
}

check_json()
{
	local cpu=$1 dir=$2 f kind name

	for f in "$dir"/*.record "$dir"/*.report; do
		[ -e "$f" ] || continue
		kind=${f##*.}
		name=$(basename "$f" ".$kind")
		if python3 "$UNIT/check-json.py" "$kind" "$f" >"$T/why" 2>&1; then
			tap ok "[$cpu] JSON of $name is valid ($kind)"
		else
			tap not-ok "[$cpu] JSON of $name is valid ($kind)" "$T/why"
		fi
	done
	if [ -e "$dir/report.report" ] && [ -e "$dir/report-records.record" ]; then
		if python3 "$UNIT/check-report.py" "$dir/report-records.record" \
			"$dir/report.report" >"$T/why" 2>&1; then
			tap ok "[$cpu] report --json equals a recount of the records"
		else
			tap not-ok "[$cpu] report --json equals a recount of the records" "$T/why"
		fi
	else
		echo "missing" >"$T/why"
		tap not-ok "[$cpu] the guest printed report and record JSON" "$T/why"
	fi
}

# Line numbers of the test target's source that srclines.record must show.
check_lines()
{
	local cpu=$1 rec=$2/srclines.record src=$ROOT/tests/target/lbr_snap_test_target.c

	[ -e "$rec" ] || return 0	# skipped in the guest (no LBR)
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

run_cpu()
{
	local cpu=$1 dir=$T/$1 rc

	mkdir -p "$dir"
	"$ROOT/tests/vm/run-vm.sh" --cpu "$cpu" \
		--script "$HERE/tool-tests.sh" >"$dir/console" 2>&1
	rc=$?
	split_json "$dir/console" "$dir" >"$dir/tap"
	relay "$cpu" <"$dir/tap"
	if grep -q '^# Totals:' "$dir/tap"; then
		[ "$rc" = 0 ] || ! grep -q '^# Totals: .* fail:0 ' "$dir/tap" ||
			{ echo "run-vm.sh exit $rc (kernel log report?)" >"$T/why";
			  tap not-ok "[$cpu] guest finished cleanly" "$T/why"; }
	else
		tail -n 20 "$dir/console" >"$T/why"
		tap not-ok "[$cpu] guest ran the tests to the end" "$T/why"
	fi
	check_json "$cpu" "$dir"
	check_lines "$cpu" "$dir"
}

cpus=("$@")
[ ${#cpus[@]} = 0 ] && cpus=(stock lbr-legacy)
for cpu in "${cpus[@]}"; do
	run_cpu "$cpu"
done
echo "# Totals: pass:$pass fail:$fail skip:$skip"
[ "$fail" = 0 ]
