// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/export.c: traces from a real call-trace storage,
 * rows from a real sample table, the profile written to a temporary
 * directory.  Without process states, what is checked is how rows find their
 * traces: export_result's counts.  With them (a real thread registry whose
 * process images keep states, mappings of this very binary), the profile is
 * read back with the reference pprof: frame names, labels, cut stacks and
 * their marker frames, C++ frames demangled.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "export/export.h"
#include "fixtures.h"

struct fixture {
	struct calltrace_storage *traces;
	struct symbolizer *sym;
	struct sample_table *rows;
	char *dir;
	char path[PATH_MAX];
	/* with_process_setup(): a registry whose process images keep states */
	struct process_states *states;
	struct thread_registry *reg;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->traces = calltrace_storage__new(16384);
	f->sym = symbolizer__new(0, 64 << 20);
	f->rows = sample_table__new(16384);
	if (!f->traces || !f->sym || !f->rows)
		return -1;
	f->dir = fixture_tmpdir("export");
	snprintf(f->path, sizeof(f->path), "%s/cpu.pb.gz", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->reg)
		fixture_registry_free(f->reg);
	process_states__free(f->states);
	fixture_tmpdir_remove(f->dir);
	sample_table__free(f->rows);
	symbolizer__free(f->sym);
	calltrace_storage__free(f->traces);
	free(f);
	return 0;
}

/* a two-frame user stack of thread @tid, unique to @n */
static uint64_t put(struct fixture *f, uint32_t tid, uint64_t n)
{
	__u64 frames[2] = {0x400000 + n * 16, 0x500000 + n * 16};

	return calltrace_storage__put(f->traces, tid, 0, frames, 0, 2, 0);
}

static void count(struct fixture *f, uint64_t trace_id, uint32_t tid, int times)
{
	struct sample_record rec = {.pid = tid, .tid = tid};

	while (times--)
		assert_int_equal(sample_table__add(f->rows, trace_id, &rec, NULL, NULL), 0);
}

static void write_profile(struct fixture *f, struct exporter *e, struct export_result *res)
{
	assert_int_equal(exporter__add_samples(e, f->rows), 0);
	assert_int_equal(exporter__write(e, f->path, NULL, res), 0);
	assert_int_equal(access(f->path, R_OK), 0);
}

static void add_samples__rows_of_handed_over_traces__written_with_their_counts(void **state)
{
	struct export_opts opts = {.period_ns = 1000000};
	struct fixture *f = *state;
	struct export_result res;
	uint64_t a, b;
	struct exporter *e;

	a = put(f, 100, 1);
	b = put(f, 100, 2);
	count(f, a, 100, 3);
	count(f, a, 101, 1);
	count(f, b, 100, 2);
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	write_profile(f, e, &res);
	assert_int_equal(res.traces, 2);
	assert_int_equal(res.rows, 3);
	assert_int_equal(res.samples, 6);
	assert_int_equal(res.no_trace, 0);
	/* no process state: each leaf unmapped, each return address cut and
	 * replaced by one shared marker frame */
	assert_int_equal(res.stacks_cut, 2);
	assert_int_equal(res.frames_cut, 2);
	assert_int_equal(res.locations, 3);
	exporter__free(e);
}

static void add_samples__unknown_trace__counted_as_no_trace(void **state)
{
	struct export_opts opts = {.period_ns = 1000000};
	struct fixture *f = *state;
	struct export_result res;
	struct exporter *e;
	uint64_t a;

	a = put(f, 100, 1);
	count(f, a, 100, 1);
	/* an id of an epoch no table has */
	count(f, 0xfffffff0ULL << 32 | 5, 100, 4);
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	write_profile(f, e, &res);
	assert_int_equal(res.traces, 1);
	assert_int_equal(res.rows, 1);
	assert_int_equal(res.samples, 1);
	assert_int_equal(res.no_trace, 4);
	exporter__free(e);
}

/* put between the hand-over and the rows: found in ACTIVE, not counted twice */
static void add_samples__trace_put_after_begin__looked_up_in_active(void **state)
{
	struct export_opts opts = {.period_ns = 1000000};
	struct fixture *f = *state;
	struct export_result res;
	struct exporter *e;
	uint64_t a, late;

	a = put(f, 100, 1);
	count(f, a, 100, 1);
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	late = put(f, 100, 2);
	count(f, late, 100, 2);
	count(f, late, 101, 1);
	write_profile(f, e, &res);
	assert_int_equal(res.traces, 1);
	assert_int_equal(res.rows, 3);
	assert_int_equal(res.samples, 4);
	assert_int_equal(res.no_trace, 0);
	exporter__free(e);
}

static void add_samples__thousands_of_traces__each_row_finds_its_trace(void **state)
{
	struct export_opts opts = {.period_ns = 1000000};
	struct fixture *f = *state;
	struct export_result res;
	struct exporter *e;
	uint64_t n, id, samples = 0;

	for (n = 0; n < 5000; n++) {
		id = put(f, 100, n);
		assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
		count(f, id, 100, 1 + n % 3);
		samples += 1 + n % 3;
	}
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	write_profile(f, e, &res);
	assert_int_equal(res.traces, 5000);
	assert_int_equal(res.rows, 5000);
	assert_int_equal(res.samples, samples);
	assert_int_equal(res.no_trace, 0);
	exporter__free(e);
}

/* ---- with process states: frames named from the process's mappings ----- */

#define PID	     4242 /* the registry's process; its mappings are this binary's */
#define START	     100
#define OLD_EXEC     7
#define NEW_EXEC     8
#define CONTAINER_ID "3f9c2b1a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"

/*
 * Code of this binary the traces point at: a few dozen bytes each, so that
 * the addresses below (start, start + 1) lie well inside; noipa: neither
 * merged nor cloned.
 */
static volatile int sink;

__attribute__((noinline, noipa)) int export_fixture_a(int x)
{
	int i;

	for (i = 0; i < x; i++)
		sink += i * 3;
	return sink;
}

__attribute__((noinline, noipa)) int export_fixture_b(int x)
{
	int i;

	for (i = 0; i < x; i++)
		sink ^= i * 5;
	return sink;
}

static uint64_t fn_a(void)
{
	return (uint64_t)(uintptr_t)export_fixture_a;
}

static uint64_t fn_b(void)
{
	return (uint64_t)(uintptr_t)export_fixture_b;
}

/* process PID in a registry whose images keep states, with this binary mapped */
static int with_process_setup(void **state)
{
	struct process_state *st;
	struct fixture *f;

	setup(state);
	f = *state;
	f->states = fixture_states_new(f->sym);
	assert_non_null(f->states);
	f->reg = fixture_registry_with_states(f->states);
	assert_int_equal(fixture_add_process(f->reg, PID, START, "app",
					     "/kubepods/pod1/" CONTAINER_ID, OLD_EXEC),
			 0);
	st = process_states__get(f->states, f->reg, PID);
	assert_non_null(st);
	fixture_map_code(f->states, st, fn_a(), 0, NULL);
	return 0;
}

static uint64_t put_user(struct fixture *f, uint32_t exec_id, uint32_t flags, const __u64 *frames,
			 uint16_t nr)
{
	uint64_t id = calltrace_storage__put(f->traces, PID, exec_id, frames, 0, nr, flags);

	assert_int_not_equal(id, CALLTRACE_DROPPED_TRACE_ID);
	return id;
}

/* @times samples of thread @tid of PID on @trace_id */
static void count_pid(struct fixture *f, uint64_t trace_id, uint32_t tid, int times)
{
	struct sample_record rec = {.pid = PID, .tid = tid};

	snprintf(rec.comm, sizeof(rec.comm), "t%u", tid);
	while (times--)
		assert_int_equal(sample_table__add(f->rows, trace_id, &rec, NULL, NULL), 0);
}

/*
 * Export what was put and counted, then read it back with the reference
 * pprof: the samples, one a line (fixture_pprof_samples()).  Skips when
 * there is no pprof tool.
 */
static char *export_samples(struct fixture *f, bool proc_labels, struct export_result *res)
{
	struct export_opts opts = {
		.period_ns = 1000000,
		.states = f->states,
		.reg = f->reg,
		.proc_labels = proc_labels,
	};
	const char *tool = fixture_pprof_tool();
	struct exporter *e;
	char *out, *samples;
	int status;

	if (!tool)
		skip();
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	write_profile(f, e, res);
	exporter__free(e);
	/* our names only: pprof would name frames itself from the binary it finds */
	out = fixture_run_pprof(tool, "-raw -symbolize=none", f->path, &status);
	if (status)
		fail_msg("pprof -raw exited %d:\n%s", status, out);
	samples = fixture_pprof_samples(out);
	free(out);
	return samples;
}

/* the line of @samples holding @needle (caller frees), or fail */
static char *sample_line(const char *samples, const char *needle)
{
	const char *hit = strstr(samples, needle), *start, *end;

	if (!hit)
		fail_msg("no sample with \"%s\" in:\n%s", needle, samples);
	for (start = hit; start > samples && start[-1] != '\n'; start--)
		;
	end = strchr(hit, '\n');
	return strndup(start, end ? (size_t)(end - start) : strlen(start));
}

/* the stack of thread @tid's sample: "N M: leaf ... root" */
static char *stack_of(const char *samples, uint32_t tid)
{
	char needle[64], *line, *bar;

	snprintf(needle, sizeof(needle), "thread_id:[%u]", tid);
	line = sample_line(samples, needle);
	bar = strstr(line, " |");
	if (bar)
		*bar = '\0';
	return line;
}

static void assert_stack(const char *samples, uint32_t tid, const char *want)
{
	char *stack = stack_of(samples, tid);

	if (strcmp(stack, want))
		fail_msg("thread %u: stack \"%s\", want \"%s\"", tid, stack, want);
	free(stack);
}

static void add_samples__process_mappings__user_frames_named(void **state)
{
	struct fixture *f = *state;
	__u64 frames[2] = {fn_a() + 4, fn_b() + 4};
	struct export_result res;
	char *samples;

	count_pid(f, put_user(f, OLD_EXEC, 0, frames, 2), 1, 3);
	samples = export_samples(f, false, &res);
	assert_stack(samples, 1, "3 3000000: export_fixture_a export_fixture_b");
	assert_int_equal(res.stacks_cut, 0);
	assert_int_equal(res.frames_cut, 0);
	assert_int_equal(res.samples, 3);
	free(samples);
}

static void add_samples__proc_labels__comm_and_container_id_only_then(void **state)
{
	struct fixture *f = *state;
	__u64 frames[1] = {fn_a()};
	struct export_result res;
	char *samples, *line;

	count_pid(f, put_user(f, OLD_EXEC, 0, frames, 1), 1, 1);
	samples = export_samples(f, false, &res);
	line = sample_line(samples, "thread_id:[1]");
	fixture_assert_contains(line, "thread_name:[t1]");
	fixture_assert_contains(line, "pid:[4242]");
	assert_null(strstr(line, "comm:"));
	assert_null(strstr(line, "container_id:"));
	free(line);
	free(samples);

	/* the same rows again, now with the process labels */
	count_pid(f, put_user(f, OLD_EXEC, 0, frames, 1), 1, 1);
	samples = export_samples(f, true, &res);
	line = sample_line(samples, "thread_id:[1]");
	fixture_assert_contains(line, "comm:[app]");
	fixture_assert_contains(line, "container_id:[" CONTAINER_ID "]");
	fixture_assert_contains(line, "thread_name:[t1]");
	free(line);
	free(samples);
}

static void add_samples__exec_id_of_retired_image__named_from_that_image(void **state)
{
	struct fixture *f = *state;
	__u64 frames[1] = {fn_a()};
	struct process_state *st;
	struct export_result res;
	char *samples;

	/* the new image maps the same file elsewhere: fn_a's address is fn_b there */
	assert_int_equal(fixture_exec(f->reg, PID, START, "app2", NEW_EXEC), 0);
	thread_registry__barrier(f->reg);
	assert_int_equal(process_states__nr_retired(f->states), 1);
	st = process_states__get(f->states, f->reg, PID);
	assert_non_null(st);
	assert_int_equal(st->exec_id, NEW_EXEC);
	fixture_map_code(f->states, st, fn_a(), (int64_t)(fn_a() - fn_b()), NULL);

	count_pid(f, put_user(f, OLD_EXEC, 0, frames, 1), 1, 3);
	count_pid(f, put_user(f, NEW_EXEC, 0, frames, 1), 2, 5);
	samples = export_samples(f, true, &res);
	assert_stack(samples, 1, "3 3000000: export_fixture_a");
	assert_stack(samples, 2, "5 5000000: export_fixture_b");
	/* each with its own image's labels */
	fixture_assert_contains(samples, "comm:[app]");
	fixture_assert_contains(samples, "comm:[app2]");
	assert_int_equal(res.traces, 2);
	free(samples);
}

#define OUTSIDE "[unwind stopped: return address outside executable mappings]"

static void add_samples__return_address_outside_mappings__cut_marked_counted(void **state)
{
	struct fixture *f = *state;
	__u64 cut[4] = {fn_a(), fn_b() + 1, 0x10, fn_b() + 1};
	__u64 whole[2] = {fn_a(), fn_b() + 1};
	struct export_result res;
	char *samples;

	count_pid(f, put_user(f, OLD_EXEC, 0, cut, 4), 1, 1);
	count_pid(f, put_user(f, OLD_EXEC, 0, whole, 2), 2, 1);
	samples = export_samples(f, false, &res);
	assert_stack(samples, 1, "1 1000000: export_fixture_a export_fixture_b " OUTSIDE);
	assert_stack(samples, 2, "1 1000000: export_fixture_a export_fixture_b");
	assert_int_equal(res.stacks_cut, 1);
	assert_int_equal(res.frames_cut, 2);
	free(samples);
}

static void add_samples__unwind_stop_reason__its_marker_frame_last(void **state)
{
	static const struct {
		uint32_t reason;
		const char *marker; /* NULL: the stack is whole, or its end unknown */
	} cases[] = {
		{UNWIND_STOP_COMPLETE, NULL},
		{UNWIND_STOP_TRUNCATED, "[truncated: deeper than 127 frames]"},
		{UNWIND_STOP_NO_MAPPING, "[unwind stopped: return address in no known mapping]"},
		{UNWIND_STOP_NO_CFI, "[unwind stopped: no CFI for the code]"},
		{UNWIND_STOP_UNSUPPORTED, "[unwind stopped: CFI the unwinder cannot follow]"},
		{UNWIND_STOP_READ_ERR, "[unwind stopped: stack unreadable]"},
		{UNWIND_STOP_BAD_FRAME, "[unwind stopped: corrupt frame]"},
		{UNWIND_STOP_NO_USER, NULL},
		{UNWIND_STOP_NO_TABLE_YET, "[frame pointers: unwind tables not ready yet]"},
		{UNWIND_STOP_FP, NULL},
		/* the stack-switching Go function is its own root: no marker */
		{UNWIND_STOP_GO_SYSTEM_STACK, NULL},
		{UNWIND_STOP_JIT_NO_FP, "[unwind stopped: JIT code without a frame pointer]"},
	};
	struct fixture *f = *state;
	__u64 frames[2] = {fn_a(), fn_b() + 1};
	struct export_result res;
	char want[256], *samples;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		count_pid(f,
			  put_user(f, OLD_EXEC, cases[i].reason << SAMPLE_USTOP_SHIFT, frames, 2),
			  100 + i, 1);
	samples = export_samples(f, false, &res);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(want, sizeof(want), "1 1000000: export_fixture_a export_fixture_b%s%s",
			 cases[i].marker ? " " : "", cases[i].marker ? cases[i].marker : "");
		assert_stack(samples, 100 + i, want);
	}
	assert_int_equal(res.stacks_cut, 0);
	free(samples);
}

static void add_samples__exact_frame__looked_up_without_minus_one(void **state)
{
	struct fixture *f = *state;
	/* fn_b's first byte: as an exact pc it is fn_b; as a return address
	 * the call before it, which is not in fn_b */
	__u64 exact[2] = {fn_a(), fn_b() | SAMPLE_FRAME_EXACT};
	__u64 ret[2] = {fn_a(), fn_b()};
	struct export_result res;
	char *samples, *stack;

	count_pid(f, put_user(f, OLD_EXEC, 0, exact, 2), 1, 1);
	count_pid(f, put_user(f, OLD_EXEC, 0, ret, 2), 2, 1);
	samples = export_samples(f, false, &res);
	assert_stack(samples, 1, "1 1000000: export_fixture_a export_fixture_b");
	stack = stack_of(samples, 2);
	fixture_assert_contains(stack, "1 1000000: export_fixture_a ");
	assert_null(strstr(stack, "export_fixture_b"));
	free(stack);
	free(samples);
}

/* --- JIT code named from the process's perf map (this process's own) */

#define JIT_START 0x7f0000000000ull /* an anonymous executable mapping, made up */
#define JIT_END	  0x7f0000010000ull

/*
 * The samples of an export of @f, whose process is this one (getpid()) with
 * one anonymous executable mapping and, when @map is not NULL, a perf map
 * of that text; perf map counts into @pm.
 */
static char *export_jit(struct fixture *f, const char *map, const __u64 (*stacks)[3],
			unsigned int nr, struct perf_map_stats *pm)
{
	struct export_opts opts = {
		.period_ns = 1000000,
		.states = f->states,
		.reg = f->reg,
		.perf_maps = pm,
	};
	const char *tool = fixture_pprof_tool();
	struct process_state *st;
	struct export_result res;
	struct exporter *e;
	char path[64], maps[128], *out, *samples;
	unsigned int i;
	int status, len;
	FILE *fp;

	if (!tool)
		skip();
	f->states = opts.states = fixture_states_new(f->sym);
	f->reg = opts.reg = fixture_registry_with_states(f->states);
	assert_int_equal(fixture_add_process(f->reg, getpid(), START, "node", NULL, OLD_EXEC), 0);
	st = process_states__get(f->states, f->reg, getpid());
	assert_non_null(st);
	len = snprintf(maps, sizeof(maps), "%llx-%llx r-xp 00000000 00:00 0 \n", JIT_START,
		       JIT_END);
	assert_int_equal(process_states__add_text(f->states, st, getpid(), maps, len, 1), 1);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	if (map) {
		fp = fopen(path, "we");
		assert_non_null(fp);
		fputs(map, fp);
		fclose(fp);
	}
	for (i = 0; i < nr; i++) {
		uint64_t id = calltrace_storage__put(f->traces, getpid(), OLD_EXEC, stacks[i], 0,
						     stacks[i][2] ? 3 : 2, 0);
		struct sample_record rec = {.pid = getpid(), .tid = 1 + i};

		assert_int_equal(sample_table__add(f->rows, id, &rec, NULL, NULL), 0);
	}
	e = exporter__begin(f->traces, f->sym, &opts);
	assert_non_null(e);
	write_profile(f, e, &res);
	exporter__free(e);
	unlink(path);
	out = fixture_run_pprof(tool, "-raw -symbolize=none", f->path, &status);
	if (status)
		fail_msg("pprof -raw exited %d:\n%s", status, out);
	samples = fixture_pprof_samples(out);
	free(out);
	return samples;
}

static void add_samples__anonymous_code_with_perf_map__named_from_it(void **state)
{
	static const __u64 stacks[][3] = {
		/* a leaf, then return addresses: looked up at address - 1 */
		{JIT_START + 0x1010, JIT_START + 0x2001, JIT_START + 0x3000},
		/* a return address just past a function is the call at its end */
		{JIT_START + 0x1000, JIT_START + 0x1100, 0},
		/* a leaf in no known mapping (JIT code mapped since the last read) */
		{JIT_END + 0x10, JIT_START + 0x2001, 0},
	};
	static const char map[] = "7f0000001000 100 LazyCompile:*hot\n"
				  "7f0000002000 100 JS:~caller\n"
				  "7f0000002fff 1 Interpreter\n"
				  "7f0000010000 100 JS:*fresh\n";
	struct fixture *f = *state;
	struct perf_map_stats pm = {};
	char *samples, *stack;

	samples = export_jit(f, map, stacks, 3, &pm);
	if (pm.not_regular || pm.entries != 4)
		fail_msg("the perf map was not read: %llu lines", (unsigned long long)pm.entries);
	assert_stack(samples, 1, "1 1000000: LazyCompile:*hot JS:~caller Interpreter");
	assert_stack(samples, 2, "1 1000000: LazyCompile:*hot LazyCompile:*hot");
	assert_stack(samples, 3, "1 1000000: JS:*fresh JS:~caller");
	assert_int_equal(pm.reads, 1);
	assert_int_equal(pm.frames_named, 7);
	free(samples);

	/* no map: the same frames, unnamed */
	teardown(state);
	setup(state);
	f = *state;
	memset(&pm, 0, sizeof(pm));
	samples = export_jit(f, NULL, stacks, 1, &pm);
	stack = stack_of(samples, 1);
	assert_null(strstr(stack, "hot"));
	assert_int_equal(pm.frames_named, 0);
	free(stack);
	free(samples);
}

/*
 * A stack in a C++ library this process loads (tests/unit/fixtures/
 * cxx_fixture.cpp): Function.name is the demangled name, system_name the
 * mangled one, as `pprof -raw` prints them: "name ... (system_name)".
 */
/* a sample of thread @tid with libctxprof span @span (0: none) and an OTel record of @ids */
static void count_otel(struct fixture *f, uint64_t trace_id, uint32_t tid, uint64_t span,
		       uint8_t ids)
{
	struct sample_record rec = {.pid = tid, .tid = tid};
	struct {
		struct otel_thread_record r;
		uint8_t attrs[3];
	} o = {.r = {.valid = 1, .attrs_size = 3}, .attrs = {0, 1, 'x'}};

	if (span) {
		rec.flags = SAMPLE_F_CONTEXT;
		rec.span_id = span;
		rec.local_root_span_id = span + 1;
	}
	memset(o.r.trace_id, ids, sizeof(o.r.trace_id));
	memset(o.r.span_id, ids ? ids + 1 : 0, sizeof(o.r.span_id));
	assert_int_equal(sample_table__add(f->rows, trace_id, &rec, &o.r, NULL), 0);
}

/*
 * The policy between the two sources: an OTel record naming a trace
 * replaces libctxprof's span_id and local_root_span_id; one with zero ids
 * leaves them; an attribute whose key index no key map names is no label.
 */
static void add_samples__otel_record_and_libctxprof_slot__otel_ids_win(void **state)
{
	struct fixture *f = *state;
	struct export_result res;
	char *samples, *line;

	count_otel(f, put(f, 300, 1), 300, 5, 0x11);
	count_otel(f, put(f, 301, 2), 301, 7, 0);
	samples = export_samples(f, false, &res);
	line = sample_line(samples, "thread_id:[300]");
	assert_non_null(strstr(line, "trace_id:[11111111111111111111111111111111]"));
	assert_non_null(strstr(line, "span_id:[1212121212121212]"));
	assert_null(strstr(line, "local_root_span_id"));
	assert_null(strstr(line, "0000000000000005"));
	free(line);
	line = sample_line(samples, "thread_id:[301]");
	assert_null(strstr(line, "trace_id"));
	assert_non_null(strstr(line, "span_id:[0000000000000007]"));
	assert_non_null(strstr(line, "local_root_span_id:[0000000000000008]"));
	free(line);
	free(samples);
}

/* a sample of thread @tid with libctxprof span @span (0: none) and goroutine labels @pairs */
static void count_go(struct fixture *f, uint64_t trace_id, uint32_t tid, uint64_t span,
		     const char **pairs)
{
	struct sample_record rec = {.pid = tid, .tid = tid};
	struct {
		struct go_labels_record r;
		uint8_t entries[GO_LABELS_BYTES];
	} g = {};
	uint8_t *e = g.entries;

	if (span) {
		rec.flags = SAMPLE_F_CONTEXT;
		rec.span_id = span;
	}
	for (; *pairs; pairs += 2, g.r.nr++) {
		e[0] = strlen(pairs[0]);
		e[1] = strlen(pairs[1]);
		memcpy(e + 2, pairs[0], e[0]);
		memcpy(e + 2 + e[0], pairs[1], e[1]);
		g.r.size += 2 + e[0] + e[1];
		e += 2 + e[0] + e[1];
	}
	assert_int_equal(sample_table__add(f->rows, trace_id, &rec, NULL, &g.r), 0);
}

/* goroutine labels are labels as the program set them; they win over libctxprof's span */
static void add_samples__go_labels__labels_as_set(void **state)
{
	static const char *labels[] = {"span_id", "00000000000000aa", "span_name", "checkout",
				       NULL};
	static const char *bad[] = {"ok", "1", "bad", "\xff", NULL};
	struct fixture *f = *state;
	struct export_result res;
	char *samples, *line;

	count_go(f, put(f, 310, 1), 310, 5, labels);
	count_go(f, put(f, 311, 2), 311, 0, bad);
	samples = export_samples(f, false, &res);
	line = sample_line(samples, "thread_id:[310]");
	assert_non_null(strstr(line, "span_id:[00000000000000aa]"));
	assert_non_null(strstr(line, "span_name:[checkout]"));
	assert_null(strstr(line, "0000000000000005"));
	free(line);
	line = sample_line(samples, "thread_id:[311]");
	assert_non_null(strstr(line, "ok:[1]"));
	assert_null(strstr(line, "bad:"));
	free(line);
	free(samples);
}

/*
 * `pprof -raw` of a profile with one sample of 3, whose stack is @syms[0]
 * (the leaf) called from @syms[1], functions of the fixture library @lib,
 * which this process loads and whose frames it names as the collector
 * does; NULL when the pprof tool is missing (the caller skips).
 */
static char *raw_profile_of_lib(struct fixture *f, const char *lib, const char *const syms[2])
{
	struct thread_desc td = {.tid = getpid(), .pid = getpid(), .ppid = getppid(), .start = 1};
	struct process_desc pd = {.pid = getpid(),
				  .ppid = getppid(),
				  .start = 1,
				  .exe = "/proc/self/exe",
				  .cgroup = "/"};
	const char *output = getenv("OUTPUT"), *tool = fixture_pprof_tool();
	int status, i;
	struct process_states *states;
	struct thread_registry *reg;
	struct export_result res;
	struct process_state *st;
	struct exporter *e;
	char lib_path[PATH_MAX], *raw;
	__u64 frames[2];
	uint64_t id;
	void *h, *fn;

	if (!tool)
		return NULL;
	snprintf(lib_path, sizeof(lib_path), "%s/fixtures/%s", output && *output ? output : "build",
		 lib);
	h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fail_msg("%s: %s (run make check)", lib_path, dlerror());
	/* the leaf inside syms[0], called from syms[1] (a return address) */
	for (i = 0; i < 2; i++) {
		fn = dlsym(h, syms[i]);
		if (!fn)
			fail_msg("%s: no %s", lib_path, syms[i]);
		frames[i] = (uintptr_t)fn + 4;
	}

	/* this process in a registry, its mappings read, as the collector keeps them */
	strcpy(td.comm, "test_export");
	states = fixture_states_new(f->sym);
	assert_non_null(states);
	reg = thread_registry__new(
		&(struct thread_registry_opts){.state_free = process_states_retire,
					       .state_unlinked = process_states_unlinked,
					       .state_ctx = states});
	assert_non_null(reg);
	thread_registry__register_thread();
	assert_int_equal(thread_registry__insert(reg, &td, &pd, 0), 0);
	st = process_states__get(states, reg, getpid());
	assert_non_null(st);
	assert_int_equal(process_states__refresh(states, st), 0);

	id = calltrace_storage__put(f->traces, getpid(), 0, frames, 0, 2, 0);
	count(f, id, getpid(), 3);
	e = exporter__begin(
		f->traces, f->sym,
		&(struct export_opts){.period_ns = 1000000, .states = states, .reg = reg});
	assert_non_null(e);
	write_profile(f, e, &res);
	assert_int_equal(res.samples, 3);
	exporter__free(e);

	raw = fixture_run_pprof(tool, "-raw", f->path, &status);
	assert_int_equal(status, 0);

	thread_registry__free(reg);
	thread_registry__unregister_thread();
	process_states__collect(states, UINT64_MAX, NULL);
	process_states__free(states);
	dlclose(h);
	return raw;
}

/*
 * A stack in a C++ library this process loads (tests/unit/fixtures/
 * cxx_fixture.cpp): Function.name is the demangled name, system_name the
 * mangled one, as `pprof -raw` prints them: "name ... (system_name)".
 */
static void exporter__write__cxx_frames__demangled_name_and_mangled_system_name(void **state)
{
	static const char *const syms[2] = {"_ZN10ctxprof_fx6Widget4spinEi",
					    "_ZN10ctxprof_fx5twiceIlEET_S1_"};
	char *raw = raw_profile_of_lib(*state, "libcxx_fixture.so", syms);

	if (!raw)
		skip();
	fixture_assert_contains(raw, "ctxprof_fx::Widget::spin(int)");
	fixture_assert_contains(raw, "(_ZN10ctxprof_fx6Widget4spinEi)");
	fixture_assert_contains(raw, "long ctxprof_fx::twice<long>(long)");
	fixture_assert_contains(raw, "(_ZN10ctxprof_fx5twiceIlEET_S1_)");
	free(raw);
}

/*
 * A stack in a library with aliases and symbol versions (tests/unit/
 * fixtures/elf_fixture_alias.c), named as perf names them: Function.name
 * without the version ("fx_sem_post"), system_name as .symtab has it
 * ("fx_sem_post@@FX_2"); "fx_malloc", not "__fx_libc_malloc".
 */
static void exporter__write__versioned_alias_frames__plain_name_versioned_system_name(void **state)
{
	static const char *const syms[2] = {"fx_sem_post", "__fx_libc_malloc"};
	char *raw = raw_profile_of_lib(*state, "libelf_fixture_alias.so", syms);

	if (!raw)
		skip();
	/* "name :line s=start(system_name)", the system name only when it differs */
	fixture_assert_contains(raw, " fx_sem_post :0 s=0(fx_sem_post@@FX_2)\n");
	fixture_assert_contains(raw, " fx_malloc :0 s=0\n");
	assert_null(strstr(raw, "__fx_libc_malloc"));
	free(raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			add_samples__rows_of_handed_over_traces__written_with_their_counts, setup,
			teardown),
		cmocka_unit_test_setup_teardown(add_samples__unknown_trace__counted_as_no_trace,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			add_samples__trace_put_after_begin__looked_up_in_active, setup, teardown),
		cmocka_unit_test_setup_teardown(
			add_samples__thousands_of_traces__each_row_finds_its_trace, setup,
			teardown),
#define P(fn) cmocka_unit_test_setup_teardown(fn, with_process_setup, teardown)
		P(add_samples__process_mappings__user_frames_named),
		P(add_samples__proc_labels__comm_and_container_id_only_then),
		P(add_samples__otel_record_and_libctxprof_slot__otel_ids_win),
		P(add_samples__go_labels__labels_as_set),
		P(add_samples__exec_id_of_retired_image__named_from_that_image),
		P(add_samples__return_address_outside_mappings__cut_marked_counted),
		P(add_samples__unwind_stop_reason__its_marker_frame_last),
		P(add_samples__exact_frame__looked_up_without_minus_one),
#undef P
		cmocka_unit_test_setup_teardown(
			add_samples__anonymous_code_with_perf_map__named_from_it, setup, teardown),
		cmocka_unit_test_setup_teardown(
			exporter__write__cxx_frames__demangled_name_and_mangled_system_name, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			exporter__write__versioned_alias_frames__plain_name_versioned_system_name,
			setup, teardown),
	};

	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
