/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * trace - per-thread histories of events, appended without a lock and
 * replayed in order on demand.  [docs/design/thread-traces.md, after TSan's
 * Trace / TracePart]
 *
 * A trace is a list of fixed-size parts (struct trace_part, TRACE_PART_WORDS
 * 8-byte words) holding events that are whole multiples of 8 bytes (see
 * traces/trace_event.h).  Its owner appends at the trace position: load the
 * position, write the event's words, publish the new position with a
 * release store.  When the event does not fit, the owner switches parts: it
 * records how far the full part is used (where a filler event could fill the gap with
 * NOP events), takes a fresh part and links it, under the trace's mutex.
 * The mutex is taken on a part switch and by the replayer, nowhere else.
 *
 * Owners.  A trace could have one writer, the thread it describes; here the
 * events of one thread come from several collector threads (each drain
 * thread that sees its samples, the main thread draining its span events,
 * the tracking thread with its renames and exit).  So each writer thread has
 * its own trace per profiled thread (struct trace_writer: a private tid ->
 * trace index no other thread touches), and a replay merges the traces of
 * one thread by event time.  Appending stays single-writer and lock-free.
 *
 * Memory.  Parts come from one pool with a global budget (traces_opts).
 * Past it, a switch recycles the oldest full part of any trace that has
 * more than min_parts parts (the recycle queue holds the oldest parts of
 * such traces, oldest first); events recycled before a replay read them are
 * counted.  When nothing can be recycled the event is dropped and counted.
 * A replay frees the parts it has consumed; a trace idle for a whole replay
 * interval is retired (its owner drops it from its index at its next sweep)
 * and freed by the replay after.
 *
 * Replay (one replayer thread, the exporter's): traces__cut() marks where
 * each trace stands (up to a time: span events reach the collector later
 * than the samples they frame); the storage's liveness checker (traces__liveness)
 * keeps the stacks of events past the cut; traces__replay() hands every
 * thread's events up to the cut, in time order, to a callback, then frees
 * what it consumed.
 *
 * Threads and locks:
 *   traces__new/free                     one thread, no writer or replayer running
 *   traces__writer, trace_writer__free   any thread, pool lock (rare)
 *   trace_writer__get, trace__append,    the writer's own thread only; a part
 *   trace_writer__sweep                  switch takes the trace's mutex, then
 *                                        the pool lock (order: trace -> pool;
 *                                        another trace's mutex only by trylock)
 *   traces__cut/liveness/replay/stats    the replayer thread; each trace's
 *                                        mutex in turn, then the pool lock
 */
#ifndef CTXPROF_TRACE_H
#define CTXPROF_TRACE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "traces/trace_event.h"

/* words of one part: a part and its header make 4 KiB */
#define TRACE_PART_WORDS 504
/* parts a trace keeps however full the pool is */
#define TRACE_MIN_PARTS_DEFAULT 2
/* default pool: 64 MiB of parts */
#define TRACE_PART_BUDGET_DEFAULT ((64u << 20) / 4096)

struct trace;
struct trace_part;
struct traces;
struct trace_writer;
struct trace_id_set;

struct traces_opts {
	size_t part_budget;	/* parts at most in the pool (0: the default) */
	unsigned int min_parts; /* parts a trace keeps (0: the default; at least 1) */
};

struct traces_stats {
	uint64_t traces;	  /* traces created */
	uint64_t traces_freed;	  /* retired and freed */
	uint64_t traces_live;	  /* now */
	uint64_t parts;		  /* parts allocated (<= budget) */
	uint64_t parts_in_use;	  /* linked into traces */
	uint64_t switches;	  /* part switches */
	uint64_t recycled;	  /* parts taken from a trace before a replay read them */
	uint64_t events;	  /* events appended */
	uint64_t events_dropped;  /* not appended: no part (budget, nothing to recycle) */
	uint64_t events_recycled; /* appended, then recycled unreplayed */
	uint64_t events_replayed; /* handed to a replay callback (seeds not included) */
	uint64_t seeds;		  /* seed events written at part switches */
	uint64_t seeds_replayed;  /* seeds handed over: the events they stand for were lost */
	uint64_t replay_bytes;	  /* largest copy one replay made of a thread's events */
};

/* one event as a replay hands it over: its words stay valid during the callback */
struct trace_event_ref {
	uint64_t time_ns;
	const uint64_t *ev; /* header word first (trace_event.h) */
	uint32_t seq;	    /* order of arrival within its trace: ties keep it */
	uint8_t writer;	    /* the writer's number (traces__writer order) */
};

/**
 * traces__new() - an empty pool; @opts may be NULL for the defaults.
 * Return: NULL with errno set.  Pair with traces__free().
 */
struct traces *traces__new(const struct traces_opts *opts);

/** traces__free() - after every writer's thread stopped appending; accepts NULL. */
void traces__free(struct traces *ts);

/**
 * traces__writer() - a writer: one per thread that appends events.
 * Return: the writer (freed by traces__free()), or NULL with errno set
 * (ENOSPC past 255 writers).
 */
struct trace_writer *traces__writer(struct traces *ts);

/**
 * trace_writer__get() - the writer's trace of thread @tid of process @pid.
 * @create: make one when there is none (allocates: under the pool lock)
 * A trace the replayer asked to retire comes back to life.
 * Writer's thread only.
 * Return: the trace, or NULL (none and !@create, or no memory: counted as
 * dropped events by the caller's trace__append(NULL, ...)).
 */
struct trace *trace_writer__get(struct trace_writer *w, uint32_t pid, uint32_t tid, bool create);

/*
 * The head of every trace: its position, which the inline fast
 * path of trace__append() reads and advances.  Not for other use.
 */
struct trace_pos {
	_Atomic(uint64_t *) pos;   /* owner stores (release); the replayer loads under the mutex */
	uint64_t *end;		   /* owner only: the end of the part being written */
	_Atomic uint64_t appended; /* owner: events appended (relaxed) */
};

/* the slow path: a part switch, a NULL trace or a bad size (counted dropped) */
int trace__append_slow(struct trace_writer *w, struct trace *t, const uint64_t *ev,
		       unsigned int nwords);

/* the thread's state as its events left it changes: kept for the seeds of the next part */
void trace__note_state(struct trace *t, const uint64_t *ev, unsigned int nwords);

/* trace__append() without the state: not for other use */
static inline int trace__append_words(struct trace_writer *w, struct trace *t, const uint64_t *ev,
				      unsigned int nwords)
{
	struct trace_pos *h = (struct trace_pos *)t;
	uint64_t *pos;

	if (__builtin_expect(t && nwords && nwords <= TRACE_EV_MAX_WORDS, 1)) {
		pos = atomic_load_explicit(&h->pos, memory_order_relaxed);
		if (__builtin_expect(pos && (size_t)(h->end - pos) >= nwords, 1)) {
			for (unsigned int i = 0; i < nwords; i++)
				pos[i] = ev[i];
			/* release: a replayer that sees the position sees the words */
			atomic_store_explicit(&h->pos, pos + nwords, memory_order_release);
			atomic_store_explicit(
				&h->appended,
				atomic_load_explicit(&h->appended, memory_order_relaxed) + 1,
				memory_order_relaxed);
			return 0;
		}
	}
	return trace__append_slow(w, t, ev, nwords);
}

/**
 * trace__append() - append one event of @nwords words (1..TRACE_EV_MAX_WORDS;
 * header first, see trace_event.h) at @t's position: a load, the words, a
 * release store.  A part switch (the trace's mutex) every few hundred
 * words; the new part starts with seeds of the thread's state (its name,
 * its open spans: trace_event.h, TRACE_EV_SEED), so that a reader of that
 * part alone, its predecessors recycled, still knows them.  A span event or
 * a name also updates that state (a call; samples pay one compare).  @t may
 * be NULL: the event is counted dropped.  Writer's thread only.
 * Return: 0, or -ENOSPC when no part could be had (counted).
 */
static inline int trace__append(struct trace_writer *w, struct trace *t, const uint64_t *ev,
				unsigned int nwords)
{
	int err = trace__append_words(w, t, ev, nwords);

	/* after the append: a switch it made must not seed the event itself */
	if (__builtin_expect(t && nwords && trace_ev_is_state(ev[0]), 0))
		trace__note_state(t, ev, nwords);
	return err;
}

/**
 * trace__renamed() - whether @name (TRACE_EV_NAME_LEN bytes at most) differs
 * from the name this writer last gave @t, remembering it: the writer then
 * appends a THREAD_NAME event.  Writer's thread only.
 */
bool trace__renamed(struct trace *t, const char *name);

/**
 * traces__take_mark() - whether some writer made a trace of @tid since the
 * last call for it, clearing the mark: the tracking thread appends a
 * thread's exit only when someone traced it.  Any thread.
 */
bool traces__take_mark(struct traces *ts, uint32_t tid);

/**
 * trace_writer__sweep() - drop the traces the replayer retired from the
 * writer's index, handing them back.  Writer's thread, now and then (a
 * second apart is plenty): never per event.
 */
void trace_writer__sweep(struct trace_writer *w);

/**
 * traces__cut() - mark in every trace the end of its last event before
 * @before_ns (CLOCK_MONOTONIC; UINT64_MAX: everything): the next replay goes
 * up to there.  Events come about in time order per trace only nearly (a
 * drain reads several CPUs' rings in turn), so the replay hands over every
 * event before @before_ns and a few after it, which its reader keeps for
 * later.  Replayer thread.
 */
void traces__cut(struct traces *ts, uint64_t before_ns);

/**
 * traces__liveness() - calltrace_liveness_fn (storage/calltrace_storage.h):
 * add the stack ids of the sample events not replayed yet whose time is at
 * or after the last cut's: those past the cut, and those the next replay
 * hands over early (which its reader keeps for the one after).  @ctx: the
 * traces.
 */
void traces__liveness(void *ctx, struct trace_id_set *preserve);

/*
 * The events of one thread, time-ordered (ties: writer, then arrival).
 * Return nonzero to stop the replay.
 */
typedef int (*trace_replay_fn)(void *ctx, uint32_t pid, uint32_t tid,
			       const struct trace_event_ref *evs, size_t n);

/**
 * traces__replay() - hand each thread's events from the last replay up to
 * the cut to @fn, thread by thread (by pid, then tid), then free the parts
 * consumed and the traces retired.  Copies each trace's events under its
 * mutex; @fn runs without any lock.  Replayer thread.
 * Return: 0, @fn's nonzero value, or -ENOMEM.
 */
int traces__replay(struct traces *ts, trace_replay_fn fn, void *ctx);

/** traces__stats() - counters; exact when no writer runs. */
void traces__stats(struct traces *ts, struct traces_stats *st);

#endif /* CTXPROF_TRACE_H */
