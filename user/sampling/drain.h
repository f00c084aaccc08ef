/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * drain - the threads that empty the sampler's per-CPU rings.
 *
 * Each drain thread owns one sampler part (a fixed subset of the CPUs' rings)
 * and, per record: validates it, puts its stack into the shared call-trace
 * storage (lock-free), counts it in the thread's own sample table, and looks
 * its thread up in the RCU registry (wait-free) to learn whether its
 * process's mappings are due a read; if so, or if the sample found no unwind
 * tables for it, the process goes into a lossy "to map" set the main thread
 * empties.  With per-thread traces on (drains__trace()), it also appends
 * the sample to its own trace of the sampled thread (traces/trace.h).  No
 * allocation, lock or syscall per record (a trace's part switch, every
 * ~126 samples of a thread, takes the trace's mutex).
 *
 * Every drain owns two sample tables, one per profile window: the window
 * open, [start, end), and the one after it, [end, next end); each record
 * goes to the table of the window its CLOCK_MONOTONIC time (taken by the
 * BPF program) lies in, so a profile holds exactly the samples taken in
 * its window, whenever the drains happen to read them.  The exporter posts
 * each window's end before it passes (drains__open()); a drain closes the
 * window by itself once a sweep of its rings began DRAIN_SETTLE_NS after
 * the end (every record taken before it is then read), and the exporter,
 * after drains__close(), reads the closed tables while the drains fill the
 * next.  A record older than the open window (taken before profiling began,
 * or committed more than DRAIN_SETTLE_NS late) belongs to no window: it is
 * dropped, counted as outside_window.
 *
 * Scrape windows (drains__scrape_open()): besides the profile windows, up to
 * DRAIN_SCRAPES windows of any length (an HTTP scrape's "next N seconds")
 * that each record taken in them also goes to, optionally of one process
 * only.  A scrape window has two tables per drain as well, one per profile
 * window it overlaps, so that the exporter takes each half while the traces
 * of its samples are still stored (the same moment it takes the profile
 * window's); a drain closes a scrape window by itself as it closes a profile
 * window, once a sweep began DRAIN_SETTLE_NS past its end.
 */
#ifndef CTXPROF_DRAIN_H
#define CTXPROF_DRAIN_H

#include <stdint.h>
#include "processes/thread_registry.h"
#include "sampling/sample_table.h"
#include "sampling/sampler.h"
#include "storage/calltrace_storage.h"
#include "traces/trace.h"

/* reasons a drain drops a record the BPF side emitted */
enum drain_drop {
	DRAIN_DROP_MALFORMED,	      /* record size and frame counts disagree */
	DRAIN_DROP_STACK_TABLE_FULL,  /* the storage answered CALLTRACE_DROPPED_TRACE_ID */
	DRAIN_DROP_SAMPLE_TABLE_FULL, /* the drain's sample table is full */
	DRAIN_DROP_OUTSIDE_WINDOW,    /* taken before the window open (see above) */
	DRAIN_DROP_MAX,
};

/*
 * How late after its time a record may reach its ring: the BPF program
 * reads the clock, walks the stacks, then commits (tens of microseconds).
 */
#define DRAIN_SETTLE_NS 10000000ull

/* slots of the lossy "processes to map" set of each drain */
#define DRAIN_RECENT_PIDS 256
/* slots of the code objects of Python frames sampled lately, per drain */
#define DRAIN_RECENT_CODES 1024
/* scrape windows open at once, at most */
#define DRAIN_SCRAPES 8
/* how far ahead of its opening a scrape window starts (drains__scrape_open()) */
#define DRAIN_SCRAPE_LEAD_NS 20000000ull

struct drain_counters {
	uint64_t received; /* records handed to the drains */
	uint64_t cpu_ns;   /* drain threads' CPU time */
	uint64_t drops[DRAIN_DROP_MAX];
	uint64_t off_received; /* off-CPU waits handed to the drains (not in @received) */
	uint64_t off_dropped;  /* of those, dropped: malformed, out of the window, a table full */
};

struct drains;

/**
 * drains__new() - set up @n drains (no thread yet).
 * @traces: the shared storage every drain puts into
 * @reg: the registry samples' threads are looked up in (the drain threads
 *	register as its readers; a thread calling drains__record() must be one)
 * @max_rows: rows per sample table
 * Return: the drains, or NULL with errno set.  Pair with drains__free().
 */
struct drains *drains__new(int n, struct calltrace_storage *traces, struct thread_registry *reg,
			   size_t max_rows);

/**
 * drains__trace() - append every sample to per-thread traces in @tl, a
 * writer per drain.  Before drains__start().
 * Return: 0 or -errno.
 */
int drains__trace(struct drains *d, struct traces *tl);

/** drains__ctxs() - the per-part callback arguments for sampler__open(). */
void *const *drains__ctxs(const struct drains *d);

/** drains__record() - the sampler_record_fn to pass with drains__ctxs(). */
void drains__record(void *ctx, const struct sample_record *rec, size_t size);

/**
 * drains__start() - start one thread per sampler part, polling every @poll_ms.
 * The threads block SIGINT and SIGTERM: the caller's thread gets them.
 * Return: 0 or -errno (no thread left running).
 */
int drains__start(struct drains *d, struct sampler *s, int poll_ms);

/**
 * drains__begin_window() - the first window: records before @start_ns are
 * outside every window, those at @end_ns or later go to the next table
 * (UINT64_MAX: one window until the end).  Before drains__start(); without
 * it the window is [0, UINT64_MAX).
 */
void drains__begin_window(struct drains *d, uint64_t start_ns, uint64_t end_ns);

/**
 * drains__close() - wait until every drain has closed the open window (a
 * sweep that began DRAIN_SETTLE_NS after its end, at most about two poll
 * periods after that; this waits for the end).  Call from one thread (the
 * exporter) while the drains run.
 * Return: 0, or -errno when a drain thread has failed (see drains__error()).
 */
int drains__close(struct drains *d);

/**
 * drains__open() - the window after the closed one, from its end to
 * @end_ns, once the closed window's tables are read and cleared: records
 * at @end_ns or later will go to those.  @end_ns must be ahead of the
 * drains: a record of the window after it that a drain read before this
 * call would sit in this window.
 * Return: 0, or -ETIME when @end_ns had passed by the time every drain
 * could see it (the caller's thread stalled): the window may hold samples
 * taken after its end.
 */
int drains__open(struct drains *d, uint64_t end_ns);

/**
 * drains__for_each_table() - call @fn on the tables of the closed window
 * (after drains__close(), before drains__open()), or on all of them once
 * drains__stop() returned (@all true).
 */
void drains__for_each_table(struct drains *d, bool all,
			    void (*fn)(void *ctx, struct sample_table *t), void *ctx);

/**
 * drains__stop() - ask the threads to finish and join them.  Records still
 * in the rings afterwards are consumed by sampler__stop() on the caller's
 * thread, still counted into the drains.
 */
void drains__stop(struct drains *d);

/** drains__counters() - sum of every drain's counters (relaxed reads). */
void drains__counters(const struct drains *d, struct drain_counters *out);

/** drains__nr() - how many drains (threads once started) there are. */
int drains__nr(const struct drains *d);

/**
 * drains__heartbeat() - a count drain @i's thread bumps at every poll of its
 * rings (at least once per poll period while it runs).  Any thread.
 */
uint64_t drains__heartbeat(const struct drains *d, int i);

/**
 * drains__recent_pids() - call @fn with each process sampled since the last
 * call whose mappings were not read (lossy: two processes may share a slot;
 * a process sampled again comes back).  Call from one thread.
 */
void drains__recent_pids(struct drains *d, void (*fn)(void *ctx, uint32_t pid), void *ctx);

/**
 * drains__recent_codes() - call @fn with each Python frame's code object
 * (include/python_abi.h: its two words) sampled lately in process image
 * (@pid, @exec_id), so it can be named while the process lives: lossy (a
 * slot per code object hash, overwritten), each announced again once its
 * slot was taken by another.  @fn returns false when it could not take the
 * code yet (its process not known yet): the next call offers it again.
 * Call from one thread.
 */
void drains__recent_codes(struct drains *d,
			  bool (*fn)(void *ctx, uint32_t pid, uint32_t exec_id, uint64_t w1,
				     uint64_t w2),
			  void *ctx);

/**
 * drains__scrape_open() - open scrape window @slot (< DRAIN_SCRAPES, not
 * open): every record taken from *@start_ns (DRAIN_SCRAPE_LEAD_NS from now)
 * until *@end_ns (@duration_ns later), of process @pid (0: any), also goes
 * to the slot's tables (each drain's two, allocated here with the profile
 * tables' size: pages no row touches cost nothing).  A record the profile
 * table refused, or whose stack was not stored, is in neither.  Call from
 * the exporter's thread, not between drains__close() and drains__open().
 * Return: 0; -ETIME when the caller stalled past the start (records of the
 * window's first moments may be missing); -EINVAL (bad or open slot) or
 * -ENOMEM, the slot left closed.
 */
int drains__scrape_open(struct drains *d, unsigned int slot, uint32_t pid, uint64_t duration_ns,
			uint64_t *start_ns, uint64_t *end_ns);

/**
 * drains__scrape_closed() - whether every drain closed scrape window @slot
 * (a sweep began DRAIN_SETTLE_NS after its end): its tables are then the
 * caller's to read.  Exporter's thread.
 */
bool drains__scrape_closed(const struct drains *d, unsigned int slot);

/**
 * drains__for_each_scrape_table() - call @fn on scrape window @slot's halves
 * of the closed profile window (after drains__close(), before
 * drains__open()), or on every half (@all: once drains__scrape_closed(), or
 * once drains__stop() returned).  Exporter's thread.
 */
void drains__for_each_scrape_table(struct drains *d, unsigned int slot, bool all,
				   void (*fn)(void *ctx, struct sample_table *t), void *ctx);

/** drains__scrape_dropped() - records scrape window @slot's full tables refused. */
uint64_t drains__scrape_dropped(const struct drains *d, unsigned int slot);

/**
 * drains__scrape_close() - stop filling scrape window @slot and free its
 * tables: once drains__scrape_closed(), or with the drain threads stopped.
 * Exporter's thread.
 */
void drains__scrape_close(struct drains *d, unsigned int slot);

/** drains__error() - first error a drain thread stopped on, or 0. */
int drains__error(const struct drains *d);

/** drain_drop_name() - stable short name of a drop reason. */
const char *drain_drop_name(enum drain_drop drop);

void drains__free(struct drains *d);

#endif /* CTXPROF_DRAIN_H */
