# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# report: text and JSON exactly, its counts equal to a recount of the
# records (print.sh's paths.jsonl), a known mix, records split across the
# reads of a pipe, -n, a path told by its call stack too.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

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
