// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writes the seed corpus of fuzz_ctxprof_region: regions made by libctxprof
 * itself, small (max_threads 2, smallest rings) so that they stay < 64 KB.
 *   valid_region:    slot 0 Active with a context, tags, span events and
 *                    dictionary records submitted on both lanes
 *   draining_region: the same after a second thread exited (slot 1 Draining)
 * Usage: gen_ctxprof_region DIR   (make ctxprof-corpus)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ctxprof.h"
#include "ctxprof_abi.h"
#include "internal.h"

static int write_region(const char *dir, const char *name)
{
	char path[4096];
	size_t size;
	void *base = ctxprof__region(&size);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || !base || fwrite(base, 1, size, f) != size || fclose(f)) {
		fprintf(stderr, "gen_ctxprof_region: %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("%s: %zu bytes\n", path, size);
	return 0;
}

static void *second_thread(void *arg)
{
	ctxprof_span_enter(0x200, 0x100);
	ctxprof_set_tag(1, ctxprof_intern_tag("worker", "second"));
	ctxprof_span_exit(0x200, 0);
	return NULL; /* the exit destructor submits and leaves the slot Draining */
}

int main(int argc, char **argv)
{
	struct ctxprof_options o = {
		.sz = sizeof(o),
		.max_threads = 2,
		.index_rings = 2,
		.index_ring_size = 256,
		.detail_rings = 1,
		.detail_ring_size = CTXPROF_DETAIL_RING_MIN_SIZE,
	};
	pthread_t th;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	if (ctxprof_init(&o))
		return 1;
	ctxprof_span_enter(0x1234, 0x1000);
	ctxprof_set_tag(0, ctxprof_intern_tag("service", "checkout"));
	ctxprof_set_tag(2, ctxprof_intern_tag("endpoint", "/api/pay"));
	/* more than one ring of events: one submitted full, one by the flush */
	for (i = 0; i < 9; i++)
		ctxprof_span_begin(0x2000 + i, 0x1000);
	ctxprof_span_exit(0x1234, 0);
	ctxprof_flush();
	if (write_region(argv[1], "valid_region"))
		return 1;
	if (pthread_create(&th, NULL, second_thread, NULL) || pthread_join(th, NULL))
		return 1;
	return write_region(argv[1], "draining_region");
}
