/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python_layout - where CPython keeps what the sampler walks and the
 * collector names, by version: byte offsets inside its structures.
 *
 * CPython publishes none of this as ABI: the structures are internal
 * (Include/internal/pycore_*.h, compiled only with Py_BUILD_CORE) and
 * change with every minor version, not within one: from its release
 * candidates on, a minor version keeps its internal layout (CPython's
 * rule for bug-fix releases).  So the table is by major.minor, and an
 * alpha or beta is not looked up at all (its structures may still move).
 *
 * Versions known, each number from that version's own headers:
 *   3.9   the walk PYTHON_WALK_39 (PyFrameObject chain, co_lnotab, the
 *         thread state's thread_id is pthread_self(): x86-64 only), from
 *         Debian bullseye's libpython3.9-dev headers (offsetof() printed by
 *         a program built against them); no co_qualname: co_name names the
 *         frame.  Checked at attach against the file's own tp_basicsize of
 *         PyCode_Type (176) and PyFrame_Type (368), and by
 *         tests/integration/test_python_versions.sh against bullseye's python3.9.
 *   3.11  the walk PYTHON_WALK_311.  tests/unit/test_python_layout.c
 *         checks every number against offsetof()/sizeof() of Debian's
 *         python3.11-dev internal headers, on x86-64; arm64 is LP64 with
 *         the same alignment rules, so the same numbers, but not checked.
 * Not in the table:
 *   3.10  no Debian package to check it against (its f_lasti counts code
 *         units, its co_linetable is PEP 626's format);
 *   3.12  no Debian package to check it against, and its eval loop pushes an entry shim frame
 * (owner FRAME_OWNED_BY_CSTACK, no is_entry, its f_code a real code object) in front of each C
 * call's Python frames: a walk of its own, not written yet; 3.13 and later publish their layout
 * themselves (_Py_DebugOffsets): symbols/python_debug_offsets.h reads it, no table needed.
 *
 * Pure data, any thread.
 */
#ifndef CTXPROF_PYTHON_LAYOUT_H
#define CTXPROF_PYTHON_LAYOUT_H

#include <stdint.h>

#include "python_abi.h"

/* what a code object's line table is (code_linetable points at it) */
enum python_line_format {
	PYTHON_LINES_LOCATIONS = 0, /* 3.11 on: co_linetable, Objects/locations.md */
	PYTHON_LINES_LNOTAB = 1,    /* up to 3.9: co_lnotab, (byte, line) increments */
};

/* offsets in bytes from the start of the structure named */
struct python_layout {
	/* the sampler's walk: the fields of struct python_proc of the same names */
	uint16_t interp_head;		  /* _PyRuntimeState.interpreters.head */
	uint16_t threads_head;		  /* PyInterpreterState.threads.head */
	uint16_t tstate_next;		  /* PyThreadState.next */
	uint16_t tstate_native_thread_id; /* PyThreadState.native_thread_id */
	uint16_t tstate_frame;		  /* PyThreadState.cframe, or .current_frame (3.13) */
	uint16_t cframe_current_frame;	  /* _PyCFrame.current_frame (PYTHON_WALK_CFRAME) */
	uint16_t frame_code;		  /* _PyInterpreterFrame.f_code */
	uint16_t frame_previous;	  /* _PyInterpreterFrame.previous */
	uint16_t frame_prev_instr;	  /* _PyInterpreterFrame.prev_instr */
	uint16_t frame_is_entry;	  /* _PyInterpreterFrame.is_entry */
	uint16_t code_type_off;		  /* PyObject.ob_type: of any object, code or not */
	uint16_t code_firstlineno;	  /* PyCodeObject.co_firstlineno (int) */
	uint16_t code_filename;		  /* PyCodeObject.co_filename (str *) */
	uint16_t code_qualname;		  /* PyCodeObject.co_qualname (str *) */
	uint16_t code_adaptive;		  /* PyCodeObject.co_code_adaptive */
	/* naming a code object (symbols/python_code.h) */
	uint16_t code_linetable;       /* PyCodeObject.co_linetable (bytes *) */
	uint16_t unicode_length;       /* PyASCIIObject.length (Py_ssize_t): code points */
	uint16_t unicode_state;	       /* PyASCIIObject.state: the 32-bit word of bit fields */
	uint16_t unicode_ascii_data;   /* sizeof(PyASCIIObject): a compact ASCII string's data */
	uint16_t unicode_compact_data; /* sizeof(PyCompactUnicodeObject): other compact data */
	uint8_t unicode_kind_shift;    /* state.kind (3 bits: 1, 2 or 4 bytes a code point) */
	uint8_t unicode_compact_bit;   /* state.compact: data follows the header */
	uint8_t unicode_ascii_bit;     /* state.ascii: only code points below 128 */
	uint16_t bytes_size;	       /* PyVarObject.ob_size of a PyBytesObject: its length */
	uint16_t bytes_data;	       /* PyBytesObject.ob_sval */
	uint32_t walk;		       /* enum python_walk_flags */
	uint32_t line_format;	       /* enum python_line_format: co_linetable's */
	/* checked against the interpreter file's PyCode_Type / PyFrame_Type tp_basicsize
	 * (sizeof(PyCodeObject), sizeof(PyFrameObject)) when not 0; 0: PyCode_Type's is
	 * code_adaptive (3.11 on), PyFrame_Type's not checked */
	uint32_t code_basicsize, frame_basicsize;
};

/**
 * python_layout__find() - the layout of the CPython whose Py_Version
 * (PY_VERSION_HEX: 0x030b02f0 is 3.11.2 final) is @py_version_hex (a 3.9,
 * which has no Py_Version, is known by its file's name: 0x030900f0).
 * Return: the layout (static, never freed), or NULL: a minor version not in
 * the table, or an alpha or beta release.
 */
const struct python_layout *python_layout__find(uint32_t py_version_hex);

#endif /* CTXPROF_PYTHON_LAYOUT_H */
