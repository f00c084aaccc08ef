// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report - what the collector tells the person who runs it, on stderr: the
 * status line while it samples and the summary when it stops.  See
 * report.h.
 */
#include <stdio.h>
#include <string.h>
#include "appctx/app_context.h"
#include "appctx/otel_context.h"
#include "collector/collector.h"
#include "collector/report.h"
#include "export/outfiles.h"
#include "processes/process_state.h"
#include "processes/tracker.h"
#include "sampling/drain.h"
#include "sampling/sampler.h"
#include "storage/calltrace_storage.h"
#include "symbols/symbolizer.h"
#include "traces/trace.h"
#include "unwind/unwinder.h"
#include "util/clock.h"

static uint64_t sum_drops(const uint64_t *bpf, const struct drain_counters *dc,
			  const struct collector *c)
{
	struct outqueue_stats qs;
	uint64_t n = c->no_trace;
	int i;

	outqueue__stats(c->queue, &qs);
	n += qs.dropped_samples;

	for (i = SAMPLER_STAT_DROP_FIRST; i <= SAMPLER_STAT_DROP_LAST; i++)
		n += bpf[i];
	for (i = 0; i < DRAIN_DROP_MAX; i++)
		n += dc->drops[i];
	return n;
}

void report__status(const struct collector *c, double elapsed, uint64_t *last_samples,
		    double *last_t)
{
	uint64_t st[SAMPLER_STAT_MAX];
	struct calltrace_storage_stats cs;
	struct drain_counters dc;
	double dt = elapsed - *last_t;

	if (sampler__read_stats(c->sampler, st))
		return;
	drains__counters(c->drains, &dc);
	calltrace_storage__stats(c->traces, &cs);
	fprintf(stderr,
		"\r\033[Kctxprof: %6.1fs  %7.0f samples/s  %llu samples  %llu dropped  "
		"%llu stacks",
		elapsed, dt > 0 ? (st[SAMPLER_STAT_SAMPLES] - *last_samples) / dt : 0.0,
		(unsigned long long)st[SAMPLER_STAT_SAMPLES],
		(unsigned long long)sum_drops(st, &dc, c), (unsigned long long)cs.traces);
	if (c->files)
		fprintf(stderr, "  %lu files", outfiles__count(c->files));
	*last_samples = st[SAMPLER_STAT_SAMPLES];
	*last_t = elapsed;
}

/* how user stacks ended, how their frames were found, what the tables hold */
static void print_unwind_summary(const struct collector *c, const uint64_t *st)
{
	struct unwinder_stats us;
	int i;

	fprintf(stderr, "ctxprof: user stacks by how they end:");
	for (i = 0; i < UNWIND_STOP_MAX; i++)
		if (st[SAMPLER_STAT_USTOP_FIRST + i] || i == UNWIND_STOP_COMPLETE)
			fprintf(stderr, " %s=%llu", sampler_stat_name(SAMPLER_STAT_USTOP_FIRST + i),
				(unsigned long long)st[SAMPLER_STAT_USTOP_FIRST + i]);
	fprintf(stderr,
		"; cut at a return address outside executable mappings=%llu; frames named by "
		"mapping only (another file there by the next read)=%llu\n",
		(unsigned long long)c->stacks_cut, (unsigned long long)c->frames_uncertain);
	if (!c->unwinder)
		return;
	unwinder__stats(c->unwinder, &us);
	fprintf(stderr,
		"ctxprof: unwinding: frames by CFI %llu, PLT %llu, signal %llu, frame pointer "
		"%llu; tables built %llu (%llu with a debug file's CFI; %.0f ms, longest %.0f ms), "
		"shared %llu, no CFI %llu, "
		"unreadable %llu, failed %llu, too slow %llu, too large %llu, cancelled %llu, "
		"no room %llu, evicted %llu; %llu rows in %u tables, %.1f of %.1f MiB\n",
		(unsigned long long)st[SAMPLER_STAT_UFRAMES_CFI],
		(unsigned long long)st[SAMPLER_STAT_UFRAMES_PLT],
		(unsigned long long)st[SAMPLER_STAT_UFRAMES_SIGNAL],
		(unsigned long long)st[SAMPLER_STAT_UFRAMES_FP],
		(unsigned long long)us.tables_built, (unsigned long long)us.tables_from_debug_file,
		us.build_ns / 1e6, us.build_max_ns / 1e6, (unsigned long long)us.tables_shared,
		(unsigned long long)us.files_no_cfi, (unsigned long long)us.files_unreadable,
		(unsigned long long)us.tables_failed, (unsigned long long)us.tables_too_slow,
		(unsigned long long)us.tables_too_large, (unsigned long long)us.tables_cancelled,
		(unsigned long long)us.tables_no_room, (unsigned long long)us.tables_evicted,
		(unsigned long long)us.rows, (unsigned int)us.tables_cached,
		us.rows * sizeof(struct unwind_row) / 1048576.0, us.store.bytes / 1048576.0);
}

/* how processes' mappings were followed */
static void print_mappings_summary(const struct collector *c)
{
	struct process_states_stats ps;
	struct tracker_stats ts;

	process_states__stats(c->states, &ps);
	tracker__stats(c->tracker, &ts);
	fprintf(stderr,
		"ctxprof: mappings: %llu reads of /proc/PID/maps (%llu changed, %llu bad lines), "
		"%llu snapshots, %llu taken from a parent at fork; ",
		(unsigned long long)ps.reads, (unsigned long long)ps.reads_changed,
		(unsigned long long)ps.bad_lines, (unsigned long long)ps.snapshots,
		(unsigned long long)ps.inherited);
	if (ts.mapping_events_on)
		fprintf(stderr,
			"the kernel reported %llu new executable mappings (%llu applied), %llu "
			"reports lost, %llu CPUs with a gap\n",
			(unsigned long long)ts.mapping_events, (unsigned long long)ps.mapped,
			(unsigned long long)ts.mapping_events_lost,
			(unsigned long long)ts.mapping_events_gaps);
	else
		fprintf(stderr, "no kernel reports of new mappings\n");
}

/* what was read of OpenTelemetry's process and thread context; nothing when none */
static void print_otel_summary(const struct collector *c, const uint64_t *st)
{
	struct otel_context_stats os;
	uint64_t bpf = 0;
	int i;

	otel_context__stats(c->otel, &os);
	for (i = SAMPLER_STAT_OTEL_OK; i <= SAMPLER_STAT_OTEL_ATTRS_ERR; i++)
		bpf += st[i];
	if (!bpf && !os.processes && !os.bad_header && !os.bad_payload && !os.read_errors &&
	    !os.updating)
		return;
	fprintf(stderr,
		"ctxprof: OpenTelemetry process context: %llu processes, %llu reads, %llu refused "
		"headers, %llu bad payloads, %llu read errors, %llu found mid-update, %llu values "
		"skipped, %llu unknown "
		"thread schemas; thread context located in %llu (no symbol %llu, unsupported %llu, "
		"unreadable %llu, map full %llu)\n",
		(unsigned long long)os.processes, (unsigned long long)os.reads,
		(unsigned long long)os.bad_header, (unsigned long long)os.bad_payload,
		(unsigned long long)os.read_errors, (unsigned long long)os.updating,
		(unsigned long long)os.skipped_values, (unsigned long long)os.other_schema,
		(unsigned long long)os.tls_found, (unsigned long long)os.tls_no_symbol,
		(unsigned long long)os.tls_unsupported, (unsigned long long)os.tls_unreadable,
		(unsigned long long)os.map_full);
	fprintf(stderr, "ctxprof: OpenTelemetry thread context:");
	for (i = SAMPLER_STAT_OTEL_OK; i <= SAMPLER_STAT_OTEL_ATTRS_ERR; i++)
		fprintf(stderr, " %s=%llu", sampler_stat_name(i), (unsigned long long)st[i]);
	fprintf(stderr,
		"; attributes: %llu unknown keys (%llu key map refreshes), %llu truncated "
		"records, %llu bad values\n",
		(unsigned long long)os.unknown_keys, (unsigned long long)os.key_refreshes,
		(unsigned long long)os.attrs_truncated, (unsigned long long)os.bad_values);
}

/* what the per-thread traces held and what the last timeline shows */
static void print_timeline_summary(const struct collector *c)
{
	const struct timeline_result *r = &c->tl_last;
	struct app_context_stats as = {0};
	struct traces_stats ts;

	if (!c->tl)
		return;
	traces__stats(c->tl, &ts);
	if (c->app)
		app_context__stats(c->app, &as);
	fprintf(stderr,
		"ctxprof: timeline: %llu threads, %llu spans (%llu ends without a begin; from the "
		"samples: %llu begins and %llu ends whose events were lost), %llu "
		"stack slices from %llu samples (%llu stacks no longer stored)%s; events: %llu "
		"recorded, %llu in timelines, %llu recycled unwritten (--timeline-memory), %llu "
		"dropped (no memory); span events left out: %llu from unverified threads, %llu "
		"with a time far from ours; %llu parts of 4 KiB, most one thread took %.1f KiB\n",
		(unsigned long long)r->threads, (unsigned long long)r->spans,
		(unsigned long long)r->spans_unmatched, (unsigned long long)r->spans_begin_lost,
		(unsigned long long)r->spans_end_lost, (unsigned long long)r->slices,
		(unsigned long long)r->samples, (unsigned long long)r->no_stack,
		c->files ? " in the last file" : "", (unsigned long long)ts.events,
		(unsigned long long)ts.events_replayed, (unsigned long long)ts.events_recycled,
		(unsigned long long)ts.events_dropped,
		(unsigned long long)as.span_events_unattributed,
		(unsigned long long)as.span_events_bad_time, (unsigned long long)ts.parts,
		ts.replay_bytes / 1024.0);
	if (!c->files)
		fprintf(stderr, "ctxprof: wrote the timeline %s\n", c->opts.timeline);
}

/* the rate the CPUs sampled at, and CPUs that came and went */
static void print_sampling_summary(const struct collector *c)
{
	struct sampler_health h;

	sampler__health(c->sampler, &h);
	fprintf(stderr, "ctxprof: sampling rate: %u Hz requested", h.requested_hz);
	if (h.run_hz >= 0)
		fprintf(stderr, ", %.0f Hz effective per CPU", h.run_hz);
	if (h.effective_hz >= 0)
		fprintf(stderr, " (%.0f in the last seconds, lowest %.0f)", h.effective_hz,
			h.lowest_hz);
	if (h.max_sample_rate >= 0)
		fprintf(stderr, "; perf_event_max_sample_rate=%ld", h.max_sample_rate);
	fprintf(stderr, "; throttled (below 90 %%) for %llu s%s\n",
		(unsigned long long)h.throttled_checks, h.throttled ? ", still at the end" : "");
	fprintf(stderr,
		"ctxprof: CPUs: %d online, %d sampled%s; hotplug: %llu went offline, %llu came "
		"online; %llu event opens failed\n",
		h.cpus_online, h.cpus_sampled,
		h.cpus_sampled < h.cpus_online ? " (some online CPU is not sampled)" : "",
		(unsigned long long)h.cpus_offlined, (unsigned long long)h.cpus_onlined,
		(unsigned long long)h.open_failed);
}

void report__summary(const struct collector *c, const uint64_t *st, const struct drain_counters *dc,
		     double elapsed, const char *why)
{
	double cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	const struct export_result *res = &c->last;
	struct symbolizer_stats ss;
	struct outqueue_stats qs;
	int i;

	symbolizer__stats(c->sym, &ss);
	fprintf(stderr, "ctxprof: stopped after %.1fs (%s)\n", elapsed, why);
	fprintf(stderr, "ctxprof: samples: %llu taken, %llu in profile, %llu dropped\n",
		(unsigned long long)st[SAMPLER_STAT_SAMPLES], (unsigned long long)c->exported,
		(unsigned long long)sum_drops(st, dc, c));
	fprintf(stderr, "ctxprof: dropped by reason:");
	for (i = SAMPLER_STAT_DROP_FIRST; i <= SAMPLER_STAT_DROP_LAST; i++)
		fprintf(stderr, " %s=%llu", sampler_stat_name(i), (unsigned long long)st[i]);
	for (i = 0; i < DRAIN_DROP_MAX; i++)
		fprintf(stderr, " %s=%llu", drain_drop_name(i), (unsigned long long)dc->drops[i]);
	outqueue__stats(c->queue, &qs);
	fprintf(stderr, " no_trace=%llu unwritten=%llu\n", (unsigned long long)c->no_trace,
		(unsigned long long)qs.dropped_samples);
	print_sampling_summary(c);
	fprintf(stderr, "ctxprof: stack errors (samples kept): user=%llu kernel=%llu\n",
		(unsigned long long)st[SAMPLER_STAT_USTACK_ERR],
		(unsigned long long)st[SAMPLER_STAT_KSTACK_ERR]);
	print_unwind_summary(c, st);
	print_mappings_summary(c);
	if (c->opts.all || c->opts.children) {
		struct tracker_stats ts;

		tracker__stats(c->tracker, &ts);
		fprintf(stderr,
			"ctxprof: processes: %llu live, %llu threads; %llu lifecycle events, "
			"%llu lost; %llu exec/fork snapshots\n",
			(unsigned long long)ts.processes, (unsigned long long)ts.threads,
			(unsigned long long)ts.events, (unsigned long long)ts.dropped,
			(unsigned long long)ts.snapshots);
		if (c->opts.children)
			fprintf(stderr, "ctxprof: %llu processes followed in the tree of pid %d\n",
				(unsigned long long)ts.tracked, c->opts.pid);
	}
	if (c->app) {
		struct app_context_stats as;

		app_context__stats(c->app, &as);
		/* an application that never used libctxprof: nothing to say */
		if (as.regions || as.regions_rejected || st[SAMPLER_STAT_CTX_OK] ||
		    st[SAMPLER_STAT_CTX_EMPTY] || st[SAMPLER_STAT_CTX_TORN] ||
		    st[SAMPLER_STAT_CTX_READ_ERR] || st[SAMPLER_STAT_CTX_STALE])
			fprintf(stderr,
				"ctxprof: trace context: %llu samples with a valid context, "
				"%llu empty, %llu torn (rejected), %llu unreadable, "
				"%llu stale (slot changed hands); %llu regions (%llu refused), "
				"%llu threads (%llu claims refused), %llu tags "
				"(%llu dictionary replays requested), %llu span events, "
				"%llu lane errors\n",
				(unsigned long long)st[SAMPLER_STAT_CTX_OK],
				(unsigned long long)st[SAMPLER_STAT_CTX_EMPTY],
				(unsigned long long)st[SAMPLER_STAT_CTX_TORN],
				(unsigned long long)st[SAMPLER_STAT_CTX_READ_ERR],
				(unsigned long long)st[SAMPLER_STAT_CTX_STALE],
				(unsigned long long)as.regions,
				(unsigned long long)as.regions_rejected,
				(unsigned long long)as.threads,
				(unsigned long long)as.threads_rejected,
				(unsigned long long)as.tags, (unsigned long long)as.dict_replays,
				(unsigned long long)as.span_events,
				(unsigned long long)as.lane_errors);
	}
	if (c->otel)
		print_otel_summary(c, st);
	fprintf(stderr,
		"ctxprof: %llu unique stacks, %zu locations, %zu functions, %zu mappings%s; "
		"%zu addresses without a name, %zu in no known mapping; %llu ELF files read, %llu "
		"unreadable, %llu with symbols past the per-file budget\n",
		(unsigned long long)c->traces_exported, res->locations, res->functions,
		res->mappings, c->files ? " in the last file" : "", res->locations_unnamed,
		res->locations_unmapped, (unsigned long long)ss.elf_opened,
		(unsigned long long)ss.elf_open_failed + ss.elf_parse_failed,
		(unsigned long long)ss.symbols_over_budget);
	fprintf(stderr,
		"ctxprof: symbols: %llu names from debug files, %llu from MiniDebugInfo, %llu from "
		"the vDSO; %llu demangled, %llu left mangled; debug files: %llu used, %llu "
		"missing, %llu refused (%llu build id, %llu CRC, %llu unusable); MiniDebugInfo: "
		"%llu merged, %llu bad, %llu too big; %llu ELF files by path (map_files "
		"refused), %llu refused as not the mapped inode\n",
		(unsigned long long)ss.names_debug_file, (unsigned long long)ss.names_minidebug,
		(unsigned long long)ss.names_vdso, (unsigned long long)ss.demangled,
		(unsigned long long)ss.demangle_failed, (unsigned long long)ss.debug_files,
		(unsigned long long)ss.debug_missing,
		(unsigned long long)ss.debug_build_id_bad + ss.debug_crc_bad + ss.debug_unusable,
		(unsigned long long)ss.debug_build_id_bad, (unsigned long long)ss.debug_crc_bad,
		(unsigned long long)ss.debug_unusable, (unsigned long long)ss.minidebug_files,
		(unsigned long long)ss.minidebug_bad, (unsigned long long)ss.minidebug_too_big,
		(unsigned long long)ss.elf_by_path, (unsigned long long)ss.elf_mismatch);
	print_timeline_summary(c);
	fprintf(stderr,
		"ctxprof: collector CPU %.3f s in all (set-up, symbols, export); drain threads "
		"%.3f s, %.2f us per sample\n",
		cpu_s, dc->cpu_ns / 1e9, dc->received ? dc->cpu_ns / 1e3 / dc->received : 0.0);
	if (qs.failed)
		fprintf(stderr,
			"ctxprof: writes: %llu attempts failed (the last: %s); %llu files kept in "
			"memory (at most %zu MiB), %llu of them written later; %llu files dropped, "
			"with %llu samples\n",
			(unsigned long long)qs.failed, strerror(-qs.last_err),
			(unsigned long long)qs.kept, qs.max_bytes >> 20,
			(unsigned long long)qs.written_late, (unsigned long long)qs.dropped,
			(unsigned long long)qs.dropped_samples);
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
