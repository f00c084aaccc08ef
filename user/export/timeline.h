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
 * slice.  A frame slice ends as many ns before its end as its depth (root
 * 0): viewers that add ts and dur in floating point (speedscope) then still
 * see callees end before their callers.  A span's begin or end closes every
 * stack slice open at that moment, so slices nest.  Samples outside any
 * span are slices at the top of their thread.  A span still open when a
 * timeline is written ends at the interval's end (args "unfinished": true)
 * and is carried over: the next timeline starts it at its interval's
 * beginning ("continued": true).  The interval is what was sampled: a span
 * that ended before it (the application's lanes hold events from before the
 * collector came) is left out, one that began before it starts with it
 * ("continued").  Samples carry the span BPF read from the thread's
 * context: where they disagree
 * with the span events (an event lost in a full lane, an application that
 * died mid-span), the samples win: a span ends at the first sample outside
 * it ("end_lost"), one never begun begins at its first sample
 * ("begin_lost"), counted.
 *
 * With --off-cpu, each recorded wait is an "X" slice "waiting: CLASS"
 * (cat "off_cpu"; args class and state, S or D as ps says) from when its
 * thread left the CPU to when it came back, inside the span the thread was
 * in as it left, with the stack it blocked in nested under it (cat
 * "off_cpu_stack", root first).  Waits are timed at their end: one still
 * going at the interval's end goes to the next timeline, cut at its
 * beginning.  A wait record that stands for waits sampled away (under the
 * switch budget) is drawn with its own length: the others' time is in the
 * profile, their stacks nowhere.
 *
 * Tracks: "thread_sort_index" 0 for a thread with spans, 1 for one without,
 * and "process_sort_index" likewise, so chrome://tracing lists request
 * threads first.  speedscope ignores both: it orders a Chrome trace's
 * threads by (pid, tid) and opens on the first, often a main thread with
 * no spans.  Hence TIMELINE_SPEEDSCOPE: the same slices in speedscope's own
 * format (https://www.speedscope.app/file-format-schema.json), one
 * "evented" profile per thread with slices (times in ns from the interval's
 * beginning), frames shared by name, and activeProfileIndex on the thread
 * with the most time in spans: the file opens on requests.
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

enum timeline_format {
	TIMELINE_CHROME,     /* Chrome trace-event JSON (Perfetto, chrome://tracing, speedscope) */
	TIMELINE_SPEEDSCOPE, /* speedscope's own file format */
};

struct timeline_opts {
	enum timeline_format format;
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
	uint64_t waits;		   /* off-CPU wait events replayed (--off-cpu) */
	uint64_t no_stack;	   /* of samples and waits, whose stack the storage no longer had */
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
