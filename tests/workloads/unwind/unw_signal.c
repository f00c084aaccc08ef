// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unw_signal - CPU burnt inside a signal handler that interrupts busy code.
 *
 * main -> unw_sig_interrupted -> [kernel signal frame, __restore_rt]
 *      -> unw_sig_handler -> unw_sig_leaf
 *
 * unw_sig_interrupted spins in user mode; a one-shot CLOCK_MONOTONIC POSIX
 * timer (high resolution, unlike ITIMER_PROF's tick-granular CPU clock)
 * sends SIGPROF 200 us later, at an arbitrary instruction of it (not a call
 * site: the unwinder must not step back a byte for the frame under the
 * signal frame).  The handler spins ~7 ms in unw_sig_leaf and re-arms the
 * timer as it leaves, so ~95% of the CPU time is in unw_sig_leaf.
 * Built -O2 -fomit-frame-pointer.
 *
 * Usage: unw_signal [--seconds S]   (default: until killed)
 */
#include <time.h>

#include "unw.h"

#define UNW_GAP_NSEC	200000
#define UNW_LEAF_ROUNDS 6000011ull

static timer_t unw_sig_timer;

UNW_ALWAYS_INLINE void unw_sig_arm(void)
{
	struct itimerspec its = {.it_value = {.tv_nsec = UNW_GAP_NSEC}};

	timer_settime(unw_sig_timer, 0, &its, NULL);
}

UNW_FRAME void unw_sig_leaf(void)
{
	unw_sink = unw_spin(UNW_LEAF_ROUNDS, unw_sink);
}

UNW_FRAME void unw_sig_handler(int sig)
{
	unw_sig_leaf();
	unw_sink = unw_sink + (uint64_t)sig;
	if (!unw_done)
		unw_sig_arm();
}

/* busy in registers only: the signal lands in this function's own code */
UNW_FRAME void unw_sig_interrupted(void)
{
	uint64_t x = 1;

	while (!unw_done)
		x = unw_spin(64, x);
	unw_sink = x;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = unw_sig_handler};
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGPROF};

	if (unw_start(argc, argv, "unw_signal"))
		return 2;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) || timer_create(CLOCK_MONOTONIC, &sev, &unw_sig_timer))
		return 1;
	unw_sig_arm();
	unw_sig_interrupted();
	return 0;
}
