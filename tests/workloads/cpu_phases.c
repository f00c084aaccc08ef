// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cpu_phases - one thread burning CPU in spin_before() until SIGUSR1, then
 * in spin_after() until SIGTERM, when it prints the CPU time the second
 * phase took ("after_cpu_s S") and exits.  A test counts spin_after's
 * samples against that time: samples per CPU-second is the rate the
 * profiler sampled at while it ran, whatever else competes for the CPU.
 *
 * Usage: cpu_phases
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t phase;
static volatile unsigned long sink;

static void on_signal(int sig)
{
	phase = sig == SIGUSR1 ? 1 : 2;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void spin_before(void)
{
	while (phase == 0)
		sink = sink + 1;
}

static __attribute__((noinline)) void spin_after(void)
{
	while (phase == 1)
		sink = sink + 1;
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	double start;

	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	spin_before();
	start = cpu_s();
	spin_after();
	printf("after_cpu_s %.6f\n", cpu_s() - start);
	return 0;
}
