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
 *   tag the dictionary has not named yet is "ctxprof_tag_id" = its number).
 * Runs on the collector's main thread.
 */
#ifndef CTXPROF_EXPORT_H
#define CTXPROF_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include "storage/calltrace_storage.h"
#include "sampling/sample_table.h"
#include "symbols/symbolizer.h"

struct export_opts {
	uint64_t period_ns;	     /* nanoseconds one sample stands for */
	int64_t time_nanos;	     /* wall-clock start of the profile */
	int64_t duration_nanos;	     /* its length */
	const char *const *comments; /* NULL-terminated, may be NULL */
	/* names tag @id of process @pid: 0 with *key, *value set, else -ENOENT;
	 * NULL when no tag can be named */
	int (*tag_name)(void *ctx, uint32_t pid, uint32_t id, const char **key, const char **value);
	void *tag_ctx;
	/* the process name and container id of @pid ("" when none): 0, else
	 * -ENOENT; NULL when process labels are not wanted (--pid mode) */
	int (*proc_labels)(void *ctx, uint32_t pid, char comm[16], char container_id[65]);
	void *proc_ctx;
};

struct export_result {
	uint64_t samples;  /* sample counts written */
	uint64_t rows;	   /* pprof Samples written */
	uint64_t traces;   /* distinct traces */
	uint64_t no_trace; /* samples whose trace id had no stored trace (counted, not written) */
	size_t locations;
	size_t functions;
	size_t mappings;
};

struct exporter;

/**
 * exporter__begin() - start a profile: take every trace the storage hands
 * over (calltrace_storage__process(): a rotation) and symbolize it.
 * Call from the thread that owns @sym and runs the storage's processing.
 * Return: the exporter, or NULL with errno set.  Pair with exporter__free().
 */
struct exporter *exporter__begin(struct calltrace_storage *traces, struct symbolizer *sym,
				 const struct export_opts *opts);

/**
 * exporter__add_samples() - add one pprof Sample per row of @samples (a table
 * no thread writes meanwhile).  Rows whose trace was not handed over are
 * counted in export_result.no_trace and left out.
 * Return: 0 or -errno.
 */
int exporter__add_samples(struct exporter *e, const struct sample_table *samples);

/**
 * exporter__write() - write the gzipped profile to @path (atomically) and
 * report what it holds in @res.
 * Return: 0 or -errno.
 */
int exporter__write(struct exporter *e, const char *path, struct export_result *res);

/** exporter__free() - accepts NULL. */
void exporter__free(struct exporter *e);

#endif /* CTXPROF_EXPORT_H */
