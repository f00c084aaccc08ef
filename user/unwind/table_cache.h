/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * table_cache - the unwind tables of files, for the unwinder (unwinder.h):
 * one entry per file, shared by every process that maps it, found by the
 * file's identity (device, inode, size, mtime) or its GNU build id; its
 * table built from CFI (unwind_table.h) in the background and put into the
 * BPF rows array (unwind_store.h), least recently used tables evicted when
 * the array is full.
 *
 * Builds: a file met for the first time (or whose rows were evicted) is
 * queued, never built on the spot.  table_cache__run() gives the queue one
 * slice of CPU time (CACHE_SLICE_NS), to the build that has taken least so
 * far, so a new file waits at most a slice behind a long or hostile one.
 * A started build holds its memory until it ends: at most CACHE_MAX_STARTED
 * are under way at once.  Each is bounded by unwind_table.h's per-file
 * budgets and stops within one libdw call once @cancel is set.  A file
 * whose own CFI leaves gaps is built again with its separate debug file's
 * .debug_frame (elf/debug_file.h) found in the root of a process mapping it.
 *
 * Threads: the unwinder's thread only.  The counters it updates are the
 * unwinder's (struct unwinder_stats), under the unwinder's @lock.
 */
#ifndef CTXPROF_TABLE_CACHE_H
#define CTXPROF_TABLE_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "processes/mappings.h"
#include "unwind/unwind_store.h"
#include "unwind/unwinder_stats.h"
#include "util/htable.h"

#define CACHE_SLICE_NS	  (20ull * 1000 * 1000)
#define CACHE_MAX_STARTED 2
/* builds queued at most; a file past them is built when a process maps it again */
#define CACHE_MAX_JOBS 4096

struct utable;	  /* one file's table, or the verdict that it has none */
struct build_job; /* one file's build, queued or under way */

/* one executable mapping of a process, as the unwinder copied it from its state */
struct table_cache {
	struct unwind_store *store;
	pthread_mutex_t *lock;	   /* guards @st */
	struct unwinder_stats *st; /* the unwinder's counters */
	const atomic_bool *cancel; /* set: a build under way stops */
	int verbose;		   /* say why a table could not be built */

	/* the cache's own */
	struct utable **files;
	size_t nr_files, cap_files;
	struct htable by_build_id; /* over files[] */
	struct htable by_identity; /* over files[] */
	struct utable *vdso;
	uint64_t tick;
	struct build_job **jobs;
	size_t nr_jobs, cap_jobs;
	uint64_t job_seq;
};

/**
 * table_cache__init() - an empty cache over @store, with the table of our
 * own vdso (every 64-bit process on this kernel maps the same one) built
 * now.  The fields before "the cache's own" are set by the caller.
 * Return: 0 or -errno.  Pair with table_cache__destroy().
 */
int table_cache__init(struct table_cache *c);

/** table_cache__destroy() - free every entry and build; the store keeps its rows. */
void table_cache__destroy(struct table_cache *c);

/**
 * table_cache__get() - the entry of the file @pid maps at @m: the vdso's,
 * one from the cache, or a new one whose table is queued to be built.
 * Return: the entry, or NULL for anonymous code and for a file that could
 * not be opened (counted as unreadable).  Hold it with table_cache__hold().
 */
struct utable *table_cache__get(struct table_cache *c, uint32_t pid, const struct mapping *m);

/** table_cache__hold() - an installed mapping uses @t: its rows are not evicted. */
void table_cache__hold(struct table_cache *c, struct utable *t);

/** table_cache__put() - that mapping is gone. */
void table_cache__put(struct table_cache *c, struct utable *t);

/** table_cache__building() - @t's table is queued or being built. */
bool table_cache__building(const struct utable *t);

/**
 * table_cache__mapping() - the BPF unwinder's entry for the mapping
 * [@start, @end) at file offset @pgoff of the file whose entry is @t (NULL:
 * anonymous code, or an unreadable file when @file): its table's rows and
 * bias, or frame pointers while it builds or when it has none.
 */
void table_cache__mapping(const struct utable *t, bool file, uint64_t start, uint64_t end,
			  uint64_t pgoff, struct unwind_mapping *out);

/** table_cache__compact() - forget entries nothing uses, when there are too many. */
void table_cache__compact(struct table_cache *c);

/**
 * table_cache__cancel() - drop every build queued or under way, counted as
 * cancelled: the unwinder thread, once a stop ended its loop.
 */
void table_cache__cancel(struct table_cache *c);

/** table_cache__busy() - builds are queued or under way. */
bool table_cache__busy(const struct table_cache *c);

/**
 * table_cache__run() - give the builds one slice.
 * Return: true when a build ended (its table, or its verdict, landed).
 */
bool table_cache__run(struct table_cache *c);

#endif /* CTXPROF_TABLE_CACHE_H */
