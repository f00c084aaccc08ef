// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * intervals - the exports of a window: its profile, its timeline and its
 * series pushed to the store, the next window opened.  See intervals.h.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "appctx/app_context.h"
#include "appctx/go_labels.h"
#include "appctx/otel_context.h"
#include "appctx/python_proc.h"
#include "collector/health.h"
#include "collector/intervals.h"
#include "collector/state.h"
#include "export/outfiles.h"
#include "export/scrape.h"
#include "export/series.h"
#include "processes/process_state.h"
#include "sampling/drain.h"
#include "sampling/sampler.h"
#include "symbols/perf_map.h"
#include "symbols/symbolizer.h"
#include "traces/trace.h"
#include "util/clock.h"

/*
 * How long the state of an exited (or exec'd) process is kept: its last
 * samples may still sit in a ring for a poll period when an export begins.
 */
#define STATE_GRACE_NS 1000000000ull
/* how far ahead of the samples a window's end is posted (next_window_end()) */
#define WINDOW_LEAD_NS 200000000ull
/* how far behind the samples span events may come (see timeline_cut()) */
#define TIMELINE_HOLD_NS 300000000l

/* what the main thread attached to a process state, released with it */
void intervals__release_state(struct process_state *st)
{
	app_context__release(st->app);
	otel_context__release(st->otel);
	perf_map__free(st->perf_map);
	hotspot_proc__free(st->hotspot);
	go_labels__release(st->go);
	python_proc__release(st->python);
}

static void add_table(void *ctx, struct sample_table *t)
{
	struct exporter *e = ctx;

	exporter__add_samples(e, t);
}

static void clear_table(void *ctx, struct sample_table *t)
{
	sample_table__clear(t);
}

/*
 * Where the timeline of this export ends.  Span events reach us later than
 * samples (libctxprof hands a ring over when it is full or 100 ms old, and
 * we poll): an interval's timeline ends TIMELINE_HOLD_NS ago, the rest waits
 * for the next.  The last one takes everything, after giving the
 * applications' rings that time to come.
 */
static void timeline_cut(struct collector *c, bool final, uint64_t *end_ns)
{
	struct timespec hold = {0, TIMELINE_HOLD_NS};

	if (final && c->app) {
		app_context__poll(c->app);
		nanosleep(&hold, NULL);
		app_context__poll(c->app);
	}
	*end_ns = final ? c->stopped_ns : mono_ns() - TIMELINE_HOLD_NS;
	traces__cut(c->tl, final ? UINT64_MAX : *end_ns);
}

/*
 * A write of @path failed with @err: say why in one line, and what became
 * of the document (@kept: in memory, to be written again unless @final).
 */
static void write_failed(const char *what, const char *path, int err, bool kept, bool final)
{
	char why[256];

	/* a refused path says why better than its errno */
	if (!output_check(path, why, sizeof(why)))
		snprintf(why, sizeof(why), "%s", strerror(-err));
	fprintf(stderr, "\ncollector: cannot write %s %s: %s; %s\n", what, path, why,
		!kept	? "dropped (no room left to keep it in memory)"
		: final ? "dropped (the collector is stopping)"
			: "kept in memory, written again at the next interval");
}

/* the timeline of the interval just exported, beside its profile */
static void write_timeline(struct collector *c, struct exporter *e, uint64_t end_ns, bool final)
{
	const char *path = c->files ? outfiles__sibling(c->files) : c->opts.timeline;
	struct output_keep keep;
	struct timeline_opts to = {
		.format = c->opts.timeline_speedscope ? TIMELINE_SPEEDSCOPE : TIMELINE_CHROME,
		.period_ns = 1000000000ull / c->opts.frequency,
		.begin_ns = c->interval_ns,
		.end_ns = end_ns,
		.names = e,
		.reg = c->reg,
		.keep = &keep,
	};
	bool kept;
	int err;

	/* a name too long (ENAMETOOLONG): the events wait for the next timeline */
	if (!path)
		return;
	outqueue__keep(c->queue, &keep);
	err = timeline__write(c->timeline, c->tl, path, &to, &c->tl_last);
	/* written, kept or dropped, the interval's events are consumed */
	c->interval_ns = end_ns;
	kept = outqueue__done(c->queue, path, false, 0, err, &keep);
	if (err)
		write_failed("the timeline", path, err, kept, final);
	else
		c->tl_written++;
}

/*
 * The end of the window after the one ending at @end: on the --interval
 * grid, at least WINDOW_LEAD_NS ahead, so the drains see it before any
 * sample of the next window (an export that overran makes the window after
 * it longer).
 */
static uint64_t next_window_end(const struct collector *c, uint64_t end)
{
	uint64_t step = (uint64_t)(c->opts.interval * 1e9), now = mono_ns();

	do
		end += step;
	while (end < now + WINDOW_LEAD_NS);
	return end;
}

/* what every profile of this run is made with; time, length and comments are each one's */
void intervals__profile_opts(struct collector *c, struct export_opts *eo)
{
	*eo = (struct export_opts){
		.period_ns = 1000000000ull / c->opts.frequency,
		.states = c->states,
		.reg = c->reg,
		.proc_labels = c->opts.all || c->opts.children,
		.node = c->node,
		.perf_maps = &c->perf_maps,
		.hotspot = &c->hotspot,
		.python = c->python,
		.off_cpu = c->opts.off_cpu,
	};
}

struct push_rows {
	struct series_set *set;
	struct exporter *interval; /* knows each row's process */
	int err;
};

static void push_row(void *ctx, const struct sample_row *row)
{
	struct push_rows *pr = ctx;

	if (!pr->err)
		pr->err = series_set__add_row(pr->set, pr->interval, row);
}

static void push_table(void *ctx, struct sample_table *t)
{
	struct push_rows *pr = ctx;

	sample_table__for_each(t, push_row, pr);
}

/*
 * The interval's rows (in @e, made with @eo) split by series, each series'
 * profile queued for the store: before the tables are cleared.
 */
static void push_interval(struct collector *c, struct exporter *e, const struct export_opts *eo,
			  bool final)
{
	struct export_opts so = *eo;
	struct push_rows pr = {.interval = e};
	struct export_result res;
	int64_t from, until;
	uint8_t *gz;
	size_t i, len;

	/* a sample's span stays with it; what names the process is the series' */
	so.labels = EXPORT_LABELS_SPANS;
	pr.set = series_set__new(c->traces, c->sym, &so);
	if (!pr.set) {
		c->push_failed++;
		return;
	}
	drains__for_each_table(c->drains, final, push_table, &pr);
	from = eo->time_nanos / 1000000000;
	until = (eo->time_nanos + eo->duration_nanos + 999999999) / 1000000000;
	for (i = 0; i < series_set__nr(pr.set); i++) {
		if (exporter__gz(series_set__exporter(pr.set, i), PUSH_MAX_PROFILE_BYTES, &gz, &len,
				 &res)) {
			c->push_failed++;
			continue;
		}
		push__enqueue(c->push, series_set__name(pr.set, i), from, until, gz, len,
			      res.samples);
	}
	c->push_failed += pr.err != 0;
	series_set__free(pr.set);
}

/*
 * Write the profile of the window [c->win_start_ns, end): the interval's
 * (continuous mode) or, @final, everything up to the stop.  The storage is
 * rotated first, EXPORT_LEAD_NS before the window ends, then the drains
 * close the window (this waits for its end): its samples' traces were put
 * before the rotation, or are found as put since (export.h).
 * @final: the drains are stopped; export every table.
 */
int intervals__export_profile(struct collector *c, const char *path, bool final)
{
	uint64_t st[SAMPLER_STAT_MAX] = {};
	uint64_t end_ns = final ? c->stopped_ns : c->win_end_ns;
	double duration = (end_ns - c->win_start_ns) / 1e9;
	char comment[256];
	const char *comments[] = {comment, NULL};
	struct export_result res;
	struct export_opts eo;
	struct output_keep keep;
	struct exporter *e;
	uint64_t begin_ns, tl_end_ns = 0, next;
	int err = 0, werr = 0;
	bool kept;

	begin_ns = mono_ns();
	sampler__read_stats(c->sampler, st);
	/* the timeline goes up to here; the storage keeps what is past it */
	if (c->tl)
		timeline_cut(c, final, &tl_end_ns);
	/* the dictionary may have named new tags since the last poll */
	if (c->app)
		app_context__poll(c->app);
	snprintf(comment, sizeof(comment),
		 "ctxprof collector: %s %d%s, %u Hz, %.1f s; %llu samples taken since start",
		 c->opts.all ? "all processes" : "pid", c->opts.all ? 0 : c->opts.pid,
		 c->opts.children ? " and its descendants" : "", c->opts.frequency, duration,
		 (unsigned long long)st[SAMPLER_STAT_SAMPLES]);
	intervals__profile_opts(c, &eo);
	eo.time_nanos = c->win_start_wall;
	eo.duration_nanos = (int64_t)(end_ns - c->win_start_ns);
	eo.comments = comments;
	e = exporter__begin(c->traces, c->sym, &eo);
	if (!e)
		return -errno;
	err = final ? 0 : drains__close(c->drains);
	if (err)
		goto out;
	drains__for_each_table(c->drains, final, add_table, e);
	/* the same rows, one profile per service, to the store */
	if (c->push)
		push_interval(c, e, &eo, final);
	drains__for_each_table(c->drains, final, clear_table, NULL);
	/* the scrapes' rows of this window, while their stacks are stored */
	if (c->scrape && !final)
		scrape__window_closed(c->scrape);
	if (!final) {
		/* the next window, as soon as its tables are free */
		next = next_window_end(c, c->win_end_ns);
		if (drains__open(c->drains, next))
			fprintf(stderr,
				"\ncollector: the main thread stalled while opening the next "
				"interval: its first samples may sit in the profile of the one "
				"before\n");
		c->win_start_wall = (int64_t)(clock_ns(CLOCK_REALTIME) - mono_ns() + c->win_end_ns);
		c->win_start_ns = c->win_end_ns;
		c->win_end_ns = next;
	}
	if (path) {
		/* what earlier writes kept goes first, oldest first */
		outqueue__retry(c->queue, &c->files_written, &c->exported);
		outqueue__keep(c->queue, &keep);
		werr = exporter__write(e, path, &keep, &res);
	} else {
		/* pushed only: no file to write */
		exporter__result(e, &res);
	}
	c->no_trace += res.no_trace;
	c->traces_exported += res.traces;
	c->stacks_cut += res.stacks_cut;
	c->frames_uncertain += res.frames_uncertain;
	c->locations_unnamed += res.locations_unnamed;
	c->locations_unmapped += res.locations_unmapped;
	c->last = res;
	kept = path ? outqueue__done(c->queue, path, true, res.samples, werr, &keep) : false;
	if (werr) {
		write_failed("the profile", path, werr, kept, final);
	} else {
		c->files_written += path != NULL;
		c->exported += res.samples;
		c->last_export_duration = (mono_ns() - begin_ns) / 1e9;
		c->last_export_time = clock_s(CLOCK_REALTIME);
	}
	if (c->tl)
		write_timeline(c, e, tl_end_ns, final);
	/* images gone well before this export began have no samples left */
	if (begin_ns > STATE_GRACE_NS)
		process_states__collect(c->states, begin_ns - STATE_GRACE_NS,
					intervals__release_state);
	/* files no process maps any more */
	symbolizer__trim(c->sym, mono_ns());
	/*
	 * What the states and files of exited processes held is free now, in
	 * the arenas of the threads that allocated it; without this the pages
	 * stay resident, and under process churn RSS kept rising for half a
	 * minute before it settled.  A few ms once an interval.
	 */
	malloc_trim(0);
out:
	exporter__free(e);
	c->last_export_failed = err || werr;
	if (err || werr)
		c->exports_failed++;
	else
		c->exports_ok++;
	health__exported(c->health, err ?: werr);
	/* a file that could not be written is kept or dropped, counted: profiling goes on */
	return err;
}

int intervals__export(struct collector *c, bool final)
{
	const char *path;

	/* --push without --output-dir: no file */
	if (!c->files)
		return intervals__export_profile(c, NULL, final);
	path = outfiles__path(c->files, (time_t)(c->win_start_wall / 1000000000));
	return path ? intervals__export_profile(c, path, final) : -errno;
}
