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
# Needs gcc, make, python3, readelf, nm, mkfifo, timeout, xz, zstd, man
# (the man pages are skipped without it), libbpf for gen-btf.c (the
# patterns' crafted BTF), /proc/PID/io (task I/O accounting, for the
# syscall counts) and, as root, setpriv.
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
skip=0

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

# skipped NAME WHY: a test that cannot run here, counted as a skip.
skipped()
{
	nr=$((nr + 1))
	skip=$((skip + 1))
	echo "ok $nr - # SKIP $1: $2"
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
	echo "# Totals: pass:$pass fail:$fail skip:$skip"
	[ "$fail" = 0 ]
	exit
}

# ------------------------------------------------ helpers of several areas

one_by_one()	# FILE KALLSYMS [OPTIONS]: whole and per record must match
{
	local in=$1 ks=$2

	shift 2
	"$LBR" -d "$in" --kallsyms "$ks" "$@" >whole.out 2>/dev/null
	python3 - "$LBR" "$in" "$ks" "$@" <<'EOF' >each.out || return 1
import struct, subprocess, sys
lbr, path, ks, opts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
data = open(path, "rb").read()
at = 0
while at + 4 <= len(data):
    size = struct.unpack_from("<I", data, at)[0]
    with open("one.bin", "wb") as f:
        f.write(data[at:at + size])
    sys.stdout.flush()
    subprocess.run([lbr, "-d", "one.bin", "--kallsyms", ks] + opts,
                   stdout=sys.stdout, stderr=subprocess.DEVNULL)
    at += size
EOF
	[ -s whole.out ] || { echo "no output"; return 1; }
	diff -u each.out whole.out | head -n 12 | cut -c1-160
	cmp -s each.out whole.out
}

# usage NAME MSG ARGS...: lbr-snap ARGS is a usage error, exit 2; MSG said
# ("": not checked), then where --help is.
TRY_HELP="Try 'lbr-snap --help' for more information."
usage()
{
	local name=$1 msg=$2

	shift 2
	if [ -n "$msg" ]; then
		want usage.err "lbr-snap: $msg" "$TRY_HELP"
		t "usage: $name: exit 2" 2 /dev/null usage.err "$LBR" "$@"
	else
		t "usage: $name: exit 2" 2 /dev/null - "$LBR" "$@"
	fi
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

# Built again when its flags change (libbpf or libdw installed since the
# last build, another CFLAGS): a copy of tools/ is up to date after its
# build, and out of date for make with other flags.
rebuilt_on_new_flags()
{
	rm -rf flags && mkdir flags && cp -r "$ROOT/tools" flags/ &&
		ln -s "$ROOT/include" "$ROOT/src" flags/ ||
		{ echo "cannot copy tools/"; return 1; }
	make -s -C flags/tools clean >/dev/null &&
		make -s -C flags/tools >/dev/null ||
		{ echo "the copy does not build"; return 1; }
	make -q -C flags/tools >/dev/null ||
		{ echo "make -q: out of date right after the build"; return 1; }
	# CFLAGS=-O1: flags that differ whatever this host has installed.
	make -q -C flags/tools CFLAGS=-O1 >/dev/null
	case $? in
	0) echo "make -q CFLAGS=-O1: up to date, built with other flags"
	   return 1 ;;
	2) echo "make -q CFLAGS=-O1: make failed"; return 1 ;;
	esac
}
check "lbr-snap is built again when its flags change" rebuilt_on_new_flags

check "build gen-records" \
	gcc "${CFLAGS[@]}" -o gen-records "$HERE/gen-records.c"
VER=$(sed -n 's/^#define LBR_SNAP_VERSION[ \t]*"\(.*\)"/\1/p' "$ROOT/src/lbr_snap.h")
check "build lbr-snap with fake ioctls" \
	gcc "${CFLAGS[@]}" "-DLBR_SNAP_TOOL_VERSION=\"$VER\"" \
	-Wl,--wrap=ioctl -o lbr-snap-fake \
	"$ROOT"/tools/*.c "$HERE/fake-ioctl.c"
FAKE=$T/lbr-snap-fake

check "build test-errname" \
	gcc "${CFLAGS[@]}" "-I$ROOT/tools" -o test-errname \
	"$HERE/test-errname.c" "$ROOT/tools/errname.c"
check "errno names match glibc's for 1..133 and the kernel's 512..531" \
	./test-errname

./gen-records stream >stream.bin
./gen-records paths >paths.bin
./gen-records stackpaths >stackpaths.bin
for mode in small-size bad-hdr-size overrun version0 truncated stack-overrun; do
	./gen-records "$mode" >"$mode.bin"
done
cp "$HERE/kallsyms.txt" kallsyms.txt
sed 's/^[0-9a-f]\{16\}/0000000000000000/' kallsyms.txt >restricted.txt
KS=(--kallsyms kallsyms.txt)

# --------------------------------------------------------------- streaming

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
	timeout 120 "$LBR" --nonblock -d fifo "${KS[@]}"
	rc=$?
	exec 3>&-
	return "$rc"
}
want fifo.err "lbr-snap: fifo: skipping records of ABI version 2 (this tool knows 1)"
t "--nonblock drains what is there and exits 0" 0 "$EXP/stream.txt" fifo.err \
	fifo_nonblock

# --nonblock ends at the first read that finds nothing, also while a
# writer adds a record every 0.1 ms: the drain thread's pause after a
# short read (2 ms, to batch a storm's wakeups) once made it read on for
# as long as records kept coming.
fifo_nonblock_feed()
{
	local feeder t0 rc i

	rm -f fifo feeding stop
	mkfifo fifo
	exec 3<>fifo	# a reader: the feeder's open() does not wait
	# It feeds until told to stop (at most a minute).
	python3 - fifo 60 <<'EOF2' &
import os, struct, sys, time
data = open("stream.bin", "rb").read()
recs, at = [], 0
while at + 4 <= len(data):
    n = struct.unpack_from("<I", data, at)[0]
    if struct.unpack_from("<H", data, at + 4)[0] == 1:   # ABI version 1
        recs.append(data[at:at + n])
    at += n
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
end, i = time.time() + float(sys.argv[2]), 0
while time.time() < end and not os.path.exists("stop"):
    try:
        os.write(fd, recs[i % len(recs)])
        i += 1
        if i == 1:
            open("feeding", "w").close()
    except BlockingIOError:
        pass
    t = time.time() + 0.0001
    while time.time() < t:
        pass
EOF2
	feeder=$!
	# Records are coming when the tool starts.
	for i in $(seq 200); do
		[ -e feeding ] && break
		sleep 0.05
	done
	t0=$SECONDS
	timeout 120 "$LBR" --nonblock -d fifo "${KS[@]}" >/dev/null 2>&1
	rc=$?
	# It ended while the records still came: not when they stopped.
	kill -0 "$feeder" 2>/dev/null ||
		echo "--nonblock read on until the writer stopped ($((SECONDS - t0)) s)" >&2
	touch stop
	wait "$feeder"
	exec 3>&-
	return "$rc"
}
t "--nonblock ends at once while a writer keeps adding records" 0 /dev/null \
	/dev/null fifo_nonblock_feed

fifo_count()
{
	local rc

	open_fifo
	timeout 120 "$LBR" -n 3 -d fifo "${KS[@]}"
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
	(cat stream.bin; exec sleep 600) >fifo &
	writer=$!
	# timeout passes the signal on, and kills a tool that ignores it.
	# Both waits are by the clock and long: on a loaded machine (make
	# check's prefetch unpacking packages beside it) a write can stall
	# for seconds, and a stall must not read as a tool that never
	# flushed (CI of stop 31 failed here once).
	# The last test's output must not pass for this one's: the
	# redirection below happens in the background, maybe after the
	# first cmp (the tool was signalled before it started: CI of stop
	# 31, exit 143 and no output).
	rm -f sig.out sig.err
	timeout -s KILL 120 "$LBR" -d fifo "${KS[@]}" >sig.out 2>sig.err &
	tool=$!
	i=$((SECONDS + 60))
	until cmp -s sig.out "$EXP/stream.txt"; do
		if [ "$SECONDS" -ge "$i" ]; then
			echo "no full output in 60 s before the signal: not flushed after the read?" >&2
			break
		fi
		sleep 0.05
	done
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
# Branch lists are printed from memory when a record's entries are the
# same bytes as an earlier record's (a storm): what a record prints must
# not depend on the records before it.  The oracle: each record printed
# by a process of its own.
./gen-records memo >memo.bin
head_records()	# FILE N: the first N records of FILE
{
	python3 - "$1" "$2" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
at = 0
for _ in range(int(sys.argv[2])):
    if at + 4 > len(data):
        break
    at += struct.unpack_from("<I", data, at)[0]
sys.stdout.buffer.write(data[:at])
EOF
}
head_records bulk.bin 60 >bulk60.bin
# A storm of 12 paths taken in turn, three times each time (a list is
# kept the second time it is seen, and printed from memory the third),
# 20 times: more than the tool keeps (8), so kept lists are printed
# from memory and replaced all the time.
python3 - <<'EOF' >memostorm.bin
import struct, sys
data = open("bulk.bin", "rb").read()
recs, at = [], 0
while at + 4 <= len(data) and len(recs) < 12:
    size = struct.unpack_from("<I", data, at)[0]
    recs.append(data[at:at + size])
    at += size
sys.stdout.buffer.write(b"".join(recs[i // 3 % 12] for i in range(720)))
EOF
memo_same()
{
	local in ks fmt

	for in in memo.bin stream.bin paths.bin bulk60.bin memostorm.bin; do
		ks=kallsyms.txt
		[[ "$in" != bulk60.bin && "$in" != memostorm.bin ]] ||
			ks=bulk-kallsyms.txt
		for fmt in "" --json --full --only-target; do
			# shellcheck disable=SC2086
			one_by_one "$in" "$ks" $fmt && continue
			echo "$in ${fmt:-text}: printed whole, not as each record alone"
			return 1
		done
	done
}
check "a record prints the same whether or not an earlier one had its branches" \
	memo_same

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

# And while a write() of the output blocks (a pipe to a consumer that
# falls behind): the input is still read, by the drain thread.  3000
# records come into a pipe of 1 MiB, one every millisecond, and nothing
# reads the tool's output until the last has come; a record that finds
# the pipe full is what the kernel would drop.  Reading ahead between
# records only, 1,970 of them found it full.
drain_thread()
{
	./gen-records bulk 3000 2000 >drain.rec
	python3 - "$LBR" --kallsyms bulk-kallsyms.txt --json -d /dev/stdin <<'EOF'
import fcntl, os, struct, subprocess, sys, time

F_SETPIPE_SZ = 1031
data = open("drain.rec", "rb").read()
recs, at = [], 0
while at < len(data):
    size = struct.unpack_from("<I", data, at)[0]
    recs.append(data[at:at + size])
    at += size
r, w = os.pipe()
fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
os.set_blocking(w, False)
out_r, out_w = os.pipe()
p = subprocess.Popen(sys.argv[1:], stdin=r, stdout=out_w)
os.close(r)
os.close(out_w)
full = 0
for rec in recs:
    try:
        os.write(w, rec)
    except BlockingIOError:
        full += 1
    time.sleep(0.001)
os.close(w)
lines = 0
with os.fdopen(out_r, "rb") as f:
    for line in f:
        lines += 1
p.wait()
if p.returncode or full or lines != len(recs):
    sys.exit(f"exit {p.returncode}; {full} of {len(recs)} records found the "
             f"input full while the output was blocked; {lines} printed")
EOF
}
check "the input is read while a write() of the output blocks" drain_thread

# stdout is written by a thread of its own while records stream
# (tools/out.c): the output must be what plain stdio writes, whole and in
# order, from either buffer.  3000 JSON records (gen-records' ts rise by
# 0.25 s each) go to a file, where the writer is often done before the
# printer looks, and through a pipe read a little at a time, where it is
# nearly always behind: every line parses, the ts come in the input's
# order, none missing, and both outputs are the same bytes; text too.
async_out()
{
	./gen-records bulk 3000 2000 >async.rec
	UNIT_DIR=$HERE PYTHONDONTWRITEBYTECODE=1 python3 - "$LBR" -d async.rec --kallsyms bulk-kallsyms.txt <<'EOF2'
import json, os, subprocess, sys

sys.path.insert(0, os.environ["UNIT_DIR"])
from slow_read import deadline, procs, slow_read

lbr = sys.argv[1:]
deadline()

for fmt in (["--json"], []):
    with open("async.out", "wb") as f:
        procs.append(subprocess.Popen(lbr + fmt, stdout=f))
        rc = procs[-1].wait()
    whole = open("async.out", "rb").read()
    slow, rc2, threads = slow_read(lbr + fmt)
    if rc or rc2:
        sys.exit(f"{fmt}: exit {rc}, {rc2}")
    # From a regular file there is no drain thread: the other one writes.
    if threads < 2:
        sys.exit(f"{fmt}: {threads} thread(s) while the output waited: "
                 "no thread writes stdout")
    # From a pipe the drain thread reads ahead, no batch ends, and
    # buffers are handed over mid-batch (OUT_HANDOFF).
    cat = subprocess.Popen(["cat", "async.rec"], stdout=subprocess.PIPE)
    piped, rc3, _ = slow_read([lbr[0], "-d", "/dev/stdin"] + lbr[3:] + fmt,
                              stdin=cat.stdout)
    cat.stdout.close()
    cat.wait()
    if rc3 or piped != whole:
        sys.exit(f"{fmt or 'text'}: from a pipe through a slow pipe: exit "
                 f"{rc3}, {len(piped)} bytes, to a file {len(whole)}")
    if fmt:
        ts = [json.loads(line)["ts"] for line in whole.splitlines()]
        want = [12000000000 + 250000000 * i for i in range(3000)]
        if ts != want:
            bad = next((i for i in range(min(len(ts), 3000))
                        if ts[i] != want[i]), min(len(ts), 3000))
            sys.exit(f"JSON to a file: {len(ts)} records; record {bad} "
                     f"out of order or missing")
    if slow != whole:
        at = next((i for i in range(min(len(slow), len(whole)))
                   if slow[i] != whole[i]), min(len(slow), len(whole)))
        sys.exit(f"{fmt or 'text'}: through a slow pipe, {len(slow)} bytes, "
                 f"to a file {len(whole)}: they part at byte {at}")
EOF2
}
check "stdout by a thread of its own: whole and in order, to a file and a slow pipe" \
	async_out

# A message on stderr comes after the records printed before it
# (pr_err() waits for the writer: out_sync()), also when both go to one
# pipe read slowly, where the writer is behind: an input cut short in its
# last record, and one with a corrupt record (size 3) at record 2000.
# The message is the last line; every line before it a whole record.
out_msg_order()
{
	UNIT_DIR=$HERE PYTHONDONTWRITEBYTECODE=1 python3 - "$LBR" <<'EOF2'
import json, os, struct, subprocess, sys

sys.path.insert(0, os.environ["UNIT_DIR"])
from slow_read import deadline, slow_read

lbr = sys.argv[1]
d = open("async.rec", "rb").read()
offs, at = [], 0
while at < len(d):
    offs.append(at)
    at += struct.unpack_from("<I", d, at)[0]
open("cut.rec", "wb").write(d[:offs[2999] + 100])
b = bytearray(d)
struct.pack_into("<I", b, offs[2000], 3)
open("bad.rec", "wb").write(b)
deadline()
for name, want, msg in (("cut.rec", 2999, "truncated at the end"),
                        ("bad.rec", 2000, "size 3 is smaller")):
    out, rc, _ = slow_read([lbr, "-d", name, "--kallsyms", "bulk-kallsyms.txt",
                            "--json"], stderr=subprocess.STDOUT)
    lines = out.decode().splitlines()
    at = next((i for i, l in enumerate(lines) if "lbr-snap: " in l), None)
    if rc != 6 or at is None or msg not in lines[at]:
        sys.exit(f"{name}: exit {rc}, no message: {lines[-1][:200]!r}")
    if not lines[at].startswith("lbr-snap: "):
        sys.exit(f"{name}: the message cuts line {at + 1} of {len(lines)}, "
                 f"a record printed before it")
    if at != len(lines) - 1 or at != want:
        sys.exit(f"{name}: the message is line {at + 1} of {len(lines)}; "
                 f"{want} records come before it")
    for i, l in enumerate(lines[:at]):
        try:
            json.loads(l)
        except ValueError:
            sys.exit(f"{name}: line {i + 1} is not a whole record")
EOF2
}
check "a message comes after the records printed before it" out_msg_order

# A write error ends as with plain stdio: to /dev/full, and to a pipe
# that closed with SIGPIPE ignored, exit 1 and "write error on stdout";
# with SIGPIPE's default action, killed by it (141), a write by the
# writer thread too (one that blocked it ran on to the end of the input);
# env sets the default: an ignored SIGPIPE is inherited, and a shell
# cannot undo that with trap.
out_errors()
{
	local rc

	timeout -s KILL 60 "$LBR" -d bulk.bin --kallsyms bulk-kallsyms.txt \
		--json >/dev/full 2>full.err
	rc=$?
	[ "$rc" = 1 ] && grep -q "write error on stdout" full.err ||
		{ echo "/dev/full: exit $rc, $(cat full.err)"; return 1; }
	(trap '' PIPE; timeout -s KILL 60 "$LBR" -d bulk.bin \
		--kallsyms bulk-kallsyms.txt --json 2>pipe.err
	 echo $? >pipe.rc) | head -c 100 >/dev/null
	rc=$(cat pipe.rc)
	[ "$rc" = 1 ] && grep -q "write error on stdout" pipe.err ||
		{ echo "closed pipe: exit $rc, $(cat pipe.err)"; return 1; }
	# A slow input keeps the tool running after head has gone.
	(python3 -c '
import sys, time
d = open("bulk.bin", "rb").read()
for i in range(0, len(d), 4096):
    sys.stdout.buffer.write(d[i:i + 4096])
    sys.stdout.flush()
    time.sleep(0.005)
' 2>/dev/null | timeout -s KILL 60 env --default-signal=PIPE \
		"$LBR" -d /dev/stdin --kallsyms bulk-kallsyms.txt --json \
		2>sigpipe.err
	 echo $? >sigpipe.rc) | head -c 100 >/dev/null
	rc=$(cat sigpipe.rc)
	[ "$rc" = 141 ] ||
		{ echo "closed pipe, SIGPIPE: exit $rc, $(cat sigpipe.err)"; return 1; }
}
check "stdout's write errors: /dev/full, a closed pipe: exit 1 or SIGPIPE" \
	out_errors

# Behind a consumer that stopped reading, the queue can hold 64 MiB of
# records: the first SIGINT ends the reading and prints them all, a
# second stops the printing too and says how many were not printed.
second_signal()
{
	./gen-records bulk 3000 2000 >drain.rec
	python3 - "$LBR" --kallsyms bulk-kallsyms.txt --json -d /dev/stdin <<'EOF'
import fcntl, os, re, signal, struct, subprocess, sys, termios, time

F_SETPIPE_SZ = 1031
data = open("drain.rec", "rb").read()
r, w = os.pipe()
fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
out_r, out_w = os.pipe()
p = subprocess.Popen(sys.argv[1:], stdin=r, stdout=out_w,
                     stderr=subprocess.PIPE)
os.close(out_w)
os.write(w, data)
# Every record read by the tool, none printed but what fits its buffers.
for _ in range(1000):
    left = fcntl.ioctl(r, termios.FIONREAD, b"\0" * 4)
    if not struct.unpack("i", left)[0]:
        break
    time.sleep(0.01)
os.close(r)
time.sleep(0.2)
p.send_signal(signal.SIGINT)
time.sleep(0.2)
p.send_signal(signal.SIGINT)
lines = 0
with os.fdopen(out_r, "rb") as f:
    for line in f:
        lines += 1
err = p.stderr.read().decode()
p.wait()
os.close(w)
m = re.search(r"(\d+) records read were not printed: stopped by a second signal", err)
left = int(m.group(1)) if m else 0
if p.returncode or not m or not left or lines + left != 3000:
    sys.exit(f"exit {p.returncode}; {lines} printed, {left} said not printed, "
             f"of 3000; stderr: {err!r}")
EOF
}
check "a second SIGINT stops the printing and counts what it left" second_signal

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

# Readable text: each record's arrows in one column, its indexes padded,
# the caller and the numbering under the header (and its call stack), a
# blank line after it.
text_layout()
{
	"$LBR" -d bulk.bin --kallsyms bulk-kallsyms.txt -n 50 --full >layout.txt ||
		return 1
	cat "$EXP/stream.txt" "$EXP/paths-only-target-full.txt" >>layout.txt
	python3 - layout.txt <<'EOF'
import re, sys
recs = open(sys.argv[1]).read().split("\n\n")
if recs.pop() != "":
    sys.exit("no blank line after the last record")
wide = 0
for n, rec in enumerate(recs, 1):
    lines = rec.split("\n")
    # the call stack, or the note on its absence, comes first
    at = 1
    if lines[1] == "  call stack (the caller first):":
        at = 2
        while lines[at].startswith("    "):
            at += 1
        if at == 2:
            sys.exit(f"record {n}: a call stack without frames")
    elif lines[1].startswith("  (no call stack"):
        at = 2
    m = re.match(r"  returned to \S+; (no branches|1 branch, #0|(\d+) branches, #0 \(oldest\) to #(\d+) \(newest\))$", lines[at])
    if not m or (m.group(2) and int(m.group(3)) != int(m.group(2)) - 1):
        sys.exit(f"record {n}: line {at + 1} {lines[at]!r}")
    br = [l for l in lines if l.startswith("  [#")]
    cols = {l.index(" -> ") for l in br}
    starts = {len(re.match(r"  \[#\d+\] +", l).group(0)) for l in br}
    if len(cols) > 1 or len(starts) > 1:
        sys.exit(f"record {n}: not aligned:\n" + "\n".join(br))
    wide = max(wide, len(br))
if wide < 10:
    sys.exit("no record with 10 branches or more to check")
EOF
}
check "text: arrows and indexes aligned, caller and numbering, blank lines" \
	text_layout

# Source paths: relative to the compilation directory in text, as the
# debug info has them in JSON.
src_paths()
{
	local text start addr

	mkdir -p "$T/src/sub"
	printf 'int x;\nvoid _text(void) {}\nvoid _start(void) { x++; }\n' >"$T/src/sub/vm2.c"
	(cd "$T/src" && gcc -g -O0 -nostdlib -static -o "$T/vm2.elf" "$T/src/sub/vm2.c") ||
		return 1
	text=$(nm "$T/vm2.elf" | awk '$3 == "_text" { print $1 }')
	start=$(nm "$T/vm2.elf" | awk '$3 == "_start" { print $1 }')
	addr=$(printf '0x%x' $((0xffffffff81000000 + 0x$start - 0x$text + 4)))
	./gen-records addr "$addr" >addr.bin
	"$LBR" -d addr.bin "${KS[@]}" -k "$T/vm2.elf" >addr.txt || return 1
	grep -q '^  \[#0\] _stext+0x[0-9a-f]* (sub/vm2\.c:3) -> _stext+0x[0-9a-f]* (sub/vm2\.c:3)$' addr.txt ||
		{ echo "text:"; cat addr.txt; return 1; }
	"$LBR" -d addr.bin "${KS[@]}" -k "$T/vm2.elf" --json >addr.jsonl || return 1
	grep -q "\"from_file\":\"$T/src/sub/vm2.c\",\"from_line\":3," addr.jsonl ||
		{ echo "JSON:"; cat addr.jsonl; return 1; }
	# Source lines too come from memory for a list printed before.
	cat addr.bin addr.bin addr.bin >addr3.bin
	one_by_one addr3.bin kallsyms.txt -k "$T/vm2.elf" || return 1
	one_by_one addr3.bin kallsyms.txt -k "$T/vm2.elf" --json || return 1
	[ "$(grep -c '"from_line":3,' whole.out)" = 3 ] ||
		{ echo "3 records, not all with their line:"; cat whole.out; return 1; }
	# report shows them as the records do (it once printed none).
	"$LBR" -d addr3.bin "${KS[@]}" -k "$T/vm2.elf" report >addr-report.txt ||
		return 1
	grep -q '^    \[#0\] _stext+0x[0-9a-f]* (sub/vm2\.c:3) -> _stext+0x[0-9a-f]* (sub/vm2\.c:3)$' addr-report.txt ||
		{ echo "report:"; cat addr-report.txt; return 1; }
	"$LBR" -d addr3.bin "${KS[@]}" -k "$T/vm2.elf" report --json \
		>addr-report.jsonl || return 1
	python3 "$HERE/check-json.py" report addr-report.jsonl || return 1
	grep -q "\"from_file\":\"$T/src/sub/vm2.c\",\"from_line\":3," addr-report.jsonl ||
		{ echo "report --json:"; cat addr-report.jsonl; return 1; }
}
if "$LBR" --help | grep -q '^Source lines: built in'; then
	check "source paths: relative to the build directory in text, whole in JSON; report too" \
		src_paths
fi

# A module built out of tree: kbuild compiles it in the kernel's tree
# (DW_AT_comp_dir) from sources elsewhere, whose absolute paths text
# showed whole.  Now they are relative to the module's source root, the
# directory common to its units outside comp_dir; JSON keeps them whole.
# Two units, one in a subdirectory, built from a directory of their own.
module_paths()
{
	local text addr name want

	rm -rf "$T/modsrc" "$T/modbuild"
	mkdir -p "$T/modsrc/sub" "$T/modbuild"
	printf 'int y;\nvoid helper(void)\n{\n\ty++;\n}\n' >"$T/modsrc/sub/b.c"
	printf 'int x;\nvoid helper(void);\nvoid _text(void) {}\nvoid _start(void) { x++; helper(); }\n' \
		>"$T/modsrc/a.c"
	(cd "$T/modbuild" &&
	 gcc -g -O0 -nostdlib -static -o "$T/mod.elf" "$T/modsrc/a.c" "$T/modsrc/sub/b.c") ||
		return 1
	text=$(nm "$T/mod.elf" | awk '$3 == "_text" { print $1 }')
	for name in _start:a.c:4 helper:sub/b.c:4; do
		want=${name#*:}
		addr=$(nm "$T/mod.elf" | awk -v s="${name%%:*}" '$3 == s { print $1 }')
		addr=$(printf '0x%x' $((0xffffffff81000000 + 0x$addr - 0x$text + 8)))
		./gen-records addr "$addr" >modaddr.bin
		"$LBR" -d modaddr.bin "${KS[@]}" -k "$T/mod.elf" >modaddr.txt || return 1
		grep -q "^  \[#0\] _stext+0x[0-9a-f]* ($want) -> " modaddr.txt ||
			{ echo "want $want:"; cat modaddr.txt; return 1; }
		"$LBR" -d modaddr.bin "${KS[@]}" -k "$T/mod.elf" --json >modaddr.jsonl ||
			return 1
		grep -q "\"from_file\":\"$T/modsrc/${want%:*}\"" modaddr.jsonl ||
			{ echo "JSON, want $T/modsrc/${want%:*}:"; cat modaddr.jsonl; return 1; }
	done
}
if "$LBR" --help | grep -q '^Source lines: built in'; then
	check "source paths outside the build directory: relative to the module's source root" \
		module_paths
fi

# -------------------------------------------------- trimming and report

t "--full shows the probe-path entries" 0 "$EXP/stream-full.txt" \
	"$EXP/stream.err" "$LBR" -d stream.bin "${KS[@]}" --full
t "--only-target --full: entries before the target cut, said how many" 0 \
	"$EXP/paths-only-target-full.txt" /dev/null \
	"$LBR" -d paths.bin "${KS[@]}" --only-target --full

# Timestamps past 2^53 ns: ts_sec and ts_nsec exact where a double is not.
./gen-records bigts >bigts.bin
big_ts()
{
	"$LBR" -d bigts.bin --json >bigts.jsonl || return 1
	python3 "$HERE/check-json.py" record bigts.jsonl || return 1
	grep -c '^{"ts":9007199254740993,"ts_sec":9007199,"ts_nsec":254740993,' bigts.jsonl |
		grep -qx 1 || { echo "no exact ts_sec/ts_nsec for 2^53 + 1"; return 1; }
	grep -c '^{"ts":18446744073709551615,"ts_sec":18446744073,"ts_nsec":709551615,' bigts.jsonl |
		grep -qx 1 || { echo "no exact ts_sec/ts_nsec for 2^64 - 1"; return 1; }
	# As a reader with double-precision numbers sees them.
	python3 -c '
import json, sys
for line in open("bigts.jsonl"):
    r = json.loads(line, parse_int=float)
    if int(r["ts_sec"]) * 10**9 + int(r["ts_nsec"]) not in (2**53 + 1, 2**64 - 1):
        sys.exit(f"ts_sec, ts_nsec lose digits as doubles: {r}")
'
	"$LBR" -d bigts.bin | grep -c '^9007199\.254740 \|^18446744073\.709551 ' |
		grep -qx 2 || { echo "text TIME of the late records wrong"; return 1; }
}
check "JSON ts past 2^53: ts_sec and ts_nsec exact, ts kept" big_ts

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

# One branch path from two call stacks and from none (gen_stack_paths()):
# a path is the stack and the branches.
report_stacks()
{
	"$LBR" -d stackpaths.bin "${KS[@]}" report | grep -v '^    \[' >stacks.txt
	want stacks.want \
		"3 distinct paths led to -ENOENT from do_sys_openat2; the most common (3×) ends in do_sys_openat2+0x1c2" \
		"  3× path 1 of 3:" \
		"    called from __x64_sys_openat+0x55" \
		"      do_syscall_64+0x3b" \
		"      entry_SYSCALL_64_after_hwframe+0x63" \
		"  2× path 2 of 3:" \
		"    called from __x64_sys_openat+0x55" \
		"      do_syscall_64+0x48" \
		"      entry_SYSCALL_64_after_hwframe+0x63" \
		"  1× path 3 of 3:"
	diff -u stacks.want stacks.txt || return 1
	"$LBR" -d stackpaths.bin "${KS[@]}" --json >stackpaths.jsonl &&
	"$LBR" -d stackpaths.bin "${KS[@]}" report --json >stackreport.jsonl &&
	python3 "$HERE/check-json.py" report stackreport.jsonl &&
	python3 "$HERE/check-report.py" stackpaths.jsonl stackreport.jsonl
}
check "report tells a path by its call stack too" report_stacks

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

# The debug files for source lines under a fake root (LBR_SNAP_ROOT): the
# lookup order of vmlinux and of modules' files, as -v says it.
debug_lookup()
{
	local rel r=$T/root
	rel=$(uname -r)

	mkdir -p "$r/boot" "$r/proc" "$r/usr/lib/debug/boot" \
		"$r/usr/lib/debug/lib/modules/$rel/kernel/fs/ext4" \
		"$r/lib/modules/$rel/kernel/fs/ext4" \
		"$r/lib/modules/$rel/kernel/fs/xfs" "$r/lib/modules/$rel/extra"
	# An ELF with _text and DWARF stands in for vmlinux.
	printf 'void _text(void) {}\nvoid _start(void) {}\n' >vm.c
	gcc -g -O0 -nostdlib -static -o vm.elf vm.c || return 1
	echo junk >"$r/boot/vmlinux-$rel"	# found first, not an ELF
	cp vm.elf "$r/usr/lib/debug/boot/vmlinux-$rel"
	cp vm.elf "$r/usr/lib/debug/lib/modules/$rel/vmlinux"	# not reached
	printf '%s 4096 0 - Live 0xffffffffc0200000\n' ext4 xfs foo_bar gone \
		>"$r/proc/modules"
	# The -dbg tree first, then /lib/modules; .ko, .ko.xz, .ko.zst, .ko.gz.
	: >"$r/usr/lib/debug/lib/modules/$rel/kernel/fs/ext4/ext4.ko"
	: >"$r/lib/modules/$rel/kernel/fs/ext4/ext4.ko"
	: >"$r/lib/modules/$rel/kernel/fs/xfs/xfs.ko.zst"
	: >"$r/lib/modules/$rel/kernel/fs/xfs/xfs.ko.xz"
	: >"$r/lib/modules/$rel/extra/foo-bar.ko.gz"
	LBR_SNAP_ROOT=$r "$LBR" -v -d stream.bin "${KS[@]}" >/dev/null 2>lookup.err
	grep -v 'skipping records' lookup.err |
		sed "s|$r|ROOT|g; s|$rel|REL|g; s|\(/boot/vmlinux-REL: not usable: \).*|\1WHY|" \
		>lookup.txt
	want lookup.want \
		"lbr-snap: vmlinux ROOT/boot/vmlinux-REL: not usable: WHY" \
		"lbr-snap: vmlinux: ROOT/usr/lib/debug/boot/vmlinux-REL" \
		"lbr-snap: module ext4: ROOT/usr/lib/debug/lib/modules/REL/kernel/fs/ext4/ext4.ko" \
		"lbr-snap: module xfs: ROOT/lib/modules/REL/kernel/fs/xfs/xfs.ko.xz" \
		"lbr-snap: module foo_bar: ROOT/lib/modules/REL/extra/foo-bar.ko.gz" \
		"lbr-snap: module gone: no gone.ko, .ko.xz, .ko.zst or .ko.gz under ROOT/usr/lib/debug/lib/modules/REL or ROOT/lib/modules/REL: its addresses get no file:line"
	diff -u lookup.want lookup.txt || return 1

	# Nothing at all: where it looked is said.
	rm -rf "${r:?}/boot" "$r/usr/lib/debug/boot" "$r/usr/lib/debug/lib/modules/$rel/vmlinux"
	LBR_SNAP_ROOT=$r "$LBR" -v -d stream.bin "${KS[@]}" 2>&1 >/dev/null |
		grep 'vmlinux' | sed "s|$r|ROOT|g; s|$rel|REL|g" >lookup2.txt
	want lookup2.want \
		"lbr-snap: no vmlinux: looked for ROOT/boot/vmlinux-REL, ROOT/lib/modules/REL/build/vmlinux, ROOT/usr/lib/debug/boot/vmlinux-REL, ROOT/usr/lib/debug/lib/modules/REL/vmlinux (-k PATH gives one): kernel addresses get no file:line"
	diff -u lookup2.want lookup2.txt
}
if grep -q '^Source lines: built in' help.txt 2>/dev/null ||
   "$LBR" --help | grep -q '^Source lines: built in'; then
	check "-v: vmlinux and modules' debug files, in lookup order (fake root)" \
		debug_lookup
else
	skipped "-v debug file lookup" "built without libdw"
fi
# Compressed debug files: libdwfl decompresses xz, lbr-snap zstd.
compressed_vmlinux()
{
	local f rc=0

	printf 'void _text(void) {}\nvoid _start(void) {}\n' >vm.c
	gcc -g -O0 -nostdlib -static -o vm.elf vm.c || return 1
	xz -kf vm.elf && zstd -qf vm.elf -o vm.elf.zst || return 1
	head -c 100 vm.elf.zst >cut.zst
	for f in vm.elf vm.elf.xz vm.elf.zst; do
		"$LBR" -v -k "$f" -d paths.bin "${KS[@]}" 2>&1 >/dev/null |
			grep -qx "lbr-snap: vmlinux: $f" && continue
		echo "-k $f: not used"
		rc=1
	done
	"$LBR" -v -k cut.zst -d paths.bin "${KS[@]}" 2>&1 >/dev/null |
		grep -qx "lbr-snap: vmlinux cut.zst: not usable: bad zstd data" ||
		{ echo "a truncated .zst not said"; rc=1; }
	return "$rc"
}
if "$LBR" --help | grep -q '^Source lines: built in'; then
	check "-k vmlinux.xz, .zst: decompressed, a truncated .zst said" \
		compressed_vmlinux
fi
want noroot.err "lbr-snap: no source lines: kallsyms.txt is not /proc/kallsyms, and no -k vmlinux"
no_lines_said()
{
	{ "$LBR" -v -d paths.bin "${KS[@]}" >/dev/null; } 2>&1
}
t "-v: a kallsyms file and no -k: no source lines, said" 0 noroot.err - \
	no_lines_said

# ------------------------------------------------------------ record notes

# LBR_SNAP_REC_WAS_OFF and LBR_SNAP_REC_RAN_AGAIN: a note each under the
# record, and both bits in the JSON flags; LBR_SNAP_REC_NO_LBR from a CPU
# of a machine with LBR: that CPU's note, not "no LBR on this machine".
record_notes()
{
	local out

	./gen-records notes >notes.bin || return 1
	out=$("$LBR" -d notes.bin "${KS[@]}") || return 1
	grep -qx '  (LBR was already off when this return froze it: the branches may be older)' <<<"$out" ||
		{ echo "no WAS_OFF note in:"; echo "$out"; return 1; }
	grep -qx "  (LBR was recording again when the read ended: some branches may be lbr_snap's own)" <<<"$out" ||
		{ echo "no RAN_AGAIN note in:"; echo "$out"; return 1; }
	grep -qx "  (no LBR read on cpu1: going offline or online, or perf gave it no LBR)" <<<"$out" ||
		{ echo "no note for a CPU without LBR reads in:"; echo "$out"; return 1; }
	out=$("$LBR" -d notes.bin "${KS[@]}" --json) || return 1
	grep -q '"flags":12[,}]' <<<"$out" || { echo "flags not 12: $out"; return 1; }
}
check "record notes: LBR found off, recording again after the read, a CPU not read" \
	record_notes

# A hooked function called inside the path (gen_hook()): its visits to
# lbr_snap's trampoline, in and out, are one line each, saying how many
# entries, which, and from where back to where, the functions lbr_snap
# calls in its capture included; -v shows them; the record's own return
# into a trampoline, last, is not folded.
./gen-records hook >hook.bin
{ cat kallsyms.txt
  printf 'ffffffffc0400000 t lbr_fexit_lbr_4\t[lbr_snap_fexit]\n'
  printf 'ffffffffc0400100 t lbr_fexit_call_rest\t[lbr_snap_fexit]\n'
  printf 'ffffffffc0400200 t lbr_fexit_end\t[lbr_snap_fexit]\n'
  printf 'ffffffffc0500000 t lbr_capture_record\t[lbr_snap]\n'
  printf 'ffffffffc0501000 t lbr_capture_end\t[lbr_snap]\n'; } >hook-kallsyms.txt
hook_fold()
{
	"$LBR" -d hook.bin --kallsyms hook-kallsyms.txt >hook.txt || return 1
	grep '^  \[lbr_snap' hook.txt >hook-lines.txt
	want hook-lines.want \
		"  [lbr_snap's hook: 5 entries, #1 to #5, getname_flags+0x0 back to getname_flags+0x5 (-v unfolds)]" \
		"  [lbr_snap's hook: 3 entries, #8 to #10, __x86_return_thunk+0x0 back to do_sys_openat2+0x35 (-v unfolds)]" \
		"  [lbr_snap's hook, its start not recorded: 8 entries, #0 to #7, __x86_return_thunk+0x0 back to do_sys_openat2+0x35 (-v unfolds)]"
	diff -u hook-lines.want hook-lines.txt || return 1
	awk '/^[0-9]/ { if (n++) print s; s = "" }
	     /^  \[#/ { s = s " " substr($1, 3, length($1) - 3) }
	     END { print s }' hook.txt >hook-shown.txt
	want hook-shown.want " 0 6 7 11 12" " 8 9"
	diff -u hook-shown.want hook-shown.txt || return 1
	"$LBR" -v -d hook.bin --kallsyms hook-kallsyms.txt >hook-v.txt 2>/dev/null ||
		return 1
	grep -q '^  \[lbr_snap' hook-v.txt && { echo "-v folded:"; cat hook-v.txt; return 1; }
	[ "$(grep -c '^  \[#' hook-v.txt)" = 23 ] ||
		{ echo "-v: not the 23 entries:"; cat hook-v.txt; return 1; }
}
check "a nested hooked call's trampoline entries fold into a line each way (-v unfolds)" \
	hook_fold

# An interrupt inside a record (gen_irq()) is one line by default, saying
# how many entries it folded, which, from where to where and back to
# what; -v shows them one by one; JSON keeps every entry and marks the
# interrupt's.  A page fault is the path's own: not folded, also when an
# interrupt comes inside it (that one is); one whose entry was pushed out
# is found by its IRET and its handler's calls; legacy LBR's untyped
# entries fold by the symbols alone; near jumps into an entry point do
# not.  Each entry was printed, 24 lines of a timer tick in a 32-entry
# record at times.
./gen-records irq >irq.bin
{ cat kallsyms.txt
  printf '%s\n' "ffffffff81007000 T asm_sysvec_apic_timer_interrupt" \
	"ffffffff81007100 t sysvec_apic_timer_interrupt" \
	"ffffffff81007200 T irq_enter_rcu" "ffffffff81007300 T irq_exit_rcu" \
	"ffffffff81007400 T native_irq_return_iret" \
	"ffffffff81007500 T asm_exc_page_fault" "ffffffff81007600 t exc_page_fault" \
	"ffffffff81007700 T irq_text_end"; } >irq-kallsyms.txt
irq_fold()
{
	local folded="(-v unfolds)]"

	"$LBR" -d irq.bin --kallsyms irq-kallsyms.txt >irq.txt || return 1
	grep '^  \[interrupt' irq.txt >irq-lines.txt
	want irq-lines.want \
		"  [interrupt: 9 entries, #2 to #10: asm_sysvec_apic_timer_interrupt \u2026 native_irq_return_iret, back to getname_flags+0x10 $folded" \
		"  [interrupt: 9 entries, #2 to #10: asm_sysvec_apic_timer_interrupt \u2026 native_irq_return_iret, back to getname_flags+0x10 $folded" \
		"  [interrupt, its start not recorded: 5 entries, #0 to #4: sysvec_apic_timer_interrupt \u2026 native_irq_return_iret, back to do_sys_openat2+0x0 $folded" \
		"  [interrupt: 5 entries, #2 to #6: asm_sysvec_apic_timer_interrupt \u2026 native_irq_return_iret, back to exc_page_fault+0x8 $folded"
	printf '%b' "$(cat irq-lines.want)\n" >irq-lines.want
	diff -u irq-lines.want irq-lines.txt || return 1
	# The entries each record still shows, one by one.
	awk '/^[0-9]/ { if (n++) print s; s = "" }
	     /^  \[#/ { s = s " " substr($1, 3, length($1) - 3) }
	     END { print s }' irq.txt >irq-shown.txt
	want irq-shown.want " 0 1 11 12" " 0 1 11 12" " 5" " 0 1 2 3 4 5 6" \
		" 0 1 7 8 9 10" " 0 1 2 3 4 5 6 7 8 9 10 11 12"
	diff -u irq-shown.want irq-shown.txt || return 1
	"$LBR" -v -d irq.bin --kallsyms irq-kallsyms.txt >irq-v.txt 2>/dev/null ||
		return 1
	grep -q '^  \[interrupt' irq-v.txt && { echo "-v folded:"; cat irq-v.txt; return 1; }
	[ "$(grep -c '^  \[#' irq-v.txt)" = 63 ] ||
		{ echo "-v: not the 63 entries:"; cat irq-v.txt; return 1; }
	"$LBR" -d irq.bin --kallsyms irq-kallsyms.txt --json >irq.jsonl || return 1
	python3 "$HERE/check-json.py" record irq.jsonl || return 1
	python3 - irq.jsonl <<'PY'
import json, sys
want = [(14, list(range(2, 11)), {2: "IRQ", 10: "ERET"}),
        (14, list(range(2, 11)), {}),
        (7, list(range(0, 5)), {4: "ERET"}),
        (8, [], {1: "IRQ", 5: "ERET"}),
        (12, list(range(2, 7)), {0: "IRQ", 2: "IRQ", 6: "ERET", 9: "ERET"}),
        (14, [], {})]
recs = [json.loads(l) for l in open(sys.argv[1])]
for n, (r, (nr, irq, far)) in enumerate(zip(recs, want), 1):
    br = r["branches"]
    got = ([i for i, b in enumerate(br) if b["interrupt"]],
           {i: b["type_name"] for i, b in enumerate(br) if b["type"] == 7})
    if len(br) != nr or got != (irq, far):
        sys.exit(f"record {n}: {len(br)} branches, interrupt and far {got}; "
                 f"want {nr}, {irq}, {far}")
if len(recs) != len(want):
    sys.exit(f"{len(recs)} records")
PY
}
check "an interrupt in a record: one line (-v: its entries); JSON keeps them, marked" \
	irq_fold

# ---------------------------------------------------------- corrupt input

want good.txt "12.000000 cpu1 ls[123] do_sys_openat2() = -EACCES" \
	"  returned to __x64_sys_openat+0x55; no branches" \
	"  (no LBR on this machine: backend none)" ""

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
corrupt stack-overrun "a stack of 4 frames at 112 overruns size 136 (at most 64 frames)"

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
want stats-filtered.out \
	"hint: kmalloc_trace: all 7 returns filtered (as success, or by an errno list or the task filter): is its return type (ptr) right? see \`lbr-snap spec kmalloc_trace\`" \
	"hint: ext4_file_open has had no hits: is it called, and not inlined into its callers?" \
	"hint: nfs_open is gone: its module was unloaded, and the hook with it; add it again once the module is back (lbr-snap add), or delete it"
stats_hints()
{
	FAKE_LBR_ALL_FILTERED=1 "$FAKE" -d stream.bin stats | grep '^hint'
}
t "stats: hints for no hits, for returns all filtered, for a gone target" 0 \
	stats-filtered.out - stats_hints
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

# ---------------------------------------- add, del, capture (fake-ioctl.c)

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

# ------------------------------------------------ --version (fake-ioctl.c)

version_line()
{
	printf 'lbr-snap %s (ABI version 1; source lines: %s; BTF specs: %s)\n' "$VER" \
		"$(grep -q '^Source lines: built in' help.txt && echo libdw || echo no)" \
		"$1"
}
version_tool()
{
	"$LBR" --help >help.txt || return 1
	local bpf=no
	grep -q '^BTF specs: built in' help.txt && bpf=libbpf
	"$LBR" --version -d nodev >version.out || { echo "exit $?"; return 1; }
	{ version_line "$bpf"; echo "lbr_snap module: nodev: No such file or directory (not loaded)"; } >version.want
	diff -u version.want version.out
}
check "--version: the tool's version (src/lbr_snap.h's), no module" version_tool
want version-mod.out "lbr_snap module 0.1-test (ABI version 1) at stream.bin"
version_fake()
{
	"$FAKE" -d stream.bin --version | tail -n 1
}
t "--version: the module's version and ABI from GET_INFO" 0 version-mod.out - \
	version_fake
want version-abi.out "lbr_snap module 0.1-test (ABI version 2, not this tool's: use the lbr-snap built with it) at stream.bin"
version_abi()
{
	FAKE_LBR_ABI=2 "$FAKE" --version -d stream.bin | tail -n 1
}
t "--version: a module of another ABI said so, exit 0" 0 version-abi.out - \
	version_abi
want version-file.out "lbr_snap module: stream.bin: GET_INFO: Inappropriate ioctl for device (not an lbr_snap device)"
version_file()
{
	"$LBR" --version -d stream.bin | tail -n 1
}
t "--version: not a device, said so" 0 version-file.out - version_file

# ------------------------------------------------ install, man, completion

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

# ----------------------------------------------------------- command line

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
	"--kallsyms, -k and -v only apply to streaming, report, record, trace, spec and add" \
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
usage "-e without trace" "-e, --all, --all-tasks and --lbr only apply to trace" \
	-e foo
usage "--all with report" "-e, --all, --all-tasks and --lbr only apply to trace" \
	--all report
usage_trace "trace without -e" "trace needs at least one -e SYM[%type]" \
	trace -- true
usage_trace "trace without CMD" \
	"trace needs a command: trace -e SYM [--] CMD [ARGS]" trace -e foo
usage_trace "-e with a comma" "-e needs SYM[%type][/N][@hook], not a,b" \
	trace -e a,b -- true
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

# ------------------------------------------------------ record and replay

# A recording of the synthetic stream made with kallsyms.txt replays with
# those symbols on this machine, whatever its own kallsyms, and the same
# stream read with other symbols prints other names: the recording, not
# the machine, symbolizes.
sed 's/^ffffffff81/ffffffff82/' kallsyms.txt >moved.txt
t "record -o: the synthetic stream, recorded" 0 /dev/null - \
	"$LBR" -d stream.bin --kallsyms kallsyms.txt record -o rec.bin
recording_header()
{
	local mode
	mode=$(stat -c %a rec.bin) || return 1
	[ "$mode" = 600 ] || { echo "rec.bin has mode $mode, not 600"; return 1; }
	head -n 4 rec.bin | python3 -c '
import re, sys
lines = sys.stdin.read().split("\n")
want = [r"lbr-snap recording 1$", r"release \S+$", r"build-id ([0-9a-f]+|-)$",
	r"(module \S+ \S+ \S+|kallsyms \d+)$"]
for l, w in zip(lines, want):
	if not re.match(w, l):
		sys.exit("header line %r is not %s" % (l, w))
'
	grep -aq "^kallsyms $(stat -c %s kallsyms.txt)$" rec.bin ||
		{ echo "no 'kallsyms $(stat -c %s kallsyms.txt)' line"; return 1; }
}
check "record -o: a 0600 file, its header, then kallsyms.txt whole" \
	recording_header
t "-i: the recording prints as the stream did with its kallsyms" 0 \
	"$EXP/stream.txt" /dev/null "$LBR" -i rec.bin
t "-i --json: the same records as --json of the stream" 0 - /dev/null \
	"$LBR" -i rec.bin --json
mv out.txt replay.json
"$LBR" -d stream.bin "${KS[@]}" --json >direct.json 2>/dev/null
check "-i --json: equal to the stream's --json" cmp direct.json replay.json
other_symbols()
{
	"$LBR" -d stream.bin --kallsyms moved.txt >moved-out.txt 2>/dev/null
	! cmp -s "$EXP/stream.txt" moved-out.txt ||
		{ echo "other symbols printed the same"; return 1; }
	"$LBR" -d stream.bin --kallsyms moved.txt record -o moved.bin 2>/dev/null &&
		"$LBR" -i moved.bin >moved-replay.txt 2>/dev/null &&
		cmp moved-out.txt moved-replay.txt
}
check "-i: a recording made with other symbols replays with those" \
	other_symbols
t "-i report: the recording's report is the stream's" 0 - - \
	"$LBR" -i rec.bin report
mv out.txt replay-report.txt
"$LBR" -d stream.bin "${KS[@]}" report >direct-report.txt 2>/dev/null
check "-i report: equal to the stream's report" \
	cmp direct-report.txt replay-report.txt
t "record -n 2: two records" 0 /dev/null - \
	"$LBR" -d stream.bin "${KS[@]}" -n 2 record -o two.bin
"$LBR" -i two.bin --json >two.json 2>/dev/null
check "record -n 2: the recording holds two records" \
	test "$(wc -l <two.json)" = 2

# A vmlinux that is not the recorded kernel is named.
printf 'int main(void) { return 0; }\n' >elf.c
gcc -o elf-a -Wl,--build-id=0x00112233 elf.c
python3 - rec.bin <<'PY'
import sys
p = sys.argv[1]
d = open(p, "rb").read()
head, rest = d.split(b"\nbuild-id ", 1)
rest = rest.split(b"\n", 1)[1]
open("rec-id.bin", "wb").write(head + b"\nbuild-id 00112233\n" + rest)
open("rec-other.bin", "wb").write(head + b"\nbuild-id 44556677\n" + rest)
PY
t "-i -k: the recorded kernel's vmlinux: no warning" 0 "$EXP/stream.txt" \
	/dev/null "$LBR" -i rec-id.bin -k elf-a
want mismatch.err "lbr-snap: elf-a: build ID 00112233, not the recorded kernel's (44556677): its source lines may be wrong"
t "-i -k: another vmlinux is named" 0 "$EXP/stream.txt" mismatch.err \
	"$LBR" -i rec-other.bin -k elf-a
want verbose.err "lbr-snap: rec-id.bin: recorded on $(sed -n 's/^release //p' rec.bin | head -n 1), kernel build ID 00112233"
t "-i -v: where it was recorded" 0 "$EXP/stream.txt" - \
	"$LBR" -i rec-id.bin -v
check "-i -v: says the release and build ID" grep -qF -f verbose.err err.txt

# A recording made from a recording says where the records were made,
# not where they were copied: its header (release, build ID, modules,
# lines not known yet) and kallsyms are the input's.  It once got this
# machine's release and build ID (and -i did not take record at all).
python3 - rec.bin <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
head, rest = d.split(b"\nkallsyms ", 1)
open("rec-far.bin", "wb").write(
    b"lbr-snap recording 1\nrelease 9.9.9-far\nbuild-id 8899aabb\n"
    b"module far_mod 0xffffffffc0400000 ccdd\nfuture-line x\n"
    b"kallsyms " + rest)
PY
rerecord()
{
	"$LBR" -i rec-far.bin record -o rerec.bin || return 1
	python3 - rec-far.bin rerec.bin <<'PY' || return 1
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:])
if a.split(b"\nrecords\n", 1)[0] != b.split(b"\nrecords\n", 1)[0]:
    sys.exit("the header and kallsyms are not the input's:\n" +
             b.split(b"\nkallsyms ", 1)[0].decode(errors="replace"))
PY
	"$LBR" -i rec-far.bin --json >far.json 2>/dev/null &&
		"$LBR" -i rerec.bin --json >rerec.json 2>/dev/null &&
		cmp far.json rerec.json || return 1
	"$LBR" -n 2 -i rec-far.bin record -o rerec2.bin &&
		"$LBR" -i rerec2.bin --json >rerec2.json 2>/dev/null &&
		[ "$(wc -l <rerec2.json)" = 2 ] ||
		{ echo "-n 2 -i record: not two records"; return 1; }
	"$LBR" -i rerec2.bin -v >/dev/null 2>rerec.err
	grep -qx "lbr-snap: rerec2.bin: recorded on 9.9.9-far, kernel build ID 8899aabb" rerec.err ||
		{ cat rerec.err; return 1; }
}
check "-i IN record -o OUT: the input's header and kallsyms, its records" \
	rerecord

# Not a recording, or a cut one: exit 6, saying why.
want notrec.err "lbr-snap: stream.bin: not an lbr-snap recording: no 'lbr-snap recording 1' line"
t "-i of a record stream: exit 6" 6 /dev/null notrec.err "$LBR" -i stream.bin
# Cut 100 bytes into its kallsyms: a file says its size is wrong, a pipe
# runs out before the records line.
at=$(grep -abo '^kallsyms [0-9]*$' rec.bin | cut -d: -f1)
head -c $((at + 120)) rec.bin >cut.bin
want cut.err "lbr-snap: cut.bin: not an lbr-snap recording: a bad kallsyms size"
t "-i of a recording cut in its kallsyms: exit 6" 6 /dev/null cut.err \
	"$LBR" -i cut.bin
want cutpipe.err "lbr-snap: /dev/stdin: not an lbr-snap recording: no records line after kallsyms"
t "-i of a cut recording through a pipe: exit 6" 6 /dev/null cutpipe.err \
	sh -c 'cat cut.bin | "$1" -i /dev/stdin' sh "$LBR"
t "-i from a pipe: the records as from the file" 0 "$EXP/stream.txt" /dev/null \
	sh -c 'cat rec.bin | "$1" -i /dev/stdin' sh "$LBR"
# An existing file of other mode becomes 0600; a symlink is not followed.
printf 'old\n' >old.bin
chmod 644 old.bin
t "record -o over an existing 0644 file" 0 /dev/null - \
	"$LBR" -d stream.bin "${KS[@]}" record -o old.bin
check "record -o: the existing file is now 0600, a recording" \
	sh -c 'test "$(stat -c %a old.bin)" = 600 && head -n 1 old.bin | grep -qx "lbr-snap recording 1"'
ln -sf old.bin link.bin
t "record -o a symlink: refused, exit 1" 1 /dev/null - \
	"$LBR" -d stream.bin "${KS[@]}" record -o link.bin
# kptr_restrict's zeros: nothing to symbolize with, refused (exit 4).
want zeros.err "lbr-snap: restricted.txt: no addresses (kernel.kptr_restrict): run as root, or set kernel.kptr_restrict=0, to record"
t "record with a kallsyms of zeros: exit 4" 4 /dev/null zeros.err \
	"$LBR" -d stream.bin --kallsyms restricted.txt record -o zeros.bin
# Not the device: -i of a character device reads nothing.
want chr.err "lbr-snap: /dev/null: not a file or a pipe: -i replays a recording (record -o)"
t "-i of a character device: refused, exit 2" 2 /dev/null chr.err \
	"$LBR" -i /dev/null
usage "record --json" "--json does not apply to record" \
	-d stream.bin --json record -o j.bin
usage "record -k" "-k and -v do not apply to record" \
	-d stream.bin -k x record -o j.bin
usage "record without -o" "record needs -o FILE" -d stream.bin record
usage "-o without record" "-o only applies to record" -o x.bin stats
usage "-i with info" "-i only applies to streaming, report and record" -i rec.bin info
usage "-i with -d" "-i replays a recording: not with -d" -i rec.bin -d stream.bin
usage "-i with --kallsyms" "-i brings its own symbols: not with --kallsyms" \
	-i rec.bin --kallsyms kallsyms.txt

# ------------------------------------------------------ targets by pattern

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

# notes_file FILE HEX: a /sys/kernel/notes holding build ID HEX.
notes_file()
{
	python3 -c '
import struct, sys
d = bytes.fromhex(sys.argv[2])
open(sys.argv[1], "wb").write(struct.pack("<III", 4, len(d), 3) + b"GNU\0" + d)
' "$1" "$2"
}

# An ELF built from a small kernel tree with gcc -g stands in for vmlinux:
# fs/namei.c has a declaration, a function inlined everywhere and a static
# do_walk(), which kernel/bpf/verifier.c has too; lib/string.c is built
# as with O=, in a directory of its own from its absolute path (so named
# in DWARF, as Debian's assembly units are), and has an alias that nm
# lists first.  Its kallsyms are its functions moved as KASLR would, all
# of them traceable, and the running kernel's build ID is the ELF's.
file_root()
{
	local r=$1 id

	mkdir -p ksrc/fs ksrc/kernel/bpf ksrc/init ksrc/lib ksrc/obj "$r/proc" \
		"$r/sys/kernel/tracing" || return 1
	cat >ksrc/init/main.c <<'EOC'
void _text(void) {}
int path_lookup(int);
int bpf_check(int);
void _start(void) { path_lookup(1); bpf_check(2); for (;;); }
EOC
	cat >ksrc/fs/namei.c <<'EOC'
int bpf_helper(int);
static inline __attribute__((always_inline)) int inlined_only(int x)
{
	return x * 3;
}
static __attribute__((noinline)) int do_walk(int x)
{
	return inlined_only(x) + bpf_helper(x);
}
__attribute__((noinline)) int path_lookup(int x)
{
	return do_walk(x) - 1;
}
EOC
	cat >ksrc/kernel/bpf/verifier.c <<'EOC'
static __attribute__((noinline)) int do_walk(int x)
{
	return x + 7;
}
__attribute__((noinline)) int bpf_check(int x)
{
	return do_walk(x) ? -22 : 0;
}
EOC
	cat >ksrc/kernel/bpf/helpers.c <<'EOC'
__attribute__((noinline)) int bpf_helper(int x)
{
	return x ^ 5;
}
EOC
	cat >ksrc/lib/string.c <<'EOC'
__attribute__((noinline)) int strscpy(int x)
{
	return x - 3;
}
int a_strscpy(int x) __attribute__((alias("strscpy")));
EOC
	(cd ksrc/obj && gcc -g -O2 -c -o string.o "$T/ksrc/lib/string.c") &&
	(cd ksrc && gcc -g -O2 -nostdlib -static -Wl,--build-id \
		-o ../file-vmlinux init/main.c fs/namei.c \
		kernel/bpf/verifier.c kernel/bpf/helpers.c obj/string.o) ||
		return 1
	nm -n file-vmlinux | python3 -c '
import sys
for l in sys.stdin:
    a, t, n = l.split()
    if t in "tT":
        print("%x %s %s" % (int(a, 16) + 0xffffffff80c00000, t, n))
' >"$r/proc/kallsyms"
	awk '$3 != "_text" { print $3 }' "$r/proc/kallsyms" \
		>"$r/sys/kernel/tracing/available_filter_functions"
	id=$(readelf -n file-vmlinux | sed -n 's/.*Build ID: //p')
	[ -n "$id" ] || { echo "file-vmlinux has no build ID"; return 1; }
	notes_file "$r/sys/kernel/notes" "$id"
}

"$LBR" --help >pat-help.txt
PR=$T/pat-root
PAT=(env "LBR_SNAP_ROOT=$PR" "$LBR" -d "$T/no-device")
PATF=(env "LBR_SNAP_ROOT=$PR" "$FAKE" -d stream.bin)
if ! grep -q '^BTF specs: built in' pat-help.txt; then
	skipped "targets by pattern" "lbr-snap built without libbpf"
elif check "build gen-btf (libbpf)" \
	gcc "${CFLAGS[@]}" -o gen-btf "$HERE/gen-btf.c" -lbpf &&
     check "the crafted kernel for patterns" pattern_root "$PR"; then

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
fi

# :FILE patterns, from the DWARF of an ELF standing in for vmlinux.
FR=$T/file-root
if ! grep -q '^Source lines: built in' pat-help.txt; then
	skipped ":FILE patterns" "lbr-snap built without libdw"
elif check "the crafted kernel tree and vmlinux for :FILE" file_root "$FR"; then
want pat-file.out path_lookup do_walk
t ":FILE: the functions of a compile unit, not its declarations nor inlined-only ones" \
	0 pat-file.out /dev/null env "LBR_SNAP_ROOT=$FR" "$LBR" \
	-k file-vmlinux spec :fs/namei.c
want pat-fglob.out "attach bpf_check" \
	"refuse do_walk: one of 2 functions of this name: lbr_snap hooks by name, and gets the first in kallsyms, vmlinux's" \
	"attach bpf_helper" "attach path_lookup" \
	"attach do_walk: one of 2 functions of this name: the module hooks this one, the first in kallsyms"
want pat-fglob.err "lbr-snap: dry run: 4 to attach, 1 refused (capture errors); nothing attached"
t ":FILE: a glob on the path; same-named statics told apart by address" 0 \
	pat-fglob.out pat-fglob.err env "LBR_SNAP_ROOT=$FR" "$LBR" \
	-d "$T/no-device" -k file-vmlinux add --dry-run ':kernel/bpf/*.c' \
	':fs/*.c'
want pat-fabs.out strscpy
t ":FILE: a unit named from the source tree, out of its build directory; an alias told by name" \
	0 pat-fabs.out /dev/null env "LBR_SNAP_ROOT=$FR" "$LBR" \
	-k file-vmlinux spec :lib/string.c
want pat-fnone.err "lbr-snap: :fs/nosuch.c: no source file of file-vmlinux matches"
t ":FILE: no unit matches: exit 1" 1 /dev/null pat-fnone.err \
	env "LBR_SNAP_ROOT=$FR" "$LBR" -k file-vmlinux spec :fs/nosuch.c
mkdir -p "$FR/usr/lib/debug/boot"
cp file-vmlinux "$FR/usr/lib/debug/boot/vmlinux-$(uname -r)"
t ":FILE: without -k, the -dbg package's vmlinux" 0 pat-file.out - \
	env "LBR_SNAP_ROOT=$FR" "$LBR" spec :fs/namei.c
id=$(readelf -n file-vmlinux | sed -n 's/.*Build ID: //p')
notes_file "$FR/sys/kernel/notes" 00112233445566778899aabbccddeeff00112233
want pat-fid.err "lbr-snap: file-vmlinux is not the running kernel's: build ID $id, the kernel's 00112233445566778899aabbccddeeff00112233"
t ":FILE: a vmlinux of another build ID: exit 1, nothing attached" 1 \
	/dev/null pat-fid.err env "LBR_SNAP_ROOT=$FR" "$LBR" -d "$T/no-device" \
	-k file-vmlinux add :fs/namei.c
want pat-fscope.err "lbr-snap: :fs/namei.c [ext4]: a source file is vmlinux's: no module scope"
t ":FILE: with a module scope: exit 2" 2 /dev/null pat-fscope.err \
	env "LBR_SNAP_ROOT=$FR" "$LBR" -k file-vmlinux spec ':fs/namei.c [ext4]'
fi

totals
