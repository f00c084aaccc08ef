/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * clock - a clock's time as one number.  clock_gettime() goes through the
 * vDSO for the clocks used here: no syscall, fine on hot paths.
 * No state; any thread.
 */
#ifndef CTXPROF_CLOCK_H
#define CTXPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

/* @clk's time in ns */
static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in ns: the clock of sample, event and retire times */
static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* @clk's time in seconds, for durations and rates shown to people */
static inline double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif /* CTXPROF_CLOCK_H */
