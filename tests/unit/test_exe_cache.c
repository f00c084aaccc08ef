// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/processes/exe_cache.c */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "processes/exe_cache.h"

static void exe_cache__added__found_by_file_and_name_alone(void **state)
{
	struct exe_cache *c = exe_cache__new();

	(void)state;
	assert_non_null(c);
	assert_null(exe_cache__find(c, 0x803, 42, "/bin/sh"));
	exe_cache__add(c, 0x803, 42, "/bin/sh", "/usr/bin/dash");
	assert_string_equal(exe_cache__find(c, 0x803, 42, "/bin/sh"), "/usr/bin/dash");
	/* another name for it (a hard link), another device, another inode */
	assert_null(exe_cache__find(c, 0x803, 42, "/usr/bin/sh"));
	assert_null(exe_cache__find(c, 0x804, 42, "/bin/sh"));
	assert_null(exe_cache__find(c, 0x803, 43, "/bin/sh"));
	/* no file: never known */
	exe_cache__add(c, 0x803, 0, "/bin/x", "/usr/bin/x");
	assert_null(exe_cache__find(c, 0x803, 0, "/bin/x"));
	exe_cache__free(c);
}

static void exe_cache__deleted_or_empty_path__not_kept(void **state)
{
	struct exe_cache *c = exe_cache__new();

	(void)state;
	exe_cache__add(c, 1, 7, "./app", "/srv/app (deleted)");
	assert_null(exe_cache__find(c, 1, 7, "./app"));
	exe_cache__add(c, 1, 8, "./app", "");
	assert_null(exe_cache__find(c, 1, 8, "./app"));
	exe_cache__free(c);
}

static void exe_cache__more_files_than_slots__each_found_or_missed_never_wrong(void **state)
{
	struct exe_cache *c = exe_cache__new();
	char name[32], exe[32];
	const char *got;
	unsigned int i, found = 0;

	(void)state;
	for (i = 1; i <= 4 * EXE_CACHE_SLOTS; i++) {
		snprintf(name, sizeof(name), "/bin/p%u", i);
		snprintf(exe, sizeof(exe), "/usr/bin/p%u", i);
		exe_cache__add(c, 1, i, name, exe);
	}
	for (i = 1; i <= 4 * EXE_CACHE_SLOTS; i++) {
		snprintf(name, sizeof(name), "/bin/p%u", i);
		snprintf(exe, sizeof(exe), "/usr/bin/p%u", i);
		got = exe_cache__find(c, 1, i, name);
		if (got) {
			assert_string_equal(got, exe);
			found++;
		}
	}
	/* replaced ones are misses; at most one per slot survives */
	assert_true(found > 0 && found <= EXE_CACHE_SLOTS);
	exe_cache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exe_cache__added__found_by_file_and_name_alone),
		cmocka_unit_test(exe_cache__deleted_or_empty_path__not_kept),
		cmocka_unit_test(
			exe_cache__more_files_than_slots__each_found_or_missed_never_wrong),
	};

	exe_cache__free(NULL);
	return cmocka_run_group_tests_name("exe_cache", tests, NULL, NULL);
}
