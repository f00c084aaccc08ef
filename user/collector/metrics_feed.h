/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * metrics_feed - the collector's once-a-second bookkeeping for /metrics and
 * /healthz: every described counter (collector/counters.h) goes into the
 * snapshot the HTTP listeners serve (export/metrics.h).  What a module
 * reports that the main loop polls and turns into a degraded condition
 * (collector/health.h: throttling, CPUs without an event) is raised or
 * cleared here too, before the snapshot, so /metrics shows it at once.
 *
 * Main thread (collector.c), which owns @c.
 */
#ifndef CTXPROF_METRICS_FEED_H
#define CTXPROF_METRICS_FEED_H

#include <stddef.h>

struct collector;

/**
 * metrics_feed__start() - the health checker, always (the summary reports
 * its conditions), and the HTTP listeners of @c->opts.metrics_addr and
 * @c->opts.health_addr when given, once every thread they watch runs.
 * Return: 0, or -errno with a one-line reason in @err_msg.
 */
int metrics_feed__start(struct collector *c, char *err_msg, size_t err_len);

/**
 * metrics_feed__tick() - once a second, after sampler__check(), with or
 * without a server: the sampler's findings into degraded conditions, then
 * a snapshot filled and published.
 */
void metrics_feed__tick(struct collector *c);

#endif /* CTXPROF_METRICS_FEED_H */
