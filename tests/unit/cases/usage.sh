# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# The command line: usage errors (exit 2, 125 for trace; usage() is
# run.sh's) and --help documenting every option, command and output.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

usage "unknown option" "" --bogus
usage "-n 0" "-n needs a positive number, not 0" -n 0
usage "-n -1" "-n needs a positive number, not -1" -n -1
usage "-n x" "-n needs a positive number, not x" -n x
usage "unknown command" "unknown command: bogus" bogus
usage "two commands" "too many arguments: stats" info stats
usage "-n with info" "-n and --nonblock only apply to streaming, report and record" \
	info -n 1
usage "--nonblock with stats" \
	"-n and --nonblock only apply to streaming, report and record" --nonblock stats
usage "--kallsyms with flush" \
	"--kallsyms, -k and -v only apply to streaming, report, record, trace, why, spec and add" \
	--kallsyms x flush
usage "--json with flush" "--json does not apply to flush" flush --json
# A bad trace command line exits 125, as trace's own failures do.
usage_trace()
{
	local name=$1 msg=$2

	shift 2
	want usage.err "lbr-snap: $msg" "$TRY_HELP"
	t "usage: $name: exit 125 (trace)" 125 /dev/null usage.err "$LBR" "$@"
}
usage_trace "-n with trace" "-n and --nonblock only apply to streaming, report and record" \
	-n 1 trace -e foo -- true
usage_trace "-n x before trace" "-n needs a positive number, not x" \
	-n x trace -e foo -- true
usage "--full with report" \
	"--full and --only-target only apply to streaming and trace" \
	--full report
usage "-e without trace" "-e, --all, --all-tasks and --lbr only apply to trace (-e and --lbr to why)" \
	-e foo
usage "--all with report" "-e, --all, --all-tasks and --lbr only apply to trace (-e and --lbr to why)" \
	--all report
usage_trace "trace without -e" "trace needs at least one -e SYM[%type]" \
	trace -- true
usage_trace "trace without CMD" \
	"trace needs a command: trace -e SYM [--] CMD [ARGS]" trace -e foo
usage_trace "-e with a comma" "-e needs SYM[%type][/N][@hook], not a,b" \
	trace -e a,b -- true
usage_trace "why without CMD" \
	"why needs a command or -p PID: why [-e PAT] [-a PAT] [-o FILE] {[--] CMD [ARGS] | -p PID}, or why -i FILE" why -a foo
usage_trace "why -p and CMD" "why takes a command or -p PID, not both" \
	why -p 1 -- true
usage_trace "why -p 0" "-p needs a process id, not 0" why -p 0
usage_trace "why -p x" "-p needs a process id, not x" why -p x
usage_trace "why --duration 0" \
	"--duration needs whole seconds (1 or more), not 0" why --duration 0 -- true
usage_trace "why --duration -1" \
	"--duration needs whole seconds (1 or more), not -1" why --duration=-1 -- true
usage_trace "trace --duration" "-p and --duration only apply to why" \
	trace --duration 1 -e foo -- true
usage "-p without why" "-p and --duration only apply to why" -p 1 info
usage_trace "why --all" "--all and --all-tasks do not apply to why" \
	why --all -- true
usage_trace "why -a with a comma" "-a needs SYM or a pattern, not a,b" \
	why -a a,b -- true
usage "-a without why" "-a only applies to why" -a foo info
usage "add without SYM" "add needs at least one SYM[%type][/N][@hook]" add
usage "del without SYM" "del needs at least one SYM" del
usage "capture without a mode" "capture needs one mode, errors or all" capture
usage "capture bogus" "capture needs one mode, errors or all" capture bogus
usage "capture two modes" "capture needs one mode, errors or all" \
	capture all errors
usage "--json with add" "--json does not apply to add" --json add foo
usage "-n with del" "-n and --nonblock only apply to streaming, report and record" \
	del -n 1 foo
usage "options after the command word still parse" \
	"too many arguments: x" stats --json x

help_complete()
{
	local word rc=0

	"$LBR" --help >help.txt || return 1
	for word in --device -d --kallsyms --json --count -n --nonblock --help \
		    --full --only-target -e --event --all --all-tasks -k --vmlinux \
		    info stats flush report trace add del capture --version \
		    record --output -o --input -i "build ID" \
		    125 126 127 "Exit status" SIGINT \
		    "(mispredicted)" "probe path" "no LBR" ERR_PTR errno \
		    branches before_target ends_in nr_paths from_file to_line \
		    type_name IND_CALL SYSRET ERET IRQ \
		    from_inline "inlined" ts_sec ts_nsec -v --verbose \
		    LBR_SNAP_ROOT .ko.zst /usr/lib/debug; do
		grep -qF -- "$word" help.txt && continue
		echo "--help lacks $word"
		rc=1
	done
	return "$rc"
}
check "--help documents every option, command and output" help_complete
