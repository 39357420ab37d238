#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cross-check lbr-snap report --json against the records it read.

    check-report.py RECORDS.jsonl REPORT.jsonl

RECORDS.jsonl is lbr-snap --json of the same input.  The paths are
recomputed from the records' call stacks and per-branch "probe" and
"before_target" flags and counted per (func_addr, ret_type, retval); the report must hold exactly
these groups, paths and counts, sorted by count (descending).  Prints the
first difference and exits 1, or exits 0.
"""
import collections
import json
import sys


def expected(path):
    groups = collections.OrderedDict()
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            key = (rec["func_addr"], rec["ret_type"], rec["retval"])
            branches = tuple((b["from"], b["to"]) for b in rec["branches"]
                             if not b["probe"] and not b["before_target"])
            stack = tuple(f["addr"] for f in rec["stack"])
            groups.setdefault(key, collections.Counter())[(stack, branches)] += 1
    return groups


def check(want, path):
    seen = set()
    last = None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            grp = json.loads(line)
            key = (grp["func_addr"], grp["ret_type"], grp["retval"])
            if key not in want or key in seen:
                return f"{path}:{n}: unexpected or repeated group {key}"
            seen.add(key)
            if last is not None and grp["count"] > last:
                return f"{path}:{n}: groups not sorted by count"
            last = grp["count"]
            got = collections.Counter()
            counts = []
            for p in grp["paths"]:
                br = (tuple(f["addr"] for f in p["stack"]),
                      tuple((b["from"], b["to"]) for b in p["branches"]))
                if br in got:
                    return f"{path}:{n}: path listed twice"
                got[br] = p["count"]
                counts.append(p["count"])
            if got != want[key]:
                return f"{path}:{n}: paths of {key} are {dict(got)}, not {dict(want[key])}"
            if counts != sorted(counts, reverse=True):
                return f"{path}:{n}: paths not sorted by count"
    if seen != set(want):
        return f"{path}: groups missing: {set(want) - seen}"
    return None


def main():
    err = check(expected(sys.argv[1]), sys.argv[2])
    if err:
        print(err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
