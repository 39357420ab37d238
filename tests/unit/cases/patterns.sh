# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# Targets by pattern, on a crafted kernel under LBR_SNAP_ROOT (kallsyms,
# available_filter_functions, BTF from gen-btf.c): the specs of a glob,
# --dry-run with each refusal and its reason, module scopes, types the
# hook cannot take, bad patterns.  Sets PR, PAT, PATF and PAT_OK (the
# crafted kernel was made), which attach.sh uses; writes pat-help.txt,
# which file-patterns.sh reads.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

# A crafted kernel under LBR_SNAP_ROOT: kallsyms, what ftrace can hook
# (available_filter_functions) and BTF (gen-btf.c), for globs, module
# scopes and each reason a match is refused.
pattern_root()
{
	local r=$1 long i

	long=vfs_$(printf 'x%.0s' $(seq 130))
	mkdir -p "$r/proc" "$r/sys/kernel/tracing" "$r/sys/kernel/btf"
	{
		echo "ffffffff81000000 T _text"
		echo "ffffffff81000f00 t __pfx_vfs_read"
		echo "ffffffff81001000 T vfs_read"
		echo "ffffffff81001000 T vfs_read_alias"
		echo "ffffffff81001100 T vfs_write"
		echo "ffffffff81001200 t vfs_notrace"
		echo "ffffffff81001300 T vfs_void"
		echo "ffffffff81001400 T vfs_char"
		echo "ffffffff81001500 T vfs_varargs"
		echo "ffffffff81001580 T vfs_bool"
		echo "ffffffff81001600 t dup_static"
		echo "ffffffff81001700 t dup_static"
		echo "ffffffff81001800 T irq_work_queue"
		echo "ffffffff81001900 T stack_trace_save"
		echo "ffffffff81001a00 T do_idle"
		echo "ffffffff81001b00 T $long"
		echo "ffffffff81001c00 D vfs_data"
		echo "ffffffff81001d00 T kfree"
		for i in $(seq -w 1 70); do
			printf '%016x T many_%s\n' $((0xffffffff81002000 + 16 * 10#$i)) "$i"
		done
		printf 'ffffffffc0001000 t ext4_open\t[ext4]\n'
		printf 'ffffffffc0001100 t ext4_release\t[ext4]\n'
		printf 'ffffffffc0002000 t lbr_snap_read\t[lbr_snap]\n'
		printf 'ffffffffc0003000 t lbr_fexit_enter\t[lbr_snap_fexit]\n'
		printf 'ffffffffc0004000 t lbr_test_int\t[lbr_snap_test_target]\n'
		printf 'ffffffffc0004100 t dup_static\t[lbr_snap_test_target]\n'
	} >"$r/proc/kallsyms"
	# ftrace: all but vfs_notrace, and vfs_ghost, which kallsyms lacks.
	grep ' [tT] ' "$r/proc/kallsyms" | grep -v '__pfx_\|vfs_notrace\| _text' |
		sed 's/^[0-9a-f]* [tT] //; s/\t\[/ [/' \
		>"$r/sys/kernel/tracing/available_filter_functions"
	echo vfs_ghost >>"$r/sys/kernel/tracing/available_filter_functions"
	./gen-btf "$r/sys/kernel/btf/vmlinux"
}

"$LBR" --help >pat-help.txt
PR=$T/pat-root
PAT=(env "LBR_SNAP_ROOT=$PR" "$LBR" -d "$T/no-device")
PATF=(env "LBR_SNAP_ROOT=$PR" "$FAKE" -d stream.bin)
# The crafted kernel was made: attach.sh's cases run on it too.
PAT_OK=
if ! grep -q '^BTF specs: built in' pat-help.txt; then
	skipped "targets by pattern" "lbr-snap built without libbpf"
elif check "build gen-btf (libbpf)" \
	gcc "${CFLAGS[@]}" -o gen-btf "$HERE/gen-btf.c" -lbpf &&
     check "the crafted kernel for patterns" pattern_root "$PR"; then
	PAT_OK=1
fi
if [ -n "$PAT_OK" ]; then

# A glob: the attachable matches' specs, typed from BTF; the refused
# counted by reason, each said with -v.
want pat-glob.out "vfs_bool%bool/0" "vfs_read%long/4" "vfs_varargs%int" \
	"vfs_write%int/1"
want pat-glob.err "lbr-snap: vfs_*: 10 functions, 4 to attach; refused: 1 name too long, 1 no such function, 1 not traceable, 1 an alias, 1 returns void, 1 a type the hook cannot take (-v or --dry-run lists them)"
t "patterns: spec GLOB: BTF's specs, the refused counted by reason" 0 \
	pat-glob.out pat-glob.err "${PAT[@]}" spec 'vfs_*'

# --dry-run lists each match, attachable or refused with its reason:
# every reason the tool knows, as the module would refuse them.
long=vfs_$(printf 'x%.0s' $(seq 130))
want pat-dry.out \
	"attach dup_static: one of 3 functions of this name: the module hooks this one, the first in kallsyms" \
	"attach vfs_bool%bool/0" \
	"refuse vfs_char: its return type is none the hook reads as an error (not a 32- or 64-bit integer, a pointer or bool)" \
	"refuse vfs_notrace: not traceable: not in available_filter_functions (notrace, or not an ftrace site)" \
	"attach vfs_read%long/4" \
	"refuse vfs_read_alias: same function as vfs_read: attached once" \
	"attach vfs_varargs%int" \
	"refuse vfs_void: returns void: capture errors has no error to catch (capture all, trace --all)" \
	"attach vfs_write%int/1" \
	"refuse $long: a name of 134 bytes: lbr_snap takes at most 127 (LBR_SNAP_NAME_LEN)" \
	"refuse vfs_ghost: no such function: not a text symbol of kallsyms" \
	"attach ext4_open [ext4]" \
	"attach ext4_release [ext4]" \
	"refuse dup_static [lbr_snap_test_target]: one of 3 functions of this name: lbr_snap hooks by name, and gets the first in kallsyms, vmlinux's" \
	"refuse lbr_fexit_enter [lbr_snap_fexit]: lbr_snap's own function" \
	"refuse lbr_snap_read [lbr_snap]: lbr_snap's own function" \
	"attach lbr_test_int [lbr_snap_test_target]" \
	"refuse irq_work_queue: on lbr_snap's own capture path: the module refuses it" \
	"refuse stack_trace_save: the unwinder's, which the capture runs with stack_depth=: the module refuses it" \
	"refuse do_idle: an offline CPU's idle task stays inside it: no hook takes it"
want pat-dry.err "lbr-snap: dry run: 8 to attach, 12 refused (capture errors); nothing attached"
t "patterns: add --dry-run lists each match, each refusal with its reason" \
	0 pat-dry.out pat-dry.err "${PAT[@]}" add --dry-run 'dup_*' 'vfs_*' \
	'* [ext4]' '* [lbr_snap*]' 'irq_work_*' stack_trace_save do_idle
# Under capture all (trace --all) a void function is attachable.
want pat-all.out "attach vfs_void%void/1"
t "patterns: trace --all --dry-run: a void function attachable, no CMD" 0 \
	pat-all.out - "${PAT[@]}" trace --all --dry-run -e 'vfs_vo*'

# A module scope, vmlinux's too; a scope with no match is an error.
want pat-scope.out ext4_open ext4_release "vfs_read%long/4"
t "patterns: a module scope, [vmlinux] too" 0 pat-scope.out - \
	"${PAT[@]}" spec '* [ext4]' 'vfs_rea* [vmlinux]'
want pat-noscope.err "lbr-snap: vfs_* [xfs]: matches no function in that scope of kallsyms or available_filter_functions"
t "patterns: a scope that matches nothing: exit 1, said once" 1 /dev/null \
	pat-noscope.err "${PAT[@]}" spec 'vfs_* [xfs]'

# The types the hook cannot take with what the pattern asks: @fexit of a
# variadic function, an errno list of a bool one.
want pat-types.out "vfs_write%int/1=-EINVAL"
want pat-types.err \
	"lbr-snap: traceable functions: $PR/sys/kernel/tracing/available_filter_functions" \
	"lbr-snap: vfs_varargs*@fexit: 1 function, none can be attached: 1 a type the hook cannot take" \
	"lbr-snap: vfs_varargs*@fexit: refused vfs_varargs: takes variable arguments: @fexit cannot bound its stack arguments" \
	"lbr-snap: vfs_bool*=-EINVAL: 1 function, none can be attached: 1 a type the hook cannot take" \
	"lbr-snap: vfs_bool*=-EINVAL: refused vfs_bool: returns bool, which has no errno to list"
t "patterns: @fexit of a variadic, an errno list of a bool: refused" 1 \
	pat-types.out pat-types.err env "LBR_SNAP_ROOT=$PR" "$LBR" \
	-d "$T/no-device" -v spec 'vfs_varargs*@fexit' 'vfs_bool*=-EINVAL' \
	'vfs_write*=-EINVAL'

# Bad input: one message each, nothing attached, CMD not run.
want pat-none.err "lbr-snap: nomatch_*: matches no function of kallsyms or available_filter_functions"
t "patterns: spec of a glob that matches nothing: exit 1" 1 /dev/null \
	pat-none.err "${PAT[@]}" spec 'nomatch_*'
t "patterns: add of a glob that matches nothing attaches nothing" 1 \
	/dev/null pat-none.err "${PATF[@]}" add 'nomatch_*' vfs_write
t "patterns: trace -e of a glob that matches nothing: 125, CMD not run" \
	125 /dev/null pat-none.err "${PATF[@]}" trace -e 'nomatch_*' -- \
	touch pat-ran1
check "patterns: CMD did not run after a glob that matched nothing" \
	test ! -e pat-ran1
want pat-own.err "lbr-snap: irq_work_*: 1 function, none can be attached: 1 lbr_snap's own or its capture path (-v or --dry-run lists them)"
t "patterns: a glob on the capture path attaches nothing, not even the rest" \
	1 /dev/null pat-own.err "${PATF[@]}" add vfs_write 'irq_work_*'
pat_long=$(printf 'a%.0s' $(seq 600))
want pat-long.err "lbr-snap: $(printf 'a%.0s' $(seq 40))...: a pattern of 601 bytes: at most 511 (the kernel's KSYM_NAME_LEN)"
t "patterns: a pattern over KSYM_NAME_LEN: exit 2" 2 /dev/null pat-long.err \
	"${PAT[@]}" spec "$pat_long*"
mkdir -p pat-noftrace/proc
cp "$PR/proc/kallsyms" pat-noftrace/proc/
want pat-noftrace.err "lbr-snap: $T/pat-noftrace/sys/kernel/tracing/available_filter_functions: No such file or directory: patterns need the functions ftrace can hook (root, tracefs mounted)"
t "patterns: no available_filter_functions: said, exit 1" 1 /dev/null \
	pat-noftrace.err env "LBR_SNAP_ROOT=$T/pat-noftrace" "$LBR" spec 'vfs_*'
fi
