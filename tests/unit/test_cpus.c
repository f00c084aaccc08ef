// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>
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

static void cpus_max_sample_rate__this_kernel__positive(void **state)
{
	assert_true(cpus_max_sample_rate() > 0);
}

static const char stat_text[] = "cpu  300 10 200 5000 40 7 3 9 0 0\n"
				"cpu0 100 0 100 2500 20 4 2 5 0 0\n"
				"cpu2 200 10 100 2500 20 3 1 4 0 0\n"
				"intr 12345 0 1 2\n"
				"ctxt 999\n";

/* user + nice + system + irq + softirq; idle, iowait and steal are not busy */
static void cpus_parse_busy__cpu_lines__busy_ns(void **state)
{
	uint64_t b[4];

	assert_int_equal(cpus_parse_busy(stat_text, b, 4, 100), 0);
	assert_true(b[0] == (100 + 0 + 100 + 4 + 2) * 10000000ull);
	assert_true(b[1] == 0);
	assert_true(b[2] == (200 + 10 + 100 + 3 + 1) * 10000000ull);
	assert_true(b[3] == 0);
}

static void cpus_parse_busy__bad_text__einval_or_erange(void **state)
{
	uint64_t b[2];

	assert_int_equal(cpus_parse_busy(stat_text, b, 2, 100), -ERANGE);
	assert_int_equal(cpus_parse_busy("cpu0 1 2 3\n", b, 2, 100), -EINVAL);
	assert_int_equal(cpus_parse_busy("cpu0 1 2 3 4 5 6 7 8", b, 2, 100), -EINVAL);
	assert_int_equal(cpus_parse_busy("cpu0 1 2 x 4 5 6 7 8\n", b, 2, 100), -EINVAL);
	assert_int_equal(cpus_parse_busy("cpux 1 2 3 4 5 6 7 8\n", b, 2, 100), -EINVAL);
	assert_int_equal(cpus_parse_busy("cpu0 99999999999999999999 2 3 4 5 6 7 8\n", b, 2, 100),
			 -EINVAL);
	assert_int_equal(cpus_parse_busy("cpu0 1 2 3 4 5 6 7 8\n", b, 2, 0), -EINVAL);
}

/* a busy loop makes this CPU's busy time grow; the sum stays within the wall */
static void cpus_busy_ns__this_machine__grows_with_work(void **state)
{
	uint64_t a[1024], b[1024], da = 0;
	volatile unsigned long x = 0;
	struct timespec t0, t1;
	int i;

	assert_int_equal(cpus_busy_ns(a, 1024), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (i = 0; i < 1000000; i++)
			x += i;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec) < 300000000);
	assert_int_equal(cpus_busy_ns(b, 1024), 0);
	for (i = 0; i < 1024; i++) {
		assert_true(b[i] >= a[i]);
		da += b[i] - a[i];
	}
	assert_true(da >= 200000000ull);
}

static void cpu_rate__hz__window_not_full__minus_one(void **state)
{
	struct cpu_rate r = {0};
	int i;

	for (i = 0; i < CPU_RATE_WINDOW - 1; i++) {
		cpu_rate__add(&r, 999, 1000000000);
		assert_true(cpu_rate__hz(&r) < 0);
	}
	cpu_rate__add(&r, 999, 1000000000);
	assert_float_equal(cpu_rate__hz(&r), 999, 0.01);
}

/* the window holds the last CPU_RATE_WINDOW checks only */
static void cpu_rate__hz__throttled_then_restored__last_window(void **state)
{
	struct cpu_rate r = {0};
	int i;

	for (i = 0; i < CPU_RATE_WINDOW; i++)
		cpu_rate__add(&r, 250, 1000000000);
	assert_float_equal(cpu_rate__hz(&r), 250, 0.01);
	cpu_rate__add(&r, 999, 1000000000);
	assert_float_equal(cpu_rate__hz(&r),
			   (250.0 * (CPU_RATE_WINDOW - 1) + 999) / CPU_RATE_WINDOW, 0.01);
	for (i = 0; i < CPU_RATE_WINDOW; i++)
		cpu_rate__add(&r, 999, 1000000000);
	assert_float_equal(cpu_rate__hz(&r), 999, 0.01);
}

/* two CPUs then one (the other offline): the rate stays per sampled CPU */
static void cpu_rate__hz__cpu_offline__per_sampled_cpu(void **state)
{
	struct cpu_rate r = {0};

	cpu_rate__add(&r, 2 * 999, 2000000000);
	cpu_rate__add(&r, 999, 1000000000);
	cpu_rate__add(&r, 999 / 2, 500000000);
	assert_float_equal(cpu_rate__hz(&r), 999, 1);
}

/* less than a second of enabled time is too little to judge */
static void cpu_rate__hz__under_a_second__minus_one(void **state)
{
	struct cpu_rate r = {0};
	int i;

	for (i = 0; i < CPU_RATE_WINDOW; i++)
		cpu_rate__add(&r, 10, 1000000);
	assert_true(cpu_rate__hz(&r) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpus_parse_list__ranges_and_singles__mask),
		cmocka_unit_test(cpus_parse_list__bad_text__einval_or_erange),
		cmocka_unit_test(cpus_online__this_machine__matches_sysconf),
		cmocka_unit_test(cpus_max_sample_rate__this_kernel__positive),
		cmocka_unit_test(cpus_parse_busy__cpu_lines__busy_ns),
		cmocka_unit_test(cpus_parse_busy__bad_text__einval_or_erange),
		cmocka_unit_test(cpus_busy_ns__this_machine__grows_with_work),
		cmocka_unit_test(cpu_rate__hz__window_not_full__minus_one),
		cmocka_unit_test(cpu_rate__hz__throttled_then_restored__last_window),
		cmocka_unit_test(cpu_rate__hz__cpu_offline__per_sampled_cpu),
		cmocka_unit_test(cpu_rate__hz__under_a_second__minus_one),
	};

	return cmocka_run_group_tests_name("cpus", tests, NULL, NULL);
}
