// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The counters' one description: every described value shows in the
 * summary and on /metrics with the same number, promtool accepts the page,
 * and every field of every module's stats struct is described (or listed
 * here as deliberately left out, with why).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "collector/counters.h"

#define ALL_HAVE                                                                                   \
	(COUNTERS_HAVE_UNWINDER | COUNTERS_HAVE_TRACKER | COUNTERS_HAVE_CHILDREN |                 \
	 COUNTERS_HAVE_APP | COUNTERS_HAVE_OTEL | COUNTERS_HAVE_TIMELINE | COUNTERS_HAVE_HTTP |    \
	 COUNTERS_HAVE_MAPPING_EVENTS | COUNTERS_HAVE_GO | COUNTERS_HAVE_PYTHON |                  \
	 COUNTERS_HAVE_OFF_CPU | COUNTERS_HAVE_BPF_STATS | COUNTERS_HAVE_SCRAPES |                 \
	 COUNTERS_HAVE_PUSH)

static unsigned int nr_values(const struct counter_desc *d)
{
	if (d->kind == COUNTER_RANGE)
		return d->count;
	return d->kind == COUNTER_VALUE;
}

static const char *label_of(const struct counter_desc *d, unsigned int i)
{
	return d->kind == COUNTER_RANGE ? d->name(d->first + i) : d->label;
}

/* the @k-th described value: 1000 + k of its unit, so every one is distinct */
static void set_value(struct counter_values *v, const struct counter_desc *d, unsigned int i,
		      unsigned int k)
{
	char *at = (char *)v + d->offset + i * sizeof(uint64_t);
	uint64_t u = 1000 + k;
	double x = 1000 + k;

	switch (d->unit) {
	case COUNTER_NS:
		u *= 1000000000ull;
		break;
	case COUNTER_BYTES:
		u *= 1048576;
		break;
	case COUNTER_SECONDS:
	case COUNTER_NUMBER:
	case COUNTER_TIME:
		memcpy(at, &x, sizeof(x));
		return;
	case COUNTER_COUNT:
		break;
	}
	memcpy(at, &u, sizeof(u));
}

/* every described value set, distinct; returns how many */
static unsigned int fill(struct counter_values *v)
{
	unsigned int i, j, k = 0;

	memset(v, 0, sizeof(*v));
	v->have = ALL_HAVE;
	for (i = 0; i < nr_counter_descs; i++)
		for (j = 0; j < nr_values(&counter_descs[i]); j++)
			set_value(v, &counter_descs[i], j, k++);
	return k;
}

static char *summary_of(const struct counter_values *v)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	counters__summary(f, v);
	assert_int_equal(fclose(f), 0);
	return out;
}

static char *page_of(const struct counter_values *v)
{
	struct metrics_snapshot *m = calloc(1, sizeof(*m));
	char *out = NULL;
	size_t len = 0;

	assert_non_null(m);
	m->version = "0.1.0";
	m->node = "test";
	m->mode = "all";
	counters__snapshot(v, m);
	assert_int_equal(m->lost, 0);
	assert_int_equal(metrics__render(m, &out, &len), 0);
	free(m);
	return out;
}

/* what the summary says for the @k-th value: "1005 words", "words 1005", "label=1005" */
static void summary_item(char *buf, size_t len, const struct counter_desc *d, unsigned int i,
			 unsigned int k)
{
	const char *at = d->words ? strstr(d->words, "{}") : NULL;
	char num[32];

	switch (d->unit) {
	case COUNTER_NS:
	case COUNTER_SECONDS:
		snprintf(num, sizeof(num), "%u.000 s", 1000 + k);
		break;
	case COUNTER_BYTES:
		snprintf(num, sizeof(num), "%u.0 MiB", 1000 + k);
		break;
	default:
		snprintf(num, sizeof(num), "%u", 1000 + k);
	}
	if (d->flags & COUNTER_WORDS)
		snprintf(buf, len, "%s", d->words);
	else if (!d->words)
		snprintf(buf, len, "%s=%s", label_of(d, i), num);
	else if (at)
		snprintf(buf, len, "%.*s%s%s", (int)(at - d->words), d->words, num, at + 2);
	else
		snprintf(buf, len, "%s %s", num, d->words);
}

/* the value /metrics has for the @k-th value */
static double page_value(const struct counter_desc *d, unsigned int k)
{
	return d->unit == COUNTER_BYTES ? (1000.0 + k) * 1048576 : 1000.0 + k;
}

static void counters__every_description__in_summary_and_page(void **state)
{
	struct counter_values v;
	char *summary, *page, item[256], line[256], *at;
	unsigned int i, j, k = 0, checked = 0;

	fill(&v);
	summary = summary_of(&v);
	page = page_of(&v);
	for (i = 0; i < nr_counter_descs; i++) {
		const struct counter_desc *d = &counter_descs[i];

		/* a value said again elsewhere in the summary: there too, with its number */
		if (d->kind == COUNTER_ALSO) {
			uint64_t x;

			memcpy(&x, (char *)&v + d->offset, sizeof(x));
			snprintf(line, sizeof(line), "%.*s%llu%s",
				 (int)(strstr(d->words, "{}") - d->words), d->words,
				 (unsigned long long)x, strstr(d->words, "{}") + 2);
			if (!strstr(summary, line))
				fail_msg("summary lacks \"%s\":\n%s", line, summary);
			continue;
		}
		for (j = 0; j < nr_values(d); j++, k++) {
			/* the summary: its words and its number (dates are /metrics only) */
			if (d->unit != COUNTER_TIME) {
				summary_item(item, sizeof(item), d, j, k);
				if (!strstr(summary, item))
					fail_msg("summary lacks \"%s\":\n%s", item, summary);
			}
			/* the page: the family's sample with this label, the same number */
			if (d->family->label)
				snprintf(line, sizeof(line), "\n%s{%s=\"%s\"} ", d->family->name,
					 d->family->label, label_of(d, j));
			else
				snprintf(line, sizeof(line), "\n%s ", d->family->name);
			at = strstr(page, line);
			if (!at)
				fail_msg("/metrics lacks %s", line + 1);
			assert_true(strtod(at + strlen(line), NULL) == page_value(d, k));
			checked++;
		}
	}
	assert_true(checked > 150);
	free(summary);
	free(page);
}

/* the line tests/integration parse, exactly; the sum is the drop family's */
static void counters__samples_line__exact_format(void **state)
{
	unsigned long long taken, in_profile, dropped;
	struct counter_values v = {};
	char *summary, *line;

	v.sampler[SAMPLER_STAT_SAMPLES] = 107;
	v.exported = 100;
	v.sampler[SAMPLER_STAT_DROP_RING_FULL] = 3;
	v.drains.drops[DRAIN_DROP_STACK_TABLE_FULL] = 2;
	v.no_trace = 2;
	v.sampling.run_hz = v.sampling.effective_hz = v.sampling.lowest_hz = -1;
	v.sampling.max_sample_rate = -2;
	v.queue.max_bytes = 64 << 20;
	assert_int_equal(counters__dropped(&v), 7);
	summary = summary_of(&v);
	line = strstr(summary, "ctxprof: samples: ");
	assert_non_null(line);
	assert_int_equal(sscanf(line,
				"ctxprof: samples: %llu taken, %llu in profile, %llu dropped\n",
				&taken, &in_profile, &dropped),
			 3);
	assert_int_equal(taken, 107);
	assert_int_equal(in_profile, 100);
	assert_int_equal(dropped, 7);
	assert_non_null(strstr(summary, "\nctxprof: dropped by reason: ring_full=3 no_ring=0 "));
	assert_non_null(strstr(summary, " no_trace=2 unwritten=0\n"));
	/* not measured yet: nothing said, nothing made up */
	assert_non_null(strstr(summary, "\nctxprof: sampling rate: 0 Hz requested; throttled "));
	/* nothing to say about the quiet sections, nor about what this run lacks */
	assert_null(strstr(summary, "writes:"));
	assert_null(strstr(summary, "OpenTelemetry"));
	assert_null(strstr(summary, "degraded"));
	assert_null(strstr(summary, "unwinding"));
	assert_null(strstr(summary, "metrics server"));
	free(summary);
	summary = page_of(&v);
	assert_null(strstr(summary, "ctxprof_sampling_effective_hz"));
	assert_null(strstr(summary, "ctxprof_perf_event_max_sample_rate"));
	assert_non_null(strstr(summary, "\nctxprof_sampling_frequency_hz 0\n"));
	free(summary);
}

static void counters__page__promtool_accepts(void **state)
{
	char path[] = "/tmp/ctxprof-metrics.XXXXXX", cmd[128];
	struct counter_values v;
	char *page;
	FILE *f;
	int fd;

	if (system("command -v promtool > /dev/null 2>&1")) {
		fprintf(stderr, "SKIP promtool is not installed (the prometheus package has it)\n");
		skip();
	}
	fill(&v);
	page = page_of(&v);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(page, f);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	assert_int_equal(system(cmd), 0);
	/* and the check can fail: a counter without _total */
	f = fopen(path, "a");
	assert_non_null(f);
	fputs("# HELP ctxprof_bad A counter.\n# TYPE ctxprof_bad counter\nctxprof_bad 1\n", f);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s > /dev/null 2>&1", path);
	assert_int_not_equal(system(cmd), 0);
	unlink(path);
	free(page);
}

/* fields of struct counter_values that are not counters to show, with why */
static const struct {
	size_t offset;
	const char *why;
} left_out[] = {
	{offsetof(struct counter_values, sampler[SAMPLER_STAT_EMITTED]),
	 "taken minus the BPF drops: shown as those"},
	{offsetof(struct counter_values, sampler[SAMPLER_STAT_FILTERED]),
	 "ticks on threads not profiled: nothing lost"},
	{offsetof(struct counter_values, drains.off_received),
	 "the waits the drains received: those recorded, less the ring's drops"},
	{offsetof(struct counter_values, sampler[SAMPLER_STAT_IDLE]),
	 "ticks on an idle CPU: nothing lost (the effective rate is measured without them)"},
	{offsetof(struct counter_values, unwind.store.rows_used), "the store's fill: rows, tables"},
	{offsetof(struct counter_values, unwind.store.rules_used), "the store's fill"},
	{offsetof(struct counter_values, unwind.store.mappings_used), "the store's fill"},
	{offsetof(struct counter_values, unwind.store.chunks_cap),
	 "--unwind-memory's chunks: said as the memory allowed"},
	{offsetof(struct counter_values, tracker.retired), "an internal hand-over"},
	{offsetof(struct counter_values, tracker.mapping_events_on), "copied as mapping_events_on"},
	{offsetof(struct counter_values, app.claims_checked), "internal work"},
	{offsetof(struct counter_values, app.claims_deferred), "per poll, not a count"},
	{offsetof(struct counter_values, traces.traces), "internal bookkeeping"},
	{offsetof(struct counter_values, traces.traces_freed), "internal bookkeeping"},
	{offsetof(struct counter_values, traces.traces_live), "internal bookkeeping"},
	{offsetof(struct counter_values, traces.parts_in_use), "internal bookkeeping"},
	{offsetof(struct counter_values, traces.switches), "internal bookkeeping"},
	{offsetof(struct counter_values, traces.recycled), "shown as events recycled"},
	{offsetof(struct counter_values, timeline.bytes), "the file's size"},
	{offsetof(struct counter_values, last.samples), "summed into exported"},
	{offsetof(struct counter_values, last.rows), "the file's internals"},
	{offsetof(struct counter_values, last.traces), "summed into traces_exported"},
	{offsetof(struct counter_values, last.no_trace), "summed into no_trace"},
	{offsetof(struct counter_values, last.stacks_cut), "summed into stacks_cut"},
	{offsetof(struct counter_values, last.frames_cut), "the file's internals"},
	{offsetof(struct counter_values, last.frames_uncertain), "summed into frames_uncertain"},
	{offsetof(struct counter_values, scrape_requests.answered),
	 "served + failed + stopped, each said"},
	{offsetof(struct counter_values, last.unmatched),
	 "an interval's profile filters nothing (scrapes do: scrapes.unmatched)"},
	{offsetof(struct counter_values, queue.written),
	 "files written first time or later: files_written and written_late say it"},
	{offsetof(struct counter_values, queue.last_err), "said as export_failing's reason"},
};

/* every 8 bytes of every module's stats in struct counter_values: described, or left out */
static void counters__every_module_field__described(void **state)
{
	static const struct {
		const char *name;
		size_t offset, size;
	} structs[] = {
#define STATS(f) {#f, offsetof(struct counter_values, f), sizeof(((struct counter_values *)0)->f)}
		STATS(sampler),	  STATS(drains),	  STATS(sampling),
		STATS(queue),	  STATS(unwind),	  STATS(sym),
		STATS(states),	  STATS(tracker),	  STATS(app),
		STATS(otel),	  STATS(traces),	  STATS(timeline),
		STATS(last),	  STATS(health),	  STATS(http),
		STATS(perf_maps), STATS(scrape_requests), STATS(scrapes),
		STATS(push),
#undef STATS
	};
	bool covered[sizeof(struct counter_values) / 8] = {};
	unsigned int i, j;
	size_t off;

	for (i = 0; i < nr_counter_descs; i++) {
		const struct counter_desc *d = &counter_descs[i];

		if (d->kind == COUNTER_SUM)
			continue;
		for (j = 0; j < (d->kind == COUNTER_RANGE ? d->count : 1); j++)
			covered[d->offset / 8 + j] = true;
		if (d->kind == COUNTER_RATIO)
			covered[d->per / 8] = true;
	}
	for (i = 0; i < sizeof(left_out) / sizeof(left_out[0]); i++) {
		assert_false(covered[left_out[i].offset / 8]); /* described after all? */
		covered[left_out[i].offset / 8] = true;
	}
	for (i = 0; i < sizeof(structs) / sizeof(structs[0]); i++)
		for (off = structs[i].offset; off < structs[i].offset + structs[i].size; off += 8)
			if (!covered[off / 8])
				fail_msg("struct counter_values.%s: the field at byte %zu is "
					 "neither described (collector/counters.c) nor left out",
					 structs[i].name, off - structs[i].offset);
}

/* one family, one type, help and label; names as Prometheus expects them */
static void counters__families__consistent(void **state)
{
	unsigned int i, j;

	for (i = 0; i < nr_counter_descs; i++) {
		const struct metrics_family *f = counter_descs[i].family;

		if (!f)
			continue;
		assert_true(!strncmp(f->name, "ctxprof_", 8) || !strncmp(f->name, "process_", 8));
		assert_true(f->help && f->help[0] && !strchr(f->help, '\n'));
		/* a labelled family's values have labels, an unlabelled one has one value */
		if (counter_descs[i].kind == COUNTER_VALUE)
			assert_true(!f->label == !counter_descs[i].label);
		for (j = 0; j < i; j++)
			if (counter_descs[j].family && counter_descs[j].family != f)
				assert_string_not_equal(counter_descs[j].family->name, f->name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counters__every_description__in_summary_and_page),
		cmocka_unit_test(counters__samples_line__exact_format),
		cmocka_unit_test(counters__page__promtool_accepts),
		cmocka_unit_test(counters__every_module_field__described),
		cmocka_unit_test(counters__families__consistent),
	};

	return cmocka_run_group_tests_name("counters", tests, NULL, NULL);
}
