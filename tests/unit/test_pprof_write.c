// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/pprof.c: the file it writes.
 *
 * pprof__write_gz() checked by gunzipping, by the reference pprof tool (path
 * in $PPROF) reading what it wrote, by its errors, and by failing each of its
 * allocations in turn (malloc() and friends are replaced in this binary).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "export/pprof.h"
#include "fixtures.h"
#include "util/utf8.h"
#include "pprof_check.h"

/* --- allocation failure injection */

/*
 * glibc lets a program replace malloc, calloc, realloc and free (libc and
 * zlib then call ours too); forwarding to __libc_* keeps one heap.  ASan
 * replaces them itself, so under ASan the injection test is skipped.
 */
#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ALLOC_HOOKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ALLOC_HOOKS 0
#endif
#endif
#ifndef HAVE_ALLOC_HOOKS
#define HAVE_ALLOC_HOOKS 1
#endif

#if HAVE_ALLOC_HOOKS
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);

static struct {
	bool tracking; /* count allocations and live blocks */
	long fail_at;  /* ordinal of the allocation to fail; -1: none */
	long count;    /* allocations seen while tracking */
	long live;     /* blocks allocated minus blocks freed while tracking */
	bool failed;   /* an allocation was failed on purpose */
} alloc;

/* Return: true when this allocation must fail. */
static bool alloc_should_fail(void)
{
	if (!alloc.tracking)
		return false;
	if (alloc.count++ == alloc.fail_at) {
		alloc.failed = true;
		errno = ENOMEM;
		return true;
	}
	return false;
}

void *malloc(size_t size)
{
	void *ptr;

	if (alloc_should_fail())
		return NULL;
	ptr = __libc_malloc(size);
	if (ptr && alloc.tracking)
		alloc.live++;
	return ptr;
}

void *calloc(size_t nmemb, size_t size)
{
	void *ptr;

	if (alloc_should_fail())
		return NULL;
	ptr = __libc_calloc(nmemb, size);
	if (ptr && alloc.tracking)
		alloc.live++;
	return ptr;
}

void *realloc(void *old, size_t size)
{
	void *ptr;

	if (size && alloc_should_fail())
		return NULL;
	ptr = __libc_realloc(old, size);
	if (alloc.tracking) {
		if (!old && ptr)
			alloc.live++;
		else if (old && !size)
			alloc.live--;
	}
	return ptr;
}

void free(void *ptr)
{
	if (ptr && alloc.tracking)
		alloc.live--;
	__libc_free(ptr);
}
#endif /* HAVE_ALLOC_HOOKS */

/* --- a protobuf decoder for perftools.profiles.Profile, just enough to check */
static void pprof__write_gz__profile__gunzips_to_encoded_bytes(void **state)
{
	struct fixture *f = *state;
	struct pprof *p = build_three_functions();
	uint8_t *buf = NULL, *got;
	char path[PATH_MAX];
	size_t len = 0;
	struct stat st;
	gzFile gz;
	int n;

	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	assert_int_equal(pprof__encode(p, &buf, &len), 0);
	/* only the renamed file remains, with mkstemp's private mode */
	assert_int_equal(count_dir_entries(f->dir), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	got = malloc(len + 1);
	assert_non_null(got);
	gz = gzopen(path, "rb");
	assert_non_null(gz);
	assert_int_equal(gzdirect(gz), 0); /* really gzip, not passed through */
	n = gzread(gz, got, len + 1);
	assert_int_equal(n, len);
	assert_memory_equal(got, buf, len);
	gzclose(gz);

	/* writing again replaces the file */
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	assert_int_equal(count_dir_entries(f->dir), 1);
	free(got);
	free(buf);
	pprof__free(p);
}

static void pprof__add_sample__two_samples__decoded_by_pprof(void **state)
{
	struct fixture *f = *state;
	const char *tool = fixture_pprof_tool();
	char path[PATH_MAX];
	char *out, *samples;
	struct pprof *p;
	int status;

	if (!tool) {
		skip();
		return;
	}
	p = build_three_functions();
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	out = fixture_run_pprof(tool, "-raw", path, &status);
	if (status != 0)
		fail_msg("pprof -raw exited %d:\n%s", status, out);

	fixture_assert_contains(out, "PeriodType: cpu nanoseconds\n");
	fixture_assert_contains(out, "Period: 10000000\n");
	fixture_assert_contains(out, "Duration: 10s\n");
	fixture_assert_contains(out, "Comment: ctxprof unit test\n");
	fixture_assert_contains(out, "samples/count cpu/nanoseconds\n");
	/* pprof renumbers locations: compare stacks by function name */
	samples = fixture_pprof_samples(out);
	fixture_assert_contains(samples, "3 30000000: compute main | thread_name:[worker]"
					 " | pid:[42] rss:[4096 bytes] thread_id:[1234]\n");
	fixture_assert_contains(samples, "2 20000000: memcpy compute main | thread_name:[io]"
					 " | pid:[42] thread_id:[1235]\n");
	fixture_assert_contains(samples, "1 10000000: main | thread_name:[worker]"
					 " | pid:[42] thread_id:[1234]\n");
	/* locations with their address, function, file and mapping */
	fixture_assert_contains(out, ": 0x400123 M=1 main app.c:0 s=0\n");
	fixture_assert_contains(out, ": 0x400456 M=1 compute app.c:0 s=0\n");
	fixture_assert_contains(out,
				": 0x7f0000012345 M=2 memcpy :0 s=0(__memcpy_avx_unaligned)\n");
	fixture_assert_contains(out, "1: 0x400000/0x401000/0x0 /usr/bin/ctxprof-test-app "
				     "0123456789abcdef0123456789abcdef01234567 [FN]\n");
	fixture_assert_contains(out, "2: 0x7f0000000000/0x7f0000200000/0x28000 "
				     "/lib/x86_64-linux-gnu/libc.so.6 feedfacecafebeef [FN]\n");
	free(samples);
	free(out);
	pprof__free(p);
}

/* find the -top row for @func; copy its flat and cum columns */
static bool top_row(const char *out, const char *func, char flat[32], char cum[32])
{
	const char *line = out;
	char name[256], fp[32], sp[32], cp[32];

	while (line && *line) {
		if (sscanf(line, "%31s %31s %31s %31s %31s %255s", flat, fp, sp, cum, cp, name) ==
			    6 &&
		    !strcmp(name, func))
			return true;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return false;
}

static void pprof__write_gz__three_functions__pprof_top_flat_values(void **state)
{
	struct fixture *f = *state;
	const char *tool = fixture_pprof_tool();
	char path[PATH_MAX], flat[32], cum[32];
	struct pprof *p;
	int status;
	char *out;

	if (!tool) {
		skip();
		return;
	}
	p = build_three_functions();
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);

	/* the default sample type is the last one, cpu */
	out = fixture_run_pprof(tool, "-top -nodecount=10", path, &status);
	if (status != 0)
		fail_msg("pprof -top exited %d:\n%s", status, out);
	fixture_assert_contains(out, "Showing nodes accounting for 60ms, 100% of 60ms total\n");
	assert_true(top_row(out, "compute", flat, cum));
	assert_string_equal(flat, "30ms");
	assert_string_equal(cum, "50ms");
	assert_true(top_row(out, "memcpy", flat, cum));
	assert_string_equal(flat, "20ms");
	assert_string_equal(cum, "20ms");
	assert_true(top_row(out, "main", flat, cum));
	assert_string_equal(flat, "10ms");
	assert_string_equal(cum, "60ms");
	free(out);

	out = fixture_run_pprof(tool, "-top -nodecount=10 -sample_index=samples", path, &status);
	if (status != 0)
		fail_msg("pprof -top -sample_index=samples exited %d:\n%s", status, out);
	assert_true(top_row(out, "compute", flat, cum));
	assert_string_equal(flat, "3");
	assert_string_equal(cum, "5");
	assert_true(top_row(out, "main", flat, cum));
	assert_string_equal(flat, "1");
	assert_string_equal(cum, "6");
	free(out);

	/* a label filter sees the thread names */
	out = fixture_run_pprof(tool, "-top -nodecount=10 -tagfocus=thread_name=io", path, &status);
	if (status != 0)
		fail_msg("pprof -top -tagfocus exited %d:\n%s", status, out);
	assert_true(top_row(out, "memcpy", flat, cum));
	assert_string_equal(flat, "20ms");
	assert_true(top_row(out, "main", flat, cum));
	assert_string_equal(flat, "0");
	assert_string_equal(cum, "20ms");
	free(out);
	pprof__free(p);
}

static void pprof__write_gz__no_samples__valid_for_pprof(void **state)
{
	struct fixture *f = *state;
	const char *tool = fixture_pprof_tool();
	char path[PATH_MAX];
	struct pprof *p;
	int status;
	char *out;

	if (!tool) {
		skip();
		return;
	}
	p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	assert_non_null(p);
	snprintf(path, sizeof(path), "%s/empty.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	out = fixture_run_pprof(tool, "-raw", path, &status);
	if (status != 0)
		fail_msg("pprof -raw exited %d on an empty profile:\n%s", status, out);
	fixture_assert_contains(out,
				"PeriodType: cpu nanoseconds\nPeriod: 10000000\n"
				"Samples:\nsamples/count cpu/nanoseconds\nLocations\nMappings\n");
	free(out);
	pprof__free(p);
}

static void pprof__write_gz__missing_dir__returns_enoent(void **state)
{
	struct fixture *f = *state;
	struct pprof *p = build_three_functions();
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/no/such/dir/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), -ENOENT);
	assert_int_equal(count_dir_entries(f->dir), 0);
	pprof__free(p);
}

static void pprof__write_gz__unwritable_dir__returns_error(void **state)
{
	struct fixture *f = *state;
	struct pprof *p = build_three_functions();
	char dir[128], path[PATH_MAX];
	int err;

	if (geteuid() != 0) {
		/* permissions only bind non-root users */
		snprintf(dir, sizeof(dir), "%s/ro", f->dir);
		assert_int_equal(mkdir(dir, 0500), 0);
		snprintf(path, sizeof(path), "%s/cpu.pb.gz", dir);
		err = pprof__write_gz(p, path, NULL);
		assert_int_equal(err, -EACCES);
		assert_int_equal(count_dir_entries(dir), 0);
	}
	/* /proc refuses new files even to root */
	err = pprof__write_gz(p, "/proc/ctxprof-test.pb.gz", NULL);
	assert_true(err < 0);
	assert_int_equal(access("/proc/ctxprof-test.pb.gz", F_OK), -1);
	/* a regular file in place of a directory */
	snprintf(path, sizeof(path), "%s/file", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), 0);
	snprintf(path, sizeof(path), "%s/file/cpu.pb.gz", f->dir);
	assert_int_equal(pprof__write_gz(p, path, NULL), -ENOTDIR);
	pprof__free(p);
}

static void pprof__write_gz__rename_onto_directory__fails_and_leaves_no_temp(void **state)
{
	struct fixture *f = *state;
	struct pprof *p = build_three_functions();
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	/* the temporary file is written, then rename() fails */
	assert_int_equal(pprof__write_gz(p, path, NULL), -EISDIR);
	assert_int_equal(count_dir_entries(f->dir), 1);
	pprof__free(p);
}

/* --- allocation failures */

#if HAVE_ALLOC_HOOKS
/*
 * Build, grow every table past its first resize, and write a profile.
 * Runs with allocations tracked, so it must not call cmocka.
 * Return: how many API calls failed; -1 when one failed the wrong way.
 */
static int alloc_scenario(const char *path, size_t *nr_samples)
{
	struct pprof_mapping m = {.memory_limit = 0x1000, .has_functions = 1};
	struct pprof_label labels[3] = {
		{.key = "thread_id"},
		{.key = "thread_name"},
		{.key = "rss", .num_unit = "bytes"},
	};
	int64_t values[2] = {1, PERIOD_NS};
	char name[32], file[32], build_id[32], thread[16];
	uint64_t locs[100] = {}, stack[4];
	int failures = 0, err;
	size_t i, j, depth;
	struct pprof *p;
	uint64_t mid, fid;

	p = pprof__new(cpu_types, 2, cpu_period, PERIOD_NS);
	if (!p)
		return errno == ENOMEM ? 1 : -1;
	for (i = 0; i < 100; i++) {
		snprintf(file, sizeof(file), "/lib/lib%zu.so", i % 10);
		snprintf(build_id, sizeof(build_id), "%016zx", i % 10);
		m.filename = file;
		m.build_id = build_id;
		m.memory_start = (i % 10) << 20;
		m.memory_limit = m.memory_start + 0x1000;
		mid = pprof__mapping(p, &m);
		snprintf(name, sizeof(name), "fn_%zu", i);
		fid = pprof__function(p, name, NULL, file);
		/* carry on with what was interned: ids of 0 are valid arguments */
		failures += !mid + !fid;
		locs[i] = pprof__location(p, mid, m.memory_start + i, fid);
		failures += !locs[i];
	}
	for (i = 0; i < 100; i++) {
		for (j = depth = 0; j < 4; j++) {
			if (locs[(i + j * 7) % 100])
				stack[depth++] = locs[(i + j * 7) % 100];
		}
		snprintf(thread, sizeof(thread), "thread-%zu", i % 30);
		labels[0].num = i;
		labels[1].str = thread;
		labels[2].num = i * 4096;
		err = pprof__add_sample(p, stack, depth, values, labels, 3);
		if (err && err != -ENOMEM)
			failures = INT_MIN;
		failures += !!err;
	}
	err = pprof__add_comment(p, "fault injection");
	if (err && err != -ENOMEM)
		failures = INT_MIN;
	failures += !!err;
	err = pprof__write_gz(p, path, NULL);
	if (err && err != -ENOMEM)
		failures = INT_MIN;
	failures += !!err;
	*nr_samples = pprof__nr_samples(p);
	pprof__free(p);
	return failures < 0 ? -1 : failures;
}
#endif

static void pprof__alloc_failures__each_allocation__fail_cleanly(void **state)
{
#if HAVE_ALLOC_HOOKS
	struct fixture *f = *state;
	struct dec_profile *d;
	char path[PATH_MAX];
	size_t nr_samples;
	int failures;
	long n;
	uint8_t *buf;
	size_t len;

	snprintf(path, sizeof(path), "%s/cpu.pb.gz", f->dir);
	for (n = 0;; n++) {
		unlink(path);
		alloc.count = 0;
		alloc.live = 0;
		alloc.failed = false;
		alloc.fail_at = n;
		alloc.tracking = true;
		failures = alloc_scenario(path, &nr_samples);
		alloc.tracking = false;

		if (alloc.count == 0) {
			/* e.g. valgrind, which replaces malloc in the executable too */
			print_message("SKIP: our malloc() is not the one called\n");
			skip();
			return;
		}
		if (failures < 0)
			fail_msg("allocation %ld: an API call failed with other than ENOMEM", n);
		if (alloc.live != 0)
			fail_msg("allocation %ld failed: %ld blocks leaked", n, alloc.live);
		if (!alloc.failed) {
			/* every allocation has been failed once: the last run was clean */
			assert_int_equal(failures, 0);
			break;
		}
		if (failures == 0)
			fail_msg("allocation %ld failed but no API call reported it", n);
		/* a failed write leaves no temporary file behind */
		assert_int_equal(count_dir_entries(f->dir), access(path, F_OK) == 0);
	}
	print_message("    %ld allocations each failed once, no leaks\n", n);
	assert_true(n > 100);
	assert_int_equal(nr_samples, 100);

	/* the clean run's file decodes */
	buf = malloc(1 << 20);
	assert_non_null(buf);
	{
		gzFile gz = gzopen(path, "rb");

		assert_non_null(gz);
		len = gzread(gz, buf, 1 << 20);
		gzclose(gz);
	}
	d = malloc(sizeof(*d));
	assert_non_null(d);
	assert_true(decode_profile(buf, len, d));
	assert_int_equal(d->nr_samples, 100);
	assert_int_equal(d->nr_locations, 100);
	assert_int_equal(d->nr_mappings, 10);
	free(d);
	free(buf);
#else
	print_message("SKIP: malloc cannot be replaced under AddressSanitizer\n");
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(pprof__write_gz__profile__gunzips_to_encoded_bytes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(pprof__add_sample__two_samples__decoded_by_pprof,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			pprof__write_gz__three_functions__pprof_top_flat_values, setup, teardown),
		cmocka_unit_test_setup_teardown(pprof__write_gz__no_samples__valid_for_pprof, setup,
						teardown),
		cmocka_unit_test_setup_teardown(pprof__write_gz__missing_dir__returns_enoent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(pprof__write_gz__unwritable_dir__returns_error,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			pprof__write_gz__rename_onto_directory__fails_and_leaves_no_temp, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			pprof__alloc_failures__each_allocation__fail_cleanly, setup, teardown),
	};

	return cmocka_run_group_tests_name("pprof_write", tests, NULL, NULL);
}
