/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * calltrace_storage - deduplicated stack storage
 * (docs/design/calltrace-storage.md).
 *
 * Each distinct call trace (process, kernel frames, user frames) is stored
 * once per cycle and named by a 64-bit trace id, instance epoch << 32 | slot.
 * Epochs come from one process-wide counter that starts at 1, and every table
 * takes a fresh epoch each time it becomes ACTIVE, so ids never collide across
 * cycles.  Epoch 0 is reserved: CALLTRACE_DROPPED_TRACE_ID lives there.
 *
 * Three tables rotate between three roles:
 *   ACTIVE  - receives put()s, from any number of writer threads, lock-free;
 *   STANDBY - traces preserved from the previous cycle (liveness checkers);
 *   SCRATCH - the previous ACTIVE, read by process() while it hands it over.
 * Writers protect the table they use with a hazard pointer; process() waits
 * (bounded) for the hazards on a table before it reads it as complete or
 * clears it.
 *
 * Synchronization table: may the row run while the column runs?
 *
 *                      put()   stats()  process()  register_liveness()  free()
 *   put(), put_held()  yes     yes      yes (1)    yes                  no
 *   stats()            yes     yes      no         yes                  no
 *   process()          yes (1) no       no (2)     no                   no
 *   register_liveness  yes     yes      no         no                   no
 *
 *   (1) put() from N threads runs concurrently with ONE process() caller.
 *   (2) the caller serializes process() calls: one processor thread.
 *
 * Nothing here is async-signal-safe: put() caches the thread id in TLS and may
 * call sched_yield(); call it from threads, not signal handlers.
 */
#ifndef CTXPROF_CALLTRACE_STORAGE_H
#define CTXPROF_CALLTRACE_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

/* reserved: a sample whose trace could not be stored (counted, see stats) */
#define CALLTRACE_DROPPED_TRACE_ID 1ULL

/* the hazard slot array: 8192 hazard pointers (64 KiB) */
#define CALLTRACE_HAZARD_SLOTS 8192
/* hazard slots a writer probes (semi-random prime steps) before it drops */
#define CALLTRACE_HAZARD_MAX_PROBE 32
/* default arena per table: this many bytes per storable trace (~60 frames) */
#define CALLTRACE_ARENA_BYTES_PER_TRACE 512
/* default bound on each of process()'s waits for a writer's hazard */
#define CALLTRACE_HAZARD_WAIT_MS 1000
/* liveness checkers per storage */
#define CALLTRACE_MAX_LIVENESS 8

struct calltrace_storage;
struct trace_id_set;

/*
 * One stored call trace.  Immutable once published; lives in its table's
 * arena until the table is cleared (see calltrace_storage__process()).
 */
struct calltrace {
	uint64_t trace_id;   /* epoch << 32 | slot */
	uint64_t hash;	     /* of pid, frame counts, flags and frames */
	uint32_t pid;	     /* address space the user frames belong to */
	uint16_t nr_kframes; /* kernel frames, first in frames[] */
	uint16_t nr_uframes; /* user frames, after the kernel ones */
	uint32_t flags;	     /* SAMPLE_F_* truncation flags */
	uint32_t exec_id;    /* the process image (sample_record.exec_id); 0: unknown */
	__u64 frames[];	     /* leaf first, as the sampler recorded them */
};

struct calltrace_storage_stats {
	uint64_t traces;		 /* distinct traces in ACTIVE (this cycle) */
	uint64_t preserved;		 /* traces in STANDBY, kept by liveness */
	uint64_t puts;			 /* successful puts (hits + inserts), since creation */
	uint64_t dropped;		 /* puts answered with CALLTRACE_DROPPED_TRACE_ID */
	uint64_t dropped_table_full;	 /* ... because ACTIVE reached its load cap */
	uint64_t dropped_arena_full;	 /* ... because ACTIVE's arena ran out */
	uint64_t dropped_no_hazard_slot; /* ... because no hazard slot was free */
	uint64_t preserve_dropped;	 /* live traces that did not fit STANDBY */
	uint64_t busy_skips;		 /* probes that passed a claimed, unpublished slot */
	uint64_t rotations;		 /* process() calls */
	uint64_t hazard_waits;		 /* process() found a hazard and yielded */
	uint64_t hazard_timeouts;	 /* ... and gave up after hazard_wait_ms */
	uint64_t hazard_wait_max_ns;	 /* the longest of those waits */
	uint64_t tables_retired;	 /* tables replaced because a writer stalled */
	uint64_t capacity;		 /* slots per table */
	uint64_t arena_bytes;		 /* trace memory per table */
	uint64_t arena_used;		 /* ... of it used by ACTIVE */
};

struct calltrace_storage_opts {
	size_t capacity;	     /* slots per table, rounded up to a power of two; 75% usable */
	size_t arena_bytes;	     /* trace memory per table; 0: the default above */
	size_t hazard_slots;	     /* power of two <= CALLTRACE_HAZARD_SLOTS; 0: that many */
	unsigned int hazard_wait_ms; /* bound on each hazard wait; 0: the default above */
};

/**
 * calltrace_storage__new() - create the storage with default options.
 * @capacity: slots per table (rounded up to a power of two); 75% of them can
 *	hold traces, the rest keep probe chains short.
 *
 * Allocates three tables of @capacity slots and, for each, an arena of
 * CALLTRACE_ARENA_BYTES_PER_TRACE bytes per storable trace, reserved with
 * mmap(MAP_NORESERVE): only pages that traces touch are ever resident, and
 * they are reused, never returned, across cycles.
 * Return: the storage, or NULL with errno set (EINVAL for a capacity of 0 or
 * above 2^30).  Pair with calltrace_storage__free().
 */
struct calltrace_storage *calltrace_storage__new(size_t capacity);

/**
 * calltrace_storage__new_opts() - create the storage.
 * @opts: sizes; see struct calltrace_storage_opts.  A field left 0 takes its
 *	default, except capacity, which is required.
 * Return: the storage, or NULL with errno set (EINVAL for a bad size).
 * Pair with calltrace_storage__free().
 */
struct calltrace_storage *calltrace_storage__new_opts(const struct calltrace_storage_opts *opts);

/**
 * calltrace_storage__free() - free the storage; accepts NULL.
 *
 * Call with no put(), stats() or process() running and none to come.
 */
void calltrace_storage__free(struct calltrace_storage *s);

/**
 * calltrace_storage__put() - store a call trace in ACTIVE, or find it there.
 * @pid, @exec_id: the address space of the user frames: a process and its
 *	image (an exec starts a new one), so a stack before and one after an
 *	exec are two traces even when their addresses are equal
 * @frames: @nr_kframes kernel frames then @nr_uframes user frames
 *
 * Lock-free; from any number of threads at once, concurrently with one
 * process() caller.  A trace already stored costs a hash, a probe, a
 * compare-and-swap to claim a hazard slot and a seq_cst store to publish the
 * hazard; no allocation, lock or syscall.  A new trace is copied into
 * ACTIVE's arena (atomic bump) and its slot claimed by compare-and-swap.  The
 * only waits are bounded: a probe that meets a slot claimed but not yet
 * published spins, then yields a few times, then skips it (busy_skips; the
 * stack may then be stored twice, under two ids, which is harmless).  A
 * rotation between loading ACTIVE and re-checking it makes put() retry: each
 * retry means process() progressed (lock-free, not wait-free).
 *
 * A preserved trace lives in STANDBY, not ACTIVE: putting its stack again
 * returns a new id, by design.
 * Not async-signal-safe, not reentrant.
 * Return: the trace id, or CALLTRACE_DROPPED_TRACE_ID when ACTIVE is full
 * (load cap or arena) or no hazard slot is free; each reason is counted.
 */
uint64_t calltrace_storage__put(struct calltrace_storage *s, uint32_t pid, uint32_t exec_id,
				const __u64 *frames, uint16_t nr_kframes, uint16_t nr_uframes,
				uint32_t flags);

/**
 * calltrace_storage__put_held() - put(), keeping the hazard on the table.
 * @hold: set to the hazard slot to hand to calltrace_storage__release()
 *	(negative when none was taken: release() ignores it)
 *
 * For a writer that names the trace somewhere process()'s liveness checkers
 * look (an event in a thread's trace): it appends the event, then releases.
 * process() waits (bounded by hazard_wait_ms) for the hazards on the old
 * ACTIVE before it runs the checkers, so a trace put before a rotation is
 * named by the time liveness is decided and is kept if it is live.
 * Do not put again before the release.  Same thread as the put.
 */
uint64_t calltrace_storage__put_held(struct calltrace_storage *s, uint32_t pid, uint32_t exec_id,
				     const __u64 *frames, uint16_t nr_kframes, uint16_t nr_uframes,
				     uint32_t flags, long *hold);

/** calltrace_storage__release() - end the hold of a put_held(). */
void calltrace_storage__release(struct calltrace_storage *s, long hold);

typedef void (*calltrace_fn)(void *ctx, const struct calltrace *trace);

/**
 * calltrace_storage__process() - rotate the tables and hand over one cycle.
 * @fn: called once per trace, on the calling thread
 *
 * The rotation: STANDBY's preserved traces are collected and STANDBY is
 * cleared and takes a new epoch; then ACTIVE <- STANDBY, SCRATCH <- ACTIVE,
 * STANDBY <- SCRATCH atomically; once no writer holds a hazard on the old
 * ACTIVE (put_held() writers have named their traces), the liveness
 * checkers fill the preserve set; @fn sees STANDBY's traces and the old
 * ACTIVE's; the traces whose ids are in the preserve set are put, with their
 * ids, into the new STANDBY, so that the next call hands them over again.
 *
 * Call from one thread at a time (the processor); put() may run concurrently
 * from any number of threads.  Not lock-free: each wait for a hazard spins,
 * then sched_yield()s, for at most hazard_wait_ms.  If a writer still holds
 * the old ACTIVE then, its one trace may be missing from this hand-over
 * (hazard_timeouts); a table that such a writer still holds when it is due to
 * be cleared is retired and replaced by a new one instead (tables_retired),
 * and freed by a later call once its hazard is gone.  Only if that
 * replacement cannot be allocated does process() wait for the writer without
 * bound.
 *
 * Pointers handed to @fn stay valid until the next process() call.
 * Return: number of traces handed over.
 */
size_t calltrace_storage__process(struct calltrace_storage *s, calltrace_fn fn, void *ctx);

/**
 * calltrace_storage__lookup() - the trace @trace_id if ACTIVE holds it (put
 * since the last calltrace_storage__process()) or SCRATCH does (put in the
 * cycle that call handed over): a slot read, no probe.  Traces preserved
 * by liveness are not found here (only their hand-over names them).
 * Call from the process() caller's thread only (puts may run meanwhile).
 * Return: the trace, valid until the next process(), or NULL.
 */
const struct calltrace *calltrace_storage__lookup(struct calltrace_storage *s, uint64_t trace_id);

/**
 * calltrace_storage__stats() - counters; see struct calltrace_storage_stats.
 *
 * Any thread, concurrently with put(); not concurrently with process() or
 * free().  Counters read while puts run are each exact but not a snapshot.
 */
void calltrace_storage__stats(const struct calltrace_storage *s,
			      struct calltrace_storage_stats *st);

/**
 * typedef calltrace_liveness_fn - a liveness checker.
 * @ctx: as registered
 * @preserve: add the ids of the traces that must survive this rotation
 *
 * Called by process(), on its thread, after it rotated and the writers of
 * the old ACTIVE left (or the wait for one timed out: hazard_timeouts).  An
 * id whose trace is in the old STANDBY or the old ACTIVE (the two tables this
 * call hands over) is kept, with the same id, for one more cycle; other ids
 * are ignored (a trace put since the rotation is in the new ACTIVE, which
 * the next call hands over).  An add that fails (ENOMEM) loses that id only.
 */
typedef void (*calltrace_liveness_fn)(void *ctx, struct trace_id_set *preserve);

/**
 * calltrace_storage__register_liveness() - add a liveness checker.
 *
 * Call from the processor thread, not concurrently with process().
 * Return: 0, -EINVAL for a NULL @fn, or -ENOSPC past CALLTRACE_MAX_LIVENESS.
 */
int calltrace_storage__register_liveness(struct calltrace_storage *s, calltrace_liveness_fn fn,
					 void *ctx);

/** calltrace_hash() - the hash put() uses; exposed for the exporter and tests. */
uint64_t calltrace_hash(uint32_t pid, uint32_t exec_id, const __u64 *frames, uint16_t nr_kframes,
			uint16_t nr_uframes, uint32_t flags);

/*
 * trace_id_set - a set of trace ids (the preserve set), on
 * util/htable; grows (allocates) in add(), which is why it is filled on the
 * processor thread, never on the put() path.  No internal locking: one thread
 * at a time.
 */

/**
 * trace_id_set__new() - create an empty set.
 * @hint: ids expected; the set grows past it.
 * Return: the set, or NULL with errno set (EINVAL for a @hint past
 * HTABLE_MAX_ENTRIES).  Pair with trace_id_set__free().
 */
struct trace_id_set *trace_id_set__new(size_t hint);

/** trace_id_set__free() - accepts NULL. */
void trace_id_set__free(struct trace_id_set *set);

/**
 * trace_id_set__add() - add @id (adding it twice is harmless).
 * Return: 0, -EINVAL for a reserved id (epoch 0), or -ENOMEM.
 */
int trace_id_set__add(struct trace_id_set *set, uint64_t id);

/** trace_id_set__contains() - whether @id was added since the last clear. */
bool trace_id_set__contains(const struct trace_id_set *set, uint64_t id);

/** trace_id_set__count() - distinct ids in the set. */
size_t trace_id_set__count(const struct trace_id_set *set);

/** trace_id_set__clear() - empty the set, keeping its memory. */
void trace_id_set__clear(struct trace_id_set *set);

#ifdef CALLTRACE_TEST_HOOKS
/*
 * Test hooks: simulate what only many or stalled writer threads could do.
 * Compiled only into the unit test's own build of this module
 * (tests/unit/stress.mk), never into the collector.
 */
#define CALLTRACE_TEST_HOG_SLOTS  (1u << 0) /* every free hazard slot owned by a ghost */
#define CALLTRACE_TEST_PIN_ACTIVE (1u << 1) /* a ghost writer stalls holding ACTIVE */

/**
 * calltrace_storage__test_hazards() - set up ghost hazard-slot owners.
 * @what: CALLTRACE_TEST_* flags; 0 releases every ghost.
 *
 * Call with no put() or process() running.
 * Return: hazard slots the ghosts now own.
 */
size_t calltrace_storage__test_hazards(struct calltrace_storage *s, unsigned int what);
#endif /* CALLTRACE_TEST_HOOKS */

#endif /* CTXPROF_CALLTRACE_STORAGE_H */
