/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * metrics_feed - what /metrics serves, filled from every module's counters
 * (sampler, drains, unwinder, symbolizer, tracker, exports) into the
 * collector's snapshot, which the HTTP server's thread copies under its own
 * lock (export/metrics.h).  /healthz: collector/health.h.
 *
 * Main thread (collector.c), which owns @c.
 */
#ifndef CTXPROF_METRICS_FEED_H
#define CTXPROF_METRICS_FEED_H

#include <stddef.h>

struct collector;

/**
 * metrics_feed__start() - serve /metrics and /healthz on
 * @c->opts.metrics_addr, once every thread they watch runs.
 * Return: 0, or -errno with a one-line reason in @err_msg.
 */
int metrics_feed__start(struct collector *c, char *err_msg, size_t err_len);

/** metrics_feed__publish() - fill and publish a new snapshot; nothing without a server. */
void metrics_feed__publish(struct collector *c);

#endif /* CTXPROF_METRICS_FEED_H */
