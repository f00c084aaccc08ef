/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * export - turn the collected traces and sample counts into a pprof file.
 *
 * Takes the call-trace storage's traces (calltrace_storage__process()),
 * symbolizes every frame, and writes one pprof Sample per sample_table row
 * with values (samples/count, cpu/nanoseconds) and labels:
 *   thread_id (number), thread_name, pid (number) on every sample;
 *   comm (the process name) and container_id (when its cgroup names one)
 *   when proc_labels is given (--all, --children);
 *   span_id and local_root_span_id (16 lowercase hex digits, the form
 *   Pyroscope's otel-profiling-go uses) on samples taken inside a span;
 *   one label per tag, key and value as the application interned them (a
 *   tag the dictionary has not named yet is "ctxprof_tag_id" = its number);
 *   the OpenTelemetry thread context's and resource's (appctx/otel_context.h);
 *   a Go program's goroutine labels (pprof.Do, SetGoroutineLabels), key =
 *   value as the program set them (appctx/go_labels.h).
 * Frames in anonymous executable code (a JIT's) are named from their
 * process's perf map when it writes one (export_opts.perf_maps).
 * A user stack that ended early ends in a marker frame saying why (its
 * sample's unwind stop reason, or a return address in no executable mapping,
 * where the stack is cut).
 * Runs on the collector's main thread.
 */
#ifndef CTXPROF_EXPORT_H
#define CTXPROF_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include "export/output.h"
#include "export/pprof.h"
#include "processes/process_state.h"
#include "sampling/sample_table.h"
#include "storage/calltrace_storage.h"
#include "symbols/perf_map.h"
#include "symbols/symbolizer.h"

struct python_procs;

/* a label a sample must carry to be written (export_opts.match) */
struct export_match {
	const char *key;
	const char *value; /* a string label's value, or a number label's in decimal */
};

/* which labels samples carry */
enum export_labels {
	EXPORT_LABELS_ALL, /* every label the header comment lists */
	/*
	 * span_id, local_root_span_id and trace_id only: for a store that
	 * makes a series of every other label (Pyroscope splits an upload by
	 * its samples' labels; thread names and tags would be series of their
	 * own), where the process's labels are the series' instead
	 */
	EXPORT_LABELS_SPANS,
};

struct export_opts {
	uint64_t period_ns;	     /* nanoseconds one sample stands for */
	int64_t time_nanos;	     /* wall-clock start of the profile */
	int64_t duration_nanos;	     /* its length */
	const char *const *comments; /* NULL-terminated, may be NULL */
	/* where each trace's process image is found: its mappings name the user
	 * frames, its labels and libctxprof tag dictionary label the samples */
	struct process_states *states;
	struct thread_registry *reg;
	bool proc_labels; /* comm and container_id labels (--all, --children), and
			   * pod, namespace, container when known */
	const char *node; /* the node label on every sample; NULL: none */
	/*
	 * where perf map reads and the frames named from them are counted;
	 * NULL: perf maps are not read.  A process with anonymous executable
	 * code has its map (/tmp/perf-PID.map, symbols/perf_map.h) read once
	 * per export, what is new of it, before its frames are named; frames
	 * in anonymous code (and a leaf in no known mapping) are then named
	 * from it, their mapping left as it was
	 */
	struct perf_map_stats *perf_maps;
	/* names JIT frames of JVMs from their own tables (runtimes/hotspot/
	 * hotspot_proc.h) before their perf maps; NULL: not read */
	struct hotspot_stats *hotspot;
	/* names the Python frames of samples (appctx/python_proc.h); NULL:
	 * they are named by their reason only */
	struct python_procs *python;
	/* --off-cpu: sample types off_cpu/nanoseconds (the waits) and wall/nanoseconds (both) */
	bool off_cpu;
	/* only rows whose labels include every one of these (NULL: all rows);
	 * the array must outlive the exporter */
	const struct export_match *match;
	size_t nr_match;
	enum export_labels labels;
};

struct export_result {
	uint64_t samples;    /* sample counts written */
	uint64_t rows;	     /* pprof Samples written */
	uint64_t traces;     /* distinct traces */
	uint64_t no_trace;   /* samples whose trace id had no stored trace (counted, not written) */
	uint64_t stacks_cut; /* stacks cut at a return address in no executable mapping */
	uint64_t frames_cut; /* the frames cut off them */
	/* frames named by their mapping alone: another file was mapped at their
	 * address by the process's next read, or their mappings left its history */
	uint64_t frames_uncertain;
	uint64_t python_frames;	 /* Python frames written (include/python_abi.h) */
	uint64_t python_unnamed; /* of those, named by a reason: code object not read */
	uint64_t off_waits;	 /* off-CPU waits written (not in @samples) */
	uint64_t unmatched;	 /* samples and waits left out by export_opts.match */
	uint64_t off_ns;	 /* their time, scaled by their weights */
	size_t locations;
	size_t locations_unnamed;  /* of those, user or kernel addresses without a function */
	size_t locations_unmapped; /* of those, user addresses in no known mapping */
	size_t functions;
	size_t mappings;
};

struct exporter;

/**
 * exporter__begin() - start a profile: take every trace the storage hands
 * over (calltrace_storage__process(): a rotation) and symbolize it.
 * Call from the thread that runs the storage's processing and collects the
 * process states (process_states__collect()); registered as a registry reader.
 * Return: the exporter, or NULL with errno set.  Pair with exporter__free().
 */
struct exporter *exporter__begin(struct calltrace_storage *traces, struct symbolizer *sym,
				 const struct export_opts *opts);

/**
 * exporter__new() - start a profile without a rotation: each row's trace is
 * looked up in the storage when the row is added (calltrace_storage__lookup():
 * put since the last rotation, or handed over by it), so a row must be added
 * before the second rotation after its sample.  For profiles besides the
 * interval's (a scrape's, an upload's), which the interval's rotations serve.
 * Same thread and pairing as exporter__begin().
 * Return: the exporter, or NULL with errno set.
 */
struct exporter *exporter__new(struct calltrace_storage *traces, struct symbolizer *sym,
			       const struct export_opts *opts);

/**
 * exporter__add_samples() - add one pprof Sample per row of @samples (a table
 * no thread writes meanwhile).  Rows whose trace was not handed over are
 * counted in export_result.no_trace and left out.
 * Return: 0 or -errno.
 */
int exporter__add_samples(struct exporter *e, const struct sample_table *samples);

/** exporter__add_row() - exporter__add_samples() for one row. Return: 0 or -errno. */
int exporter__add_row(struct exporter *e, const struct sample_row *row);

/**
 * exporter__row_state() - the process image whose stack @row holds (its
 * trace looked up as exporter__trace_frames() does); NULL when the trace is
 * gone or its image unknown.  Valid while the exporter lives.
 */
struct process_state *exporter__row_state(struct exporter *e, const struct sample_row *row);

/**
 * exporter__trace_frames() - the pprof location ids of trace @trace_id's
 * frames, leaf first (kernel frames, then user frames, then a marker frame
 * when the stack ended early): a trace handed over to this export, or put
 * since (symbolized now).
 * Return: 0 with *@locs (valid until the exporter adds traces) and *@nr set;
 * -ENOENT when the storage no longer has it; -errno on failure.
 */
int exporter__trace_frames(struct exporter *e, uint64_t trace_id, const uint64_t **locs,
			   size_t *nr);

/**
 * exporter__trace_wait_class() - the class of off-CPU trace @trace_id's wait
 * ("lock", "sleep", "io", "network", "other", as its off_cpu_class label),
 * after exporter__trace_frames() found it; NULL for a CPU sample's trace or
 * one not found.
 */
const char *exporter__trace_wait_class(const struct exporter *e, uint64_t trace_id);

/** exporter__pprof() - the profile being built: pprof__location_frame() names its ids. */
const struct pprof *exporter__pprof(const struct exporter *e);

/**
 * exporter__write() - write the gzipped profile to @path (atomically) and
 * report what it holds in @res (whether it was written or not).
 * @keep: NULL, or where the gzipped profile is kept when it cannot be
 *	written (export/output.h)
 * Return: 0 or -errno.
 */
int exporter__write(struct exporter *e, const char *path, struct output_keep *keep,
		    struct export_result *res);

/**
 * exporter__gz() - the gzipped profile, in memory, at most @max bytes, and
 * what it holds in @res.
 * @gz: set to a malloc()ed buffer the caller frees; @gz_len its length
 * Return: 0 or -errno (-EFBIG past @max).
 */
int exporter__gz(struct exporter *e, size_t max, uint8_t **gz, size_t *gz_len,
		 struct export_result *res);

/** exporter__result() - what the profile holds so far, not written anywhere. */
void exporter__result(struct exporter *e, struct export_result *res);

/** exporter__free() - accepts NULL. */
void exporter__free(struct exporter *e);

#endif /* CTXPROF_EXPORT_H */
