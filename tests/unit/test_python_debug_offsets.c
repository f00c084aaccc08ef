// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbols/python_debug_offsets: the _Py_DebugOffsets of Debian's own
 * CPython 3.13, 3.14 and 3.15 (their words as the interpreter files hold
 * them at &_PyRuntime, copied here; tests/integration/test_python_versions.sh
 * reads the files themselves) give the layouts their headers say; a later
 * minor version is read with the newest schema while its sections stay in
 * place and refused when they moved; a bad cookie, version, free-threaded
 * flag or length is refused; and no corruption of the words (fuzzed) gives
 * a layout that reaches past what the sampler and the namer read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "symbols/python_code.h"
#include "symbols/python_debug_offsets.h"

/* "xdebugpy" as a little-endian word */
#define COOKIE_WORD 0x7970677562656478ull

/* Debian trixie's python3.13: _Py_DebugOffsets, words 1-70 */
static const uint64_t dbg_313[71] = {
	COOKIE_WORD, 0x30d05f0, 0,   283376, 608, 632,	194976, 7272, 7264, 7344, 7400, 7656,
	7640,	     7648,	16,  7752,   0,	  7768, 7760,	304,  0,    8,	  16,	72,
	152,	     160,	232, 32,     80,  8,	0,	56,   72,   70,	  208,	112,
	120,	     128,	136, 68,     52,  96,	104,	200,  16,   8,	  416,	24,
	88,	     168,	32,  24,     16,  40,	24,	16,   48,   32,	  40,	24,
	16,	     32,	16,  24,     40,  16,	32,	64,   32,   16,	  40,
};
/* Debian sid's python3.14: _Py_DebugOffsets, words 1-80 */
static const uint64_t dbg_314[81] = {
	COOKIE_WORD, 0x30e0af0, 0,    316616, 784,  808, 225864, 7280, 7272, 7344, 7360, 7408,
	7688,	     7672,	7680, 16,     7784, 0,	 7800,	 7792, 7992, 0,	   832,	 0,
	8,	     16,	72,   152,    160,  232, 32,	 88,   8,    0,	   56,	 80,
	74,	     64,	0,    216,    112,  120, 128,	 136,  68,   52,   96,	 104,
	208,	     0,		16,   8,      416,  24,	 88,	 168,  40,   32,   16,	 40,
	24,	     16,	200,  24,     40,   32,	 48,	 32,   40,   24,   16,	 32,
	16,	     24,	40,   16,     32,   64,	 32,	 16,   40,
};
/* Debian sid's python3.15: _Py_DebugOffsets, words 1-93 */
static const uint64_t dbg_315[94] = {
	COOKIE_WORD, 0x30f02f0, 0,    346568, 912,  936, 226240, 7272, 7264, 7336, 7352, 7400,
	7592,	     7576,	7584, 16,     7736, 0,	 7752,	 7744, 7944, 0,	   888,	 0,
	8,	     16,	72,   80,     88,   96,	 176,	 184,  256,  32,   36,	 40,
	136,	     288,	0,    88,     8,    0,	 56,	 80,   74,   64,   0,	 216,
	112,	     120,	128,  136,    68,   52,	 96,	 104,  208,  0,	   16,	 8,
	424,	     24,	88,   168,    32,   288, 944,	 888,  40,   32,   16,	 40,
	24,	     16,	200,  24,     40,   32,	 48,	 32,   40,   24,   16,	 32,
	16,	     24,	40,   16,     32,   64,	 32,	 16,   40,   56,
};

#define V313 0x030d05f0u
#define V314 0x030e0af0u
#define V315 0x030f02f0u

static int parse(const uint64_t *words, size_t n, uint32_t version, struct python_layout *l)
{
	const char *why;
	int err = python_debug_offsets__parse(words, n * 8, version, l, &why);

	assert_true(err ? why != NULL : why == NULL);
	return err;
}

static void python_debug_offsets__parse__debian_313__its_headers_layout(void **state)
{
	struct python_layout l;

	assert_int_equal(python_debug_offsets__size(V313), sizeof(dbg_313));
	assert_int_equal(parse(dbg_313, 71, V313, &l), 0);
	assert_int_equal(l.walk, PYTHON_WALK_313);
	assert_int_equal(l.interp_head, 632);
	assert_int_equal(l.threads_head, 7344);
	assert_int_equal(l.tstate_next, 8);
	assert_int_equal(l.tstate_frame, 72);
	assert_int_equal(l.tstate_native_thread_id, 160);
	assert_int_equal(l.frame_code, 0);
	assert_int_equal(l.frame_previous, 8);
	assert_int_equal(l.frame_prev_instr, 56);
	assert_int_equal(l.code_type_off, 8);
	assert_int_equal(l.code_firstlineno, 68);
	assert_int_equal(l.code_filename, 112);
	assert_int_equal(l.code_qualname, 128);
	assert_int_equal(l.code_linetable, 136);
	assert_int_equal(l.code_adaptive, 200);
	assert_int_equal(l.unicode_length, 16);
	assert_int_equal(l.unicode_state, 32);
	assert_int_equal(l.unicode_ascii_data, 40);
	assert_int_equal(l.unicode_compact_data, 56);
	assert_int_equal(l.bytes_size, 16);
	assert_int_equal(l.bytes_data, 32);
}

static void python_debug_offsets__parse__debian_314__its_headers_layout(void **state)
{
	struct python_layout l;

	assert_int_equal(python_debug_offsets__size(V314), sizeof(dbg_314));
	assert_int_equal(parse(dbg_314, 81, V314, &l), 0);
	assert_int_equal(l.interp_head, 808);
	assert_int_equal(l.threads_head, 7344);
	assert_int_equal(l.tstate_frame, 72);
	assert_int_equal(l.tstate_native_thread_id, 160);
	assert_int_equal(l.frame_code, 0);
	assert_int_equal(l.frame_previous, 8);
	assert_int_equal(l.frame_prev_instr, 56);
	assert_int_equal(l.code_qualname, 128);
	assert_int_equal(l.code_adaptive, 208);
	assert_int_equal(l.unicode_compact_data, 56);
}

static void python_debug_offsets__parse__debian_315__its_headers_layout(void **state)
{
	struct python_layout l;

	assert_int_equal(python_debug_offsets__size(V315), sizeof(dbg_315));
	assert_int_equal(parse(dbg_315, 94, V315, &l), 0);
	assert_int_equal(l.interp_head, 936);
	assert_int_equal(l.threads_head, 7336);
	assert_int_equal(l.tstate_frame, 72);
	/* base_frame and last_profiled_frame(_seq) came before thread_id */
	assert_int_equal(l.tstate_native_thread_id, 184);
	assert_int_equal(l.frame_prev_instr, 56);
	assert_int_equal(l.code_adaptive, 208);
	/* published from 3.15 on */
	assert_int_equal(l.unicode_compact_data, 56);
}

/* @src's words with the version word set to @version */
static uint64_t *with_version(const uint64_t *src, size_t n, uint32_t version)
{
	uint64_t *w = malloc(n * 8);

	assert_non_null(w);
	memcpy(w, src, n * 8);
	w[1] = version;
	return w;
}

static void python_debug_offsets__parse__later_minor__newest_schema_or_refused(void **state)
{
	struct python_layout l;
	uint64_t *w;

	/* a 3.16 whose sections stayed where 3.15 has them: read */
	w = with_version(dbg_315, 94, 0x031000f0);
	assert_int_equal(python_debug_offsets__size(0x031000f0), 94 * 8);
	assert_int_equal(parse(w, 94, 0x031000f0, &l), 0);
	assert_int_equal(l.tstate_native_thread_id, 184);
	free(w);
	/* a later version whose sections moved (3.14's words read as 3.15's schema; 3.13's as
	 * 3.14's): refused, not guessed */
	w = calloc(94, 8);
	assert_non_null(w);
	memcpy(w, dbg_314, sizeof(dbg_314));
	w[1] = 0x031000f0;
	assert_int_equal(parse(w, 94, 0x031000f0, &l), -EINVAL);
	free(w);
	w = calloc(81, 8);
	assert_non_null(w);
	memcpy(w, dbg_313, sizeof(dbg_313));
	w[1] = V314;
	assert_int_equal(parse(w, 81, V314, &l), -EINVAL);
	free(w);
}

static void python_debug_offsets__parse__bad_header__refused(void **state)
{
	struct python_layout l;
	uint64_t *w = with_version(dbg_313, 71, V313);

	/* before 3.13: none */
	assert_int_equal(python_debug_offsets__size(0x030c04f0), 0);
	assert_int_equal(parse(w, 71, 0x030c04f0, &l), -ENOENT);
	assert_int_equal(python_debug_offsets__size(0x040000f0), 0);
	/* cut short */
	assert_int_equal(parse(w, 70, V313, &l), -EINVAL);
	/* the cookie */
	w[0] ^= 1;
	assert_int_equal(parse(w, 71, V313, &l), -EINVAL);
	w[0] ^= 1;
	/* another version than the file's Py_Version */
	assert_int_equal(parse(w, 71, 0x030d04f0, &l), -EINVAL);
	/* free-threaded */
	w[2] = 1;
	assert_int_equal(parse(w, 71, V313, &l), -EOPNOTSUPP);
	w[2] = 0;
	/* a frame field past what the sampler reads of a frame */
	w[31] = PYTHON_FRAME_READ;
	assert_int_equal(parse(w, 71, V313, &l), -EINVAL);
	w[31] = 56;
	/* a code object's qualname past its size */
	w[37] = 1u << 20;
	assert_int_equal(parse(w, 71, V313, &l), -EINVAL);
	w[37] = 128;
	/* the thread state's size absurd */
	w[19] = UINT64_MAX;
	assert_int_equal(parse(w, 71, V313, &l), -EINVAL);
	w[19] = 304;
	/* two fields at one place */
	w[23] = 160;
	assert_int_equal(parse(w, 71, V313, &l), -EINVAL);
	w[23] = 72;
	assert_int_equal(parse(w, 71, V313, &l), 0);
	free(w);
}

/* a layout parse gave: every field inside what the sampler and python_code read */
static void assert_within_reads(const struct python_layout *l)
{
	assert_true(l->frame_code + 8 <= PYTHON_FRAME_READ);
	assert_true(l->frame_previous + 8 <= PYTHON_FRAME_READ);
	assert_true(l->frame_prev_instr + 8 <= PYTHON_FRAME_READ);
	assert_true(l->code_type_off + 8 <= PYTHON_CODE_READ);
	assert_true(l->code_firstlineno + 4 <= PYTHON_CODE_READ);
	assert_true(l->code_filename + 8 <= PYTHON_CODE_READ);
	assert_true(l->code_qualname + 8 <= PYTHON_CODE_READ);
	assert_true(l->code_linetable + 8 <= PYTHON_CODE_HEADER_MAX);
	assert_true(l->unicode_length + 8 <= l->unicode_ascii_data);
	assert_true(l->unicode_state + 4 <= l->unicode_ascii_data);
	assert_true(l->unicode_compact_data <= PYTHON_CODE_HEADER_MAX);
	assert_true(l->bytes_size + 8 <= l->bytes_data);
	assert_true(l->bytes_data <= PYTHON_CODE_HEADER_MAX);
}

/* xorshift64*: the same corruptions every run */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

static void python_debug_offsets__parse__fuzzed_words__refused_or_within_bounds(void **state)
{
	static const struct {
		const uint64_t *words;
		size_t n;
		uint32_t version;
	} golden[] = {{dbg_313, 71, V313}, {dbg_314, 81, V314}, {dbg_315, 94, V315}};
	uint64_t seed = 0x9E3779B97F4A7C15ull, w[94], r;
	unsigned int ok = 0, refused = 0, i, k, g, nmut;
	struct python_layout l;

	for (i = 0; i < 200000; i++) {
		g = i % 3;
		memcpy(w, golden[g].words, golden[g].n * 8);
		nmut = 1 + next_rand(&seed) % 4;
		for (k = 0; k < nmut; k++) {
			r = next_rand(&seed);
			switch (r % 4) {
			case 0: /* a word anything */
				w[(r >> 8) % golden[g].n] = next_rand(&seed);
				break;
			case 1: /* a word a little off */
				w[(r >> 8) % golden[g].n] += (r >> 40) % 33 - 16;
				break;
			case 2: /* a byte flipped */
				((uint8_t *)w)[(r >> 8) % (golden[g].n * 8)] ^= (uint8_t)(r >> 48);
				break;
			default: /* two words swapped */
				w[(r >> 8) % golden[g].n] = w[(r >> 24) % golden[g].n];
				break;
			}
		}
		if (parse(w, golden[g].n, golden[g].version, &l)) {
			refused++;
			continue;
		}
		assert_within_reads(&l);
		ok++;
	}
	print_message("fuzzed: %u refused, %u within bounds\n", refused, ok);
	assert_true(refused > 0 && ok > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(python_debug_offsets__parse__debian_313__its_headers_layout),
		cmocka_unit_test(python_debug_offsets__parse__debian_314__its_headers_layout),
		cmocka_unit_test(python_debug_offsets__parse__debian_315__its_headers_layout),
		cmocka_unit_test(
			python_debug_offsets__parse__later_minor__newest_schema_or_refused),
		cmocka_unit_test(python_debug_offsets__parse__bad_header__refused),
		cmocka_unit_test(
			python_debug_offsets__parse__fuzzed_words__refused_or_within_bounds),
	};

	return cmocka_run_group_tests_name("python_debug_offsets", tests, NULL, NULL);
}
