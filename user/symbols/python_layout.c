// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python_layout - the table of CPython layouts.  See python_layout.h.
 */
#include <stddef.h>

#include "symbols/python_layout.h"

/* PY_VERSION_HEX: 0xMMmmppLS, L the release level (0xA alpha, 0xB beta, 0xC rc, 0xF final) */
#define PY_MAJOR(v)	   ((v) >> 24 & 0xff)
#define PY_MINOR(v)	   ((v) >> 16 & 0xff)
#define PY_LEVEL(v)	   ((v) >> 4 & 0xf)
#define PY_LEVEL_CANDIDATE 0xc

/*
 * 3.11, from Include/internal/pycore_runtime.h, pycore_interp.h,
 * pycore_frame.h and Include/cpython/pystate.h, code.h, unicodeobject.h,
 * bytesobject.h (checked by tests/unit/test_python_layout.c).
 */
static const struct python_layout layout_311 = {
	.interp_head = 40,
	.threads_head = 16,
	.tstate_next = 8,
	.tstate_native_thread_id = 160,
	.tstate_frame = 56,
	.cframe_current_frame = 8,
	.frame_code = 32,
	.frame_previous = 48,
	.frame_prev_instr = 56,
	.frame_is_entry = 68,
	.code_type_off = 8,
	.code_firstlineno = 72,
	.code_filename = 112,
	.code_qualname = 128,
	.code_adaptive = 184,
	.code_linetable = 136,
	.unicode_length = 16,
	.unicode_state = 32,
	.unicode_ascii_data = 48,
	.unicode_compact_data = 72,
	/* interned:2, kind:3, compact:1, ascii:1, ready:1 from bit 0 */
	.unicode_kind_shift = 2,
	.unicode_compact_bit = 5,
	.unicode_ascii_bit = 6,
	.bytes_size = 16,
	.bytes_data = 32,
	.walk = PYTHON_WALK_311,
};

/*
 * 3.9, from Debian bullseye's libpython3.9-dev: Include/internal/pycore_runtime.h
 * (interpreters.head), pycore_interp.h (tstate_head), cpython/pystate.h (next,
 * frame, thread_id), cpython/frameobject.h (f_back, f_code, f_lasti), code.h
 * (co_firstlineno, co_filename, co_name, co_lnotab), cpython/unicodeobject.h
 * (the same str layout as 3.11's: wstr still there), bytesobject.h.
 */
static const struct python_layout layout_39 = {
	.interp_head = 32,
	.threads_head = 8,
	.tstate_next = 8,
	.tstate_native_thread_id = 176, /* thread_id: pthread_self() */
	.tstate_frame = 24,
	.frame_code = 32,
	.frame_previous = 24,
	.frame_prev_instr = 104, /* f_lasti (int, bytes; -1 before the first) */
	.code_type_off = 8,
	.code_firstlineno = 40,
	.code_filename = 104,
	.code_qualname = 112, /* co_name: no co_qualname before 3.11 */
	.code_adaptive = 0,
	.code_linetable = 120, /* co_lnotab */
	.unicode_length = 16,
	.unicode_state = 32,
	.unicode_ascii_data = 48,
	.unicode_compact_data = 72,
	.unicode_kind_shift = 2,
	.unicode_compact_bit = 5,
	.unicode_ascii_bit = 6,
	.bytes_size = 16,
	.bytes_data = 32,
	.walk = PYTHON_WALK_39,
	.line_format = PYTHON_LINES_LNOTAB,
	.code_basicsize = 176,
	.frame_basicsize = 368,
};

static const struct {
	uint8_t major, minor;
	const struct python_layout *layout;
} layouts[] = {
	{3, 9, &layout_39},
	{3, 11, &layout_311},
};

const struct python_layout *python_layout__find(uint32_t py_version_hex)
{
	size_t i;

	if (PY_LEVEL(py_version_hex) < PY_LEVEL_CANDIDATE)
		return NULL;
	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == PY_MAJOR(py_version_hex) &&
		    layouts[i].minor == PY_MINOR(py_version_hex))
			return layouts[i].layout;
	return NULL;
}
