// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * phases - requests that run known phases in a known order, instrumented
 * with libctxprof: what a timeline must show.
 *
 * Each worker thread serves requests one after another.  A request is a
 * span (id: thread << 48 | request number) that runs phase_parse, then
 * phase_compute, then phase_render, each burning --phase-ms of CPU (default
 * 12), then ends; between two requests the thread runs idle_between outside
 * any span.  A timeline of it shows, inside each span's slice, the three
 * phases in that order.
 *
 * Usage: phases [--threads N] [--seconds S] [--phase-ms MS]
 *        (default: 2 threads, until killed, 12 ms)
 * Prints "phases: pid P" once its threads run.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctxprof.h"

static volatile uint64_t sink;
static volatile int done;
static double phase_ms = 12;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void spin(double ms)
{
	volatile uint64_t x = 0;
	double end = now() + ms / 1e3;

	while (now() < end)
		x = x + 1;
	sink += x;
}

/* the asm keeps each a frame of its own: no tail call into spin */
static __attribute__((noinline)) void phase_parse(void)
{
	spin(phase_ms);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void phase_compute(void)
{
	spin(phase_ms);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void phase_render(void)
{
	spin(phase_ms);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void idle_between(void)
{
	spin(phase_ms / 2);
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	uint64_t thread = (uintptr_t)arg, n, span;

	for (n = 1; !done; n++) {
		span = thread << 48 | n;
		ctxprof_span_enter(span, span);
		phase_parse();
		phase_compute();
		phase_render();
		ctxprof_span_exit(span, 0);
		idle_between();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 2, i;
	double seconds = 0, end;
	pthread_t t[64];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--phase-ms") && i + 1 < argc)
			phase_ms = atof(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--threads N] [--seconds S] [--phase-ms MS]\n",
				argv[0]);
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || phase_ms <= 0)
		return 2;
	for (i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
			return 1;
	printf("phases: pid %d\n", getpid());
	fflush(stdout);
	end = now() + seconds;
	while (!seconds || now() < end) {
		struct timespec ts = {0, 50000000};

		nanosleep(&ts, NULL);
	}
	done = 1;
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
