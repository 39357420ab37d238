# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# trace through fake-ioctl.c: attach, run CMD, detach, restore (--all,
# --lbr), a failed attach, exit statuses (125, 126, 127, CMD's own),
# SIGTERM before and while CMD runs, what it says at the end; stats of a
# batch's thousands of targets.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

# The capture mode first: a void target attaches only in mode all, and
# goes before the mode is restored.
want trace.err "fake: SET_CAPTURE 1" "fake: ADD_TARGET foo" \
	"fake: ADD_TARGET bar%ptr" \
	"lbr-snap: attached foo (kretprobe), bar%ptr (kretprobe), capturing every return; running sh" \
	"lbr-snap: trace: 0 records printed" \
	"lbr-snap: foo (kretprobe): 0 returns: 0 captured, 0 filtered, 0 dropped" \
	"lbr-snap: bar%ptr (kretprobe): 0 returns: 0 captured, 0 filtered, 0 dropped" \
	"lbr-snap: no records: no target was hit while it ran" \
	"lbr-snap: hint: foo has had no hits: is it called, and not inlined into its callers?" \
	"lbr-snap: hint: bar has had no hits: is it called, and not inlined into its callers?" \
	"fake: DEL_TARGET foo" "fake: DEL_TARGET bar" "fake: SET_CAPTURE 0"
t "trace: --all, attach, run, detach, restore; CMD's exit status" 3 \
	/dev/null trace.err \
	"$FAKE" -d paths.bin trace -e foo -e bar%ptr --all -- sh -c 'exit 3'

# --lbr: set after the capture mode, before the targets; the old filter
# back after they are gone.
trace_lbr()
{
	"$FAKE" -d paths.bin trace --lbr=cond,k -e foo -- true 2>trace-lbr.err ||
		{ echo "exit $?"; cat trace-lbr.err; return 1; }
	grep -E '^fake: (SET_|ADD_|DEL_)|LBR filter' trace-lbr.err >trace-lbr.got
	printf '%s\n' "fake: SET_LBR_FILTER cpl=1 kinds=0x1" \
		"fake: ADD_TARGET foo" \
		"lbr-snap: attached foo (kretprobe), LBR filter cond,k; running true" \
		"fake: DEL_TARGET foo" \
		"fake: SET_LBR_FILTER cpl=1 kinds=0x48" | diff - trace-lbr.got
}
check "trace --lbr=KINDS: set for the run, the old filter put back" trace_lbr
want trace-lbr-fail.err "fake: SET_LBR_FILTER cpl=1 kinds=0x20" \
	"lbr-snap: --lbr=rel_jmp: this CPU cannot filter so, or perf cannot (mode=raw can)"
t "trace --lbr: a filter the module refuses stops it before CMD; exit 125" \
	125 /dev/null trace-lbr-fail.err env FAKE_LBR_LBR_ERRNO=95 \
	"$FAKE" -d paths.bin trace --lbr=rel_jmp -e foo -- touch ran-lbr
check "trace --lbr refused: CMD did not run" test ! -e ran-lbr
# EBUSY: applied on the CPUs lbr_snap holds: CMD runs, the old filter back.
trace_lbr_busy()
{
	FAKE_LBR_LBR_ERRNO=16 "$FAKE" -d paths.bin trace --lbr=cond -e foo -- \
		touch ran-lbr-busy 2>trace-lbr-busy.err ||
		{ echo "exit $?"; cat trace-lbr-busy.err; return 1; }
	test -e ran-lbr-busy || { echo "CMD did not run"; return 1; }
	grep -c '^fake: SET_LBR_FILTER' trace-lbr-busy.err | grep -qx 2 ||
		{ echo "the old filter not put back"; cat trace-lbr-busy.err; return 1; }
	grep -q 'someone else holds the LBR filter' trace-lbr-busy.err
}
check "trace --lbr: EBUSY said, CMD runs, the old filter put back" trace_lbr_busy

want trace-fail.err "fake: ADD_TARGET foo" "fake: ADD_TARGET bar%ptr" \
	"lbr-snap: ADD_TARGET bar%ptr: Invalid argument" "fake: DEL_TARGET foo"
t "trace: a target that fails detaches the others, CMD not run; exit 125" 125 \
	/dev/null trace-fail.err env FAKE_LBR_ADD_FAIL=bar%ptr \
	"$FAKE" -d paths.bin trace -e foo -e bar%ptr -e baz -- touch ran
check "trace: CMD did not run after a failed attach" test ! -e ran

want trace-exists.err "fake: ADD_TARGET foo" \
	"lbr-snap: foo: already a target (or an alias of one): using it, leaving it attached" \
	"fake: ADD_TARGET bar" \
	"lbr-snap: attached foo (a target already), bar (kretprobe); running no-such-cmd" \
	"lbr-snap: no-such-cmd: No such file or directory" \
	"lbr-snap: trace: 0 records printed" \
	"lbr-snap: foo: not listed by the module: no counters" \
	"lbr-snap: bar (kretprobe): 0 returns: 0 captured, 0 filtered, 0 dropped" \
	"lbr-snap: no records: no target was hit while it ran" \
	"lbr-snap: hint: bar has had no hits: is it called, and not inlined into its callers?" \
	"fake: DEL_TARGET bar"
t "trace: an existing target stays; unknown CMD exits 127" 127 /dev/null \
	trace-exists.err env FAKE_LBR_ADD_EXISTS=foo \
	"$FAKE" -d paths.bin trace -e foo -e bar -- no-such-cmd

many_stats()
{
	FAKE_LBR_MANY_STATS=3000 "$FAKE" -d stream.bin stats --json >many-stats.json ||
		return 1
	python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["targets"]
names = [x["name"] for x in t]
sys.exit(0 if len(t) == 3004 and "batch_2999" in names else "%d targets" % len(t))' many-stats.json
}
check "stats lists every target, 3,004 with a batch's, not the first 64" many_stats

want trace-nostats.err "fake: ADD_TARGET foo" \
	"lbr-snap: GET_STATS: Input/output error: no counters" \
	"lbr-snap: attached foo (kretprobe); running true" \
	"lbr-snap: GET_STATS: Input/output error: no counters" \
	"lbr-snap: trace: 0 records printed" \
	"lbr-snap: foo: not listed by the module: no counters" \
	"lbr-snap: no records: no target was hit while it ran" \
	"fake: DEL_TARGET foo"
t "trace: GET_STATS failing is said, not taken for targets gone" 0 \
	/dev/null trace-nostats.err env FAKE_LBR_STATS_ERRNO=5 \
	"$FAKE" -d paths.bin trace -e foo -- true

# Wait until FILE holds LINE (60 s at most, by the clock).
wait_line()	# FILE LINE
{
	local end=$((SECONDS + 60))

	until grep -qxF "$2" "$1" 2>/dev/null; do
		[ "$SECONDS" -ge "$end" ] && { echo "no '$2' in $1 in 60 s" >&2; return 1; }
		sleep 0.05
	done
}

# What trace says of target foo when it had no hits.
FOO_SUMMARY=("lbr-snap: trace: 0 records printed"
	"lbr-snap: foo (kretprobe): 0 returns: 0 captured, 0 filtered, 0 dropped"
	"lbr-snap: no records: no target was hit while it ran"
	"lbr-snap: hint: foo has had no hits: is it called, and not inlined into its callers?")

# The command says it runs, and leaves its pid for the cleanup.
CMD_STARTED=(sh -c 'echo started >&2; echo $$ >cmd.pid; exec sleep 30')

trace_signal()
{
	local tool rc

	rm -f sig.err cmd.pid
	"$FAKE" -d paths.bin trace -e foo -- "${CMD_STARTED[@]}" 2>sig.err &
	tool=$!
	# The command runs (a fixed sleep was a race on a loaded machine).
	wait_line sig.err started
	kill -TERM "$tool"
	wait "$tool"
	rc=$?
	cat sig.err >&2
	return "$rc"
}
want trace-sig.err "fake: ADD_TARGET foo" \
	"lbr-snap: attached foo (kretprobe); running sh" started \
	"${FOO_SUMMARY[@]}" "fake: DEL_TARGET foo"
t "trace: SIGTERM goes to CMD, then detach; exit 128+15" 143 /dev/null \
	trace-sig.err trace_signal

# A signal after the targets are attached but before the command runs
# (here while kallsyms, a FIFO, is not yet written) is not lost: the
# command never starts (it did once, for its whole 30 s: the signal went
# to the child between fork() and exec()), and trace detaches and exits.
trace_early_signal()
{
	local tool rc

	rm -f sig.err cmd.pid ksfifo
	mkfifo ksfifo
	"$FAKE" -d paths.bin --kallsyms ksfifo trace -e foo -- "${CMD_STARTED[@]}" 2>sig.err &
	tool=$!
	wait_line sig.err "fake: ADD_TARGET foo"
	kill -TERM "$tool"
	sleep 0.2
	timeout 10 sh -c 'cat kallsyms.txt >ksfifo' ||
		echo "trace did not open kallsyms (ended before?)" >&2
	timeout 10 tail --pid="$tool" -f /dev/null ||
		echo "trace still running after 10 s" >&2
	kill -KILL "$tool" 2>/dev/null
	wait "$tool"
	rc=$?
	[ -s cmd.pid ] && kill -KILL "$(cat cmd.pid)" 2>/dev/null
	cat sig.err >&2
	return "$rc"
}
want trace-early.err "fake: ADD_TARGET foo" "fake: DEL_TARGET foo"
t "trace: SIGTERM before the command runs: it never does; exit 128+15" \
	143 /dev/null trace-early.err trace_early_signal

want trace-perm.err "lbr-snap trace needs root (CAP_SYS_ADMIN)"
trace_unprivileged()
{
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$FAKE" -d paths.bin trace -e foo -- true
	else
		"$FAKE" -d paths.bin trace -e foo -- true
	fi
}
t "trace without CAP_SYS_ADMIN: exit 125, no ioctl at all" 125 /dev/null \
	trace-perm.err trace_unprivileged

# trace's options end at CMD: what follows is CMD's, "--" not needed.
want trace-nodash.out "-c --json -e bar -- x"
want trace-nodash.err "fake: ADD_TARGET foo" \
	"lbr-snap: attached foo (kretprobe); running sh" "${FOO_SUMMARY[@]}" \
	"fake: DEL_TARGET foo"
# shellcheck disable=SC2016
t "trace -e foo CMD ARGS: no --, CMD's options left to CMD; CMD's status" 4 \
	trace-nodash.out trace-nodash.err \
	"$FAKE" -d paths.bin trace -e foo sh -c 'echo "$0 $*"; exit 4' -c --json -e bar -- x
t "trace -e foo -- CMD still works" 0 - - \
	"$FAKE" -d paths.bin --json trace -e foo -- true

printf 'echo never\n' >noexec
chmod 644 noexec
want trace-noexec.err "fake: ADD_TARGET foo" \
	"lbr-snap: attached foo (kretprobe); running ./noexec" \
	"lbr-snap: ./noexec: Permission denied" "${FOO_SUMMARY[@]}" \
	"fake: DEL_TARGET foo"
t "trace: CMD not executable exits 126" 126 /dev/null trace-noexec.err \
	"$FAKE" -d paths.bin trace -e foo ./noexec
# What trace says at the end, from the targets' counters read before it
# detaches (they go with the targets): returns all filtered, with stats'
# hint on the return type; returns captured but none of CMD's; records
# dropped.  It said nothing, and stats could not tell once it detached.
want trace-filtered.err "fake: ADD_TARGET foo%ptr" \
	"lbr-snap: attached foo%ptr (kretprobe); running true" \
	"lbr-snap: trace: 0 records printed" \
	"lbr-snap: foo%ptr (kretprobe): 7 returns: 0 captured, 7 filtered, 0 dropped" \
	"lbr-snap: no records: every return was filtered (capture errors: --all records every return)" \
	"lbr-snap: hint: foo: all 7 returns filtered (as success, or by an errno list or the task filter): is its return type (ptr) right? see \`lbr-snap spec foo\`" \
	"fake: DEL_TARGET foo"
t "trace: every return filtered: said, with the return type hint" 0 /dev/null \
	trace-filtered.err env FAKE_LBR_TRACE_COUNTS=0,7,0 \
	"$FAKE" -d paths.bin trace -e foo%ptr -- true
want trace-others.err "fake: ADD_TARGET foo@fexit" \
	"lbr-snap: attached foo@fexit (fexit); running true" \
	"lbr-snap: trace: 0 records printed" \
	"lbr-snap: foo@fexit (fexit): 8 returns: 5 captured, 2 filtered, 1 dropped" \
	"lbr-snap: 1 record dropped: the module's buffer was full (buffer_kb=)" \
	"lbr-snap: no records of true: the 5 captured were other processes' (--all-tasks prints them)" \
	"fake: DEL_TARGET foo"
t "trace: captured, none of CMD's; dropped: said" 0 /dev/null \
	trace-others.err env FAKE_LBR_TRACE_COUNTS=5,2,1 \
	"$FAKE" -d paths.bin trace -e foo@fexit -- true
# With --json the summary goes to stderr: stdout is the records alone.
./gen-records bigts >trace-json.bin
want trace-json.err "fake: ADD_TARGET foo" \
	"lbr-snap: attached foo (kretprobe); running true" \
	"lbr-snap: trace: 2 records printed" \
	"lbr-snap: foo (kretprobe): 3 returns: 3 captured, 0 filtered, 0 dropped" \
	"fake: DEL_TARGET foo"
t "trace --json: records on stdout, the summary on stderr" 0 - trace-json.err \
	env FAKE_LBR_TRACE_COUNTS=3,0,0 \
	"$FAKE" -d trace-json.bin --json --all-tasks trace -e foo -- true
check "trace --json: stdout is JSON Lines of the 2 records" \
	sh -c 'python3 "$1" record out.txt && test "$(wc -l <out.txt)" = 2' sh \
	"$HERE/check-json.py"

t "trace: CMD's own 125 passes through" 125 /dev/null - \
	"$FAKE" -d paths.bin trace -e foo sh -c 'exit 125'
want trace-nodev.err "lbr-snap: nodev not found: is the lbr_snap module loaded? (modprobe lbr_snap targets=...)"
t "trace: no device (not the default path: no modprobe) exits 125" 125 \
	/dev/null trace-nodev.err "$FAKE" -d nodev trace -e foo true
want trace-abi.err "lbr-snap: paths.bin: module ABI version 2, but this tool speaks version 1: use the lbr-snap built with the module"
t "trace: ABI mismatch exits 125, CMD not run" 125 /dev/null trace-abi.err \
	env FAKE_LBR_ABI=2 "$FAKE" -d paths.bin trace -e foo touch ran2
check "trace: CMD did not run after the ABI mismatch" test ! -e ran2
