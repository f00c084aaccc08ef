# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Eight Python threads, each in a function of its own (test_python.sh).

Thread N runs thread_work_N for SECONDS, pure-Python CPU; each thread
states its native thread id, so a profile can be checked to show
thread_work_N on that thread and on no other (the sampler finds a thread's
frames through the thread state whose native_thread_id is the sampled tid).
At the end it writes
  tid thread_work_<N> <native thread id>      one line per thread
  func ...                                     codeinfo.py's lines

usage: python3 threads.py SECONDS [OUTFILE]
"""
import sys
import threading
import time

import codeinfo


def thread_spin(end):
    n = 0
    while time.monotonic() < end:
        for i in range(2000):
            n = (n * 33 + i) & 0xFFFF
    return n


def thread_work_0(end):
    return thread_spin(end)


def thread_work_1(end):
    return thread_spin(end)


def thread_work_2(end):
    return thread_spin(end)


def thread_work_3(end):
    return thread_spin(end)


def thread_work_4(end):
    return thread_spin(end)


def thread_work_5(end):
    return thread_spin(end)


def thread_work_6(end):
    return thread_spin(end)


def thread_work_7(end):
    return thread_spin(end)


WORK = [thread_work_0, thread_work_1, thread_work_2, thread_work_3,
        thread_work_4, thread_work_5, thread_work_6, thread_work_7]
TIDS = {}


def thread_start(fn, end):
    TIDS[fn.__name__] = threading.get_native_id()
    fn(end)


def threads_main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    end = time.monotonic() + seconds
    threads = [threading.Thread(target=thread_start, args=(fn, end)) for fn in WORK]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout
    for name, tid in sorted(TIDS.items()):
        out.write("tid %s %d\n" % (name, tid))
    codeinfo.describe(__file__, out)
    out.close()


threads_main()
