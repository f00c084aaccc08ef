/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * timeline - replay the per-thread traces (traces/trace.h) into a Chrome
 * trace-event JSON document, which Perfetto, chrome://tracing and speedscope
 * open: "what did request X run, in order".
 *
 * One track per thread ("thread_name" metadata; "process_name" per
 * process).  Each span is an "X" slice on its thread from its begin event to
 * its end event, args span_id and local_root_span_id as 16 hex digits.  The
 * sampled stacks are "X" slices nested under it, one level per frame (root
 * first), a sample lasting one sampling period: consecutive samples with the
 * same frame at the same depth (and the same frames above it) make one
 * slice.  A span's begin or end closes every stack slice open at that
 * moment, so slices nest.  Samples outside any span are slices at the top
 * of their thread.  A span still open when a timeline is written ends at
 * the interval's end (args "unfinished": true) and is carried over: the next
 * timeline starts it at its interval's beginning ("continued": true).  The
 * interval is what was sampled: a span that ended before it (the
 * application's lanes hold events from before the collector came) is left
 * out, one that began before it starts with it ("continued").  Samples
 * carry the span BPF read from the thread's context: where they disagree
 * with the span events (an event lost in a full lane, an application that
 * died mid-span), the samples win: a span ends at the first sample outside
 * it ("end_lost"), one never begun begins at its first sample
 * ("begin_lost"), counted.
 *
 * Names come from the pprof profile written for the same interval
 * (exporter__trace_frames()), so both files name a frame alike.  Strings
 * from the profiled programs (function and thread names) are escaped, and
 * bytes that are not UTF-8 become U+FFFD.
 *
 * Main thread (the exporter's); no locks of its own.
 */
#ifndef CTXPROF_TIMELINE_H
#define CTXPROF_TIMELINE_H

#include <stdint.h>
#include "export/export.h"
#include "export/output.h"
#include "processes/thread_registry.h"
#include "traces/trace.h"

struct timeline;

struct timeline_opts {
	uint64_t period_ns; /* one sample's length */
	uint64_t begin_ns;  /* the interval sampled, CLOCK_MONOTONIC: spans are cut to it */
	uint64_t end_ns;
	struct exporter *names;	     /* the interval's exporter, after its traces were taken */
	struct thread_registry *reg; /* thread and process names when the trace has none */
	/* NULL, or where the gzipped document is kept when it cannot be
	 * written (export/output.h) */
	struct output_keep *keep;
};

struct timeline_result {
	uint64_t threads;
	uint64_t spans;		   /* span slices written */
	uint64_t spans_unmatched;  /* end events of spans not open (begin lost or before) */
	uint64_t spans_begin_lost; /* spans the samples show in but the events never began */
	uint64_t spans_end_lost;   /* spans the samples show left, with no end event */
	uint64_t samples;	   /* sample events replayed */
	uint64_t no_stack;	   /* of those, whose stack the storage no longer had */
	uint64_t slices;	   /* stack slices written */
	uint64_t bytes;		   /* JSON bytes, before compression */
};

/** timeline__new() - Return: NULL with errno set.  Pair with timeline__free(). */
struct timeline *timeline__new(void);

/** timeline__free() - accepts NULL. */
void timeline__free(struct timeline *tl);

/**
 * timeline__write() - replay @ts up to its cut (traces__cut(), taken before
 * the exporter rotated the storage) and write the document to @path, the
 * way export/output.h writes profiles; gzipped when @path ends in ".gz".
 * The text is streamed to the file as it is made (a 1 MiB buffer): memory
 * does not grow with the document.
 * Return: 0 or -errno; @res filled either way.
 */
int timeline__write(struct timeline *tl, struct traces *ts, const char *path,
		    const struct timeline_opts *o, struct timeline_result *res);

#endif /* CTXPROF_TIMELINE_H */
