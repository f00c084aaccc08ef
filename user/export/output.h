/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * output - where a profile goes, checked before profiling and written
 * without ever writing through what the path names.  An output path is
 * hostile: the collector runs as root and other users may own the
 * directory it names (/tmp), or plant a FIFO, a device or a symbolic link
 * at the name before the collector starts or between two intervals.
 *
 *  - "-": standard output (refused when it is a terminal);
 *  - any other path names a regular file, new or existing: the document is
 *    written to a temporary file in its directory, OUTPUT_TMP_PREFIX, 16 hex
 *    digits, OUTPUT_TMP_SUFFIX (created O_EXCL | O_NOFOLLOW, mode 0600: a
 *    profile names the host's processes, and flock()ed while it is written),
 *    then renamed over the name: the file named is replaced, never opened
 *    for writing, a reader never sees half a file, a failed write leaves
 *    the old one.
 * Refused, before profiling (output_check()) and at every write: a FIFO, a
 * device, a socket or a directory at the name; a name that is a symbolic
 * link in a directory other users can write to (group or world writable, or
 * owned by someone else: they may have planted it), whatever it points to;
 * in a sticky directory, a file another user owns; an immutable or
 * append-only file, a directory where no file can be created (the check).
 * A symbolic link in a directory only we (or root) can write is followed
 * (OUTPUT_MAX_LINKS at most), and the file it ends at is checked the same
 * way.
 *
 * A killed collector leaves its temporary file: output_clean_temps() at the
 * next start removes those in the directory, and only those: regular files
 * named as ours, owned by us, that no running collector holds (flock).
 *
 * A document that cannot be written (disk full, directory gone) can be kept
 * whole in memory (struct output_keep) to be written again later: the
 * caller holds what it keeps (export/outfiles.h).
 *
 * No state; any thread.
 */
#ifndef CTXPROF_OUTPUT_H
#define CTXPROF_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* temporary files: OUTPUT_TMP_PREFIX, 16 lowercase hex digits, OUTPUT_TMP_SUFFIX */
#define OUTPUT_TMP_PREFIX ".ctxprof-"
#define OUTPUT_TMP_SUFFIX ".tmp"

/* symbolic links followed from an output path, at most */
#define OUTPUT_MAX_LINKS 8

/* how long a write to standard output may make no progress */
#define OUTPUT_STALL_MS 10000

/**
 * output_check() - whether a profile can be written to @path.
 * Return: 0, or -errno with a one-line reason (without the path) in @err:
 * -EISDIR (a directory), -ELOOP (a symbolic link others may have planted, or
 * too many), -EINVAL (a FIFO, a device, a socket), -EPERM (another user's
 * file in a sticky directory; immutable or append-only), or the error of
 * the directory.
 */
int output_check(const char *path, char *err, size_t err_len);

/**
 * output_dir_check() - whether profiles can be created in directory @dir
 * (continuous mode): it exists, is a directory, and a file can be made in it.
 * Return: 0, or -errno with a one-line reason in @err.
 */
int output_dir_check(const char *dir, char *err, size_t err_len);

/**
 * output_clean_temps() - remove the temporary files a killed collector left
 * where @path's would go: @path names an output file, or with @is_dir the
 * directory itself.  Only regular files named as ours, owned by our
 * effective user, that no process holds locked.
 * @removed: set to how many were removed
 * Return: 0, or -errno when the directory cannot be read.
 */
int output_clean_temps(const char *path, bool is_dir, unsigned int *removed);

/* where a document's bytes go (a @fill of output_write() writes into it) */
struct output_sink;

/**
 * output_sink__write() - append @len bytes to the document.
 * Return: 0 or -errno: stop filling then.
 */
int output_sink__write(struct output_sink *s, const void *buf, size_t len);

/*
 * What output_write() keeps of a document it could not write: the whole
 * document, as it would be in the file, when it fits in @max bytes.
 */
struct output_keep {
	size_t max;   /* bytes it may keep; 0: keep nothing */
	uint8_t *buf; /* set when kept (malloc()ed: the caller frees), else NULL */
	size_t len;
};

/**
 * output_write() - write a document to @path as described above: @fill
 * writes it into the sink it is given.
 * @fill: returns 0 or -errno
 * @keep: NULL, or where a document that could not be written is kept: the
 *	file's write failed (ENOSPC...), or no temporary file could be made,
 *	or the rename failed; then @fill writes into memory (up to @keep->max
 *	bytes) and the document is handed over whole in @keep.  Never when
 *	@fill itself failed.
 * Return: 0 or -errno (@fill's, or the check, open, write or rename that
 * failed); on error no temporary file is left behind.
 */
int output_write(const char *path, int (*fill)(void *ctx, struct output_sink *s), void *ctx,
		 struct output_keep *keep);

/**
 * output_to_memory() - @fill's document into one malloc()ed buffer instead
 * of a file (an HTTP answer, an upload).
 * @max: its size at most: past it, -EFBIG
 * @buf, @len: the document (the caller frees @buf); NULL and 0 on error
 * Return: 0 or -errno (@fill's, -EFBIG, -ENOMEM).
 */
int output_to_memory(int (*fill)(void *ctx, struct output_sink *s), void *ctx, size_t max,
		     uint8_t **buf, size_t *len);

/**
 * output_write_gz() - gzip the @len bytes at @buf into @s (a @fill of
 * output_write()), streaming through a fixed-size buffer.
 * Return: 0 or -errno.
 */
int output_write_gz(struct output_sink *s, const void *buf, size_t len);

/*
 * output_stream - a document written piece by piece into a sink (inside a
 * @fill of output_write()), gzipped or not: memory stays one buffer
 * whatever its size.  The first error sticks: later writes return it.
 */
struct output_stream;

/** output_stream__open() - Return: the stream, or NULL (ENOMEM). */
struct output_stream *output_stream__open(struct output_sink *s, bool gz);

/** output_stream__write() - Return: 0 or -errno (the first error). */
int output_stream__write(struct output_stream *o, const void *buf, size_t len);

/** output_stream__close() - finish the gzip stream, free @o. Return: 0 or the first -errno. */
int output_stream__close(struct output_stream *o);

#endif /* CTXPROF_OUTPUT_H */
