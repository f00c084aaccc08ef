// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the timeline unit tests (test_timeline_spans, test_timeline_output)
 * share: the code their stacks point at, the fixture (real traces, call-trace
 * storage, exporter and timeline in a temporary directory), the events the
 * collector's writers append, and the document read back with json_strict.h
 * and checked for what any timeline must hold (check_doc(): well-formed
 * events, a named track per thread, slices that nest as viewers need,
 * counters that match the text).  Contract in timeline_check.h.
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
#include "timeline_check.h"

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

uint64_t addr_of(int (*fn)(int))
{
	return (uint64_t)(uintptr_t)fn;
}

/* ---- the fixture */

/* a stack of PID: @leaf called from timeline_fixture_root, or from @mid called from it */
uint64_t put_stack(struct fixture *f, int (*leaf)(int), int (*mid)(int))
{
	__u64 frames[3] = {addr_of(leaf) + 4, addr_of(mid ? mid : timeline_fixture_root) + 4,
			   addr_of(timeline_fixture_root) + 4};
	uint64_t id = calltrace_storage__put(f->storage, PID, EXEC, frames, 0, mid ? 3 : 2, 0);

	assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
	return id;
}

int setup(void **state)
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

int teardown(void **state)
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

void append(struct trace_writer *w, uint32_t pid, uint32_t tid, const uint64_t *ev, unsigned int nw)
{
	struct trace *t = trace_writer__get(w, pid, tid, true);

	assert_non_null(t);
	assert_int_equal(trace__append(w, t, ev, nw), 0);
}

/* a sample of thread @tid of PID; @ctx: BPF read the thread's context, span @span */
void sample(struct fixture *f, uint32_t tid, uint64_t t, uint64_t stack, bool ctx, uint64_t span)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->drain, PID, tid, ev, trace_ev_sample(ev, t, 0, ctx, stack, span));
	f->nr_samples++;
}

void span_begin(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, uint64_t id,
		uint64_t root)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->app, pid, tid, ev, trace_ev_span_begin(ev, t, id, root));
}

void span_end(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, uint64_t id)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->app, pid, tid, ev, trace_ev_span_end(ev, t, id));
}

void thread_name(struct fixture *f, uint32_t pid, uint32_t tid, uint64_t t, const char *name)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->tracker, pid, tid, ev, trace_ev_thread_name(ev, t, name));
}

/* a wait of thread @tid that ended at @end after @wait_ns, blocked in @stack (put_wait_stack()) */
void wait_ev(struct fixture *f, uint32_t tid, uint64_t end, uint64_t wait_ns, uint64_t stack,
	     uint64_t span)
{
	uint64_t ev[TRACE_EV_MAX_WORDS];

	append(f->drain, PID, tid, ev, trace_ev_wait(ev, end, 1, true, stack, span, wait_ns));
}

/* an off-CPU stack of PID, as the drains store a wait's: root -> right */
uint64_t put_wait_stack(struct fixture *f)
{
	__u64 frames[2] = {addr_of(timeline_fixture_right) + 4, addr_of(timeline_fixture_root) + 4};
	uint64_t id = calltrace_storage__put(f->storage, PID, EXEC, frames, 0, 2, SAMPLE_F_OFFCPU);

	assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
	return id;
}

/* ---- the document read back */

void doc_free(struct doc *d)
{
	json_free(d->root);
	free(d->ev);
	memset(d, 0, sizeof(*d));
}

/* the file's bytes; *@len set */
unsigned char *slurp(const char *path, size_t *len)
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
const struct tev *meta(const struct doc *d, const char *what, uint32_t pid, uint32_t tid)
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
void write_interval(struct fixture *f, uint64_t end_ns, uint64_t cut, const char *name,
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
unsigned int find_span(const struct doc *d, uint32_t pid, uint32_t tid, uint64_t id,
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
void assert_span(const struct doc *d, uint32_t pid, uint32_t tid, uint64_t id, uint64_t root,
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
size_t slices_at(const struct doc *d, uint32_t pid, uint32_t tid, const char *cat, uint64_t t,
		 const struct tev **out, size_t max)
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
void assert_sample(const struct doc *d, uint32_t tid, uint64_t t, const char *const *frames,
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
void assert_nothing_past(const struct doc *d, uint32_t pid, uint32_t tid, uint64_t t)
{
	for (size_t i = 0; i < d->nr; i++) {
		const struct tev *e = &d->ev[i];

		if (e->ph != 'M' && e->pid == pid && e->tid == tid && e->ts + e->dur > t)
			fail_msg("%s: %s [%llu, %llu] reaches past %llu", d->path, e->name->text,
				 (unsigned long long)e->ts, (unsigned long long)(e->ts + e->dur),
				 (unsigned long long)t);
	}
}
