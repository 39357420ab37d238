# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# add, del, capture and filter (the task filter, lbr=) through
# fake-ioctl.c, their failures explained, their exit codes; --pid, --tgid
# and --comm on the user side.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

want add.out "added foo: target 7, hook kretprobe" \
	"added bar%ptr@fexit: target 7, hook fexit"
want add.err "fake: ADD_TARGET foo" "fake: ADD_TARGET bar%ptr@fexit"
t "add SPEC...: ADD_TARGET each, says id and hook" 0 add.out add.err \
	"$FAKE" -d stream.bin add foo bar%ptr@fexit
want del.out "deleted foo" "deleted bar"
want del.err "fake: DEL_TARGET foo" "fake: DEL_TARGET bar"
t "del SYM...: DEL_TARGET by name, spec suffixes dropped" 0 del.out del.err \
	"$FAKE" -d stream.bin del foo bar%ptr/2@fexit
want cap-all.err "fake: SET_CAPTURE 1"
t "capture all: SET_CAPTURE 1" 0 /dev/null cap-all.err \
	"$FAKE" -d stream.bin capture all
want cap-err.err "fake: SET_CAPTURE 0"
t "capture errors: SET_CAPTURE 0" 0 /dev/null cap-err.err \
	"$FAKE" -d stream.bin capture errors

want filter.err "fake: SET_FILTER flags=6 pid=0 tgid=42 comm=cat"
t "filter tgid=N comm=NAME: SET_FILTER with both" 0 /dev/null filter.err \
	"$FAKE" -d stream.bin filter tgid=42 comm=cat
want filter-pid.err "fake: SET_FILTER flags=1 pid=7 tgid=0 comm="
t "filter pid=N: SET_FILTER by thread id" 0 /dev/null filter-pid.err \
	"$FAKE" -d stream.bin filter pid=7
want filter-off.err "fake: SET_FILTER flags=0 pid=0 tgid=0 comm="
t "filter off: SET_FILTER clears it" 0 /dev/null filter-off.err \
	"$FAKE" -d stream.bin filter off
want filter-lbr.out "LBR filter: kernel,any_return"
want filter-lbr.err "fake: SET_LBR_FILTER cpl=1 kinds=0x48"
t "filter lbr=any_return: SET_LBR_FILTER with returns and far branches" 0 \
	filter-lbr.out filter-lbr.err \
	"$FAKE" -d stream.bin filter lbr=any_return
want filter-lbr2.out "LBR filter: kernel,user,any_call,cond,rel_jmp"
want filter-lbr2.err "fake: SET_LBR_FILTER cpl=3 kinds=0x67" \
	"fake: SET_FILTER flags=1 pid=7 tgid=0 comm="
t "filter lbr=u,cond,k,call,ind_call,rel_jmp,far pid=N: both filters, named back by perf's sets" \
	0 filter-lbr2.out filter-lbr2.err \
	"$FAKE" -d stream.bin filter lbr=u,cond,k,call,ind_call,rel_jmp,far pid=7
want filter-lbr-user.out "LBR filter: user,any"
want filter-lbr-user.err "fake: SET_LBR_FILTER cpl=2 kinds=0x7f"
t "filter lbr=user: a privilege word alone keeps every kind" 0 \
	filter-lbr-user.out filter-lbr-user.err \
	"$FAKE" -d stream.bin filter lbr=user
want filter-lbr-ret.out "LBR filter: kernel,ret"
want filter-lbr-ret.err "fake: SET_LBR_FILTER cpl=1 kinds=0x8"
t "filter lbr=ret: a kind without its perf set named alone" 0 \
	filter-lbr-ret.out filter-lbr-ret.err \
	"$FAKE" -d stream.bin filter lbr=ret
want filter-lbr-enotsup.err "fake: SET_LBR_FILTER cpl=1 kinds=0x20" \
	"lbr-snap: filter lbr=rel_jmp: this CPU cannot filter so (an Arch LBR that filters no kind of branch), or perf cannot (no relative jumps, no far branches without the calls or returns): mode=raw can"
t "filter lbr=: EOPNOTSUPP explained, exit 1" 1 /dev/null \
	filter-lbr-enotsup.err env FAKE_LBR_LBR_ERRNO=95 \
	"$FAKE" -d stream.bin filter lbr=rel_jmp
filter_lbr_bad()
{
	local w

	for w in lbr= lbr=kernel,bogus lbr=any_ret lbr=kernel,, lbr=,cond lbr=ANY; do
		"$FAKE" -d stream.bin filter "$w" 2>filter-bad.err && {
			echo "filter $w: accepted"
			return 1
		}
		[ $? = 2 ] || { echo "filter $w: not a usage error"; return 1; }
		grep -q SET_ filter-bad.err && {
			echo "filter $w: an ioctl was called"
			return 1
		}
	done
	return 0
}
check "filter lbr=: a bad filter is a usage error, no ioctl" filter_lbr_bad

filter_bad()
{
	local w

	for w in bogus pid=x tgid=-1 comm=0123456789abcdef "pid=1 off" uid=3; do
		# shellcheck disable=SC2086
		"$FAKE" -d stream.bin filter $w 2>filter-bad.err && {
			echo "filter $w: accepted"
			return 1
		}
		[ $? = 2 ] || { echo "filter $w: not a usage error"; return 1; }
		grep -q SET_FILTER filter-bad.err && {
			echo "filter $w: SET_FILTER called"
			return 1
		}
	done
	return 0
}
check "filter: a bad word is a usage error, no SET_FILTER" filter_bad
want filter-eperm.err "fake: SET_FILTER flags=2 pid=0 tgid=1 comm=" \
	"lbr-snap: filter tgid=1: not permitted: needs CAP_SYS_ADMIN and the device opened for writing"
t "filter: EPERM explained, exit 4" 4 /dev/null filter-eperm.err \
	env FAKE_LBR_CTL_ERRNO=1 "$FAKE" -d stream.bin filter tgid=1

# --pid, --tgid and --comm on the user side: what the module's filter
# would keep, by the records' own pid, tgid and comm.
task_opts()
{
	local want got

	"$LBR" -d paths.bin "${KS[@]}" --json >all.jsonl || return 1
	for f in "--tgid 1003" "--pid 1003" "--comm paths" "--comm nosuch" \
		 "--tgid 1003 --comm nosuch"; do
		# shellcheck disable=SC2086
		"$LBR" -d paths.bin "${KS[@]}" --json $f >sel.jsonl || return 1
		want=$(python3 - "$f" <<'EOF'
import json, sys
opt = sys.argv[1].split()
keep = dict(zip(opt[0::2], opt[1::2]))
n = 0
for line in open("all.jsonl"):
    r = json.loads(line)
    if "--tgid" in keep and r["pid"] != int(keep["--tgid"]):
        continue
    if "--pid" in keep and r["tid"] != int(keep["--pid"]):
        continue
    if "--comm" in keep and r["comm"] != keep["--comm"]:
        continue
    n += 1
print(n)
EOF
)
		got=$(wc -l <sel.jsonl)
		[ "$got" = "$want" ] || { echo "$f: $got records, expected $want"; return 1; }
	done
	# The same in report, which counts what streaming would print.
	"$LBR" -d paths.bin "${KS[@]}" --tgid 1003 report --json >rep.jsonl || return 1
	got=$(python3 -c 'import json,sys; print(sum(json.loads(l)["count"] for l in open("rep.jsonl")))')
	[ "$got" = 1 ] || { echo "report --tgid 1003: $got records, expected 1"; return 1; }
	"$LBR" -d paths.bin "${KS[@]}" --pid 1003 add foo 2>/dev/null &&
		{ echo "--pid with add accepted"; return 1; }
	return 0
}
check "--pid, --tgid, --comm keep only that task's records (streaming, report)" task_opts

want add-eperm.err "fake: ADD_TARGET foo" \
	"lbr-snap: add foo: not permitted: needs CAP_SYS_ADMIN and the device opened for writing, or the function is on lbr_snap's own capture path (see the kernel log)"
t "add: EPERM explained, exit 4" 4 /dev/null add-eperm.err \
	env FAKE_LBR_CTL_ERRNO=1 "$FAKE" -d stream.bin add foo
want add-enoent.err "fake: ADD_TARGET nosuch" \
	"lbr-snap: add nosuch: no such function in the kernel, or no entry to hook (see the kernel log)"
t "add: ENOENT explained, exit 1" 1 /dev/null add-enoent.err \
	env FAKE_LBR_CTL_ERRNO=2 "$FAKE" -d stream.bin add nosuch
want add-ebusy.err "fake: ADD_TARGET foo@fexit" \
	"lbr-snap: add foo@fexit: busy: another tracer or direct call holds the function, or the hook is in use (see the kernel log)"
t "add: EBUSY explained, exit 1" 1 /dev/null add-ebusy.err \
	env FAKE_LBR_CTL_ERRNO=16 "$FAKE" -d stream.bin add foo@fexit
want add-some.out "added b: target 7, hook kretprobe"
want add-some.err "fake: ADD_TARGET a" \
	"lbr-snap: add a: invalid: expected SYM[%type][/N][@hook] with type int, long, ptr, bool or void and hook kretprobe or fexit, or kprobes refuse the function (see the kernel log)" \
	"fake: ADD_TARGET b"
t "add: a failed SPEC does not stop the next; exit 1" 1 add-some.out \
	add-some.err env FAKE_LBR_ADD_FAIL=a "$FAKE" -d stream.bin add a b
want del-enoent.err "fake: DEL_TARGET foo" \
	"lbr-snap: del foo: not a target (lbr-snap stats lists them)"
t "del: ENOENT explained, exit 1" 1 /dev/null del-enoent.err \
	env FAKE_LBR_CTL_ERRNO=2 "$FAKE" -d stream.bin del foo
want cap-eperm.err "fake: SET_CAPTURE 1" \
	"lbr-snap: capture all: not permitted: needs CAP_SYS_ADMIN and the device opened for writing"
t "capture: EPERM explained, exit 4" 4 /dev/null cap-eperm.err \
	env FAKE_LBR_CTL_ERRNO=1 "$FAKE" -d stream.bin capture all
want ctl-nodev.err "lbr-snap: nodev not found: is the lbr_snap module loaded? (modprobe lbr_snap targets=...)"
t "add without the module: exit 3" 3 /dev/null ctl-nodev.err \
	"$FAKE" -d nodev add foo
want ctl-abi.err "lbr-snap: stream.bin: module ABI version 2, but this tool speaks version 1: use the lbr-snap built with the module"
t "del with an ABI mismatch: exit 5, no DEL_TARGET" 5 /dev/null ctl-abi.err \
	env FAKE_LBR_ABI=2 "$FAKE" -d stream.bin del foo
want ctl-file.err "lbr-snap: stream.bin: not an lbr_snap device"
t "capture on a regular file: exit 1" 1 /dev/null ctl-file.err \
	"$LBR" -d stream.bin capture all
