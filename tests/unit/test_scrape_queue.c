// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * scrape_queue: what a /debug/pprof/profile query asks, parsed and bounded.
 * The listener and the main thread's hand-over are the integration test's
 * (test_pull.sh: real scrapers against a running collector).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "export/scrape_queue.h"

static int add(struct scrape_request_args *a, const char *k, const char *v, char *err)
{
	return scrape_request_args__add(a, k, v, err, 256);
}

static void args__defaults__thirty_seconds_every_process(void **state)
{
	struct scrape_request_args a;

	scrape_request_args__init(&a);
	assert_int_equal(a.seconds, SCRAPE_DEFAULT_SECONDS);
	assert_int_equal(a.pid, 0);
	assert_int_equal(a.nr_match, 0);
}

static void args__seconds_pid_labels__parsed(void **state)
{
	struct scrape_request_args a;
	char err[256];

	scrape_request_args__init(&a);
	assert_int_equal(add(&a, "seconds", "3", err), 0);
	assert_int_equal(add(&a, "pid", "4242", err), 0);
	assert_int_equal(add(&a, "service.name", "checkout", err), 0);
	assert_int_equal(add(&a, "pod", "web-1", err), 0);
	/* Go's handler takes these; a CPU profile ignores them */
	assert_int_equal(add(&a, "debug", "1", err), 0);
	assert_int_equal(add(&a, "gc", NULL, err), 0);
	assert_int_equal(a.seconds, 3);
	assert_int_equal(a.pid, 4242);
	assert_int_equal(a.nr_match, 2);
	assert_string_equal(a.match[0].key, "service.name");
	assert_string_equal(a.match[0].value, "checkout");
	assert_string_equal(a.match[1].key, "pod");
	assert_string_equal(a.match[1].value, "web-1");
}

static void args__bad_values__one_line_each(void **state)
{
	const char *bad_seconds[] = {"0", "-1", "301", "3.5", "", "1e3", "99999999999", NULL};
	struct scrape_request_args a;
	char err[256];
	int i;

	for (i = 0; bad_seconds[i]; i++) {
		scrape_request_args__init(&a);
		err[0] = '\0';
		assert_int_equal(add(&a, "seconds", bad_seconds[i], err), -EINVAL);
		assert_non_null(strstr(err, "seconds"));
		assert_null(strchr(err, '\n'));
	}
	assert_int_equal(add(&a, "seconds", NULL, err), -EINVAL);
	assert_int_equal(add(&a, "pid", "0", err), -EINVAL);
	assert_int_equal(add(&a, "pid", "12ab", err), -EINVAL);
	assert_int_equal(add(&a, "pid", "99999999", err), -EINVAL);
	assert_int_equal(add(&a, "comm", NULL, err), -EINVAL);
	assert_int_equal(add(&a, "comm", "", err), -EINVAL);
	assert_int_equal(add(&a, "", "x", err), -EINVAL);
}

static void args__too_many_or_too_long__refused(void **state)
{
	struct scrape_request_args a;
	char err[256], key[16], big[SCRAPE_MAX_TEXT];
	int i;

	scrape_request_args__init(&a);
	for (i = 0; i < SCRAPE_MAX_MATCH; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(add(&a, key, "v", err), 0);
	}
	assert_int_equal(add(&a, "one", "more", err), -EINVAL);
	assert_non_null(strstr(err, "label filters"));
	scrape_request_args__init(&a);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(add(&a, "k", big, err), -EINVAL);
	assert_int_equal(a.nr_match, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(args__defaults__thirty_seconds_every_process),
		cmocka_unit_test(args__seconds_pid_labels__parsed),
		cmocka_unit_test(args__bad_values__one_line_each),
		cmocka_unit_test(args__too_many_or_too_long__refused),
	};

	return cmocka_run_group_tests_name("scrape_queue", tests, NULL, NULL);
}
