// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stress for traces/trace: WRITERS threads append to the traces of THREADS
 * shared thread ids (every writer has its own trace of each, as the drains
 * do) under a part budget small enough that switches recycle other traces'
 * parts all the time, and sweep now and then; the main thread cuts and
 * replays REPLAYS times meanwhile, with the liveness checker run between.
 * Built under TSan (a replay while owners append and recycle never touches
 * a part unsafely) and under ASan+UBSan (never a recycled or freed part).
 * Checked:
 *  - each replay hands a thread's events in time order, well formed, and
 *    each writer's events of a thread in the order it appended them, never
 *    one twice, across replays (recycling may leave gaps, counted);
 *  - every sample falls in the span its writer had open, as a reader that
 *    follows the begin and end events (and the seeds of a part whose
 *    predecessors were recycled) knows it: each writer keeps its traces in
 *    a span that changes every SPAN_EVERY samples, so recycling loses
 *    begins all the time and only the part switch's seeds bring them back;
 *  - the pool never holds more parts than its budget;
 *  - at the end every appended event was replayed or recycled:
 *    events == replayed + recycled, and nothing was dropped but counted.
 * Prints one line; exits 1 on failure.  Environment: STRESS_REPLAYS (2000).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "storage/calltrace_storage.h"
#include "traces/trace.h"
#include "traces/trace_event.h"
#include "util/clock.h"

#define WRITERS	     3
#define THREADS	     12
#define BUDGET	     (WRITERS * THREADS * MIN_PARTS + 16)
#define MIN_PARTS    2
#define SWEEP_EVERY  4096	   /* appends between a writer's sweeps */
#define IDLE_THREAD  (THREADS - 1) /* written only in bursts: gets retired */
#define STRESS_MAX_S 60
#define SPAN_EVERY   64 /* samples of a (writer, thread) between span changes */

static _Atomic uint64_t fake_ns = 1;
static _Atomic int stop;
static struct traces *ts;
static int failures;

struct writer {
	pthread_t th;
	unsigned int idx;
	struct trace_writer *w;
	uint64_t seq[THREADS];
	uint64_t span[THREADS]; /* the span open in its traces of each thread; 0: none yet */
	uint64_t appended, dropped;
};

/* the last sequence number seen per (writer, thread), across replays */
static uint64_t last_seq[WRITERS][THREADS];
/* the span open per (writer, thread) as the replayed events say */
static uint64_t open_span[WRITERS][THREADS];
static uint64_t replayed, seeds_seen, spans_unknown;

static void failf(const char *what, unsigned long long a, unsigned long long b)
{
	if (failures++ < 10)
		fprintf(stderr, "stress_trace: %s (%llu, %llu)\n", what, a, b);
}

static void append(struct writer *wr, struct trace *t, const uint64_t *ev, unsigned int nw)
{
	if (trace__append(wr->w, t, ev, nw))
		wr->dropped++;
	else
		wr->appended++;
}

/* a span event of writer @w's trace of @tid, as a timeline would follow it */
static void follow_span(unsigned int w, uint32_t tid, const uint64_t *ev)
{
	uint64_t *open = &open_span[w][tid - 1];

	if (trace_ev_is_seed(ev[0]))
		seeds_seen++;
	else
		replayed++;
	if ((ev[2] >> 32) != tid - 1) {
		failf("span event of another thread", ev[2], tid);
		return;
	}
	if (trace_ev_type(ev[0]) == TRACE_EV_SPAN_END) {
		if (*open == ev[2])
			*open = 0;
		return;
	}
	*open = ev[2];
}

static void *writer_main(void *arg)
{
	struct writer *wr = arg;
	uint64_t ev[TRACE_EV_MAX_WORDS], n = 0;
	unsigned int rng = wr->idx * 7919 + 1;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned int tid;
		struct trace *t;
		unsigned int nw;

		rng = rng * 1103515245 + 12345;
		tid = (rng >> 16) % THREADS;
		if (tid == IDLE_THREAD && (n / 20000) % 2)
			tid = 0;
		t = trace_writer__get(wr->w, 1, tid + 1, true);
		if (wr->seq[tid] % SPAN_EVERY == 0) {
			/* span ids: the thread in the high half, then a count */
			uint64_t next = (uint64_t)tid << 32 | (wr->seq[tid] / SPAN_EVERY + 1);

			if (wr->span[tid]) {
				nw = trace_ev_span_end(ev, atomic_fetch_add(&fake_ns, 1),
						       wr->span[tid]);
				append(wr, t, ev, nw);
			}
			nw = trace_ev_span_begin(ev, atomic_fetch_add(&fake_ns, 1), next, next);
			append(wr, t, ev, nw);
			wr->span[tid] = next;
		}
		/* the clock read while the trace is ours: per-trace times rise */
		nw = trace_ev_sample(ev, atomic_fetch_add(&fake_ns, 1), wr->idx, true,
				     (uint64_t)wr->idx << 56 | ++wr->seq[tid], wr->span[tid]);
		append(wr, t, ev, nw);
		if (++n % SWEEP_EVERY == 0)
			trace_writer__sweep(wr->w);
	}
	trace_writer__sweep(wr->w);
	return NULL;
}

static int check_fn(void *ctx, uint32_t pid, uint32_t tid, const struct trace_event_ref *evs,
		    size_t n)
{
	(void)ctx;
	if (pid != 1 || tid < 1 || tid > THREADS) {
		failf("replay of an unknown thread", pid, tid);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const uint64_t *ev = evs[i].ev;
		unsigned int w = (unsigned int)(ev[2] >> 56);
		uint64_t seq = ev[2] & ((1ull << 56) - 1);
		enum trace_event_type type = trace_ev_type(ev[0]);

		if (i && evs[i - 1].time_ns > evs[i].time_ns)
			failf("out of time order", evs[i - 1].time_ns, evs[i].time_ns);
		if ((type == TRACE_EV_SPAN_BEGIN || type == TRACE_EV_SPAN_END) &&
		    trace_ev_words(ev[0]) == trace_ev_expected_words(type) &&
		    ev[1] == evs[i].time_ns && evs[i].writer < WRITERS) {
			follow_span(evs[i].writer, tid, ev);
			continue;
		}
		if (type != TRACE_EV_SAMPLE || trace_ev_words(ev[0]) != 4 ||
		    ev[1] != evs[i].time_ns || (ev[3] >> 32) != tid - 1 || w >= WRITERS ||
		    evs[i].writer != w) {
			failf("malformed event", ev[0], ev[2]);
			continue;
		}
		/* the seed invariant: a recycled begin came back with the next part */
		if (ev[3] != open_span[w][tid - 1]) {
			spans_unknown++;
			failf("sample in a span the replay never began", ev[3],
			      open_span[w][tid - 1]);
		}
		if (seq <= last_seq[w][tid - 1])
			failf("a writer's event replayed twice or backwards", last_seq[w][tid - 1],
			      seq);
		last_seq[w][tid - 1] = seq;
		replayed++;
	}
	return 0;
}

int main(void)
{
	const char *env = getenv("STRESS_REPLAYS");
	long replays = env ? strtol(env, NULL, 10) : 2000;
	struct writer wr[WRITERS] = {0};
	struct trace_id_set *preserve = trace_id_set__new(1024);
	uint64_t appended = 0, dropped = 0;
	struct traces_stats st;
	uint64_t t0 = mono_ns();
	long r;

	ts = traces__new(&(struct traces_opts){.part_budget = BUDGET, .min_parts = MIN_PARTS});
	if (!ts || !preserve) {
		fprintf(stderr, "stress_trace: out of memory\n");
		return 1;
	}
	for (int i = 0; i < WRITERS; i++) {
		wr[i].idx = i;
		wr[i].w = traces__writer(ts);
		if (!wr[i].w || pthread_create(&wr[i].th, NULL, writer_main, &wr[i])) {
			fprintf(stderr, "stress_trace: cannot start writer %d\n", i);
			return 1;
		}
	}
	/* at least @replays, and on until the pool recycled: on a busy machine
	 * the writers may not have run yet when the replays are done (bounded:
	 * STRESS_MAX_S seconds) */
	memset(&st, 0, sizeof(st));
	for (r = 0; r < replays || (!st.recycled && mono_ns() - t0 < STRESS_MAX_S * 1000000000ull);
	     r++) {
		traces__cut(ts, UINT64_MAX);
		trace_id_set__clear(preserve);
		traces__liveness(ts, preserve);
		if (traces__replay(ts, check_fn, NULL))
			failf("replay failed", r, 0);
		traces__stats(ts, &st);
		if (st.parts > BUDGET)
			failf("pool past its budget", st.parts, BUDGET);
		if (r % 8 == 0)
			sched_yield();
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < WRITERS; i++) {
		pthread_join(wr[i].th, NULL);
		appended += wr[i].appended;
		dropped += wr[i].dropped;
	}
	/* writers stopped: a last replay takes everything left */
	traces__cut(ts, UINT64_MAX);
	if (traces__replay(ts, check_fn, NULL))
		failf("final replay failed", 0, 0);
	traces__stats(ts, &st);
	if (st.events != appended || st.events_dropped != dropped)
		failf("counters differ from the writers'", st.events, appended);
	if (st.seeds_replayed != seeds_seen)
		failf("seeds replayed count", st.seeds_replayed, seeds_seen);
	if (!seeds_seen)
		failf("no seed handed over: recycling never cut a span", 0, 0);
	if (st.events_replayed != replayed)
		failf("replayed count", st.events_replayed, replayed);
	if (st.events != st.events_replayed + st.events_recycled)
		failf("events != replayed + recycled", st.events,
		      st.events_replayed + st.events_recycled);
	if (!st.recycled)
		failf("nothing recycled: the stress did not stress", 0, 0);
	printf("stress_trace: %s: %ld replays, %llu events appended, %llu replayed, %llu recycled "
	       "(%llu parts), %llu seeds handed over, %llu samples in an unknown span, "
	       "%llu dropped, %llu switches, %llu traces (%llu freed)\n",
	       failures ? "FAIL" : "ok", r, (unsigned long long)st.events,
	       (unsigned long long)st.events_replayed, (unsigned long long)st.events_recycled,
	       (unsigned long long)st.recycled, (unsigned long long)st.seeds_replayed,
	       (unsigned long long)spans_unknown, (unsigned long long)st.events_dropped,
	       (unsigned long long)st.switches, (unsigned long long)st.traces,
	       (unsigned long long)st.traces_freed);
	trace_id_set__free(preserve);
	traces__free(ts);
	return failures ? 1 : 0;
}
