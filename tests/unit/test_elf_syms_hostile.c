// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/symbols/elf_syms.c on hostile input: the fixtures of
 * tests/unit/elf_fixtures.mk corrupted field by field, random bytes and
 * mutations, synthetic symbol tables built here (names, limits, aliases) and
 * the hostile files of tests/hostile_elf.py.  Each must be refused or parsed
 * into a self-consistent table, never crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "fixtures.h"
#include "symbols/demangle.h"
#include "symbols/elf_syms.h"
#include "elf_syms_check.h"

static void elf_syms__open_mem__same_bytes__same_result_as_open_fd(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(all_fixtures) / sizeof(all_fixtures[0]); i++) {
		struct elf_syms *a = open_fixture(all_fixtures[i]), *b;
		uint64_t sa, ea, sb, eb;
		struct image img;
		size_t j;

		image_load(&img, all_fixtures[i]);
		b = elf_syms__open_mem(img.buf, img.len);
		assert_non_null(b);
		assert_int_equal(elf_syms__nr_symbols(a), elf_syms__nr_symbols(b));
		assert_string_equal(elf_syms__build_id(a), elf_syms__build_id(b));
		assert_int_equal(elf_syms__is_dyn(a), elf_syms__is_dyn(b));
		for (j = 0; j < elf_syms__nr_symbols(a); j++) {
			assert_string_equal(elf_syms__symbol(a, j, &sa, &ea),
					    elf_syms__symbol(b, j, &sb, &eb));
			assert_int_equal(sa, sb);
			assert_int_equal(ea, eb);
		}
		elf_syms__free(a);
		elf_syms__free(b);
		free(img.buf);
	}
}

static void elf_syms__open_mem__empty_or_null__einval(void **state)
{
	static const uint8_t byte;

	errno = 0;
	assert_null(elf_syms__open_mem(NULL, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(elf_syms__open_mem(&byte, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(elf_syms__open_mem(NULL, 4096));
	assert_int_equal(errno, EINVAL);
	/* accepts NULL */
	elf_syms__free(NULL);
}

static void elf_syms__open_mem__truncated__einval(void **state)
{
	struct image img;
	size_t lens[] = {1, 4, sizeof(Elf64_Ehdr) - 1, sizeof(Elf64_Ehdr), 0, 0, 0};
	size_t i;

	image_load(&img, FIXTURE_PIE);
	/* the section header table sits at the end: any cut loses part of it */
	lens[4] = img.len / 2;
	lens[5] = image_ehdr(&img)->e_shoff + 1;
	lens[6] = img.len - 1;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		assert_open_mem_einval(&img, lens[i]);
	free(img.buf);
}

static void elf_syms__open_mem__huge_e_shoff__einval(void **state)
{
	struct image img;

	image_load(&img, FIXTURE_PIE);
	image_ehdr(&img)->e_shoff = UINT64_MAX - 8;
	assert_open_mem_einval(&img, img.len);
	image_ehdr(&img)->e_shoff = img.len;
	assert_open_mem_einval(&img, img.len);
	free(img.buf);
}

static void elf_syms__open_mem__huge_e_shnum__einval(void **state)
{
	struct image img;
	uint64_t shoff;

	image_load(&img, FIXTURE_PIE);
	image_ehdr(&img)->e_shnum = 0xfeff;
	assert_open_mem_einval(&img, img.len);

	/* extended numbering: e_shnum 0, the count in section 0's sh_size */
	image_ehdr(&img)->e_shnum = 0;
	shoff = image_ehdr(&img)->e_shoff;
	((Elf64_Shdr *)(img.buf + shoff))->sh_size = UINT64_MAX / 2;
	assert_open_mem_einval(&img, img.len);
	free(img.buf);
}

static void elf_syms__open_mem__huge_e_phnum__einval(void **state)
{
	struct image img;

	image_load(&img, FIXTURE_PIE);
	image_ehdr(&img)->e_phnum = 0xfffe;
	assert_open_mem_einval(&img, img.len);
	image_ehdr(&img)->e_phnum = 1;
	image_ehdr(&img)->e_phoff = UINT64_MAX - 1;
	assert_open_mem_einval(&img, img.len);
	free(img.buf);
}

static void elf_syms__open_mem__bad_symtab_sh_link__einval(void **state)
{
	uint32_t links[] = {0, 0xffff, UINT32_MAX, 0};
	struct image img;
	size_t i;

	image_load(&img, FIXTURE_PIE);
	/* last case: a link to a section that is not a string table */
	links[3] = image_find_section(&img, SHT_SYMTAB) - image_shdr(&img, 0);
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		image_find_section(&img, SHT_SYMTAB)->sh_link = links[i];
		assert_open_mem_einval(&img, img.len);
	}
	free(img.buf);
}

static void elf_syms__open_mem__huge_st_name__einval(void **state)
{
	struct image img;
	Elf64_Shdr *symtab;
	Elf64_Sym *sym;
	size_t i;

	image_load(&img, FIXTURE_PIE);
	symtab = image_find_section(&img, SHT_SYMTAB);
	sym = (Elf64_Sym *)(img.buf + symtab->sh_offset);
	for (i = 1; i < symtab->sh_size / sizeof(*sym); i++)
		sym[i].st_name = UINT32_MAX;
	assert_open_mem_einval(&img, img.len);
	free(img.buf);
}

static void elf_syms__open_mem__huge_section_sizes__einval(void **state)
{
	struct image img;
	Elf64_Shdr *symtab;
	uint64_t size;

	image_load(&img, FIXTURE_PIE);
	symtab = image_find_section(&img, SHT_SYMTAB);
	size = symtab->sh_size;
	symtab->sh_size = UINT64_MAX - sizeof(Elf64_Sym) + 1;
	assert_open_mem_einval(&img, img.len);
	symtab->sh_size = size + 24 * 1024 * 1024;
	assert_open_mem_einval(&img, img.len);
	/* not a whole number of entries */
	symtab->sh_size = size - 1;
	assert_open_mem_einval(&img, img.len);
	symtab->sh_size = size;

	image_shdr(&img, symtab->sh_link)->sh_offset = UINT64_MAX - 4;
	assert_open_mem_einval(&img, img.len);
	free(img.buf);
}

/* a string table without its final NUL could run names off its end */
static void elf_syms__open_mem__unterminated_strtab__einval(void **state)
{
	struct image img;
	Elf64_Shdr *str;

	image_load(&img, FIXTURE_PIE);
	str = image_shdr(&img, image_find_section(&img, SHT_SYMTAB)->sh_link);
	img.buf[str->sh_offset + str->sh_size - 1] = 'x';
	assert_open_mem_einval(&img, img.len);
	free(img.buf);
}

static void elf_syms__open_mem__huge_note_sizes__parsed_without_build_id(void **state)
{
	struct elf_syms *es;
	struct image img;
	Elf64_Shdr *sh;
	size_t i, notes = 0;

	image_load(&img, FIXTURE_PIE);
	for (i = 1; i < image_ehdr(&img)->e_shnum; i++) {
		Elf64_Nhdr *nh;

		sh = image_shdr(&img, i);
		if (sh->sh_type != SHT_NOTE)
			continue;
		nh = (Elf64_Nhdr *)(img.buf + sh->sh_offset);
		nh->n_namesz = UINT32_MAX - 2;
		nh->n_descsz = UINT32_MAX;
		notes++;
	}
	assert_true(notes > 0);
	es = elf_syms__open_mem(img.buf, img.len);
	assert_non_null(es);
	assert_null(elf_syms__build_id(es));
	assert_true(elf_syms__nr_symbols(es) > 0);
	exercise(es);
	elf_syms__free(es);
	free(img.buf);
}

static void elf_syms__open_mem__wrong_class_or_byte_order__einval(void **state)
{
	struct image img;

	image_load(&img, FIXTURE_PIE);
	img.buf[EI_CLASS] = ELFCLASS32;
	assert_open_mem_einval(&img, img.len);
	img.buf[EI_CLASS] = ELFCLASS64;
	img.buf[EI_DATA] = img.buf[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
	assert_open_mem_einval(&img, img.len);
	img.buf[EI_DATA] = img.buf[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
	image_ehdr(&img)->e_type = ET_REL;
	assert_open_mem_einval(&img, img.len);
	free(img.buf);
}

static void elf_syms__open_mem__random_bytes__einval(void **state)
{
	unsigned int seed = 1;
	struct image img;
	size_t i;

	img.len = 8192;
	img.buf = malloc(img.len);
	assert_non_null(img.buf);
	for (i = 0; i < img.len; i++)
		img.buf[i] = rand_r(&seed);
	assert_open_mem_einval(&img, img.len);
	/* a valid magic alone is not enough */
	memcpy(img.buf, ELFMAG, SELFMAG);
	assert_open_mem_einval(&img, img.len);
	free(img.buf);
}

/*
 * Flip random bytes of real files, mostly in the headers and tables where
 * the parser looks; anything may be refused, nothing may crash (ASan/UBSan
 * builds make this bite).
 */
static void elf_syms__open_mem__random_mutations__no_crash(void **state)
{
	unsigned int seed = 12345;
	size_t f, iter, parsed = 0;

	for (f = 0; f < sizeof(all_fixtures) / sizeof(all_fixtures[0]); f++) {
		struct image orig, img;

		image_load(&orig, all_fixtures[f]);
		img.len = orig.len;
		img.buf = malloc(img.len);
		assert_non_null(img.buf);
		for (iter = 0; iter < 1000; iter++) {
			struct elf_syms *es;
			int flips = 1 + rand_r(&seed) % 8, k;

			memcpy(img.buf, orig.buf, img.len);
			for (k = 0; k < flips; k++) {
				size_t pos = rand_r(&seed) % img.len;

				/* half the flips go to the ELF header */
				if (rand_r(&seed) & 1)
					pos %= sizeof(Elf64_Ehdr);
				img.buf[pos] ^= 1u << (rand_r(&seed) % 8);
			}
			es = elf_syms__open_mem(img.buf, img.len);
			if (!es) {
				assert_true(errno == EINVAL || errno == EFBIG || errno == ENOMEM);
				continue;
			}
			parsed++;
			exercise(es);
			elf_syms__free(es);
		}
		free(img.buf);
		free(orig.buf);
	}
	/* most single flips land in bytes the parser ignores */
	assert_true(parsed > 0);
}

/*
 * A synthetic ET_DYN image: ELF header, string table, symbol table, then
 * section headers [null, .text (NOBITS at 0x1000, 0x1000 bytes), .symtab,
 * .strtab].  Symbol 0 is the null symbol; the caller fills 1..nsyms.
 */
#define SYNTH_TEXT_ADDR 0x1000
#define SYNTH_TEXT_SIZE 0x1000

struct synth {
	struct image img;
	Elf64_Sym *syms; /* nsyms + 1 entries */
	char *strtab;
};

static void synth_alloc(struct synth *s, size_t nsyms, size_t strsz)
{
	size_t str_off = sizeof(Elf64_Ehdr), sym_off, sh_off;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;

	sym_off = (str_off + strsz + 7) & ~7ul;
	sh_off = sym_off + (nsyms + 1) * sizeof(Elf64_Sym);
	s->img.len = sh_off + 4 * sizeof(Elf64_Shdr);
	s->img.buf = calloc(1, s->img.len);
	assert_non_null(s->img.buf);
	s->strtab = (char *)s->img.buf + str_off;
	s->syms = (Elf64_Sym *)(s->img.buf + sym_off);

	eh = image_ehdr(&s->img);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] =
		__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = sh_off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 4;
	eh->e_shstrndx = SHN_UNDEF;

	sh = image_shdr(&s->img, 1);
	sh->sh_type = SHT_NOBITS;
	sh->sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	sh->sh_addr = SYNTH_TEXT_ADDR;
	sh->sh_size = SYNTH_TEXT_SIZE;
	sh = image_shdr(&s->img, 2);
	sh->sh_type = SHT_SYMTAB;
	sh->sh_offset = sym_off;
	sh->sh_size = (nsyms + 1) * sizeof(Elf64_Sym);
	sh->sh_entsize = sizeof(Elf64_Sym);
	sh->sh_link = 3;
	sh->sh_addralign = 8;
	sh = image_shdr(&s->img, 3);
	sh->sh_type = SHT_STRTAB;
	sh->sh_offset = str_off;
	sh->sh_size = strsz;
	sh->sh_addralign = 1;
}

static void synth_sym(struct synth *s, size_t idx, uint32_t name, unsigned char bind,
		      unsigned char type, uint64_t value, uint64_t size)
{
	Elf64_Sym *sym = &s->syms[idx];

	sym->st_name = name;
	sym->st_info = ELF64_ST_INFO(bind, type);
	sym->st_shndx = 1;
	sym->st_value = value;
	sym->st_size = size;
}

static void elf_syms__open_mem__long_name__truncated(void **state)
{
	const size_t long_len = 3 * ELF_SYMS_MAX_NAME;
	struct elf_syms *es;
	struct synth s;
	const char *name;

	synth_alloc(&s, 1, long_len + 2);
	memset(s.strtab + 1, 'n', long_len);
	synth_sym(&s, 1, 1, STB_GLOBAL, STT_FUNC, SYNTH_TEXT_ADDR, 16);
	es = elf_syms__open_mem(s.img.buf, s.img.len);
	assert_non_null(es);
	name = elf_syms__lookup(es, SYNTH_TEXT_ADDR + 3, NULL);
	assert_non_null(name);
	assert_int_equal(strlen(name), ELF_SYMS_MAX_NAME - 1);
	assert_int_equal(strspn(name, "n"), ELF_SYMS_MAX_NAME - 1);
	elf_syms__free(es);
	free(s.img.buf);
}

/*
 * Past ELF_SYMS_MAX_SYMBOLS the table is refused whole (a cut one would
 * name addresses after the wrong function): the file is still parsed, with
 * no symbols, and says why.
 */
static void elf_syms__open_mem__too_many_symbols__refused_not_cut(void **state)
{
	const size_t n = ELF_SYMS_MAX_SYMBOLS + 1;
	struct elf_syms *es;
	struct synth s;
	size_t i;

	synth_alloc(&s, n, 3);
	memcpy(s.strtab, "\0f", 3);
	for (i = 1; i <= n; i++)
		synth_sym(&s, i, 1, STB_GLOBAL, STT_FUNC, SYNTH_TEXT_ADDR + i % SYNTH_TEXT_SIZE, 1);
	es = elf_syms__open_mem(s.img.buf, s.img.len);
	assert_non_null(es);
	assert_true(elf_syms__over_budget(es));
	assert_int_equal(elf_syms__nr_symbols(es), 0);
	assert_null(elf_syms__lookup(es, SYNTH_TEXT_ADDR + 1, NULL));
	elf_syms__free(es);

	/* one fewer: kept, every one of them */
	s.syms[n].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
	es = elf_syms__open_mem(s.img.buf, s.img.len);
	assert_non_null(es);
	assert_false(elf_syms__over_budget(es));
	assert_true(elf_syms__nr_symbols(es) > 0);
	elf_syms__free(es);
	free(s.img.buf);
}

/* which entries are kept, and how aliases and overlaps are settled */
static void elf_syms__open_mem__synthetic_table__kept_and_settled(void **state)
{
	static const char strtab[] = "\0glob\0aaaa\0obj\0undef\0abs\0ifunc\0zero\0outer\0inner";
	const uint32_t glob = 1, aaaa = 6, obj = 11, undef = 15, abs = 21, ifunc = 25, zero = 31,
		       outer = 36, inner = 42;
	const uint64_t t = SYNTH_TEXT_ADDR;
	struct elf_syms *es;
	uint64_t off, start, end;
	struct synth s;

	synth_alloc(&s, 11, sizeof(strtab));
	memcpy(s.strtab, strtab, sizeof(strtab));
	/* weak and size-0 aliases lose to glob, whatever their order and names */
	synth_sym(&s, 1, aaaa, STB_WEAK, STT_FUNC, t, 0x10);
	synth_sym(&s, 2, abs, STB_GLOBAL, STT_FUNC, t, 0);
	synth_sym(&s, 3, glob, STB_GLOBAL, STT_FUNC, t, 0x10);
	/* not functions, or not defined here */
	synth_sym(&s, 4, obj, STB_GLOBAL, STT_OBJECT, t + 0x20, 8);
	synth_sym(&s, 5, undef, STB_GLOBAL, STT_FUNC, t + 0x30, 8);
	s.syms[5].st_shndx = SHN_UNDEF;
	synth_sym(&s, 6, abs, STB_GLOBAL, STT_FUNC, t + 0x40, 8);
	s.syms[6].st_shndx = SHN_ABS;
	synth_sym(&s, 7, ifunc, STB_GLOBAL, STT_GNU_IFUNC, t + 0x50, 8);
	/* a sized symbol is cut where the next one starts */
	synth_sym(&s, 8, outer, STB_LOCAL, STT_FUNC, t + 0x100, 0x100);
	synth_sym(&s, 9, inner, STB_LOCAL, STT_FUNC, t + 0x180, 0x10);
	/* size 0, last in .text: covers to the end of .text */
	synth_sym(&s, 10, zero, STB_LOCAL, STT_FUNC, t + 0x800, 0);
	/* address 0 is never kept */
	synth_sym(&s, 11, glob, STB_GLOBAL, STT_FUNC, 0, 8);

	es = elf_syms__open_mem(s.img.buf, s.img.len);
	assert_non_null(es);
	assert_int_equal(elf_syms__nr_symbols(es), 5);
	assert_true(elf_syms__is_dyn(es));
	assert_null(elf_syms__build_id(es));

	assert_string_equal(elf_syms__lookup(es, t + 0xf, &off), "glob");
	assert_int_equal(off, 0xf);
	assert_null(elf_syms__lookup(es, t + 0x10, NULL));
	assert_null(elf_syms__lookup(es, t + 0x20, NULL));
	assert_null(elf_syms__lookup(es, t + 0x30, NULL));
	assert_null(elf_syms__lookup(es, t + 0x40, NULL));
	assert_string_equal(elf_syms__lookup(es, t + 0x57, NULL), "ifunc");
	assert_string_equal(elf_syms__lookup(es, t + 0x17f, NULL), "outer");
	assert_string_equal(elf_syms__lookup(es, t + 0x180, NULL), "inner");
	assert_null(elf_syms__lookup(es, t + 0x190, NULL));
	assert_string_equal(elf_syms__lookup(es, t + SYNTH_TEXT_SIZE - 1, &off), "zero");
	assert_int_equal(off, SYNTH_TEXT_SIZE - 1 - 0x800);
	assert_null(elf_syms__lookup(es, t + SYNTH_TEXT_SIZE, NULL));

	assert_string_equal(elf_syms__symbol(es, 2, &start, &end), "outer");
	assert_int_equal(start, t + 0x100);
	assert_int_equal(end, t + 0x180);
	/* no program headers: no segments */
	assert_int_equal(elf_syms__file_offset_to_vaddr(es, 0, &off), -ENOENT);
	exercise(es);
	elf_syms__free(es);

	/* st_shndx past the section table: skipped, not trusted */
	s.syms[3].st_shndx = 77;
	s.syms[1].st_shndx = 77;
	s.syms[2].st_shndx = 77;
	es = elf_syms__open_mem(s.img.buf, s.img.len);
	assert_non_null(es);
	assert_int_equal(elf_syms__nr_symbols(es), 4);
	assert_null(elf_syms__lookup(es, t, NULL));
	elf_syms__free(es);
	free(s.img.buf);
}

/*
 * perf's rule among aliases, each step alone, whatever the table's order
 * (but the last step, which is that order): sized, non-weak, global, fewest
 * leading underscores, longest name, first in the table.
 */
static void elf_syms__open_mem__aliases__perf_rule_step_by_step(void **state)
{
	static const char strtab[] = "\0abc\0abd\0lock\0lock_slow\0x_weak\0x_local\0__m\0m"
				     "\0_m\0z_sized_weak\0z_global";
	const uint32_t abc = 1, abd = 5, lock = 9, lock_slow = 14, x_weak = 24, x_local = 31,
		       um = 39, m = 43, u1m = 45, z_sized_weak = 48, z_global = 61;
	const uint64_t t = SYNTH_TEXT_ADDR;
	struct {
		uint32_t name;
		unsigned char bind;
		uint64_t at, size;
	} syms[] = {
		/* a tie: the first in the table */
		{abc, STB_GLOBAL, t, 0x10},
		{abd, STB_GLOBAL, t, 0x10},
		/* the longest name */
		{lock, STB_GLOBAL, t + 0x20, 0x10},
		{lock_slow, STB_GLOBAL, t + 0x20, 0x10},
		/* non-weak over weak, even local */
		{x_weak, STB_WEAK, t + 0x40, 0x10},
		{x_local, STB_LOCAL, t + 0x40, 0x10},
		/* fewest underscores, before length */
		{um, STB_GLOBAL, t + 0x60, 0x10},
		{u1m, STB_GLOBAL, t + 0x60, 0x10},
		{m, STB_GLOBAL, t + 0x60, 0x10},
		/* sized first, even weak */
		{z_global, STB_GLOBAL, t + 0x80, 0},
		{z_sized_weak, STB_WEAK, t + 0x80, 0x10},
	};
	const size_t n = sizeof(syms) / sizeof(syms[0]);
	const char *want[] = {"abc", "lock_slow", "x_local", "m", "z_sized_weak"};
	struct elf_syms *es;
	struct synth s;
	size_t i, pass;

	assert_string_equal(strtab + z_global, "z_global");
	for (pass = 0; pass < 2; pass++) {
		synth_alloc(&s, n, sizeof(strtab));
		memcpy(s.strtab, strtab, sizeof(strtab));
		/* the second pass writes the table backwards */
		for (i = 0; i < n; i++) {
			size_t k = pass ? n - 1 - i : i;

			synth_sym(&s, i + 1, syms[k].name, syms[k].bind, STT_FUNC, syms[k].at,
				  syms[k].size);
		}
		es = elf_syms__open_mem(s.img.buf, s.img.len);
		assert_non_null(es);
		assert_int_equal(elf_syms__nr_symbols(es), 5);
		assert_string_equal(elf_syms__lookup(es, t, NULL), pass ? "abd" : "abc");
		for (i = 1; i < 5; i++)
			assert_string_equal(elf_syms__lookup(es, t + 0x20 * i, NULL), want[i]);
		exercise(es);
		elf_syms__free(es);
		free(s.img.buf);
	}
}

/* a section header table but no symbol table: a valid, empty result */
static void elf_syms__open_mem__no_symbol_table__empty(void **state)
{
	struct elf_syms *es;
	struct synth s;

	synth_alloc(&s, 1, 3);
	memcpy(s.strtab, "\0f", 3);
	synth_sym(&s, 1, 1, STB_GLOBAL, STT_FUNC, SYNTH_TEXT_ADDR, 1);
	image_shdr(&s.img, 2)->sh_type = SHT_PROGBITS;
	es = elf_syms__open_mem(s.img.buf, s.img.len);
	assert_non_null(es);
	assert_int_equal(elf_syms__nr_symbols(es), 0);
	assert_null(elf_syms__lookup(es, SYNTH_TEXT_ADDR, NULL));
	assert_null(elf_syms__symbol(es, 0, NULL, NULL));
	elf_syms__free(es);
	free(s.img.buf);
}

/* elf_syms__open_fd() of a tests/hostile_elf.py file made in @dir with @args */
static struct elf_syms *open_hostile(const char *dir, const char *args)
{
	struct elf_syms *es;
	int fd;

	fd = open(fixture_hostile_elf(dir, "hostile.so", args), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	es = elf_syms__open_fd(fd);
	close(fd);
	assert_non_null(es);
	return es;
}

/*
 * The MiniDebugInfo bomb of the budgets' issue, smaller: 1.4 million
 * functions, all named "f", xz-compressed to a few hundred KiB.  Their
 * table decompresses past ELF_SYMS_MAX_MINIDEBUG: refused, never parsed;
 * the file keeps its .dynsym.
 */
static void elf_syms__open_fd__minidebuginfo_bomb__refused_dynsym_kept(void **state)
{
	char *dir = fixture_tmpdir("elf_syms");
	struct elf_syms *es = open_hostile(dir, "minidebug --symbols 1400000");

	assert_int_equal(elf_syms__minidebug(es), ELF_SYMS_MINIDEBUG_TOO_BIG);
	assert_int_equal(elf_syms__nr_symbols(es), 1);
	assert_string_equal(elf_syms__symbol(es, 0, NULL, NULL), "entry");
	assert_false(elf_syms__over_budget(es));
	assert_true(elf_syms__bytes(es) < 4096);
	elf_syms__free(es);
	fixture_tmpdir_remove(dir);
}

/*
 * A MiniDebugInfo whose 20000 functions share one name: the name is kept
 * once, and what the file holds is what its table holds.
 */
static void elf_syms__open_fd__shared_names__kept_once(void **state)
{
	char *dir = fixture_tmpdir("elf_syms");
	struct elf_syms *es = open_hostile(dir, "minidebug --symbols 20000");
	size_t i;

	assert_int_equal(elf_syms__minidebug(es), ELF_SYMS_MINIDEBUG_OK);
	assert_int_equal(elf_syms__nr_symbols(es), 20001);
	for (i = 1; i < 20000; i += 997)
		assert_ptr_equal(elf_syms__symbol(es, i, NULL, NULL),
				 elf_syms__symbol(es, 1, NULL, NULL));
	/* 24 bytes a symbol, and little else */
	assert_true(elf_syms__bytes(es) >= 20001 * 24);
	assert_true(elf_syms__bytes(es) < 20001 * 24 + (256u << 10));
	elf_syms__free(es);
	fixture_tmpdir_remove(dir);
}

/*
 * The per-file budget: the same table fits one budget and not a smaller
 * one, refused whole then (no symbol, not a cut table); the file itself is
 * still read.
 */
static void elf_syms__open_file__names_past_budget__refused_whole(void **state)
{
	char *dir = fixture_tmpdir("elf_syms");
	struct elf_file *ef;
	struct elf_syms *es;
	int fd;

	/* 20000 functions with distinct 200-byte names: 4 MiB of names */
	fd = open(fixture_hostile_elf(dir, "names.so", "symtab --symbols 20000 --name-len 200"),
		  O_RDONLY);
	assert_true(fd >= 0);
	ef = elf_file__open_fd(fd);
	close(fd);
	assert_non_null(ef);
	es = elf_syms__open_file(ef, 8u << 20);
	assert_non_null(es);
	assert_false(elf_syms__over_budget(es));
	assert_int_equal(elf_syms__nr_symbols(es), 20000);
	assert_true(elf_syms__bytes(es) > 20000 * (24 + 200));
	assert_true(elf_syms__bytes(es) <= 8u << 20);
	elf_syms__free(es);
	es = elf_syms__open_file(ef, 2u << 20);
	assert_non_null(es);
	assert_true(elf_syms__over_budget(es));
	assert_int_equal(elf_syms__nr_symbols(es), 0);
	assert_null(elf_syms__lookup(es, 0x100000, NULL));
	assert_true(elf_syms__is_dyn(es));
	elf_syms__free(es);
	elf_file__free(ef);
	fixture_tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(elf_syms__open_mem__same_bytes__same_result_as_open_fd),
		cmocka_unit_test(elf_syms__open_mem__empty_or_null__einval),
		cmocka_unit_test(elf_syms__open_mem__truncated__einval),
		cmocka_unit_test(elf_syms__open_mem__huge_e_shoff__einval),
		cmocka_unit_test(elf_syms__open_mem__huge_e_shnum__einval),
		cmocka_unit_test(elf_syms__open_mem__huge_e_phnum__einval),
		cmocka_unit_test(elf_syms__open_mem__bad_symtab_sh_link__einval),
		cmocka_unit_test(elf_syms__open_mem__huge_st_name__einval),
		cmocka_unit_test(elf_syms__open_mem__huge_section_sizes__einval),
		cmocka_unit_test(elf_syms__open_mem__unterminated_strtab__einval),
		cmocka_unit_test(elf_syms__open_mem__huge_note_sizes__parsed_without_build_id),
		cmocka_unit_test(elf_syms__open_mem__wrong_class_or_byte_order__einval),
		cmocka_unit_test(elf_syms__open_mem__random_bytes__einval),
		cmocka_unit_test(elf_syms__open_mem__random_mutations__no_crash),
		cmocka_unit_test(elf_syms__open_mem__long_name__truncated),
		cmocka_unit_test(elf_syms__open_mem__too_many_symbols__refused_not_cut),
		cmocka_unit_test(elf_syms__open_mem__synthetic_table__kept_and_settled),
		cmocka_unit_test(elf_syms__open_mem__aliases__perf_rule_step_by_step),
		cmocka_unit_test(elf_syms__open_mem__no_symbol_table__empty),
		cmocka_unit_test(elf_syms__open_fd__minidebuginfo_bomb__refused_dynsym_kept),
		cmocka_unit_test(elf_syms__open_fd__shared_names__kept_once),
		cmocka_unit_test(elf_syms__open_file__names_past_budget__refused_whole),
	};

	return cmocka_run_group_tests_name("elf_syms_hostile", tests, NULL, NULL);
}
