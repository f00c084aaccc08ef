// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for user/elf/gopclntab.c and what reads through it
 * (unwind/go_rows.c's rows, elf_syms' names): the bytes of a Go program's
 * .gopclntab may come from a hostile target's file.  Opening must fail
 * cleanly or give a table whose functions are sorted, whose lookups and
 * pc-value tables stay in bounds and end, and whose unwind table keeps the
 * invariants the BPF unwinder relies on; ASan/UBSan catch the rest.
 *
 * Each input is the section's bytes, wrapped here in a small ELF file: one
 * PT_LOAD (read, write, execute: the moduledata scan and the inlining trees
 * read it) at 0x400000 over the whole file, .gopclntab at file offset
 * 0x1000 (address 0x401000), .text at 0x500000 (a 1.18 table's text start
 * when its header leaves it 0); then again with the section named
 * .data.rel.ro, where the table is looked for by its header.  Seeds in tests/fuzz/corpus/gopclntab/
 * are small tables of each layout, made with tests/fuzz/gen_gopclntab.py.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "elf/gopclntab.h"
#include "symbols/elf_syms.h"
#include "unwind/unwind_table.h"

#define SEC_OFF	   0x1000u
#define LOAD_VADDR 0x400000u
#define TEXT_VADDR 0x500000u
#define MAX_INPUT  (1u << 20)

static void check(int ok)
{
	if (!ok)
		abort();
}

enum { SEC_NULL, SEC_SHSTRTAB, SEC_TEXT, SEC_PCLN, SEC_BUILDINFO, NR_SECS };

static const char shstrtab[] = "\0.shstrtab\0.text\0.gopclntab\0.data.rel.ro\0.go.buildinfo";

/* @relro: the section is .data.rel.ro, where a table is found by its header */
static uint8_t *wrap(const uint8_t *data, size_t size, bool relro, size_t *len)
{
	size_t sh_off = (SEC_OFF + size + 7) & ~(size_t)7;
	Elf64_Shdr sh[NR_SECS] = {
		[SEC_SHSTRTAB] = {.sh_name = 1,
				  .sh_type = SHT_STRTAB,
				  .sh_offset = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr),
				  .sh_size = sizeof(shstrtab),
				  .sh_addralign = 1},
		[SEC_TEXT] = {.sh_name = 11,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			      .sh_addr = TEXT_VADDR,
			      .sh_offset = 0,
			      .sh_size = 16,
			      .sh_addralign = 16},
		[SEC_PCLN] = {.sh_name = relro ? 28 : 17,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC,
			      .sh_addr = LOAD_VADDR + SEC_OFF,
			      .sh_offset = SEC_OFF,
			      .sh_size = size,
			      .sh_addralign = 8},
		/* what says a file is Go's: its .data.rel.ro is then searched */
		[SEC_BUILDINFO] = {.sh_name = 41,
				   .sh_type = SHT_PROGBITS,
				   .sh_flags = SHF_ALLOC,
				   .sh_offset = 0,
				   .sh_size = 16,
				   .sh_addralign = 16},
	};
	Elf64_Phdr ph = {
		.p_type = PT_LOAD,
		.p_flags = PF_R | PF_W | PF_X,
		.p_offset = 0,
		.p_vaddr = LOAD_VADDR,
		.p_filesz = sh_off,
		.p_memsz = 0x200000 > sh_off ? 0x200000 : sh_off,
		.p_align = 0x1000,
	};
	Elf64_Ehdr eh = {
		.e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			    EV_CURRENT},
		.e_type = ET_EXEC,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf64_Ehdr),
		.e_shoff = sh_off,
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = 1,
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
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	memcpy(buf + sizeof(eh) + sizeof(ph), shstrtab, sizeof(shstrtab));
	memcpy(buf + SEC_OFF, data, size);
	memcpy(buf + sh_off, sh, sizeof(sh));
	return buf;
}

/* every function's tables decode to an end, in order, inside the function */
static void exercise_func(const struct gopclntab *g, const struct gopclntab_func *f)
{
	static const enum gopclntab_pctab which[] = {GOPCLNTAB_PCSP, GOPCLNTAB_PCFILE,
						     GOPCLNTAB_PCLN, GOPCLNTAB_PCINLINE};
	struct gopclntab_frame fr[GOPCLNTAB_MAX_DEPTH];
	struct gopclntab_pcvalue it;
	uint64_t lo, hi, prev;
	size_t i, n, steps;
	int32_t v;
	int ret;

	check(f->entry <= f->end);
	if (f->name)
		check(strlen(f->name) > 0 && strlen(f->name) <= GOPCLNTAB_MAX_NAME);
	for (i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		if (gopclntab__pcvalue(g, f, which[i], &it))
			continue;
		prev = f->entry;
		steps = 0;
		while ((ret = gopclntab_pcvalue__next(&it, &lo, &hi, &v)) == 1) {
			check(lo == prev && lo <= hi && hi <= f->end);
			prev = hi;
			check(++steps <= GOPCLNTAB_MAX_STEPS);
		}
		check(ret == 0 || ret == -EINVAL);
		if (which[i] == GOPCLNTAB_PCFILE &&
		    !gopclntab__value_at(g, f, which[i], f->entry, &v))
			gopclntab__file(g, f, v);
	}
	for (i = 0; i < 3 && f->entry + i < f->end; i++) {
		n = gopclntab__frames(g, f, f->entry + i * (f->end - f->entry) / 3, fr,
				      GOPCLNTAB_MAX_DEPTH);
		check(n >= 1 && n <= GOPCLNTAB_MAX_DEPTH);
		check(fr[n - 1].function == f->name);
	}
}

static void exercise_table(const struct elf_file *ef)
{
	struct gopclntab_func f, prev = {0}, found;
	struct gopclntab *g;
	size_t i, nr;

	g = gopclntab__open(ef, MAX_INPUT);
	if (!g)
		return;
	gopclntab__open_inline(g, ef, MAX_INPUT);
	nr = gopclntab__nr_funcs(g);
	check(nr > 0 && nr <= GOPCLNTAB_MAX_FUNCS);
	for (i = 0; i < nr; i++) {
		if (gopclntab__func(g, i, &f))
			continue;
		check(!i || f.entry >= prev.end);
		check(gopclntab__owns(g, f.name) || !f.name);
		if (f.entry < f.end) {
			check(!gopclntab__find(g, f.entry, &found) && found.idx == i);
			check(!gopclntab__find(g, f.end - 1, &found) && found.idx == i);
		}
		/* the rest decoded for the first functions only: each costs its size */
		if (i < 64)
			exercise_func(g, &f);
		prev = f;
	}
	check(gopclntab__func(g, nr, &f) == -ENOENT);
	gopclntab__free(g);
}

/* the invariants the BPF unwinder relies on (include/unwind.h) */
static void exercise_unwind(const struct elf_file *ef)
{
	struct unwind_table *t = NULL;
	char err[256];
	size_t i;

	if (unwind_table__build(ef, NULL, NULL, &t, err, sizeof(err)))
		return;
	check(t->nr_rows > 0 && t->nr_rows <= UNWIND_MAX_TABLE_ROWS);
	for (i = 0; i < t->nr_rows; i++) {
		check(!i || t->rows[i].pc > t->rows[i - 1].pc);
		check(t->rows[i].rule < t->nr_rules);
		check(!i || t->rows[i].rule != t->rows[i - 1].rule);
		check(t->rules[t->rows[i].rule].cmd < UNWIND_CMD_MAX);
	}
	unwind_table__free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *ef;
	struct elf_syms *es;
	uint8_t *file;
	size_t len;

	if (size > MAX_INPUT)
		return 0;
	file = wrap(data, size, false, &len);
	if (!file)
		return 0;
	ef = elf_file__open_mem(file, len);
	check(ef != NULL); /* the wrapper itself is valid */
	exercise_table(ef);
	exercise_unwind(ef);
	/* the names of a file without symbols */
	es = elf_syms__open_file(ef, ELF_SYMS_MAX_BYTES);
	if (es) {
		elf_syms__lookup(es, TEXT_VADDR, NULL);
		elf_syms__lookup(es, TEXT_VADDR + 0x30, NULL);
		elf_syms__free(es);
	}
	elf_file__free(ef);
	free(file);

	/* the same bytes as an externally linked file's .data.rel.ro */
	file = wrap(data, size, true, &len);
	if (!file)
		return 0;
	ef = elf_file__open_mem(file, len);
	check(ef != NULL);
	exercise_table(ef);
	elf_file__free(ef);
	free(file);
	return 0;
}
