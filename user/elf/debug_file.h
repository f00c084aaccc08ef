/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * debug_file - a stripped file's separate debug file, found as gdb and perf
 * find it, inside the target's root:
 *   1. by build id: /usr/lib/debug/.build-id/ab/cdef....debug
 *   2. by .gnu_debuglink name, in <dir>/, <dir>/.debug/ and
 *      /usr/lib/debug/<dir>/, where <dir> is the file's directory; the
 *      candidate's CRC32 must be the one the link gives.
 * A candidate is used only when its build id equals the file's (when the
 * file has one), it is not the file itself, and the caller's own test
 * accepts it (the symbolizer's: its .symtab names at least one function).
 * Its addresses are the file's ELF virtual addresses.
 *
 * Every candidate is opened with safe_open_in_root(): a container's debug
 * file is the container's, and no path it controls leads out of its root.
 * Candidates are read through elf_file, like every hostile ELF file;
 * candidates refused are counted in the result, never fatal.
 *
 * Threads: no state; any thread; what it returns is the caller's.
 */
#ifndef CTXPROF_DEBUG_FILE_H
#define CTXPROF_DEBUG_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct elf_file;

#define DEBUG_FILE_ROOT "/usr/lib/debug"

/* How the search went, for the symbolizer's counters. */
struct debug_file_result {
	bool by_build_id;	   /* the file used was found by build id */
	unsigned int tried;	   /* candidates that existed */
	unsigned int build_id_bad; /* refused: another build id */
	unsigned int crc_bad;	   /* refused: CRC32 not the debuglink's */
	unsigned int unusable;	   /* refused: not ELF, unreadable, or not the caller's */
};

/* What the file whose debug file is wanted says about it. */
struct debug_file_key {
	const uint8_t *build_id; /* the file's GNU build id; NULL when it has none */
	size_t build_id_len;
	const char *debuglink; /* its .gnu_debuglink name; NULL when it has none */
	uint32_t crc;	       /* the CRC32 .gnu_debuglink gives */
};

/**
 * debug_file_usable_fn - the caller's test of a candidate that passed the
 * checks (build id, CRC, not the file itself).
 * Return: 1 to take it, 0 to refuse it (counted as unusable), -ENOMEM.
 */
typedef int (*debug_file_usable_fn)(struct elf_file *cand, void *ctx);

/**
 * debug_file__open() - find and check the debug file of a file.
 * @root_fd: the target's root (proc_root_open())
 * @path: the file's path as the target sees it (its directory is searched)
 * @key: what the file says of its debug file
 * @self: the file's stat, so that a debuglink naming the file itself is skipped
 * @usable: the caller's test, or NULL to take any candidate that passes the checks
 * @res: filled with how the search went
 *
 * Takes no lock.  A debuglink candidate is read whole for its CRC (up to
 * ELF_FILE_MAX_SIZE).
 * Return: the debug file, open (pair with elf_file__free()), or NULL with
 * errno set: ENOENT when no candidate was usable, ENOMEM.
 */
struct elf_file *debug_file__open(int root_fd, const char *path, const struct debug_file_key *key,
				  const struct stat *self, debug_file_usable_fn usable, void *ctx,
				  struct debug_file_result *res);

#endif /* CTXPROF_DEBUG_FILE_H */
