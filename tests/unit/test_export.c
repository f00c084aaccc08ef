// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/export.c: traces from a real call-trace storage,
 * rows from a real sample table, frames left unsymbolized (no snapshot), the
 * profile written to a temporary directory.  What is checked is how rows find
 * their traces: export_result's counts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "export/export.h"

struct fixture {
	struct calltrace_storage *traces;
	struct symbolizer *sym;
	struct sample_table *rows;
	char dir[64];
	char path[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->traces = calltrace_storage__new(16384);
	f->sym = symbolizer__new(0);
	f->rows = sample_table__new(16384);
	strcpy(f->dir, "/tmp/test_export.XXXXXX");
	if (!f->traces || !f->sym || !f->rows || !mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/cpu.pb.gz", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->path);
	rmdir(f->dir);
	sample_table__free(f->rows);
	symbolizer__free(f->sym);
	calltrace_storage__free(f->traces);
	free(f);
	return 0;
}

/* a two-frame user stack of thread @tid, unique to @n */
static uint64_t put(struct fixture *f, uint32_t tid, uint64_t n)
{
	__u64 frames[2] = {0x400000 + n * 16, 0x500000 + n * 16};

	return calltrace_storage__put(f->traces, tid, 0, frames, 0, 2, 0);
}

static void count(struct fixture *f, uint64_t trace_id, uint32_t tid, int times)
{
	struct sample_record rec = {.pid = tid, .tid = tid};

	while (times--)
		assert_int_equal(sample_table__add(f->rows, trace_id, &rec), 0);
}

static void write_profile(struct fixture *f, struct exporter *e, struct export_result *res)
{
	assert_int_equal(exporter__add_samples(e, f->rows), 0);
	assert_int_equal(exporter__write(e, f->path, res), 0);
	assert_int_equal(access(f->path, R_OK), 0);
}

static void add_samples__rows_of_handed_over_traces__written_with_their_counts(void **state)
{
	struct export_opts opts = {.period_ns = 1000000};
	struct fixture *f = *state;
	struct export_result res;
	uint64_t a, b;
	struct exporter *e;

	a = put(f, 100, 1);
	b = put(f, 100, 2);
	count(f, a, 100, 3);
	count(f, a, 101, 1);
	count(f, b, 100, 2);
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	write_profile(f, e, &res);
	assert_int_equal(res.traces, 2);
	assert_int_equal(res.rows, 3);
	assert_int_equal(res.samples, 6);
	assert_int_equal(res.no_trace, 0);
	/* no process state: each leaf unmapped, each return address cut and
	 * replaced by one shared marker frame */
	assert_int_equal(res.stacks_cut, 2);
	assert_int_equal(res.frames_cut, 2);
	assert_int_equal(res.locations, 3);
	exporter__free(e);
}

static void add_samples__unknown_trace__counted_as_no_trace(void **state)
{
	struct export_opts opts = {.period_ns = 1000000};
	struct fixture *f = *state;
	struct export_result res;
	struct exporter *e;
	uint64_t a;

	a = put(f, 100, 1);
	count(f, a, 100, 1);
	/* an id of an epoch no table has */
	count(f, 0xfffffff0ULL << 32 | 5, 100, 4);
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	write_profile(f, e, &res);
	assert_int_equal(res.traces, 1);
	assert_int_equal(res.rows, 1);
	assert_int_equal(res.samples, 1);
	assert_int_equal(res.no_trace, 4);
	exporter__free(e);
}

/* put between the hand-over and the rows: found in ACTIVE, not counted twice */
static void add_samples__trace_put_after_begin__looked_up_in_active(void **state)
{
	struct export_opts opts = {.period_ns = 1000000};
	struct fixture *f = *state;
	struct export_result res;
	struct exporter *e;
	uint64_t a, late;

	a = put(f, 100, 1);
	count(f, a, 100, 1);
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	late = put(f, 100, 2);
	count(f, late, 100, 2);
	count(f, late, 101, 1);
	write_profile(f, e, &res);
	assert_int_equal(res.traces, 1);
	assert_int_equal(res.rows, 3);
	assert_int_equal(res.samples, 4);
	assert_int_equal(res.no_trace, 0);
	exporter__free(e);
}

static void add_samples__thousands_of_traces__each_row_finds_its_trace(void **state)
{
	struct export_opts opts = {.period_ns = 1000000};
	struct fixture *f = *state;
	struct export_result res;
	struct exporter *e;
	uint64_t n, id, samples = 0;

	for (n = 0; n < 5000; n++) {
		id = put(f, 100, n);
		assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
		count(f, id, 100, 1 + n % 3);
		samples += 1 + n % 3;
	}
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	write_profile(f, e, &res);
	assert_int_equal(res.traces, 5000);
	assert_int_equal(res.rows, 5000);
	assert_int_equal(res.samples, samples);
	assert_int_equal(res.no_trace, 0);
	exporter__free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			add_samples__rows_of_handed_over_traces__written_with_their_counts, setup,
			teardown),
		cmocka_unit_test_setup_teardown(add_samples__unknown_trace__counted_as_no_trace,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			add_samples__trace_put_after_begin__looked_up_in_active, setup, teardown),
		cmocka_unit_test_setup_teardown(
			add_samples__thousands_of_traces__each_row_finds_its_trace, setup,
			teardown),
	};

	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
