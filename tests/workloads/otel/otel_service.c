// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * otel_service - a fake service instrumented with OpenTelemetry's process
 * and thread context (otel_sdk.h), with known behaviour to check a profile:
 *  - the process context names it: service.name=otel-shop,
 *    service.version=1.2.3, deployment.environment.name=test (and an
 *    integer process.pid, which is no label);
 *  - worker threads serve requests; each is a span whose handler is chosen
 *    by the span id's low byte (1 handle_checkout, 2 handle_search, 3
 *    handle_login), with trace id = span id twice, and attributes
 *    http.route (/checkout, /search, /login) and http.method; a search
 *    span writes http.method twice, BOGUS then GET (the last one counts);
 *  - between requests (between_requests) a thread has no context: even
 *    threads set the TLS pointer to NULL, odd ones keep one record and
 *    clear its valid byte (the OTEP's two ways);
 *  - --late-key SEC: after SEC seconds the key map gains "user.tier"
 *    (index 2, an update of the process context) and checkout spans carry
 *    user.tier=gold from then on;
 *  - --wait-ms MS: each request also sleeps MS ms in its span, after its
 *    handler, in request_wait() (its off-CPU time, for --off-cpu).
 *
 * Usage: otel_service [--threads N] [--seconds S] [--late-key SEC] [--anon]
 *                     [--wait-ms MS]
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "otel_sdk.h"
#include "../handlers.h"

static volatile int done;
static volatile int late_key_on;
static double seconds, late_key = -1;
static long wait_ms;

/* a request's wait: off the CPU in its span */
static __attribute__((noinline)) void request_wait(void)
{
	struct timespec ts = {wait_ms / 1000, wait_ms % 1000 * 1000000};

	nanosleep(&ts, NULL);
}

static const struct otel_sdk_attr resource[] = {
	{"service.name", "otel-shop"},
	{"service.version", "1.2.3"},
	{"deployment.environment.name", "test"},
};
static const char *const keys[] = {"http.route", "http.method", "user.tier"};
static const char *const routes[4] = {NULL, "/checkout", "/search", "/login"};
static const char *const methods[4] = {NULL, "POST", "GET", "POST"};

static void fill(struct otel_sdk_record *r, uint64_t span, unsigned int kind)
{
	uint8_t sid[8], tid[16];
	int i;

	/* W3C byte order: the id's hex is its bytes in order */
	for (i = 0; i < 8; i++)
		sid[i] = span >> (56 - 8 * i);
	memcpy(tid, sid, 8);
	memcpy(tid + 8, sid, 8);
	otel_sdk_record_set(r, tid, sid);
	otel_sdk_record_add(r, 0, routes[kind]);
	if (kind == 2)
		otel_sdk_record_add(r, 1, "BOGUS");
	otel_sdk_record_add(r, 1, methods[kind]);
	if (kind == 1 && late_key_on)
		otel_sdk_record_add(r, 2, "gold");
}

static void *worker(void *arg)
{
	uint64_t thread = (uintptr_t)arg, n, span;
	static __thread struct otel_sdk_record rec;
	bool in_place = thread & 1;
	unsigned int kind;

	if (in_place)
		otel_sdk_attach(&rec); /* the pointer stays; valid says when */
	for (n = 1; !done; n++) {
		kind = 1 + n % 3;
		span = (thread + 1) << 48 | n << 8 | kind;
		if (in_place) {
			otel_sdk_set_valid(&rec, 0);
			fill(&rec, span, kind);
			otel_sdk_set_valid(&rec, 1);
		} else {
			fill(&rec, span, kind);
			otel_sdk_attach(&rec);
		}
		handlers[kind]();
		if (wait_ms)
			request_wait();
		if (in_place)
			otel_sdk_set_valid(&rec, 0);
		else
			otel_sdk_detach();
		between_requests();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct otel_sdk_opts o = {.schema = "tls_v1"};
	int threads = 4, i;
	pthread_t th[64];
	double start = now();

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--late-key") && i + 1 < argc)
			late_key = atof(argv[++i]);
		else if (!strcmp(argv[i], "--anon"))
			o.anonymous = 1;
		else if (!strcmp(argv[i], "--wait-ms") && i + 1 < argc)
			wait_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--schema") && i + 1 < argc)
			o.schema = argv[++i];
		else {
			fprintf(stderr,
				"usage: %s [--threads N] [--seconds S] [--late-key SEC] [--anon] "
				"[--schema NAME] [--wait-ms MS]\n",
				argv[0]);
			return 2;
		}
	}
	if (threads < 1 || threads > 64)
		threads = 4;
	/* until late_key, the key map names two keys */
	if (otel_sdk_publish(&o, resource, 3, keys, late_key >= 0 ? 2 : 3)) {
		perror("otel_sdk_publish");
		return 1;
	}
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	while (!seconds || now() - start < seconds) {
		burn(100);
		if (late_key >= 0 && !late_key_on && now() - start >= late_key) {
			/* the append-only key map grows, then spans use the new key */
			otel_sdk_publish(&o, resource, 3, keys, 3);
			late_key_on = 1;
		}
	}
	done = 1;
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
