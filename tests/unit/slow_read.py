# SPDX-License-Identifier: GPL-2.0
"""A consumer that falls behind: read a command's output a little at a time.

Used by tests/unit/cases/burst.sh's checks of lbr-snap's stdout writer
(tools/out.c), where the writer must be behind the printer to matter.
"""
import os
import signal
import subprocess
import sys
import time

procs = []


def _hung(*_):
    for q in procs:
        q.kill()
    sys.exit("no end in 120 s: the printer and the writer wait for each other?")


def deadline(seconds=120):
    """Kill every command started here and fail after SECONDS."""
    signal.signal(signal.SIGALRM, _hung)
    signal.alarm(seconds)


def slow_read(cmd, stdin=None, stderr=None):
    """CMD's output read 997 bytes at a time, with a pause every 64 reads.

    Returns (output, exit status, the most threads CMD had while its
    output waited).  STDERR=subprocess.STDOUT reads its messages too.
    """
    p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE,
                         stderr=stderr)
    procs.append(p)
    got, n, threads = [], 0, 0
    while True:
        b = p.stdout.read1(997)
        if not b:
            break
        got.append(b)
        n += 1
        if n % 64 == 0:
            time.sleep(0.001)
            try:
                threads = max(threads, len(os.listdir(f"/proc/{p.pid}/task")))
            except OSError:
                pass
    return b"".join(got), p.wait(), threads
