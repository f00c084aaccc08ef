/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elf_syms_check: the fixtures and checks the elf_syms unit tests share.
 * Fixtures are looked up in $FIXTURES_DIR, else $OUTPUT/fixtures, else
 * build/fixtures (the test runs from the repository root); a missing one, or
 * a failed check, fails the calling cmocka test.
 */
#ifndef CTXPROF_TESTS_ELF_SYMS_CHECK_H
#define CTXPROF_TESTS_ELF_SYMS_CHECK_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

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

/* the four fixtures every whole-file test reads */
extern const char *const all_fixtures[4];

struct image {
	uint8_t *buf;
	size_t len;
};

/* Return: the path of fixture @name (a static buffer, valid until the next call). */
const char *fixture_path(const char *name);
/* Return: the table elf_syms__open_fd() makes of @path, which must parse. */
struct elf_syms *open_path(const char *path);
struct elf_syms *open_fixture(const char *name);
/* the whole of fixture @name in @img->buf (malloc()ed; the caller frees it) */
void image_load(struct image *img, const char *name);
Elf64_Ehdr *image_ehdr(struct image *img);
Elf64_Shdr *image_shdr(struct image *img, size_t idx);
/* Return: the first section of @type (fails the test when there is none). */
Elf64_Shdr *image_find_section(struct image *img, uint32_t type);
/* a corrupted image must be refused with EINVAL */
void assert_open_mem_einval(const struct image *img, size_t len);
/* whatever was parsed must be self-consistent and lookups must not crash */
void exercise(const struct elf_syms *es);

#endif /* CTXPROF_TESTS_ELF_SYMS_CHECK_H */
