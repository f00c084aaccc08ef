// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trace_bench: the per-thread trace parts (traces/trace.h) next to a
 * baseline measured in the same run.
 *  append: ns per 4-word sample event appended by one writer, ours (a load,
 *          the words, a release store; a part switch every 126 events)
 *          next to a pthread_mutex around a growing vector (lock, copy,
 *          unlock, realloc when full), both over APPENDS events, the
 *          vector cleared like our parts are consumed (a replay every
 *          REPLAY_EVERY events frees what it read); best of REPS runs;
 *  replay: one thread's 10,000 events (a span's worth) handed over in time
 *          order: cut + replay, best of REPS;
 *  memory: what a thread sampled at 99 Hz holds in its trace, as parts of
 *          4 KiB, for a 10 s and a 60 s interval (no replay in between).
 * Usage: trace_bench [appends-in-millions]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "traces/trace.h"
#include "traces/trace_event.h"

#define REPS	     5
#define REPLAY_EVERY 65536
#define SPAN_EVENTS  10000

struct vec {
	pthread_mutex_t lock;
	uint64_t *w;
	size_t n, cap;
};

static volatile uint64_t sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int count_fn(void *ctx, uint32_t pid, uint32_t tid, const struct trace_event_ref *evs,
		    size_t n)
{
	(void)pid;
	(void)tid;
	*(size_t *)ctx += n;
	sink += evs[n - 1].time_ns;
	return 0;
}

/* ns per event appended to our trace */
static double bench_ours(long appends)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 1, 2, true);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	size_t replayed = 0;
	double t0 = 0, ns = 0;

	for (long i = 0; i < appends; i++) {
		unsigned int n = trace_ev_sample(ev, (uint64_t)i, 0, true, (uint64_t)i, 7);

		if (i % REPLAY_EVERY == 0) {
			/* the replay is the reader's cost, not the append's */
			if (i) {
				ns += now_ns() - t0;
				traces__cut(ts, UINT64_MAX);
				traces__replay(ts, count_fn, &replayed);
			}
			t0 = now_ns();
		}
		trace__append(w, t, ev, n);
	}
	ns += now_ns() - t0;
	traces__free(ts);
	return ns / appends;
}

static double bench_mutex(long appends)
{
	struct vec v = {.lock = PTHREAD_MUTEX_INITIALIZER};
	uint64_t ev[TRACE_EV_MAX_WORDS];
	double t0 = 0, ns = 0;

	for (long i = 0; i < appends; i++) {
		unsigned int n = trace_ev_sample(ev, (uint64_t)i, 0, true, (uint64_t)i, 7);

		if (i % REPLAY_EVERY == 0) {
			if (i) {
				ns += now_ns() - t0;
				pthread_mutex_lock(&v.lock);
				sink += v.w[v.n - 1];
				v.n = 0;
				pthread_mutex_unlock(&v.lock);
			}
			t0 = now_ns();
		}
		pthread_mutex_lock(&v.lock);
		if (v.n + n > v.cap) {
			v.cap = v.cap ? 2 * v.cap : 1024;
			v.w = realloc(v.w, v.cap * sizeof(*v.w));
			if (!v.w)
				abort();
		}
		memcpy(v.w + v.n, ev, n * sizeof(*ev));
		v.n += n;
		pthread_mutex_unlock(&v.lock);
	}
	ns += now_ns() - t0;
	free(v.w);
	return ns / appends;
}

/* µs to hand a span's events over: cut, copy under the mutex, sort, callback */
static double bench_replay(void)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 1, 2, true);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	size_t replayed = 0;
	double t0;

	for (long i = 0; i < SPAN_EVENTS; i++)
		trace__append(w, t, ev, trace_ev_sample(ev, (uint64_t)i, 0, true, (uint64_t)i, 7));
	t0 = now_ns();
	traces__cut(ts, UINT64_MAX);
	traces__replay(ts, count_fn, &replayed);
	t0 = now_ns() - t0;
	traces__free(ts);
	if (replayed != SPAN_EVENTS)
		abort();
	return t0 / 1e3;
}

/* KiB a thread sampled at 99 Hz holds after @seconds without a replay */
static double memory_kib(int seconds)
{
	struct traces *ts = traces__new(NULL);
	struct trace_writer *w = traces__writer(ts);
	struct trace *t = trace_writer__get(w, 1, 2, true);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	struct traces_stats st;

	for (long i = 0; i < 99L * seconds; i++)
		trace__append(w, t, ev, trace_ev_sample(ev, (uint64_t)i, 0, true, (uint64_t)i, 7));
	traces__stats(ts, &st);
	traces__free(ts);
	return st.parts_in_use * 4.0;
}

static double best(double (*fn)(long), long n)
{
	double b = 1e30, v;

	for (int r = 0; r < REPS; r++) {
		v = fn(n);
		if (v < b)
			b = v;
	}
	return b;
}

int main(int argc, char **argv)
{
	long appends = (argc > 1 ? atol(argv[1]) : 20) * 1000000L;
	double ours, mutex, replay = 1e30, v;

	if (appends <= 0) {
		fprintf(stderr, "usage: trace_bench [appends-in-millions]\n");
		return 2;
	}
	ours = best(bench_ours, appends);
	mutex = best(bench_mutex, appends);
	for (int r = 0; r < REPS; r++) {
		v = bench_replay();
		if (v < replay)
			replay = v;
	}
	printf("| measure | ours | baseline | ratio |\n|---|---|---|---|\n");
	printf("| append one sample event (4 words), one writer | %.2f ns | mutex + vector: %.2f "
	       "ns "
	       "| %.2f |\n",
	       ours, mutex, ours / mutex);
	printf("| replay a span's %d events (cut, copy, sort, hand over) | %.0f us | | |\n",
	       SPAN_EVENTS, replay);
	printf("| trace memory of a thread sampled at 99 Hz, 10 s interval | %.0f KiB | | |\n",
	       memory_kib(10));
	printf("| trace memory of a thread sampled at 99 Hz, 60 s interval | %.0f KiB | | |\n",
	       memory_kib(60));
	return 0;
}
