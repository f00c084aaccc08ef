// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "sample_table.h"

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

static void add__same_trace_and_thread__one_row_counted(void **state)
{
	struct sample_table *t = sample_table__new(64);
	struct sum s = {};

	assert_int_equal(sample_table__add(t, 7, 1, 100, "old"), 0);
	assert_int_equal(sample_table__add(t, 7, 1, 100, "renamed"), 0);
	assert_int_equal(sample_table__add(t, 7, 1, 101, "other"), 0);
	assert_int_equal(sample_table__add(t, 8, 1, 100, "renamed"), 0);
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
	char comm[SAMPLER_COMM_LEN];
	struct sum s = {};

	memset(comm, 'x', sizeof(comm));
	assert_int_equal(sample_table__add(t, 7, 1, 100, comm), 0);
	sample_table__for_each(t, sum_rows, &s);
	assert_int_equal(strlen(s.comm_of_7_100), SAMPLER_COMM_LEN - 1);
	sample_table__free(t);
}

static void add__full__enospc_existing_rows_still_count(void **state)
{
	struct sample_table *t = sample_table__new(16);
	int i, full = 0;

	for (i = 0; i < 20; i++)
		if (sample_table__add(t, 1000 + i, 1, 1, "t") == -ENOSPC)
			full++;
	assert_int_equal(full, 8);
	assert_int_equal(sample_table__nr_rows(t), 12);
	assert_int_equal(sample_table__add(t, 1000, 1, 1, "t"), 0);
	sample_table__clear(t);
	assert_int_equal(sample_table__nr_rows(t), 0);
	assert_int_equal(sample_table__add(t, 5000, 1, 1, "t"), 0);
	sample_table__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add__same_trace_and_thread__one_row_counted),
		cmocka_unit_test(add__unterminated_comm__terminated),
		cmocka_unit_test(add__full__enospc_existing_rows_still_count),
	};

	return cmocka_run_group_tests_name("sample_table", tests, NULL, NULL);
}
