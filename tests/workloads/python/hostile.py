# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A CPython 3.11 process whose frames lie to a profiler (test_python.sh).

Needs the corrupt extension (corrupt.c, built into
$(OUTPUT)/workloads/python/) on PYTHONPATH.  Phases, one after the other:
  before_work      ordinary frames, whole down to <module>
  victim(MODE)     for each of corrupt.MODES: corrupt.spin() damages
                   victim's own frame (its previous pointer: garbage, a
                   loop, a fake frame, an unmapped page; its f_code: a
                   code-object look-alike of another type, a code object
                   whose names are not strings) and spins PHASE seconds;
                   the fake code objects copy planted_never_shown's, which
                   never runs: a frame named planted_* is named from a lie
  odd names        functions whose co_qualname holds control characters,
                   is 100000 characters long, or is not ASCII
  short threads    threads that live a few milliseconds each, started and
                   joined in batches: thread states freed while sampled
  after_work       ordinary frames again, once every pointer is back
At the end it writes codeinfo.py's func lines, then
  odd <kind> <ascii(qualname)[:60]>
for each odd name.

usage: [HOSTILE_GO=FILE] PYTHONPATH=... python3 hostile.py PHASE_SECONDS [OUTFILE]
(with HOSTILE_GO it starts once FILE exists)
"""
import os
import sys
import threading
import time
import types

import codeinfo
import corrupt

MODES = ["prev_garbage", "prev_self", "prev_fake", "code_fake", "code_badname",
         "prev_unmapped"]


def burn(end):
    n = 0
    while time.monotonic() < end:
        for i in range(2000):
            n = (n * 29 + i) & 0xFFFF
    return n


def planted_never_shown():
    return "never called: its code object is only copied"


def before_work(secs):
    return burn(time.monotonic() + secs)


def after_work(secs):
    return burn(time.monotonic() + secs)


def victim(mode, secs):
    # the frame spin() damages is this one
    assert corrupt.current_qualname() == "victim", corrupt.current_qualname()
    corrupt.spin(mode, secs, planted_never_shown.__code__)


def naïve_π_work(secs):
    return burn(time.monotonic() + secs)


def odd_template(secs):
    return burn(time.monotonic() + secs)


ODD = {
    "control": "ctl\x01\x1b[31m\x7fname",
    "long": "long_" + "x" * 99995,
}


def odd_names(secs):
    for kind, qualname in ODD.items():
        code = odd_template.__code__.replace(co_qualname=qualname)
        types.FunctionType(code, globals())(secs)
    naïve_π_work(secs)


def short_thread_work():
    return burn(time.monotonic() + 0.002)


def short_threads(secs):
    end = time.monotonic() + secs
    started = 0
    while time.monotonic() < end:
        batch = [threading.Thread(target=short_thread_work) for _ in range(8)]
        for t in batch:
            t.start()
        for t in batch:
            t.join()
        started += len(batch)
    return started


def wait_go():
    # $HOSTILE_GO: a file the test makes once the profiler samples (60 s at most)
    go = os.environ.get("HOSTILE_GO")
    end = time.monotonic() + 60
    while go and not os.path.exists(go) and time.monotonic() < end:
        time.sleep(0.05)


def hostile_main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    out = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout
    wait_go()
    before_work(secs)
    for mode in MODES:
        victim(mode, secs)
    odd_names(secs / 2)
    short_threads(secs)
    after_work(secs)
    codeinfo.describe(__file__, out)
    for kind, qualname in ODD.items():
        out.write("odd %s %s\n" % (kind, ascii(qualname)[:60]))
    out.close()


hostile_main()
