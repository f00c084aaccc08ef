// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "collector/health.h"
#include "processes/tracker.h"
#include "sampling/drain.h"
#include "util/clock.h"

/* a heartbeat: its last value and when it last moved */
struct beat {
	uint64_t value;
	double moved_at;
};

struct health {
	struct drains *drains;
	struct tracker *tracker;
	double interval;
	double started_at;
	pthread_mutex_t lock; /* @beats: checks may come from more than one thread */
	struct beat *beats;   /* one per drain, then the tracker's */
	int nr_beats;
	/* written by the main thread */
	_Atomic int export_err;	    /* the latest export's, 0: written */
	_Atomic uint64_t export_ms; /* CLOCK_MONOTONIC ms of the latest good one; 0: none */
	_Atomic bool stopping;
};

struct health *health__new(struct drains *drains, struct tracker *tracker, double interval)
{
	struct health *h = calloc(1, sizeof(*h));
	int i;

	if (!h)
		return NULL;
	h->drains = drains;
	h->tracker = tracker;
	h->interval = interval;
	h->started_at = clock_s(CLOCK_MONOTONIC);
	h->nr_beats = drains__nr(drains) + 1;
	h->beats = calloc(h->nr_beats, sizeof(*h->beats));
	if (!h->beats) {
		free(h);
		return NULL;
	}
	for (i = 0; i < h->nr_beats; i++)
		h->beats[i].moved_at = h->started_at;
	pthread_mutex_init(&h->lock, NULL);
	return h;
}

void health__exported(struct health *h, int err)
{
	if (!h)
		return;
	atomic_store(&h->export_err, err);
	if (!err)
		atomic_store(&h->export_ms, (uint64_t)(clock_s(CLOCK_MONOTONIC) * 1000));
}

void health__stopping(struct health *h)
{
	if (h)
		atomic_store(&h->stopping, true);
}

bool health__check(void *ctx, char *why, size_t why_len)
{
	struct health *h = ctx;
	double now = clock_s(CLOCK_MONOTONIC), last;
	uint64_t v, ms;
	int i, err;
	bool ok = true;

	if (atomic_load(&h->stopping)) {
		snprintf(why, why_len, "stopping");
		return false;
	}
	err = drains__error(h->drains);
	if (err) {
		snprintf(why, why_len, "a drain thread stopped: reading the ring buffers: %s",
			 strerror(-err));
		return false;
	}
	pthread_mutex_lock(&h->lock);
	for (i = 0; i < h->nr_beats; i++) {
		bool tracker = i == h->nr_beats - 1;

		v = tracker ? tracker__heartbeat(h->tracker) : drains__heartbeat(h->drains, i);
		if (v != h->beats[i].value) {
			h->beats[i].value = v;
			h->beats[i].moved_at = now;
		} else if (ok && now - h->beats[i].moved_at > HEALTH_STALL_S) {
			if (tracker)
				snprintf(why, why_len,
					 "the lifecycle (tracking) thread made no progress for "
					 "%.0f s",
					 now - h->beats[i].moved_at);
			else
				snprintf(why, why_len,
					 "drain thread %d made no progress for %.0f s", i,
					 now - h->beats[i].moved_at);
			ok = false;
		}
	}
	pthread_mutex_unlock(&h->lock);
	if (!ok)
		return false;
	err = atomic_load(&h->export_err);
	if (err) {
		snprintf(why, why_len, "the last export failed: %s", strerror(-err));
		return false;
	}
	/* continuous mode: an export is due every interval; allow two and a margin */
	ms = atomic_load(&h->export_ms);
	last = ms ? ms / 1000.0 : h->started_at;
	if (h->interval > 0 && now - last > 2 * h->interval + 30) {
		snprintf(why, why_len, "no profile written for %.0f s (interval %.0f s)",
			 now - last, h->interval);
		return false;
	}
	return true;
}

void health__free(struct health *h)
{
	if (!h)
		return;
	pthread_mutex_destroy(&h->lock);
	free(h->beats);
	free(h);
}
