# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317,SC2153
# Patterns attached through fake-ioctl.c, on patterns.sh's crafted kernel
# (none if it was not made): in batches (ADD_TARGETS) by add and trace, a
# batch with one refused, past fexit's room, a module without kretprobes
# in a batch, what no batch takes, more than the module takes one by one;
# each match by ADD_TARGET.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check(); SC2153: PATF is patterns.sh's, not a PATT
# misspelt.)

if [ -n "$PAT_OK" ]; then

# More matches than the module's own targets take (64, 3 attached in
# fake-ioctl.c): add puts them in one batch (ADD_TARGETS), with their
# kallsyms addresses; one refused and none is attached.
want pat-batch.out "added 70 functions in a batch: targets 100 to 169, hook fexit"
want pat-batch.err "fake: ADD_TARGETS 70 many_01..many_70 (0xffffffff81002010) fallback"
t "patterns: add of more than the module's own targets: one batch" \
	0 pat-batch.out pat-batch.err "${PATF[@]}" add 'many_*'
want pat-batch-exists.err "fake: ADD_TARGETS 70 many_01..many_70 (0xffffffff81002010) fallback" \
	"lbr-snap: add many_33: already a target (or an alias of one)"
t "patterns: a batch refused for one already a target: it is named, exit 1" \
	1 /dev/null pat-batch-exists.err env FAKE_LBR_ADD_EXISTS=many_33 \
	"${PATF[@]}" add 'many_*'
want pat-batch-fail.err "fake: ADD_TARGETS 70 many_01..many_70 (0xffffffff81002010) fallback" \
	"lbr-snap: add many_33: invalid: expected SYM[%type][/N][@hook] with type int, long, ptr, bool or void and hook kretprobe or fexit, or kprobes refuse the function (see the kernel log)"
t "patterns: a batch with one refused: it is named, nothing attached, exit 1" \
	1 /dev/null pat-batch-fail.err env FAKE_LBR_ADD_FAIL=many_33 \
	"${PATF[@]}" add 'many_*'
# Past the direct calls fexit has room for, the batch's functions take
# kretprobes (LBR_SNAP_BATCH_FALLBACK), and add says how many.
want pat-batch-kr.out "added 70 functions in a batch: targets 100 to 169, hook kretprobe for 30 of them, fexit for the others (past the direct calls this kernel's ftrace takes, or without what fexit needs)"
t "patterns: a batch past fexit's room: the rest by kretprobe, counted" \
	0 pat-batch-kr.out pat-batch.err env FAKE_LBR_FEXIT_ROOM=40 \
	"${PATF[@]}" add 'many_*'
# A module before kretprobes in a batch refuses the flag: the batch goes
# again without it, all fexit; what it adds is taken back with the hook
# field 0 again (such a module refuses the entry otherwise).
want pat-batch-old.out "added 70 functions in a batch: targets 100 to 169, hook fexit"
want pat-batch-old.err "fake: ADD_TARGETS 70 many_01..many_70 (0xffffffff81002010)"
t "patterns: a module without kretprobes in a batch: the flag dropped, fexit" \
	0 pat-batch-old.out pat-batch-old.err env FAKE_LBR_BATCH_OLD=1 \
	"${PATF[@]}" add 'many_*'
want pat-batch-oldundo.err \
	"fake: ADD_TARGETS 70 many_01..many_70 (0xffffffff81002010)" \
	"lbr-snap: add many_33: invalid: expected SYM[%type][/N][@hook] with type int, long, ptr, bool or void and hook kretprobe or fexit, or kprobes refuse the function (see the kernel log)"
t "patterns: a module without kretprobes in a batch: a refusal is still named" \
	1 /dev/null pat-batch-oldundo.err env FAKE_LBR_BATCH_OLD=1 \
	FAKE_LBR_ADD_FAIL=many_33 "${PATF[@]}" add 'many_*'
# trace puts them in a batch too, with LBR_SNAP_BATCH_SKIP: one already a
# target is used and left alone; the summary goes by -e, and names those
# that captured, 20 at most.
PATT=(env "LBR_SNAP_ROOT=$PR" "$FAKE" -d paths.bin)
mapfile -t pat_captured < <(for i in $(seq -w 1 21); do
	[ "$i" = 07 ] ||
		echo "lbr-snap:   many_$i (fexit): 3 returns: 2 captured, 1 filtered, 0 dropped"
done)
want pat-trbatch.err "fake: ADD_TARGET foo" \
	"fake: ADD_TARGETS 70 many_01..many_70 (0xffffffff81002010) skip fallback" \
	"lbr-snap: 1 of the 70 functions is a target already (or an alias of one): using it, leaving it attached" \
	"lbr-snap: attached many_* (70 functions, 1 a target already), foo (kretprobe); running touch" \
	"lbr-snap: trace: 0 records printed" \
	"lbr-snap: -e many_*: 69 functions (fexit): 207 returns: 138 captured, 69 filtered, 0 dropped" \
	"lbr-snap: -e foo: 1 function (kretprobe): 3 returns: 2 captured, 1 filtered, 0 dropped" \
	"${pat_captured[@]}" \
	"lbr-snap:   and 50 more functions that captured or dropped (lbr-snap stats lists each while attached)" \
	"lbr-snap: 1 target not listed by the module: no counters" \
	"lbr-snap: no records of touch: the 140 captured were other processes' (--all-tasks prints them)" \
	"fake: DEL_TARGETS 69 100" "fake: DEL_TARGET foo"
t "patterns: trace of more than the module's own targets: one batch, summed by -e" \
	0 /dev/null pat-trbatch.err env FAKE_LBR_ADD_EXISTS=many_07 \
	FAKE_LBR_TRACE_COUNTS=2,1,0 "${PATT[@]}" trace -e 'many_*' -e foo -- \
	touch pat-ran2
check "patterns: trace ran CMD after its batch" test -e pat-ran2
want pat-trbatch-fail.err \
	"fake: ADD_TARGETS 70 many_01..many_70 (0xffffffff81002010) skip fallback" \
	"lbr-snap: ADD_TARGETS many_33: Invalid argument (the kernel log says why): nothing attached" \
	"fake: DEL_TARGETS 69 100"
t "patterns: trace's batch with one refused: it is named, the rest taken back, 125" \
	125 /dev/null pat-trbatch-fail.err env FAKE_LBR_ADD_FAIL=many_33 \
	"${PATT[@]}" trace -e 'many_*' -- touch pat-ran3
check "patterns: CMD did not run after a refused batch" test ! -e pat-ran3
# A function of vmlinux no batch takes (no BTF prototype, variable
# arguments, a name BTF has twice) goes one by one while the module has
# room, and is refused after: with 62 attached, 2 of the 6 go, 4 are
# refused (BTF from the pattern root, so a build with libbpf).
if check "build lbr-snap with fake ioctls and libbpf" \
	gcc "${CFLAGS[@]}" "-DLBR_SNAP_TOOL_VERSION=\"$VER\"" -DHAVE_LIBBPF \
	-Wl,--wrap=ioctl -o lbr-snap-fake-btf \
	"$ROOT"/tools/*.c "$HERE/fake-ioctl.c" -lbpf -lelf -lz -lzstd; then
	want pat-nobatch.out "added 64 functions in a batch: targets 100 to 163, hook fexit" \
		"added many_65%int/1: target 7, hook kretprobe" \
		"added many_66: target 7, hook kretprobe"
	want pat-nobatch.err "lbr-snap: 4 functions refused: not in a batch (no BTF prototype, a name BTF has twice, or stack arguments fexit cannot bound), and no room among the 64 the module takes one by one (-v or --dry-run lists them)" \
		"fake: ADD_TARGETS 64 many_01%int/1..many_64%int/1 (0xffffffff81002010) fallback" \
		"fake: ADD_TARGET many_65%int/1" "fake: ADD_TARGET many_66"
	t "patterns: what no batch takes goes one by one while room lasts, then is refused" \
		0 pat-nobatch.out pat-nobatch.err env "LBR_SNAP_ROOT=$PR" \
		FAKE_LBR_NR_TARGETS=62 ./lbr-snap-fake-btf -d stream.bin add 'many_*'
	nobatch_why()
	{
		env "LBR_SNAP_ROOT=$PR" FAKE_LBR_NR_TARGETS=62 \
			./lbr-snap-fake-btf -d stream.bin add --dry-run -v 'many_*' \
			2>/dev/null | grep '^refuse many_' | cut -c1-70
	}
	want pat-nobatch-why.out \
		"refuse many_67: no BTF prototype (a compiler's copy, .part or .constpr" \
		"refuse many_68: no BTF prototype (a compiler's copy, .part or .constpr" \
		"refuse many_69: no BTF prototype (a compiler's copy, .part or .constpr" \
		"refuse many_70: BTF says it takes variable arguments or a value of ove"
	t "patterns: --dry-run -v says why no batch takes them" 0 \
		pat-nobatch-why.out - nobatch_why
	nobatch_twice()
	{
		env "LBR_SNAP_ROOT=$PR" FAKE_LBR_NR_TARGETS=64 \
			./lbr-snap-fake-btf -d stream.bin add --dry-run -v \
			'many_*' 2>/dev/null | grep '^refuse many_65' | cut -c1-60
	}
	want pat-nobatch-twice.out \
		"refuse many_65: BTF has several functions of this name: the "
	t "patterns: a name BTF has twice goes in no batch" 0 \
		pat-nobatch-twice.out - nobatch_twice
	want pat-nobatch-all.err "lbr-snap: 3 functions refused: not in a batch (no BTF prototype, a name BTF has twice, or stack arguments fexit cannot bound), and no room among the 64 the module takes one by one (-v or --dry-run lists them)" \
		"lbr-snap: a pattern's every match is refused: nothing attached"
	t "patterns: a pattern whose every match no batch takes and no room is left: exit 1" \
		1 /dev/null pat-nobatch-all.err env "LBR_SNAP_ROOT=$PR" \
		FAKE_LBR_NR_TARGETS=64 ./lbr-snap-fake-btf -d stream.bin \
		add 'many_6[7-9]'
	# A batch's thousands leave the 64 one by one free: 2 of 3,000
	# targets are outside batches, so the 3 go one by one.
	nobatch_room()
	{
		env "LBR_SNAP_ROOT=$PR" FAKE_LBR_NR_TARGETS=3000 \
			FAKE_LBR_BATCH_TARGETS=2998 ./lbr-snap-fake-btf \
			-d stream.bin add 'many_6[7-9]' 2>&1 | grep -c '^added many_6'
	}
	want pat-nobatch-room.out 3
	t "patterns: a batch's targets leave the one-by-one room free" 0 \
		pat-nobatch-room.out - nobatch_room
else
	skipped "patterns: what no batch takes" "no libbpf to build with"
fi

# By kretprobe they cannot go in a batch: more than the 61 left is refused.
want pat-many.err "lbr-snap: 70 functions to attach one by one (of modules, or with a hook other than fexit), the module takes 61 more (64 at most outside batches, 3 attached): nothing attached; narrow the patterns (--dry-run lists them)"
t "patterns: trace of more than the module takes one by one: 125, CMD not run" \
	125 /dev/null pat-many.err "${PATT[@]}" trace -e 'many_*@kretprobe' -- \
	touch pat-ran4
check "patterns: CMD did not run with more than the module takes" \
	test ! -e pat-ran4
want pat-many-dry.err "lbr-snap: dry run: 70 to attach (70 in a batch), 0 refused (capture errors); nothing attached"
t "patterns: --dry-run lists all 70 matches, in a batch, exit 0" 0 - \
	pat-many-dry.err "${PATF[@]}" add --dry-run 'many_*'
check "patterns: --dry-run printed 70 attach lines" \
	test "$(grep -c '^attach many_[0-9][0-9]$' out.txt)" = 70

# Attached: each match, through ADD_TARGET (fake-ioctl.c).
want pat-add.out "added vfs_write: target 7, hook kretprobe" \
	"added ext4_open: target 7, hook kretprobe" \
	"added ext4_release: target 7, hook kretprobe"
want pat-add.err "fake: ADD_TARGET vfs_write" "fake: ADD_TARGET ext4_open" \
	"fake: ADD_TARGET ext4_release"
t "patterns: add GLOB 'GLOB [MODULE]': ADD_TARGET each match" 0 \
	pat-add.out pat-add.err "${PATF[@]}" add 'vfs_wr*' '* [ext4]'
want pat-trdry.out "attach vfs_write"
want pat-trdry.err "lbr-snap: dry run: 1 to attach, 0 refused (capture errors); nothing attached"
t "patterns: trace --dry-run: listed, no ioctl, no CMD needed" 0 \
	pat-trdry.out pat-trdry.err "${PATF[@]}" trace --dry-run -e 'vfs_w*'

# why on a kernel without ftrace direct calls (ADD_TARGETS EOPNOTSUPP):
# said, and the entry functions alone by kretprobe, their "@fexit" taken
# off; the command still runs.
why_no_direct()
{
	env FAKE_LBR_NO_DIRECT=1 "${PATT[@]}" why -e 'many_*' -a 'vfs_*' \
		-- true >why-nd.out 2>why-nd.err || { cat why-nd.err; return 1; }
	grep -q "^lbr-snap: this kernel has no ftrace direct calls (CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS), which why's fexit hook needs: it falls back to kretprobes on the 70 entry functions alone" why-nd.err &&
	grep -q '^fake: ADD_TARGETS 70 many_01\.\.many_70 (0xffffffff81002010) skip fallback$' why-nd.err &&
	! grep -q 'ADD_TARGETS .*vfs_.* fallback' why-nd.err &&
	grep -q '^fake: SET_FILTER flags=8' why-nd.err || { cat why-nd.err; return 1; }
}
check "why without ftrace direct calls: said, the entry functions alone by kretprobe" why_no_direct

# why on a kernel without BTF, or a tool without libbpf (the fake): said
# what is missing and what it does then, before it attaches.
why_no_btf()
{
	local said="the return types are not known, and fexit takes no function in a batch without its prototype: why hooks the 64 functions the module takes one by one, the entry functions first"

	rm -rf nobtf-root && cp -r "$PR" nobtf-root &&
	rm nobtf-root/sys/kernel/btf/vmlinux &&
	env "LBR_SNAP_ROOT=$T/nobtf-root" "$LBR" -d "$T/no-device" why \
		-e 'many_*' -- true >why-nb.out 2>why-nb.err
	grep -q "^lbr-snap: why: this kernel has no BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF): $said" why-nb.err ||
		{ cat why-nb.err; return 1; }
	"${PATT[@]}" why -e 'many_*' -- true >why-nb.out 2>why-nb.err &&
	grep -q "^lbr-snap: why: this lbr-snap is built without libbpf, which reads BTF: $said" why-nb.err ||
		{ cat why-nb.err; return 1; }
	env "LBR_SNAP_ROOT=$PR" "$LBR" -d "$T/no-device" why -e 'many_*' \
		-- true >why-nb.out 2>why-nb.err
	! grep -q 'no BTF' why-nb.err || { cat why-nb.err; return 1; }
}
check "why without BTF, or built without libbpf: said before it attaches; not with BTF" why_no_btf
fi
