// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: python_eval__ranges() on a hostile ELF file.  The
 * input: u64 the function's address, u64 its size, then the file.  The
 * ranges must start with the function's own and hold at most
 * PYTHON_EVAL_RANGES, each non-empty; the parts must lie outside it.
 * The seed is test_python_eval's stripped program (a function GCC split in
 * two, tests/unit/python_eval.mk) after eval's address and size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "symbols/python_eval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct python_eval_range r[PYTHON_EVAL_RANGES];
	struct elf_file *ef;
	uint64_t sym, len;
	size_t n, i;

	if (size < 16)
		return 0;
	memcpy(&sym, data, 8);
	memcpy(&len, data + 8, 8);
	ef = elf_file__open_mem(data + 16, size - 16);
	if (!ef)
		return 0;
	n = python_eval__ranges(ef, sym, len, r);
	if (n < 1 || n > PYTHON_EVAL_RANGES || r[0].start != sym || r[0].end != sym + len)
		abort();
	for (i = 1; i < n; i++)
		if (r[i].start >= r[i].end || (r[i].start <= sym && sym < r[i].end))
			abort();
	elf_file__free(ef);
	return 0;
}
