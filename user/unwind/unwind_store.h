/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwind_store - the BPF unwinder's maps, as the collector fills them
 * (bpf/native_unwind.bpf.h, include/unwind.h):
 *  - rows: every table's rows one after another, in ranges handed out by an
 *    extents allocator (first fit: the low indexes fill first), in chunks of
 *    UNWIND_CHUNK_ROWS (include/unwind.h): a chunk's BPF array is made, by
 *    @new_chunk, the first time a range reaches into it, then written
 *    through a shared mapping; so the rows take the memory the tables use,
 *    at most the budget;
 *  - rules: the distinct rules of every table, deduplicated here; never
 *    freed (a few thousand cover a whole host);
 *  - mappings: each process's executable mappings, a sorted range each;
 *  - procs: tgid -> its range and image (the one map updated by syscall,
 *    which publishes what was written to the others before it).
 * A released range is quarantined (util/extents.h) before reuse, so a BPF
 * program still walking it never sees it rewritten.
 *
 * No locking: the unwinder's thread owns it.
 */
#ifndef CTXPROF_UNWIND_STORE_H
#define CTXPROF_UNWIND_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "unwind.h"

struct unwind_store;

/* the BPF maps (fds owned by the caller) and their sizes */
struct unwind_store_maps {
	int rows_fd; /* the array of chunks (BPF_MAP_TYPE_ARRAY_OF_MAPS) */
	int rules_fd;
	int mappings_fd;
	int procs_fd;
	uint32_t nr_rows; /* the chunks' rows in all; the others' max_entries */
	uint32_t nr_rules;
	uint32_t nr_mappings;
	uint32_t nr_procs;
	/*
	 * a new chunk: an mmapable BPF array of UNWIND_CHUNK_ROWS rows, the
	 * kind of rows_fd's inner map; its fd (the store closes it), or -errno.
	 * Made with a capability the collector no longer holds: through a
	 * child that keeps it (util/fd_opener.h)
	 */
	int (*new_chunk)(void *ctx);
	void *chunk_ctx;
};

struct unwind_store_stats {
	uint32_t rows_used, rows_cap;
	uint32_t rules_used, rules_cap;
	uint32_t mappings_used, mappings_cap;
	uint64_t chunks;       /* row chunks made */
	uint64_t chunks_cap;   /* ... at most */
	uint64_t chunk_errors; /* chunks that could not be made */
	uint64_t bytes;	       /* memory of the BPF maps: the chunks made, the others whole */
	uint64_t bytes_max;    /* ... with every chunk made: --unwind-memory */
};

/**
 * unwind_store__new() - map the arrays of @maps into our address space.
 * Return: NULL with errno set.  Pair with unwind_store__free().
 */
struct unwind_store *unwind_store__new(const struct unwind_store_maps *maps);

/** unwind_store__free() - unmap; accepts NULL.  The BPF maps stay as they are. */
void unwind_store__free(struct unwind_store *s);

/**
 * unwind_store__put_table() - copy a table's rows into the rows array.
 * @rows: sorted rows whose rule fields index @rules (the table's own rules)
 * @first: set to the index of the first row written
 * Return: 0; -ENOSPC when no range of @nr_rows is free, or a chunk it
 * reaches could not be made (evict and retry), or the rule array is full;
 * -EINVAL for an empty table; -ENOMEM.
 */
int unwind_store__put_table(struct unwind_store *s, const struct unwind_row *rows, size_t nr_rows,
			    const struct unwind_rule *rules, size_t nr_rules, uint32_t *first);

/** unwind_store__drop_table() - release rows [@first, @first + @nr_rows). */
void unwind_store__drop_table(struct unwind_store *s, uint32_t first, uint32_t nr_rows);

/**
 * unwind_store__put_proc() - install process @pid's mappings, sorted by
 * start, and point its procs entry at them (replacing any former one, whose
 * range stays its owner's to drop with unwind_store__drop_proc_range()).
 * @proc: receives the entry installed
 * Return: 0, -ENOSPC (mappings array or procs map full), -errno of the update.
 */
int unwind_store__put_proc(struct unwind_store *s, uint32_t pid, uint32_t exec_id,
			   const struct unwind_mapping *maps, uint32_t nr,
			   struct unwind_proc *proc);

/**
 * unwind_store__del_proc() - remove @pid's entry if it still is @proc (the
 * range given out for it), and release that range.
 */
void unwind_store__del_proc(struct unwind_store *s, uint32_t pid, const struct unwind_proc *proc);

/** unwind_store__drop_proc_range() - release a range unwind_store__put_proc() replaced. */
void unwind_store__drop_proc_range(struct unwind_store *s, const struct unwind_proc *proc);

/** unwind_store__largest_rows() - the longest table that would fit now. */
uint32_t unwind_store__largest_rows(struct unwind_store *s);

void unwind_store__stats(struct unwind_store *s, struct unwind_store_stats *st);

#endif /* CTXPROF_UNWIND_STORE_H */
