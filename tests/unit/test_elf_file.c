// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/elf/elf_file.c, the one reader of hostile ELF files.
 * Real fixtures (tests/unit/elf_fixtures.mk, unwind_fixtures.mk) are read
 * and compared with binutils' view of them (readelf); hostile ones are made
 * here, by mutating a fixture's bytes or with tests/hostile_elf.py.
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

#define FIXTURE_PIE	 "elf_fixture_pie"
#define FIXTURE_NOPIE	 "elf_fixture_nopie"
#define FIXTURE_LIB	 "libelf_fixture.so"
#define FIXTURE_STRIPPED "elf_fixture_debuglink"

static const char *fixture_path(const char *name)
{
	static char path[4096];
	const char *output = getenv("OUTPUT");

	snprintf(path, sizeof(path), "%s/fixtures/%s", output && *output ? output : "build", name);
	if (access(path, R_OK) != 0)
		fail_msg("fixture %s missing: run make check (tests/unit/elf_fixtures.mk)", path);
	return path;
}

static struct elf_file *open_path(const char *path)
{
	struct elf_file *ef;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ef = elf_file__open_fd(fd);
	/* the fd is duplicated: the caller's may go at once */
	close(fd);
	assert_non_null(ef);
	return ef;
}

/* readelf's answer to @cmd (a pipeline printing one line), into @out */
static void shell_line(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");

	assert_non_null(f);
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	pclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/* sections and PT_LOADs, as readelf lists them */
static void elf_file__open_fd__fixtures__headers_match_readelf(void **state)
{
	const char *const names[] = {FIXTURE_PIE, FIXTURE_NOPIE, FIXTURE_LIB, FIXTURE_STRIPPED};
	char cmd[4400], line[512], want[256];
	unsigned long long off, vaddr, filesz, memsz;
	const struct elf_load *loads;
	struct elf_file *ef;
	size_t i, k, n;
	FILE *f;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		const char *path = fixture_path(names[k]);

		ef = open_path(path);
		snprintf(cmd, sizeof(cmd),
			 "readelf -hW '%s' | sed -n 's/.*Number of section headers: *//p'", path);
		shell_line(cmd, line, sizeof(line));
		assert_int_equal(elf_file__nr_sections(ef), strtoul(line, NULL, 10));
		for (i = 1; i < elf_file__nr_sections(ef); i++) {
			snprintf(
				cmd, sizeof(cmd),
				"readelf -SW '%s' | sed -n 's/^ *\\[ *%zu\\] \\([^ ]*\\) .*/\\1/p'",
				path, i);
			shell_line(cmd, want, sizeof(want));
			assert_string_equal(elf_file__section_name(ef, i), want);
		}
		snprintf(cmd, sizeof(cmd), "readelf -lW '%s' | awk '$1 == \"LOAD\"'", path);
		f = popen(cmd, "r");
		assert_non_null(f);
		loads = elf_file__loads(ef, &n);
		for (i = 0; fgets(line, sizeof(line), f); i++) {
			assert_true(i < n);
			assert_int_equal(sscanf(line, " LOAD %llx %llx %*x %llx %llx", &off, &vaddr,
						&filesz, &memsz),
					 4);
			assert_int_equal(loads[i].offset, off);
			assert_int_equal(loads[i].vaddr, vaddr);
			assert_int_equal(loads[i].filesz, filesz);
			assert_int_equal(loads[i].memsz, memsz);
			/* flags "R E": hex is printed lowercase, so an 'E' is PF_X's */
			assert_int_equal(!!(loads[i].flags & PF_X), strchr(line, 'E') != NULL);
			assert_true(loads[i].in_file);
		}
		pclose(f);
		assert_int_equal(i, n);
		assert_true(n >= 2);
		elf_file__free(ef);
	}
}

static void elf_file__build_id__fixtures__matches_readelf(void **state)
{
	const char *const names[] = {FIXTURE_PIE, FIXTURE_NOPIE, FIXTURE_LIB};
	char cmd[4200], want[256], hex[ELF_FILE_BUILD_ID_HEX];
	struct elf_file *ef;
	const uint8_t *id;
	size_t len;

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		snprintf(cmd, sizeof(cmd), "readelf -n '%s' | sed -n 's/.*Build ID: //p'",
			 fixture_path(names[k]));
		shell_line(cmd, want, sizeof(want));
		assert_true(strlen(want) >= 40);
		ef = open_path(fixture_path(names[k]));
		id = elf_file__build_id(ef, &len);
		assert_non_null(id);
		elf_build_id__hex(id, len, hex);
		assert_string_equal(hex, want);
		elf_file__free(ef);
	}
}

static void elf_notes__build_id__note_section__found_never_past_its_end(void **state)
{
	uint8_t *buf, id[ELF_FILE_BUILD_ID_MAX];
	const Elf64_Shdr *sh;
	struct elf_file *ef;
	const uint8_t *want;
	size_t len, want_len;

	fixture_read_file(fixture_path(FIXTURE_PIE), &buf, &len);
	ef = elf_file__open_mem(buf, len);
	assert_non_null(ef);
	want = elf_file__build_id(ef, &want_len);
	sh = elf_file__section(ef, elf_file__find_section(ef, ".note.gnu.build-id"));
	assert_non_null(sh);
	assert_int_equal(elf_notes__build_id(buf + sh->sh_offset, sh->sh_size, 4, id), want_len);
	assert_memory_equal(id, want, want_len);
	/* cut anywhere inside: never found past the end, never read past it */
	assert_int_equal(elf_notes__build_id(buf + sh->sh_offset, sh->sh_size - 1, 4, id), 0);
	assert_int_equal(elf_notes__build_id(buf + sh->sh_offset, 11, 4, id), 0);
	assert_int_equal(elf_notes__build_id(buf + sh->sh_offset, sh->sh_size, 3, id), 0);
	assert_int_equal(elf_notes__build_id(NULL, 0, 4, id), 0);
	elf_file__free(ef);
	free(buf);
}

static void elf_file__debuglink__stripped_fixture__name_and_crc(void **state)
{
	struct elf_file *ef = open_path(fixture_path(FIXTURE_STRIPPED));
	char cmd[4200], line[64];
	uint32_t crc;

	assert_string_equal(elf_file__debuglink(ef, &crc), "elf_fixture_debuglink.debug");
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import sys,zlib; print(zlib.crc32(open(sys.argv[1],\"rb\").read()))' "
		 "'%s.debug'",
		 fixture_path(FIXTURE_STRIPPED));
	shell_line(cmd, line, sizeof(line));
	assert_int_equal(crc, strtoul(line, NULL, 10));
	elf_file__free(ef);
	ef = open_path(fixture_path(FIXTURE_PIE));
	assert_null(elf_file__debuglink(ef, NULL));
	elf_file__free(ef);
}

/* a section's bytes, whole, through elf_file__section_copy() */
static void section_bytes(struct elf_file *ef, const char *name, void **buf, size_t *len)
{
	size_t idx = elf_file__find_section(ef, name);

	assert_int_not_equal(idx, 0);
	assert_int_equal(elf_file__section_copy(ef, idx, 1u << 30, buf, len), 0);
}

/* SHF_COMPRESSED and GNU .zdebug_ sections inflate to the plain section's bytes */
static void elf_file__section_copy__compressed__same_bytes_as_plain(void **state)
{
	struct elf_file *plain, *zlib, *gnu;
	void *a, *b, *c;
	size_t la, lb, lc;

	plain = open_path(fixture_path("unwind/unwind_bare_debug_frame"));
	zlib = open_path(fixture_path("unwind/unwind_bare_zlib"));
	gnu = open_path(fixture_path("unwind/unwind_bare_zlib_gnu"));
	assert_true(
		elf_file__section(zlib, elf_file__find_section(zlib, ".debug_frame"))->sh_flags &
		SHF_COMPRESSED);
	section_bytes(plain, ".debug_frame", &a, &la);
	section_bytes(zlib, ".debug_frame", &b, &lb);
	section_bytes(gnu, ".zdebug_frame", &c, &lc);
	assert_true(la > 64);
	assert_int_equal(lb, la);
	assert_int_equal(lc, la);
	assert_memory_equal(a, b, la);
	assert_memory_equal(a, c, la);
	free(a);
	free(b);
	free(c);
	elf_file__free(plain);
	elf_file__free(zlib);
	elf_file__free(gnu);
}

/* a compressed section that lies: refused, never inflated past what it claims */
static void elf_file__section_size__lying_compression__refused(void **state)
{
	struct elf_file *ef;
	Elf64_Chdr *ch;
	uint64_t size;
	void *copy;
	size_t len, idx, zlen;
	uint8_t *buf;

	fixture_read_file(fixture_path("unwind/unwind_bare_zlib"), &buf, &len);
	ef = elf_file__open_mem(buf, len);
	idx = elf_file__find_section(ef, ".debug_frame");
	ch = (Elf64_Chdr *)(buf + elf_file__section(ef, idx)->sh_offset);
	zlen = ch->ch_size;
	/* past the caller's cap: refused before anything is allocated */
	assert_int_equal(elf_file__section_size(ef, idx, zlen - 1, &size), -E2BIG);
	assert_int_equal(elf_file__section_size(ef, idx, zlen, &size), 0);
	assert_int_equal(size, zlen);
	/* claims more than the stream holds, or less */
	ch->ch_size = zlen + 1;
	assert_int_equal(elf_file__section_copy(ef, idx, 1u << 20, &copy, &len), -EINVAL);
	ch->ch_size = zlen - 1;
	assert_int_equal(elf_file__section_copy(ef, idx, 1u << 20, &copy, &len), -EINVAL);
	/* a corrupt stream */
	ch->ch_size = zlen;
	((uint8_t *)(ch + 1))[4] ^= 0xff;
	assert_int_equal(elf_file__section_copy(ef, idx, 1u << 20, &copy, &len), -EINVAL);
	/* zstd: not read */
	ch->ch_type = 2;
	assert_int_equal(elf_file__section_size(ef, idx, 1u << 20, &size), -ENOTSUP);
	elf_file__free(ef);
	free(buf);
}

/* the file shrinks after it was opened (the target truncates it): reads fail, no SIGBUS */
static void elf_file__open_fd__file_truncated_after_open__reads_fail(void **state)
{
	char *dir = fixture_tmpdir("elf_file"), path[4200], cmd[8500];
	struct elf_symtab st;
	struct elf_file *ef;
	Elf64_Sym sym;
	size_t idx, len;
	void *copy;
	int fd;

	snprintf(path, sizeof(path), "%s/lib.so", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", fixture_path(FIXTURE_LIB), path);
	assert_int_equal(system(cmd), 0);
	ef = open_path(path);
	idx = elf_file__find_section(ef, ".symtab");
	assert_int_not_equal(idx, 0);
	assert_int_equal(elf_file__symtab(ef, SHT_SYMTAB, &st), 0);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1024), 0);
	close(fd);
	assert_int_equal(elf_file__section_copy(ef, idx, 1u << 20, &copy, &len), -EINVAL);
	assert_int_equal(elf_symtab__get(&st, st.nr - 1, &sym), -EINVAL);
	elf_symtab__release(&st);
	elf_file__free(ef);
	fixture_tmpdir_remove(dir);
}

static void elf_file__open_fd__not_regular_or_too_large__refused(void **state)
{
	char *dir = fixture_tmpdir("elf_file"), path[4200];
	Elf64_Ehdr eh = {.e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				     EV_CURRENT},
			 .e_type = ET_DYN,
			 .e_machine = EM_X86_64,
			 .e_version = EV_CURRENT};
	int fd, pipefd[2];

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	errno = 0;
	assert_null(elf_file__open_fd(fd));
	assert_int_equal(errno, EINVAL);
	close(fd);
	assert_int_equal(pipe(pipefd), 0);
	errno = 0;
	assert_null(elf_file__open_fd(pipefd[0]));
	assert_int_equal(errno, EINVAL);
	close(pipefd[0]);
	close(pipefd[1]);

	/* a sparse file one byte past the cap, with a valid header */
	snprintf(path, sizeof(path), "%s/huge", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, &eh, sizeof(eh)), sizeof(eh));
	assert_int_equal(ftruncate(fd, ELF_FILE_MAX_SIZE + 1), 0);
	errno = 0;
	assert_null(elf_file__open_fd(fd));
	assert_int_equal(errno, EFBIG);
	/* at the cap: a header without tables is a file */
	assert_int_equal(ftruncate(fd, ELF_FILE_MAX_SIZE), 0);
	elf_file__free(elf_file__open_fd(fd));
	close(fd);
	fixture_tmpdir_remove(dir);
}

static Elf64_Ehdr *ehdr_of(uint8_t *buf)
{
	return (Elf64_Ehdr *)buf;
}

static void assert_open_mem_errno(const uint8_t *buf, size_t len, int err)
{
	errno = 0;
	assert_null(elf_file__open_mem(buf, len));
	assert_int_equal(errno, err);
}

/* header counts past the caps, another class, byte order or type: refused */
static void elf_file__open_mem__hostile_headers__einval(void **state)
{
	uint8_t *buf, *orig;
	size_t len;

	fixture_read_file(fixture_path(FIXTURE_PIE), &orig, &len);
	buf = malloc(len);
	assert_non_null(buf);

#define RESET() memcpy(buf, orig, len)
	RESET();
	ehdr_of(buf)->e_phnum = ELF_FILE_MAX_SEGMENTS + 1;
	assert_open_mem_errno(buf, len, EINVAL);
	RESET();
	/* extended numbering: e_shnum 0, the count in section 0's sh_size */
	ehdr_of(buf)->e_shnum = 0;
	((Elf64_Shdr *)(buf + ehdr_of(buf)->e_shoff))->sh_size = ELF_FILE_MAX_SECTIONS + 1;
	assert_open_mem_errno(buf, len, EINVAL);
	RESET();
	ehdr_of(buf)->e_shoff = len - 8;
	assert_open_mem_errno(buf, len, EINVAL);
	RESET();
	ehdr_of(buf)->e_phentsize = 32;
	assert_open_mem_errno(buf, len, EINVAL);
	RESET();
	buf[EI_CLASS] = ELFCLASS32;
	assert_open_mem_errno(buf, len, EINVAL);
	RESET();
	buf[EI_DATA] = ELFDATA2MSB;
	assert_open_mem_errno(buf, len, EINVAL);
	RESET();
	ehdr_of(buf)->e_type = ET_REL;
	assert_open_mem_errno(buf, len, EINVAL);
	assert_open_mem_errno(orig, sizeof(Elf64_Ehdr) - 1, EINVAL);
	/* names out of the file: no section found by name, the file still read */
	RESET();
	ehdr_of(buf)->e_shstrndx = 0xfff0;
	{
		struct elf_file *ef = elf_file__open_mem(buf, len);

		assert_non_null(ef);
		assert_null(elf_file__section_name(ef, 1));
		assert_int_equal(elf_file__find_section(ef, ".text"), 0);
		elf_file__free(ef);
	}
#undef RESET
	free(buf);
	free(orig);
}

/* .symtab through its windows: every function nm lists, by name and address */
static void elf_symtab__fixture__functions_as_nm_lists(void **state)
{
	char cmd[4200], line[512], name[256], nm_name[256];
	unsigned long long addr;
	struct elf_symtab st;
	struct elf_file *ef;
	size_t i, found = 0, want = 0;
	Elf64_Sym sym;
	char type;
	FILE *f;

	ef = open_path(fixture_path(FIXTURE_NOPIE));
	assert_int_equal(elf_file__symtab(ef, SHT_SYMTAB, &st), 0);
	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", fixture_path(FIXTURE_NOPIE));
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, nm_name) != 3 ||
		    (type != 'T' && type != 't'))
			continue;
		want++;
		for (i = 1; i < st.nr; i++) {
			assert_int_equal(elf_symtab__get(&st, i, &sym), 0);
			assert_int_equal(
				elf_symtab__name(&st, sym.st_name, name, sizeof(name), NULL), 0);
			if (sym.st_value == addr && !strcmp(name, nm_name)) {
				found++;
				break;
			}
		}
	}
	pclose(f);
	assert_true(want > 5);
	assert_int_equal(found, want);
	/* a name cut to the buffer; offsets out of the table refused */
	assert_int_equal(elf_symtab__get(&st, 1, &sym), 0);
	assert_int_equal(elf_symtab__name(&st, 1, name, 3, &i), 0);
	assert_true(i <= 2 && strlen(name) == i);
	assert_int_equal(elf_symtab__name(&st, (uint32_t)st.str_size, name, sizeof(name), NULL),
			 -EINVAL);
	assert_int_equal(elf_symtab__get(&st, st.nr, &sym), -EINVAL);
	assert_int_equal(elf_symtab__load_strings(&st, st.str_size - 1), -E2BIG);
	elf_symtab__release(&st);
	assert_int_equal(elf_file__symtab(ef, 0x1234, &st), -ENOENT);
	elf_file__free(ef);
}

/* a table larger than the windows, read forwards, backwards, and with its strings whole */
static void elf_symtab__large_table__windows_follow_any_order(void **state)
{
	char *dir = fixture_tmpdir("elf_file"), name[64], want[64];
	const size_t n = 5000;
	struct elf_symtab st;
	struct elf_file *ef;
	Elf64_Sym sym;
	size_t i, k;

	ef = open_path(fixture_hostile_elf(dir, "symtab", "symtab --symbols 5000 --name-len 40"));
	assert_int_equal(elf_file__symtab(ef, SHT_SYMTAB, &st), 0);
	assert_int_equal(st.nr, n + 1);
	for (k = 0; k < 3; k++) {
		if (k == 2)
			assert_int_equal(elf_symtab__load_strings(&st, 1u << 20), 0);
		for (i = 0; i < n; i++) {
			size_t idx = k == 1 ? n - i : i + 1;

			assert_int_equal(elf_symtab__get(&st, idx, &sym), 0);
			assert_int_equal(sym.st_value, 0x100000 + 16 * (idx - 1));
			assert_int_equal(
				elf_symtab__name(&st, sym.st_name, name, sizeof(name), NULL), 0);
			snprintf(want, sizeof(want), "%zu_", idx - 1);
			assert_int_equal(strncmp(name, want, strlen(want)), 0);
			assert_int_equal(strlen(name), 40);
		}
	}
	elf_symtab__release(&st);
	elf_file__free(ef);
	fixture_tmpdir_remove(dir);
}

/* the address translations, on segments laid out by hand */
static void elf_loads__translations__inside_segments_only(void **state)
{
	const struct elf_load loads[] = {
		{.offset = 0,
		 .vaddr = 0x400000,
		 .filesz = 0x1000,
		 .memsz = 0x1000,
		 .in_file = true},
		{.offset = 0x1000,
		 .vaddr = 0x401000,
		 .filesz = 0x2345,
		 .memsz = 0x2345,
		 .flags = PF_X,
		 .in_file = true},
		/* a debug file's segment: its bytes are not in the file */
		{.offset = 0x4000, .vaddr = 0x600000, .filesz = 0x1000, .memsz = 0x1000},
		{.offset = 0x5000,
		 .vaddr = 0x605000,
		 .filesz = 0,
		 .memsz = 0x8000,
		 .in_file = true},
	};
	const size_t n = sizeof(loads) / sizeof(loads[0]);
	uint64_t v, off, base;

	assert_true(elf_loads__base(loads, n, &base));
	assert_int_equal(base, 0x400000);
	assert_false(elf_loads__base(loads, 0, &base));
	assert_int_equal(elf_loads__offset_to_vaddr(loads, n, 0x1234, &v), 0);
	assert_int_equal(v, 0x401234);
	assert_int_equal(elf_loads__offset_to_vaddr(loads, n, 0x3345, &v), -ENOENT);
	assert_int_equal(elf_loads__offset_to_vaddr(loads, n, 0x4010, &v), -ENOENT);
	assert_int_equal(elf_loads__vaddr_to_offset(loads, n, 0x401234, 8, &off), 0);
	assert_int_equal(off, 0x1234);
	/* all @len bytes must be inside */
	assert_int_equal(elf_loads__vaddr_to_offset(loads, n, 0x403340, 8, &off), -ENOENT);
	assert_int_equal(elf_loads__vaddr_to_offset(loads, n, 0x600010, 1, &off), -ENOENT);
	/* a mapping's page offset finds its segment: offsets rounded down to a page */
	assert_ptr_equal(elf_loads__for_mapping(loads, n, 0x1000), &loads[1]);
	assert_ptr_equal(elf_loads__for_mapping(loads, n, 0x3000), &loads[1]);
	assert_ptr_equal(elf_loads__for_mapping(loads, n, 0), &loads[0]);
	assert_null(elf_loads__for_mapping(loads, n, 0x9000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(elf_file__open_fd__fixtures__headers_match_readelf),
		cmocka_unit_test(elf_file__build_id__fixtures__matches_readelf),
		cmocka_unit_test(elf_notes__build_id__note_section__found_never_past_its_end),
		cmocka_unit_test(elf_file__debuglink__stripped_fixture__name_and_crc),
		cmocka_unit_test(elf_file__section_copy__compressed__same_bytes_as_plain),
		cmocka_unit_test(elf_file__section_size__lying_compression__refused),
		cmocka_unit_test(elf_file__open_fd__file_truncated_after_open__reads_fail),
		cmocka_unit_test(elf_file__open_fd__not_regular_or_too_large__refused),
		cmocka_unit_test(elf_file__open_mem__hostile_headers__einval),
		cmocka_unit_test(elf_symtab__fixture__functions_as_nm_lists),
		cmocka_unit_test(elf_symtab__large_table__windows_follow_any_order),
		cmocka_unit_test(elf_loads__translations__inside_segments_only),
	};

	return cmocka_run_group_tests_name("elf_file", tests, NULL, NULL);
}
