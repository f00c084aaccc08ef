// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "collector/health.h"

static void health__conditions__degraded_then_healthy(void **state)
{
	struct health *h = health__new(NULL, NULL, 0);
	struct health_stats st;
	char why[256];

	assert_non_null(h);
	assert_int_equal(health__check(h, why, sizeof(why)), METRICS_HEALTHY);
	health__raise(h, HEALTH_THROTTLED, "the kernel samples at 250 of 999 Hz");
	assert_int_equal(health__check(h, why, sizeof(why)), METRICS_DEGRADED);
	assert_string_equal(why, "throttled: the kernel samples at 250 of 999 Hz");
	/* raised again: a new reason, counted once */
	health__raise(h, HEALTH_THROTTLED, "the kernel samples at 500 of 999 Hz");
	health__raise(h, HEALTH_CPU_OFFLINE_EVENTS_MISSING, "cpu1 online without its event");
	assert_int_equal(health__check(h, why, sizeof(why)), METRICS_DEGRADED);
	assert_string_equal(why, "throttled: the kernel samples at 500 of 999 Hz; "
				 "cpu_offline_events_missing: cpu1 online without its event");
	health__stats(h, &st);
	assert_int_equal(st.active[HEALTH_THROTTLED], 1);
	assert_int_equal(st.raised[HEALTH_THROTTLED], 1);
	assert_int_equal(st.raised[HEALTH_EXPORT_FAILING], 0);
	health__clear(h, HEALTH_THROTTLED);
	health__clear(h, HEALTH_CPU_OFFLINE_EVENTS_MISSING);
	assert_int_equal(health__check(h, why, sizeof(why)), METRICS_HEALTHY);
	/* cleared: the last reason stays for the summary; a new raise counts */
	assert_true(health__reason(h, HEALTH_THROTTLED, why, sizeof(why)));
	assert_string_equal(why, "the kernel samples at 500 of 999 Hz");
	assert_false(health__reason(h, HEALTH_DISK_FULL, why, sizeof(why)));
	health__raise(h, HEALTH_THROTTLED, "again");
	health__stats(h, &st);
	assert_int_equal(st.raised[HEALTH_THROTTLED], 2);
	assert_int_equal(st.active[HEALTH_CPU_OFFLINE_EVENTS_MISSING], 0);
	health__free(h);
}

static void health__exported__failures_degraded(void **state)
{
	struct health *h = health__new(NULL, NULL, 60);
	char why[256];

	assert_non_null(h);
	health__exported(h, -EIO);
	assert_int_equal(health__check(h, why, sizeof(why)), METRICS_DEGRADED);
	assert_string_equal(why, "export_failing: the last export failed: Input/output error");
	health__exported(h, -ENOSPC);
	assert_int_equal(health__check(h, why, sizeof(why)), METRICS_DEGRADED);
	assert_non_null(strstr(why, "export_failing: the last export failed: No space left"));
	assert_non_null(strstr(why, "; disk_full: no room for profiles: No space left"));
	health__exported(h, 0);
	assert_int_equal(health__check(h, why, sizeof(why)), METRICS_HEALTHY);
	health__free(h);
}

/* a reason longer than @why: cut, still degraded */
static void health__check__long_reasons__cut(void **state)
{
	struct health *h = health__new(NULL, NULL, 0);
	char why[40], reason[2 * HEALTH_REASON_LEN];
	int i;

	assert_non_null(h);
	memset(reason, 'x', sizeof(reason) - 1);
	reason[sizeof(reason) - 1] = '\0';
	for (i = 0; i < HEALTH_CONDITION_MAX; i++)
		health__raise(h, i, reason);
	assert_int_equal(health__check(h, why, sizeof(why)), METRICS_DEGRADED);
	assert_int_equal(strlen(why), sizeof(why) - 1);
	assert_true(health__reason(h, HEALTH_THROTTLED, reason, sizeof(reason)));
	assert_int_equal(strlen(reason), HEALTH_REASON_LEN - 1);
	health__free(h);
}

static void health__stopping__unhealthy(void **state)
{
	struct health *h = health__new(NULL, NULL, 0);
	char why[64];

	assert_non_null(h);
	health__raise(h, HEALTH_DISK_FULL, "full");
	health__stopping(h);
	assert_int_equal(health__check(h, why, sizeof(why)), METRICS_UNHEALTHY);
	assert_string_equal(why, "stopping");
	health__free(h);
}

/* every call accepts no checker: modules raise without asking whether one runs */
static void health__null__nothing(void **state)
{
	struct health_stats st;
	char why[16];

	health__raise(NULL, HEALTH_THROTTLED, "x");
	health__clear(NULL, HEALTH_THROTTLED);
	health__exported(NULL, -EIO);
	health__stopping(NULL);
	health__stats(NULL, &st);
	assert_int_equal(st.raised[HEALTH_THROTTLED], 0);
	assert_false(health__reason(NULL, HEALTH_THROTTLED, why, sizeof(why)));
	assert_int_equal(health__check(NULL, why, sizeof(why)), METRICS_HEALTHY);
	health__free(NULL);
	assert_string_equal(health_condition_name(HEALTH_DISK_FULL), "disk_full");
	assert_string_equal(health_condition_name(HEALTH_CONDITION_MAX), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(health__conditions__degraded_then_healthy),
		cmocka_unit_test(health__exported__failures_degraded),
		cmocka_unit_test(health__check__long_reasons__cut),
		cmocka_unit_test(health__stopping__unhealthy),
		cmocka_unit_test(health__null__nothing),
	};

	return cmocka_run_group_tests_name("health", tests, NULL, NULL);
}
