// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: thread names (any 16 bytes a program may put in its
 * comm) through the per-thread traces into a timeline, read back by the
 * strict JSON parser of the unit tests (tests/unit/json_strict.h).  Beyond
 * "no crash", it checks what viewers rely on: the document is JSON, UTF-8
 * throughout, and each thread's "thread_name" is its name with every byte
 * that starts no well-formed UTF-8 sequence replaced by U+FFFD, cut at the
 * first NUL.
 *
 * The input: up to NR_THREADS names of TRACE_EV_NAME_LEN bytes each (the
 * last one shorter), thread i named by the i-th, one span each.  Written in
 * both formats: in speedscope's, thread i's profile is named
 * "pid 4242 (pid 4242), NAME (tid T)", NAME as above.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/timeline.h"
#include "traces/trace.h"
#include "traces/trace_event.h"
#include "json_strict.h"

#define NR_THREADS 8
#define PID	   4242
#define MS	   1000000ull
#define T0	   (1000 * MS)

static char path[64];

static void put(struct trace_writer *w, uint32_t tid, const uint64_t *ev, unsigned int nw)
{
	struct trace *t = trace_writer__get(w, PID, tid, true);

	if (!t || trace__append(w, t, ev, nw))
		abort();
}

/* thread i named names[i], one span each */
static void put_threads(struct trace_writer *w, const char names[][TRACE_EV_NAME_LEN], size_t nr)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	for (size_t i = 0; i < nr; i++) {
		uint32_t tid = 100 + (uint32_t)i;

		put(w, tid, ev, trace_ev_thread_name(ev, T0, names[i]));
		put(w, tid, ev, trace_ev_span_begin(ev, T0 + (i + 1) * MS, i + 1, i + 1));
		put(w, tid, ev, trace_ev_span_end(ev, T0 + (i + 2) * MS, i + 1));
	}
}

static unsigned char *slurp(size_t *len)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *buf;
	long n;

	if (!fp || fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET))
		abort();
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n)
		abort();
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

/* the thread_name metadata of @tid, or NULL */
static const struct json *thread_name(const struct json *doc, uint32_t tid)
{
	const struct json *evs = json_get(doc, "traceEvents");
	char want[16];

	if (!evs || evs->type != JSON_ARRAY)
		abort();
	snprintf(want, sizeof(want), "%u", tid);
	for (size_t i = 0; i < evs->nr; i++) {
		const struct json *e = &evs->items[i], *t = json_get(e, "tid");
		const char *n = json_str(json_get(e, "name"));

		if (n && !strcmp(n, "thread_name") && t && t->type == JSON_NUMBER &&
		    !strcmp(t->text, want))
			return json_get(json_get(e, "args"), "name");
	}
	return NULL;
}

/* speedscope's profile of thread @tid: its name, NULL when none */
static const struct json *profile_name(const struct json *doc, uint32_t tid)
{
	const struct json *profiles = json_get(doc, "profiles");
	char end[32];
	int n = snprintf(end, sizeof(end), " (tid %u)", tid);

	for (size_t i = 0; profiles && i < profiles->nr; i++) {
		const struct json *name = json_get(&profiles->items[i], "name");

		if (name && name->type == JSON_STRING && name->len >= (size_t)n &&
		    !memcmp(name->text + name->len - n, end, (size_t)n))
			return name;
	}
	return NULL;
}

/* " (tid T)" */
static const char *tid_name_of(size_t tid)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), " (tid %zu)", tid);
	return buf;
}

static void check(const struct json *doc, const char names[][TRACE_EV_NAME_LEN], size_t nr,
		  bool speedscope)
{
	char want[3 * TRACE_EV_NAME_LEN + 64], tid_name[32];
	const char *head = "pid 4242 (pid 4242), ";

	for (size_t i = 0; i < nr; i++) {
		const struct json *got = speedscope ? profile_name(doc, 100 + (uint32_t)i)
						    : thread_name(doc, 100 + (uint32_t)i);
		size_t len = strnlen(names[i], TRACE_EV_NAME_LEN);

		if (!got || got->type != JSON_STRING)
			abort();
		if (len) {
			len = json_utf8_replaced((const unsigned char *)names[i], len, want);
		} else {
			/* no name: the timeline names the thread by its id */
			len = (size_t)snprintf(tid_name, sizeof(tid_name), "tid %zu", 100 + i);
			memcpy(want, tid_name, len + 1);
		}
		if (speedscope) {
			if (got->len != strlen(head) + len + strlen(tid_name_of(100 + i)) ||
			    memcmp(got->text, head, strlen(head)) ||
			    memcmp(got->text + strlen(head), want, len))
				abort();
			continue;
		}
		if (got->len != len || memcmp(got->text, want, len))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char names[NR_THREADS][TRACE_EV_NAME_LEN] = {{0}}, err[128];
	struct timeline_opts o = {.period_ns = MS, .begin_ns = T0, .end_ns = T0 + 100 * MS};
	struct timeline_result res;
	struct trace_writer *w;
	struct timeline *tl;
	struct traces *ts;
	struct json *doc;
	unsigned char *text;
	size_t nr = 0, len;

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fuzz_timeline_names.%d.json", (int)getpid());
	for (; nr < NR_THREADS && nr * TRACE_EV_NAME_LEN < size; nr++)
		memcpy(names[nr], data + nr * TRACE_EV_NAME_LEN,
		       size - nr * TRACE_EV_NAME_LEN < TRACE_EV_NAME_LEN
			       ? size - nr * TRACE_EV_NAME_LEN
			       : TRACE_EV_NAME_LEN);
	ts = traces__new(NULL);
	tl = timeline__new();
	if (!ts || !tl || !(w = traces__writer(ts)))
		abort();
	/* a replay consumes the events: each format gets them anew */
	for (int speedscope = 0; speedscope < 2; speedscope++) {
		put_threads(w, names, nr);
		traces__cut(ts, UINT64_MAX);
		o.format = speedscope ? TIMELINE_SPEEDSCOPE : TIMELINE_CHROME;
		if (timeline__write(tl, ts, path, &o, &res) || res.threads != nr)
			abort();
		text = slurp(&len);
		doc = json_parse(text, len, err, sizeof(err));
		if (!doc) {
			fprintf(stderr, "not strict JSON: %s\n", err);
			abort();
		}
		check(doc, names, nr, speedscope);
		json_free(doc);
		free(text);
		unlink(path);
	}
	timeline__free(tl);
	traces__free(ts);
	return 0;
}
