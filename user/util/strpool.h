/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * strpool - NUL-terminated strings appended back to back in one growing
 * buffer, each named by its offset: offsets survive the buffer moving,
 * pointers only once the pool stops growing.  Offset 0 is "".  The parsers
 * that build a table from text (kallsyms, proc_maps) keep their strings here
 * and hand the buffer over when done.
 * No internal locking: one thread builds a pool.
 */
#ifndef CTXPROF_STRPOOL_H
#define CTXPROF_STRPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include "util/array.h"

struct strpool {
	char *buf; /* the strings; buf[0] is "" */
	size_t len;
	size_t cap;
};

/**
 * strpool__init() - make @sp, a zeroed pool, hold "" at offset 0.
 * @first: first buffer size in bytes (it doubles as needed)
 * Return: 0 or -ENOMEM.  The caller frees sp->buf, or takes it over.
 */
static inline int strpool__init(struct strpool *sp, size_t first)
{
	int err = array_grow((void **)&sp->buf, &sp->cap, 1, 1, first);

	if (err)
		return err;
	sp->buf[0] = '\0';
	sp->len = 1;
	return 0;
}

/**
 * strpool__add() - append the @len bytes at @s (no NUL among them) and a NUL.
 * Return: 0 with *@off set (0 for an empty string, which is not appended),
 * or -ENOMEM with the pool unchanged.
 */
static inline int strpool__add(struct strpool *sp, const char *s, size_t len, size_t *off)
{
	int err;

	if (!len) {
		*off = 0;
		return 0;
	}
	err = array_grow((void **)&sp->buf, &sp->cap, sp->len + len + 1, 1, 1);
	if (err)
		return err;
	memcpy(sp->buf + sp->len, s, len);
	sp->buf[sp->len + len] = '\0';
	*off = sp->len;
	sp->len += len + 1;
	return 0;
}

/** strpool__is() - whether the string at @off is the @len bytes at @s. */
static inline bool strpool__is(const struct strpool *sp, size_t off, const char *s, size_t len)
{
	return !strncmp(sp->buf + off, s, len) && sp->buf[off + len] == '\0';
}

#endif /* CTXPROF_STRPOOL_H */
