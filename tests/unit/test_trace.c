// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for traces/trace: per-thread event histories (docs/design/thread-traces.md) appended
 * by their writers and replayed in time order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "storage/calltrace_storage.h"
#include "traces/trace.h"
#include "traces/trace_event.h"

/* sample events per part: 4 words each */
#define PER_PART (TRACE_PART_WORDS / 4)

struct seen {
	uint32_t pid, tid;
	uint64_t time_ns;
	uint64_t stack, span;
	enum trace_event_type type;
	uint8_t writer;
	bool seed;
};

struct collect {
	struct seen *ev;
	size_t n, cap;
	unsigned int threads;
};

static int collect_fn(void *ctx, uint32_t pid, uint32_t tid, const struct trace_event_ref *evs,
		      size_t n)
{
	struct collect *c = ctx;

	c->threads++;
	for (size_t i = 0; i < n; i++) {
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 1024;
			c->ev = realloc(c->ev, c->cap * sizeof(*c->ev));
			assert_non_null(c->ev);
		}
		c->ev[c->n++] = (struct seen){
			.pid = pid,
			.tid = tid,
			.time_ns = evs[i].time_ns,
			.stack = evs[i].ev[2],
			.span = trace_ev_type(evs[i].ev[0]) == TRACE_EV_SAMPLE ? evs[i].ev[3] : 0,
			.type = trace_ev_type(evs[i].ev[0]),
			.writer = evs[i].writer,
			.seed = trace_ev_is_seed(evs[i].ev[0]),
		};
		/* time order, whatever the writers */
		if (i)
			assert_true(evs[i - 1].time_ns <= evs[i].time_ns);
	}
	return 0;
}

static void collect_reset(struct collect *c)
{
	c->n = 0;
	c->threads = 0;
}

static void append_samples(struct trace_writer *w, struct trace *t, uint64_t first, size_t n,
			   uint64_t step)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	for (size_t i = 0; i < n; i++) {
		unsigned int nw = trace_ev_sample(ev, (first + i) * step, 1, false, first + i, 0);

		assert_int_equal(trace__append(w, t, ev, nw), 0);
	}
}

static void replay(struct traces *ts, struct collect *c)
{
	collect_reset(c);
	traces__cut(ts, UINT64_MAX);
	assert_int_equal(traces__replay(ts, collect_fn, c), 0);
}

static void trace__append__across_part_switches__replayed_in_order(void **state)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 10, 11, true);
	struct traces_stats st;
	struct collect c = {0};
	size_t n = 5 * PER_PART + 7;

	(void)state;
	append_samples(w, t, 1, n, 1000);
	replay(ts, &c);
	assert_int_equal(c.n, n);
	assert_int_equal(c.threads, 1);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c.ev[i].stack, i + 1);
		assert_int_equal(c.ev[i].pid, 10);
		assert_int_equal(c.ev[i].tid, 11);
		assert_int_equal(c.ev[i].type, TRACE_EV_SAMPLE);
	}
	traces__stats(ts, &st);
	assert_int_equal(st.switches, 6);
	assert_int_equal(st.events, n);
	assert_int_equal(st.events_replayed, n);
	/* consumed parts went back: only the one being written is in use */
	assert_int_equal(st.parts_in_use, 1);

	/* the next replay starts where this one stopped */
	append_samples(w, t, n + 1, 3, 1000);
	replay(ts, &c);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.ev[0].stack, n + 1);
	free(c.ev);
	traces__free(ts);
}

static void traces__replay__several_writers__merged_by_time(void **state)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *drain = traces__writer(ts), *app = traces__writer(ts);
	struct trace *a = trace_writer__get(drain, 1, 2, true);
	struct trace *b = trace_writer__get(app, 1, 2, true);
	struct trace *other = trace_writer__get(drain, 1, 3, true);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	struct collect c = {0};
	unsigned int nw;

	(void)state;
	/* samples at 10, 20, ..., span begin at 15, end at 45, written later */
	append_samples(drain, a, 1, 5, 10);
	append_samples(drain, other, 1, 2, 10);
	nw = trace_ev_span_begin(ev, 15, 0xabc, 0xdef);
	assert_int_equal(trace__append(app, b, ev, nw), 0);
	nw = trace_ev_span_end(ev, 45, 0xabc);
	assert_int_equal(trace__append(app, b, ev, nw), 0);
	replay(ts, &c);
	assert_int_equal(c.threads, 2);
	assert_int_equal(c.n, 9);
	/* thread 2 first (by tid), merged: 10 15 20 30 40 45 50 */
	assert_int_equal(c.ev[0].time_ns, 10);
	assert_int_equal(c.ev[1].type, TRACE_EV_SPAN_BEGIN);
	assert_int_equal(c.ev[1].stack, 0xabc);
	assert_int_equal(c.ev[5].type, TRACE_EV_SPAN_END);
	assert_int_equal(c.ev[6].time_ns, 50);
	assert_int_equal(c.ev[7].tid, 3);
	free(c.ev);
	traces__free(ts);
}

/* a budget of 8 parts, 3 threads appending without a replay */
static void trace__switch__budget__recycles_oldest_keeps_min_parts(void **state)
{
	struct traces *ts = traces__new(&(struct traces_opts){.part_budget = 8, .min_parts = 2});
	struct trace_writer *w = traces__writer(ts);
	struct trace *t[3];
	struct traces_stats st;
	struct collect c = {0};
	size_t per = 4 * PER_PART;

	(void)state;
	for (int i = 0; i < 3; i++)
		t[i] = trace_writer__get(w, 1, 100 + i, true);
	/* round-robin, so each keeps switching */
	for (size_t k = 0; k < per; k += PER_PART)
		for (int i = 0; i < 3; i++)
			append_samples(w, t[i], 1 + k, PER_PART, 1);
	traces__stats(ts, &st);
	assert_true(st.parts <= 8);
	assert_true(st.recycled > 0);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.events, 3 * per);
	replay(ts, &c);
	assert_int_equal(c.threads, 3);
	for (int i = 0; i < 3; i++) {
		size_t n = 0;
		uint64_t prev = 0;

		for (size_t j = 0; j < c.n; j++) {
			if (c.ev[j].tid != 100u + i)
				continue;
			/* what is left is the newest, contiguous: the oldest went first */
			if (n)
				assert_int_equal(c.ev[j].stack, prev + 1);
			prev = c.ev[j].stack;
			n++;
		}
		/* every thread kept its minimum: two full parts */
		assert_true(n >= 2 * PER_PART);
		assert_int_equal(prev, per);
	}
	assert_int_equal(c.n + st.events_recycled, 3 * per);
	free(c.ev);
	traces__free(ts);
}

static size_t count_type(const struct collect *c, enum trace_event_type type, bool seed)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		n += c->ev[i].type == type && c->ev[i].seed == seed;
	return n;
}

/*
 * The name and the span's begin are in the first part, which is recycled
 * before any replay: the part after it starts with them as seeds, and the
 * replay hands them over (the span's end then has its begin).
 */
static void trace__switch__first_part_recycled__new_part_seeded_with_state(void **state)
{
	struct traces *ts = traces__new(&(struct traces_opts){.part_budget = 2, .min_parts = 1});
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 1, 2, true);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	struct traces_stats st;
	struct collect c = {0};
	size_t i;

	(void)state;
	assert_int_equal(trace__append(w, t, ev, trace_ev_thread_name(ev, 1, "worker")), 0);
	assert_int_equal(trace__append(w, t, ev, trace_ev_span_begin(ev, 2, 0xabc, 0xdef)), 0);
	/* three parts' worth of samples: the first part is recycled unreplayed */
	append_samples(w, t, 10, 3 * PER_PART, 1);
	assert_int_equal(trace__append(w, t, ev, trace_ev_span_end(ev, 100000, 0xabc)), 0);
	traces__stats(ts, &st);
	assert_true(st.recycled > 0);
	assert_true(st.seeds >= 2);
	replay(ts, &c);
	assert_int_equal(count_type(&c, TRACE_EV_THREAD_NAME, true), 1);
	assert_int_equal(count_type(&c, TRACE_EV_SPAN_BEGIN, true), 1);
	assert_int_equal(count_type(&c, TRACE_EV_SPAN_BEGIN, false), 0);
	for (i = 0; i < c.n && c.ev[i].type != TRACE_EV_SPAN_BEGIN; i++)
		;
	/* the seed keeps the begin's own time and span */
	assert_true(i < c.n);
	assert_int_equal(c.ev[i].time_ns, 2);
	assert_int_equal(c.ev[i].stack, 0xabc);
	assert_int_equal(c.ev[c.n - 1].type, TRACE_EV_SPAN_END);
	traces__stats(ts, &st);
	assert_int_equal(st.seeds_replayed, 2);
	/* seeds are not appended events: every appended one is replayed or recycled */
	assert_int_equal(st.events_replayed + st.events_recycled, st.events);
	free(c.ev);
	traces__free(ts);
}

/* nothing lost: a replay crossing into a seeded part skips its seeds (no duplicates) */
static void trace__replay__no_gap__seeds_not_handed_over(void **state)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 1, 2, true);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	struct traces_stats st;
	struct collect c = {0};

	(void)state;
	assert_int_equal(trace__append(w, t, ev, trace_ev_span_begin(ev, 2, 0xabc, 0xdef)), 0);
	append_samples(w, t, 10, PER_PART / 2, 1);
	replay(ts, &c);
	assert_int_equal(count_type(&c, TRACE_EV_SPAN_BEGIN, false), 1);
	append_samples(w, t, 10 + PER_PART / 2, 2 * PER_PART, 1);
	replay(ts, &c);
	assert_int_equal(c.n, 2 * PER_PART);
	assert_int_equal(count_type(&c, TRACE_EV_SPAN_BEGIN, true), 0);
	traces__stats(ts, &st);
	assert_true(st.seeds >= 2);
	assert_int_equal(st.seeds_replayed, 0);
	assert_int_equal(st.events_replayed, st.events);
	free(c.ev);
	traces__free(ts);
}

/* one part for two threads: the second has none to take, and says so */
static void trace__append__nothing_to_recycle__dropped_and_counted(void **state)
{
	struct traces *ts = traces__new(&(struct traces_opts){.part_budget = 1, .min_parts = 1});
	struct trace_writer *w = traces__writer(ts);
	struct trace *a = trace_writer__get(w, 1, 1, true);
	struct trace *b = trace_writer__get(w, 1, 2, true);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	struct traces_stats st;
	unsigned int nw = trace_ev_thread_exit(ev, 1);

	(void)state;
	assert_int_equal(trace__append(w, a, ev, nw), 0);
	assert_int_equal(trace__append(w, b, ev, nw), -ENOSPC);
	assert_int_equal(trace__append(w, NULL, ev, nw), -ENOSPC);
	traces__stats(ts, &st);
	assert_int_equal(st.events, 1);
	assert_int_equal(st.events_dropped, 2);
	assert_int_equal(st.parts, 1);
	traces__free(ts);
}

static void traces__replay__idle_trace__retired_then_freed(void **state)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 5, 6, true);
	struct traces_stats st;
	struct collect c = {0};

	(void)state;
	append_samples(w, t, 1, 10, 1);
	replay(ts, &c); /* active in this interval */
	replay(ts, &c); /* idle: asked to retire */
	trace_writer__sweep(w);
	assert_null(trace_writer__get(w, 5, 6, false));
	replay(ts, &c);
	traces__stats(ts, &st);
	assert_int_equal(st.traces, 1);
	assert_int_equal(st.traces_freed, 1);
	assert_int_equal(st.parts_in_use, 0);

	/* idle, then used again before the sweep: it stays */
	t = trace_writer__get(w, 5, 6, true);
	append_samples(w, t, 1, 2, 1);
	replay(ts, &c);
	replay(ts, &c);
	assert_ptr_equal(trace_writer__get(w, 5, 6, false), t);
	append_samples(w, t, 3, 2, 1);
	trace_writer__sweep(w);
	assert_ptr_equal(trace_writer__get(w, 5, 6, false), t);
	replay(ts, &c);
	assert_int_equal(c.n, 2);
	free(c.ev);
	traces__free(ts);
}

/* events appended after the replay that asked to retire a trace are not lost */
static void traces__replay__retired_trace__last_events_replayed(void **state)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 5, 6, true);
	struct traces_stats st;
	struct collect c = {0};

	(void)state;
	append_samples(w, t, 1, 1, 1);
	replay(ts, &c);
	replay(ts, &c);
	/* the owner appends once more on the trace it holds, then sweeps */
	append_samples(w, t, 2, 1, 1);
	trace_writer__sweep(w);
	replay(ts, &c);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.ev[0].stack, 2);
	traces__stats(ts, &st);
	assert_int_equal(st.traces_freed, 1);
	free(c.ev);
	traces__free(ts);
}

static void trace_writer__get__tid_of_another_process__new_trace(void **state)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *a = trace_writer__get(w, 1, 7, true);
	struct trace *b;
	struct collect c = {0};

	(void)state;
	append_samples(w, a, 1, 3, 1);
	b = trace_writer__get(w, 2, 7, true);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	append_samples(w, b, 10, 2, 1);
	replay(ts, &c);
	assert_int_equal(c.threads, 2);
	assert_int_equal(c.ev[0].pid, 1);
	assert_int_equal(c.ev[3].pid, 2);
	free(c.ev);
	traces__free(ts);
}

/* a cut by time: the events from that time on wait for the next replay */
static void traces__cut__by_time__later_events_wait(void **state)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 1, 2, true);
	struct trace_id_set *set = trace_id_set__new(16);
	struct collect c = {0};

	(void)state;
	/* times 10, 20, ... 3 parts' worth; stack ids of storage epoch 1 */
	for (uint64_t i = 1; i <= 3 * PER_PART; i++) {
		uint64_t ev[TRACE_EV_MAX_WORDS];
		unsigned int nw = trace_ev_sample(ev, 10 * i, 0, false, 1ull << 32 | i, 0);

		assert_int_equal(trace__append(w, t, ev, nw), 0);
	}
	traces__cut(ts, 10 * (PER_PART + 5));
	traces__liveness(ts, set);
	assert_int_equal(trace_id_set__count(set), 2 * PER_PART - 4);
	assert_int_equal(traces__replay(ts, collect_fn, &c), 0);
	assert_int_equal(c.n, PER_PART + 4);
	assert_int_equal(c.ev[c.n - 1].stack, 1ull << 32 | (PER_PART + 4));
	assert_false(trace_id_set__contains(set, 1ull << 32 | (PER_PART + 4)));
	assert_true(trace_id_set__contains(set, 1ull << 32 | (PER_PART + 5)));
	replay(ts, &c);
	assert_int_equal(c.n, 2 * PER_PART - 4);
	assert_int_equal(c.ev[0].stack, 1ull << 32 | (PER_PART + 5));
	trace_id_set__free(set);
	free(c.ev);
	traces__free(ts);
}

/* the stack ids of events past the cut survive a storage rotation */
static void traces__liveness__events_past_cut__preserved(void **state)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 1, 2, true);
	struct trace_id_set *set = trace_id_set__new(16);
	uint64_t before = (7ull << 32) | 1, after = (7ull << 32) | 2;
	uint64_t ev[TRACE_EV_MAX_WORDS];
	unsigned int nw;

	(void)state;
	nw = trace_ev_sample(ev, 1, 0, false, before, 0);
	assert_int_equal(trace__append(w, t, ev, nw), 0);
	traces__cut(ts, UINT64_MAX);
	nw = trace_ev_sample(ev, 2, 0, false, after, 0);
	assert_int_equal(trace__append(w, t, ev, nw), 0);
	traces__liveness(ts, set);
	assert_true(trace_id_set__contains(set, after));
	assert_false(trace_id_set__contains(set, before));
	trace_id_set__free(set);
	traces__free(ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trace__append__across_part_switches__replayed_in_order),
		cmocka_unit_test(traces__replay__several_writers__merged_by_time),
		cmocka_unit_test(trace__switch__budget__recycles_oldest_keeps_min_parts),
		cmocka_unit_test(trace__append__nothing_to_recycle__dropped_and_counted),
		cmocka_unit_test(trace__switch__first_part_recycled__new_part_seeded_with_state),
		cmocka_unit_test(trace__replay__no_gap__seeds_not_handed_over),
		cmocka_unit_test(traces__replay__idle_trace__retired_then_freed),
		cmocka_unit_test(traces__replay__retired_trace__last_events_replayed),
		cmocka_unit_test(trace_writer__get__tid_of_another_process__new_trace),
		cmocka_unit_test(traces__liveness__events_past_cut__preserved),
		cmocka_unit_test(traces__cut__by_time__later_events_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
