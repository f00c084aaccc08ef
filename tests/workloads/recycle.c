// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * recycle - two threads taking turns in ONE libctxprof slot (max_threads 1).
 *
 * Thread ctx_a registers, sets span A_SPAN, holds the slot for --hold ms and
 * unregisters; then ctx_b registers into the recycled slot, sets span B_SPAN,
 * holds it and unregisters; then ctx_a again, and so on.  Both threads burn
 * CPU all the time, with the slot or without it, so the samples of the
 * thread that just left the slot show whether the sampler still reads the
 * slot for it: none of ctx_a's samples may carry B_SPAN, none of ctx_b's
 * A_SPAN.  Each thread only sets its own span, so a sample of ctx_a labeled
 * with B_SPAN can only come from reading ctx_b's context.
 *
 * Usage: recycle [--seconds S] [--hold MS]   (default: forever, 40 ms)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ctxprof.h"

#define A_SPAN 0xa1a1a1a1a1a1a1a1ull
#define A_ROOT 0xa2a2a2a2a2a2a2a2ull
#define B_SPAN 0xb1b1b1b1b1b1b1b1ull
#define B_ROOT 0xb2b2b2b2b2b2b2b2ull

static volatile uint64_t sink;
static atomic_int turn; /* 0: ctx_a's turn to hold the slot, 1: ctx_b's */
static atomic_int done;
static double hold_ms = 40;
static uint64_t turns[2], refused[2];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* burn until @end, or until it is thread @me's turn when @end is 0 */
static __attribute__((noinline)) void burn(double end, int me)
{
	volatile uint64_t x = 0;

	while (!atomic_load(&done) && (end ? now() < end : atomic_load(&turn) != me))
		x = x + 1;
	sink += x;
}

static void *taker(void *arg)
{
	int me = (int)(uintptr_t)arg;

	pthread_setname_np(pthread_self(), me ? "ctx_b" : "ctx_a");
	while (!atomic_load(&done)) {
		/* waiting for the slot, without a slot: any ctxprof call would register */
		burn(0, me);
		if (atomic_load(&done))
			break;
		/* the other thread left it (Draining, lanes empty): it is ours to recycle */
		if (ctxprof_register_thread()) {
			refused[me]++;
			continue;
		}
		ctxprof_set_context(me ? B_SPAN : A_SPAN, me ? B_ROOT : A_ROOT);
		burn(now() + hold_ms / 1e3, me);
		ctxprof_unregister_thread();
		turns[me]++;
		atomic_store(&turn, !me);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct ctxprof_options o = {.sz = sizeof(o), .max_threads = 1};
	double seconds = 0, end;
	pthread_t t[2];
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			hold_ms = atof(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--seconds S] [--hold MS]\n", argv[0]);
			return 2;
		}
	}
	/* one slot: every registration after the first recycles it */
	if (ctxprof_init(&o))
		return 1;
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, taker, (void *)(uintptr_t)i))
			return 1;
	end = now() + seconds;
	while (!seconds || now() < end) {
		struct timespec ts = {0, 50000000};

		nanosleep(&ts, NULL);
	}
	atomic_store(&done, 1);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("recycle: turns a=%llu b=%llu, refused a=%llu b=%llu\n",
	       (unsigned long long)turns[0], (unsigned long long)turns[1],
	       (unsigned long long)refused[0], (unsigned long long)refused[1]);
	return 0;
}
