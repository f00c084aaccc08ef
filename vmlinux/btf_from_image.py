#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""
Copy the kernel's BTF out of a kernel image file (an arm64 Image or an
uncompressed vmlinux; a gzip-compressed one is inflated first), for
vmlinux/gen.sh ARCH IMAGE: a vmlinux.h of an architecture this machine does
not run, from the distribution's kernel package, with no boot.
The .BTF data is found by its header: magic 0xeB9F, version 1, a 24-byte
header, the type section first and the string section right after it.
    btf_from_image.py IMAGE OUT
"""
import gzip
import struct
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: btf_from_image.py IMAGE OUT")
    data = open(sys.argv[1], "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    best = None
    i = data.find(b"\x9f\xeb\x01\x00")
    while i >= 0:
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<IIIII", data, i + 4)
        end = i + hdr_len + str_off + str_len
        if (hdr_len == 24 and type_off == 0 and str_off == type_len and end <= len(data)
                and (best is None or type_len > best[1])):
            best = (i, type_len, end)
        i = data.find(b"\x9f\xeb\x01\x00", i + 1)
    if best is None:
        sys.exit(f"btf_from_image.py: no BTF in {sys.argv[1]} (a kernel built without CONFIG_DEBUG_INFO_BTF?)")
    open(sys.argv[2], "wb").write(data[best[0]:best[2]])


main()
