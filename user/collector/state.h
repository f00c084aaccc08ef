/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * state - the collector program's state, shared by its main
 * (collector.c: set-up, the main loop; intervals.c: the exports) and the modules that show
 * it (report.c: the status line and the summary; metrics_feed.c: what
 * /metrics serves).  Private to user/collector/.
 *
 * Main thread only: the other threads (drains, tracker, unwinder, the HTTP
 * server) see the modules it points at, never this struct.
 */
#ifndef CTXPROF_COLLECTOR_STATE_H
#define CTXPROF_COLLECTOR_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include "collector/cli.h"
#include "export/export.h"
#include "export/metrics.h"
#include "export/push.h"
#include "export/timeline.h"
#include "runtimes/hotspot/hotspot_proc.h"

struct app_context;
struct calltrace_storage;
struct drains;
struct fd_opener;
struct go_labels;
struct python_procs;
struct health;
struct otel_context;
struct outfiles;
struct outqueue;
struct pod_index;
struct process_states;
struct push;
struct scrape;
struct scrape_queue;
struct sampler;
struct symbolizer;
struct thread_registry;
struct trace_writer;
struct traces;
struct tracker;
struct unwinder;

struct collector {
	struct collector_opts opts;
	struct calltrace_storage *traces;
	struct drains *drains;
	struct sampler *sampler;
	struct symbolizer *sym;
	struct process_states *states;
	struct outfiles *files;	   /* --interval: the files' names and --max-files */
	struct outqueue *queue;	   /* what could not be written yet, and the counts */
	struct app_context *app;   /* NULL with --no-context */
	struct otel_context *otel; /* NULL with --no-context */
	/* NULL with --no-context, or on a kernel without bpf_loop */
	struct go_labels *go;
	/* NULL with --python off, or on a kernel without bpf_loop */
	struct python_procs *python;
	struct thread_registry *reg;
	struct tracker *tracker;
	struct unwinder *unwinder; /* NULL with --unwind fp */
	/* per-thread traces and their timelines; NULL without --timeline(s) */
	struct traces *tl;
	struct timeline *timeline;
	struct trace_writer *tw_main; /* the main thread's: span events */
	uint64_t interval_ns;	      /* CLOCK_MONOTONIC start of the current timeline */
	/* the window of the profile being collected: CLOCK_MONOTONIC, its start
	 * in CLOCK_REALTIME; the end is UINT64_MAX without --interval */
	uint64_t win_start_ns, win_end_ns;
	int64_t win_start_wall;
	uint64_t stopped_ns; /* when sampling stopped, 0 before */
	struct timeline_result tl_last;
	uint64_t tl_written;
	uint64_t exported; /* samples written into profiles so far */
	uint64_t no_trace; /* samples left out: their trace was not handed over */
	uint64_t traces_exported;
	uint64_t stacks_cut; /* user stacks cut at a return address in no executable mapping */
	/* the mapping events' CPUs: the online ones, and the opener of new ones */
	bool *map_online;
	int nr_possible;
	struct perf_opener *map_opener;
	struct fd_opener *chunk_maker; /* the child making unwind row chunks (CAP_BPF) */
	uint64_t frames_uncertain;     /* user frames named by their mapping only (export_result) */
	/* the profiles' distinct locations without a name, in no known mapping, summed */
	uint64_t locations_unnamed, locations_unmapped;
	struct export_result last;	 /* the latest file's counts */
	struct perf_map_stats perf_maps; /* JIT code's names read, by every export */
	struct hotspot_stats hotspot;	 /* JVMs' compiled code named, by every export */
	char node[256];			 /* the node label: $NODE_NAME, else the host name */
	struct pod_index *pods;		 /* --all, --children: containers' Kubernetes names */
	struct health *health;		 /* with --metrics-addr */
	struct metrics_server *metrics;
	struct metrics_snapshot *snap; /* filled by the main thread, then published */
	/* /debug/pprof/profile on the metrics listener: its requests, their profiles */
	struct scrape_queue *scrapeq;
	struct scrape *scrape;
	struct push *push;		/* --push: the uploads to Pyroscope; NULL without */
	struct push_config push_config; /* --push-config DIR's settings */
	uint64_t push_failed;		/* series profiles that could not be made (no memory) */
	double start_time;		/* Unix time */
	uint64_t files_written, exports_ok, exports_failed;
	double last_export_time, last_export_duration;
	bool last_export_failed;
};

#endif /* CTXPROF_COLLECTOR_STATE_H */
