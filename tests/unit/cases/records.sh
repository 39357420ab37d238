# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2317
# What a record says beside its branches: its notes, a nested hooked
# call's and an interrupt's entries folded into a line; then corrupt
# records, exit 6.
#
# Sourced by tests/unit/run.sh, with its helpers and inputs, in its
# order; not run alone.  (SC2317: the test functions are called
# through t() and check().)

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

	# After a good record of this header's size, 112 bytes.
	want "$mode.err" "lbr-snap: $mode.bin: corrupt record at offset 112: $why"
	t "corrupt stream ($mode): exit 6 after the good record" 6 good.txt \
		"$mode.err" "$LBR" -d "$mode.bin" "${KS[@]}"
}
corrupt small-size "size 40 is smaller than the header (88)"
corrupt bad-hdr-size "hdr_size 144 is outside 88..136"
corrupt overrun "3 entries of 24 bytes at 112 overrun size 160"
corrupt version0 "version 0"
corrupt truncated "truncated at the end of the input"
corrupt stack-overrun "a stack of 4 frames at 136 overruns size 160 (at most 64 frames)"
