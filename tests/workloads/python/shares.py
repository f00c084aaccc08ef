# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CPU shares the profiler must find in CPython 3.11 frames (tests/integration/test_python.sh).

Five tasks, pure-Python CPU (no sleeps), each taking a known share of the
main thread's CPU, kept by a deficit scheduler (the task furthest behind its
target runs next, a millisecond or so at a time), so any window of a second
holds the same shares as the whole run:
  nest_a         nested calls: nest_a -> nest_b -> nest_leaf
  fib            recursion
  Worker.crunch  a method
  sort_work      sorted(key=KEY): C calling back into Python, the stack
                 reads sort_work -> (sorted's C frames) -> <lambda>
  gen_work       a generator expression consumed by sum() (C again)
Each task's CPU, callees included, is measured with time.thread_time()
around its calls; at the end the script writes, for each task,
  share <qualname> <percent of the main thread's CPU>
and, for each code object of the script, what its frames must carry
(codeinfo.py):
  func <co_qualname> <co_firstlineno> <last line> <co_filename>
The module calls shares_main() -> share_loop() -> the tasks, so every
stack's Python part ends at <module>.

usage: python3 shares.py SECONDS [OUTFILE]   (OUTFILE: default stdout)
"""
import sys
import time

import codeinfo

N_SORT = 600
SORT_DATA = [(i * 7919) % 10007 for i in range(N_SORT)]


def nest_leaf(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def nest_b(n):
    return nest_leaf(n) + 1


def nest_a():
    return nest_b(1500)


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


class Worker:
    def __init__(self):
        self.acc = 0

    def crunch(self):
        acc = self.acc
        for i in range(1200):
            acc = (acc * 31 + i) & 0xFFFFFFFF
        self.acc = acc
        return acc


# at module level, so its co_qualname is "<lambda>"
KEY = lambda v: (v * 2654435761 + (v >> 3) * 40503) % 1000003  # noqa: E731


def sort_work():
    return sorted(SORT_DATA, key=KEY)[0]


def gen_work():
    return sum(x * x % 11 for x in range(1500))


def fib_task():
    return fib(13)


WORKER = Worker()
# qualname as Python names the code, callable, target share (%)
TASKS = [
    ("nest_a", nest_a, 12),
    ("fib", fib_task, 16),
    ("Worker.crunch", WORKER.crunch, 20),
    ("sort_work", sort_work, 24),
    ("gen_work", gen_work, 28),
]


CHUNK_S = 0.02


def share_loop(seconds):
    got = [0.0] * len(TASKS)
    clock = time.thread_time
    t0 = clock()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        total = clock() - t0 + 1e-9
        worst, k = None, 0
        for i, (_, _, pct) in enumerate(TASKS):
            lag = pct * total / 100.0 - got[i]
            if worst is None or lag > worst:
                worst, k = lag, i
        fn = TASKS[k][1]
        # a task runs for CHUNK_S at a time, many sampling periods: calls of
        # 50-200 us in a fixed order would alias with a 1 ms timer (a run
        # of this loop at -F 999 then -F 397 gave gen_work 34 %, then 21 %)
        s = clock()
        while True:
            fn()
            d = clock() - s
            if d >= CHUNK_S:
                break
        got[k] += d
    return got, clock() - t0


def report(out, got, total):
    for (name, _, _), t in zip(TASKS, got):
        out.write("share %s %.2f\n" % (name, 100.0 * t / total))
    codeinfo.describe(__file__, out)


def shares_main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    got, total = share_loop(seconds)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as out:
            report(out, got, total)
    else:
        report(sys.stdout, got, total)


shares_main()
