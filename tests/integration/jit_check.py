#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Compare a collector profile of a JIT's process with perf's, for
tests/integration/test_jit_names.sh.

  jit_check.py PROTO_DIR PROFILE PERF_SCRIPT [TOP]

PROTO_DIR holds profile_pb2.py (protoc --python_out of pprof's profile.proto);
PROFILE is the collector's (gzipped) pprof file; PERF_SCRIPT the output of
"perf script -F comm,tid,ip,sym,dso" for the same process and time.  Names
are taken whole, as the perf map has them (they hold spaces: "JS:*f
/tmp/x.js:3:1", "long Hot.f(int)"), which pprof's text output would cut.

Prints "key value" lines the test reads:
  samples N                 the profile's samples
  user_leaf N               of them, with a user-space leaf
  anon_leaf N               of those, a leaf in anonymous code (or no mapping)
  anon_named N              of those, named
  reach_root N              samples whose stack reaches a thread's root
                            (main, start_thread, clone3, ...)
  perf_user_leaf N          perf's samples with a user-space leaf
  top_ours NAME             TOP (10) lines each: self functions by samples,
  top_perf NAME               user-space leaves only ("[unknown]": unnamed)
  agree K                   names in both tops
"""
import collections
import gzip
import re
import sys

sys.path.insert(0, sys.argv[1])
import profile_pb2  # noqa: E402

TOP = int(sys.argv[4]) if len(sys.argv) > 4 else 10
ROOTS = {"main", "__libc_start_call_main", "__libc_start_main", "start_thread", "clone3",
         "clone", "thread_native_entry", "_start"}
KERNEL = re.compile(r"^\[(kernel\.kallsyms|[A-Za-z0-9_]+)\]$")


JAVA_PERF = re.compile(r"^(?:[\w.$\[\]]+ )?([\w$]+(?:\.[\w$<>]+)+)\(.*\)$")


def norm(name):
    # glibc's symbol versions: perf shows them, the collector's .dynsym names do not always
    name = re.sub(r"@@?[A-Z][A-Za-z0-9_.]*$", "", name)
    # a JVM's perf map says "int JitHot.w7(int)"; the collector names the
    # method from the JVM's own tables first: "JitHot.w7"
    m = JAVA_PERF.match(name)
    return m.group(1) if m else name


def ours(path):
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
    n = user_leaf = anon_leaf = anon_named = reach = 0
    top = collections.Counter()
    for smp in p.sample:
        count = smp.value[0]
        n += count
        frames = [locs[i] for i in smp.location_id]
        if any(f[2] and norm(f[2]) in ROOTS for f in frames):
            reach += count
        if not frames:
            continue
        mid, mpath, name = frames[0]
        # kernel frames, and marker frames (no mapping, "[...]" names)
        if (mpath is not None and KERNEL.match(mpath)) or (
                not mid and name and name.startswith("[")):
            continue
        user_leaf += count
        if not mid or mpath == "" or mpath.startswith("[anon:"):
            anon_leaf += count
            anon_named += count if name else 0
        top[norm(name) if name else "[unknown]"] += count
    return n, user_leaf, anon_leaf, anon_named, reach, top


def perf(path):
    top = collections.Counter()
    n = 0
    leaf = None
    header = re.compile(r"^\S")
    frame = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                leaf = None
                continue
            if header.match(line):
                leaf = "start"
                continue
            if leaf != "start":
                continue
            leaf = "done"
            m = frame.match(line)
            if not m:
                continue
            ip, sym, dso = m.groups()
            if (len(ip) == 16 and ip.startswith("ffff")) or dso.startswith("[kernel"):
                continue
            n += 1
            top[norm(sym) if sym else "[unknown]"] += 1
    return n, top


def main():
    n, user_leaf, anon_leaf, anon_named, reach, top_o = ours(sys.argv[2])
    perf_n, top_p = perf(sys.argv[3])
    print(f"samples {n}")
    print(f"user_leaf {user_leaf}")
    print(f"anon_leaf {anon_leaf}")
    print(f"anon_named {anon_named}")
    print(f"reach_root {reach}")
    print(f"perf_user_leaf {perf_n}")
    a = [name for name, _ in top_o.most_common(TOP)]
    b = [name for name, _ in top_p.most_common(TOP)]
    for name, c in top_o.most_common(TOP):
        print(f"top_ours {100 * c / max(user_leaf, 1):5.1f}% {name}")
    for name, c in top_p.most_common(TOP):
        print(f"top_perf {100 * c / max(perf_n, 1):5.1f}% {name}")
    print(f"agree {len(set(a) & set(b))}")


main()
