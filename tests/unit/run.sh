#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of tools/lbr-snap.  No module is needed: synthetic record
# streams written by gen-records.c (with the ABI header) and a synthetic
# kallsyms are fed to the tool as regular files, pipes and FIFOs, and a test
# build with fake-ioctl.c stands in for the module's ioctls.  Output is
# compared exactly with tests/unit/expected/ or with inline expectations;
# check-json.py validates the JSON, check-report.py recounts what report
# prints from the records, test-errname.c checks the errno table.
#
# Needs gcc, make, python3, readelf, mkfifo, timeout, /proc/PID/io (task I/O
# accounting, for the syscall counts) and, as root, setpriv.
#
#   tests/unit/run.sh           build what is needed, run the tests, print TAP
#   KEEP=1 tests/unit/run.sh    keep the scratch directory for a look
#
# Exits 0 if every test passed.

# The test functions are called through t() and check(), not directly.
# shellcheck disable=SC2317

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
EXP=$HERE/expected
LBR=$ROOT/tools/lbr-snap
CFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror "-I$ROOT/include")

T=$(mktemp -d)
cleanup()
{
	if [ -n "${KEEP:-}" ]; then
		echo "# scratch directory kept: $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
cd "$T" || exit 1

nr=0
pass=0
fail=0

# Print "ok" or "not ok" for test $1, with why.txt as the reason if not empty.
result()
{
	nr=$((nr + 1))
	if [ -s why.txt ]; then
		fail=$((fail + 1))
		echo "not ok $nr - $1"
		sed 's/^/# /' why.txt
	else
		pass=$((pass + 1))
		echo "ok $nr - $1"
	fi
	: >why.txt
}

# Note in why.txt how file $2 differs from the expected file $1 ("-": any).
same()
{
	[ "$1" = - ] && return
	cmp -s "$1" "$2" && return
	echo "$3 differs from $1:" >>why.txt
	diff -u "$1" "$2" | head -40 >>why.txt
}

# t NAME RC OUT ERR CMD...: run CMD; it passes if it exits with RC and its
# stdout and stderr equal the files OUT and ERR ("-" for no check).
t()
{
	local name=$1 rc=$2 out=$3 err=$4 got

	shift 4
	"$@" >out.txt 2>err.txt </dev/null
	got=$?
	[ "$got" = "$rc" ] || echo "exit status $got, expected $rc" >>why.txt
	same "$out" out.txt stdout
	same "$err" err.txt stderr
	result "$name"
}

# Write the expected output file $1 from the remaining arguments, one a line.
want()
{
	local f=$1

	shift
	printf '%s\n' "$@" >"$f"
}

# check NAME CMD...: pass if CMD succeeds; its output is the reason if not.
check()
{
	local name=$1

	shift
	"$@" >why.txt 2>&1 || { [ -s why.txt ] || echo "failed: $*" >why.txt; }
	result "$name"
}

totals()
{
	echo "# Totals: pass:$pass fail:$fail skip:0"
	[ "$fail" = 0 ]
	exit
}

# ---------------------------------------------------------------- building

rm -f "$LBR"
check "make -C tools builds lbr-snap (-Werror)" \
	make -s -B -C "$ROOT/tools"
if [ ! -x "$LBR" ]; then
	echo "Bail out! no tools/lbr-snap"
	totals
fi

not_dynamic()
{
	if readelf -lW "$LBR" | grep -q INTERP; then
		echo "tools/lbr-snap has a program interpreter: not static"
		return 1
	fi
}
check "lbr-snap is linked statically" not_dynamic

check "build gen-records" \
	gcc "${CFLAGS[@]}" -o gen-records "$HERE/gen-records.c"
check "build lbr-snap with fake ioctls" \
	gcc "${CFLAGS[@]}" -Wl,--wrap=ioctl -o lbr-snap-fake \
	"$ROOT"/tools/*.c "$HERE/fake-ioctl.c"
FAKE=$T/lbr-snap-fake

check "build test-errname" \
	gcc "${CFLAGS[@]}" "-I$ROOT/tools" -o test-errname \
	"$HERE/test-errname.c" "$ROOT/tools/errname.c"
check "errno names match glibc's for 1..133 and the kernel's 512..531" \
	./test-errname

./gen-records stream >stream.bin
./gen-records paths >paths.bin
for mode in small-size bad-hdr-size overrun version0 truncated; do
	./gen-records "$mode" >"$mode.bin"
done
cp "$HERE/kallsyms.txt" kallsyms.txt
sed 's/^[0-9a-f]\{16\}/0000000000000000/' kallsyms.txt >restricted.txt

# --------------------------------------------------------------- streaming

KS=(--kallsyms kallsyms.txt)

t "text output of the synthetic stream" 0 "$EXP/stream.txt" "$EXP/stream.err" \
	"$LBR" -d stream.bin "${KS[@]}"
t "JSON output of the synthetic stream" 0 "$EXP/stream.jsonl" "$EXP/stream.err" \
	"$LBR" -d stream.bin "${KS[@]}" --json
check "every JSON line parses and has the documented keys" \
	python3 "$HERE/check-json.py" record out.txt

same_count()
{
	local text json

	text=$(grep -c '^[^ ]' "$EXP/stream.txt")
	json=$(wc -l <"$EXP/stream.jsonl")
	[ "$text" = "$json" ] || { echo "$text text records, $json JSON"; return 1; }
}
check "text and JSON show the same records" same_count

awk '/^[^ ]/ { n++ } n <= 3' "$EXP/stream.txt" >first3.txt
head -n 3 "$EXP/stream.jsonl" >first3.jsonl
t "-n 3 prints the first 3 records (text)" 0 first3.txt - \
	"$LBR" -d stream.bin "${KS[@]}" -n 3
t "--count 3 prints the first 3 records (JSON)" 0 first3.jsonl - \
	"$LBR" -d stream.bin "${KS[@]}" --count 3 --json

# A pipe delivering 7 bytes at a time: records arrive split across reads.
chunked()
{
	python3 -c '
import os, sys, time
data = open("stream.bin", "rb").read()
for i in range(0, len(data), 7):
    os.write(1, data[i:i + 7])
    time.sleep(0.0005)
' | "$LBR" -d /dev/stdin "${KS[@]}"
}
want stdin.err "lbr-snap: /dev/stdin: skipping records of ABI version 2 (this tool knows 1)"
t "records split across reads of a pipe" 0 "$EXP/stream.txt" stdin.err chunked

# A FIFO that stays open: only --nonblock (EAGAIN) or -n can end the read.
open_fifo()
{
	rm -f fifo
	mkfifo fifo
	exec 3<>fifo
	cat stream.bin >&3
}

fifo_nonblock()
{
	local rc

	open_fifo
	timeout 10 "$LBR" --nonblock -d fifo "${KS[@]}"
	rc=$?
	exec 3>&-
	return "$rc"
}
want fifo.err "lbr-snap: fifo: skipping records of ABI version 2 (this tool knows 1)"
t "--nonblock drains what is there and exits 0" 0 "$EXP/stream.txt" fifo.err \
	fifo_nonblock

fifo_count()
{
	local rc

	open_fifo
	timeout 10 "$LBR" -n 3 -d fifo "${KS[@]}"
	rc=$?
	exec 3>&-
	return "$rc"
}
t "-n 3 stops without waiting for more input" 0 first3.txt - fifo_count

# The tool blocks on a FIFO whose writer stays; a signal must end it cleanly
# with every record printed (flushed after each read, so they show at once).
signalled()
{
	local sig=$1 writer tool rc i

	rm -f fifo
	mkfifo fifo
	(cat stream.bin; exec sleep 30) >fifo &
	writer=$!
	# timeout passes the signal on, and kills a tool that ignores it.
	timeout -s KILL 10 "$LBR" -d fifo "${KS[@]}" >sig.out 2>sig.err &
	tool=$!
	for i in $(seq 100); do
		cmp -s sig.out "$EXP/stream.txt" && break
		sleep 0.05
	done
	[ "$i" = 100 ] && echo "no full output before the signal: not flushed after the read?" >&2
	kill -s "$sig" "$tool"
	wait "$tool"
	rc=$?
	kill "$writer"
	wait "$writer" 2>/dev/null
	cat sig.out
	cat sig.err >&2
	return "$rc"
}
t "SIGINT ends the stream with exit 0, output flushed" 0 "$EXP/stream.txt" \
	fifo.err signalled INT
t "SIGTERM ends the stream with exit 0, output flushed" 0 "$EXP/stream.txt" \
	fifo.err signalled TERM

# A burst must cost few syscalls: many records per read() (the device gives
# whole records up to the buffer's size), output written in big blocks, not
# a line (or 4 KiB) at a time.  The counts are the kernel's, read from
# /proc/PID/io of the exited but not yet reaped tool: no strace needed, and
# the static binary is measured as it is.
./gen-records kallsyms 2000 >bulk-kallsyms.txt
./gen-records bulk 2000 2000 >bulk.bin
syscalls()
{
	python3 -c '
import os, subprocess, sys
out = open("calls.out", "wb")
p = subprocess.Popen(sys.argv[1:], stdout=out, stderr=subprocess.DEVNULL)
os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
with open(f"/proc/{p.pid}/io") as f:
    io = dict(line.split(": ") for line in f.read().splitlines())
p.wait()
print(p.returncode, io["syscr"], io["syscw"], out.tell())
' "$@"
}
few_syscalls()
{
	local rc reads writes bytes

	read -r rc reads writes bytes < <(syscalls "$LBR" -d bulk.bin \
		--kallsyms bulk-kallsyms.txt "$@") || return 1
	echo "exit $rc, $reads read()s for 2000 records, $writes write()s of $bytes bytes"
	[ "$rc" = 0 ] || return 1
	# 856-byte records, 64 KiB reads: about 27, plus the kallsyms.
	[ "$reads" -le 200 ] || { echo "reads one record at a time?"; return 1; }
	if [ "$writes" = 0 ] || [ $((bytes / writes)) -lt 16384 ]; then
		echo "stdout not fully buffered?"
		return 1
	fi
}
few_syscalls_quiet()
{
	few_syscalls "$@" >syscalls.txt || { cat syscalls.txt; return 1; }
}
check "a burst of records: few read()s, stdout in big blocks (text)" \
	few_syscalls_quiet
check "a burst of records: few read()s, stdout in big blocks (JSON)" \
	few_syscalls_quiet --json

# The module's buffer is small: while printing, the tool must take in what
# the input holds, so that a burst waits in its memory, not in the kernel's.
# 1000 records (856 KB) all in a pipe of 1 MiB from the start: how much of
# the output was written when the pipe became empty?  Reading only when out
# of records to print, 94%; reading ahead every 8 records, 3%.
read_ahead_once()
{
	python3 - "$LBR" --kallsyms bulk-kallsyms.txt --json -d /dev/stdin <<'EOF'
import fcntl, os, struct, subprocess, sys, termios, time

F_SETPIPE_SZ = 1031
data = open("ahead.rec", "rb").read()
r, w = os.pipe()
fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
os.write(w, data)
os.close(w)
out = open("ahead.out", "wb")
p = subprocess.Popen(sys.argv[1:], stdin=r, stdout=out)
at = None
while p.poll() is None:
    left = fcntl.ioctl(r, termios.FIONREAD, b"\0" * 4)
    if not struct.unpack("i", left)[0]:
        at = os.path.getsize("ahead.out")
        break
    time.sleep(0.0001)
p.wait()
total = os.path.getsize("ahead.out")
at = total if at is None else at
if p.returncode or at * 2 > total:
    sys.exit(f"exit {p.returncode}; {at} of {total} bytes printed before "
             "the input was all read: no read-ahead?")
EOF
}
read_ahead()
{
	./gen-records bulk 1000 2000 >ahead.rec
	# A starved test process sees the pipe empty late: one retry.
	read_ahead_once 2>/dev/null || read_ahead_once
}
check "records are read ahead of printing, from a pipe" read_ahead

# Every input again through an ASan/UBSan build: no memory errors.
sanitized()
{
	local in fmt

	gcc "${CFLAGS[@]}" -g -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o lbr-snap-san "$ROOT"/tools/*.c || return 1
	for in in *.bin; do
		for fmt in "" --json --full --only-target report "report --json"; do
			# shellcheck disable=SC2086
			./lbr-snap-san -d "$in" "${KS[@]}" $fmt >/dev/null 2>san.err
			[ $? -le 6 ] && ! grep -qE "Sanitizer|runtime error" san.err && continue
			echo "$in $fmt:"
			cat san.err
			return 1
		done
	done
	# From a pipe: read ahead while printing, the buffer moved and grown.
	for fmt in "" --json; do
		# A pipe, not a file: cat is not useless here.
		# shellcheck disable=SC2002,SC2086
		if cat bulk.bin | ./lbr-snap-san -d /dev/stdin \
			--kallsyms bulk-kallsyms.txt $fmt >/dev/null 2>san.err &&
		   ! grep -qE "Sanitizer|runtime error" san.err; then
			continue
		fi
		echo "bulk.bin through a pipe $fmt:"
		cat san.err
		return 1
	done
}
check "ASan/UBSan build reads every input without memory errors" sanitized

# -------------------------------------------------- trimming and report

t "--full shows the probe-path entries" 0 "$EXP/stream-full.txt" \
	"$EXP/stream.err" "$LBR" -d stream.bin "${KS[@]}" --full
t "--only-target --full: entries before the target cut, said how many" 0 \
	"$EXP/paths-only-target-full.txt" /dev/null \
	"$LBR" -d paths.bin "${KS[@]}" --only-target --full

# The JSON flags must mark what text output hides and what it cuts.
json_flags()
{
	"$LBR" -d paths.bin "${KS[@]}" --json >paths.jsonl || return 1
	python3 "$HERE/check-json.py" record paths.jsonl || return 1
	python3 -c '
import json, sys
for n, line in enumerate(open("paths.jsonl"), 1):
    r = json.loads(line)
    br = r["branches"]
    probe = [b["probe"] for b in br]
    want = [i >= len(br) - r["probe_entries"] for i in range(len(br))]
    if probe != want:
        sys.exit(f"record {n}: probe flags {probe}")
    cut = [b["before_target"] for b in br]
    k = cut.count(True)
    if cut != [True] * k + [False] * (len(br) - k) or k != (n - 1) % 3 and br:
        sys.exit(f"record {n}: before_target flags {cut}")
'
}
check "JSON keeps every branch, flags probe and before_target" json_flags

t "report: text" 0 "$EXP/report.txt" /dev/null \
	"$LBR" -d paths.bin "${KS[@]}" report
t "report --json" 0 "$EXP/report.jsonl" /dev/null \
	"$LBR" -d paths.bin "${KS[@]}" report --json
check "report --json has the documented keys" \
	python3 "$HERE/check-json.py" report out.txt
check "report counts equal a recount of the records' paths" \
	python3 "$HERE/check-report.py" paths.jsonl out.txt

# The mix gen-records writes (gen_paths()), counted by hand.
report_mix()
{
	"$LBR" -d paths.bin "${KS[@]}" report | grep -v '^    ' >mix.txt
	want mix.want \
		"2 distinct paths led to -ENOENT from do_sys_openat2; the most common (5×) ends in do_sys_openat2+0x1c2" \
		"  5× path 1 of 2:" \
		"  3× path 2 of 2:" \
		"" \
		"1 distinct path led to NULL from kmalloc_trace; the most common (4×) ends in kmalloc_trace+0x4c" \
		"  4× path 1 of 1:" \
		"" \
		"1 distinct path led to -EACCES from do_sys_openat2; the most common (2×) ends in do_sys_openat2+0x1c2" \
		"  2× path 1 of 1:" \
		"" \
		"1 distinct path led to ERR_PTR(-ENOMEM) from kmalloc_trace; the most common (1×) ends in kmalloc_trace+0x4c" \
		"  1× path 1 of 1:" \
		"" \
		"1 distinct path led to -EIO from ext4_file_open; the most common (1×) ends in (no branches)" \
		"  1× path 1 of 1: no branches"
	diff -u mix.want mix.txt
}
check "report counts the known mix exactly" report_mix

# The same through a pipe in 7-byte pieces, and with -n.
report_chunked()
{
	python3 -c '
import os, time
data = open("paths.bin", "rb").read()
for i in range(0, len(data), 7):
    os.write(1, data[i:i + 7])
    time.sleep(0.0002)
' | "$LBR" -d /dev/stdin "${KS[@]}" report
}
t "report: records split across reads of a pipe" 0 "$EXP/report.txt" \
	/dev/null report_chunked
want report3.txt \
	"2 distinct paths led to -ENOENT from do_sys_openat2; the most common (1×) ends in do_sys_openat2+0x1c2" \
	"" "1 distinct path led to NULL from kmalloc_trace; the most common (1×) ends in kmalloc_trace+0x4c"
report_n3()
{
	"$LBR" -d paths.bin "${KS[@]}" -n 3 report | grep -v '^ '
}
t "report -n 3 counts the first 3 records" 0 report3.txt - report_n3

# ----------------------------------------------------------- symbolization

want restricted.err \
	"lbr-snap: restricted.txt: all addresses are 0 (kernel.kptr_restrict): printing raw addresses; run as root or set kernel.kptr_restrict=0" \
	"lbr-snap: stream.bin: skipping records of ABI version 2 (this tool knows 1)"
t "kptr_restrict (all-zero kallsyms): said once, raw hex" 0 \
	"$EXP/restricted.txt" restricted.err \
	"$LBR" -d stream.bin --kallsyms restricted.txt

want nokallsyms.err \
	"lbr-snap: nokallsyms.txt: No such file or directory: printing raw addresses" \
	"lbr-snap: stream.bin: skipping records of ABI version 2 (this tool knows 1)"
t "unreadable kallsyms: said once, raw hex" 0 "$EXP/restricted.txt" \
	nokallsyms.err "$LBR" -d stream.bin --kallsyms nokallsyms.txt

# Symbol and module names are bytes: JSON escapes them as it does a comm.
odd_names()
{
	printf 'ffffffff81000000 T _text\n' >odd.txt
	printf 'ffffffff81001000 T a"b\\c\001\177\303\251\377\342\202\n' >>odd.txt
	printf 'ffffffff81001200 t getname\360\237\230\200x\t[m"o\\d]\n' >>odd.txt
	"$LBR" -d stream.bin --kallsyms odd.txt --json >odd.jsonl 2>/dev/null ||
		return 1
	python3 "$HERE/check-json.py" record odd.jsonl || return 1
	python3 - <<'EOF'
import sys
# JSON escapes: \" \\ \u00XX; UTF-8 (é, U+1F600) is copied as it is.
want = (b'"from_sym":"a\\"b\\\\c\\u0001\\u007f\xc3\xa9\\u00ff\\u00e2\\u0082'
        b'+0x30","to_sym":"getname\xf0\x9f\x98\x80x+0x0 [m\\"o\\\\d]"')
if want not in open("odd.jsonl", "rb").read():
    sys.exit(f"no {want!r} in the JSON")
EOF
}
check "symbol names with quotes, control bytes, UTF-8, bad UTF-8: JSON" \
	odd_names

# ---------------------------------------------------------- corrupt input

want good.txt "12.000000 cpu1 ls[123] do_sys_openat2() = -EACCES" \
	"  (no LBR on this machine: backend none)"

corrupt()
{
	local mode=$1 why=$2

	want "$mode.err" "lbr-snap: $mode.bin: corrupt record at offset 88: $why"
	t "corrupt stream ($mode): exit 6 after the good record" 6 good.txt \
		"$mode.err" "$LBR" -d "$mode.bin" "${KS[@]}"
}
corrupt small-size "size 40 is smaller than the header (88)"
corrupt bad-hdr-size "hdr_size 120 is outside 88..112"
corrupt overrun "3 entries of 24 bytes at 88 overrun size 136"
corrupt version0 "version 0"
corrupt truncated "truncated at the end of the input"

# ------------------------------------------------------ device and errors

want nodev.err "lbr-snap: nodev not found: is the lbr_snap module loaded? (modprobe lbr_snap targets=...)"
t "missing device: exit 3, module hint" 3 /dev/null nodev.err \
	"$LBR" -d nodev

want perm.err "lbr-snap: secret.bin: permission denied: reading needs CAP_PERFMON (or root) and read permission on the device; flush and targets need CAP_SYS_ADMIN"
unreadable()
{
	cp stream.bin secret.bin
	if [ "$(id -u)" = 0 ]; then
		chmod 600 secret.bin
		chmod 755 .
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$LBR" -d secret.bin
	else
		chmod 000 secret.bin
		"$LBR" -d secret.bin
	fi
}
t "permission denied: exit 4, needs root" 4 /dev/null perm.err unreadable

want null.err "lbr-snap: /dev/null: not an lbr_snap device, or its module speaks another ABI version"
t "character device without our ioctls: exit 5" 5 /dev/null null.err \
	"$LBR" -d /dev/null

want notdev.err "lbr-snap: stream.bin: not an lbr_snap device"
t "info on a regular file: exit 1" 1 /dev/null notdev.err \
	"$LBR" -d stream.bin info

# ------------------------------------------ ioctls, through fake-ioctl.c

t "info" 0 "$EXP/info.txt" /dev/null "$FAKE" -d stream.bin info
t "info --json" 0 "$EXP/info.json" /dev/null "$FAKE" -d stream.bin info --json
check "info --json has the documented keys" \
	python3 "$HERE/check-json.py" info out.txt
t "info from a module before cpu_types (first GET_INFO size)" 0 \
	"$EXP/info-old.txt" /dev/null env FAKE_LBR_OLD_INFO=1 "$FAKE" -d stream.bin info
t "stats" 0 "$EXP/stats.txt" /dev/null "$FAKE" -d stream.bin stats
t "stats --json" 0 "$EXP/stats.json" /dev/null "$FAKE" --json -d stream.bin stats
check "stats --json has the documented keys" \
	python3 "$HERE/check-json.py" stats out.txt

want flush.err "fake: FLUSH"
t "flush calls LBR_SNAP_IOC_FLUSH" 0 /dev/null flush.err \
	"$FAKE" -d stream.bin flush

t "streaming passes the GET_INFO check on a device" 0 "$EXP/stream.txt" \
	"$EXP/stream.err" "$FAKE" -d stream.bin "${KS[@]}"

want abi.err "lbr-snap: stream.bin: module ABI version 2, but this tool speaks version 1: use the lbr-snap built with the module"
t "ABI version mismatch refuses to stream: exit 5" 5 /dev/null abi.err \
	env FAKE_LBR_ABI=2 "$FAKE" -d stream.bin "${KS[@]}"
t "ABI version mismatch refuses info: exit 5" 5 /dev/null abi.err \
	env FAKE_LBR_ABI=2 "$FAKE" -d stream.bin info

want eperm.err "lbr-snap: stream.bin: GET_INFO: Operation not permitted: needs root (CAP_SYS_ADMIN)"
t "ioctl EPERM: exit 4" 4 /dev/null eperm.err \
	env FAKE_LBR_ERRNO=1 "$FAKE" -d stream.bin stats
want eio.err "lbr-snap: stream.bin: GET_INFO: Input/output error"
t "ioctl EIO: exit 1" 1 /dev/null eio.err \
	env FAKE_LBR_ERRNO=5 "$FAKE" -d stream.bin info

# --------------------------------------- trace, through fake-ioctl.c

want trace.err "fake: ADD_TARGET foo" "fake: ADD_TARGET bar%ptr" \
	"fake: SET_CAPTURE 1" "fake: SET_CAPTURE 0" "fake: DEL_TARGET foo" \
	"fake: DEL_TARGET bar"
t "trace: attach, --all, run, restore, detach; CMD's exit status" 3 \
	/dev/null trace.err \
	"$FAKE" -d paths.bin trace -e foo -e bar%ptr --all -- sh -c 'exit 3'

want trace-fail.err "fake: ADD_TARGET foo" "fake: ADD_TARGET bar%ptr" \
	"lbr-snap: ADD_TARGET bar%ptr: Invalid argument" "fake: DEL_TARGET foo"
t "trace: a target that fails detaches the others, CMD not run" 1 \
	/dev/null trace-fail.err env FAKE_LBR_ADD_FAIL=bar%ptr \
	"$FAKE" -d paths.bin trace -e foo -e bar%ptr -e baz -- touch ran
check "trace: CMD did not run after a failed attach" test ! -e ran

want trace-exists.err "fake: ADD_TARGET foo" \
	"lbr-snap: foo: already a target (or an alias of one): using it, leaving it attached" \
	"fake: ADD_TARGET bar" "lbr-snap: no-such-cmd: No such file or directory" \
	"fake: DEL_TARGET bar"
t "trace: an existing target stays; unknown CMD exits 127" 127 /dev/null \
	trace-exists.err env FAKE_LBR_ADD_EXISTS=foo \
	"$FAKE" -d paths.bin trace -e foo -e bar -- no-such-cmd

trace_signal()
{
	local tool rc

	"$FAKE" -d paths.bin trace -e foo -- sleep 30 2>sig.err &
	tool=$!
	sleep 0.5
	kill -TERM "$tool"
	wait "$tool"
	rc=$?
	cat sig.err >&2
	return "$rc"
}
want trace-sig.err "fake: ADD_TARGET foo" "fake: DEL_TARGET foo"
t "trace: SIGTERM goes to CMD, then detach; exit 128+15" 143 /dev/null \
	trace-sig.err trace_signal

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
t "trace without CAP_SYS_ADMIN: exit 4, no ioctl at all" 4 /dev/null \
	trace-perm.err trace_unprivileged

# ----------------------------------------------------------- command line

try_help="Try 'lbr-snap --help' for more information."
usage()
{
	local name=$1 msg=$2

	shift 2
	if [ -n "$msg" ]; then
		want usage.err "lbr-snap: $msg" "$try_help"
		t "usage: $name: exit 2" 2 /dev/null usage.err "$LBR" "$@"
	else
		t "usage: $name: exit 2" 2 /dev/null - "$LBR" "$@"
	fi
}
usage "unknown option" "" --bogus
usage "-n 0" "-n needs a positive number, not 0" -n 0
usage "-n -1" "-n needs a positive number, not -1" -n -1
usage "-n x" "-n needs a positive number, not x" -n x
usage "unknown command" "unknown command: bogus" bogus
usage "two commands" "too many arguments: stats" info stats
usage "-n with info" "-n and --nonblock only apply to streaming and report" \
	info -n 1
usage "--nonblock with stats" \
	"-n and --nonblock only apply to streaming and report" --nonblock stats
usage "--kallsyms with flush" \
	"--kallsyms and -k only apply to streaming, report and trace" \
	--kallsyms x flush
usage "--json with flush" "--json does not apply to flush" flush --json
usage "-n with trace" "-n and --nonblock only apply to streaming and report" \
	-n 1 trace -e foo -- true
usage "--full with report" \
	"--full and --only-target only apply to streaming and trace" \
	--full report
usage "-e without trace" "-e, --all and --all-tasks only apply to trace" \
	-e foo
usage "--all with report" "-e, --all and --all-tasks only apply to trace" \
	--all report
usage "trace without -e" "trace needs at least one -e SYM[%type]" \
	trace -- true
usage "trace without CMD" \
	"trace needs a command: trace -e SYM -- CMD [ARGS]" trace -e foo
usage "-e with a comma" "-e needs SYM[%type][/N][@hook], not a,b" \
	trace -e a,b -- true

help_complete()
{
	local word rc=0

	"$LBR" --help >help.txt || return 1
	for word in --device -d --kallsyms --json --count -n --nonblock --help \
		    --full --only-target -e --event --all --all-tasks -k --vmlinux \
		    info stats flush report trace "Exit status" SIGINT \
		    "(mispredicted)" "probe path" "no LBR" ERR_PTR errno \
		    branches before_target ends_in nr_paths from_file to_line \
		    from_inline "inlined"; do
		grep -qF -- "$word" help.txt && continue
		echo "--help lacks $word"
		rc=1
	done
	return "$rc"
}
check "--help documents every option, command and output" help_complete

totals
