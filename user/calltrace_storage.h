/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * calltrace_storage - deduplicated stack storage (seed: CallTraceStorage,
 * shared/seeds/calltrace-storage-triple-buffer.md).
 *
 * Each distinct call trace (process, kernel frames, user frames) is stored
 * once and named by a 64-bit trace id, instance epoch << 32 | slot, so ids
 * never collide across collection cycles.  CALLTRACE_DROPPED_TRACE_ID is
 * reserved and returned when a trace cannot be stored.
 *
 * This is the single-table version: one ACTIVE table, one writer thread (the
 * drain thread), and calltrace_storage__process() hands every trace to the
 * exporter and clears.  The seed's triple buffer (ACTIVE/STANDBY/SCRATCH,
 * lock-free multi-writer put, hazard pointers, liveness preservation)
 * replaces the inside behind this same interface.
 */
#ifndef CTXPROF_CALLTRACE_STORAGE_H
#define CTXPROF_CALLTRACE_STORAGE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

/* reserved: a sample whose trace could not be stored (counted, see stats) */
#define CALLTRACE_DROPPED_TRACE_ID 1ULL

struct calltrace_storage;

/* One stored call trace.  Immutable once published. */
struct calltrace {
	uint64_t trace_id;   /* epoch << 32 | slot */
	uint64_t hash;	     /* of pid, frame counts, flags and frames */
	uint32_t pid;	     /* address space the user frames belong to */
	uint16_t nr_kframes; /* kernel frames, first in frames[] */
	uint16_t nr_uframes; /* user frames, after the kernel ones */
	uint32_t flags;	     /* SAMPLE_F_* truncation flags */
	uint32_t reserved;
	__u64 frames[];	     /* leaf first, as the sampler recorded them */
};

struct calltrace_storage_stats {
	uint64_t traces;     /* distinct traces stored in this cycle */
	uint64_t puts;	     /* successful puts (hits + inserts) */
	uint64_t dropped;    /* puts answered with CALLTRACE_DROPPED_TRACE_ID */
	uint64_t capacity;   /* slots per table */
};

/**
 * calltrace_storage__new() - create the storage.
 * @capacity: maximum distinct traces per cycle (rounded up to a power of two)
 * Return: the storage, or NULL with errno set.  Pair with calltrace_storage__free().
 */
struct calltrace_storage *calltrace_storage__new(size_t capacity);

/** calltrace_storage__free() - accepts NULL. */
void calltrace_storage__free(struct calltrace_storage *s);

/**
 * calltrace_storage__put() - store a call trace, or find it stored already.
 * @frames: @nr_kframes kernel frames then @nr_uframes user frames
 *
 * A trace already stored costs a hash and a probe; no allocation, lock or
 * syscall.  A new trace is copied into preallocated memory.
 * Call from the writer thread only.
 * Return: the trace id, or CALLTRACE_DROPPED_TRACE_ID when the table is full.
 */
uint64_t calltrace_storage__put(struct calltrace_storage *s, uint32_t pid, const __u64 *frames,
				uint16_t nr_kframes, uint16_t nr_uframes, uint32_t flags);

typedef void (*calltrace_fn)(void *ctx, const struct calltrace *trace);

/**
 * calltrace_storage__process() - hand every trace stored since the last call
 * to @fn, then start a new cycle (new instance epoch, table cleared).
 * Call with no put running (single-table version).
 * Return: number of traces handed over.
 */
size_t calltrace_storage__process(struct calltrace_storage *s, calltrace_fn fn, void *ctx);

/** calltrace_storage__stats() - counters of the current cycle, drops since creation. */
void calltrace_storage__stats(const struct calltrace_storage *s, struct calltrace_storage_stats *st);

/** calltrace_hash() - the hash put() uses; exposed for the exporter and tests. */
uint64_t calltrace_hash(uint32_t pid, const __u64 *frames, uint16_t nr_kframes,
			uint16_t nr_uframes, uint32_t flags);

#endif /* CTXPROF_CALLTRACE_STORAGE_H */
