/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * otel_context - the collector's reader of OpenTelemetry's process context
 * (OTEP 4719) and thread context (OTEP 4947), per process image.
 *
 * A subscriber of process mappings (processes/process_state.h), on the main
 * thread, for mappings that show an "OTEL_CTX" one: otel_context__changed()
 * is handed every mapping of the read; the first time it finds the context
 * mapping it attaches a struct otel_proc to the process's state (@otel) and
 * keeps those mappings (the reads of the process's memory are checked
 * against them, processes/proc_mem.h).  Then, each second
 * (otel_context__poll()), one 8-byte read of the header's published_at_ns
 * tells whether the SDK published again; if so the payload is read with the
 * OTEP's protocol and decoded (appctx/otel_process_ctx.h).  Its string
 * resource attributes label every sample of the process.  When it announces
 * a thread context (threadlocal.schema_version tls_v1 or tlsdesc_v1_dev),
 * the process's otel_thread_ctx_v1 is located (appctx/otel_tls.h) and put
 * into the sampler's pid -> location map, which makes the sampler copy each
 * thread's record into its samples.  Location is tried again when the
 * process's code mappings change (a dlopen()ed SDK) or its context does.
 *
 * Labels: the resource's string attributes; and,
 * for a sample with a thread record, trace_id (32 hex digits) and span_id
 * (16 hex digits) when the record names a trace, and each attribute under
 * its name in the key map.  An attribute whose key index the map does not
 * name makes the process context be read again (at most once a second per
 * process) and is ignored if it still does not, counted.
 *
 * Hostile input: see the modules above; target memory is read through
 * processes/proc_mem.h only; a process's failures are counted once per
 * image and change, never retried in a loop.
 *
 * Main thread only (the changes, the polls, the export and the release run
 * there): no locks inside but a process state's @lock, briefly.
 */
#ifndef CTXPROF_OTEL_CONTEXT_H
#define CTXPROF_OTEL_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include "appctx/otel_thread_ctx.h"

struct otel_context;
struct mappings;
struct otel_proc;
struct proc_maps;
struct process_state;

struct otel_context_stats {
	uint64_t processes;	  /* images with a process context read */
	uint64_t reads;		  /* payloads read and decoded (first reads and updates) */
	uint64_t bad_header;	  /* OTEL_CTX mappings refused: signature, version, size */
	uint64_t bad_payload;	  /* payloads that are no ProcessContext */
	uint64_t read_errors;	  /* header or payload unreadable (or in a file mapping) */
	uint64_t updating;	  /* refreshes that found it mid-update at every try */
	uint64_t skipped_values;  /* attribute values skipped (not strings, caps, UTF-8) */
	uint64_t other_schema;	  /* thread context schemas this reader does not know */
	uint64_t tls_found;	  /* images whose threads' records the sampler reads */
	uint64_t tls_no_symbol;	  /* a thread context announced, no otel_thread_ctx_v1 */
	uint64_t tls_unsupported; /* the variable's TLS model or C library is unsupported */
	uint64_t tls_unreadable;  /* its files or loader data unreadable */
	uint64_t map_full;	  /* the sampler's map had no room */
	uint64_t key_refreshes;	  /* process contexts read again for an unknown key index */
	uint64_t unknown_keys;	  /* attributes ignored: no name for their key index */
	uint64_t attrs_truncated; /* records whose attributes end inside an entry */
	uint64_t bad_values;	  /* thread attribute values that are no label (UTF-8, NUL) */
};

/* one label: both strings valid until the next call that fills a buffer */
struct otel_label {
	const char *key;
	const char *value;
};

/* where a sample's labels are spelled out */
struct otel_label_buf {
	char trace_id[33];
	char span_id[17];
	char values[OTEL_THREAD_ATTRS_MAX + OTEL_THREAD_ATTRS_DISTINCT];
};

/* labels one sample can get: resource attributes, ids, one per key index */
#define OTEL_CONTEXT_MAX_LABELS (64 + 2 + OTEL_THREAD_ATTRS_DISTINCT)

/**
 * otel_context__new() - @tls_map_fd: the sampler's pid -> location map
 * (sampler__otel_map_fd()); @verbose: log refusals on stderr.
 * Return: NULL with errno set.  Pair with otel_context__free().
 */
struct otel_context *otel_context__new(int tls_map_fd, int verbose);

/**
 * otel_context__changed() - the process_state_subscriber's changed (ctx: the
 * otel_context; main_thread, wants MAPPINGS_F_OTEL_CTX): @st's mappings
 * show a context mapping: find it, read it if republished, locate the
 * thread context.
 */
void otel_context__changed(void *ctx, struct process_state *st, struct mappings *snap,
			   const struct proc_maps *all);

/**
 * otel_context__poll() - read again the contexts published since, and take
 * the processes that exited or exec'd out of the sampler's map.  Each
 * second.
 */
void otel_context__poll(struct otel_context *oc);

/**
 * otel_context__thread_labels() - the labels of thread record @r in a
 * sample of the process of @p (NULL when it has no otel state): trace_id
 * and span_id, then the attributes.
 * @out: room for OTEL_CONTEXT_MAX_LABELS
 * Return: the number of labels written.
 */
size_t otel_context__thread_labels(struct otel_proc *p, const struct otel_thread_record *r,
				   struct otel_label *out, struct otel_label_buf *buf);

/**
 * otel_context__resource_labels() - the resource's string attributes of
 * the process of @p (NULL: none).
 * @out: room for OTEL_CONTEXT_MAX_LABELS
 * Return: the number of labels written.
 */
size_t otel_context__resource_labels(const struct otel_proc *p, struct otel_label *out);

/**
 * otel_context__release() - the process image of @p is gone: out of the
 * sampler's map, freed.  Accepts NULL.
 */
void otel_context__release(struct otel_proc *p);

void otel_context__stats(const struct otel_context *oc, struct otel_context_stats *st);

/** otel_context__free() - after every otel_proc was released; accepts NULL. */
void otel_context__free(struct otel_context *oc);

#endif /* CTXPROF_OTEL_CONTEXT_H */
