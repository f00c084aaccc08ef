// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "storage/calltrace_storage.h"
#include "traces/trace.h"
#include "traces/trace_event.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htable.h"

#define MAX_WRITERS 255
/* tids are below this (the kernel's PID_MAX_LIMIT on 64-bit) */
#define MAX_TID (1u << 22)
/* recycle-queue parts a switch tries (their traces' mutexes by trylock) */
#define RECYCLE_TRIES 16
/*
 * Open spans a part switch seeds, innermost kept: deeper nesting drops the
 * outermost, as the timeline does past its own depth.
 */
#define SEED_SPANS 16
/* seeds of a new part, at most: a name and SEED_SPANS span begins */
#define SEED_WORDS (4 * (1 + SEED_SPANS))
_Static_assert(SEED_WORDS + TRACE_EV_MAX_WORDS <= TRACE_PART_WORDS, "a seeded part holds an event");

struct trace_part {
	struct trace_part *next;	      /* in its trace, older to newer; or the free list */
	struct trace_part *rq_prev, *rq_next; /* the recycle queue, while queued */
	struct trace *trace;		      /* whose part it is (pool lock) */
	uint32_t used;			      /* words used, set when the trace switched away */
	uint32_t seed;			      /* words of seeds at its start (trace mutex) */
	bool queued;			      /* in the recycle queue (pool lock) */
	uint64_t words[TRACE_PART_WORDS];
};

enum trace_state {
	TRACE_LIVE = 0,
	TRACE_RETIRE_REQ, /* the replayer found it idle: its owner may drop it */
	TRACE_RETIRED,	  /* dropped from its owner's index: no more appends */
};

struct trace {
	struct trace_pos head; /* first: trace__append()'s fast path reads it */
	pthread_mutex_t mtx;
	/* under @mtx; the queued parts are a prefix of the list, up to @queued_last */
	struct trace_part *first, *last, *queued_last;
	unsigned int nr_parts, nr_queued;
	/* the replay cursor is (first, rd_off); the cut (cut_part, cut_off) */
	uint32_t rd_off;
	struct trace_part *cut_part;
	uint32_t cut_off;
	uint32_t pid, tid;
	uint8_t writer;
	char name[TRACE_EV_NAME_LEN]; /* owner: the name last appended */
	/* owner: the state a new part is seeded with; header word 0 = none */
	uint64_t seed_name[4]; /* the last THREAD_NAME event */
	uint64_t seed_spans[SEED_SPANS]
			   [4]; /* SPAN_BEGIN events of the open spans, outermost first */
	unsigned int nr_seed_spans;
	bool gap;		/* mutex: events before the first part were recycled unreplayed */
	_Atomic int state;	/* enum trace_state */
	uint64_t appended_seen; /* replayer: head.appended at the last replay */
	struct trace *all_next; /* traces.all (list_lock) */
};

struct trace_writer {
	struct traces *ts;
	uint8_t id;
	struct trace **traces; /* index entries */
	size_t nr, cap;
	struct htable idx; /* tid -> traces[] */
	struct trace *last;
	_Atomic uint64_t dropped, switches, seeds;
	struct trace_writer *next;
};

struct traces {
	pthread_mutex_t lock; /* the pool: parts, free list, recycle queue, counters */
	size_t budget, nr_parts, in_use;
	unsigned int min_parts;
	struct trace_part *free;
	struct trace_part *rq_head, *rq_tail; /* oldest first */
	uint64_t recycled, events_recycled, traces_created, traces_freed;
	uint64_t events_freed; /* events appended to traces freed since */

	_Atomic uint64_t *marks; /* a bit per tid a writer made a trace of */

	pthread_mutex_t list_lock; /* @all, @writers */
	struct trace *all;
	struct trace_writer *writers;
	unsigned int nr_writers;

	/* the replayer's */
	uint64_t cut_ns; /* the last cut's time */
	uint64_t events_replayed, seeds_replayed, replay_bytes;
	uint64_t *buf;
	size_t buf_cap;
	struct trace_event_ref *refs;
	size_t refs_cap;
	size_t *ref_off; /* refs[i].ev as an offset into @buf while it may move */
	size_t ref_off_cap;
	struct trace **snap;
	size_t snap_cap;
};

struct traces *traces__new(const struct traces_opts *opts)
{
	struct traces *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->budget = opts && opts->part_budget ? opts->part_budget : TRACE_PART_BUDGET_DEFAULT;
	ts->min_parts = opts && opts->min_parts ? opts->min_parts : TRACE_MIN_PARTS_DEFAULT;
	ts->marks = calloc(MAX_TID / 64, sizeof(*ts->marks));
	if (!ts->marks) {
		free(ts);
		return NULL;
	}
	pthread_mutex_init(&ts->lock, NULL);
	pthread_mutex_init(&ts->list_lock, NULL);
	return ts;
}

/* ---- the pool (ts->lock held) */

static void rq_push(struct traces *ts, struct trace_part *p)
{
	p->rq_next = NULL;
	p->rq_prev = ts->rq_tail;
	if (ts->rq_tail)
		ts->rq_tail->rq_next = p;
	else
		ts->rq_head = p;
	ts->rq_tail = p;
	p->queued = true;
}

static void rq_remove(struct traces *ts, struct trace_part *p)
{
	if (p->rq_prev)
		p->rq_prev->rq_next = p->rq_next;
	else
		ts->rq_head = p->rq_next;
	if (p->rq_next)
		p->rq_next->rq_prev = p->rq_prev;
	else
		ts->rq_tail = p->rq_prev;
	p->rq_prev = p->rq_next = NULL;
	p->queued = false;
}

/* @t lost its first part, which may have been queued; @t's mutex held */
static void unqueue_first(struct traces *ts, struct trace *t, struct trace_part *p)
{
	if (!p->queued)
		return;
	rq_remove(ts, p);
	if (!--t->nr_queued)
		t->queued_last = NULL;
}

/* a part back to the free list; its trace's mutex held */
static void part_release(struct traces *ts, struct trace *t, struct trace_part *p)
{
	unqueue_first(ts, t, p);
	p->trace = NULL;
	p->next = ts->free;
	ts->free = p;
	ts->in_use--;
}

/* events whole in @p's words [@from, @to) */
static uint64_t count_events(const struct trace_part *p, uint32_t from, uint32_t to)
{
	uint64_t n = 0;
	unsigned int w;

	for (uint32_t i = from; i < to; i += w) {
		w = trace_ev_words(p->words[i]);
		if (!w || w > to - i)
			break;
		n++;
	}
	return n;
}

/*
 * Unlink @t's first part for another use; @t's mutex and the pool lock
 * held.  Its events not replayed yet are lost (counted); the replay cursor
 * and the cut move past it.
 */
static struct trace_part *trace_drop_first(struct traces *ts, struct trace *t)
{
	struct trace_part *p = t->first;
	uint64_t lost = count_events(p, t->rd_off > p->seed ? t->rd_off : p->seed, p->used);

	ts->events_recycled += lost;
	ts->recycled++;
	/* a replay must now learn the thread's state from the next part's seeds */
	if (lost)
		t->gap = true;
	t->first = p->next;
	t->nr_parts--;
	t->rd_off = 0;
	if (t->cut_part == p) {
		t->cut_part = p->next;
		t->cut_off = 0;
	}
	unqueue_first(ts, t, p);
	return p;
}

/*
 * The oldest queued part whose trace's mutex can be had without waiting
 * (@self's is held already).  Pool lock held.
 */
static struct trace_part *recycle(struct traces *ts, struct trace *self)
{
	struct trace_part *p, *next;
	int tries = 0;

	for (p = ts->rq_head; p && tries < RECYCLE_TRIES; p = next, tries++) {
		struct trace *u = p->trace;

		next = p->rq_next;
		/* the pool lock keeps @u: freeing a trace releases its parts under it */
		if (u != self && pthread_mutex_trylock(&u->mtx))
			continue;
		/* a queued part is its trace's first */
		p = u->first == p ? trace_drop_first(ts, u) : NULL;
		if (u != self)
			pthread_mutex_unlock(&u->mtx);
		if (p)
			return p;
	}
	return NULL;
}

/* a fresh part for @t (its mutex held), or NULL */
static struct trace_part *part_get(struct traces *ts, struct trace *t)
{
	struct trace_part *p;

	pthread_mutex_lock(&ts->lock);
	p = ts->free;
	if (p) {
		ts->free = p->next;
	} else if (ts->nr_parts < ts->budget) {
		p = malloc(sizeof(*p));
		if (p)
			ts->nr_parts++;
	} else {
		p = recycle(ts, t);
	}
	if (p) {
		memset(p, 0, offsetof(struct trace_part, words));
		p->trace = t;
		ts->in_use++;
	}
	pthread_mutex_unlock(&ts->lock);
	return p;
}

/* ---- writers */

struct trace_writer *traces__writer(struct traces *ts)
{
	struct trace_writer *w;

	pthread_mutex_lock(&ts->list_lock);
	if (ts->nr_writers >= MAX_WRITERS) {
		pthread_mutex_unlock(&ts->list_lock);
		errno = ENOSPC;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w) {
		w->ts = ts;
		w->id = (uint8_t)ts->nr_writers++;
		w->next = ts->writers;
		ts->writers = w;
	}
	pthread_mutex_unlock(&ts->list_lock);
	return w;
}

static bool tid_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct trace_writer *w = ctx;

	return w->traces[idx]->tid == *(const uint32_t *)key;
}

static int index_rebuild(struct trace_writer *w)
{
	htable__clear(&w->idx);
	for (size_t i = 0; i < w->nr; i++)
		if (htable__insert(&w->idx, (uint32_t)hash_u64(w->traces[i]->tid), (uint32_t)i))
			return -ENOMEM;
	return 0;
}

/* drop entry @i from @w's index; the trace is the replayer's from now on */
static void writer_drop(struct trace_writer *w, size_t i)
{
	atomic_store_explicit(&w->traces[i]->state, TRACE_RETIRED, memory_order_release);
	if (w->last == w->traces[i])
		w->last = NULL;
	w->traces[i] = w->traces[--w->nr];
}

static struct trace *trace_new(struct trace_writer *w, uint32_t pid, uint32_t tid)
{
	struct traces *ts = w->ts;
	struct trace *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->mtx, NULL);
	t->pid = pid;
	t->tid = tid;
	t->writer = w->id;
	pthread_mutex_lock(&ts->list_lock);
	t->all_next = ts->all;
	ts->all = t;
	pthread_mutex_unlock(&ts->list_lock);
	pthread_mutex_lock(&ts->lock);
	ts->traces_created++;
	pthread_mutex_unlock(&ts->lock);
	if (tid < MAX_TID)
		atomic_fetch_or_explicit(&ts->marks[tid / 64], 1ull << (tid % 64),
					 memory_order_relaxed);
	return t;
}

bool traces__take_mark(struct traces *ts, uint32_t tid)
{
	uint64_t bit = 1ull << (tid % 64);

	if (tid >= MAX_TID ||
	    !(atomic_load_explicit(&ts->marks[tid / 64], memory_order_relaxed) & bit))
		return false;
	return atomic_fetch_and_explicit(&ts->marks[tid / 64], ~bit, memory_order_relaxed) & bit;
}

bool trace__renamed(struct trace *t, const char *name)
{
	char buf[TRACE_EV_NAME_LEN] = {0};

	memcpy(buf, name, strnlen(name, sizeof(buf)));
	if (!memcmp(buf, t->name, sizeof(buf)))
		return false;
	memcpy(t->name, buf, sizeof(buf));
	return true;
}

struct trace *trace_writer__get(struct trace_writer *w, uint32_t pid, uint32_t tid, bool create)
{
	struct trace *t = w->last;
	uint32_t idx;
	int state;

	if (!t || t->tid != tid || t->pid != pid) {
		idx = htable__find(&w->idx, (uint32_t)hash_u64(tid), tid_eq, w, &tid);
		t = idx == HTABLE_NONE ? NULL : w->traces[idx];
		if (t && t->pid != pid) {
			/* the tid went to another process: that is another thread */
			writer_drop(w, idx);
			if (index_rebuild(w))
				return NULL;
			t = NULL;
		}
	}
	if (t) {
		state = TRACE_RETIRE_REQ;
		atomic_compare_exchange_strong_explicit(&t->state, &state, TRACE_LIVE,
							memory_order_acq_rel, memory_order_relaxed);
		w->last = t;
		return t;
	}
	if (!create)
		return NULL;
	if (array_grow((void **)&w->traces, &w->cap, w->nr + 1, sizeof(struct trace *), 64))
		return NULL;
	t = trace_new(w, pid, tid);
	if (!t)
		return NULL;
	w->traces[w->nr] = t;
	if (htable__insert(&w->idx, (uint32_t)hash_u64(tid), (uint32_t)w->nr)) {
		/* the replayer frees it */
		atomic_store_explicit(&t->state, TRACE_RETIRED, memory_order_release);
		return NULL;
	}
	w->nr++;
	w->last = t;
	return t;
}

/* one writer per counter: a plain load and store */
static inline void bump(_Atomic uint64_t *v)
{
	atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

void trace__note_state(struct trace *t, const uint64_t *ev, unsigned int nwords)
{
	unsigned int i;

	if (nwords != trace_ev_expected_words(trace_ev_type(ev[0])))
		return;
	switch (trace_ev_type(ev[0])) {
	case TRACE_EV_THREAD_NAME:
		memcpy(t->seed_name, ev, sizeof(t->seed_name));
		break;
	case TRACE_EV_SPAN_BEGIN:
		if (t->nr_seed_spans == SEED_SPANS) {
			memmove(t->seed_spans, t->seed_spans + 1,
				(SEED_SPANS - 1) * sizeof(t->seed_spans[0]));
			t->nr_seed_spans--;
		}
		memcpy(t->seed_spans[t->nr_seed_spans++], ev, sizeof(t->seed_spans[0]));
		break;
	case TRACE_EV_SPAN_END:
		/* the span and the children whose end was lost, as the timeline ends them */
		for (i = t->nr_seed_spans; i > 0 && t->seed_spans[i - 1][2] != ev[2]; i--)
			;
		if (i)
			t->nr_seed_spans = i - 1;
		break;
	default:
		break;
	}
}

/* copy @ev into @dst as a seed; return its words */
static uint32_t seed_event(uint64_t *dst, const uint64_t *ev)
{
	unsigned int n = trace_ev_words(ev[0]);

	memcpy(dst, ev, n * sizeof(*ev));
	dst[0] = trace_ev_hdr(trace_ev_type(ev[0]), n, trace_ev_arg(ev[0]) | TRACE_EV_SEED);
	return n;
}

/* the thread's state as seeds at the start of @p (TSan's part switch seeds its stack) */
static uint32_t seed_part(const struct trace *t, struct trace_part *p)
{
	uint32_t n = 0;

	if (t->seed_name[0])
		n += seed_event(p->words + n, t->seed_name);
	for (unsigned int i = 0; i < t->nr_seed_spans; i++)
		n += seed_event(p->words + n, t->seed_spans[i]);
	return n;
}

/*
 * A part switch (docs/design/thread-traces.md): record how far the full part is used, link a
 * fresh one seeded with the thread's state, move the position past the
 * seeds; queue the trace's oldest parts beyond min_parts for recycling.
 */
static int trace_switch_part(struct trace_writer *w, struct trace *t)
{
	struct traces *ts = w->ts;
	uint64_t *pos = atomic_load_explicit(&t->head.pos, memory_order_relaxed);
	struct trace_part *p, *old;
	uint64_t seeds;

	pthread_mutex_lock(&t->mtx);
	p = part_get(ts, t);
	if (!p) {
		pthread_mutex_unlock(&t->mtx);
		return -ENOSPC;
	}
	old = t->last;
	/* recycling may have taken every part but the last: @old is still ours */
	if (old) {
		old->used = (uint32_t)(pos - old->words);
		old->next = p;
	} else {
		t->first = p;
		t->rd_off = 0;
	}
	t->last = p;
	t->nr_parts++;
	p->seed = seed_part(t, p);
	seeds = count_events(p, 0, p->seed);
	t->head.end = p->words + TRACE_PART_WORDS;
	/* release: a replayer that sees the position sees the seeds */
	atomic_store_explicit(&t->head.pos, p->words + p->seed, memory_order_release);
	if (t->nr_parts - t->nr_queued > ts->min_parts) {
		struct trace_part *q = t->queued_last ? t->queued_last->next : t->first;

		pthread_mutex_lock(&ts->lock);
		rq_push(ts, q);
		pthread_mutex_unlock(&ts->lock);
		t->queued_last = q;
		t->nr_queued++;
	}
	pthread_mutex_unlock(&t->mtx);
	bump(&w->switches);
	atomic_store_explicit(&w->seeds,
			      atomic_load_explicit(&w->seeds, memory_order_relaxed) + seeds,
			      memory_order_relaxed);
	return 0;
}

int trace__append_slow(struct trace_writer *w, struct trace *t, const uint64_t *ev,
		       unsigned int nwords)
{
	uint64_t *pos;

	if (!t || !nwords || nwords > TRACE_EV_MAX_WORDS)
		goto drop;
	pos = atomic_load_explicit(&t->head.pos, memory_order_relaxed);
	if (!pos || (size_t)(t->head.end - pos) < nwords) {
		if (trace_switch_part(w, t))
			goto drop;
		pos = atomic_load_explicit(&t->head.pos, memory_order_relaxed);
	}
	memcpy(pos, ev, nwords * sizeof(*ev));
	/* release: a replayer that sees the position sees the words */
	atomic_store_explicit(&t->head.pos, pos + nwords, memory_order_release);
	bump(&t->head.appended);
	return 0;
drop:
	bump(&w->dropped);
	return -ENOSPC;
}

void trace_writer__sweep(struct trace_writer *w)
{
	size_t i = 0, before = w->nr;

	while (i < w->nr) {
		if (atomic_load_explicit(&w->traces[i]->state, memory_order_acquire) ==
		    TRACE_RETIRE_REQ)
			writer_drop(w, i);
		else
			i++;
	}
	if (w->nr != before && index_rebuild(w)) {
		/* no memory to index them again: let every trace go */
		while (w->nr)
			writer_drop(w, 0);
		htable__clear(&w->idx);
	}
}

/* ---- the replayer */

/* a snapshot of every trace; only the replayer frees traces, so they stay */
static int snapshot(struct traces *ts, size_t *n)
{
	struct trace *t;
	size_t nr = 0;
	int err = 0;

	pthread_mutex_lock(&ts->list_lock);
	for (t = ts->all; t && !err; t = t->all_next) {
		err = array_grow((void **)&ts->snap, &ts->snap_cap, nr + 1, sizeof(struct trace *),
				 256);
		if (!err)
			ts->snap[nr++] = t;
	}
	pthread_mutex_unlock(&ts->list_lock);
	*n = nr;
	return err;
}

/*
 * Cut @t after its last event before @before_ns (at the cursor when there
 * is none); @t's mutex held.  Events come about in time order per trace,
 * nearly: a drain reads several CPUs' rings in turn, so a few before the cut
 * may be later than @before_ns (the replay hands them over too: its reader
 * keeps them for the next interval).
 */
static void trace_cut(struct trace *t, uint64_t before_ns)
{
	uint64_t *pos = atomic_load_explicit(&t->head.pos, memory_order_acquire);
	struct trace_part *p;
	uint32_t i, to;
	unsigned int w;

	t->cut_part = t->first;
	t->cut_off = t->rd_off;
	for (p = t->first, i = t->rd_off; p; p = p->next, i = 0) {
		to = p == t->last ? (uint32_t)(pos - p->words) : p->used;
		for (; i < to; i += w) {
			w = trace_ev_words(p->words[i]);
			if (!w || w > to - i)
				break;
			if (p->words[i + 1] < before_ns) {
				t->cut_part = p;
				t->cut_off = i + w;
			}
		}
		if (p == t->last)
			break;
	}
}

void traces__cut(struct traces *ts, uint64_t before_ns)
{
	size_t n;

	ts->cut_ns = before_ns;
	if (snapshot(ts, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct trace *t = ts->snap[i];

		pthread_mutex_lock(&t->mtx);
		trace_cut(t, before_ns);
		pthread_mutex_unlock(&t->mtx);
	}
}

/* the stack ids of @p's sample and wait events in words [@from, @to) at or after @since_ns */
static void preserve_part(const struct trace_part *p, uint32_t from, uint32_t to, uint64_t since_ns,
			  struct trace_id_set *preserve)
{
	unsigned int w;

	for (uint32_t i = from; i < to; i += w) {
		w = trace_ev_words(p->words[i]);
		if (!w || w > to - i)
			break;
		if ((trace_ev_type(p->words[i]) == TRACE_EV_SAMPLE ||
		     trace_ev_type(p->words[i]) == TRACE_EV_WAIT) &&
		    p->words[i + 1] >= since_ns)
			trace_id_set__add(preserve, p->words[i + 2]);
	}
}

/* before @t's cut, the events the replay hands over early; past it, all */
static void trace_preserve(const struct trace *t, uint64_t cut_ns, struct trace_id_set *preserve)
{
	const struct trace_part *p;
	bool past = !t->cut_part;
	uint32_t from, to;

	for (p = t->first, from = t->rd_off; p; p = p->next, from = 0) {
		to = p == t->last
			     ? (uint32_t)(atomic_load_explicit(&t->head.pos, memory_order_acquire) -
					  p->words)
			     : p->used;
		if (p == t->cut_part) {
			preserve_part(p, from, t->cut_off, cut_ns, preserve);
			from = t->cut_off;
			past = true;
		}
		preserve_part(p, from, to, past ? 0 : cut_ns, preserve);
	}
}

void traces__liveness(void *ctx, struct trace_id_set *preserve)
{
	struct traces *ts = ctx;
	size_t n;

	if (snapshot(ts, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct trace *t = ts->snap[i];

		pthread_mutex_lock(&t->mtx);
		trace_preserve(t, ts->cut_ns, preserve);
		pthread_mutex_unlock(&t->mtx);
	}
}

static int trace_order(const void *a, const void *b)
{
	const struct trace *x = *(struct trace *const *)a, *y = *(struct trace *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->writer > y->writer) - (x->writer < y->writer);
}

static int ref_order(const void *a, const void *b)
{
	const struct trace_event_ref *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->writer != y->writer)
		return x->writer < y->writer ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* append @p's events in words [@from, @to) to the replay buffer */
static int copy_part(struct traces *ts, const struct trace *t, const struct trace_part *p,
		     uint32_t from, uint32_t to, size_t *nr_words, size_t *nr_refs)
{
	unsigned int w;

	if (to <= from)
		return 0;
	if (array_grow((void **)&ts->buf, &ts->buf_cap, *nr_words + (to - from), sizeof(*ts->buf),
		       4096))
		return -ENOMEM;
	for (uint32_t i = from; i < to; i += w) {
		uint64_t hdr = p->words[i];

		w = trace_ev_words(hdr);
		if (!w || w > to - i)
			break;
		if (w < 2 || w != trace_ev_expected_words(trace_ev_type(hdr)))
			continue;
		if (array_grow((void **)&ts->refs, &ts->refs_cap, *nr_refs + 1, sizeof(*ts->refs),
			       1024) ||
		    array_grow((void **)&ts->ref_off, &ts->ref_off_cap, *nr_refs + 1,
			       sizeof(*ts->ref_off), 1024))
			return -ENOMEM;
		memcpy(ts->buf + *nr_words, &p->words[i], w * sizeof(uint64_t));
		ts->refs[*nr_refs] = (struct trace_event_ref){
			.time_ns = p->words[i + 1],
			.seq = (uint32_t)*nr_refs,
			.writer = t->writer,
		};
		ts->ref_off[*nr_refs] = *nr_words;
		*nr_words += w;
		(*nr_refs)++;
	}
	return 0;
}

/*
 * Copy @t's events from the cursor up to the cut (to the end for a retired
 * trace, which gets no more), then free the parts consumed.  A part's seeds
 * are copied only after a gap (counted in @nr_seeds): a replay that read the
 * part before has seen the events they repeat.  @t's mutex held.
 */
static int trace_take(struct traces *ts, struct trace *t, bool retired, size_t *nr_words,
		      size_t *nr_refs, size_t *nr_seeds)
{
	struct trace_part *p, *stop = retired ? NULL : t->cut_part;
	uint32_t from = t->rd_off, to;
	int err = 0;

	if (!retired && !stop)
		return 0;
	for (p = t->first; p && !err; p = p->next, from = 0) {
		if (p == t->last)
			to = (uint32_t)(atomic_load_explicit(&t->head.pos, memory_order_acquire) -
					p->words);
		else
			to = p->used;
		if (p == stop && t->cut_off < to)
			to = t->cut_off;
		if (from < p->seed) {
			size_t before = *nr_refs;

			if (t->gap)
				err = copy_part(ts, t, p, from, p->seed, nr_words, nr_refs);
			*nr_seeds += *nr_refs - before;
			from = p->seed;
		}
		t->gap = false;
		if (!err)
			err = copy_part(ts, t, p, from, to, nr_words, nr_refs);
		if (p == stop)
			break;
	}
	if (err || retired)
		return err;
	/* consumed: the parts before the cut's; the cursor moves to the cut */
	pthread_mutex_lock(&ts->lock);
	while (t->first && t->first != stop) {
		p = t->first;
		t->first = p->next;
		t->nr_parts--;
		part_release(ts, t, p);
	}
	pthread_mutex_unlock(&ts->lock);
	t->rd_off = t->cut_off;
	return 0;
}

static void trace_free(struct traces *ts, struct trace *t)
{
	struct trace_part *p, *next;

	pthread_mutex_lock(&t->mtx);
	pthread_mutex_lock(&ts->lock);
	for (p = t->first; p; p = next) {
		next = p->next;
		part_release(ts, t, p);
	}
	ts->traces_freed++;
	ts->events_freed += atomic_load_explicit(&t->head.appended, memory_order_relaxed);
	pthread_mutex_unlock(&ts->lock);
	pthread_mutex_unlock(&t->mtx);
	pthread_mutex_destroy(&t->mtx);
	free(t);
}

/* unlink the traces in @dead (retired, replayed) from the list and free them */
static void free_retired(struct traces *ts, struct trace **dead, size_t n)
{
	struct trace **pp;
	size_t i;

	if (!n)
		return;
	pthread_mutex_lock(&ts->list_lock);
	for (pp = &ts->all; *pp;) {
		for (i = 0; i < n && dead[i] != *pp; i++)
			;
		if (i < n)
			*pp = (*pp)->all_next;
		else
			pp = &(*pp)->all_next;
	}
	pthread_mutex_unlock(&ts->list_lock);
	for (i = 0; i < n; i++)
		trace_free(ts, dead[i]);
}

/* after its events were taken: an idle trace is offered to its owner to drop */
static void trace_settle(struct trace *t)
{
	uint64_t appended = atomic_load_explicit(&t->head.appended, memory_order_relaxed);
	int live = TRACE_LIVE;

	if (appended == t->appended_seen)
		atomic_compare_exchange_strong_explicit(&t->state, &live, TRACE_RETIRE_REQ,
							memory_order_acq_rel, memory_order_relaxed);
	t->appended_seen = appended;
}

/* take the events of traces [@lo, @hi) of ts->snap (one thread) and replay them */
static int replay_thread(struct traces *ts, size_t lo, size_t hi, trace_replay_fn fn, void *ctx,
			 struct trace **dead, size_t *nr_dead)
{
	size_t nr_words = 0, nr_refs = 0, nr_seeds = 0, i;
	int err = 0;

	for (i = lo; i < hi && !err; i++) {
		struct trace *t = ts->snap[i];
		bool retired =
			atomic_load_explicit(&t->state, memory_order_acquire) == TRACE_RETIRED;

		pthread_mutex_lock(&t->mtx);
		err = trace_take(ts, t, retired, &nr_words, &nr_refs, &nr_seeds);
		pthread_mutex_unlock(&t->mtx);
		if (retired)
			dead[(*nr_dead)++] = t;
		else
			trace_settle(t);
	}
	if (err)
		return err;
	if (nr_words * sizeof(uint64_t) > ts->replay_bytes)
		ts->replay_bytes = nr_words * sizeof(uint64_t);
	if (!nr_refs)
		return 0;
	for (i = 0; i < nr_refs; i++)
		ts->refs[i].ev = ts->buf + ts->ref_off[i];
	qsort(ts->refs, nr_refs, sizeof(*ts->refs), ref_order);
	ts->events_replayed += nr_refs - nr_seeds;
	ts->seeds_replayed += nr_seeds;
	return fn(ctx, ts->snap[lo]->pid, ts->snap[lo]->tid, ts->refs, nr_refs);
}

int traces__replay(struct traces *ts, trace_replay_fn fn, void *ctx)
{
	struct trace **dead = NULL;
	size_t n, lo, hi, nr_dead = 0;
	int err;

	err = snapshot(ts, &n);
	if (err || !n)
		return err;
	dead = malloc(n * sizeof(struct trace *));
	if (!dead)
		return -ENOMEM;
	qsort(ts->snap, n, sizeof(struct trace *), trace_order);
	for (lo = 0; lo < n && !err; lo = hi) {
		for (hi = lo + 1; hi < n && ts->snap[hi]->pid == ts->snap[lo]->pid &&
				  ts->snap[hi]->tid == ts->snap[lo]->tid;
		     hi++)
			;
		err = replay_thread(ts, lo, hi, fn, ctx, dead, &nr_dead);
	}
	free_retired(ts, dead, nr_dead);
	free(dead);
	return err;
}

void traces__stats(struct traces *ts, struct traces_stats *st)
{
	struct trace_writer *w;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&ts->list_lock);
	for (struct trace *t = ts->all; t; t = t->all_next)
		st->events += atomic_load_explicit(&t->head.appended, memory_order_relaxed);
	for (w = ts->writers; w; w = w->next) {
		st->events_dropped += atomic_load_explicit(&w->dropped, memory_order_relaxed);
		st->switches += atomic_load_explicit(&w->switches, memory_order_relaxed);
		st->seeds += atomic_load_explicit(&w->seeds, memory_order_relaxed);
	}
	pthread_mutex_unlock(&ts->list_lock);
	pthread_mutex_lock(&ts->lock);
	st->events += ts->events_freed;
	st->traces = ts->traces_created;
	st->traces_freed = ts->traces_freed;
	st->traces_live = ts->traces_created - ts->traces_freed;
	st->parts = ts->nr_parts;
	st->parts_in_use = ts->in_use;
	st->recycled = ts->recycled;
	st->events_recycled = ts->events_recycled;
	pthread_mutex_unlock(&ts->lock);
	st->events_replayed = ts->events_replayed;
	st->seeds_replayed = ts->seeds_replayed;
	st->replay_bytes = ts->replay_bytes;
}

void traces__free(struct traces *ts)
{
	struct trace_writer *w, *wn;
	struct trace_part *p, *pn;
	struct trace *t, *tn;

	if (!ts)
		return;
	for (t = ts->all; t; t = tn) {
		tn = t->all_next;
		trace_free(ts, t);
	}
	for (p = ts->free; p; p = pn) {
		pn = p->next;
		free(p);
	}
	for (w = ts->writers; w; w = wn) {
		wn = w->next;
		htable__destroy(&w->idx);
		free(w->traces);
		free(w);
	}
	pthread_mutex_destroy(&ts->lock);
	pthread_mutex_destroy(&ts->list_lock);
	free(ts->marks);
	free(ts->buf);
	free(ts->refs);
	free(ts->ref_off);
	free(ts->snap);
	free(ts);
}
