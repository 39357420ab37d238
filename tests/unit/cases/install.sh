# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# make install-tools and make install; the man pages, rendered and
# complete; the bash completion.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

want install.want "644 usr/share/bash-completion/completions/lbr-snap" \
	"644 usr/share/man/man4/lbr_snap.4" "644 usr/share/man/man8/lbr-snap.8" \
	"755 usr/sbin/lbr-snap"
install_tools()
{
	make -s -C "$ROOT" install-tools DESTDIR="$T/inst" PREFIX=/usr ||
		return 1
	(cd "$T/inst" && find . -type f -printf '%m %P\n' | sort) >install.txt
	diff -u install.want install.txt || return 1
	cmp "$T/inst/usr/sbin/lbr-snap" "$LBR" || return 1
}
check "make install-tools DESTDIR= PREFIX=/usr: tool, both man pages, completion" \
	install_tools

# Without kernel headers make install fails at the module, as before,
# and installs nothing.
install_no_headers()
{
	if make -s -C "$ROOT" install KDIR="$T/no-headers" \
		DESTDIR="$T/inst2" >inst2.log 2>&1; then
		echo "make install without headers succeeded"
		return 1
	fi
	grep -q 'no kernel headers' inst2.log || { cat inst2.log; return 1; }
	[ ! -e "$T/inst2" ] || { echo "installed something:"; find "$T/inst2"; return 1; }
}
check "make install without kernel headers fails before installing" \
	install_no_headers

man_clean()
{
	local page out rc=0

	for page in "$ROOT/dist/man/lbr-snap.8" "$ROOT/dist/man/lbr_snap.4"; do
		out=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
		[ -z "$out" ] && continue
		echo "$page:"
		echo "$out"
		rc=1
	done
	return "$rc"
}
if command -v man >/dev/null && command -v groff >/dev/null; then
	check "man -l renders lbr-snap(8) and lbr_snap(4) without warnings" \
		man_clean
else
	skipped "man pages render" "no man or groff (tests/deps/packages: man-db)"
fi

# Every option and command of --help is in lbr-snap(8).
man_complete()
{
	local word rc=0 text

	text=$(MANWIDTH=200 man -l "$ROOT/dist/man/lbr-snap.8" 2>/dev/null) ||
		return 1
	for word in $("$LBR" --help | grep -o -- '--[a-z-]*\|^  -[a-z]\|^  [a-z]\+ ' | tr -d ' ' | sort -u) \
		    125 126 127 LBR_SNAP_ROOT ts_sec ts_nsec; do
		grep -qF -- "$word" <<<"$text" && continue
		echo "lbr-snap(8) lacks $word"
		rc=1
	done
	return "$rc"
}
if command -v man >/dev/null && command -v groff >/dev/null; then
	check "lbr-snap(8) has every option and command --help has" man_complete
fi

# Its SYNOPSIS has a line for every command of --help (filter was missing).
man_synopsis()
{
	local word rc=0 text

	text=$(MANWIDTH=200 man -l "$ROOT/dist/man/lbr-snap.8" 2>/dev/null |
		sed -n '/^SYNOPSIS/,/^DESCRIPTION/p') || return 1
	for word in $("$LBR" --help | sed -n '/^Commands:/,/^Options:/p' |
		      grep -o '^  [a-z]\+ ' | tr -d ' '); do
		grep -qw -- "$word" <<<"$text" && continue
		echo "lbr-snap(8)'s SYNOPSIS lacks $word"
		rc=1
	done
	return "$rc"
}
if command -v man >/dev/null && command -v groff >/dev/null; then
	check "lbr-snap(8)'s SYNOPSIS has every command of --help" man_synopsis
fi

# lbr_snap(4): every module parameter and ioctl.
man4_complete()
{
	local word rc=0

	for word in $(sed -n 's/^module_param(\([a-z_]*\),.*/\1=/p' "$ROOT/src/lbr_snap_main.c") \
		    $(sed -n 's/^#define \(LBR_SNAP_IOC_[A-Z_]*\)[ \t]*_IO.*/\1/p' "$ROOT/include/lbr_snap.h"); do
		[ "$word" = LBR_SNAP_IOC_MAGIC ] && continue
		grep -qwF -- "$word" "$ROOT/dist/man/lbr_snap.4" && continue
		echo "lbr_snap(4) lacks $word"
		rc=1
	done
	return "$rc"
}
check "lbr_snap(4) has every module parameter and ioctl" man4_complete

# The completion, with stand-ins for bash-completion's helpers.
completion()
{
	bash -c '
_init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
_filedir() { COMPREPLY=(FILES); }
_command_offset() { COMPREPLY=("CMD@$1"); }
lbr-snap() { printf "%s\n" " id name addr" "  0 do_sys_openat2 0x1" "  1 vfs_read 0x2" "read: 1"; }
. "$1"
try() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _lbr_snap; echo "$* => ${COMPREPLY[*]}"; }
try lbr-snap cap
try lbr-snap capture ""
try lbr-snap del ""
try lbr-snap -d ""
try lbr-snap --vers
try lbr-snap trace -e foo ls -
try lbr-snap trace -e foo -- ""
' bash "$ROOT/dist/bash-completion/lbr-snap" >compl.txt 2>&1
	want compl.want "lbr-snap cap => capture" \
		"lbr-snap capture  => errors all" \
		"lbr-snap del  => do_sys_openat2 vfs_read" \
		"lbr-snap -d  => FILES" "lbr-snap --vers => --version" \
		"lbr-snap trace -e foo ls - => CMD@4" \
		"lbr-snap trace -e foo --  => CMD@5"
	diff -u compl.want compl.txt
}
check "bash completion: commands, capture modes, targets, trace's CMD" \
	completion

# Every command and option --help lists completes, and after each option
# that takes a PATH or FILE a file name does, not a command (the
# completion once lacked record, -i and -o, and offered commands there).
completion_complete()
{
	local help words fileopts

	help=$("$LBR" --help) || return 1
	words=$({ sed -n '/^Commands:/,/^Options:/p' <<<"$help" |
			grep -o '^  [a-z]\+ '
		  sed -n '/^Options:/,/^$/p' <<<"$help" |
			grep -o -- '--[a-z-]*\|^  -[a-zA-Z]'; } | tr -d ' ' | sort -u)
	fileopts=$(grep -o -- '^  \(-[a-zA-Z], \)\?--[a-z-]* \(PATH\|FILE\)\|^      --[a-z-]* \(PATH\|FILE\)' <<<"$help" |
		grep -o -- '-[a-zA-Z]\b\|--[a-z-]*')
	[ -n "$words" ] && [ -n "$fileopts" ] ||
		{ echo "nothing found in --help"; return 1; }
	# shellcheck disable=SC2016
	bash -c '
_init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
_filedir() { COMPREPLY=(FILES); }
_command_offset() { COMPREPLY=("CMD@$1"); }
compopt() { :; }
lbr-snap() { :; }
. "$1"
try() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _lbr_snap; }
rc=0
for w in $2; do
	try lbr-snap "$w"
	[[ " ${COMPREPLY[*]} " == *" $w "* ]] && continue
	echo "lbr-snap $w<TAB> does not complete $w: ${COMPREPLY[*]}"
	rc=1
done
for o in $3; do
	for pre in "" "stats" "record"; do
		# shellcheck disable=SC2086
		try lbr-snap $pre "$o" ""
		[ "${COMPREPLY[*]}" = FILES ] && continue
		echo "lbr-snap $pre $o <TAB> completes ${COMPREPLY[*]}, not a file"
		rc=1
	done
done
try lbr-snap -i rec.bin re
[ "${COMPREPLY[*]}" = "report record" ] ||
	{ echo "lbr-snap -i FILE re<TAB>: ${COMPREPLY[*]}"; rc=1; }
exit $rc
' bash "$ROOT/dist/bash-completion/lbr-snap" "$words" "$fileopts"
}
check "bash completion: every command and option of --help, files after PATH/FILE" \
	completion_complete
