/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * handlers - the request handlers of the fake services (requests,
 * otel_service, otel_hostile): each burns the CPU for a known time in a
 * function of its own, so that a profile's stacks say which request ran.
 * Included, not linked: each workload needs the functions in its own binary
 * (the tests look for these names in its stacks).  The asm keeps each
 * handler a frame of its own: no tail call into burn().
 *
 * Request kinds index handlers[]: 1 checkout (3 ms), 2 search (2 ms),
 * 3 login (1 ms); between_requests() runs 1 ms outside any request.
 */
#ifndef CTXPROF_WORKLOAD_HANDLERS_H
#define CTXPROF_WORKLOAD_HANDLERS_H

#include <stdint.h>
#include <time.h>

#define HANDLER __attribute__((noinline, unused))

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static HANDLER void burn(double ms)
{
	volatile uint64_t x = 0;
	double end = now() + ms / 1e3;

	while (now() < end)
		x = x + 1;
	sink += x;
}

static HANDLER void handle_checkout(void)
{
	burn(3);
	__asm__ volatile("" ::: "memory");
}

static HANDLER void handle_search(void)
{
	burn(2);
	__asm__ volatile("" ::: "memory");
}

static HANDLER void handle_login(void)
{
	burn(1);
	__asm__ volatile("" ::: "memory");
}

static HANDLER void between_requests(void)
{
	burn(1);
	__asm__ volatile("" ::: "memory");
}

static void (*const handlers[4])(void)
	__attribute__((unused)) = {NULL, handle_checkout, handle_search, handle_login};

#endif /* CTXPROF_WORKLOAD_HANDLERS_H */
