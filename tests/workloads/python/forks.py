# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A Python process that forks workers (test_python.sh, under --children).

The parent forks 3 children, each running child_work for SECONDS, while it
runs parent_work itself; children leave with os._exit.  The forked
children keep the parent's interpreter, frames and all (no exec), with
their own thread id in the thread state.  At the end the parent writes
  pid parent <pid>
  pid child <pid>        one line per child
  func ...               codeinfo.py's lines

usage: python3 forks.py SECONDS [OUTFILE]
"""
import os
import sys
import time

import codeinfo


def burn(end):
    n = 0
    while time.monotonic() < end:
        for i in range(2000):
            n = (n * 31 + i) & 0xFFFF
    return n


def child_work(end):
    return burn(end)


def parent_work(end):
    return burn(end)


def forks_main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    end = time.monotonic() + seconds
    children = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            child_work(end)
            os._exit(0)
        children.append(pid)
    parent_work(end)
    for pid in children:
        os.waitpid(pid, 0)
    out = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout
    out.write("pid parent %d\n" % os.getpid())
    for pid in children:
        out.write("pid child %d\n" % pid)
    codeinfo.describe(__file__, out)
    out.close()


forks_main()
