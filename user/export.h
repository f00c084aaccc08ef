/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * export - turn the collected traces and sample counts into a pprof file.
 *
 * Hands the call-trace storage's traces over (calltrace_storage__process()),
 * symbolizes every frame, and writes one pprof Sample per sample_table row
 * with values (samples/count, cpu/nanoseconds) and labels thread_id,
 * thread_name and pid.  Runs on the collector's main thread with no drain
 * running.
 */
#ifndef CTXPROF_EXPORT_H
#define CTXPROF_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include "calltrace_storage.h"
#include "sample_table.h"
#include "symbolizer.h"

struct export_opts {
	uint64_t period_ns;	/* nanoseconds one sample stands for */
	int64_t time_nanos;	/* wall-clock start of the profile */
	int64_t duration_nanos; /* its length */
	const char *const *comments; /* NULL-terminated, may be NULL */
};

struct export_result {
	uint64_t samples;   /* sample counts written */
	uint64_t rows;	    /* pprof Samples written */
	uint64_t traces;    /* distinct traces */
	uint64_t no_trace;  /* samples whose trace id had no stored trace (counted, not written) */
	size_t locations;
	size_t functions;
	size_t mappings;
};

/**
 * export_pprof() - write @path from @traces and @samples.
 * @traces: processed (handed over and cleared) by this call
 * @samples: read only
 * Return: 0 or -errno.
 */
int export_pprof(struct calltrace_storage *traces, const struct sample_table *samples,
		 struct symbolizer *sym, const struct export_opts *opts, const char *path,
		 struct export_result *res);

#endif /* CTXPROF_EXPORT_H */
