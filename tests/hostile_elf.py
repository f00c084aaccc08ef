#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Hostile ELF files for the budget tests: small, valid-looking x86-64 files
that cost a careless reader far more than their size.

  hostile_elf.py cfi-slow OUT [--bytes N] [--reg R] [--pairs K]
      .eh_frame of N bytes (1 MiB): a CIE whose initial instructions name
      register R (1023), so that libdw's frame state is R + 1 registers, and
      FDEs whose programs are K (683) DW_CFA_remember_state /
      DW_CFA_restore_state pairs, each followed by an advance_loc: every row
      of an FDE re-runs its program from the start, copying the frame state
      twice a pair.  Well formed: every check but a CPU-time one passes.
  hostile_elf.py cfi-big OUT [--fdes N]
      a well-formed .eh_frame of N (3.9M) small FDEs, 24 bytes each (N = 3.9M:
      94 MiB), over N * 16 bytes of text.
  hostile_elf.py minidebug OUT [--symbols N] [--preset P]
      a stripped shared object whose .gnu_debugdata (MiniDebugInfo) is an
      xz-compressed ELF whose .symtab holds N (2.6M) functions, all named
      "f": N * 24 bytes of symbols that xz squeezes a hundredfold.
  hostile_elf.py symtab OUT [--symbols N] [--name-len L]
      a shared object whose own .symtab holds N functions with distinct names
      of L bytes.
  hostile_elf.py go OUT [--version V]
      not hostile: a seed for fuzz_go_binary, a file with Go's build info
      (.go.buildinfo, version V inline as Go 1.18+ writes it) and a .symtab
      naming runtime.tlsg (STT_TLS).

Files are written to OUT (stdout for "-").  Used by tests/unit (small
sizes), tests/integration/test_hostile_elf.sh (full sizes) and for the fuzz
corpora's seeds.
"""
import argparse
import lzma
import struct
import sys

ET_DYN, EM_X86_64 = 3, 62
PT_LOAD, PF_X, PF_R = 1, 1, 4
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS, SHT_DYNSYM = 1, 2, 3, 8, 11
SHF_ALLOC, SHF_EXECINSTR = 2, 4
STT_FUNC, STB_GLOBAL = 2, 1
PAGE = 4096


def align(n, a):
    return (n + a - 1) // a * a


class Elf:
    """An ET_DYN x86-64 file laid out with file offset == virtual address,
    one R+X PT_LOAD from offset 0 over the whole file (or further, memsz)."""

    def __init__(self, phdrs=True):
        self.secs = []  # (name, type, flags, addr, data|size, link, info, align, entsize)
        self.phdrs = phdrs
        self.memsz = 0

    def add(self, name, sh_type, data, flags=0, addr=None, link=0, info=0, align_=8, entsize=0):
        self.secs.append([name, sh_type, flags, addr, data, link, info, align_, entsize])
        return len(self.secs)  # the section's index (0 is the null section)

    def build(self):
        names = b"\0"
        name_off = []
        for s in self.secs + [[".shstrtab"]]:
            name_off.append(len(names))
            names += s[0].encode() + b"\0"
        head = 64 + (56 if self.phdrs else 0)
        off = align(head, 16)
        layout = []
        for s in self.secs:
            data = s[4]
            a = max(s[7], 1)
            if s[1] == SHT_NOBITS:
                layout.append((s[3] if s[3] is not None else 0, 0, data))
                continue
            off = align(off, a)
            layout.append((off, off, len(data)))
            off += len(data)
        shstr_off = off
        off += len(names)
        sh_off = align(off, 8)
        nsec = len(self.secs) + 2
        total = sh_off + nsec * 64
        out = bytearray(total)
        out[0:16] = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
        struct.pack_into("<HHIQQQIHHHHHH", out, 16, ET_DYN, EM_X86_64, 1, 0,
                         64 if self.phdrs else 0, sh_off, 0, 64, 56 if self.phdrs else 0,
                         1 if self.phdrs else 0, 64, nsec, nsec - 1)
        if self.phdrs:
            memsz = max(total, self.memsz)
            struct.pack_into("<IIQQQQQQ", out, 64, PT_LOAD, PF_R | PF_X, 0, 0, 0, total,
                             memsz, PAGE)
        for s, (addr, foff, size) in zip(self.secs, layout):
            if s[1] != SHT_NOBITS:
                out[foff:foff + size] = s[4]
        out[shstr_off:shstr_off + len(names)] = names
        for i, (s, (addr, foff, size)) in enumerate(zip(self.secs, layout), start=1):
            vaddr = s[3] if s[3] is not None else (addr if s[2] & SHF_ALLOC else 0)
            struct.pack_into("<IIQQQQIIQQ", out, sh_off + 64 * i, name_off[i - 1], s[1], s[2],
                             vaddr, foff, size, s[5], s[6], s[7], s[8])
        struct.pack_into("<IIQQQQIIQQ", out, sh_off + 64 * (nsec - 1), name_off[-1], SHT_STRTAB,
                         0, 0, shstr_off, len(names), 0, 0, 1, 0)
        return bytes(out), layout

    def offset_of(self, idx):
        """the file offset (== vaddr) section @idx will get: build() twice"""
        return self.build()[1][idx - 1][1]


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def cie(initial):
    """a CIE "zR" with pcrel sdata4 FDE addresses, padded with nops"""
    body = struct.pack("<I", 0) + b"\x01zR\0" + uleb(1) + b"\x78" + b"\x10" + uleb(1) + b"\x1b"
    body += initial
    body += b"\0" * (align(len(body) + 4, 8) - len(body) - 4)
    return struct.pack("<I", len(body)) + body


def fde(pos, cie_pos, eh_addr, lo, rng, prog):
    """an FDE at section offset @pos for [lo, lo + rng)"""
    field = eh_addr + pos + 8  # where pc_begin is
    body = struct.pack("<Iii", pos + 4 - cie_pos, lo - field, rng) + uleb(0) + prog
    body += b"\0" * (align(len(body) + 4, 4) - len(body) - 4)
    return struct.pack("<I", len(body)) + body


def eh_frame_file(make_eh, text_size):
    """an ELF whose .eh_frame is make_eh(eh_addr, text_addr), over text_size bytes of text"""
    e = Elf()
    e.add(".text", SHT_PROGBITS, b"\xc3" * 16, SHF_ALLOC | SHF_EXECINSTR, align_=16)
    eh = e.add(".eh_frame", SHT_PROGBITS, b"", SHF_ALLOC)
    eh_addr = e.offset_of(eh)
    e.secs[eh - 1][4] = make_eh(eh_addr, None)
    data, layout = e.build()
    text = align(len(data), PAGE)
    e.secs[eh - 1][4] = make_eh(eh_addr, text)
    e.memsz = text + text_size
    return e.build()[0]


def cfi_slow(nbytes, reg, pairs):
    prog = b"\x0a\x0b\x41" * pairs  # remember_state, restore_state, advance_loc 1
    rng = pairs + 1
    c = cie(b"\x0c\x07\x08" + b"\x90\x01" + b"\x07" + uleb(reg))

    def make(eh_addr, text):
        out = bytearray(c)
        lo = text or 0
        while len(out) < nbytes:
            out += fde(len(out), 0, eh_addr, lo, rng, prog)
            lo += align(rng, 16)
        return bytes(out + b"\0\0\0\0")

    n = max(1, nbytes // (len(prog) + 20))
    return eh_frame_file(make, n * align(rng, 16) + PAGE)


def cfi_big(nfdes):
    # advance_loc 1, def_cfa_offset 16, advance_loc 4, def_cfa_offset 8, nop
    prog = b"\x41\x0e\x10\x44\x0e\x08\x00"
    c = cie(b"\x0c\x07\x08\x90\x01")

    def make(eh_addr, text):
        out = bytearray(len(c) + 24 * nfdes + 4)
        out[:len(c)] = c
        tmpl = bytearray(fde(0, 0, 0, 0, 16, prog))
        assert len(tmpl) == 24
        lo, pos = text or 0, len(c)
        for _ in range(nfdes):
            out[pos:pos + 24] = tmpl
            struct.pack_into("<Ii", out, pos + 4, pos + 4, lo - (eh_addr + pos + 8))
            lo += 16
            pos += 24
        return bytes(out)

    return eh_frame_file(make, nfdes * 16 + PAGE)


def sym(name, value, size, shndx):
    return struct.pack("<IBBHQQ", name, (STB_GLOBAL << 4) | STT_FUNC, 0, shndx, value, size)


def minidebug(nsyms, preset):
    text = 0x1000
    inner = Elf(phdrs=False)
    inner.add(".text", SHT_NOBITS, nsyms * 16, SHF_ALLOC | SHF_EXECINSTR, addr=text, align_=16)
    one = sym(1, 0, 16, 1)[:8]  # name, info, other, shndx: the same for all
    syms = bytearray(24 * (nsyms + 1))
    for i in range(nsyms):
        struct.pack_into("<8sQQ", syms, 24 * (i + 1), one, text + 16 * i, 16)
    inner.add(".symtab", SHT_SYMTAB, bytes(syms), link=3, info=1, entsize=24)
    inner.add(".strtab", SHT_STRTAB, b"\0f\0", align_=1)
    xz = lzma.compress(inner.build()[0], format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32,
                       preset=preset)
    outer = Elf()
    t = outer.add(".text", SHT_PROGBITS, b"\xc3" * 16, SHF_ALLOC | SHF_EXECINSTR, align_=16)
    ds = outer.add(".dynsym", SHT_DYNSYM, b"", SHF_ALLOC, link=3, info=1, entsize=24)
    outer.add(".dynstr", SHT_STRTAB, b"\0entry\0", SHF_ALLOC, align_=1)
    outer.add(".gnu_debugdata", SHT_PROGBITS, xz, align_=1)
    outer.secs[ds - 1][4] = bytes(24) + sym(1, outer.offset_of(t), 16, t)
    return outer.build()[0]


def symtab(nsyms, name_len):
    e = Elf()
    t = e.add(".text", SHT_NOBITS, nsyms * 16, SHF_ALLOC | SHF_EXECINSTR, addr=0x100000,
              align_=16)
    strs = bytearray(b"\0")
    syms = bytearray(24)
    for i in range(nsyms):
        name = (b"%d_" % i).ljust(name_len, b"x")
        syms += sym(len(strs), 0x100000 + 16 * i, 16, t)
        strs += name + b"\0"
    e.add(".symtab", SHT_SYMTAB, bytes(syms), link=3, info=1, entsize=24)
    e.add(".strtab", SHT_STRTAB, bytes(strs), align_=1)
    return e.build()[0]


def go(version):
    e = Elf()
    v = version.encode()
    info = b"\xff Go buildinf:" + bytes([8, 2]) + bytes(16) + bytes([len(v)]) + v + b"\0"
    e.add(".go.buildinfo", SHT_PROGBITS, info, SHF_ALLOC, align_=16)
    tlsg = struct.pack("<IBBHQQ", 1, (STB_GLOBAL << 4) | 6, 0, 1, 0, 8)
    e.add(".symtab", SHT_SYMTAB, bytes(24) + tlsg, link=3, info=1, entsize=24)
    e.add(".strtab", SHT_STRTAB, b"\0runtime.tlsg\0", align_=1)
    return e.build()[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="kind", required=True)
    a = sub.add_parser("cfi-slow")
    a.add_argument("out")
    a.add_argument("--bytes", type=int, default=1 << 20)
    a.add_argument("--reg", type=int, default=1023)
    a.add_argument("--pairs", type=int, default=683)
    a = sub.add_parser("cfi-big")
    a.add_argument("out")
    a.add_argument("--fdes", type=int, default=3900000)
    a = sub.add_parser("minidebug")
    a.add_argument("out")
    a.add_argument("--symbols", type=int, default=2600000)
    a.add_argument("--preset", type=int, default=0)
    a = sub.add_parser("symtab")
    a.add_argument("out")
    a.add_argument("--symbols", type=int, default=100000)
    a.add_argument("--name-len", type=int, default=64)
    a = sub.add_parser("go")
    a.add_argument("out")
    a.add_argument("--version", default="go1.19.8")
    args = p.parse_args()
    if args.kind == "cfi-slow":
        data = cfi_slow(args.bytes, args.reg, args.pairs)
    elif args.kind == "cfi-big":
        data = cfi_big(args.fdes)
    elif args.kind == "minidebug":
        data = minidebug(args.symbols, args.preset)
    elif args.kind == "go":
        data = go(args.version)
    else:
        data = symtab(args.symbols, args.name_len)
    if args.out == "-":
        sys.stdout.buffer.write(data)
    else:
        with open(args.out, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
