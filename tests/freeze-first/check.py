#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""LBR must be frozen before any control transfer of ours.

Disassembles the built modules (objdump -dr: lbr_snap.ko, which has the
kretprobe handler, and lbr_snap_fexit.ko, which has the fexit trampolines)
and fails unless
- in the kretprobe return handler (lbr_ret_handler), nothing before its
  first WRMSR transfers control, and
- in each fexit trampoline that freezes (lbr_fexit_lbr_N), there is one
  CALL of lbr_fexit_call_rest (what the traced function returns past),
  before it no transfer but CALLs of lbr_fexit_enter (the count in) and
  direct jumps forward to no further than that CALL, or the entry's
  let-go test (fexit_tramp.S: the per-CPU lbr_fexit_unfollowed compared
  with the current task's word, a JE, taken only for the task the filter
  leaves out, to exactly the count of the slot's let-go calls and a
  return), and
  between it and the next WRMSR no transfer, and a CLI with no STI or POPF
  after it: interrupts are off when LBR freezes and stay off,
- in the chain each CPU's LBR is checked with (lbr_selftest_a to _d),
  each function's first transfer is the call of the next, and _d's
  first WRMSR, of the control MSR, comes before any transfer,
- the trampolines and what they call on every call (lbr_fexit_enter,
  lbr_fexit_exit_*) hold no atomic read-modify-write (a LOCK prefix, or
  XCHG with memory, locked without one): the counts of calls in flight are
  per CPU, no cache line is shared between CPUs on the way through,
- in each such trampoline, what runs first on the traced function's
  return is PUSHF, CLI and the quiet test of the trampoline's own slot
  (LBR_RET_QUIET, src/ret_quiet.S: a fixed shape of loads from
  lbr_fexit_rets, shifts, a SUB and a CMP, then one JB): its JB is taken
  only for a value below the slot's limit, a return the slot lets go,
  and jumps past the freeze path's return to the quiet path, which is
  exactly: the per-CPU count of the slot's quiet returns, its count of
  calls out, POPF, LEAVE, the fentry call's return dropped, a return
  (tests/unit/ret_class.sh runs the same instructions on every return
  type: an error never takes the JB, and a branch not taken leaves no
  LBR entry),
with --its (every build of the module), that each return of the
trampolines and of lbr_fexit_call_rest sits at an address with bit 5 set in
a .text aligned to 64, where the ITS mitigation leaves a plain ret (one LBR
entry, not two), and, in both, that WRMSR writes the LBR control MSR: ECX was last set by a
load from a field the module stores the control MSR numbers into
(DEBUGCTL 0x1d9, ARCH_LBR_CTL 0x14ce, AMD DBG_EXTN_CFG 0xc000010f; found
by the immediate stores in the objects) or from lbr_fexit_ctl_msr
(fexit_slots.c copies the client's control MSR there), with nothing
writing ECX after it.

"Control transfer" is every instruction that can change RIP other than to
the next instruction, from the instruction set rather than from what a
compiler emits today (Intel SDM vol. 1, 7.3.8 "Control Transfer
Instructions", 7.3.8.3 software interrupts, 5.8/5.20 SYSCALL/SYSENTER,
16 TSX XBEGIN/XABORT, VMX/SVM/SGX/TDX/FRED calls and returns, UD0-UD2),
with any prefix (notrack, bnd, rep/repz, segment overrides, data16, REX...).
An instruction objdump cannot decode ("(bad)") counts as one too.

Usage: check.py OBJECT...     (prints ok/not ok lines, exit 1 on a failure)
"""
import re
import subprocess
import sys

CTL_MSRS = {0x1d9, 0x14ce, 0xc000010f}
ECX_COPIES = {("lbr_fexit_ctl_msr", 0)}

PREFIXES = {"notrack", "bnd", "rep", "repz", "repe", "repnz", "repne", "lock",
            "cs", "ds", "ss", "es", "fs", "gs", "data16", "data32", "addr16",
            "addr32", "xacquire", "xrelease", "{disp32}", "{disp8}", "{vex}",
            "{evex}", "{rex}", "{load}", "{store}"}

REX = re.compile(r"^(rex(\.[WRXB]+)?|rex64)$")

TRANSFER = re.compile(r"""^(
    j[a-z]*                      # JMP, Jcc, JCXZ/JECXZ/JRCXZ
  | l?call[a-z]* | l?ret[a-z]* | ljmp[a-z]*
  | loop[a-z]*
  | iret[a-z]* | uiret | erets | eretu
  | int[0-9]* | into | icebp | int1 | int3 | bound[a-z]*
  | syscall | sysret[a-z]* | sysenter | sysexit[a-z]*
  | xbegin | xabort
  | ud[0-2]? | \(bad\)
  | vmcall | vmmcall | vmlaunch | vmresume | vmrun | vmfunc | vmgexit
  | enclu | encls | enclv | tdcall | seamcall | seamret | seamops
)$""", re.X)

# Instructions that write ECX/RCX without naming it as their destination.
ECX_IMPLICIT = re.compile(r"^(cpuid|rdtscp|rdpid|xgetbv|rdpkru|rep[a-z]*|"
                          r"loop[a-z]*|movs[bwlq]?|stos[bwlq]?|cmps[bwlq]?|"
                          r"scas[bwlq]?|lods[bwlq]?|ins[bwl]?|outs[bwl]?|"
                          r"syscall|sysret[a-z]*|cmpxchg16b|cmpxchg8b|"
                          r"pcmpistri|pcmpestri|vpcmpistri|vpcmpestri)$")
ECX_NAMES = ("%ecx", "%rcx", "%cx", "%cl", "%ch")

INSN = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
RELOC = re.compile(r"^\s*([0-9a-f]+): (R_X86_64_\w+)\t(\S+)$")
FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")


def split_sym(s):
    m = re.match(r"^(.*?)([+-]0x[0-9a-f]+)?$", s)
    return m.group(1), int(m.group(2), 16) if m.group(2) else 0


class Insn:
    def __init__(self, addr, text):
        self.addr, self.text = addr, text.strip()
        self.reloc = None          # (symbol, addend, location)
        self.next = None           # address of the next instruction
        words = self.text.split()
        while words and (words[0] in PREFIXES or REX.match(words[0])):
            words = words[1:]
        self.mnem = words[0] if words else ""
        self.ops = " ".join(words[1:]).split("#")[0].strip()

    def target(self):
        """symbol and offset a RIP-relative operand refers to"""
        if not self.reloc or self.next is None:
            return None
        sym, addend, loc = self.reloc
        return sym, addend + (self.next - loc)

    def transfers(self):
        return bool(TRANSFER.match(self.mnem))

    def writes_ecx(self):
        if ECX_IMPLICIT.match(self.mnem):
            return True
        if re.match(r"^(xchg|xadd|cmpxchg)", self.mnem):   # both operands
            return any(r in self.ops for r in ECX_NAMES)
        dest = self.ops.rsplit(",", 1)[-1].strip() if self.ops else ""
        return dest in ECX_NAMES


def disassemble(obj):
    out = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", obj],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        m = RELOC.match(line)
        if m and cur:
            sym, addend = split_sym(m.group(3))
            cur[-1].reloc = (sym, addend, int(m.group(1), 16))
            continue
        m = INSN.match(line)
        if m:
            i = Insn(int(m.group(1), 16), m.group(2))
            if cur:
                cur[-1].next = i.addr
            cur.append(i)
    return funcs


def ctl_fields(funcs):
    """(symbol, offset) of every field an immediate control MSR is stored to"""
    fields = set(ECX_COPIES)
    for body in funcs.values():
        for i in body:
            m = re.match(r"^\$(0x[0-9a-f]+),", i.ops)
            if i.mnem.startswith("mov") and m and int(m.group(1), 16) in CTL_MSRS \
                    and "(%rip)" in i.ops and i.target():
                fields.add(i.target())
    return fields


def check(name, insns, fields):
    """insns: from where no transfer may come; returns (ok, message)"""
    for n, i in enumerate(insns):
        if i.mnem == "wrmsr":
            break
        if i.transfers():
            return False, f"{name}: '{i.text}' at {i.addr:#x} transfers control before the freeze"
    else:
        return False, f"{name}: no WRMSR"
    src = None
    for j in reversed(insns[:n]):
        if j.writes_ecx():
            src = j
            break
    if src is None:
        return False, f"{name}: ECX is not set before the WRMSR at {i.addr:#x}"
    m = re.match(r"^\$(0x[0-9a-f]+),%ecx$", src.ops)
    if src.mnem.startswith("mov") and m and int(m.group(1), 16) in CTL_MSRS:
        what = f"control MSR {m.group(1)}"
    elif src.mnem.startswith("mov") and "(%rip)" in src.ops and src.target() in fields:
        sym, off = src.target()
        what = f"{sym}+{off:#x}"
    else:
        tgt = src.target()
        return False, (f"{name}: the WRMSR at {i.addr:#x} does not write the LBR "
                       f"control MSR: ECX last set by '{src.text}'"
                       + (f" ({tgt[0]}+{tgt[1]:#x})" if tgt else ""))
    return True, f"{name}: {n} instructions, none a control transfer, before the WRMSR of {what}"


def is_call_to(i, name):
    """(In an unlinked object the call is a relocation to the symbol.)"""
    return re.match(r"^l?call", i.mnem) and (
        f"<{name}>" in i.text or (i.reloc is not None and i.reloc[0] == name))


def irqs_off(name, insns):
    """insns: from the return site to the WRMSR; returns (ok, message)"""
    off = None
    for i in insns:
        if i.mnem == "wrmsr":
            break
        if i.mnem == "cli":
            off = i
        elif i.mnem in ("sti", "popf", "popfq", "popfw") and off:
            return False, f"{name}: '{i.text}' at {i.addr:#x} turns interrupts back on before the freeze"
    if off is None:
        return False, f"{name}: no CLI before the freeze: an interrupt, or preemption to another CPU, can come between the freeze and the read"
    return True, ""


def local_forward(i, body, limit):
    """a direct JMP or Jcc to an instruction of @body after it, at or
    before address @limit"""
    if not re.match(r"^j(mp|[a-z]+)$", i.mnem) or i.mnem == "jmpq":
        return False
    m = re.match(r"^([0-9a-f]+) <", i.ops)
    if not m or i.reloc:
        return False
    dest = int(m.group(1), 16)
    return i.addr < dest <= limit and any(j.addr == dest for j in body)


QUIET_SIZE, QUIET_LIMIT, QUIET_BIAS, QUIET_SHIFT = 32, 0, 8, 16


def quiet_test(name, slot, insns, body):
    """insns: from the return site; the number of instructions of PUSHF,
    CLI and the quiet test at their start, or (None, message)"""
    def field(i, want):
        tgt = i.target()
        if not tgt or tgt[0] != "lbr_fexit_rets" or tgt[1] % QUIET_SIZE != want:
            return None
        return tgt[1] // QUIET_SIZE
    shape = [("pushf", r"^$", None), ("cli", r"^$", None),
             ("mov", r"^0x0\(%rip\),%rcx$", QUIET_SHIFT), ("mov", r"^%rax,%r10$", None),
             ("shl", r"^%cl,%r10$", None), ("sar", r"^%cl,%r10$", None),
             ("sub", r"^0x0\(%rip\),%r10$", QUIET_BIAS),
             ("cmp", r"^0x0\(%rip\),%r10$", QUIET_LIMIT)]
    if len(insns) < len(shape) + 1:
        return None, f"{name}: no quiet test after the function's return"
    for i, (mnem, ops, off) in zip(insns, shape):
        if i.mnem not in (mnem, mnem + "q") or not re.match(ops, i.ops) or \
                (off is not None and field(i, off) != slot):
            return None, (f"{name}: '{i.text}' at {i.addr:#x}: not PUSHF, CLI and the "
                          f"quiet test of slot {slot} (LBR_RET_QUIET) on the function's return")
    jb = insns[len(shape)]
    m = re.match(r"^([0-9a-f]+) <", jb.ops)
    if jb.mnem not in ("jb", "jc", "jnae") or not m or jb.reloc:
        return None, (f"{name}: '{jb.text}' at {jb.addr:#x}: the quiet test must end "
                      "in a JB, taken only below the slot's limit")
    dest = int(m.group(1), 16)
    wr = [i.addr for i in body if i.mnem == "wrmsr" and i.addr > jb.addr]
    rets = [i.addr for i in body if i.addr > (wr[0] if wr else jb.addr) and i.transfers()
            and not re.match(r"^l?call", i.mnem)]
    if not wr or not rets or dest <= rets[0]:
        return None, (f"{name}: the quiet test's JB at {jb.addr:#x} goes to {dest:#x}, "
                      "not past the freeze path's return")
    path = [i for i in body if i.addr >= dest]
    if not path or path[0].addr != dest:
        return None, f"{name}: the quiet test's JB goes to {dest:#x}, no instruction of it"
    return len(shape) + 1, quiet_path(name, slot, path)


def per_cpu(i, mnems, syms, off):
    """@i is one of @mnems on the per-CPU word of one of @syms at @off:
    %gs:sym+off, absolute up to 6.x, RIP-relative since (PER_CPU_VAR)"""
    if i.mnem not in mnems or i.reloc is None or not i.ops.startswith("%gs:"):
        return False
    where = i.target() if "(%rip)" in i.ops else i.reloc[:2]
    return where in [(sym, off) for sym in syms]


def is_return(i):
    return i.mnem in ("ret", "retq") or \
        (i.mnem == "jmp" and i.reloc is not None and i.reloc[0] == "__x86_return_thunk")


# The current task's per-CPU word: its own variable, or pcpu_hot's first
# (src/compat.h, LBR_CURRENT_TASK).
CURRENT = ("current_task", "pcpu_hot")


def entry_let_go(name, slot, body, k):
    """body[k], a transfer before the call of the function's rest: "" if
    it is the JE of the entry's let-go test (fexit_tramp.S: the per-CPU
    lbr_fexit_unfollowed loaded into a register, compared with the current
    task's word, JE), taken only for the task the filter leaves out, to a
    path that is exactly the count of the slot's let-go calls and a
    return (into the traced function: its return is then not hooked);
    else what is wrong"""
    i = body[k]
    if i.mnem not in ("je", "jz"):
        return f"{name}: '{i.text}' before the call of the function's rest"
    m = re.match(r"^([0-9a-f]+) <", i.ops)
    load, cmp = (body[k - 2], body[k - 1]) if k >= 2 else (None, None)
    reg = load.ops.rsplit(",", 1)[-1] if load else ""
    if not m or i.reloc or not load or \
            not per_cpu(load, ("mov", "movq"), ("lbr_fexit_unfollowed",), 0) or \
            not re.match(r"^%r\w+$", reg) or \
            not per_cpu(cmp, ("cmp", "cmpq"), CURRENT, 0) or \
            cmp.ops.rsplit(",", 1)[-1] != reg:
        return (f"{name}: '{i.text}' at {i.addr:#x} before the call of the function's rest, "
                "not the JE of the entry's test of lbr_fexit_unfollowed against the current task")
    dest = int(m.group(1), 16)
    path = [j for j in body if j.addr >= dest]
    if not path or path[0].addr != dest:
        return f"{name}: the entry's JE goes to {dest:#x}, no instruction of it"
    if len(path) < 2 or not per_cpu(path[0], ("incq",), ("lbr_fexit_quiet",), 8 * slot) or \
            not is_return(path[1]):
        got = "; ".join(j.text for j in path[:2])
        return (f"{name}: the entry's let-go path is '{got}', not "
                f"incq %gs:lbr_fexit_quiet+{8 * slot} and a return")
    return ""


def quiet_path(name, slot, path):
    """the quiet path, exactly: count the return, count the call out,
    restore the flags, drop the frame and the fentry call's return, return;
    "" or what is wrong"""
    want = [(lambda i: per_cpu(i, ("incq",), ("lbr_fexit_quiet",), 8 * slot),
             f"incq %gs:lbr_fexit_quiet+{8 * slot}"),
            (lambda i: per_cpu(i, ("decq",), ("lbr_fexit_calls",), 8 * slot),
             f"decq %gs:lbr_fexit_calls+{8 * slot}"),
            (lambda i: i.mnem in ("popf", "popfq"), "popf"),
            (lambda i: i.mnem in ("leave", "leaveq"), "leave"),
            (lambda i: i.mnem in ("add", "addq") and i.ops == "$0x8,%rsp", "add $0x8,%rsp"),
            (is_return, "a return")]
    for k, (ok, what) in enumerate(want):
        if k >= len(path) or not ok(path[k]):
            got = f"'{path[k].text}' at {path[k].addr:#x}" if k < len(path) else "the end"
            return f"{name}: the quiet path has {got} where {what} must be"
    return ""


def locked(i):
    """an atomic read-modify-write: LOCK-prefixed, or XCHG with memory"""
    words = i.text.split()
    prefixes = words[:words.index(i.mnem)] if i.mnem in words else []
    return "lock" in prefixes or (i.mnem.startswith("xchg") and "(" in i.ops)


def text_align(obj):
    """the .text section's alignment in @obj, or 0"""
    out = subprocess.run(["objdump", "-h", obj], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    m = re.search(r"^\s*\d+\s+\.text\s+.*\s2\*\*(\d+)\s*$", out, re.M)
    return 1 << int(m.group(1)) if m else 0


def its_returns(objs, funcs):
    """--its: every return of the trampolines and of lbr_fexit_call_rest
    at an address with bit 5 set, in a .text aligned to 64, where the
    kernel's ITS mitigation leaves a plain ret; 0 or 1"""
    names = [f for f in funcs if re.match(r"^lbr_fexit_(n?o?lbr_\d+|call_rest)$", f)]
    where = [o for o in objs if "lbr_fexit_call_rest" in disassemble(o)]
    if not names or not where:
        print("not ok - ITS placement: no trampolines or lbr_fexit_call_rest")
        return 1
    align = text_align(where[0])
    if align < 64:
        print(f"not ok - ITS placement: .text of {where[0]} aligned to {align}, not 64")
        return 1
    rets = [(f, i) for f in names for i in funcs[f]
            if i.mnem in ("ret", "retq") or
            (i.mnem == "jmp" and i.reloc is not None and
             i.reloc[0] == "__x86_return_thunk")]
    bad = [(f, i) for f, i in rets if not i.addr & 0x20]
    for f, i in bad[:5]:
        print(f"not ok - ITS placement: {f}: the return at {i.addr:#x} has bit 5 clear: its_return_thunk, an LBR entry more")
    if bad or not rets:
        return 1
    print(f"ok - ITS placement: all {len(rets)} returns of the trampolines and "
          "lbr_fexit_call_rest at bit 5, .text aligned to 64")
    return 0


def main(objs):
    its = "--its" in objs
    objs = [o for o in objs if o != "--its"]
    funcs = {}
    for obj in objs:
        funcs.update(disassemble(obj))
    fields = ctl_fields(funcs)
    obj = " ".join(objs)
    status = 0

    body = funcs.get("lbr_ret_handler")
    if not body:
        print(f"not ok - lbr_ret_handler: not found in {obj}")
        status = 1
    else:
        ok, msg = check("lbr_ret_handler", body, fields)
        print(("ok - " if ok else "not ok - ") + msg)
        status |= not ok

    # Each CPU's check (src/lbr_selftest.c): its chain's calls must be the
    # newest entries, so each of _a, _b, _c transfers first by calling the
    # next, and _d freezes before any transfer.
    chain = ["lbr_selftest_a", "lbr_selftest_b", "lbr_selftest_c",
             "lbr_selftest_d"]
    if any(f in funcs for f in chain):
        bad_chain = []
        for f, nxt in zip(chain, chain[1:]):
            first = next((i for i in funcs.get(f, []) if i.transfers()), None)
            if first is None or not is_call_to(first, nxt):
                bad_chain.append(f"{f}: first transfer "
                                 f"'{first.text if first else 'none'}', not the call of {nxt}")
        ok, msg = check("lbr_selftest_d", funcs.get("lbr_selftest_d", []), fields)
        if not ok:
            bad_chain.append(msg)
        for m in bad_chain:
            print("not ok - " + m)
        if not bad_chain:
            print("ok - the CPU check's chain: each of its functions calls the "
                  "next first, and " + msg)
        status |= bool(bad_chain)

    tramps = sorted((f for f in funcs if re.match(r"^lbr_fexit_lbr_\d+$", f)),
                    key=lambda f: int(f.rsplit("_", 1)[1]))
    bad = 0
    for t in tramps:
        body = funcs[t]
        rest = [k for k, i in enumerate(body) if is_call_to(i, "lbr_fexit_call_rest")]
        if len(rest) != 1:
            print(f"not ok - {t}: {len(rest)} calls of lbr_fexit_call_rest, not one")
            bad += 1
            continue
        # Whatever precedes that CALL but the count in, and jumps forward
        # to no further than it (the count in, or not, by the slot's
        # regs_only): any other transfer there would be a second way into
        # the rest of the function.
        # The entry's let-go test is the one way around the call: for the
        # task the filter leaves out, exactly counted and returned.
        for k, i in enumerate(body[:rest[0]]):
            if i.transfers() and not is_call_to(i, "lbr_fexit_enter") and \
                    not local_forward(i, body, body[rest[0]].addr):
                msg = entry_let_go(t, int(t.rsplit("_", 1)[1]), body, k)
                if not msg:
                    continue
                print(f"not ok - {msg}")
                bad += 1
                break
        else:
            after = body[rest[0] + 1:]
            n, msg = quiet_test(t, int(t.rsplit("_", 1)[1]), after, body)
            ok = n is not None and not msg
            if ok:
                ok, msg = check(t, after[n:], fields)
            if ok:
                ok, msg = irqs_off(t, after)
            if not ok:
                print("not ok - " + msg)
                bad += 1
    per_call = [f for f in funcs if re.match(r"^lbr_fexit_(n?o?lbr_\d+|enter|exit_n?o?lbr)$", f)]
    shared = [(f, i) for f in sorted(per_call) for i in funcs[f] if locked(i)]
    for f, i in shared:
        print(f"not ok - {f}: '{i.text}' at {i.addr:#x}: an atomic on every call, a cache line all CPUs share")
    if per_call and not shared:
        print(f"ok - fexit per-call path: {len(per_call)} functions, no atomic read-modify-write")
    elif not per_call and tramps:
        print("not ok - fexit per-call path: lbr_fexit_enter and lbr_fexit_exit_* not found")
        status = 1
    if shared:
        status = 1
    if not tramps:
        print(f"not ok - no fexit trampolines (lbr_fexit_lbr_N) in {obj}")
        status = 1
    elif bad:
        status = 1
    else:
        print(f"ok - fexit trampolines: all {len(tramps)} freeze with the control "
              "MSR before any control transfer after the traced function returns "
              "(the way in: the call of its rest, or the let-go test's JE to a count "
              "and a return) "
              "but the quiet test's JB, not taken for an error, interrupts off "
              "from the return; the quiet path counts, restores the flags and "
              "returns, nothing else")
    if its:
        status |= its_returns(objs, funcs)
    return status


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
