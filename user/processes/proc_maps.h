/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * proc_maps - parse /proc/PID/maps.
 *
 * The text is untrusted (a process controls its mapping names, and a path may
 * contain spaces or " (deleted)").  Malformed lines are skipped and counted,
 * never fatal; sizes are capped.
 *
 * Threads: no shared state: a struct proc_maps belongs to whoever read or
 * parsed it, on any thread, and is only read afterwards.
 */
#ifndef CTXPROF_PROC_MAPS_H
#define CTXPROF_PROC_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_MAPS_MAX_TEXT (64u << 20) /* refuse /proc/PID/maps larger than this */
#define PROC_MAPS_MAX_PATH 4096

#define PROC_MAP_R 1u
#define PROC_MAP_W 2u
#define PROC_MAP_X 4u
#define PROC_MAP_P 8u /* private (copy on write) */

struct proc_map {
	uint64_t start; /* first address */
	uint64_t end;	/* one past the last address */
	uint64_t pgoff; /* file offset of start */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t perms; /* PROC_MAP_* */
	int deleted;	/* path ended in " (deleted)" (stripped from path) */
	char *path;	/* "" for anonymous; "[vdso]" etc. for special mappings */
};

struct proc_maps {
	struct proc_map *maps; /* sorted by start, non-overlapping as the kernel gives them */
	size_t nr;
	size_t nr_bad_lines; /* lines that could not be parsed */
	char *strings;	     /* private: backing store of every path */
};

/**
 * proc_maps__parse() - parse the text of a maps file.
 * @text: not necessarily NUL-terminated; may be NULL when @len is 0
 *
 * Bad lines are skipped and counted in nr_bad_lines: a missing field, bad
 * hex or permissions, a number that overflows, start >= end, a path of
 * PROC_MAPS_MAX_PATH bytes or more, an embedded NUL, a last line without its
 * '\n' (the text was cut), and a mapping overlapping an earlier one.  Text
 * past PROC_MAPS_MAX_TEXT is ignored.  Unsorted input is sorted.
 * Return: the mappings, or NULL with errno set (ENOMEM only).
 * Pair with proc_maps__free().
 */
struct proc_maps *proc_maps__parse(const char *text, size_t len);

/**
 * proc_maps__read() - read and parse /proc/@pid/maps.
 * Return: the mappings, or NULL with errno set (ESRCH when the process is gone).
 */
struct proc_maps *proc_maps__read(pid_t pid);

/**
 * proc_maps__read_text() - read /proc/@pid/maps whole, unparsed; when it is
 * empty because the thread group leader exited while others run, the maps of
 * one of those threads (/proc/@pid/task/TID/maps, the same address space).
 * @text: set to a malloc()ed buffer the caller frees (not NUL-terminated)
 * @len: set to its length
 * Return: 0, or -errno: -ESRCH when the process is gone, -EFBIG when the text
 * exceeds PROC_MAPS_MAX_TEXT.
 */
int proc_maps__read_text(pid_t pid, char **text, size_t *len);

/** proc_maps__dup() - a copy of @pm; NULL (ENOMEM).  Pair with proc_maps__free(). */
struct proc_maps *proc_maps__dup(const struct proc_maps *pm);

/** proc_maps__free() - accepts NULL. */
void proc_maps__free(struct proc_maps *pm);

/**
 * proc_maps__find() - the mapping containing @addr, by binary search.
 * Return: the mapping, or NULL.
 */
const struct proc_map *proc_maps__find(const struct proc_maps *pm, uint64_t addr);

#endif /* CTXPROF_PROC_MAPS_H */
