/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * read_capped - read a whole /proc-style file, up to a size cap.
 *
 * /proc files report size 0, so they are read in growing chunks; a file
 * larger than the cap is refused (-EFBIG) rather than read without end.
 *
 * Threads: no state; any thread.
 */
#ifndef CTXPROF_READ_CAPPED_H
#define CTXPROF_READ_CAPPED_H

#include <stddef.h>
#include <sys/types.h>

/**
 * read_capped() - read all of @path.
 * @max: refuse a file longer than this many bytes
 * @chunk: first buffer size (doubles as needed)
 * @text: set to a malloc'ed buffer (not NUL-terminated) the caller frees
 * @len: set to its length
 * Return: 0, or -errno (-EFBIG past @max; the open's errno as is).
 */
int read_capped(const char *path, size_t max, size_t chunk, char **text, size_t *len);

/**
 * read_small() - one read() of @path into @buf[@size]: a /proc or /sys file
 * that fits a buffer on the stack (what does not fit is cut).
 * Return: bytes read (0 for an empty file), or -errno.
 */
ssize_t read_small(const char *path, void *buf, size_t size);

#endif /* CTXPROF_READ_CAPPED_H */
