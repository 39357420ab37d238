#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The TAP plans on crafted output (tests that vanish must fail).
# make check's count (tests/tap-count.sh) on crafted suite logs: a stream
# cut short after its "1..N", totals that do not add up to the plan, a
# suite that printed nothing must fail; complete streams of every shape
# make check sees must not.  tests/guest/tool-vm.sh --console on crafted
# guest output: a missing, partial or unplanned block, a guest that died
# or printed nothing, must each give their "not ok" lines, and always the
# planned number of tests.  No guest is booted.  Prints TAP and "# Totals:".
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/tap-count.sh"
TOOL_VM=$HERE/guest/tool-vm.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0 pass=0 fail=0

result() {	# result NAME: ok if $T/why is empty
	n=$((n + 1))
	if [ -s "$T/why" ]; then
		echo "not ok $n - $1"
		sed 's/^/# /' "$T/why"
		fail=$((fail + 1))
	else
		echo "ok $n - $1"
		pass=$((pass + 1))
	fi
	: >"$T/why"
}
why() { echo "$*" >>"$T/why"; }
: >"$T/why"

# ------------------------------------------------------------- tap_count

oks() {	# oks N [FIRST]: N kselftest result lines
	local i
	for i in $(seq "${2:-1}" $(($1 + ${2:-1} - 1))); do
		echo "ok $i test_$i"
	done
}

# count_case NAME STATUS WANT-FAILS [PATTERN]: tap_count on $T/log.
count_case() {
	tap_count crafted "$2" "$T/log" >"$T/out"
	[ "$TAP_FAIL" = "$3" ] ||
		why "tap_count: $TAP_FAIL failures, want $3; it printed: $(cat "$T/out")"
	if [ -n "${4:-}" ]; then
		grep -qF -- "$4" "$T/out" || why "no line '$4' in: $(cat "$T/out")"
		sed 's/^/#   /' "$T/out"
	fi
	result "count: $1"
}

{ echo "TAP version 13"; echo "1..80"; oks 40; } >"$T/log"
count_case "a kselftest stream cut after 40 of 1..80, exit 0, fails" 0 1 \
	"not ok - crafted printed 40 of the 80 results it planned (1..80, $T/log:2), no # Totals after them"
sed -i 's/$/\r/' "$T/log"
count_case "the same from a serial console (CRLF) fails" 0 1 \
	"not ok - crafted printed 40 of the 80 results it planned"
{ echo "1..80"; oks 75
  echo "# Totals: pass:70 fail:0 xfail:0 xpass:0 skip:5 error:0"; } >"$T/log"
count_case "# Totals adding up to 75 of 1..80 fails" 0 1 \
	"not ok - crafted planned 1..80 ($T/log:1), its totals add up to 75"
{ echo "1..3"; oks 3; echo "# Totals: pass:3 fail:0 xfail:0 xpass:0 skip:0 error:0"
  echo "TAP version 13"; echo "1..4"; oks 2; } >"$T/log"
count_case "a second stream (the fuzzer's) cut after 2 of 1..4 fails" 0 1 \
	"not ok - crafted printed 2 of the 4 results it planned (1..4, $T/log:7)"
{ oks 150; echo "1..157"; echo "# Totals: pass:150 fail:0 skip:0"; } >"$T/log"
count_case "a plan at the end (decode_test, the lab) 150 of 1..157 fails" 0 1 \
	"its totals add up to 150: # Totals: pass:150 fail:0 skip:0"
echo "lbr_snap: the guest did not finish (qemu exit 0; timeout 1500s)" >"$T/log"
count_case "a suite that printed no result fails" 0 1 \
	"not ok - crafted printed no TAP result"
{ echo "1..2"; oks 2; } >"$T/log"
count_case "a guest that printed no result but its plan and exit 125 fails" 125 1 \
	"not ok - crafted exited with status 125"
{ echo "TAP version 13"; echo "1..80"; } >"$T/log"
count_case "a plan and nothing after it fails" 0 2 \
	"not ok - crafted printed 0 of the 80 results"
# Every shape of stream make check reads, complete: unplanned results
# before a kselftest stream (freeze-first), kselftest with CRLF, a plan at
# the end with totals, totals without a plan, a plan without totals.
{ echo "ok - freeze-first 1"; echo "ok - freeze-first 2"
  { echo "TAP version 13"; echo "1..3"; oks 2; echo "ok 3 x # SKIP no LBR"
    echo "# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0"; } | sed 's/$/\r/'
  oks 4; echo "1..4"; echo "# Totals: pass:4 fail:0 skip:0"
  echo "ok - a"; echo "# Totals: pass:1 fail:0 skip:0"
  echo "1..2"; oks 2; } >"$T/log"
count_case "complete streams of every shape pass" 0 0
[ "$TAP_PASS/$TAP_SKIP" = 7/1 ] || why "pass/skip $TAP_PASS/$TAP_SKIP, want 7/1"
result "count: their totals are added up (7 passed, 1 skipped)"

# make check's count() (tests/run-all.sh) keeps every failure for the recap
# above the last line, the only part of a run CI shows; for a suite that
# stopped short (a guest that hung or died) also the last lines it printed.
eval "$(sed -n '/^failures() {/,/^}/p; /^oops() {/,/^}/p; /^count() {/,/^}/p' "$HERE/run-all.sh")"
recap=() pass_=$pass fail_=$fail
ran=0 skip=0 start=$(date +%s)
{ echo "TAP version 13"; echo "1..80"; oks 40; echo "[  99.123] the guest's last words"; } >"$T/log"
count crafted 0 "$T/log" >/dev/null
pass=$pass_ fail=$fail_
printf '%s\n' "${recap[@]}" | grep -qxF "crafted:   | [  99.123] the guest's last words" ||
	why "no last line in the recap: $(printf '%s|' "${recap[@]}")"
result "recap: a suite cut short brings its last lines"
# A guest that oopsed: its panic's register dump is the tail, the call
# trace far above it; the recap brings the oops's first line, RIP and the
# trace's frames, not the guesses or the code bytes.
recap=() pass_=$pass fail_=$fail
{ echo "TAP version 13"; echo "1..80"; oks 40
  echo "[ 193.1] BUG: unable to handle page fault for address: ffffffffffffffd6"
  echo "[ 193.2] Oops: 0000 [#1] PREEMPT SMP KASAN NOPTI"
  echo "[ 193.3] RIP: 0010:rethook_free_rcu+0x40/0x100"
  echo "[ 193.4] Code: 48 8b 45 00"; echo "[ 193.5] Call Trace:"; echo "[ 193.6]  <IRQ>"
  echo "[ 193.7]  ? __die+0x20/0x60"; echo "[ 193.7]  ? asm_exc_page_fault+0x22/0x30"
  echo "ok 41 - a test named after BUG: unable to handle page fault"
  echo "[ 193.8]  rcu_core+0x3f0/0xa00"; echo "# [ 193.8]  lbr_capture+0x10/0x200 [lbr_snap]"
  echo "[ 193.9] ---[ end trace 0000000000000000 ]---"
  echo "[ 194.0]  after_the_end+0x1/0x2"
  for i in $(seq 20); do echo "[ 194.1] R$i: 0"; done
  echo "[ 194.2] Kernel panic - not syncing: Fatal exception in interrupt"; } >"$T/log"
count crafted 0 "$T/log" >/dev/null
pass=$pass_ fail=$fail_
got=$(printf '%s\n' "${recap[@]}" | sed -n 's/^crafted:   | oops: //p')
want="BUG: unable to handle page fault for address: ffffffffffffffd6
Oops: 0000 [#1] PREEMPT SMP KASAN NOPTI
RIP: 0010:rethook_free_rcu+0x40/0x100
Call Trace:
 <IRQ>
 rcu_core+0x3f0/0xa00
 lbr_capture+0x10/0x200 [lbr_snap]"
[ "$got" = "$want" ] || why "the oops in the recap: $got"
result "recap: a guest that oopsed brings the oops's call trace"
recap=() pass_=$pass fail_=$fail
{ echo "TAP version 13"; echo "1..80"; oks 40
  echo "[  50.1] int3: 0000 [#1] PREEMPT SMP KASAN NOPTI"
  echo "[  50.2] RIP: 0010:lbr_ret_entry+0x1/0x90 [lbr_snap]"
  echo "[  50.3]  <TASK>"; echo "[  50.4]  kprobe_ftrace_handler+0x1c/0x2a0"
  echo "[  50.5] =================================================================="
  echo "[  50.6]  later_report+0x1/0x2"; } >"$T/log"
count crafted 0 "$T/log" >/dev/null
pass=$pass_ fail=$fail_
got=$(printf '%s\n' "${recap[@]}" | sed -n 's/^crafted:   | oops: //p')
want="int3: 0000 [#1] PREEMPT SMP KASAN NOPTI
RIP: 0010:lbr_ret_entry+0x1/0x90 [lbr_snap]
 <TASK>
 kprobe_ftrace_handler+0x1c/0x2a0"
[ "$got" = "$want" ] || why "the int3 die in the recap: $got"
result "recap: a die other than a page fault (int3), up to the report's end"
recap=() pass_=$pass fail_=$fail
{ echo "TAP version 13"; echo "1..2"; echo "ok 1 a"; echo "not ok 2 b"; echo "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0"; } >"$T/log"
count crafted 1 "$T/log" >/dev/null
pass=$pass_ fail=$fail_
[ "${#recap[@]}" = 1 ] && [ "${recap[0]}" = "crafted: not ok 2 b" ] ||
	why "want only 'crafted: not ok 2 b', got: $(printf '%s|' "${recap[@]}")"
result "recap: a finished suite's failure alone"
# A failure's reasons: tests/unit's "# " lines after it (a CI run once
# showed only "not ok 18", its reason out of sight; at most 6, and the
# rest are no one's), a kselftest's lines since its RUN; a passing
# test's lines, the next test's and the harness's summary are not its.
recap=() pass_=$pass fail_=$fail
{ echo "ok 17 - before"; echo "# not a reason"; echo "ok 18 - a"
  echo "not ok 19 - b"; echo "# exit status 137, expected 0"; echo "# stderr differs"
  echo "not ok 20 - d"; for i in 1 2 3 4 5 6 7 8; do echo "# d's $i"; done
  echo "not ok 21 - e"; echo "# e's"
  echo "ok 22 - c"; echo "# after"; echo "TAP version 13"; echo "1..2"
  echo "#  RUN           f.y ..."; echo "# t.c:40:y:not this"
  echo "#            OK  f.y"; echo "ok 1 f.y"
  echo "#  RUN           f.x ..."; echo "[  3.25] lbr_snap: oops"
  echo "# t.c:12:x:Expected 1 (1) == n (2)"; echo "#            FAIL  f.x"
  echo "not ok 2 f.x"; echo "# FAILED: 1 / 2 tests passed."
  echo "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0"; } | sed 's/$/\r/' >"$T/log"
count crafted 1 "$T/log" >/dev/null
pass=$pass_ fail=$fail_
printf '%s\n' "crafted: not ok 19 - b" "crafted:   | # exit status 137, expected 0" \
	"crafted:   | # stderr differs" "crafted: not ok 20 - d" \
	"crafted:   | # d's 1" "crafted:   | # d's 2" "crafted:   | # d's 3" \
	"crafted:   | # d's 4" "crafted:   | # d's 5" "crafted:   | # d's 6" \
	"crafted: not ok 21 - e" "crafted:   | # e's" "crafted: not ok 2 f.x" \
	"crafted:   | [  3.25] lbr_snap: oops" "crafted:   | # t.c:12:x:Expected 1 (1) == n (2)" >"$T/want"
printf '%s\n' "${recap[@]}" | diff "$T/want" - >"$T/diff" ||
	why "the recap differs: $(cat "$T/diff")"
result "recap: each failure with its reasons, unit and kselftest"

# -------------------------------------------------------------- tool-vm.sh

# block KIND NAME: a JSON block with one valid line of that kind.
block() {
	echo "@@JSON $1 $2"
	if [ "$1" = report ]; then
		echo '{"func":"lbr_test_int","func_addr":"0xffffffffc0001000","ret_type":"int","retval":-22,"ret":"-EINVAL","errno":"EINVAL","count":1,"nr_paths":1,"paths":[{"count":1,"ends_in":"lbr_test_int+0x0","stack":[],"branches":[]}]}'
	else
		echo '{"ts":1,"ts_sec":0,"ts_nsec":1,"cpu":0,"pid":1,"tid":1,"comm":"sh","func":"lbr_test_int","func_addr":"0xffffffffc0001000","retval":-22,"errno":"EINVAL","ret_type":"int","probe_entries":0,"flags":0,"backend":"none","hook":"kretprobe","target_id":0,"caller":"0xffffffffc0002000","caller_sym":null,"stack":[],"branches":[],"duration_ns":null}'
	fi
	echo "@@END"
}

# A recording as the guest makes one (of the unit tests' synthetic stream
# and kallsyms), and its replay: tool-vm.sh replays it on the host.
make -s -C "$HERE/../tools" >/dev/null
gcc -std=gnu11 -O2 "-I$HERE/../include" -o "$T/gen-records" \
	"$HERE/unit/gen-records.c"
"$T/gen-records" stream >"$T/stream.bin"
"$HERE/../tools/lbr-snap" -d "$T/stream.bin" --kallsyms "$HERE/unit/kallsyms.txt" \
	record -o "$T/rec.bin" 2>/dev/null
"$HERE/../tools/lbr-snap" -i "$T/rec.bin" --json >"$T/replay.json" 2>/dev/null
# ... and as why -o makes one: the same with why's header lines (the
# stream's do_sys_openat2 its entry function), and its why -i.
python3 - "$T/rec.bin" "$T/why.rec" <<'PY'
import re, sys
d = open(sys.argv[1], 'rb').read()
d = re.sub(rb'\nrelease [^\n]*\n', b'\nrelease crafted\n', d, count=1)
i = d.index(b'\nkallsyms ') + 1
open(sys.argv[2], 'wb').write(d[:i] + b'why-stack-depth 16\nwhy-tree 0\n'
    b'why-hooked ffffffff81001000\nwhy-entry ffffffff81001000\n' + d[i:])
PY
"$HERE/../tools/lbr-snap" --json why -i "$T/why.rec" >"$T/why.json" 2>/dev/null
replay_blocks() {
	echo "@@JSON record replay"
	cat "$T/replay.json"
	echo "@@END"
	echo "@@B64 recording"
	gzip -c "$T/rec.bin" | base64
	echo "@@END"
	echo "@@JSON why why-replay"
	cat "$T/why.json"
	echo "@@END"
	echo "@@B64 why-recording"
	gzip -c "$T/why.rec" | base64
	echo "@@END"
}

# guest CPU: what tests/guest/tool-tests.sh prints there when all pass, in
# the same order, over a serial console (CRLF).
guest() {
	local k skips=" " nskip=0
	[ "$1" = stock ] && skips=" 2 9 10 11 " nskip=4
	{
		echo "lbr_snap guest: 6.1.0-57-amd64, 2 CPUs, crafted"
		echo "1..16"
		for k in $(seq 16); do
			if [[ "$skips" == *" $k "* ]]; then
				echo "ok $k - test $k # SKIP backend none: no branches"
			else
				echo "ok $k - test $k"
			fi
			case $k in
			5) block record trace-all ;;
			9) block report report; block record report-records ;;
			10) [ "$1" = stock ] || block record srclines ;;
			13) block record fexit ;;
			14) replay_blocks ;;
			esac
		done
		echo "# Totals: pass:$((16 - nskip)) fail:0 skip:$nskip"
	} | sed 's/$/\r/'
}

# vm_case NAME WANT-RC WANT-NOT-OK CPU... (consoles in $T/c/CPU.console,
# $T/c/CPU.rc): tool-vm.sh's exit status, its plan 1..N, exactly N
# results, WANT-NOT-OK of them "not ok", and tap_count agreeing; then each
# line of $T/want must be in its output.
declare -A N=([stock]=24 [lbr-legacy]=26)
vm_case() {
	local name=$1 want_rc=$2 want_bad=$3 rc plan=0 cpu got bad
	shift 3
	"$TOOL_VM" --console "$T/c" "$@" >"$T/out" 2>&1
	rc=$?
	for cpu in "$@"; do plan=$((plan + ${N[$cpu]:-1})); done
	[ "$rc" = "$want_rc" ] || why "exit status $rc, want $want_rc"
	[ "$(head -n1 "$T/out")" = "1..$plan" ] ||
		why "first line '$(head -n1 "$T/out")', want 1..$plan"
	got=$(grep -cE '^(not )?ok ' "$T/out")
	bad=$(grep -c '^not ok ' "$T/out")
	[ "$got" = "$plan" ] || why "$got results, want $plan"
	[ "$bad" = "$want_bad" ] || why "$bad not ok, want $want_bad"
	tap_count tool-guest "$rc" "$T/out" >"$T/count"
	[ "$TAP_FAIL" = "$want_bad" ] && [ ! -s "$T/count" ] ||
		why "tap_count: $TAP_FAIL failures: $(cat "$T/count")"
	while IFS= read -r line; do
		grep -qF -- "$line" "$T/out" || why "no line '$line'"
	done <"$T/want"
	[ -s "$T/why" ] && sed 's/^/  /' "$T/out" >>"$T/why"
	grep '^not ok ' "$T/out" | sed 's/^/#   /'
	result "tool-vm.sh: $name"
	rm -rf "$T/c" "$T/want"
	mkdir -p "$T/c"
	: >"$T/want"
}
mkdir -p "$T/c"
: >"$T/want"

guest stock >"$T/c/stock.console"
vm_case "a complete stock guest passes, 24 tests" 0 0 stock

: >"$T/c/stock.console"
echo 125 >"$T/c/stock.rc"
: >"$T/c/lbr-legacy.console"
echo 125 >"$T/c/lbr-legacy.rc"
cat >"$T/want" <<'EOF'
not ok 1 - [stock] guest test 1 of 16: no result (the guest did not print it)
not ok 17 - [stock] the guest printed its 16 planned results (4 skipped) and # Totals, and exited cleanly
# the guest printed no '# Totals:' (it died or hung); its last lines:
not ok 23 - [stock] report --json equals a recount of the records
not ok 24 - [stock] recordings made in the guest (record, why) replay on the host as in the guest
not ok 49 - [lbr-legacy] source lines of lbr_test_int match lbr_snap_test_target.c
not ok 50 - [lbr-legacy] recordings made in the guest (record, why) replay on the host as in the guest
EOF
vm_case "guests that print nothing: all 50 planned tests fail" 1 50 stock lbr-legacy

guest stock | sed '/^@@JSON record fexit/,/^@@END/d' >"$T/c/stock.console"
cat >"$T/want" <<'EOF'
not ok 21 - [stock] JSON of fexit is valid (record)
# the guest printed no '@@JSON record fexit' block
EOF
vm_case "one JSON block missing: its test fails" 1 1 stock

guest stock | sed '/^ok 8 /,$d' >"$T/c/stock.console"
echo 125 >"$T/c/stock.rc"
cat >"$T/want" <<'EOF'
not ok 8 - [stock] guest test 8 of 16: no result (the guest did not print it)
not ok 16 - [stock] guest test 16 of 16: no result (the guest did not print it)
# guest results missing: 8 9 10 11 12 13 14 15 16
# the guest printed no '@@JSON report report' block
ok 18 - [stock] JSON of trace-all is valid (record)
EOF
vm_case "a guest that died after test 7: 9 tests, 4 blocks, the end, the recount, the replay fail" 1 16 stock

guest stock | sed '/^@@JSON record fexit/{n;q}' >"$T/c/stock.console"
cat >"$T/want" <<'EOF'
not ok 14 - [stock] guest test 14 of 16: no result (the guest did not print it)
not ok 16 - [stock] guest test 16 of 16: no result (the guest did not print it)
# the '@@JSON record fexit' block has no @@END (the guest died in it?)
EOF
vm_case "a guest that died inside a block: that block and those after it fail" 1 7 stock

guest stock | sed 's/^# Totals:.*/ok 17 - one too many\r\n&/' >"$T/c/stock.console"
cat >"$T/want" <<'EOF'
# (not in the plan) ok 17 - one too many
# result beyond the plan or repeated: ok 17 - one too many
EOF
vm_case "a result beyond the guest's plan fails, the count stays 24" 1 1 stock

guest stock | sed '/^@@JSON why why-replay/,/^@@END/s/"origin":{"func":"[a-z_0-9]*"/"origin":{"func":"elsewhere"/' \
	>"$T/c/stock.console"
cat >"$T/want" <<'EOF'
not ok 24 - [stock] recordings made in the guest (record, why) replay on the host as in the guest
"origin":{"func":"elsewhere"
EOF
vm_case "why's answer in the guest not the host's from its recording: the replay fails" 1 1 stock

guest stock | sed '/^@@B64 why-recording/,/^@@END/d' >"$T/c/stock.console"
echo "# the guest printed no '@@B64 why-recording' block" >"$T/want"
vm_case "why's recording missing: the replay fails" 1 1 stock

guest stock | sed 's/^1\.\.16/1..15/' >"$T/c/stock.console"
echo "# the guest's plan is '1..15', this script's 1..16" >"$T/want"
vm_case "a guest plan other than 1..16 fails" 1 1 stock

guest stock >"$T/c/stock.console"
echo 99 >"$T/c/stock.rc"
echo "# run-vm.sh exit 99 (kernel log report?)" >"$T/want"
vm_case "run-vm.sh exit 99 (kernel log gate) fails the end of the guest" 1 1 stock

guest lbr-legacy | sed 's/^ok 10 - .*/&\r\n@@JSON record srclines\r\n{}\r\n@@END/' |
	sed '/^@@JSON record srclines/,/^@@END/d' >"$T/c/lbr-legacy.console"
guest stock | sed 's/^ok 10 - .*/&\n@@JSON record srclines\n{}\n@@END/' >"$T/c/stock.console"
cat >"$T/want" <<'EOF'
# a block not in the plan for stock: @@JSON record srclines
not ok 47 - [lbr-legacy] JSON of srclines is valid (record)
# the guest printed no '@@JSON record srclines' block
not ok 49 - [lbr-legacy] source lines of lbr_test_int match lbr_snap_test_target.c
EOF
vm_case "srclines missing on lbr-legacy (2 tests) and unplanned on stock fail" 1 3 \
	stock lbr-legacy

guest stock >"$T/c/lbr-legacy.console"
cat >"$T/want" <<'EOF'
# the guest's '# Totals: pass:12 fail:0 skip:4': the plan for lbr-legacy is skip:0
EOF
vm_case "LBR tests that skip on lbr-legacy fail" 1 3 lbr-legacy

"$TOOL_VM" --console "$T/c" stock lbr-future >"$T/out" 2>&1
rc=$?
[ "$rc" = 1 ] || why "exit status $rc"
grep -q '^not ok 1 - no test plan for CPU lbr-future' "$T/out" || why "$(cat "$T/out")"
result "tool-vm.sh: a CPU without a plan fails"

# ------------------------------------------------------------ .ci/run

# CI's entry point on a make check whose output holds bytes that are not
# text (a guest console's): every line passes through, make's own error
# line is left out, the totals stay last, and make's status is the exit
# status.  grep without -a once printed "binary file matches" last.
mkdir -p "$T/ci/.ci" "$T/ci/tests/deps" "$T/ci/bin"
cp "$HERE/../.ci/run" "$T/ci/.ci/run"
printf '#!/bin/sh\nexit 0\n' >"$T/ci/tests/deps/install.sh"
cat >"$T/ci/bin/make" <<'EOF'
#!/bin/sh
printf 'ok 1 - a\n# console: \377\376 junk\nnot ok 2 - b\n'
echo "1 passed, 1 failed, 0 skipped"
echo "make: *** [Makefile:9: check] Error 2" >&2
exit 2
EOF
chmod +x "$T/ci/.ci/run" "$T/ci/tests/deps/install.sh" "$T/ci/bin/make"
PATH=$T/ci/bin:$PATH LANG=C.UTF-8 LC_ALL=C.UTF-8 "$T/ci/.ci/run" >"$T/ci/out" 2>&1
rc=$?
[ "$rc" = 2 ] || why "exit status $rc, not make's 2"
[ "$(tail -n1 "$T/ci/out")" = "1 passed, 1 failed, 0 skipped" ] ||
	why "last line: $(tail -n1 "$T/ci/out" | cat -v)"
grep -aq '^not ok 2 - b$' "$T/ci/out" || why "a line after the binary bytes is lost"
grep -aq 'junk' "$T/ci/out" || why "the line with binary bytes is lost"
! grep -aq 'Error 2' "$T/ci/out" || why "make's error line is shown"
result ".ci/run: binary bytes in the output, the totals stay last, make's status"

# ------------------------------------------------- make bench's goals

# tests/bench/cost.sh on crafted guest logs (COST_LOGS): figures that meet
# every goal of make bench pass; one over a goal, a figure missing, a
# dropped record or a reader that lost records fails, with the goal named.
cost_log() {	# cost_log FILE KRETPROBE_MISS FEXIT_HIT [BAD [FEXIT_EXIT [FEXIT_HIT_MSR [BPF_HIT]]]]
	{
		for w in base-miss:10000:0.01 base-hit:9800:0.00 \
			ftrace-miss:11100:0.01 floor-miss:10400:0.01 \
			floor-hit:10200:0.00 kretprobe-miss:$2:3.01 \
			kretprobe-hit:10250:3.00 fexit-miss:10700:3.01 \
			fexit-hit:$3:${6:-0.00} none-miss:10600:0.01 \
			none-hit:10230:0.00 ftrace-stack-miss:13000:0.01 \
			kretprobe-stack-miss:12000:3.01 \
			fexit-stack-miss:11500:3.01 base-exit:200000:0.00 \
			kretprobe-exit:201000:0.00 fexit-exit:${5:-201500}:0.00 \
			bpf-miss:10300:0.01 bpf-hit:${7:-9950}:0.00; do
			v=${w#*:}
			echo "COST what=${w%%:*} runs=1,2,3 median=${v%%:*}.0 msr=${v#*:}"
		done
		[ -z "${4:-}" ] || echo "COST_BAD what=kretprobe-miss why=$4"
	} >"$1"
}
# Two storms, each drained by an lbr-snap reader and cat trace_pipe.
reader_log() {	# reader_log FILE JSON_READ TEXT_NS [TEXT_TRACE_PIPE_NS [JSON_NS]]
	printf '%s\r\n' \
		"READER reader=lbr-snap-json produced=100 read=$2 dropped=$((100 - $2)) ns=${5:-1000000000} storm_ns=800000000 cpu_ms=25" \
		"READER reader=trace_pipe produced=100 read=100 dropped=0 ns=1000000000 storm_ns=500000000" \
		"READER reader=lbr-snap-text produced=100 read=100 dropped=0 ns=$3 storm_ns=400000000" \
		"READER reader=trace_pipe-text produced=100 read=99 dropped=1 ns=${4:-1000000000} storm_ns=400000000 cpu_ms=3" >"$1"
}
# The read part: a capture's freeze and read each way, and backend=none.
read_log() {	# read_log FILE [BAD]
	printf '%s\r\n' \
		"# lbr_snap targets=x@kretprobe stack_depth=0 backend=none: backend: none mode: none lbr_depth: 0 lbr_read: msr " \
		"COST what=read-none-miss runs=1,2,3 median=10600.0" \
		"# lbr_snap targets=x@kretprobe stack_depth=0 lbr_info=1 lbr_read=msr: backend: arch mode: perf lbr_depth: 32 lbr_read: msr " \
		"COST what=read-msr-miss runs=1,2,3 median=10900.0" \
		"# lbr_snap targets=x@kretprobe stack_depth=0 lbr_info=1 lbr_read=xsaves: backend: arch mode: perf lbr_depth: 32 lbr_read: xsaves " \
		"COST what=read-xsaves-miss runs=1,2,3 median=10750.0" >"$1"
	[ -z "${2:-}" ] || echo "COST_BAD what=read-xsaves-miss why=$2" >>"$1"
}
cost_case() {	# cost_case NAME WANT-STATUS [GREP]
	COST_LOGS=$T/cost COST_CPUS=lbr-legacy COST_READ_CPUS=lbr-legacy \
		"$HERE/bench/cost.sh" \
		>"$T/cost.out" 2>&1
	rc=$?
	[ "$rc" = "$2" ] || why "cost.sh exit $rc, want $2: $(cat "$T/cost.out")"
	[ -z "${3:-}" ] || grep -q -- "$3" "$T/cost.out" ||
		why "no '$3' in: $(cat "$T/cost.out")"
	result "cost.sh: $1"
}
mkdir -p "$T/cost"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
reader_log "$T/cost/lbr-legacy-reader.log" 100 900000000
reader_log "$T/cost/lbr-legacy-reader-loaded.log" 100 900000000
read_log "$T/cost/lbr-legacy-read.log"
cost_case "the loaded reader line: lost no more than trace_pipe" 0 \
	"goal cpu=lbr-legacy reader --json, host loaded: lost 0 (dropped 0) <= trace_pipe_lost 0 ok"
grep -q "^reader cpu=lbr-legacy .* load=spinner" "$T/cost.out" ||
	why "no loaded reader line: $(grep '^reader' "$T/cost.out")"
result "cost.sh: ... and its line says load=spinner"
reader_log "$T/cost/lbr-legacy-reader-loaded.log" 97 900000000
cost_case "a loaded reader that lost more than trace_pipe fails" 1 \
	"reader --json, host loaded: lost 3 (dropped 3) <= trace_pipe_lost 0 FAIL"
reader_log "$T/cost/lbr-legacy-reader-loaded.log" 100 900000000
cost_case "the read line: each read's instructions over backend=none" 0 \
	"read cpu=lbr-legacy depth=32 msr=300 xsaves=150 xsaves_to_msr=0.50 rdmsr=96"
read_log "$T/cost/lbr-legacy-read.log" not_read_by_xsaves
cost_case "a read not made the way asked fails" 1 \
	"cost: COST_BAD what=read-xsaves-miss why=not_read_by_xsaves"
read_log "$T/cost/lbr-legacy-read.log"
sed -i '/read-xsaves-miss/d' "$T/cost/lbr-legacy-read.log"
cost_case "a missing read figure fails" 1 "cost: no read figures for lbr-legacy"
read_log "$T/cost/lbr-legacy-read.log"
cost_case "every goal met" 0 \
	"cost cpu=lbr-legacy hook=kretprobe case=captured added=1000 ftrace_event=1100 ratio=0.91 floor=400 msr_accesses=3.00"
cost_case "the MSR accesses of a success through fexit: none" 0 \
	"cost cpu=lbr-legacy hook=fexit case=filtered added=100 .* msr_accesses=0.00"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900 "" "" 3.00
cost_case "a success through fexit with MSR accesses fails" 1 \
	"goal cpu=lbr-legacy fexit filtered: msr_accesses 3.00 <= 0.01 FAIL"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
cost_case "the hooked lines: fexit beside an empty BPF fexit program" 0 \
	"hooked cpu=lbr-legacy case=success added_insns=100 msr_accesses=0.00 bpf_added_insns=150"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900 "" "" "" 9880
cost_case "a success dearer than the empty BPF program fails" 1 \
	"goal cpu=lbr-legacy hooked success: added_insns 100 < bpf_added_insns 80 FAIL"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
grep -v bpf-hit "$T/cost/lbr-legacy-cost.log" >"$T/cost/x" &&
	mv "$T/cost/x" "$T/cost/lbr-legacy-cost.log"
cost_case "a missing BPF figure fails" 1 "cost: no hooked figure for success"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
sed -i 's/ msr=.*//' "$T/cost/lbr-legacy-cost.log"
cost_case "a guest without the MSR access count fails" 1 \
	"cost: no MSR access count for fexit filtered on lbr-legacy"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
cost_log "$T/cost/lbr-legacy-cost.log" 11200 9900
cost_case "kretprobe captured over the ftrace event fails" 1 \
	"goal cpu=lbr-legacy kretprobe captured: added 1200 <= ftrace_event 1100 FAIL"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9930
cost_case "fexit filtered over 120 fails" 1 \
	"goal cpu=lbr-legacy fexit filtered: added 130 <= 120 FAIL"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900 captured_5_of_9
cost_case "a configuration with drops fails" 1 "cost: COST_BAD"
grep -v fexit-hit "$T/cost/lbr-legacy-cost.log" >"$T/cost/x" &&
	mv "$T/cost/x" "$T/cost/lbr-legacy-cost.log"
cost_case "a missing figure fails" 1 "cost: no figure for fexit filtered"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
grep -v fexit-stack-miss "$T/cost/lbr-legacy-cost.log" >"$T/cost/x" &&
	mv "$T/cost/x" "$T/cost/lbr-legacy-cost.log"
cost_case "a missing call stack figure fails" 1 \
	"cost: no call stack figure for fexit"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
cost_case "the exit line: what lbr_snap and a used fexit slot add to an exit" 0 \
	"exit cpu=lbr-legacy base=200000 no_slot=1000 slot=1500 slot_pct=0.25"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900 "" 202100
cost_case "an exit a used slot makes dearer by over 0.5% fails" 1 \
	"goal cpu=lbr-legacy exit: a slot adds 1100 <= 0.5% of the exit (200000) FAIL"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
grep -v kretprobe-exit "$T/cost/lbr-legacy-cost.log" >"$T/cost/x" &&
	mv "$T/cost/x" "$T/cost/lbr-legacy-cost.log"
cost_case "a missing exit figure fails" 1 "cost: no exit figures for lbr-legacy"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
cost_case "the call stack lines, beside the event with a stacktrace trigger" 0 \
	"cost cpu=lbr-legacy hook=kretprobe case=captured-stack added=2000 ftrace_event=3000 ratio=0.67 floor=400"
cost_log "$T/cost/lbr-legacy-cost.log" 11000 9900
reader_log "$T/cost/lbr-legacy-reader.log" 97 900000000
cost_case "a reader that lost records fails" 1 "reader --json: .* lost 3 .* FAIL"
reader_log "$T/cost/lbr-legacy-reader.log" 100 1100000000
cost_case "a reader slower than trace_pipe fails" 1 "reader text: .* FAIL"
reader_log "$T/cost/lbr-legacy-reader.log" 100 900000000
cost_case "the reader line gives each storm's own rate" 0 \
	"reader cpu=lbr-legacy lbr_snap_rps=100 trace_pipe_rps=100 ratio=1.00 lost=0 text_rps=111 text_ratio=1.12 text_lost=0 trace_pipe_lost=0 storm_rps=125 text_storm_rps=250 trace_pipe_storm_rps=200 text_trace_pipe_rps=99 text_trace_pipe_lost=1 cpu_us=250 text_cpu_us=- trace_pipe_cpu_us=- text_trace_pipe_cpu_us=30"
reader_log "$T/cost/lbr-legacy-reader.log" 100 900000000 800000000
cost_case "text is held to the trace_pipe of its own storm" 1 \
	"reader text: 111 records/s >= trace_pipe 124 in the same storm, .* FAIL"
# The goal on the exact figures: the last write 2 ms after trace_pipe's
# (within a tick of the guest's HZ=250) passes; 4.5 ms fails, though the
# ratio prints as 1.00.
reader_log "$T/cost/lbr-legacy-reader.log" 100 900000000 1000000000 1002000000
cost_case "a reader within a tick of trace_pipe's last write keeps up" 0 \
	"goal cpu=lbr-legacy reader --json: 100 records/s >= trace_pipe 100 .* ok"
reader_log "$T/cost/lbr-legacy-reader.log" 100 900000000 1000000000 1004500000
cost_case "a reader 0.45% behind fails though its rate prints as 100 of 100" 1 \
	"goal cpu=lbr-legacy reader --json: 100 records/s >= trace_pipe 100 .* FAIL"
grep -q "ratio=1.00 lost=0" "$T/cost.out" ||
	why "not the case meant: $(grep '^reader' "$T/cost.out")"
result "cost.sh: ... and its ratio prints as 1.00"
reader_log "$T/cost/lbr-legacy-reader.log" 100 900000000
sed -i 's/ storm_ns=400000000//' "$T/cost/lbr-legacy-reader.log"
cost_case "a READER line without its storm's time fails" 1 \
	"cost: no reader figures for lbr-legacy"
reader_log "$T/cost/lbr-legacy-reader.log" 100 900000000
sed -i '/trace_pipe-text/d' "$T/cost/lbr-legacy-reader.log"
cost_case "a text storm without its trace_pipe reader fails" 1 \
	"cost: no reader figures for lbr-legacy"

# The reader line's waiter (tests/bench/lbr_snap_cost.c wait): it counts
# the storm's records only, by its pid, and times the reader's last
# write by the file's mtime, not by when it read it.
gcc -std=gnu11 -O2 -Wall -Werror -D_GNU_SOURCE -o "$T/cost-bin" \
	"$HERE/bench/lbr_snap_cost.c"
# wait_case NAME WANT-STATUS WANT-RECORDS FILE KIND PID COUNT
wait_case() {
	local out st
	out=$("$T/cost-bin" wait "$4" "$5" "$6" "$7" 1)
	st=$?
	[ "$st" = "$2" ] || why "exit $st, want $2: $out"
	[[ "$out" == "WAIT records=$3 "* ]] || why "want $3 records: $out"
	result "waiter: $1"
}
{
	echo '{"ts":1,"cpu":0,"pid":77,"tid":77,"comm":"lbr_snap_cost"}'
	echo '{"ts":2,"cpu":0,"pid":770,"tid":770,"comm":"lbr_snap_cost"}'
	echo '{"ts":3,"cpu":1,"pid":77,"tid":77,"comm":"lbr_snap_cost"}'
	echo ' "pid":77, not a record'
	echo '{"ts":4,"cpu":1,"pid":5,"tid":5,"comm":"lbr-snap"}'
} >"$T/w.json"
wait_case "JSON: the storm's records only" 0 2 "$T/w.json" json 77 2
wait_case "JSON: one more than there is times out, exit 1" 1 2 \
	"$T/w.json" json 77 3
{
	echo '12.000000 cpu0 lbr_snap_cost[77] do_sys_openat2() = -ENOENT'
	echo '  kernel_function_1+0x2 -> kernel_function_3 lbr_snap_cost[77]'
	echo '12.000001 cpu1 lbr_snap_cost[770] do_sys_openat2() = -ENOENT'
	echo '12.000002 cpu1 lbr_snap_cost[77] do_sys_openat2() = -ENOENT'
} >"$T/w.txt"
wait_case "text: headers of the storm's records only" 0 2 "$T/w.txt" text 77 2
wait_case "text: a third times out" 1 2 "$T/w.txt" text 77 3
{
	echo '   lbr_snap_cost-77      [000] d..3.  12.1: lbrcost: ret=-2'
	echo '   lbr_snap_cost-770     [000] d..3.  12.2: lbrcost: ret=-2'
	echo '   lbr_snap_cost-77      [001] d..3.  12.3: lbrcost: ret=-2'
} >"$T/w.lines"
wait_case "trace_pipe: the storm's lines only" 0 2 "$T/w.lines" lines 77 2
wait_case "trace_pipe: a third times out" 1 2 "$T/w.lines" lines 77 3
# A comm no longer in trace's cache of them prints as "<...>".
{
	echo '   <...>-77      [001] d..3.  12.4: lbrcost: ret=-2'
	echo '   <...>-770     [001] d..3.  12.5: lbrcost: ret=-2'
	echo '   cat-177       [001] d..3.  12.6: lbrcost: ret=-2'
} >>"$T/w.lines"
wait_case "trace_pipe: a \"<...>-PID\" line of the storm counts" 0 3 \
	"$T/w.lines" lines 77 3
wait_case "trace_pipe: no fourth line, not another pid's" 1 3 \
	"$T/w.lines" lines 77 4
# It reads the file only once its size has held for 100 ms: while one
# process appends a line every 20 ms for 600 ms, the waiter, though the
# file held its 2 records from the start, answers only after that.  And
# a file that keeps growing is read after 2 s, not at the timeout.
# grow_json MS: a line of another pid every 20 ms, for MS ms.
grow_json() {
	python3 -c '
import sys, time
with open(sys.argv[1], "a") as f:
    for i in range(int(sys.argv[2]) // 20):
        time.sleep(0.02)
        f.write("{\"ts\":9,\"cpu\":0,\"pid\":5,\"tid\":5}\n")
        f.flush()
' "$T/w.json" "$1" &
	grow_pid=$!
	# From its first line on: python's start is no pause of the file's.
	local size i
	size=$(stat -c %s "$T/w.json")
	for ((i = 0; i < 1000; i++)); do
		[ "$(stat -c %s "$T/w.json")" = "$size" ] || break
		sleep 0.005
	done
}
grow_json 600
t0=$("$T/cost-bin" now)
w=$("$T/cost-bin" wait "$T/w.json" json 77 2 10)
ms=$(( ($("$T/cost-bin" now) - t0) / 1000000 ))
wait "$grow_pid"
[[ "$w" == "WAIT records=2 "* ]] && [ "$ms" -ge 500 ] ||
	why "answered after $ms ms, while the file still grew: $w"
grow_json 5000
t0=$("$T/cost-bin" now)
w=$("$T/cost-bin" wait "$T/w.json" json 77 2 10)
ms=$(( ($("$T/cost-bin" now) - t0) / 1000000 ))
wait "$grow_pid"
[[ "$w" == "WAIT records=2 "* ]] && [ "$ms" -ge 1900 ] && [ "$ms" -lt 4500 ] ||
	why "a file growing for 5 s: answered after $ms ms, not after 2 s: $w"
result "waiter: reads the file once its size has held (at most 2 s), not while it grows"
# settle, which the reader part runs before its counts: returns once
# every file named has held its size for 100 ms, whichever one grows,
# and not only at its 2 s bound.
: >"$T/w.other"
for order in "$T/w.other $T/w.json" "$T/w.json $T/w.other"; do
	grow_json 600
	t0=$("$T/cost-bin" now)
	# shellcheck disable=SC2086
	"$T/cost-bin" settle $order || why "settle exited $?"
	ms=$(( ($("$T/cost-bin" now) - t0) / 1000000 ))
	wait "$grow_pid"
	[ "$ms" -ge 500 ] && [ "$ms" -lt 1500 ] ||
		why "settle $order: returned after $ms ms, the file grew for 600"
done
"$T/cost-bin" settle "$T/w.no-such-file" 2>/dev/null &&
	why "settle of a missing file exited 0"
result "settle: returns once every file has held its size, fails on a missing one"
# Written 30 s ago: the time is then, not now.
touch -d '30 seconds ago' "$T/w.json"
w=$("$T/cost-bin" wait "$T/w.json" json 77 2 1)
now=$("$T/cost-bin" now)
ago=$(( (now - ${w##*ns=}) / 1000000000 ))
[ "$ago" -ge 29 ] && [ "$ago" -le 31 ] ||
	why "the last write was 30 s ago, the waiter says $ago s ($w)"
result "waiter: the time is the file's last write, not the waiter's read"

# ------------------------------------------------------- check-report.py

# The selftest report's check (tests/guest/check-report.py) on real
# reports of the lab (tests/guest/reports/) and crafted ones: each thing
# it holds the report to, broken, gives a "not ok".
CHECK=$HERE/guest/check-report.py
REPORTS=$HERE/guest/reports
report() {	# report FILE RC [jq-like python edit]: the guest's line
	python3 - "$1" "$2" "${3:-}" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
if sys.argv[3]:
    exec(sys.argv[3])
print("guest output before")
print("# selftest-report rc=%s %s" % (sys.argv[2], json.dumps(rep)))
PY
}
check_report() {	# check_report WANT_FAILURES NAME ARGS...: report on stdin
	local want=$1 name=$2 out got
	shift 2
	out=$("$CHECK" "$@")
	got=$(grep -c '^not ok ' <<<"$out")
	[ -n "${SHOW:-}" ] && echo "$name: $(grep "^not ok " <<<"$out")" >&2
	grep -q '^guest output before$' <<<"$out" ||
		why "$name: the guest's own lines did not go through"
	if [ "$want" = 0 ]; then
		[ "$got" = 0 ] || why "$name: $(grep '^not ok ' <<<"$out")"
	else
		[ "$got" -ge 1 ] || why "$name: no failure"
	fi
	grep -q '^# Totals: pass:' <<<"$out" || why "$name: no totals"
}
LEG=(--cpu lbr-legacy-pmu3 --append "LBR_EXPECT_PERF=1" --script /x/selftests.sh)
AMD=(--cpu lbr-amd --append "LBR_EXPECT_PERF=1" --script /x/selftests.sh)
report "$REPORTS/lbr-legacy-pmu3.json" 0 | check_report 0 "legacy as it is" "${LEG[@]}"
report "$REPORTS/lbr-amd.json" 0 | check_report 0 "AMD as it is" "${AMD[@]}"
result "check-report: the lab's reports pass as they are"
report "$REPORTS/lbr-amd.json" 0 | check_report 1 "an AMD report on lbr-legacy" \
	--cpu lbr-legacy --append LBR_EXPECT_PERF=1 --script /x/selftests.sh
report "$REPORTS/lbr-legacy-pmu3.json" 0 | check_report 1 "perf where none is" \
	--cpu lbr-legacy --script /x/quirks.sh
report "$REPORTS/lbr-legacy-pmu3.json" 0 \
	'rep["configs"][0]["hooks"][0]["cpus"][1]["hook_entries"] = 2' |
	check_report 1 "fexit took 2 entries" "${LEG[@]}"
report "$REPORTS/lbr-legacy-pmu3.json" 0 \
	'rep["configs"][0]["hooks"][1]["cpus"][0]["verdict"] = "no entry left"' |
	check_report 1 "a kretprobe left no entry of 32" "${LEG[@]}"
report "$REPORTS/lbr-amd.json" 0 \
	'rep["configs"][0]["hooks"][0]["cpus"][0]["verdict"] = "no entry left"' |
	check_report 1 "fexit left no entry" "${AMD[@]}"
report "$REPORTS/lbr-legacy-pmu3.json" 0 \
	'[c for c in rep["configs"] if c["mode"] == "raw"][0]["hooks"][0]["cost"]["recorded"]["cpu_msr_accesses"] = 69.0' |
	check_report 1 "the vCPU counted one MSR access less than the module says" "${LEG[@]}"
report "$REPORTS/lbr-legacy-pmu3.json" 0 \
	'[c for c in rep["configs"] if c["mode"] == "raw"][0]["hooks"][1]["cost"]["filtered"]["cpu_msr_accesses"] = None' |
	check_report 1 "no MSR count where the lab counts" "${LEG[@]}"
report "$REPORTS/lbr-legacy-pmu3.json" 0 \
	'rep["configs"][0]["info"]["cpus_failed"] = {"nr": 1, "cpus": "1", "reason": "x"}' |
	check_report 1 "a CPU refused that is not broken" "${LEG[@]}"
report "$REPORTS/lbr-legacy-pmu3.json" 0 | check_report 1 "no CPU refused where one is broken" \
	--cpu lbr-legacy-pmu3 --append "LBR_EXPECT_PERF=1 LBR_LAB_BROKEN_CPUS=1" --script /x/quirks.sh
report "$REPORTS/lbr-legacy-pmu3.json" 1 | check_report 1 "exit 1 with verdict ok" "${LEG[@]}"
report "$REPORTS/lbr-legacy-pmu3.json" 0 'rep["was_loaded"] = True' |
	check_report 1 "a module loaded before" "${LEG[@]}"
result "check-report: a wrong backend, perf, entries, MSR count, refused CPU or exit fails"
echo "guest output before" | check_report 1 "no report" "${LEG[@]}"
out=$(echo "guest output before" | "$CHECK" --script /x/stress.sh)
[ "$out" = "guest output before" ] || why "another script's output changed: $out"
report "$REPORTS/lbr-amd.json" 0 | sed 's/"verdict"/"verd/' |
	check_report 1 "a report cut short" "${AMD[@]}"
result "check-report: no report, or a broken one, fails the kselftest scripts only"

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail skip:0"
[ "$fail" = 0 ]
