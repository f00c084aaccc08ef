// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * otel_hostile - a process whose OpenTelemetry context is broken in one way
 * (--mode), for tests/integration/test_otel_hostile.sh.  Two threads run
 * handle_checkout() in a "span" (a record attached) and between_requests()
 * outside one; the key map names http.route (0) and http.method (1).
 *
 *   invalid       the record's valid byte is 2: no trace label may appear
 *   attrs-past    attrs_size runs past the record's page into a PROT_NONE
 *                 page: ids, no attributes
 *   attrs-absurd  attrs_size 65535: ids, no attributes
 *   unmapped      the TLS pointer points at an unmapped page: no label
 *   unknown-key   attributes with index 7, which the key map does not name
 *                 (and http.route): only http.route
 *   truncated     http.route, then an entry whose length runs past
 *                 attrs_size: only http.route
 *   not-protobuf  the process context payload is no protobuf: no label at all
 *   updating      the header stays mid-update (timestamp 0): no label at all
 *
 * Usage: otel_hostile --mode MODE [--seconds S]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "otel_sdk.h"
#include "../handlers.h"

static volatile int done;
static const char *mode = "";
/* below mmap_min_addr: nothing is ever mapped there */
static void *const unmapped_page = (void *)0x1000;

static const struct otel_sdk_attr resource[] = {{"service.name", "hostile"}};
static const char *const keys[] = {"http.route", "http.method"};

/* a record whose 28-byte header ends a page followed by an inaccessible one */
static struct otel_sdk_record *record_at_page_end(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + pg, pg, PROT_NONE))
		abort();
	return (struct otel_sdk_record *)(p + pg - 28);
}

static void *worker(void *arg)
{
	static const uint8_t tid[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2,  3,  4,
					5,    6,    7,	  8,	9, 10, 11, 12};
	static const uint8_t sid[8] = {0xca, 0xfe, 0, 0, 0, 0, 0, 1};
	struct otel_sdk_record *r = calloc(1, sizeof(*r));
	struct otel_sdk_record *edge = record_at_page_end();

	while (!done) {
		if (!strcmp(mode, "attrs-past")) {
			/* only the header is in the page: write it field by field */
			memcpy(edge->trace_id, tid, 16);
			memcpy(edge->span_id, sid, 8);
			edge->trace_flags = 1;
			edge->attrs_size = 100;
			otel_sdk_attach(edge);
		} else if (!strcmp(mode, "unmapped")) {
			otel_sdk_point(unmapped_page);
		} else {
			otel_sdk_record_set(r, tid, sid);
			otel_sdk_record_add(r, 0, "/checkout");
			if (!strcmp(mode, "unknown-key"))
				otel_sdk_record_add(r, 7, "evil");
			if (!strcmp(mode, "truncated")) {
				/* an entry announcing 50 bytes where 3 remain */
				r->attrs[r->attrs_size] = 1;
				r->attrs[r->attrs_size + 1] = 50;
				memcpy(r->attrs + r->attrs_size + 2, "GET", 3);
				r->attrs_size += 5;
			}
			if (!strcmp(mode, "attrs-absurd"))
				r->attrs_size = 65535;
			otel_sdk_attach(r);
			if (!strcmp(mode, "invalid"))
				otel_sdk_set_valid(r, 2);
		}
		handle_checkout();
		otel_sdk_detach();
		between_requests();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct otel_sdk_opts o = {.schema = "tlsdesc_v1_dev"};
	double seconds = 0, start = now();
	pthread_t th[2];
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			mode = argv[++i];
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else {
			fprintf(stderr, "usage: %s --mode MODE [--seconds S]\n", argv[0]);
			return 2;
		}
	}
	if (!strcmp(mode, "not-protobuf")) {
		static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					       0xff, 0xff, 0xff, 0x0a, 0x80, 0x01, 0x00};

		if (otel_sdk_publish_raw(&o, junk, sizeof(junk)))
			return 1;
	} else if (otel_sdk_publish(&o, resource, 1, keys, 2)) {
		return 1;
	}
	if (!strcmp(mode, "updating"))
		otel_sdk_hold_update();
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	while (!seconds || now() - start < seconds)
		usleep(100000);
	done = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}
