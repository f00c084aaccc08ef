/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sample_table - sample counts per (trace id, thread, trace context), the
 * rows of the pprof file: each row becomes one pprof Sample with its labels
 * (thread, process, span, tags) and its count.
 *
 * Fixed capacity, allocated up front (a fixed util/htable.h index over a row
 * array): adding a sample is a hash and a probe, never an allocation.  A full
 * table refuses the sample and counts it.
 * A sample's OpenTelemetry thread record (ids and attribute bytes) and its
 * goroutine labels are part of its row's identity: each distinct record is
 * stored once per table, in a fixed pool beside the rows
 * (SAMPLE_TABLE_OTEL_BYTES_PER_ROW bytes per row), and the rows point at
 * it; a full pool refuses the sample too.
 * One writer (the drain thread); read by the exporter when no writer runs.
 */
#ifndef CTXPROF_SAMPLE_TABLE_H
#define CTXPROF_SAMPLE_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include "records.h"

/* the OpenTelemetry records a table can hold: this many bytes per row on average */
#define SAMPLE_TABLE_OTEL_BYTES_PER_ROW 96

/* a row's identity is (trace_id, tid, span_id, local_root_span_id, tags, otel, go) */
struct sample_row {
	uint64_t trace_id;
	uint64_t count;
	uint32_t pid;
	uint32_t tid;
	char comm[SAMPLER_COMM_LEN]; /* thread name at the latest sample */
	uint64_t span_id;	     /* 0: the samples had no trace context */
	uint64_t local_root_span_id;
	uint32_t tags[SAMPLER_NR_TAGS];
	uint32_t has_context; /* the samples carried a valid context */
	/* the samples' OpenTelemetry thread record, its attributes after it
	 * (in the table's pool); NULL: none */
	const struct otel_thread_record *otel;
	/* the samples' goroutine labels, their entries after them (in the
	 * table's pool); NULL: none */
	const struct go_labels_record *go;
	/* an off-CPU row's (its trace has SAMPLE_F_OFFCPU): the time its
	 * waits took, scaled by their weights; @count is then the waits */
	uint64_t off_ns;
};

struct sample_table;

/**
 * sample_table__new() - a table of @capacity slots (rounded up to a power of
 * two, at least 16), holding 3/4 as many rows.
 * Return: the table, or NULL with errno set.  Pair with sample_table__free().
 */
struct sample_table *sample_table__new(size_t capacity);

void sample_table__free(struct sample_table *t);

/**
 * sample_table__add() - count sample @rec, whose stack is @trace_id: its
 * thread, name and (when SAMPLE_F_CONTEXT) trace context come from @rec;
 * @otel is its OpenTelemetry thread record (otel_thread_ctx__from_sample(),
 * attributes included), NULL when none; @go its goroutine labels
 * (go_labels__from_sample(), entries included), NULL when none.
 * Return: 0, or -ENOSPC when the table is full (the sample is not counted).
 */
int sample_table__add(struct sample_table *t, uint64_t trace_id, const struct sample_record *rec,
		      const struct otel_thread_record *otel, const struct go_labels_record *go);

/**
 * sample_table__add_wait() - count off-CPU wait @rec (SAMPLE_F_OFFCPU),
 * whose stack is @trace_id and which took @off_ns (with the waits sampled
 * away before it): its row's count is then of waits, its off_ns their
 * time.  @otel and @go: the thread's context as it blocked, as for
 * sample_table__add().
 * Return: as sample_table__add().
 */
int sample_table__add_wait(struct sample_table *t, uint64_t trace_id,
			   const struct sample_record *rec, const struct otel_thread_record *otel,
			   const struct go_labels_record *go, uint64_t off_ns);

/** sample_table__for_each() - call @fn on every row, in the order of their first sample. */
void sample_table__for_each(const struct sample_table *t,
			    void (*fn)(void *ctx, const struct sample_row *row), void *ctx);

/** sample_table__clear() - drop every row. */
void sample_table__clear(struct sample_table *t);

/** Rows used and samples counted. */
size_t sample_table__nr_rows(const struct sample_table *t);
uint64_t sample_table__nr_samples(const struct sample_table *t);

#endif /* CTXPROF_SAMPLE_TABLE_H */
