// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "export/outfiles.h"

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fclose(f);
}

static void outfiles__path__utc_stamp_and_suffix_within_a_second(void **state)
{
	struct outfiles *o = outfiles__new("/tmp", "42", 0);
	char first[256];

	assert_non_null(o);
	/* 2026-11-21 07:00:05 UTC */
	snprintf(first, sizeof(first), "%s", outfiles__path(o, 1795244405));
	assert_string_equal(first, "/tmp/ctxprof-42-20261121T070005Z.pb.gz");
	assert_string_equal(outfiles__path(o, 1795244405),
			    "/tmp/ctxprof-42-20261121T070005Z-1.pb.gz");
	assert_string_equal(outfiles__path(o, 1795244405),
			    "/tmp/ctxprof-42-20261121T070005Z-2.pb.gz");
	assert_string_equal(outfiles__path(o, 1795244406),
			    "/tmp/ctxprof-42-20261121T070006Z.pb.gz");
	outfiles__free(o);
}

static void outfiles__written__beyond_max__oldest_deleted_others_untouched(void **state)
{
	char dir[] = "/tmp/ctxprof-outfiles-XXXXXX", foreign[300], paths[5][300];
	struct outfiles *o;
	int i;

	assert_non_null(mkdtemp(dir));
	snprintf(foreign, sizeof(foreign), "%s/ctxprof-7-20000101T000000Z.pb.gz", dir);
	touch(foreign); /* not written by this run: must survive */
	o = outfiles__new(dir, "7", 3);
	assert_non_null(o);
	for (i = 0; i < 5; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s", outfiles__path(o, 1795244405 + i));
		touch(paths[i]);
		assert_int_equal(outfiles__written(o), 0);
	}
	assert_int_equal(outfiles__count(o), 5);
	assert_int_not_equal(access(paths[0], F_OK), 0);
	assert_int_not_equal(access(paths[1], F_OK), 0);
	for (i = 2; i < 5; i++)
		assert_int_equal(access(paths[i], F_OK), 0);
	assert_int_equal(access(foreign, F_OK), 0);
	for (i = 2; i < 5; i++)
		unlink(paths[i]);
	unlink(foreign);
	rmdir(dir);
	outfiles__free(o);
}

static void outfiles__path__too_long__enametoolong(void **state)
{
	char dir[5000];
	struct outfiles *o;

	memset(dir, 'a', sizeof(dir) - 1);
	dir[sizeof(dir) - 1] = '\0';
	o = outfiles__new(dir, "1", 0);
	assert_non_null(o);
	errno = 0;
	assert_null(outfiles__path(o, 0));
	assert_int_equal(errno, ENAMETOOLONG);
	outfiles__free(o);
	outfiles__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(outfiles__path__utc_stamp_and_suffix_within_a_second),
		cmocka_unit_test(outfiles__written__beyond_max__oldest_deleted_others_untouched),
		cmocka_unit_test(outfiles__path__too_long__enametoolong),
	};

	return cmocka_run_group_tests_name("outfiles", tests, NULL, NULL);
}
