// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the budgets and the slicing of an unwind table build
 * (user/unwind/unwind_table.h: unwind_build__*, unwind_walk.c,
 * cfi_source.c's accounting).  The hostile files are made here by
 * tests/hostile_elf.py; the rows themselves are test_unwind_table's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "fixtures.h"
#include "unwind/unwind_table.h"

#define MS (1000ull * 1000)

static struct elf_file *open_path(const char *path)
{
	struct elf_file *ef;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	ef = elf_file__open_fd(fd);
	close(fd);
	assert_non_null(ef);
	return ef;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* build @path with @lim; the CPU time the call took in *@cpu */
static int build(const char *path, const struct unwind_table_limits *lim, struct unwind_table **t,
		 char *err, size_t err_len, uint64_t *cpu)
{
	struct elf_file *ef = open_path(path);
	uint64_t t0 = thread_cpu_ns();
	int ret;

	ret = unwind_table__build(ef, NULL, lim, t, err, err_len);
	if (cpu)
		*cpu = thread_cpu_ns() - t0;
	elf_file__free(ef);
	return ret;
}

static void assert_same_table(const struct unwind_table *a, const struct unwind_table *b)
{
	assert_int_equal(a->base, b->base);
	assert_int_equal(a->nr_rows, b->nr_rows);
	assert_int_equal(a->nr_rules, b->nr_rules);
	assert_memory_equal(a->rows, b->rows, a->nr_rows * sizeof(*a->rows));
	assert_memory_equal(a->rules, b->rules, a->nr_rules * sizeof(*a->rules));
}

/*
 * FDEs of remember/restore pairs under a CIE naming register 1023: each
 * row re-runs its program, copying a 16 KiB frame state twice a pair.  The
 * old estimate (program bytes) let it run for seconds a file; the thread's
 * CPU clock stops it at the budget, overrun by at most one libdw call.
 */
static void unwind_table__build__remember_state_bomb__stopped_at_cpu_budget(void **state)
{
	struct unwind_table_limits lim = {.cpu_ns = 50 * MS};
	char *dir = fixture_tmpdir("unwind_build"), err[160];
	struct unwind_table *t = (void *)1;
	uint64_t cpu;
	const char *path;

	path = fixture_hostile_elf(dir, "cfi_slow", "cfi-slow --bytes 262144");
	assert_int_equal(build(path, &lim, &t, err, sizeof(err), &cpu), -ETIME);
	assert_null(t);
	assert_non_null(strstr(err, "ms of CPU"));
	print_message("stopped after %.1f ms of CPU (budget 50 ms): %s\n", cpu / 1e6, err);
	assert_true(cpu < 50 * MS + 250 * MS);
	fixture_tmpdir_remove(dir);
}

/*
 * Millions of FDEs: refused from their count, before their ranges are
 * collected or a row is walked; within the budget, built.
 */
static void unwind_table__build__many_fdes__refused_before_the_walk(void **state)
{
	struct unwind_table_limits lim = {.memory = 8u << 20};
	char *dir = fixture_tmpdir("unwind_build"), err[160];
	struct unwind_table *t = (void *)1;
	uint64_t cpu_refused, cpu_built;
	const char *path;

	path = fixture_hostile_elf(dir, "cfi_big", "cfi-big --fdes 200000");
	assert_int_equal(build(path, &lim, &t, err, sizeof(err), &cpu_refused), -E2BIG);
	assert_null(t);
	assert_non_null(strstr(err, "200001 entries need more than the memory budget"));
	assert_int_equal(build(path, NULL, &t, err, sizeof(err), &cpu_built), 0);
	assert_int_equal(t->stats.fdes, 200000);
	assert_true(t->stats.mem_peak <= UNWIND_TABLE_MEMORY);
	print_message("refused in %.1f ms of CPU, built in %.1f ms holding %.1f MiB\n",
		      cpu_refused / 1e6, cpu_built / 1e6, t->stats.mem_peak / 1048576.0);
	/* no FDE collected, no row walked: a fraction of the build */
	assert_true(cpu_refused < cpu_built / 2);
	unwind_table__free(t);
	fixture_tmpdir_remove(dir);
}

/* what a build is charged is what it may hold: its peak fits, a byte less does not */
static void unwind_table__build__budget_of_its_peak__built_a_byte_less_refused(void **state)
{
	char *dir = fixture_tmpdir("unwind_build"), err[160];
	struct unwind_table_limits lim = {0};
	struct unwind_table *t, *again;
	const char *path;

	path = fixture_hostile_elf(dir, "cfi_big", "cfi-big --fdes 5000");
	assert_int_equal(build(path, NULL, &t, err, sizeof(err), NULL), 0);
	assert_true(t->stats.mem_peak > 0);
	lim.memory = t->stats.mem_peak;
	assert_int_equal(build(path, &lim, &again, err, sizeof(err), NULL), 0);
	assert_same_table(t, again);
	unwind_table__free(again);
	lim.memory = t->stats.mem_peak - 1;
	assert_int_equal(build(path, &lim, &again, err, sizeof(err), NULL), -E2BIG);
	assert_non_null(strstr(err, "memory budget"));
	unwind_table__free(t);
	fixture_tmpdir_remove(dir);
}

/* built a slice at a time, as the unwinder builds: the same table */
static void unwind_build__run__tiny_slices__same_table_as_one_build(void **state)
{
	char *dir = fixture_tmpdir("unwind_build"), err[160];
	struct unwind_table *whole, *t;
	struct unwind_build *b;
	struct elf_file *ef;
	const char *path;
	int ret, slices = 0;

	path = fixture_hostile_elf(dir, "cfi_big", "cfi-big --fdes 5000");
	assert_int_equal(build(path, NULL, &whole, err, sizeof(err), NULL), 0);
	ef = open_path(path);
	assert_int_equal(unwind_build__start(ef, NULL, NULL, &b, err, sizeof(err)), 0);
	/* the file is needed only to start */
	elf_file__free(ef);
	assert_null(unwind_build__take(b));
	while ((ret = unwind_build__run(b, 1)) == -EAGAIN) {
		assert_true(unwind_build__bytes(b) > 0);
		slices++;
	}
	assert_int_equal(ret, 0);
	/* a check every 64 libdw calls, 15000 calls */
	assert_true(slices > 100);
	t = unwind_build__take(b);
	assert_non_null(t);
	assert_null(unwind_build__take(b));
	assert_same_table(whole, t);
	assert_true(unwind_build__cpu_ns(b) > 0);
	unwind_build__free(b);
	unwind_table__free(t);
	unwind_table__free(whole);
	fixture_tmpdir_remove(dir);
}

/* cancelled before it starts, and between two slices */
static void unwind_build__cancel__ecanceled(void **state)
{
	char *dir = fixture_tmpdir("unwind_build"), err[160];
	atomic_bool cancel = true;
	struct unwind_table_limits lim = {.cancel = &cancel};
	struct unwind_table *t = (void *)1;
	struct unwind_build *b;
	struct elf_file *ef;
	const char *path;

	path = fixture_hostile_elf(dir, "cfi_big", "cfi-big --fdes 5000");
	assert_int_equal(build(path, &lim, &t, err, sizeof(err), NULL), -ECANCELED);
	assert_null(t);
	assert_string_equal(err, "cancelled");
	atomic_store(&cancel, false);
	ef = open_path(path);
	assert_int_equal(unwind_build__start(ef, NULL, &lim, &b, err, sizeof(err)), 0);
	elf_file__free(ef);
	assert_int_equal(unwind_build__run(b, 1), -EAGAIN);
	atomic_store(&cancel, true);
	assert_int_equal(unwind_build__run(b, UINT64_MAX), -ECANCELED);
	unwind_build__free(b);
	fixture_tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwind_table__build__remember_state_bomb__stopped_at_cpu_budget),
		cmocka_unit_test(unwind_table__build__many_fdes__refused_before_the_walk),
		cmocka_unit_test(
			unwind_table__build__budget_of_its_peak__built_a_byte_less_refused),
		cmocka_unit_test(unwind_build__run__tiny_slices__same_table_as_one_build),
		cmocka_unit_test(unwind_build__cancel__ecanceled),
	};

	return cmocka_run_group_tests_name("unwind_build", tests, NULL, NULL);
}
