# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# why through fake-ioctl.c, on a crafted stream (gen-records.c why) of one
# thread's records, its own kallsyms: a failing openat() with a NULL, an
# origin and its caller; an error of a system call that succeeded; one
# outside system calls; a timerfd_create() decided in the wrapper's body
# before a kfree(); another thread's page fault, outside system calls,
# closed by its entry function (-e handle_mm_fault); a third's system
# call not numbered (begun before the filter took it), whose wrapper
# closes nothing: counted outside.  Call stacks give
# depths, entry_ns durations.  Entry functions named, not patterns: found
# by name.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

./gen-records why >why.bin
cat >why-kallsyms.txt <<'SYMS'
ffffffff81000000 T _text
ffffffff81002800 T do_syscall_64
ffffffff81010000 T __x64_sys_openat
ffffffff81010100 T walk_component
ffffffff81010200 T step_into
ffffffff81010300 T lookup_fast
ffffffff81010400 T __x64_sys_timerfd_create
ffffffff81010500 T __do_sys_timerfd_create
ffffffff81010600 T kfree
ffffffff81010700 T do_sys_openat2
ffffffff81010800 T handle_mm_fault
ffffffff81010900 T _etext
ffffffffc0003000 t lbr_fexit_lbr_7	[lbr_snap_fexit]
SYMS
WHY=("$FAKE" -d why.bin --kallsyms why-kallsyms.txt why
     -e __x64_sys_openat -e __x64_sys_timerfd_create -e handle_mm_fault
     -a step_into -a walk_component -a lookup_fast -a do_sys_openat2)

why_text()
{
	"${WHY[@]}" -- true >why.out 2>why.err ||
		{ echo "exit $?"; cat why.err; return 1; }
	grep -v '^ *\[#\|^[0-9.]* cpu\|^  returned\|^  call stack\|^    [a-z0-9_]*+0x\|^$' \
		why.out >why.got
	printf '%s\n' \
		"openat() = -2 (ENOENT: No such file or directory)  whycmd[300] tid 300, syscall 257, 12999.000 ms" \
		"  error chain, outermost first:" \
		"      __x64_sys_openat() = -ENOENT  500004.000 us" \
		"        walk_component() = ERR_PTR(-ENOENT)  250002.000 us" \
		"    *     step_into() = ERR_PTR(-ENOENT)  1.500 us" \
		"  origin: step_into+0x30" \
		"timerfd_create() = -22 (EINVAL: Invalid argument)  whycmd[300] tid 300, syscall 283, 13747.000 ms" \
		"  error chain, outermost first:" \
		"    * __x64_sys_timerfd_create() = -EINVAL" \
		"  origin: __do_sys_timerfd_create+0x10" \
		"  (the module dropped records while it ran, a buffer full: the origin may be deeper)" \
		"  (cpu1 dropped records before this one: its buffer was full, buffer_kb=)" \
		"handle_mm_fault() = -14 (EFAULT: Bad address)  whycmd[300] tid 301, not in a system call" \
		"  error chain, outermost first:" \
		"      handle_mm_fault() = -EFAULT  300000.000 us" \
		"    * lookup_fast() = ERR_PTR(-EFAULT)" \
		"  origin: lookup_fast+0x10" |
		diff - why.got || return 1
	grep -q '^lbr-snap: why: 1 errors inside system calls that did not fail' why.err &&
	grep -q '^lbr-snap: why: 3 errors outside system calls' why.err &&
	grep -q '^lbr-snap: why: 1 failures had records dropped while they ran' why.err &&
	grep -q "^lbr-snap: why: \(no source lines for the kernel's origins: its debug info gives them (Debian's linux-image-RELEASE-dbg, or -k VMLINUX\|this lbr-snap is built without libdw\)" why.err &&
	grep -q '^fake: SET_FILTER flags=8 pid=0 tgid=[1-9]' why.err ||
		{ echo "counts or the tree filter not said:"; cat why.err; return 1; }
}
check "why: failures by system call, chains, origins, the wrapper's body not kfree(), counts, records dropped in one, how to have source lines" why_text

why_json()
{
	"${WHY[@]}" --json -- true >why.jsonl 2>/dev/null || return 1
	sed 's/,"record".*//' why.jsonl >why.jgot
	grep -c '^{"syscall":' why.jgot | grep -qx 3 &&
	grep -q '^{"syscall":"handle_mm_fault","nr":null,"retval":-14,"errno":"EFAULT","pid":300,"tid":301,"comm":"whycmd","duration_ns":300000000,.*"origin":{"func":"lookup_fast","off":16,' why.jgot &&
	grep -q '^{"syscall":"openat","nr":257,"retval":-2,"errno":"ENOENT","pid":300,"tid":300,"comm":"whycmd",.*"records_dropped":false,"origin":{"func":"step_into","off":48,"file":null,"line":null,"branch":1,"hooked":"step_into"}' why.jgot &&
	grep -q '"records_dropped":true,"origin":{"func":"__do_sys_timerfd_create","off":16,.*"hooked":"__x64_sys_timerfd_create"}' why.jgot &&
	grep -q '"chain":\[{"func":"__x64_sys_openat","retval":-2,"ts":[0-9]*,"duration_ns":500004000,"depth":0,"depth_cut":false},{"func":"walk_component","retval":-2,"ts":[0-9]*,"duration_ns":250002000,"depth":1,"depth_cut":false},{"func":"step_into","retval":-2,"ts":[0-9]*,"duration_ns":1500,"depth":2,"depth_cut":false}\]' why.jgot &&
	grep -q '"chain":\[{"func":"__x64_sys_timerfd_create","retval":-22,"ts":[0-9]*,"duration_ns":null,"depth":null,"depth_cut":false}\]' why.jgot ||
		{ cat why.jgot; return 1; }
}
check "why --json: one object a failure, origin func, off, no file without DWARF, the hooked function; each call's duration and depth among the hooked functions, null unknown" why_json

# why -o: the run's records and what why knew besides them (its hooked
# and entry functions, the stack depth, the tree filter) in a recording;
# why -i: the same answer from the file alone, text and JSON, with no
# module and another kallsyms on the machine.  A recording of record -o
# is not one of why's; -i takes no command.
why_recording()
{
	"${WHY[@]}" -o why.rec -- true >why.out 2>why.err ||
		{ echo "why -o: exit $?"; cat why.err; return 1; }
	"${WHY[@]}" --json -- true >why.jsonl 2>/dev/null || return 1
	head -n 1 why.rec | grep -qx 'lbr-snap recording 1' &&
	grep -aqx 'why-stack-depth [0-9]*' why.rec &&
	grep -aqx 'why-entry ffffffff81010800' why.rec ||
		{ echo "no why header lines"; head -c 600 why.rec; return 1; }
	"$LBR" why -i why.rec >replay.out 2>replay.err ||
		{ echo "why -i: exit $?"; cat replay.err; return 1; }
	diff why.out replay.out || return 1
	"$LBR" --json why -i why.rec >replay.jsonl 2>/dev/null &&
	diff why.jsonl replay.jsonl || return 1
	grep -q '^lbr-snap: why: 1 errors inside system calls that did not fail' replay.err &&
	grep -q '^lbr-snap: why: 3 errors outside system calls' replay.err ||
		{ cat replay.err; return 1; }
	"$FAKE" -d why.bin --kallsyms why-kallsyms.txt record -o plain.rec 2>/dev/null
	"$LBR" why -i plain.rec >replay.out 2>replay.err
	[ $? = 6 ] && grep -q '^lbr-snap: plain.rec: not a recording of why (why -o writes one' replay.err ||
		{ echo "a record -o recording:"; cat replay.err; return 1; }
	"$LBR" why -i why.rec -- true >/dev/null 2>replay.err
	[ $? = 125 ] && grep -q 'why -i replays a why -o recording: no command' replay.err ||
		{ echo "why -i with a command:"; cat replay.err; return 1; }
	# A bad why-* line (an address not hex, a depth too big): exit 6.
	sed 's/^why-stack-depth .*/why-stack-depth 4294967297/' why.rec >bad.rec
	"$LBR" why -i bad.rec >/dev/null 2>replay.err
	[ $? = 6 ] && grep -q '^lbr-snap: bad.rec: a bad why-\* header line' replay.err ||
		{ echo "a depth of 2^32 + 1:"; cat replay.err; return 1; }
	sed 's/^why-entry .*/why-entry -1/' why.rec >bad.rec
	"$LBR" why -i bad.rec >/dev/null 2>&1
	[ $? = 6 ] || { echo "why-entry -1 taken"; return 1; }
}
check "why -o FILE, why -i FILE: the same answer from the recording alone, text and JSON; record -o's and bad why-* lines refused" why_recording

# What why -o keeps besides the records, each seen in the answer: a
# module without the tree filter (failures by thread), a stack as deep
# as stack_depth (depth_cut).
why_recording_kept()
{
	local env

	for env in FAKE_LBR_NO_TREE=1 FAKE_LBR_STACK_DEPTH=2; do
		env "$env" "${WHY[@]}" --json -o kept.rec -- true \
			>kept.jsonl 2>kept.err || { cat kept.err; return 1; }
		"$LBR" --json why -i kept.rec >kept-i.jsonl 2>/dev/null &&
		diff kept.jsonl kept-i.jsonl || { echo "$env"; return 1; }
	done
	grep -q '"depth_cut":true' kept.jsonl ||
		{ echo "no depth_cut with stack_depth 2"; cat kept.jsonl; return 1; }
	FAKE_LBR_NO_TREE=1 "${WHY[@]}" -- true >kept.out 2>/dev/null
	"${WHY[@]}" -- true >tree.out 2>/dev/null
	cmp -s kept.out tree.out &&
		{ echo "the same answer with and without the tree filter"; return 1; }
	return 0
}
check "why -o keeps the tree filter's absence and the stack depth: why -i's answer as the run's" why_recording_kept

# why -o that cannot write: a symlink refused before anything is
# attached; an existing file left as it was when the run fails before
# its first record; a write failing midway (RLIMIT_FSIZE, EFBIG) stops
# the recording at its last whole record, which why -i reads, while the
# run goes on, detaches everything and exits 125.
why_recording_fails()
{
	ln -sf why.rec link.rec
	"${WHY[@]}" -o link.rec -- true >/dev/null 2>fail.err
	[ $? = 125 ] && grep -q '^lbr-snap: link.rec: .*' fail.err &&
	! grep -q '^fake: ADD_TARGET' fail.err ||
		{ echo "symlink:"; cat fail.err; return 1; }
	echo old >old.rec
	FAKE_LBR_CTL_ERRNO=5 "${WHY[@]}" -o old.rec -- true >/dev/null 2>fail.err
	[ $? = 125 ] && [ "$(cat old.rec)" = old ] ||
		{ echo "old.rec changed by a run that failed:"; cat fail.err old.rec; return 1; }
	FAKE_LBR_CTL_ERRNO=5 "${WHY[@]}" -o new.rec -- true >/dev/null 2>fail.err
	[ ! -e new.rec ] || { echo "new.rec left by a run that failed"; return 1; }
	local size
	size=$(grep -abo '^records$' why.rec | cut -d: -f1)
	# Room for the header and a record or so (ulimit -f counts KiB); the
	# limit on the recording alone: its output through pipes.
	{ ( ulimit -f $(( (size + 1500) / 1024 ))
	    "${WHY[@]}" -o cut.rec -- true; echo "rc=$?" >&2 ) 2>&1 >&3 |
		cat >fail.err; } 3>&1 | cat >cut.out
	grep -qx 'rc=125' fail.err &&
	grep -q '^lbr-snap: cut.rec: File too large: the recording stops here, after [0-9]* records' fail.err &&
	[ "$(grep -c '^fake: ADD_TARGET' fail.err)" = \
	  "$(grep -c '^fake: DEL_TARGET' fail.err)" ] &&
	grep -q '^openat() = -2' cut.out ||
		{ echo "write failing midway:"; cat fail.err; return 1; }
	"$LBR" why -i cut.rec >/dev/null 2>fail.err ||
		{ echo "why -i of the cut recording: exit $?"; cat fail.err; return 1; }
}
check "why -o that cannot write: a symlink refused, a file left as it was, a write failing midway cut to whole records; all detached, exit 125" why_recording_fails

# why -p: the running process under the tree filter, not a command; ends
# when it exits, with its failures.
why_process()
{
	sleep 3 &
	local pid=$!

	"${WHY[@]}" -p "$pid" >why.out 2>why.err || { cat why.err; return 1; }
	kill "$pid" 2>/dev/null
	grep -q '^openat() = -2 (ENOENT' why.out &&
	grep -q "^lbr-snap: attached .*; watching process $pid until it exits or ^C" why.err &&
	grep -q "^fake: SET_FILTER flags=8 pid=0 tgid=$pid comm=$" why.err ||
		{ cat why.out why.err; return 1; }
}
check "why -p PID: the process under the tree filter until it exits" why_process

# --duration ends a command that would run for ever, and -p's watch.
why_duration()
{
	local t0=$SECONDS

	"${WHY[@]}" --duration 1 -- sleep 30 >why.out 2>why.err
	[ $((SECONDS - t0)) -lt 10 ] &&
	grep -q '^lbr-snap: 1 s (--duration) are over: stopping sleep' why.err &&
	grep -q '^openat() = -2 (ENOENT' why.out || { cat why.err; return 1; }
	t0=$SECONDS
	"${WHY[@]}" --duration 1 -p $$ >why.out 2>why.err &&
	[ $((SECONDS - t0)) -lt 10 ] &&
	grep -q '^openat() = -2 (ENOENT' why.out || { cat why.err; return 1; }
}
check "why --duration: stops CMD (SIGTERM) and -p's watch" why_duration

# A process that is gone: said, exit 125 (trace's own failure).
why_no_process()
{
	local pid

	sh -c 'exit 0' & pid=$!
	wait "$pid"
	"${WHY[@]}" -p "$pid" >why.out 2>why.err
	[ $? = 125 ] && grep -q "^lbr-snap: -p $pid: no such process" why.err ||
		{ cat why.err; return 1; }
}
check "why -p of a process gone: said, exit 125" why_no_process

# A command that does not exist, by path or in PATH: said, exit 127, as
# a shell's; every target taken back.
why_no_cmd()
{
	local c

	for c in /no/such/cmd no-such-cmd-in-path; do
		"${WHY[@]}" -- "$c" >why.out 2>why.err
		[ $? = 127 ] &&
		grep -q "^lbr-snap: $c: No such file or directory\$" why.err &&
		[ "$(grep -c '^fake: ADD_TARGET' why.err)" = \
		  "$(grep -c '^fake: DEL_TARGET' why.err)" ] ||
			{ echo "$c:"; cat why.err; return 1; }
	done
}
check "why of a command that does not exist: said, exit 127, nothing left attached" why_no_cmd

# tests/why/check-oracle.py, the why scenarios' judge, on crafted guest
# output: 20 scenarios, all found; one origin elsewhere; a guest that died
# after 5 of them; a JSON line cut short.
oracle_console()	# $1 = scenarios whose why origin is wrong, $2 = how many oracle lines, $3 = the flood's "not kept"
{
	local i f
	echo "@@KERNEL 6.1.0-test"
	echo "@@PROBES 100 of 101"
	for i in $(seq 0 $(($2 - 1))); do
		echo "@@ORACLE s$i openat ENOENT step_into"
	done
	echo "@@JSON why"
	for i in $(seq 0 19); do
		f=step_into
		[[ " $1 " == *" $i "* ]] && f=walk_component
		printf '{"syscall":"openat","errno":"ENOENT","comm":"wf-%02d","origin":{"func":"%s","off":16,"file":"fs/namei.c","line":1,"branch":0,"hooked":"%s.isra.0"}}\n' "$i" "$f" "$f"
	done
	echo "@@END"
	echo "@@FLOOD"
	for i in $(seq 8); do
		echo '{"syscall":"openat","errno":"ENOENT","comm":"wf-10","origin":{"func":"step_into"}}'
	done
	echo "lbr-snap: why: ${3:-19992} more failures of kinds already shown 8 times were not kept"
	echo "@@END"
}
why_oracle_judge()
{
	local j=$ROOT/tests/why/check-oracle.py i

	for i in $(seq 0 19); do echo "s$i openat ENOENT 2"; done >oracle.list
	oracle_console "" 20 >oracle.con
	python3 "$j" --flood oracle.list lbr-legacy oracle.con 0 >oracle.out ||
		{ cat oracle.out; return 1; }
	grep -qx 'why scenarios=20 origin_found=20 kernel=6.1.0-test cpu=lbr-legacy' oracle.out &&
	grep -qx '# Totals: pass:23 fail:0 skip:0' oracle.out || { cat oracle.out; return 1; }
	oracle_console "" 20 19000 >oracle.con
	python3 "$j" --flood oracle.list lbr-legacy oracle.con 0 >oracle.out &&
		{ echo "a flood with failures unaccounted for passed"; return 1; }
	grep -q '^not ok 22 - .*the flood of 20000 failing openat(): 8 kept, each with an origin: True; 19000 counted as not kept; records dropped said: False' oracle.out ||
		{ cat oracle.out; return 1; }
	oracle_console "7" 20 >oracle.con
	python3 "$j" --flood oracle.list lbr-legacy oracle.con 0 >oracle.out &&
		{ echo "a wrong origin passed"; return 1; }
	grep -q '^not ok 8 - .* s7 .*origin walk_component+0x10 (fs/namei.c:1) (hooked walk_component.isra.0), the oracle says step_into' oracle.out &&
	grep -qx 'why scenarios=20 origin_found=19 kernel=6.1.0-test cpu=lbr-legacy' oracle.out ||
		{ cat oracle.out; return 1; }
	oracle_console "" 5 | head -n 12 >oracle.con
	python3 "$j" --flood oracle.list lbr-legacy oracle.con 0 >oracle.out &&
		{ echo "a guest that died passed"; return 1; }
	grep -qx '1\.\.23' oracle.out &&
	grep -qx '# Totals: pass:5 fail:18 skip:0' oracle.out || { cat oracle.out; return 1; }
	oracle_console "" 20 | sed '/"wf-03"/s/}}$//' >oracle.con
	python3 "$j" --flood oracle.list lbr-legacy oracle.con 99 >oracle.out &&
		{ echo "a cut JSON line and a kernel report passed"; return 1; }
	grep -q '^not ok 21 - .*every JSON line valid: {"syscall"' oracle.out &&
	grep -q '^not ok 23 - .*the guest exited 0 (kernel log clean): 99' oracle.out ||
		{ cat oracle.out; return 1; }
}
check "why scenarios' judge (check-oracle.py): found, a wrong origin, a flood unaccounted for, a guest that died, a cut line" why_oracle_judge
