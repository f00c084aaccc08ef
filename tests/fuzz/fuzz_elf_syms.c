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
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/elf_syms.h"

static void check(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t start, end, prev_start = 0, off, vaddr, probe;
	struct elf_syms *es;
	const char *name;
	size_t i, n;

	es = elf_syms__open_mem(data, size);
	if (!es)
		return 0;

	name = elf_syms__build_id(es);
	if (name)
		check(strlen(name) >= 2 && strlen(name) <= 2 * ELF_SYMS_BUILD_ID_MAX);
	elf_syms__is_dyn(es);

	n = elf_syms__nr_symbols(es);
	check(n <= ELF_SYMS_MAX_SYMBOLS);
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

	elf_syms__free(es);
	return 0;
}
