/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python_debug_offsets - the layout a CPython 3.13 or later publishes
 * about itself: _Py_DebugOffsets, the first member of _PyRuntime
 * (Include/internal/pycore_runtime.h in 3.13, pycore_debug_offsets.h from
 * 3.14), written for out-of-process readers such as debuggers and
 * profilers: a cookie ("xdebugpy"), the version, whether the build is
 * free-threaded, then one section per structure, each its sizeof() and the
 * offsetof() of its fields.  The values come from the interpreter's own
 * compiler, so a release we never saw gives its own numbers; what we must
 * know is the struct itself (which word holds which field), and that grows
 * between minor versions: fields are added inside sections, so every later
 * section moves.  The schema (the word index of each section we read, and
 * of native_thread_id inside its section) is therefore per minor version,
 * from that version's header:
 *   3.13  thread_state at word 19, interpreter_frame 28, code_object 34,
 *         pyobject 44, bytes_object 64, unicode_object 67
 *   3.14  22, 31, 39, 50, 74, 77 (interpreter_state gained threads_main,
 *         code_object_generation, tlbc_generation; interpreter_frame
 *         stackpointer, tlbc_index; code_object co_tlbc; a set_object section)
 *   3.15  22, 39, 47, 58, 86, 89; native_thread_id 9 words into thread_state
 *         (base_frame, last_profiled_frame(_seq) before thread_id), and
 *         unicode_object publishes sizeof(PyCompactUnicodeObject)
 * A later minor version is read with the newest schema: if its sections
 * moved, the checks below refuse it (counted, said), nothing is guessed.
 *
 * Everything is checked before use, the bytes being the target's file
 * (hostile): the cookie; the version equal to the file's Py_Version; every
 * section's size within a bound; every field inside its structure and
 * inside what the sampler and python_code read of it (PYTHON_FRAME_READ,
 * PYTHON_CODE_READ, PYTHON_CODE_HEADER_MAX); the fields a walk tells apart
 * at distinct places.  A free-threaded build (3.13t, 3.14t) is refused on
 * purpose: its objects and frames differ (per-thread bytecode, another
 * object header) and the walk does not read them.
 *
 * Two facts it does not publish are taken from the headers of 3.13 to 3.15
 * (unchanged there): the str state's bit fields (interned:2, kind:3,
 * compact:1, ascii:1 from bit 0) and, before 3.15,
 * sizeof(PyCompactUnicodeObject) = sizeof(PyASCIIObject) + 16 (utf8_length,
 * utf8).  A wrong one cannot make up a name: python_code checks each str's
 * kind and flags, and its type.
 *
 * Pure functions, any thread.
 */
#ifndef CTXPROF_PYTHON_DEBUG_OFFSETS_H
#define CTXPROF_PYTHON_DEBUG_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/python_layout.h"

/* the first minor version that publishes _Py_DebugOffsets */
#define PYTHON_DEBUG_OFFSETS_MINOR 13

/**
 * python_debug_offsets__size() - how many bytes of _Py_DebugOffsets to read
 * (from &_PyRuntime) for the CPython whose Py_Version is @py_version_hex.
 * Return: the size, or 0 for a version that does not publish them.
 */
size_t python_debug_offsets__size(uint32_t py_version_hex);

/**
 * python_debug_offsets__parse() - the layout the @len bytes at @buf (the
 * start of _PyRuntime, as the interpreter file holds it) describe, for the
 * CPython whose Py_Version is @py_version_hex.
 * @why: set to a short reason when refused (static string)
 * Return: 0 and @out filled; -ENOENT: a version without them (< 3.13);
 * -EOPNOTSUPP: a free-threaded build; -EINVAL: refused, they fail a check
 * (@len too short, the cookie, the version, a size or offset out of bounds).
 */
int python_debug_offsets__parse(const void *buf, size_t len, uint32_t py_version_hex,
				struct python_layout *out, const char **why);

#endif /* CTXPROF_PYTHON_DEBUG_OFFSETS_H */
