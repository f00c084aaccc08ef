// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include "sampling/cpus.h"

static void cpus_parse_list__ranges_and_singles__mask(void **state)
{
	bool m[16];

	assert_int_equal(cpus_parse_list("0-3,5,7-8\n", m, 16), 0);
	assert_true(m[0] && m[1] && m[2] && m[3] && !m[4] && m[5] && !m[6] && m[7] && m[8]);
	assert_false(m[9]);
	assert_int_equal(cpus_parse_list("0", m, 1), 0);
	assert_true(m[0]);
}

static void cpus_parse_list__bad_text__einval_or_erange(void **state)
{
	bool m[4];

	assert_int_equal(cpus_parse_list("0-7", m, 4), -ERANGE);
	assert_int_equal(cpus_parse_list("3-1", m, 4), -EINVAL);
	assert_int_equal(cpus_parse_list("a", m, 4), -EINVAL);
	assert_int_equal(cpus_parse_list("1,,2", m, 4), -EINVAL);
	assert_int_equal(cpus_parse_list("1-", m, 4), -EINVAL);
	assert_int_equal(cpus_parse_list("-1", m, 4), -EINVAL);
	assert_int_equal(cpus_parse_list("99999999999999999999", m, 4), -EINVAL);
}

static void cpus_online__this_machine__matches_sysconf(void **state)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	bool m[1024];
	int i, online = 0;

	assert_int_equal(cpus_online(m, 1024), 0);
	for (i = 0; i < 1024; i++)
		online += m[i];
	assert_int_equal(online, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpus_parse_list__ranges_and_singles__mask),
		cmocka_unit_test(cpus_parse_list__bad_text__einval_or_erange),
		cmocka_unit_test(cpus_online__this_machine__matches_sysconf),
	};

	return cmocka_run_group_tests_name("cpus", tests, NULL, NULL);
}
