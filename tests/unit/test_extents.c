// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/util/extents.c: ranges handed out, merged, quarantined. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/extents.h"

#define Q 1000 /* quarantine, ns */

static void extents__alloc__first_fit_then_enospc(void **state)
{
	struct extents *e = extents__new(100, Q);
	uint32_t a, b;

	assert_non_null(e);
	assert_int_equal(extents__alloc(e, 60, 0, &a), 0);
	assert_int_equal(a, 0);
	assert_int_equal(extents__alloc(e, 40, 0, &b), 0);
	assert_int_equal(b, 60);
	assert_int_equal(extents__used(e), 100);
	assert_int_equal(extents__alloc(e, 1, 0, &b), -ENOSPC);
	assert_int_equal(extents__alloc(e, 0, 0, &b), -EINVAL);
	extents__free(e);
	extents__free(NULL);
}

static void extents__release__quarantined_until_its_time(void **state)
{
	struct extents *e = extents__new(10, Q);
	uint32_t a, b;

	assert_int_equal(extents__alloc(e, 10, 0, &a), 0);
	assert_int_equal(extents__release(e, a, 10, 5000), 0);
	assert_int_equal(extents__used(e), 0);
	/* a BPF program may still walk it: not before 5000 + Q */
	assert_int_equal(extents__alloc(e, 1, 5000 + Q - 1, &b), -ENOSPC);
	assert_int_equal(extents__largest_free(e, 5000 + Q - 1), 0);
	assert_int_equal(extents__alloc(e, 10, 5000 + Q, &b), 0);
	assert_int_equal(b, 0);
	extents__free(e);
}

static void extents__release__neighbours_merge(void **state)
{
	struct extents *e = extents__new(30, Q);
	uint32_t a, b, c, d;

	assert_int_equal(extents__alloc(e, 10, 0, &a), 0);
	assert_int_equal(extents__alloc(e, 10, 0, &b), 0);
	assert_int_equal(extents__alloc(e, 10, 0, &c), 0);
	/* released out of order: the three must become one range of 30 */
	assert_int_equal(extents__release(e, c, 10, 0), 0);
	assert_int_equal(extents__release(e, a, 10, 0), 0);
	assert_int_equal(extents__release(e, b, 10, 0), 0);
	assert_int_equal(extents__largest_free(e, Q), 30);
	assert_int_equal(extents__alloc(e, 30, Q, &d), 0);
	assert_int_equal(d, 0);
	extents__free(e);
}

static void extents__churn__never_overlaps_against_a_bitmap(void **state)
{
	enum { CAP = 4096, N = 64 };
	struct extents *e = extents__new(CAP, 0);
	unsigned char used[CAP] = {0};
	uint32_t first[N], len[N];
	bool live[N] = {false};
	unsigned int seed = 7, i, k, round;
	uint64_t now = 0;

	for (round = 0; round < 20000; round++) {
		k = rand_r(&seed) % N;
		now++;
		if (live[k]) {
			for (i = 0; i < len[k]; i++)
				used[first[k] + i] = 0;
			assert_int_equal(extents__release(e, first[k], len[k], now), 0);
			live[k] = false;
			continue;
		}
		len[k] = 1 + rand_r(&seed) % 200;
		if (extents__alloc(e, len[k], now, &first[k]))
			continue;
		assert_true(first[k] + len[k] <= CAP);
		for (i = 0; i < len[k]; i++) {
			assert_int_equal(used[first[k] + i], 0);
			used[first[k] + i] = 1;
		}
		live[k] = true;
	}
	extents__free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(extents__alloc__first_fit_then_enospc),
		cmocka_unit_test(extents__release__quarantined_until_its_time),
		cmocka_unit_test(extents__release__neighbours_merge),
		cmocka_unit_test(extents__churn__never_overlaps_against_a_bitmap),
	};

	return cmocka_run_group_tests_name("extents", tests, NULL, NULL);
}
