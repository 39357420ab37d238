#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""LBR state across a migration (the three lab CPU models).

The guest (guest/migrate-test.sh -> lbrtest migrate) enables LBR for
user-space branches, takes three branches, prints LBRLAB-MIGRATE-READY
and blocks in read(0) with LBR still on.  The host then migrates the VM
to a file ("migrate exec:cat > FILE"), quits that QEMU, starts a new one
with -incoming from the file, and sends a line.  The guest takes three
more branches, disables LBR and compares the six entries exactly: the
first three prove the entries migrated, the last three that recording
stayed enabled (the per-TB HF_LBR flag is recomputed on load).  The
guest's kernel log (all of it: the destination goes on with the source's
kernel) must pass the kernel-log gate.  Then both models again with the
lab PMU (pmu=on): GP counter 3 also counts user instructions across the
migration, from 2^44, and must go on from the source's value (migration
subsection cpu/pmu_lab) rather than restart from 0.  The AMD model
(EPYC-Genoa-LBR) the same way without (cpu/amd_lbr_lab) and with its PMU
(pmu=on, PERF_CTR3, subsection cpu/amd_pmu_lab).

Usage: test-migrate.py   (env: LBR_LAB_QEMU, LBR_LAB_KVER, LBR_SNAP_CACHE)
"""
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean
from lablib import CPUS, Monitor, Tap, guest_cmd, klog_check, setup


def migrate_run(tap, qemu, kernel, initrd, cpu, work):
    tag = cpu.replace(",", "_").replace("=", "-")  # no commas in -monitor
    mon = os.path.join(work, f"mon-{tag}.sock")
    state = os.path.join(work, f"state-{tag}.bin")
    base = guest_cmd(qemu, cpu, kernel, initrd, "migrate-test.sh",
                     "-monitor", f"unix:{mon},server=on,wait=off")
    src = subprocess.Popen(base, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    console = []
    ready = False
    for raw in src.stdout:
        line = raw.decode(errors="replace").rstrip("\r\n")
        console.append(line)
        if "LBRLAB-MIGRATE-READY" in line:
            ready = True
            break
    if not ready:
        src.wait()
        tap.check(False, f"{cpu}: guest reached the migration point",
                  console[-20:])
        return
    m = Monitor(mon)
    m.cmd(f'migrate "exec:cat > {state}"')
    status = ""
    for _ in range(600):
        status = m.cmd("info migrate").decode(errors="replace")
        if "Migration status: completed" in status or "failed" in status:
            break
        time.sleep(0.1)
    ok = "Migration status: completed" in status
    m.send("quit")
    src.wait()
    tap.check(ok, f"{cpu}: migrated to a file with LBR enabled "
              f"({os.path.getsize(state) >> 10 if ok else 0} KiB)",
              [] if ok else status.splitlines()[-5:])
    if not ok:
        return
    if os.path.exists(mon):
        os.unlink(mon)
    dst = subprocess.Popen(base + ["-incoming", f"exec:cat {state}"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    # wait until the incoming migration is loaded and the VM runs again,
    # or the line would reach the serial port before its state is loaded
    m = Monitor(mon)
    for _ in range(600):
        if b"running" in m.cmd("info status"):
            break
        time.sleep(0.1)
    dst.stdin.write(b"x\n")
    dst.stdin.flush()
    out, _ = dst.communicate(timeout=120)
    lines = [ln.rstrip("\r") for ln in out.decode(errors="replace").split("\n")]
    results = [ln for ln in lines if ln.startswith(("ok - ", "not ok - "))]
    for ln in results:
        tap.check(ln.startswith("ok - "), f"{cpu}: after migration: "
                  f"{ln.split(' - ', 1)[1]}",
                  [x for x in lines if x.startswith("#")])
    if not results:
        tap.check(False, f"{cpu}: guest resumed after migration", lines[-20:])
    # the destination runs the same kernel on: its log covers the source's
    klog_check(tap, f"{cpu}: after migration", lines)


def main():
    tap = Tap()
    with tempfile.TemporaryDirectory() as work:
        env = setup(tap, work, "migrate-test.sh")
        if env is None:
            return tap.done()
        # the lab models, then with the lab PMU (cpu/pmu_lab); the AMD
        # model without (cpu/amd_lbr_lab) and with its PMU (cpu/amd_pmu_lab)
        for cpu in ([c for c, _ in CPUS] + [c + ",pmu=on" for c, _ in CPUS] +
                    ["EPYC-Genoa-LBR", "EPYC-Genoa-LBR,pmu=on"]):
            t0 = time.time()
            migrate_run(tap, *env, cpu, work)
            print(f"# {cpu}: {time.time() - t0:.0f}s")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
