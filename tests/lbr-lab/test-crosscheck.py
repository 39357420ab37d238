#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Proof (b): the lab's LBR against QEMU's own trace of the same run.

The guest (guest/xcheck-tests.sh -> lbrtest xcheck) enables LBR for CPL0
only, runs a few syscalls (getppid, uname, getppid) and disables LBR
again, three times: all near branch kinds; calls and returns only (the
32 entries reach further back); far branches only (SYSCALL from user
space into the kernel, interrupts and exceptions taken in the window).  Around that window the host switches QEMU, through
its monitor, to one instruction per TB (HMP "singlestep on") and logs
"in_asm,exec,nochain,int".  From that log alone (instruction bytes, the
sequence of executed instructions, interrupt deliveries) this script
computes the taken near branches that ended in ring 0 while LBR was on,
classifies each by decoding its opcode bytes itself, and requires the
lab's LBR to be exactly the newest 32 (or all) of them, in order, with
the right from/to, and each entry's LBR_INFO to be the lab's rule
(lablib.lab_info()) applied to the trace's from/to and decoded kind:
cycle count, MISPRED, and for arch LBR CYC_CNT_VALID and BR_TYPE.  The
guest's kernel log must pass the kernel-log gate.

Usage: test-crosscheck.py   (env: LBR_LAB_QEMU, LBR_LAB_KVER, LBR_SNAP_CACHE)
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean
from lablib import (CPUS, FAR, IND_CALL, IND_JMP, JCC, REL_CALL, REL_JMP,
                    RET, Monitor, Tap, guest_cmd, klog_check, lab_info, setup)

MODES = ["all", "calls", "far"]
HF_LBR = 1 << 29                       # TB flag added by the lab patches
KIND_NAME = {JCC: "JCC", IND_JMP: "NEAR_IND_JMP", REL_JMP: "NEAR_REL_JMP",
             IND_CALL: "NEAR_IND_CALL", REL_CALL: "NEAR_REL_CALL",
             RET: "NEAR_RET", FAR: "FAR"}
MODE_KINDS = {"all": {JCC, IND_JMP, REL_JMP, IND_CALL, REL_CALL, RET},
              "calls": {IND_CALL, REL_CALL, RET},
              "far": {FAR}}
NR = 32


# --- x86-64 branch classification from instruction bytes ------------------
PREFIXES = {0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e, 0x26, 0x36, 0x64, 0x65, 0xf0}


def s8(b):
    return b - 256 if b > 127 else b


def s32(b):
    v = int.from_bytes(b, "little")
    return v - (1 << 32) if v & (1 << 31) else v


def classify(pc, code):
    """(kind, target or None, is_wrmsr) for the instruction CODE at PC.

    kind is None for instructions that are not branches."""
    i = 0
    opsize16 = False
    while i < len(code) and code[i] in PREFIXES:
        opsize16 |= code[i] == 0x66
        i += 1
    if i < len(code) and 0x40 <= code[i] <= 0x4f:       # REX
        i += 1
    if i >= len(code):
        return None, None, False
    op = code[i]
    nxt = (pc + len(code)) & (2**64 - 1)
    if 0x70 <= op <= 0x7f or 0xe0 <= op <= 0xe3:        # jcc, loop*, jrcxz
        return JCC, (nxt + s8(code[i + 1])) & (2**64 - 1), False
    if op == 0xeb:
        return REL_JMP, (nxt + s8(code[i + 1])) & (2**64 - 1), False
    if op == 0xe9:
        return REL_JMP, (nxt + s32(code[i + 1:i + 5])) & (2**64 - 1), False
    if op == 0xe8:
        return REL_CALL, (nxt + s32(code[i + 1:i + 5])) & (2**64 - 1), False
    if op in (0xc2, 0xc3):
        return RET, None, False
    if op in (0xca, 0xcb, 0xcf, 0xcc, 0xcd, 0xce, 0xf1, 0x9a, 0xea):
        return FAR, None, False
    if op == 0xff and i + 1 < len(code):
        reg = (code[i + 1] >> 3) & 7
        if reg == 2:
            return IND_CALL, None, False
        if reg == 4:
            return IND_JMP, None, False
        if reg in (3, 5):
            return FAR, None, False
        return None, None, False
    if op == 0x0f and i + 1 < len(code):
        op2 = code[i + 1]
        if 0x80 <= op2 <= 0x8f:
            return JCC, (nxt + s32(code[i + 2:i + 6])) & (2**64 - 1), False
        if op2 in (0x05, 0x07, 0x34, 0x35):             # syscall/sysret/...
            return FAR, None, False
        if op2 == 0x30:
            return None, None, True                     # wrmsr
    return None, None, False


# --- trace parsing --------------------------------------------------------
RE_TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[([0-9a-f]+)/([0-9a-f]+)/"
                      r"([0-9a-f]+)/([0-9a-f]+)\]")
RE_ADDR = re.compile(r"^0x([0-9a-f]+):")
RE_OBJD = re.compile(r"^OBJD-T: ([0-9a-f]+)")
RE_INT = re.compile(r"^\s*\d+: v=([0-9a-f]+) e=[0-9a-f]+ i=(\d) cpl=(\d) "
                    r"IP=[0-9a-f]+:([0-9a-f]+)")
# a TB logged by "exec" but left before its first instruction, because
# an exit was requested (accel/tcg/cpu-exec.c: cpu_tb_exec())
RE_STOP = re.compile(r"^Stopped execution of TB chain before 0x[0-9a-f]+ "
                     r"\[([0-9a-f]+)\]")


def parse_log(path, code, info):
    """Events ('T', pc, flags) / ('I', vector, ip, cpl) in log order.

    CODE (pc -> bytes) is filled from in_asm blocks; with one instruction
    per TB each block is one instruction.  A TB that QEMU left before its
    instruction ran (an exit request: a kick, an interrupt raised while
    masked) is logged as "Trace" then "Stopped execution ... before": it
    did not execute, so it is no event (INFO "stopped"; "stray_stops"
    counts stop lines that follow no such TB).  A branch counted from it
    would be a taken branch to itself that never was."""
    events = []
    pending = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("Trace "):
                m = RE_TRACE.match(line)
                if m:
                    events.append(("T", int(m.group(2), 16),
                                   int(m.group(3), 16)))
                continue
            if line.startswith("Stopped "):
                m = RE_STOP.match(line)
                pc = int(m.group(1), 16) if m else None
                if events and events[-1][0] == "T" and events[-1][1] == pc:
                    events.pop()
                    info["stopped"] += 1
                else:
                    info["stray_stops"] += 1
                continue
            m = RE_ADDR.match(line)
            if m:
                pending = int(m.group(1), 16)
                continue
            m = RE_OBJD.match(line)
            if m and pending is not None:
                code[pending] = bytes.fromhex(m.group(1))
                pending = None
                continue
            m = RE_INT.match(line)
            if m:
                events.append(("I", int(m.group(1), 16), int(m.group(4), 16),
                               int(m.group(3))))
    return events


def trace_branches(events, code, info):
    """Taken branches while LBR was on, and facts about the window."""
    out = []
    info.update({"lbr_tbs": 0, "unknown": 0, "ambiguous": 0,
                 "interrupts": 0, "first_after_wrmsr": None,
                 "last_is_wrmsr": None, "insns": 0})
    prev_on = False
    last_on_wrmsr = None
    for idx, ev in enumerate(events):
        if ev[0] == "I":
            # interrupt/exception delivery: a far branch from the saved IP
            # to the handler, recorded if LBR is on in the handler's TB
            hnd = next((e for e in events[idx + 1:] if e[0] == "T"), None)
            if hnd and hnd[2] & HF_LBR:
                out.append((ev[2], hnd[1], FAR, hnd[2] & 3))
                info["interrupts"] += 1
            continue
        _, pc, flags = ev
        info["insns"] += 1
        on = bool(flags & HF_LBR)
        insn = code.get(pc)
        if on and not prev_on and info["first_after_wrmsr"] is None:
            # the TB before the first LBR-on TB must be the enabling wrmsr
            prevt = [e for e in events[:idx] if e[0] == "T"]
            info["first_after_wrmsr"] = bool(
                prevt and classify(prevt[-1][1],
                                   code.get(prevt[-1][1], b""))[2])
        prev_on = on
        if not on:
            continue
        info["lbr_tbs"] += 1
        if insn is None:
            info["unknown"] += 1
            continue
        kind, target, is_wrmsr = classify(pc, insn)
        last_on_wrmsr = is_wrmsr
        if kind is None:
            continue
        # where execution continued: the next TB, or the IP saved by an
        # interrupt/exception delivered right after this instruction
        nxt = events[idx + 1] if idx + 1 < len(events) else None
        if nxt is None:
            continue
        if nxt[0] == "I":
            next_pc, cpl = nxt[2], nxt[3]
            if next_pc == pc:
                continue        # faulted, or INT n (the I event records it)
        else:
            next_pc, cpl = nxt[1], nxt[2] & 3
        fall = (pc + len(insn)) & (2**64 - 1)
        if kind == JCC:
            if target == fall:
                info["ambiguous"] += 1
            if next_pc != target:
                continue        # not taken
        out.append((pc, next_pc, kind, cpl))
    info["last_is_wrmsr"] = last_on_wrmsr
    return out


# --- running the guest ----------------------------------------------------
def run_guest(qemu, kernel, initrd, cpu, work):
    """Boot, trace each window; returns (console text, {mode: logfile})."""
    mon = os.path.join(work, "mon.sock")
    logs = {}
    cmd = guest_cmd(qemu, cpu, kernel, initrd, "xcheck-tests.sh",
                    "-monitor", f"unix:{mon},server=on,wait=off",
                    "-D", os.path.join(work, "boot.log"))
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, env=dict(os.environ,
                                                            TIMEOUT="100"))
    console = []
    m = None
    for raw in p.stdout:
        line = raw.decode(errors="replace").rstrip("\r\n")
        console.append(line)
        if line.startswith("LBRLAB-BOOTED") and m is None:
            m = Monitor(mon)
        r = re.match(r"LBRLAB-XCHECK-(READY|DONE) (\w+)", line)
        if r and m:
            mode = r.group(2)
            if r.group(1) == "READY":
                logs[mode] = os.path.join(work, f"trace-{cpu}-{mode}.log")
                m.cmd(f"logfile {logs[mode]}")
                m.cmd("singlestep on")
                m.cmd("log in_asm,exec,nochain,int")
            else:
                m.cmd("log none")
                m.cmd("singlestep off")
            p.stdin.write(b"x\n")
            p.stdin.flush()
    p.wait()
    return console, logs


def check_parser(tap, work):
    """The parser on a crafted log: a jmp QEMU stopped before, then ran.

    A "jmp ." would be a real branch to itself; this one jumps 5 bytes
    on, and its first Trace line is followed by QEMU's stop line."""
    on = f"{HF_LBR:08x}"
    log = os.path.join(work, "crafted.log")
    with open(log, "w") as f:
        f.write("0xffffffff81000000:\nOBJD-T: eb05\n\n"
                "0xffffffff81000007:\nOBJD-T: 90\n\n")
        for line in ("ffffffff81000000", "stop", "ffffffff81000000",
                     "ffffffff81000007"):
            if line == "stop":
                f.write("Stopped execution of TB chain before "
                        "0x7f0000001000 [ffffffff81000000] \n")
            else:
                f.write(f"Trace 0: 0x7f0000001000 [00000000/{line}/"
                        f"{on}/00080000] \n")
    info = {"stopped": 0, "stray_stops": 0}
    code = {}
    got = trace_branches(parse_log(log, code, info), code, info)
    want = [(0xffffffff81000000, 0xffffffff81000007, REL_JMP, 0)]
    tap.check(got == want and info["stopped"] == 1 and
              info["insns"] == 2,
              "parser: a TB that QEMU stopped before it ran is not "
              "executed (a crafted log: one jmp, stopped once, then run)",
              [f"branches {[(hex(b[0]), hex(b[1])) for b in got]}, want "
               f"{[(hex(b[0]), hex(b[1])) for b in want]}; {info}"])


def main():
    tap = Tap()
    with tempfile.TemporaryDirectory() as work:
        check_parser(tap, work)
        env = setup(tap, work, "xcheck-tests.sh")
        if env is None:
            return tap.done()
        qemu, kernel, initrd = env
        for cpu, flavour in CPUS:
            t0 = time.time()
            console, logs = run_guest(qemu, kernel, initrd, cpu, work)
            print(f"# {cpu}: guest ran in {time.time() - t0:.0f}s")
            lbr = {}
            cur = None
            for line in console:
                r = re.match(r"XCHECK (\w+) mode=(\w+) n=(\d+)", line)
                if r:
                    cur = r.group(1)
                    lbr[cur] = []
                    continue
                r = re.match(r"LBR \d+ ([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+)",
                             line)
                if r and cur:
                    lbr[cur].append(tuple(int(x, 16) for x in r.groups()))
            code = {}
            for mode in MODES:
                name = f"{cpu} ({flavour}), {mode}"
                if mode not in logs or mode not in lbr:
                    tap.check(False, f"{name}: guest window ran",
                              console[-20:])
                    continue
                check_window(tap, name, flavour, mode, logs[mode], code,
                             lbr[mode])
                os.unlink(logs[mode])
            klog_check(tap, f"{cpu} ({flavour})", console)
    return tap.done()


def check_window(tap, name, flavour, mode, log, code, got):
    size = os.path.getsize(log)
    t0 = time.time()
    info = {"stopped": 0, "stray_stops": 0}
    events = parse_log(log, code, info)
    branches = trace_branches(events, code, info)
    want = [(f, t, k) for (f, t, k, cpl) in branches
            if cpl == 0 and k in MODE_KINDS[mode]]
    nfar = sum(1 for b in want[-NR:] if b[2] == FAR)
    print(f"# {name}: trace {size >> 20} MiB, {info['insns']} instructions "
          f"({info['lbr_tbs']} with LBR on), {len(branches)} taken branches "
          f"with LBR on ({info['interrupts']} interrupts), {len(want)} "
          f"pass the filter; parsed in "
          f"{time.time() - t0:.1f}s")
    tap.check(info["lbr_tbs"] > 0 and info["unknown"] == 0 and
              info["first_after_wrmsr"] and info["last_is_wrmsr"] and
              info["stray_stops"] == 0,
              f"{name}: trace window is delimited by the enabling and "
              f"disabling WRMSR, every instruction's bytes known, every "
              f"TB QEMU stopped before running it is the one just logged",
              [f"{info}"])
    exp = want[-NR:]
    diag = []
    if got != [] and [g[:2] for g in got] != [e[:2] for e in exp]:
        # where they part: the newest entries both have, the oldest
        same = [g[:2] == e[:2] for g, e in zip(got[::-1], exp[::-1])]
        newest = same.index(False) if False in same else len(same)
        same = [g[:2] == e[:2] for g, e in zip(got, exp)]
        oldest = same.index(False) if False in same else len(same)
        diag.append(f"the newest {newest} and the oldest {oldest} agree; "
                    f"{info['stopped']} TBs stopped before they ran")
    ok = len(got) == len(exp) and len(got) > 0
    for i in range(max(len(got), len(exp))):
        g = got[i] if i < len(got) else None
        e = exp[i] if i < len(exp) else None
        same = g and e and g[0] == e[0] and g[1] == e[1]
        if not same:
            ok = False
        if not same or i < 3 or i >= max(len(got), len(exp)) - 2:
            diag.append(
                f"{i:2d} LBR {g[0]:016x}->{g[1]:016x} " if g else
                f"{i:2d} LBR (none)                           ")
            diag[-1] += (f"trace {e[0]:016x}->{e[1]:016x} {KIND_NAME[e[2]]}"
                         if e else "trace (none)")
            if not same:
                diag[-1] += "  <-- MISMATCH"
    tap.check(ok, f"{name}: LBR ({len(got)} entries) == the newest "
              f"{len(exp)} of {len(want)} taken ring-0 branches in QEMU's "
              f"trace, in order, none missing"
              + (f" ({nfar} far)" if mode == "far" else ""), diag)
    arch = flavour == "arch"
    bad = [i for i in range(min(len(got), len(exp)))
           if got[i][2] != lab_info(exp[i][0], exp[i][1], exp[i][2], arch)]
    tap.check(not bad and ok, f"{name}: LBR_INFO of every entry is the "
              f"lab's rule for the trace's from/to and decoded opcode class "
              f"(cycle count, MISPRED"
              + (", CYC_CNT_VALID, BR_TYPE)" if arch else ", no TSX)"),
              [f"entry {i}: info {got[i][2]:016x}, want "
               f"{lab_info(exp[i][0], exp[i][1], exp[i][2], arch):016x} "
               f"({KIND_NAME[exp[i][2]]})" for i in bad[:5]])
    if info["ambiguous"]:
        print(f"# {name}: {info['ambiguous']} jcc to the next instruction "
              "(taken/not taken indistinguishable in the trace)")


if __name__ == "__main__":
    sys.exit(main())
