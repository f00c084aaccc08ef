/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * scrape - the profiles /debug/pprof/profile serves (the requests come
 * through export/scrape_queue.h): each request taken gets a scrape window
 * in the drains (sampling/drain.h: every sample of its N seconds, of its
 * process when it names one) and an exporter of no rotation
 * (exporter__new()) filtering by its labels.  The window's rows are turned
 * into the exporter's samples at each profile window's close, while their
 * stacks are still stored, and at the scrape's own end; then the profile is
 * gzipped and answered.  Interval profiles go on unchanged meanwhile: a
 * scrape reads the drains' windows, it does not move them.
 *
 * Main thread only (the exporter's), with the drains running.
 */
#ifndef CTXPROF_SCRAPE_H
#define CTXPROF_SCRAPE_H

#include <stdint.h>
#include "export/export.h"
#include "export/scrape_queue.h"
#include "sampling/drain.h"

/* the largest profile a scrape answers with (gzipped) */
#define SCRAPE_MAX_PROFILE_BYTES (256u << 20)

struct scrape_stats {
	uint64_t served;    /* answered with a profile */
	uint64_t failed;    /* answered 500 (no memory, the profile too large) */
	uint64_t stopped;   /* answered 503: the collector stopped first */
	uint64_t samples;   /* CPU samples in the profiles served */
	uint64_t dropped;   /* of the windows', left out: a scrape table full */
	uint64_t unmatched; /* of the windows', left out by a request's label filters */
	uint64_t late;	    /* scrapes whose window began late (the main thread stalled) */
};

struct scrape;

/**
 * scrape__new() - serve the requests of @q from @d's scrape windows, the
 * stacks in @traces, named by @sym.
 * Return: the object, or NULL with errno set.  Pair with scrape__free().
 */
struct scrape *scrape__new(struct scrape_queue *q, struct drains *d,
			   struct calltrace_storage *traces, struct symbolizer *sym);

/**
 * scrape__poll() - take the requests waiting (a scrape window each, while
 * slots are free: the queue admits no more than DRAIN_SCRAPES), and answer
 * those whose window every drain closed.
 * @base: the options of a profile of this run (what to label, how to name);
 *	time, duration, comments and label filters are the scrape's own
 */
void scrape__poll(struct scrape *s, const struct export_opts *base);

/**
 * scrape__window_closed() - a profile window closed (between drains__close()
 * and drains__open()): take every open scrape's rows of it, and clear them.
 */
void scrape__window_closed(struct scrape *s);

/**
 * scrape__next_end() - when the soonest open scrape window is due to be
 * closed by the drains (CLOCK_MONOTONIC), UINT64_MAX when none is open:
 * the main loop wakes then.
 */
uint64_t scrape__next_end(const struct scrape *s);

/**
 * scrape__stop() - answer every open scrape 503 (the collector is stopping)
 * and close its window.  Before the drains stop reading.
 */
void scrape__stop(struct scrape *s);

/** scrape__stats() - counts so far. */
void scrape__stats(const struct scrape *s, struct scrape_stats *out);

/** scrape__free() - accepts NULL; call after scrape__stop(). */
void scrape__free(struct scrape *s);

#endif /* CTXPROF_SCRAPE_H */
