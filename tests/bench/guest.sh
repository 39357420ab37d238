#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make bench` (tests/bench/bench.sh): the same failing calls
# of lbr_test_int() and do_sys_openat2() captured through each hook, and
# per function and hook one line
#   BENCH func=F hook=H records=N min=A median=B max=C no_return=R
# of the records' probe_entries (records with NO_RETURN left out of the
# figures and counted in no_return).  Then the kernel's own path, a BPF
# fexit program calling bpf_get_branch_snapshot() (lbr_snap unloaded;
# tests/bench/lbr_snap_bpf_bench.c), the same line with hook=bpf: it needs
# perf's LBR (the lab PMU) and the function's BTF (the test target module
# has none: "why=no-btf-for-function").
N=${BENCH_CALLS:-25}
modprobe lbr_snap_test_target || exit 1
# do_sys_openat2's return type from the kernel's BTF: long on 6.1, int on
# 7.2 (a %long there reads ENOENT as 4294967294, a success).
open_spec=$(lbr-snap spec do_sys_openat2) || exit 1
echo "# do_sys_openat2 from BTF: $open_spec"
for hook in kretprobe fexit; do
	modprobe lbr_snap capture=errors \
		targets=lbr_test_int%int/1@$hook,$open_spec@$hook ||
		exit 1
	i=0
	while [ $i -lt $N ]; do
		echo "int -22 1" >/dev/lbr_snap_test
		cat /lbr-bench-no-such-file 2>/dev/null
		i=$((i + 1))
	done
	lbr-snap --json --nonblock >/tmp/$hook.json || exit 1
	rmmod lbr_snap || exit 1
	for f in lbr_test_int do_sys_openat2; do
		grep "\"func\":\"$f\"" /tmp/$hook.json |
			sed 's/.*"probe_entries":\([0-9]*\),"flags":\([0-9]*\).*/\1 \2/' |
			awk -v f=$f -v h=$hook '
			# flags bit 1: LBR_SNAP_REC_NO_RETURN
			int($2 / 2) % 2 { nr++; next }
			{ v[n++] = $1 }
			END {
				for (i = 0; i < n; i++)
					for (j = i + 1; j < n; j++)
						if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
				if (!n) { print "BENCH func=" f " hook=" h " records=0"; exit }
				printf "BENCH func=%s hook=%s records=%d min=%d median=%d max=%d no_return=%d\n",
				       f, h, n, v[0], v[int(n / 2)], v[n - 1], nr
			}'
	done
done
# The entries a nested hooked call puts into an outer record:
# lbr_test_chain(1) calls lbr_test_leaf(0) once, a fixed path, and
# returns -EIO.  In chain's record, the entries from its call of the leaf
# to its own return, with the leaf not hooked ("plain"), hooked and
# letting its success go ("quiet", capture=errors), and hooked and
# captured itself ("captured", capture=all: what the capture leaves after
# its read); the differences are the hook's, per nested call:
#   NESTED mode=quiet|captured entries=E plain=P per_call=E-P records=N
# E and P the medians over the records.
nested_run() {	# $1 mode, $2 capture, $3 targets
	modprobe lbr_snap capture=$2 targets=$3 || exit 1
	i=0
	while [ $i -lt $N ]; do
		echo "chain 1 1" >/dev/lbr_snap_test
		i=$((i + 1))
	done
	lbr-snap --json --nonblock >/tmp/nested-$1.json || exit 1
	rmmod lbr_snap || exit 1
	# Entries oldest first: count from the last call into the leaf.
	grep '"func":"lbr_test_chain"' /tmp/nested-$1.json |
		awk '{
			n = split($0, e, "\\{\"from\":")
			k = 0
			for (i = 2; i <= n; i++)
				if (e[i] ~ /"from_sym":"lbr_test_chain[+"]/ &&
				    e[i] ~ /"to_sym":"(__pfx_)?lbr_test_leaf[+"]/)
					k = i
			if (k)
				print n - k
		}' | sort -n >/tmp/nested-$1.n
	echo "$(wc -l </tmp/nested-$1.n) $(sed -n "$(( ($(wc -l </tmp/nested-$1.n) + 1) / 2 ))p" /tmp/nested-$1.n)"
}
set -- $(nested_run plain errors lbr_test_chain%int/1@fexit)
plain=$2
for m in quiet:errors captured:all; do
	set -- $(nested_run ${m%%:*} ${m#*:} \
		lbr_test_chain%int/1@fexit,lbr_test_leaf%int/1@fexit)
	if [ -n "$plain" ] && [ -n "${2:-}" ]; then
		echo "NESTED mode=${m%%:*} entries=$2 plain=$plain per_call=$(($2 - plain)) records=$1"
	else
		echo "NESTED mode=${m%%:*} records=${1:-0} plain=${plain:-none}"
	fi
done

# The kernel's path, with lbr_snap gone (its perf events too).
lbr_snap_bpf_bench do_sys_openat2 "$N" openat || exit 1
lbr_snap_bpf_bench lbr_test_int "$N" testdev lbr_test_fail || exit 1
