// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/elf/gopclntab.c, and what uses it (elf_syms' names
 * of stripped Go programs, unwind/go_rows' rows), against a real Go
 * program built by tests/unit/go_fixtures.mk with Debian's go: normal
 * (.symtab and .debug_frame: the truth the stripped builds are checked
 * against), -ldflags='-s -w', -buildmode=pie, and that linked by gcc;
 * each table layout (Go 1.16, 1.18, 1.20) from the fuzz target's seeds
 * (tests/fuzz/gen_gopclntab.py).  Then hostile mutations
 * of the stripped one's .gopclntab: bad offsets, counts past the section,
 * an unsorted table, a pc-value table that never advances.
 * Fixtures are looked up in $FIXTURES_DIR, else $OUTPUT/fixtures, else
 * build/fixtures (the test runs from the repository root).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "elf/gopclntab.h"
#include "fixtures.h"
#include "symbols/elf_syms.h"
#include "unwind/unwind_table.h"

#define FIXTURE_FULL	 "go/go_fixture"
#define FIXTURE_STRIPPED "go/go_fixture_stripped"
#define FIXTURE_PIE	 "go/go_fixture_pie"
#define FIXTURE_EXTPIE	 "go/go_fixture_extpie"

#define MAX_BYTES (64u << 20)

/* a fixture's bytes, its elf_file over them, and where its .gopclntab is */
struct image {
	uint8_t *buf;
	size_t len;
	struct elf_file *ef;
	uint64_t sec_off; /* of .gopclntab in the file */
	uint64_t sec_size;
};

static const char *fixture_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("FIXTURES_DIR");
	const char *output = getenv("OUTPUT");

	if (dir && *dir)
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else if (output && *output)
		snprintf(path, sizeof(path), "%s/fixtures/%s", output, name);
	else
		snprintf(path, sizeof(path), "build/fixtures/%s", name);
	if (access(path, R_OK) != 0)
		fail_msg("fixture %s missing: run make check (tests/unit/go_fixtures.mk)", path);
	return path;
}

static void image_load(struct image *im, const char *name)
{
	const Elf64_Shdr *sh;

	memset(im, 0, sizeof(*im));
	fixture_read_file(fixture_path(name), &im->buf, &im->len);
	im->ef = elf_file__open_mem(im->buf, im->len);
	assert_non_null(im->ef);
	sh = elf_file__section(im->ef, elf_file__find_section(im->ef, ".gopclntab"));
	/* where a position-independent build has it */
	if (!sh)
		sh = elf_file__section(im->ef,
				       elf_file__find_section(im->ef, ".data.rel.ro.gopclntab"));
	if (!sh) {
		/* merged into .data.rel.ro by an external linker: found by the table */
		im->sec_off = UINT64_MAX;
		return;
	}
	im->sec_off = sh->sh_offset;
	im->sec_size = sh->sh_size;
}

/* the elf_file again, after the bytes changed */
static void image_reopen(struct image *im)
{
	elf_file__free(im->ef);
	im->ef = elf_file__open_mem(im->buf, im->len);
	assert_non_null(im->ef);
}

static void image_free(struct image *im)
{
	elf_file__free(im->ef);
	free(im->buf);
}

static void expect_refused(struct image *im, int err)
{
	image_reopen(im);
	errno = 0;
	assert_null(gopclntab__open(im->ef, MAX_BYTES));
	assert_int_equal(errno, err);
}

static struct gopclntab *open_table(struct image *im)
{
	struct gopclntab *g = gopclntab__open(im->ef, MAX_BYTES);

	assert_non_null(g);
	return g;
}

/* a word of the section header (after magic, pads, quantum, pointer size) */
static uint64_t *header_word(struct image *im, unsigned int i)
{
	return (uint64_t *)(im->buf + im->sec_off + 8 + 8 * i);
}

static void find_func(const struct gopclntab *g, const char *name, struct gopclntab_func *f)
{
	size_t i;

	for (i = 0; i < gopclntab__nr_funcs(g); i++)
		if (!gopclntab__func(g, i, f) && f->name && !strcmp(f->name, name))
			return;
	fail_msg("no function %s in the table", name);
}

/* the line of @path holding @marker (go_fixture.go's GOFIXTURE comments) */
static uint32_t marker_line(const char *path, const char *marker)
{
	char line[512];
	uint32_t n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		fail_msg("cannot read %s (the table's file name of the fixture's source)", path);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no line with %s in %s", marker, path);
	return 0;
}

/* a name as .symtab has it, as the table does: no ".abi0", "[...]" for type arguments */
static bool same_name(const char *symtab, const char *table)
{
	size_t len = strlen(symtab);
	const char *bracket = strchr(table, '[');

	if (len > 5 && !strcmp(symtab + len - 5, ".abi0"))
		len -= 5;
	if (bracket && !strncmp(bracket, "[...]", 5))
		return !strncmp(symtab, table, bracket - table);
	return strlen(table) == len && !strncmp(symtab, table, len);
}

/* --- names ---------------------------------------------------------------- */

/*
 * Every function of the stripped build's table starts where the normal
 * build's .symtab has a function symbol of that name (the two builds are
 * of one source with one toolchain: the same code at the same addresses).
 */
static void gopclntab__func__stripped_build__every_function_as_symtab_names_it(void **state)
{
	struct image full, stripped;
	struct gopclntab *g;
	struct gopclntab_func f;
	struct elf_symtab st;
	uint64_t prev_end = 0;
	size_t i, k, checked = 0;
	char name[1024];
	Elf64_Sym sym;

	image_load(&full, FIXTURE_FULL);
	image_load(&stripped, FIXTURE_STRIPPED);
	g = open_table(&stripped);
	assert_int_equal(gopclntab__version(g), GOPCLNTAB_GO118); /* Debian 12's go 1.19 */
	assert_true(gopclntab__nr_funcs(g) > 1000);
	assert_int_equal(elf_file__symtab(full.ef, SHT_SYMTAB, &st), 0);
	for (i = 0; i < gopclntab__nr_funcs(g); i++) {
		bool found = false;

		assert_int_equal(gopclntab__func(g, i, &f), 0);
		assert_non_null(f.name);
		assert_true(f.entry < f.end && f.entry >= prev_end);
		prev_end = f.end;
		for (k = 1; k < st.nr && !found; k++) {
			assert_int_equal(elf_symtab__get(&st, k, &sym), 0);
			if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value != f.entry)
				continue;
			assert_int_equal(
				elf_symtab__name(&st, sym.st_name, name, sizeof(name), NULL), 0);
			found = same_name(name, f.name);
		}
		if (!found)
			fail_msg("%s at %#lx: no such symbol in .symtab", f.name,
				 (unsigned long)f.entry);
		checked++;
	}
	assert_int_equal(checked, gopclntab__nr_funcs(g));
	assert_int_equal(gopclntab__func(g, i, &f), -ENOENT);
	elf_symtab__release(&st);
	gopclntab__free(g);
	image_free(&full);
	image_free(&stripped);
}

static void gopclntab__find__addresses__function_holding_them(void **state)
{
	struct gopclntab_func leaf, f;
	struct image im;
	struct gopclntab *g;

	image_load(&im, FIXTURE_STRIPPED);
	g = open_table(&im);
	find_func(g, "main.goFixtureLeaf", &leaf);
	assert_int_equal(gopclntab__find(g, leaf.entry, &f), 0);
	assert_int_equal(f.entry, leaf.entry);
	assert_int_equal(gopclntab__find(g, leaf.end - 1, &f), 0);
	assert_string_equal(f.name, "main.goFixtureLeaf");
	assert_int_equal(gopclntab__find(g, leaf.end, &f), 0);
	assert_string_not_equal(f.name, "main.goFixtureLeaf");
	assert_int_equal(gopclntab__find(g, 0, &f), -ENOENT);
	assert_int_equal(gopclntab__find(g, UINT64_MAX, &f), -ENOENT);
	gopclntab__free(g);
	image_free(&im);
}

/* the runtime flags its stack roots and its stack switches */
static void gopclntab__func__runtime__roots_and_switches_flagged(void **state)
{
	static const char *const roots[] = {"runtime.goexit", "runtime.mstart", "runtime.rt0_go"};
	static const char *const switches[] = {"runtime.mcall", "runtime.systemstack",
					       "runtime.morestack"};
	struct gopclntab_func f;
	struct image im;
	struct gopclntab *g;
	size_t i;

	image_load(&im, FIXTURE_STRIPPED);
	g = open_table(&im);
	for (i = 0; i < 3; i++) {
		find_func(g, roots[i], &f);
		assert_true(f.flag & GOPCLNTAB_FLAG_TOPFRAME);
		find_func(g, switches[i], &f);
		assert_true(f.flag & GOPCLNTAB_FLAG_SPWRITE);
		assert_false(f.flag & GOPCLNTAB_FLAG_TOPFRAME);
	}
	find_func(g, "main.goFixtureLeaf", &f);
	assert_int_equal(f.flag, 0);
	gopclntab__free(g);
	image_free(&im);
}

/* --- lines and inlined calls ---------------------------------------------- */

static void check_frames(const char *fixture)
{
	struct gopclntab_frame fr[GOPCLNTAB_MAX_DEPTH];
	struct gopclntab_func leaf, outer;
	uint32_t body, call;
	struct image im;
	struct gopclntab *g;
	bool inlined = false;
	uint64_t pc;
	size_t n;

	image_load(&im, fixture);
	g = open_table(&im);
	assert_int_equal(gopclntab__open_inline(g, im.ef, MAX_BYTES), 0);
	assert_true(gopclntab__has_inline(g));
	find_func(g, "main.goFixtureLeaf", &leaf);
	n = gopclntab__frames(g, &leaf, leaf.entry, fr, GOPCLNTAB_MAX_DEPTH);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].function, "main.goFixtureLeaf");
	assert_non_null(fr[0].file);
	assert_non_null(strstr(fr[0].file, "go_fixture.go"));
	assert_int_equal(fr[0].line, marker_line(fr[0].file, "GOFIXTURE leaf"));
	body = marker_line(fr[0].file, "GOFIXTURE inlined body");
	call = marker_line(fr[0].file, "GOFIXTURE inlined call");

	find_func(g, "main.goFixtureOuter", &outer);
	for (pc = outer.entry; pc < outer.end; pc++) {
		n = gopclntab__frames(g, &outer, pc, fr, GOPCLNTAB_MAX_DEPTH);
		assert_true(n >= 1);
		assert_string_equal(fr[n - 1].function, "main.goFixtureOuter");
		if (n == 1)
			continue;
		assert_int_equal(n, 2);
		assert_string_equal(fr[0].function, "main.goFixtureInlined");
		assert_int_equal(fr[0].line, body);
		assert_int_equal(fr[1].line, call);
		inlined = true;
	}
	assert_true(inlined);
	/* room for one frame: the function itself */
	assert_int_equal(gopclntab__frames(g, &outer, pc - 1, fr, 1), 1);
	gopclntab__free(g);
	image_free(&im);
}

static void gopclntab__frames__stripped_build__lines_and_inlined_call(void **state)
{
	check_frames(FIXTURE_STRIPPED);
}

static void gopclntab__frames__pie_build__lines_and_inlined_call(void **state)
{
	check_frames(FIXTURE_PIE);
}

/* no .gopclntab: the table is found by its header inside .data.rel.ro */
static void gopclntab__frames__external_pie_build__found_in_relro(void **state)
{
	check_frames(FIXTURE_EXTPIE);
}

/* a file that does not say it is Go's: its .data.rel.ro is not searched */
static void gopclntab__open__relro_of_a_file_not_go__not_searched(void **state)
{
	const Elf64_Shdr *names, *sh;
	struct image im;
	const char *name;
	size_t i;

	image_load(&im, FIXTURE_EXTPIE);
	gopclntab__free(open_table(&im));
	names = elf_file__section(im.ef, elf_file__ehdr(im.ef)->e_shstrndx);
	assert_non_null(names);
	/* ".go.buildinfo" and ".note.go.buildid" become ".Xo..." and ".Xote..." */
	for (i = 1; i < elf_file__nr_sections(im.ef); i++) {
		sh = elf_file__section(im.ef, i);
		name = elf_file__section_name(im.ef, i);
		if (name && (!strcmp(name, ".go.buildinfo") || !strcmp(name, ".note.go.buildid")))
			im.buf[names->sh_offset + sh->sh_name + 1] = 'X';
	}
	expect_refused(&im, ENOENT);
	image_free(&im);
}

/* the trees past their cap are left out: the outer function only */
static void gopclntab__open_inline__past_cap__refused_outer_function_only(void **state)
{
	struct gopclntab_frame fr[4];
	struct gopclntab_func outer;
	struct image im;
	struct gopclntab *g;
	uint64_t pc;

	image_load(&im, FIXTURE_STRIPPED);
	g = open_table(&im);
	assert_int_equal(gopclntab__open_inline(g, im.ef, 64), -E2BIG);
	assert_false(gopclntab__has_inline(g));
	find_func(g, "main.goFixtureOuter", &outer);
	for (pc = outer.entry; pc < outer.end; pc++)
		assert_int_equal(gopclntab__frames(g, &outer, pc, fr, 4), 1);
	gopclntab__free(g);
	image_free(&im);
}

/* --- each layout: the seeds of tests/fuzz/gen_gopclntab.py ----------------- */

/*
 * A seed wrapped as fuzz_gopclntab.c wraps it: one PT_LOAD at 0x400000 over
 * the file, .gopclntab at offset 0x1000, .text at 0x500000.
 */
static uint8_t *wrap_seed(const uint8_t *data, size_t size, size_t *len)
{
	static const char names[] = "\0.shstrtab\0.text\0.gopclntab";
	size_t sh_off = (0x1000 + size + 7) & ~(size_t)7;
	Elf64_Shdr sh[4] = {
		[1] = {.sh_name = 1,
		       .sh_type = SHT_STRTAB,
		       .sh_offset = 0x100,
		       .sh_size = sizeof(names)},
		[2] = {.sh_name = 11, .sh_type = SHT_PROGBITS, .sh_addr = 0x500000, .sh_size = 16},
		[3] = {.sh_name = 17,
		       .sh_type = SHT_PROGBITS,
		       .sh_addr = 0x401000,
		       .sh_offset = 0x1000,
		       .sh_size = size},
	};
	Elf64_Phdr ph = {.p_type = PT_LOAD,
			 .p_flags = PF_R | PF_W | PF_X,
			 .p_vaddr = 0x400000,
			 .p_filesz = sh_off,
			 .p_memsz = 0x200000,
			 .p_align = 0x1000};
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
		.e_shnum = 4,
		.e_shstrndx = 1,
	};
	uint8_t *buf;

	*len = sh_off + sizeof(sh);
	buf = calloc(1, *len);
	assert_non_null(buf);
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	memcpy(buf + 0x100, names, sizeof(names));
	memcpy(buf + 0x1000, data, size);
	memcpy(buf + sh_off, sh, sizeof(sh));
	return buf;
}

/* what gen_gopclntab.py wrote: the same four functions in each layout */
static void check_seed(const char *name, enum gopclntab_version version)
{
	struct gopclntab_frame fr[4];
	struct gopclntab_func f;
	struct unwind_table *t = NULL;
	struct elf_file *ef;
	struct gopclntab *g;
	uint8_t *data, *file;
	size_t len, flen;
	char path[256], err[256];

	snprintf(path, sizeof(path), "tests/fuzz/corpus/gopclntab/%s", name);
	fixture_read_file(path, &data, &len);
	file = wrap_seed(data, len, &flen);
	ef = elf_file__open_mem(file, flen);
	assert_non_null(ef);
	g = gopclntab__open(ef, MAX_BYTES);
	assert_non_null(g);
	assert_int_equal(gopclntab__version(g), version);
	assert_int_equal(gopclntab__nr_funcs(g), 4);
	assert_int_equal(gopclntab__open_inline(g, ef, MAX_BYTES), 0);
	assert_true(gopclntab__has_inline(g));
	assert_int_equal(gopclntab__func(g, 0, &f), 0);
	assert_string_equal(f.name, "main.a");
	assert_int_equal(f.entry, 0x500000);
	assert_int_equal(f.end, 0x500040);
	/* a line, then the inlined call: its body's line, the call site's */
	assert_int_equal(gopclntab__frames(g, &f, 0x500010, fr, 4), 1);
	assert_string_equal(fr[0].file, "/src/a.go");
	assert_int_equal(fr[0].line, 11);
	assert_int_equal(gopclntab__frames(g, &f, 0x500024, fr, 4), 2);
	assert_string_equal(fr[0].function, "main.inl");
	assert_string_equal(fr[0].file, "/src/inl.go");
	assert_int_equal(fr[0].line, 3);
	assert_string_equal(fr[1].function, "main.a");
	assert_int_equal(fr[1].line, 10);
	assert_int_equal(gopclntab__func(g, 1, &f), 0);
	assert_string_equal(f.name, "runtime.goexit");
	assert_int_equal(gopclntab__func(g, 2, &f), 0);
	assert_string_equal(f.name, "runtime.mcall");
	if (version != GOPCLNTAB_GO116) {
		assert_true(f.flag & GOPCLNTAB_FLAG_SPWRITE);
	}
	/* rows: the frame from pcsp, the root, the switch (Go 1.16: by name) */
	assert_int_equal(unwind_table__build(ef, NULL, NULL, &t, err, sizeof(err)), 0);
	assert_int_equal(unwind_table__find(t, 0x500008)->cmd, UNWIND_CMD_CFA_RSP);
	assert_int_equal(unwind_table__find(t, 0x500008)->cfa_off, 0x20);
	assert_int_equal(unwind_table__find(t, 0x500008)->rbp, UNWIND_RBP_CFA);
	assert_int_equal(unwind_table__find(t, 0x500040)->cmd, UNWIND_CMD_END);
	assert_int_equal(unwind_table__find(t, 0x500070)->cmd, UNWIND_CMD_GO_SYSTEM_STACK);
	assert_int_equal(unwind_table__find(t, 0x500080)->cfa_off, 8);
	/* outside Go's functions: frame pointers, as without a table */
	assert_int_equal(unwind_table__find(t, 0x500100)->cmd, UNWIND_CMD_FP);
	unwind_table__free(t);
	gopclntab__free(g);
	elf_file__free(ef);
	free(file);
	free(data);
}

static void gopclntab__open__each_layout__names_lines_inlined_rows(void **state)
{
	check_seed("go116", GOPCLNTAB_GO116);
	check_seed("go118", GOPCLNTAB_GO118);
	check_seed("go120", GOPCLNTAB_GO120);
	/* the same table, Go 1.27's moduledata: gofunc 3 words further */
	check_seed("go127", GOPCLNTAB_GO120);
}

/* --- elf_syms: the names of a Go program without .symtab ------------------ */

static void elf_syms__open_fd__stripped_go__named_from_gopclntab(void **state)
{
	struct gopclntab_frame fr[4];
	struct elf_syms *es, *full;
	struct gopclntab_func outer;
	struct image im;
	uint64_t off, pc;
	size_t n, two = 0;
	int fd;

	fd = open(fixture_path(FIXTURE_STRIPPED), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	es = elf_syms__open_fd(fd);
	close(fd);
	assert_non_null(es);
	assert_int_equal(elf_syms__go(es), ELF_SYMS_GO_OK);
	assert_false(elf_syms__has_symtab(es));
	image_load(&im, FIXTURE_STRIPPED);
	{
		struct gopclntab *g = open_table(&im);

		find_func(g, "main.goFixtureOuter", &outer);
		gopclntab__free(g);
	}
	assert_string_equal(elf_syms__lookup(es, outer.entry + 1, &off), "main.goFixtureOuter");
	assert_int_equal(off, 1);
	assert_true(elf_syms__from_gopclntab(es, elf_syms__lookup(es, outer.entry, NULL)));
	for (pc = outer.entry; pc < outer.end; pc++) {
		n = elf_syms__source(es, pc, fr, 4);
		assert_true(n == 1 || n == 2);
		two += n == 2;
	}
	assert_true(two > 0);
	assert_true(elf_syms__bytes(es) > im.sec_size);
	elf_syms__free(es);
	image_free(&im);

	/* with .symtab: its names, the table not read */
	fd = open(fixture_path(FIXTURE_FULL), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	full = elf_syms__open_fd(fd);
	close(fd);
	assert_non_null(full);
	assert_true(elf_syms__has_symtab(full));
	assert_int_equal(elf_syms__go(full), ELF_SYMS_GO_NONE);
	assert_int_equal(elf_syms__source(full, outer.entry, fr, 4), 0);
	assert_string_equal(elf_syms__lookup(full, outer.entry, NULL), "main.goFixtureOuter");
	elf_syms__free(full);
}

/* --- go_rows: the unwind tables of Go programs ---------------------------- */

static const struct unwind_rule *rule_at(const struct unwind_table *t, const struct gopclntab *g,
					 const char *name, uint64_t delta)
{
	struct gopclntab_func f;

	find_func(g, name, &f);
	return unwind_table__find(t, f.entry + delta);
}

/* every pc of @name has the rule its pcsp table says */
static void check_pcsp_rows(const struct unwind_table *t, const struct gopclntab *g,
			    const char *name)
{
	struct gopclntab_pcvalue it;
	struct gopclntab_func f;
	const struct unwind_rule *r;
	uint64_t lo, hi, pc;
	int32_t sp;

	find_func(g, name, &f);
	assert_int_equal(gopclntab__pcvalue(g, &f, GOPCLNTAB_PCSP, &it), 0);
	while (gopclntab_pcvalue__next(&it, &lo, &hi, &sp) == 1) {
		for (pc = lo; pc < hi; pc++) {
			r = unwind_table__find(t, pc);
			assert_int_equal(r->cmd, UNWIND_CMD_CFA_RSP);
			assert_int_equal(r->cfa_off, sp + 8);
		}
	}
}

static void check_go_table(const char *fixture, const char *source)
{
	struct unwind_table *t = NULL;
	struct image im;
	struct gopclntab *g;
	char err[256];

	image_load(&im, fixture);
	g = open_table(&im);
	assert_int_equal(unwind_table__build(im.ef, NULL, NULL, &t, err, sizeof(err)), 0);
	assert_string_equal(t->source, source);
	assert_true(t->sources & UNWIND_SRC_GOPCLNTAB);
	assert_int_equal(rule_at(t, g, "runtime.goexit", 1)->cmd, UNWIND_CMD_END);
	assert_int_equal(rule_at(t, g, "runtime.mstart", 0)->cmd, UNWIND_CMD_END);
	assert_int_equal(rule_at(t, g, "runtime.mcall", 0)->cmd, UNWIND_CMD_GO_SYSTEM_STACK);
	assert_int_equal(rule_at(t, g, "runtime.systemstack", 8)->cmd, UNWIND_CMD_GO_SYSTEM_STACK);
	assert_int_equal(rule_at(t, g, "runtime.morestack", 0)->cmd, UNWIND_CMD_GO_SYSTEM_STACK);
	/* which switch each is, for the sampler to follow (include/unwind.h) */
	assert_int_equal(rule_at(t, g, "runtime.mcall", 0)->go_switch, UNWIND_GO_SWITCH_MCALL);
	assert_int_equal(rule_at(t, g, "runtime.systemstack", 8)->go_switch,
			 UNWIND_GO_SWITCH_SYSTEMSTACK);
	assert_int_equal(rule_at(t, g, "runtime.morestack", 0)->go_switch,
			 UNWIND_GO_SWITCH_MORESTACK);
	assert_int_equal(rule_at(t, g, "runtime.nanotime1", 0)->go_switch, UNWIND_GO_SWITCH_VDSO);
	assert_int_equal(rule_at(t, g, "runtime.asmcgocall", 0)->go_switch, UNWIND_GO_SWITCH_OTHER);
	/* with their own frame (pcsp) for a sample taken before the switch */
	assert_int_equal(rule_at(t, g, "runtime.mcall", 0)->cfa_off, 8);
	assert_int_equal(rule_at(t, g, "runtime.nanotime1", 0)->cmd, UNWIND_CMD_GO_SYSTEM_STACK);
	assert_int_equal(rule_at(t, g, "runtime.nanotime1", 0)->cfa_off, 8);
	/* where systemstack's goroutine resumes: an ordinary frame */
	assert_int_equal(rule_at(t, g, "runtime.systemstack_switch", 0)->cmd, UNWIND_CMD_CFA_RSP);
	assert_int_equal(rule_at(t, g, "runtime.systemstack_switch", 0)->cfa_off, 8);
	assert_true(t->stats.go_roots >= 3 && t->stats.go_switches >= 3);
	assert_int_equal(t->stats.go_bad, 0);
	/* Go's CFI is made from pcsp: the same rules with it or without */
	check_pcsp_rows(t, g, "main.goFixtureLeaf");
	check_pcsp_rows(t, g, "main.goFixtureOuter");
	check_pcsp_rows(t, g, "main.main");
	check_pcsp_rows(t, g, "runtime.mallocgc");
	unwind_table__free(t);
	gopclntab__free(g);
	image_free(&im);
}

static void unwind_table__build__go_with_cfi__roots_end_switches_stop(void **state)
{
	check_go_table(FIXTURE_FULL, ".debug_frame");
}

static void unwind_table__build__go_without_cfi__rows_from_gopclntab(void **state)
{
	struct unwind_table *t = NULL;
	struct image im;
	char err[256];

	check_go_table(FIXTURE_STRIPPED, ".gopclntab");
	check_go_table(FIXTURE_PIE, ".gopclntab");
	/* CFI for its C parts only: the Go functions' rows from .gopclntab */
	check_go_table(FIXTURE_EXTPIE, ".eh_frame");
	/* nearly all the text is Go's: covered, no debug file wanted */
	image_load(&im, FIXTURE_STRIPPED);
	assert_int_equal(unwind_table__build(im.ef, NULL, NULL, &t, err, sizeof(err)), 0);
	assert_true(t->stats.go_funcs > 1000);
	assert_true(t->stats.covered_bytes > t->stats.text_bytes / 4 * 3);
	unwind_table__free(t);
	image_free(&im);
}

/* --- hostile tables -------------------------------------------------------- */

static void gopclntab__open__hostile_header__refused(void **state)
{
	struct image im;
	uint64_t saved;
	uint32_t magic;
	unsigned int i;

	image_load(&im, FIXTURE_STRIPPED);
	/* each table offset past the section */
	for (i = 3; i < 8; i++) {
		saved = *header_word(&im, i);
		*header_word(&im, i) = im.sec_size;
		expect_refused(&im, EINVAL);
		*header_word(&im, i) = UINT64_MAX;
		expect_refused(&im, EINVAL);
		*header_word(&im, i) = saved;
	}
	/* more functions than the caps, then than the section holds */
	saved = *header_word(&im, 0);
	*header_word(&im, 0) = UINT64_MAX / 2;
	expect_refused(&im, E2BIG);
	*header_word(&im, 0) = GOPCLNTAB_MAX_FUNCS;
	expect_refused(&im, EINVAL);
	*header_word(&im, 0) = 0;
	expect_refused(&im, EINVAL);
	*header_word(&im, 0) = saved;
	/* Go 1.2's layout, an unknown one, a 32-bit or big-endian one */
	memcpy(&magic, im.buf + im.sec_off, 4);
	memcpy(im.buf + im.sec_off, &(uint32_t){0xfffffffb}, 4);
	expect_refused(&im, ENOTSUP);
	memcpy(im.buf + im.sec_off, &(uint32_t){0x12345678}, 4);
	expect_refused(&im, ENOTSUP);
	memcpy(im.buf + im.sec_off, &magic, 4);
	im.buf[im.sec_off + 7] = 4;
	expect_refused(&im, ENOTSUP);
	im.buf[im.sec_off + 7] = 8;
	im.buf[im.sec_off + 6] = 3;
	expect_refused(&im, EINVAL);
	im.buf[im.sec_off + 6] = 1;
	/* a section cap below its size */
	image_reopen(&im);
	assert_null(gopclntab__open(im.ef, im.sec_size - 1));
	assert_int_equal(errno, E2BIG);
	image_free(&im);
}

static void gopclntab__open__hostile_functab__refused(void **state)
{
	struct image im;
	uint8_t *ftab, saved[16];

	image_load(&im, FIXTURE_STRIPPED);
	ftab = im.buf + im.sec_off + *header_word(&im, 7);
	/* two entries swapped: unsorted */
	memcpy(saved, ftab + 8 * 10, 16);
	memcpy(ftab + 8 * 10, saved + 8, 8);
	memcpy(ftab + 8 * 11, saved, 8);
	expect_refused(&im, EINVAL);
	memcpy(ftab + 8 * 10, saved, 16);
	/* a record outside the section */
	memcpy(saved, ftab + 8 * 5 + 4, 4);
	memcpy(ftab + 8 * 5 + 4, &(uint32_t){0xfffffff0}, 4);
	expect_refused(&im, EINVAL);
	memcpy(ftab + 8 * 5 + 4, saved, 4);
	/* an entry offset that wraps the text start */
	memcpy(ftab, &(uint32_t){0xffffffff}, 4);
	image_reopen(&im);
	errno = 0;
	assert_null(gopclntab__open(im.ef, MAX_BYTES));
	image_free(&im);
}

/* records whose offsets point anywhere: lookups name nothing, never read outside */
static void gopclntab__func__hostile_records__null_names_no_crash(void **state)
{
	struct gopclntab_frame fr[GOPCLNTAB_MAX_DEPTH];
	struct gopclntab_func f, leaf;
	struct image im;
	struct gopclntab *g;
	uint8_t *rec;
	uint64_t lo, hi, pc;
	struct gopclntab_pcvalue it;
	int32_t v;
	size_t i;

	image_load(&im, FIXTURE_STRIPPED);
	g = open_table(&im);
	find_func(g, "main.goFixtureLeaf", &leaf);
	gopclntab__free(g);
	rec = im.buf + im.sec_off + leaf.off;
	/* name, pcsp, pcfile, pcln, npcdata, cu offset: all out of range */
	for (i = 1; i < 9; i++)
		memcpy(rec + 4 * i, &(uint32_t){0x7ffffff0}, 4);
	rec[39] = 255; /* nfuncdata */
	image_reopen(&im);
	g = open_table(&im);
	assert_int_equal(gopclntab__open_inline(g, im.ef, MAX_BYTES), 0);
	assert_int_equal(gopclntab__find(g, leaf.entry, &f), 0);
	assert_null(f.name);
	assert_int_equal(gopclntab__pcvalue(g, &f, GOPCLNTAB_PCSP, &it), -EINVAL);
	assert_int_equal(gopclntab__value_at(g, &f, GOPCLNTAB_PCLN, f.entry, &v), -EINVAL);
	assert_null(gopclntab__file(g, &f, 0));
	assert_null(gopclntab__file(g, &f, -1));
	for (pc = f.entry; pc < f.end; pc++) {
		assert_int_equal(gopclntab__frames(g, &f, pc, fr, GOPCLNTAB_MAX_DEPTH), 1);
		assert_null(fr[0].function);
		assert_null(fr[0].file);
	}
	/* a name that runs to the section's end without a NUL */
	memcpy(rec + 4, &(uint32_t){(uint32_t)(im.sec_size - *header_word(&im, 3) - 1)}, 4);
	im.buf[im.sec_off + im.sec_size - 1] = 'x';
	gopclntab__free(g);
	image_reopen(&im);
	g = open_table(&im);
	assert_int_equal(gopclntab__find(g, leaf.entry, &f), 0);
	assert_null(f.name);
	(void)lo;
	(void)hi;
	gopclntab__free(g);
	image_free(&im);
}

/* a pcsp table whose entries never advance: cut after a step a byte, its rows UNSUPPORTED */
static void gopclntab_pcvalue__loop__bounded_einval(void **state)
{
	struct gopclntab_func f, leaf;
	struct gopclntab_pcvalue it;
	struct unwind_table *t = NULL;
	const struct unwind_rule *r;
	struct image im;
	struct gopclntab *g;
	uint8_t *tab;
	uint64_t lo, hi, steps = 0;
	char err[256];
	int32_t v;
	int ret;
	size_t i;

	image_load(&im, FIXTURE_STRIPPED);
	g = open_table(&im);
	find_func(g, "main.goFixtureLeaf", &leaf);
	gopclntab__free(g);
	/* value +1, pc +0, over and over: a loop a naive decoder never leaves
	 * (as long as the function has bytes, and a few more) */
	tab = im.buf + im.sec_off + *header_word(&im, 6) + leaf.pcsp;
	for (i = 0; i < 2 * (leaf.end - leaf.entry + 4) &&
		    tab + i + 2 <= im.buf + im.sec_off + im.sec_size;
	     i += 2) {
		tab[i] = 0x02;
		tab[i + 1] = 0x00;
	}
	image_reopen(&im);
	g = open_table(&im);
	assert_int_equal(gopclntab__find(g, leaf.entry, &f), 0);
	assert_int_equal(gopclntab__pcvalue(g, &f, GOPCLNTAB_PCSP, &it), 0);
	while ((ret = gopclntab_pcvalue__next(&it, &lo, &hi, &v)) == 1)
		steps++;
	assert_int_equal(ret, -EINVAL);
	assert_true(steps <= f.end - f.entry + 1);
	assert_int_equal(gopclntab__value_at(g, &f, GOPCLNTAB_PCSP, f.end - 1, &v), -EINVAL);
	/* the table build stops the walk there, counted (the bytes written over
	 * may be other functions' tables too); the rest is as it was */
	assert_int_equal(unwind_table__build(im.ef, NULL, NULL, &t, err, sizeof(err)), 0);
	assert_true(t->stats.go_bad >= 1);
	r = unwind_table__find(t, f.entry + 1);
	assert_int_equal(r->cmd, UNWIND_CMD_UNSUPPORTED);
	assert_int_equal(rule_at(t, g, "runtime.goexit", 1)->cmd, UNWIND_CMD_END);
	unwind_table__free(t);
	gopclntab__free(g);
	image_free(&im);
}

/* random bytes over the whole section: refused or self-consistent, never a crash */
static void gopclntab__open__random_mutations__no_crash(void **state)
{
	struct gopclntab_frame fr[8];
	struct gopclntab_func f;
	struct image im;
	struct gopclntab *g;
	unsigned int seed = 18, round, k;
	uint8_t *orig;
	size_t i;

	image_load(&im, FIXTURE_STRIPPED);
	orig = malloc(im.sec_size);
	assert_non_null(orig);
	memcpy(orig, im.buf + im.sec_off, im.sec_size);
	for (round = 0; round < 200; round++) {
		memcpy(im.buf + im.sec_off, orig, im.sec_size);
		/* mostly the header and the function table, where offsets live */
		for (k = 0; k < 16; k++) {
			size_t span = round % 2 ? im.sec_size : 4096;

			im.buf[im.sec_off + (size_t)rand_r(&seed) % span] = (uint8_t)rand_r(&seed);
		}
		image_reopen(&im);
		g = gopclntab__open(im.ef, MAX_BYTES);
		if (!g)
			continue;
		gopclntab__open_inline(g, im.ef, MAX_BYTES);
		for (i = 0; i < gopclntab__nr_funcs(g); i += 1 + i / 4) {
			if (gopclntab__func(g, i, &f))
				continue;
			assert_true(f.entry <= f.end);
			gopclntab__frames(g, &f, f.entry + (f.end - f.entry) / 2, fr, 8);
		}
		gopclntab__free(g);
	}
	free(orig);
	image_free(&im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			gopclntab__func__stripped_build__every_function_as_symtab_names_it),
		cmocka_unit_test(gopclntab__find__addresses__function_holding_them),
		cmocka_unit_test(gopclntab__func__runtime__roots_and_switches_flagged),
		cmocka_unit_test(gopclntab__frames__stripped_build__lines_and_inlined_call),
		cmocka_unit_test(gopclntab__frames__pie_build__lines_and_inlined_call),
		cmocka_unit_test(gopclntab__frames__external_pie_build__found_in_relro),
		cmocka_unit_test(gopclntab__open__relro_of_a_file_not_go__not_searched),
		cmocka_unit_test(gopclntab__open_inline__past_cap__refused_outer_function_only),
		cmocka_unit_test(gopclntab__open__each_layout__names_lines_inlined_rows),
		cmocka_unit_test(elf_syms__open_fd__stripped_go__named_from_gopclntab),
		cmocka_unit_test(unwind_table__build__go_with_cfi__roots_end_switches_stop),
		cmocka_unit_test(unwind_table__build__go_without_cfi__rows_from_gopclntab),
		cmocka_unit_test(gopclntab__open__hostile_header__refused),
		cmocka_unit_test(gopclntab__open__hostile_functab__refused),
		cmocka_unit_test(gopclntab__func__hostile_records__null_names_no_crash),
		cmocka_unit_test(gopclntab_pcvalue__loop__bounded_einval),
		cmocka_unit_test(gopclntab__open__random_mutations__no_crash),
	};

	return cmocka_run_group_tests_name("gopclntab", tests, NULL, NULL);
}
