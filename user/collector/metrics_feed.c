// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metrics_feed - the collector's counters into the snapshot /metrics
 * serves (export/metrics.h).  See metrics_feed.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collector/collector.h"
#include "collector/health.h"
#include "collector/metrics_feed.h"
#include "export/outfiles.h"
#include "processes/tracker.h"
#include "sampling/drain.h"
#include "sampling/sampler.h"
#include "symbols/symbolizer.h"
#include "unwind/unwinder.h"
#include "util/clock.h"

static void add_counter(struct metrics_family *f, const char *label, uint64_t v)
{
	if (f->n < METRICS_MAX_LABELLED)
		f->v[f->n++] = (struct metrics_counter){label, v};
}

static uint64_t self_rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * sysconf(_SC_PAGESIZE);
}

/* what /metrics serves, from every module's counters (main thread) */
static void fill_metrics(struct collector *c, struct metrics_snapshot *m)
{
	uint64_t st[SAMPLER_STAT_MAX] = {};
	struct symbolizer_stats ss;
	struct outqueue_stats qs;
	struct drain_counters dc;
	int i;

	memset(m, 0, sizeof(*m));
	m->version = CTXPROF_VERSION;
	m->node = c->node;
	m->mode = c->opts.all ? "all" : c->opts.children ? "children" : "pid";
	sampler__read_stats(c->sampler, st);
	drains__counters(c->drains, &dc);
	m->samples_taken = st[SAMPLER_STAT_SAMPLES];
	m->samples_in_profile = c->exported;
	for (i = SAMPLER_STAT_DROP_FIRST; i <= SAMPLER_STAT_DROP_LAST; i++)
		add_counter(&m->dropped, sampler_stat_name(i), st[i]);
	for (i = 0; i < DRAIN_DROP_MAX; i++)
		add_counter(&m->dropped, drain_drop_name(i), dc.drops[i]);
	add_counter(&m->dropped, "no_trace", c->no_trace);
	outqueue__stats(c->queue, &qs);
	add_counter(&m->dropped, "unwritten", qs.dropped_samples);
	for (i = 0; i < UNWIND_STOP_MAX; i++)
		add_counter(&m->stack_end, sampler_stat_name(SAMPLER_STAT_USTOP_FIRST + i),
			    st[SAMPLER_STAT_USTOP_FIRST + i]);
	add_counter(&m->stack_end, "cut_outside_mappings", c->stacks_cut);
	add_counter(&m->frames, "cfi", st[SAMPLER_STAT_UFRAMES_CFI]);
	add_counter(&m->frames, "plt", st[SAMPLER_STAT_UFRAMES_PLT]);
	add_counter(&m->frames, "signal", st[SAMPLER_STAT_UFRAMES_SIGNAL]);
	add_counter(&m->frames, "frame_pointer", st[SAMPLER_STAT_UFRAMES_FP]);
	m->user_stack_errors = st[SAMPLER_STAT_USTACK_ERR];
	m->kernel_stack_errors = st[SAMPLER_STAT_KSTACK_ERR];
	add_counter(&m->context, "ok", st[SAMPLER_STAT_CTX_OK]);
	add_counter(&m->context, "empty", st[SAMPLER_STAT_CTX_EMPTY]);
	add_counter(&m->context, "torn", st[SAMPLER_STAT_CTX_TORN]);
	add_counter(&m->context, "unreadable", st[SAMPLER_STAT_CTX_READ_ERR]);
	if (c->unwinder) {
		struct unwinder_stats us;

		unwinder__stats(c->unwinder, &us);
		m->tables_built = us.tables_built;
		m->tables_shared = us.tables_shared;
		m->tables_evicted = us.tables_evicted;
		m->tables_cached = us.tables_cached;
		m->table_rows = us.rows;
		m->table_build_seconds = us.build_ns / 1e9;
		m->table_bytes = us.rows * sizeof(struct unwind_row);
		m->table_bytes_limit = us.store.bytes;
		add_counter(&m->table_errors, "no_cfi", us.files_no_cfi);
		add_counter(&m->table_errors, "unreadable", us.files_unreadable);
		add_counter(&m->table_errors, "failed", us.tables_failed);
		add_counter(&m->table_errors, "too_slow", us.tables_too_slow);
		add_counter(&m->table_errors, "too_large", us.tables_too_large);
		add_counter(&m->table_errors, "cancelled", us.tables_cancelled);
		add_counter(&m->table_errors, "no_room", us.tables_no_room);
	}
	symbolizer__stats(c->sym, &ss);
	add_counter(&m->symbol_errors, "unnamed", c->last.locations_unnamed);
	add_counter(&m->symbol_errors, "unmapped", c->last.locations_unmapped);
	add_counter(&m->symbol_errors, "elf_unreadable", ss.elf_open_failed);
	add_counter(&m->symbol_errors, "elf_invalid", ss.elf_parse_failed);
	add_counter(&m->symbol_errors, "symbols_over_budget", ss.symbols_over_budget);
	m->elf_files_read = ss.elf_opened;
	{
		struct sampler_health h;

		sampler__health(c->sampler, &h);
		m->sampling_hz = h.requested_hz;
		m->sampling_effective_hz = h.effective_hz;
		m->max_sample_rate = h.max_sample_rate;
		m->sampling_throttled = h.throttled;
		m->sampling_throttled_seconds = h.throttled_checks;
		m->cpus_online = h.cpus_online;
		m->cpus_sampled = h.cpus_sampled;
		m->cpus_offlined = h.cpus_offlined;
		m->cpus_onlined = h.cpus_onlined;
		m->cpu_event_open_failures = h.open_failed;
	}
	m->nr_rings = sampler__ring_fill(c->sampler, m->ring_fill, METRICS_MAX_RINGS);
	if (c->tracker) {
		struct tracker_stats ts;

		tracker__stats(c->tracker, &ts);
		m->processes = ts.processes;
		m->threads = ts.threads;
		m->lifecycle_events = ts.events;
		m->lifecycle_lost = ts.dropped;
		m->mapping_snapshots = ts.snapshots;
	}
	m->cpu_seconds = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	m->rss_bytes = self_rss_bytes();
	m->start_time = c->start_time;
	m->files_written = c->files_written;
	m->file_writes_failed = qs.failed;
	m->files_written_late = qs.written_late;
	m->files_dropped = qs.dropped;
	m->files_pending = qs.pending;
	m->files_pending_bytes = qs.pending_bytes;
	m->exports_ok = c->exports_ok;
	m->exports_failed = c->exports_failed;
	m->last_export_time = c->last_export_time;
	m->last_export_duration = c->last_export_duration;
	m->last_export_failed = c->last_export_failed;
}

void metrics_feed__publish(struct collector *c)
{
	if (!c->metrics)
		return;
	fill_metrics(c, c->snap);
	metrics_server__publish(c->metrics, c->snap);
}

/* /metrics and /healthz, once every thread they watch runs */
int metrics_feed__start(struct collector *c, char *err_msg, size_t err_len)
{
	c->snap = malloc(sizeof(*c->snap));
	c->health = health__new(c->drains, c->tracker, c->opts.interval);
	if (!c->snap || !c->health) {
		snprintf(err_msg, err_len, "out of memory");
		return -ENOMEM;
	}
	c->metrics = metrics_server__start(c->opts.metrics_addr, health__check, c->health, err_msg,
					   err_len);
	if (!c->metrics)
		return -errno;
	metrics_feed__publish(c);
	fprintf(stderr, "ctxprof: metrics at http://%s/metrics, health at /healthz\n",
		c->opts.metrics_addr);
	return 0;
}
