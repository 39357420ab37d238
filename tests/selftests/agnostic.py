#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check lbr_test_agnostic.h against lbr_snap_test.c.

The tests are those of TEST_SOURCE and of the .c files it #includes
(lbr_snap_test/*.c), in the order it includes them.  Every test the
header lists must exist, and neither its body nor a helper it calls
(followed four calls deep) may look at the LBR: the backend, branch
entries, the control MSRs, the capture mode, the PMU.  Prints one TAP
line per listed test; exit 1 on any failure.
Usage: agnostic.py [TEST_SOURCE [HEADER]]
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "lbr_snap_test.c")
HDR = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "lbr_test_agnostic.h")

# What looking at the LBR takes, in the tests' own words.  Setting the
# LBR filter is in lbr_filter= and in the filter GET_INFO gives back; a
# SET_LBR_FILTER refused for want of privilege looks at nothing.
TOKENS = [
    "backend", "nr_entries", "br[", "lbr_lab_cpu", "find_return",
    "probe_entries", "ctl_msr", "lbr_depth", "NO_LBR", "WAS_OFF",
    "RAN_AGAIN", "NO_RETURN", "perfmon", "mode=perf", "mode=raw",
    "lbr_filter=", "lbr_cpl", "lbr_kinds", "LBR_EXPECT", "rdmsr", "wrmsr", "xsave", "lbr_info",
    "kretprobe_pinned", "return_fits", "lbr_read", "lbr_format",
]


def sources(path):
    """@path's text, then that of each .c file it includes, in order."""
    src = open(path).read()
    texts = [src]
    for m in re.finditer(r'^#include "([^"]+\.c)"', src, re.M):
        texts += sources(os.path.join(os.path.dirname(path), m.group(1)))
    return texts


def main():
    listed = re.findall(r'^\s*"(\w+)\.(\w+)",', open(HDR).read(), re.M)
    tests = {}
    funcs = {}
    # A body runs to the next test of its file, or to the file's end.
    for src in sources(SRC):
        heads = list(re.finditer(
            r'^(?:TEST_F_TIMEOUT|TEST_F)\((\w+), (\w+)', src, re.M))
        for i, m in enumerate(heads):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(src)
            tests[(m.group(1), m.group(2))] = src[m.end():end]
        for m in re.finditer(r'^static [^\n;(]*?\b(\w+)\([^;{]*?\)\n\{', src,
                             re.M | re.S):
            end = src.find("\n}\n", m.end())
            funcs[m.group(1)] = src[m.end():end]

    def looks(body, depth, seen):
        for t in TOKENS:
            if t in body:
                return t
        if depth == 4:
            return None
        for name, fbody in funcs.items():
            if name in seen or not re.search(r'\b' + name + r'\(', body):
                continue
            seen.add(name)
            hit = looks(fbody, depth + 1, seen)
            if hit:
                return name + "(): " + hit
        return None

    fails = 0
    print("1..%d" % len(listed))
    for n, (fx, name) in enumerate(listed, 1):
        body = tests.get((fx, name))
        if body is None:
            why = "no such test in %s or the files it includes" % \
                os.path.basename(SRC)
        else:
            hit = looks(body, 0, set())
            why = hit and "looks at the LBR: %s" % hit
        if why:
            fails += 1
            print("not ok %d - %s.%s listed as LBR-agnostic: %s" %
                  (n, fx, name, why))
        else:
            print("ok %d - %s.%s never looks at the LBR" % (n, fx, name))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
