// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "calltrace_storage.h"

struct seen {
	uint64_t ids[4096];
	const struct calltrace *traces[4096];
	size_t n;
};

static void collect(void *ctx, const struct calltrace *t)
{
	struct seen *s = ctx;

	assert_true(s->n < 4096);
	s->ids[s->n] = t->trace_id;
	s->traces[s->n++] = t;
}

static void put__same_stack__same_id(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	__u64 a[] = { 1, 2, 3 }, b[] = { 1, 2, 4 };
	uint64_t ia, ib;

	assert_non_null(s);
	ia = calltrace_storage__put(s, 10, a, 1, 2, 0);
	ib = calltrace_storage__put(s, 10, b, 1, 2, 0);
	assert_int_not_equal(ia, ib);
	assert_int_equal(calltrace_storage__put(s, 10, a, 1, 2, 0), ia);
	/* same frames, other split between kernel and user, other pid, other flags */
	assert_int_not_equal(calltrace_storage__put(s, 10, a, 0, 3, 0), ia);
	assert_int_not_equal(calltrace_storage__put(s, 11, a, 1, 2, 0), ia);
	assert_int_not_equal(calltrace_storage__put(s, 10, a, 1, 2, 1), ia);
	calltrace_storage__free(s);
}

static void put__ids__epoch_in_upper_bits_never_reserved(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	__u64 f[] = { 42 };
	uint64_t id = calltrace_storage__put(s, 1, f, 0, 1, 0);

	assert_true(id >> 32 >= 1);
	assert_true((id & 0xffffffffu) < 64);
	assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
	calltrace_storage__free(s);
}

static void process__hands_every_trace_once__then_empty(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(1024);
	struct seen *seen = calloc(1, sizeof(*seen));
	__u64 f[4];
	uint64_t ids[100];
	size_t i, j;

	for (i = 0; i < 100; i++) {
		f[0] = i;
		f[1] = i * 7;
		ids[i] = calltrace_storage__put(s, 5, f, 0, 2, 0);
	}
	assert_int_equal(calltrace_storage__process(s, collect, seen), 100);
	for (i = 0; i < 100; i++) {
		for (j = 0; j < seen->n && seen->ids[j] != ids[i]; j++)
			;
		assert_true(j < seen->n);
		assert_int_equal(seen->traces[j]->frames[0], i);
		assert_int_equal(seen->traces[j]->frames[1], i * 7);
		assert_int_equal(seen->traces[j]->pid, 5);
	}
	seen->n = 0;
	assert_int_equal(calltrace_storage__process(s, collect, seen), 0);
	free(seen);
	calltrace_storage__free(s);
}

static void put__across_cycles__ids_never_collide(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	struct seen *seen = calloc(1, sizeof(*seen));
	uint64_t first[10], id;
	__u64 f[1];
	int cycle, i, j;

	for (cycle = 0; cycle < 3; cycle++) {
		for (i = 0; i < 10; i++) {
			f[0] = i; /* the same stacks every cycle land in the same slots */
			id = calltrace_storage__put(s, 1, f, 0, 1, 0);
			if (cycle == 0)
				first[i] = id;
			else
				for (j = 0; j < 10; j++)
					assert_int_not_equal(id, first[j]);
			assert_int_equal(id & 0xffffffffu, first[i] & 0xffffffffu);
		}
		calltrace_storage__process(s, collect, seen);
		seen->n = 0;
	}
	free(seen);
	calltrace_storage__free(s);
}

static void put__table_full__dropped_and_counted(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(16);
	struct calltrace_storage_stats st;
	__u64 f[1];
	int i, dropped = 0, stored = 0;

	for (i = 0; i < 100; i++) {
		f[0] = i + 1000;
		if (calltrace_storage__put(s, 1, f, 0, 1, 0) == CALLTRACE_DROPPED_TRACE_ID)
			dropped++;
		else
			stored++;
	}
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.capacity, 16);
	assert_int_equal(stored, 12); /* 75 % load limit */
	assert_int_equal(dropped, 88);
	assert_int_equal(st.dropped, 88);
	assert_int_equal(st.traces, 12);
	/* a stack already stored still resolves when the table is full */
	f[0] = 1000;
	assert_int_not_equal(calltrace_storage__put(s, 1, f, 0, 1, 0), CALLTRACE_DROPPED_TRACE_ID);
	calltrace_storage__free(s);
}

static void put__max_depth_and_empty__stored(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	struct seen *seen = calloc(1, sizeof(*seen));
	__u64 f[191];
	uint64_t big, empty;
	int i;

	for (i = 0; i < 191; i++)
		f[i] = 0xffffffff81000000ull + i;
	big = calltrace_storage__put(s, 1, f, 64, 127, 3);
	empty = calltrace_storage__put(s, 1, f, 0, 0, 0);
	assert_int_not_equal(big, empty);
	calltrace_storage__process(s, collect, seen);
	assert_int_equal(seen->n, 2);
	for (i = 0; i < 2; i++)
		if (seen->ids[i] == big) {
			assert_int_equal(seen->traces[i]->nr_kframes, 64);
			assert_int_equal(seen->traces[i]->nr_uframes, 127);
			assert_memory_equal(seen->traces[i]->frames, f, sizeof(f));
		}
	free(seen);
	calltrace_storage__free(s);
}

static void new__bad_capacity__einval(void **state)
{
	errno = 0;
	assert_null(calltrace_storage__new(0));
	assert_int_equal(errno, EINVAL);
	calltrace_storage__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(put__same_stack__same_id),
		cmocka_unit_test(put__ids__epoch_in_upper_bits_never_reserved),
		cmocka_unit_test(process__hands_every_trace_once__then_empty),
		cmocka_unit_test(put__across_cycles__ids_never_collide),
		cmocka_unit_test(put__table_full__dropped_and_counted),
		cmocka_unit_test(put__max_depth_and_empty__stored),
		cmocka_unit_test(new__bad_capacity__einval),
	};

	return cmocka_run_group_tests_name("calltrace_storage", tests, NULL, NULL);
}
