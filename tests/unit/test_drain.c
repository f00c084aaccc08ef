// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "processes/thread_registry.h"
#include "sampling/drain.h"
#include "python_abi.h"

static struct thread_registry *reg;

struct rec_buf {
	struct sample_record rec;
	__u64 frames[SAMPLER_MAX_FRAMES];
};

static size_t fill(struct rec_buf *b, uint32_t tid, uint16_t nk, uint16_t nu)
{
	int i;

	memset(b, 0, sizeof(*b));
	b->rec.pid = 100;
	b->rec.tid = tid;
	b->rec.nr_kframes = nk;
	b->rec.nr_uframes = nu;
	memcpy(b->rec.comm, "worker", 7);
	for (i = 0; i < nk + nu; i++)
		b->frames[i] = 0x1000 + i;
	return sizeof(b->rec) + (size_t)(nk + nu) * sizeof(__u64);
}

static void sum_table(void *ctx, struct sample_table *t)
{
	*(uint64_t *)ctx += sample_table__nr_samples(t);
}

static void clear_table(void *ctx, struct sample_table *t)
{
	sample_table__clear(t);
}

static void drains__record__valid_and_malformed__counted_by_reason(void **state)
{
	struct calltrace_storage *cs = calltrace_storage__new(64);
	struct drains *d = drains__new(1, cs, reg, 64);
	void *ctx = drains__ctxs(d)[0];
	struct drain_counters dc;
	struct rec_buf b;
	uint64_t rows = 0;
	size_t size;

	size = fill(&b, 1, 2, 3);
	drains__record(ctx, &b.rec, size);
	drains__record(ctx, &b.rec, size);
	/* size shorter than the frames it claims */
	drains__record(ctx, &b.rec, size - 8);
	/* shorter than a header */
	drains__record(ctx, &b.rec, 8);
	/* frame counts above the BPF side's limits */
	size = fill(&b, 1, SAMPLER_MAX_KSTACK + 1, 0);
	drains__record(ctx, &b.rec, size);
	size = fill(&b, 1, 0, SAMPLER_MAX_USTACK + 1);
	drains__record(ctx, &b.rec, sizeof(b));
	drains__counters(d, &dc);
	assert_int_equal(dc.received, 6);
	assert_int_equal(dc.drops[DRAIN_DROP_MALFORMED], 4);
	drains__for_each_table(d, true, sum_table, &rows);
	assert_int_equal(rows, 2);
	drains__free(d);
	calltrace_storage__free(cs);
}

static void drains__record__full_tables__dropped_with_reason(void **state)
{
	struct calltrace_storage *cs = calltrace_storage__new(16);
	struct drains *d = drains__new(1, cs, reg, 16);
	void *ctx = drains__ctxs(d)[0];
	struct drain_counters dc;
	struct rec_buf b;
	uint64_t rows = 0;
	size_t size;
	int i;

	/* one stack on 40 threads: the sample table fills */
	for (i = 0; i < 40; i++) {
		size = fill(&b, 1000 + i, 0, 1);
		drains__record(ctx, &b.rec, size);
	}
	/* 40 distinct stacks: the storage keeps some, drops the rest */
	for (i = 0; i < 40; i++) {
		size = fill(&b, 1, 0, 1);
		b.frames[0] = 0x5000 + i;
		drains__record(ctx, &b.rec, size);
	}
	drains__counters(d, &dc);
	assert_int_equal(dc.received, 80);
	assert_true(dc.drops[DRAIN_DROP_STACK_TABLE_FULL] > 0);
	assert_true(dc.drops[DRAIN_DROP_SAMPLE_TABLE_FULL] > 0);
	drains__for_each_table(d, true, sum_table, &rows);
	/* every record is in a table or counted as dropped */
	assert_int_equal(rows + dc.drops[DRAIN_DROP_STACK_TABLE_FULL] +
				 dc.drops[DRAIN_DROP_SAMPLE_TABLE_FULL],
			 80);
	drains__free(d);
	calltrace_storage__free(cs);
}

/* a record at @time_ns on thread @tid */
static void record_at(void *ctx, uint32_t tid, uint64_t time_ns)
{
	struct rec_buf b;
	size_t size = fill(&b, tid, 0, 1);

	b.rec.time_ns = time_ns;
	drains__record(ctx, &b.rec, size);
}

/*
 * Each record goes to the window its time lies in, whatever the order it
 * is read in: [1000, 2000) to the open window's table, later ones to the
 * next, earlier ones nowhere (counted); once the next window is opened up
 * to 3000, records from 3000 on go to the table the closed window left.
 */
static void drains__record__by_time__in_the_window_of_its_time(void **state)
{
	struct calltrace_storage *cs = calltrace_storage__new(64);
	struct drains *d = drains__new(1, cs, reg, 64);
	void *ctx = drains__ctxs(d)[0];
	struct drain_counters dc;
	uint64_t open = 0, all = 0;

	drains__begin_window(d, 1000, 2000);
	record_at(ctx, 1, 999);
	record_at(ctx, 1, 2500);
	record_at(ctx, 1, 1000);
	record_at(ctx, 1, 1999);
	record_at(ctx, 1, 2000);
	drains__counters(d, &dc);
	assert_int_equal(dc.drops[DRAIN_DROP_OUTSIDE_WINDOW], 1);
	drains__for_each_table(d, false, sum_table, &open);
	assert_int_equal(open, 2);
	drains__for_each_table(d, true, sum_table, &all);
	assert_int_equal(all, 4);
	/* the closed window's table read and cleared, the next one opened */
	drains__for_each_table(d, false, clear_table, NULL);
	assert_int_equal(drains__open(d, UINT64_MAX - 1), 0);
	record_at(ctx, 1, 2999);
	record_at(ctx, 1, UINT64_MAX - 1);
	open = 0;
	drains__for_each_table(d, false, sum_table, &open);
	/* 2000, 2500, 2999 */
	assert_int_equal(open, 3);
	all = 0;
	drains__for_each_table(d, true, sum_table, &all);
	assert_int_equal(all, 4);
	drains__free(d);
	calltrace_storage__free(cs);
}

struct offers {
	int calls;
	bool take; /* what the callback answers */
};

static bool offered(void *ctx, uint32_t pid, uint32_t exec_id, uint64_t w1, uint64_t w2)
{
	struct offers *o = ctx;

	assert_int_equal(pid, 100);
	assert_true(PYTHON_FRAME_IS(w1));
	o->calls++;
	return o->take;
}

/* a code its reader could not take (its process unknown yet) is offered
 * again at each call, a bounded number of times; one taken is not */
static void drains__recent_codes__refused_offered_again_then_dropped(void **state)
{
	struct calltrace_storage *cs = calltrace_storage__new(64);
	struct drains *d = drains__new(1, cs, reg, 64);
	struct offers o = {0};
	struct rec_buf b;
	size_t size = fill(&b, 7, 0, 3);
	int i;

	assert_non_null(d);
	b.frames[0] = PYTHON_FRAME_TAG | 0x7f0000001000ull;
	b.frames[1] = PYTHON_FRAME_TAG | PYTHON_FRAME_WORD2 | 5;
	b.rec.flags |= SAMPLE_F_PYTHON;
	drains__record(drains__ctxs(d)[0], &b.rec, size);
	for (i = 0; i < 100; i++)
		drains__recent_codes(d, offered, &o);
	/* refused each time: offered until the bound, then dropped */
	assert_in_range(o.calls, 2, 99);
	o.calls = 0;
	drains__recent_codes(d, offered, &o);
	assert_int_equal(o.calls, 0);

	/* a new code, taken at once: offered once */
	b.frames[0] = PYTHON_FRAME_TAG | 0x7f0000002000ull;
	drains__record(drains__ctxs(d)[0], &b.rec, size);
	o.take = true;
	drains__recent_codes(d, offered, &o);
	drains__recent_codes(d, offered, &o);
	assert_int_equal(o.calls, 1);
	drains__free(d);
	calltrace_storage__free(cs);
}

/* records look their thread up: an empty registry, every process unread */
static int setup(void **state)
{
	thread_registry__register_thread();
	reg = thread_registry__new(NULL);
	return reg ? 0 : -1;
}

static int teardown(void **state)
{
	thread_registry__free(reg);
	thread_registry__unregister_thread();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drains__record__valid_and_malformed__counted_by_reason),
		cmocka_unit_test(drains__record__full_tables__dropped_with_reason),
		cmocka_unit_test(drains__record__by_time__in_the_window_of_its_time),
		cmocka_unit_test(drains__recent_codes__refused_offered_again_then_dropped),
	};

	return cmocka_run_group_tests_name("drain", tests, setup, teardown);
}
