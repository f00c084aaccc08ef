# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A Python process the whole-host collector meets only after it started
(test_python.sh, --all): late_work for SECONDS, then codeinfo.py's lines.

usage: python3 late.py SECONDS [OUTFILE]
"""
import sys
import time

import codeinfo


def late_work(end):
    n = 0
    while time.monotonic() < end:
        for i in range(2000):
            n = (n * 37 + i) & 0xFFFF
    return n


late_work(time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 5.0))
with open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout as out:
    codeinfo.describe(__file__, out)
