// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unw_signal - CPU burnt inside a signal handler that interrupts busy code.
 *
 * main -> unw_sig_interrupted -> [kernel signal frame, __restore_rt]
 *      -> unw_sig_handler -> unw_sig_leaf
 *
 * unw_sig_interrupted spins in user mode; a one-shot ITIMER_PROF (process
 * CPU time) of 1 ms fires SIGPROF at an arbitrary instruction of it (not a
 * call site: the unwinder must not step back one byte for the frame under
 * the signal frame).  The handler spins about 20 times longer than the
 * 1 ms gap and re-arms the timer as it leaves, so ~95% of the CPU time is
 * in unw_sig_leaf.  Built -O2 -fomit-frame-pointer.
 *
 * Usage: unw_signal [--seconds S]   (default: until killed)
 */
#include "unw.h"

#define UNW_GAP_USEC   1000
#define UNW_LEAF_TICKS 20000003ull

UNW_ALWAYS_INLINE void unw_sig_arm(void)
{
	struct itimerval it = {.it_value = {.tv_usec = UNW_GAP_USEC}};

	setitimer(ITIMER_PROF, &it, NULL);
}

UNW_FRAME void unw_sig_leaf(void)
{
	unw_sink = unw_spin(UNW_LEAF_TICKS, unw_sink);
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

	while (!unw_done) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	unw_sink = x;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = unw_sig_handler};

	if (unw_start(argc, argv, "unw_signal"))
		return 2;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL))
		return 1;
	unw_sig_arm();
	unw_sig_interrupted();
	return 0;
}
