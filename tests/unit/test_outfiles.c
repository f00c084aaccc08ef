// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "export/outfiles.h"
#include "export/output.h"

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
		assert_int_equal(outfiles__written(o, paths[i]), 0);
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

/* what output_write() would have kept of a document "@text" */
static struct output_keep kept_doc(const char *text)
{
	struct output_keep k = {.max = 1 << 20, .len = strlen(text)};

	k.buf = malloc(k.len);
	assert_non_null(k.buf);
	memcpy(k.buf, text, k.len);
	return k;
}

static void assert_file(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f), strlen(text));
	fclose(f);
	assert_string_equal(buf, text);
}

/*
 * Documents whose write failed are kept, then written again oldest first;
 * the retry stops at the first that fails again (the rest wait), profiles
 * join the --max-files ring when written and say their samples.
 */
static void outqueue__retry__kept_documents_written_in_order(void **state)
{
	char dir[] = "/tmp/ctxprof-outqueue-XXXXXX", gone[300], a[300], b[300], c[300];
	struct outqueue_stats st;
	struct outqueue *q;
	struct outfiles *o;
	struct output_keep k;
	uint64_t profiles = 0, samples = 0;

	assert_non_null(mkdtemp(dir));
	snprintf(gone, sizeof(gone), "%s/later", dir);
	snprintf(a, sizeof(a), "%s/later/a.pb.gz", dir);
	snprintf(b, sizeof(b), "%s/b.timeline.json.gz", dir);
	snprintf(c, sizeof(c), "%s/c.pb.gz", dir);
	o = outfiles__new(dir, "7", 0);
	q = outqueue__new(o, 1000);
	assert_non_null(q);
	outqueue__keep(q, &k);
	assert_int_equal(k.max, 1000);
	k = kept_doc("profile a");
	assert_true(outqueue__done(q, a, true, 40, -ENOENT, &k));
	assert_null(k.buf);
	k = kept_doc("timeline b");
	assert_true(outqueue__done(q, b, false, 0, -ENOSPC, &k));
	outqueue__keep(q, &k);
	assert_int_equal(k.max, 1000 - strlen("profile a") - strlen("timeline b"));
	/* a's directory is still missing: b waits behind it */
	assert_int_equal(outqueue__retry(q, &profiles, &samples), -ENOENT);
	assert_int_not_equal(access(b, F_OK), 0);
	outqueue__stats(q, &st);
	assert_int_equal(st.failed, 3);
	assert_int_equal(st.pending, 2);
	/* a write that works meanwhile is counted written */
	assert_true(outqueue__done(q, c, true, 5, 0, NULL));
	assert_int_equal(mkdir(gone, 0700), 0);
	assert_int_equal(outqueue__retry(q, &profiles, &samples), 0);
	assert_file(a, "profile a");
	assert_file(b, "timeline b");
	assert_int_equal(profiles, 1);
	assert_int_equal(samples, 40);
	/* c, then a: the profiles, in the order written */
	assert_int_equal(outfiles__count(o), 2);
	outqueue__stats(q, &st);
	assert_int_equal(st.written, 3);
	assert_int_equal(st.kept, 2);
	assert_int_equal(st.written_late, 2);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.pending_bytes, 0);
	unlink(a);
	unlink(b);
	rmdir(gone);
	rmdir(dir);
	outqueue__free(q);
	outfiles__free(o);
}

/* a document not kept, or still kept at the end, is dropped with its samples */
static void outqueue__done__not_kept_or_left_at_end__dropped_with_samples(void **state)
{
	struct outqueue *q = outqueue__new(NULL, 1 << 20);
	struct output_keep none = {.max = 10}, k;
	struct outqueue_stats st;

	assert_non_null(q);
	assert_false(outqueue__done(q, "/nonexistent/a.pb.gz", true, 30, -ENOSPC, &none));
	assert_false(outqueue__done(q, "/nonexistent/a.json.gz", false, 0, -ENOSPC, NULL));
	k = kept_doc("kept");
	assert_true(outqueue__done(q, "/nonexistent/b.pb.gz", true, 12, -ENOSPC, &k));
	outqueue__stats(q, &st);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.dropped_samples, 30);
	assert_int_equal(st.pending, 1);
	assert_int_equal(st.last_err, -ENOSPC);
	outqueue__drop_all(q);
	outqueue__stats(q, &st);
	assert_int_equal(st.dropped, 3);
	assert_int_equal(st.dropped_samples, 42);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.pending_bytes, 0);
	/* what is kept at free is freed (ASan: no leak) */
	k = kept_doc("left");
	assert_true(outqueue__done(q, "/nonexistent/c.pb.gz", true, 1, -ENOSPC, &k));
	outqueue__free(q);
	outqueue__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(outfiles__path__utc_stamp_and_suffix_within_a_second),
		cmocka_unit_test(outfiles__written__beyond_max__oldest_deleted_others_untouched),
		cmocka_unit_test(outfiles__path__too_long__enametoolong),
		cmocka_unit_test(outqueue__retry__kept_documents_written_in_order),
		cmocka_unit_test(outqueue__done__not_kept_or_left_at_end__dropped_with_samples),
	};

	return cmocka_run_group_tests_name("outfiles", tests, NULL, NULL);
}
