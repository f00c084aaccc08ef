// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "sampling/sample_table.h"

struct sum {
	uint64_t samples, rows;
	uint64_t count_of_7_100;
	char comm_of_7_100[SAMPLER_COMM_LEN];
};

static void sum_rows(void *ctx, const struct sample_row *r)
{
	struct sum *s = ctx;

	s->samples += r->count;
	s->rows++;
	if (r->trace_id == 7 && r->tid == 100) {
		s->count_of_7_100 = r->count;
		memcpy(s->comm_of_7_100, r->comm, sizeof(r->comm));
	}
}

/* a sample of thread @tid named @comm; context when span is not 0 */
static const struct sample_record *rec(uint32_t tid, const char *comm, uint64_t span, uint32_t tag0)
{
	static struct sample_record r;

	memset(&r, 0, sizeof(r));
	r.pid = 1;
	r.tid = tid;
	strncpy(r.comm, comm, sizeof(r.comm));
	if (span) {
		r.flags = SAMPLE_F_CONTEXT;
		r.span_id = span;
		r.local_root_span_id = span + 1;
		r.tags[0] = tag0;
	}
	return &r;
}

static void add__same_trace_and_thread__one_row_counted(void **state)
{
	struct sample_table *t = sample_table__new(64);
	struct sum s = {};

	assert_int_equal(sample_table__add(t, 7, rec(100, "old", 0, 0), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "renamed", 0, 0), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(101, "other", 0, 0), NULL), 0);
	assert_int_equal(sample_table__add(t, 8, rec(100, "renamed", 0, 0), NULL), 0);
	sample_table__for_each(t, sum_rows, &s);
	assert_int_equal(s.rows, 3);
	assert_int_equal(s.samples, 4);
	assert_int_equal(s.count_of_7_100, 2);
	assert_string_equal(s.comm_of_7_100, "renamed");
	assert_int_equal(sample_table__nr_samples(t), 4);
	sample_table__free(t);
}

static void add__unterminated_comm__terminated(void **state)
{
	struct sample_table *t = sample_table__new(16);
	struct sample_record r = {.tid = 100};
	struct sum s = {};

	memset(r.comm, 'x', sizeof(r.comm));
	assert_int_equal(sample_table__add(t, 7, &r, NULL), 0);
	sample_table__for_each(t, sum_rows, &s);
	assert_int_equal(strlen(s.comm_of_7_100), SAMPLER_COMM_LEN - 1);
	sample_table__free(t);
}

static void add__full__enospc_existing_rows_still_count(void **state)
{
	struct sample_table *t = sample_table__new(16);
	int i, full = 0;

	for (i = 0; i < 20; i++)
		if (sample_table__add(t, 1000 + i, rec(1, "t", 0, 0), NULL) == -ENOSPC)
			full++;
	assert_int_equal(full, 8);
	assert_int_equal(sample_table__nr_rows(t), 12);
	assert_int_equal(sample_table__add(t, 1000, rec(1, "t", 0, 0), NULL), 0);
	sample_table__clear(t);
	assert_int_equal(sample_table__nr_rows(t), 0);
	assert_int_equal(sample_table__add(t, 5000, rec(1, "t", 0, 0), NULL), 0);
	sample_table__free(t);
}

struct ctx_rows {
	uint64_t no_ctx, span5, span6_tag3, span6_tag4;
};

static void count_ctx_rows(void *ctx, const struct sample_row *r)
{
	struct ctx_rows *c = ctx;

	if (!r->has_context) {
		assert_int_equal(r->span_id, 0);
		c->no_ctx += r->count;
	} else if (r->span_id == 5) {
		assert_int_equal(r->local_root_span_id, 6);
		c->span5 += r->count;
	} else if (r->span_id == 6 && r->tags[0] == 3) {
		c->span6_tag3 += r->count;
	} else if (r->span_id == 6 && r->tags[0] == 4) {
		c->span6_tag4 += r->count;
	}
}

static void add__context__rows_split_by_span_and_tags(void **state)
{
	struct sample_table *t = sample_table__new(64);
	struct ctx_rows c = {};

	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 5, 0), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 5, 0), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 6, 3), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 6, 4), NULL), 0);
	assert_int_equal(sample_table__nr_rows(t), 4);
	sample_table__for_each(t, count_ctx_rows, &c);
	assert_int_equal(c.no_ctx, 1);
	assert_int_equal(c.span5, 2);
	assert_int_equal(c.span6_tag3, 1);
	assert_int_equal(c.span6_tag4, 1);
	sample_table__free(t);
}

/* an OTel record with span byte @span and attribute bytes @attrs */
static const struct otel_thread_record *otel(uint8_t span, const char *attrs)
{
	static struct {
		struct otel_thread_record r;
		uint8_t attrs[OTEL_THREAD_ATTRS_MAX];
	} o;

	memset(&o, 0, sizeof(o));
	o.r.valid = 1;
	o.r.span_id[7] = span;
	o.r.attrs_size = strlen(attrs);
	memcpy(o.attrs, attrs, o.r.attrs_size);
	return &o.r;
}

static void count_otel_rows(void *ctx, const struct sample_row *r)
{
	uint64_t *by_span = ctx;

	if (r->otel)
		by_span[r->otel->span_id[7] + 10 * r->otel->attrs_size] += r->count;
	else
		by_span[0] += r->count;
}

static void add__otel_records__rows_split_by_ids_and_attributes(void **state)
{
	struct sample_table *t = sample_table__new(64);
	uint64_t by_span[100] = {};

	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(1, "")), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(1, "")), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(2, "")), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(2, "\1\1a")), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(2, "\1\1b")), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), NULL), 0);
	assert_int_equal(sample_table__nr_rows(t), 5);
	sample_table__for_each(t, count_otel_rows, by_span);
	assert_int_equal(by_span[1], 2);
	assert_int_equal(by_span[2], 1);
	assert_int_equal(by_span[32], 2); /* two rows of three attribute bytes */
	assert_int_equal(by_span[0], 1);
	sample_table__free(t);
}

static void add__otel_pool_full__enospc_then_clear_frees_it(void **state)
{
	struct sample_table *t = sample_table__new(16);
	char attrs[OTEL_THREAD_ATTRS_MAX];
	int i, full = 0;

	/* 12 rows: a pool of 12 * SAMPLE_TABLE_OTEL_BYTES_PER_ROW bytes; big records fill it */
	memset(attrs, 'a', sizeof(attrs) - 1);
	attrs[sizeof(attrs) - 1] = '\0';
	for (i = 0; i < 12; i++)
		if (sample_table__add(t, 1, rec(100, "w", 0, 0), otel((uint8_t)i, attrs)) ==
		    -ENOSPC)
			full++;
	assert_true(full > 0);
	assert_int_equal(sample_table__nr_samples(t), 12 - full);
	sample_table__clear(t);
	assert_int_equal(sample_table__add(t, 1, rec(100, "w", 0, 0), otel(1, attrs)), 0);
	sample_table__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add__same_trace_and_thread__one_row_counted),
		cmocka_unit_test(add__unterminated_comm__terminated),
		cmocka_unit_test(add__full__enospc_existing_rows_still_count),
		cmocka_unit_test(add__otel_records__rows_split_by_ids_and_attributes),
		cmocka_unit_test(add__otel_pool_full__enospc_then_clear_frees_it),
		cmocka_unit_test(add__context__rows_split_by_span_and_tags),
	};

	return cmocka_run_group_tests_name("sample_table", tests, NULL, NULL);
}
