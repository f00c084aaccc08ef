// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/processes/mappings.c (snapshots and their history, as
 * a process state keeps them) naming frames through user/symbols/symbolizer.c:
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

#include "fixtures.h"
#include "processes/mappings.h"
#include "processes/proc_maps.h"
#include "processes/process_state.h"
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

/* a process's state in a registry, and the shared symbolizer, as the collector pairs them */
struct fx {
	struct symbolizer *s;
	struct process_states *ps;
	struct thread_registry *reg;
	struct process_state *st;
	pid_t pid;
};

/* read @fx's process's mappings now: 1 a snapshot added, 0 unchanged, -errno */
static int snap(struct fx *fx)
{
	char *text;
	size_t len;
	int err;

	err = proc_maps__read_text(fx->pid, &text, &len);
	if (err)
		return err;
	err = process_states__add_text(fx->ps, fx->st, fx->pid, text, len, fixture_mono_ns());
	free(text);
	return err;
}

/* what the exporter does for one user frame */
static int name_addr(struct fx *fx, uint64_t addr, bool ra, struct sym_frame *f)
{
	const struct mapping *m = NULL;
	int err = -ENOENT;

	pthread_mutex_lock(&fx->st->lock);
	if (!ra || addr)
		m = mappings_history__find(&fx->st->maps, addr - ra, UINT64_MAX, NULL);
	if (m)
		err = symbolizer__user(fx->s, m, addr, ra, f);
	else
		memset(f, 0, sizeof(*f));
	pthread_mutex_unlock(&fx->st->lock);
	return err;
}

static struct fx *fx_with(struct fx *parent, pid_t pid)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	fx->pid = pid;
	if (parent) {
		fx->s = parent->s;
		fx->ps = parent->ps;
		fx->reg = parent->reg;
	} else {
		fx->s = symbolizer__new(0, 256 << 20);
		assert_non_null(fx->s);
		fx->ps = fixture_states_new(fx->s);
		fx->reg = fixture_registry_with_states(fx->ps);
	}
	assert_int_equal(fixture_add_process(fx->reg, pid, 1, "fx", NULL, 1), 0);
	fx->st = process_states__get(fx->ps, fx->reg, pid);
	assert_non_null(fx->st);
	return fx;
}

/* a pid no process has: a child's, reaped */
static pid_t gone_pid(void)
{
	pid_t child = fork();

	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	return child;
}

static struct fx *fx_new(pid_t pid)
{
	return fx_with(NULL, pid);
}

static void fx_free(struct fx *fx)
{
	/* retires every state, whose snapshots then let their files go */
	fixture_registry_free(fx->reg);
	process_states__free(fx->ps);
	symbolizer__free(fx->s);
	free(fx);
}

static int setup_symbolizer(void **state)
{
	struct fx *fx = fx_new(getpid());

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

static void mappings_history__find__own_function__named_in_test_binary(void **state)
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

static void mappings_history__find__inside_function__named(void **state)
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

static void mappings_history__find__return_address_past_final_call__caller_named(void **state)
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

static void mappings_history__find__libc_function__named_in_libc(void **state)
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
static void mappings_history__find__vdso_clock_gettime__named(void **state)
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

static void mappings_history__find__unmapped_address__enoent(void **state)
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

static void mappings_history__find__data_address__enoent(void **state)
{
	/* only executable mappings are kept: a heap address is no frame */
	uint64_t addr = (uint64_t)(uintptr_t)&captured_ra;
	struct fx *fx = *state;
	struct sym_frame f;

	assert_int_equal(name_addr(fx, addr, 0, &f), -ENOENT);
}

static void mappings_history__find__pid_never_snapshotted__enoent(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target;
	struct fx *fx = *state;
	struct sym_frame f;

	struct fx *never = fx_with(fx, gone_pid());

	assert_int_equal(never->st->maps.nr, 0);
	assert_int_equal(name_addr(never, addr, 0, &f), -ENOENT);
	free(never);
}

static void mappings_history__find__child_exited_before_resolving__still_named(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&symbolizer_test_target;
	struct fx *fx = *state, *kid;
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
	kid = fx_with(fx, child);
	assert_int_equal(snap(kid), 1);
	close(pipefd[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));

	/* the process is gone: no new snapshot, the old one answers */
	assert_int_equal(snap(kid), -ESRCH);
	assert_int_equal(name_addr(kid, addr, 0, &f), 0);
	assert_non_null(f.function);
	assert_string_equal(f.function, "symbolizer_test_target");
	assert_string_equal(f.mapping_path, exe_path);
	free(kid);
}

static void process_states__add_text__nonexistent_pid__esrch(void **state)
{
	struct fx *fx = *state, *gone = fx_with(fx, gone_pid());

	assert_int_equal(snap(gone), -ESRCH);
	assert_int_equal(gone->st->maps.nr, 0);
	free(gone);
}

static void process_states__add_text__repeated__files_parsed_once(void **state)
{
	struct symbolizer_stats before, after;
	struct process_states_stats rb, ra;
	struct fx *fx = *state;
	struct sym_frame f;
	void *lib;

	symbolizer__stats(fx->s, &before);
	process_states__stats(fx->ps, &rb);
	assert_true(rb.reads >= 1);
	/* the test binary, libc, libcmocka at least */
	assert_true(before.elf_opened >= 3);

	assert_int_equal(snap(fx), 0);
	/* a new mapping changes the text, yet files already seen are not reparsed */
	lib = malloc(1 << 20);
	assert_non_null(lib);
	assert_int_equal(snap(fx), 0);
	free(lib);
	symbolizer__stats(fx->s, &after);
	process_states__stats(fx->ps, &ra);
	assert_true(ra.reads == rb.reads + 2);
	assert_true(after.elf_opened == before.elf_opened);
	assert_true(after.elf_parse_failed == before.elf_parse_failed);
	assert_true(after.elf_open_failed == before.elf_open_failed);
	assert_int_equal(name_addr(fx, (uint64_t)(uintptr_t)&symbolizer_test_target, 0, &f), 0);
	assert_non_null(f.function);
}

static void process_states__add_text__more_changes_than_kept__oldest_dropped(void **state)
{
	const unsigned int nr_pages = MAPPINGS_HISTORY_MAX + 6;
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
	for (i = 0; i < nr_pages - MAPPINGS_HISTORY_MAX + 1; i++)
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

/* a snapshot holds its files: they live while any history keeps it */
static void mappings__put__last_reference__files_released(void **state)
{
	struct symbolizer_stats st;
	struct fx *fx = fx_new(getpid());
	uint64_t held;

	assert_int_equal(snap(fx), 1);
	symbolizer__stats(fx->s, &st);
	held = st.files_cached;
	assert_true(held >= 3);
	/* held: trimming lets nothing go */
	symbolizer__trim(fx->s, fixture_mono_ns() + 2 * SYMBOLIZER_IDLE_NS);
	symbolizer__stats(fx->s, &st);
	assert_int_equal(st.files_cached, held);
	/* the process goes, its state with it: the files become idle, then go */
	assert_int_equal(thread_registry__remove(fx->reg, getpid(), 1), 0);
	thread_registry__barrier(fx->reg);
	assert_int_equal(process_states__collect(fx->ps, UINT64_MAX, NULL), 1);
	symbolizer__trim(fx->s, fixture_mono_ns());
	symbolizer__stats(fx->s, &st);
	assert_int_equal(st.files_cached, held);
	symbolizer__trim(fx->s, fixture_mono_ns() + SYMBOLIZER_IDLE_NS);
	symbolizer__stats(fx->s, &st);
	assert_int_equal(st.files_cached, 0);
	assert_int_equal(st.files_evicted, held);
	assert_int_equal(st.bytes_cached, 0);
	fx_free(fx);
}

/* a snapshot of the maps text @text, read at @read_ns */
static struct mappings *snap_text(const char *text)
{
	struct proc_maps *pm = proc_maps__parse(text, strlen(text));
	struct mappings *m;

	assert_non_null(pm);
	m = mappings__new(pm, 0, 0);
	proc_maps__free(pm);
	assert_non_null(m);
	return m;
}

#define LIB_A  "7f0000000000-7f0000010000 r-xp 00000000 08:01 11 /lib/a.so\n"
#define LIB_B  "7f0000000000-7f0000010000 r-xp 00000000 08:01 12 /lib/b.so\n"
#define EXE    "400000-401000 r-xp 00000000 08:01 10 /bin/app\n"
#define IN_LIB 0x7f0000001000ull
#define IN_EXE 0x400100ull

static const char *path_at(const struct mappings_history *h, uint64_t addr, uint32_t gen,
			   enum mappings_find *why)
{
	const struct mapping *m = mappings_history__find_gen(h, addr, gen, why);

	return m ? m->path : NULL;
}

/*
 * A library swapped for another at its address, the kernel's report dating
 * the swap: each generation's samples are named from the file they ran in,
 * whether or not a read came between.
 */
static void mappings_history__find_gen__reported_swap__each_side_its_file(void **state)
{
	struct mappings_history h = {};
	enum mappings_find why;

	assert_int_equal(mappings_history__add(&h, snap_text(EXE LIB_A), 1, 100), 0);
	/* B mapped at 500 (reported), read at 520 */
	assert_int_equal(mappings_history__announce(&h, 2, 500, 0x7f0000000000, 0x7f0000010000), 0);
	/* before the read settles it, generation 2 has no file at the new range */
	assert_string_equal(path_at(&h, IN_LIB, 2, &why), "/lib/a.so");
	assert_int_equal(why, MAPPINGS_CHANGED);
	assert_string_equal(path_at(&h, IN_EXE, 2, &why), "/bin/app");
	assert_int_equal(why, MAPPINGS_FOUND);
	mappings_history__settle(&h, snap_text(EXE LIB_B), 520);
	assert_string_equal(path_at(&h, IN_LIB, 1, &why), "/lib/a.so");
	assert_int_equal(why, MAPPINGS_FOUND);
	assert_string_equal(path_at(&h, IN_LIB, 2, &why), "/lib/b.so");
	assert_int_equal(why, MAPPINGS_FOUND);
	/* sampled before the first read: the first snapshot, nothing changed before it */
	assert_string_equal(path_at(&h, IN_EXE, 0, &why), "/bin/app");
	assert_int_equal(why, MAPPINGS_FOUND);
	mappings_history__release(&h);
}

/*
 * The same swap found only by reads (no report): the first generation's
 * samples at the library cannot be told apart, named by mapping only;
 * the executable's are still named.
 */
static void mappings_history__find_gen__swap_found_by_a_read__uncertain_there_only(void **state)
{
	struct mappings_history h = {};
	enum mappings_find why;

	assert_int_equal(mappings_history__add(&h, snap_text(EXE LIB_A), 1, 100), 0);
	assert_int_equal(mappings_history__add(&h, snap_text(EXE LIB_B), 2, 1100), 0);
	assert_string_equal(path_at(&h, IN_LIB, 1, &why), "/lib/a.so");
	assert_int_equal(why, MAPPINGS_CHANGED);
	assert_string_equal(path_at(&h, IN_EXE, 1, &why), "/bin/app");
	assert_int_equal(why, MAPPINGS_FOUND);
	/* after the read: B for sure */
	assert_string_equal(path_at(&h, IN_LIB, 2, &why), "/lib/b.so");
	assert_int_equal(why, MAPPINGS_FOUND);
	mappings_history__release(&h);
}

/*
 * A library mapped where nothing was (a dlopen), reported: samples before
 * it are nowhere there (a stack cut, not another file's name); after it,
 * named even when the read that settles the generation came later.
 */
static void mappings_history__find_gen__library_mapped_late__named_from_its_read(void **state)
{
	struct mappings_history h = {};
	enum mappings_find why;

	assert_int_equal(mappings_history__add(&h, snap_text(EXE), 1, 100), 0);
	assert_int_equal(mappings_history__announce(&h, 2, 300, 0x7f0000000000, 0x7f0000010000), 0);
	mappings_history__settle(&h, snap_text(EXE LIB_A), 350);
	assert_null(path_at(&h, IN_LIB, 1, &why));
	assert_string_equal(path_at(&h, IN_LIB, 2, &why), "/lib/a.so");
	assert_int_equal(why, MAPPINGS_FOUND);
	/* a generation that left the history names its mapping, not its file */
	assert_string_equal(path_at(&h, IN_LIB, 7, &why), "/lib/a.so");
	assert_int_equal(why, MAPPINGS_GEN_DROPPED);
	mappings_history__release(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mappings_history__find__own_function__named_in_test_binary),
		cmocka_unit_test(mappings_history__find__inside_function__named),
		cmocka_unit_test(
			mappings_history__find__return_address_past_final_call__caller_named),
		cmocka_unit_test(mappings_history__find__libc_function__named_in_libc),
		cmocka_unit_test(mappings_history__find__vdso_clock_gettime__named),
		cmocka_unit_test(mappings_history__find__unmapped_address__enoent),
		cmocka_unit_test(mappings_history__find__data_address__enoent),
		cmocka_unit_test(mappings_history__find__pid_never_snapshotted__enoent),
		cmocka_unit_test(
			mappings_history__find__child_exited_before_resolving__still_named),
		cmocka_unit_test(process_states__add_text__nonexistent_pid__esrch),
		cmocka_unit_test(process_states__add_text__repeated__files_parsed_once),
	};
	const struct CMUnitTest generations[] = {
		cmocka_unit_test(mappings_history__find_gen__reported_swap__each_side_its_file),
		cmocka_unit_test(
			mappings_history__find_gen__swap_found_by_a_read__uncertain_there_only),
		cmocka_unit_test(
			mappings_history__find_gen__library_mapped_late__named_from_its_read),
	};
	const struct CMUnitTest standalone[] = {
		cmocka_unit_test(process_states__add_text__more_changes_than_kept__oldest_dropped),
		cmocka_unit_test(mappings__put__last_reference__files_released),
	};
	ssize_t n;
	int failed;

	n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	if (n <= 0)
		return 1;
	exe_path[n] = '\0';

	failed = cmocka_run_group_tests_name("mappings_self", tests, setup_symbolizer,
					     teardown_symbolizer);
	failed += cmocka_run_group_tests_name("mappings_generations", generations, NULL, NULL);
	failed += cmocka_run_group_tests_name("mappings_standalone", standalone, NULL, NULL);
	return failed;
}
