// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bad_utf8 - a process whose strings are not UTF-8: its main thread is
 * named "bad\xff" (prctl(PR_SET_NAME)), a worker "w\xc0\xaf" (an overlong
 * '/'), and the worker serves a span with a libctxprof tag whose key and
 * value hold a lone continuation byte, a surrogate and a truncated
 * sequence.  Both threads burn the CPU in bad_utf8_work() until killed or
 * --seconds pass.  For tests/integration/test_pprof_strict.sh: a profile of
 * it must still be read by a strict protobuf parser.
 *
 * Usage: bad_utf8 [--seconds S]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include "ctxprof.h"
#include "handlers.h"

static double seconds;

static HANDLER void bad_utf8_work(void)
{
	double end = seconds > 0 ? now() + seconds : 0;

	while (!end || now() < end)
		burn(10);
}

static void *worker(void *arg)
{
	uint32_t tag = *(uint32_t *)arg;

	prctl(PR_SET_NAME, "w\xc0\xaf", 0, 0, 0);
	ctxprof_span_enter(0x1234, 0x5678);
	ctxprof_set_tag(0, tag);
	bad_utf8_work();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	uint32_t tag;

	if (argc == 3 && !strcmp(argv[1], "--seconds")) {
		seconds = atof(argv[2]);
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
		return 2;
	}
	prctl(PR_SET_NAME, "bad\xff", 0, 0, 0);
	tag = ctxprof_intern_tag("endpoint\x80", "/bad\xed\xa0\x80path\xe2\x82");
	if (!tag)
		return 1;
	ctxprof_flush();
	if (pthread_create(&t, NULL, worker, &tag))
		return 1;
	bad_utf8_work();
	pthread_join(t, NULL);
	return 0;
}
