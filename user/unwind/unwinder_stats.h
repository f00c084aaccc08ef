/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwinder_stats - the unwinder's counters (unwind/unwinder.h), kept by the
 * unwinder and its table cache (unwind/table_cache.h) under the unwinder's
 * lock, copied out by unwinder__stats().
 */
#ifndef CTXPROF_UNWINDER_STATS_H
#define CTXPROF_UNWINDER_STATS_H

#include <stdint.h>
#include "unwind/unwind_store.h"

struct unwinder_stats {
	uint64_t installs;		 /* process mappings installed (or re-installed) */
	uint64_t reinstalls;		 /* installed again when a table they waited for landed */
	uint64_t install_failed;	 /* not installed: mappings array or procs map full */
	uint64_t install_gone;		 /* not installed: the process exited first */
	uint64_t tables_built;		 /* tables built from CFI */
	uint64_t tables_from_debug_file; /* of those, from a debug file's .debug_frame */
	uint64_t tables_shared;		 /* files found in the cache (build id or identity) */
	uint64_t tables_building;	 /* files whose table is queued or being built now */
	uint64_t files_no_cfi;		 /* files without CFI: frame pointers */
	uint64_t files_unreadable;	 /* mapped files that could not be opened */
	uint64_t tables_failed;		 /* CFI that could not be built (malformed, other) */
	uint64_t tables_too_slow;	 /* refused: past UNWIND_TABLE_CPU_NS of CPU */
	uint64_t tables_too_large;	 /* refused: past UNWIND_TABLE_MEMORY or a size cap */
	uint64_t tables_cancelled;	 /* builds stopped by unwinder__stop() */
	uint64_t builds_abandoned; /* files gone before their build began: built if seen again */
	uint64_t tables_no_room;   /* tables that did not fit the rows budget */
	uint64_t tables_evicted;   /* tables dropped to make room */
	uint64_t tables_cached;	   /* tables in the store now */
	uint64_t rows;		   /* rows in the store now */
	uint64_t build_ns;	   /* CPU time spent building tables */
	uint64_t build_max_ns;	   /* the longest build's */
	struct unwind_store_stats store;
};

#endif /* CTXPROF_UNWINDER_STATS_H */
