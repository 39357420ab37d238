#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare lbr-snap why's origins with the kernel tracers' (the oracle).

    check-oracle.py [--flood] LIST CPU CONSOLE RC

LIST is what `why_fail -l` prints (the plan: one test per scenario, so
that a guest that died loses none), CONSOLE what tests/why/oracle.sh
printed in a guest booted on CPU, RC run-vm.sh's exit status (the
kernel-log gate).  Prints one TAP stream: a test per scenario (why's
origin is the function the oracle found, or the function whose return
caught it), one that there are at least MIN_SCENARIOS and the guest's
output is whole, with --flood one that the flood of FLOOD failing
open()s kept 8 and accounted for the others, one that the guest exited
cleanly, then the line
"why scenarios=N origin_found=M kernel=K cpu=C" and "# Totals:".  Exits 1
when a test failed.

A scenario's failure is the why failure whose task name is its wf-NN
(why_fail sets it), errno and system call are the scenario's; the last of
them if there are several.  Function names are compared without gcc's
clone suffixes (.isra.0, .constprop.0, .part.0, .cold).
"""
import json
import re
import sys

MIN_SCENARIOS = 20


def base(name):
    """A function's name without gcc's clone suffixes."""
    return re.sub(r'\.(isra|constprop|part|cold|llvm)(\.\d+)*', '', name or '')


def parse(text):
    """The kernel, the oracle's lines and why's failures in CONSOLE."""
    kernel, probes, oracle, fails = '?', None, [], []
    flood = None
    lines = [ln.rstrip('\r') for ln in text.splitlines()]
    i = 0

    def block():
        """The lines from here to "@@END", which is passed too."""
        nonlocal i
        body = []
        while i < len(lines) and lines[i] != '@@END':
            body.append(lines[i])
            i += 1
        i += 1
        return body

    while i < len(lines):
        ln = lines[i]
        i += 1
        w = ln.split()
        if not w:
            continue
        if w[0] == '@@KERNEL' and len(w) == 2:
            kernel = w[1]
        elif w[0] == '@@PROBES':
            probes = ' '.join(w[1:])
        elif w[0] == '@@ORACLE' and len(w) == 5:
            oracle.append(dict(zip(('name', 'call', 'errno', 'func'), w[1:])))
        elif ln == '@@FLOOD':
            flood = block()
        elif ln == '@@JSON why':
            for j in block():
                j = j.strip()
                if not j:
                    continue
                try:
                    fails.append(json.loads(j))
                except ValueError:
                    fails.append({'bad': j[:80]})
    return kernel, probes, oracle, fails, flood


FLOOD = 20000


def judge_flood(flood, what):
    """A flood of FLOOD failing open()s: 8 kept, each with an origin; the
    others counted; a gap the module left said.  (ok, message, notes)"""
    if flood is None:
        return False, '%s the flood: no output (the guest died?)' % what, ()
    objs, said = [], []
    for ln in flood:
        if ln.startswith('{'):
            try:
                objs.append(json.loads(ln))
            except ValueError:
                return False, '%s the flood: a JSON line cut: %s' % (
                    what, ln[:80]), ()
        else:
            said.append(ln)
    mine = [o for o in objs if o.get('syscall') == 'openat' and
            o.get('errno') == 'ENOENT']
    unkept = 0
    for ln in said:
        m = re.match(r'lbr-snap: why: (\d+) more failures of kinds', ln)
        if m:
            unkept = int(m.group(1))
    dropped = any('dropped' in ln for ln in said)
    origins = all((o.get('origin') or {}).get('func') for o in mine)
    ok = (len(mine) == 8 and origins and
          (len(mine) + unkept == FLOOD or (dropped and
                                            len(mine) + unkept < FLOOD)))
    return (ok, '%s the flood of %d failing openat(): %d kept, each with an '
            'origin: %s; %d counted as not kept; records dropped said: %s'
            % (what, FLOOD, len(mine), origins, unkept, dropped), said)


def main():
    argv = sys.argv[1:]
    want_flood = argv[:1] == ['--flood']
    if want_flood:
        argv = argv[1:]
    if len(argv) != 4:
        print('usage: check-oracle.py [--flood] LIST CPU CONSOLE RC',
              file=sys.stderr)
        return 2
    cpu, path, rc = argv[1], argv[2], argv[3]
    with open(argv[0], encoding='utf-8') as f:
        plan = [ln.split() for ln in f if ln.strip()]
    with open(path, encoding='utf-8', errors='replace') as f:
        kernel, probes, oracle, fails, flood = parse(f.read())
    said = {s['name']: s for s in oracle}
    tests = []

    def tap(ok, msg, why=()):
        tests.append(('ok' if ok else 'not ok', msg, why))

    found = 0
    bad = [f['bad'] for f in fails if 'bad' in f]
    for n, (name, call, err) in enumerate(p[:3] for p in plan):
        what = '[%s %s] %s (%s %s)' % (cpu, kernel, name, call, err)
        s = said.get(name)
        if not s or s['call'] != call or s['errno'] != err:
            tap(False, '%s: no oracle line for it (the guest died?)' % what)
            continue
        mine = [f for f in fails
                if f.get('comm') == 'wf-%02d' % n and
                f.get('errno') == s['errno'] and f.get('syscall') == s['call']]
        if s['func'] == '-':
            tap(False, '%s: the oracle found no function returning %s'
                % (what, s['errno']))
            continue
        if not mine:
            tap(False, '%s: why recorded no such failure (the oracle: %s)'
                % (what, s['func']))
            continue
        o = mine[-1].get('origin') or {}
        names = {base(o.get('func')), base(o.get('hooked'))}
        where = '%s+0x%x' % (o.get('func'), o.get('off') or 0)
        if o.get('file'):
            where += ' (%s:%s)' % (o['file'], o.get('line'))
        if base(s['func']) in names:
            found += 1
            tap(True, '%s: origin %s, the oracle\'s %s' % (what, where,
                                                           s['func']))
        else:
            tap(False, '%s: origin %s (hooked %s), the oracle says %s'
                % (what, where, o.get('hooked'), s['func']),
                ['%d failure(s) of it; the last one\'s chain, outermost '
                 'first: %s' % (len(mine), ', '.join(
                     '%s=%s' % (c.get('func'), c.get('retval'))
                     for c in mine[-1].get('chain', [])))])
    tap(len(plan) >= MIN_SCENARIOS and len(oracle) == len(plan) and
        probes is not None and not bad,
        '[%s %s] %d scenarios (at least %d), %d oracle lines, probes: %s, '
        'every JSON line valid%s'
        % (cpu, kernel, len(plan), MIN_SCENARIOS, len(oracle), probes,
           '' if not bad else ': ' + bad[0]))
    if want_flood:
        tap(*judge_flood(flood, '[%s %s]' % (cpu, kernel)))
    tap(rc == '0', '[%s %s] the guest exited 0 (kernel log clean): %s'
        % (cpu, kernel, rc))
    print('1..%d' % len(tests))
    for k, (v, msg, why) in enumerate(tests, 1):
        print('%s %d - %s' % (v, k, msg))
        for w in why:
            print('# ' + w)
    print('why scenarios=%d origin_found=%d kernel=%s cpu=%s'
          % (len(plan), found, kernel, cpu))
    failed = sum(1 for t in tests if t[0] != 'ok')
    print('# Totals: pass:%d fail:%d skip:0' % (len(tests) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
