#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""
Check a profile of tests/workloads/go_labels against what the program did.

usage: go_labels_check.py PPROF PROFILE BINARY [PID]

Reads `pprof -raw PROFILE` (the samples, their labels and location
addresses; only the samples of PID when given) and names every address
with `go tool addr2line BINARY` (the program's own .gopclntab: stripped
builds too; $GO_TOOL, when set, is the go command to run, e.g. a root's).  A sample with a span_id label must have on its stack the one
function that span ran in: id's last byte 2k + p -> main.work<k>_<p>; and
span_name work<k>, goroutine 2's seven more labels, never goroutine 3's
payload.  A labeled stack with no frame of main at all (its walk cut short
in the runtime, a vDSO call), or in pprof.Do outside the span's function
(setting or restoring the labels) says nothing of its span: counted apart.
Prints one line of counts (samples):
  ok bad unknown unlabeled_work between_labeled payload ok_by_goroutine(4)
"""
import os
import re
import subprocess
import sys


def raw_samples(pprof, profile):
    out = subprocess.run([pprof, "-raw", profile], check=True, capture_output=True,
                         text=True).stdout
    samples, locs = [], {}
    part = None
    for line in out.splitlines():
        if line.startswith("Samples:"):
            part = "samples"
            continue
        if line.startswith("Locations"):
            part = "locations"
            continue
        if line.startswith("Mappings"):
            part = None
            continue
        if part == "samples":
            m = re.match(r"^\s+(\d+)\s+\d+: ([\d ]+)$", line)
            if m:
                samples.append({"count": int(m.group(1)),
                                "locs": [int(x) for x in m.group(2).split()], "labels": {}})
                continue
            for k, v in re.findall(r"([\w.]+):\[([^\]]*)\]", line):
                if samples:
                    samples[-1]["labels"][k] = v
        elif part == "locations":
            m = re.match(r"^\s+(\d+): 0x([0-9a-f]+) ", line)
            if m:
                locs[int(m.group(1))] = int(m.group(2), 16)
    return samples, locs


def names(binary, addrs):
    addrs = sorted(addrs)
    text = "".join(f"0x{a:x}\n" for a in addrs)
    go = os.environ.get("GO_TOOL", "go").split()
    out = subprocess.run(go + ["tool", "addr2line", binary], input=text, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    return {a: out[2 * i] for i, a in enumerate(addrs)}


def main():
    pprof, profile, binary = sys.argv[1:4]
    pid = sys.argv[4] if len(sys.argv) > 4 else None
    samples, locs = raw_samples(pprof, profile)
    if pid:
        samples = [s for s in samples if s["labels"].get("pid") == pid]
    # the leaf at its address, callers at their call (return address - 1)
    want = set()
    for s in samples:
        for i, loc in enumerate(s["locs"]):
            want.add(locs[loc] - (i > 0))
    fn = names(binary, want)
    ok = bad = unknown = unlabeled_work = between_labeled = payload = 0
    by_goroutine = [0, 0, 0, 0]
    for s in samples:
        funcs = {fn[locs[loc] - (i > 0)] for i, loc in enumerate(s["locs"])}
        lab, n = s["labels"], s["count"]
        work = {f for f in funcs if re.fullmatch(r"main\.work\d_\d", f)}
        if "payload" in lab:
            payload += n
        span = lab.get("span_id")
        if span is None:
            if work:
                unlabeled_work += n
            continue
        if "main.between" in funcs:
            between_labeled += n
        # a walk cut short, or pprof.Do setting or restoring labels around
        # the span's function: right or wrong, the stack cannot say
        if not any(f.startswith("main.") for f in funcs) or (
                not work and "runtime/pprof.Do" in funcs):
            unknown += n
            continue
        kind = int(span[-2:], 16) if re.fullmatch(r"[0-9a-f]{16}", span) else 99
        k, p = kind // 2, kind % 2
        good = k < 4 and work == {f"main.work{k}_{p}"} and lab.get("span_name") == f"work{k}"
        if k == 2:
            good = good and all(lab.get(f"key{j}") == f"value{j}" for j in range(1, 8))
        if good:
            ok += n
            by_goroutine[k] += n
        else:
            bad += n
    print(ok, bad, unknown, unlabeled_work, between_labeled, payload, *by_goroutine)


main()
