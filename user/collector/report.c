// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report - what the collector tells the person who runs it, on stderr: the
 * status line while it samples and the summary when it stops.  See
 * report.h.
 */
#include <stdio.h>
#include <string.h>
#include "collector/state.h"
#include "collector/counters.h"
#include "collector/health.h"
#include "collector/report.h"
#include "export/outfiles.h"
#include "storage/calltrace_storage.h"

void report__status(const struct collector *c, double elapsed, uint64_t *last_samples,
		    double *last_t)
{
	struct calltrace_storage_stats cs;
	struct counter_values v;
	double dt = elapsed - *last_t;
	uint64_t taken;

	counters__read(c, &v);
	calltrace_storage__stats(c->traces, &cs);
	taken = v.sampler[SAMPLER_STAT_SAMPLES];
	fprintf(stderr,
		"\r\033[Kctxprof: %6.1fs  %7.0f samples/s  %llu samples  %llu dropped  "
		"%llu stacks",
		elapsed, dt > 0 ? (taken - *last_samples) / dt : 0.0, (unsigned long long)taken,
		(unsigned long long)counters__dropped(&v), (unsigned long long)cs.traces);
	if (c->files)
		fprintf(stderr, "  %lu files", outfiles__count(c->files));
	*last_samples = taken;
	*last_t = elapsed;
}

/* each degraded condition raised during the run, with its last reason */
static void print_degraded(const struct collector *c, const struct counter_values *v)
{
	char why[256];
	int i;

	for (i = 0; i < HEALTH_CONDITION_MAX; i++)
		if (v->health.raised[i] && health__reason(c->health, i, why, sizeof(why)))
			fprintf(stderr, "ctxprof: degraded, %s%s: %s\n", health_condition_name(i),
				v->health.active[i] ? "" : " (cleared since)", why);
}

void report__summary(const struct collector *c, double elapsed, const char *why)
{
	struct counter_values v;

	counters__read(c, &v);
	fprintf(stderr, "ctxprof: stopped after %.1fs (%s)\n", elapsed, why);
	counters__summary(stderr, &v);
	print_degraded(c, &v);
	if (c->tl && !c->files)
		fprintf(stderr, "ctxprof: wrote the timeline %s\n", c->opts.timeline);
	if (!c->files_written)
		fprintf(stderr, "ctxprof: no profile written\n");
	else if (c->files)
		fprintf(stderr, "ctxprof: wrote %lu files into %s\n", outfiles__count(c->files),
			c->opts.output_dir ? c->opts.output_dir : ".");
	else if (!strcmp(c->opts.output, "-"))
		fprintf(stderr, "ctxprof: wrote the profile to standard output\n");
	else
		fprintf(stderr, "ctxprof: wrote %s\n", c->opts.output);
}
