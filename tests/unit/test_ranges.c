// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/util/ranges.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/ranges.h"

/* start and end away from offset 0 and in reverse order, to test the offsets */
struct range {
	char name[12];
	uint64_t end;
	uint64_t start;
};

/* [100, 200) [200, 250) gap [300, 400) gap [1000, 1001) */
static const struct range ranges[] = {
	{"a", 200, 100},
	{"b", 250, 200},
	{"c", 400, 300},
	{"d", 1001, 1000},
};

#define NR (sizeof(ranges) / sizeof(ranges[0]))

static const char *find(size_t nr, uint64_t addr)
{
	const struct range *r = RANGE_FIND(ranges, nr, start, end, addr);

	return r ? r->name : NULL;
}

static const char *floor_of(size_t nr, uint64_t addr)
{
	const struct range *r = RANGE_FLOOR(ranges, nr, start, addr);

	return r ? r->name : NULL;
}

static void range_find__empty_array__null(void **state)
{
	assert_null(find(0, 150));
	assert_null(floor_of(0, 150));
	assert_null(range_find(NULL, 0, sizeof(struct range), offsetof(struct range, start),
			       offsetof(struct range, end), 150));
}

static void range_find__before_first__null(void **state)
{
	assert_null(find(NR, 0));
	assert_null(find(NR, 99));
	assert_null(floor_of(NR, 99));
}

static void range_find__inside_and_at_bounds__that_range(void **state)
{
	assert_string_equal(find(NR, 100), "a");
	assert_string_equal(find(NR, 199), "a");
	/* end is exclusive: 200 starts the next range */
	assert_string_equal(find(NR, 200), "b");
	assert_string_equal(find(NR, 249), "b");
	assert_string_equal(find(NR, 300), "c");
	assert_string_equal(find(NR, 399), "c");
}

static void range_find__in_gap__null_but_floor_is_before(void **state)
{
	assert_null(find(NR, 250));
	assert_null(find(NR, 299));
	assert_null(find(NR, 400));
	assert_null(find(NR, 999));
	assert_string_equal(floor_of(NR, 250), "b");
	assert_string_equal(floor_of(NR, 999), "c");
}

static void range_find__last_range_and_past_it__last_then_null(void **state)
{
	assert_string_equal(find(NR, 1000), "d");
	assert_null(find(NR, 1001));
	assert_null(find(NR, UINT64_MAX));
	assert_string_equal(floor_of(NR, UINT64_MAX), "d");
}

static void range_find__one_element__found_only_inside(void **state)
{
	assert_null(find(1, 99));
	assert_string_equal(find(1, 150), "a");
	assert_null(find(1, 200));
	assert_string_equal(floor_of(1, 5000), "a");
}

/* every address against a linear scan, over every prefix of the array */
static void range_find__every_prefix__agrees_with_linear_scan(void **state)
{
	const struct range *want;
	size_t nr, i;
	uint64_t a;

	for (nr = 0; nr <= NR; nr++) {
		for (a = 0; a < 1100; a++) {
			want = NULL;
			for (i = 0; i < nr; i++) {
				if (ranges[i].start <= a && a < ranges[i].end)
					want = &ranges[i];
			}
			assert_ptr_equal(RANGE_FIND(ranges, nr, start, end, a), want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(range_find__empty_array__null),
		cmocka_unit_test(range_find__before_first__null),
		cmocka_unit_test(range_find__inside_and_at_bounds__that_range),
		cmocka_unit_test(range_find__in_gap__null_but_floor_is_before),
		cmocka_unit_test(range_find__last_range_and_past_it__last_then_null),
		cmocka_unit_test(range_find__one_element__found_only_inside),
		cmocka_unit_test(range_find__every_prefix__agrees_with_linear_scan),
	};

	return cmocka_run_group_tests_name("ranges", tests, NULL, NULL);
}
