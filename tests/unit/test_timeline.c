// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/timeline.c: real per-thread traces (three
 * writers, as the drains, the main thread and the tracker append), a real
 * call-trace storage whose stacks are this binary's functions, a real
 * exporter naming them through a process state, and the timeline written to
 * a temporary directory, one interval after another as the collector does
 * (cut, rotate, replay).  Every document is read back with a strict JSON
 * parser written apart from the writer (json_strict.h) and checked for what
 * any timeline must hold (check_doc(): well-formed events, a named track per
 * thread, slices that nest as viewers need, counters that match the text);
 * each test then checks what its events must give, derived from the events.
 * Hostile names are also read back by Python's json module.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "export/export.h"
#include "export/timeline.h"
#include "traces/trace.h"
#include "traces/trace_event.h"
#include "fixtures.h"
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

/* ---- the code the stacks point at */

static volatile int sink;

__attribute__((noinline, noipa)) int timeline_fixture_root(int x)
{
	for (int i = 0; i < x; i++)
		sink += i * 3;
	return sink;
}

__attribute__((noinline, noipa)) int timeline_fixture_left(int x)
{
	for (int i = 0; i < x; i++)
		sink ^= i * 5;
	return sink;
}

__attribute__((noinline, noipa)) int timeline_fixture_right(int x)
{
	for (int i = 0; i < x; i++)
		sink -= i * 7;
	return sink;
}

#define ROOT  "timeline_fixture_root"
#define LEFT  "timeline_fixture_left"
#define RIGHT "timeline_fixture_right"

/* the stacks the tests put, root first as the timeline nests them */
static const char *const LS[] = {ROOT, LEFT, NULL};
static const char *const RS[] = {ROOT, RIGHT, NULL};
static const char *const LRS[] = {ROOT, LEFT, RIGHT, NULL};
static const char *const RRS[] = {ROOT, RIGHT, RIGHT, NULL};

static uint64_t addr_of(int (*fn)(int))
{
	return (uint64_t)(uintptr_t)fn;
}

/* ---- the fixture */

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

/* a stack of PID: @leaf called from timeline_fixture_root, or from @mid called from it */
static uint64_t put_stack(struct fixture *f, int (*leaf)(int), int (*mid)(int))
{
	__u64 frames[3] = {addr_of(leaf) + 4, addr_of(mid ? mid : timeline_fixture_root) + 4,
			   addr_of(timeline_fixture_root) + 4};
	uint64_t id = calltrace_storage__put(f->storage, PID, EXEC, frames, 0, mid ? 3 : 2, 0);

	assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
	return id;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct process_state *st;

	assert_non_null(f);
	f->storage = calltrace_storage__new(4096);
	f->sym = symbolizer__new(0, 64 << 20);
	f->states = fixture_states_new(f->sym);
	assert_non_null(f->storage);
	assert_non_null(f->sym);
	assert_non_null(f->states);
	f->reg = fixture_registry_with_states(f->states);
	assert_int_equal(fixture_add_process(f->reg, PID, START, "app", NULL, EXEC), 0);
	st = process_states__get(f->states, f->reg, PID);
	assert_non_null(st);
	fixture_map_code(f->states, st, addr_of(timeline_fixture_root), 0, NULL);

	f->ts = traces__new(NULL);
	assert_non_null(f->ts);
	f->drain = traces__writer(f->ts);
	f->app = traces__writer(f->ts);
	f->tracker = traces__writer(f->ts);
	assert_non_null(f->drain);
	assert_non_null(f->app);
	assert_non_null(f->tracker);
	/* as the collector: events past a cut keep their stacks across a rotation */
	assert_int_equal(calltrace_storage__register_liveness(f->storage, traces__liveness, f->ts),
			 0);
	f->tl = timeline__new();
	assert_non_null(f->tl);
	f->dir = fixture_tmpdir("timeline");
	f->begin_ns = T0;
	f->stack_l = put_stack(f, timeline_fixture_left, NULL);
	f->stack_r = put_stack(f, timeline_fixture_right, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	timeline__free(f->tl);
	traces__free(f->ts);
	fixture_registry_free(f->reg);
	process_states__free(f->states);
	symbolizer__free(f->sym);
	calltrace_storage__free(f->storage);
	fixture_tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* ---- events, appended by the writer that appends them in the collector */

static void append(struct trace_writer *w, uint32_t pid, uint32_t tid, const uint64_t *ev,
		   unsigned int nw)
{
	struct trace *t = trace_writer__get(w, pid, tid, true);

	assert_non_null(t);
	assert_int_equal(trace__append(w, t, ev, nw), 0);
}

/* a sample of thread @tid of PID; @ctx: BPF read the thread's context, span @span */
static void sample(struct fixture *f, uint32_t tid, uint64_t t, uint64_t stack, bool ctx,
		   uint64_t span)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->drain, PID, tid, ev, trace_ev_sample(ev, t, 0, ctx, stack, span));
	f->nr_samples++;
}

static void span_begin(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, uint64_t id,
		       uint64_t root)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->app, pid, tid, ev, trace_ev_span_begin(ev, t, id, root));
}

static void span_end(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, uint64_t id)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->app, pid, tid, ev, trace_ev_span_end(ev, t, id));
}

static void thread_name(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, const char *name)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->tracker, pid, tid, ev, trace_ev_thread_name(ev, t, name));
}

/* a wait of thread @tid that ended at @end after @wait_ns, blocked in @stack (put_wait_stack()) */
static void wait_ev(struct fixture *f, uint32_t tid, uint64_t end, uint64_t wait_ns, uint64_t stack,
		    uint64_t span)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->drain, PID, tid, ev, trace_ev_wait(ev, end, 1, true, stack, span, wait_ns));
}

/* an off-CPU stack of PID, as the drains store a wait's: root -> right */
static uint64_t put_wait_stack(struct fixture *f)
{
	__u64 frames[2] = {addr_of(timeline_fixture_right) + 4, addr_of(timeline_fixture_root) + 4};
	uint64_t id = calltrace_storage__put(f->storage, PID, EXEC, frames, 0, 2, SAMPLE_F_OFFCPU);

	assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
	return id;
}

/* ---- the document read back */

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

static void doc_free(struct doc *d)
{
	json_free(d->root);
	free(d->ev);
	memset(d, 0, sizeof(*d));
}

/* the file's bytes; *@len set */
static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat sb;
	unsigned char *buf;
	FILE *fp = fopen(path, "rb");

	if (!fp)
		fail_msg("%s: %s", path, strerror(errno));
	assert_int_equal(fstat(fileno(fp), &sb), 0);
	buf = malloc((size_t)sb.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)sb.st_size, fp), (size_t)sb.st_size);
	fclose(fp);
	*len = (size_t)sb.st_size;
	return buf;
}

/* @gz (a gzip member, magic checked by the caller) inflated */
static unsigned char *gunzip(const unsigned char *gz, size_t gz_len, size_t *len)
{
	z_stream z = {0};
	size_t cap = 4 * gz_len + 4096;
	unsigned char *out = malloc(cap);
	int rc;

	assert_non_null(out);
	/* 16 + MAX_WBITS: a gzip header and trailer (CRC, length) required */
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)gz_len;
	do {
		if (z.total_out == cap) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		z.next_out = out + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		rc = inflate(&z, Z_NO_FLUSH);
	} while (rc == Z_OK);
	if (rc != Z_STREAM_END)
		fail_msg("gunzip: %d (%s)", rc, z.msg ? z.msg : "");
	/* one member, nothing after it */
	assert_int_equal(z.avail_in, 0);
	*len = z.total_out;
	inflateEnd(&z);
	return out;
}

/* a JSON number of microseconds ("12.345") in ns, exactly */
static uint64_t us_to_ns(const struct json *v, const char *what)
{
	uint64_t ns = 0;
	int frac = -1;

	if (!v || v->type != JSON_NUMBER)
		fail_msg("%s: not a number", what);
	for (const char *s = v->text; *s; s++) {
		if (*s == '.' && frac < 0) {
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9')
			fail_msg("%s: %s is no plain decimal of microseconds", what, v->text);
		if (frac >= 0 && ++frac > 3)
			fail_msg("%s: %s is finer than a nanosecond", what, v->text);
		ns = ns * 10 + (uint64_t)(*s - '0');
	}
	for (frac = frac < 0 ? 0 : frac; frac < 3; frac++)
		ns *= 10;
	return ns;
}

/* a JSON number that must be an id (pid, tid) */
static uint32_t json_u32(const struct json *v, const char *what)
{
	char *end;
	unsigned long n;

	if (!v || v->type != JSON_NUMBER)
		fail_msg("%s: not a number", what);
	errno = 0;
	n = strtoul(v->text, &end, 10);
	if (*end || errno || n > UINT32_MAX || v->text[0] == '-')
		fail_msg("%s: %s is no 32-bit unsigned integer", what, v->text);
	return (uint32_t)n;
}

static bool is_hex16(const char *s)
{
	if (!s || strlen(s) != 16)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static bool same_thread(const struct tev *a, const struct tev *b)
{
	return a->pid == b->pid && a->tid == b->tid;
}

/* slices of one thread: parents first */
static int by_start_then_longer(const void *x, const void *y)
{
	const struct tev *a = *(const struct tev *const *)x, *b = *(const struct tev *const *)y;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return a->idx < b->idx ? -1 : 1;
}

/*
 * The slices of thread (@pid, @tid) nest: each lies within the one open
 * around it ([ts, ts + dur)).  And no slice begins where another ends:
 * speedscope, at equal times, may take the begin before the end and put the
 * second inside the first (a span ended by a sample's frames, a span begun
 * where another ended: both seen in speedscope).
 */
static void check_nesting(const struct doc *d, uint32_t pid, uint32_t tid)
{
	const struct tev **s = calloc(d->nr + 1, sizeof(*s)),
			 **open = calloc(d->nr + 1, sizeof(*s));
	size_t n = 0, depth = 0;

	assert_non_null(s);
	assert_non_null(open);
	for (size_t i = 0; i < d->nr; i++)
		if (d->ev[i].ph == 'X' && d->ev[i].pid == pid && d->ev[i].tid == tid)
			s[n++] = &d->ev[i];
	qsort(s, n, sizeof(*s), by_start_then_longer);
	for (size_t i = 0; i < n; i++) {
		while (depth && open[depth - 1]->ts + open[depth - 1]->dur <= s[i]->ts)
			depth--;
		if (depth && s[i]->ts + s[i]->dur > open[depth - 1]->ts + open[depth - 1]->dur)
			fail_msg("%s: thread %u/%u: \"%s\" [%llu, %llu) does not nest in \"%s\" "
				 "[%llu, %llu)",
				 d->path, pid, tid, s[i]->name->text, (unsigned long long)s[i]->ts,
				 (unsigned long long)(s[i]->ts + s[i]->dur),
				 open[depth - 1]->name->text,
				 (unsigned long long)open[depth - 1]->ts,
				 (unsigned long long)(open[depth - 1]->ts + open[depth - 1]->dur));
		open[depth++] = s[i];
		for (size_t j = 0; j < n; j++)
			if (s[j]->ts + s[j]->dur == s[i]->ts)
				fail_msg("%s: thread %u/%u: \"%s\" begins at %llu, where another "
					 "ends",
					 d->path, pid, tid, s[i]->name->text,
					 (unsigned long long)s[i]->ts);
	}
	free(s);
	free(open);
}

/* the metadata event @what ("thread_name", "process_sort_index", ...) of a thread, or NULL */
static const struct tev *meta(const struct doc *d, const char *what, uint32_t pid, uint32_t tid)
{
	const struct tev *hit = NULL;

	for (size_t i = 0; i < d->nr; i++) {
		const struct tev *e = &d->ev[i];

		bool per_thread = strncmp(what, "process_", 8);

		if (e->ph != 'M' || strcmp(e->name->text, what) || e->pid != pid ||
		    (per_thread && e->tid != tid))
			continue;
		if (hit && per_thread)
			fail_msg("%s: thread %u/%u named twice", d->path, pid, tid);
		hit = e;
	}
	return hit;
}

/*
 * A metadata event: a thread's or process's name (args.name), or its sort
 * index (args.sort_index: 0 with spans, 1 without; see sort_indexes_agree())
 */
static void check_meta(const struct doc *d, const struct tev *t)
{
	const struct json *idx;

	if (!strcmp(t->name->text, "thread_name") || !strcmp(t->name->text, "process_name")) {
		if (!json_str(json_get(t->args, "name")))
			fail_msg("%s: %s without args.name", d->path, t->name->text);
		return;
	}
	if (strcmp(t->name->text, "thread_sort_index") &&
	    strcmp(t->name->text, "process_sort_index"))
		fail_msg("%s: metadata %s", d->path, t->name->text);
	idx = json_get(t->args, "sort_index");
	if (!idx || idx->type != JSON_NUMBER || (strcmp(idx->text, "0") && strcmp(idx->text, "1")))
		fail_msg("%s: %s without a sort_index of 0 or 1", d->path, t->name->text);
}

/*
 * What every timeline holds: a "traceEvents" array of well-formed events;
 * one thread_name (and a process_name for its process) for every thread;
 * slices that nest; span slices named after their 16-hex-digit ids; and
 * the counters of @res matching the document.
 */
static void check_doc(struct doc *d, const struct timeline_result *res)
{
	const struct json *events = json_get(d->root, "traceEvents");
	uint64_t spans = 0, slices = 0, threads = 0, waits = 0;

	if (!events || events->type != JSON_ARRAY)
		fail_msg("%s: no traceEvents array", d->path);
	d->nr = events->nr;
	d->ev = calloc(d->nr + 1, sizeof(*d->ev));
	assert_non_null(d->ev);
	for (size_t i = 0; i < d->nr; i++) {
		const struct json *e = &events->items[i];
		const char *ph = json_str(json_get(e, "ph"));
		struct tev *t = &d->ev[i];

		if (!ph || strlen(ph) != 1 || !strchr("XMi", ph[0]))
			fail_msg("%s: event %zu: ph %s", d->path, i, ph ? ph : "missing");
		t->ph = ph[0];
		t->idx = i;
		t->pid = json_u32(json_get(e, "pid"), "pid");
		t->tid = json_u32(json_get(e, "tid"), "tid");
		t->cat = json_str(json_get(e, "cat"));
		t->name = json_get(e, "name");
		t->args = json_get(e, "args");
		if (!json_str(t->name))
			fail_msg("%s: event %zu has no name", d->path, i);
		if (t->ph == 'M') {
			check_meta(d, t);
			threads += !strcmp(t->name->text, "thread_name");
			continue;
		}
		t->ts = us_to_ns(json_get(e, "ts"), "ts");
		if (t->ph == 'i')
			continue;
		t->dur = us_to_ns(json_get(e, "dur"), "dur");
		if (!t->cat || (strcmp(t->cat, "span") && strcmp(t->cat, "stack") &&
				strcmp(t->cat, "off_cpu") && strcmp(t->cat, "off_cpu_stack")))
			fail_msg("%s: slice %zu: cat %s", d->path, i, t->cat ? t->cat : "missing");
		if (!strcmp(t->cat, "stack") || !strcmp(t->cat, "off_cpu_stack")) {
			slices++;
			continue;
		}
		if (!strcmp(t->cat, "off_cpu")) {
			waits++;
			continue;
		}
		spans++;
		{
			const char *id = json_str(json_get(t->args, "span_id"));
			const char *root = json_str(json_get(t->args, "local_root_span_id"));
			char want[32];

			if (!is_hex16(id) || !is_hex16(root))
				fail_msg("%s: span slice %zu: ids %s %s", d->path, i, id ? id : "-",
					 root ? root : "-");
			snprintf(want, sizeof(want), "span %s", id);
			if (strcmp(t->name->text, want))
				fail_msg("%s: span slice %zu named %s", d->path, i, t->name->text);
		}
	}
	for (size_t i = 0; i < d->nr; i++) {
		const struct tev *e = &d->ev[i];
		bool first = true;

		for (size_t j = 0; j < i && first; j++)
			first = !same_thread(&d->ev[j], e) || d->ev[j].ph == 'M';
		if (e->ph == 'M' || !first)
			continue;
		if (!meta(d, "thread_name", e->pid, e->tid))
			fail_msg("%s: thread %u/%u has slices and no thread_name", d->path, e->pid,
				 e->tid);
		if (!meta(d, "process_name", e->pid, 0))
			fail_msg("%s: process %u has slices and no process_name", d->path, e->pid);
		check_nesting(d, e->pid, e->tid);
	}
	assert_int_equal(res->spans, spans);
	assert_int_equal(res->slices, slices);
	assert_int_equal(res->threads, threads);
	/* every wait replayed is drawn when it ends inside the interval */
	assert_true(waits <= res->waits);
}

/*
 * One interval as the collector writes it: the traces cut at @cut (their
 * events from there on wait, but a trace's events just past it come along:
 * the timeline keeps them), the storage rotated by the interval's exporter,
 * the timeline of [begin, @end_ns) written to @name and read back.
 */
static void write_interval(struct fixture *f, uint64_t end_ns, uint64_t cut, const char *name,
			   struct timeline_result *res, struct doc *d)
{
	struct export_opts eo = {.period_ns = PERIOD, .states = f->states, .reg = f->reg};
	struct timeline_opts o = {.period_ns = PERIOD, .begin_ns = f->begin_ns, .end_ns = end_ns};
	unsigned char *raw, *text;
	size_t raw_len, len;
	bool gz = strlen(name) > 3 && !strcmp(name + strlen(name) - 3, ".gz");
	char err[256];

	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "%s/%s", f->dir, name);
	traces__cut(f->ts, cut);
	o.names = exporter__begin(f->storage, f->sym, &eo);
	assert_non_null(o.names);
	o.reg = f->reg;
	assert_int_equal(timeline__write(f->tl, f->ts, d->path, &o, res), 0);
	exporter__free(o.names);
	f->begin_ns = end_ns;

	raw = slurp(d->path, &raw_len);
	if (gz) {
		if (raw_len < 2 || raw[0] != 0x1f || raw[1] != 0x8b)
			fail_msg("%s: not gzipped", d->path);
		text = gunzip(raw, raw_len, &len);
		free(raw);
	} else {
		if (raw_len >= 2 && raw[0] == 0x1f && raw[1] == 0x8b)
			fail_msg("%s: gzipped, but the name does not end in .gz", d->path);
		text = raw;
		len = raw_len;
	}
	/* bytes: the JSON text's, before any compression */
	assert_int_equal(res->bytes, len);
	d->root = json_parse(text, len, err, sizeof(err));
	if (!d->root) {
		fail_msg("%s: invalid JSON: %s", d->path, err);
	}
	free(text);
	check_doc(d, res);
}

/* ---- what a test looks for */

/* the span slices of span @id on thread (@pid, @tid): how many, the first in *@out */
static unsigned int find_span(const struct doc *d, uint32_t pid, uint32_t tid, uint64_t id,
			      const struct tev **out)
{
	char want[32];
	unsigned int n = 0;

	snprintf(want, sizeof(want), "%016llx", (unsigned long long)id);
	for (size_t i = 0; i < d->nr; i++) {
		const struct tev *e = &d->ev[i];

		if (e->ph != 'X' || strcmp(e->cat, "span") || e->pid != pid || e->tid != tid ||
		    strcmp(json_str(json_get(e->args, "span_id")), want))
			continue;
		if (!n++ && out)
			*out = e;
	}
	return n;
}

static bool flag(const struct tev *e, const char *name)
{
	const struct json *v = json_get(e->args, name);

	if (v && (v->type != JSON_BOOL || !v->boolean))
		fail_msg("span arg %s is not true when present", name);
	return v != NULL;
}

/*
 * Span @id is one slice on (@pid, @tid) from @begin to @end (ns), local
 * root @root, and exactly the flags named in @flags ("continued",
 * "unfinished", "begin_lost", "end_lost", comma-separated).
 */
static void assert_span(const struct doc *d, uint32_t pid, uint32_t tid, uint64_t id, uint64_t root,
			uint64_t begin, uint64_t end, const char *flags)
{
	static const char *const all[] = {"continued", "unfinished", "begin_lost", "end_lost"};
	const struct tev *e = NULL;
	unsigned int n = find_span(d, pid, tid, id, &e);
	char want[32];

	if (n != 1)
		fail_msg("%s: span %016llx: %u slices, want 1", d->path, (unsigned long long)id, n);
	if (e->ts != begin || e->ts + e->dur != end)
		fail_msg("%s: span %016llx: [%llu, %llu], want [%llu, %llu]", d->path,
			 (unsigned long long)id, (unsigned long long)e->ts,
			 (unsigned long long)(e->ts + e->dur), (unsigned long long)begin,
			 (unsigned long long)end);
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)root);
	assert_string_equal(json_str(json_get(e->args, "local_root_span_id")), want);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const char *hit = strstr(flags, all[i]);
		bool wanted = hit && (hit == flags || hit[-1] == ',');

		if (flag(e, all[i]) != wanted)
			fail_msg("%s: span %016llx: %s %s", d->path, (unsigned long long)id,
				 wanted ? "not" : "unexpectedly", all[i]);
	}
}

/* the slices of category @cat on (@pid, @tid) holding instant @t, outermost first */
static size_t slices_at(const struct doc *d, uint32_t pid, uint32_t tid, const char *cat,
			uint64_t t, const struct tev **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nr; i++) {
		const struct tev *e = &d->ev[i];

		if (e->ph == 'X' && !strcmp(e->cat, cat) && e->pid == pid && e->tid == tid &&
		    e->ts <= t && t < e->ts + e->dur) {
			assert_true(n < max);
			out[n++] = e;
		}
	}
	qsort(out, n, sizeof(*out), by_start_then_longer);
	return n;
}

/*
 * The sample at @t shows as its stack, one slice per frame from the root
 * (@frames, NULL-terminated), inside the innermost span slice holding @t,
 * which is span @span (0: none holds it).  The frame slices go to @out
 * (when not NULL, room for as many).
 */
static void assert_sample(const struct doc *d, uint32_t tid, uint64_t t, const char *const *frames,
			  uint64_t span, const struct tev **out)
{
	const struct tev *st[8], *sp[8];
	size_t n = slices_at(d, PID, tid, "stack", t, st, 8);
	size_t ns = slices_at(d, PID, tid, "span", t, sp, 8);
	size_t depth = 0;
	char want[32];

	while (frames[depth])
		depth++;
	for (size_t i = 0; i < depth || i < n; i++)
		if (i >= n || i >= depth || strcmp(st[i]->name->text, frames[i]))
			fail_msg("%s: sample at %llu: frame %zu is %s, want %s", d->path,
				 (unsigned long long)t, i, i < n ? st[i]->name->text : "none",
				 i < depth ? frames[i] : "none");
	if (!span) {
		if (ns)
			fail_msg("%s: sample at %llu, outside spans, is inside %s", d->path,
				 (unsigned long long)t, sp[ns - 1]->name->text);
	} else {
		snprintf(want, sizeof(want), "span %016llx", (unsigned long long)span);
		if (!ns || strcmp(sp[ns - 1]->name->text, want))
			fail_msg("%s: sample at %llu: innermost span %s, want %s", d->path,
				 (unsigned long long)t, ns ? sp[ns - 1]->name->text : "none", want);
		/* the stack lies within its span */
		assert_true(st[0]->ts >= sp[ns - 1]->ts);
		assert_true(st[0]->ts + st[0]->dur <= sp[ns - 1]->ts + sp[ns - 1]->dur);
	}
	for (size_t i = 0; out && i < n; i++)
		out[i] = st[i];
}

/* no slice of (@pid, @tid) reaches past @t */
static void assert_nothing_past(const struct doc *d, uint32_t pid, uint32_t tid, uint64_t t)
{
	for (size_t i = 0; i < d->nr; i++) {
		const struct tev *e = &d->ev[i];

		if (e->ph != 'M' && e->pid == pid && e->tid == tid && e->ts + e->dur > t)
			fail_msg("%s: %s [%llu, %llu] reaches past %llu", d->path, e->name->text,
				 (unsigned long long)e->ts, (unsigned long long)(e->ts + e->dur),
				 (unsigned long long)t);
	}
}

/* ---- (a) spans and samples */

#define TID_A 4300

static void timeline__write__spans_and_samples__span_slices_with_nested_stacks(void **state)
{
	struct fixture *f = *state;
	const uint64_t s1 = 0x0001000000000024, r1 = 0x00010000000000aa, s2 = 0x0002000000000001;
	const uint64_t lr = put_stack(f, timeline_fixture_right, timeline_fixture_left);
	const uint64_t rr = put_stack(f, timeline_fixture_right, timeline_fixture_right);
	const struct tev *at1[2], *at2[2], *at6[2], *at7[2], *at8[2], *at10[2], *at11[3], *at12[3];
	struct timeline_result res;
	struct doc d;

	thread_name(f, PID, TID_A, T0, "worker");
	sample(f, TID_A, T0 + 1 * MS, f->stack_l, true, 0);
	sample(f, TID_A, T0 + 2 * MS, f->stack_l, true, 0);
	span_begin(f, PID, TID_A, T0 + 5500 * US, s1, r1);
	sample(f, TID_A, T0 + 6 * MS, f->stack_l, true, s1);
	sample(f, TID_A, T0 + 7 * MS, f->stack_l, true, s1);
	/* a child span around one sample */
	span_begin(f, PID, TID_A, T0 + 7500 * US, s2, r1);
	sample(f, TID_A, T0 + 8 * MS, f->stack_r, true, s2);
	span_end(f, PID, TID_A, T0 + 8700 * US, s2);
	span_end(f, PID, TID_A, T0 + 9500 * US, s1);
	sample(f, TID_A, T0 + 10 * MS, f->stack_r, true, 0);
	/* deeper stacks under the same root, a frame named alike one level
	 * down, then one level up */
	sample(f, TID_A, T0 + 11 * MS, lr, true, 0);
	sample(f, TID_A, T0 + 12 * MS, rr, true, 0);

	write_interval(f, T0 + 20 * MS, T0 + 20 * MS, "a.json", &res, &d);
	assert_string_equal(json_str(json_get(meta(&d, "thread_name", PID, TID_A)->args, "name")),
			    "worker");
	assert_string_equal(json_str(json_get(meta(&d, "process_name", PID, 0)->args, "name")),
			    "app");
	assert_span(&d, PID, TID_A, s1, r1, T0 + 5500 * US, T0 + 9500 * US, "");
	assert_span(&d, PID, TID_A, s2, r1, T0 + 7500 * US, T0 + 8700 * US, "");
	assert_sample(&d, TID_A, T0 + 1 * MS, LS, 0, at1);
	assert_sample(&d, TID_A, T0 + 2 * MS, LS, 0, at2);
	assert_sample(&d, TID_A, T0 + 6 * MS, LS, s1, at6);
	assert_sample(&d, TID_A, T0 + 7 * MS, LS, s1, at7);
	assert_sample(&d, TID_A, T0 + 8 * MS, RS, s2, at8);
	assert_sample(&d, TID_A, T0 + 10 * MS, RS, 0, at10);
	assert_sample(&d, TID_A, T0 + 11 * MS, LRS, 0, at11);
	assert_sample(&d, TID_A, T0 + 12 * MS, RRS, 0, at12);
	/* consecutive samples of the same frames: one slice per frame, from the
	 * first sample on, lasting at most up to the last one's period */
	for (int k = 0; k < 2; k++) {
		assert_ptr_equal(at1[k], at2[k]);
		assert_ptr_equal(at6[k], at7[k]);
		assert_int_equal(at1[k]->ts, T0 + 1 * MS);
		assert_int_equal(at6[k]->ts, T0 + 6 * MS);
		assert_int_equal(at8[k]->ts, T0 + 8 * MS);
		assert_int_equal(at10[k]->ts, T0 + 10 * MS);
		assert_true(at2[k]->ts + at2[k]->dur <= T0 + 2 * MS + PERIOD);
	}
	/* the root of the last three samples is one slice; below it, each
	 * sample's frames differ from the one before at depth 1 */
	assert_ptr_equal(at10[0], at11[0]);
	assert_ptr_equal(at11[0], at12[0]);
	assert_true(at12[0]->ts + at12[0]->dur <= T0 + 12 * MS + PERIOD);
	for (int k = 1; k < 3; k++) {
		assert_int_equal(at11[k]->ts, T0 + 11 * MS);
		assert_int_equal(at12[k]->ts, T0 + 12 * MS);
		assert_true(at11[k]->ts + at11[k]->dur <= T0 + 12 * MS);
	}
	assert_true(at10[1]->ts + at10[1]->dur <= T0 + 11 * MS);
	/* a span's begin or end cuts the stacks: the one at 7 ms is not the one at 8 ms */
	assert_ptr_not_equal(at7[0], at8[0]);
	assert_ptr_not_equal(at2[0], at6[0]);
	/* 3 runs of samples, 2 frames each; then the root from 10 to 12 ms and
	 * 1 + 2 + 2 frames under it */
	assert_int_equal(res.slices, 3 * 2 + 1 + 5);
	assert_int_equal(res.spans, 2);
	assert_int_equal(res.samples, f->nr_samples);
	assert_int_equal(res.no_stack, 0);
	assert_int_equal(res.threads, 1);
	assert_int_equal(res.spans_unmatched + res.spans_begin_lost + res.spans_end_lost, 0);
	doc_free(&d);
}

/* ---- (b) hostile names */

/*
 * Python's json module on the same file: the thread's name, encoded back
 * to UTF-8 (a lone surrogate fails), must be what Python's own UTF-8
 * decoder makes of the input bytes, each byte that starts no valid
 * sequence replaced by U+FFFD.  Exit 0 when equal.
 */
static const char python_check[] =
	"import json, sys\n"
	"path, pid, tid, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), "
	"bytes.fromhex(sys.argv[4])\n"
	"def pairs(kv):\n"
	"    keys = [k for k, _ in kv]\n"
	"    assert len(keys) == len(set(keys)), 'duplicate key'\n"
	"    return dict(kv)\n"
	"def no_constant(c):\n"
	"    raise ValueError('not JSON: ' + c)\n"
	"with open(path, encoding='utf-8', errors='strict') as f:\n"
	"    doc = json.load(f, object_pairs_hook=pairs, parse_constant=no_constant)\n"
	"names = [e['args']['name'] for e in doc['traceEvents'] if e['ph'] == 'M'\n"
	"         and e['name'] == 'thread_name' and e['pid'] == pid and e['tid'] == tid]\n"
	"assert len(names) == 1, names\n"
	"exp, i = '', 0\n"
	"while i < len(want):\n"
	"    for n in (1, 2, 3, 4):\n"
	"        try:\n"
	"            exp += want[i:i + n].decode('utf-8')\n"
	"            i += n\n"
	"            break\n"
	"        except UnicodeDecodeError:\n"
	"            pass\n"
	"    else:\n"
	"        exp += '\\ufffd'\n"
	"        i += 1\n"
	"got = names[0].encode('utf-8').decode('utf-8')\n"
	"if got != exp:\n"
	"    print('python: thread %d: %r, want %r' % (tid, got, exp))\n"
	"    sys.exit(1)\n";

static void python_agrees(const struct doc *d, uint32_t pid, uint32_t tid, const char *name)
{
	char script[PATH_MAX + 16], cmd[3 * PATH_MAX], hex[2 * TRACE_EV_NAME_LEN + 1] = "";
	size_t n = strnlen(name, TRACE_EV_NAME_LEN);
	FILE *fp;
	int rc;

	snprintf(script, sizeof(script), "%s.check.py", d->path);
	fp = fopen(script, "w");
	assert_non_null(fp);
	fputs(python_check, fp);
	assert_int_equal(fclose(fp), 0);
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)name[i]);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' %u %u '%s'", script, d->path, pid, tid, hex);
	rc = system(cmd);
	if (!WIFEXITED(rc) || WEXITSTATUS(rc))
		fail_msg("%s: Python reads thread %u's name otherwise (exit %d)", d->path, tid,
			 WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
}

/* the metadata name of @what for (@pid, @tid) decodes to @input, ill-formed bytes as U+FFFD */
static void assert_name(const struct doc *d, const char *what, uint32_t pid, uint32_t tid,
			const char *input)
{
	const struct tev *m = meta(d, what, pid, tid);
	const struct json *name;
	char want[3 * TRACE_EV_NAME_LEN + 1];
	size_t len;

	if (!m)
		fail_msg("%s: no %s for %u/%u", d->path, what, pid, tid);
	name = json_get(m->args, "name");
	len = json_utf8_replaced((const unsigned char *)input, strnlen(input, TRACE_EV_NAME_LEN),
				 want);
	if (name->len != len || memcmp(name->text, want, len))
		fail_msg("%s: %s of %u/%u: %zu bytes, want %zu", d->path, what, pid, tid, name->len,
			 len);
}

#define TID_B 4301
#define TID_C 4302
#define PID_H 4400 /* a process named by the registry only */

/* quotes, backslash, control bytes, a byte that is never UTF-8, an accented
 * letter, the euro sign, an encoded surrogate, an overlong lead: 15 bytes */
static const char hostile15[] = "\"\\\n\x01\x1f\xff\xc3\xa9\xe2\x82\xac\xed\xa0\x80\xc0";
/* 16 bytes, no terminator in the event, a sequence cut by the end */
static const char hostile16[TRACE_EV_NAME_LEN] = "q\x7f\x08\t\\u00e9\xf0\x9f\x98\x80\xe2\x82";
/* a comm as the registry has it */
static const char hostile_comm[] = "\xf4\x90\x80\x80\"\x1b[0m\xf0\x9f\x8e\x89 \xc2";

static void timeline__write__hostile_thread_names__escaped_and_replaced(void **state)
{
	struct fixture *f = *state;
	struct timeline_result res;
	struct doc d;

	assert_int_equal(strlen(hostile15), 15);
	assert_int_equal(strnlen(hostile_comm, 16), 15);
	assert_int_equal(fixture_add_process(f->reg, PID_H, START, hostile_comm, NULL, 1), 0);
	thread_name(f, PID, TID_B, T0, hostile15);
	span_begin(f, PID, TID_B, T0 + 1 * MS, 1, 1);
	span_end(f, PID, TID_B, T0 + 2 * MS, 1);
	thread_name(f, PID, TID_C, T0, hostile16);
	sample(f, TID_C, T0 + 3 * MS, f->stack_l, false, 0);
	/* no name event: the registry's names, thread and process */
	span_begin(f, PID_H, PID_H, T0 + 1 * MS, 2, 2);
	span_end(f, PID_H, PID_H, T0 + 4 * MS, 2);

	write_interval(f, T0 + INTERVAL, T0 + INTERVAL, "b.json", &res, &d);
	assert_int_equal(res.threads, 3);
	assert_name(&d, "thread_name", PID, TID_B, hostile15);
	assert_name(&d, "thread_name", PID, TID_C, hostile16);
	assert_name(&d, "thread_name", PID_H, PID_H, hostile_comm);
	assert_name(&d, "process_name", PID_H, PID_H, hostile_comm);

	if (system("python3 -c 'import json' >/dev/null 2>&1")) {
		print_message("SKIP: no python3 with json (make deps installs it)\n");
		skip();
	}
	python_agrees(&d, PID, TID_B, hostile15);
	python_agrees(&d, PID, TID_C, hostile16);
	python_agrees(&d, PID_H, PID_H, hostile_comm);
	doc_free(&d);
}

/* a frame without a name shows its mapping's file name: hostile bytes too */
#define PID_M 4500

static void timeline__write__hostile_mapping_name__escaped_and_replaced(void **state)
{
	static const char file[] = "lib\"x\\\x02\xfe\xce\xbb\xe0\x80\x80.so";
	struct fixture *f = *state;
	/* the same file far away: nothing there to open, no symbol found */
	const int64_t shift = 1ll << 40;
	__u64 frames[1] = {addr_of(timeline_fixture_left) + shift};
	char path[64], want[3 * sizeof(path) + 3], *w = want;
	struct timeline_result res;
	struct process_state *st;
	const struct tev *sl[4];
	uint64_t id, ev[TRACE_EV_MAX_WORDS];
	struct doc d;

	assert_int_equal(fixture_add_process(f->reg, PID_M, START, "m", NULL, EXEC), 0);
	st = process_states__get(f->states, f->reg, PID_M);
	assert_non_null(st);
	snprintf(path, sizeof(path), "/nonexistent/%s", file);
	fixture_map_code(f->states, st, addr_of(timeline_fixture_root), shift, path);
	id = calltrace_storage__put(f->storage, PID_M, EXEC, frames, 0, 1, 0);
	append(f->drain, PID_M, PID_M, ev, trace_ev_sample(ev, T0 + 1 * MS, 0, false, id, 0));

	write_interval(f, T0 + INTERVAL, T0 + INTERVAL, "m.json", &res, &d);
	assert_int_equal(slices_at(&d, PID_M, PID_M, "stack", T0 + 1 * MS, sl, 4), 1);
	/* "[file]" as pprof shows an unnamed frame */
	*w++ = '[';
	w += json_utf8_replaced((const unsigned char *)file, strlen(file), w);
	*w++ = ']';
	*w = '\0';
	if (sl[0]->name->len != (size_t)(w - want) ||
	    memcmp(sl[0]->name->text, want, sl[0]->name->len))
		fail_msg("%s: the frame is named %s, want %s", d.path, sl[0]->name->text, want);
	doc_free(&d);
}

/* ---- (c) gzip */

static void timeline__write__path_ends_in_gz__gzipped_json(void **state)
{
	struct fixture *f = *state;
	struct timeline_result res;
	struct doc d;

	thread_name(f, PID, TID_A, T0, "gz");
	span_begin(f, PID, TID_A, T0 + 1 * MS, 7, 8);
	sample(f, TID_A, T0 + 2 * MS, f->stack_r, true, 7);
	span_end(f, PID, TID_A, T0 + 4 * MS, 7);
	/* write_interval gunzips what it reads when the name ends in .gz,
	 * after checking the magic; res.bytes is the JSON's length */
	write_interval(f, T0 + INTERVAL, T0 + INTERVAL, "c.json.gz", &res, &d);
	assert_span(&d, PID, TID_A, 7, 8, T0 + 1 * MS, T0 + 4 * MS, "");
	assert_sample(&d, TID_A, T0 + 2 * MS, RS, 7, NULL);
	assert_string_equal(json_str(json_get(meta(&d, "thread_name", PID, TID_A)->args, "name")),
			    "gz");
	doc_free(&d);
}

/* ---- (d) span events and samples that disagree */

#define TID_UNMATCHED 4310
#define TID_END_LOST  4311
#define TID_BEG_LOST  4312
#define TID_SWITCH    4313
#define TID_NO_CTX    4314

static void timeline__write__lost_span_events__reconciled_with_samples(void **state)
{
	struct fixture *f = *state;
	struct timeline_result res;
	struct doc d;

	/* an end whose begin never came */
	span_end(f, PID, TID_UNMATCHED, T0 + 1 * MS, 0x51);
	sample(f, TID_UNMATCHED, T0 + 2 * MS, f->stack_l, true, 0);
	/* a span whose end never came: the first sample outside it ends it */
	span_begin(f, PID, TID_END_LOST, T0 + 1 * MS, 0x52, 0x50);
	sample(f, TID_END_LOST, T0 + 2 * MS, f->stack_l, true, 0x52);
	sample(f, TID_END_LOST, T0 + 4 * MS, f->stack_r, true, 0);
	/* a span whose begin never came: it begins at its first sample */
	sample(f, TID_BEG_LOST, T0 + 2 * MS, f->stack_l, true, 0x53);
	sample(f, TID_BEG_LOST, T0 + 3 * MS, f->stack_l, true, 0x53);
	span_end(f, PID, TID_BEG_LOST, T0 + 5 * MS, 0x53);
	/* samples in another span than the open one: both */
	span_begin(f, PID, TID_SWITCH, T0 + 1 * MS, 0x54, 0x50);
	sample(f, TID_SWITCH, T0 + 3 * MS, f->stack_r, true, 0x55);
	span_end(f, PID, TID_SWITCH, T0 + 6 * MS, 0x55);
	/* a sample whose context BPF could not read says nothing */
	span_begin(f, PID, TID_NO_CTX, T0 + 1 * MS, 0x56, 0x50);
	sample(f, TID_NO_CTX, T0 + 2 * MS, f->stack_l, false, 0);
	span_end(f, PID, TID_NO_CTX, T0 + 3 * MS, 0x56);

	write_interval(f, T0 + INTERVAL, T0 + INTERVAL, "d.json", &res, &d);
	assert_int_equal(res.spans_unmatched, 1);
	assert_int_equal(find_span(&d, PID, TID_UNMATCHED, 0x51, NULL), 0);
	assert_sample(&d, TID_UNMATCHED, T0 + 2 * MS, LS, 0, NULL);

	assert_span(&d, PID, TID_END_LOST, 0x52, 0x50, T0 + 1 * MS, T0 + 4 * MS - 1, "end_lost");
	assert_sample(&d, TID_END_LOST, T0 + 2 * MS, LS, 0x52, NULL);
	assert_sample(&d, TID_END_LOST, T0 + 4 * MS, RS, 0, NULL);

	/* its local root was never told: zero */
	assert_span(&d, PID, TID_BEG_LOST, 0x53, 0, T0 + 2 * MS, T0 + 5 * MS, "begin_lost");
	assert_sample(&d, TID_BEG_LOST, T0 + 2 * MS, LS, 0x53, NULL);

	assert_span(&d, PID, TID_SWITCH, 0x54, 0x50, T0 + 1 * MS, T0 + 3 * MS - 1, "end_lost");
	assert_span(&d, PID, TID_SWITCH, 0x55, 0, T0 + 3 * MS, T0 + 6 * MS, "begin_lost");
	assert_sample(&d, TID_SWITCH, T0 + 3 * MS, RS, 0x55, NULL);

	assert_span(&d, PID, TID_NO_CTX, 0x56, 0x50, T0 + 1 * MS, T0 + 3 * MS, "");
	assert_sample(&d, TID_NO_CTX, T0 + 2 * MS, LS, 0x56, NULL);

	assert_int_equal(res.spans_end_lost, 2);
	assert_int_equal(res.spans_begin_lost, 2);
	assert_int_equal(res.spans, 5);
	doc_free(&d);
}

/* ---- (e) spans open across intervals */

#define PID_E 4600 /* alive (in the registry) with no event for a whole interval */

static void timeline__write__span_open_at_end__unfinished_then_continued(void **state)
{
	struct fixture *f = *state;
	const uint64_t end1 = T0 + INTERVAL, end2 = end1 + INTERVAL, end3 = end2 + INTERVAL;
	struct timeline_result res;
	struct doc d;

	assert_int_equal(fixture_add_process(f->reg, PID_E, START, "e", NULL, 1), 0);
	span_begin(f, PID_E, PID_E, T0 + 2 * MS, 0xe1, 0xe0);
	/* a span begun and ended inside the first interval, for contrast */
	span_begin(f, PID, TID_A, T0 + 1 * MS, 0xe2, 0xe0);
	span_end(f, PID, TID_A, T0 + 3 * MS, 0xe2);

	write_interval(f, end1, end1, "e1.json", &res, &d);
	assert_span(&d, PID_E, PID_E, 0xe1, 0xe0, T0 + 2 * MS, end1, "unfinished");
	assert_span(&d, PID, TID_A, 0xe2, 0xe0, T0 + 1 * MS, T0 + 3 * MS, "");
	doc_free(&d);

	/* nothing from the thread: still open, the whole interval */
	write_interval(f, end2, end2, "e2.json", &res, &d);
	assert_span(&d, PID_E, PID_E, 0xe1, 0xe0, end1, end2, "continued,unfinished");
	assert_int_equal(find_span(&d, PID, TID_A, 0xe2, NULL), 0);
	assert_int_equal(res.spans, 1);
	doc_free(&d);

	span_end(f, PID_E, PID_E, end2 + 5 * MS, 0xe1);
	write_interval(f, end3, end3, "e3.json", &res, &d);
	assert_span(&d, PID_E, PID_E, 0xe1, 0xe0, end2, end2 + 5 * MS, "continued");
	assert_int_equal(res.spans_unmatched, 0);
	doc_free(&d);

	/* ended: not carried any further */
	write_interval(f, end3 + INTERVAL, end3 + INTERVAL, "e4.json", &res, &d);
	assert_int_equal(res.spans, 0);
	doc_free(&d);
}

/* a span begin as a part switch seeds it (traces/trace_event.h, TRACE_EV_SEED) */
static void seed_begin(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, uint64_t id,
		       uint64_t root)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];
	unsigned int n = trace_ev_span_begin(ev, t, id, root);

	ev[0] = trace_ev_hdr(TRACE_EV_SPAN_BEGIN, n, TRACE_EV_SEED);
	append(f->app, pid, tid, ev, n);
}

/*
 * Seeds after a gap: the begin of a span the timeline has open is not a
 * second span; the begin of one whose own begin was recycled opens it.
 */
static void timeline__write__seeded_begins__known_ignored_unknown_opened(void **state)
{
	struct fixture *f = *state;
	const uint64_t end1 = T0 + INTERVAL, end2 = end1 + INTERVAL;
	struct timeline_result res;
	struct doc d;

	assert_int_equal(fixture_add_process(f->reg, PID_E, START, "e", NULL, 1), 0);
	span_begin(f, PID_E, PID_E, T0 + 2 * MS, 0xe1, 0xe0);
	write_interval(f, end1, end1, "s1.json", &res, &d);
	assert_span(&d, PID_E, PID_E, 0xe1, 0xe0, T0 + 2 * MS, end1, "unfinished");
	doc_free(&d);

	seed_begin(f, PID_E, PID_E, T0 + 2 * MS, 0xe1, 0xe0);
	seed_begin(f, PID_E, PID_E, end1 + 2 * MS, 0xe3, 0xe0);
	span_end(f, PID_E, PID_E, end1 + 4 * MS, 0xe3);
	span_end(f, PID_E, PID_E, end1 + 6 * MS, 0xe1);
	write_interval(f, end2, end2, "s2.json", &res, &d);
	assert_int_equal(find_span(&d, PID_E, PID_E, 0xe1, NULL), 1);
	assert_span(&d, PID_E, PID_E, 0xe1, 0xe0, end1, end1 + 6 * MS, "continued");
	assert_span(&d, PID_E, PID_E, 0xe3, 0xe0, end1 + 2 * MS, end1 + 4 * MS, "");
	assert_int_equal(res.spans_unmatched, 0);
	doc_free(&d);
}

/* ---- (f) events handed over past the interval's end */

#define TID_F 4320
#define TID_Q 4321 /* no event at all in the second interval */

static void timeline__write__events_past_end__carried_to_next_write(void **state)
{
	struct fixture *f = *state;
	const uint64_t end1 = T0 + INTERVAL, end2 = end1 + INTERVAL;
	unsigned int samples;
	struct timeline_result res;
	uint64_t late_r;
	struct doc d;

	/* each trace in the order its writer appended, not quite in time order
	 * (a drain reads several CPUs' rings in turn): the cut at end1 falls
	 * after the last event before it, so the events past end1 appended
	 * earlier come along */
	sample(f, TID_F, T0 + 8 * MS, f->stack_l, true, 0);
	sample(f, TID_F, end1 + 500 * US, f->stack_r, true, 0xf2);
	sample(f, TID_F, T0 + 9 * MS, f->stack_l, true, 0);
	span_begin(f, PID, TID_F, T0 + 6 * MS, 0xf1, 0xf0);
	span_begin(f, PID, TID_F, end1, 0xf2, 0xf0); /* at the end: the next interval's */
	span_end(f, PID, TID_F, T0 + 7 * MS, 0xf1);
	sample(f, TID_Q, end1 + 200 * US, f->stack_r, true, 0);
	sample(f, TID_Q, T0 + 9500 * US, f->stack_l, true, 0);

	write_interval(f, end1, end1, "f1.json", &res, &d);
	samples = (unsigned int)res.samples;
	assert_span(&d, PID, TID_F, 0xf1, 0xf0, T0 + 6 * MS, T0 + 7 * MS, "");
	assert_int_equal(find_span(&d, PID, TID_F, 0xf2, NULL), 0);
	assert_sample(&d, TID_F, T0 + 8 * MS, LS, 0, NULL);
	assert_sample(&d, TID_F, T0 + 9 * MS, LS, 0, NULL);
	assert_sample(&d, TID_Q, T0 + 9500 * US, LS, 0, NULL);
	assert_nothing_past(&d, PID, TID_F, end1);
	assert_nothing_past(&d, PID, TID_Q, end1);
	doc_free(&d);

	/* the next interval: its stacks are put after the rotation */
	late_r = put_stack(f, timeline_fixture_right, NULL);
	sample(f, TID_F, end1 + 1500 * US, late_r, true, 0xf2);
	span_end(f, PID, TID_F, end1 + 2 * MS, 0xf2);
	write_interval(f, end2, end2, "f2.json", &res, &d);
	samples += (unsigned int)res.samples;
	/* begun at the interval's beginning, not before it: not "continued" */
	assert_span(&d, PID, TID_F, 0xf2, 0xf0, end1, end1 + 2 * MS, "");
	/* the carried samples' stacks outlived the rotation */
	assert_int_equal(res.no_stack, 0);
	assert_sample(&d, TID_F, end1 + 500 * US, RS, 0xf2, NULL);
	assert_sample(&d, TID_F, end1 + 1500 * US, RS, 0xf2, NULL);
	assert_sample(&d, TID_Q, end1 + 200 * US, RS, 0, NULL);
	/* each sample written once */
	assert_int_equal(samples, f->nr_samples);
	doc_free(&d);
}

/* ---- (g) tracks */

static void timeline__write__many_threads__each_named_and_nested(void **state)
{
	struct fixture *f = *state;
	struct timeline_result res;
	struct doc d;
	char name[16];

	/* named by events, by the registry, or by nothing */
	for (uint32_t tid = 5000; tid < 5040; tid++) {
		if (tid % 3 == 0) {
			snprintf(name, sizeof(name), "w%u", tid);
			thread_name(f, PID, tid, T0, name);
		}
		span_begin(f, PID, tid, T0 + (tid % 7) * US, tid, 1);
		for (uint64_t k = 0; k < 6; k++)
			sample(f, tid, T0 + (k + 1) * MS + tid % 5, k % 3 ? f->stack_l : f->stack_r,
			       k != 4, k < 3 ? tid : 0);
		if (tid % 2)
			span_end(f, PID, tid, T0 + 8 * MS, tid);
	}
	write_interval(f, T0 + INTERVAL, T0 + INTERVAL, "g.json", &res, &d);
	assert_int_equal(res.threads, 40);
	assert_int_equal(res.samples, f->nr_samples);
	for (uint32_t tid = 5000; tid < 5040; tid++) {
		const struct json *n = json_get(meta(&d, "thread_name", PID, tid)->args, "name");

		assert_true(n->len > 0);
		if (tid % 3 == 0) {
			snprintf(name, sizeof(name), "w%u", tid);
			assert_string_equal(n->text, name);
		}
	}
	doc_free(&d);
}

/* a path that cannot be opened loses that interval's timeline, not the next
 * one's beginning: the interval is consumed all the same */
static void timeline__write__unopenable_path__interval_still_consumed(void **state)
{
	struct fixture *f = *state;
	const uint64_t end1 = T0 + INTERVAL, end2 = end1 + INTERVAL;
	struct timeline_opts o = {.period_ns = PERIOD, .begin_ns = T0, .end_ns = end1};
	struct export_opts eo = {.period_ns = PERIOD, .states = f->states, .reg = f->reg};
	struct timeline_result res;
	char path[PATH_MAX];
	struct doc d;

	span_begin(f, PID, TID_F, T0 + 1 * MS, 0xe1, 0xe0);
	span_end(f, PID, TID_F, T0 + 2 * MS, 0xe1);
	sample(f, TID_F, T0 + 1500 * US, f->stack_l, true, 0xe1);
	snprintf(path, sizeof(path), "%s/no/such/dir/t.json", f->dir);
	traces__cut(f->ts, end1);
	o.names = exporter__begin(f->storage, f->sym, &eo);
	assert_non_null(o.names);
	o.reg = f->reg;
	assert_true(timeline__write(f->tl, f->ts, path, &o, &res) < 0);
	exporter__free(o.names);
	/* the replay ran: the span was read, its sample too */
	assert_int_equal(res.spans, 1);
	assert_int_equal(res.samples, 1);
	f->begin_ns = end1;

	span_begin(f, PID, TID_F, end1 + 1 * MS, 0xe2, 0xe0);
	span_end(f, PID, TID_F, end1 + 2 * MS, 0xe2);
	write_interval(f, end2, end2, "e2.json", &res, &d);
	assert_span(&d, PID, TID_F, 0xe2, 0xe0, end1 + 1 * MS, end1 + 2 * MS, "");
	assert_int_equal(find_span(&d, PID, TID_F, 0xe1, NULL), 0);
	assert_int_equal(res.samples, 0);
	doc_free(&d);
}

/* ---- (h) off-CPU waits (--off-cpu) */

#define TID_W 4700

static void timeline__write__waits__slices_in_their_spans_with_their_stacks(void **state)
{
	struct fixture *f = *state;
	const uint64_t sp = 0x00a1000000000001, ws = put_wait_stack(f);
	const struct tev *at[4], *st[4], *spn[2];
	struct timeline_result res;
	struct doc d;
	size_t n;

	/* one that began before the interval, outside spans: cut at its beginning */
	wait_ev(f, TID_W, T0 + 500 * US, 2 * MS, ws, 0);
	span_begin(f, PID, TID_W, T0 + 1 * MS, sp, sp);
	sample(f, TID_W, T0 + 2 * MS, f->stack_l, true, sp);
	/* off the CPU from 3 to 7 ms, in the span */
	wait_ev(f, TID_W, T0 + 7 * MS, 4 * MS, ws, sp);
	sample(f, TID_W, T0 + 7500 * US, f->stack_l, true, sp);
	span_end(f, PID, TID_W, T0 + 9 * MS, sp);
	/* between requests */
	wait_ev(f, TID_W, T0 + 9900 * US, 600 * US, ws, 0);
	write_interval(f, T0 + INTERVAL, T0 + INTERVAL, "h.json", &res, &d);
	assert_int_equal(res.waits, 3);
	assert_int_equal(res.no_stack, 0);

	/* the span's wait: its extent, class and state, inside the span */
	n = slices_at(&d, PID, TID_W, "off_cpu", T0 + 5 * MS, at, 4);
	assert_int_equal(n, 1);
	assert_string_equal(at[0]->name->text, "waiting: other");
	assert_int_equal(at[0]->ts, T0 + 3 * MS);
	assert_int_equal(at[0]->dur, 4 * MS);
	assert_string_equal(json_str(json_get(at[0]->args, "class")), "other");
	assert_string_equal(json_str(json_get(at[0]->args, "state")), "S");
	assert_int_equal(slices_at(&d, PID, TID_W, "span", T0 + 5 * MS, spn, 2), 1);
	assert_true(spn[0]->ts <= at[0]->ts && at[0]->ts + at[0]->dur <= spn[0]->ts + spn[0]->dur);
	/* its stack nested in it, root first; no CPU stack meanwhile */
	n = slices_at(&d, PID, TID_W, "off_cpu_stack", T0 + 5 * MS, st, 4);
	assert_int_equal(n, 2);
	assert_string_equal(st[0]->name->text, ROOT);
	assert_string_equal(st[1]->name->text, RIGHT);
	for (size_t i = 0; i < n; i++)
		assert_true(st[i]->ts == at[0]->ts &&
			    st[i]->ts + st[i]->dur <= at[0]->ts + at[0]->dur);
	assert_int_equal(slices_at(&d, PID, TID_W, "stack", T0 + 5 * MS, st, 4), 0);
	/* the sample before it is cut where the thread left the CPU */
	assert_sample(&d, TID_W, T0 + 2 * MS, LS, sp, st);
	assert_true(st[0]->ts + st[0]->dur < T0 + 3 * MS);
	assert_sample(&d, TID_W, T0 + 7500 * US, LS, sp, NULL);

	/* the waits outside spans stay outside */
	assert_int_equal(slices_at(&d, PID, TID_W, "off_cpu", T0 + 9500 * US, at, 4), 1);
	assert_int_equal(slices_at(&d, PID, TID_W, "span", T0 + 9500 * US, spn, 2), 0);
	assert_int_equal(slices_at(&d, PID, TID_W, "off_cpu", T0 + 100 * US, at, 4), 1);
	assert_int_equal(at[0]->ts, T0);
	assert_int_equal(at[0]->dur, 500 * US);
	assert_int_equal(slices_at(&d, PID, TID_W, "span", T0 + 100 * US, spn, 2), 0);
	doc_free(&d);
}

/* ---- (i) which track a viewer opens on */

#define TID_IDLE 4800 /* samples, no span: the lowest thread id */
#define TID_REQ	 4801 /* spans */
#define TID_REQ2 4802 /* fewer spans */

/* a main thread working outside spans, a request thread, and one with fewer requests */
static void busy_and_request_threads(struct fixture *f)
{
	const uint64_t ws = put_wait_stack(f);

	thread_name(f, PID, TID_IDLE, T0, "main");
	thread_name(f, PID, TID_REQ, T0, "worker-1");
	thread_name(f, PID, TID_REQ2, T0, "worker-2");
	for (uint64_t k = 0; k < 9; k++)
		sample(f, TID_IDLE, T0 + (k + 1) * MS, f->stack_r, true, 0);
	for (uint64_t r = 0; r < 3; r++) {
		uint64_t t = T0 + r * 3 * MS, id = 0x00b1000000000000 | r;

		span_begin(f, PID, TID_REQ, t + 100 * US, id, id);
		sample(f, TID_REQ, t + 500 * US, f->stack_l, true, id);
		wait_ev(f, TID_REQ, t + 2 * MS, 1 * MS, ws, id);
		sample(f, TID_REQ, t + 2200 * US, f->stack_r, true, id);
		span_end(f, PID, TID_REQ, t + 2900 * US, id);
	}
	span_begin(f, PID, TID_REQ2, T0 + 1 * MS, 0xc1, 0xc1);
	sample(f, TID_REQ2, T0 + 1500 * US, f->stack_l, true, 0xc1);
	span_end(f, PID, TID_REQ2, T0 + 2 * MS, 0xc1);
}

static int sort_index(const struct doc *d, const char *what, uint32_t tid)
{
	const struct tev *m = meta(d, what, PID, tid);

	if (!m)
		fail_msg("%s: no %s for %u", d->path, what, tid);
	return atoi(json_get(m->args, "sort_index")->text);
}

static void timeline__write__chrome__threads_with_spans_sorted_first(void **state)
{
	struct fixture *f = *state;
	struct timeline_result res;
	struct doc d;

	busy_and_request_threads(f);
	write_interval(f, T0 + INTERVAL, T0 + INTERVAL, "i.json", &res, &d);
	assert_int_equal(sort_index(&d, "thread_sort_index", TID_IDLE), 1);
	assert_int_equal(sort_index(&d, "thread_sort_index", TID_REQ), 0);
	assert_int_equal(sort_index(&d, "thread_sort_index", TID_REQ2), 0);
	assert_int_equal(sort_index(&d, "process_sort_index", 0), 0);
	doc_free(&d);
}

/* speedscope's format, read back: the profiles, their open/close events nest */
static void check_speedscope(const char *path, const struct json *root, const char **active_name)
{
	const struct json *profiles = json_get(root, "profiles"), *frames, *active;
	const struct json *shared = json_get(root, "shared");
	size_t stack[64];

	assert_string_equal(json_str(json_get(root, "$schema")),
			    "https://www.speedscope.app/file-format-schema.json");
	frames = json_get(shared, "frames");
	if (!profiles || profiles->type != JSON_ARRAY || !frames || frames->type != JSON_ARRAY)
		fail_msg("%s: no profiles or shared frames", path);
	for (size_t i = 0; i < frames->nr; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(json_str(json_get(&frames->items[j], "name")),
				    json_str(json_get(&frames->items[i], "name"))))
				fail_msg("%s: frame %zu repeats frame %zu", path, i, j);
	for (size_t p = 0; p < profiles->nr; p++) {
		const struct json *pr = &profiles->items[p], *evs = json_get(pr, "events");
		unsigned long long last = 0, at,
				   end = strtoull(json_get(pr, "endValue")->text, NULL, 10);
		size_t depth = 0, fr;

		assert_string_equal(json_str(json_get(pr, "type")), "evented");
		assert_string_equal(json_str(json_get(pr, "unit")), "nanoseconds");
		assert_string_equal(json_get(pr, "startValue")->text, "0");
		assert_true(evs && evs->type == JSON_ARRAY && evs->nr > 0);
		for (size_t i = 0; i < evs->nr; i++) {
			const char *type = json_str(json_get(&evs->items[i], "type"));

			at = strtoull(json_get(&evs->items[i], "at")->text, NULL, 10);
			fr = strtoull(json_get(&evs->items[i], "frame")->text, NULL, 10);
			if (at < last || at > end || fr >= frames->nr)
				fail_msg("%s: profile %zu event %zu: at %llu after %llu, end %llu, "
					 "frame %zu of %zu",
					 path, p, i, at, last, end, fr, frames->nr);
			last = at;
			if (!strcmp(type, "O")) {
				assert_true(depth < 64);
				stack[depth++] = fr;
			} else if (!depth || stack[--depth] != fr) {
				fail_msg("%s: profile %zu event %zu closes frame %zu, not the open "
					 "one",
					 path, p, i, fr);
			}
		}
		assert_int_equal(depth, 0);
	}
	active = json_get(root, "activeProfileIndex");
	assert_non_null(active);
	assert_true(strtoull(active->text, NULL, 10) < profiles->nr);
	*active_name =
		json_str(json_get(&profiles->items[strtoull(active->text, NULL, 10)], "name"));
}

static void timeline__write__speedscope__opens_on_the_thread_with_most_span_time(void **state)
{
	struct fixture *f = *state;
	struct export_opts eo = {.period_ns = PERIOD, .states = f->states, .reg = f->reg};
	struct timeline_opts o = {.format = TIMELINE_SPEEDSCOPE,
				  .period_ns = PERIOD,
				  .begin_ns = T0,
				  .end_ns = T0 + INTERVAL};
	struct timeline_result res;
	const char *active = NULL;
	unsigned char *text;
	char path[PATH_MAX], err[256], want[64];
	struct json *root;
	size_t len;

	busy_and_request_threads(f);
	snprintf(path, sizeof(path), "%s/i.speedscope.json", f->dir);
	traces__cut(f->ts, T0 + INTERVAL);
	o.names = exporter__begin(f->storage, f->sym, &eo);
	assert_non_null(o.names);
	o.reg = f->reg;
	assert_int_equal(timeline__write(f->tl, f->ts, path, &o, &res), 0);
	exporter__free(o.names);
	text = slurp(path, &len);
	assert_int_equal(res.bytes, len);
	root = json_parse(text, len, err, sizeof(err));
	if (!root)
		fail_msg("%s: invalid JSON: %s", path, err);
	free(text);
	check_speedscope(path, root, &active);
	assert_int_equal(json_get(root, "profiles")->nr, 3);
	snprintf(want, sizeof(want), "worker-1 (tid %u)", TID_REQ);
	if (!active || !strstr(active, want))
		fail_msg("%s: opens on \"%s\", not on %s", path, active ? active : "-", want);
	/* the span, the wait and the functions are frames */
	{
		static const char *const names[] = {"span 00b1000000000000", "waiting: other", ROOT,
						    LEFT, RIGHT};
		const struct json *frames = json_get(json_get(root, "shared"), "frames");

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			bool found = false;

			for (size_t j = 0; j < frames->nr && !found; j++)
				found = !strcmp(json_str(json_get(&frames->items[j], "name")),
						names[i]);
			if (!found)
				fail_msg("%s: no frame named %s", path, names[i]);
		}
	}
	json_free(root);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(timeline__write__spans_and_samples__span_slices_with_nested_stacks),
		T(timeline__write__hostile_thread_names__escaped_and_replaced),
		T(timeline__write__hostile_mapping_name__escaped_and_replaced),
		T(timeline__write__path_ends_in_gz__gzipped_json),
		T(timeline__write__lost_span_events__reconciled_with_samples),
		T(timeline__write__span_open_at_end__unfinished_then_continued),
		T(timeline__write__seeded_begins__known_ignored_unknown_opened),
		T(timeline__write__events_past_end__carried_to_next_write),
		T(timeline__write__unopenable_path__interval_still_consumed),
		T(timeline__write__many_threads__each_named_and_nested),
		T(timeline__write__waits__slices_in_their_spans_with_their_stacks),
		T(timeline__write__chrome__threads_with_spans_sorted_first),
		T(timeline__write__speedscope__opens_on_the_thread_with_most_span_time),
	};
#undef T

	return cmocka_run_group_tests_name("timeline", tests, NULL, NULL);
}
