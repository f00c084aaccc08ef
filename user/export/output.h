/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * output - where a profile goes, checked before profiling and written
 * without ever harming what the path names:
 *  - a regular file, new or existing: written to a hidden temporary file in
 *    the same directory (mode 0600: a profile names the host's processes),
 *    then renamed over the path, so a reader never sees half a file and a
 *    failed write leaves the old one;
 *  - "-": standard output (refused when it is a terminal);
 *  - a character device (/dev/null, a tty) or a FIFO: written in place, the
 *    device or FIFO itself is never replaced; a FIFO nobody reads is an
 *    error at write time, and a reader that stops reading for
 *    OUTPUT_STALL_MS is too, never a hang.
 * Anything else (a directory, a block device, a socket, an immutable or
 * append-only file, a directory we cannot write) is refused by
 * output_check(), before any profiling.
 *
 * No state; any thread.
 */
#ifndef CTXPROF_OUTPUT_H
#define CTXPROF_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

/* how long a write to a FIFO or device may make no progress */
#define OUTPUT_STALL_MS 10000

/**
 * output_check() - whether a profile can be written to @path.
 * Return: 0, or -errno with a one-line reason (without the path) in @err.
 */
int output_check(const char *path, char *err, size_t err_len);

/**
 * output_dir_check() - whether profiles can be created in directory @dir
 * (continuous mode): it exists, is a directory, and a file can be made in it.
 * Return: 0, or -errno with a one-line reason in @err.
 */
int output_dir_check(const char *dir, char *err, size_t err_len);

/**
 * output_write() - write to @path as described above: @fill writes the
 * content into the file descriptor it is given.
 * @fill: returns 0 or -errno
 * Return: 0 or -errno (@fill's, or the open, rename or write that failed);
 * on error no temporary file is left behind.
 */
int output_write(const char *path, int (*fill)(void *ctx, int fd), void *ctx);

/**
 * output_write_all() - write @len bytes to @fd, waiting (poll) when it is
 * non-blocking and full, at most OUTPUT_STALL_MS without progress.
 * Return: 0 or -errno (-ETIMEDOUT on a stall).
 */
int output_write_all(int fd, const void *buf, size_t len);

/**
 * output_write_gz() - gzip the @len bytes at @buf into @fd (a @fill of
 * output_write()), streaming through a fixed-size buffer.
 * Return: 0 or -errno.
 */
int output_write_gz(int fd, const void *buf, size_t len);

/*
 * output_stream - a document written piece by piece into @fd (inside a
 * @fill of output_write()), gzipped or not: memory stays one buffer
 * whatever its size.  The first error sticks: later writes return it.
 */
struct output_stream;

/** output_stream__open() - Return: the stream, or NULL (ENOMEM). */
struct output_stream *output_stream__open(int fd, bool gz);

/** output_stream__write() - Return: 0 or -errno (the first error). */
int output_stream__write(struct output_stream *o, const void *buf, size_t len);

/** output_stream__close() - finish the gzip stream, free @o. Return: 0 or the first -errno. */
int output_stream__close(struct output_stream *o);

#endif /* CTXPROF_OUTPUT_H */
