// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * leader_exit - the main thread calls pthread_exit() while two workers burn
 * CPU in leader_exit_worker_spin(): /proc/PID/maps of such a process reads
 * empty (its leader is a zombie), yet its threads run real code that must
 * be named.
 *
 * Usage: leader_exit [--seconds S]   (default 10)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds = 10;
static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void leader_exit_worker_spin(uint64_t *acc)
{
	int i;

	for (i = 0; i < 100000; i++)
		*acc = *acc * 6364136223846793005ULL + i;
}

static void *worker(void *arg)
{
	double end = now() + seconds;
	uint64_t acc = (uintptr_t)arg;

	while (now() < end)
		leader_exit_worker_spin(&acc);
	sink += acc;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int i;

	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		seconds = atof(argv[2]);
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	printf("%d\n", getpid());
	fflush(stdout);
	/* the process lives on in its workers */
	pthread_exit(NULL);
}
