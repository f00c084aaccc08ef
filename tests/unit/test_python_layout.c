// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbols/python_layout.h"
#include "python_layout_expect.h"

/* every field, by name, so a mismatch says which */
#define FIELDS(X)                                                                                  \
	X(interp_head)                                                                             \
	X(threads_head)                                                                            \
	X(tstate_next)                                                                             \
	X(tstate_native_thread_id)                                                                 \
	X(tstate_frame)                                                                            \
	X(cframe_current_frame)                                                                    \
	X(frame_code)                                                                              \
	X(frame_previous)                                                                          \
	X(frame_prev_instr)                                                                        \
	X(frame_is_entry)                                                                          \
	X(code_type_off)                                                                           \
	X(code_firstlineno)                                                                        \
	X(code_filename)                                                                           \
	X(code_qualname)                                                                           \
	X(code_adaptive)                                                                           \
	X(code_linetable)                                                                          \
	X(unicode_length)                                                                          \
	X(unicode_state)                                                                           \
	X(unicode_ascii_data)                                                                      \
	X(unicode_compact_data)                                                                    \
	X(unicode_kind_shift)                                                                      \
	X(unicode_compact_bit)                                                                     \
	X(unicode_ascii_bit)                                                                       \
	X(bytes_size)                                                                              \
	X(bytes_data)                                                                              \
	X(walk)

static void python_layout__find_311__matches_cpython_headers(void **state)
{
	const struct python_layout *got;
	struct python_layout want;
	const char *why;
	uint32_t version;
	int bad = 0;

	if (python_layout_expect(&want, &version, &why)) {
		print_message("SKIP: %s\n", why);
		skip();
	}
	got = python_layout__find(version);
	assert_non_null(got);
#define CHECK(f)                                                                                   \
	if (got->f != want.f) {                                                                    \
		print_message("%s: table %u, headers %u\n", #f, (unsigned)got->f,                  \
			      (unsigned)want.f);                                                   \
		bad++;                                                                             \
	}
	FIELDS(CHECK)
#undef CHECK
	assert_int_equal(bad, 0);
}

static void python_layout__find__versions__311_only(void **state)
{
	const struct python_layout *l = python_layout__find(0x030b02f0);

	assert_non_null(l);
	assert_int_equal(l->walk, PYTHON_WALK_311);
	/* any 3.11 from its first release candidate on: one layout */
	assert_ptr_equal(python_layout__find(0x030b00c1), l);
	assert_ptr_equal(python_layout__find(0x030b0ef0), l);
	/* its alphas and betas moved their structures */
	assert_null(python_layout__find(0x030b00a7));
	assert_null(python_layout__find(0x030b00b5));
	/* 3.9: its file's name gives the version (no Py_Version); the frame objects' walk */
	assert_non_null(python_layout__find(0x030900f0));
	assert_int_equal(python_layout__find(0x030900f0)->walk, PYTHON_WALK_39);
	assert_int_equal(python_layout__find(0x030900f0)->line_format, PYTHON_LINES_LNOTAB);
	assert_int_equal(python_layout__find(0x030900f0)->code_basicsize, 176);
	assert_int_equal(l->line_format, PYTHON_LINES_LOCATIONS);
	/* other minors: no Debian package to check them against (3.10, 3.12), or their own
	 * _Py_DebugOffsets (3.13 on) */
	assert_null(python_layout__find(0x030a0cf0));
	assert_null(python_layout__find(0x030c00f0));
	assert_null(python_layout__find(0x030d00f0));
	assert_null(python_layout__find(0x040b00f0));
	assert_null(python_layout__find(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(python_layout__find_311__matches_cpython_headers),
		cmocka_unit_test(python_layout__find__versions__311_only),
	};

	return cmocka_run_group_tests_name("python_layout", tests, NULL, NULL);
}
