// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The 3.11 layout as the compiler sees CPython's own headers, for
 * test_python_layout: offsetof() and sizeof() of the internal structures
 * (Py_BUILD_CORE), bit positions read back from a bit field set.  Built with
 * -isystem of Debian's python3.11-dev headers when they are there
 * (tests/unit/python.mk defines CTXPROF_PY311_HEADERS), else as a stub that
 * says why.
 */
#include <errno.h>
#include <string.h>

#ifdef CTXPROF_PY311_HEADERS
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_frame.h>
#endif

#include "symbols/python_layout.h"
#include "python_layout_expect.h"

#ifdef CTXPROF_PY311_HEADERS
/* the lowest bit set in the state word when only this field is 1 */
#define STATE_BIT(field)                                                                           \
	({                                                                                         \
		PyASCIIObject o;                                                                   \
		uint32_t w;                                                                        \
		memset(&o, 0, sizeof(o));                                                          \
		o.state.field = 1;                                                                 \
		memcpy(&w, (char *)&o + offsetof(PyASCIIObject, state), sizeof(w));                \
		(uint8_t) __builtin_ctz(w);                                                        \
	})

int python_layout_expect(struct python_layout *l, uint32_t *version, const char **why)
{
	_Static_assert(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 11, "3.11 headers");
	_Static_assert(sizeof(((PyASCIIObject *)0)->state) == 4, "state is one 32-bit word");

	memset(l, 0, sizeof(*l));
	*version = PY_VERSION_HEX;
	l->interp_head = offsetof(_PyRuntimeState, interpreters.head);
	l->threads_head = offsetof(PyInterpreterState, threads.head);
	l->tstate_next = offsetof(PyThreadState, next);
	l->tstate_native_thread_id = offsetof(PyThreadState, native_thread_id);
	l->tstate_frame = offsetof(PyThreadState, cframe);
	l->cframe_current_frame = offsetof(_PyCFrame, current_frame);
	l->frame_code = offsetof(_PyInterpreterFrame, f_code);
	l->frame_previous = offsetof(_PyInterpreterFrame, previous);
	l->frame_prev_instr = offsetof(_PyInterpreterFrame, prev_instr);
	l->frame_is_entry = offsetof(_PyInterpreterFrame, is_entry);
	l->code_type_off = offsetof(PyObject, ob_type);
	l->code_firstlineno = offsetof(PyCodeObject, co_firstlineno);
	l->code_filename = offsetof(PyCodeObject, co_filename);
	l->code_qualname = offsetof(PyCodeObject, co_qualname);
	l->code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
	l->code_linetable = offsetof(PyCodeObject, co_linetable);
	l->unicode_length = offsetof(PyASCIIObject, length);
	l->unicode_state = offsetof(PyASCIIObject, state);
	l->unicode_ascii_data = sizeof(PyASCIIObject);
	l->unicode_compact_data = sizeof(PyCompactUnicodeObject);
	l->unicode_kind_shift = STATE_BIT(kind);
	l->unicode_compact_bit = STATE_BIT(compact);
	l->unicode_ascii_bit = STATE_BIT(ascii);
	l->bytes_size = offsetof(PyVarObject, ob_size);
	l->bytes_data = offsetof(PyBytesObject, ob_sval);
	l->walk = PYTHON_WALK_311;
	*why = NULL;
	return 0;
}
#else
int python_layout_expect(struct python_layout *l, uint32_t *version, const char **why)
{
	*why = "no CPython 3.11 internal headers (" CTXPROF_PY311_INCLUDE
	       "/internal/pycore_frame.h; Debian: python3.11-dev, make deps)";
	return -ENOENT;
}
#endif
