// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the elf_syms unit tests (test_elf_syms_lookup, test_elf_syms_hostile)
 * share: the ELF fixtures of tests/unit/elf_fixtures.mk, whole files in
 * memory to corrupt, and the consistency check of a parsed table.
 * Contract in elf_syms_check.h.
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

const char *const all_fixtures[4] = {FIXTURE_NOPIE, FIXTURE_PIE, FIXTURE_STRIPPED, FIXTURE_LIB};

const char *fixture_path(const char *name)
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

struct elf_syms *open_path(const char *path)
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

struct elf_syms *open_fixture(const char *name)
{
	return open_path(fixture_path(name));
}

void image_load(struct image *img, const char *name)
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

Elf64_Ehdr *image_ehdr(struct image *img)
{
	return (Elf64_Ehdr *)img->buf;
}

Elf64_Shdr *image_shdr(struct image *img, size_t idx)
{
	return (Elf64_Shdr *)(img->buf + image_ehdr(img)->e_shoff) + idx;
}

Elf64_Shdr *image_find_section(struct image *img, uint32_t type)
{
	size_t i;

	for (i = 1; i < image_ehdr(img)->e_shnum; i++)
		if (image_shdr(img, i)->sh_type == type)
			return image_shdr(img, i);
	fail_msg("no section of type %u", type);
	return NULL;
}

/* a corrupted image must be refused with EINVAL */
void assert_open_mem_einval(const struct image *img, size_t len)
{
	struct elf_syms *es;

	errno = 0;
	es = elf_syms__open_mem(img->buf, len);
	assert_null(es);
	assert_int_equal(errno, EINVAL);
}

/* whatever was parsed must be self-consistent and lookups must not crash */
void exercise(const struct elf_syms *es)
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
