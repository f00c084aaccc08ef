// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: python_code__name() on a hostile memory image, and
 * python_code__line() and python_code__lnotab_line() on hostile tables.  The input:
 *   u64 base        the image's address
 *   u64 code        the code object's address
 *   u64 code_type, unicode_type, bytes_type
 *   u32 instr       for python_code__line() on the table read
 *   ...             the image: bytes at base; reads outside it fail
 * The check is computed from the image, as the sampler would have read it,
 * so the names are read.  Whatever comes back must keep the contract: valid
 * UTF-8 without NUL, within the bounds (PYTHON_CODE_CUT after a cut), the
 * line table within its bound.  gen_python_code.py writes the seeds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/python_code.h"
#include "util/utf8.h"

#define HEADER 44

struct image {
	uint64_t base;
	const uint8_t *mem;
	size_t len;
};

static int read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *img = ctx;

	if (addr < img->base || addr - img->base > img->len || len > img->len - (addr - img->base))
		return -EFAULT;
	memcpy(buf, img->mem + (addr - img->base), len);
	return 0;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void check_str(const char *s, size_t max_points)
{
	size_t len = strlen(s);

	/* 4 bytes a code point at most, and the cut's mark */
	if (len > max_points * 4 + sizeof(PYTHON_CODE_CUT) - 1 || !utf8_valid(s, len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct python_layout *l = python_layout__find(0x030b02f0);
	uint64_t code, code_type, unicode_type, bytes_type;
	struct python_code_name n;
	struct image img;
	uint8_t hdr[256];
	uint32_t instr, check;
	int line;

	if (size < HEADER)
		return 0;
	img.base = get64(data);
	code = get64(data + 8);
	code_type = get64(data + 16);
	unicode_type = get64(data + 24);
	bytes_type = get64(data + 32);
	memcpy(&instr, data + 40, sizeof(instr));
	img.mem = data + HEADER;
	img.len = size - HEADER;

	/* the table alone: the image's bytes as one */
	line = python_code__line(img.mem, img.len, 1, instr);
	if (line < -1)
		abort();
	/* and as 3.9's co_lnotab */
	line = python_code__lnotab_line(img.mem, img.len, 1, instr);
	if (line < -1)
		abort();

	check = 0;
	if (!read_image(&img, code, hdr, l->code_linetable + 8u))
		check = python_code_check((int32_t)get64(hdr + l->code_firstlineno),
					  get64(hdr + l->code_filename),
					  get64(hdr + l->code_qualname));
	if (python_code__name(l, read_image, &img, code_type, unicode_type, bytes_type, code, check,
			      &n))
		return 0;
	check_str(n.qualname, PYTHON_CODE_MAX_NAME);
	check_str(n.filename, PYTHON_CODE_MAX_FILENAME);
	if (n.linetable_len > PYTHON_CODE_MAX_LINETABLE || (!n.linetable) != (!n.linetable_len))
		abort();
	line = python_code__line(n.linetable, n.linetable_len, n.firstlineno, instr);
	if (line < -1 && line != n.firstlineno)
		abort();
	python_code_name__free(&n);
	return 0;
}
