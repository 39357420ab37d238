#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check tests/COVERAGE.md against the tree.

Its table's second column names tests, each in backticks:
  fixture.test   a kselftest (TEST_F; global.test for a TEST) of tests/selftests/
  path: text     a case of a file under tests/, by words found in that file
                 or in a file it sources from its own directory (a line
                 '. "$HERE/FILE"': tests/unit/run.sh's areas, cases/*.sh)
  path           a file under tests/
  suite          a make check suite (tests/run-all.sh, ALL_SUITES)
  make target    a target of the top Makefile
Each row names one at least, and each must exist.  The third column may
name only suites and make targets.  Every TEST/TEST_F of tests/selftests/
(*.c, *.h, and those of its subdirectories: lbr_snap_test/), but
crafted_* ones (they fail on purpose), must be named in the second
column.  Prints "not ok - ..." per problem, then a "# " line of counts;
exit 1 on any problem.
Usage: coverage.py [COVERAGE.md]
"""
import glob
import os
import re
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(TESTS)
FILE = re.compile(r'\.(sh|py|c|h|md|txt)$')
# A shell script's line sourcing a file from the script's own directory.
SOURCES = re.compile(r'^\s*(?:\.|source)\s+"?\$HERE/([\w./-]+)"?', re.M)
COV = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TESTS, "COVERAGE.md")


def selftests():
    names = {}
    for f in sorted(glob.glob(os.path.join(TESTS, "selftests", "**", "*.[ch]"),
                              recursive=True)):
        for m in re.finditer(r'^\s*(TEST|TEST_F|TEST_F_TIMEOUT|TEST_SIGNAL)'
                             r'\(\s*(\w+)\s*(?:,\s*(\w+))?', open(f).read(),
                             re.M):
            name = m.group(2) + "." + m.group(3) if m.group(1) != "TEST" \
                else "global." + m.group(2)
            names[name] = os.path.relpath(f, TOP)
    return names


def suites():
    m = re.search(r'^ALL_SUITES="([^"]*)"',
                  open(os.path.join(TESTS, "run-all.sh")).read(), re.M)
    return set(m.group(1).split()) if m else set()


def make_targets():
    return set(re.findall(r'^([\w.-]+):', open(os.path.join(TOP, "Makefile")).read(),
                          re.M))


def main():
    tests, suite, targets = selftests(), suites(), make_targets()
    problems = []
    named = set()
    rows = names = 0
    file_cache = {}

    def bad(line, why):
        problems.append("%s:%d: %s" % (os.path.basename(COV), line, why))

    def read(path):
        if path not in file_cache:
            full = os.path.normpath(os.path.join(TESTS, path))
            ok = full.startswith(TESTS + os.sep) and os.path.isfile(full)
            file_cache[path] = open(full, errors="replace").read() if ok else None
        return file_cache[path]

    def sourced(path, seen):
        """The files under tests/ that script PATH sources, theirs too."""
        files = []
        if path.endswith(".sh"):
            for src in SOURCES.findall(read(path) or ""):
                src = os.path.normpath(os.path.join(os.path.dirname(path), src))
                if src not in seen:
                    seen.add(src)
                    files += [src] + sourced(src, seen)
        return files

    def check_test(n, tok):
        m = re.fullmatch(r'([\w.-]+(?:/[\w.-]+)*): (.+)', tok)
        if re.fullmatch(r'\w+\.\w+', tok) and not FILE.search(tok):
            if tok.split(".")[1].startswith("crafted_"):
                bad(n, "%s fails on purpose: not a test to list" % tok)
            elif tok not in tests:
                bad(n, "%s: no such kselftest in tests/selftests/" % tok)
            named.add(tok)
        elif m:
            text = read(m.group(1))
            if text is None:
                bad(n, "%s: no file tests/%s" % (tok, m.group(1)))
            elif m.group(2) not in text:
                more = sourced(m.group(1), {m.group(1)})
                if not any(m.group(2) in (read(f) or "") for f in more):
                    bad(n, "%s: no such case in tests/%s%s" % (tok, m.group(1),
                        " or the %d files it sources" % len(more) if more else ""))
        elif re.fullmatch(r'make [\w.-]+', tok):
            if tok[5:] not in targets:
                bad(n, "%s: no such target in the Makefile" % tok)
        elif "/" in tok or FILE.search(tok):
            if read(tok) is None:
                bad(n, "%s: no file tests/%s" % (tok, tok))
        elif tok not in suite:
            bad(n, "%s: not a test name (no such suite in run-all.sh's ALL_SUITES)" % tok)

    lines = open(COV).read().split("\n")
    in_table = False
    for n, line in enumerate(lines, 1):
        if line.startswith("## "):
            in_table = False
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "claim":
            in_table = True
            continue
        if not in_table or set(line) <= set("|-: "):
            continue
        if len(cells) != 3:
            bad(n, "a row of %d cells, not 3" % len(cells))
            continue
        if re.fullmatch(r'\*\*[^*]+\*\*', cells[0]) and not cells[1] and not cells[2]:
            continue	# an area's heading
        rows += 1
        toks = re.findall(r'`([^`]+)`', cells[1])
        if not toks:
            bad(n, "names no test: %s" % cells[0][:60])
        for tok in toks:
            names += 1
            check_test(n, tok)
        for tok in re.findall(r'`([^`]+)`', cells[2]):
            if tok not in suite and not (tok.startswith("make ") and
                                         tok[5:] in targets):
                bad(n, "%s in the runs-on column: not a make check suite" % tok)
    if not rows:
        problems.append("%s: no table of claims" % os.path.basename(COV))
    for t in sorted(tests):
        if t.split(".")[1].startswith("crafted_") or t in named:
            continue
        problems.append("%s (%s) is not in %s" % (t, tests[t], os.path.basename(COV)))
    text = "\n".join(lines)
    nt = text.split("\n## Not tested", 1)
    not_tested = len(re.findall(r'^- ', nt[1], re.M)) if len(nt) == 2 else 0
    for p in problems:
        print("not ok - " + p)
    print("# %d claims, %d test names, %d of %d kselftests, %d not-tested items"
          % (rows, names, len(named & set(tests)),
             len([t for t in tests if ".crafted_" not in t]), not_tested))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
