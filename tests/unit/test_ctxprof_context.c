// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for libctxprof (lib/ctxprof/): the checksum, the context write
 * protocol, thread registration and slot reuse, read back through the
 * collector's reader (user/appctx/ctxprof_region.c) as the collector would.
 * The lanes and the tag dictionary are test_ctxprof_lanes.c's.
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

#define K_PAIR 0x5a5a5a5a12345678ull /* writers publish (x, x ^ K_PAIR) */

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
#undef T
	};

	return cmocka_run_group_tests_name("ctxprof_context", tests, NULL, NULL);
}
