# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers shared by the LBR lab's Python proof scripts."""
import os
import socket
import subprocess
import sys
import time

LAB = os.path.dirname(os.path.abspath(__file__))
CPUS = [("Skylake-Client-LBR", "legacy"), ("SapphireRapids-LBR", "arch")]

# Branch kinds: arch LBR_INFO.BR_TYPE values
JCC, IND_JMP, REL_JMP, IND_CALL, REL_CALL, RET, FAR = 0, 1, 2, 3, 4, 5, 8
INFO_MISPRED = 1 << 63          # 62, 61 (TSX): always 0 in the lab
INFO_CYC_CNT_VALID = 1 << 60    # arch LBR only
INFO_BR_TYPE_SHIFT = 56         # arch LBR only


def lab_info(frm, to, kind, arch):
    """The LBR_INFO the lab records for a branch (README.md, "LBR_INFO").

    Cycle count (15:0) = ((from ^ to) >> 1) & 0xffff, or 1 when that is 0;
    MISPRED (63) for near returns and near indirect jumps and calls; no
    TSX bits; arch LBR adds CYC_CNT_VALID (60) and BR_TYPE (59:56)."""
    info = ((frm ^ to) >> 1) & 0xffff or 1
    if kind in (RET, IND_JMP, IND_CALL):
        info |= INFO_MISPRED
    if arch:
        info |= INFO_CYC_CNT_VALID | kind << INFO_BR_TYPE_SHIFT
    return info


class Tap:
    def __init__(self):
        self.n = self.passed = self.failed = self.skipped = 0

    def check(self, ok, name, diag=()):
        self.n += 1
        if ok:
            self.passed += 1
            print(f"ok {self.n} {name}")
        else:
            self.failed += 1
            print(f"not ok {self.n} {name}")
        for d in diag:
            print(f"#   {d}")
        sys.stdout.flush()

    def skip(self, name):
        self.n += 1
        self.skipped += 1
        print(f"ok {self.n} # SKIP {name}")

    def done(self):
        print(f"1..{self.n}")
        print(f"# Totals: pass:{self.passed} fail:{self.failed} "
              f"skip:{self.skipped}")
        return 1 if self.failed else 0


class Monitor:
    def __init__(self, path):
        for _ in range(100):
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.connect(path)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("no QEMU monitor")
        self.read_prompt()

    def read_prompt(self):
        buf = b""
        while not buf.endswith(b"(qemu) "):
            d = self.s.recv(4096)
            if not d:
                raise RuntimeError("monitor closed")
            buf += d
        return buf

    def cmd(self, c):
        self.s.sendall(c.encode() + b"\n")
        return self.read_prompt()

    def send(self, c):
        """A command that gets no prompt back (quit)."""
        self.s.sendall(c.encode() + b"\n")


def klog_check(tap, name, console):
    """The kernel-log gate of a lab guest, from its CONSOLE lines.

    boot/mkinitramfs.sh's /init runs tests/vm/kernel-log-gate.sh on dmesg
    after the guest script; a kernel report (or a guest that never got to
    the gate) fails this check, which shows the offending lines."""
    lines = [ln.rstrip("\r") for ln in console]
    ok = "LBRLAB-KLOG clean" in lines
    diag = []
    if not ok:
        if any(ln.startswith("LBRLAB-KLOG reports") for ln in lines):
            for ln in lines:
                if ln.startswith("LBRLAB-KLOG-REPORT "):
                    diag.append("report: " + ln.split(" ", 1)[1])
                elif ln.startswith("LBRLAB-KLOG-CONTEXT "):
                    diag.append("log: " + ln.split(" ", 1)[1])
        else:
            diag = ["the guest did not reach the kernel-log gate; its "
                    "console ends:"] + lines[-10:]
    tap.check(ok, f"{name}: guest kernel log has no WARNING/BUG/Oops/... "
              f"(tests/vm/kernel-log-gate.sh)", diag)
    return ok


def setup(tap, work, guest_script):
    """Kernel, QEMU, lbrtest and an initramfs with GUEST_SCRIPT.

    Returns (qemu, kernel, initrd) or None after a TAP skip."""
    subprocess.run([os.path.join(LAB, "deps.sh")], check=True)
    # The test guest's kernel, unpacked into the cache (never installed).
    env = dict(os.environ)
    if os.environ.get("LBR_LAB_KVER"):
        env["KVER"] = os.environ["LBR_LAB_KVER"]
    got = subprocess.run([os.path.join(LAB, "..", "vm", "guest-kernel.sh")],
                         stdout=subprocess.PIPE, text=True, env=env)
    if got.returncode != 0 or len(got.stdout.split()) != 3:
        tap.check(False, "the guest kernel (tests/vm/guest-kernel.sh)")
        return None
    kver, kernel, moddir = got.stdout.split()
    os.environ["LAB_MODDIR"] = moddir
    qemu = os.environ.get("LBR_LAB_QEMU")
    if not qemu:
        qemu = subprocess.run([os.path.join(LAB, "build.sh")], check=True,
                              stdout=subprocess.PIPE, text=True
                              ).stdout.strip().splitlines()[-1]
    lbrtest = os.path.join(work, "lbrtest")
    subprocess.run(["gcc", "-static", "-O2", "-o", lbrtest,
                    os.path.join(LAB, "guest", "lbrtest.c"),
                    os.path.join(LAB, "guest", "lbrtest-asm.S")], check=True)
    initrd = os.path.join(work, "initrd.gz")
    subprocess.run([os.path.join(LAB, "boot", "mkinitramfs.sh"), initrd, kver,
                    os.path.join(LAB, "guest", guest_script), lbrtest],
                   check=True)
    return qemu, kernel, initrd


def guest_cmd(qemu, cpu, kernel, initrd, script, *extra):
    return [os.path.join(LAB, "boot", "run-guest.sh"), qemu, cpu, kernel,
            initrd, script, *extra]
