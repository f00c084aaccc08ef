// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/export.c: traces from a real call-trace storage,
 * rows from a real sample table, frames left unsymbolized (no snapshot), the
 * profile written to a temporary directory.  What is checked is how rows find
 * their traces: export_result's counts.  And how C++ frames are named, with
 * this process's real mappings, read back by the reference pprof ($PPROF).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "export/export.h"
#include "processes/process_state.h"
#include "processes/thread_registry.h"

struct fixture {
	struct calltrace_storage *traces;
	struct symbolizer *sym;
	struct sample_table *rows;
	char dir[64];
	char path[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->traces = calltrace_storage__new(16384);
	f->sym = symbolizer__new(0);
	f->rows = sample_table__new(16384);
	strcpy(f->dir, "/tmp/test_export.XXXXXX");
	if (!f->traces || !f->sym || !f->rows || !mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/cpu.pb.gz", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->path);
	rmdir(f->dir);
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
		assert_int_equal(sample_table__add(f->rows, trace_id, &rec), 0);
}

static void write_profile(struct fixture *f, struct exporter *e, struct export_result *res)
{
	assert_int_equal(exporter__add_samples(e, f->rows), 0);
	assert_int_equal(exporter__write(e, f->path, res), 0);
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

/* Return: the output of "$PPROF @args @file" (caller frees), or NULL when $PPROF is unset */
static char *run_pprof(const char *args, const char *file)
{
	const char *tool = getenv("PPROF");
	char cmd[PATH_MAX * 2 + 64];
	size_t len = 0, cap = 1 << 16;
	char *out;
	FILE *fp;
	size_t n;

	if (!tool || !*tool || access(tool, X_OK))
		return NULL;
	out = malloc(cap);
	assert_non_null(out);
	/* HOME points pprof's caches at a scratch place, never the user's */
	snprintf(cmd, sizeof(cmd), "HOME=/tmp '%s' %s '%s' 2>&1", tool, args, file);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	while ((n = fread(out + len, 1, cap - len - 1, fp)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
	}
	out[len] = '\0';
	assert_int_equal(pclose(fp), 0);
	return out;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("expected \"%s\" in pprof output:\n%s", needle, haystack);
}

/*
 * A stack in a C++ library this process loads (tests/unit/fixtures/
 * cxx_fixture.cpp): Function.name is the demangled name, system_name the
 * mangled one, as `pprof -raw` prints them: "name ... (system_name)".
 */
static void exporter__write__cxx_frames__demangled_name_and_mangled_system_name(void **state)
{
	static const char spin_sym[] = "_ZN10ctxprof_fx6Widget4spinEi";
	static const char twice_sym[] = "_ZN10ctxprof_fx5twiceIlEET_S1_";
	struct fixture *f = *state;
	struct thread_desc td = {.tid = getpid(), .pid = getpid(), .ppid = getppid(), .start = 1};
	struct process_desc pd = {.pid = getpid(),
				  .ppid = getppid(),
				  .start = 1,
				  .exe = "/proc/self/exe",
				  .cgroup = "/"};
	const char *output = getenv("OUTPUT");
	struct process_states *states;
	struct thread_registry *reg;
	struct export_result res;
	struct process_state *st;
	struct exporter *e;
	char lib_path[PATH_MAX], *raw;
	__u64 frames[2];
	uint64_t id;
	void *lib, *spin, *twice;

	if (!getenv("PPROF") || access(getenv("PPROF"), X_OK)) {
		print_message("SKIP: PPROF is not set (make check sets it to build/pprof)\n");
		skip();
	}
	snprintf(lib_path, sizeof(lib_path), "%s/fixtures/libcxx_fixture.so",
		 output && *output ? output : "build");
	lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		fail_msg("%s: %s (run make check)", lib_path, dlerror());
	spin = dlsym(lib, spin_sym);
	twice = dlsym(lib, twice_sym);
	assert_non_null(spin);
	assert_non_null(twice);

	/* this process in a registry, its mappings read, as the collector keeps them */
	strcpy(td.comm, "test_export");
	states = process_states__new(f->sym);
	assert_non_null(states);
	reg = thread_registry__new(&(struct thread_registry_opts){
		.state_free = process_states_retire, .state_ctx = states});
	assert_non_null(reg);
	thread_registry__register_thread();
	assert_int_equal(thread_registry__insert(reg, &td, &pd, 0), 0);
	st = process_states__get(states, reg, getpid());
	assert_non_null(st);
	assert_int_equal(process_states__refresh(states, st), 0);

	/* the leaf inside spin(), called from twice<long>() (a return address) */
	frames[0] = (uintptr_t)spin + 4;
	frames[1] = (uintptr_t)twice + 4;
	id = calltrace_storage__put(f->traces, getpid(), 0, frames, 0, 2, 0);
	count(f, id, getpid(), 3);
	e = exporter__begin(
		f->traces, f->sym,
		&(struct export_opts){.period_ns = 1000000, .states = states, .reg = reg});
	assert_non_null(e);
	write_profile(f, e, &res);
	assert_int_equal(res.samples, 3);
	exporter__free(e);

	raw = run_pprof("-raw", f->path);
	assert_contains(raw, "ctxprof_fx::Widget::spin(int)");
	assert_contains(raw, "(_ZN10ctxprof_fx6Widget4spinEi)");
	assert_contains(raw, "long ctxprof_fx::twice<long>(long)");
	assert_contains(raw, "(_ZN10ctxprof_fx5twiceIlEET_S1_)");
	free(raw);

	thread_registry__free(reg);
	thread_registry__unregister_thread();
	process_states__collect(states, UINT64_MAX, NULL);
	process_states__free(states);
	dlclose(lib);
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
		cmocka_unit_test_setup_teardown(
			exporter__write__cxx_frames__demangled_name_and_mangled_system_name, setup,
			teardown),
	};

	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
