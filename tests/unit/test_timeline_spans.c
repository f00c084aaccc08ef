// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/timeline.c: spans and the samples in them.
 * Real per-thread traces (three writers, as the drains, the main thread and
 * the tracker append), a real call-trace storage whose stacks are this
 * binary's functions, and the timeline written one interval after another as
 * the collector does (cut, rotate, replay); the fixture and the checks every
 * document passes are timeline_check.c's.  Here: span slices with nested
 * stacks, span events lost or disagreeing with samples, spans open across
 * intervals, events past an interval's end, and off-CPU waits.
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

/* ---- (a) spans and samples */

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

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(timeline__write__spans_and_samples__span_slices_with_nested_stacks),
		T(timeline__write__lost_span_events__reconciled_with_samples),
		T(timeline__write__span_open_at_end__unfinished_then_continued),
		T(timeline__write__seeded_begins__known_ignored_unknown_opened),
		T(timeline__write__events_past_end__carried_to_next_write),
		T(timeline__write__waits__slices_in_their_spans_with_their_stacks),
	};
#undef T

	return cmocka_run_group_tests_name("timeline_spans", tests, NULL, NULL);
}
