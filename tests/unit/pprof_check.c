// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the pprof unit tests (test_pprof_encode, test_pprof_write) share: a
 * protobuf decoder for perftools.profiles.Profile written here, just enough
 * to check round trips, and the fixtures (a private directory, the
 * three-function profile).  Contract in pprof_check.h.
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
bool rd_field(struct slice *s, unsigned int *field, unsigned int *wire, uint64_t *v,
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

bool decode_profile(const uint8_t *buf, size_t len, struct dec_profile *d)
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
bool dec_str_is(const struct dec_profile *d, int64_t idx, const char *want)
{
	size_t len = strlen(want);

	if (idx < 0 || (size_t)idx >= d->nr_strs || (size_t)idx >= 1024)
		return false;
	return d->strs[idx].len == len && !memcmp(d->strs[idx].p, want, len);
}

struct dec_profile *encode_and_decode(struct pprof *p)
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

void dec_free(struct dec_profile *d)
{
	free(d->buf);
	free(d);
}

/* --- fixtures and helpers */

const struct pprof_value_type cpu_types[2] = {
	{"samples", "count"},
	{"cpu", "nanoseconds"},
};
const struct pprof_value_type cpu_period = {"cpu", "nanoseconds"};

int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->dir = fixture_tmpdir("pprof");
	*state = f;
	return 0;
}

/* remove the fixture directory and whatever a test left in it */
int teardown(void **state)
{
	struct fixture *f = *state;

	fixture_tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* Return: how many entries @dir holds, "." and ".." aside. */
int count_dir_entries(const char *path)
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
struct pprof *build_three_functions(void)
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
