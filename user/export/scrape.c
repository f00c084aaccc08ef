// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * scrape - the profiles /debug/pprof/profile serves.  See scrape.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>
#include "export/scrape.h"
#include "util/clock.h"

/* one request being profiled: its drains' scrape window of the same index */
struct scrape_slot {
	struct scrape_request *req; /* NULL: the slot is free */
	struct exporter *e;
	uint64_t end_ns; /* CLOCK_MONOTONIC */
	int64_t start_wall;
	char comment[256];
	const char *comments[2];
};

struct scrape {
	struct scrape_queue *q;
	struct drains *drains;
	struct calltrace_storage *traces;
	struct symbolizer *sym;
	struct scrape_slot slots[DRAIN_SCRAPES];
	struct scrape_stats stats;
};

struct scrape *scrape__new(struct scrape_queue *q, struct drains *d,
			   struct calltrace_storage *traces, struct symbolizer *sym)
{
	struct scrape *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->q = q;
	s->drains = d;
	s->traces = traces;
	s->sym = sym;
	return s;
}

/* a line of text as an answer's body (malloc()ed: the queue frees it) */
static uint8_t *text(const char *line)
{
	return (uint8_t *)strdup(line);
}

static void slot_free(struct scrape *s, unsigned int i)
{
	struct scrape_slot *sl = &s->slots[i];

	drains__scrape_close(s->drains, i);
	exporter__free(sl->e);
	memset(sl, 0, sizeof(*sl));
}

/* @r gets slot @i: its window opens, an exporter filters by its labels */
static void slot_open(struct scrape *s, unsigned int i, struct scrape_request *r,
		      const struct export_opts *base)
{
	const struct scrape_request_args *a = &r->args;
	struct scrape_slot *sl = &s->slots[i];
	struct export_opts o = *base;
	uint64_t start_ns, end_ns;
	int err;

	err = drains__scrape_open(s->drains, i, a->pid, (uint64_t)a->seconds * 1000000000ull,
				  &start_ns, &end_ns);
	if (err && err != -ETIME) {
		scrape_queue__answer(s->q, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     text("cannot take a profile: out of memory"), 0, false);
		s->stats.failed++;
		return;
	}
	s->stats.late += err == -ETIME;
	sl->req = r;
	sl->end_ns = end_ns;
	sl->start_wall = (int64_t)(clock_ns(CLOCK_REALTIME) - mono_ns() + start_ns);
	snprintf(sl->comment, sizeof(sl->comment),
		 "ctxprof collector: /debug/pprof/profile, %u s%s%s", a->seconds,
		 a->pid ? ", one process" : "", a->nr_match ? ", filtered by labels" : "");
	sl->comments[0] = sl->comment;
	o.time_nanos = sl->start_wall;
	o.duration_nanos = (int64_t)(end_ns - start_ns);
	o.comments = sl->comments;
	o.match = a->match;
	o.nr_match = a->nr_match;
	sl->e = exporter__new(s->traces, s->sym, &o);
	if (!sl->e) {
		scrape_queue__answer(s->q, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     text("cannot take a profile: out of memory"), 0, false);
		s->stats.failed++;
		slot_free(s, i);
	}
}

static void add_table(void *ctx, struct sample_table *t)
{
	exporter__add_samples(ctx, t);
	sample_table__clear(t);
}

/* every drain closed slot @i's window: its last rows, then the answer */
static void slot_finish(struct scrape *s, unsigned int i)
{
	struct scrape_slot *sl = &s->slots[i];
	struct export_result res;
	uint8_t *gz = NULL;
	size_t len = 0;
	int err;

	drains__for_each_scrape_table(s->drains, i, true, add_table, sl->e);
	s->stats.dropped += drains__scrape_dropped(s->drains, i);
	err = exporter__gz(sl->e, SCRAPE_MAX_PROFILE_BYTES, &gz, &len, &res);
	s->stats.unmatched += res.unmatched;
	if (err) {
		scrape_queue__answer(s->q, sl->req, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     text(err == -EFBIG ? "the profile is too large"
							: "cannot encode the profile"),
				     0, false);
		s->stats.failed++;
	} else {
		scrape_queue__answer(s->q, sl->req, MHD_HTTP_OK, gz, len, true);
		s->stats.served++;
		s->stats.samples += res.samples;
	}
	slot_free(s, i);
}

void scrape__poll(struct scrape *s, const struct export_opts *base)
{
	struct scrape_request *r;
	unsigned int i;

	for (i = 0; i < DRAIN_SCRAPES; i++)
		if (s->slots[i].req && drains__scrape_closed(s->drains, i))
			slot_finish(s, i);
	for (i = 0; i < DRAIN_SCRAPES; i++) {
		if (s->slots[i].req)
			continue;
		r = scrape_queue__take(s->q);
		if (!r)
			break;
		slot_open(s, i, r, base);
	}
}

void scrape__window_closed(struct scrape *s)
{
	for (unsigned int i = 0; i < DRAIN_SCRAPES; i++)
		if (s->slots[i].req)
			drains__for_each_scrape_table(s->drains, i, false, add_table,
						      s->slots[i].e);
}

uint64_t scrape__next_end(const struct scrape *s)
{
	uint64_t next = UINT64_MAX;

	for (unsigned int i = 0; i < DRAIN_SCRAPES; i++)
		if (s->slots[i].req && s->slots[i].end_ns + DRAIN_SETTLE_NS < next)
			next = s->slots[i].end_ns + DRAIN_SETTLE_NS;
	return next;
}

void scrape__stop(struct scrape *s)
{
	for (unsigned int i = 0; i < DRAIN_SCRAPES; i++) {
		if (!s->slots[i].req)
			continue;
		scrape_queue__answer(s->q, s->slots[i].req, MHD_HTTP_SERVICE_UNAVAILABLE,
				     text("the collector stopped before the profile's end"), 0,
				     false);
		s->stats.stopped++;
		slot_free(s, i);
	}
}

void scrape__stats(const struct scrape *s, struct scrape_stats *out)
{
	*out = s->stats;
}

void scrape__free(struct scrape *s)
{
	free(s);
}
