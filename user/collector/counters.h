/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * counters - every counter the collector shows, described once: its
 * Prometheus family (name, type, help, label), its label value, the words
 * the summary says it with and the summary line it is on, its unit, and
 * where its value is in a struct counter_values.  The summary at exit
 * (report.c) and the /metrics snapshot (metrics_feed.c) are both produced
 * (counters_output.c) from this one table (counters.c), so a counter added
 * there shows in both;
 * tests/unit/test_counters.c checks that every description appears in both
 * and that promtool accepts the page.
 *
 * Each module keeps its own counters in its own stats struct; struct
 * counter_values holds a copy of each, read at one moment.
 *
 * To add a counter: its field in the module's stats struct (copied here
 * already if the struct is; a struct of other types than uint64_t and
 * double is copied into one of those, as struct counter_sampling is), then
 * one line in counters.c's table: a family of its own (FAMILY(): name,
 * type, help, label) or a label value in an existing one, its summary
 * words, its section and its offsetof().  A new value of an enum whose
 * names the table ranges over (drop reasons, stack ends, OpenTelemetry
 * reads, health conditions, perf map lines skipped) needs nothing: it
 * shows under its name.
 * test_counters fails while a field of a copied struct is neither
 * described nor listed there as left out on purpose.
 *
 * Main thread (collector.c and the modules it calls); no state of its own.
 */
#ifndef CTXPROF_COUNTERS_H
#define CTXPROF_COUNTERS_H

#include <stdint.h>
#include <stdio.h>
#include "appctx/app_context.h"
#include "appctx/go_labels.h"
#include "appctx/otel_context.h"
#include "appctx/python_proc.h"
#include "collector/health.h"
#include "export/export.h"
#include "export/metrics.h"
#include "export/outfiles.h"
#include "export/push.h"
#include "export/scrape.h"
#include "export/scrape_queue.h"
#include "export/timeline.h"
#include "processes/process_state.h"
#include "processes/tracker.h"
#include "sampling/drain.h"
#include "sampling/sampler.h"
#include "runtimes/hotspot/hotspot_proc.h"
#include "symbols/perf_map.h"
#include "symbols/symbolizer.h"
#include "traces/trace.h"
#include "unwind/unwinder.h"

struct collector;

/* what this run has, so the summary leaves out lines that do not apply */
enum counter_have {
	COUNTERS_HAVE_UNWINDER = 1 << 0,       /* not with --unwind fp */
	COUNTERS_HAVE_TRACKER = 1 << 1,	       /* --all, --children */
	COUNTERS_HAVE_CHILDREN = 1 << 2,       /* --children */
	COUNTERS_HAVE_APP = 1 << 3,	       /* libctxprof regions read (not --no-context) */
	COUNTERS_HAVE_OTEL = 1 << 4,	       /* OpenTelemetry context read (not --no-context) */
	COUNTERS_HAVE_TIMELINE = 1 << 5,       /* --timeline(s) */
	COUNTERS_HAVE_HTTP = 1 << 6,	       /* --metrics-addr or --health-addr */
	COUNTERS_HAVE_MAPPING_EVENTS = 1 << 7, /* the kernel reports new mappings (--all ...) */
	COUNTERS_HAVE_GO = 1 << 8,	       /* goroutine labels read (not --no-context) */
	COUNTERS_HAVE_PYTHON = 1 << 9,	       /* CPython frames read (--python on) */
	COUNTERS_HAVE_OFF_CPU = 1 << 10,       /* off-CPU waits recorded (--off-cpu) */
	COUNTERS_HAVE_BPF_STATS = 1 << 11,     /* the kernel counts BPF run time */
	COUNTERS_HAVE_SCRAPES = 1 << 12,       /* /debug/pprof/profile served (--metrics-addr) */
	COUNTERS_HAVE_PUSH = 1 << 13,	       /* --push */
};

/* struct sampler_health, in the two types the descriptions read */
struct counter_sampling {
	double requested_hz;
	double run_hz, effective_hz, lowest_hz; /* per sampled CPU; negative: not yet */
	double max_sample_rate; /* kernel.perf_event_max_sample_rate; negative: unread */
	uint64_t throttled, throttled_checks;
	uint64_t cpus_online, cpus_sampled, cpus_offlined, cpus_onlined, open_failed;
};

/* every module's counters at one moment, and the collector's own */
struct counter_values {
	unsigned int have; /* enum counter_have */
	uint64_t sampler[SAMPLER_STAT_MAX];
	struct drain_counters drains;
	struct counter_sampling sampling;
	struct outqueue_stats queue;
	struct unwinder_stats unwind;
	struct symbolizer_stats sym;
	struct perf_map_stats perf_maps; /* summed over exports */
	struct hotspot_stats hotspot;	 /* summed over exports */
	struct process_states_stats states;
	struct tracker_stats tracker;
	struct app_context_stats app;
	struct otel_context_stats otel;
	struct go_labels_stats go;
	struct python_procs_stats python;
	struct traces_stats traces;
	struct timeline_result timeline; /* the last timeline written */
	struct export_result last;	 /* the last profile written */
	struct health_stats health;
	struct metrics_server_stats http;
	struct sampler_prog_cost bpf;
	struct scrape_queue_stats scrape_requests;
	struct scrape_stats scrapes;
	struct push_stats push;
	/* the collector's own */
	uint64_t exported;	  /* samples written into profiles */
	uint64_t no_trace;	  /* samples whose stack was not handed over */
	uint64_t traces_exported; /* distinct stacks, summed over profiles */
	uint64_t stacks_cut;	  /* user stacks cut at a return address in no executable mapping */
	uint64_t frames_uncertain;  /* user frames named by their mapping alone */
	uint64_t mapping_events_on; /* tracker_stats' bool: 1 when the kernel reports mappings */
	/* distinct locations without a name, in no known mapping: summed over profiles */
	uint64_t locations_unnamed, locations_unmapped;
	uint64_t files_written, exports_ok, exports_failed;
	uint64_t last_export_ok; /* 1 unless the latest export attempt failed */
	uint64_t push_failed;	 /* series profiles that could not be made */
	uint64_t unwind_bytes;	 /* BPF memory the unwind rows take */
	uint64_t rss_bytes;
	double cpu_s;		    /* the process's CPU time */
	double start_time;	    /* Unix time */
	double last_export_time;    /* Unix time the last good export ended; 0: none */
	double last_export_seconds; /* how long it took */
};

/* the summary's lines, in order (titles in counters_output.c) */
enum counter_section {
	COUNTERS_SAMPLES,
	COUNTERS_DROPS,
	COUNTERS_SAMPLING,
	COUNTERS_CPUS,
	COUNTERS_STACK_ERRORS,
	COUNTERS_STACK_ENDS,
	COUNTERS_UNWINDING,
	COUNTERS_MAPPINGS,
	COUNTERS_PROCESSES,
	COUNTERS_CONTEXT,
	COUNTERS_OTEL_PROCESS,
	COUNTERS_OTEL_THREAD,
	COUNTERS_GO_LABELS,
	COUNTERS_PYTHON,
	COUNTERS_OFF_CPU,
	COUNTERS_PROFILE,
	COUNTERS_SYMBOLS,
	COUNTERS_PERF_MAPS,
	COUNTERS_HOTSPOT,
	COUNTERS_TIMELINE,
	COUNTERS_EXPORTS,
	COUNTERS_WRITES,
	COUNTERS_DEGRADED_NOW,
	COUNTERS_DEGRADED_RAISED,
	COUNTERS_HTTP,
	COUNTERS_SCRAPES,
	COUNTERS_PUSH,
	COUNTERS_BPF,
	COUNTERS_COLLECTOR,
	COUNTERS_SECTION_MAX,
};

enum counter_unit {
	COUNTER_COUNT,	 /* uint64_t */
	COUNTER_NS,	 /* uint64_t nanoseconds: seconds in both outputs */
	COUNTER_SECONDS, /* double seconds */
	COUNTER_BYTES,	 /* uint64_t bytes: KiB or MiB in the summary */
	COUNTER_NUMBER,	 /* double (a rate, a limit): whole in the summary */
	COUNTER_TIME,	 /* double Unix time: /metrics only, a date says nothing in a summary */
};

enum counter_kind {
	COUNTER_VALUE, /* one value, at @offset */
	COUNTER_RANGE, /* @count uint64_t values from @offset, labelled @name(@first + i) */
	COUNTER_SUM,   /* summary only: the sum of every value of @family */
	COUNTER_RATIO, /* summary only: the value at @offset * @scale / the value at @per */
	COUNTER_ALSO,  /* summary only: the value at @offset, described elsewhere, said here too */
};

enum counter_flag {
	COUNTER_NONZERO = 1 << 0, /* the summary shows it only when it is not 0 */
	COUNTER_GROUP = 1 << 1,	  /* the summary sets it apart: "; " before it, not ", " */
	COUNTER_JOIN = 1 << 2,	  /* the summary joins it with a space: "N Hz (M ...)" */
	COUNTER_KNOWN = 1 << 3,	  /* negative means not known yet: left out of both */
	COUNTER_WORDS = 1 << 4,	  /* a flag (0 or 1): the summary says its words alone */
	COUNTER_LIMIT = 1 << 5,	  /* a bound, not a count: a quiet section stays quiet */
};

/* one counter, or one enum's worth of them (COUNTER_RANGE) */
struct counter_desc {
	enum counter_kind kind;
	const struct metrics_family *family;
	const char *label; /* its label value in @family (COUNTER_VALUE of a labelled family) */
	/*
	 * the summary's words: "N words", or "words" with "{}" where the value
	 * goes; NULL: "label=N" (a RANGE's labels are its names)
	 */
	const char *words;
	enum counter_section section;
	unsigned int flags; /* enum counter_flag */
	unsigned int have;  /* enum counter_have bits the summary needs for it; 0: always */
	enum counter_unit unit;
	size_t offset; /* in struct counter_values */
	/* COUNTER_RANGE */
	unsigned int count;
	const char *(*name)(unsigned int i);
	unsigned int first;
	/* COUNTER_RATIO */
	size_t per;
	double scale;
};

/* the table: every counter the summary and /metrics show */
extern const struct counter_desc counter_descs[];
extern const unsigned int nr_counter_descs;
/* the family of samples dropped, by reason */
extern const struct metrics_family *const counters_dropped_family;

/**
 * counters__read() - every counter of @c's modules into @v (the sampler's
 * and the drains' stay readable after they stopped).
 */
void counters__read(const struct collector *c, struct counter_values *v);

/**
 * counters__summary() - the summary's counter lines, "ctxprof: <section>:
 * ...", for what @v->have says applies; a section whose counters are all 0
 * and that would say nothing useful then (context, OpenTelemetry, degraded)
 * is left out.
 */
void counters__summary(FILE *f, const struct counter_values *v);

/** counters__snapshot() - every described counter of @v into @m's samples (appended). */
void counters__snapshot(const struct counter_values *v, struct metrics_snapshot *m);

/** counters__dropped() - samples dropped, all reasons: the summary's "dropped". */
uint64_t counters__dropped(const struct counter_values *v);

#endif /* CTXPROF_COUNTERS_H */
