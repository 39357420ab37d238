#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench's attach line: N functions of vmlinux (BENCH_ATTACH_N,
# 10,000 by default) attached and detached by lbr_snap in batches
# (LBR_SNAP_IOC_ADD_TARGETS) and, in the same boot, each given an empty
# BPF fexit program (tests/bench/lbr_snap_attach_bench.c), on each CPU of
# BENCH_ATTACH_CPUS (the two LBR lab CPUs by default), 6.1's kernel,
# wall-clock seconds of the guest (ratios of one boot; TCG makes both
# slower alike).  Prints per CPU
#   attach cpu=<cpu> n=N lbr_snap_s=A bpf_s=B ratio=A/B lbr_snap_detach_s=C
#          bpf_detach_s=D lbr_snap_n=X bpf_n=Y candidates=M lbr_snap_kretprobes=K
# and "goal cpu=<cpu> attach: lbr_snap_s <= bpf_s ok|FAIL"; a FAIL, or no
# line, fails the run.
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

[ -n "${LBR_PREBUILT:-}" ] || lbr_bench_setup
n=${BENCH_ATTACH_N:-10000}
cpus=${BENCH_ATTACH_CPUS:-lbr-legacy lbr-arch}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat >"$out/guest.sh" <<GUEST
#!/bin/sh
modprobe lbr_snap_test_target || exit 1
modprobe lbr_snap targets=lbr_test_leaf || exit 1
lbr_snap_attach_bench $n
rmmod lbr_snap
GUEST
status=0
for cpu in $cpus; do
	"$LBR_TOP/tests/vm/run-vm.sh" --smp 2 --cpu "$cpu" \
		--timeout "${BENCH_ATTACH_TIMEOUT:-5400}" \
		--script "$out/guest.sh" >"$out/$cpu.log" 2>&1 || true
	line=$(grep -a '^attach n=' "$out/$cpu.log" | tr -d '\r' | tail -n1) || line=
	if [ -z "$line" ]; then
		echo "attach cpu=$cpu n=$n why=no-line (see the guest's log)"
		tail -n 20 "$out/$cpu.log"
		status=1
		continue
	fi
	echo "attach cpu=$cpu ${line#attach }"
	if [[ "$line" == *why=* ]]; then
		status=1
		continue
	fi
	l=$(sed -n 's/.* lbr_snap_s=\([0-9.]*\) .*/\1/p' <<<"$line")
	b=$(sed -n 's/.* bpf_s=\([0-9.]*\) .*/\1/p' <<<"$line")
	if awk -v l="$l" -v b="$b" 'BEGIN { exit !(l <= b) }'; then
		echo "goal cpu=$cpu attach: lbr_snap_s $l <= bpf_s $b ok"
	else
		echo "goal cpu=$cpu attach: lbr_snap_s $l <= bpf_s $b FAIL"
		status=1
	fi
done
exit $status
