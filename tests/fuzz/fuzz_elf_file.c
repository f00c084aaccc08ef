// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for user/elf/elf_file.c, the one reader of hostile ELF
 * files: any bytes may come from a target's file.  Opening must fail
 * cleanly or give a file every accessor of which stays inside what was
 * read; ASan/UBSan catch the rest.
 *
 * Every input goes down two paths: opened as an ELF image, then each
 * section's size and a capped copy (inflated when compressed), the load
 * segments and their address translations (probed with addresses taken
 * from the input), the build id and debug link, both symbol tables read
 * through their windows and, for .dynsym, whole; and as a bare list of ELF
 * notes (/sys/kernel/notes), aligned 4 and 8.
 *
 * Seeds in tests/fuzz/corpus/elf_file/: elf_syms' and unwind_table's tiny
 * real files (see fuzz_elf_syms.c, fuzz_unwind_table.c: static, shared,
 * stripped, MiniDebugInfo, .debug_frame compressed both ways, the kernel's
 * notes) and small bombs of tests/hostile_elf.py:
 *   hostile_elf.py minidebug minidebug_bomb --symbols 2000
 *   hostile_elf.py symtab symtab_names --symbols 100 --name-len 200
 *   hostile_elf.py cfi-slow cfi_slow --bytes 256 --pairs 20
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"

#define COPY_CAP (1u << 20) /* sections copied by the fuzzer */
#define SYMS_MAX 4096	    /* entries read a table */

static void check(int ok)
{
	if (!ok)
		abort();
}

static void exercise_sections(const struct elf_file *ef)
{
	size_t i, n = elf_file__nr_sections(ef), len;
	uint64_t size;
	void *copy;

	check(!elf_file__section(ef, 0) && !elf_file__section(ef, n));
	for (i = 1; i < n; i++) {
		const char *name = elf_file__section_name(ef, i);

		check(elf_file__section(ef, i) != NULL);
		if (name) {
			check(strlen(name) < (1u << 20));
			/* found by name: this one, or an earlier one of the same name */
			if (elf_file__section(ef, i)->sh_type != SHT_NOBITS)
				check(elf_file__find_section(ef, name) <= i &&
				      elf_file__find_section(ef, name) > 0);
		}
		if (elf_file__section_size(ef, i, COPY_CAP, &size))
			continue;
		check(size <= COPY_CAP);
		if (!elf_file__section_copy(ef, i, COPY_CAP, &copy, &len)) {
			check(len == size);
			free(copy);
		}
	}
}

static void exercise_loads(const struct elf_file *ef, const uint8_t *data, size_t size)
{
	const struct elf_load *loads, *l;
	uint64_t probe, vaddr, off, base;
	size_t n, i;

	loads = elf_file__loads(ef, &n);
	check(n <= elf_file__nr_segments(ef));
	for (i = 0; i < elf_file__nr_segments(ef); i++)
		check(elf_file__segment(ef, i) != NULL);
	check(!elf_file__segment(ef, i));
	if (elf_loads__base(loads, n, &base))
		for (i = 0; i < n; i++)
			check(loads[i].vaddr >= base);
	for (i = 0; i + sizeof(probe) <= size && i < 256; i += sizeof(probe)) {
		memcpy(&probe, data + i, sizeof(probe));
		/* an offset and its address translate back, through the same segment */
		if (!elf_loads__offset_to_vaddr(loads, n, probe, &vaddr)) {
			check(!elf_loads__vaddr_to_offset(loads, n, vaddr, 1, &off));
			check(elf_loads__offset_to_vaddr(loads, n, off, &vaddr) == 0);
		}
		if (!elf_loads__vaddr_to_offset(loads, n, probe, 8, &off))
			check(off <= elf_file__size(ef) && elf_file__size(ef) - off >= 8);
		l = elf_loads__for_mapping(loads, n, probe & ~4095ull);
		check(!l || (l >= loads && l < loads + n));
	}
}

static void exercise_symtab(const struct elf_file *ef, uint32_t type)
{
	struct elf_symtab st;
	char name[256];
	Elf64_Sym sym;
	size_t i, len;

	if (elf_file__symtab(ef, type, &st))
		return;
	check(st.str_size >= 1);
	for (i = 0; i < st.nr && i < SYMS_MAX; i++) {
		if (elf_symtab__get(&st, i, &sym))
			break;
		if (!elf_symtab__name(&st, sym.st_name, name, sizeof(name), &len))
			check(len < sizeof(name) && strlen(name) == len);
		else
			check(sym.st_name >= st.str_size);
	}
	check(elf_symtab__get(&st, st.nr, &sym) != 0);
	if (type == SHT_DYNSYM && !elf_symtab__load_strings(&st, COPY_CAP))
		for (i = 1; i < st.nr && i < SYMS_MAX && !elf_symtab__get(&st, i, &sym); i++)
			elf_symtab__name(&st, sym.st_name, name, 8, NULL);
	elf_symtab__release(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t id[ELF_FILE_BUILD_ID_MAX];
	char hex[ELF_FILE_BUILD_ID_HEX];
	const uint8_t *bid;
	struct elf_file *ef;
	const char *link;
	uint32_t crc;
	size_t len;

	ef = elf_file__open_mem(data, size);
	if (ef) {
		check(elf_file__size(ef) == size);
		exercise_sections(ef);
		exercise_loads(ef, data, size);
		bid = elf_file__build_id(ef, &len);
		check(!bid || (len >= 1 && len <= ELF_FILE_BUILD_ID_MAX));
		if (bid) {
			elf_build_id__hex(bid, len, hex);
			check(strlen(hex) == 2 * len);
		}
		link = elf_file__debuglink(ef, &crc);
		if (link)
			check(*link && strlen(link) <= ELF_FILE_DEBUGLINK_MAX &&
			      !strchr(link, '/'));
		exercise_symtab(ef, SHT_SYMTAB);
		exercise_symtab(ef, SHT_DYNSYM);
		elf_file__free(ef);
	}

	/* /sys/kernel/notes is a bare note list */
	len = elf_notes__build_id(data, size, 4, id);
	check(len <= ELF_FILE_BUILD_ID_MAX);
	len = elf_notes__build_id(data, size, 8, id);
	check(len <= ELF_FILE_BUILD_ID_MAX);
	return 0;
}
