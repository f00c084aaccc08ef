// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/symbols/elf_syms.c against real ELF files built by
 * tests/unit/elf_fixtures.mk.  The truth comes from binutils (nm, readelf,
 * objdump) run on the same files, so a parsing bug shows up as a mismatch.
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

#define FIXTURE_NOPIE	    "elf_fixture_nopie"
#define FIXTURE_PIE	    "elf_fixture_pie"
#define FIXTURE_STRIPPED    "elf_fixture_stripped"
#define FIXTURE_LIB	    "libelf_fixture.so"
#define FIXTURE_MINI	    "elf_fixture_minidebug"
#define FIXTURE_ALIAS	    "libelf_fixture_alias.so"
#define FIXTURE_PLT	    "libelf_fixture_plt.so"
#define FIXTURE_PLT_IBT	    "libelf_fixture_plt_ibt.so"
#define FIXTURE_PLT_A64	    "libelf_fixture_plt_a64.so"
#define FIXTURE_PLT_A64_PAC "libelf_fixture_plt_a64_pac.so"
#define A64_OBJDUMP	    "aarch64-linux-gnu-objdump"

static const char *const all_fixtures[] = {FIXTURE_NOPIE, FIXTURE_PIE, FIXTURE_STRIPPED,
					   FIXTURE_LIB};

/* one symbol as `nm -f sysv` prints it */
struct nm_sym {
	char name[256];
	char section[64];
	uint64_t value;
	uint64_t size;
	bool func;
};

struct nm_list {
	struct nm_sym *syms;
	size_t nr;
};

/* one section as `objdump -h` prints it */
struct objdump_sec {
	uint64_t size;
	uint64_t vma;
	uint64_t file_off;
};

struct image {
	uint8_t *buf;
	size_t len;
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
		fail_msg("fixture %s missing: run make check (tests/unit/elf_fixtures.mk)", path);
	return path;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
		*--end = '\0';
	return s;
}

/* `nm -f sysv` lines: name|value|class|type|size|line|section */
static void nm_load(struct nm_list *l, const char *path, bool dynamic)
{
	char cmd[4200], line[1024];
	size_t cap = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -f sysv --defined-only %s '%s' 2>/dev/null",
		 dynamic ? "-D" : "", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	l->syms = NULL;
	l->nr = 0;
	while (fgets(line, sizeof(line), f)) {
		char *field[7], *p = line;
		struct nm_sym *s;
		int i;

		for (i = 0; i < 7; i++) {
			field[i] = p;
			p = strchr(p, '|');
			if (!p)
				break;
			*p++ = '\0';
		}
		if (i < 6)
			continue;
		if (l->nr == cap) {
			cap = cap ? 2 * cap : 64;
			l->syms = realloc(l->syms, cap * sizeof(*l->syms));
			assert_non_null(l->syms);
		}
		s = &l->syms[l->nr];
		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", trim(field[0]));
		if (sscanf(trim(field[1]), "%" SCNx64, &s->value) != 1)
			continue;
		s->size = strtoull(trim(field[4]), NULL, 16);
		s->func =
			strcmp(trim(field[3]), "FUNC") == 0 || strcmp(trim(field[3]), "IFUNC") == 0;
		snprintf(s->section, sizeof(s->section), "%s", trim(field[6]));
		l->nr++;
	}
	assert_int_equal(pclose(f), 0);
	assert_true(l->nr > 0);
}

static const struct nm_sym *nm_find(const struct nm_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		if (strcmp(l->syms[i].name, name) == 0)
			return &l->syms[i];
	fail_msg("nm does not list %s", name);
	return NULL;
}

static bool objdump_section(const char *path, const char *name, struct objdump_sec *sec)
{
	char cmd[4200], line[1024], sname[256];
	bool found = false;
	uint64_t lma;
	unsigned idx;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "objdump -h '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %255s %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64, &idx,
			   sname, &sec->size, &sec->vma, &lma, &sec->file_off) == 6 &&
		    strcmp(sname, name) == 0) {
			found = true;
			break;
		}
	}
	pclose(f);
	return found;
}

static void readelf_build_id(const char *path, char *out, size_t outsz)
{
	char cmd[4200], line[1024];
	FILE *f;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "Build ID:");

		if (p) {
			snprintf(out, outsz, "%s", trim(p + strlen("Build ID:")));
			break;
		}
	}
	pclose(f);
	assert_true(strlen(out) > 0);
}

static struct elf_syms *open_path(const char *path)
{
	struct elf_syms *es;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	es = elf_syms__open_fd(fd);
	close(fd);
	assert_non_null(es);
	return es;
}

static struct elf_syms *open_fixture(const char *name)
{
	return open_path(fixture_path(name));
}

static void image_load(struct image *img, const char *name)
{
	struct stat st;
	int fd;

	fd = open(fixture_path(name), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	img->len = st.st_size;
	img->buf = malloc(img->len);
	assert_non_null(img->buf);
	assert_int_equal(read(fd, img->buf, img->len), (ssize_t)img->len);
	close(fd);
}

static Elf64_Ehdr *image_ehdr(struct image *img)
{
	return (Elf64_Ehdr *)img->buf;
}

static Elf64_Shdr *image_shdr(struct image *img, size_t idx)
{
	return (Elf64_Shdr *)(img->buf + image_ehdr(img)->e_shoff) + idx;
}

static Elf64_Shdr *image_find_section(struct image *img, uint32_t type)
{
	size_t i;

	for (i = 1; i < image_ehdr(img)->e_shnum; i++)
		if (image_shdr(img, i)->sh_type == type)
			return image_shdr(img, i);
	fail_msg("no section of type %u", type);
	return NULL;
}

/* a corrupted image must be refused with EINVAL */
static void assert_open_mem_einval(const struct image *img, size_t len)
{
	struct elf_syms *es;

	errno = 0;
	es = elf_syms__open_mem(img->buf, len);
	assert_null(es);
	assert_int_equal(errno, EINVAL);
}

/* whatever was parsed must be self-consistent and lookups must not crash */
static void exercise(const struct elf_syms *es)
{
	uint64_t start, end, prev_start = 0, off, vaddr;
	const char *name;
	size_t i;

	elf_syms__lookup(es, 0, NULL);
	elf_syms__lookup(es, UINT64_MAX, &off);
	elf_syms__file_offset_to_vaddr(es, 0, &vaddr);
	name = elf_syms__build_id(es);
	if (name)
		assert_true(strlen(name) <= 2 * ELF_SYMS_BUILD_ID_MAX);
	for (i = 0; i < elf_syms__nr_symbols(es); i++) {
		name = elf_syms__symbol(es, i, &start, &end);
		assert_non_null(name);
		assert_true(strlen(name) > 0 && strlen(name) < ELF_SYMS_MAX_NAME);
		assert_true(start < end);
		if (i)
			assert_true(start > prev_start);
		assert_ptr_equal(elf_syms__lookup(es, start, &off), name);
		assert_int_equal(off, 0);
		assert_ptr_equal(elf_syms__lookup(es, end - 1, NULL), name);
		prev_start = start;
	}
	assert_null(elf_syms__symbol(es, i, NULL, NULL));
}

static void assert_known_function(const struct elf_syms *es, const struct nm_list *nm,
				  const char *name)
{
	const struct nm_sym *s = nm_find(nm, name);
	uint64_t off = 99;

	assert_true(s->func);
	assert_string_equal(elf_syms__lookup(es, s->value, &off), name);
	assert_int_equal(off, 0);
}

static void elf_syms__lookup__nopie_known_functions__found_at_nm_addresses(void **state)
{
	struct elf_syms *es = open_fixture(FIXTURE_NOPIE);
	struct nm_list nm;

	nm_load(&nm, fixture_path(FIXTURE_NOPIE), false);
	assert_known_function(es, &nm, "fixture_alpha");
	assert_known_function(es, &nm, "fixture_beta");
	assert_known_function(es, &nm, "fixture_local_helper");
	assert_known_function(es, &nm, "main");
	free(nm.syms);
	elf_syms__free(es);
}

static void elf_syms__lookup__pie_known_functions__found_at_nm_addresses(void **state)
{
	struct elf_syms *es = open_fixture(FIXTURE_PIE);
	struct nm_list nm;

	nm_load(&nm, fixture_path(FIXTURE_PIE), false);
	assert_known_function(es, &nm, "fixture_alpha");
	assert_known_function(es, &nm, "fixture_beta");
	assert_known_function(es, &nm, "fixture_local_helper");
	assert_known_function(es, &nm, "main");
	free(nm.syms);
	elf_syms__free(es);
}

static void elf_syms__lookup__shared_lib_functions__found_at_nm_addresses(void **state)
{
	struct elf_syms *es = open_fixture(FIXTURE_LIB);
	struct nm_list nm;

	nm_load(&nm, fixture_path(FIXTURE_LIB), false);
	assert_known_function(es, &nm, "fixture_lib_gamma");
	assert_known_function(es, &nm, "fixture_lib_delta");
	free(nm.syms);
	elf_syms__free(es);
}

/*
 * The name kept at the address of @alias (any of its names, as nm lists
 * it) is @system_name, shown as @display: the symbolizer's display form
 * drops what symbol_version_at() finds, and these names need no demangling.
 */
static void assert_alias_named(const struct elf_syms *es, const struct nm_list *nm,
			       const char *alias, const char *system_name, const char *display)
{
	const struct nm_sym *s = nm_find(nm, alias);
	const char *name;
	uint64_t off = 99;

	assert_true(s->func);
	name = elf_syms__lookup(es, s->value + 1, &off);
	assert_non_null(name);
	assert_int_equal(off, 1);
	assert_string_equal(name, system_name);
	assert_int_equal(symbol_version_at(name), strlen(display));
	assert_memory_equal(name, display, strlen(display));
}

/*
 * Aliases at one address are named as perf names them (choose_best_symbol():
 * non-weak, global, fewest leading underscores, longest name); a versioned
 * name keeps its version as the system name and drops it for display.
 * Before this rule, weak beat local and the first name in byte order won:
 * fx_pair_weak, __fx_libc_malloc.
 */
static void elf_syms__lookup__aliases_at_one_address__the_name_perf_shows(void **state)
{
	struct elf_syms *es = open_fixture(FIXTURE_ALIAS);
	struct nm_list nm;

	assert_true(elf_syms__has_symtab(es));
	nm_load(&nm, fixture_path(FIXTURE_ALIAS), false);
	/* global over weak and local */
	assert_alias_named(es, &nm, "fx_trio_weak", "fx_trio", "fx_trio");
	assert_alias_named(es, &nm, "fx_trio_local", "fx_trio", "fx_trio");
	/* non-weak first: local over weak */
	assert_alias_named(es, &nm, "fx_pair_weak", "fx_pair_local", "fx_pair_local");
	/* the fewest leading underscores, among globals; a hidden alias is local */
	assert_alias_named(es, &nm, "__fx_libc_malloc", "fx_malloc", "fx_malloc");
	assert_alias_named(es, &nm, "__GI___fx_libc_malloc", "fx_malloc", "fx_malloc");
	/* the default version, the longer name; shown without it */
	assert_alias_named(es, &nm, "fx_sem_post@FX_1", "fx_sem_post@@FX_2", "fx_sem_post");
	assert_alias_named(es, &nm, "__new_fx_sem_post", "fx_sem_post@@FX_2", "fx_sem_post");
	free(nm.syms);
	elf_syms__free(es);
}

/*
 * Every function nm lists starts a kept symbol (an alias may name it), and
 * we keep exactly one symbol per distinct function address.
 */
static void check_every_function(const char *fixture, bool dynamic)
{
	struct elf_syms *es = open_fixture(fixture);
	size_t i, j, distinct = 0;
	struct nm_list nm;
	uint64_t off;

	nm_load(&nm, fixture_path(fixture), dynamic);
	for (i = 0; i < nm.nr; i++) {
		const struct nm_sym *s = &nm.syms[i];
		bool dup = false;

		if (!s->func || !s->value)
			continue;
		for (j = 0; j < i; j++)
			dup |= nm.syms[j].func && nm.syms[j].value == s->value;
		distinct += !dup;
		off = 99;
		if (!elf_syms__lookup(es, s->value, &off))
			fail_msg("%s: %s at %#" PRIx64 " not found", fixture, s->name, s->value);
		assert_int_equal(off, 0);
		if (s->size > 1) {
			assert_non_null(elf_syms__lookup(es, s->value + s->size - 1, &off));
			assert_int_equal(off, s->size - 1);
		}
	}
	assert_int_equal(elf_syms__nr_symbols(es), distinct);
	exercise(es);
	free(nm.syms);
	elf_syms__free(es);
}

static void elf_syms__lookup__every_nm_function__starts_a_symbol(void **state)
{
	check_every_function(FIXTURE_NOPIE, false);
	check_every_function(FIXTURE_PIE, false);
	check_every_function(FIXTURE_LIB, false);
	check_every_function(FIXTURE_STRIPPED, true);
	check_every_function(FIXTURE_ALIAS, false);
}

static void elf_syms__lookup__inside_function_body__names_function(void **state)
{
	struct elf_syms *es = open_fixture(FIXTURE_PIE);
	const struct nm_sym *alpha;
	struct nm_list nm;
	uint64_t off = 0;

	nm_load(&nm, fixture_path(FIXTURE_PIE), false);
	alpha = nm_find(&nm, "fixture_alpha");
	assert_true(alpha->size > 2);
	assert_string_equal(elf_syms__lookup(es, alpha->value + 1, &off), "fixture_alpha");
	assert_int_equal(off, 1);
	assert_string_equal(elf_syms__lookup(es, alpha->value + alpha->size - 1, NULL),
			    "fixture_alpha");
	/* offset may be NULL */
	assert_string_equal(elf_syms__lookup(es, alpha->value + 2, NULL), "fixture_alpha");
	free(nm.syms);
	elf_syms__free(es);
}

static void elf_syms__lookup__outside_any_function__null(void **state)
{
	struct elf_syms *es = open_fixture(FIXTURE_PIE);
	const struct nm_sym *counter;
	struct nm_list nm;

	nm_load(&nm, fixture_path(FIXTURE_PIE), false);
	counter = nm_find(&nm, "fixture_counter");
	assert_false(counter->func);
	assert_null(elf_syms__lookup(es, counter->value, NULL));
	assert_null(elf_syms__lookup(es, 0, NULL));
	assert_null(elf_syms__lookup(es, 1, NULL));
	assert_null(elf_syms__lookup(es, UINT64_MAX, NULL));
	free(nm.syms);
	elf_syms__free(es);
}

/*
 * A size-0 function (crt's _init, frame_dummy, ...) covers up to the next
 * function or the end of its section, whichever comes first, and no further.
 */
static void elf_syms__lookup__zero_size_symbol__extends_to_next_symbol_or_section_end(void **state)
{
	const char *path = fixture_path(FIXTURE_PIE);
	struct elf_syms *es = open_fixture(FIXTURE_PIE);
	size_t i, j, checked = 0;
	struct nm_list nm;

	nm_load(&nm, path, false);
	for (i = 0; i < nm.nr; i++) {
		const struct nm_sym *s = &nm.syms[i];
		struct objdump_sec sec;
		uint64_t end, start;

		if (!s->func || s->size || !s->value)
			continue;
		assert_true(objdump_section(path, s->section, &sec));
		end = sec.vma + sec.size;
		for (j = 0; j < nm.nr; j++)
			if (nm.syms[j].func && nm.syms[j].value > s->value &&
			    nm.syms[j].value < end)
				end = nm.syms[j].value;
		assert_true(end > s->value);
		assert_non_null(elf_syms__lookup(es, end - 1, NULL));
		/* the same symbol (or an alias at its address) covers end - 1 */
		for (j = 0; j < elf_syms__nr_symbols(es); j++) {
			uint64_t e;

			elf_syms__symbol(es, j, &start, &e);
			if (start == s->value) {
				assert_int_equal(e, end);
				break;
			}
		}
		assert_true(j < elf_syms__nr_symbols(es));
		checked++;
	}
	/* crt's _init and _fini at least */
	assert_true(checked >= 2);
	free(nm.syms);
	elf_syms__free(es);
}

static void elf_syms__build_id__fixtures__matches_readelf(void **state)
{
	char want[256];
	size_t i;

	for (i = 0; i < sizeof(all_fixtures) / sizeof(all_fixtures[0]); i++) {
		struct elf_syms *es = open_fixture(all_fixtures[i]);

		readelf_build_id(fixture_path(all_fixtures[i]), want, sizeof(want));
		/* --build-id=sha1: 20 bytes */
		assert_int_equal(strlen(want), 40);
		assert_non_null(elf_syms__build_id(es));
		assert_string_equal(elf_syms__build_id(es), want);
		elf_syms__free(es);
	}
}

static void elf_syms__is_dyn__fixtures__true_only_for_et_dyn(void **state)
{
	struct elf_syms *es;

	es = open_fixture(FIXTURE_NOPIE);
	assert_false(elf_syms__is_dyn(es));
	elf_syms__free(es);
	es = open_fixture(FIXTURE_PIE);
	assert_true(elf_syms__is_dyn(es));
	elf_syms__free(es);
	es = open_fixture(FIXTURE_STRIPPED);
	assert_true(elf_syms__is_dyn(es));
	elf_syms__free(es);
	es = open_fixture(FIXTURE_LIB);
	assert_true(elf_syms__is_dyn(es));
	elf_syms__free(es);
}

/* the file offset of fixture_alpha, from .text's section header, maps back to it */
static void check_offset_round_trip(const char *fixture)
{
	const char *path = fixture_path(fixture);
	struct elf_syms *es = open_fixture(fixture);
	const struct nm_sym *alpha;
	struct objdump_sec text;
	uint64_t vaddr = 0, off;
	struct nm_list nm;
	struct stat st;

	nm_load(&nm, path, false);
	alpha = nm_find(&nm, "fixture_alpha");
	assert_true(objdump_section(path, ".text", &text));
	assert_true(alpha->value >= text.vma && alpha->value < text.vma + text.size);
	off = alpha->value - text.vma + text.file_off;
	assert_int_equal(elf_syms__file_offset_to_vaddr(es, off, &vaddr), 0);
	assert_int_equal(vaddr, alpha->value);
	assert_string_equal(elf_syms__lookup(es, vaddr, NULL), "fixture_alpha");
	assert_int_equal(elf_syms__file_offset_to_vaddr(es, text.file_off, &vaddr), 0);
	assert_int_equal(vaddr, text.vma);

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(elf_syms__file_offset_to_vaddr(es, st.st_size, &vaddr), -ENOENT);
	assert_int_equal(elf_syms__file_offset_to_vaddr(es, UINT64_MAX, &vaddr), -ENOENT);
	free(nm.syms);
	elf_syms__free(es);
}

static void elf_syms__file_offset_to_vaddr__text_offset__round_trips(void **state)
{
	check_offset_round_trip(FIXTURE_NOPIE);
	check_offset_round_trip(FIXTURE_PIE);
}

static void elf_syms__open_fd__stripped__uses_dynsym(void **state)
{
	struct elf_syms *es = open_fixture(FIXTURE_STRIPPED);
	const struct nm_sym *helper;
	struct nm_list full, dyn;
	FILE *f;
	char line[256];

	/* really stripped: no .symtab left */
	snprintf(line, sizeof(line), "readelf -SW '%s' | grep -c ' .symtab '",
		 fixture_path(FIXTURE_STRIPPED));
	f = popen(line, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	pclose(f);
	assert_int_equal(atoi(line), 0);

	nm_load(&dyn, fixture_path(FIXTURE_STRIPPED), true);
	assert_known_function(es, &dyn, "fixture_alpha");
	assert_known_function(es, &dyn, "fixture_beta");
	assert_known_function(es, &dyn, "main");

	/* the static helper lived only in .symtab; stripping kept its code in place */
	nm_load(&full, fixture_path(FIXTURE_PIE), false);
	helper = nm_find(&full, "fixture_local_helper");
	assert_null(elf_syms__lookup(es, helper->value, NULL));
	free(full.syms);
	free(dyn.syms);
	elf_syms__free(es);
}

/* Fedora's MiniDebugInfo: .dynsym plus the local functions from .gnu_debugdata */
static void elf_syms__open_fd__minidebuginfo__local_function_named(void **state)
{
	struct elf_syms *es = open_fixture(FIXTURE_MINI);
	char full_path[4200];
	const struct nm_sym *helper, *alpha;
	struct nm_list full, dyn;
	const char *name;
	uint64_t off;

	assert_false(elf_syms__has_symtab(es));
	assert_int_equal(elf_syms__minidebug(es), ELF_SYMS_MINIDEBUG_OK);
	snprintf(full_path, sizeof(full_path), "%s.full", fixture_path(FIXTURE_MINI));
	nm_load(&full, full_path, false);
	helper = nm_find(&full, "fixture_local_helper");
	name = elf_syms__lookup(es, helper->value + 1, &off);
	assert_non_null(name);
	assert_string_equal(name, "fixture_local_helper");
	assert_int_equal(off, 1);
	assert_true(elf_syms__from_minidebug(es, name));
	/* the exported ones still come from .dynsym */
	nm_load(&dyn, fixture_path(FIXTURE_MINI), true);
	assert_known_function(es, &dyn, "fixture_alpha");
	alpha = nm_find(&dyn, "fixture_alpha");
	assert_false(elf_syms__from_minidebug(es, elf_syms__lookup(es, alpha->value, NULL)));
	exercise(es);
	free(full.syms);
	free(dyn.syms);
	elf_syms__free(es);
}

/* a corrupt .gnu_debugdata is ignored: the file keeps its .dynsym names */
static void elf_syms__open_mem__corrupt_minidebuginfo__ignored_dynsym_kept(void **state)
{
	struct objdump_sec sec;
	struct elf_syms *es;
	struct nm_list dyn;
	struct image img;

	image_load(&img, FIXTURE_MINI);
	assert_true(objdump_section(fixture_path(FIXTURE_MINI), ".gnu_debugdata", &sec));
	assert_true(sec.size > 64 && sec.file_off + sec.size <= img.len);
	/* past the 12-byte stream header: the compressed data itself */
	memset(img.buf + sec.file_off + 32, 0x5a, 16);
	es = elf_syms__open_mem(img.buf, img.len);
	assert_non_null(es);
	assert_int_equal(elf_syms__minidebug(es), ELF_SYMS_MINIDEBUG_BAD);
	nm_load(&dyn, fixture_path(FIXTURE_MINI), true);
	assert_known_function(es, &dyn, "fixture_beta");
	elf_syms__free(es);

	/* not xz at all */
	memset(img.buf + sec.file_off, 0, 6);
	es = elf_syms__open_mem(img.buf, img.len);
	assert_non_null(es);
	assert_int_equal(elf_syms__minidebug(es), ELF_SYMS_MINIDEBUG_BAD);
	elf_syms__free(es);
	free(dyn.syms);
	free(img.buf);
}

static void elf_syms__debuglink__stripped_file__name_and_crc(void **state)
{
	struct elf_syms *es = open_fixture("elf_fixture_debuglink");
	char cmd[4200], line[256];
	uint32_t crc;
	FILE *f;

	assert_string_equal(elf_syms__debuglink(es, &crc), "elf_fixture_debuglink.debug");
	/* gdb's CRC is zlib's crc32: cksum -a crc would differ, so ask python's zlib */
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import sys,zlib; print(zlib.crc32(open(sys.argv[1],\"rb\").read()))' "
		 "'%s.debug'",
		 fixture_path("elf_fixture_debuglink"));
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	pclose(f);
	assert_int_equal(crc, strtoul(line, NULL, 10));
	elf_syms__free(es);

	es = open_fixture(FIXTURE_PIE);
	assert_null(elf_syms__debuglink(es, NULL));
	assert_true(elf_syms__has_symtab(es));
	assert_int_equal(elf_syms__minidebug(es), ELF_SYMS_MINIDEBUG_NONE);
	elf_syms__free(es);
}

static void elf_syms__open_fd__fd_closed_after_open__still_usable(void **state)
{
	struct elf_syms *es;
	int fd;

	fd = open(fixture_path(FIXTURE_LIB), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	es = elf_syms__open_fd(fd);
	assert_non_null(es);
	assert_int_equal(close(fd), 0);
	assert_true(elf_syms__nr_symbols(es) > 0);
	assert_non_null(elf_syms__build_id(es));
	exercise(es);
	elf_syms__free(es);
}

static void elf_syms__open_fd__not_regular_file__einval(void **state)
{
	int fd, pipefd[2];

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	errno = 0;
	assert_null(elf_syms__open_fd(fd));
	assert_int_equal(errno, EINVAL);
	close(fd);

	assert_int_equal(pipe(pipefd), 0);
	errno = 0;
	assert_null(elf_syms__open_fd(pipefd[0]));
	assert_int_equal(errno, EINVAL);
	close(pipefd[0]);
	close(pipefd[1]);

	errno = 0;
	assert_null(elf_syms__open_fd(-1));
	assert_int_equal(errno, EBADF);
}

static void elf_syms__open_fd__source_file__einval(void **state)
{
	struct elf_syms *es;
	int fd;

	fd = open("tests/unit/test_elf_syms.c", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		skip();
	errno = 0;
	es = elf_syms__open_fd(fd);
	close(fd);
	assert_null(es);
	assert_int_equal(errno, EINVAL);
}

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

/*
 * The PLT stubs of @path as objdump labels them ("<NAME@plt>", which it
 * synthesizes from the relocations as perf does): each found at its first
 * and eighth byte with that name; and the lazy PLT0 at @plt0 (0: none)
 * unnamed.  Return: the stubs checked.
 */
static size_t check_plt_names(const char *objdump, const char *path, uint64_t plt0)
{
	struct fixture_plt_stub *stubs;
	struct elf_syms *es = open_path(path);
	const char *name;
	uint64_t off;
	size_t i, n;

	stubs = fixture_plt_stubs(objdump, path, &n);
	for (i = 0; i < n; i++) {
		name = elf_syms__lookup(es, stubs[i].addr, &off);
		if (!name || strcmp(name, stubs[i].name) || off)
			fail_msg("%s: %#" PRIx64 " is %s+%#" PRIx64 ", objdump says %s", path,
				 stubs[i].addr, name ?: "(none)", off, stubs[i].name);
		/* a stub is 8 to 24 bytes: its eighth byte is still it */
		name = elf_syms__lookup(es, stubs[i].addr + 7, &off);
		if (!name || strcmp(name, stubs[i].name) || off != 7)
			fail_msg("%s: %#" PRIx64 " + 7 is %s, objdump says %s", path, stubs[i].addr,
				 name ?: "(none)", stubs[i].name);
	}
	if (plt0)
		assert_null(elf_syms__lookup(es, plt0, NULL));
	free(stubs);
	elf_syms__free(es);
	return n;
}

/* the .plt section's address in @path (objdump -h) */
static uint64_t plt_start(const char *path)
{
	struct objdump_sec sec;

	assert_true(objdump_section(path, ".plt", &sec));
	return sec.vma;
}

static void elf_syms__lookup__plt_stubs__named_as_objdump_names_them(void **state)
{
	const char *lazy = fixture_path(FIXTURE_PLT), *ibt;
	static const char *const system[] = {"/usr/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"};
	size_t i;

	(void)state;
	/* getenv free puts strlen strcmp atoi strdup in .plt, __cxa_finalize in .plt.got */
	assert_int_equal(check_plt_names("objdump", lazy, plt_start(lazy)), 8);
	ibt = fixture_path(FIXTURE_PLT_IBT);
	/* the same in .plt.sec; .plt holds only IBT's lazy stubs, unnamed */
	assert_int_equal(check_plt_names("objdump", ibt, plt_start(ibt)), 8);
	/* libc's IFUNC stubs are named "*ABS*+0xADDR@plt" by both */
	for (i = 0; i < sizeof(system) / sizeof(system[0]); i++)
		if (access(system[i], R_OK) == 0)
			assert_true(check_plt_names("objdump", system[i], 0) > 0);
}

/* the last byte of each AArch64 stub is it, the byte after the last stub's is not */
static void check_a64_stub_ends(const char *path)
{
	struct fixture_plt_stub *stubs;
	struct elf_syms *es = open_path(path);
	const char *name;
	uint64_t off;
	size_t i, n;

	stubs = fixture_plt_stubs(A64_OBJDUMP, path, &n);
	for (i = 0; i + 1 < n; i++) {
		name = elf_syms__lookup(es, stubs[i + 1].addr - 1, &off);
		if (!name || strcmp(name, stubs[i].name))
			fail_msg("%s: %#" PRIx64 " is %s, objdump says %s", path,
				 stubs[i + 1].addr - 1, name ?: "(none)", stubs[i].name);
	}
	free(stubs);
	elf_syms__free(es);
}

static void elf_syms__lookup__aarch64_plt_stubs__named_as_objdump_names_them(void **state)
{
	static const char *const fixtures[] = {FIXTURE_PLT_A64, FIXTURE_PLT_A64_PAC};
	const char *libc = "/usr/lib/aarch64-linux-gnu/libc.so.6";
	const char *path;
	size_t i;

	(void)state;
	path = fixture_path(FIXTURE_PLT_A64);
	if (access(path, R_OK) || system(A64_OBJDUMP " --version > /dev/null 2>&1")) {
		print_message("SKIP: no AArch64 fixtures or " A64_OBJDUMP
			      " (make deps installs gcc-aarch64-linux-gnu)\n");
		skip();
	}
	/* 9 stubs (with __cxa_finalize, __gmon_start__): lazy 16-byte ones, then
	 * BTI + PAC-PLT's 24-byte ones; PLT0 unnamed */
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		path = fixture_path(fixtures[i]);
		assert_int_equal(check_plt_names(A64_OBJDUMP, path, plt_start(path)), 9);
		check_a64_stub_ends(path);
	}
	/* glibc's own, IFUNC stubs included */
	if (access(libc, R_OK) == 0)
		assert_true(check_plt_names(A64_OBJDUMP, libc, 0) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(elf_syms__lookup__nopie_known_functions__found_at_nm_addresses),
		cmocka_unit_test(elf_syms__lookup__pie_known_functions__found_at_nm_addresses),
		cmocka_unit_test(elf_syms__lookup__shared_lib_functions__found_at_nm_addresses),
		cmocka_unit_test(elf_syms__lookup__aliases_at_one_address__the_name_perf_shows),
		cmocka_unit_test(elf_syms__lookup__plt_stubs__named_as_objdump_names_them),
		cmocka_unit_test(elf_syms__lookup__aarch64_plt_stubs__named_as_objdump_names_them),
		cmocka_unit_test(elf_syms__lookup__every_nm_function__starts_a_symbol),
		cmocka_unit_test(elf_syms__lookup__inside_function_body__names_function),
		cmocka_unit_test(elf_syms__lookup__outside_any_function__null),
		cmocka_unit_test(
			elf_syms__lookup__zero_size_symbol__extends_to_next_symbol_or_section_end),
		cmocka_unit_test(elf_syms__build_id__fixtures__matches_readelf),
		cmocka_unit_test(elf_syms__is_dyn__fixtures__true_only_for_et_dyn),
		cmocka_unit_test(elf_syms__file_offset_to_vaddr__text_offset__round_trips),
		cmocka_unit_test(elf_syms__open_fd__stripped__uses_dynsym),
		cmocka_unit_test(elf_syms__open_fd__minidebuginfo__local_function_named),
		cmocka_unit_test(elf_syms__open_mem__corrupt_minidebuginfo__ignored_dynsym_kept),
		cmocka_unit_test(elf_syms__debuglink__stripped_file__name_and_crc),
		cmocka_unit_test(elf_syms__open_fd__fd_closed_after_open__still_usable),
		cmocka_unit_test(elf_syms__open_fd__not_regular_file__einval),
		cmocka_unit_test(elf_syms__open_fd__source_file__einval),
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

	return cmocka_run_group_tests_name("elf_syms", tests, NULL, NULL);
}
