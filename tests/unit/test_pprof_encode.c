// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/pprof.c: the encoding and its tables.
 *
 * Exact bytes for small profiles, round trips through the decoder in
 * pprof_check.c, interning and deduplication of the tables, and scale
 * (100k locations, 1M samples).  Writing files and the reference pprof tool
 * are test_pprof_write.c's.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "export/pprof.h"
#include "fixtures.h"
#include "util/utf8.h"
#include "pprof_check.h"

static void pprof__encode__minimal_profile__exact_bytes(void **state)
{
	/* the expected bytes, one encoded field per line */
	/* clang-format off */
	static const uint8_t want[] = {
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, /* sample_type {1, 2} */
		0x32, 0x00,			    /* string_table[0] "" */
		0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's',
		0x32, 0x05, 'c', 'o', 'u', 'n', 't',
		0x32, 0x03, 'c', 'p', 'u',
		0x32, 0x0b, 'n', 'a', 'n', 'o', 's', 'e', 'c', 'o', 'n', 'd', 's',
		0x5a, 0x04, 0x08, 0x03, 0x10, 0x04, /* period_type {3, 4} */
		0x60, 0x0a,			    /* period 10 */
	};
	/* clang-format on */
	struct pprof *p;
	uint8_t *buf = NULL;
	size_t len = 0;

	p = pprof__new(cpu_types, 1, cpu_period, 10);
	assert_non_null(p);
	assert_int_equal(pprof__encode(p, &buf, &len), 0);
	assert_int_equal(len, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	free(buf);
	pprof__free(p);
}

static void pprof__encode__one_sample_each_table__exact_bytes(void **state)
{
	/* strings: 0 "" 1 samples 2 count 3 cpu 4 nanoseconds 5 a 6 b 7 f 8 k 9 v 10 n */
	/* the expected bytes, one encoded field per line */
	/* clang-format off */
	static const uint8_t want[] = {
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, /* sample_type */
		0x12, 0x1c,			    /* sample, 28 bytes */
		0x0a, 0x01, 0x01,		    /*   location_id packed [1] */
		0x12, 0x02, 0xac, 0x02,		    /*   value packed [300] */
		0x1a, 0x04, 0x08, 0x08, 0x10, 0x09, /*   label {key k, str v} */
		0x1a, 0x0d, 0x08, 0x0a, 0x18, 0xff, 0xff, 0xff, 0xff, /*   label {key n, */
		0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /*     num -1} */
		0x1a, 0x0e, 0x08, 0x01,		    /* mapping {id 1, */
		0x10, 0x80, 0x20, 0x18, 0x80, 0x40, /*   0x1000-0x2000, */
		0x28, 0x05, 0x30, 0x06, 0x38, 0x01, /*   file a, build_id b, has_functions} */
		0x22, 0x0b, 0x08, 0x01, 0x10, 0x01, /* location {id 1, mapping 1, */
		0x18, 0xb4, 0x24,		    /*   address 0x1234, */
		0x22, 0x02, 0x08, 0x01,		    /*   line {function 1}} */
		0x2a, 0x04, 0x08, 0x01, 0x10, 0x07, /* function {id 1, name f} */
		0x32, 0x00,			    /* string_table */
		0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's',
		0x32, 0x05, 'c', 'o', 'u', 'n', 't',
		0x32, 0x03, 'c', 'p', 'u',
		0x32, 0x0b, 'n', 'a', 'n', 'o', 's', 'e', 'c', 'o', 'n', 'd', 's',
		0x32, 0x01, 'a', 0x32, 0x01, 'b', 0x32, 0x01, 'f',
		0x32, 0x01, 'k', 0x32, 0x01, 'v', 0x32, 0x01, 'n',
		0x5a, 0x04, 0x08, 0x03, 0x10, 0x04, /* period_type */
		0x60, 0x0a,			    /* period 10 */
		0x6a, 0x01, 0x05,		    /* comment packed [a] */
	};
	/* clang-format on */
	struct pprof_mapping m = {
		.memory_start = 0x1000,
		.memory_limit = 0x2000,
		.filename = "a",
		.build_id = "b",
		.has_functions = 1,
	};
	struct pprof_label labels[] = {
		{.key = "k", .str = "v"},
		{.key = "n", .num = -1},
	};
	uint64_t mid, fid, lid;
	int64_t value = 300;
	struct pprof *p;
	uint8_t *buf = NULL;
	size_t len = 0;

	p = pprof__new(cpu_types, 1, cpu_period, 10);
	assert_non_null(p);
	mid = pprof__mapping(p, &m);
	fid = pprof__function(p, "f", NULL, NULL);
	lid = pprof__location(p, mid, 0x1234, fid);
	assert_int_equal(lid, 1);
	assert_int_equal(pprof__add_sample(p, &lid, 1, &value, labels, 2), 0);
	assert_int_equal(pprof__add_comment(p, "a"), 0);
	assert_int_equal(pprof__encode(p, &buf, &len), 0);
	assert_int_equal(len, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	free(buf);
	pprof__free(p);
}

static void pprof__encode__varint_boundaries__round_trip(void **state)
{
	static const int64_t values[] = {
		0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, INT64_MAX, -1, INT64_MIN,
	};
	/* minimal varint sizes of the values above */
	static const size_t run_len = 1 + 1 + 1 + 2 + 2 + 2 + 3 + 5 + 9 + 10 + 10;
	struct pprof_value_type types[11];
	struct pprof_mapping m = {
		.memory_start = 0xffff800000000000ULL,
		.memory_limit = UINT64_MAX,
		.file_offset = 1ULL << 63,
		.filename = "[kernel.kallsyms]",
	};
	struct dec_profile *d;
	uint64_t mid, lid;
	struct pprof *p;
	size_t i;

	for (i = 0; i < 11; i++)
		types[i] = cpu_types[0];
	p = pprof__new(types, 11, cpu_period, INT64_MAX);
	assert_non_null(p);
	pprof__set_time(p, INT64_MIN, -5);
	mid = pprof__mapping(p, &m);
	lid = pprof__location(p, mid, UINT64_MAX, 0);
	assert_int_equal(pprof__add_sample(p, &lid, 1, values, NULL, 0), 0);

	d = encode_and_decode(p);
	assert_int_equal(d->nr_samples, 1);
	assert_int_equal(d->samples[0].nr_values, 11);
	assert_int_equal(d->samples[0].value_run_len, run_len);
	for (i = 0; i < 11; i++)
		assert_true(d->samples[0].values[i] == values[i]);
	assert_int_equal(d->nr_locations, 1);
	assert_true(d->locations[0].address == UINT64_MAX);
	assert_int_equal(d->locations[0].nr_lines, 0); /* no function: no Line */
	assert_true(d->mappings[0].start == m.memory_start);
	assert_true(d->mappings[0].limit == UINT64_MAX);
	assert_true(d->mappings[0].offset == 1ULL << 63);
	assert_int_equal(d->mappings[0].has_functions, 0);
	assert_true(d->time_nanos == INT64_MIN);
	assert_true(d->duration_nanos == -5);
	assert_true(d->period == INT64_MAX);
	dec_free(d);
	pprof__free(p);
}

/* --- interning */

static void pprof__function__equal_inputs__same_id_distinct_otherwise(void **state)
{
	struct pprof *p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	char name[32];
	uint64_t a;

	assert_non_null(p);
	a = pprof__function(p, "fn", "_Z2fnv", "a.c");
	assert_int_equal(a, 1);
	/* equal content from a different buffer is the same function */
	strcpy(name, "fn");
	assert_int_equal(pprof__function(p, name, "_Z2fnv", "a.c"), a);
	assert_int_equal(pprof__function(p, "fn", "_Z2fnv", "b.c"), 2);
	assert_int_equal(pprof__function(p, "fn", NULL, "a.c"), 3);
	assert_int_equal(pprof__function(p, "fn2", "_Z2fnv", "a.c"), 4);
	assert_int_equal(pprof__function(p, "fn", NULL, "a.c"), 3);
	/* NULL and "" are both string 0 */
	assert_int_equal(pprof__function(p, "fn", "", "a.c"), 3);
	assert_int_equal(pprof__nr_functions(p), 4);
	pprof__free(p);
}

static void pprof__mapping__equal_inputs__same_id_distinct_otherwise(void **state)
{
	struct pprof_mapping base = {
		.memory_start = 0x1000,
		.memory_limit = 0x5000,
		.file_offset = 0x0,
		.filename = "/bin/true",
		.build_id = "abcd",
		.has_functions = 1,
	};
	struct pprof_mapping m;
	struct pprof *p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);

	assert_non_null(p);
	assert_int_equal(pprof__mapping(p, &base), 1);
	m = base;
	m.has_functions = 7; /* any non-zero is the same flag */
	assert_int_equal(pprof__mapping(p, &m), 1);
	m = base;
	m.build_id = "abce";
	assert_int_equal(pprof__mapping(p, &m), 2);
	m = base;
	m.build_id = NULL;
	assert_int_equal(pprof__mapping(p, &m), 3);
	m = base;
	m.file_offset = 0x1000;
	assert_int_equal(pprof__mapping(p, &m), 4);
	m = base;
	m.memory_limit = 0x6000;
	assert_int_equal(pprof__mapping(p, &m), 5);
	m = base;
	m.filename = "/bin/false";
	assert_int_equal(pprof__mapping(p, &m), 6);
	/* has_functions is not identity: an unnamed frame clears the flag */
	m = base;
	m.has_functions = 0;
	assert_int_equal(pprof__mapping(p, &m), 1);
	assert_int_equal(pprof__mapping(p, &base), 1);
	assert_int_equal(pprof__nr_mappings(p), 6);
	pprof__free(p);
}

static void pprof__location__equal_inputs__same_id_distinct_otherwise(void **state)
{
	struct pprof_mapping m = {.memory_start = 0x1000, .memory_limit = 0x2000};
	struct pprof *p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	uint64_t m1, f1, f2;

	assert_non_null(p);
	m1 = pprof__mapping(p, &m);
	f1 = pprof__function(p, "a", NULL, NULL);
	f2 = pprof__function(p, "b", NULL, NULL);
	assert_int_equal(pprof__location(p, m1, 0x1100, f1), 1);
	assert_int_equal(pprof__location(p, m1, 0x1100, f1), 1);
	assert_int_equal(pprof__location(p, m1, 0x1100, f2), 2);
	assert_int_equal(pprof__location(p, m1, 0x1101, f1), 3);
	assert_int_equal(pprof__location(p, 0, 0x1100, f1), 4);
	assert_int_equal(pprof__location(p, m1, 0x1100, 0), 5);
	assert_int_equal(pprof__location(p, 0, 0x1100, f1), 4);
	assert_int_equal(pprof__nr_locations(p), 5);
	pprof__free(p);
}

/* a Go frame: a call inlined into its caller, two Lines innermost first, each with its line */
static void pprof__location_lines__inlined_call__lines_in_order(void **state)
{
	static const uint8_t want[] = {
		0x22, 0x10,			    /* location, 16 bytes */
		0x08, 0x01, 0x18, 0x10,		    /*   id 1, address 0x10 */
		0x22, 0x04, 0x08, 0x01, 0x10, 0x28, /*   line {function 1, line 40} */
		0x22, 0x04, 0x08, 0x02, 0x10, 0x2f, /*   line {function 2, line 47} */
	};
	struct pprof_line lines[2], other[2];
	struct pprof_frame fr;
	uint64_t inner, outer, lid;
	struct pprof *p;
	uint8_t *buf = NULL;
	size_t len = 0;

	p = pprof__new(cpu_types, 1, cpu_period, 10);
	assert_non_null(p);
	inner = pprof__function(p, "main.goInlined", "main.goInlined", "goload.go");
	outer = pprof__function(p, "main.goSpinInline", "main.goSpinInline", "goload.go");
	lines[0] = (struct pprof_line){inner, 40};
	lines[1] = (struct pprof_line){outer, 47};
	lid = pprof__location_lines(p, 0, 0x10, lines, 2);
	assert_int_equal(lid, 1);
	assert_int_equal(pprof__location_lines(p, 0, 0x10, lines, 2), lid);
	/* another line, or the outer function alone, is another location */
	memcpy(other, lines, sizeof(other));
	other[0].line = 41;
	assert_int_equal(pprof__location_lines(p, 0, 0x10, other, 2), 2);
	assert_int_equal(pprof__location_lines(p, 0, 0x10, &lines[1], 1), 3);
	assert_int_equal(pprof__location(p, 0, 0x10, outer), 4);
	/* a dangling function in any line refuses the location */
	other[0].function_id = 99;
	assert_int_equal(pprof__location_lines(p, 0, 0x10, other, 2), 0);
	assert_int_equal(pprof__nr_locations(p), 4);
	/* the location names the function the code belongs to: the outermost */
	assert_int_equal(pprof__location_frame(p, lid, &fr), 0);
	assert_int_equal(fr.function_id, outer);
	assert_string_equal(fr.name, "main.goSpinInline");
	assert_int_equal(pprof__encode(p, &buf, &len), 0);
	assert_non_null(memmem(buf, len, want, sizeof(want)));
	free(buf);
	pprof__free(p);
}

static void pprof__location__dangling_ids__rejected(void **state)
{
	struct pprof *p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);

	assert_non_null(p);
	assert_int_equal(pprof__location(p, 1, 0x1000, 0), 0);
	assert_int_equal(pprof__location(p, 0, 0x1000, 1), 0);
	assert_int_equal(pprof__nr_locations(p), 0);
	pprof__free(p);
}

static void pprof__add_sample__bad_arguments__einval_and_nothing_added(void **state)
{
	struct pprof *p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	struct pprof_label keyless = {.str = "x"};
	int64_t values[2] = {1, PERIOD_NS};
	uint64_t loc, bad;

	assert_non_null(p);
	loc = pprof__location(p, 0, 0x1000, 0);
	bad = loc + 1;
	assert_int_equal(pprof__add_sample(p, &bad, 1, values, NULL, 0), -EINVAL);
	bad = 0;
	assert_int_equal(pprof__add_sample(p, &bad, 1, values, NULL, 0), -EINVAL);
	assert_int_equal(pprof__add_sample(p, &loc, 1, values, &keyless, 1), -EINVAL);
	assert_int_equal(pprof__add_sample(p, &loc, 1, NULL, NULL, 0), -EINVAL);
	assert_int_equal(pprof__nr_samples(p), 0);
	assert_int_equal(pprof__add_sample(p, &loc, 1, values, NULL, 0), 0);
	assert_int_equal(pprof__nr_samples(p), 1);
	pprof__free(p);
}

static void pprof__new__no_sample_types__einval(void **state)
{
	errno = 0;
	assert_null(pprof__new(cpu_types, 0, cpu_period, PERIOD_NS));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(pprof__new(NULL, 1, cpu_period, PERIOD_NS));
	assert_int_equal(errno, EINVAL);
	pprof__free(NULL);
}

static void pprof__add_sample__repeated_label_strings__interned_once(void **state)
{
	struct pprof *p = build_three_functions();
	struct dec_profile *d = encode_and_decode(p);
	size_t i, j;

	assert_true(d->nr_strs < 1024);
	assert_int_equal(d->strs[0].len, 0);
	/* every string appears once, although thread_name and pid repeat */
	for (i = 0; i < d->nr_strs; i++) {
		for (j = i + 1; j < d->nr_strs; j++) {
			if (d->strs[i].len == d->strs[j].len &&
			    !memcmp(d->strs[i].p, d->strs[j].p, d->strs[i].len))
				fail_msg("string %zu and %zu are both \"%.*s\"", i, j,
					 (int)d->strs[i].len, (const char *)d->strs[i].p);
		}
	}
	assert_int_equal(d->nr_samples, 3);
	assert_true(dec_str_is(d, d->samples[0].labels[1].key, "thread_name"));
	assert_true(dec_str_is(d, d->samples[0].labels[1].str, "worker"));
	assert_int_equal(d->samples[0].labels[1].key, d->samples[1].labels[1].key);
	assert_int_equal(d->samples[0].labels[1].str, d->samples[2].labels[1].str);
	assert_true(dec_str_is(d, d->samples[1].labels[1].str, "io"));
	assert_int_equal(d->samples[1].labels[0].num, 1235);
	assert_int_equal(d->samples[1].labels[0].str, 0);
	assert_true(dec_str_is(d, d->samples[0].labels[3].num_unit, "bytes"));
	/* tables referenced by id are consistent */
	assert_int_equal(d->nr_functions, 3);
	assert_true(dec_str_is(d, d->functions[2].name, "memcpy"));
	assert_true(dec_str_is(d, d->functions[2].system_name, "__memcpy_avx_unaligned"));
	assert_int_equal(d->functions[2].filename, 0);
	assert_int_equal(d->samples[1].nr_locs, 3);
	assert_int_equal(d->locations[d->samples[1].locs[0] - 1].function_id, 3);
	assert_int_equal(d->locations[d->samples[1].locs[0] - 1].mapping_id, 2);
	assert_true(dec_str_is(d, d->mappings[1].build_id, "feedfacecafebeef"));
	assert_int_equal(d->nr_comments, 1);
	assert_true(dec_str_is(d, d->comments[0], "ctxprof unit test"));
	dec_free(d);
	pprof__free(p);
}

/*
 * Strings from other processes that are not UTF-8 (prctl() names, tags,
 * symbol and file names) come out with each bad byte as U+FFFD, through
 * every table that takes strings; valid multi-byte text is left alone.
 */
static void pprof__intern__invalid_utf8__every_string_valid_bad_bytes_replaced(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"bad\xff", "bad\xef\xbf\xbd"},
		/* an overlong '/' */
		{"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},
		/* a surrogate */
		{"s\xed\xa0\x80", "s\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		/* a sequence cut short */
		{"cut\xe2\x82", "cut\xef\xbf\xbd\xef\xbf\xbd"},
		/* past U+10FFFF */
		{"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		{"\x80lone", "\xef\xbf\xbdlone"},
		{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
	};
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	struct pprof_mapping m = {.memory_start = 0x1000, .memory_limit = 0x2000};
	struct pprof_label labels[2];
	int64_t values[2] = {1, PERIOD_NS};
	struct dec_profile *d;
	uint64_t loc, fn, map;
	int64_t bad_str;
	struct pprof *p;
	size_t i;

	(void)state;
	p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	assert_non_null(p);
	assert_int_equal(pprof__add_comment(p, "comment \xfe"), 0);
	for (i = 0; i < n; i++) {
		m.filename = cases[i].in;
		m.build_id = cases[i].in;
		map = pprof__mapping(p, &m);
		fn = pprof__function(p, cases[i].in, cases[i].in, cases[i].in);
		loc = pprof__location(p, map, 0x1000 + i, fn);
		assert_true(map && fn && loc);
		labels[0] = (struct pprof_label){.key = "thread_name", .str = cases[i].in};
		labels[1] = (struct pprof_label){.key = cases[i].in, .num = 1, .num_unit = "b\xff"};
		assert_int_equal(pprof__add_sample(p, &loc, 1, values, labels, 2), 0);
	}
	d = encode_and_decode(p);
	for (i = 0; i < d->nr_strs && i < 1024; i++)
		if (!utf8_valid(d->strs[i].p, d->strs[i].len))
			fail_msg("string %zu is not UTF-8: \"%.*s\"", i, (int)d->strs[i].len,
				 (const char *)d->strs[i].p);
	for (i = 0; i < n; i++) {
		assert_true(dec_str_is(d, d->samples[i].labels[0].str, cases[i].out));
		assert_true(dec_str_is(d, d->samples[i].labels[1].key, cases[i].out));
		assert_true(dec_str_is(d, d->samples[i].labels[1].num_unit, "b\xef\xbf\xbd"));
		assert_true(dec_str_is(d, d->functions[i].name, cases[i].out));
		assert_true(dec_str_is(d, d->functions[i].system_name, cases[i].out));
		assert_true(dec_str_is(d, d->functions[i].filename, cases[i].out));
		assert_true(dec_str_is(d, d->mappings[i].filename, cases[i].out));
		assert_true(dec_str_is(d, d->mappings[i].build_id, cases[i].out));
	}
	assert_true(dec_str_is(d, d->comments[0], "comment \xef\xbf\xbd"));
	bad_str = d->samples[0].labels[0].str;
	loc = d->samples[0].locs[0];
	dec_free(d);
	/* interned as replaced: "bad\xfe" is "bad\xff"'s string */
	labels[0] = (struct pprof_label){.key = "thread_name", .str = "bad\xfe"};
	assert_int_equal(pprof__add_sample(p, &loc, 1, values, labels, 1), 0);
	d = encode_and_decode(p);
	assert_int_equal(d->samples[n].labels[0].str, bad_str);
	dec_free(d);
	pprof__free(p);
}

static void pprof__add_sample__label_buffer_reused__strings_copied(void **state)
{
	struct pprof *p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	int64_t values[2] = {1, PERIOD_NS};
	char key[16], str[16], unit[16];
	struct pprof_label label = {.key = key, .str = str};
	struct dec_profile *d;

	assert_non_null(p);
	strcpy(key, "thread_name");
	strcpy(str, "first");
	assert_int_equal(pprof__add_sample(p, NULL, 0, values, &label, 1), 0);
	strcpy(str, "second");
	assert_int_equal(pprof__add_sample(p, NULL, 0, values, &label, 1), 0);
	strcpy(key, "bytes");
	strcpy(unit, "bytes");
	label.str = NULL;
	label.num = 7;
	label.num_unit = unit;
	assert_int_equal(pprof__add_sample(p, NULL, 0, values, &label, 1), 0);
	memset(key, 'x', sizeof(key) - 1);
	memset(str, 'x', sizeof(str) - 1);
	memset(unit, 'x', sizeof(unit) - 1);

	d = encode_and_decode(p);
	assert_int_equal(d->nr_samples, 3);
	assert_true(dec_str_is(d, d->samples[0].labels[0].key, "thread_name"));
	assert_true(dec_str_is(d, d->samples[0].labels[0].str, "first"));
	assert_true(dec_str_is(d, d->samples[1].labels[0].str, "second"));
	assert_true(dec_str_is(d, d->samples[2].labels[0].key, "bytes"));
	assert_int_equal(d->samples[2].labels[0].num, 7);
	assert_true(dec_str_is(d, d->samples[2].labels[0].num_unit, "bytes"));
	assert_int_equal(d->samples[2].labels[0].str, 0);
	dec_free(d);
	pprof__free(p);
}

/* --- scale */

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pprof__location__100k_distinct__ids_dense_and_stable(void **state)
{
	const size_t n = 100000;
	struct pprof_mapping m = {.memory_start = 0x400000, .memory_limit = 0x10000000};
	struct pprof *p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	uint64_t mid, fid, lid;
	double t0 = now_seconds();
	char name[32];
	size_t i;

	assert_non_null(p);
	mid = pprof__mapping(p, &m);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "fn_%zu", i);
		fid = pprof__function(p, name, NULL, "big.c");
		assert_int_equal(fid, i + 1);
		lid = pprof__location(p, mid, 0x400000 + 16 * i, fid);
		assert_int_equal(lid, i + 1);
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "fn_%zu", i);
		fid = pprof__function(p, name, NULL, "big.c");
		assert_int_equal(fid, i + 1);
		assert_int_equal(pprof__location(p, mid, 0x400000 + 16 * i, fid), i + 1);
	}
	assert_int_equal(pprof__nr_functions(p), n);
	assert_int_equal(pprof__nr_locations(p), n);
	print_message("    100k functions + locations interned twice in %.3fs\n",
		      now_seconds() - t0);
	pprof__free(p);
}

/* Return: how many top-level fields numbered @field the message holds. */
static size_t count_fields(const uint8_t *buf, size_t len, unsigned int want)
{
	struct slice s = {buf, len}, sub;
	unsigned int field, wire;
	size_t n = 0;
	uint64_t v;

	while (s.len) {
		if (!rd_field(&s, &field, &wire, &v, &sub))
			return SIZE_MAX;
		n += field == want;
	}
	return n;
}

static void pprof__add_sample__1m_samples__all_encoded(void **state)
{
	const size_t nr_samples = 1000000, nr_locs = 100000, depth = 16;
	struct pprof_label labels[3] = {
		{.key = "thread_id"},
		{.key = "thread_name"},
		{.key = "pid", .num = 1},
	};
	struct pprof *p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	int64_t values[2] = {1, PERIOD_NS};
	uint64_t stack[16], x = 88172645463325252ULL;
	double t0 = now_seconds(), t1;
	char thread[16], name[32];
	uint8_t *buf = NULL;
	size_t i, j, len = 0;

	assert_non_null(p);
	for (i = 0; i < nr_locs; i++) {
		snprintf(name, sizeof(name), "fn_%zu", i);
		assert_int_equal(pprof__location(p, 0, i * 8, pprof__function(p, name, NULL, NULL)),
				 i + 1);
	}
	for (i = 0; i < nr_samples; i++) {
		for (j = 0; j < depth; j++) {
			/* xorshift: pseudo-random stacks over all locations */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			stack[j] = x % nr_locs + 1;
		}
		labels[0].num = 1000 + i % 64;
		snprintf(thread, sizeof(thread), "t%zu", i % 64);
		labels[1].str = thread;
		assert_int_equal(pprof__add_sample(p, stack, depth, values, labels, 3), 0);
	}
	t1 = now_seconds();
	assert_int_equal(pprof__encode(p, &buf, &len), 0);
	assert_int_equal(count_fields(buf, len, 2), nr_samples);
	assert_int_equal(count_fields(buf, len, 4), nr_locs);
	print_message("    1M samples x 16 frames: built in %.3fs, encoded (%zu MiB) in %.3fs\n",
		      t1 - t0, len >> 20, now_seconds() - t1);
	free(buf);
	pprof__free(p);
}

/* --- gzip output and the reference pprof tool */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pprof__encode__minimal_profile__exact_bytes),
		cmocka_unit_test(pprof__encode__one_sample_each_table__exact_bytes),
		cmocka_unit_test(pprof__encode__varint_boundaries__round_trip),
		cmocka_unit_test(pprof__function__equal_inputs__same_id_distinct_otherwise),
		cmocka_unit_test(pprof__mapping__equal_inputs__same_id_distinct_otherwise),
		cmocka_unit_test(pprof__location__equal_inputs__same_id_distinct_otherwise),
		cmocka_unit_test(pprof__location__dangling_ids__rejected),
		cmocka_unit_test(pprof__location_lines__inlined_call__lines_in_order),
		cmocka_unit_test(pprof__add_sample__bad_arguments__einval_and_nothing_added),
		cmocka_unit_test(pprof__new__no_sample_types__einval),
		cmocka_unit_test(pprof__add_sample__repeated_label_strings__interned_once),
		cmocka_unit_test(
			pprof__intern__invalid_utf8__every_string_valid_bad_bytes_replaced),
		cmocka_unit_test(pprof__add_sample__label_buffer_reused__strings_copied),
		cmocka_unit_test(pprof__location__100k_distinct__ids_dense_and_stable),
		cmocka_unit_test(pprof__add_sample__1m_samples__all_encoded),
	};

	return cmocka_run_group_tests_name("pprof_encode", tests, NULL, NULL);
}
