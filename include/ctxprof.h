/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libctxprof - publish each thread's trace context to the ctxprof profiler.
 *
 * An application calls ctxprof_set_context() when a thread starts serving a
 * span; the profiler's BPF program reads it at every CPU sample of that
 * thread and labels the sample with the span.  Optional: tags (interned
 * key/value pairs, ten per thread) and span begin/end events with timestamps.
 *
 * Cost and safety contract of the hot calls (set/clear context, set/clear
 * tag, span events): no syscall, no lock, no allocation, bounded time; the
 * first call on a thread registers it (slow path, once).  They may be called
 * from a signal handler unless the handler interrupted another ctxprof call
 * on the same thread; then the context may read as "none" until the next
 * update, never as a wrong span.
 *
 * Without a running profiler everything still works and costs the same:
 * nothing blocks, events past the ring pool are dropped and counted.
 * There is no shutdown: a thread's slot is released when it exits.
 * Link: -lctxprof (or libctxprof.a); the library cannot be dlclose()d.
 * fork(): the child starts with a region of its own (created on first use,
 * with the parent's options); tag ids stay valid in it.
 */
#ifndef CTXPROF_H
#define CTXPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTXPROF_API __attribute__((visibility("default")))

/* tag slots per thread: ctxprof_set_tag() takes 0..CTXPROF_TAG_SLOTS-1 */
#define CTXPROF_TAG_SLOTS 10

/**
 * struct ctxprof_options - ctxprof_init() parameters; 0 in a field means its default.
 * @sz: sizeof(struct ctxprof_options), for forward compatibility
 * @max_threads: threads that can be registered at once (default 1024); more are
 *	refused gracefully (see ctxprof_register_thread())
 * @index_rings, @index_ring_size: span-event ring pool per thread (default 4 x 4096 bytes)
 * @detail_rings, @detail_ring_size: dictionary ring pool per thread (default 2 x 4096)
 * @max_tags: distinct interned (key, value) pairs (default 65536)
 * @flush_interval_ns: a partly filled ring older than this is handed to the
 *	profiler at the thread's next event (default 100 ms)
 * @consumer_stale_ns: after this long without a profiler heartbeat, slots of
 *	exited threads are recycled even with undrained events (default 5 s)
 */
struct ctxprof_options {
	size_t sz;
	uint32_t max_threads;
	uint32_t index_rings;
	uint32_t index_ring_size;
	uint32_t detail_rings;
	uint32_t detail_ring_size;
	uint32_t max_tags;
	uint64_t flush_interval_ns;
	uint64_t consumer_stale_ns;
};

/**
 * ctxprof_init() - create this process's registry region with @opts.
 * @opts: NULL for defaults
 *
 * Optional: the first use of any call initializes with defaults.  Call it
 * early, before any other ctxprof call, to change the defaults.
 * Return: 0; -EALREADY if the library is already initialized (@opts ignored);
 * -EINVAL for out-of-range options; -errno from memfd_create(), ftruncate(),
 * fcntl() or mmap() (the library then stays disabled: every call is a no-op).
 */
CTXPROF_API int ctxprof_init(const struct ctxprof_options *opts);

/**
 * ctxprof_set_context() - the calling thread now serves @span_id.
 * @span_id: 0 means "no span"
 * @local_root_span_id: the local root span of its trace
 *
 * The write protocol (docs/design/context-slot.md): checksum 0, span, root, checksum.  Tags are
 * kept.  Hot path: a few stores, no syscall, lock or allocation.
 */
CTXPROF_API void ctxprof_set_context(uint64_t span_id, uint64_t local_root_span_id);

/**
 * ctxprof_clear_context() - the calling thread serves no span: span, root and
 * every tag become 0.  Hot path.
 */
CTXPROF_API void ctxprof_clear_context(void);

/**
 * ctxprof_set_tag() - put @tag_id in tag slot @slot of the calling thread.
 * @slot: 0..CTXPROF_TAG_SLOTS-1; others are ignored
 * @tag_id: from ctxprof_intern_tag(); 0 clears the slot
 *
 * Written inside the checksum window, so a sampler on the thread's CPU sees
 * all of an update or none of it.  Hot path.
 */
CTXPROF_API void ctxprof_set_tag(unsigned int slot, uint32_t tag_id);

/** ctxprof_clear_tag() - ctxprof_set_tag(@slot, 0).  Hot path. */
CTXPROF_API void ctxprof_clear_tag(unsigned int slot);

/**
 * ctxprof_intern_tag() - the process-wide id of the pair (@key, @value).
 * @key: NUL-terminated, 1..128 bytes
 * @value: NUL-terminated, 0..1024 bytes
 *
 * The same pair always gets the same id.  The first intern of a pair writes a
 * dictionary record (id, key, value) on the calling thread's detail lane, from
 * which the profiler learns the strings; if that write fails (ring pool
 * exhausted, thread not registered) the record is sent later, without an
 * intern again.  A profiler that attaches later asks for the whole
 * dictionary again.  Both are sent a batch at a time at the next span events,
 * ctxprof_flush() calls or thread registrations, on any thread (never
 * waiting: a batch is skipped while another thread holds the dictionary or no
 * ring is free), so interning once at start is enough, in any number; an
 * application that after its interns only writes contexts should call
 * ctxprof_flush() now and then.  Takes a mutex and may
 * allocate: call it off the hot path and keep the id.
 * Return: the id (>= 1), or 0 on failure (bad length, NULL, max_tags
 * reached, out of memory): 0 means "no tag" everywhere.
 */
CTXPROF_API uint32_t ctxprof_intern_tag(const char *key, const char *value);

/**
 * ctxprof_span_begin() - record a span begin event (CLOCK_MONOTONIC time) on
 * the calling thread's index lane.  Does not change the context.  Hot path;
 * dropped and counted when the ring pool is exhausted.
 */
CTXPROF_API void ctxprof_span_begin(uint64_t span_id, uint64_t local_root_span_id);

/**
 * ctxprof_span_end() - record a span end event; its local_root_span_id is the
 * thread's current one.  Does not change the context.  Hot path.
 */
CTXPROF_API void ctxprof_span_end(uint64_t span_id);

/**
 * ctxprof_span_enter() - ctxprof_span_begin() then ctxprof_set_context():
 * the thread starts serving @span_id.  Hot path.
 */
CTXPROF_API void ctxprof_span_enter(uint64_t span_id, uint64_t local_root_span_id);

/**
 * ctxprof_span_exit() - ctxprof_span_end(@span_id), then back to the parent:
 * ctxprof_set_context(@parent_span_id, current root) when @parent_span_id is
 * not 0, else ctxprof_clear_context().  Hot path.
 */
CTXPROF_API void ctxprof_span_exit(uint64_t span_id, uint64_t parent_span_id);

/**
 * ctxprof_flush() - hand the calling thread's partly filled rings to the
 * profiler now (they go anyway when full, when older than flush_interval_ns
 * at the next event, and at thread exit).  No syscall.
 */
CTXPROF_API void ctxprof_flush(void);

/**
 * ctxprof_register_thread() - give the calling thread a slot now.
 *
 * Optional: the first hot call does it.  A thread refused once (all
 * max_threads slots taken) stays unregistered, its calls no-ops, until it
 * calls this again.
 * Return: 0 (also when already registered); -ENOSPC when no slot is free
 * (counted in registrations_rejected); -ECANCELED after the thread's exit
 * destructor ran; an init error (see ctxprof_init()).
 */
CTXPROF_API int ctxprof_register_thread(void);

/**
 * ctxprof_unregister_thread() - release the calling thread's slot: clear its
 * context, submit its partly filled rings, and leave the slot to the
 * profiler to drain (state Draining).  Runs by itself at thread exit (a
 * pthread key destructor); a later hot call registers the thread again.
 */
CTXPROF_API void ctxprof_unregister_thread(void);

/**
 * ctxprof_shutdown() - stop handing span events and tag records to the
 * profiler, for good (the registry's shutdown_requested): the calling
 * thread's partly filled rings are submitted now, every other thread's at
 * its next span event or intern; from then on new threads get no slot and
 * new records are refused, counted per thread (events_refused in its slot).
 * Contexts are still written: samples keep their span ids.  Any thread,
 * any time after init; a no-op before.
 */
CTXPROF_API void ctxprof_shutdown(void);

/**
 * struct ctxprof_stats - counters of the whole process since init.
 * @registrations: threads that got a slot
 * @registrations_rejected: threads refused (no slot free)
 * @slots_reclaimed: registrations into a recycled slot
 * @threads_registered: slots Active now
 * @max_threads: the region's slot count
 * @events_written: records (span events and dictionary records) put into rings
 * @events_dropped: records lost because the ring pool was exhausted
 * @events_unregistered: span events of threads without a slot (refused), not recorded
 * @rings_submitted: rings handed to the profiler (slots not recycled yet)
 * @bad_free_entries: ring indices the profiler gave back that were refused
 *	(slots not recycled yet)
 * @tags_interned: distinct pairs interned
 * @tag_intern_failures: ctxprof_intern_tag() calls that returned 0
 * @init_error: 0, or the -errno that disabled the library
 *
 * Counters of live threads are read without stopping them: a snapshot, not
 * an atomic one.
 */
struct ctxprof_stats {
	uint64_t registrations;
	uint64_t registrations_rejected;
	uint64_t slots_reclaimed;
	uint32_t threads_registered;
	uint32_t max_threads;
	uint64_t events_written;
	uint64_t events_dropped;
	uint64_t events_unregistered;
	uint64_t rings_submitted;
	uint64_t bad_free_entries;
	uint64_t tags_interned;
	uint64_t tag_intern_failures;
	int init_error;
};

/**
 * ctxprof_get_stats() - fill @st.
 * Return: 0, or -EINVAL when @st is NULL.  Does not initialize the library.
 */
CTXPROF_API int ctxprof_get_stats(struct ctxprof_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* CTXPROF_H */
