/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * timeline_check: the fixture, event writers and document checks the
 * timeline unit tests share.  Each check fails the calling cmocka test;
 * setup()/teardown() are the cmocka fixture of every case (struct fixture).
 */
#ifndef CTXPROF_TESTS_TIMELINE_CHECK_H
#define CTXPROF_TESTS_TIMELINE_CHECK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export/export.h"
#include "export/timeline.h"
#include "traces/trace.h"
#include "traces/trace_event.h"
#include "json_strict.h"

#define PID   4242 /* the process whose mappings are this binary's */
#define START 100
#define EXEC  7
#define MS    1000000ull
#define US    1000ull
/* 1000 Hz: one sample lasts a millisecond */
#define PERIOD MS
/* the first interval begins here (CLOCK_MONOTONIC ns); each lasts INTERVAL */
#define T0	 (1000 * MS)
#define INTERVAL (10 * MS)
/* threads of the spans tests (a) and (f) that the output tests reuse */
#define TID_A 4300
#define TID_F 4320

/* the code the stacks point at (loops timeline_check.c keeps out of line) */
int timeline_fixture_root(int x);
int timeline_fixture_left(int x);
int timeline_fixture_right(int x);

#define ROOT  "timeline_fixture_root"
#define LEFT  "timeline_fixture_left"
#define RIGHT "timeline_fixture_right"

/* the stacks the tests put, root first as the timeline nests them */
static const char *const LS[] = {ROOT, LEFT, NULL};
static const char *const RS[] = {ROOT, RIGHT, NULL};
static const char *const LRS[] = {ROOT, LEFT, RIGHT, NULL};
static const char *const RRS[] = {ROOT, RIGHT, RIGHT, NULL};

struct fixture {
	struct calltrace_storage *storage;
	struct symbolizer *sym;
	struct process_states *states;
	struct thread_registry *reg;
	struct traces *ts;
	struct trace_writer *drain;   /* samples */
	struct trace_writer *app;     /* span events */
	struct trace_writer *tracker; /* names */
	struct timeline *tl;
	char *dir;
	uint64_t begin_ns; /* where the next timeline's interval begins */
	unsigned int nr_samples;
	uint64_t stack_l, stack_r; /* root -> left, root -> right */
};

/* one event of the document */
struct tev {
	char ph;
	const char *cat; /* NULL when it has none */
	const struct json *name;
	uint32_t pid, tid;
	uint64_t ts, dur; /* ns */
	const struct json *args;
	size_t idx; /* in traceEvents */
};

struct doc {
	struct json *root;
	struct tev *ev;
	size_t nr;
	char path[PATH_MAX];
};

uint64_t addr_of(int (*fn)(int));
/* a stack of PID: @leaf called from timeline_fixture_root, or from @mid called from it */
uint64_t put_stack(struct fixture *f, int (*leaf)(int), int (*mid)(int));
int setup(void **state);
int teardown(void **state);
/* ---- events, appended by the writer that appends them in the collector */
void append(struct trace_writer *w, uint32_t pid, uint32_t tid, const uint64_t *ev,
	    unsigned int nw);
/* a sample of thread @tid of PID; @ctx: BPF read the thread's context, span @span */
void sample(struct fixture *f, uint32_t tid, uint64_t t, uint64_t stack, bool ctx, uint64_t span);
void span_begin(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, uint64_t id,
		uint64_t root);
void span_end(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, uint64_t id);
void thread_name(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, const char *name);
/* a wait of thread @tid that ended at @end after @wait_ns, blocked in @stack (put_wait_stack()) */
void wait_ev(struct fixture *f, uint32_t tid, uint64_t end, uint64_t wait_ns, uint64_t stack,
	     uint64_t span);
/* an off-CPU stack of PID, as the drains store a wait's: root -> right */
uint64_t put_wait_stack(struct fixture *f);
/* ---- the document read back */
void doc_free(struct doc *d);
/* the file's bytes; *@len set */
unsigned char *slurp(const char *path, size_t *len);
/* the metadata event @what ("thread_name", "process_sort_index", ...) of a thread, or NULL */
const struct tev *meta(const struct doc *d, const char *what, uint32_t pid, uint32_t tid);
/*
 * One interval as the collector writes it: the traces cut at @cut (their
 * events from there on wait, but a trace's events just past it come along:
 * the timeline keeps them), the storage rotated by the interval's exporter,
 * the timeline of [begin, @end_ns) written to @name and read back.
 */
void write_interval(struct fixture *f, uint64_t end_ns, uint64_t cut, const char *name,
		    struct timeline_result *res, struct doc *d);
/* the span slices of span @id on thread (@pid, @tid): how many, the first in *@out */
unsigned int find_span(const struct doc *d, uint32_t pid, uint32_t tid, uint64_t id,
		       const struct tev **out);
/*
 * Span @id is one slice on (@pid, @tid) from @begin to @end (ns), local
 * root @root, and exactly the flags named in @flags ("continued",
 * "unfinished", "begin_lost", "end_lost", comma-separated).
 */
void assert_span(const struct doc *d, uint32_t pid, uint32_t tid, uint64_t id, uint64_t root,
		 uint64_t begin, uint64_t end, const char *flags);
/* the slices of category @cat on (@pid, @tid) holding instant @t, outermost first */
size_t slices_at(const struct doc *d, uint32_t pid, uint32_t tid, const char *cat, uint64_t t,
		 const struct tev **out, size_t max);
/*
 * The sample at @t shows as its stack, one slice per frame from the root
 * (@frames, NULL-terminated), inside the innermost span slice holding @t,
 * which is span @span (0: none holds it).  The frame slices go to @out
 * (when not NULL, room for as many).
 */
void assert_sample(const struct doc *d, uint32_t tid, uint64_t t, const char *const *frames,
		   uint64_t span, const struct tev **out);
/* no slice of (@pid, @tid) reaches past @t */
void assert_nothing_past(const struct doc *d, uint32_t pid, uint32_t tid, uint64_t t);

#endif /* CTXPROF_TESTS_TIMELINE_CHECK_H */
