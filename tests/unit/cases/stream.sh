# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# Streaming: the synthetic stream as text and as JSON, -n and --count,
# records split across the reads of a pipe, a FIFO that stays open
# (--nonblock, -n), SIGINT and SIGTERM ending the stream.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

t "text output of the synthetic stream" 0 "$EXP/stream.txt" "$EXP/stream.err" \
	"$LBR" -d stream.bin "${KS[@]}"
t "JSON output of the synthetic stream" 0 "$EXP/stream.jsonl" "$EXP/stream.err" \
	"$LBR" -d stream.bin "${KS[@]}" --json
check "every JSON line parses and has the documented keys" \
	python3 "$HERE/check-json.py" record out.txt

# Entries that cannot be this kernel's text (a guest's, on a KVM host
# with Arch LBR): with _etext moved down to 0xffffffff81004000, the
# entries with an address past it (kmalloc_trace's, the return thunk's)
# are marked, in text and JSON, and no other; with kallsyms of zeros,
# none.
foreign()
{
	local n

	sed 's/^ffffffff81006000 T _etext$/ffffffff81004000 T _etext/' \
		kallsyms.txt >etext.txt
	"$LBR" -d stream.bin --kallsyms etext.txt --full >foreign.txt 2>/dev/null &&
	"$LBR" -d stream.bin --kallsyms etext.txt --json >foreign.jsonl 2>/dev/null ||
		return 1
	# The text (--full: every entry) marks as many as JSON has true.
	n=$(grep -c " (not this kernel's text)$" foreign.txt)
	[ "$n" -gt 0 ] && [ "$n" = "$(grep -o '"foreign":true' foreign.jsonl | wc -l)" ] ||
		{ echo "$n marked in text"; grep -c '"foreign":true' foreign.jsonl; return 1; }
	# Each branch with an address past _etext, and only those, marked.
	python3 - foreign.jsonl <<'PY' || return 1
import json, sys
bad = 0
for line in open(sys.argv[1]):
    for b in json.loads(line)["branches"]:
        past = any(0xffffffff81004000 <= int(b[k], 16) < 0xffffffffc0000000
                   for k in ("from", "to"))
        if b["foreign"] != past:
            print("wrong foreign:", b["from"], b["to"], b["foreign"])
            bad += 1
sys.exit(1 if bad else 0)
PY
	grep -q '"foreign":true' foreign.jsonl &&
	! grep -q "not this kernel's text" "$EXP/stream.txt" &&
	! "$LBR" -d stream.bin --kallsyms restricted.txt 2>/dev/null |
		grep -q "not this kernel's text"
}
check "entries that cannot be this kernel's text are marked, text and JSON (foreign)" foreign

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
	# flushed (a CI run once failed here so).
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
