/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * health - the /healthz verdict: the collector is healthy while every drain
 * thread and the tracking thread make progress (their heartbeat counts move)
 * and the last export succeeded (and, in continuous mode, was not long ago).
 *
 * The main thread reports exports (health__exported()); the HTTP thread asks
 * health__check(), which reads the threads' heartbeats (relaxed atomics) and
 * takes only the checker's own lock: it never blocks a collector thread.
 */
#ifndef CTXPROF_HEALTH_H
#define CTXPROF_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

struct drains;
struct tracker;

/* a thread whose heartbeat stays still this long is stalled (they beat every 100 ms) */
#define HEALTH_STALL_S 10.0

struct health;

/**
 * health__new() - a checker of @drains' threads and @tracker's.
 * @interval: seconds between exports (continuous mode); 0: one at the end
 * Return: NULL with errno set.  Pair with health__free() (after the HTTP
 * server that calls it stopped).
 */
struct health *health__new(struct drains *drains, struct tracker *tracker, double interval);

/** health__exported() - an export ended (@err 0: written).  Main thread. */
void health__exported(struct health *h, int err);

/** health__stopping() - the collector is shutting down: unhealthy from now on. */
void health__stopping(struct health *h);

/**
 * health__check() - the verdict, a metrics_health_fn: true when healthy,
 * else false with a one-line reason in @why.  One thread at a time.
 */
bool health__check(void *h, char *why, size_t why_len);

void health__free(struct health *h);

#endif /* CTXPROF_HEALTH_H */
