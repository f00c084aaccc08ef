/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symbolizer - turn sampled addresses into mappings and function names.
 *
 * User addresses: the process's mappings (/proc/PID/maps) are snapshotted
 * while it runs, and each file-backed executable mapping's ELF file is opened
 * through safe_open (inside /proc/PID/root) and parsed once, cached by
 * (device, inode) and shared by every process mapping it.  Snapshots are kept,
 * so a process that has exited, or a library that was unloaded, is still
 * symbolized from what was captured while it was mapped.
 * Kernel addresses: /proc/kallsyms, loaded once.
 *
 * A frame that cannot be named keeps its address and mapping: never a guess.
 * So a mapping whose file was deleted (" (deleted)") is not opened by path,
 * which now names another file or none; it is named only from a snapshot
 * taken while the file was still there.
 *
 * Only executable mappings are snapshotted: a PC or return address lies in
 * one, and anything else is garbage from a broken frame chain.  A pid keeps at
 * most SYMBOLIZER_MAX_SNAPSHOTS snapshots; a refresh that changes only
 * non-executable mappings adds none.  Every string handed out (function,
 * mapping_path, build_id) stays valid until symbolizer__free(): ELF files,
 * interned paths and pids are kept for the symbolizer's lifetime.
 *
 * Not thread-safe: one thread (the collector's main loop) owns it.
 */
#ifndef CTXPROF_SYMBOLIZER_H
#define CTXPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;

/*
 * Snapshots kept per pid: the oldest is dropped beyond this, bounding the
 * memory of a process that keeps mapping and unmapping code (a JIT, dlopen
 * loops).  Only snapshots whose executable mappings changed count.
 */
#define SYMBOLIZER_MAX_SNAPSHOTS 64

/* What is known about one frame; strings are owned by the symbolizer. */
struct sym_frame {
	const char *function; /* NULL when the address could not be named */
	/*
	 * file as the target sees it, "[vdso]", "[kernel.kallsyms]", "" when
	 * anonymous; NULL when unmapped
	 */
	const char *mapping_path;
	const char *build_id; /* hex, NULL when unknown */
	uint64_t map_start;   /* mapping start address (0 when unmapped) */
	uint64_t map_end;     /* one past the mapping's end */
	uint64_t map_pgoff;   /* file offset of map_start */
};

/* Counters for the run summary; every skipped input is counted here. */
struct symbolizer_stats {
	uint64_t maps_reads;	   /* /proc/PID/maps reads, unchanged ones included */
	uint64_t maps_bad_lines;   /* unparsable lines in them */
	uint64_t elf_opened;	   /* distinct ELF files parsed */
	uint64_t elf_open_failed;  /* files that could not be opened safely */
	uint64_t elf_parse_failed; /* files that were not valid ELF */
	uint64_t unmapped;	   /* user addresses in no known mapping */
	uint64_t unnamed;	   /* addresses in a mapping but with no symbol */
};

/**
 * symbolizer__new() - create a symbolizer.
 * @kernel: load /proc/kallsyms for kernel frames (0 to skip)
 * Return: the symbolizer, or NULL with errno set.  Pair with symbolizer__free().
 * Kernel symbols that cannot be loaded are not an error: kernel frames then
 * stay unnamed (see symbolizer__has_kernel()).
 */
struct symbolizer *symbolizer__new(int kernel);

void symbolizer__free(struct symbolizer *s);

/**
 * symbolizer__snapshot() - take (or refresh) the mapping snapshot of @pid
 * and parse the ELF files of its executable mappings not yet cached.
 * Cheap when nothing changed (the maps text is compared first).
 * Return: 0, or -errno (-ESRCH: the process is gone; earlier snapshots stay).
 */
int symbolizer__snapshot(struct symbolizer *s, pid_t pid);

/**
 * symbolizer__user() - resolve a user address of @pid.
 * @return_address: the address is a return address (all user frames but the
 *	first); the mapping and symbol are looked up at address - 1 so a call at
 *	the very end of a function (or mapping) is named right.
 *
 * The latest snapshot is tried first, then older ones newest first.
 * Return: 0 with @out filled (function may be NULL), or -ENOENT when no
 * snapshot of @pid has a mapping containing @addr (@out then zeroed).
 */
int symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t addr, int return_address,
		     struct sym_frame *out);

/**
 * symbolizer__kernel() - resolve a kernel address (at address - 1 when
 * @return_address).
 * Return: 0 with @out filled (mapping "[kernel.kallsyms]", map_start, map_end
 * and map_pgoff 0, function may be NULL).
 */
int symbolizer__kernel(struct symbolizer *s, uint64_t addr, int return_address,
		       struct sym_frame *out);

/**
 * symbolizer__forget() - drop every snapshot of @pid (a process that exited
 * and was exported), so a whole-host run stays bounded.  The ELF cache is
 * kept: other processes map the same files.
 */
void symbolizer__forget(struct symbolizer *s, pid_t pid);

/** symbolizer__knows() - a snapshot of @pid exists. */
bool symbolizer__knows(const struct symbolizer *s, pid_t pid);

/** symbolizer__has_kernel() - kallsyms were loaded. */
int symbolizer__has_kernel(const struct symbolizer *s);

/** symbolizer__stats() - counters since creation. */
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st);

#endif /* CTXPROF_SYMBOLIZER_H */
