/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report - the status line and the summary on stderr.  The summary's
 * counter lines come from the counters' one description
 * (collector/counters.h), the same that /metrics is made from: samples
 * taken, in the profile and dropped (these reconcile), stack ends,
 * unwinding, trace context, symbols, timelines, exports, degraded
 * conditions, the collector's own CPU.
 *
 * Main thread (collector.c), which owns @c.
 */
#ifndef CTXPROF_REPORT_H
#define CTXPROF_REPORT_H

#include <stdint.h>

struct collector;

/**
 * report__status() - redraw the status line: rate since the last call
 * (@last_samples and @last_t, updated), samples, drops, stacks, files.
 */
void report__status(const struct collector *c, double elapsed, uint64_t *last_samples,
		    double *last_t);

/**
 * report__summary() - the summary once sampling stopped and the last
 * profile was written: @why the reason it stopped.
 */
void report__summary(const struct collector *c, double elapsed, const char *why);

#endif /* CTXPROF_REPORT_H */
