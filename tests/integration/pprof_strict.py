#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Decode pprof files with a strict protobuf parser (Debian's python3-protobuf,
the C++ or upb backend, which refuses a proto3 string that is not UTF-8, as
Go's and C++'s libraries do: what Pyroscope and Parca use).

  pprof_strict.py PROTO_DIR FILE...

PROTO_DIR holds profile_pb2.py (protoc --python_out of pprof's profile.proto).
Prints, per file, "ok FILE: N samples, M strings" and then every string label
as "label KEY=VALUE" (Python escapes), or "FAIL FILE: why".
Exit 0 when every file decodes, 1 otherwise, 77 when the parser is the pure
Python one (it does not check UTF-8: the check would prove nothing).
"""
import gzip
import sys

sys.path.insert(0, sys.argv[1])
from google.protobuf.internal import api_implementation  # noqa: E402
import profile_pb2  # noqa: E402

if api_implementation.Type() == "python":
    print("SKIP the protobuf backend is pure Python: it does not check UTF-8")
    sys.exit(77)

bad = 0
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    p = profile_pb2.Profile()
    try:
        p.ParseFromString(data)
    except Exception as e:  # DecodeError, or RuntimeError from upb
        print(f"FAIL {path}: {type(e).__name__}: {e}")
        bad += 1
        continue
    print(f"ok {path}: {len(p.sample)} samples, {len(p.string_table)} strings")
    seen = set()
    for s in p.sample:
        for lab in s.label:
            if lab.str:
                kv = (p.string_table[lab.key], p.string_table[lab.str])
                if kv not in seen:
                    seen.add(kv)
                    print(f"label {ascii(kv[0])[1:-1]}={ascii(kv[1])[1:-1]}")
sys.exit(1 if bad else 0)
