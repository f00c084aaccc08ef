#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""
Seeds for tests/fuzz/fuzz_gopclntab.c: small .gopclntab sections in each
layout the collector reads (Go 1.16, 1.18, 1.20), a few hundred bytes each,
where a real one is hundreds of KiB.  Each holds four functions: main.a
(a frame, two lines, a call inlined into it, with its inlining tree and the
runtime's moduledata that says where the trees are), runtime.goexit
(TOPFRAME), runtime.mcall (SPWRITE) and main.b; two files; the pc-value
tables Go's linker writes.  The fuzz target wraps a seed in an ELF file
whose .gopclntab is at file offset 0x1000, address 0x401000, and whose
.text starts at 0x500000 (keep both sides in step).

go127 is go120's table with Go 1.27's moduledata (gofunc moved 3 words).

Usage: gen_gopclntab.py DIR    (writes DIR/go116, DIR/go118, DIR/go120, DIR/go127)
"""
import os
import struct
import sys

SECTION_VADDR = 0x401000
TEXT_START = 0x500000
MAGIC = {116: 0xFFFFFFFA, 118: 0xFFFFFFF0, 120: 0xFFFFFFF1}


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def pcvalue(entries):
    """[(value, bytes)] from value -1 at the entry, as Go encodes it."""
    out, prev = bytearray(), -1
    for value, length in entries:
        delta = value - prev
        out += uvarint((delta << 1) ^ (delta >> 31) if delta >= 0 else ((-delta) << 1) - 1)
        out += uvarint(length)
        prev = value
    return bytes(out + b"\0")


def build(version):
    # 1.27's table is 1.20's: only its moduledata differs
    md_version, version = version, min(version, 120)
    ptr = 8
    names = [b"main.a", b"runtime.goexit", b"runtime.mcall", b"main.b", b"main.inl"]
    funcnametab, name_off = bytearray(), []
    for n in names:
        name_off.append(len(funcnametab))
        funcnametab += n + b"\0"
    filetab = b"/src/a.go\0/src/inl.go\0"
    cutab = struct.pack("<2I", 0, filetab.index(b"/src/inl.go"))
    # functions: (name index, size, flag, pcsp, pcfile, pcln, inline table or None)
    funcs = [
        (0, 0x40, 0, [(0, 4), (0x18, 0x38), (0, 4)], [(0, 0x20), (1, 0x20)],
         [(10, 0x10), (11, 0x10), (3, 0x10), (12, 0x10)], [(-1, 0x20), (0, 0x10), (-1, 0x10)]),
        (1, 0x20, 1, [(0, 0x20)], [(0, 0x20)], [(20, 0x20)], None),
        (2, 0x20, 6, [(0, 0x10), (8, 0x10)], [(0, 0x20)], [(30, 0x20)], None),
        (3, 0x20, 0, [(0, 0x20)], [(0, 0x20)], [(40, 0x20)], None),
    ]
    pctab = bytearray(b"\0")  # offset 0: no table

    def add_table(entries):
        off = len(pctab)
        pctab.extend(pcvalue(entries))
        return off

    tables = []
    for f in funcs:
        t = [add_table(f[3]), add_table(f[4]), add_table(f[5])]
        t.append(add_table(f[6]) if f[6] else 0)
        tables.append(t)

    nwords = 7 if version == 116 else 8
    hdr_len = 8 + nwords * 8
    off_names = hdr_len
    off_cu = off_names + len(funcnametab)
    off_files = off_cu + len(cutab)
    off_pc = off_files + len(filetab)
    off_pcln = (off_pc + len(pctab) + 7) & ~7
    field = 8 if version == 116 else 4
    ftab_len = (2 * len(funcs) + 1) * field
    rec_size = 44 if version in (116, 120) else 40
    # records after the function table, each followed by its pcdata and funcdata
    recs, rec_offs, entry = bytearray(), [], 0
    pos = (ftab_len + 7) & ~7
    starts = []
    for i, f in enumerate(funcs):
        starts.append(entry)
        entry += f[1]
    tree_at = None
    for i, f in enumerate(funcs):
        rec_offs.append(pos + len(recs))
        inline = f[6] is not None
        npcdata, nfuncdata = (3, 4) if inline else (0, 0)
        r = bytearray()
        if version == 116:
            r += struct.pack("<Q", TEXT_START + starts[i])
        else:
            r += struct.pack("<I", starts[i])
        r += struct.pack("<iiI", name_off[f[0]], 0, 0)
        r += struct.pack("<5I", tables[i][0], tables[i][1], tables[i][2], npcdata, 0)
        if version == 120:
            r += struct.pack("<i", 1)
        r += bytes([0, f[2], 0, nfuncdata])
        assert len(r) == rec_size
        if inline:
            r += struct.pack("<3I", 0, 0, tables[i][3])
            if version == 116:
                if (SECTION_VADDR + off_pcln + rec_offs[-1] + len(r)) & 4:
                    r += b"\0" * 4
                tree_at = len(recs) + len(r) + 3 * 8
                r += struct.pack("<4Q", 0, 0, 0, 0)  # funcdata[3] patched below
            else:
                r += struct.pack("<4I", 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
        recs += r
        while len(recs) % 8:
            recs += b"\0"
    # the inlining tree, then the runtime's moduledata, after the records
    tree_off = off_pcln + pos + len(recs)
    if version == 120:
        tree = struct.pack("<B3xiii", 0, name_off[4], 0x08, 1)
    else:
        tree = struct.pack("<hBxiiii", -1, 0, 1, 5, name_off[4], 0x08)
    md_off = (tree_off + len(tree) + 7) & ~7
    # words types, etypes, rodata, gofunc (runtime/symtab.go): 1.18; 1.20
    # to 1.26; 1.27 (typedesclen, itaboffset, itabsize added)
    layout = {118: (35, 36, 37, 38), 120: (37, 38, 39, 40), 127: (37, 39, 42, 43)}
    md = [0] * 44
    md[0] = SECTION_VADDR
    md[1] = SECTION_VADDR + off_names
    md[2] = md[3] = len(funcnametab)
    md[22] = TEXT_START
    if version != 116:
        types, etypes, rodata, gofunc = layout[md_version]
        md[types] = md[etypes] = md[rodata] = SECTION_VADDR
        md[gofunc] = SECTION_VADDR + tree_off
        if md_version == 127:
            md[38] = md[40] = md[41] = 0x40  # typedesclen, itaboffset, itabsize
    if version == 116 and tree_at is not None:
        struct.pack_into("<Q", recs, tree_at, SECTION_VADDR + tree_off)
    ftab = bytearray()
    for i, f in enumerate(funcs):
        if version == 116:
            ftab += struct.pack("<QQ", TEXT_START + starts[i], rec_offs[i])
        else:
            ftab += struct.pack("<II", starts[i], rec_offs[i])
    ftab += struct.pack("<Q" if version == 116 else "<I",
                        (TEXT_START if version == 116 else 0) + entry)
    ftab += b"\0" * (pos - len(ftab))

    words = [len(funcs), 2]
    if version != 116:
        words.append(TEXT_START)
    words += [off_names, off_cu, off_files, off_pc, off_pcln]
    out = bytearray(struct.pack("<IBBBB", MAGIC[version], 0, 0, 1, ptr))
    out += struct.pack("<%dQ" % len(words), *words)
    out += funcnametab + cutab + filetab + pctab
    out += b"\0" * (off_pcln - len(out))
    out += ftab + recs
    assert len(out) == tree_off
    out += tree
    out += b"\0" * (md_off - len(out))
    if version != 116:
        out += struct.pack("<44Q", *md)
    return bytes(out)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for v in (116, 118, 120, 127):
        with open(os.path.join(sys.argv[1], "go%d" % v), "wb") as f:
            f.write(build(v))


if __name__ == "__main__":
    main()
