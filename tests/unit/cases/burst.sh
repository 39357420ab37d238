# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# A burst of records, as a storm brings them: a record prints the same
# whether or not an earlier one had its branches (printed from memory),
# few read()s and big write()s, records read ahead of printing, the input
# drained while a write() blocks, stdout by a thread of its own, a message
# after the records before it, write errors, a second SIGINT; then every
# input so far through an ASan/UBSan build.  Writes bulk.bin and
# bulk-kallsyms.txt, which print.sh reads too.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

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
