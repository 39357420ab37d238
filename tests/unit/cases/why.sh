# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# why through fake-ioctl.c, on a crafted stream (gen-records.c why) of one
# thread's records, its own kallsyms: a failing openat() with a NULL, an
# origin and its caller; an error of a system call that succeeded; one
# outside system calls; a timerfd_create() decided in the wrapper's body
# before a kfree().  Entry functions named, not patterns: found by name.
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
ffffffff81010800 T _etext
SYMS
WHY=("$FAKE" -d why.bin --kallsyms why-kallsyms.txt why
     -e __x64_sys_openat -e __x64_sys_timerfd_create
     -a step_into -a walk_component -a lookup_fast -a do_sys_openat2)

why_text()
{
	"${WHY[@]}" -- true >why.out 2>why.err ||
		{ echo "exit $?"; cat why.err; return 1; }
	grep -v '^ *\[#\|^[0-9.]* cpu\|^  returned\|^  call stack\|^    [a-z_]*+0x\|^$' \
		why.out >why.got
	printf '%s\n' \
		"openat() = -2 (ENOENT: No such file or directory)  whycmd[300] tid 300, syscall 257, 12999.000 ms" \
		"  error chain, outermost first:" \
		"      __x64_sys_openat() = -ENOENT" \
		"      walk_component() = ERR_PTR(-ENOENT)" \
		"    * step_into() = ERR_PTR(-ENOENT)" \
		"  origin: step_into+0x30" \
		"timerfd_create() = -22 (EINVAL: Invalid argument)  whycmd[300] tid 300, syscall 283, 13747.000 ms" \
		"  error chain, outermost first:" \
		"    * __x64_sys_timerfd_create() = -EINVAL" \
		"  origin: __do_sys_timerfd_create+0x10" | diff - why.got || return 1
	grep -q '^lbr-snap: why: 1 errors inside system calls that did not fail' why.err &&
	grep -q '^lbr-snap: why: 1 errors outside system calls' why.err &&
	grep -q '^fake: SET_FILTER flags=8 pid=0 tgid=[1-9]' why.err ||
		{ echo "counts or the tree filter not said:"; cat why.err; return 1; }
}
check "why: failures by system call, chains, origins, the wrapper's body not kfree(), counts" why_text

why_json()
{
	"${WHY[@]}" --json -- true >why.jsonl 2>/dev/null || return 1
	sed 's/,"record".*//' why.jsonl >why.jgot
	grep -c '^{"syscall":' why.jgot | grep -qx 2 &&
	grep -q '^{"syscall":"openat","nr":257,"retval":-2,"errno":"ENOENT","pid":300,"tid":300,"comm":"whycmd",.*"origin":{"func":"step_into","off":48,"file":null,"line":null,"branch":1}' why.jgot &&
	grep -q '"origin":{"func":"__do_sys_timerfd_create","off":16,' why.jgot ||
		{ cat why.jgot; return 1; }
}
check "why --json: one object a failure, origin func, off, no file without DWARF" why_json
