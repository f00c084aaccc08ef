// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stress for calltrace_storage: WRITERS threads put (new stacks, their own
 * repeated stacks and repeated stacks they all share)
 * while the main thread rotates ROTATIONS times, with a liveness checker that
 * keeps a few ids alive for LIVE_ROTATIONS rotations.  Built under TSan and
 * under ASan+UBSan.  Exact accounting, checked after the run:
 *  - every put that returned an id logged (id, stack, completed rotations
 *    before, started rotations after); the id must first be handed over by a
 *    rotation in (completed-before, started-after + 1], carrying that stack;
 *  - an id is handed over in consecutive rotations only, once per rotation,
 *    and for exactly as long as the checker kept it live;
 *  - every id handed over was returned by some put (no phantom traces), and
 *    the storage's put and drop counters equal the writers' own counts.
 * Prints one line; exits 1 on failure.
 * Environment: STRESS_ROTATIONS (default 5000).
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "storage/calltrace_storage.h"
#include "util/hash.h"

#define WRITERS		  3
#define PUTS_PER_INTERVAL 48 /* per writer between two rotations */
#define POOL		  32 /* repeated stacks per writer */
#define SHARED_POOL	  16 /* repeated stacks every writer puts */
#define MARK_ONE_IN	  64 /* puts whose id the writer reports live */
#define LIVE_ROTATIONS	  3  /* the checker keeps a reported id this long */
#define CAPACITY	  128
#define ARENA_BYTES	  16384
#define MAX_DEPTH	  191
#define PACE_PUTS	  32	 /* puts the rotator waits for between rotations */
#define PACE_MAX_S	  0.0005 /* ... but no longer than this */

struct put_rec {
	uint64_t id;
	uint64_t key;
	uint32_t completed_before;
	uint32_t started_after;
};

struct writer {
	pthread_t th;
	unsigned int idx;
	uint64_t rng;
	struct put_rec *log;
	size_t n, cap;
	uint64_t ok, dropped;
	uint64_t next_unique;
	/* ids reported live, drained by the liveness checker */
	pthread_mutex_t lock;
	uint64_t *pending;
	size_t nr_pending, cap_pending;
};

/* one per id handed over (or reported live) */
struct entry {
	uint64_t id;
	uint64_t key;
	uint32_t first, last, count; /* rotations handing it over */
	uint32_t live_from, live_to; /* rotations whose preserve set holds it */
	bool live;
	bool returned; /* some put returned it */
};

#if defined(__SANITIZE_THREAD__)
#define STRESS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STRESS_TSAN 1
#endif
#endif
#ifdef STRESS_TSAN
/* a race fails the run at once, not after an "ok" line */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "halt_on_error=1";
}
#endif

static struct calltrace_storage *storage;
static struct writer writers[WRITERS];
static _Atomic uint32_t started, completed;
static atomic_ulong puts_done; /* all writers, for the rotator's pacing */
static atomic_bool stop;

static struct entry *map;
static size_t map_mask, map_count;
static uint64_t *live_ids;
static size_t nr_live, cap_live;
static uint32_t rotation; /* the one in progress, for the callbacks */
static size_t handed;

static unsigned long failures;
static char first_failure[256];

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (!failures++) {
		va_start(ap, fmt);
		vsnprintf(first_failure, sizeof(first_failure), fmt, ap);
		va_end(ap);
	}
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* a stack is a pure function of its key: any mix-up or overwrite shows */
static unsigned int key_depth(uint64_t key)
{
	uint64_t d = hash_u64(key);

	return (d & 15) ? 1 + (d >> 8) % 24 : 100 + (d >> 8) % (MAX_DEPTH - 99);
}

static void key_stack(uint64_t key, __u64 *frames, uint16_t *nk, uint16_t *nu, uint32_t *pid)
{
	unsigned int i, depth = key_depth(key);

	frames[0] = key;
	for (i = 1; i < depth; i++)
		frames[i] = key * 0x9e3779b97f4a7c15ULL + i;
	*nk = depth / 3 < 64 ? depth / 3 : 64;
	*nu = depth - *nk;
	*pid = (uint32_t)(key >> 56);
}

static bool trace_matches(const struct calltrace *t, uint64_t key)
{
	__u64 frames[MAX_DEPTH];
	uint16_t nk, nu;
	uint32_t pid;

	key_stack(key, frames, &nk, &nu, &pid);
	return t->pid == pid && t->nr_kframes == nk && t->nr_uframes == nu && t->flags == 0 &&
	       !memcmp(t->frames, frames, (size_t)(nk + nu) * sizeof(frames[0]));
}

static struct entry *map_get(uint64_t id, bool create)
{
	size_t i = hash_u64(id) & map_mask;

	while (map[i].id && map[i].id != id)
		i = (i + 1) & map_mask;
	if (map[i].id || !create)
		return map[i].id ? &map[i] : NULL;
	if (++map_count > map_mask / 2) {
		fprintf(stderr, "stress_calltrace_storage: FAIL: id map full\n");
		exit(1);
	}
	map[i].id = id;
	return &map[i];
}

static void *writer_run(void *arg)
{
	struct writer *w = arg;
	uint32_t interval = UINT32_MAX, cur, done = 0;
	__u64 frames[MAX_DEPTH];
	uint16_t nk, nu;
	uint32_t pid;
	uint64_t r, key, id;
	struct put_rec *rec;

	while (!atomic_load(&stop) && w->n < w->cap) {
		cur = atomic_load(&started);
		if (cur != interval) {
			interval = cur;
			done = 0;
		} else if (done >= PUTS_PER_INTERVAL) {
			/* keep the puts spread over all rotations */
			sched_yield();
			continue;
		}
		r = next_rand(&w->rng);
		key = (uint64_t)(w->idx + 1) << 56;
		if (r % 4 == 0)
			key |= w->next_unique++;
		else if (r % 4 == 1)
			key = 1ull << 55 | (r >> 8) % SHARED_POOL; /* all writers race on these */
		else
			key |= 1ull << 55 | (r >> 8) % POOL;
		key_stack(key, frames, &nk, &nu, &pid);
		rec = &w->log[w->n++];
		rec->key = key;
		rec->completed_before = atomic_load(&completed);
		id = calltrace_storage__put(storage, pid, 0, frames, nk, nu, 0);
		rec->started_after = atomic_load(&started);
		rec->id = id;
		done++;
		atomic_fetch_add_explicit(&puts_done, 1, memory_order_relaxed);
		if (id == CALLTRACE_DROPPED_TRACE_ID) {
			w->dropped++;
			continue;
		}
		w->ok++;
		if ((r >> 32) % MARK_ONE_IN)
			continue;
		pthread_mutex_lock(&w->lock);
		if (w->nr_pending == w->cap_pending) {
			w->cap_pending = w->cap_pending ? 2 * w->cap_pending : 64;
			w->pending = realloc(w->pending, w->cap_pending * sizeof(*w->pending));
			if (!w->pending) {
				fprintf(stderr, "stress_calltrace_storage: FAIL: out of memory\n");
				exit(1);
			}
		}
		w->pending[w->nr_pending++] = id;
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

/* live from the rotation that first drains it until LIVE_ROTATIONS after the last */
static void checker(void *ctx, struct trace_id_set *preserve)
{
	struct entry *e;
	size_t i, j, n;
	int w;

	for (w = 0; w < WRITERS; w++) {
		pthread_mutex_lock(&writers[w].lock);
		for (i = 0; i < writers[w].nr_pending; i++) {
			e = map_get(writers[w].pending[i], true);
			if (!e->live) {
				e->live = true;
				e->live_from = rotation;
				e->live_to = rotation + LIVE_ROTATIONS;
			} else if (rotation <= e->live_to + 1) {
				e->live_to = rotation + LIVE_ROTATIONS;
			} else {
				continue; /* the checker let it go: stays gone */
			}
			if (nr_live == cap_live) {
				cap_live = cap_live ? 2 * cap_live : 1024;
				live_ids = realloc(live_ids, cap_live * sizeof(*live_ids));
				if (!live_ids) {
					fprintf(stderr,
						"stress_calltrace_storage: FAIL: out of memory\n");
					exit(1);
				}
			}
			live_ids[nr_live++] = e->id;
		}
		writers[w].nr_pending = 0;
		pthread_mutex_unlock(&writers[w].lock);
	}
	/* drop expired and duplicate entries, report the rest */
	for (i = j = 0, n = nr_live; i < n; i++) {
		e = map_get(live_ids[i], false);
		if (rotation > e->live_to || trace_id_set__contains(preserve, e->id))
			continue;
		if (trace_id_set__add(preserve, e->id))
			fail("trace_id_set__add failed at rotation %u", rotation);
		live_ids[j++] = e->id;
	}
	nr_live = j;
}

static void on_trace(void *ctx, const struct calltrace *t)
{
	struct entry *e = map_get(t->trace_id, true);

	handed++;
	if (!(t->trace_id >> 32) || t->nr_kframes + t->nr_uframes < 1) {
		fail("id %#llx: reserved, or an empty stack", (unsigned long long)t->trace_id);
		return;
	}
	if (!e->count) {
		e->key = t->frames[0];
		e->first = e->last = rotation;
		e->count = 1;
	} else if (e->last == rotation) {
		fail("id %#llx twice in rotation %u", (unsigned long long)e->id, rotation);
		return;
	} else if (e->last + 1 != rotation) {
		fail("id %#llx back in rotation %u after %u", (unsigned long long)e->id, rotation,
		     e->last);
		return;
	} else {
		e->last = rotation;
		e->count++;
	}
	if (t->frames[0] != e->key || !trace_matches(t, e->key))
		fail("id %#llx carries a wrong or torn stack in rotation %u",
		     (unsigned long long)e->id, rotation);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* on a loaded machine, let the writers put something into every interval */
static void pace(void)
{
	unsigned long target = atomic_load(&puts_done) + PACE_PUTS;
	double until = now_s() + PACE_MAX_S;

	while (atomic_load(&puts_done) < target && !atomic_load(&stop) && now_s() < until)
		sched_yield();
}

static void rotate(void)
{
	size_t before = handed, n;

	rotation++;
	atomic_store(&started, rotation);
	n = calltrace_storage__process(storage, on_trace, NULL);
	if (n != handed - before)
		fail("process() said %zu traces, handed %zu", n, handed - before);
	atomic_store(&completed, rotation);
}

static void verify(uint64_t *puts, uint64_t *dropped, size_t *ids, size_t *kept)
{
	struct calltrace_storage_stats st;
	const struct put_rec *r;
	struct entry *e;
	uint32_t last;
	size_t i;
	int w;

	*puts = *dropped = 0;
	for (w = 0; w < WRITERS; w++) {
		if (writers[w].ok + writers[w].dropped != writers[w].n)
			fail("writer %d: %llu ok + %llu dropped != %zu puts", w,
			     (unsigned long long)writers[w].ok,
			     (unsigned long long)writers[w].dropped, writers[w].n);
		*puts += writers[w].ok;
		*dropped += writers[w].dropped;
		for (i = 0; i < writers[w].n; i++) {
			r = &writers[w].log[i];
			if (r->id == CALLTRACE_DROPPED_TRACE_ID)
				continue;
			e = map_get(r->id, false);
			if (!e || !e->count) {
				fail("writer %d put %zu: id %#llx never handed over", w, i,
				     (unsigned long long)r->id);
				continue;
			}
			e->returned = true;
			if (e->key != r->key)
				fail("id %#llx: put stack %#llx, handed over %#llx",
				     (unsigned long long)r->id, (unsigned long long)r->key,
				     (unsigned long long)e->key);
			if (e->first <= r->completed_before || e->first > r->started_after + 1)
				fail("id %#llx: put between rotations %u and %u, first handed over "
				     "in %u",
				     (unsigned long long)r->id, r->completed_before,
				     r->started_after + 1, e->first);
		}
	}
	*ids = *kept = 0;
	for (i = 0; i <= map_mask; i++) {
		e = &map[i];
		if (!e->id || !e->count)
			continue;
		(*ids)++;
		if (!e->returned)
			fail("id %#llx handed over, never returned by a put",
			     (unsigned long long)e->id);
		last = e->first;
		if (e->live && e->live_from <= e->first && e->first <= e->live_to)
			last = e->live_to + 1 < rotation ? e->live_to + 1 : rotation;
		if (e->last != last || e->count != e->last - e->first + 1)
			fail("id %#llx handed over in rotations %u..%u (%u times), expected "
			     "%u..%u (live %u..%u)",
			     (unsigned long long)e->id, e->first, e->last, e->count, e->first, last,
			     e->live ? e->live_from : 0, e->live ? e->live_to : 0);
		*kept += e->count - 1;
	}
	calltrace_storage__stats(storage, &st);
	if (st.puts != *puts || st.dropped != *dropped)
		fail("storage counted %llu puts, %llu dropped; writers %llu, %llu",
		     (unsigned long long)st.puts, (unsigned long long)st.dropped,
		     (unsigned long long)*puts, (unsigned long long)*dropped);
	if (st.hazard_timeouts || st.preserve_dropped || st.tables_retired)
		fail("%llu hazard timeouts, %llu preserve drops, %llu tables retired",
		     (unsigned long long)st.hazard_timeouts,
		     (unsigned long long)st.preserve_dropped,
		     (unsigned long long)st.tables_retired);
	if (st.rotations != rotation)
		fail("%llu rotations counted, %u done", (unsigned long long)st.rotations, rotation);
}

int main(void)
{
	/*
	 * A hazard wait that times out may lose a trace (counted, and covered by
	 * the unit tests); on a machine loaded by others a writer can stall past
	 * the default second, so give exact accounting a bound past our budget.
	 */
	struct calltrace_storage_opts opts = {
		.capacity = CAPACITY,
		.arena_bytes = ARENA_BYTES,
		.hazard_wait_ms = 30000,
	};
	const char *env = getenv("STRESS_ROTATIONS");
	uint32_t rotations = env ? (uint32_t)strtoul(env, NULL, 10) : 5000;
	struct calltrace_storage_stats st;
	uint64_t puts, dropped;
	size_t ids, kept, map_size = 1024;
	struct timespec t0, t1;
	int w, i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	storage = calltrace_storage__new_opts(&opts);
	while (map_size < 2 * (size_t)(rotations + 16) * CAPACITY)
		map_size <<= 1;
	map = calloc(map_size, sizeof(*map));
	map_mask = map_size - 1;
	if (!storage || !map || calltrace_storage__register_liveness(storage, checker, NULL)) {
		fprintf(stderr, "stress_calltrace_storage: FAIL: setup\n");
		return 1;
	}
	for (w = 0; w < WRITERS; w++) {
		writers[w].idx = w;
		writers[w].rng = 0x2545f4914f6cdd1dULL * (w + 1);
		writers[w].cap = (size_t)(rotations + 2) * PUTS_PER_INTERVAL;
		writers[w].log = malloc(writers[w].cap * sizeof(*writers[w].log));
		pthread_mutex_init(&writers[w].lock, NULL);
		if (!writers[w].log ||
		    pthread_create(&writers[w].th, NULL, writer_run, &writers[w])) {
			fprintf(stderr, "stress_calltrace_storage: FAIL: setup\n");
			return 1;
		}
	}
	while (rotation < rotations) {
		pace();
		rotate();
	}
	atomic_store(&stop, true);
	for (w = 0; w < WRITERS; w++)
		pthread_join(writers[w].th, NULL);
	/* hand over the last puts and let every live id run out */
	for (i = 0; i < LIVE_ROTATIONS + 3; i++)
		rotate();

	verify(&puts, &dropped, &ids, &kept);
	calltrace_storage__stats(storage, &st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("stress_calltrace_storage: %s: %u rotations, %d writers, %llu puts, %llu dropped "
	       "(table %llu, arena %llu, hazard %llu), %zu ids, %zu preserved hand-overs, "
	       "%llu busy skips, %llu hazard waits (%llu timed out, longest %.1f ms), %.2fs%s%s "
	       "(%lu failures)\n",
	       failures ? "FAIL" : "ok", rotation, WRITERS, (unsigned long long)(puts + dropped),
	       (unsigned long long)dropped, (unsigned long long)st.dropped_table_full,
	       (unsigned long long)st.dropped_arena_full,
	       (unsigned long long)st.dropped_no_hazard_slot, ids, kept,
	       (unsigned long long)st.busy_skips, (unsigned long long)st.hazard_waits,
	       (unsigned long long)st.hazard_timeouts, st.hazard_wait_max_ns / 1e6,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       failures ? ": " : "", failures ? first_failure : "", failures);
	calltrace_storage__free(storage);
	for (w = 0; w < WRITERS; w++) {
		free(writers[w].log);
		free(writers[w].pending);
		pthread_mutex_destroy(&writers[w].lock);
	}
	free(map);
	free(live_ids);
	return failures ? 1 : 0;
}
