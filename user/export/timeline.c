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

/* the order of slices that start and end together: parents first */
enum slice_kind {
	SLICE_SPAN,
	SLICE_WAIT, /* off the CPU (--off-cpu): its stack's frames nest in it */
	SLICE_FRAME,
	SLICE_EXIT, /* an instant: the thread exited */
};

#define SLICE_F_CONTINUED  (1u << 0) /* span begun before this timeline */
#define SLICE_F_UNFINISHED (1u << 1) /* span still open at its end */
#define SLICE_F_BEGIN_LOST (1u << 2) /* span known from samples: its begin event lost */
#define SLICE_F_END_LOST   (1u << 3) /* span ended where the samples left it */
#define SLICE_F_WAITING	   (1u << 4) /* frame: of a wait's stack */

struct slice {
	uint64_t start, end;
	uint64_t a, b; /* span: id, local root; frame: location id; wait: stack id, state */
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

struct named_process {
	uint32_t pid;
	bool has_spans;
};

/* speedscope's shared frames: each name once, in first-use order */
struct frame_names {
	char *text; /* the names, NUL-terminated, back to back */
	size_t len, cap;
	size_t *off; /* frame index -> its name's offset in @text */
	size_t nr, off_cap;
	struct htable idx;
};

/* a speedscope frame open while a thread's events are written */
struct open_ss {
	uint32_t frame;
	uint64_t end;
};

/* slices open at once: spans, a wait, and its frames */
#define SS_DEPTH (MAX_SPANS + MAX_DEPTH + 2)

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
	/* processes named so far, and whether one of their threads had spans */
	struct named_process *pids;
	size_t nr_pids, pids_cap;
	bool has_spans; /* the thread being replayed */
	/* speedscope's format (TIMELINE_SPEEDSCOPE) */
	struct frame_names ss_frames;
	struct open_ss ss_stack[SS_DEPTH];
	unsigned int nr_profiles;
	unsigned int active;	 /* the profile it opens on */
	uint64_t active_span_ns; /* that profile's time in spans */
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
	w->has_spans = true;
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

/*
 * An off-CPU wait: a slice from when the thread left the CPU to when it
 * came back, inside the span it was in (its context as it left), with the
 * stack it blocked in nested under it as one frame slice per level.
 */
static void on_wait(struct writer *w, const uint64_t *ev)
{
	uint64_t end = ev[1], start = ev[1] > ev[4] ? ev[1] - ev[4] : 0;
	const uint64_t *locs;
	unsigned int depth;
	size_t nr;

	w->res->waits++;
	if (end <= w->o->begin_ns)
		return;
	if (start < w->o->begin_ns)
		start = w->o->begin_ns;
	if (end <= start)
		end = start + 1;
	if (trace_ev_arg(ev[0]) & TRACE_EV_SAMPLE_CONTEXT)
		reconcile_spans(w, start, ev[3]);
	close_frames(w, 0, start);
	add_slice(w, &(struct slice){.start = start,
				     .end = end,
				     .a = ev[2],
				     .b = trace_ev_arg(ev[0]) & 0xff,
				     .kind = SLICE_WAIT});
	if (exporter__trace_frames(w->o->names, ev[2], &locs, &nr)) {
		w->res->no_stack++;
		return;
	}
	depth = nr < MAX_DEPTH ? (unsigned int)nr : MAX_DEPTH;
	for (unsigned int d = 0; d < depth; d++)
		add_slice(w, &(struct slice){.start = start,
					     .end = end,
					     .a = locs[nr - 1 - d],
					     .depth = d + 1,
					     .kind = SLICE_FRAME,
					     .flags = SLICE_F_WAITING});
	w->res->slices += depth;
}

static void on_span_begin(struct writer *w, const uint64_t *ev)
{
	if (trace_ev_is_seed(ev[0])) {
		/* the state after a gap: only a span we did not see begin is news */
		for (unsigned int i = 0; i < w->nr_spans; i++)
			if (w->spans[i].id == ev[2])
				return;
		/* begun before the events already written: no frame to close */
		if (w->nr_spans < MAX_SPANS)
			w->spans[w->nr_spans++] =
				(struct open_span){.id = ev[2], .root = ev[3], .start = ev[1]};
		return;
	}
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
	case TRACE_EV_WAIT:
		on_wait(w, ev);
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

/* a wait's class, as the profile's off_cpu_class label says */
static const char *wait_class(const struct writer *w, const struct slice *s)
{
	const char *class = exporter__trace_wait_class(w->o->names, s->a);

	return class ? class : "unknown";
}

/*
 * What a slice is called: a frame as pprof shows it (an unnamed one by its
 * file), "waiting: CLASS", "span ID".  Returns @buf or the profile's own
 * string (valid while the exporter lives).
 */
static const char *slice_name(const struct writer *w, const struct slice *s, char *buf, size_t len)
{
	struct pprof_frame f = {0};
	const char *base;

	switch (s->kind) {
	case SLICE_SPAN:
		snprintf(buf, len, "span %016llx", (unsigned long long)s->a);
		return buf;
	case SLICE_WAIT:
		snprintf(buf, len, "waiting: %s", wait_class(w, s));
		return buf;
	default:
		break;
	}
	if (!s->a || pprof__location_frame(exporter__pprof(w->o->names), s->a, &f))
		return "[stack unavailable]";
	if (f.name)
		return f.name;
	if (!f.mapping_file || !f.mapping_file[0])
		return "[unknown]";
	base = strrchr(f.mapping_file, '/');
	snprintf(buf, len, "[%s]", base ? base + 1 : f.mapping_file);
	return buf;
}

/*
 * "waiting: lock" and the like, as pprof's off_cpu_class label says; the
 * args say only what many waits share (speedscope names a slice by its
 * name and args: alike waits make one frame in its aggregate views).
 */
static void write_wait(struct writer *w, const struct slice *s)
{
	const char *class = wait_class(w, s);

	event_head(w, "X", "off_cpu");
	jb_printf(&w->j, ",\"name\":\"waiting: %s\"", class);
	jb_ts(&w->j, "ts", s->start);
	jb_ts(&w->j, "dur", s->end - s->start);
	/* ps's letters: S interruptible sleep, D uninterruptible */
	jb_printf(&w->j, ",\"args\":{\"class\":\"%s\",\"state\":\"%s\"}}", class,
		  s->b & 2 ? "D" : "S");
}

static void write_slice(struct writer *w, const struct slice *s)
{
	char name[256];
	uint64_t end;

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
	case SLICE_WAIT:
		write_wait(w, s);
		break;
	case SLICE_FRAME:
		/*
		 * A frame ends its depth in ns before its own end: speedscope
		 * takes a slice's end as ts + dur in floating point, so a frame
		 * and its caller meant to end together could end in the wrong
		 * order (its "Tried to end" error); these ends are exact.
		 */
		end = s->end > s->start + s->depth + 1 ? s->end - s->depth : s->start + 1;
		event_head(w, "X", s->flags & SLICE_F_WAITING ? "off_cpu_stack" : "stack");
		jb_puts(&w->j, ",\"name\":");
		jb_str(&w->j, slice_name(w, s, name, sizeof(name)), SIZE_MAX);
		jb_ts(&w->j, "ts", s->start);
		jb_ts(&w->j, "dur", end - s->start);
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

/* @comm (THREAD_REGISTRY_COMM_LEN + 1 bytes, zeroed): the process's name, when the registry has it
 */
static void process_comm(const struct writer *w, char *comm)
{
	const struct process_info *p;
	const struct process_image *img;

	if (!w->o->reg)
		return;
	thread_registry__read_lock();
	p = thread_registry__lookup_process(w->o->reg, w->pid);
	img = p ? process_info__image(p) : NULL;
	if (img)
		memcpy(comm, img->comm, THREAD_REGISTRY_COMM_LEN);
	thread_registry__read_unlock();
}

/* w->name: the thread's name from its trace, else from the registry */
static void thread_comm(struct writer *w)
{
	const struct thread_info *ti;

	if (w->name[0] || !w->o->reg)
		return;
	thread_registry__read_lock();
	ti = thread_registry__lookup(w->o->reg, w->tid);
	if (ti && ti->pid == w->pid)
		memcpy(w->name, ti->comm, TRACE_EV_NAME_LEN);
	thread_registry__read_unlock();
}

static void name_process(struct writer *w)
{
	char comm[THREAD_REGISTRY_COMM_LEN + 1] = "";

	for (size_t i = 0; i < w->nr_pids; i++)
		if (w->pids[i].pid == w->pid) {
			w->pids[i].has_spans |= w->has_spans;
			return;
		}
	if (array_grow((void **)&w->pids, &w->pids_cap, w->nr_pids + 1, sizeof(*w->pids), 64)) {
		w->j.err = -ENOMEM;
		return;
	}
	w->pids[w->nr_pids++] = (struct named_process){w->pid, w->has_spans};
	process_comm(w, comm);
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
	thread_comm(w);
	event_head(w, "M", "__metadata");
	jb_puts(&w->j, ",\"name\":\"thread_name\",\"args\":{\"name\":");
	if (w->name[0])
		jb_str(&w->j, w->name, TRACE_EV_NAME_LEN);
	else
		jb_printf(&w->j, "\"tid %u\"", w->tid);
	jb_puts(&w->j, "}}");
	event_head(w, "M", "__metadata");
	jb_printf(&w->j, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%d}}",
		  w->has_spans ? 0 : 1);
}

/* processes with spans first (viewers that read the sort index: chrome://tracing) */
static void sort_processes(struct writer *w)
{
	for (size_t i = 0; i < w->nr_pids && !w->j.err; i++) {
		w->pid = w->pids[i].pid;
		w->tid = w->pids[i].pid;
		event_head(w, "M", "__metadata");
		jb_printf(&w->j, ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}",
			  w->pids[i].has_spans ? 0 : 1);
	}
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

/* ---- speedscope's own format */

static bool frame_name_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct frame_names *f = ctx;

	return !strcmp(f->text + f->off[idx], key);
}

/* the index of the shared frame named @name, added when new; UINT32_MAX: no memory */
static uint32_t frame_index(struct frame_names *f, const char *name)
{
	size_t n = strlen(name);
	uint32_t h = (uint32_t)hash_bytes(name, n), idx;

	idx = htable__find(&f->idx, h, frame_name_eq, f, name);
	if (idx != HTABLE_NONE)
		return idx;
	if (f->nr >= HTABLE_MAX_ENTRIES ||
	    array_grow((void **)&f->text, &f->cap, f->len + n + 1, 1, 1 << 16) ||
	    array_grow((void **)&f->off, &f->off_cap, f->nr + 1, sizeof(*f->off), 1024) ||
	    htable__insert(&f->idx, h, (uint32_t)f->nr))
		return UINT32_MAX;
	memcpy(f->text + f->len, name, n + 1);
	f->off[f->nr] = f->len;
	f->len += n + 1;
	return (uint32_t)f->nr++;
}

static void ss_event(struct writer *w, char type, uint32_t frame, uint64_t at, bool *first)
{
	jb_printf(&w->j, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":%llu}", *first ? "" : ",", type,
		  frame, (unsigned long long)at);
	*first = false;
	if (w->j.len >= JB_FLUSH_AT)
		jb_flush(&w->j);
}

/* one thread's name as speedscope names a Chrome trace's: "PROCESS (pid P), THREAD (tid T)" */
static void ss_profile_name(struct writer *w)
{
	char comm[THREAD_REGISTRY_COMM_LEN + 1] = "", name[THREAD_REGISTRY_COMM_LEN +
							   TRACE_EV_NAME_LEN + 64];
	char pid[16], tid[16];

	/* unnamed: "pid P", "tid T", as the Chrome document's metadata says */
	process_comm(w, comm);
	thread_comm(w);
	snprintf(pid, sizeof(pid), "pid %u", w->pid);
	snprintf(tid, sizeof(tid), "tid %u", w->tid);
	snprintf(name, sizeof(name), "%s (pid %u), %.*s (tid %u)", comm[0] ? comm : pid, w->pid,
		 TRACE_EV_NAME_LEN, w->name[0] ? w->name : tid, w->tid);
	jb_str(&w->j, name, sizeof(name));
}

/*
 * The thread as an "evented" profile: its slices (sorted parents first, and
 * nested) as open and close events, times in ns from the interval's
 * beginning.  The thread with the most time in spans is the one the file
 * opens on (activeProfileIndex).
 */
static void ss_thread(struct writer *w)
{
	uint64_t base = w->o->begin_ns, end = w->o->end_ns - base, span_ns = 0, st, en;
	unsigned int depth = 0;
	bool first = true;
	char buf[256];
	uint32_t frame;

	if (!w->nr_slices)
		return;
	jb_puts(&w->j, w->nr_profiles ? ",\n{" : "\n{");
	jb_puts(&w->j, "\"type\":\"evented\",\"unit\":\"nanoseconds\",\"name\":");
	ss_profile_name(w);
	for (size_t i = 0; i < w->nr_slices; i++)
		if (w->slices[i].end > base && w->slices[i].end - base > end)
			end = w->slices[i].end - base;
	jb_printf(&w->j, ",\"startValue\":0,\"endValue\":%llu,\"events\":[",
		  (unsigned long long)end);
	for (size_t i = 0; i < w->nr_slices && !w->j.err; i++) {
		const struct slice *s = &w->slices[i];

		if (s->kind == SLICE_EXIT)
			continue;
		st = s->start > base ? s->start - base : 0;
		en = s->end > base ? s->end - base : 0;
		while (depth && w->ss_stack[depth - 1].end <= st) {
			depth--;
			ss_event(w, 'C', w->ss_stack[depth].frame, w->ss_stack[depth].end, &first);
		}
		/* within its parent (so it is, as made; this keeps the file valid) */
		if (depth && en > w->ss_stack[depth - 1].end)
			en = w->ss_stack[depth - 1].end;
		if (en <= st || depth == SS_DEPTH)
			continue;
		frame = frame_index(&w->ss_frames, slice_name(w, s, buf, sizeof(buf)));
		if (frame == UINT32_MAX) {
			w->j.err = -ENOMEM;
			break;
		}
		if (s->kind == SLICE_SPAN && !depth)
			span_ns += en - st;
		ss_event(w, 'O', frame, st, &first);
		w->ss_stack[depth++] = (struct open_ss){frame, en};
	}
	while (depth) {
		depth--;
		ss_event(w, 'C', w->ss_stack[depth].frame, w->ss_stack[depth].end, &first);
	}
	jb_puts(&w->j, "]}");
	if (span_ns > w->active_span_ns) {
		w->active_span_ns = span_ns;
		w->active = w->nr_profiles;
	}
	w->nr_profiles++;
}

/* the shared frames and the profile to open on, after the profiles */
static void ss_finish(struct writer *w)
{
	const struct frame_names *f = &w->ss_frames;

	jb_puts(&w->j, "\n],\"shared\":{\"frames\":[");
	for (size_t i = 0; i < f->nr && !w->j.err; i++) {
		jb_puts(&w->j, i ? ",{\"name\":" : "\n{\"name\":");
		jb_str(&w->j, f->text + f->off[i], SIZE_MAX);
		jb_puts(&w->j, "}");
		if (w->j.len >= JB_FLUSH_AT)
			jb_flush(&w->j);
	}
	jb_printf(&w->j, "]},\"activeProfileIndex\":%u}\n", w->active);
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
	w->res->threads++;
	if (w->o->format == TIMELINE_SPEEDSCOPE) {
		ss_thread(w);
		return;
	}
	name_process(w);
	name_thread(w);
	for (size_t i = 0; i < w->nr_slices && !w->j.err; i++) {
		write_slice(w, &w->slices[i]);
		if (w->j.len >= JB_FLUSH_AT)
			jb_flush(&w->j);
	}
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
	w->has_spans = false;
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

	if (w->o->format == TIMELINE_SPEEDSCOPE)
		jb_puts(&w->j,
			"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
			"\"exporter\":\"ctxprof\",\"name\":\"ctxprof timeline\",\"profiles\":[");
	else
		jb_puts(&w->j,
			"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"ctxprof\"},"
			"\"traceEvents\":[");
	err = traces__replay(ts, replay_thread, w);
	if (!err)
		replay_quiet(w);
	if (w->o->format == TIMELINE_SPEEDSCOPE) {
		ss_finish(w);
	} else {
		if (!err)
			sort_processes(w);
		jb_puts(&w->j, "\n]}\n");
	}
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
	free(w.ss_frames.text);
	free(w.ss_frames.off);
	htable__destroy(&w.ss_frames.idx);
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
