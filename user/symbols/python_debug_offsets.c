// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python_debug_offsets - CPython's _Py_DebugOffsets, checked and turned into
 * a layout.  See python_debug_offsets.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "symbols/python_code.h"
#include "symbols/python_debug_offsets.h"

#define PY_MAJOR(v) ((v) >> 24 & 0xff)
#define PY_MINOR(v) ((v) >> 16 & 0xff)

#define COOKIE "xdebugpy"

/*
 * Word indexes (8 bytes each; word 0 is the cookie) into _Py_DebugOffsets.
 * Sections before thread_state keep their places in 3.13-3.15: version 1,
 * free_threaded 2, runtime_state 3 (size, finalizing, interpreters_head),
 * interpreter_state 6 (size, id, next, threads_head).  Inside a section the
 * fields we read keep their places too, but for native_thread_id.
 */
#define W_VERSION	  1
#define W_FREE_THREADED	  2
#define W_RUNTIME	  3
#define W_RUNTIME_INTERPS (W_RUNTIME + 2)
#define W_INTERP	  6
#define W_INTERP_THREADS  (W_INTERP + 3)
/* inside thread_state */
#define T_NEXT		2
#define T_INTERP	3
#define T_CURRENT_FRAME 4
/* inside interpreter_frame */
#define F_PREVIOUS   1
#define F_EXECUTABLE 2
#define F_INSTR_PTR  3
#define F_OWNER	     5
/* inside code_object */
#define C_FILENAME	1
#define C_QUALNAME	3
#define C_LINETABLE	4
#define C_FIRSTLINENO	5
#define C_CODE_ADAPTIVE 9
/* inside the others */
#define O_OB_TYPE      1
#define B_OB_SIZE      1
#define B_OB_SVAL      2
#define U_STATE	       1
#define U_LENGTH       2
#define U_ASCII_SIZE   3
#define U_COMPACT_SIZE 4

struct schema {
	uint8_t minor;
	uint8_t tstate, frame, code, pyobject, bytes, unicode; /* each section's first word */
	uint8_t native_thread_id;			       /* inside thread_state */
	bool compact_size;				       /* unicode_object has it */
	uint8_t words;					       /* read up to here */
};

/* from each version's Include/internal/pycore_debug_offsets.h (3.13: pycore_runtime.h) */
static const struct schema schemas[] = {
	{13, 19, 28, 34, 44, 64, 67, 6, false, 71},
	{14, 22, 31, 39, 50, 74, 77, 6, false, 81},
	{15, 22, 39, 47, 58, 86, 89, 9, true, 94},
};
#define NR_SCHEMAS (sizeof(schemas) / sizeof(schemas[0]))

/* bounds on a structure's size: far above any real one, low enough to keep sums small */
#define MAX_STATE_SIZE	(16u << 20) /* _PyRuntimeState, PyInterpreterState */
#define MAX_TSTATE_SIZE (64u << 10)
#define MAX_FRAME_SIZE	1024u
#define MAX_CODE_SIZE	4096u
#define MAX_OBJ_SIZE	PYTHON_CODE_HEADER_MAX /* PyObject, PyBytesObject, PyUnicodeObject */

/* the schema of @minor: its own, or the newest for a later one; NULL before 3.13 */
static const struct schema *schema_of(unsigned int minor)
{
	size_t i;

	if (minor < PYTHON_DEBUG_OFFSETS_MINOR)
		return NULL;
	for (i = 0; i < NR_SCHEMAS; i++)
		if (schemas[i].minor == minor)
			return &schemas[i];
	return &schemas[NR_SCHEMAS - 1];
}

size_t python_debug_offsets__size(uint32_t py_version_hex)
{
	const struct schema *s;

	if (PY_MAJOR(py_version_hex) != 3)
		return 0;
	s = schema_of(PY_MINOR(py_version_hex));
	return s ? (size_t)s->words * 8 : 0;
}

static uint64_t word(const uint8_t *buf, unsigned int i)
{
	uint64_t v;

	memcpy(&v, buf + 8 * (size_t)i, sizeof(v));
	return v;
}

/* field @f (an offset) plus its @width within @size and below @limit */
static bool field_ok(uint64_t f, unsigned int width, uint64_t size, uint64_t limit)
{
	return f <= size && width <= size - f && f + width <= limit;
}

/* two fields of @width at @a and @b do not overlap */
static bool apart(uint64_t a, uint64_t b, unsigned int width)
{
	return a >= b + width || b >= a + width;
}

int python_debug_offsets__parse(const void *buf, size_t len, uint32_t py_version_hex,
				struct python_layout *out, const char **why)
{
	const uint8_t *b = buf;
	const struct schema *s;
	uint64_t rt_size, in_size, ts_size, fr_size, co_size, ob_size, by_size, un_size;
	uint64_t ob_type, ts_next, ts_tid, ts_frame, ts_interp, fr_prev, fr_exec, fr_instr;
	uint64_t fr_owner, co_file, co_qual, co_lines, co_first, co_adaptive, by_len, by_data;
	uint64_t un_state, un_len, un_ascii, un_compact, interps, threads;
	struct python_layout l;

	*why = NULL;
	s = PY_MAJOR(py_version_hex) == 3 ? schema_of(PY_MINOR(py_version_hex)) : NULL;
	if (!s) {
		*why = "a version before _Py_DebugOffsets";
		return -ENOENT;
	}
	if (len < (size_t)s->words * 8) {
		*why = "_Py_DebugOffsets cut short";
		return -EINVAL;
	}
	if (memcmp(b, COOKIE, 8)) {
		*why = "_Py_DebugOffsets without its cookie";
		return -EINVAL;
	}
	if (word(b, W_VERSION) != py_version_hex) {
		*why = "_Py_DebugOffsets of another version than Py_Version";
		return -EINVAL;
	}
	if (word(b, W_FREE_THREADED)) {
		*why = "a free-threaded build";
		return -EOPNOTSUPP;
	}
	rt_size = word(b, W_RUNTIME);
	interps = word(b, W_RUNTIME_INTERPS);
	in_size = word(b, W_INTERP);
	threads = word(b, W_INTERP_THREADS);
	ts_size = word(b, s->tstate);
	ts_next = word(b, s->tstate + T_NEXT);
	ts_interp = word(b, s->tstate + T_INTERP);
	ts_frame = word(b, s->tstate + T_CURRENT_FRAME);
	ts_tid = word(b, s->tstate + s->native_thread_id);
	fr_size = word(b, s->frame);
	fr_prev = word(b, s->frame + F_PREVIOUS);
	fr_exec = word(b, s->frame + F_EXECUTABLE);
	fr_instr = word(b, s->frame + F_INSTR_PTR);
	fr_owner = word(b, s->frame + F_OWNER);
	co_size = word(b, s->code);
	co_file = word(b, s->code + C_FILENAME);
	co_qual = word(b, s->code + C_QUALNAME);
	co_lines = word(b, s->code + C_LINETABLE);
	co_first = word(b, s->code + C_FIRSTLINENO);
	co_adaptive = word(b, s->code + C_CODE_ADAPTIVE);
	ob_size = word(b, s->pyobject);
	ob_type = word(b, s->pyobject + O_OB_TYPE);
	by_size = word(b, s->bytes);
	by_len = word(b, s->bytes + B_OB_SIZE);
	by_data = word(b, s->bytes + B_OB_SVAL);
	un_size = word(b, s->unicode);
	un_state = word(b, s->unicode + U_STATE);
	un_len = word(b, s->unicode + U_LENGTH);
	un_ascii = word(b, s->unicode + U_ASCII_SIZE);
	un_compact = s->compact_size ? word(b, s->unicode + U_COMPACT_SIZE) : un_ascii + 16;

	*why = "_Py_DebugOffsets out of bounds";
	/* the structures' sizes */
	if (!rt_size || rt_size > MAX_STATE_SIZE || !in_size || in_size > MAX_STATE_SIZE ||
	    !ts_size || ts_size > MAX_TSTATE_SIZE || !fr_size || fr_size > MAX_FRAME_SIZE ||
	    !co_size || co_size > MAX_CODE_SIZE || !ob_size || ob_size > MAX_OBJ_SIZE || !by_size ||
	    by_size > MAX_OBJ_SIZE || !un_size || un_size > MAX_OBJ_SIZE)
		return -EINVAL;
	/* the walk's fields: inside their structures, and u16 (struct python_proc_ref) */
	if (!field_ok(interps, 8, rt_size, UINT16_MAX) ||
	    !field_ok(threads, 8, in_size, UINT16_MAX) ||
	    !field_ok(ts_next, 8, ts_size, UINT16_MAX) ||
	    !field_ok(ts_interp, 8, ts_size, UINT16_MAX) ||
	    !field_ok(ts_frame, 8, ts_size, UINT16_MAX) ||
	    !field_ok(ts_tid, 8, ts_size, UINT16_MAX))
		return -EINVAL;
	/* a frame and a code object: inside what the sampler reads of them */
	if (!field_ok(fr_prev, 8, fr_size, PYTHON_FRAME_READ) ||
	    !field_ok(fr_exec, 8, fr_size, PYTHON_FRAME_READ) ||
	    !field_ok(fr_instr, 8, fr_size, PYTHON_FRAME_READ) ||
	    !field_ok(fr_owner, 1, fr_size, PYTHON_FRAME_READ) ||
	    !field_ok(ob_type, 8, ob_size, PYTHON_CODE_READ) ||
	    !field_ok(co_first, 4, co_size, PYTHON_CODE_READ) ||
	    !field_ok(co_file, 8, co_size, PYTHON_CODE_READ) ||
	    !field_ok(co_qual, 8, co_size, PYTHON_CODE_READ) ||
	    !field_ok(co_lines, 8, co_size, PYTHON_CODE_HEADER_MAX) ||
	    !field_ok(co_adaptive, 0, co_size, UINT16_MAX))
		return -EINVAL;
	/* every object starts with the PyObject header */
	if (ob_size > co_size || ob_size > by_size || ob_size > un_size)
		return -EINVAL;
	/* a bytes object's length, then its data; a str's length and state in its ASCII header,
	 * which the compact one extends */
	if (!field_ok(by_len, 8, by_size, by_data) || by_data > by_size ||
	    !field_ok(un_len, 8, un_ascii, PYTHON_CODE_HEADER_MAX) ||
	    !field_ok(un_state, 4, un_ascii, PYTHON_CODE_HEADER_MAX) || un_ascii < ob_size ||
	    un_compact < un_ascii || un_compact > un_size)
		return -EINVAL;
	/* the fields told apart are at distinct places */
	if (!apart(ts_next, ts_tid, 8) || !apart(ts_next, ts_frame, 8) ||
	    !apart(ts_frame, ts_tid, 8) || !apart(fr_prev, fr_exec, 8) ||
	    !apart(fr_prev, fr_instr, 8) || !apart(fr_exec, fr_instr, 8) ||
	    !apart(co_file, co_qual, 8) || !apart(co_file, co_lines, 8) ||
	    !apart(co_qual, co_lines, 8) || !apart(ob_type, co_file, 8) ||
	    !apart(ob_type, co_qual, 8) || !apart(un_len, un_state, 8))
		return -EINVAL;

	memset(&l, 0, sizeof(l));
	l.interp_head = (uint16_t)interps;
	l.threads_head = (uint16_t)threads;
	l.tstate_next = (uint16_t)ts_next;
	l.tstate_native_thread_id = (uint16_t)ts_tid;
	l.tstate_frame = (uint16_t)ts_frame;
	l.frame_code = (uint16_t)fr_exec;
	l.frame_previous = (uint16_t)fr_prev;
	l.frame_prev_instr = (uint16_t)fr_instr;
	l.code_type_off = (uint16_t)ob_type;
	l.code_firstlineno = (uint16_t)co_first;
	l.code_filename = (uint16_t)co_file;
	l.code_qualname = (uint16_t)co_qual;
	l.code_adaptive = (uint16_t)co_adaptive;
	l.code_linetable = (uint16_t)co_lines;
	l.unicode_length = (uint16_t)un_len;
	l.unicode_state = (uint16_t)un_state;
	l.unicode_ascii_data = (uint16_t)un_ascii;
	l.unicode_compact_data = (uint16_t)un_compact;
	/* not published: unicodeobject.h's state bit fields, the same in 3.13-3.15 */
	l.unicode_kind_shift = 2;
	l.unicode_compact_bit = 5;
	l.unicode_ascii_bit = 6;
	l.bytes_size = (uint16_t)by_len;
	l.bytes_data = (uint16_t)by_data;
	l.walk = PYTHON_WALK_313;
	*out = l;
	*why = NULL;
	return 0;
}
