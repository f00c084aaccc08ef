/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwinder - keeps the BPF unwinder's tables current (bpf/native_unwind.bpf.h).
 *
 * A thread of its own installs, for each profiled process, its executable
 * mappings with the table of the file behind each one:
 *  - a table is built once per file, from its CFI (unwind_table.h, libdw),
 *    and shared by every process that maps the file: the cache is keyed by
 *    build id, and by file identity (device, inode, size, mtime) for files
 *    without one, and the file opened is the very one mapped
 *    (/proc/PID/map_files), read through elf/elf_file.h;
 *  - the vdso's table is built from our own vdso at start (every 64-bit
 *    process on this kernel maps the same one);
 *  - code without CFI (a file without .eh_frame, JIT code) is marked for
 *    frame pointers; a file whose table cannot be built or kept is marked
 *    so too, and counted by reason (too slow, too large, failed, no room).
 * Tables fill a fixed budget of rows (the BPF array's size); when a new
 * table does not fit, the least recently used tables no process maps are
 * evicted, and one that still does not fit is counted as "no room".
 *
 * Builds never hold up installs, nor one file another: a process is
 * installed at once with the tables already known, its other mappings
 * walked by frame pointers while their files' tables are built; a build
 * runs in slices of CPU time (20 ms), the build that has taken least going
 * first, so a new file waits at most a slice behind a long or hostile one;
 * when a table lands, the processes that wait for it are installed again.
 * Each build is bounded by unwind_table.h's per-file budgets (CPU time and
 * memory; at most two builds hold memory at once) and is cancelled by
 * unwinder__stop() within one libdw call.
 *
 * When: a process gets its tables when its mappings are read (the hook of
 * process_states, set here: at exec, at start, at its first sample, and at
 * each later read that finds new code, such as a dlopen); they are removed
 * when its image goes (exec, exit: the retire hook).  A sample of a process
 * that has none yet is walked by frame pointers and counted (BPF side).
 *
 * Threads: unwinder__start() and __free() on the main thread; the hooks run
 * on whatever thread refreshes or retires a state; everything else on the
 * unwinder's own thread.
 */
#ifndef CTXPROF_UNWINDER_H
#define CTXPROF_UNWINDER_H

#include <stdbool.h>
#include <stdint.h>
#include "processes/process_state.h"
#include "processes/thread_registry.h"
#include "unwind/unwind_store.h"
#include "unwind/unwinder_stats.h"

struct unwinder;

struct unwinder_opts {
	struct unwind_store_maps maps; /* the sampler's unwind maps */
	struct process_states *states; /* whose hooks the unwinder takes */
	struct thread_registry *reg;
	int verbose; /* say why a table could not be built */
};

/**
 * unwinder__start() - take the unwind maps, build the vdso's table, start
 * the thread and set @opts->states' hooks.  Call before any process state
 * is refreshed.
 * Return: NULL with errno set and a one-line reason in @err.
 * Pair with unwinder__free().
 */
struct unwinder *unwinder__start(const struct unwinder_opts *opts, char *err, size_t err_len);

/**
 * unwinder__request() - (re)install @pid when its mappings changed since
 * its last install.  Any thread; never blocks on the builder.
 */
void unwinder__request(struct unwinder *u, uint32_t pid);

/**
 * unwinder__wait_idle() - wait until every request made so far is served
 * and every table it queued is built, or @timeout_ms passed.  Any thread
 * but the unwinder's.
 * Return: true when idle.
 */
bool unwinder__wait_idle(struct unwinder *u, int timeout_ms);

/** unwinder__stats() - any thread. */
void unwinder__stats(struct unwinder *u, struct unwinder_stats *st);

/**
 * unwinder__stop() - cancel the build under way (it stops within one libdw
 * call: UNWIND_TABLE_FDE_WORK bounds that) and stop the thread; its hooks
 * still take releases, so a registry freed after this one retires its
 * states cleanly.  Accepts NULL.
 */
void unwinder__stop(struct unwinder *u);

/**
 * unwinder__free() - stop, and free; accepts NULL.  After the registry whose
 * states it hooked is freed.  The BPF maps keep their contents.
 */
void unwinder__free(struct unwinder *u);

#endif /* CTXPROF_UNWINDER_H */
