// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * spawner - process churn: starts RATE short-lived processes a second (each
 * spins ~1 ms and exits) for SECONDS, reaping them as it goes.  Used to check
 * that --all keeps its memory bounded under 1000 spawns/s.
 *
 * Usage: spawner RATE SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void child_work(void)
{
	volatile unsigned long x = 0;
	double end = now() + 0.001;

	while (now() < end)
		x = x + 1;
	_exit(0);
}

int main(int argc, char **argv)
{
	double rate, seconds, start, next;
	unsigned long spawned = 0;
	pid_t pid;

	if (argc != 3 || (rate = atof(argv[1])) <= 0 || (seconds = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: %s RATE SECONDS\n", argv[0]);
		return 2;
	}
	start = next = now();
	while (now() - start < seconds) {
		pid = fork();
		if (pid == 0)
			child_work();
		if (pid > 0)
			spawned++;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		next += 1.0 / rate;
		while (now() < next)
			usleep(100);
	}
	while (wait(NULL) > 0)
		;
	printf("spawned %lu in %.1f s\n", spawned, now() - start);
	return 0;
}
