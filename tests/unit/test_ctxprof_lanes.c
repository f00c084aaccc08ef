// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for libctxprof (lib/ctxprof/): the lanes' SPSC queues (span
 * events, pools, shutdown, aged rings) and the tag dictionary (interning,
 * replay, bursts), read back through the collector's reader
 * (user/appctx/ctxprof_region.c) as the collector would.
 * Every test starts from a fresh library (ctxprof__reset()).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctxprof.h"
#include "ctxprof_abi.h"
#include "appctx/ctxprof_region.h"
#include "internal.h"
#include "ctxprof_check.h"

/* ------------------------------------------------------------------------ */
/* lanes                                                                      */

/* 64-byte index rings hold one event each: every event is a ring */
static void spsc_queue__single_producer__then_ordered(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct ctxprof_region_stats st = {};
	uint32_t i, n = 0, round;

	init_small(4, 4, 128); /* 3 events per ring */
	for (round = 0; round < 50; round++) {
		/* fewer than the pool holds: nothing dropped */
		for (i = 0; i < 9; i++)
			ctxprof_span_begin(n + i, 7);
		ctxprof_flush();
		drain_into(s, &st);
		n += 9;
	}
	assert_int_equal(s->nr_events, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(s->ev[i].seq, i);
		assert_true(s->ev[i].span_id == i);
		assert_true(s->ev[i].local_root_span_id == 7);
		assert_true(i == 0 || s->ev[i].time_ns >= s->ev[i - 1].time_ns);
	}
	assert_int_equal(st.bad_queue + st.bad_ring_index + st.bad_record + st.bad_ring_used, 0);
	free(s);
}

static void spsc_queue__wraparound__then_correct(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct ctxprof_region_stats st = {};
	struct ctxprof_thread *t;
	struct ctxprof_lane_producer *p;
	struct ctxprof_region_geom g;
	uint32_t i, n = 0, start;
	void *base;

	init_small(2, 4, 64); /* one event per ring */
	ctxprof_register_thread();
	/* free-running positions just below 2^32, on both sides */
	t = ctxprof__current_thread();
	p = &t->lanes[CTXPROF_LANE_INDEX];
	start = UINT32_MAX - 40;
	p->submit_tail = p->free_head = start;
	p->lane->submit_tail = p->lane->submit_head = start;
	p->lane->free_head = p->lane->free_tail = start;
	base = region(&g);
	/* many times the queue capacity, across the 32-bit wrap */
	for (i = 0; i < 8 * CTXPROF_LANE_QUEUE_CAP; i++) {
		ctxprof_span_begin(i, 0);
		ctxprof_span_end(i);
		ctxprof_region__drain(base, &g, ctxprof_now_ns(), &seen_ops, s, &st);
		n += 2;
	}
	ctxprof_flush();
	ctxprof_region__drain(base, &g, ctxprof_now_ns(), &seen_ops, s, &st);
	assert_true(p->submit_tail < start); /* wrapped */
	assert_int_equal(s->nr_events, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(s->ev[i].seq, i);
		assert_true(s->ev[i].span_id == i / 2);
		assert_int_equal(s->ev[i].type,
				 i % 2 ? CTXPROF_EVENT_SPAN_END : CTXPROF_EVENT_SPAN_BEGIN);
	}
	assert_int_equal(st.bad_queue + st.free_queue_full + st.bad_ring_index, 0);
	assert_int_equal(p->bad_free, 0);
	assert_int_equal(p->dropped, 0);
	free(s);
}

static void ctxprof_span_begin__pool_exhausted__dropped_and_counted(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct ctxprof_stats st;
	uint32_t i, gaps = 0;

	init_small(2, 2, 128); /* 2 rings x 3 events */
	for (i = 0; i < 10; i++)
		ctxprof_span_begin(i, 0);
	assert_int_equal(ctxprof_get_stats(&st), 0);
	/* 6 fit; the 7th submitted the second ring and found no free one */
	assert_int_equal(st.events_written, 6);
	assert_int_equal(st.events_dropped, 4);
	drain_into(s, NULL);
	assert_int_equal(s->nr_events, 6);
	/* rings are back: events flow again, the seq gap shows the loss */
	ctxprof_span_begin(100, 0);
	ctxprof_flush();
	drain_into(s, NULL);
	assert_int_equal(s->nr_events, 7);
	for (i = 1; i < s->nr_events; i++)
		gaps += s->ev[i].seq - s->ev[i - 1].seq - 1;
	assert_int_equal(gaps, 4);
	free(s);
}

static void *register_after_shutdown(void *arg)
{
	*(int *)arg = ctxprof_register_thread();
	return NULL;
}

/*
 * The registry's shutdown_requested: what was written before is submitted
 * and drained whole; later span events and new threads are refused and
 * counted; events_generated counts every event the thread made.
 */
static void ctxprof_shutdown__after_events__drained_then_refused_and_counted(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct ctxprof_region_stats rst = {};
	struct ctxprof_region_geom g;
	struct ctxprof_slot *slot;
	struct ctxprof_stats st;
	pthread_t th;
	int err = 0;
	void *base;

	init_small(4, 2, 4096);
	ctxprof_span_begin(1, 1);
	ctxprof_span_end(1);
	ctxprof_shutdown();
	/* the partly filled ring went out with the shutdown, not at a flush */
	drain_into(s, &rst);
	assert_int_equal(s->nr_events, 2);
	assert_int_equal(rst.shut_down, 1);
	ctxprof_span_begin(2, 2);
	ctxprof_span_end(2);
	ctxprof_flush();
	drain_into(s, NULL);
	assert_int_equal(s->nr_events, 2);
	base = region(&g);
	slot = slot_of(base, &g, 0);
	assert_true(slot->events_generated == 4);
	assert_true(slot->events_refused == 2);
	/* nothing refused reached a lane: written counts the first two only */
	assert_int_equal(ctxprof_get_stats(&st), 0);
	assert_int_equal(st.events_written, 2);
	assert_int_equal(pthread_create(&th, NULL, register_after_shutdown, &err), 0);
	pthread_join(th, NULL);
	assert_int_equal(err, -ENOSPC);
	assert_int_equal(ctxprof_get_stats(&st), 0);
	assert_int_equal(st.registrations_rejected, 1);
	/* and the context is still written: samples keep their span */
	ctxprof_set_context(7, 8);
	assert_true(slot->context.span_id == 7);
	free(s);
}

static void ctxprof_span_enter__nested__context_follows_spans(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct ctxprof_region_geom g;
	struct ctxprof_context c;
	void *base;

	ctxprof_span_enter(1, 1);
	ctxprof_span_enter(2, 1);
	base = region(&g);
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_true(c.span_id == 2 && c.local_root_span_id == 1);
	ctxprof_span_exit(2, 1);
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_true(c.span_id == 1 && c.local_root_span_id == 1);
	ctxprof_span_exit(1, 0);
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_true(c.span_id == 0 && c.local_root_span_id == 0);
	ctxprof_flush();
	drain_into(s, NULL);
	assert_int_equal(s->nr_events, 4);
	assert_int_equal(s->ev[2].type, CTXPROF_EVENT_SPAN_END);
	assert_true(s->ev[2].span_id == 2 && s->ev[2].local_root_span_id == 1);
	assert_true(s->ev[3].span_id == 1);
	free(s);
}

static void ctxprof_span_begin__aged_ring__submitted_at_next_event(void **state)
{
	struct ctxprof_options o = {.sz = sizeof(o), .flush_interval_ns = 1000000};
	struct seen *s = calloc(1, sizeof(*s));
	struct timespec ms = {0, 3000000};

	assert_int_equal(ctxprof_init(&o), 0);
	ctxprof_span_begin(1, 0);
	drain_into(s, NULL);
	assert_int_equal(s->nr_events, 0); /* partial ring, young */
	nanosleep(&ms, NULL);
	ctxprof_span_begin(2, 0);
	drain_into(s, NULL);
	assert_int_equal(s->nr_events, 2);
	free(s);
}

/* ------------------------------------------------------------------------ */
/* tags                                                                       */

static void ctxprof_intern_tag__same_pair__same_id_and_record_reaches_reader(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	char long_key[CTXPROF_TAG_KEY_MAX + 2], long_value[CTXPROF_TAG_VALUE_MAX + 2];
	uint32_t a, b, c, d, e;
	struct ctxprof_stats st;

	a = ctxprof_intern_tag("http.route", "/users/:id");
	b = ctxprof_intern_tag("http.route", "/orders");
	c = ctxprof_intern_tag("http.route", "/users/:id");
	d = ctxprof_intern_tag("http.rout", "e/users/:id");
	e = ctxprof_intern_tag("empty", "");
	assert_true(a && b && d && e);
	assert_int_equal(a, c);
	assert_true(a != b && a != d && b != d);

	memset(long_key, 'k', sizeof(long_key) - 1);
	long_key[sizeof(long_key) - 1] = 0;
	memset(long_value, 'v', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = 0;
	assert_int_equal(ctxprof_intern_tag(long_key, "v"), 0);
	assert_int_equal(ctxprof_intern_tag("k", long_value), 0);
	long_value[CTXPROF_TAG_VALUE_MAX] = 0; /* exactly the limit */
	long_key[CTXPROF_TAG_KEY_MAX] = 0;
	assert_true(ctxprof_intern_tag(long_key, long_value) != 0);
	assert_int_equal(ctxprof_intern_tag("", "v"), 0);
	assert_int_equal(ctxprof_intern_tag(NULL, "v"), 0);

	ctxprof_flush();
	drain_into(s, NULL);
	/* one record per pair, the first time only */
	assert_int_equal(s->nr_tags, 5);
	assert_int_equal(s->tag_id[0], a);
	assert_string_equal(s->tag_key[0], "http.route");
	assert_string_equal(s->tag_value[0], "/users/:id");
	assert_int_equal(s->tag_id[2], d);
	assert_string_equal(s->tag_key[2], "http.rout");
	assert_string_equal(s->tag_value[3], "");
	assert_int_equal(strlen(s->tag_value[4]), CTXPROF_TAG_VALUE_MAX);
	assert_int_equal(ctxprof_get_stats(&st), 0);
	assert_int_equal(st.tags_interned, 5);
	assert_int_equal(st.tag_intern_failures, 4);
	free(s);
}

static void ctxprof_intern_tag__replay_requested__dictionary_sent_again(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct ctxprof_region_geom g;
	struct ctxprof_region_header *h;
	uint32_t a, b;

	a = ctxprof_intern_tag("k", "1");
	b = ctxprof_intern_tag("k", "2");
	ctxprof_flush();
	drain_into(s, NULL);
	assert_int_equal(s->nr_tags, 2);
	/* a collector that attached late asks for everything again */
	h = region(&g);
	h->dict_replay_request++;
	assert_int_equal(ctxprof_intern_tag("k", "1"), a);
	ctxprof_flush();
	memset(s, 0, sizeof(*s));
	drain_into(s, NULL);
	assert_int_equal(s->nr_tags, 2);
	assert_int_equal(s->tag_id[0], a);
	assert_int_equal(s->tag_id[1], b);
	free(s);
}

/* the tag records the lanes deliver after a replay request, with no intern after it */
static void replay_then(void (*serve)(void), struct seen *s)
{
	struct ctxprof_region_geom g;
	struct ctxprof_region_header *h;
	struct ctxprof_stats st;

	assert_true(ctxprof_intern_tag("k", "1") != 0);
	assert_true(ctxprof_intern_tag("k", "2") != 0);
	ctxprof_flush();
	drain_into(s, NULL);
	assert_int_equal(s->nr_tags, 2);
	/* a collector that attached late asks for everything again ... */
	h = region(&g);
	h->dict_replay_request++;
	/* ... and the application never interns again */
	serve();
	memset(s, 0, sizeof(*s));
	drain_into(s, NULL);
	assert_int_equal(ctxprof_get_stats(&st), 0);
	assert_int_equal(st.tags_interned, 2);
}

static void span_and_flush(void)
{
	ctxprof_span_enter(7, 7);
	ctxprof_span_exit(7, 0);
	ctxprof_flush();
}

static void ctxprof_span_enter__replay_requested__dictionary_sent_without_intern(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));

	replay_then(span_and_flush, s);
	assert_int_equal(s->nr_tags, 2);
	assert_string_equal(s->tag_value[0], "1");
	assert_string_equal(s->tag_value[1], "2");
	assert_int_equal(s->nr_events, 2);
	/* served: the next spans send nothing again */
	memset(s, 0, sizeof(*s));
	span_and_flush();
	drain_into(s, NULL);
	assert_int_equal(s->nr_tags, 0);
	assert_int_equal(s->nr_events, 2);
	free(s);
}

static void *set_context_and_exit(void *arg)
{
	ctxprof_set_context(9, 9); /* registers; exit unregisters and submits */
	return NULL;
}

static void start_a_thread(void)
{
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, set_context_and_exit, NULL), 0);
	pthread_join(th, NULL);
}

static void ctxprof_register_thread__replay_requested__new_thread_sends_dictionary(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));

	replay_then(start_a_thread, s);
	assert_int_equal(s->nr_tags, 2);
	assert_string_equal(s->tag_key[0], "k");
	assert_string_equal(s->tag_value[1], "2");
	free(s);
}

static void *intern_without_slot(void *arg)
{
	uint32_t *id = arg;

	*id = ctxprof_intern_tag("late", "record");
	return NULL;
}

static void ctxprof_intern_tag__refused_thread__record_written_by_next_flush(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	pthread_t th;
	uint32_t id = 0;

	init_small(1, 0, 0);
	assert_int_equal(ctxprof_register_thread(), 0); /* the only slot */
	assert_int_equal(pthread_create(&th, NULL, intern_without_slot, &id), 0);
	pthread_join(th, NULL);
	assert_true(id != 0); /* the id works without a slot */
	/* this thread has a slot: its flush writes the missing record, no intern needed */
	ctxprof_flush();
	drain_into(s, NULL);
	assert_int_equal(s->nr_tags, 1);
	assert_string_equal(s->tag_key[0], "late");
	assert_int_equal(s->tag_id[0], id);
	free(s);
}

#define BURST	  3000
#define MANY_TAGS 60000

struct named {
	uint32_t nr, again;
	unsigned char seen[MANY_TAGS + 1];
};

static void on_named(void *ctx, const struct ctxprof_slot_view *slot, uint32_t id, const char *key,
		     uint32_t key_len, const char *value, uint32_t value_len)
{
	struct named *n = ctx;

	if (id > MANY_TAGS)
		fail_msg("tag id %u out of range", id);
	if (n->seen[id])
		n->again++;
	else
		n->nr++;
	n->seen[id] = 1;
}

static const struct ctxprof_drain_ops named_ops = {.tag = on_named};

/* span events (no intern) and drains, @rounds times: the ids the collector learns */
static void spans_and_drains(struct named *n, int rounds)
{
	struct ctxprof_region_geom g;
	void *base = region(&g);
	int i;

	for (i = 0; i < rounds; i++) {
		span_and_flush();
		ctxprof_region__drain(base, &g, ctxprof_now_ns(), &named_ops, n, NULL);
	}
}

/*
 * A burst of interns far larger than the detail rings, while nothing drains
 * them: the records that did not fit go out later on span traffic, with no
 * intern again, each once.
 */
static void ctxprof_intern_tag__burst_larger_than_rings__all_sent_on_spans(void **state)
{
	struct named *n = calloc(1, sizeof(*n));
	char v[64];
	int i;

	for (i = 1; i <= BURST; i++) {
		snprintf(v, sizeof(v), "value-%05d-padding-padding-padding", i);
		assert_int_equal(ctxprof_intern_tag("item", v), i);
	}
	spans_and_drains(n, 1);
	assert_true(n->nr < BURST); /* the rings held only a part */
	spans_and_drains(n, BURST);
	assert_int_equal(n->nr, BURST);
	assert_int_equal(n->again, 0);
	free(n);
}

/* the records of a burst interned while a thread of another slot cannot write go out on the
 * span traffic of any thread (here a second one), in id order */
static void *spans_on_other_thread(void *arg)
{
	spans_and_drains(arg, BURST);
	return NULL;
}

/* 60,000 pairs interned with no collector: every one named in time, each once */
static void ctxprof_intern_tag__60000_pairs__all_sent_on_spans(void **state)
{
	struct named *n = calloc(1, sizeof(*n));
	char v[16];
	int i;

	for (i = 1; i <= MANY_TAGS; i++) {
		snprintf(v, sizeof(v), "v%05d", i);
		assert_int_equal(ctxprof_intern_tag("k", v), i);
	}
	for (i = 0; i < 100 && n->nr < MANY_TAGS; i++)
		spans_and_drains(n, MANY_TAGS / 64);
	assert_int_equal(n->nr, MANY_TAGS);
	assert_int_equal(n->again, 0);
	free(n);
}

static void ctxprof_intern_tag__burst__sent_by_another_threads_spans(void **state)
{
	struct named *n = calloc(1, sizeof(*n));
	pthread_t th;
	char v[64];
	int i;

	for (i = 1; i <= BURST; i++) {
		snprintf(v, sizeof(v), "value-%05d", i);
		assert_int_equal(ctxprof_intern_tag("item", v), i);
	}
	assert_int_equal(pthread_create(&th, NULL, spans_on_other_thread, n), 0);
	pthread_join(th, NULL);
	spans_and_drains(n, 1); /* what this thread's rings held */
	assert_int_equal(n->nr, BURST);
	free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(spsc_queue__single_producer__then_ordered),
		T(spsc_queue__wraparound__then_correct),
		T(ctxprof_span_begin__pool_exhausted__dropped_and_counted),
		T(ctxprof_shutdown__after_events__drained_then_refused_and_counted),
		T(ctxprof_span_enter__nested__context_follows_spans),
		T(ctxprof_span_begin__aged_ring__submitted_at_next_event),
		T(ctxprof_intern_tag__same_pair__same_id_and_record_reaches_reader),
		T(ctxprof_intern_tag__replay_requested__dictionary_sent_again),
		T(ctxprof_span_enter__replay_requested__dictionary_sent_without_intern),
		T(ctxprof_register_thread__replay_requested__new_thread_sends_dictionary),
		T(ctxprof_intern_tag__refused_thread__record_written_by_next_flush),
		T(ctxprof_intern_tag__burst_larger_than_rings__all_sent_on_spans),
		T(ctxprof_intern_tag__burst__sent_by_another_threads_spans),
		T(ctxprof_intern_tag__60000_pairs__all_sent_on_spans),
#undef T
	};

	return cmocka_run_group_tests_name("ctxprof_lanes", tests, NULL, NULL);
}
