// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/output.h"
#include "export/pprof.h"
#include "export/timeline.h"
#include "traces/trace_event.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htable.h"
#include "util/utf8.h"

/* stack levels a slice is kept for; deeper frames are left out */
#define MAX_DEPTH 320
/* spans open at once on one thread */
#define MAX_SPANS 64
/* samples further apart than this many periods are not merged */
#define GAP_PERIODS 1.5

enum slice_kind {
	SLICE_SPAN,
	SLICE_FRAME,
	SLICE_EXIT, /* an instant: the thread exited */
};

#define SLICE_F_CONTINUED  (1u << 0) /* span begun before this timeline */
#define SLICE_F_UNFINISHED (1u << 1) /* span still open at its end */
#define SLICE_F_BEGIN_LOST (1u << 2) /* span known from samples: its begin event lost */
#define SLICE_F_END_LOST   (1u << 3) /* span ended where the samples left it */

struct slice {
	uint64_t start, end;
	uint64_t a, b; /* span: id, local root; frame: location id */
	uint32_t depth;
	uint8_t kind;
	uint8_t flags;
};

struct open_span {
	uint64_t id, root, start;
	bool continued;
	bool begin_lost;
};

/* a thread with spans open, or events past the end, when its last timeline was written */
struct carry {
	uint32_t pid, tid;
	unsigned int seen; /* the write that last replayed it */
	struct open_span spans[MAX_SPANS];
	unsigned int nr;
	/* events handed over past the interval's end: whole events, time-ordered */
	uint64_t *words;
	size_t nr_words, words_cap;
};

struct open_frame {
	uint64_t key, loc, start, end;
};

/* JSON text, flushed to @out past JB_FLUSH_AT: memory stays bounded */
struct jbuf {
	char *s;
	size_t len, cap;
	int err;
	struct output_stream *out;
	bool discard; /* no file: the text is dropped as it is flushed */
	uint64_t written;
};

#define JB_FLUSH_AT (1u << 20)

struct timeline {
	struct carry *carry;
	size_t nr_carry, carry_cap;
	struct htable carry_idx;
	unsigned int epoch;
};

/* one write */
struct writer {
	struct timeline *tl;
	const struct timeline_opts *o;
	struct timeline_result *res;
	struct jbuf j;
	bool first_event;
	/* the thread being replayed */
	uint32_t pid, tid;
	char name[TRACE_EV_NAME_LEN + 1];
	struct open_span spans[MAX_SPANS];
	unsigned int nr_spans;
	struct open_frame frames[MAX_DEPTH];
	unsigned int nr_frames;
	struct slice *slices;
	size_t nr_slices, slices_cap;
	uint64_t *defer; /* the thread's events past the end, for its carry */
	size_t nr_defer, defer_cap;
	/* processes named so far */
	uint32_t *pids;
	size_t nr_pids, pids_cap;
};

/* ---- JSON text */

static void jb_grow(struct jbuf *j, size_t more)
{
	if (!j->err && array_grow((void **)&j->s, &j->cap, j->len + more + 1, 1, 1 << 16))
		j->err = -ENOMEM;
}

/* hand what is buffered to the output (when there is one) */
static void jb_flush(struct jbuf *j)
{
	if (j->discard)
		j->len = 0;
	if (j->err || !j->out || !j->len)
		return;
	j->err = output_stream__write(j->out, j->s, j->len);
	j->written += j->len;
	j->len = 0;
}

static void jb_puts(struct jbuf *j, const char *s)
{
	size_t n = strlen(s);

	jb_grow(j, n);
	if (j->err)
		return;
	memcpy(j->s + j->len, s, n);
	j->len += n;
}

/*
 * Formatted text, at most JB_FMT_MAX bytes (every format here is short).  A
 * macro over snprintf rather than a va_list function: clang's analyzer
 * misreads va_list on x86-64 and the lint would not pass.
 */
#define JB_FMT_MAX 256
#define jb_printf(j, ...)                                                                          \
	do {                                                                                       \
		char jb_buf_[JB_FMT_MAX];                                                          \
		int jb_n_ = snprintf(jb_buf_, sizeof(jb_buf_), __VA_ARGS__);                       \
		if (jb_n_ < 0 || jb_n_ >= (int)sizeof(jb_buf_))                                    \
			(j)->err = (j)->err ? (j)->err : -EINVAL;                                  \
		else                                                                               \
			jb_puts((j), jb_buf_);                                                     \
	} while (0)

/* @s as a JSON string, quoted; @max bytes at most (NUL ends it sooner) */
static void jb_str(struct jbuf *j, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str, *end;
	size_t n;

	end = s + strnlen(str, max);
	jb_grow(j, (size_t)(end - s) * 6 + 2);
	if (j->err)
		return;
	j->s[j->len++] = '"';
	while (s < end) {
		n = utf8_seq_len(s, end);
		if (!n) {
			memcpy(j->s + j->len, "\\ufffd", 6);
			j->len += 6;
			s++;
		} else if (*s == '"' || *s == '\\') {
			j->s[j->len++] = '\\';
			j->s[j->len++] = (char)*s++;
		} else if (*s < 0x20) {
			j->len += (size_t)snprintf(j->s + j->len, 7, "\\u%04x", *s++);
		} else {
			memcpy(j->s + j->len, s, n);
			j->len += n;
			s += n;
		}
	}
	j->s[j->len++] = '"';
}

static void jb_ts(struct jbuf *j, const char *key, uint64_t ns)
{
	jb_printf(j, ",\"%s\":%llu.%03u", key, (unsigned long long)(ns / 1000),
		  (unsigned int)(ns % 1000));
}

/* ---- carried spans */

static bool carry_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct carry *c = &((const struct timeline *)ctx)->carry[idx];
	const uint32_t *k = key;

	return c->pid == k[0] && c->tid == k[1];
}

static uint32_t carry_hash(uint32_t pid, uint32_t tid)
{
	return (uint32_t)hash_u64((uint64_t)pid << 32 | tid);
}

static struct carry *carry_find(struct timeline *tl, uint32_t pid, uint32_t tid)
{
	uint32_t key[2] = {pid, tid};
	uint32_t idx = htable__find(&tl->carry_idx, carry_hash(pid, tid), carry_eq, tl, key);

	return idx == HTABLE_NONE ? NULL : &tl->carry[idx];
}

/* keep only the threads with spans open; index them again */
static void carry_compact(struct timeline *tl)
{
	size_t n = 0;

	for (size_t i = 0; i < tl->nr_carry; i++) {
		if (tl->carry[i].nr || tl->carry[i].nr_words)
			tl->carry[n++] = tl->carry[i];
		else
			free(tl->carry[i].words);
	}
	tl->nr_carry = n;
	htable__clear(&tl->carry_idx);
	for (size_t i = 0; i < n; i++)
		if (htable__insert(&tl->carry_idx, carry_hash(tl->carry[i].pid, tl->carry[i].tid),
				   (uint32_t)i)) {
			/* without memory the spans are not carried: the next
			 * timeline shows their ends as unmatched */
			tl->nr_carry = i;
			break;
		}
}

/* ---- slices */

static void add_slice(struct writer *w, const struct slice *s)
{
	if (w->j.err)
		return;
	if (array_grow((void **)&w->slices, &w->slices_cap, w->nr_slices + 1, sizeof(*w->slices),
		       1024)) {
		w->j.err = -ENOMEM;
		return;
	}
	w->slices[w->nr_slices++] = *s;
}

/*
 * Close the frames from depth @from down, ending them at @at at the latest.
 * A frame cut at @at ends 1 ns before it: what begins at @at (the next
 * sample's frame, a span) must not begin where a sibling ends, or viewers
 * (speedscope) nest it inside that sibling.
 */
static void close_frames(struct writer *w, unsigned int from, uint64_t at)
{
	while (w->nr_frames > from) {
		struct open_frame *f = &w->frames[--w->nr_frames];
		uint64_t end = f->end < at ? f->end : at - 1;

		if (end <= f->start)
			continue;
		add_slice(w, &(struct slice){.start = f->start,
					     .end = end,
					     .a = f->loc,
					     .depth = w->nr_frames,
					     .kind = SLICE_FRAME});
		w->res->slices++;
	}
}

/* a span's slice, within the timeline's interval: one that ended before it is not shown */
static void span_slice(struct writer *w, const struct open_span *sp, uint64_t end, uint8_t flags)
{
	uint64_t start = sp->start;

	if (end < w->o->begin_ns || start >= w->o->end_ns)
		return;
	if (end > w->o->end_ns) {
		end = w->o->end_ns;
		flags |= SLICE_F_UNFINISHED;
	}
	if (start < w->o->begin_ns) {
		start = w->o->begin_ns;
		flags |= SLICE_F_CONTINUED;
	}
	add_slice(w, &(struct slice){.start = start,
				     .end = end > start ? end : start + 1,
				     .a = sp->id,
				     .b = sp->root,
				     .kind = SLICE_SPAN,
				     .flags = flags | (sp->continued ? SLICE_F_CONTINUED : 0) |
					      (sp->begin_lost ? SLICE_F_BEGIN_LOST : 0)});
	w->res->spans++;
}

/*
 * A sample says which span its thread was in (the context BPF read): where
 * the span events disagree, one was lost (a lane full before we came, or
 * an application that died mid-span).  Spans open above the sample's end
 * 1 ns before it, so that nothing ends where the sample's frames (or a span
 * the events never began, which begins at it) begin: viewers (speedscope)
 * may take a begin before an end at the same time and nest wrongly.
 */
static void reconcile_spans(struct writer *w, uint64_t t, uint64_t span_id)
{
	unsigned int keep = 0; /* spans that stay open: up to the sample's */
	bool found = false;

	if (span_id)
		for (keep = w->nr_spans; keep > 0 && !found; keep--)
			found = w->spans[keep - 1].id == span_id;
	if (found)
		keep++;
	if ((!span_id && !w->nr_spans) || (found && keep == w->nr_spans))
		return;
	close_frames(w, 0, t - 1);
	while (w->nr_spans > keep) {
		span_slice(w, &w->spans[--w->nr_spans], t - 1, SLICE_F_END_LOST);
		w->res->spans_end_lost++;
	}
	if (!span_id || found || w->nr_spans == MAX_SPANS)
		return;
	w->spans[w->nr_spans++] = (struct open_span){.id = span_id, .start = t, .begin_lost = true};
	w->res->spans_begin_lost++;
}

/* what merges: the function, else the mapping, else nothing known */
static uint64_t frame_key(const struct pprof *p, uint64_t loc)
{
	struct pprof_frame f;

	if (pprof__location_frame(p, loc, &f))
		return UINT64_MAX;
	if (f.function_id)
		return f.function_id;
	return f.mapping_id ? 1ull << 62 | f.mapping_id : 1ull << 63;
}

static void on_sample(struct writer *w, const uint64_t *ev)
{
	const struct pprof *p = exporter__pprof(w->o->names);
	uint64_t t = ev[1], end = t + w->o->period_ns, gap;
	const uint64_t *locs;
	unsigned int d = 0, depth;
	size_t nr;

	w->res->samples++;
	if (trace_ev_arg(ev[0]) & TRACE_EV_SAMPLE_CONTEXT)
		reconcile_spans(w, t, ev[3]);
	gap = (uint64_t)(w->o->period_ns * GAP_PERIODS);
	if (w->nr_frames && t > w->frames[0].end + gap - w->o->period_ns)
		close_frames(w, 0, UINT64_MAX);
	if (exporter__trace_frames(w->o->names, ev[2], &locs, &nr)) {
		w->res->no_stack++;
		nr = 0;
	}
	depth = nr < MAX_DEPTH ? (unsigned int)nr : MAX_DEPTH;
	/* the frames this sample shares with the open ones, from the root */
	for (; d < depth && d < w->nr_frames; d++) {
		uint64_t loc = locs[nr - 1 - d];

		if (w->frames[d].key != frame_key(p, loc))
			break;
		w->frames[d].end = end;
	}
	close_frames(w, d, t);
	for (; d < depth; d++) {
		uint64_t loc = locs[nr - 1 - d];

		w->frames[d] = (struct open_frame){frame_key(p, loc), loc, t, end};
		w->nr_frames = d + 1;
	}
	if (!nr) {
		/* no stack to show: a slice of its own says so */
		close_frames(w, 0, t);
		w->frames[0] = (struct open_frame){UINT64_MAX, 0, t, end};
		w->nr_frames = 1;
	}
}

static void on_span_begin(struct writer *w, const uint64_t *ev)
{
	close_frames(w, 0, ev[1]);
	if (w->nr_spans == MAX_SPANS) {
		/* deeper than we follow: the outermost is written as it stands */
		span_slice(w, &w->spans[0], ev[1], SLICE_F_UNFINISHED);
		memmove(w->spans, w->spans + 1, (MAX_SPANS - 1) * sizeof(*w->spans));
		w->nr_spans--;
	}
	w->spans[w->nr_spans++] = (struct open_span){.id = ev[2], .root = ev[3], .start = ev[1]};
}

static void on_span_end(struct writer *w, const uint64_t *ev)
{
	unsigned int i = w->nr_spans;

	close_frames(w, 0, ev[1]);
	while (i > 0 && w->spans[i - 1].id != ev[2])
		i--;
	if (!i) {
		w->res->spans_unmatched++;
		return;
	}
	/* children whose end was lost end with their parent */
	while (w->nr_spans >= i) {
		struct open_span *sp = &w->spans[--w->nr_spans];

		span_slice(w, sp, ev[1], w->nr_spans + 1 > i ? SLICE_F_UNFINISHED : 0);
	}
}

static void on_event(struct writer *w, const uint64_t *ev)
{
	switch (trace_ev_type(ev[0])) {
	case TRACE_EV_SAMPLE:
		on_sample(w, ev);
		break;
	case TRACE_EV_SPAN_BEGIN:
		on_span_begin(w, ev);
		break;
	case TRACE_EV_SPAN_END:
		on_span_end(w, ev);
		break;
	case TRACE_EV_THREAD_NAME:
		memcpy(w->name, &ev[2], TRACE_EV_NAME_LEN);
		w->name[TRACE_EV_NAME_LEN] = '\0';
		break;
	case TRACE_EV_THREAD_EXIT:
		/* spans a thread leaves open end with it */
		close_frames(w, 0, ev[1]);
		while (w->nr_spans)
			span_slice(w, &w->spans[--w->nr_spans], ev[1], SLICE_F_UNFINISHED);
		add_slice(w, &(struct slice){.start = ev[1], .end = ev[1], .kind = SLICE_EXIT});
		break;
	default:
		break;
	}
}

/* ---- writing */

static void event_head(struct writer *w, const char *ph, const char *cat)
{
	jb_puts(&w->j, w->first_event ? "\n" : ",\n");
	w->first_event = false;
	jb_printf(&w->j, "{\"ph\":\"%s\",\"cat\":\"%s\",\"pid\":%u,\"tid\":%u", ph, cat, w->pid,
		  w->tid);
}

static void frame_name(struct writer *w, uint64_t loc)
{
	struct pprof_frame f = {0};
	const char *base;
	char buf[256];

	if (!loc || pprof__location_frame(exporter__pprof(w->o->names), loc, &f)) {
		jb_puts(&w->j, "\"[stack unavailable]\"");
	} else if (f.name) {
		jb_str(&w->j, f.name, SIZE_MAX);
	} else if (f.mapping_file && f.mapping_file[0]) {
		/* as pprof shows an unnamed frame: its file */
		base = strrchr(f.mapping_file, '/');
		snprintf(buf, sizeof(buf), "[%s]", base ? base + 1 : f.mapping_file);
		jb_str(&w->j, buf, sizeof(buf));
	} else {
		jb_puts(&w->j, "\"[unknown]\"");
	}
}

static void write_slice(struct writer *w, const struct slice *s)
{
	switch (s->kind) {
	case SLICE_SPAN:
		event_head(w, "X", "span");
		jb_printf(&w->j, ",\"name\":\"span %016llx\"", (unsigned long long)s->a);
		jb_ts(&w->j, "ts", s->start);
		jb_ts(&w->j, "dur", s->end - s->start);
		jb_printf(&w->j,
			  ",\"args\":{\"span_id\":\"%016llx\",\"local_root_span_id\":\"%016llx\"",
			  (unsigned long long)s->a, (unsigned long long)s->b);
		if (s->flags & SLICE_F_CONTINUED)
			jb_puts(&w->j, ",\"continued\":true");
		if (s->flags & SLICE_F_UNFINISHED)
			jb_puts(&w->j, ",\"unfinished\":true");
		if (s->flags & SLICE_F_BEGIN_LOST)
			jb_puts(&w->j, ",\"begin_lost\":true");
		if (s->flags & SLICE_F_END_LOST)
			jb_puts(&w->j, ",\"end_lost\":true");
		jb_puts(&w->j, "}}");
		break;
	case SLICE_FRAME:
		event_head(w, "X", "stack");
		jb_puts(&w->j, ",\"name\":");
		frame_name(w, s->a);
		jb_ts(&w->j, "ts", s->start);
		jb_ts(&w->j, "dur", s->end - s->start);
		jb_puts(&w->j, "}");
		break;
	default:
		event_head(w, "i", "thread");
		jb_puts(&w->j, ",\"name\":\"thread exit\",\"s\":\"t\"");
		jb_ts(&w->j, "ts", s->start);
		jb_puts(&w->j, "}");
		break;
	}
}

/* parents before children: earlier start, then longer, then shallower */
static int slice_order(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth);
}

static void name_process(struct writer *w)
{
	const struct process_info *p;
	const struct process_image *img;
	char comm[THREAD_REGISTRY_COMM_LEN + 1] = "";

	for (size_t i = 0; i < w->nr_pids; i++)
		if (w->pids[i] == w->pid)
			return;
	if (array_grow((void **)&w->pids, &w->pids_cap, w->nr_pids + 1, sizeof(*w->pids), 64)) {
		w->j.err = -ENOMEM;
		return;
	}
	w->pids[w->nr_pids++] = w->pid;
	if (w->o->reg) {
		thread_registry__read_lock();
		p = thread_registry__lookup_process(w->o->reg, w->pid);
		img = p ? process_info__image(p) : NULL;
		if (img)
			memcpy(comm, img->comm, THREAD_REGISTRY_COMM_LEN);
		thread_registry__read_unlock();
	}
	event_head(w, "M", "__metadata");
	jb_puts(&w->j, ",\"name\":\"process_name\",\"args\":{\"name\":");
	if (comm[0]) {
		jb_str(&w->j, comm, THREAD_REGISTRY_COMM_LEN);
	} else {
		jb_printf(&w->j, "\"pid %u\"", w->pid);
	}
	jb_puts(&w->j, "}}");
}

static void name_thread(struct writer *w)
{
	const struct thread_info *ti;

	if (!w->name[0] && w->o->reg) {
		thread_registry__read_lock();
		ti = thread_registry__lookup(w->o->reg, w->tid);
		if (ti && ti->pid == w->pid)
			memcpy(w->name, ti->comm, TRACE_EV_NAME_LEN);
		thread_registry__read_unlock();
	}
	event_head(w, "M", "__metadata");
	jb_puts(&w->j, ",\"name\":\"thread_name\",\"args\":{\"name\":");
	if (w->name[0])
		jb_str(&w->j, w->name, TRACE_EV_NAME_LEN);
	else
		jb_printf(&w->j, "\"tid %u\"", w->tid);
	jb_puts(&w->j, "}}");
}

/* keep @ev, past the interval's end, for the next timeline */
static void defer_event(struct writer *w, const uint64_t *ev)
{
	unsigned int n = trace_ev_words(ev[0]);

	if (array_grow((void **)&w->defer, &w->defer_cap, w->nr_defer + n, sizeof(*w->defer), 64)) {
		w->j.err = -ENOMEM;
		return;
	}
	memcpy(w->defer + w->nr_defer, ev, n * sizeof(*ev));
	w->nr_defer += n;
}

static void take_event(struct writer *w, const uint64_t *ev)
{
	if (ev[1] >= w->o->end_ns)
		defer_event(w, ev);
	else
		on_event(w, ev);
}

/* the thread's slices; its open spans and its events past the end carried */
static void finish_thread(struct writer *w, struct carry *c)
{
	uint64_t end = w->o->end_ns, *words;
	size_t cap;

	close_frames(w, 0, end);
	for (unsigned int i = w->nr_spans; i > 0; i--)
		span_slice(w, &w->spans[i - 1], end, SLICE_F_UNFINISHED);
	if ((w->nr_spans || w->nr_defer) && !c &&
	    !array_grow((void **)&w->tl->carry, &w->tl->carry_cap, w->tl->nr_carry + 1,
			sizeof(*w->tl->carry), 16)) {
		c = &w->tl->carry[w->tl->nr_carry++];
		memset(c, 0, sizeof(*c));
		c->pid = w->pid;
		c->tid = w->tid;
	}
	if (c) {
		c->nr = w->nr_spans;
		for (unsigned int i = 0; i < w->nr_spans; i++)
			c->spans[i] = (struct open_span){
				.id = w->spans[i].id, .root = w->spans[i].root, .continued = true};
		c->seen = w->tl->epoch;
		/* the deferred events become the carried ones; their old buffer is reused */
		words = c->words;
		cap = c->words_cap;
		c->words = w->defer;
		c->words_cap = w->defer_cap;
		c->nr_words = w->nr_defer;
		w->defer = words;
		w->defer_cap = cap;
	}
	w->nr_defer = 0;
	qsort(w->slices, w->nr_slices, sizeof(*w->slices), slice_order);
	name_process(w);
	name_thread(w);
	for (size_t i = 0; i < w->nr_slices && !w->j.err; i++) {
		write_slice(w, &w->slices[i]);
		if (w->j.len >= JB_FLUSH_AT)
			jb_flush(&w->j);
	}
	w->res->threads++;
}

/* a thread's spans carried from the last timeline, starting at this one's beginning */
static struct carry *start_thread(struct writer *w, uint32_t pid, uint32_t tid)
{
	struct carry *c = carry_find(w->tl, pid, tid);

	w->pid = pid;
	w->tid = tid;
	w->name[0] = '\0';
	w->nr_frames = 0;
	w->nr_slices = 0;
	w->nr_spans = 0;
	w->nr_defer = 0;
	if (c) {
		w->nr_spans = c->nr;
		for (unsigned int i = 0; i < c->nr; i++) {
			w->spans[i] = c->spans[i];
			w->spans[i].start = w->o->begin_ns;
		}
	}
	return c;
}

/* the next carried event of @c at word *@at, or NULL */
static const uint64_t *carried(const struct carry *c, size_t *at)
{
	const uint64_t *ev;

	if (!c || *at >= c->nr_words)
		return NULL;
	ev = c->words + *at;
	*at += trace_ev_words(ev[0]);
	return ev;
}

/* the carried events and the replayed ones, merged by time (carried first on a tie) */
static int replay_thread(void *ctx, uint32_t pid, uint32_t tid, const struct trace_event_ref *evs,
			 size_t n)
{
	struct writer *w = ctx;
	struct carry *c = start_thread(w, pid, tid);
	size_t i = 0, at = 0;
	const uint64_t *cev = carried(c, &at);

	while ((cev || i < n) && !w->j.err) {
		if (cev && (i == n || cev[1] <= evs[i].time_ns)) {
			take_event(w, cev);
			cev = carried(c, &at);
		} else {
			take_event(w, evs[i++].ev);
		}
	}
	finish_thread(w, c);
	return w->j.err;
}

static bool thread_alive(struct writer *w, uint32_t pid, uint32_t tid)
{
	const struct thread_info *ti;
	bool alive;

	if (!w->o->reg)
		return true;
	thread_registry__read_lock();
	ti = thread_registry__lookup(w->o->reg, tid);
	alive = ti && ti->pid == pid;
	thread_registry__read_unlock();
	return alive;
}

/* threads with spans open or events carried that had no event at all this time */
static void replay_quiet(struct writer *w)
{
	for (size_t i = 0; i < w->tl->nr_carry && !w->j.err; i++) {
		struct carry *c = &w->tl->carry[i];

		size_t at = 0;
		const uint64_t *ev;

		if (c->seen == w->tl->epoch || (!c->nr && !c->nr_words))
			continue;
		/* the spans of a thread gone end with it; its last events still count */
		if (!thread_alive(w, c->pid, c->tid))
			c->nr = 0;
		start_thread(w, c->pid, c->tid);
		while (!w->j.err && (ev = carried(c, &at)))
			take_event(w, ev);
		finish_thread(w, c);
	}
}

struct fill_ctx {
	struct writer *w;
	struct traces *ts;
	bool gz;
	bool ran;
};

/* the whole document, replayed into w->j */
static int replay_doc(struct writer *w, struct traces *ts)
{
	int err;

	jb_puts(&w->j, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"ctxprof\"},"
		       "\"traceEvents\":[");
	err = traces__replay(ts, replay_thread, w);
	if (!err)
		replay_quiet(w);
	jb_puts(&w->j, "\n]}\n");
	jb_flush(&w->j);
	return err ? err : w->j.err;
}

/* the document streamed straight into the file (output_write()'s @fill) */
static int fill(void *ctx, struct output_sink *s)
{
	struct fill_ctx *f = ctx;
	struct writer *w = f->w;
	int err, close_err;

	f->ran = true;
	w->j.out = output_stream__open(s, f->gz);
	if (!w->j.out)
		return -ENOMEM;
	err = replay_doc(w, f->ts);
	close_err = output_stream__close(w->j.out);
	w->j.out = NULL;
	return err ? err : close_err;
}

int timeline__write(struct timeline *tl, struct traces *ts, const char *path,
		    const struct timeline_opts *o, struct timeline_result *res)
{
	struct writer w = {.tl = tl, .o = o, .res = res, .first_event = true};
	size_t len = strlen(path);
	struct fill_ctx f = {.w = &w, .ts = ts, .gz = len > 3 && !strcmp(path + len - 3, ".gz")};
	int err;

	memset(res, 0, sizeof(*res));
	if (++tl->epoch == 0)
		tl->epoch = 1;
	err = output_write(path, fill, &f, o->keep);
	if (!f.ran) {
		/* no file (the path could not be opened): the interval is still
		 * consumed, so that the next timeline starts where this one ends */
		w.j.discard = true;
		replay_doc(&w, ts);
	}
	carry_compact(tl);
	res->bytes = w.j.written;
	free(w.j.s);
	free(w.slices);
	free(w.pids);
	free(w.defer);
	return err;
}

struct timeline *timeline__new(void)
{
	return calloc(1, sizeof(struct timeline));
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nr_carry; i++)
		free(tl->carry[i].words);
	free(tl->carry);
	htable__destroy(&tl->carry_idx);
	free(tl);
}
