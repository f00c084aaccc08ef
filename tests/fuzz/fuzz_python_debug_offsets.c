// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: python_debug_offsets__parse() on hostile words.  The
 * input: u32 Py_Version, then the bytes read at &_PyRuntime.  A layout it
 * accepts must keep every field inside what the sampler and python_code
 * read (the contract the collector relies on); a refusal must say why.
 * The seeds are Debian's 3.13, 3.14 and 3.15 words, as the unit test has
 * them (tests/unit/test_python_debug_offsets.c), each after its version.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/python_code.h"
#include "symbols/python_debug_offsets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct python_layout l;
	const char *why;
	uint32_t version;
	int err;

	if (size < sizeof(version))
		return 0;
	memcpy(&version, data, sizeof(version));
	err = python_debug_offsets__parse(data + 4, size - 4, version, &l, &why);
	if (err) {
		if (!why)
			abort();
		return 0;
	}
	if (why || l.frame_code + 8 > PYTHON_FRAME_READ ||
	    l.frame_previous + 8 > PYTHON_FRAME_READ ||
	    l.frame_prev_instr + 8 > PYTHON_FRAME_READ || l.code_type_off + 8 > PYTHON_CODE_READ ||
	    l.code_firstlineno + 4 > PYTHON_CODE_READ || l.code_filename + 8 > PYTHON_CODE_READ ||
	    l.code_qualname + 8 > PYTHON_CODE_READ ||
	    l.code_linetable + 8 > PYTHON_CODE_HEADER_MAX ||
	    l.unicode_length + 8 > l.unicode_ascii_data ||
	    l.unicode_state + 4 > l.unicode_ascii_data ||
	    l.unicode_compact_data > PYTHON_CODE_HEADER_MAX || l.bytes_size + 8 > l.bytes_data ||
	    l.bytes_data > PYTHON_CODE_HEADER_MAX)
		abort();
	return 0;
}
