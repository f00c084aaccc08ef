// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/symbols/elf_syms.c against real ELF files built by
 * tests/unit/elf_fixtures.mk: lookups, build IDs, file offsets, stripped
 * files, MiniDebugInfo, debuglink and PLT stubs.  The truth comes from
 * binutils (nm, readelf, objdump) run on the same files, so a parsing bug
 * shows up as a mismatch.  Hostile and synthetic images are
 * test_elf_syms_hostile.c's.
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
		snprintf(s->name, sizeof(s->name), "%s", fixture_trim(field[0]));
		if (sscanf(fixture_trim(field[1]), "%" SCNx64, &s->value) != 1)
			continue;
		s->size = strtoull(fixture_trim(field[4]), NULL, 16);
		s->func = strcmp(fixture_trim(field[3]), "FUNC") == 0 ||
			  strcmp(fixture_trim(field[3]), "IFUNC") == 0;
		snprintf(s->section, sizeof(s->section), "%s", fixture_trim(field[6]));
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
			snprintf(out, outsz, "%s", fixture_trim(p + strlen("Build ID:")));
			break;
		}
	}
	pclose(f);
	assert_true(strlen(out) > 0);
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

	fd = open("tests/unit/test_elf_syms_lookup.c", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		skip();
	errno = 0;
	es = elf_syms__open_fd(fd);
	close(fd);
	assert_null(es);
	assert_int_equal(errno, EINVAL);
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
	};

	return cmocka_run_group_tests_name("elf_syms_lookup", tests, NULL, NULL);
}
