// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for libctxprof (lib/ctxprof/): the checksum, the context write
 * protocol, thread registration and slot reuse, the lanes' SPSC queues and
 * the tag dictionary, read back through the collector's reader
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

#define K_PAIR 0x5a5a5a5a12345678ull /* writers publish (x, x ^ K_PAIR) */

/* ------------------------------------------------------------------------ */
/* helpers                                                                    */

static int setup(void **state)
{
	ctxprof__reset();
	return 0;
}

static int teardown(void **state)
{
	ctxprof_unregister_thread();
	ctxprof__reset();
	return 0;
}

static void init_small(uint32_t max_threads, uint32_t index_rings, uint32_t index_ring_size)
{
	struct ctxprof_options o = {
		.sz = sizeof(o),
		.max_threads = max_threads,
		.index_rings = index_rings,
		.index_ring_size = index_ring_size,
	};

	assert_int_equal(ctxprof_init(&o), 0);
}

/* the live region, validated like the collector does */
/* the token of the collector these tests play */
#define TEST_CONSUMER 0x7e57ull

static void *region(struct ctxprof_region_geom *g)
{
	size_t size;
	void *base = ctxprof__region(&size);
	const char *why = NULL;

	assert_non_null(base);
	if (ctxprof_region__validate(base, size, g, &why))
		fail_msg("region invalid: %s", why);
	/* one collector across the test's validations: the lanes' one consumer */
	g->consumer_token = TEST_CONSUMER;
	return base;
}

static struct ctxprof_slot *slot_of(void *base, const struct ctxprof_region_geom *g, uint32_t i)
{
	return (struct ctxprof_slot *)((char *)base + ctxprof_region__slot_offset(g, i));
}

static uint32_t slot_state(const struct ctxprof_slot *s)
{
	return CTXPROF_SLOT_STATE(s->state_gen);
}

static uint32_t slot_gen(const struct ctxprof_slot *s)
{
	return CTXPROF_SLOT_GENERATION(s->state_gen);
}

/* the slot index of the calling thread, -1 without one */
static int my_slot(void)
{
	struct ctxprof_thread *t = ctxprof__current_thread();

	return t ? (int)t->index : -1;
}

#define MAX_SEEN 8192
struct seen {
	uint32_t nr_events;
	struct ctxprof_span_event ev[MAX_SEEN];
	uint32_t ev_slot[MAX_SEEN];
	uint32_t nr_tags;
	uint32_t tag_id[64];
	char tag_key[64][CTXPROF_TAG_KEY_MAX + 1];
	char tag_value[64][CTXPROF_TAG_VALUE_MAX + 1];
};

static void on_event(void *ctx, const struct ctxprof_slot_view *slot,
		     const struct ctxprof_span_event *ev)
{
	struct seen *s = ctx;

	if (s->nr_events < MAX_SEEN) {
		s->ev_slot[s->nr_events] = slot->index;
		s->ev[s->nr_events++] = *ev;
	}
}

static void on_tag(void *ctx, const struct ctxprof_slot_view *slot, uint32_t id, const char *key,
		   uint32_t key_len, const char *value, uint32_t value_len)
{
	struct seen *s = ctx;

	if (s->nr_tags < 64) {
		s->tag_id[s->nr_tags] = id;
		memcpy(s->tag_key[s->nr_tags], key, key_len);
		s->tag_key[s->nr_tags][key_len] = 0;
		memcpy(s->tag_value[s->nr_tags], value, value_len);
		s->tag_value[s->nr_tags][value_len] = 0;
		s->nr_tags++;
	}
}

static const struct ctxprof_drain_ops seen_ops = {.span_event = on_event, .tag = on_tag};

static uint64_t drain_into(struct seen *s, struct ctxprof_region_stats *st)
{
	struct ctxprof_region_geom g;
	void *base = region(&g);

	return ctxprof_region__drain(base, &g, ctxprof_now_ns(), &seen_ops, s, st);
}

/* ------------------------------------------------------------------------ */
/* checksum                                                                   */

static void ctxprof_context_checksum__known_vectors__match_hand_computed(void **state)
{
	/* span * K ^ swap32(root) * K, by hand */
	assert_true(ctxprof_context_checksum(1, 0) == 0x9E3779B97F4A7C15ull);
	/* swap32(1) = 1 << 32, and (1 << 32) * K keeps K's low half, shifted up */
	assert_true(ctxprof_context_checksum(0, 1) == 0x7F4A7C1500000000ull);
	assert_true(ctxprof_context_checksum(1, 1) == 0xE17D05AC7F4A7C15ull);
	/* 2K mod 2^64 */
	assert_true(ctxprof_context_checksum(2, 0) == 0x3C6EF372FE94F82Aull);
	/* swap32(1 << 32) = 1 */
	assert_true(ctxprof_context_checksum(0, 1ull << 32) == 0x9E3779B97F4A7C15ull);
}

static void ctxprof_context_checksum__hash_zero__becomes_all_ones(void **state)
{
	/* (0, 0) and (x, swap32(x)) hash to 0, reserved for "in progress" */
	assert_true(ctxprof_context_checksum(0, 0) == 0xffffffffffffffffull);
	assert_true(ctxprof_context_checksum(0x0000000100000002ull, 0x0000000200000001ull) ==
		    0xffffffffffffffffull);
	assert_true(ctxprof_context_checksum(0xdeadbeef00c0ffeeull, 0x00c0ffeedeadbeefull) ==
		    0xffffffffffffffffull);
}

static void ctxprof_context_checksum__many_pairs__never_zero(void **state)
{
	uint64_t x = 0x243f6a8885a308d3ull, i;

	for (i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		assert_true(ctxprof_context_checksum(x, x ^ K_PAIR) != 0);
		assert_true(ctxprof_context_checksum(x, (x << 32) | (x >> 32)) != 0);
		assert_true(ctxprof_context_checksum(i, 0) != 0);
	}
}

/* ------------------------------------------------------------------------ */
/* context protocol                                                           */

static void ctxprof_set_context__one_thread__reader_sees_pair(void **state)
{
	struct ctxprof_region_geom g;
	struct ctxprof_context c;
	void *base;
	uint32_t tag;

	ctxprof_set_context(0x1111, 0x2222);
	base = region(&g);
	assert_int_equal(my_slot(), 0);
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_true(c.span_id == 0x1111 && c.local_root_span_id == 0x2222);
	assert_true(c.checksum == ctxprof_context_checksum(0x1111, 0x2222));

	tag = ctxprof_intern_tag("endpoint", "/api/v1");
	assert_true(tag != 0);
	ctxprof_set_tag(3, tag);
	ctxprof_set_tag(CTXPROF_TAG_SLOTS, tag); /* ignored */
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_int_equal(c.tags[3], tag);
	assert_true(c.span_id == 0x1111);

	/* a new span keeps the tags */
	ctxprof_set_context(0x3333, 0x2222);
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_int_equal(c.tags[3], tag);

	ctxprof_clear_tag(3);
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_int_equal(c.tags[3], 0);

	ctxprof_set_tag(0, tag);
	ctxprof_clear_context();
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_true(c.span_id == 0 && c.local_root_span_id == 0 && c.tags[0] == 0);
}

/*
 * The writer's steps one at a time, as a sampler interrupting it at each
 * point would copy them, and every copy a reader on another CPU could make
 * (each field from either update, the checksum from either or in progress):
 * a valid answer is always one of the two pairs written.
 */
static void ctxprof_set_context__read_mid_write__zero_or_mismatch_never_wrong_pair(void **state)
{
	const uint64_t a = 0xaaaa0001, ar = 0xaaaa0002, b = 0xbbbb0001, br = 0xbbbb0002;
	const uint64_t sums[3] = {0, ctxprof_context_checksum(a, ar),
				  ctxprof_context_checksum(b, br)};
	struct ctxprof_region_geom g;
	struct ctxprof_context *slot, c;
	void *base;
	int ci, si, ri, r;

	ctxprof_set_context(a, ar);
	base = region(&g);
	slot = &slot_of(base, &g, my_slot())->context;

	/* same CPU: the protocol's steps in order */
	slot->checksum = 0;
	assert_int_equal(ctxprof_region__read_context(base, &g, my_slot(), &c),
			 CTXPROF_CONTEXT_EMPTY);
	slot->span_id = b;
	assert_int_equal(ctxprof_region__read_context(base, &g, my_slot(), &c),
			 CTXPROF_CONTEXT_EMPTY);
	slot->local_root_span_id = br;
	assert_int_equal(ctxprof_region__read_context(base, &g, my_slot(), &c),
			 CTXPROF_CONTEXT_EMPTY);
	slot->checksum = sums[2];
	assert_int_equal(ctxprof_region__read_context(base, &g, my_slot(), &c), CTXPROF_CONTEXT_OK);
	assert_true(c.span_id == b && c.local_root_span_id == br);

	/* other CPU: every mix */
	for (ci = 0; ci < 3; ci++)
		for (si = 0; si < 2; si++)
			for (ri = 0; ri < 2; ri++) {
				slot->checksum = sums[ci];
				slot->span_id = si ? b : a;
				slot->local_root_span_id = ri ? br : ar;
				r = ctxprof_region__read_context(base, &g, my_slot(), &c);
				if (ci == 0) {
					assert_int_equal(r, CTXPROF_CONTEXT_EMPTY);
				} else if (r == CTXPROF_CONTEXT_OK) {
					assert_true((c.span_id == a && c.local_root_span_id == ar &&
						     ci == 1) ||
						    (c.span_id == b && c.local_root_span_id == br &&
						     ci == 2));
				} else {
					assert_int_equal(r, CTXPROF_CONTEXT_TORN);
					assert_false((si == 0 && ri == 0 && ci == 1) ||
						     (si == 1 && ri == 1 && ci == 2));
				}
			}
}

/*
 * A signal handler on the writing thread plays the BPF sampler (same CPU,
 * interrupt between two instructions): it must never see a torn context,
 * only "in progress" or a pair that was written together.
 */
static volatile sig_atomic_t sig_reads, sig_busy, sig_torn, sig_bad;
static struct ctxprof_context *sig_slot;

static void on_sigprof(int sig)
{
	uint64_t sum = __atomic_load_n(&sig_slot->checksum, __ATOMIC_RELAXED);
	uint64_t span = __atomic_load_n(&sig_slot->span_id, __ATOMIC_RELAXED);
	uint64_t root = __atomic_load_n(&sig_slot->local_root_span_id, __ATOMIC_RELAXED);

	sig_reads++;
	if (!sum)
		sig_busy++;
	else if (sum != ctxprof_context_checksum(span, root))
		sig_torn++;
	else if (root != (span ^ K_PAIR) && span)
		sig_bad++;
}

static void ctxprof_set_context__signal_reader_same_thread__never_torn(void **state)
{
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF};
	/* CLOCK_MONOTONIC: an hrtimer, so really every 20 us (CPU-time timers tick at HZ) */
	struct itimerspec its = {.it_interval = {0, 20000}, .it_value = {0, 20000}};
	struct sigaction sa = {.sa_handler = on_sigprof};
	struct ctxprof_region_geom g;
	uint64_t x, start;
	timer_t timer;
	void *base;

	ctxprof_set_context(1, 1 ^ K_PAIR);
	base = region(&g);
	sig_slot = &slot_of(base, &g, my_slot())->context;
	sig_reads = sig_busy = sig_torn = sig_bad = 0;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGPROF, &sa, NULL), 0);
	sev._sigev_un._tid = gettid(); /* sigev_notify_thread_id: glibc 2.41 */
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	assert_int_equal(timer_settime(timer, 0, &its, NULL), 0);
	start = ctxprof_now_ns();
	for (x = 1; ctxprof_now_ns() - start < 300000000ull || sig_reads < 100; x++) {
		int i;

		for (i = 0; i < 1000; i++, x++)
			ctxprof_set_context(x, x ^ K_PAIR);
	}
	timer_delete(timer);
	signal(SIGPROF, SIG_DFL);
	print_message("signal reads %d, in progress %d, torn %d, bad %d, writes %" PRIu64 "\n",
		      (int)sig_reads, (int)sig_busy, (int)sig_torn, (int)sig_bad, x);
	assert_true(sig_reads >= 100);
	assert_int_equal(sig_torn, 0);
	assert_int_equal(sig_bad, 0);
}

/* ------------------------------------------------------------------------ */
/* registration                                                               */

static void thread_registry__single_thread__then_slot_zero(void **state)
{
	struct ctxprof_region_geom g;
	struct ctxprof_slot_view v;
	struct ctxprof_context c;
	uint32_t cursor = 0;
	void *base;

	assert_int_equal(ctxprof_register_thread(), 0);
	assert_int_equal(ctxprof_register_thread(), 0); /* idempotent */
	base = region(&g);
	assert_int_equal(g.max_threads, CTXPROF_DEFAULT_MAX_THREADS);
	assert_int_equal(g.owner_pid, getpid());
	assert_true(ctxprof_region__next_slot(base, &g, &cursor, &v, NULL));
	assert_int_equal(v.index, 0);
	assert_int_equal(v.state, CTXPROF_SLOT_ACTIVE);
	assert_int_equal(v.tid, gettid());
	assert_int_equal(v.generation, 1);
	assert_true(v.offset == CTXPROF_SLOTS_OFFSET);
	assert_false(ctxprof_region__next_slot(base, &g, &cursor, &v, NULL));
	/* a fresh slot holds a valid empty context */
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_true(c.span_id == 0 && c.local_root_span_id == 0);
}

static void ctxprof_init__twice_or_bad_options__refused(void **state)
{
	struct ctxprof_options bad = {.sz = sizeof(bad), .index_ring_size = 100};
	struct ctxprof_options bad2 = {.sz = sizeof(bad2), .max_threads = 1u << 20};
	struct ctxprof_stats st;

	assert_int_equal(ctxprof_init(&bad), -EINVAL);
	/* disabled: calls are no-ops, nothing crashes */
	assert_int_equal(ctxprof_init(NULL), -EALREADY);
	ctxprof_set_context(1, 2);
	ctxprof_span_begin(1, 2);
	assert_int_equal(ctxprof_intern_tag("k", "v"), 0);
	assert_int_equal(ctxprof_register_thread(), -EINVAL);
	assert_int_equal(ctxprof_get_stats(&st), 0);
	assert_int_equal(st.init_error, -EINVAL);
	ctxprof__reset();
	assert_int_equal(ctxprof_init(&bad2), -EINVAL);
	ctxprof__reset();
	assert_int_equal(ctxprof_init(NULL), 0);
	assert_int_equal(ctxprof_init(NULL), -EALREADY);
}

static void ctxprof_region__maps_and_seals__discoverable(void **state)
{
	char line[512], path[128], want[64];
	size_t size;
	void *base;
	FILE *f;
	int found = 0, fd;

	ctxprof_set_context(1, 2);
	base = ctxprof__region(&size);
	snprintf(want, sizeof(want), "%lx-", (unsigned long)base);
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, CTXPROF_REGION_MAPS_NAME) && !strncmp(line, want, strlen(want)))
			found++;
	fclose(f);
	assert_int_equal(found, 1);

	/* the collector's way in: map_files (CAP_SYS_ADMIN), then the seals */
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)base,
		 (unsigned long)base + size);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		print_message("map_files not readable (%s): seals not checked\n", strerror(errno));
		return;
	}
	assert_int_equal(fcntl(fd, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
			 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	assert_int_equal(ftruncate(fd, size / 2), -1);
	assert_int_equal(errno, EPERM);
	close(fd);
}

static void ctxprof_unregister_thread__registered__slot_draining_context_empty(void **state)
{
	struct ctxprof_region_geom g;
	struct ctxprof_context c;
	struct ctxprof_stats st;
	void *base;

	ctxprof_set_context(5, 6);
	base = region(&g);
	ctxprof_unregister_thread();
	assert_int_equal(slot_state(slot_of(base, &g, 0)), CTXPROF_SLOT_DRAINING);
	assert_int_equal(ctxprof_region__read_context(base, &g, 0, &c), CTXPROF_CONTEXT_EMPTY);
	assert_int_equal(my_slot(), -1);
	assert_int_equal(ctxprof_get_stats(&st), 0);
	assert_int_equal(st.threads_registered, 0);
	assert_int_equal(st.registrations, 1);

	/* the next call registers again: no collector, so the same slot comes back */
	ctxprof_set_context(7, 8);
	assert_int_equal(my_slot(), 0);
	assert_int_equal(slot_state(slot_of(base, &g, 0)), CTXPROF_SLOT_ACTIVE);
	assert_int_equal(slot_gen(slot_of(base, &g, 0)), 2);
	assert_int_equal(ctxprof_get_stats(&st), 0);
	assert_int_equal(st.slots_reclaimed, 1);
}

static void *register_and_exit(void *arg)
{
	int *slot = arg;

	ctxprof_set_context(42, 43);
	*slot = my_slot();
	ctxprof_span_begin(42, 43); /* leaves a partial ring for the exit to submit */
	return NULL;
}

static void ctxprof_unregister_thread__thread_exit__destructor_releases(void **state)
{
	struct ctxprof_region_geom g;
	struct seen *s = calloc(1, sizeof(*s));
	pthread_t th;
	int slot = -1;
	void *base;

	assert_int_equal(ctxprof_register_thread(), 0);
	assert_int_equal(pthread_create(&th, NULL, register_and_exit, &slot), 0);
	pthread_join(th, NULL);
	assert_int_equal(slot, 1);
	base = region(&g);
	assert_int_equal(slot_state(slot_of(base, &g, 1)), CTXPROF_SLOT_DRAINING);
	/* the exit submitted the partial ring: the collector gets the event, then retires */
	assert_true(drain_into(s, NULL) >= 1);
	assert_int_equal(s->nr_events, 1);
	assert_true(s->ev[0].span_id == 42 && s->ev[0].type == CTXPROF_EVENT_SPAN_BEGIN);
	assert_int_equal(slot_state(slot_of(base, &g, 1)), CTXPROF_SLOT_INACTIVE);
	free(s);
}

struct gate {
	pthread_barrier_t in, out;
	int slot;
	int err;
	uint64_t span;
};

static void *hold_slot(void *arg)
{
	struct gate *gt = arg;

	gt->err = ctxprof_register_thread();
	ctxprof_set_context(gt->span, gt->span ^ K_PAIR);
	ctxprof_span_begin(gt->span, 0);
	gt->slot = my_slot();
	pthread_barrier_wait(&gt->in);
	pthread_barrier_wait(&gt->out);
	return NULL;
}

/* run hold_slot() on a new thread up to its first barrier; return its slot */
static int start_holder(struct gate *gt, pthread_t *th, uint64_t span)
{
	gt->span = span;
	gt->slot = -1;
	assert_int_equal(pthread_create(th, NULL, hold_slot, gt), 0);
	pthread_barrier_wait(&gt->in);
	return gt->slot;
}

static void stop_holder(struct gate *gt, pthread_t th)
{
	pthread_barrier_wait(&gt->out);
	pthread_join(th, NULL);
}

static void ctxprof_register_thread__reuse__waits_for_drain_when_consumer_alive(void **state)
{
	struct ctxprof_region_geom g;
	struct ctxprof_region_header *h;
	struct gate gt = {};
	struct seen *s = calloc(1, sizeof(*s));
	pthread_t th;
	void *base;

	init_small(2, 0, 0);
	assert_int_equal(ctxprof_register_thread(), 0); /* slot 0, kept */
	base = region(&g);
	h = base;
	pthread_barrier_init(&gt.in, NULL, 2);
	pthread_barrier_init(&gt.out, NULL, 2);

	assert_int_equal(start_holder(&gt, &th, 100), 1);
	stop_holder(&gt, th);
	assert_int_equal(slot_state(slot_of(base, &g, 1)), CTXPROF_SLOT_DRAINING);

	/* a live collector has not drained slot 1 yet: it is kept, we are refused */
	h->consumer_heartbeat_ns = ctxprof_now_ns();
	assert_int_equal(start_holder(&gt, &th, 200), -1);
	assert_int_equal(gt.err, -ENOSPC);
	stop_holder(&gt, th);
	assert_int_equal(slot_state(slot_of(base, &g, 1)), CTXPROF_SLOT_DRAINING);

	/* drained: Inactive, recycled */
	drain_into(s, NULL);
	assert_int_equal(s->nr_events, 1);
	assert_true(s->ev[0].span_id == 100);
	assert_int_equal(slot_state(slot_of(base, &g, 1)), CTXPROF_SLOT_INACTIVE);
	assert_int_equal(start_holder(&gt, &th, 300), 1);
	assert_int_equal(slot_gen(slot_of(base, &g, 1)), 2);
	stop_holder(&gt, th);

	/* undrained again, but the collector went quiet: recycled anyway */
	h->consumer_heartbeat_ns = ctxprof_now_ns() - 10 * CTXPROF_DEFAULT_STALE_NS;
	assert_int_equal(start_holder(&gt, &th, 400), 1);
	assert_int_equal(slot_gen(slot_of(base, &g, 1)), 3);
	stop_holder(&gt, th);

	pthread_barrier_destroy(&gt.in);
	pthread_barrier_destroy(&gt.out);
	free(s);
}

#define NR_CONCURRENT 8
static pthread_barrier_t start_line, all_registered;

static void *register_concurrently(void *arg)
{
	struct gate *gt = arg;

	pthread_barrier_wait(&start_line);
	gt->err = ctxprof_register_thread();
	gt->slot = my_slot();
	/* unique among threads holding slots at once: hold until all have one */
	pthread_barrier_wait(&all_registered);
	return NULL;
}

static void thread_registry__concurrent_registration__then_unique_slots(void **state)
{
	struct gate gt[NR_CONCURRENT];
	pthread_t th[NR_CONCURRENT];
	struct ctxprof_region_geom g;
	struct ctxprof_slot_view v;
	uint32_t cursor = 0, seen_mask = 0;
	void *base;
	int i, round;

	init_small(NR_CONCURRENT, 0, 0);
	for (round = 0; round < 20; round++) {
		pthread_barrier_init(&start_line, NULL, NR_CONCURRENT);
		pthread_barrier_init(&all_registered, NULL, NR_CONCURRENT);
		for (i = 0; i < NR_CONCURRENT; i++) {
			gt[i].slot = -1;
			assert_int_equal(
				pthread_create(&th[i], NULL, register_concurrently, &gt[i]), 0);
		}
		for (i = 0; i < NR_CONCURRENT; i++)
			pthread_join(th[i], NULL);
		seen_mask = 0;
		for (i = 0; i < NR_CONCURRENT; i++) {
			assert_int_equal(gt[i].err, 0);
			assert_in_range(gt[i].slot, 0, NR_CONCURRENT - 1);
			assert_false(seen_mask & (1u << gt[i].slot));
			seen_mask |= 1u << gt[i].slot;
		}
		pthread_barrier_destroy(&start_line);
		pthread_barrier_destroy(&all_registered);
	}
	/* all exited: every slot Draining or recycled, none Active */
	base = region(&g);
	while (ctxprof_region__next_slot(base, &g, &cursor, &v, NULL))
		assert_int_equal(v.state, CTXPROF_SLOT_DRAINING);
}

static void thread_registry__max_threads__then_rejects_extra(void **state)
{
	struct gate gt[2] = {{.span = 10}, {.span = 20}};
	struct ctxprof_region_geom g;
	struct ctxprof_context c;
	struct ctxprof_stats st;
	pthread_t th[2];
	void *base;
	int i;

	init_small(2, 0, 0);
	for (i = 0; i < 2; i++) {
		pthread_barrier_init(&gt[i].in, NULL, 2);
		pthread_barrier_init(&gt[i].out, NULL, 2);
		assert_int_equal(pthread_create(&th[i], NULL, hold_slot, &gt[i]), 0);
		pthread_barrier_wait(&gt[i].in);
	}
	/* both slots held: this thread is refused, and everything still works */
	assert_int_equal(ctxprof_register_thread(), -ENOSPC);
	ctxprof_set_context(99, 99);
	ctxprof_set_tag(0, 7);
	ctxprof_span_enter(99, 99);
	ctxprof_span_exit(99, 0);
	ctxprof_flush();
	assert_int_equal(my_slot(), -1);
	base = region(&g);
	for (i = 0; i < 2; i++) {
		assert_int_equal(ctxprof_region__read_context(base, &g, i, &c), CTXPROF_CONTEXT_OK);
		assert_true(c.span_id == 10 || c.span_id == 20);
	}
	assert_int_equal(ctxprof_get_stats(&st), 0);
	assert_int_equal(st.registrations_rejected, 1);
	assert_int_equal(st.events_unregistered, 2);
	assert_int_equal(st.threads_registered, 2);

	/* once a slot is free, asking again works */
	pthread_barrier_wait(&gt[0].out);
	pthread_join(th[0], NULL);
	assert_int_equal(ctxprof_register_thread(), 0);
	assert_true(my_slot() >= 0);
	pthread_barrier_wait(&gt[1].out);
	pthread_join(th[1], NULL);
	for (i = 0; i < 2; i++) {
		pthread_barrier_destroy(&gt[i].in);
		pthread_barrier_destroy(&gt[i].out);
	}
}

static void ctxprof_fork__child__gets_own_region(void **state)
{
	struct ctxprof_region_geom g;
	struct ctxprof_context c;
	void *parent_base;
	pid_t pid;
	int status;

	ctxprof_set_context(1000, 1001);
	parent_base = region(&g);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* the child must not write into the parent's (shared) region */
		struct ctxprof_region_header *child_region;

		ctxprof_set_context(2000, 2001);
		/* (the kernel may well give the new mapping the old address) */
		child_region = ctxprof__region(NULL);
		_exit(child_region && child_region->owner_pid == (uint32_t)getpid() &&
				      my_slot() == 0
			      ? 0
			      : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(ctxprof_region__read_context(parent_base, &g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_true(c.span_id == 1000);
	assert_int_equal(((struct ctxprof_region_header *)parent_base)->registrations, 1);
}

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
		T(ctxprof_context_checksum__known_vectors__match_hand_computed),
		T(ctxprof_context_checksum__hash_zero__becomes_all_ones),
		T(ctxprof_context_checksum__many_pairs__never_zero),
		T(ctxprof_set_context__one_thread__reader_sees_pair),
		T(ctxprof_set_context__read_mid_write__zero_or_mismatch_never_wrong_pair),
		T(ctxprof_set_context__signal_reader_same_thread__never_torn),
		T(thread_registry__single_thread__then_slot_zero),
		T(ctxprof_init__twice_or_bad_options__refused),
		T(ctxprof_region__maps_and_seals__discoverable),
		T(ctxprof_unregister_thread__registered__slot_draining_context_empty),
		T(ctxprof_unregister_thread__thread_exit__destructor_releases),
		T(ctxprof_register_thread__reuse__waits_for_drain_when_consumer_alive),
		T(thread_registry__concurrent_registration__then_unique_slots),
		T(thread_registry__max_threads__then_rejects_extra),
		T(ctxprof_fork__child__gets_own_region),
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

	return cmocka_run_group_tests_name("ctxprof", tests, NULL, NULL);
}
