// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stress for libctxprof under ThreadSanitizer, two phases.
 *
 * context: WRITERS threads publish (x, x ^ K_PAIR) as fast as they can
 *   while a reader thread copies the other threads' slots through the
 *   collector's reader, checksum first, like the sampler, then loads the
 *   checksum again.  Invariants: every copy the reader accepts is a pair
 *   written together, root == span ^ K_PAIR (else bad: fails); a copy the
 *   reader rejects as torn while the checksum stayed the same across it
 *   means a write published outside its checksum-0 window (torn: fails, on
 *   x86 where stores reach the reader in order).  Copies a write overlapped
 *   (checksum changed: raced) and in-progress ones (busy) are counted.  A
 *   writer that skips the zeroing, or stores a field after the checksum, or
 *   a reader that skips the validation, fails this test.
 * lanes: a producer thread emits span events and churn threads register,
 *   emit, intern tags and exit (max_threads 4: slots are recycled) while a
 *   consumer thread drains the region; per slot generation the event seq
 *   must only grow, and at the end every record written was delivered
 *   (written == delivered) and none vanished (written + dropped + refused
 *   covers every span event emitted by a registered thread, and the tags).
 *   At 60 % of the phase the main thread calls ctxprof_shutdown() while the
 *   others go on: 100 ms later nothing more is written and no thread
 *   registers (the registry's shutdown_requested), events are refused and
 *   counted in the slots (events_refused), the collector saw the flag, and
 *   what was written before is still delivered whole.
 * rivals: the lanes phase with two consumers (two collectors on one region,
 *   as in a rolling update) that take the lanes from each other: every 64
 *   passes one moves the shared clock past the other's heartbeat by more
 *   than CTXPROF_CONSUMER_STALE_NS and drains, taking over.  Their passes
 *   do not overlap (a mutex): a real takeover needs the other silent for
 *   5 s, and a consumer stopped in the middle of a ring for that long reads
 *   the ring after it lost it, a race no protocol can take from a stopped
 *   process (its writes are what the token stops: test_ctxprof_region's
 *   taken_over_mid_pass test).  Invariants across the takeovers: every
 *   record written is delivered exactly once (written == delivered by both),
 *   seqs only grow per consumer, the library never meets a free-queue entry
 *   it did not hand out (bad_free_entries), neither consumer finds the
 *   queues out of step, a consumer refused writes no heartbeat (else the
 *   other could never take over: takeovers happen both ways).
 *
 * Prints "writes=N reads=N raced=N torn=N bad=N busy=N writes_per_s=N", a lanes
 * and a rivals line; exits 1 on any failure.
 * Usage: stress_ctxprof_tsan [--seconds N]   (default 2: about 3 s in all)
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxprof.h"
#include "ctxprof_abi.h"
#include "appctx/ctxprof_region.h"
#include "internal.h"

#define WRITERS	      2
#define K_PAIR	      0x5a5a5a5a12345678ull
#define CHURNERS      2
#define LANE_SLOTS    4
#define MAX_GEN_SLOTS LANE_SLOTS

#if defined(__x86_64__) || defined(__i386__)
#define TSO 1 /* stores reach other CPUs in program order */
#else
#define TSO 0
#endif

static atomic_bool stop;
static int failures;

static void failf(const char *msg, uint64_t a, uint64_t b)
{
	fprintf(stderr, "stress_ctxprof: FAIL %s (%" PRIu64 ", %" PRIu64 ")\n", msg, a, b);
	failures++;
}

/* ------------------------------------------------------------------------ */
/* phase 1: context protocol                                                  */

struct writer {
	pthread_t th;
	uint32_t id;
	atomic_int slot;
	uint64_t writes;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t x = (uint64_t)(w->id + 1) << 48, n = 0;

	ctxprof_register_thread();
	atomic_store(&w->slot, ctxprof__current_thread()->index);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int i;

		for (i = 0; i < 256; i++, x++)
			ctxprof_set_context(x, x ^ K_PAIR);
		n += 256;
	}
	w->writes = n;
	return NULL;
}

struct reader {
	pthread_t th;
	struct writer *writers;
	uint64_t reads, raced, torn, busy, bad;
};

/*
 * One copy through the collector's reader, then the checksum again.  If the
 * checksum changed under the copy, a write overlapped it: the copy is
 * discarded (raced), as a sampler on another CPU would have to.  A copy the
 * reader calls torn while the checksum stayed put is a write that published
 * fields outside its window (checksum not zeroed first, or a field stored
 * after the final checksum): the protocol is broken and the run fails.  That
 * split needs the writer's stores to reach this CPU in program order: true on
 * x86 (TSO); elsewhere the writer orders its stores only for its own CPU
 * (see lib/ctxprof/ctxprof.c), so a cross-CPU torn copy is only counted.
 */
static int read_once(const void *base, const struct ctxprof_region_geom *g, int slot,
		     struct ctxprof_context *c)
{
	const struct ctxprof_context *live =
		(const void *)((const char *)base + ctxprof_region__slot_offset(g, slot) +
			       offsetof(struct ctxprof_slot, context));
	int ret = ctxprof_region__read_context(base, g, slot, c);

	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit((_Atomic uint64_t *)&live->checksum, memory_order_relaxed) !=
	    c->checksum)
		return ret == CTXPROF_CONTEXT_OK ? ret : -1; /* -1: raced */
	return ret;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct ctxprof_region_geom g;
	struct ctxprof_context c;
	size_t size;
	void *base = ctxprof__region(&size);
	int i;

	if (!base || ctxprof_region__validate(base, size, &g, NULL)) {
		failf("region invalid", 0, 0);
		return NULL;
	}
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (i = 0; i < WRITERS; i++) {
			int slot = atomic_load(&r->writers[i].slot);

			if (slot < 0)
				continue;
			r->reads++;
			switch (read_once(base, &g, slot, &c)) {
			case CTXPROF_CONTEXT_OK:
				/* the initial (0, 0) or a pair some writer published */
				if (c.local_root_span_id != (c.span_id ^ K_PAIR) &&
				    (c.span_id || c.local_root_span_id)) {
					if (!r->bad++)
						failf("accepted a pair never written together",
						      c.span_id, c.local_root_span_id);
				}
				break;
			case -1:
				r->raced++;
				break;
			case CTXPROF_CONTEXT_EMPTY:
				r->busy++;
				break;
			case CTXPROF_CONTEXT_TORN:
				r->torn++;
				break;
			default:
				failf("bad slot", slot, 0);
				return NULL;
			}
		}
	}
	return NULL;
}

static uint64_t now_ns(void)
{
	return ctxprof_now_ns();
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {ns / 1000000000ull, ns % 1000000000ull};

	nanosleep(&ts, NULL);
}

static void phase_context(double seconds)
{
	struct writer w[WRITERS];
	struct reader r = {.writers = w};
	uint64_t writes = 0, t0, t1;
	int i;

	ctxprof__reset();
	atomic_store(&stop, false);
	for (i = 0; i < WRITERS; i++) {
		w[i].id = i;
		w[i].writes = 0;
		atomic_store(&w[i].slot, -1);
		pthread_create(&w[i].th, NULL, writer_main, &w[i]);
	}
	/* the reader needs the region: the writers create it */
	while (!ctxprof__region(NULL))
		sleep_ns(1000000);
	t0 = now_ns();
	pthread_create(&r.th, NULL, reader_main, &r);
	sleep_ns(seconds * 1e9);
	atomic_store(&stop, true);
	for (i = 0; i < WRITERS; i++) {
		pthread_join(w[i].th, NULL);
		writes += w[i].writes;
	}
	t1 = now_ns();
	pthread_join(r.th, NULL);
	printf("writes=%" PRIu64 " reads=%" PRIu64 " raced=%" PRIu64 " torn=%" PRIu64
	       " bad=%" PRIu64 " busy=%" PRIu64 " writes_per_s=%.0f\n",
	       writes, r.reads, r.raced, r.torn, r.bad, r.busy, writes / ((t1 - t0) / 1e9));
	if (!r.reads)
		failf("the reader never ran", 0, 0);
	if (r.torn && TSO)
		failf("torn copies with a steady checksum (reads, torn)", r.reads, r.torn);
	if (!r.raced && !r.busy)
		fprintf(stderr, "stress_ctxprof: note: no overlapped read seen (one CPU?)\n");
}

/* ------------------------------------------------------------------------ */
/* phase 2: lanes, registration churn                                         */

static atomic_uint_fast64_t emitted;

struct consumer {
	pthread_t th;
	uint64_t events, tags, seq_errors, passes;
	uint32_t gen[MAX_GEN_SLOTS];
	int64_t last_seq[MAX_GEN_SLOTS];
	struct ctxprof_region_stats st;
	struct ctxprof_region_geom g;
	void *base;
};

static void on_event(void *ctx, const struct ctxprof_slot_view *slot,
		     const struct ctxprof_span_event *ev)
{
	struct consumer *c = ctx;

	c->events++;
	if (slot->index >= MAX_GEN_SLOTS)
		return;
	if (c->gen[slot->index] != slot->generation) {
		c->gen[slot->index] = slot->generation;
		c->last_seq[slot->index] = -1;
	}
	if ((int64_t)ev->seq <= c->last_seq[slot->index]) {
		if (!c->seq_errors++)
			failf("seq went backwards", ev->seq, c->last_seq[slot->index]);
	}
	c->last_seq[slot->index] = ev->seq;
}

static void on_tag(void *ctx, const struct ctxprof_slot_view *slot, uint32_t id, const char *key,
		   uint32_t key_len, const char *value, uint32_t value_len)
{
	struct consumer *c = ctx;

	c->tags++;
	if (key_len != 5 || memcmp(key, "churn", 5))
		failf("tag record garbled", key_len, id);
}

static const struct ctxprof_drain_ops ops = {.span_event = on_event, .tag = on_tag};

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		ctxprof_region__drain(c->base, &c->g, now_ns(), &ops, c, &c->st);
		c->passes++;
		sleep_ns(50000);
	}
	return NULL;
}

static void *producer_main(void *arg)
{
	uint64_t i;

	for (i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		ctxprof_span_enter(i + 1, 1);
		ctxprof_span_exit(i + 1, 0);
		atomic_fetch_add(&emitted, 2);
		if (i % 16 == 0)
			sleep_ns(10000); /* let the consumer keep up, mostly */
	}
	return NULL;
}

static void *churn_once(void *arg)
{
	uintptr_t n = (uintptr_t)arg;
	char value[16];

	snprintf(value, sizeof(value), "%u", (unsigned)(n % 8));
	ctxprof_set_tag(0, ctxprof_intern_tag("churn", value));
	ctxprof_span_enter(n, n);
	ctxprof_span_exit(n, 0);
	/* only a registered thread's events count as emitted; refused ones are dropped */
	if (ctxprof__current_thread())
		atomic_fetch_add(&emitted, 2);
	return NULL;
}

static void *churner_main(void *arg)
{
	uintptr_t n = (uintptr_t)arg * 1000000;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_t th;

		pthread_create(&th, NULL, churn_once, (void *)n++);
		pthread_join(th, NULL);
	}
	return NULL;
}

static void phase_lanes(double seconds)
{
	struct ctxprof_options o = {
		.sz = sizeof(o),
		.max_threads = LANE_SLOTS,
		.index_rings = 4,
		.index_ring_size = 512,
		.flush_interval_ns = 200000,
	};
	struct consumer *c = calloc(1, sizeof(*c));
	pthread_t prod, churn[CHURNERS];
	struct ctxprof_stats st, settled;
	uint64_t refused = 0;
	size_t size;
	int i;

	ctxprof__reset();
	atomic_store(&emitted, 0);
	if (!c || ctxprof_init(&o)) {
		failf("init", 0, 0);
		free(c);
		return;
	}
	c->base = ctxprof__region(&size);
	if (ctxprof_region__validate(c->base, size, &c->g, NULL)) {
		failf("region invalid", 0, 0);
		free(c);
		return;
	}
	atomic_store(&stop, false);
	/*
	 * A first pass before any thread registers: until a heartbeat exists
	 * the library counts the collector as absent and recycles undrained
	 * slots, as it must when nobody ever drains.
	 */
	ctxprof_region__drain(c->base, &c->g, now_ns(), &ops, c, &c->st);
	pthread_create(&c->th, NULL, consumer_main, c);
	pthread_create(&prod, NULL, producer_main, NULL);
	for (i = 0; i < CHURNERS; i++)
		pthread_create(&churn[i], NULL, churner_main, (void *)(uintptr_t)(i + 1));
	sleep_ns(seconds * 0.6e9);
	ctxprof_shutdown();
	/* a thread between its flag check and its commit has long finished */
	sleep_ns(100e6);
	ctxprof_get_stats(&settled);
	sleep_ns(seconds * 0.4e9);
	atomic_store(&stop, true);
	pthread_join(prod, NULL);
	for (i = 0; i < CHURNERS; i++)
		pthread_join(churn[i], NULL);
	pthread_join(c->th, NULL);
	/* every thread is gone: one last pass collects what they submitted at exit */
	ctxprof_region__drain(c->base, &c->g, now_ns(), &ops, c, &c->st);

	ctxprof_get_stats(&st);
	/* no slot was recycled after the shutdown, so the slots hold every refusal */
	for (i = 0; i < LANE_SLOTS; i++)
		refused += ((struct ctxprof_slot *)((char *)c->base +
						    ctxprof_region__slot_offset(&c->g, i)))
				   ->events_refused;
	if (st.events_written != settled.events_written)
		failf("written after the shutdown", st.events_written, settled.events_written);
	if (st.registrations != settled.registrations)
		failf("registered after the shutdown", st.registrations, settled.registrations);
	if (!refused || !c->st.shut_down)
		failf("shutdown not seen (refused, collector passes)", refused, c->st.shut_down);
	printf("lanes: emitted=%" PRIu64 " delivered=%" PRIu64 " tags=%" PRIu64 " written=%" PRIu64
	       " dropped=%" PRIu64 " registrations=%" PRIu64 " rejected=%" PRIu64
	       " reclaimed=%" PRIu64 " passes=%" PRIu64 " malformed=%" PRIu64 " refused=%" PRIu64
	       "\n",
	       (uint64_t)atomic_load(&emitted), c->events, c->tags, st.events_written,
	       st.events_dropped, st.registrations, st.registrations_rejected, st.slots_reclaimed,
	       c->passes,
	       c->st.bad_queue + c->st.bad_ring_index + c->st.bad_ring_used + c->st.bad_record +
		       c->st.free_queue_full + c->st.bad_slot_state,
	       refused);
	if (st.events_written != c->events + c->tags)
		failf("written != delivered", st.events_written, c->events + c->tags);
	/* dictionary records may be dropped and retried: only a bound for them */
	if (st.events_written + st.events_dropped + refused < atomic_load(&emitted) + c->tags)
		failf("written + dropped + refused < emitted",
		      st.events_written + st.events_dropped + refused,
		      atomic_load(&emitted) + c->tags);
	if (c->st.bad_queue + c->st.bad_ring_index + c->st.bad_ring_used + c->st.bad_record +
	    c->st.free_queue_full + c->st.bad_slot_state)
		failf("reader found malformed data in an honest region", 0, 0);
	if (!st.slots_reclaimed)
		failf("no slot was recycled", 0, 0);
	free(c);
}

/* ------------------------------------------------------------------------ */
/* phase 3: two consumers taking the lanes from each other                    */

/* added to both rivals' clocks: moved on to make the other's heartbeat stale */
static atomic_uint_fast64_t clock_offset;
/* one pass at a time (see the top of the file) */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;

static void *rival_main(void *arg)
{
	struct consumer *c = arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_mutex_lock(&pass_lock);
		if (++c->passes % 64 == 0)
			atomic_fetch_add(&clock_offset, 2 * CTXPROF_CONSUMER_STALE_NS);
		ctxprof_region__drain(c->base, &c->g, now_ns() + atomic_load(&clock_offset), &ops,
				      c, &c->st);
		pthread_mutex_unlock(&pass_lock);
		sleep_ns(20000);
	}
	return NULL;
}

static uint64_t queue_errors(const struct ctxprof_region_stats *st)
{
	return st->bad_queue + st->bad_ring_index + st->bad_ring_used + st->bad_record +
	       st->free_queue_full + st->bad_slot_state;
}

static void phase_rivals(double seconds)
{
	struct ctxprof_options o = {
		.sz = sizeof(o),
		.max_threads = LANE_SLOTS,
		.index_rings = 4,
		.index_ring_size = 512,
		.flush_interval_ns = 200000,
	};
	struct consumer *c = calloc(2, sizeof(*c));
	pthread_t prod, churn[CHURNERS];
	struct ctxprof_stats st;
	uint64_t delivered;
	size_t size;
	int i;

	ctxprof__reset();
	atomic_store(&emitted, 0);
	if (!c || ctxprof_init(&o)) {
		failf("init", 0, 0);
		free(c);
		return;
	}
	for (i = 0; i < 2; i++) {
		c[i].base = ctxprof__region(&size);
		/* each validation makes its own token: two collectors */
		if (ctxprof_region__validate(c[i].base, size, &c[i].g, NULL)) {
			failf("region invalid", 0, 0);
			free(c);
			return;
		}
	}
	atomic_store(&stop, false);
	ctxprof_region__drain(c[0].base, &c[0].g, now_ns(), &ops, &c[0], &c[0].st);
	for (i = 0; i < 2; i++)
		pthread_create(&c[i].th, NULL, rival_main, &c[i]);
	pthread_create(&prod, NULL, producer_main, NULL);
	for (i = 0; i < CHURNERS; i++)
		pthread_create(&churn[i], NULL, churner_main, (void *)(uintptr_t)(i + 1));
	sleep_ns(seconds * 1e9);
	atomic_store(&stop, true);
	pthread_join(prod, NULL);
	for (i = 0; i < CHURNERS; i++)
		pthread_join(churn[i], NULL);
	for (i = 0; i < 2; i++)
		pthread_join(c[i].th, NULL);
	/* the last pass: whoever holds the lanes now (the clock moved on once more) */
	atomic_fetch_add(&clock_offset, 2 * CTXPROF_CONSUMER_STALE_NS);
	ctxprof_region__drain(c[0].base, &c[0].g, now_ns() + atomic_load(&clock_offset), &ops,
			      &c[0], &c[0].st);

	ctxprof_get_stats(&st);
	delivered = c[0].events + c[0].tags + c[1].events + c[1].tags;
	printf("rivals: written=%" PRIu64 " delivered=%" PRIu64 " takeovers=%" PRIu64
	       " refused=%" PRIu64 " lost=%" PRIu64 " bad_free=%" PRIu64 " queue_errors=%" PRIu64
	       "\n",
	       st.events_written, delivered,
	       c[0].st.consumer_takeovers + c[1].st.consumer_takeovers,
	       c[0].st.consumer_refused + c[1].st.consumer_refused,
	       c[0].st.consumer_lost + c[1].st.consumer_lost, st.bad_free_entries,
	       queue_errors(&c[0].st) + queue_errors(&c[1].st));
	if (st.bad_free_entries)
		failf("a ring came back to the library twice or unasked", st.bad_free_entries, 0);
	if (queue_errors(&c[0].st) + queue_errors(&c[1].st))
		failf("two consumers wrote one lane", queue_errors(&c[0].st),
		      queue_errors(&c[1].st));
	if (delivered != st.events_written)
		failf("rivals: written != delivered", st.events_written, delivered);
	if (!c[0].st.consumer_takeovers || !c[1].st.consumer_takeovers)
		failf("the rivals never took the lanes from each other", c[0].st.consumer_takeovers,
		      c[1].st.consumer_takeovers);
	free(c);
}

int main(int argc, char **argv)
{
	double seconds = 2;

	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		seconds = atof(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: %s [--seconds N]\n", argv[0]);
		return 2;
	}
	if (seconds <= 0)
		seconds = 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	phase_context(seconds);
	phase_lanes(seconds / 2);
	phase_rivals(seconds / 2);
	if (failures) {
		fprintf(stderr, "stress_ctxprof: %d failure(s)\n", failures);
		return 1;
	}
	printf("stress_ctxprof: ok\n");
	return 0;
}
