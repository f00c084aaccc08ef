// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/symbols/maps_history.c and user/symbols/symbolizer.c:
 * the test process names its own addresses (and a child's it forks) through
 * the real proc_maps, safe_open and elf_syms.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols/maps_history.h"
#include "symbols/symbolizer.h"

static char exe_path[PATH_MAX];

/* known functions: global so their .symtab names are not renamed clones */
__attribute__((noinline)) int symbolizer_test_target(int x)
{
	/* more than one byte of code, so target + 1 is still inside */
	return x * 7 + (x >> 3) + 3;
}

static jmp_buf capture_env;
static uint64_t captured_ra;

__attribute__((noinline, noreturn)) void symbolizer_test_capture(void)
{
	captured_ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
	longjmp(capture_env, 1);
}

/*
 * Its call to a noreturn function is its last instruction, so the return
 * address pushed is one byte past the function's end.
 */
__attribute__((noinline)) void symbolizer_test_ends_with_call(void)
{
	symbolizer_test_capture();
}

static uint64_t fn_addr(void (*fn)(void))
{
	return (uint64_t)(uintptr_t)fn;
}

/* a process's history and the shared symbolizer, as the collector pairs them */
struct fx {
	struct symbolizer *s;
	struct maps_history h;
	pid_t pid;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int snap(struct fx *fx)
{
	return maps_history__refresh(&fx->h, fx->s, fx->pid, now_ns());
}

/* what the exporter does for one user frame */
static int name_addr(struct fx *fx, uint64_t addr, bool ra, struct sym_frame *f)
{
	const struct sym_map *m = NULL;

	if (!ra || addr)
		m = maps_history__find(&fx->h, addr - ra, UINT64_MAX);
	if (!m) {
		symbolizer__unmapped(fx->s);
		memset(f, 0, sizeof(*f));
		return -ENOENT;
	}
	return symbolizer__user(fx->s, m, addr, ra, f);
}

static struct fx *fx_new(pid_t pid)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return NULL;
	fx->pid = pid;
	fx->s = symbolizer__new(0);
	if (!fx->s) {
		free(fx);
		return NULL;
	}
	return fx;
}

static void fx_free(struct fx *fx)
{
	maps_history__release(&fx->h);
	symbolizer__free(fx->s);
	free(fx);
}

static int setup_symbolizer(void **state)
{
	struct fx *fx = fx_new(getpid());

	if (!fx)
		return -1;
	if (snap(fx) < 0) {
		fx_free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown_symbolizer(void **state)
{
	fx_free(*state);
	return 0;
}

static void maps_history__find__own_function__named_in_test_binary(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target;
	struct fx *fx = *state;
	struct sym_frame f;

	assert_int_equal(name_addr(fx, addr, 0, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_target");
	assert_non_null(f.mapping_path);
	assert_string_equal(f.mapping_path, exe_path);
	/* Debian's gcc links with --build-id */
	assert_non_null(f.build_id);
	assert_true(strlen(f.build_id) >= 16);
	assert_true(f.map_start <= addr && addr < f.map_end);
}

static void maps_history__find__inside_function__named(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target + 1;
	struct fx *fx = *state;
	struct sym_frame f;

	assert_int_equal(name_addr(fx, addr, 0, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_target");
	/* as a return address it is the byte before: the function's start */
	assert_int_equal(name_addr(fx, addr, 1, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_target");
}

static void maps_history__find__return_address_past_final_call__caller_named(void **state)
{
	struct fx *fx = *state;
	struct sym_frame f;

	captured_ra = 0;
	if (!setjmp(capture_env))
		symbolizer_test_ends_with_call();
	assert_true(captured_ra > fn_addr(symbolizer_test_ends_with_call));

	assert_int_equal(name_addr(fx, captured_ra, 1, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_ends_with_call");
	/* taken as a PC, the same address lies past the function */
	assert_int_equal(name_addr(fx, captured_ra, 0, &f), 0);
	assert_true(!f.function || strcmp(f.function, "symbolizer_test_ends_with_call"));
}

static void maps_history__find__libc_function__named_in_libc(void **state)
{
	void *getpid_addr = dlsym(RTLD_DEFAULT, "getpid");
	struct fx *fx = *state;
	struct sym_frame f;

	assert_non_null(getpid_addr);
	assert_int_equal(name_addr(fx, (uint64_t)(uintptr_t)getpid_addr, 0, &f), 0);
	assert_non_null(f.mapping_path);
	assert_non_null(strstr(f.mapping_path, "libc"));
	assert_non_null(f.function);
	/* glibc exports it as getpid and __getpid at one address */
	assert_non_null(strstr(f.function, "getpid"));
}

/* named from the collector's own vDSO image, as every 64-bit process maps it */
static void maps_history__find__vdso_clock_gettime__named(void **state)
{
	void *vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *fn = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
	struct symbolizer_stats before, after;
	struct fx *fx = *state;
	struct sym_frame f;

	if (!fn) {
		print_message("SKIP: no vDSO, or it has no __vdso_clock_gettime\n");
		skip();
	}
	symbolizer__stats(fx->s, &before);
	assert_int_equal(name_addr(fx, (uint64_t)(uintptr_t)fn + 1, 0, &f), 0);
	assert_string_equal(f.mapping_path, "[vdso]");
	assert_non_null(f.function);
	assert_string_equal(f.function, "__vdso_clock_gettime");
	assert_true(f.map_start < f.map_end);
	symbolizer__stats(fx->s, &after);
	assert_true(after.names_vdso == before.names_vdso + 1);
	dlclose(vdso);
}

static void maps_history__find__unmapped_address__enoent(void **state)
{
	struct fx *fx = *state;
	struct sym_frame f;

	memset(&f, 0xa5, sizeof(f));
	assert_int_equal(name_addr(fx, 16, 0, &f), -ENOENT);
	assert_null(f.mapping_path);
	assert_null(f.function);
	assert_true(f.map_start == 0 && f.map_end == 0);
	assert_int_equal(name_addr(fx, 0, 1, &f), -ENOENT);
	assert_int_equal(name_addr(fx, UINT64_MAX, 0, &f), -ENOENT);
}

static void maps_history__find__data_address__enoent(void **state)
{
	/* only executable mappings are kept: a heap address is no frame */
	uint64_t addr = (uint64_t)(uintptr_t)&captured_ra;
	struct fx *fx = *state;
	struct sym_frame f;

	assert_int_equal(name_addr(fx, addr, 0, &f), -ENOENT);
}

static void maps_history__find__pid_never_snapshotted__enoent(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target;
	struct fx *fx = *state;
	struct sym_frame f;

	struct fx *never = fx_new(INT_MAX);

	(void)fx;
	assert_non_null(never);
	assert_true(maps_history__empty(&never->h));
	assert_int_equal(name_addr(never, addr, 0, &f), -ENOENT);
	fx_free(never);
}

static void maps_history__find__child_exited_before_resolving__still_named(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target;
	struct fx *fx = *state, kid = {0};
	int pipefd[2], status;
	struct sym_frame f;
	pid_t child;
	char c;

	assert_int_equal(pipe(pipefd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* wait for the parent's snapshot, then go away */
		close(pipefd[1]);
		while (read(pipefd[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(pipefd[0]);
	kid.s = fx->s;
	kid.pid = child;
	assert_int_equal(snap(&kid), 1);
	close(pipefd[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));

	/* the process is gone: no new snapshot, the old one answers */
	assert_int_equal(snap(&kid), -ESRCH);
	assert_int_equal(name_addr(&kid, addr, 0, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_target");
	assert_string_equal(f.mapping_path, exe_path);
	maps_history__release(&kid.h);
}

static void maps_history__refresh__nonexistent_pid__esrch(void **state)
{
	struct fx *fx = *state, gone = {.s = fx->s, .pid = INT_MAX};

	assert_int_equal(snap(&gone), -ESRCH);
	assert_true(maps_history__empty(&gone.h));
}

static void maps_history__refresh__repeated__files_parsed_once(void **state)
{
	struct symbolizer_stats before, after;
	struct fx *fx = *state;
	struct sym_frame f;
	void *lib;

	symbolizer__stats(fx->s, &before);
	assert_true(before.maps_reads >= 1);
	/* the test binary, libc, libcmocka at least */
	assert_true(before.elf_opened >= 3);

	assert_int_equal(snap(fx), 0);
	/* a new mapping changes the text, yet files already seen are not reparsed */
	lib = malloc(1 << 20);
	assert_non_null(lib);
	assert_int_equal(snap(fx), 0);
	free(lib);
	symbolizer__stats(fx->s, &after);
	assert_true(after.maps_reads == before.maps_reads + 2);
	assert_true(after.elf_opened == before.elf_opened);
	assert_true(after.elf_parse_failed == before.elf_parse_failed);
	assert_true(after.elf_open_failed == before.elf_open_failed);
	assert_int_equal(name_addr(fx, (uint64_t)(uintptr_t)&symbolizer_test_target, 0, &f), 0);
	assert_non_null(f.function);
}

static void maps_history__refresh__more_changes_than_kept__oldest_dropped(void **state)
{
	const unsigned int nr_pages = MAPS_HISTORY_MAX + 6;
	long page = sysconf(_SC_PAGESIZE);
	struct sym_frame f;
	unsigned int i;
	char *region;
	struct fx *fx = fx_new(getpid());

	assert_non_null(fx);
	/* inaccessible pages are no snapshot material; one made executable is */
	region = mmap(NULL, nr_pages * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(region != MAP_FAILED);
	for (i = 0; i < nr_pages; i++) {
		assert_int_equal(mprotect(region + i * page, page, PROT_READ | PROT_EXEC), 0);
		assert_int_equal(snap(fx), 1);
		assert_int_equal(mprotect(region + i * page, page, PROT_NONE), 0);
	}
	/* the code is gone now, and this snapshot is the newest */
	assert_int_equal(snap(fx), 1);

	/* nr_pages + 1 snapshots taken: the first ones are dropped */
	for (i = 0; i < nr_pages - MAPS_HISTORY_MAX + 1; i++)
		assert_int_equal(name_addr(fx, (uintptr_t)(region + i * page), 0, &f), -ENOENT);
	/* older snapshots still answer for code unmapped since, newest first */
	for (; i < nr_pages; i++) {
		assert_int_equal(name_addr(fx, (uintptr_t)(region + i * page), 0, &f), 0);
		assert_string_equal(f.mapping_path, "");
		assert_null(f.function);
		assert_true(f.map_start == (uintptr_t)(region + i * page));
		assert_true(f.map_end == f.map_start + page);
	}
	assert_int_equal(name_addr(fx, (uint64_t)(uintptr_t)&symbolizer_test_target, 0, &f), 0);
	assert_string_equal(f.function, "symbolizer_test_target");
	munmap(region, nr_pages * page);
	fx_free(fx);
}

static void symbolizer__stats__lookups__counters_move(void **state)
{
	struct symbolizer_stats before, after;
	struct fx *fx = *state;
	struct sym_frame f;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);

	symbolizer__stats(fx->s, &before);
	assert_int_equal(before.maps_bad_lines, 0);
	assert_int_equal(name_addr(fx, 16, 0, &f), -ENOENT);
	symbolizer__stats(fx->s, &after);
	assert_true(after.unmapped == before.unmapped + 1);
	assert_true(after.unnamed == before.unnamed);

	if (vdso && (!name_addr(fx, vdso, 0, &f) || !name_addr(fx, vdso + 0x1000, 0, &f))) {
		symbolizer__stats(fx->s, &after);
		assert_true(after.unnamed >= before.unnamed + 1);
	}
	assert_int_equal(symbolizer__kernel(fx->s, 0xffffffff81000000ULL, 0, &f), 0);
	symbolizer__stats(fx->s, &before);
	assert_true(before.unnamed == after.unnamed + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(maps_history__find__own_function__named_in_test_binary),
		cmocka_unit_test(maps_history__find__inside_function__named),
		cmocka_unit_test(maps_history__find__return_address_past_final_call__caller_named),
		cmocka_unit_test(maps_history__find__libc_function__named_in_libc),
		cmocka_unit_test(maps_history__find__vdso_clock_gettime__named),
		cmocka_unit_test(maps_history__find__unmapped_address__enoent),
		cmocka_unit_test(maps_history__find__data_address__enoent),
		cmocka_unit_test(maps_history__find__pid_never_snapshotted__enoent),
		cmocka_unit_test(maps_history__find__child_exited_before_resolving__still_named),
		cmocka_unit_test(maps_history__refresh__nonexistent_pid__esrch),
		cmocka_unit_test(maps_history__refresh__repeated__files_parsed_once),
		cmocka_unit_test(symbolizer__stats__lookups__counters_move),
	};
	const struct CMUnitTest standalone[] = {
		cmocka_unit_test(maps_history__refresh__more_changes_than_kept__oldest_dropped),
	};
	ssize_t n;
	int failed;

	n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	if (n <= 0)
		return 1;
	exe_path[n] = '\0';

	failed = cmocka_run_group_tests_name("maps_history_self", tests, setup_symbolizer,
					     teardown_symbolizer);
	failed += cmocka_run_group_tests_name("maps_history_standalone", standalone, NULL, NULL);
	return failed;
}
