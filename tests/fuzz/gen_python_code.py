#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""
Seeds for tests/fuzz/fuzz_python_code.c: memory images holding a CPython
3.11 code object (symbols/python_layout.c's offsets), its qualified name and
file name as str objects of each kind, and a real location table (of a
function compiled here when this is 3.11, else a fixed one).  The header is
the fuzz target's: base, code, the three type addresses, an instruction.

Usage: gen_python_code.py DIR    (writes DIR/ascii, DIR/latin1, DIR/ucs2, DIR/ucs4)
"""
import os
import struct
import sys

BASE = 0x7F0000001000
CODE_TYPE, STR_TYPE, BYTES_TYPE = 0x55550000A000, 0x55550000B000, 0x55550000C000
CODE, QUALNAME, FILENAME, LINETABLE = 0, 0x100, 0x200, 0x300
SIZE = 0x400


def linetable():
    if sys.version_info[:2] == (3, 11):
        def f(a):
            b = a + 1
            return [b
                    for _ in range(3)]
        return f.__code__.co_linetable
    return bytes.fromhex("8000d80f108871f0060009")


def put(img, off, data):
    img[off:off + len(data)] = data


def pystr(img, off, s, kind, ascii):
    state = kind << 2 | 1 << 5 | ascii << 6 | 1 << 7  # kind, compact, ascii, ready
    put(img, off + 8, struct.pack("<Q", STR_TYPE))
    put(img, off + 16, struct.pack("<qq", len(s), -1))
    put(img, off + 32, struct.pack("<I", state))
    enc = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}[kind]
    put(img, off + (48 if ascii else 72), s.encode(enc))


def image(name, kind, ascii):
    img = bytearray(SIZE)
    put(img, CODE + 8, struct.pack("<Q", CODE_TYPE))
    put(img, CODE + 72, struct.pack("<i", 42))
    put(img, CODE + 112, struct.pack("<Q", BASE + FILENAME))
    put(img, CODE + 128, struct.pack("<Q", BASE + QUALNAME))
    put(img, CODE + 136, struct.pack("<Q", BASE + LINETABLE))
    pystr(img, QUALNAME, name, kind, ascii)
    pystr(img, FILENAME, "/srv/app/" + name + ".py", kind, ascii)
    table = linetable()
    put(img, LINETABLE + 8, struct.pack("<Qq", BYTES_TYPE, len(table)))
    put(img, LINETABLE + 32, table)
    head = struct.pack("<QQQQQI", BASE, BASE + CODE, CODE_TYPE, STR_TYPE, BYTES_TYPE, 3)
    return head + bytes(img)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, s, kind, ascii in (("ascii", "Klass.method", 1, 1), ("latin1", "größe", 1, 0),
                                 ("ucs2", "数据.<lambda>", 2, 0), ("ucs4", "𐌰𐌱", 4, 0)):
        with open(os.path.join(out, name), "wb") as f:
            f.write(image(s, kind, ascii))


if __name__ == "__main__":
    main()
