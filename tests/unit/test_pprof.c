// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/pprof.c.
 *
 * The encoding is checked three ways: exact bytes for small profiles, a
 * protobuf decoder written here for round trips, and the reference pprof tool
 * (path in $PPROF) reading what pprof__write_gz() wrote.  Allocation failures
 * are injected by replacing malloc() and friends in this binary.
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

/* --- allocation failure injection */

/*
 * glibc lets a program replace malloc, calloc, realloc and free (libc and
 * zlib then call ours too); forwarding to __libc_* keeps one heap.  ASan
 * replaces them itself, so under ASan the injection test is skipped.
 */
#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ALLOC_HOOKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ALLOC_HOOKS 0
#endif
#endif
#ifndef HAVE_ALLOC_HOOKS
#define HAVE_ALLOC_HOOKS 1
#endif

#if HAVE_ALLOC_HOOKS
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);

static struct {
	bool tracking; /* count allocations and live blocks */
	long fail_at;  /* ordinal of the allocation to fail; -1: none */
	long count;    /* allocations seen while tracking */
	long live;     /* blocks allocated minus blocks freed while tracking */
	bool failed;   /* an allocation was failed on purpose */
} alloc;

/* Return: true when this allocation must fail. */
static bool alloc_should_fail(void)
{
	if (!alloc.tracking)
		return false;
	if (alloc.count++ == alloc.fail_at) {
		alloc.failed = true;
		errno = ENOMEM;
		return true;
	}
	return false;
}

void *malloc(size_t size)
{
	void *ptr;

	if (alloc_should_fail())
		return NULL;
	ptr = __libc_malloc(size);
	if (ptr && alloc.tracking)
		alloc.live++;
	return ptr;
}

void *calloc(size_t nmemb, size_t size)
{
	void *ptr;

	if (alloc_should_fail())
		return NULL;
	ptr = __libc_calloc(nmemb, size);
	if (ptr && alloc.tracking)
		alloc.live++;
	return ptr;
}

void *realloc(void *old, size_t size)
{
	void *ptr;

	if (size && alloc_should_fail())
		return NULL;
	ptr = __libc_realloc(old, size);
	if (alloc.tracking) {
		if (!old && ptr)
			alloc.live++;
		else if (old && !size)
			alloc.live--;
	}
	return ptr;
}

void free(void *ptr)
{
	if (ptr && alloc.tracking)
		alloc.live--;
	__libc_free(ptr);
}
#endif /* HAVE_ALLOC_HOOKS */

/* --- a protobuf decoder for perftools.profiles.Profile, just enough to check */

#define DEC_MAX 64

struct slice {
	const uint8_t *p;
	size_t len;
};

struct dec_label {
	int64_t key, str, num, num_unit;
};

struct dec_sample {
	uint64_t locs[DEC_MAX];
	size_t nr_locs;
	int64_t values[DEC_MAX];
	size_t nr_values;
	struct dec_label labels[8];
	size_t nr_labels;
	size_t value_run_len; /* bytes in the packed value field */
};

struct dec_mapping {
	uint64_t id, start, limit, offset, has_functions;
	int64_t filename, build_id;
};

struct dec_location {
	uint64_t id, mapping_id, address, function_id;
	size_t nr_lines;
};

struct dec_function {
	uint64_t id;
	int64_t name, system_name, filename;
};

/* stores the first DEC_MAX (or 1024 strings) of each table, counts all */
struct dec_profile {
	int64_t sample_types[DEC_MAX][2];
	size_t nr_sample_types;
	struct dec_sample samples[DEC_MAX];
	size_t nr_samples;
	struct dec_mapping mappings[DEC_MAX];
	size_t nr_mappings;
	struct dec_location locations[DEC_MAX];
	size_t nr_locations;
	struct dec_function functions[DEC_MAX];
	size_t nr_functions;
	struct slice strs[1024];
	size_t nr_strs;
	int64_t time_nanos, duration_nanos, period;
	int64_t period_type[2];
	int64_t comments[DEC_MAX];
	size_t nr_comments;
	uint8_t *buf; /* the encoding strs point into, from encode_and_decode() */
};

static bool rd_varint(struct slice *s, uint64_t *v)
{
	unsigned int shift;

	*v = 0;
	for (shift = 0; shift < 70 && s->len; shift += 7) {
		uint8_t byte = *s->p++;

		s->len--;
		*v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return true;
	}
	return false;
}

/* read one field: a varint into *v, or a length-delimited body into *sub */
static bool rd_field(struct slice *s, unsigned int *field, unsigned int *wire, uint64_t *v,
		     struct slice *sub)
{
	uint64_t key, len;

	if (!rd_varint(s, &key))
		return false;
	*field = key >> 3;
	*wire = key & 7;
	if (*wire == 0)
		return rd_varint(s, v);
	if (*wire != 2 || !rd_varint(s, &len) || len > s->len)
		return false;
	sub->p = s->p;
	sub->len = len;
	s->p += len;
	s->len -= len;
	return true;
}

/* a repeated scalar may come packed (wire 2) or one per field (wire 0) */
static bool rd_repeated(unsigned int wire, uint64_t v, struct slice sub, uint64_t *out, size_t *nr,
			size_t max)
{
	if (wire == 0) {
		if (*nr >= max)
			return false;
		out[(*nr)++] = v;
		return true;
	}
	while (sub.len) {
		if (*nr >= max || !rd_varint(&sub, &out[*nr]))
			return false;
		(*nr)++;
	}
	return true;
}

static bool dec_value_type(struct slice s, int64_t out[2])
{
	unsigned int field, wire;
	struct slice sub;
	uint64_t v;

	while (s.len) {
		if (!rd_field(&s, &field, &wire, &v, &sub) || wire != 0)
			return false;
		if (field == 1 || field == 2)
			out[field - 1] = (int64_t)v;
	}
	return true;
}

static bool dec_label(struct slice s, struct dec_label *l)
{
	unsigned int field, wire;
	struct slice sub;
	uint64_t v;

	while (s.len) {
		if (!rd_field(&s, &field, &wire, &v, &sub) || wire != 0)
			return false;
		if (field == 1)
			l->key = (int64_t)v;
		else if (field == 2)
			l->str = (int64_t)v;
		else if (field == 3)
			l->num = (int64_t)v;
		else if (field == 4)
			l->num_unit = (int64_t)v;
	}
	return true;
}

static bool dec_sample(struct slice s, struct dec_sample *d)
{
	unsigned int field, wire;
	struct slice sub = {};
	uint64_t v = 0;

	while (s.len) {
		if (!rd_field(&s, &field, &wire, &v, &sub))
			return false;
		if (field == 1) {
			if (!rd_repeated(wire, v, sub, d->locs, &d->nr_locs, DEC_MAX))
				return false;
		} else if (field == 2) {
			if (wire == 2)
				d->value_run_len += sub.len;
			if (!rd_repeated(wire, v, sub, (uint64_t *)d->values, &d->nr_values,
					 DEC_MAX))
				return false;
		} else if (field == 3) {
			if (wire != 2 || d->nr_labels >= 8 ||
			    !dec_label(sub, &d->labels[d->nr_labels++]))
				return false;
		}
	}
	return true;
}

static bool dec_mapping(struct slice s, struct dec_mapping *m)
{
	unsigned int field, wire;
	struct slice sub;
	uint64_t v;

	while (s.len) {
		if (!rd_field(&s, &field, &wire, &v, &sub) || wire != 0)
			return false;
		switch (field) {
		case 1:
			m->id = v;
			break;
		case 2:
			m->start = v;
			break;
		case 3:
			m->limit = v;
			break;
		case 4:
			m->offset = v;
			break;
		case 5:
			m->filename = (int64_t)v;
			break;
		case 6:
			m->build_id = (int64_t)v;
			break;
		case 7:
			m->has_functions = v;
			break;
		}
	}
	return true;
}

static bool dec_location(struct slice s, struct dec_location *l)
{
	unsigned int field, wire, lfield, lwire;
	struct slice sub, lsub;
	uint64_t v, lv;

	while (s.len) {
		if (!rd_field(&s, &field, &wire, &v, &sub))
			return false;
		if (field == 1 && wire == 0) {
			l->id = v;
		} else if (field == 2 && wire == 0) {
			l->mapping_id = v;
		} else if (field == 3 && wire == 0) {
			l->address = v;
		} else if (field == 4 && wire == 2) {
			l->nr_lines++;
			while (sub.len) {
				if (!rd_field(&sub, &lfield, &lwire, &lv, &lsub) || lwire != 0)
					return false;
				if (lfield == 1)
					l->function_id = lv;
			}
		} else {
			return false;
		}
	}
	return true;
}

static bool dec_function(struct slice s, struct dec_function *f)
{
	unsigned int field, wire;
	struct slice sub;
	uint64_t v;

	while (s.len) {
		if (!rd_field(&s, &field, &wire, &v, &sub) || wire != 0)
			return false;
		if (field == 1)
			f->id = v;
		else if (field == 2)
			f->name = (int64_t)v;
		else if (field == 3)
			f->system_name = (int64_t)v;
		else if (field == 4)
			f->filename = (int64_t)v;
	}
	return true;
}

static bool decode_profile(const uint8_t *buf, size_t len, struct dec_profile *d)
{
	struct slice s = {buf, len}, sub = {};
	unsigned int field, wire;
	uint64_t v = 0;
	bool ok = true;

	memset(d, 0, sizeof(*d));
	while (s.len && ok) {
		if (!rd_field(&s, &field, &wire, &v, &sub))
			return false;
		switch (field) {
		case 1:
			ok = wire == 2 && d->nr_sample_types < DEC_MAX &&
			     dec_value_type(sub, d->sample_types[d->nr_sample_types++]);
			break;
		case 2:
			ok = wire == 2 && (d->nr_samples >= DEC_MAX ||
					   dec_sample(sub, &d->samples[d->nr_samples]));
			d->nr_samples++;
			break;
		case 3:
			ok = wire == 2 && (d->nr_mappings >= DEC_MAX ||
					   dec_mapping(sub, &d->mappings[d->nr_mappings]));
			d->nr_mappings++;
			break;
		case 4:
			ok = wire == 2 && (d->nr_locations >= DEC_MAX ||
					   dec_location(sub, &d->locations[d->nr_locations]));
			d->nr_locations++;
			break;
		case 5:
			ok = wire == 2 && (d->nr_functions >= DEC_MAX ||
					   dec_function(sub, &d->functions[d->nr_functions]));
			d->nr_functions++;
			break;
		case 6:
			ok = wire == 2;
			if (d->nr_strs < 1024)
				d->strs[d->nr_strs] = sub;
			d->nr_strs++;
			break;
		case 9:
			ok = wire == 0;
			d->time_nanos = (int64_t)v;
			break;
		case 10:
			ok = wire == 0;
			d->duration_nanos = (int64_t)v;
			break;
		case 11:
			ok = wire == 2 && dec_value_type(sub, d->period_type);
			break;
		case 12:
			ok = wire == 0;
			d->period = (int64_t)v;
			break;
		case 13:
			ok = rd_repeated(wire, v, sub, (uint64_t *)d->comments, &d->nr_comments,
					 DEC_MAX);
			break;
		default:
			ok = false;
			break;
		}
	}
	return ok;
}

/* Return: true when string_table[@idx] is @want. */
static bool dec_str_is(const struct dec_profile *d, int64_t idx, const char *want)
{
	size_t len = strlen(want);

	if (idx < 0 || (size_t)idx >= d->nr_strs || (size_t)idx >= 1024)
		return false;
	return d->strs[idx].len == len && !memcmp(d->strs[idx].p, want, len);
}

static struct dec_profile *encode_and_decode(struct pprof *p)
{
	struct dec_profile *d = malloc(sizeof(*d));
	uint8_t *buf = NULL;
	size_t len = 0;

	assert_non_null(d);
	assert_int_equal(pprof__encode(p, &buf, &len), 0);
	assert_true(decode_profile(buf, len, d));
	d->buf = buf;
	return d;
}

static void dec_free(struct dec_profile *d)
{
	free(d->buf);
	free(d);
}

/* --- fixtures and helpers */

static const struct pprof_value_type cpu_types[] = {
	{"samples", "count"},
	{"cpu", "nanoseconds"},
};
static const struct pprof_value_type cpu_period = {"cpu", "nanoseconds"};
#define PERIOD_NS 10000000LL /* 100 Hz */

struct fixture {
	char *dir; /* private temporary directory */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->dir = fixture_tmpdir("pprof");
	*state = f;
	return 0;
}

/* remove the fixture directory and whatever a test left in it */
static int teardown(void **state)
{
	struct fixture *f = *state;

	fixture_tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* Return: how many entries @dir holds, "." and ".." aside. */
static int count_dir_entries(const char *path)
{
	struct dirent *de;
	int n = 0;
	DIR *dir;

	dir = opendir(path);
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	}
	closedir(dir);
	return n;
}

/*
 * Build the three-function profile several tests read:
 *   main -> compute                3 samples, 30ms   thread 1234 "worker"
 *   main -> compute -> memcpy      2 samples, 20ms   thread 1235 "io"
 *   main                           1 sample,  10ms   thread 1234 "worker"
 */
static struct pprof *build_three_functions(void)
{
	struct pprof_mapping app = {
		.memory_start = 0x400000,
		.memory_limit = 0x401000,
		.file_offset = 0,
		.filename = "/usr/bin/ctxprof-test-app",
		.build_id = "0123456789abcdef0123456789abcdef01234567",
		.has_functions = 1,
	};
	struct pprof_mapping libc = {
		.memory_start = 0x7f0000000000,
		.memory_limit = 0x7f0000200000,
		.file_offset = 0x28000,
		.filename = "/lib/x86_64-linux-gnu/libc.so.6",
		.build_id = "feedfacecafebeef",
		.has_functions = 1,
	};
	struct pprof_label worker[] = {
		{.key = "thread_id", .num = 1234},
		{.key = "thread_name", .str = "worker"},
		{.key = "pid", .num = 42},
		{.key = "rss", .num = 4096, .num_unit = "bytes"},
	};
	struct pprof_label io[] = {
		{.key = "thread_id", .num = 1235},
		{.key = "thread_name", .str = "io"},
		{.key = "pid", .num = 42},
	};
	uint64_t m_app, m_libc, f_main, f_compute, f_memcpy, l_main, l_compute, l_memcpy;
	uint64_t stack[3];
	int64_t values[2];
	struct pprof *p;

	p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	assert_non_null(p);
	pprof__set_time(p, 1700000000LL * 1000000000LL, 10LL * 1000000000LL);
	assert_int_equal(pprof__add_comment(p, "ctxprof unit test"), 0);

	m_app = pprof__mapping(p, &app);
	m_libc = pprof__mapping(p, &libc);
	f_main = pprof__function(p, "main", "main", "app.c");
	f_compute = pprof__function(p, "compute", "compute", "app.c");
	f_memcpy = pprof__function(p, "memcpy", "__memcpy_avx_unaligned", NULL);
	l_main = pprof__location(p, m_app, 0x400123, f_main);
	l_compute = pprof__location(p, m_app, 0x400456, f_compute);
	l_memcpy = pprof__location(p, m_libc, 0x7f0000012345, f_memcpy);
	assert_true(m_app && m_libc && f_main && f_compute && f_memcpy);
	assert_true(l_main && l_compute && l_memcpy);

	stack[0] = l_compute;
	stack[1] = l_main;
	values[0] = 3;
	values[1] = 3 * PERIOD_NS;
	assert_int_equal(pprof__add_sample(p, stack, 2, values, worker, 4), 0);

	stack[0] = l_memcpy;
	stack[1] = l_compute;
	stack[2] = l_main;
	values[0] = 2;
	values[1] = 2 * PERIOD_NS;
	assert_int_equal(pprof__add_sample(p, stack, 3, values, io, 3), 0);

	stack[0] = l_main;
	values[0] = 1;
	values[1] = PERIOD_NS;
	assert_int_equal(pprof__add_sample(p, stack, 1, values, worker, 3), 0);
	return p;
}

/* --- encoding */

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

static void pprof__write_gz__profile__gunzips_to_encoded_bytes(void **state)
{
	struct fixture *f = *state;
	struct pprof *p = build_three_functions();
	uint8_t *buf = NULL, *got;
	char path[PATH_MAX];
	size_t len = 0;
	struct stat st;
	gzFile gz;
	int n;

	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	assert_int_equal(pprof__encode(p, &buf, &len), 0);
	/* only the renamed file remains, with mkstemp's private mode */
	assert_int_equal(count_dir_entries(f->dir), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	got = malloc(len + 1);
	assert_non_null(got);
	gz = gzopen(path, "rb");
	assert_non_null(gz);
	assert_int_equal(gzdirect(gz), 0); /* really gzip, not passed through */
	n = gzread(gz, got, len + 1);
	assert_int_equal(n, len);
	assert_memory_equal(got, buf, len);
	gzclose(gz);

	/* writing again replaces the file */
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	assert_int_equal(count_dir_entries(f->dir), 1);
	free(got);
	free(buf);
	pprof__free(p);
}

static void pprof__add_sample__two_samples__decoded_by_pprof(void **state)
{
	struct fixture *f = *state;
	const char *tool = fixture_pprof_tool();
	char path[PATH_MAX];
	char *out, *samples;
	struct pprof *p;
	int status;

	if (!tool) {
		skip();
		return;
	}
	p = build_three_functions();
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	out = fixture_run_pprof(tool, "-raw", path, &status);
	if (status != 0)
		fail_msg("pprof -raw exited %d:\n%s", status, out);

	fixture_assert_contains(out, "PeriodType: cpu nanoseconds\n");
	fixture_assert_contains(out, "Period: 10000000\n");
	fixture_assert_contains(out, "Duration: 10s\n");
	fixture_assert_contains(out, "Comment: ctxprof unit test\n");
	fixture_assert_contains(out, "samples/count cpu/nanoseconds\n");
	/* pprof renumbers locations: compare stacks by function name */
	samples = fixture_pprof_samples(out);
	fixture_assert_contains(samples, "3 30000000: compute main | thread_name:[worker]"
					 " | pid:[42] rss:[4096 bytes] thread_id:[1234]\n");
	fixture_assert_contains(samples, "2 20000000: memcpy compute main | thread_name:[io]"
					 " | pid:[42] thread_id:[1235]\n");
	fixture_assert_contains(samples, "1 10000000: main | thread_name:[worker]"
					 " | pid:[42] thread_id:[1234]\n");
	/* locations with their address, function, file and mapping */
	fixture_assert_contains(out, ": 0x400123 M=1 main app.c:0 s=0\n");
	fixture_assert_contains(out, ": 0x400456 M=1 compute app.c:0 s=0\n");
	fixture_assert_contains(out,
				": 0x7f0000012345 M=2 memcpy :0 s=0(__memcpy_avx_unaligned)\n");
	fixture_assert_contains(out, "1: 0x400000/0x401000/0x0 /usr/bin/ctxprof-test-app "
				     "0123456789abcdef0123456789abcdef01234567 [FN]\n");
	fixture_assert_contains(out, "2: 0x7f0000000000/0x7f0000200000/0x28000 "
				     "/lib/x86_64-linux-gnu/libc.so.6 feedfacecafebeef [FN]\n");
	free(samples);
	free(out);
	pprof__free(p);
}

/* find the -top row for @func; copy its flat and cum columns */
static bool top_row(const char *out, const char *func, char flat[32], char cum[32])
{
	const char *line = out;
	char name[256], fp[32], sp[32], cp[32];

	while (line && *line) {
		if (sscanf(line, "%31s %31s %31s %31s %31s %255s", flat, fp, sp, cum, cp, name) ==
			    6 &&
		    !strcmp(name, func))
			return true;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return false;
}

static void pprof__write_gz__three_functions__pprof_top_flat_values(void **state)
{
	struct fixture *f = *state;
	const char *tool = fixture_pprof_tool();
	char path[PATH_MAX], flat[32], cum[32];
	struct pprof *p;
	int status;
	char *out;

	if (!tool) {
		skip();
		return;
	}
	p = build_three_functions();
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);

	/* the default sample type is the last one, cpu */
	out = fixture_run_pprof(tool, "-top -nodecount=10", path, &status);
	if (status != 0)
		fail_msg("pprof -top exited %d:\n%s", status, out);
	fixture_assert_contains(out, "Showing nodes accounting for 60ms, 100% of 60ms total\n");
	assert_true(top_row(out, "compute", flat, cum));
	assert_string_equal(flat, "30ms");
	assert_string_equal(cum, "50ms");
	assert_true(top_row(out, "memcpy", flat, cum));
	assert_string_equal(flat, "20ms");
	assert_string_equal(cum, "20ms");
	assert_true(top_row(out, "main", flat, cum));
	assert_string_equal(flat, "10ms");
	assert_string_equal(cum, "60ms");
	free(out);

	out = fixture_run_pprof(tool, "-top -nodecount=10 -sample_index=samples", path, &status);
	if (status != 0)
		fail_msg("pprof -top -sample_index=samples exited %d:\n%s", status, out);
	assert_true(top_row(out, "compute", flat, cum));
	assert_string_equal(flat, "3");
	assert_string_equal(cum, "5");
	assert_true(top_row(out, "main", flat, cum));
	assert_string_equal(flat, "1");
	assert_string_equal(cum, "6");
	free(out);

	/* a label filter sees the thread names */
	out = fixture_run_pprof(tool, "-top -nodecount=10 -tagfocus=thread_name=io", path, &status);
	if (status != 0)
		fail_msg("pprof -top -tagfocus exited %d:\n%s", status, out);
	assert_true(top_row(out, "memcpy", flat, cum));
	assert_string_equal(flat, "20ms");
	assert_true(top_row(out, "main", flat, cum));
	assert_string_equal(flat, "0");
	assert_string_equal(cum, "20ms");
	free(out);
	pprof__free(p);
}

static void pprof__write_gz__no_samples__valid_for_pprof(void **state)
{
	struct fixture *f = *state;
	const char *tool = fixture_pprof_tool();
	char path[PATH_MAX];
	struct pprof *p;
	int status;
	char *out;

	if (!tool) {
		skip();
		return;
	}
	p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	assert_non_null(p);
	snprintf(path, sizeof(path), "%s/empty.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	out = fixture_run_pprof(tool, "-raw", path, &status);
	if (status != 0)
		fail_msg("pprof -raw exited %d on an empty profile:\n%s", status, out);
	fixture_assert_contains(out,
				"PeriodType: cpu nanoseconds\nPeriod: 10000000\n"
				"Samples:\nsamples/count cpu/nanoseconds\nLocations\nMappings\n");
	free(out);
	pprof__free(p);
}

static void pprof__write_gz__missing_dir__returns_enoent(void **state)
{
	struct fixture *f = *state;
	struct pprof *p = build_three_functions();
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/no/such/dir/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), -ENOENT);
	assert_int_equal(count_dir_entries(f->dir), 0);
	pprof__free(p);
}

static void pprof__write_gz__unwritable_dir__returns_error(void **state)
{
	struct fixture *f = *state;
	struct pprof *p = build_three_functions();
	char dir[128], path[PATH_MAX];
	int err;

	if (geteuid() != 0) {
		/* permissions only bind non-root users */
		snprintf(dir, sizeof(dir), "%s/ro", f->dir);
		assert_int_equal(mkdir(dir, 0500), 0);
		snprintf(path, sizeof(path), "%s/cpu.pb.gz", dir);
		err = pprof__write_gz(p, path, NULL);
		assert_int_equal(err, -EACCES);
		assert_int_equal(count_dir_entries(dir), 0);
	}
	/* /proc refuses new files even to root */
	err = pprof__write_gz(p, "/proc/ctxprof-test.pb.gz", NULL);
	assert_true(err < 0);
	assert_int_equal(access("/proc/ctxprof-test.pb.gz", F_OK), -1);
	/* a regular file in place of a directory */
	snprintf(path, sizeof(path), "%s/file", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	snprintf(path, sizeof(path), "%s/file/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), -ENOTDIR);
	pprof__free(p);
}

static void pprof__write_gz__rename_onto_directory__fails_and_leaves_no_temp(void **state)
{
	struct fixture *f = *state;
	struct pprof *p = build_three_functions();
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	/* the temporary file is written, then rename() fails */
	assert_int_equal(pprof__write_gz(p, path, NULL), -EISDIR);
	assert_int_equal(count_dir_entries(f->dir), 1);
	pprof__free(p);
}

/* --- allocation failures */

#if HAVE_ALLOC_HOOKS
/*
 * Build, grow every table past its first resize, and write a profile.
 * Runs with allocations tracked, so it must not call cmocka.
 * Return: how many API calls failed; -1 when one failed the wrong way.
 */
static int alloc_scenario(const char *path, size_t *nr_samples)
{
	struct pprof_mapping m = {.memory_limit = 0x1000, .has_functions = 1};
	struct pprof_label labels[3] = {
		{.key = "thread_id"},
		{.key = "thread_name"},
		{.key = "rss", .num_unit = "bytes"},
	};
	int64_t values[2] = {1, PERIOD_NS};
	char name[32], file[32], build_id[32], thread[16];
	uint64_t locs[100] = {}, stack[4];
	int failures = 0, err;
	size_t i, j, depth;
	struct pprof *p;
	uint64_t mid, fid;

	p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	if (!p)
		return errno == ENOMEM ? 1 : -1;
	for (i = 0; i < 100; i++) {
		snprintf(file, sizeof(file), "/lib/lib%zu.so", i % 10);
		snprintf(build_id, sizeof(build_id), "%016zx", i % 10);
		m.filename = file;
		m.build_id = build_id;
		m.memory_start = (i % 10) << 20;
		m.memory_limit = m.memory_start + 0x1000;
		mid = pprof__mapping(p, &m);
		snprintf(name, sizeof(name), "fn_%zu", i);
		fid = pprof__function(p, name, NULL, file);
		/* carry on with what was interned: ids of 0 are valid arguments */
		failures += !mid + !fid;
		locs[i] = pprof__location(p, mid, m.memory_start + i, fid);
		failures += !locs[i];
	}
	for (i = 0; i < 100; i++) {
		for (j = depth = 0; j < 4; j++) {
			if (locs[(i + j * 7) % 100])
				stack[depth++] = locs[(i + j * 7) % 100];
		}
		snprintf(thread, sizeof(thread), "thread-%zu", i % 30);
		labels[0].num = i;
		labels[1].str = thread;
		labels[2].num = i * 4096;
		err = pprof__add_sample(p, stack, depth, values, labels, 3);
		if (err && err != -ENOMEM)
			failures = INT_MIN;
		failures += !!err;
	}
	err = pprof__add_comment(p, "fault injection");
	if (err && err != -ENOMEM)
		failures = INT_MIN;
	failures += !!err;
	err = pprof__write_gz(p, path, NULL);
	if (err && err != -ENOMEM)
		failures = INT_MIN;
	failures += !!err;
	*nr_samples = pprof__nr_samples(p);
	pprof__free(p);
	return failures < 0 ? -1 : failures;
}
#endif

static void pprof__alloc_failures__each_allocation__fail_cleanly(void **state)
{
#if HAVE_ALLOC_HOOKS
	struct fixture *f = *state;
	struct dec_profile *d;
	char path[PATH_MAX];
	size_t nr_samples;
	int failures;
	long n;
	uint8_t *buf;
	size_t len;

	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	for (n = 0;; n++) {
		unlink(path);
		alloc.count = 0;
		alloc.live = 0;
		alloc.failed = false;
		alloc.fail_at = n;
		alloc.tracking = true;
		failures = alloc_scenario(path, &nr_samples);
		alloc.tracking = false;

		if (alloc.count == 0) {
			/* e.g. valgrind, which replaces malloc in the executable too */
			print_message("SKIP: our malloc() is not the one called\n");
			skip();
			return;
		}
		if (failures < 0)
			fail_msg("allocation %ld: an API call failed with other than ENOMEM", n);
		if (alloc.live != 0)
			fail_msg("allocation %ld failed: %ld blocks leaked", n, alloc.live);
		if (!alloc.failed) {
			/* every allocation has been failed once: the last run was clean */
			assert_int_equal(failures, 0);
			break;
		}
		if (failures == 0)
			fail_msg("allocation %ld failed but no API call reported it", n);
		/* a failed write leaves no temporary file behind */
		assert_int_equal(count_dir_entries(f->dir), access(path, F_OK) == 0);
	}
	print_message("    %ld allocations each failed once, no leaks\n", n);
	assert_true(n > 100);
	assert_int_equal(nr_samples, 100);

	/* the clean run's file decodes */
	buf = malloc(1 << 20);
	assert_non_null(buf);
	{
		gzFile gz = gzopen(path, "rb");

		assert_non_null(gz);
		len = gzread(gz, buf, 1 << 20);
		gzclose(gz);
	}
	d = malloc(sizeof(*d));
	assert_non_null(d);
	assert_true(decode_profile(buf, len, d));
	assert_int_equal(d->nr_samples, 100);
	assert_int_equal(d->nr_locations, 100);
	assert_int_equal(d->nr_mappings, 10);
	free(d);
	free(buf);
#else
	print_message("SKIP: malloc cannot be replaced under AddressSanitizer\n");
	skip();
#endif
}

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
		cmocka_unit_test_setup_teardown(pprof__write_gz__profile__gunzips_to_encoded_bytes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(pprof__add_sample__two_samples__decoded_by_pprof,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			pprof__write_gz__three_functions__pprof_top_flat_values, setup, teardown),
		cmocka_unit_test_setup_teardown(pprof__write_gz__no_samples__valid_for_pprof, setup,
						teardown),
		cmocka_unit_test_setup_teardown(pprof__write_gz__missing_dir__returns_enoent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(pprof__write_gz__unwritable_dir__returns_error,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			pprof__write_gz__rename_onto_directory__fails_and_leaves_no_temp, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			pprof__alloc_failures__each_allocation__fail_cleanly, setup, teardown),
	};

	return cmocka_run_group_tests_name("pprof", tests, NULL, NULL);
}
