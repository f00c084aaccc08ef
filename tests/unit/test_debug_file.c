// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/elf/debug_file.c, and the symbolizer naming frames
 * from what it finds.  Fake target roots built by tests/unit/elf_fixtures.mk
 * hold /bin/elf_fixture_debuglink, stripped of .symtab (so its static
 * function fixture_local_helper is unnamed without its debug file), and that
 * debug file where gdb would look for it, or an impostor.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "elf/debug_file.h"
#include "elf/elf_file.h"
#include "elf/safe_open.h"
#include "symbols/elf_syms.h"
#include "processes/mappings.h"
#include "processes/proc_maps.h"
#include "symbols/symbolizer.h"

#define TARGET "/bin/elf_fixture_debuglink"

/* a fake root, opened as the collector opens /proc/PID/root */
struct root {
	int fd;
	char dir[PATH_MAX];
};

static void root_open(struct root *r, const char *name)
{
	const char *output = getenv("OUTPUT");
	char stamp[PATH_MAX + 16];

	snprintf(r->dir, sizeof(r->dir), "%s/fixtures/debugroot_%s",
		 output && *output ? output : "build", name);
	snprintf(stamp, sizeof(stamp), "%s/.stamp", r->dir);
	if (access(stamp, R_OK))
		fail_msg("fixture %s missing: run make check (tests/unit/elf_fixtures.mk)", r->dir);
	r->fd = open(r->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(r->fd >= 0);
}

/* the address `nm` gives @name in @path, an ELF virtual address */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[PATH_MAX + 64], line[512], sym[256], type;
	unsigned long long addr, found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	pclose(f);
	assert_true(found != 0);
	return found;
}

/* vaddr of fixture_local_helper, from the debug file the fixtures were made of */
static uint64_t local_helper_vaddr(void)
{
	const char *output = getenv("OUTPUT");
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/fixtures/elf_fixture_debuglink.debug",
		 output && *output ? output : "build");
	return nm_addr(path, "fixture_local_helper");
}

/*
 * Name @vaddr of the root's target as the exporter does, through a mapping
 * of the whole file at 0x10000000: in this PIE fixture file offsets are
 * virtual addresses (p_offset == p_vaddr in every PT_LOAD, the linker's
 * default layout; elf_syms__open_debug__build_id_path__found_and_checked checks
 * one).
 */
static const char *name_in_root(struct root *r, struct symbolizer *s, uint64_t vaddr)
{
	char path[PATH_MAX + 32], line[PATH_MAX + 128];
	struct mappings *snap;
	struct proc_maps *pm;
	struct sym_frame f;
	struct stat st;
	int len;

	snprintf(path, sizeof(path), "%s" TARGET, r->dir);
	assert_int_equal(stat(path, &st), 0);
	len = snprintf(line, sizeof(line), "10000000-10100000 r-xp 00000000 00:00 %llu %s\n",
		       (unsigned long long)st.st_ino, TARGET);
	pm = proc_maps__parse(line, len);
	assert_non_null(pm);
	snap = mappings__new(pm, 0, 1);
	proc_maps__free(pm);
	assert_non_null(snap);
	assert_int_equal(snap->nr, 1);
	/* no process: the path inside the root, kept as its inode is the one mapped */
	symbolizer__attach(s, 0, r->fd, snap, NULL, 0, 0);
	assert_non_null(snap->maps[0].file);
	assert_int_equal(
		symbolizer__user(s, &snap->maps[0], snap->maps[0].start + vaddr, false, &f), 0);
	/* the name stays with the cached file, idle but not trimmed */
	symbolizer__detach(s, snap);
	mappings__put(snap);
	return f.function;
}

static void symbolizer__user__debug_file_by_build_id__static_function_named(void **state)
{
	uint64_t vaddr = local_helper_vaddr();
	struct symbolizer_stats st;
	struct symbolizer *s = symbolizer__new(0, 64 << 20);
	struct root r;
	const char *name;

	assert_non_null(s);
	root_open(&r, "buildid");
	name = name_in_root(&r, s, vaddr);
	assert_non_null(name);
	assert_string_equal(name, "fixture_local_helper");
	symbolizer__stats(s, &st);
	assert_int_equal(st.debug_files, 1);
	assert_int_equal(st.debug_missing, 0);
	assert_int_equal(st.names_debug_file, 1);
	close(r.fd);
	symbolizer__free(s);
}

static void symbolizer__user__debug_file_by_debuglink__static_function_named(void **state)
{
	uint64_t vaddr = local_helper_vaddr();
	struct symbolizer_stats st;
	struct symbolizer *s = symbolizer__new(0, 64 << 20);
	struct root r;
	const char *name;

	assert_non_null(s);
	root_open(&r, "link");
	name = name_in_root(&r, s, vaddr);
	assert_non_null(name);
	assert_string_equal(name, "fixture_local_helper");
	symbolizer__stats(s, &st);
	assert_int_equal(st.debug_files, 1);
	assert_int_equal(st.debug_crc_bad, 0);
	close(r.fd);
	symbolizer__free(s);
}

static void symbolizer__user__no_debug_file__static_function_unnamed(void **state)
{
	uint64_t vaddr = local_helper_vaddr();
	struct symbolizer_stats st;
	struct symbolizer *s = symbolizer__new(0, 64 << 20);
	const char *name;
	struct root r;

	assert_non_null(s);
	root_open(&r, "wrongid");
	name = name_in_root(&r, s, vaddr);
	/* .dynsym names no static function; a size-0 neighbour must not either */
	assert_true(!name || strcmp(name, "fixture_local_helper"));
	symbolizer__stats(s, &st);
	assert_int_equal(st.debug_files, 0);
	assert_int_equal(st.debug_missing, 1);
	assert_int_equal(st.debug_build_id_bad, 1);
	assert_int_equal(st.names_debug_file, 0);
	close(r.fd);
	symbolizer__free(s);
}

/* open the root's target and its stat, as the symbolizer has them */
static struct elf_syms *target_open(struct root *r, struct stat *st)
{
	struct elf_syms *es;
	int fd;

	fd = safe_open_in_root(r->fd, TARGET, SAFE_OPEN_MAX_ELF_SIZE, st);
	assert_true(fd >= 0);
	es = elf_syms__open_fd(fd);
	close(fd);
	assert_non_null(es);
	assert_false(elf_syms__has_symtab(es));
	assert_non_null(elf_syms__build_id(es));
	assert_non_null(elf_syms__debuglink(es, NULL));
	return es;
}

static void elf_syms__open_debug__build_id_path__found_and_checked(void **state)
{
	struct debug_file_result res;
	struct elf_syms *es, *dbg;
	struct stat st;
	struct root r;
	uint64_t start;
	size_t i;
	bool seen = false;

	root_open(&r, "buildid");
	es = target_open(&r, &st);
	dbg = elf_syms__open_debug(r.fd, TARGET, es, &st, &res);
	assert_non_null(dbg);
	assert_true(res.by_build_id);
	assert_int_equal(res.tried, 1);
	assert_string_equal(elf_syms__build_id(dbg), elf_syms__build_id(es));
	assert_true(elf_syms__has_symtab(dbg));
	for (i = 0; elf_syms__symbol(dbg, i, &start, NULL); i++)
		seen |= !strcmp(elf_syms__symbol(dbg, i, NULL, NULL), "fixture_local_helper");
	assert_true(seen);
	/* the fixture's layout: virtual addresses are file offsets */
	assert_int_equal(elf_syms__file_offset_to_vaddr(es, 0x1000, &start), 0);
	assert_int_equal(start, 0x1000);
	elf_syms__free(dbg);
	elf_syms__free(es);
	close(r.fd);
}

static void elf_syms__open_debug__other_build_id__refused(void **state)
{
	struct debug_file_result res;
	struct elf_syms *es;
	struct stat st;
	struct root r;

	root_open(&r, "wrongid");
	es = target_open(&r, &st);
	errno = 0;
	assert_null(elf_syms__open_debug(r.fd, TARGET, es, &st, &res));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(res.build_id_bad, 1);
	assert_int_equal(res.tried, 1);
	assert_false(res.by_build_id);
	elf_syms__free(es);
	close(r.fd);
}

static void elf_syms__open_debug__debuglink_crc_mismatch__refused(void **state)
{
	struct symbolizer_stats st2;
	struct debug_file_result res;
	struct symbolizer *s;
	struct elf_syms *es;
	struct stat st;
	struct root r;

	root_open(&r, "badcrc");
	es = target_open(&r, &st);
	assert_null(elf_syms__open_debug(r.fd, TARGET, es, &st, &res));
	assert_int_equal(errno, ENOENT);
	/* the impostor has the right build id: only its CRC gives it away */
	assert_int_equal(res.crc_bad, 1);
	assert_int_equal(res.build_id_bad, 0);
	elf_syms__free(es);

	s = symbolizer__new(0, 64 << 20);
	assert_non_null(s);
	name_in_root(&r, s, local_helper_vaddr());
	symbolizer__stats(s, &st2);
	assert_int_equal(st2.debug_crc_bad, 1);
	assert_int_equal(st2.debug_missing, 1);
	symbolizer__free(s);
	close(r.fd);
}

static void elf_syms__open_debug__debuglink_in_dot_debug__found_by_link(void **state)
{
	struct debug_file_result res;
	struct elf_syms *es, *dbg;
	struct stat st;
	struct root r;

	root_open(&r, "link");
	es = target_open(&r, &st);
	dbg = elf_syms__open_debug(r.fd, TARGET, es, &st, &res);
	assert_non_null(dbg);
	assert_false(res.by_build_id);
	assert_int_equal(res.crc_bad, 0);
	elf_syms__free(dbg);
	/* a relative path has no directory to search */
	assert_null(elf_syms__open_debug(r.fd, "elf_fixture_debuglink", es, &st, &res));
	elf_syms__free(es);
	close(r.fd);
}

/*
 * The unwinder's search (no test of its own: it wants the debug file's
 * .debug_frame, not its names): the candidate that passes the checks comes
 * back open, and one of another build still does not.
 */
static void debug_file__open__no_test_of_its_own__checked_candidate_open(void **state)
{
	const char *roots[] = {"buildid", "link", "wrongid", "badcrc"};
	const bool found[] = {true, true, false, false};
	struct debug_file_result res;
	const uint8_t *id, *dbg_id;
	struct debug_file_key key;
	struct elf_file *ef, *dbg;
	size_t id_len, dbg_len;
	struct stat st;
	struct root r;
	int fd;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		root_open(&r, roots[i]);
		fd = safe_open_in_root(r.fd, TARGET, SAFE_OPEN_MAX_ELF_SIZE, &st);
		assert_true(fd >= 0);
		ef = elf_file__open_fd(fd);
		close(fd);
		assert_non_null(ef);
		id = elf_file__build_id(ef, &id_len);
		key = (struct debug_file_key){.build_id = id, .build_id_len = id_len};
		key.debuglink = elf_file__debuglink(ef, &key.crc);
		assert_non_null(key.debuglink);
		dbg = debug_file__open(r.fd, TARGET, &key, &st, NULL, NULL, &res);
		assert_int_equal(dbg != NULL, found[i]);
		if (dbg) {
			dbg_id = elf_file__build_id(dbg, &dbg_len);
			assert_int_equal(dbg_len, id_len);
			assert_memory_equal(dbg_id, id, id_len);
			assert_int_not_equal(elf_file__find_section_type(dbg, SHT_SYMTAB), 0);
		} else {
			assert_int_equal(errno, ENOENT);
			assert_int_equal(res.build_id_bad + res.crc_bad, 1);
		}
		elf_file__free(dbg);
		elf_file__free(ef);
		close(r.fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbolizer__user__debug_file_by_build_id__static_function_named),
		cmocka_unit_test(symbolizer__user__debug_file_by_debuglink__static_function_named),
		cmocka_unit_test(symbolizer__user__no_debug_file__static_function_unnamed),
		cmocka_unit_test(elf_syms__open_debug__build_id_path__found_and_checked),
		cmocka_unit_test(elf_syms__open_debug__other_build_id__refused),
		cmocka_unit_test(elf_syms__open_debug__debuglink_crc_mismatch__refused),
		cmocka_unit_test(elf_syms__open_debug__debuglink_in_dot_debug__found_by_link),
		cmocka_unit_test(debug_file__open__no_test_of_its_own__checked_candidate_open),
	};

	return cmocka_run_group_tests_name("debug_file", tests, NULL, NULL);
}
