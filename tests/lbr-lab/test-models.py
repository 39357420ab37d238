#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Plain CPU models are unchanged; the lab models carry lbr-lab.

Compares QMP query-cpu-model-expansion (type full, TCG) of plain models
between Debian's own qemu-system-x86_64 (same source version, no lab
patches) and the lab build: the only difference allowed is the new,
empty "lbr-lab" property.  Also checks the lab models' lbr-lab values
and that a bad value is refused.  No guest is booted.

Usage: test-models.py   (env: LBR_LAB_QEMU, LBR_SNAP_CACHE)
"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
from lablib import LAB, Tap

DEBIAN_QEMU = "/usr/bin/qemu-system-x86_64"
PLAIN = ["qemu64", "base", "max", "Skylake-Client", "Skylake-Client-v4",
         "Skylake-Server", "Icelake-Server", "Cascadelake-Server", "EPYC"]


def expand(qemu, model):
    p = subprocess.Popen([qemu, "-machine", "none", "-accel", "tcg",
                          "-nodefaults", "-display", "none", "-qmp", "stdio"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    cmds = [{"execute": "qmp_capabilities"},
            {"execute": "query-cpu-model-expansion",
             "arguments": {"type": "full", "model": {"name": model}}},
            {"execute": "quit"}]
    out, _ = p.communicate("\n".join(json.dumps(c) for c in cmds) + "\n",
                           timeout=60)
    for line in out.splitlines():
        d = json.loads(line)
        r = d.get("return")
        if isinstance(r, dict) and "model" in r:
            return r["model"]["props"]
    return None


def main():
    tap = Tap()
    qemu = os.environ.get("LBR_LAB_QEMU")
    if not qemu:
        qemu = subprocess.run([os.path.join(LAB, "build.sh")], check=True,
                              stdout=subprocess.PIPE, text=True
                              ).stdout.strip().splitlines()[-1]
    if os.path.exists(DEBIAN_QEMU):
        ver = subprocess.run([DEBIAN_QEMU, "--version"], text=True,
                             stdout=subprocess.PIPE).stdout.splitlines()[0]
        print(f"# reference: {DEBIAN_QEMU}: {ver}")
        for m in PLAIN:
            a, b = expand(DEBIAN_QEMU, m), expand(qemu, m)
            if a is None or b is None:
                tap.check(False, f"{m}: model expansion works on both")
                continue
            # The lab's two properties (patches 0001 and 0006) only.
            diff = sorted(k for k in set(a) | set(b)
                          if a.get(k) != b.get(k) and
                          k not in ("lbr-lab", "lbr-lab-pmu-version"))
            tap.check(not diff and b.get("lbr-lab") == "" and
                      b.get("lbr-lab-pmu-version") == 4,
                      f"{m}: identical to Debian's build ({len(a)} "
                      f"properties) except lbr-lab='' and "
                      f"lbr-lab-pmu-version=4",
                      [f"{k}: debian {a.get(k)!r} lab {b.get(k)!r}"
                       for k in diff[:10]])
    else:
        tap.skip(f"{DEBIAN_QEMU} (Debian's qemu-system-x86) not installed")
    for m, want in (("Skylake-Client-LBR", "legacy"),
                    ("SapphireRapids-LBR", "arch")):
        b = expand(qemu, m) or {}
        tap.check(b.get("lbr-lab") == want and b.get("vendor") ==
                  "GenuineIntel", f"{m}: lbr-lab={want}, vendor "
                  f"{b.get('vendor')}, model-id {b.get('model-id')!r}")
        # the lab PMU is opt-in: pmu stays off unless -cpu ...,pmu=on
        tap.check(b.get("pmu") is False, f"{m}: pmu={b.get('pmu')!r} by "
                  f"default (the lab PMU needs pmu=on)")
    r = subprocess.run([qemu, "-machine", "pc", "-accel", "tcg",
                        "-nodefaults", "-display", "none",
                        "-cpu", "qemu64,lbr-lab=bogus", "-S"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=30)
    tap.check(r.returncode != 0 and "lbr-lab must be" in r.stdout,
              "qemu64,lbr-lab=bogus is refused", r.stdout.splitlines()[-2:])
    # Perfmon version 3 only on the legacy model, and nothing but 3 or 4.
    for cpu in ("Skylake-Client-LBR,pmu=on,lbr-lab-pmu-version=5",
                "SapphireRapids-LBR,pmu=on,lbr-lab-pmu-version=3"):
        r = subprocess.run([qemu, "-machine", "pc", "-accel", "tcg",
                            "-nodefaults", "-display", "none",
                            "-cpu", cpu, "-S"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=30)
        tap.check(r.returncode != 0 and
                  "lbr-lab-pmu-version must be" in r.stdout,
                  f"{cpu} is refused", r.stdout.splitlines()[-2:])
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
