/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * health - the /healthz verdict, in three states:
 *
 *   unhealthy (503)  a restart may help: a drain thread or the tracking
 *                    thread makes no progress (its heartbeat stays still),
 *                    a drain thread stopped on an error, no export was even
 *                    attempted for two intervals and 30 s (continuous mode),
 *                    or the collector is stopping;
 *   degraded (200)   the collector works but the profile is not whole, and a
 *                    restart would not help (or would lose what is in
 *                    memory): one of the named conditions below is raised.
 *                    The body says "degraded: " and each condition with why;
 *                    /metrics has ctxprof_degraded{condition} (1 while
 *                    raised) so it shows on dashboards and alerts, while the
 *                    kubelet's liveness probe leaves the collector running;
 *   healthy (200)    "ok".
 *
 * Conditions: a small fixed set, each raised and cleared by whoever sees it
 * (the collector's layer, from what a module's API reports: throttling and
 * CPUs without an event from sampler__health(), polled once a second in
 * metrics_feed.c; export failures from health__exported(), called where
 * each export ends).  To add one: an enum entry here and its name in
 * health.c, then health__raise()/health__clear() where the finding is
 * seen; the counter descriptions (collector/counters.c) export every
 * condition by name (ctxprof_degraded{condition}), and the summary prints
 * each one raised during the run with its last reason.
 *
 * Threads: health__raise(), health__clear() and health__exported() from
 * any thread; health__check() from the HTTP server's threads.  All take only
 * the checker's own lock, for a copy or a compare: they never block on a
 * collector thread.  Every function accepts a NULL @h and then does nothing.
 */
#ifndef CTXPROF_HEALTH_H
#define CTXPROF_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export/metrics.h"

struct drains;
struct tracker;

/* a thread whose heartbeat stays still this long is stalled (they beat every 100 ms) */
#define HEALTH_STALL_S 10.0
/* bytes of a condition's reason kept, its NUL included */
#define HEALTH_REASON_LEN 160

enum health_condition {
	/* the kernel samples below the requested frequency
	 * (kernel.perf_event_max_sample_rate lowered, perf throttling) */
	HEALTH_THROTTLED,
	/* a CPU is online but its perf event is not: its samples are lost */
	HEALTH_CPU_OFFLINE_EVENTS_MISSING,
	/* the latest export failed (raised and cleared by health__exported()) */
	HEALTH_EXPORT_FAILING,
	/* ... for want of space (ENOSPC, EDQUOT); cleared by the next good one */
	HEALTH_DISK_FULL,
	/* --push: the latest upload failed (the profiles wait in the spool) */
	HEALTH_PUSH_FAILING,
	HEALTH_CONDITION_MAX,
};

/* the conditions as /metrics and the summary show them */
struct health_stats {
	uint64_t active[HEALTH_CONDITION_MAX]; /* 1 while raised */
	uint64_t raised[HEALTH_CONDITION_MAX]; /* times raised from clear */
};

struct health;

/**
 * health__new() - a checker of @drains' threads and @tracker's (either may
 * be NULL: no heartbeat to watch).
 * @interval: seconds between exports (continuous mode); 0: one at the end
 * Return: NULL with errno set.  Pair with health__free() (after the HTTP
 * server that calls it stopped).
 */
struct health *health__new(struct drains *drains, struct tracker *tracker, double interval);

/** health_condition_name() - "throttled", "cpu_offline_events_missing", ... */
const char *health_condition_name(enum health_condition cond);

/**
 * health__raise() - @cond holds, because @why (one line, no "\n"; copied,
 * cut at HEALTH_REASON_LEN): the verdict is degraded until health__clear().
 * Raising a raised condition only replaces its reason (it is counted once).
 * Any thread.
 */
void health__raise(struct health *h, enum health_condition cond, const char *why);

/** health__clear() - @cond no longer holds; its last reason stays for the summary. */
void health__clear(struct health *h, enum health_condition cond);

/**
 * health__exported() - an export was attempted and ended with @err (0:
 * written): raises or clears HEALTH_EXPORT_FAILING and HEALTH_DISK_FULL.
 */
void health__exported(struct health *h, int err);

/** health__stopping() - the collector is shutting down: unhealthy from now on. */
void health__stopping(struct health *h);

/**
 * health__check() - the verdict, a metrics_health_fn; a one-line reason in
 * @why unless healthy (degraded: every raised condition, "name: reason; ...").
 */
enum metrics_health health__check(void *h, char *why, size_t why_len);

/** health__stats() - which conditions are raised, how often they were; zeros for NULL. */
void health__stats(struct health *h, struct health_stats *out);

/**
 * health__reason() - the last reason @cond was raised with.
 * Return: false (and "" in @why) when it never was.
 */
bool health__reason(struct health *h, enum health_condition cond, char *why, size_t why_len);

void health__free(struct health *h);

#endif /* CTXPROF_HEALTH_H */
