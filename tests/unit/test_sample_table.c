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

	assert_int_equal(sample_table__add(t, 7, rec(100, "old", 0, 0), NULL, NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "renamed", 0, 0), NULL, NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(101, "other", 0, 0), NULL, NULL), 0);
	assert_int_equal(sample_table__add(t, 8, rec(100, "renamed", 0, 0), NULL, NULL), 0);
	sample_table__for_each(t, sum_rows, &s);
	assert_int_equal(s.rows, 3);
	assert_int_equal(s.samples, 4);
	assert_int_equal(s.count_of_7_100, 2);
	assert_string_equal(s.comm_of_7_100, "renamed");
	assert_int_equal(sample_table__nr_samples(t), 4);
	sample_table__free(t);
}

/* off-CPU waits: one row per (trace, thread), its count the waits, off_ns their time */
static void off_ns_of(void *ctx, const struct sample_row *row)
{
	uint64_t *v = ctx;

	v[0] += row->count;
	v[1] += row->off_ns;
}

static void add_wait__two_waits__count_and_time_summed(void **state)
{
	struct sample_table *t = sample_table__new(16);
	uint64_t v[2] = {0, 0};

	assert_int_equal(sample_table__add_wait(t, 9, rec(100, "w", 0, 0), NULL, NULL, 2000000), 0);
	assert_int_equal(sample_table__add_wait(t, 9, rec(100, "w", 0, 0), NULL, NULL, 3000000), 0);
	assert_int_equal(sample_table__nr_rows(t), 1);
	sample_table__for_each(t, off_ns_of, v);
	assert_true(v[0] == 2 && v[1] == 5000000);
	sample_table__free(t);
}

static void add__unterminated_comm__terminated(void **state)
{
	struct sample_table *t = sample_table__new(16);
	struct sample_record r = {.tid = 100};
	struct sum s = {};

	memset(r.comm, 'x', sizeof(r.comm));
	assert_int_equal(sample_table__add(t, 7, &r, NULL, NULL), 0);
	sample_table__for_each(t, sum_rows, &s);
	assert_int_equal(strlen(s.comm_of_7_100), SAMPLER_COMM_LEN - 1);
	sample_table__free(t);
}

static void add__full__enospc_existing_rows_still_count(void **state)
{
	struct sample_table *t = sample_table__new(16);
	int i, full = 0;

	for (i = 0; i < 20; i++)
		if (sample_table__add(t, 1000 + i, rec(1, "t", 0, 0), NULL, NULL) == -ENOSPC)
			full++;
	assert_int_equal(full, 8);
	assert_int_equal(sample_table__nr_rows(t), 12);
	assert_int_equal(sample_table__add(t, 1000, rec(1, "t", 0, 0), NULL, NULL), 0);
	sample_table__clear(t);
	assert_int_equal(sample_table__nr_rows(t), 0);
	assert_int_equal(sample_table__add(t, 5000, rec(1, "t", 0, 0), NULL, NULL), 0);
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

	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), NULL, NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 5, 0), NULL, NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 5, 0), NULL, NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 6, 3), NULL, NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 6, 4), NULL, NULL), 0);
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

	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(1, ""), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(1, ""), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(2, ""), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(2, "\1\1a"), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(2, "\1\1b"), NULL), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), NULL, NULL), 0);
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
		if (sample_table__add(t, 1, rec(100, "w", 0, 0), otel((uint8_t)i, attrs), NULL) ==
		    -ENOSPC)
			full++;
	assert_true(full > 0);
	assert_int_equal(sample_table__nr_samples(t), 12 - full);
	sample_table__clear(t);
	assert_int_equal(sample_table__add(t, 1, rec(100, "w", 0, 0), otel(1, attrs), NULL), 0);
	sample_table__free(t);
}

/* a label set of one label span_id = @span */
static const struct go_labels_record *go(const char *span)
{
	static struct {
		struct go_labels_record r;
		uint8_t entries[GO_LABELS_BYTES];
	} g[2];
	static int which;
	struct go_labels_record *r = &g[which ^= 1].r;

	memset(r, 0, sizeof(g[0]));
	r->nr = 1;
	r->size = 2 + 7 + strlen(span);
	g[which].entries[0] = 7;
	g[which].entries[1] = strlen(span);
	memcpy(g[which].entries + 2, "span_id", 7);
	memcpy(g[which].entries + 9, span, strlen(span));
	return r;
}

static void count_go_rows(void *ctx, const struct sample_row *r)
{
	uint64_t *by = ctx;

	/* by the set's last byte, apart from OpenTelemetry's rows */
	if (r->go)
		by[((const uint8_t *)(r->go + 1))[r->go->size - 1] - '0' + (r->otel ? 10 : 0)] +=
			r->count;
	else
		by[20] += r->count;
}

static void add__go_labels__rows_split_by_label_set_stored_once(void **state)
{
	struct sample_table *t = sample_table__new(64);
	const struct go_labels_record *a, *b;
	uint64_t by[21] = {};

	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), NULL, go("1")), 0);
	/* an equal set at another address: the same row */
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), NULL, go("1")), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), NULL, go("2")), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), otel(1, ""), go("2")), 0);
	assert_int_equal(sample_table__add(t, 7, rec(100, "w", 0, 0), NULL, NULL), 0);
	assert_int_equal(sample_table__nr_rows(t), 4);
	sample_table__for_each(t, count_go_rows, by);
	assert_int_equal(by[1], 2);
	assert_int_equal(by[2], 1);
	assert_int_equal(by[12], 1);
	assert_int_equal(by[20], 1);
	/* the rows hold the table's copies, not the samples' */
	a = go("3");
	assert_int_equal(sample_table__add(t, 8, rec(100, "w", 0, 0), NULL, a), 0);
	b = go("3");
	assert_int_equal(sample_table__add(t, 9, rec(100, "w", 0, 0), NULL, b), 0);
	memset((void *)a, 0, sizeof(*a));
	memset((void *)b, 0, sizeof(*b));
	memset(by, 0, sizeof(by));
	sample_table__for_each(t, count_go_rows, by);
	assert_int_equal(by[3], 2);
	sample_table__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add__same_trace_and_thread__one_row_counted),
		cmocka_unit_test(add_wait__two_waits__count_and_time_summed),
		cmocka_unit_test(add__unterminated_comm__terminated),
		cmocka_unit_test(add__full__enospc_existing_rows_still_count),
		cmocka_unit_test(add__otel_records__rows_split_by_ids_and_attributes),
		cmocka_unit_test(add__otel_pool_full__enospc_then_clear_frees_it),
		cmocka_unit_test(add__context__rows_split_by_span_and_tags),
		cmocka_unit_test(add__go_labels__rows_split_by_label_set_stored_once),
	};

	return cmocka_run_group_tests_name("sample_table", tests, NULL, NULL);
}
