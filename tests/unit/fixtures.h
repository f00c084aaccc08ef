/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Fixtures shared by the unit tests (tests/unit/test_*.c): what several test
 * files set up the same way.  Linked into every unit test binary
 * (tests/unit/fixtures.mk).  Failures are cmocka failures; include
 * <cmocka.h> and its prerequisites before this header.
 */
#ifndef CTXPROF_TEST_FIXTURES_H
#define CTXPROF_TEST_FIXTURES_H

#include <stddef.h>
#include <stdint.h>
#include "processes/process_state.h"
#include "processes/thread_registry.h"
#include "symbols/symbolizer.h"

/* --- privileges */

/**
 * fixture_require_root() - skip the running test, printing why, unless the
 * process is root.  @what: what the test needs root for.
 */
void fixture_require_root(const char *what);

/* --- parsers of untrusted text */

/**
 * fixture_exact_copy() - @len bytes of @text in a buffer of exactly that
 * length (1 byte for 0): no NUL terminator for a parser to lean on, so a
 * read past the end shows up under ASan.  The caller frees it.
 */
void *fixture_exact_copy(const void *text, size_t len);

/* --- temporary files */

/**
 * fixture_tmpdir() - a new private directory /tmp/ctxprof-@name.XXXXXX.
 * Return: its path; free it with fixture_tmpdir_remove().
 */
char *fixture_tmpdir(const char *name);

/** fixture_tmpdir_remove() - remove @dir and everything below it; free @dir.  Accepts NULL. */
void fixture_tmpdir_remove(char *dir);

/**
 * fixture_put() - write the printf-style text into @dir/@rel, creating the
 * directories on the way.
 */
void fixture_put(const char *dir, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * fixture_read_file() - all of @path in a malloc()ed buffer (1 byte for an
 * empty file) the caller frees; its length in *@len.
 */
void fixture_read_file(const char *path, uint8_t **buf, size_t *len);

/**
 * fixture_trim() - @s without its leading blanks and trailing blanks and
 * newline (cut in place): a field of what a tool (nm, readelf) printed.
 */
char *fixture_trim(char *s);

/**
 * fixture_hostile_elf() - write one of tests/hostile_elf.py's hostile ELF
 * files into @dir/@name: @args are its arguments ("cfi-slow --bytes 65536").
 * Return: the path (static storage: copy it before the next call).
 */
const char *fixture_hostile_elf(const char *dir, const char *name, const char *args);

/* --- the thread registry */

/**
 * fixture_registry_new() - register the calling thread as a registry user
 * and create a registry with @opts (may be NULL).  Pair with
 * fixture_registry_free().
 */
struct thread_registry *fixture_registry_new(const struct thread_registry_opts *opts);

/** fixture_registry_free() - free @r and unregister the calling thread. */
void fixture_registry_free(struct thread_registry *r);

/**
 * fixture_registry_with_states() - fixture_registry_new() for a registry
 * whose images keep their states in @ps (process_states_retire() as the
 * state destructor).  Pair with fixture_registry_free(), then free @ps.
 */
struct thread_registry *fixture_registry_with_states(struct process_states *ps);

/* cmocka setup/teardown: *state is a registry with default options */
int fixture_registry_setup(void **state);
int fixture_registry_teardown(void **state);

/**
 * fixture_add_process() - insert process @pid with its one thread (the
 * leader, tid @pid), child of pid 1.
 * @cgroup: may be NULL; a container id in it becomes the image's
 * Return: thread_registry__insert()'s.
 */
int fixture_add_process(struct thread_registry *r, uint32_t pid, uint64_t start, const char *comm,
			const char *cgroup, uint32_t exec_id);

/**
 * fixture_exec() - process @pid (its leader) exec'd @comm, image @exec_id.
 * Return: thread_registry__exec()'s.
 */
int fixture_exec(struct thread_registry *r, uint32_t pid, uint64_t start, const char *comm,
		 uint32_t exec_id);

/* a thread, its process and image copied out of a read-side section */
struct fixture_thread {
	int found;
	struct thread_info t;	  /* ppid read with thread_info__ppid(); do not follow proc */
	struct process_info p;	  /* ppid read with process_info__ppid(); do not follow image */
	struct process_image img; /* the scalars; exe, cgroup and state are NULL */
	char exe[128];
	char cgroup[128];
};

/** fixture_look() - the thread @tid as the registry has it (found 0: none). */
struct fixture_thread fixture_look(struct thread_registry *r, uint32_t tid);

/** fixture_mono_ns() - CLOCK_MONOTONIC now, the clock of sample and retire times. */
uint64_t fixture_mono_ns(void);

/* --- process states */

/**
 * fixture_states_new() - a process state set whose snapshots get their files
 * from @sym (the collector's wiring).  Pair with process_states__free().
 */
struct process_states *fixture_states_new(struct symbolizer *sym);

/**
 * fixture_map_code() - give @st one mapping snapshot: the executable mapping
 * of this process that holds @addr, moved by @shift bytes (the same file at
 * another address: another image's layout), its file opened as our own
 * pid's through @ps's resolver.
 * @path: the mapping's path as written in the snapshot; NULL: the real one
 */
void fixture_map_code(struct process_states *ps, struct process_state *st, uint64_t addr,
		      int64_t shift, const char *path);

/* --- /proc/kallsyms */

/** fixture_kallsyms_addr() - the address /proc/kallsyms prints for @name, or 0. */
uint64_t fixture_kallsyms_addr(const char *name);

/* --- PLT stubs, as binutils names them */

struct fixture_plt_stub {
	uint64_t addr;
	char name[1024]; /* "NAME@plt" */
};

/**
 * fixture_plt_stubs() - the stubs @objdump (objdump, or another
 * architecture's) labels "<NAME@plt>" in the .plt, .plt.sec and .plt.got of
 * @path (the lazy PLT0 left out), in its order.
 * Return: them (caller frees), *@nr set.
 */
struct fixture_plt_stub *fixture_plt_stubs(const char *objdump, const char *path, size_t *nr);

/* --- the reference pprof tool */

/**
 * fixture_pprof_tool() - the pprof tool named by $PPROF (tests/run.sh sets
 * it).  Return: its path, or NULL after printing why (the caller skips).
 */
const char *fixture_pprof_tool(void);

/**
 * fixture_run_pprof() - run "$PPROF @args @file", capturing stdout and stderr.
 * Return: the output (caller frees); *@status gets the exit status.
 */
char *fixture_run_pprof(const char *tool, const char *args, const char *file, int *status);

/**
 * fixture_pprof_samples() - the samples of "pprof -raw" output @raw, one per
 * line, location ids replaced by their function's name (a location without
 * one by its address) and label lines appended after " | ":
 * "3 30000000: compute main | thread_name:[worker] | pid:[42]\n".
 * Return: the text (caller frees).
 */
char *fixture_pprof_samples(const char *raw);

/** fixture_assert_contains() - fail, showing @haystack, unless it contains @needle. */
void fixture_assert_contains(const char *haystack, const char *needle);

#endif /* CTXPROF_TEST_FIXTURES_H */
