#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Check the waits of a timeline the collector wrote with --off-cpu.

  offcpu_timeline_check.py FILE --pid PID --tid TID
        --kind PREFIX:CLASS:WAIT_FUNCTION[:PPROF_NS] ... --outside FUNCTION:CLASS
        [--bar 95] [--min-waits N]

PREFIX is the first two hex digits of a kind's span ids, CLASS the class its
waits must have ("waiting: CLASS"), WAIT_FUNCTION the application function it
blocks in, PPROF_NS the off-CPU nanoseconds the pprof profile of the same
run gave that kind (the timeline draws the same waits: they must add up to
it).  --outside: the function the thread waits in between spans, and its
class.  Checks, one line each:
  - the document (timeline_check.load) and nesting on every thread;
  - thread TID of PID has thread_sort_index 0 and its process
    process_sort_index 0; PID's threads without spans have 1;
  - TID has >= N wait slices; each has class and state args and its stack
    (cat off_cpu_stack slices that start with it, inside it);
  - per kind, of the time of waits inside its spans: >= BAR % with CLASS
    and WAIT_FUNCTION in their stack; the total within 2 % of PPROF_NS;
  - waits in the --outside function: >= BAR % of their time outside spans,
    with their class; no wait outside a span for the kinds' functions;
  - whole spans of each kind (not cut by the timeline's ends): >= BAR % of
    them have >= 90 % of their length drawn as CPU samples or waits.
Exit 0 when every check holds, 1 otherwise.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timeline_check import EPS, check_nesting, load  # noqa: E402


def inside(x, sp):
    return sp["ts"] - EPS <= x["ts"] and x["ts"] + x["dur"] <= sp["ts"] + sp["dur"] + EPS


def union(intervals):
    total, cur = 0.0, None
    for a, b in sorted(intervals):
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
            continue
        if cur:
            total += cur[1] - cur[0]
        cur = [a, b]
    return total + (cur[1] - cur[0] if cur else 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--tid", type=int, required=True)
    ap.add_argument("--kind", action="append", required=True)
    ap.add_argument("--outside", required=True)
    ap.add_argument("--bar", type=float, default=95.0)
    ap.add_argument("--min-waits", type=int, default=20)
    a = ap.parse_args()
    failures = 0

    def verdict(ok, msg):
        nonlocal failures
        print(("ok: " if ok else "FAIL: ") + msg)
        failures += not ok

    events = load(a.file).get("traceEvents", [])
    xs, sort_thread, sort_process = {}, {}, {}
    for e in events:
        if e.get("ph") == "X":
            xs.setdefault((e.get("pid"), e.get("tid")), []).append(e)
        elif e.get("ph") == "M" and e.get("name") == "thread_sort_index":
            sort_thread[(e.get("pid"), e.get("tid"))] = e.get("args", {}).get("sort_index")
        elif e.get("ph") == "M" and e.get("name") == "process_sort_index":
            sort_process[e.get("pid")] = e.get("args", {}).get("sort_index")
    bad = sum(check_nesting(v) for v in xs.values())
    verdict(bad == 0, "slices nest on every thread (%d violations)" % bad)

    verdict(sort_thread.get((a.pid, a.tid)) == 0 and sort_process.get(a.pid) == 0,
            "the span thread sorts first: thread_sort_index %s, process_sort_index %s" %
            (sort_thread.get((a.pid, a.tid)), sort_process.get(a.pid)))
    others = [k for k in xs if k[0] == a.pid and k != (a.pid, a.tid)
              and not any(s.get("cat") == "span" for s in xs[k])]
    wrong = [k for k in others if sort_thread.get(k) != 1]
    verdict(others and not wrong, "%d threads without spans sort after it (%d do not)" %
            (len(others), len(wrong)))

    mine = xs.get((a.pid, a.tid), [])
    spans = [s for s in mine if s.get("cat") == "span"]
    waits = [s for s in mine if s.get("cat") == "off_cpu"]
    cpu = [s for s in mine if s.get("cat") == "stack"]
    # a wait's frames start with it and end within it (each its depth in ns early)
    frames = {}
    for s in mine:
        if s.get("cat") == "off_cpu_stack":
            frames.setdefault(round(s["ts"], 3), []).append(s)
    malformed = 0
    for w in waits:
        w["stack"] = [f["name"] for f in frames.get(round(w["ts"], 3), []) if inside(f, w)]
        args = w.get("args", {})
        if (w["name"] != "waiting: %s" % args.get("class") or args.get("state") not in ("S", "D")
                or not w["stack"]):
            malformed += 1
    verdict(len(waits) >= a.min_waits and malformed == 0,
            "thread %d: %d wait slices (want >= %d), %d without class, state or stack" %
            (a.tid, len(waits), a.min_waits, malformed))

    kinds = {}
    for k in a.kind:
        parts = k.split(":")
        kinds[parts[0]] = (parts[1], parts[2], int(parts[3]) if len(parts) > 3 else None)
    out_fn, out_class = a.outside.split(":")

    def span_kind(sp):
        return sp.get("args", {}).get("span_id", "")[:2]

    for prefix, (cls, fn, pprof_ns) in sorted(kinds.items()):
        theirs = [sp for sp in spans if span_kind(sp) == prefix]
        total = good = 0.0
        for w in waits:
            if not any(inside(w, sp) for sp in theirs):
                continue
            total += w["dur"]
            if w["args"].get("class") == cls and fn in w["stack"]:
                good += w["dur"]
        share = 100.0 * good / total if total else 0.0
        verdict(total > 0 and share >= a.bar,
                "kind %s: %.1f ms of waits inside its spans, %.1f %% \"waiting: %s\" in %s" %
                (prefix, total / 1e3, share, cls, fn))
        if pprof_ns is not None:
            verdict(pprof_ns > 0 and abs(total * 1e3 - pprof_ns) <= 0.02 * pprof_ns,
                    "kind %s: the timeline's waits %.1f ms = the profile's off-CPU %.1f ms "
                    "within 2 %%" % (prefix, total / 1e3, pprof_ns / 1e6))
        stray = [w for w in waits if fn in w["stack"] and not any(inside(w, sp) for sp in spans)]
        verdict(not stray, "kind %s: no %s wait outside a span (%d)" % (prefix, fn, len(stray)))
        whole = [sp for sp in theirs
                 if not sp["args"].get("continued") and not sp["args"].get("unfinished")]
        full = 0
        for sp in whole:
            drawn = union([(x["ts"], x["ts"] + x["dur"]) for x in cpu + waits if inside(x, sp)])
            full += drawn >= 0.9 * sp["dur"]
        share = 100.0 * full / len(whole) if whole else 0.0
        verdict(whole and share >= a.bar,
                "kind %s: %d of %d whole spans (%.1f %%) are >= 90 %% CPU samples and waits" %
                (prefix, full, len(whole), share))

    total = good = 0.0
    for w in waits:
        if out_fn not in w["stack"]:
            continue
        total += w["dur"]
        if w["args"].get("class") == out_class and not any(inside(w, sp) for sp in spans):
            good += w["dur"]
    share = 100.0 * good / total if total else 0.0
    verdict(total > 0 and share >= a.bar,
            "%s: %.1f ms of waits, %.1f %% outside spans as \"waiting: %s\"" %
            (out_fn, total / 1e3, share, out_class))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
