#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Judge a collector profile of a JVM run with no profiler flags, for
tests/integration/test_hotspot.sh.

  hotspot_check.py PROTO_DIR PROFILE PACKAGE

PROTO_DIR holds profile_pb2.py (protoc --python_out of pprof's profile.proto);
PROFILE is the collector's (gzipped) pprof file; PACKAGE the workload's Java
package ("com.example.hot"): a frame is the program's when its function
starts with PACKAGE + ".".

Prints "key value" lines the test reads:
  samples N           the profile's samples (of every thread: the JVM's own too)
  program N           samples with a frame of the program
  program_leaf N      samples whose user leaf is a method of the program
  perf_map_names N    samples with a frame of the program named as HotSpot's perf
                      maps name it ("long com.example.hot.Hot.alphaMix(long)"):
                      where the JVM's tables name the code, they must win
  jit_complete N      samples whose user stack is a single frame of JIT code
                      (anonymous or no mapping) with no marker: counted whole
                      while nothing past the JIT frame was unwound
  jit_marked N        samples with a JIT leaf whose stack ends in a marker
  top NAME COUNT      the five heaviest user leaves
"""
import collections
import gzip
import re
import sys

sys.path.insert(0, sys.argv[1])
import profile_pb2  # noqa: E402

KERNEL = re.compile(r"^\[(kernel\.kallsyms|[A-Za-z0-9_]+)\]$")


def main():
    path, package = sys.argv[2], sys.argv[3] + "."
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    p = profile_pb2.Profile()
    p.ParseFromString(data)
    s = p.string_table
    maps = {m.id: s[m.filename] for m in p.mapping}
    funcs = {fn.id: s[fn.name] for fn in p.function}
    locs = {}
    for loc in p.location:
        name = funcs.get(loc.line[0].function_id) if loc.line else None
        locs[loc.id] = (loc.mapping_id, maps.get(loc.mapping_id), name)
    n = program = program_leaf = perf_names = jit_complete = jit_marked = 0
    top = collections.Counter()
    for smp in p.sample:
        count = smp.value[0]
        n += count
        frames = [locs[i] for i in smp.location_id]
        user, marker = [], False
        for mid, mpath, name in frames:
            if mpath is not None and KERNEL.match(mpath):
                continue
            if not mid and name and name.startswith("["):
                # a marker, or a name of our own in brackets ("[java interpreted]")
                if name.startswith(("[unwind stopped", "[truncated", "[frame pointers")):
                    marker = True
                    continue
            user.append((mid, mpath, name))
        names = [f[2] or "" for f in user]
        if any(x.startswith(package) for x in names):
            program += count
        if any(package in x and "(" in x for x in names):
            perf_names += count
        if not user:
            continue
        mid, mpath, name = user[0]
        if name and name.startswith(package):
            program_leaf += count
        top[name or "[unknown]"] += count
        jit = not mid or mpath == "" or mpath.startswith("[anon:")
        if jit and len(user) == 1 and not marker:
            jit_complete += count
        if jit and marker:
            jit_marked += count
    print(f"samples {n}")
    print(f"program {program}")
    print(f"program_leaf {program_leaf}")
    print(f"perf_map_names {perf_names}")
    print(f"jit_complete {jit_complete}")
    print(f"jit_marked {jit_marked}")
    for name, count in top.most_common(5):
        print(f"top {name} {count}")


main()
