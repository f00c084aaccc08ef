// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * exec_switch - burns CPU in exec_switch_before() for BEFORE seconds, then
 * execs itself (a PIE: the new image lands at another address) and burns in
 * exec_switch_after() for AFTER seconds.  A profiler that names the samples
 * taken before the exec from the mappings after it shows them as the wrong
 * function or unnamed.
 *
 * Usage: exec_switch BEFORE AFTER
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void exec_switch_before(double secs)
{
	double end = now() + secs;

	while (now() < end)
		sink = sink * 31 + 7;
}

__attribute__((noinline)) void exec_switch_after(double secs)
{
	double end = now() + secs;

	while (now() < end)
		sink = sink * 17 + 3;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--after")) {
		exec_switch_after(atof(argv[2]));
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: %s BEFORE AFTER\n", argv[0]);
		return 2;
	}
	exec_switch_before(atof(argv[1]));
	execl("/proc/self/exe", argv[0], "--after", argv[2], (char *)NULL);
	perror("exec");
	return 1;
}
