// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * counters_output - the summary's lines and the /metrics samples, both made
 * from counters.c's table and the values counters__read() took.  See
 * counters.h.
 */
#include <stdio.h>
#include <string.h>
#include "collector/counters.h"

/* the summary's lines: their titles, what they need, whether all zeros leave them out */
static const struct {
	const char *title;
	unsigned int have;
	bool quiet;
} sections[COUNTERS_SECTION_MAX] = {
	[COUNTERS_SAMPLES] = {"samples"},
	[COUNTERS_DROPS] = {"dropped by reason"},
	[COUNTERS_SAMPLING] = {"sampling rate"},
	[COUNTERS_CPUS] = {"CPUs"},
	[COUNTERS_STACK_ERRORS] = {"stack errors (samples kept)"},
	[COUNTERS_STACK_ENDS] = {"user stacks by how they end"},
	[COUNTERS_UNWINDING] = {"unwinding", COUNTERS_HAVE_UNWINDER},
	[COUNTERS_MAPPINGS] = {"mappings"},
	[COUNTERS_PROCESSES] = {"processes", COUNTERS_HAVE_TRACKER},
	[COUNTERS_CONTEXT] = {"trace context", COUNTERS_HAVE_APP, true},
	[COUNTERS_OTEL_PROCESS] = {"OpenTelemetry process context", COUNTERS_HAVE_OTEL, true},
	[COUNTERS_OTEL_THREAD] = {"OpenTelemetry thread context", COUNTERS_HAVE_OTEL, true},
	[COUNTERS_GO_LABELS] = {"Go goroutine labels", COUNTERS_HAVE_GO, true},
	[COUNTERS_PYTHON] = {"python", COUNTERS_HAVE_PYTHON, true},
	[COUNTERS_OFF_CPU] = {"off-CPU", COUNTERS_HAVE_OFF_CPU},
	[COUNTERS_PROFILE] = {"profile"},
	[COUNTERS_SYMBOLS] = {"symbols"},
	[COUNTERS_PERF_MAPS] = {"perf maps (JIT code)", 0, true},
	[COUNTERS_HOTSPOT] = {"HotSpot JVMs (JIT code)", 0, true},
	[COUNTERS_TIMELINE] = {"timeline", COUNTERS_HAVE_TIMELINE},
	[COUNTERS_EXPORTS] = {"exports"},
	[COUNTERS_WRITES] = {"writes", 0, true},
	[COUNTERS_DEGRADED_NOW] = {"degraded at the end", 0, true},
	[COUNTERS_DEGRADED_RAISED] = {"degraded (times raised)", 0, true},
	[COUNTERS_HTTP] = {"metrics server", COUNTERS_HAVE_HTTP},
	[COUNTERS_SCRAPES] = {"/debug/pprof/profile", COUNTERS_HAVE_SCRAPES},
	[COUNTERS_PUSH] = {"push", COUNTERS_HAVE_PUSH},
	[COUNTERS_BPF] = {"BPF run time", COUNTERS_HAVE_BPF_STATS},
	[COUNTERS_COLLECTOR] = {"collector CPU"},
};

static uint64_t u64_at(const struct counter_values *v, size_t off)
{
	uint64_t x;

	memcpy(&x, (const char *)v + off, sizeof(x));
	return x;
}

static double double_at(const struct counter_values *v, size_t off)
{
	double x;

	memcpy(&x, (const char *)v + off, sizeof(x));
	return x;
}

/* the value of @d's @i-th (RANGE) or only value, as /metrics has it */
static double value_of(const struct counter_desc *d, unsigned int i, const struct counter_values *v)
{
	size_t off = d->offset + (size_t)i * sizeof(uint64_t);

	switch (d->unit) {
	case COUNTER_NS:
		return u64_at(v, off) / 1e9;
	case COUNTER_SECONDS:
	case COUNTER_NUMBER:
	case COUNTER_TIME:
		return double_at(v, off);
	case COUNTER_COUNT:
	case COUNTER_BYTES:
		break;
	}
	return (double)u64_at(v, off);
}

static unsigned int nr_values(const struct counter_desc *d)
{
	if (d->kind == COUNTER_RANGE)
		return d->count;
	return d->kind == COUNTER_VALUE;
}

static const char *label_of(const struct counter_desc *d, unsigned int i)
{
	return d->kind == COUNTER_RANGE ? d->name(d->first + i) : d->label;
}

static uint64_t family_sum(const struct counter_values *v, const struct metrics_family *fam)
{
	uint64_t n = 0;
	unsigned int i, j;

	for (i = 0; i < nr_counter_descs; i++)
		if (counter_descs[i].family == fam && counter_descs[i].unit == COUNTER_COUNT)
			for (j = 0; j < nr_values(&counter_descs[i]); j++)
				n += u64_at(v, counter_descs[i].offset + j * sizeof(uint64_t));
	return n;
}

uint64_t counters__dropped(const struct counter_values *v)
{
	return family_sum(v, counters_dropped_family);
}

/* @x as the summary says a value of @unit */
static void put_value(FILE *f, enum counter_unit unit, double x)
{
	switch (unit) {
	case COUNTER_NS: /* value_of() made it seconds */
	case COUNTER_SECONDS:
		fprintf(f, "%.3f s", x);
		break;
	case COUNTER_BYTES:
		if (x < 1048576)
			fprintf(f, "%.1f KiB", x / 1024);
		else
			fprintf(f, "%.1f MiB", x / 1048576);
		break;
	case COUNTER_COUNT:
	case COUNTER_NUMBER:
	case COUNTER_TIME:
		fprintf(f, "%.0f", x);
		break;
	}
}

/* "N words", "words" with N at "{}", or "label=N" */
static void put_item(FILE *f, const char *words, const char *label, enum counter_unit unit,
		     double x)
{
	const char *at = words ? strstr(words, "{}") : NULL;

	if (!words) {
		fprintf(f, "%s=", label);
		put_value(f, unit, x);
	} else if (at) {
		fprintf(f, "%.*s", (int)(at - words), words);
		put_value(f, unit, x);
		fputs(at + 2, f);
	} else {
		put_value(f, unit, x);
		fprintf(f, " %s", words);
	}
}

static bool shown(const struct counter_desc *d, const struct counter_values *v)
{
	return d->unit != COUNTER_TIME && (d->have & v->have) == d->have;
}

static bool summary_only(const struct counter_desc *d)
{
	return d->kind == COUNTER_SUM || d->kind == COUNTER_RATIO || d->kind == COUNTER_ALSO;
}

/* a quiet section with nothing but zeros says nothing */
static bool section_silent(enum counter_section s, const struct counter_values *v)
{
	unsigned int i, j;

	if (!sections[s].quiet)
		return false;
	for (i = 0; i < nr_counter_descs; i++)
		if (counter_descs[i].section == s && shown(&counter_descs[i], v) &&
		    !(counter_descs[i].flags & COUNTER_LIMIT))
			for (j = 0; j < nr_values(&counter_descs[i]); j++)
				if (value_of(&counter_descs[i], j, v) != 0)
					return false;
	return true;
}

/* a summary-only item: a family's sum, a ratio of two values, or a value said again */
static double derived(const struct counter_desc *d, const struct counter_values *v)
{
	double per;

	if (d->kind == COUNTER_SUM)
		return (double)family_sum(v, d->family);
	if (d->kind == COUNTER_ALSO)
		return value_of(d, 0, v);
	per = (double)u64_at(v, d->per);
	return per ? u64_at(v, d->offset) * d->scale / per : 0;
}

/* before an item: "; " to start a group, " " to join, else ", " ("label=N" lists: " ") */
static const char *separator(const struct counter_desc *d, unsigned int j, bool prev_named)
{
	if ((d->flags & COUNTER_GROUP) && !j)
		return "; ";
	if ((d->flags & COUNTER_JOIN) || (!d->words && prev_named))
		return " ";
	return ", ";
}

static void summary_line(FILE *f, enum counter_section s, const struct counter_values *v)
{
	bool first = true, prev_named = false;
	unsigned int i, j, n;
	double x;

	fprintf(f, "ctxprof: %s: ", sections[s].title);
	for (i = 0; i < nr_counter_descs; i++) {
		const struct counter_desc *d = &counter_descs[i];

		if (d->section != s || !shown(d, v))
			continue;
		n = summary_only(d) ? 1 : nr_values(d);
		for (j = 0; j < n; j++) {
			x = summary_only(d) ? derived(d, v) : value_of(d, j, v);
			if (((d->flags & COUNTER_NONZERO) && x == 0) ||
			    ((d->flags & COUNTER_KNOWN) && x < 0))
				continue;
			if (!first)
				fputs(separator(d, j, prev_named), f);
			if (d->kind == COUNTER_RATIO)
				fprintf(f, "%.2f %s", x, d->words);
			else if (d->flags & COUNTER_WORDS)
				fputs(d->words, f);
			else
				put_item(f, d->words, label_of(d, j), d->unit, x);
			first = false;
			prev_named = !d->words;
		}
	}
	fputc('\n', f);
}

void counters__summary(FILE *f, const struct counter_values *v)
{
	unsigned int s;

	for (s = 0; s < COUNTERS_SECTION_MAX; s++)
		if ((sections[s].have & v->have) == sections[s].have && !section_silent(s, v))
			summary_line(f, s, v);
}

void counters__snapshot(const struct counter_values *v, struct metrics_snapshot *m)
{
	unsigned int i, j;

	double x;

	for (i = 0; i < nr_counter_descs; i++)
		for (j = 0; j < nr_values(&counter_descs[i]); j++) {
			x = value_of(&counter_descs[i], j, v);
			/* not known yet: no sample, rather than a made-up one */
			if ((counter_descs[i].flags & COUNTER_KNOWN) && x < 0)
				continue;
			metrics_snapshot__add(m, counter_descs[i].family,
					      label_of(&counter_descs[i], j), x);
		}
}
