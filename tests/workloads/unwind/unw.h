/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unw.h - what the unwinding workloads (tests/workloads/unwind/) share.
 *
 * Everything here is always_inline or a macro, so it never appears as a
 * frame of its own: the call chains the workloads promise name only their
 * own unw_* functions (and main, and libc where a workload goes through it).
 * The spin loop keeps its state in registers: a frameless leaf stays
 * frameless (no stack access) even under -fno-omit-frame-pointer.
 */
#ifndef UNW_H
#define UNW_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define UNW_ALWAYS_INLINE static inline __attribute__((always_inline))
/* a named frame that gcc may neither inline, clone (.constprop/.isra) nor merge */
#define UNW_FRAME __attribute__((noinline, noclone, used))

/*
 * spin for n rounds of a 64-bit LCG (about 1 ns each), registers only; returns
 * a value to sink.  A count of rounds, not a clock: the CPU work, and so each
 * function's share of samples, does not depend on scheduling.
 */
UNW_ALWAYS_INLINE uint64_t unw_spin(uint64_t n, uint64_t x)
{
	while (n--) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static volatile sig_atomic_t unw_done;
static volatile uint64_t unw_sink;

static void unw_on_deadline(int sig)
{
	(void)sig;
	unw_done = 1;
}

/*
 * Parse "[--seconds S]" (default: run until killed), print "NAME: pid N" on
 * stdout and arm the deadline.  Returns 0, or 2 after a usage message.
 */
UNW_ALWAYS_INLINE int unw_start(int argc, char **argv, const char *name)
{
	struct itimerval it = {0};
	double seconds = 0;

	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		seconds = atof(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
		return 2;
	}
	printf("%s: pid %d\n", name, (int)getpid());
	fflush(stdout);
	if (seconds > 0) {
		signal(SIGALRM, unw_on_deadline);
		it.it_value.tv_sec = (time_t)seconds;
		it.it_value.tv_usec = (suseconds_t)((seconds - (time_t)seconds) * 1e6);
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	return 0;
}

#endif /* UNW_H */
