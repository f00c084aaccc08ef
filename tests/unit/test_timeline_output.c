// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/timeline.c: the files it writes.  Hostile
 * thread and mapping names (read back by Python's json module too), gzip,
 * tracks (many threads, an unopenable path) and which track a viewer opens
 * on (Chrome's sort order, speedscope's active profile).  The fixture and the
 * checks every document passes are timeline_check.c's.
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
		T(timeline__write__hostile_thread_names__escaped_and_replaced),
		T(timeline__write__hostile_mapping_name__escaped_and_replaced),
		T(timeline__write__path_ends_in_gz__gzipped_json),
		T(timeline__write__unopenable_path__interval_still_consumed),
		T(timeline__write__many_threads__each_named_and_nested),
		T(timeline__write__chrome__threads_with_spans_sorted_first),
		T(timeline__write__speedscope__opens_on_the_thread_with_most_span_time),
	};
#undef T

	return cmocka_run_group_tests_name("timeline_output", tests, NULL, NULL);
}
