#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Check a timeline the collector wrote (Chrome trace-event JSON, maybe gzipped).

  timeline_check.py FILE --pid PID --phases a,b,c [--outside NAME] [--bar 95]
                    [--span-bar B] [--min-spans N]

Checks, printing one line per finding:
  - the document: a traceEvents list of well-formed events ("X" with ts and
    dur >= 0, "M" thread_name for every thread with slices);
  - slices on each thread nest (a child ends within its parent);
  - span slices carry span_id and local_root_span_id as 16 hex digits and
    are named after their span id;
  - for PID: of its span slices not cut by the timeline's ends, >= B % show
    the phases in order inside them (stack slices named after a phase, in
    time order, consecutive repeats merged: exactly the list given);
  - phase slices are inside spans, and NAME (work done between spans) is
    not, for >= BAR % of their time.
Exit 0 when every check holds, 1 otherwise.
"""
import argparse
import gzip
import json
import re
import sys

EPS = 0.002  # us: timestamps are printed with 3 decimals


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def check_nesting(slices):
    """Violations of proper nesting among one thread's X slices."""
    bad = 0
    stack = []
    for s in sorted(slices, key=lambda s: (s["ts"], -s["dur"])):
        end = s["ts"] + s["dur"]
        while stack and stack[-1] <= s["ts"] + EPS:
            stack.pop()
        if stack and end > stack[-1] + EPS:
            bad += 1
            continue
        stack.append(end)
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--phases", required=True)
    ap.add_argument("--outside", default=None)
    ap.add_argument("--bar", type=float, default=95.0)
    ap.add_argument("--span-bar", type=float, default=None)
    # spans the timeline rebuilt from samples (their begin or end event came
    # after the timeline was cut): left out of the phase check, counted
    ap.add_argument("--skip-lost", action="store_true")
    ap.add_argument("--min-spans", type=int, default=20)
    a = ap.parse_args()
    phases = a.phases.split(",")
    failures = 0

    def verdict(ok, msg):
        nonlocal failures
        print(("ok: " if ok else "FAIL: ") + msg)
        if not ok:
            failures += 1

    doc = load(a.file)
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    verdict(isinstance(events, list) and len(events) > 0,
            "%s: a traceEvents list of %d events" % (a.file, len(events or [])))
    if not isinstance(events, list):
        return 1

    malformed = 0
    by_tid = {}
    named = set()
    for e in events:
        ph = e.get("ph")
        if ph == "M":
            if e.get("name") == "thread_name" and isinstance(e.get("args", {}).get("name"), str):
                named.add((e.get("pid"), e.get("tid")))
            continue
        if ph == "i":
            continue
        if (ph != "X" or not isinstance(e.get("ts"), (int, float))
                or not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0
                or not isinstance(e.get("name"), str) or not isinstance(e.get("pid"), int)
                or not isinstance(e.get("tid"), int)):
            malformed += 1
            continue
        by_tid.setdefault((e["pid"], e["tid"]), []).append(e)
    verdict(malformed == 0, "%d malformed events" % malformed)
    unnamed = [k for k in by_tid if k not in named]
    verdict(not unnamed, "every thread with slices has a thread_name (%d without)" % len(unnamed))
    bad_nest = sum(check_nesting(v) for v in by_tid.values())
    verdict(bad_nest == 0, "slices nest on every thread (%d violations)" % bad_nest)

    hexre = re.compile(r"^[0-9a-f]{16}$")
    bad_span = 0
    for v in by_tid.values():
        for s in v:
            if s.get("cat") != "span":
                continue
            args = s.get("args", {})
            if (not hexre.match(args.get("span_id", "")) or
                    not hexre.match(args.get("local_root_span_id", "")) or
                    s["name"] != "span " + args["span_id"]):
                bad_span += 1
    verdict(bad_span == 0, "span slices carry their ids (%d do not)" % bad_span)

    mine = {k: v for k, v in by_tid.items() if k[0] == a.pid}
    whole = ok_spans = lost_events = 0
    phase_in = phase_out = outside_in = outside_out = 0.0
    examples = []
    for (pid, tid), v in mine.items():
        spans = [s for s in v if s.get("cat") == "span"]
        stacks = [s for s in v if s.get("cat") == "stack"]
        for st in stacks:
            inside = any(sp["ts"] - EPS <= st["ts"] and
                         st["ts"] + st["dur"] <= sp["ts"] + sp["dur"] + EPS for sp in spans)
            if st["name"] in phases:
                if inside:
                    phase_in += st["dur"]
                else:
                    phase_out += st["dur"]
            elif a.outside and st["name"] == a.outside:
                if inside:
                    outside_in += st["dur"]
                else:
                    outside_out += st["dur"]
        for sp in spans:
            args = sp.get("args", {})
            if args.get("continued") or args.get("unfinished"):
                continue
            if a.skip_lost and (args.get("begin_lost") or args.get("end_lost")):
                lost_events += 1
                continue
            whole += 1
            end = sp["ts"] + sp["dur"]
            seq = []
            for st in sorted(stacks, key=lambda s: s["ts"]):
                if st["name"] not in phases:
                    continue
                if st["ts"] < sp["ts"] - EPS or st["ts"] + st["dur"] > end + EPS:
                    continue
                if not seq or seq[-1] != st["name"]:
                    seq.append(st["name"])
            if seq == phases:
                ok_spans += 1
            elif len(examples) < 3:
                examples.append("%s: %s" % (sp["name"], ",".join(seq) or "(no phase)"))
    if a.skip_lost:
        print("info: pid %d: %d spans rebuilt from samples (begin or end event late), "
              "not checked" % (a.pid, lost_events))
    verdict(whole >= a.min_spans, "pid %d: %d whole spans (want >= %d)" % (a.pid, whole, a.min_spans))
    share = 100.0 * ok_spans / whole if whole else 0.0
    span_bar = a.bar if a.span_bar is None else a.span_bar
    verdict(share >= span_bar, "pid %d: %d of %d spans (%.1f%%) show %s in order%s" % (
        a.pid, ok_spans, whole, share, " -> ".join(phases),
        "" if share >= span_bar else "; e.g. " + "; ".join(examples)))
    total = phase_in + phase_out
    share = 100.0 * phase_in / total if total else 0.0
    verdict(total > 0 and share >= a.bar,
            "pid %d: %.1f%% of phase slice time is inside spans" % (a.pid, share))
    if a.outside:
        total = outside_in + outside_out
        share = 100.0 * outside_out / total if total else 0.0
        verdict(total > 0 and share >= a.bar,
                "pid %d: %.1f%% of %s slice time is outside spans" % (a.pid, share, a.outside))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
