// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * churn - CPU-bound, with call stacks that keep changing.
 *
 * Every 10 ms the stack changes: a step counter's low 20 bits choose, level
 * by level, whether the recursion goes through churn_a or churn_b, so about
 * 100 never-seen stacks appear every second for hours.  Used to check that
 * a long continuous run keeps its memory bounded.
 *
 * Usage: churn [--seconds S]   (default: forever)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEVELS 20

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void spin_until(double end)
{
	volatile uint64_t x = 0;

	while (now() < end)
		x = x + 1;
	sink += x;
}

static void churn_b(uint64_t bits, int level, double end);

static __attribute__((noinline)) void churn_a(uint64_t bits, int level, double end)
{
	if (level == LEVELS)
		spin_until(end);
	else if (bits & 1)
		churn_b(bits >> 1, level + 1, end);
	else
		churn_a(bits >> 1, level + 1, end);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void churn_b(uint64_t bits, int level, double end)
{
	if (level == LEVELS)
		spin_until(end);
	else if (bits & 1)
		churn_b(bits >> 1, level + 1, end);
	else
		churn_a(bits >> 1, level + 1, end);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double seconds = 0, start = now(), t;
	uint64_t step;

	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		seconds = atof(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
		return 2;
	}
	for (step = 0;; step++) {
		t = now();
		if (seconds > 0 && t - start >= seconds)
			break;
		churn_a(step, 0, t + 0.01);
	}
	return 0;
}
