// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for user/symbols/elf_syms.c: any bytes may come from a hostile
 * target's file.  Parsing must fail cleanly or give a self-consistent
 * result; ASan/UBSan catch the rest.
 *
 * Seeds in tests/fuzz/corpus/elf_syms/ are tiny real files, made with:
 *   printf 'int v; void _start(void) { v++; for (;;) ; }\n' > t.c
 *   gcc -Os -nostdlib -static -fno-pie -no-pie -Wl,--build-id=sha1 \
 *	-Wl,-z,noseparate-code t.c -o tiny_static        (+ .symtab)
 *   gcc -Os -nostdlib -shared -fPIC -Wl,--build-id=sha1 \
 *	-Wl,-z,noseparate-code t.c -o tiny_shared.so     (.dynsym)
 *   strip --strip-all tiny_shared.so -o tiny_shared_stripped.so
 *   head -c 64 tiny_static > ehdr_only; head -c 600 tiny_static > cut_tables
 * the budgets' bombs, small (tests/hostile_elf.py):
 *   hostile_elf.py minidebug minidebug_bomb --symbols 2000 (a table in xz)
 *   hostile_elf.py symtab symtab_names --symbols 100 --name-len 200
 * and for MiniDebugInfo and notes (the recipe of elf_fixtures.mk on t.so, a
 * t.c with a static function "hidden" besides _start):
 *   ... objcopy -S --keep-symbols=keep t.debug mini; xz -0 --keep mini (dictionary 256 KiB: a fast
 *seed) strip --strip-all t.so -o t.tmp objcopy --add-section .gnu_debugdata=mini.xz t.tmp
 *tiny_minidebug.so cp mini.xz tiny_minidebug.xz; cp /sys/kernel/notes kernel_notes
 *
 * Every input goes down three paths: parsed as an ELF file (with its own
 * .gnu_debugdata, if any); as an .xz stream (the decompressor's caps); and,
 * when it looks like ELF, as the
 * MiniDebugInfo of a small template file: wrapped here in a valid .xz
 * stream of stored (uncompressed) LZMA2 chunks, cheap to build, so that
 * mutations reach the inner parse and the merge with the template's .dynsym
 * instead of dying at an xz check.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "symbols/elf_syms.h"
#include "util/xz.h"

#define WRAP_MAX_INPUT (256u << 10) /* larger ELF inputs are not wrapped */
#define XZ_FUZZ_CAP    (1u << 20)

static void check(int ok)
{
	if (!ok)
		abort();
}

/*
 * The template: an ET_DYN file with .dynsym functions tpl_a (size 0),
 * tpl_b (sized) and tpl_c (size 0) in a .text at 0x1000..0x2000, and a
 * .gnu_debugdata holding @xz.  Everything 8-byte aligned.
 */
enum { SEC_NULL, SEC_SHSTRTAB, SEC_DEBUGDATA, SEC_DYNSYM, SEC_DYNSTR, SEC_TEXT, NR_SECS };

static const char tpl_shstrtab[] = "\0.shstrtab\0.gnu_debugdata\0.dynsym\0.dynstr\0.text";
static const char tpl_dynstr[] = "\0tpl_a\0tpl_b\0tpl_c";

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static uint8_t *wrap_minidebug(const uint8_t *xz, size_t xz_len, size_t *len)
{
	const Elf64_Sym syms[4] = {
		{0},
		{.st_name = 1,
		 .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		 .st_shndx = SEC_TEXT,
		 .st_value = 0x1000},
		{.st_name = 7,
		 .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		 .st_shndx = SEC_TEXT,
		 .st_value = 0x1100,
		 .st_size = 0x20},
		{.st_name = 13,
		 .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		 .st_shndx = SEC_TEXT,
		 .st_value = 0x1400},
	};
	size_t shstr_off = sizeof(Elf64_Ehdr);
	size_t dynstr_off = align8(shstr_off + sizeof(tpl_shstrtab));
	size_t dynsym_off = align8(dynstr_off + sizeof(tpl_dynstr));
	size_t xz_off = dynsym_off + sizeof(syms);
	size_t sh_off = align8(xz_off + xz_len);
	Elf64_Shdr sh[NR_SECS] = {
		[SEC_SHSTRTAB] = {.sh_name = 1,
				  .sh_type = SHT_STRTAB,
				  .sh_offset = shstr_off,
				  .sh_size = sizeof(tpl_shstrtab),
				  .sh_addralign = 1},
		[SEC_DEBUGDATA] = {.sh_name = 11,
				   .sh_type = SHT_PROGBITS,
				   .sh_offset = xz_off,
				   .sh_size = xz_len,
				   .sh_addralign = 1},
		[SEC_DYNSYM] = {.sh_name = 26,
				.sh_type = SHT_DYNSYM,
				.sh_offset = dynsym_off,
				.sh_size = sizeof(syms),
				.sh_link = SEC_DYNSTR,
				.sh_info = 1,
				.sh_entsize = sizeof(Elf64_Sym),
				.sh_addralign = 8},
		[SEC_DYNSTR] = {.sh_name = 34,
				.sh_type = SHT_STRTAB,
				.sh_offset = dynstr_off,
				.sh_size = sizeof(tpl_dynstr),
				.sh_addralign = 1},
		[SEC_TEXT] = {.sh_name = 42,
			      .sh_type = SHT_NOBITS,
			      .sh_addr = 0x1000,
			      .sh_offset = sh_off,
			      .sh_size = 0x1000,
			      .sh_addralign = 16},
	};
	Elf64_Ehdr eh = {
		.e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			    EV_CURRENT},
		.e_type = ET_DYN,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_shoff = sh_off,
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_shentsize = sizeof(Elf64_Shdr),
		.e_shnum = NR_SECS,
		.e_shstrndx = SEC_SHSTRTAB,
	};
	uint8_t *buf;

	*len = sh_off + sizeof(sh);
	buf = calloc(1, *len);
	if (!buf)
		return NULL;
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + shstr_off, tpl_shstrtab, sizeof(tpl_shstrtab));
	memcpy(buf + dynstr_off, tpl_dynstr, sizeof(tpl_dynstr));
	memcpy(buf + dynsym_off, syms, sizeof(syms));
	memcpy(buf + xz_off, xz, xz_len);
	memcpy(buf + sh_off, sh, sizeof(sh));
	return buf;
}

/* whatever was parsed must be self-consistent and lookups must not crash */
static void exercise(const struct elf_syms *es, const uint8_t *data, size_t size)
{
	uint64_t start, end, prev_start = 0, off, vaddr, probe;
	const char *name;
	uint32_t crc;
	size_t i, n;

	name = elf_syms__build_id(es);
	if (name)
		check(strlen(name) >= 2 && strlen(name) <= 2 * ELF_SYMS_BUILD_ID_MAX);
	elf_syms__is_dyn(es);

	n = elf_syms__nr_symbols(es);
	/* a MiniDebugInfo's table merged with the file's own, within the file's budget */
	check(n <= 2 * ELF_SYMS_MAX_SYMBOLS);
	check(elf_syms__bytes(es) <= ELF_SYMS_MAX_BYTES + (1u << 20));
	check(!elf_syms__over_budget(es) || !n);
	for (i = 0; i < n; i++) {
		name = elf_syms__symbol(es, i, &start, &end);
		check(name && *name && strlen(name) < ELF_SYMS_MAX_NAME);
		check(start < end && (!i || start > prev_start));
		check(elf_syms__lookup(es, start, &off) == name && off == 0);
		check(elf_syms__lookup(es, end - 1, &off) == name && off == end - 1 - start);
		prev_start = start;
		/* ranges do not overlap: past the end is the next symbol or nothing */
		name = elf_syms__lookup(es, end, NULL);
		check(!name || (i + 1 < n && elf_syms__symbol(es, i + 1, &start, NULL) == name &&
				start == end));
	}
	check(!elf_syms__symbol(es, n, NULL, NULL));

	/* file offsets and addresses taken from the input itself */
	for (i = 0; i + sizeof(probe) <= size && i < 256; i += sizeof(probe)) {
		memcpy(&probe, data + i, sizeof(probe));
		if (elf_syms__file_offset_to_vaddr(es, probe, &vaddr) == 0)
			elf_syms__lookup(es, vaddr, &off);
		elf_syms__file_offset_to_vaddr(es, i, &vaddr);
		elf_syms__lookup(es, probe, &off);
	}
	elf_syms__lookup(es, 0, NULL);
	elf_syms__lookup(es, UINT64_MAX, &off);

	name = elf_syms__debuglink(es, &crc);
	if (name)
		check(*name && strlen(name) < 256 && !strchr(name, '/'));
	elf_syms__has_symtab(es);
	check(elf_syms__minidebug(es) <= ELF_SYMS_MINIDEBUG_TOO_BIG);
}

static size_t put_vli(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static void put_crc32(uint8_t *p, const uint8_t *from, size_t len)
{
	uint32_t c = crc32(0L, from, len);

	memcpy(p, &c, 4); /* little-endian, as the host */
}

/*
 * @data as one .xz stream (the format of xz-file-format.txt): no check, one
 * block of LZMA2 stored chunks (control 1 then 2, size - 1 big-endian, at
 * most 64 KiB each, 0 to end), its index, the footer.
 */
static uint8_t *xz_store(const uint8_t *data, size_t size, size_t *len)
{
	size_t chunks = (size + 65535) / 65536, pos, block, i, idx;
	uint8_t *out, *p;

	out = malloc(12 + 12 + size + 3 * chunks + 1 + 3 + 32 + 12);
	if (!out)
		return NULL;
	/* stream header: magic, flags (check none), their CRC32 */
	memcpy(out,
	       "\xfd"
	       "7zXZ\0\0\0",
	       8);
	put_crc32(out + 8, out + 6, 2);
	pos = 12;
	/* block header: 12 bytes, one filter: LZMA2 (0x21), 1 byte of props */
	p = out + pos;
	memcpy(p, "\x02\x00\x21\x01\x00\x00\x00\x00", 8);
	put_crc32(p + 8, p, 8);
	block = pos;
	pos += 12;
	for (i = 0; i < size; i += 65536) {
		size_t n = size - i < 65536 ? size - i : 65536;

		out[pos++] = i ? 2 : 1;
		out[pos++] = (n - 1) >> 8;
		out[pos++] = (n - 1) & 0xff;
		memcpy(out + pos, data + i, n);
		pos += n;
	}
	out[pos++] = 0;
	/* index: indicator, 1 record (unpadded size, uncompressed size), padding, CRC32 */
	idx = pos - block; /* the unpadded size: header and data, no check */
	while (pos % 4)
		out[pos++] = 0;
	p = out + pos;
	p[0] = 0;
	i = 1;
	i += put_vli(p + i, 1);
	i += put_vli(p + i, idx);
	i += put_vli(p + i, size);
	while (i % 4)
		p[i++] = 0;
	put_crc32(p + i, p, i);
	i += 4;
	pos += i;
	/* footer: CRC32, backward size (index size / 4 - 1), flags, magic */
	p = out + pos;
	idx = i / 4 - 1;
	memcpy(p + 4, &(uint32_t){(uint32_t)idx}, 4);
	p[8] = 0;
	p[9] = 0;
	put_crc32(p, p + 4, 6);
	p[10] = 'Y';
	p[11] = 'Z';
	*len = pos + 12;
	return out;
}

/* @data as the MiniDebugInfo of the template file */
static void fuzz_wrapped(const uint8_t *data, size_t size)
{
	struct elf_syms *es;
	uint8_t *xz, *file;
	size_t xz_len, len;

	xz = xz_store(data, size, &xz_len);
	if (!xz)
		return;
	file = wrap_minidebug(xz, xz_len, &len);
	free(xz);
	if (!file)
		return;
	es = elf_syms__open_mem(file, len);
	/* the template itself is valid: only the inner file may be refused */
	check(es != NULL);
	exercise(es, data, size);
	if (elf_syms__minidebug(es) != ELF_SYMS_MINIDEBUG_OK)
		check(elf_syms__nr_symbols(es) == 3);
	elf_syms__free(es);
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_syms *es;
	size_t out_len;
	void *out;

	es = elf_syms__open_mem(data, size);
	if (es) {
		exercise(es, data, size);
		elf_syms__free(es);
	}

	if (!xz_decompress(data, size, XZ_FUZZ_CAP, &out, &out_len)) {
		check(out_len <= XZ_FUZZ_CAP);
		free(out);
	}

	if (size >= SELFMAG && !memcmp(data, ELFMAG, SELFMAG) && size <= WRAP_MAX_INPUT)
		fuzz_wrapped(data, size);
	return 0;
}
