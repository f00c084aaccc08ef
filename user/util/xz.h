/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * xz - decompress one .xz stream held in memory, with hard limits: the input
 * is hostile (a target's .gnu_debugdata section), so a stream that would
 * grow past the caller's cap (a decompression bomb) or ask the decoder for
 * more than XZ_MEMLIMIT of memory is refused, never followed.
 * Pure function over its arguments (liblzma keeps no global state): any thread.
 */
#ifndef CTXPROF_XZ_H
#define CTXPROF_XZ_H

#include <stddef.h>

/* decoder memory allowed: xz -9 (64 MiB dictionary) needs about 65 MiB */
#define XZ_MEMLIMIT (80u << 20)

/**
 * xz_decompress() - decompress the single .xz stream in @in[@len].
 * @max_out: refuse output longer than this many bytes
 * @out: set to a malloc()ed buffer the caller frees (NULL on error)
 * @out_len: set to its length
 *
 * Trailing bytes after the stream, concatenated streams and stream padding
 * are refused along with corrupt or truncated data.
 * Return: 0, or -errno: -EFBIG when the output passes @max_out or the
 * decoder would need more than XZ_MEMLIMIT; -EINVAL when the data is not a
 * valid, complete .xz stream (or its check fails); -ENOMEM.
 */
int xz_decompress(const void *in, size_t len, size_t max_out, void **out, size_t *out_len);

#endif /* CTXPROF_XZ_H */
