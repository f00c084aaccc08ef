// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/unwind/unwind_table.c.
 *
 * Real ELF fixtures (tests/unit/unwind_fixtures.mk) and the system's libc are
 * checked row by row against binutils: readelf --debug-dump=frames-interp
 * gives each row's CFA, rbp and return address rules, and
 * --debug-dump=frames the expressions its "exp" stands for (unwind_check.c).
 * Small ELF files synthesized byte by byte, for what real files never
 * contain, are test_unwind_synth's.
 *
 * Fixtures are looked up in $FIXTURES_DIR, else $OUTPUT/fixtures/unwind,
 * else build/fixtures/unwind (the test runs from the repository root);
 * readelf and nm are found through PATH.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "fixtures.h"
#include "unwind_check.h"
#include "unwind/unwind_table.h"

#define LIBC_PATH      "/lib/x86_64-linux-gnu/libc.so.6"
#define FIX_OMITFP_PIE "unwind_omitfp_pie"
#define FIX_FP_NOPIE   "unwind_fp_nopie"
#define FIX_LIB	       "libunwind_fixture.so"
#define FIX_BARE_DF    "unwind_bare_debug_frame"
#define FIX_BARE_ZLIB  "unwind_bare_zlib"
#define FIX_BARE_ZGNU  "unwind_bare_zlib_gnu"
#define FIX_BARE_STRIP "unwind_bare_stripped"
#define FIX_BARE_DEBUG "unwind_bare.debug"
#define FIX_BARE_NOCFI "unwind_bare_nocfi"
#define FIX_MIXED      "unwind_mixed"
#define FIX_MIXED_DBG  "unwind_mixed.debug"
#define FIX_A64_OMITFP "unwind_a64_omitfp_pie"
#define FIX_A64_FP     "unwind_a64_fp_nopie"
#define PATH_LEN       4096

/* ---- fixtures and files */

/* where fixture @name is; whether it is there */
static bool fixture_where(char *buf, const char *name)
{
	const char *dir = getenv("FIXTURES_DIR");
	const char *output = getenv("OUTPUT");

	if (dir && *dir)
		snprintf(buf, PATH_LEN, "%s/%s", dir, name);
	else if (output && *output)
		snprintf(buf, PATH_LEN, "%s/fixtures/unwind/%s", output, name);
	else
		snprintf(buf, PATH_LEN, "build/fixtures/unwind/%s", name);
	return access(buf, R_OK) == 0;
}

static void fixture_path(char *buf, const char *name)
{
	if (!fixture_where(buf, name))
		fail_msg("fixture %s missing: run make check (tests/unit/unwind_fixtures.mk)", buf);
}

/* a fixture open twice: through libelf, to inspect it, and as the builder reads it */
struct test_elf {
	int fd;
	Elf *elf;
	struct elf_file *ef;
};

static void test_elf__open(struct test_elf *f, const char *path)
{
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(f->fd >= 0);
	/* ELF_C_READ: libelf reads with pread(), never mmap() */
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	assert_non_null(f->elf);
	f->ef = elf_file__open_fd(f->fd);
	assert_non_null(f->ef);
}

static void test_elf__close(struct test_elf *f)
{
	elf_file__free(f->ef);
	elf_end(f->elf);
	close(f->fd);
}

static int build_path(const char *path, const char *debug_path, struct unwind_table **t)
{
	struct test_elf f, d = {.fd = -1};
	char err[256];
	int ret;

	test_elf__open(&f, path);
	if (debug_path)
		test_elf__open(&d, debug_path);
	/* the file's machine: AArch64 fixtures are checked on x86-64 too */
	struct unwind_table_limits lim = {.machine = elf_file__ehdr(f.ef)->e_machine};

	ret = unwind_table__build(f.ef, debug_path ? d.ef : NULL, &lim, t, err, sizeof(err));
	if (ret)
		print_message("build %s: %d: %s\n", path, ret, err);
	else
		assert_string_equal(err, "");
	if (debug_path)
		test_elf__close(&d);
	test_elf__close(&f);
	return ret;
}

static void check_file(const char *path, const char *section, struct unwind_table **out)
{
	struct unwind_table *t;
	size_t checked;

	assert_int_equal(build_path(path, NULL, &t), 0);
	assert_string_equal(t->source, section);
	unwind_check_invariants(t);
	checked = unwind_check_readelf(t, path, section);
	assert_true(checked > 0);
	print_message("%s: %zu rows, %zu rules, %zu FDEs; %zu readelf rows match\n", path,
		      t->nr_rows, t->nr_rules, t->stats.fdes, checked);
	if (out)
		*out = t;
	else
		unwind_table__free(t);
}

/* `nm -S`: a symbol's address and size */
static bool nm_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[PATH_LEN + 100], line[512], sym[256], type;
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -S '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		/* size-0 symbols come without a size */
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %255s", addr, size, &type, sym) != 4) {
			*size = 0;
			if (sscanf(line, "%" SCNx64 " %c %255s", addr, &type, sym) != 3)
				continue;
		}
		if (strcmp(sym, name) == 0) {
			found = true;
			break;
		}
	}
	pclose(f);
	return found;
}

/* ---- real files */

static void unwind_table__build__omitfp_pie__matches_readelf(void **state)
{
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_OMITFP_PIE);
	check_file(path, ".eh_frame", &t);
	assert_int_equal(t->base, 0);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_PLT] >= 1);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_END] >= 1);	 /* _start */
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RBP] >= 1); /* uses_alloca */
	assert_int_equal(t->stats.fdes_outside + t->stats.fdes_overlap, 0);
	unwind_table__free(t);
}

static void unwind_table__build__fp_nopie__matches_readelf(void **state)
{
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_FP_NOPIE);
	check_file(path, ".eh_frame", &t);
	assert_int_equal(t->base, 0x400000);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_PLT] >= 1);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RBP] >= 1);
	unwind_table__free(t);
}

static void unwind_table__build__shared_lib__matches_readelf(void **state)
{
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_LIB);
	check_file(path, ".eh_frame", &t);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_PLT] >= 1);
	unwind_table__free(t);
}

static void unwind_table__build__libc__matches_readelf(void **state)
{
	struct unwind_table *t;

	(void)state;

	if (access(LIBC_PATH, R_OK) != 0)
		skip();
	check_file(LIBC_PATH, ".eh_frame", &t);
	assert_int_equal(t->stats.cmd_rows[UNWIND_CMD_SIGNAL], 1); /* __restore_rt */
	unwind_table__free(t);
}

/* AArch64 fixtures (Debian's cross compiler) and arm64 glibc, built on any host */
static void unwind_table__build__aarch64__matches_readelf(void **state)
{
	static const char *const a64_libc = "/usr/lib/aarch64-linux-gnu/libc.so.6";
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;
	if (!fixture_where(path, FIX_A64_OMITFP)) {
		print_message("SKIP: no %s (make deps installs gcc-aarch64-linux-gnu)\n", path);
		skip();
	}
	check_file(path, ".eh_frame", &t);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_END] >= 1);	 /* _start: x30 undefined */
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RSP] >= 1); /* sp + N, x30 saved */
	unwind_table__free(t);
	fixture_path(path, FIX_A64_FP);
	check_file(path, ".eh_frame", &t);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RBP] >= 1); /* x29 + N: uses_alloca */
	unwind_table__free(t);
	if (access(a64_libc, R_OK) == 0) {
		check_file(a64_libc, ".eh_frame", &t);
		unwind_table__free(t);
	}
}

/* any files in $UNWIND_TEST_FILES (colon-separated), e.g. a large library */
static void unwind_table__build__extra_files__match_readelf(void **state)
{
	const char *env = getenv("UNWIND_TEST_FILES");
	char *list, *path, *save = NULL;

	(void)state;
	if (!env || !*env)
		skip();
	list = strdup(env);
	assert_non_null(list);
	for (path = strtok_r(list, ":", &save); path; path = strtok_r(NULL, ":", &save))
		check_file(path, ".eh_frame", NULL);
	free(list);
}

/* the lazy .plt: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) past its first 16 bytes */
static void unwind_table__find__lazy_plt__plt_rule(void **state)
{
	const struct unwind_rule *r;
	struct unwind_table *t;
	struct test_elf f;
	char path[PATH_LEN];
	Elf_Scn *scn = NULL;
	uint64_t plt = 0, plt_size = 0;
	size_t shstrndx;
	GElf_Shdr sh;

	(void)state;

	fixture_path(path, FIX_FP_NOPIE);
	test_elf__open(&f, path);
	assert_int_equal(elf_getshdrstrndx(f.elf, &shstrndx), 0);
	while ((scn = elf_nextscn(f.elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    strcmp(elf_strptr(f.elf, shstrndx, sh.sh_name), ".plt") == 0) {
			plt = sh.sh_addr;
			plt_size = sh.sh_size;
		}
	test_elf__close(&f);
	assert_true(plt && plt_size >= 32);

	assert_int_equal(build_path(path, NULL, &t), 0);
	r = unwind_table__find(t, plt + 16);
	assert_int_equal(r->cmd, UNWIND_CMD_PLT);
	assert_int_equal(r->cfa_off, 8);
	assert_int_equal(r->rbp_off, 11);
	assert_int_equal(r->rbp, UNWIND_RBP_SAME);
	assert_int_equal(unwind_table__find(t, plt + plt_size - 1)->cmd, UNWIND_CMD_PLT);
	/* the first 16 bytes push the GOT entry: plain rsp offsets */
	assert_int_equal(unwind_table__find(t, plt)->cmd, UNWIND_CMD_CFA_RSP);
	unwind_table__free(t);
}

/* force_align_arg_pointer with stack arguments: DRAP, CFA = *(rbp - 8) */
static void unwind_table__find__realigned_function__rbp_deref(void **state)
{
	const char *fixtures[] = {FIX_OMITFP_PIE, FIX_FP_NOPIE};
	char path[PATH_LEN];

	(void)state;

	for (size_t i = 0; i < 2; i++) {
		bool deref = false, drap = false;
		struct unwind_table *t;
		uint64_t addr, size;

		fixture_path(path, fixtures[i]);
		assert_true(nm_symbol(path, "realigned", &addr, &size));
		assert_int_equal(build_path(path, NULL, &t), 0);
		for (uint64_t a = addr; a < addr + size; a++) {
			const struct unwind_rule *r = unwind_table__find(t, a);

			if (r->cmd == UNWIND_CMD_CFA_RBP_DEREF) {
				assert_int_equal(r->cfa_off, -8);
				assert_int_equal(r->rbp, UNWIND_RBP_RBP);
				assert_int_equal(r->rbp_off, 0);
				deref = true;
			}
			/* the CFA on r10 while the realignment is set up */
			drap |= r->cmd == UNWIND_CMD_UNSUPPORTED;
		}
		assert_true(deref);
		assert_true(drap);
		assert_true(t->stats.unsup[UNWIND_UNSUP_CFA_REG] >= 1);
		unwind_table__free(t);
	}
}

/* __restore_rt, the signal trampoline: its CIE has the 'S' augmentation */
static void unwind_table__find__libc_restore_rt__signal(void **state)
{
	char cmd[PATH_LEN], line[512], debug[PATH_LEN] = "";
	uint64_t addr = 0, size;
	struct unwind_table *t;
	FILE *f;

	(void)state;

	if (access(LIBC_PATH, R_OK) != 0)
		skip();
	/* libc's separate debug file has __restore_rt in .symtab */
	snprintf(cmd, sizeof(cmd), "readelf -n %s 2>/dev/null", LIBC_PATH);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *id = strstr(line, "Build ID: ");

		if (id)
			id[10 + strcspn(id + 10, " \t\n")] = '\0';
		if (id && strlen(id + 10) > 2)
			snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug",
				 id + 10, id + 12);
	}
	pclose(f);
	if (debug[0] && access(debug, R_OK) == 0 &&
	    nm_symbol(debug, "__restore_rt", &addr, &size)) {
		print_message("__restore_rt at %#" PRIx64 " (from %s)\n", addr, debug);
	} else {
		/* no debug file: the FDE whose CIE has 'S' */
		addr = unwind_check_readelf_signal_fde(LIBC_PATH, ".eh_frame") + 1;
		print_message("__restore_rt (from the 'S' FDE) at %#" PRIx64 "\n", addr);
	}
	assert_true(addr != 0);
	assert_int_equal(build_path(LIBC_PATH, NULL, &t), 0);
	assert_int_equal(unwind_table__find(t, addr)->cmd, UNWIND_CMD_SIGNAL);
	unwind_table__free(t);
}

static void unwind_table__build__debug_frame_only__matches_readelf(void **state)
{
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_BARE_DF);
	check_file(path, ".debug_frame", &t);
	assert_int_equal(t->from_debug_file, 0);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RBP] >= 1);
	unwind_table__free(t);
}

static void tables_equal(const struct unwind_table *a, const struct unwind_table *b)
{
	assert_int_equal(a->base, b->base);
	assert_int_equal(a->nr_rows, b->nr_rows);
	assert_int_equal(a->nr_rules, b->nr_rules);
	assert_memory_equal(a->rows, b->rows, a->nr_rows * sizeof(*a->rows));
	assert_memory_equal(a->rules, b->rules, a->nr_rules * sizeof(*a->rules));
}

static void unwind_table__build__compressed_debug_frame__same_rows_as_plain(void **state)
{
	const char *compressed[] = {FIX_BARE_ZLIB, FIX_BARE_ZGNU};
	struct unwind_table *plain, *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_BARE_DF);
	assert_int_equal(build_path(path, NULL, &plain), 0);
	for (size_t i = 0; i < 2; i++) {
		fixture_path(path, compressed[i]);
		assert_int_equal(build_path(path, NULL, &t), 0);
		assert_string_equal(t->source, ".debug_frame");
		tables_equal(plain, t);
		unwind_table__free(t);
	}
	unwind_table__free(plain);
}

static void unwind_table__build__stripped_with_debug_file__uses_its_debug_frame(void **state)
{
	char path[PATH_LEN], debug[PATH_LEN];
	struct unwind_table *t;

	(void)state;

	fixture_path(path, FIX_BARE_STRIP);
	fixture_path(debug, FIX_BARE_DEBUG);
	assert_int_equal(build_path(path, NULL, &t), -ENODATA);
	assert_null(t);
	assert_int_equal(build_path(path, debug, &t), 0);
	assert_int_equal(t->from_debug_file, 1);
	assert_string_equal(t->source, ".debug_frame");
	unwind_check_invariants(t);
	assert_true(unwind_check_readelf(t, debug, ".debug_frame") > 0);
	unwind_table__free(t);
}

/*
 * A program built without unwind tables: .eh_frame covers only the start
 * files; its debug file's .debug_frame fills in its own functions, and the
 * start files keep their .eh_frame rows.
 */
static void unwind_table__build__eh_frame_gaps__debug_file_fills_them(void **state)
{
	char path[PATH_LEN], debug[PATH_LEN];
	struct unwind_table *own, *t;
	uint64_t main_addr, size, start_addr;

	(void)state;

	fixture_path(path, FIX_MIXED);
	fixture_path(debug, FIX_MIXED_DBG);
	assert_true(nm_symbol(debug, "main", &main_addr, &size));
	assert_true(nm_symbol(debug, "_start", &start_addr, &size));

	assert_int_equal(build_path(path, NULL, &own), 0);
	assert_int_equal(own->sources, UNWIND_SRC_EH_FRAME);
	assert_true(own->stats.covered_bytes < own->stats.text_bytes / 2);
	assert_int_equal(unwind_table__find(own, main_addr)->cmd, UNWIND_CMD_INVALID);

	assert_int_equal(build_path(path, debug, &t), 0);
	unwind_check_invariants(t);
	assert_int_equal(t->sources, UNWIND_SRC_EH_FRAME | UNWIND_SRC_DEBUG_FILE);
	assert_int_equal(t->from_debug_file, 1);
	assert_string_equal(t->source, ".eh_frame");
	assert_int_equal(t->stats.fdes + t->stats.fdes_shadowed,
			 unwind_check_readelf_fdes(path, ".eh_frame") +
				 unwind_check_readelf_fdes(debug, ".debug_frame"));
	assert_true(t->stats.covered_bytes > own->stats.text_bytes / 2);
	assert_int_equal(unwind_table__find(t, main_addr)->cmd, UNWIND_CMD_CFA_RSP);
	assert_memory_equal(unwind_table__find(t, start_addr), unwind_table__find(own, start_addr),
			    sizeof(struct unwind_rule));
	unwind_table__free(own);
	unwind_table__free(t);
}

/* a hostile debug file (a broken .debug_frame) costs nothing the file has */
static void unwind_table__build__broken_debug_file__own_rows_kept(void **state)
{
	char path[PATH_LEN], debug[PATH_LEN], broken[] = "/tmp/unwind_broken_XXXXXX";
	struct unwind_table *own, *t;
	struct test_elf f;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	uint32_t bad = 0xfffffff0; /* a CIE length past the section */
	uint64_t off = 0;
	uint8_t *buf;
	size_t len;
	int fd;

	(void)state;

	fixture_path(path, FIX_MIXED);
	fixture_path(debug, FIX_MIXED_DBG);
	test_elf__open(&f, debug);
	assert_int_equal(elf_getshdrstrndx(f.elf, &shstrndx), 0);
	while ((scn = elf_nextscn(f.elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(f.elf, shstrndx, sh.sh_name), ".debug_frame"))
			off = sh.sh_offset;
	test_elf__close(&f);
	assert_true(off != 0);
	fixture_read_file(debug, &buf, &len);
	memcpy(buf + off, &bad, sizeof(bad));
	fd = mkstemp(broken);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);

	assert_int_equal(build_path(path, NULL, &own), 0);
	assert_int_equal(build_path(path, broken, &t), 0);
	unlink(broken);
	assert_int_equal(t->stats.sources_rejected, 1);
	assert_int_equal(t->sources, UNWIND_SRC_EH_FRAME);
	assert_int_equal(t->from_debug_file, 0);
	tables_equal(own, t);
	unwind_table__free(own);
	unwind_table__free(t);
}

static void unwind_table__build__no_cfi__returns_enodata(void **state)
{
	struct unwind_table *t = (void *)1;
	char path[PATH_LEN], err[128];
	struct test_elf f;

	(void)state;

	fixture_path(path, FIX_BARE_NOCFI);
	test_elf__open(&f, path);
	assert_int_equal(unwind_table__build(f.ef, NULL, NULL, &t, err, sizeof(err)), -ENODATA);
	assert_null(t);
	assert_non_null(strstr(err, "no CFI"));
	test_elf__close(&f);
}

/* the vdso, as the collector will read it: an image in memory */
static void unwind_table__build_mem__vdso__has_rows(void **state)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct unwind_table *t;
	char err[128];

	(void)state;

	if (!eh)
		skip();
	assert_int_equal(unwind_table__build_mem(eh, eh->e_shoff + eh->e_shnum * eh->e_shentsize,
						 &t, err, sizeof(err)),
			 0);
	assert_string_equal(t->source, ".eh_frame");
	unwind_check_invariants(t);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RSP] >= 1);
	unwind_table__free(t);
}

/* ---- hostile and broken input */

static void unwind_table__build_mem__empty_garbage_truncated__fail_cleanly(void **state)
{
	struct unwind_table *t = (void *)1;
	char path[PATH_LEN], err[128];
	uint8_t garbage[4096];
	uint8_t *buf;
	size_t len, i;
	int ret;

	(void)state;

	assert_int_equal(unwind_table__build_mem(NULL, 100, &t, err, sizeof(err)), -EINVAL);
	assert_null(t);
	assert_int_equal(unwind_table__build_mem("", 0, &t, err, sizeof(err)), -EINVAL);
	assert_true(strlen(err) > 0);

	srand(1);
	for (i = 0; i < sizeof(garbage); i++)
		garbage[i] = rand();
	assert_int_equal(unwind_table__build_mem(garbage, sizeof(garbage), &t, err, sizeof(err)),
			 -EINVAL);
	memcpy(garbage, ELFMAG, SELFMAG);
	ret = unwind_table__build_mem(garbage, sizeof(garbage), &t, err, sizeof(err));
	assert_true(ret < 0);
	assert_null(t);

	fixture_path(path, FIX_LIB);
	fixture_read_file(path, &buf, &len);
	for (size_t cut = 0; cut < len; cut += cut < 256 ? 1 : 97) {
		ret = unwind_table__build_mem(buf, cut, &t, err, sizeof(err));
		if (ret == 0) {
			unwind_check_invariants(t);
			unwind_table__free(t);
		} else {
			assert_true(ret == -EINVAL || ret == -ENODATA || ret == -ENOTSUP);
			assert_null(t);
			assert_true(strlen(err) > 0);
		}
	}
	/* the whole file works from memory as from the fd */
	assert_int_equal(unwind_table__build_mem(buf, len, &t, err, sizeof(err)), 0);
	unwind_check_invariants(t);
	unwind_table__free(t);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwind_table__build__omitfp_pie__matches_readelf),
		cmocka_unit_test(unwind_table__build__fp_nopie__matches_readelf),
		cmocka_unit_test(unwind_table__build__shared_lib__matches_readelf),
		cmocka_unit_test(unwind_table__build__libc__matches_readelf),
		cmocka_unit_test(unwind_table__build__aarch64__matches_readelf),
		cmocka_unit_test(unwind_table__build__extra_files__match_readelf),
		cmocka_unit_test(unwind_table__find__lazy_plt__plt_rule),
		cmocka_unit_test(unwind_table__find__realigned_function__rbp_deref),
		cmocka_unit_test(unwind_table__find__libc_restore_rt__signal),
		cmocka_unit_test(unwind_table__build__debug_frame_only__matches_readelf),
		cmocka_unit_test(unwind_table__build__compressed_debug_frame__same_rows_as_plain),
		cmocka_unit_test(
			unwind_table__build__stripped_with_debug_file__uses_its_debug_frame),
		cmocka_unit_test(unwind_table__build__eh_frame_gaps__debug_file_fills_them),
		cmocka_unit_test(unwind_table__build__broken_debug_file__own_rows_kept),
		cmocka_unit_test(unwind_table__build__no_cfi__returns_enodata),
		cmocka_unit_test(unwind_table__build_mem__vdso__has_rows),
		cmocka_unit_test(unwind_table__build_mem__empty_garbage_truncated__fail_cleanly),
	};

	return cmocka_run_group_tests_name("unwind_table", tests, NULL, NULL);
}
