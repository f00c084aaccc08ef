// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stress for calltrace_storage liveness (docs/design/calltrace-storage.md,
 * "Liveness"): a stack named by an event not replayed yet is never freed.
 *
 * WRITERS threads play the drains of span workloads: each puts a stack with
 * calltrace_storage__put_held(), sometimes yields (a drain preempted between
 * its put and its append), appends an event naming the stack to its own
 * event list (a thread's trace), then releases.  The main thread plays the
 * exporter, every ROTATE_MS: it cuts every list (the events before the cut
 * are this interval's), rotates the storage with a liveness checker that
 * adds the ids of the events past the cut (traces__liveness()), then
 * replays the events before the cut: each id must name a trace handed over
 * by that rotation or found by calltrace_storage__lookup(), holding the
 * event's own stack.  An event whose stack is gone, or another stack, fails
 * the test.  The storage's own losses (stacks dropped at a put, live stacks
 * that did not fit STANDBY, hazard waits that timed out) are counted apart
 * and must be 0 for the run to prove anything: the sizes leave room.
 * Built under TSan and under ASan+UBSan (tests/unit/stress.mk), whose arena
 * poisoning catches a stale trace read.
 * Prints one line; exits 1 on failure.
 * Environment: STRESS_SECONDS (default 3).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "storage/calltrace_storage.h"

#define WRITERS	   8
#define ROTATE_MS  3
#define DEPTH	   6
#define POOL	   64	     /* stacks a writer repeats */
#define CAPACITY   (1 << 12) /* slots per table: 6x what a rotation sees */
#define YIELD_MASK 7	     /* one put in 8 yields before its append */
#define MAP_SLOTS  (1 << 14) /* hand-over index: twice what one can hand over */

struct event {
	uint64_t id;
	uint32_t key; /* writer << 16 | stack: its frames derive from it */
};

struct writer {
	pthread_t th;
	unsigned int idx;
	pthread_mutex_t lock; /* the list: writer appends, exporter cuts and reads */
	struct event *ev;
	size_t nr, cap;
	size_t replayed, cut; /* exporter only */
	uint64_t puts, dropped;
};

static struct calltrace_storage *storage;
static struct writer writers[WRITERS];
static _Atomic bool stop;

/* ids handed over by the last rotation, open-addressed; cleared per rotation */
static const struct calltrace *handed[MAP_SLOTS];
static size_t used[MAP_SLOTS / 2]; /* the slots filled, to clear only them */
static size_t nr_handed;

static void stack_of(uint32_t key, __u64 *frames)
{
	for (unsigned int i = 0; i < DEPTH; i++)
		frames[i] = 0x400000ull + (uint64_t)key * 64 + i;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t rng = (w->idx + 1) * 0x9e3779b97f4a7c15ull;
	__u64 frames[DEPTH];
	uint32_t key;
	uint64_t id;
	long hold;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		key = w->idx << 16 | (uint32_t)(rng % POOL);
		stack_of(key, frames);
		id = calltrace_storage__put_held(storage, 1000 + w->idx, 0, frames, 0, DEPTH, 0,
						 &hold);
		if (id == CALLTRACE_DROPPED_TRACE_ID) {
			calltrace_storage__release(storage, hold);
			w->dropped++;
			continue;
		}
		w->puts++;
		if (!(rng >> 32 & YIELD_MASK))
			sched_yield();
		pthread_mutex_lock(&w->lock);
		if (w->nr == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 4096;
			struct event *ev = realloc(w->ev, cap * sizeof(*ev));

			if (!ev) {
				pthread_mutex_unlock(&w->lock);
				calltrace_storage__release(storage, hold);
				fprintf(stderr, "stress_liveness: out of memory\n");
				exit(1);
			}
			w->ev = ev;
			w->cap = cap;
		}
		w->ev[w->nr++] = (struct event){id, key};
		pthread_mutex_unlock(&w->lock);
		calltrace_storage__release(storage, hold);
	}
	return NULL;
}

static size_t map_slot(uint64_t id)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 47) & (MAP_SLOTS - 1);
}

static void on_trace(void *ctx, const struct calltrace *t)
{
	size_t i = map_slot(t->trace_id);

	(void)ctx;
	if (nr_handed == MAP_SLOTS / 2) {
		fprintf(stderr, "stress_liveness: more traces handed over than sized for\n");
		exit(1);
	}
	while (handed[i])
		i = (i + 1) & (MAP_SLOTS - 1);
	handed[i] = t;
	used[nr_handed++] = i;
}

static const struct calltrace *map_find(uint64_t id)
{
	for (size_t i = map_slot(id); handed[i]; i = (i + 1) & (MAP_SLOTS - 1))
		if (handed[i]->trace_id == id)
			return handed[i];
	return NULL;
}

/* traces__liveness(): the ids of events past the cut */
static void checker(void *ctx, struct trace_id_set *preserve)
{
	(void)ctx;
	for (unsigned int w = 0; w < WRITERS; w++) {
		struct writer *wr = &writers[w];

		pthread_mutex_lock(&wr->lock);
		for (size_t i = wr->cut; i < wr->nr; i++)
			trace_id_set__add(preserve, wr->ev[i].id);
		pthread_mutex_unlock(&wr->lock);
	}
}

static bool stack_is(const struct calltrace *t, uint32_t key)
{
	__u64 frames[DEPTH];

	stack_of(key, frames);
	return t->nr_kframes == 0 && t->nr_uframes == DEPTH && t->pid == 1000 + (key >> 16) &&
	       !memcmp(t->frames, frames, sizeof(frames));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	const char *env = getenv("STRESS_SECONDS");
	double seconds = env ? atof(env) : 3, end;
	struct timespec pace = {0, ROTATE_MS * 1000000L};
	struct calltrace_storage_opts o = {.capacity = CAPACITY, .hazard_slots = 256};
	struct calltrace_storage_stats st;
	uint64_t replayed = 0, lost = 0, wrong = 0, rotations = 0, puts = 0, dropped = 0;
	size_t handed_max = 0;

	storage = calltrace_storage__new_opts(&o);
	if (!storage || calltrace_storage__register_liveness(storage, checker, NULL)) {
		fprintf(stderr, "stress_liveness: setup failed\n");
		return 1;
	}
	for (unsigned int w = 0; w < WRITERS; w++) {
		writers[w].idx = w;
		pthread_mutex_init(&writers[w].lock, NULL);
		if (pthread_create(&writers[w].th, NULL, writer_main, &writers[w])) {
			fprintf(stderr, "stress_liveness: pthread_create failed\n");
			return 1;
		}
	}
	end = now_s() + seconds;
	while (now_s() < end) {
		nanosleep(&pace, NULL);
		/* the cut: what each list holds now is this interval's */
		for (unsigned int w = 0; w < WRITERS; w++) {
			pthread_mutex_lock(&writers[w].lock);
			writers[w].cut = writers[w].nr;
			pthread_mutex_unlock(&writers[w].lock);
		}
		while (nr_handed)
			handed[used[--nr_handed]] = NULL;
		calltrace_storage__process(storage, on_trace, NULL);
		rotations++;
		if (nr_handed > handed_max)
			handed_max = nr_handed;
		/* the replay: every event before the cut finds its own stack */
		for (unsigned int w = 0; w < WRITERS; w++) {
			struct writer *wr = &writers[w];

			pthread_mutex_lock(&wr->lock);
			for (size_t i = wr->replayed; i < wr->cut; i++) {
				const struct calltrace *t = map_find(wr->ev[i].id);

				if (!t)
					t = calltrace_storage__lookup(storage, wr->ev[i].id);
				replayed++;
				if (!t) {
					if (!lost++)
						fprintf(stderr,
							"stress_liveness: rotation %llu: event "
							"%zu of writer %u: stack %#llx freed\n",
							(unsigned long long)rotations, i, w,
							(unsigned long long)wr->ev[i].id);
				} else if (!stack_is(t, wr->ev[i].key)) {
					wrong++;
				}
			}
			/* keep the lists short: drop what is replayed */
			if (wr->cut)
				memmove(wr->ev, wr->ev + wr->cut,
					(wr->nr - wr->cut) * sizeof(*wr->ev));
			wr->nr -= wr->cut;
			wr->cut = 0;
			wr->replayed = 0;
			pthread_mutex_unlock(&wr->lock);
		}
	}
	atomic_store(&stop, true);
	for (unsigned int w = 0; w < WRITERS; w++) {
		pthread_join(writers[w].th, NULL);
		puts += writers[w].puts;
		dropped += writers[w].dropped;
		free(writers[w].ev);
		pthread_mutex_destroy(&writers[w].lock);
	}
	calltrace_storage__stats(storage, &st);
	calltrace_storage__free(storage);
	printf("stress_liveness: %u writers, %llu rotations every %d ms, %llu puts (%llu dropped), "
	       "%llu events replayed, %zu traces at most per hand-over; %llu stacks freed under "
	       "an event, %llu wrong; preserve_dropped %llu, hazard_timeouts %llu\n",
	       WRITERS, (unsigned long long)rotations, ROTATE_MS, (unsigned long long)puts,
	       (unsigned long long)dropped, (unsigned long long)replayed, handed_max,
	       (unsigned long long)lost, (unsigned long long)wrong,
	       (unsigned long long)st.preserve_dropped, (unsigned long long)st.hazard_timeouts);
	if (lost || wrong || dropped || st.preserve_dropped || st.hazard_timeouts ||
	    rotations < 10 || !replayed) {
		printf("stress_liveness: FAIL\n");
		return 1;
	}
	return 0;
}
