// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbols/python_eval on a real program GCC built with a function split in
 * two (tests/unit/fixtures/python_eval_fixture.c, python_eval.mk): from the
 * stripped file, eval's ranges are its own and eval.cold's, as the
 * unstripped twin's .symtab names them; a function that tail-calls another
 * twice gets its own range only; a file whose .eh_frame_hdr is damaged
 * gives the symbol's range alone.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "elf/elf_file.h"
#include "fixtures.h"
#include "symbols/python_eval.h"

#define FIXTURE "python_eval_fixture"

static const char *fixture_path(const char *name)
{
	static char path[4096];
	const char *output = getenv("OUTPUT");

	snprintf(path, sizeof(path), "%s/fixtures/%s", output && *output ? output : "build", name);
	if (access(path, R_OK) != 0)
		fail_msg("fixture %s missing: run make check (tests/unit/python_eval.mk)", path);
	return path;
}

/* @name's address and size from @ef's .symtab */
static void symbol(const struct elf_file *ef, const char *name, uint64_t *addr, uint64_t *size)
{
	struct elf_symtab st;
	char buf[64];
	Elf64_Sym sym;
	size_t i;

	assert_int_equal(elf_file__symtab(ef, SHT_SYMTAB, &st), 0);
	assert_int_equal(elf_symtab__load_strings(&st, 1 << 20), 0);
	for (i = 1; i < st.nr && !elf_symtab__get(&st, i, &sym); i++) {
		if (elf_symtab__name(&st, sym.st_name, buf, sizeof(buf), NULL) || strcmp(buf, name))
			continue;
		*addr = sym.st_value;
		*size = sym.st_size;
		elf_symtab__release(&st);
		return;
	}
	elf_symtab__release(&st);
	fail_msg("%s: no symbol %s", FIXTURE, name);
}

static struct elf_file *open_fixture(const char *name, uint8_t **buf, size_t *len)
{
	struct elf_file *ef;

	fixture_read_file(fixture_path(name), buf, len);
	ef = elf_file__open_mem(*buf, *len);
	assert_non_null(ef);
	return ef;
}

static void python_eval__ranges__split_function__its_cold_part_too(void **state)
{
	uint64_t eval, eval_size, cold, cold_size;
	struct python_eval_range r[PYTHON_EVAL_RANGES];
	struct elf_file *full, *stripped;
	uint8_t *b1, *b2;
	size_t l1, l2, n;

	full = open_fixture(FIXTURE, &b1, &l1);
	symbol(full, "eval", &eval, &eval_size);
	symbol(full, "eval.cold", &cold, &cold_size);
	stripped = open_fixture(FIXTURE ".stripped", &b2, &l2);
	assert_int_not_equal(elf_file__find_section_type(stripped, SHT_SYMTAB), 1);
	n = python_eval__ranges(stripped, eval, eval_size, r);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].start, eval);
	assert_int_equal(r[0].end, eval + eval_size);
	assert_int_equal(r[1].start, cold);
	if (cold_size)
		assert_int_equal(r[1].end, cold + cold_size);
	assert_true(r[1].end > r[1].start);
	elf_file__free(stripped);
	elf_file__free(full);
	free(b1);
	free(b2);
}

static void python_eval__ranges__tail_calls__not_a_part(void **state)
{
	uint64_t tail, tail_size, helper, helper_size;
	struct python_eval_range r[PYTHON_EVAL_RANGES];
	struct elf_file *ef;
	uint8_t *buf;
	size_t len;

	ef = open_fixture(FIXTURE, &buf, &len);
	symbol(ef, "tail", &tail, &tail_size);
	symbol(ef, "helper", &helper, &helper_size);
	assert_int_equal(python_eval__ranges(ef, tail, tail_size, r), 1);
	assert_int_equal(r[0].start, tail);
	elf_file__free(ef);
	free(buf);
}

static void python_eval__ranges__damaged_eh_frame_hdr__symbol_only(void **state)
{
	uint64_t eval, eval_size;
	struct python_eval_range r[PYTHON_EVAL_RANGES];
	const Elf64_Shdr *sh;
	struct elf_file *ef;
	uint8_t *buf;
	size_t len, idx;

	ef = open_fixture(FIXTURE, &buf, &len);
	symbol(ef, "eval", &eval, &eval_size);
	idx = elf_file__find_section(ef, ".eh_frame_hdr");
	sh = elf_file__section(ef, idx);
	assert_non_null(sh);
	/* the table's encoding: not the linkers' usual one */
	buf[sh->sh_offset + 3] = 0x1b;
	elf_file__free(ef);
	ef = elf_file__open_mem(buf, len);
	assert_non_null(ef);
	assert_int_equal(python_eval__ranges(ef, eval, eval_size, r), 1);
	/* a function larger than the scan's bound: its own range, nothing read */
	assert_int_equal(python_eval__ranges(ef, eval, PYTHON_EVAL_MAX_CODE + 1, r), 1);
	/* a symbol outside the file's segments */
	assert_int_equal(python_eval__ranges(ef, 0x7fff00000000ull, 64, r), 1);
	elf_file__free(ef);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(python_eval__ranges__split_function__its_cold_part_too),
		cmocka_unit_test(python_eval__ranges__tail_calls__not_a_part),
		cmocka_unit_test(python_eval__ranges__damaged_eh_frame_hdr__symbol_only),
	};

	return cmocka_run_group_tests_name("python_eval", tests, NULL, NULL);
}
