/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * maps_history - what one process image had mapped, over time, for naming
 * its frames: snapshots of its executable mappings, each with the time it
 * was read and the cached ELF file behind every mapping.
 *
 * Only executable mappings are kept: a PC or return address lies in one, and
 * anything else is garbage from a broken frame chain.  A history keeps at
 * most MAPS_HISTORY_MAX snapshots; a refresh that changes only
 * non-executable mappings (heap, stack growth) adds none.  The file behind
 * a mapping is the inode mapped, opened through /proc/PID/map_files
 * (symbolizer__file_mapped()), so a file deleted (" (deleted)") or replaced
 * since is still the one read; without the capability map_files needs, the
 * path is opened and kept only when its inode is the mapped one.  A "[vdso]"
 * mapping is named from the collector's own vDSO (symbolizer__vdso()).
 *
 * A history is part of a process's state (processes/process_state.h), which
 * owns it and serializes every call on it; it is embedded, not allocated.
 */
#ifndef CTXPROF_MAPS_HISTORY_H
#define CTXPROF_MAPS_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "symbols/symbolizer.h"

/*
 * Snapshots kept: the oldest is dropped beyond this, bounding the memory of
 * a process that keeps mapping and unmapping code (a JIT, dlopen loops).
 */
#define MAPS_HISTORY_MAX 64

struct maps_snapshot {
	struct sym_map *maps; /* sorted by start, non-overlapping */
	size_t nr;
	uint64_t taken_ns; /* CLOCK_MONOTONIC when read, the clock of sample times */
};

struct maps_history {
	char *text; /* maps text behind the latest snapshot */
	size_t text_len;
	struct maps_snapshot *snaps; /* oldest first */
	unsigned int nr;
	unsigned int cap;
};

/**
 * maps_history__refresh() - read /proc/@pid/maps and add a snapshot when its
 * executable mappings changed; ELF files of new mappings are opened through
 * @sym (symbolizer__file_mapped()).  Cheap when the text is unchanged.
 * @now_ns: CLOCK_MONOTONIC time of the read
 * Return: 1 when a snapshot was added, 0 when the executable mappings are
 * unchanged, or -errno (-ESRCH: the process is gone; earlier snapshots stay).
 */
int maps_history__refresh(struct maps_history *h, struct symbolizer *sym, pid_t pid,
			  uint64_t now_ns);

/**
 * maps_history__add_text() - the same from maps text already read (tests,
 * and callers that read /proc themselves).  @text is copied.
 */
int maps_history__add_text(struct maps_history *h, struct symbolizer *sym, pid_t pid,
			   const char *text, size_t len, uint64_t now_ns);

/**
 * maps_history__find() - the mapping holding @addr as the process had it at
 * @time_ns: the snapshot in force then is tried first (the first one for
 * earlier times: a process is sampled before its first read), then the
 * others, newest first.
 * Return: the mapping, valid until the history changes, or NULL.
 */
const struct sym_map *maps_history__find(const struct maps_history *h, uint64_t addr,
					 uint64_t time_ns);

/** maps_history__empty() - no snapshot was taken yet. */
static inline int maps_history__empty(const struct maps_history *h)
{
	return !h->nr;
}

/** maps_history__release() - free what @h holds and zero it. */
void maps_history__release(struct maps_history *h);

#endif /* CTXPROF_MAPS_HISTORY_H */
