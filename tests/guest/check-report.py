#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check's filter of a guest's output: `lbr-snap selftest --json`
against what the suites found on that lab CPU.

    run-vm.sh ARGS... | check-report.py ARGS...

Every line goes through as it comes.  The guest scripts that run the
kselftests (tests/guest/selftests.sh, quirks.sh) end with the report on
one line, "# selftest-report rc=N {...}"; from ARGS (the guest's --cpu
and --append, as run-vm.sh got them) this filter knows what the suites
check there:
  - the backend of the CPU model (stock: none; lbr-legacy*: intel;
    lbr-arch*: arch; lbr-amd*: amd);
  - mode=perf loads with LBR where LBR_EXPECT_PERF=1, and not where the
    lab CPU has no PMU;
  - Arch LBR is read by XSAVES where LBR_EXPECT_XSAVES=1, and the
    report tests the RDMSR read too;
  - the CPUs LBR_LAB_BROKEN_CPUS names are refused, and only they;
  - on every other CPU each record carries LBR with the function's
    return newest, fexit takes no entry and a kretprobe some but not
    all (all of AMD's 16, with a return thunk; all 32 on the debug
    kernel, whose kretprobe path is instrumented), and the MSR accesses the lab's vCPU counted (MSR 0x4c4252)
    are the module's (in mode=raw: in mode=perf, perf's own come and go
    with time; counted there, not compared).
It prints a TAP stream of its own with its totals.  A script of those
two that printed no report fails.  Other scripts pass through alone.
"""
import json
import sys

REPORT = "# selftest-report rc="
SCRIPTS = ("selftests.sh", "quirks.sh")


def args_of(argv):
    cpu, append, script, kver = "stock", "", "", ""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--cpu", "--append", "--script", "--kver") and i + 1 < len(argv):
            v = argv[i + 1]
            if a == "--cpu":
                cpu = v
            elif a == "--append":
                append = v
            elif a == "--script":
                script = v
            else:
                kver = v
            i += 2
            continue
        i += 1
    env = dict(w.split("=", 1) for w in append.split() if "=" in w)
    return cpu, env, script.rsplit("/", 1)[-1], kver


def backend_of(cpu):
    model = cpu.split(",", 1)[0]
    for prefix, backend in (("lbr-legacy", "intel"), ("lbr-arch", "arch"),
                            ("lbr-amd", "amd")):
        if model.startswith(prefix):
            return backend
    return "none"


def cpu_set(s):
    out = set()
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def check(rc, rep, cpu, env):
    """(ok, name) per check."""
    want = backend_of(cpu)
    broken = cpu_set(env.get("LBR_LAB_BROKEN_CPUS", ""))
    perf = env.get("LBR_EXPECT_PERF") == "1" and want != "none"
    xsaves = env.get("LBR_EXPECT_XSAVES") == "1"
    res = []
    where = "cpu=%s" % cpu

    debug = "lbrdebug" in rep.get("kernel", "")
    verdict = "no LBR" if want == "none" else "failed" if broken else "ok"
    refused = [p for p in rep["problems"] if " refused: " in p]
    res.append((rep["verdict"] == verdict and rc == (1 if broken else 0)
                and len(refused) == len(rep["problems"]),
                "%s: verdict %s, exit %d (%s)" % (where, rep["verdict"], rc,
                                                   "; ".join(rep["problems"]) or "no problem")))
    res.append((not rep["was_loaded"], "%s: the selftest loaded the module itself" % where))
    configs = {(c["mode"], c["lbr_read"]): c for c in rep["configs"]}
    raw = configs.get(("raw", "auto"))
    res.append((raw is not None and raw["info"] is not None
                and raw["info"]["backend"] == want,
                "%s: mode=raw loads with backend %s" % (where, want)))
    p = configs.get(("perf", "auto"))
    # With LBR on some CPU: where every CPU is refused, mode=perf loads
    # with no event to create, and gives no LBR either.
    perf_loaded = p is not None and p["info"] is not None and \
        p["info"]["backend"] != "none" and \
        any(x["verdict"] != "refused" for h in p["hooks"] for x in h["cpus"])
    res.append((perf_loaded == perf,
                "%s: mode=perf %s (%s)" % (where, "loads with LBR" if perf else
                                           "gives no LBR",
                                           p and (p["error"] or p["info"]["backend"]))))
    if want == "arch":
        got = raw and raw["info"] and raw["info"]["lbr_read"] == "xsaves"
        msr = ("raw", "msr") in configs
        res.append((bool(got) == xsaves and msr == xsaves,
                    "%s: Arch LBR read by %s%s" % (where, "XSAVES" if got else "RDMSR",
                                                   ", and by RDMSR" if msr else "")))
    for (mode, read), c in sorted(configs.items()):
        info = c["info"]
        if info is None:
            continue
        name = "%s mode=%s lbr_read=%s" % (where, mode, read)
        if info["backend"] == "none":
            ok = all(x["verdict"] == "no LBR" for h in c["hooks"] for x in h["cpus"])
            res.append((ok and len(c["hooks"]) == 2,
                        "%s: every record says no LBR" % name))
            continue
        failed = cpu_set(info["cpus_failed"]["cpus"])
        res.append((failed == broken,
                    "%s: cpus refused %s, expected %s" % (name, sorted(failed) or "none",
                                                          sorted(broken) or "none")))
        for h in c["hooks"]:
            hn = "%s %s" % (name, h["hook"])
            if h["error"]:
                res.append((False, "%s: %s" % (hn, h["error"])))
                continue
            bad = []
            for x in h["cpus"]:
                if x["cpu"] in broken:
                    if x["verdict"] != "refused":
                        bad.append("cpu %d %s, not refused" % (x["cpu"], x["verdict"]))
                    continue
                if x["verdict"] != "ok" and (h["hook"] == "fexit" or
                                             x["verdict"] != "no entry left"):
                    bad.append("cpu %d %s" % (x["cpu"], x["verdict"]))
                elif h["hook"] == "fexit" and x["hook_entries"] != 0:
                    bad.append("cpu %d: fexit took %d entries" % (x["cpu"], x["hook_entries"]))
                elif h["hook"] == "kretprobe" and x["verdict"] == "no entry left":
                    # AMD's 16 entries: the kretprobe path and a
                    # return thunk take them all (SRSO); so does the
                    # debug kernel's instrumented path all 32.
                    if info["lbr_depth"] > 16 and not debug:
                        bad.append("cpu %d: kretprobe left no entry" % x["cpu"])
                elif h["hook"] == "kretprobe" and not 0 < x["hook_entries"] < info["lbr_depth"]:
                    bad.append("cpu %d: kretprobe took %d entries" % (x["cpu"], x["hook_entries"]))
            entries = sorted({x["hook_entries"] for x in h["cpus"] if x["cpu"] not in broken})
            res.append((not bad and len(h["cpus"]) >= 1,
                        "%s: records with LBR, the return newest, the hook's entries %s%s" %
                        (hn, entries, ": " + "; ".join(bad) if bad else "")))
            cost = h["cost"]
            if cost is None:
                # Timed on a CPU that is not refused: none here.
                everyone = all(x["cpu"] in broken for x in h["cpus"])
                res.append((everyone, "%s: not timed%s" %
                            (hn, ": every CPU refused" if everyone else "")))
                continue
            mod = cost["module_msr_accesses"]
            seen = (cost["recorded"]["cpu_msr_accesses"], cost["filtered"]["cpu_msr_accesses"])
            # mode=perf: perf's own accesses come and go with time.
            ok = None not in seen and (info["mode"] != "raw" or (
                abs(seen[0] - mod["recorded"]) <= 0.5 and
                abs(seen[1] - mod["filtered"]) <= 0.5))
            res.append((ok, "%s: MSR accesses the vCPU counted %s, the module's %d and %d" %
                        (hn, seen, mod["recorded"], mod["filtered"])))
    return res


def main():
    cpu, env, script, _ = args_of(sys.argv[1:])
    line = None
    for raw in sys.stdin.buffer:
        sys.stdout.buffer.write(raw)
        sys.stdout.flush()
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        if text.startswith(REPORT):
            line = text[len(REPORT):]
    if script not in SCRIPTS:
        return 0
    res = []
    if line is None:
        res.append((False, "cpu=%s: lbr-snap selftest --json printed its report" % cpu))
    else:
        rc, _, body = line.partition(" ")
        try:
            rep = json.loads(body)
            res = check(int(rc), rep, cpu, env)
        except (ValueError, KeyError, TypeError) as e:
            res.append((False, "cpu=%s: the report is not what it should be: %s" % (cpu, e)))
    print("1..%d" % len(res))
    for i, (ok, name) in enumerate(res, 1):
        print("%s %d - selftest report: %s" % ("ok" if ok else "not ok", i, name))
    npass = sum(1 for ok, _ in res if ok)
    print("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0" %
          (npass, len(res) - npass))
    return 0


if __name__ == "__main__":
    sys.exit(main())
