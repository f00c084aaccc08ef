/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * debug_file - a stripped file's separate debug file, found as gdb and perf
 * find it, inside the target's root:
 *   1. by build id: /usr/lib/debug/.build-id/ab/cdef....debug
 *   2. by .gnu_debuglink name, in <dir>/, <dir>/.debug/ and
 *      /usr/lib/debug/<dir>/, where <dir> is the file's directory; the
 *      candidate's CRC32 must be the one the link gives.
 * A candidate is used only when its build id equals the file's (when the
 * file has one), it is not the file itself, and its .symtab names at least
 * one function.  Its addresses are the file's ELF virtual addresses.
 *
 * Every candidate is opened with safe_open_in_root(): a container's debug
 * file is the container's, and no path it controls leads out of its root.
 * Candidates refused are counted in the result, never fatal.
 */
#ifndef CTXPROF_DEBUG_FILE_H
#define CTXPROF_DEBUG_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct elf_syms;

#define DEBUG_FILE_ROOT "/usr/lib/debug"

/* How the search went, for the symbolizer's counters. */
struct debug_file_result {
	bool by_build_id;	   /* the file used was found by build id */
	unsigned int tried;	   /* candidates that existed */
	unsigned int build_id_bad; /* refused: another build id */
	unsigned int crc_bad;	   /* refused: CRC32 not the debuglink's */
	unsigned int unusable;	   /* refused: not ELF, unreadable, or no symbols */
};

/**
 * debug_file__open() - find, check and parse the debug file of @es.
 * @root_fd: the target's root (proc_root_open())
 * @path: the file's path as the target sees it (its directory is searched)
 * @es: the file, parsed
 * @self: the file's stat, so that a debuglink naming the file itself is skipped
 * @res: filled with how the search went
 *
 * Call only for a file without .symtab (elf_syms__has_symtab()): one with it
 * has every name a debug file would give.  Parses outside any lock: takes
 * none.  A debuglink candidate is read whole for its CRC (up to
 * SAFE_OPEN_MAX_ELF_SIZE).
 * Return: the debug file's symbols (pair with elf_syms__free()), or NULL
 * with errno set: ENOENT when no candidate was usable, ENOMEM.
 */
struct elf_syms *debug_file__open(int root_fd, const char *path, const struct elf_syms *es,
				  const struct stat *self, struct debug_file_result *res);

/**
 * debug_file__open_fd() - the same search, for a reader of the debug file's
 * other sections (the unwinder's .debug_frame): the candidate is checked the
 * same way (build id, CRC, not the file itself) but need not name functions.
 * Return: a read-only fd of the debug file (the caller closes it), or -errno:
 * -ENOENT when no candidate was usable, -ENOMEM.
 */
int debug_file__open_fd(int root_fd, const char *path, const struct elf_syms *es,
			const struct stat *self, struct debug_file_result *res);

#endif /* CTXPROF_DEBUG_FILE_H */
