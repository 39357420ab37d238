#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Validate lbr-snap --json output: check-json.py record|info|stats|report FILE.

Every line must be a JSON object with the keys and types the tool
documents; addresses must be 16-digit hex strings.  Prints the first
problem and exits 1, or exits 0.
"""
import json
import re
import sys

HEX = re.compile(r"^0x[0-9a-f]{16}$")
INT = int
STR = str
OPT_STR = (str, type(None))

RECORD = {
    "ts": INT, "ts_sec": INT, "ts_nsec": INT, "cpu": INT, "pid": INT, "tid": INT, "comm": STR,
    "func": OPT_STR, "func_addr": HEX, "retval": (int, type(None)),
    "errno": OPT_STR, "duration_ns": (int, type(None)),
    "ret_type": ("int", "long", "ptr", "bool", "void", "unknown"),
    "probe_entries": INT, "flags": INT, "backend": STR, "target_id": INT,
    "caller": HEX, "caller_sym": OPT_STR, "stack": list, "branches": list,
}
FRAME = {
    "addr": HEX, "sym": OPT_STR, "file": OPT_STR, "line": (int, type(None)),
    "inline": list,
}
BRANCH = {
    "from": HEX, "to": HEX, "from_sym": OPT_STR, "to_sym": OPT_STR,
    "mispred": bool, "flags": INT, "cycles": INT, "type": INT,
    "type_name": ("N/A", "COND", "UNCOND", "IND", "CALL", "IND_CALL", "RET",
                  "SYSCALL", "SYSRET", "ERET", "IRQ"),
    "probe": bool, "before_target": bool, "interrupt": bool,
    "from_file": OPT_STR, "from_line": (int, type(None)),
    "to_file": OPT_STR, "to_line": (int, type(None)),
    "from_inline": list, "to_inline": list, "foreign": bool,
}
# perf's names (tools/perf/util/branch.c) of the types lbr_snap.h has;
# type 7, a far transfer, is one of these, or N/A.
TYPE_NAMES = {0: ("N/A",), 1: ("COND",), 2: ("UNCOND",), 3: ("IND",),
              4: ("CALL",), 5: ("IND_CALL",), 6: ("RET",),
              7: ("IRQ", "ERET", "SYSCALL", "SYSRET", "N/A")}
INLINE = {"func": OPT_STR, "call_file": OPT_STR, "call_line": INT}
REPORT = {
    "func": OPT_STR, "func_addr": HEX,
    "ret_type": ("int", "long", "ptr", "bool", "void", "unknown"),
    "retval": (int, type(None)), "ret": STR, "errno": OPT_STR,
    "count": INT, "nr_paths": INT,
    "paths": list,
}
PATH = {"count": INT, "ends_in": STR, "stack": list, "branches": list}
PATH_FRAME = {"addr": HEX, "sym": OPT_STR, "file": OPT_STR,
              "line": (int, type(None)), "inline": list}
PATH_BRANCH = {"from": HEX, "to": HEX, "from_sym": OPT_STR, "to_sym": OPT_STR,
               "from_file": OPT_STR, "from_line": (int, type(None)),
               "to_file": OPT_STR, "to_line": (int, type(None)),
               "from_inline": list, "to_inline": list}
INFO = {
    "abi_version": INT, "backend": STR, "lbr_format": INT, "lbr_depth": INT,
    "nr_cpus": INT, "buffer_kb": INT, "nr_targets": INT,
    "capture": ("errors", "all", "unknown"), "reason": STR, "version": STR,
    "stack_depth": INT, "lbr_read": ("msr", "xsaves", "unknown"),
    "cpu_types": list, "lbr_filter": OPT_STR, "cpus_failed": dict,
    "hypervisor": STR, "capture_msrs": INT, "filtered_msrs": INT,
    "cpus_perf_off": dict, "kvm_host": OPT_STR,
}
STATS = {"targets": list, "read": INT, "flushed": INT}
TARGET = {
    "id": INT, "name": STR, "func_addr": HEX,
    "ret_type": ("int", "long", "ptr", "bool", "void", "unknown"),
    "hits": INT,
    "captured": INT, "filtered": INT, "dropped": INT, "missed": INT,
    "hook": ("kretprobe", "fexit"), "nr_args": INT,
    "recursion": INT, "inflight": INT, "lbr_off": INT, "gone": bool,
}


def check_value(value, want):
    if isinstance(want, re.Pattern):
        return isinstance(value, str) and want.match(value)
    if isinstance(want, tuple) and isinstance(want[0], str):
        return value in want
    if want is INT:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, want)


def check_object(obj, schema, where):
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: not an object")
    for key, want in schema.items():
        if key not in obj:
            raise ValueError(f"{where}: no key {key!r}")
        if not check_value(obj[key], want):
            raise ValueError(f"{where}: bad {key!r}: {obj[key]!r}")


def check_retval(obj, where):
    """retval is null for a void function, and only for one."""
    if (obj["retval"] is None) != (obj["ret_type"] == "void"):
        raise ValueError(f"{where}: retval {obj['retval']!r} for a "
                         f"{obj['ret_type']} function")


def check_report(obj, where):
    check_object(obj, REPORT, where)
    check_retval(obj, where)
    if obj["nr_paths"] != len(obj["paths"]):
        raise ValueError(f"{where}: nr_paths is not the number of paths")
    if obj["count"] != sum(p["count"] for p in obj["paths"]):
        raise ValueError(f"{where}: count is not the sum of the paths'")
    for i, p in enumerate(obj["paths"]):
        check_object(p, PATH, f"{where}: path {i}")
        for j, fr in enumerate(p["stack"]):
            check_object(fr, PATH_FRAME, f"{where}: path {i} frame {j}")
        for j, br in enumerate(p["branches"]):
            check_object(br, PATH_BRANCH, f"{where}: path {i} branch {j}")


def check_line(kind, obj, where):
    if kind == "record":
        check_object(obj, RECORD, where)
        check_retval(obj, where)
        if obj["ts_sec"] * 10**9 + obj["ts_nsec"] != obj["ts"] or \
                obj["ts_nsec"] >= 10**9:
            raise ValueError(f"{where}: ts_sec and ts_nsec are not ts")
        if obj["stack"] and obj["stack"][0]["addr"] != obj["caller"]:
            raise ValueError(f"{where}: the stack does not start at the caller")
        for i, fr in enumerate(obj["stack"]):
            check_object(fr, FRAME, f"{where}: frame {i}")
            for j, inl in enumerate(fr["inline"]):
                check_object(inl, INLINE, f"{where}: frame {i} inline {j}")
        for i, br in enumerate(obj["branches"]):
            check_object(br, BRANCH, f"{where}: branch {i}")
            if br["type_name"] not in TYPE_NAMES.get(br["type"], ("N/A",)):
                raise ValueError(f"{where}: branch {i}: type {br['type']} "
                                 f"is not {br['type_name']}")
            for side in ("from_inline", "to_inline"):
                for j, inl in enumerate(br[side]):
                    check_object(inl, INLINE, f"{where}: branch {i} {side} {j}")
    elif kind == "info":
        check_object(obj, INFO, where)
    elif kind == "report":
        check_report(obj, where)
    else:
        check_object(obj, STATS, where)
        for i, t in enumerate(obj["targets"]):
            check_object(t, TARGET, f"{where}: target {i}")


def main():
    kind, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines.pop() != b"" or not lines:
        print(f"{path}: empty, or no newline at the end")
        return 1
    for n, raw in enumerate(lines, 1):
        where = f"{path}:{n}"
        try:
            check_line(kind, json.loads(raw.decode("utf-8")), where)
        except (ValueError, UnicodeDecodeError) as e:
            print(e if str(e).startswith(where) else f"{where}: {e}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
