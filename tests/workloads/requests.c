// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * requests - a fake service instrumented with libctxprof.
 *
 * Worker threads serve requests one after another.  Each request is a span
 * with its own id and runs one handler chosen by the request's kind; the
 * kind is also in the span id's low byte (1 checkout, 2 search, 3 login), so
 * a profile can be checked without a log: a sample labeled with span X must
 * have X's handler on its stack.  Between requests a thread works outside
 * any span (between_requests), and those samples must carry no span label.
 * The endpoint is a tag: key "endpoint", value "/checkout" etc.  Workers
 * are named worker-1, worker-2, ...
 *
 * --main-work: the main thread works outside any span too (between_requests
 * in a loop, as a service's housekeeping), instead of sleeping: the lowest
 * thread id then has samples and no span (what a viewer must not open on).
 *
 * --tags N: the main thread interns N more pairs ("item", "i00001"...) in
 * one burst, far more than its detail rings hold, before the workers start
 * or, with --tags-on-usr1, when the process gets SIGUSR1 (a test sends it
 * once its collector runs); from then on each
 * request carries one of them in tag slot 1, in turn, so a profile shows
 * whether every id the samples carry got its name.
 *
 * Usage: requests [--threads N] [--seconds S] [--main-work] [--tags N [--tags-on-usr1]]
 * (default: 4 threads, forever)
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ctxprof.h"
#include "handlers.h"

static volatile int done;
static double seconds;
static uint32_t endpoint_tag[4];
static uint32_t *item_tag, nr_items;
static _Atomic int items_ready;
static volatile sig_atomic_t usr1;

static void *worker(void *arg)
{
	uint64_t thread = (uintptr_t)arg, n, span, root;
	unsigned int kind;
	char name[16];

	snprintf(name, sizeof(name), "worker-%u", (unsigned int)thread);
	pthread_setname_np(pthread_self(), name);

	for (n = 1; !done; n++) {
		kind = 1 + n % 3;
		/* unique per thread and request; the low byte says the kind */
		span = (thread << 48) | (n << 8) | kind;
		root = span ^ 0x5a5a000000000000ull;
		ctxprof_span_enter(span, root);
		ctxprof_set_tag(0, endpoint_tag[kind]);
		if (atomic_load_explicit(&items_ready, memory_order_acquire))
			ctxprof_set_tag(1, item_tag[(n * 64 + thread) % nr_items]);
		handlers[kind]();
		ctxprof_clear_tag(1);
		ctxprof_clear_tag(0);
		ctxprof_span_exit(span, 0);
		between_requests();
	}
	return NULL;
}

static void on_signal(int sig)
{
	usr1 = 1;
}

/* until SIGUSR1 came, or time @end (0: none) */
static void wait_usr1(double end)
{
	struct timespec ts = {0, 10000000};

	while (!usr1 && (!end || now() < end))
		nanosleep(&ts, NULL);
}

/* the burst: no flush, no span on this thread after it; the workers' spans carry the records */
static void intern_items(void)
{
	char v[16];
	uint32_t i;

	for (i = 0; i < nr_items; i++) {
		snprintf(v, sizeof(v), "i%05u", i + 1);
		item_tag[i] = ctxprof_intern_tag("item", v);
		if (!item_tag[i])
			exit(3);
	}
	atomic_store_explicit(&items_ready, 1, memory_order_release);
}

int main(int argc, char **argv)
{
	static const char *const endpoints[4] = {NULL, "/checkout", "/search", "/login"};
	int threads = 4, main_work = 0, on_usr1 = 0, i;
	double end;
	pthread_t t[64];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--main-work"))
			main_work = 1;
		else if (!strcmp(argv[i], "--tags") && i + 1 < argc)
			nr_items = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tags-on-usr1"))
			on_usr1 = 1;
		else {
			fprintf(stderr,
				"usage: %s [--threads N] [--seconds S] [--main-work] [--tags N "
				"[--tags-on-usr1]]\n",
				argv[0]);
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || nr_items > 1000000)
		return 2;
	item_tag = calloc(nr_items ? nr_items : 1, sizeof(*item_tag));
	if (!item_tag)
		return 1;
	end = seconds > 0 ? now() + seconds : 0;
	for (i = 1; i < 4; i++)
		endpoint_tag[i] = ctxprof_intern_tag("endpoint", endpoints[i]);
	/* the dictionary records sit in this thread's detail lane: hand them over */
	ctxprof_flush();
	if (on_usr1)
		signal(SIGUSR1, on_signal);
	if (nr_items && !on_usr1)
		intern_items();
	for (i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
			return 1;
	if (nr_items && on_usr1) {
		wait_usr1(end);
		intern_items();
	}
	while (main_work && (!end || now() < end))
		between_requests();
	if (end) {
		while (now() < end) {
			struct timespec ts = {0, 50000000};

			nanosleep(&ts, NULL);
		}
		done = 1;
	}
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
