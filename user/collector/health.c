// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * health - the /healthz verdict from the threads' heartbeats, the exports
 * and the degraded conditions.  See health.h.
 */
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

static const char *const condition_names[HEALTH_CONDITION_MAX] = {
	[HEALTH_THROTTLED] = "throttled",
	[HEALTH_CPU_OFFLINE_EVENTS_MISSING] = "cpu_offline_events_missing",
	[HEALTH_EXPORT_FAILING] = "export_failing",
	[HEALTH_DISK_FULL] = "disk_full",
	[HEALTH_PUSH_FAILING] = "push_failing",
};

/* a heartbeat: its last value and when it last moved */
struct beat {
	uint64_t value;
	double moved_at;
};

struct condition {
	bool active;
	uint64_t raised;
	char reason[HEALTH_REASON_LEN]; /* the last one given, "" if never raised */
};

struct health {
	struct drains *drains;	 /* NULL: none watched */
	struct tracker *tracker; /* NULL: none watched */
	double interval;
	double started_at;
	pthread_mutex_t lock; /* @beats, @conds: any thread may check, raise, clear */
	struct beat *beats;   /* one per drain, then the tracker's */
	int nr_drains;
	int nr_beats;
	struct condition conds[HEALTH_CONDITION_MAX];
	/* written by the main thread */
	_Atomic uint64_t attempt_ms; /* CLOCK_MONOTONIC ms of the latest export attempt; 0: none */
	_Atomic bool stopping;
};

const char *health_condition_name(enum health_condition cond)
{
	return cond < HEALTH_CONDITION_MAX ? condition_names[cond] : "unknown";
}

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
	h->nr_drains = drains ? drains__nr(drains) : 0;
	h->nr_beats = h->nr_drains + (tracker != NULL);
	h->beats = calloc(h->nr_beats + 1, sizeof(*h->beats));
	if (!h->beats) {
		free(h);
		return NULL;
	}
	for (i = 0; i < h->nr_beats; i++)
		h->beats[i].moved_at = h->started_at;
	pthread_mutex_init(&h->lock, NULL);
	return h;
}

void health__raise(struct health *h, enum health_condition cond, const char *why)
{
	struct condition *c;

	if (!h || cond >= HEALTH_CONDITION_MAX)
		return;
	c = &h->conds[cond];
	pthread_mutex_lock(&h->lock);
	if (!c->active)
		c->raised++;
	c->active = true;
	snprintf(c->reason, sizeof(c->reason), "%s", why ? why : "");
	pthread_mutex_unlock(&h->lock);
}

void health__clear(struct health *h, enum health_condition cond)
{
	if (!h || cond >= HEALTH_CONDITION_MAX)
		return;
	pthread_mutex_lock(&h->lock);
	h->conds[cond].active = false;
	pthread_mutex_unlock(&h->lock);
}

void health__exported(struct health *h, int err)
{
	char why[HEALTH_REASON_LEN];

	if (!h)
		return;
	atomic_store(&h->attempt_ms, (uint64_t)(clock_s(CLOCK_MONOTONIC) * 1000));
	if (!err) {
		health__clear(h, HEALTH_EXPORT_FAILING);
		health__clear(h, HEALTH_DISK_FULL);
		return;
	}
	snprintf(why, sizeof(why), "the last export failed: %s", strerror(-err));
	health__raise(h, HEALTH_EXPORT_FAILING, why);
	if (err == -ENOSPC || err == -EDQUOT) {
		snprintf(why, sizeof(why), "no room for profiles: %s", strerror(-err));
		health__raise(h, HEALTH_DISK_FULL, why);
	}
}

void health__stopping(struct health *h)
{
	if (h)
		atomic_store(&h->stopping, true);
}

/* a heartbeat that stood still too long, said in @why; under h->lock */
static bool stalled_locked(struct health *h, double now, char *why, size_t why_len)
{
	bool stalled = false;
	uint64_t v;
	int i;

	for (i = 0; i < h->nr_beats; i++) {
		bool tracker = i == h->nr_drains;

		v = tracker ? tracker__heartbeat(h->tracker) : drains__heartbeat(h->drains, i);
		if (v != h->beats[i].value) {
			h->beats[i].value = v;
			h->beats[i].moved_at = now;
		} else if (!stalled && now - h->beats[i].moved_at > HEALTH_STALL_S) {
			if (tracker)
				snprintf(why, why_len,
					 "the lifecycle (tracking) thread made no progress for "
					 "%.0f s",
					 now - h->beats[i].moved_at);
			else
				snprintf(why, why_len,
					 "drain thread %d made no progress for %.0f s", i,
					 now - h->beats[i].moved_at);
			stalled = true;
		}
	}
	return stalled;
}

/* every raised condition, "name: reason; ..." in @why; under h->lock */
static bool degraded_locked(struct health *h, char *why, size_t why_len)
{
	size_t used = 0;
	int i, n;

	for (i = 0; i < HEALTH_CONDITION_MAX; i++) {
		if (!h->conds[i].active)
			continue;
		n = snprintf(why + used, why_len - used, "%s%s: %s", used ? "; " : "",
			     condition_names[i], h->conds[i].reason);
		if (n < 0 || (size_t)n >= why_len - used)
			return true;
		used += n;
	}
	return used > 0;
}

enum metrics_health health__check(void *ctx, char *why, size_t why_len)
{
	struct health *h = ctx;
	double now = clock_s(CLOCK_MONOTONIC), last;
	enum metrics_health verdict = METRICS_HEALTHY;
	uint64_t ms;
	int err;

	if (!h)
		return METRICS_HEALTHY;
	if (atomic_load(&h->stopping)) {
		snprintf(why, why_len, "stopping");
		return METRICS_UNHEALTHY;
	}
	err = h->drains ? drains__error(h->drains) : 0;
	if (err) {
		snprintf(why, why_len, "a drain thread stopped: reading the ring buffers: %s",
			 strerror(-err));
		return METRICS_UNHEALTHY;
	}
	/* continuous mode: an export is due every interval; allow two and a margin */
	ms = atomic_load(&h->attempt_ms);
	last = ms ? ms / 1000.0 : h->started_at;
	if (h->interval > 0 && now - last > 2 * h->interval + 30) {
		snprintf(why, why_len,
			 "no profile written or attempted for %.0f s (interval %.0f s)", now - last,
			 h->interval);
		return METRICS_UNHEALTHY;
	}
	pthread_mutex_lock(&h->lock);
	if (stalled_locked(h, now, why, why_len))
		verdict = METRICS_UNHEALTHY;
	else if (degraded_locked(h, why, why_len))
		verdict = METRICS_DEGRADED;
	pthread_mutex_unlock(&h->lock);
	return verdict;
}

void health__stats(struct health *h, struct health_stats *out)
{
	int i;

	memset(out, 0, sizeof(*out));
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	for (i = 0; i < HEALTH_CONDITION_MAX; i++) {
		out->active[i] = h->conds[i].active;
		out->raised[i] = h->conds[i].raised;
	}
	pthread_mutex_unlock(&h->lock);
}

bool health__reason(struct health *h, enum health_condition cond, char *why, size_t why_len)
{
	if (why_len)
		why[0] = '\0';
	if (!h || cond >= HEALTH_CONDITION_MAX)
		return false;
	pthread_mutex_lock(&h->lock);
	snprintf(why, why_len, "%s", h->conds[cond].reason);
	pthread_mutex_unlock(&h->lock);
	return why_len && why[0];
}

void health__free(struct health *h)
{
	if (!h)
		return;
	pthread_mutex_destroy(&h->lock);
	free(h->beats);
	free(h);
}
