// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "storage/calltrace_storage.h"

#define SEEN_MAX 4096

struct seen {
	uint64_t ids[SEEN_MAX];
	const struct calltrace *traces[SEEN_MAX];
	size_t n;
};

static void collect(void *ctx, const struct calltrace *t)
{
	struct seen *s = ctx;

	assert_true(s->n < SEEN_MAX);
	s->ids[s->n] = t->trace_id;
	s->traces[s->n++] = t;
}

static void ignore(void *ctx, const struct calltrace *t)
{
}

static long seen_find(const struct seen *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->ids[i] == id)
			return (long)i;
	return -1;
}

static uint64_t put1(struct calltrace_storage *s, __u64 frame)
{
	return calltrace_storage__put(s, 1, 0, &frame, 0, 1, 0);
}

static void put__same_stack__same_id(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	__u64 a[] = {1, 2, 3}, b[] = {1, 2, 4};
	uint64_t ia, ib;

	assert_non_null(s);
	ia = calltrace_storage__put(s, 10, 0, a, 1, 2, 0);
	ib = calltrace_storage__put(s, 10, 0, b, 1, 2, 0);
	assert_int_not_equal(ia, ib);
	assert_int_equal(calltrace_storage__put(s, 10, 0, a, 1, 2, 0), ia);
	/* same frames, other split between kernel and user, other pid, other flags */
	assert_int_not_equal(calltrace_storage__put(s, 10, 0, a, 0, 3, 0), ia);
	assert_int_not_equal(calltrace_storage__put(s, 11, 0, a, 1, 2, 0), ia);
	assert_int_not_equal(calltrace_storage__put(s, 10, 0, a, 1, 2, 1), ia);
	calltrace_storage__free(s);
}

static void put__ids__epoch_in_upper_bits_never_reserved(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	__u64 f[] = {42};
	uint64_t id = calltrace_storage__put(s, 1, 0, f, 0, 1, 0);

	assert_true(id >> 32 >= 1);
	assert_true((id & 0xffffffffu) < 64);
	assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
	calltrace_storage__free(s);
}

static void process__hands_every_trace_once__then_empty(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(1024);
	struct seen *seen = calloc(1, sizeof(*seen));
	__u64 f[4];
	uint64_t ids[100];
	size_t i;
	long j;

	for (i = 0; i < 100; i++) {
		f[0] = i;
		f[1] = i * 7;
		ids[i] = calltrace_storage__put(s, 5, 0, f, 0, 2, 0);
	}
	assert_int_equal(calltrace_storage__process(s, collect, seen), 100);
	for (i = 0; i < 100; i++) {
		j = seen_find(seen, ids[i]);
		assert_true(j >= 0);
		assert_int_equal(seen->traces[j]->frames[0], i);
		assert_int_equal(seen->traces[j]->frames[1], i * 7);
		assert_int_equal(seen->traces[j]->pid, 5);
	}
	seen->n = 0;
	assert_int_equal(calltrace_storage__process(s, collect, seen), 0);
	free(seen);
	calltrace_storage__free(s);
}

/* ten cycles walk every one of the three tables through ACTIVE three times */
static void put__across_cycles__ids_never_collide(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	struct seen *seen = calloc(1, sizeof(*seen));
	uint64_t ids[10][10], epoch, last_epoch = 0;
	int cycle, i, c2, i2;

	for (cycle = 0; cycle < 10; cycle++) {
		for (i = 0; i < 10; i++) {
			/* the same stacks every cycle land in the same slots */
			ids[cycle][i] = put1(s, i);
			assert_int_equal(ids[cycle][i] & 0xffffffffu, ids[0][i] & 0xffffffffu);
			epoch = ids[cycle][i] >> 32;
			assert_true(epoch > last_epoch);
			assert_int_equal(epoch, ids[cycle][0] >> 32);
			for (c2 = 0; c2 < cycle; c2++)
				for (i2 = 0; i2 < 10; i2++)
					assert_int_not_equal(ids[cycle][i], ids[c2][i2]);
		}
		last_epoch = ids[cycle][0] >> 32;
		seen->n = 0;
		assert_int_equal(calltrace_storage__process(s, collect, seen), 10);
		for (i = 0; i < 10; i++)
			assert_true(seen_find(seen, ids[cycle][i]) >= 0);
	}
	free(seen);
	calltrace_storage__free(s);
}

static void put__table_full__dropped_and_counted(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(16);
	struct calltrace_storage_stats st;
	int i, dropped = 0, stored = 0;

	for (i = 0; i < 100; i++) {
		if (put1(s, i + 1000) == CALLTRACE_DROPPED_TRACE_ID)
			dropped++;
		else
			stored++;
	}
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.capacity, 16);
	assert_int_equal(stored, 12); /* 75 % load limit */
	assert_int_equal(dropped, 88);
	assert_int_equal(st.dropped, 88);
	assert_int_equal(st.dropped_table_full, 88);
	assert_int_equal(st.dropped_arena_full, 0);
	assert_int_equal(st.dropped_no_hazard_slot, 0);
	assert_int_equal(st.traces, 12);
	assert_int_equal(st.puts, 12);
	/* a stack already stored still resolves when the table is full */
	assert_int_not_equal(put1(s, 1000), CALLTRACE_DROPPED_TRACE_ID);
	/* the next cycle's ACTIVE is empty again */
	calltrace_storage__process(s, ignore, NULL);
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.traces, 0);
	assert_int_not_equal(put1(s, 5000), CALLTRACE_DROPPED_TRACE_ID);
	calltrace_storage__free(s);
}

static void put__max_depth_and_empty__stored(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	struct seen *seen = calloc(1, sizeof(*seen));
	__u64 f[191];
	uint64_t big, empty;
	int i;

	for (i = 0; i < 191; i++)
		f[i] = 0xffffffff81000000ull + i;
	big = calltrace_storage__put(s, 1, 0, f, 64, 127, 3);
	empty = calltrace_storage__put(s, 1, 0, f, 0, 0, 0);
	assert_int_not_equal(big, empty);
	assert_int_not_equal(big, CALLTRACE_DROPPED_TRACE_ID);
	calltrace_storage__process(s, collect, seen);
	assert_int_equal(seen->n, 2);
	for (i = 0; i < 2; i++)
		if (seen->ids[i] == big) {
			assert_int_equal(seen->traces[i]->nr_kframes, 64);
			assert_int_equal(seen->traces[i]->nr_uframes, 127);
			assert_memory_equal(seen->traces[i]->frames, f, sizeof(f));
		}
	free(seen);
	calltrace_storage__free(s);
}

static void new__bad_sizes__einval(void **state)
{
	struct calltrace_storage_opts o = {.capacity = 64, .hazard_slots = 3};

	errno = 0;
	assert_null(calltrace_storage__new(0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(calltrace_storage__new_opts(&o));
	assert_int_equal(errno, EINVAL);
	o.hazard_slots = 2 * CALLTRACE_HAZARD_SLOTS;
	assert_null(calltrace_storage__new_opts(&o));
	calltrace_storage__free(NULL);
}

/* 10 frames = 32 + 80 bytes a trace: a 4 KiB arena holds 36 of them */
static void put__arena_exhausted__dropped_counted_then_reused(void **state)
{
	struct calltrace_storage_opts o = {.capacity = 1024, .arena_bytes = 4096};
	struct calltrace_storage *s = calltrace_storage__new_opts(&o);
	struct calltrace_storage_stats st;
	__u64 f[10] = {0};
	uint64_t first = 0, id;
	int cycle, i, stored;

	assert_non_null(s);
	for (cycle = 0; cycle < 5; cycle++) {
		stored = 0;
		for (i = 0; i < 100; i++) {
			f[0] = i;
			id = calltrace_storage__put(s, 1, 0, f, 0, 10, 0);
			if (id != CALLTRACE_DROPPED_TRACE_ID)
				stored++;
			if (i == 0)
				first = id;
		}
		calltrace_storage__stats(s, &st);
		assert_int_equal(stored, 36);
		assert_int_equal(st.arena_bytes, 4096);
		assert_int_equal(st.arena_used, 36 * 112);
		assert_int_equal(st.traces, 36);
		assert_int_equal(st.dropped_arena_full, (cycle + 1) * 64);
		assert_int_equal(st.dropped_table_full, 0);
		/* a stored stack still resolves, and a failed insert left no trace behind */
		f[0] = 0;
		assert_int_equal(calltrace_storage__put(s, 1, 0, f, 0, 10, 0), first);
		/* a rotation resets the arena the next ACTIVE uses */
		assert_int_equal(calltrace_storage__process(s, ignore, NULL), 36);
		calltrace_storage__stats(s, &st);
		assert_int_equal(st.arena_used, 0);
	}
	calltrace_storage__free(s);
}

static void put__no_hazard_slot__dropped_counted_then_recovers(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	struct calltrace_storage_stats st;
	uint64_t id;

	assert_int_equal(calltrace_storage__test_hazards(s, CALLTRACE_TEST_HOG_SLOTS),
			 CALLTRACE_HAZARD_SLOTS);
	assert_int_equal(put1(s, 7), CALLTRACE_DROPPED_TRACE_ID);
	assert_int_equal(put1(s, 8), CALLTRACE_DROPPED_TRACE_ID);
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.dropped_no_hazard_slot, 2);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.traces, 0);
	/* process() needs no hazard slot of its own */
	assert_int_equal(calltrace_storage__process(s, ignore, NULL), 0);

	assert_int_equal(calltrace_storage__test_hazards(s, 0), 0);
	id = put1(s, 7);
	assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
	assert_int_equal(put1(s, 7), id);
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.dropped_no_hazard_slot, 2);
	assert_int_equal(st.puts, 2);
	calltrace_storage__free(s);
}

struct hammer {
	struct calltrace_storage *s;
	int thread;
	int puts;
	uint64_t ids[64];
	int dropped;
	int bad;
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	uint64_t id;
	__u64 f[3];
	int i;

	for (i = 0; i < h->puts; i++) {
		f[0] = i % 64;
		f[1] = 0xabc;
		f[2] = 0xdef;
		id = calltrace_storage__put(h->s, 1, 0, f, 1, 2, 0);
		if (id == CALLTRACE_DROPPED_TRACE_ID) {
			h->dropped++;
			continue;
		}
		if (!(id >> 32))
			h->bad++;
		/* one cycle, so a stack keeps its id (busy skips aside, checked below) */
		if (!h->ids[i % 64])
			h->ids[i % 64] = id;
		else if (h->ids[i % 64] != id)
			h->bad++;
	}
	return NULL;
}

static void run_hammers(struct calltrace_storage *s, struct hammer *h, int n, int puts)
{
	pthread_t th[8];
	int i;

	for (i = 0; i < n; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		h[i].s = s;
		h[i].thread = i;
		h[i].puts = puts;
		assert_int_equal(pthread_create(&th[i], NULL, hammer_run, &h[i]), 0);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* one hazard slot for four threads: some puts find none, every put is counted */
static void put__hazard_slots_contended__drops_counted_ids_agree(void **state)
{
	struct calltrace_storage_opts o = {.capacity = 256, .hazard_slots = 1};
	struct calltrace_storage *s = calltrace_storage__new_opts(&o);
	struct calltrace_storage_stats st;
	struct hammer h[4];
	uint64_t dropped = 0;
	int i, j;

	assert_non_null(s);
	run_hammers(s, h, 4, 20000);
	calltrace_storage__stats(s, &st);
	for (i = 0; i < 4; i++) {
		dropped += h[i].dropped;
		if (!st.busy_skips)
			assert_int_equal(h[i].bad, 0);
		for (j = 0; j < 64; j++)
			if (h[i].ids[j] && h[0].ids[j] && !st.busy_skips)
				assert_int_equal(h[i].ids[j], h[0].ids[j]);
	}
	assert_int_equal(st.dropped_no_hazard_slot, dropped);
	assert_int_equal(st.dropped, dropped);
	assert_int_equal(st.puts + dropped, 4 * 20000);
	assert_int_equal(st.traces, 64);
	calltrace_storage__free(s);
}

/* many writers, plenty of slots: concurrent inserts of one stack agree on one id */
static void put__concurrent_writers__one_id_per_stack(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(256);
	struct calltrace_storage_stats st;
	struct hammer h[4];
	int i, j;

	run_hammers(s, h, 4, 5000);
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.puts, 4 * 5000);
	for (i = 0; i < 4; i++) {
		assert_int_equal(h[i].dropped, 0);
		if (st.busy_skips)
			continue; /* a skipped slot may store a stack twice */
		assert_int_equal(h[i].bad, 0);
		for (j = 0; j < 64; j++)
			assert_int_equal(h[i].ids[j], h[0].ids[j]);
	}
	if (!st.busy_skips)
		assert_int_equal(st.traces, 64);
	assert_int_equal(calltrace_storage__process(s, ignore, NULL), st.traces);
	calltrace_storage__free(s);
}

struct keep {
	uint64_t ids[32];
	int n;
	int calls;
};

static void keep_ids(void *ctx, struct trace_id_set *preserve)
{
	struct keep *k = ctx;
	int i;

	k->calls++;
	for (i = 0; i < k->n; i++)
		assert_int_equal(trace_id_set__add(preserve, k->ids[i]), 0);
}

static void process__liveness__preserved_ids_survive_others_vanish(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	struct seen *seen = calloc(1, sizeof(*seen));
	struct calltrace_storage_stats st;
	struct keep k = {.n = 2};
	uint64_t a, b, c, again;
	long j;
	int cycle;

	assert_int_equal(calltrace_storage__register_liveness(s, keep_ids, &k), 0);
	a = put1(s, 100);
	b = put1(s, 200);
	c = put1(s, 300);
	k.ids[0] = a;
	k.ids[1] = c;
	for (cycle = 0; cycle < 6; cycle++) {
		seen->n = 0;
		assert_int_equal(calltrace_storage__process(s, collect, seen), cycle ? 2 : 3);
		assert_int_equal(k.calls, cycle + 1);
		j = seen_find(seen, a);
		assert_true(j >= 0);
		assert_int_equal(seen->traces[j]->frames[0], 100);
		assert_int_equal(seen->traces[j]->nr_uframes, 1);
		assert_true(seen_find(seen, c) >= 0);
		assert_int_equal(seen_find(seen, b) >= 0, cycle == 0);
		calltrace_storage__stats(s, &st);
		assert_int_equal(st.preserved, 2);
		assert_int_equal(st.preserve_dropped, 0);
	}
	/* a preserved trace lives in STANDBY: putting its stack anew gives a new id */
	again = put1(s, 100);
	assert_int_not_equal(again, a);
	assert_true(again >> 32 > a >> 32);
	seen->n = 0;
	assert_int_equal(calltrace_storage__process(s, collect, seen), 3);
	assert_true(seen_find(seen, again) >= 0);

	/* released: handed over once more (it was preserved last cycle), then gone */
	k.n = 1;
	seen->n = 0;
	calltrace_storage__process(s, collect, seen);
	assert_true(seen_find(seen, a) >= 0);
	assert_true(seen_find(seen, c) >= 0);
	seen->n = 0;
	calltrace_storage__process(s, collect, seen);
	assert_true(seen_find(seen, a) >= 0);
	assert_int_equal(seen_find(seen, c), -1);
	k.n = 0;
	seen->n = 0;
	calltrace_storage__process(s, collect, seen);
	seen->n = 0;
	assert_int_equal(calltrace_storage__process(s, collect, seen), 0);
	free(seen);
	calltrace_storage__free(s);
}

static void register_liveness__bad_or_too_many__einval_enospc(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	struct keep k = {0};
	int i;

	assert_int_equal(calltrace_storage__register_liveness(s, NULL, NULL), -EINVAL);
	for (i = 0; i < CALLTRACE_MAX_LIVENESS; i++)
		assert_int_equal(calltrace_storage__register_liveness(s, keep_ids, &k), 0);
	assert_int_equal(calltrace_storage__register_liveness(s, keep_ids, &k), -ENOSPC);
	calltrace_storage__process(s, ignore, NULL);
	assert_int_equal(k.calls, CALLTRACE_MAX_LIVENESS);
	calltrace_storage__free(s);
}

/* preserving more than STANDBY holds: the overflow is counted, not lost silently */
static void process__preserve_overflow__counted(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(16);
	struct seen *seen = calloc(1, sizeof(*seen));
	struct calltrace_storage_stats st;
	struct keep k = {0};
	int i;

	calltrace_storage__register_liveness(s, keep_ids, &k);
	for (i = 0; i < 8; i++)
		k.ids[k.n++] = put1(s, i);
	calltrace_storage__process(s, ignore, NULL);
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.preserved, 8);
	/* 8 preserved and 8 new, all live: STANDBY holds 12 of them */
	for (i = 0; i < 8; i++)
		k.ids[k.n++] = put1(s, 100 + i);
	assert_int_equal(calltrace_storage__process(s, collect, seen), 16);
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.preserved, 12);
	assert_int_equal(st.preserve_dropped, 4);
	seen->n = 0;
	assert_int_equal(calltrace_storage__process(s, collect, seen), 12);
	/* the ones kept are live ones, with their ids */
	for (i = 0; i < 12; i++) {
		int j;

		for (j = 0; j < k.n && k.ids[j] != seen->ids[i]; j++)
			;
		assert_true(j < k.n);
	}
	free(seen);
	calltrace_storage__free(s);
}

static void process__writer_stalled__bounded_wait_then_table_retired(void **state)
{
	struct calltrace_storage_opts o = {.capacity = 64, .hazard_wait_ms = 20};
	struct calltrace_storage *s = calltrace_storage__new_opts(&o);
	struct seen *seen = calloc(1, sizeof(*seen));
	struct calltrace_storage_stats st;
	uint64_t id;
	int i;

	/* a ghost writer stalls inside put() on this ACTIVE */
	assert_int_equal(calltrace_storage__test_hazards(s, CALLTRACE_TEST_PIN_ACTIVE), 1);
	id = put1(s, 9);
	assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
	/* its table leaves ACTIVE: the wait times out, published traces still go out */
	assert_int_equal(calltrace_storage__process(s, collect, seen), 1);
	assert_int_equal(seen->ids[0], id);
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.hazard_timeouts, 1);
	assert_true(st.hazard_waits >= 1);
	assert_int_equal(st.tables_retired, 0);
	/* its table is due to be cleared: retired, a fresh one takes its role */
	calltrace_storage__process(s, ignore, NULL);
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.hazard_timeouts, 2);
	assert_int_equal(st.tables_retired, 1);
	/* the storage keeps working; the stalled writer leaves, the table is freed */
	calltrace_storage__test_hazards(s, 0);
	for (i = 0; i < 5; i++) {
		id = put1(s, 9);
		assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
		seen->n = 0;
		assert_int_equal(calltrace_storage__process(s, collect, seen), 1);
		assert_int_equal(seen->ids[0], id);
	}
	calltrace_storage__stats(s, &st);
	assert_int_equal(st.hazard_timeouts, 2);
	free(seen);
	calltrace_storage__free(s);
}

static void trace_id_set__add_contains__grows_and_rejects_reserved(void **state)
{
	struct trace_id_set *set = trace_id_set__new(2);
	uint64_t i;

	assert_non_null(set);
	assert_int_equal(trace_id_set__add(set, CALLTRACE_DROPPED_TRACE_ID), -EINVAL);
	assert_int_equal(trace_id_set__add(set, 0), -EINVAL);
	assert_false(trace_id_set__contains(set, CALLTRACE_DROPPED_TRACE_ID));
	for (i = 1; i <= 1000; i++)
		assert_int_equal(trace_id_set__add(set, i << 32 | i), 0);
	assert_int_equal(trace_id_set__add(set, 5ull << 32 | 5), 0);
	assert_int_equal(trace_id_set__count(set), 1000);
	for (i = 1; i <= 1000; i++) {
		assert_true(trace_id_set__contains(set, i << 32 | i));
		assert_false(trace_id_set__contains(set, i << 32 | (i + 1)));
	}
	trace_id_set__clear(set);
	assert_int_equal(trace_id_set__count(set), 0);
	assert_false(trace_id_set__contains(set, 1ull << 32 | 1));
	trace_id_set__free(set);
	trace_id_set__free(NULL);
}

static void lookup__active_then_scratch__found_two_cycles_then_gone(void **state)
{
	struct calltrace_storage *s = calltrace_storage__new(64);
	uint64_t a, b;

	assert_non_null(s);
	a = put1(s, 7);
	assert_non_null(calltrace_storage__lookup(s, a));
	assert_int_equal(calltrace_storage__lookup(s, a)->frames[0], 7);
	/* handed over: still readable until the next rotation */
	calltrace_storage__process(s, ignore, NULL);
	assert_non_null(calltrace_storage__lookup(s, a));
	b = put1(s, 7);
	assert_int_not_equal(a, b);
	assert_non_null(calltrace_storage__lookup(s, b));
	calltrace_storage__process(s, ignore, NULL);
	assert_null(calltrace_storage__lookup(s, a));
	assert_non_null(calltrace_storage__lookup(s, b));
	calltrace_storage__process(s, ignore, NULL);
	assert_null(calltrace_storage__lookup(s, b));
	/* nothing made up for ids never handed out */
	assert_null(calltrace_storage__lookup(s, CALLTRACE_DROPPED_TRACE_ID));
	assert_null(calltrace_storage__lookup(s, (b & ~0xffffffffull) | 63));
	calltrace_storage__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(put__same_stack__same_id),
		cmocka_unit_test(put__ids__epoch_in_upper_bits_never_reserved),
		cmocka_unit_test(process__hands_every_trace_once__then_empty),
		cmocka_unit_test(put__across_cycles__ids_never_collide),
		cmocka_unit_test(put__table_full__dropped_and_counted),
		cmocka_unit_test(put__max_depth_and_empty__stored),
		cmocka_unit_test(new__bad_sizes__einval),
		cmocka_unit_test(put__arena_exhausted__dropped_counted_then_reused),
		cmocka_unit_test(put__no_hazard_slot__dropped_counted_then_recovers),
		cmocka_unit_test(put__hazard_slots_contended__drops_counted_ids_agree),
		cmocka_unit_test(put__concurrent_writers__one_id_per_stack),
		cmocka_unit_test(process__liveness__preserved_ids_survive_others_vanish),
		cmocka_unit_test(register_liveness__bad_or_too_many__einval_enospc),
		cmocka_unit_test(process__preserve_overflow__counted),
		cmocka_unit_test(process__writer_stalled__bounded_wait_then_table_retired),
		cmocka_unit_test(trace_id_set__add_contains__grows_and_rejects_reserved),
		cmocka_unit_test(lookup__active_then_scratch__found_two_cycles_then_gone),
	};

	return cmocka_run_group_tests_name("calltrace_storage", tests, NULL, NULL);
}
