// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * shares - a CPU-bound workload whose time splits in known shares.
 *
 * Each thread loops over four leaves, each reached through its own caller:
 *   main -> worker -> run_cycle -> stage_<leaf> -> leaf_<leaf>
 * and each leaf spins for a fixed number of timestamp-counter ticks:
 *   leaf_alpha 1, leaf_beta 2, leaf_gamma 3, leaf_delta 4 units
 * so the shares are 10/20/30/40 % by construction, whatever the CPU's speed.
 * A unit is a prime number of ticks so the cycle cannot stay in phase with
 * a sampling period.
 *
 * Usage: shares [--threads N] [--seconds S]   (default: 1 thread, forever)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT_TICKS 1000003ull

static inline __attribute__((always_inline)) uint64_t ticks(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v * 50; /* the generic timer is slower; keep units comparable */
#else
#error "no cycle counter for this architecture"
#endif
}

static volatile uint64_t sink;

/* each leaf spins in its own body, so the sampled frame is the leaf itself */
#define LEAF(name, units)                                                                          \
	__attribute__((noinline)) void leaf_##name(void)                                           \
	{                                                                                          \
		/* a stack variable: gcc gives frameless leaves no frame                           \
		 * pointer even with -fno-omit-frame-pointer */                                    \
		volatile uint64_t x = 0;                                                           \
		uint64_t end = ticks() + (units)*UNIT_TICKS;                                       \
		while (ticks() < end)                                                              \
			x = x + 1;                                                                 \
		sink += x;                                                                         \
	}                                                                                          \
	__attribute__((noinline)) void stage_##name(void)                                          \
	{                                                                                          \
		leaf_##name();                                                                     \
		__asm__ volatile("" ::: "memory");                                                 \
	}

LEAF(alpha, 1)
LEAF(beta, 2)
LEAF(gamma, 3)
LEAF(delta, 4)

static __attribute__((noinline)) void run_cycle(void)
{
	stage_alpha();
	stage_beta();
	stage_gamma();
	stage_delta();
	__asm__ volatile("" ::: "memory");
}

static volatile int done;
static double seconds;

static __attribute__((noinline)) void *worker(void *arg)
{
	while (!done)
		run_cycle();
	return arg;
}

static void *timer(void *arg)
{
	struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};

	nanosleep(&ts, NULL);
	done = 1;
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t tids[64], t;
	int threads = 1, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--threads N] [--seconds S]\n", argv[0]);
			return 2;
		}
	}
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "shares: --threads must be 1-64\n");
		return 2;
	}
	if (seconds > 0 && pthread_create(&t, NULL, timer, NULL))
		return 1;
	for (i = 1; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL))
			return 1;
	/* the main thread is worker 0 */
	worker(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
