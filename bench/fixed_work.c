// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fixed_work - a fixed amount of CPU work, to measure what a profiler costs.
 *
 * Each thread runs the same number of iterations of a hash loop at the
 * bottom of a call chain --depth deep (16 by default, so stack walks cost
 * what they do in real code), after an initial idle delay that lets a
 * profiler attach.  It prints the wall time of the work phase alone:
 * "work_seconds <s>".  Built twice: with frame pointers (fixed_work, for the
 * perf and bpftrace baselines) and without (fixed_work_nofp, as
 * distributions build, for the CFI unwinder).
 *
 * The stack's shape is a parameter, because a stack walk's cost depends on
 * it: --main runs the work on the main thread alone (its stack's top is a
 * few KiB above the frames: argv, the environment, the auxiliary vector),
 * where --threads N runs it on N new threads (glibc's thread stacks: the
 * thread's control block above the frames); --large gives every frame of the
 * chain 1 KiB of locals (FRAME_LARGE) instead of a few words.
 *
 * Usage: fixed_work [--threads N | --main] [--iterations M] [--delay S] [--depth D]
 *        [--large]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t iterations = 400;
static int depth = 16;
static int large;
static volatile uint64_t sink;

/* the locals of a large frame, bytes */
#define FRAME_LARGE 1024

static __attribute__((noinline)) uint64_t hash_block(uint64_t seed)
{
	uint64_t h = seed;
	int i;

	for (i = 0; i < 100000; i++) {
		h ^= h >> 33;
		h *= 0xff51afd7ed558ccdULL;
		h += i;
	}
	return h;
}

static __attribute__((noinline)) uint64_t descend(int depth, uint64_t seed)
{
	uint64_t r;

	if (!depth)
		return hash_block(seed);
	r = descend(depth - 1, seed + depth);
	__asm__ volatile("" ::: "memory");
	return r;
}

/* descend() with FRAME_LARGE bytes of locals in every frame */
static __attribute__((noinline)) uint64_t descend_large(int depth, uint64_t seed)
{
	volatile unsigned char pad[FRAME_LARGE];
	uint64_t r;

	pad[0] = (unsigned char)seed;
	pad[FRAME_LARGE - 1] = (unsigned char)depth;
	if (!depth)
		return hash_block(seed + pad[0]);
	r = descend_large(depth - 1, seed + depth);
	__asm__ volatile("" ::: "memory");
	return r + pad[FRAME_LARGE - 1];
}

static void *worker(void *arg)
{
	uint64_t i, acc = 0;

	for (i = 0; i < iterations; i++)
		acc += large ? descend_large(depth, i) : descend(depth, i);
	sink += acc;
	return arg;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int threads = 2, on_main = 0, i;
	double delay = 1.0, t0;
	pthread_t t[64];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
			iterations = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--delay") && i + 1 < argc)
			delay = atof(argv[++i]);
		else if (!strcmp(argv[i], "--depth") && i + 1 < argc)
			depth = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--main"))
			on_main = 1;
		else if (!strcmp(argv[i], "--large"))
			large = 1;
		else {
			fprintf(stderr,
				"usage: %s [--threads N | --main] [--iterations M] [--delay S] "
				"[--depth D] [--large]\n",
				argv[0]);
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || depth < 0 || depth > 1000)
		return 2;
	usleep((useconds_t)(delay * 1e6));
	t0 = now();
	if (on_main) {
		worker(NULL);
		printf("work_seconds %.4f\n", now() - t0);
		return 0;
	}
	for (i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("work_seconds %.4f\n", now() - t0);
	return 0;
}
