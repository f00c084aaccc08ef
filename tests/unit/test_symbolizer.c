// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/symbols/symbolizer.c: the test process symbolizes itself (and a
 * child it forks), through the real proc_maps, safe_open and elf_syms.
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
#include <unistd.h>
#include <cmocka.h>

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

static int setup_symbolizer(void **state)
{
	struct symbolizer *s = symbolizer__new(0);

	if (!s)
		return -1;
	if (symbolizer__snapshot(s, getpid())) {
		symbolizer__free(s);
		return -1;
	}
	*state = s;
	return 0;
}

static int teardown_symbolizer(void **state)
{
	symbolizer__free(*state);
	return 0;
}

static void symbolizer__user__own_function__named_in_test_binary(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target;
	struct symbolizer *s = *state;
	struct sym_frame f;

	assert_int_equal(symbolizer__user(s, getpid(), addr, 0, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_target");
	assert_non_null(f.mapping_path);
	assert_string_equal(f.mapping_path, exe_path);
	/* Debian's gcc links with --build-id */
	assert_non_null(f.build_id);
	assert_true(strlen(f.build_id) >= 16);
	assert_true(f.map_start <= addr && addr < f.map_end);
}

static void symbolizer__user__inside_function__named(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target + 1;
	struct symbolizer *s = *state;
	struct sym_frame f;

	assert_int_equal(symbolizer__user(s, getpid(), addr, 0, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_target");
	/* as a return address it is the byte before: the function's start */
	assert_int_equal(symbolizer__user(s, getpid(), addr, 1, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_target");
}

static void symbolizer__user__return_address_past_final_call__caller_named(void **state)
{
	struct symbolizer *s = *state;
	struct sym_frame f;

	captured_ra = 0;
	if (!setjmp(capture_env))
		symbolizer_test_ends_with_call();
	assert_true(captured_ra > fn_addr(symbolizer_test_ends_with_call));

	assert_int_equal(symbolizer__user(s, getpid(), captured_ra, 1, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_ends_with_call");
	/* taken as a PC, the same address lies past the function */
	assert_int_equal(symbolizer__user(s, getpid(), captured_ra, 0, &f), 0);
	assert_true(!f.function || strcmp(f.function, "symbolizer_test_ends_with_call"));
}

static void symbolizer__user__libc_function__named_in_libc(void **state)
{
	void *getpid_addr = dlsym(RTLD_DEFAULT, "getpid");
	struct symbolizer *s = *state;
	struct sym_frame f;

	assert_non_null(getpid_addr);
	assert_int_equal(symbolizer__user(s, getpid(), (uint64_t)(uintptr_t)getpid_addr, 0, &f), 0);
	assert_non_null(f.mapping_path);
	assert_non_null(strstr(f.mapping_path, "libc"));
	assert_non_null(f.function);
	/* glibc exports it as getpid and __getpid at one address */
	assert_non_null(strstr(f.function, "getpid"));
}

static void symbolizer__user__vdso__mapping_without_function(void **state)
{
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	struct symbolizer *s = *state;
	struct sym_frame f;
	int err;

	if (!vdso)
		skip();
	/* the vDSO's ELF header page may be in its r-xp mapping or before it */
	err = symbolizer__user(s, getpid(), vdso, 0, &f);
	if (err == -ENOENT)
		err = symbolizer__user(s, getpid(), vdso + 0x1000, 0, &f);
	assert_int_equal(err, 0);
	assert_string_equal(f.mapping_path, "[vdso]");
	assert_null(f.function);
	assert_null(f.build_id);
	assert_true(f.map_start < f.map_end);
}

static void symbolizer__user__unmapped_address__enoent(void **state)
{
	struct symbolizer *s = *state;
	struct sym_frame f;

	memset(&f, 0xa5, sizeof(f));
	assert_int_equal(symbolizer__user(s, getpid(), 16, 0, &f), -ENOENT);
	assert_null(f.mapping_path);
	assert_null(f.function);
	assert_true(f.map_start == 0 && f.map_end == 0);
	assert_int_equal(symbolizer__user(s, getpid(), 0, 1, &f), -ENOENT);
	assert_int_equal(symbolizer__user(s, getpid(), UINT64_MAX, 0, &f), -ENOENT);
}

static void symbolizer__user__data_address__enoent(void **state)
{
	/* only executable mappings are kept: a heap address is no frame */
	uint64_t addr = (uint64_t)(uintptr_t)&captured_ra;
	struct symbolizer *s = *state;
	struct sym_frame f;

	assert_int_equal(symbolizer__user(s, getpid(), addr, 0, &f), -ENOENT);
}

static void symbolizer__user__pid_never_snapshotted__enoent(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target;
	struct symbolizer *s = *state;
	struct sym_frame f;

	assert_int_equal(symbolizer__user(s, INT_MAX, addr, 0, &f), -ENOENT);
}

static void symbolizer__user__child_exited_before_resolving__still_named(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target;
	struct symbolizer *s = *state;
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
	assert_int_equal(symbolizer__snapshot(s, child), 0);
	close(pipefd[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));

	/* the process is gone: no new snapshot, the old one answers */
	assert_int_equal(symbolizer__snapshot(s, child), -ESRCH);
	assert_int_equal(symbolizer__user(s, child, addr, 0, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_target");
	assert_string_equal(f.mapping_path, exe_path);
}

static void symbolizer__snapshot__nonexistent_pid__esrch(void **state)
{
	struct symbolizer *s = *state;

	assert_int_equal(symbolizer__snapshot(s, INT_MAX), -ESRCH);
}

static void symbolizer__snapshot__repeated__files_parsed_once(void **state)
{
	struct symbolizer_stats before, after;
	struct symbolizer *s = *state;
	struct sym_frame f;
	void *lib;

	symbolizer__stats(s, &before);
	assert_true(before.maps_reads >= 1);
	/* the test binary, libc, libcmocka at least */
	assert_true(before.elf_opened >= 3);

	assert_int_equal(symbolizer__snapshot(s, getpid()), 0);
	/* a new mapping changes the text, yet files already seen are not reparsed */
	lib = malloc(1 << 20);
	assert_non_null(lib);
	assert_int_equal(symbolizer__snapshot(s, getpid()), 0);
	free(lib);
	symbolizer__stats(s, &after);
	assert_true(after.maps_reads == before.maps_reads + 2);
	assert_true(after.elf_opened == before.elf_opened);
	assert_true(after.elf_parse_failed == before.elf_parse_failed);
	assert_true(after.elf_open_failed == before.elf_open_failed);
	assert_int_equal(
		symbolizer__user(s, getpid(), (uint64_t)(uintptr_t)&symbolizer_test_target, 0, &f),
		0);
	assert_non_null(f.function);
}

static void symbolizer__snapshot__more_changes_than_kept__oldest_dropped(void **state)
{
	const unsigned int nr_pages = SYMBOLIZER_MAX_SNAPSHOTS + 6;
	long page = sysconf(_SC_PAGESIZE);
	struct symbolizer *s;
	struct sym_frame f;
	unsigned int i;
	char *region;

	s = symbolizer__new(0);
	assert_non_null(s);
	/* inaccessible pages are no snapshot material; one made executable is */
	region = mmap(NULL, nr_pages * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(region != MAP_FAILED);
	for (i = 0; i < nr_pages; i++) {
		assert_int_equal(mprotect(region + i * page, page, PROT_READ | PROT_EXEC), 0);
		assert_int_equal(symbolizer__snapshot(s, getpid()), 0);
		assert_int_equal(mprotect(region + i * page, page, PROT_NONE), 0);
	}
	/* the code is gone now, and this snapshot is the newest */
	assert_int_equal(symbolizer__snapshot(s, getpid()), 0);

	/* nr_pages + 1 snapshots taken: the first ones are dropped */
	for (i = 0; i < nr_pages - SYMBOLIZER_MAX_SNAPSHOTS + 1; i++)
		assert_int_equal(
			symbolizer__user(s, getpid(), (uintptr_t)(region + i * page), 0, &f),
			-ENOENT);
	/* older snapshots still answer for code unmapped since, newest first */
	for (; i < nr_pages; i++) {
		assert_int_equal(
			symbolizer__user(s, getpid(), (uintptr_t)(region + i * page), 0, &f), 0);
		assert_string_equal(f.mapping_path, "");
		assert_null(f.function);
		assert_true(f.map_start == (uintptr_t)(region + i * page));
		assert_true(f.map_end == f.map_start + page);
	}
	assert_int_equal(
		symbolizer__user(s, getpid(), (uint64_t)(uintptr_t)&symbolizer_test_target, 0, &f),
		0);
	assert_string_equal(f.function, "symbolizer_test_target");
	munmap(region, nr_pages * page);
	symbolizer__free(s);
}

static void symbolizer__stats__lookups__counters_move(void **state)
{
	struct symbolizer_stats before, after;
	struct symbolizer *s = *state;
	struct sym_frame f;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);

	symbolizer__stats(s, &before);
	assert_int_equal(before.maps_bad_lines, 0);
	assert_int_equal(symbolizer__user(s, getpid(), 16, 0, &f), -ENOENT);
	symbolizer__stats(s, &after);
	assert_true(after.unmapped == before.unmapped + 1);
	assert_true(after.unnamed == before.unnamed);

	if (vdso && (!symbolizer__user(s, getpid(), vdso, 0, &f) ||
		     !symbolizer__user(s, getpid(), vdso + 0x1000, 0, &f))) {
		symbolizer__stats(s, &after);
		assert_true(after.unnamed >= before.unnamed + 1);
	}
	assert_int_equal(symbolizer__kernel(s, 0xffffffff81000000ULL, 0, &f), 0);
	symbolizer__stats(s, &before);
	assert_true(before.unnamed == after.unnamed + 1);
}

static void symbolizer__kernel__without_kallsyms__unnamed_kernel_frame(void **state)
{
	struct symbolizer *s = symbolizer__new(0);
	struct sym_frame f;

	assert_non_null(s);
	assert_false(symbolizer__has_kernel(s));
	assert_int_equal(symbolizer__kernel(s, 0xffffffff81000000ULL, 1, &f), 0);
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	assert_null(f.function);
	assert_null(f.build_id);
	symbolizer__free(s);
	symbolizer__free(NULL);
}

static void symbolizer__new__kernel_wanted__created_with_or_without_kallsyms(void **state)
{
	/* hidden kallsyms (not root, kptr_restrict) only leave kernel frames unnamed */
	struct symbolizer *s = symbolizer__new(1);
	struct sym_frame f;

	assert_non_null(s);
	assert_int_equal(symbolizer__kernel(s, 0xffffffff81000000ULL, 0, &f), 0);
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	if (!symbolizer__has_kernel(s))
		assert_null(f.function);
	symbolizer__free(s);
}

/* the address /proc/kallsyms prints for @name, or 0 */
static uint64_t proc_kallsyms_addr(const char *name)
{
	unsigned long long addr, found = 0;
	char type, sym[600];
	char line[700];
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %599s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

static void symbolizer__kernel__with_kallsyms__known_symbol_named(void **state)
{
	uint64_t addr = proc_kallsyms_addr("do_sys_openat2");
	struct symbolizer *s;
	struct sym_frame f;

	if (geteuid() != 0 || !addr) {
		print_message("kernel addresses hidden (not root, or no do_sys_openat2)\n");
		skip();
	}
	s = symbolizer__new(1);
	assert_non_null(s);
	assert_true(symbolizer__has_kernel(s));
	assert_int_equal(symbolizer__kernel(s, addr + 4, 0, &f), 0);
	assert_string_equal(f.function, "do_sys_openat2");
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	/* a return address at the very start belongs to the call before it */
	assert_int_equal(symbolizer__kernel(s, addr, 1, &f), 0);
	assert_true(!f.function || strcmp(f.function, "do_sys_openat2"));
	symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbolizer__user__own_function__named_in_test_binary),
		cmocka_unit_test(symbolizer__user__inside_function__named),
		cmocka_unit_test(symbolizer__user__return_address_past_final_call__caller_named),
		cmocka_unit_test(symbolizer__user__libc_function__named_in_libc),
		cmocka_unit_test(symbolizer__user__vdso__mapping_without_function),
		cmocka_unit_test(symbolizer__user__unmapped_address__enoent),
		cmocka_unit_test(symbolizer__user__data_address__enoent),
		cmocka_unit_test(symbolizer__user__pid_never_snapshotted__enoent),
		cmocka_unit_test(symbolizer__user__child_exited_before_resolving__still_named),
		cmocka_unit_test(symbolizer__snapshot__nonexistent_pid__esrch),
		cmocka_unit_test(symbolizer__snapshot__repeated__files_parsed_once),
		cmocka_unit_test(symbolizer__stats__lookups__counters_move),
	};
	const struct CMUnitTest standalone[] = {
		cmocka_unit_test(symbolizer__snapshot__more_changes_than_kept__oldest_dropped),
		cmocka_unit_test(symbolizer__kernel__without_kallsyms__unnamed_kernel_frame),
		cmocka_unit_test(symbolizer__new__kernel_wanted__created_with_or_without_kallsyms),
		cmocka_unit_test(symbolizer__kernel__with_kallsyms__known_symbol_named),
	};
	ssize_t n;
	int failed;

	n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	if (n <= 0)
		return 1;
	exe_path[n] = '\0';

	failed = cmocka_run_group_tests_name("symbolizer_self", tests, setup_symbolizer,
					     teardown_symbolizer);
	failed += cmocka_run_group_tests_name("symbolizer_standalone", standalone, NULL, NULL);
	return failed;
}
