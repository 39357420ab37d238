#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench-reader`: how fast tools/lbr-snap drains records, on the host,
# without the module: a storm of NRECS synthetic records (32 entries each,
# tests/unit/gen-records.c bulk) symbolized against a kallsyms of NSYMS
# symbols, the size of a distribution kernel's, read from a regular file
# and from a FIFO, text and --json, the output written to a file as in
# `lbr-snap --json > file`.  Prints one line per case
#   READER input=<file|fifo> format=<text|json> records=N seconds=S records_per_s=R
# Single-threaded; the figures are this machine's, a guest's are lower.
#
#   tests/bench/reader-host.sh [NRECS [NSYMS]]
#   LBR_SNAP=path/to/lbr-snap tests/bench/reader-host.sh   another build
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
nrecs=${1:-30000}
nsyms=${2:-150000}
lbr=${LBR_SNAP:-}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ -z "$lbr" ]; then
	make -s -C "$top/tools" >&2
	lbr=$top/tools/lbr-snap
fi
gcc -std=gnu11 -O2 -Wall -Wextra -Werror "-I$top/include" \
	-o "$out/gen-records" "$top/tests/unit/gen-records.c"
"$out/gen-records" kallsyms "$nsyms" >"$out/kallsyms"
"$out/gen-records" bulk "$nrecs" "$nsyms" >"$out/bulk.bin"

now()
{
	date +%s.%N
}

# run INPUT FORMAT: one timed read of the whole stream.
run()
{
	local input=$1 format=$2 dev=$out/bulk.bin writer='' t0 t1 n
	local -a args=(--kallsyms "$out/kallsyms")

	[ "$format" = json ] && args+=(--json)
	if [ "$input" = fifo ]; then
		rm -f "$out/fifo"
		mkfifo "$out/fifo"
		cat "$out/bulk.bin" >"$out/fifo" &
		writer=$!
		dev=$out/fifo
	fi
	t0=$(now)
	"$lbr" -d "$dev" "${args[@]}" >"$out/out"
	t1=$(now)
	[ -n "$writer" ] && wait "$writer"
	if [ "$format" = json ]; then
		n=$(wc -l <"$out/out")
	else
		n=$(grep -c '^[^ ]' "$out/out")
	fi
	[ "$n" = "$nrecs" ] || {
		echo "reader-host: $input $format: $n records out of $nrecs" >&2
		return 1
	}
	awk -v i="$input" -v f="$format" -v n="$n" -v t0="$t0" -v t1="$t1" \
		'BEGIN { s = t1 - t0; printf "READER input=%s format=%s records=%d seconds=%.3f records_per_s=%d\n", i, f, n, s, n / s }'
}

for input in file fifo; do
	for format in text json; do
		run "$input" "$format"
	done
done
