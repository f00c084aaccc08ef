/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * file_id - a file's identity as fstat() gives it: the same device, inode,
 * size and times are taken for the same content (a file rewritten in place
 * changes its mtime, one replaced its inode).  What the symbolizer caches
 * symbols under, the unwinder tables under, and what a mapping records of
 * the file its resolver found behind it (processes/mappings.h).
 * No state; any thread.
 */
#ifndef CTXPROF_FILE_ID_H
#define CTXPROF_FILE_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include "util/hash.h"

struct file_id {
	uint64_t dev;
	uint64_t ino; /* 0: no file known */
	int64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
};

static inline struct file_id file_id_of(const struct stat *st)
{
	return (struct file_id){
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = st->st_size,
		.mtime_ns = st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec,
		.ctime_ns = st->st_ctim.tv_sec * 1000000000ll + st->st_ctim.tv_nsec,
	};
}

static inline uint32_t file_id_hash(const struct file_id *id)
{
	uint64_t w[5] = {id->dev, id->ino, (uint64_t)id->size, (uint64_t)id->mtime_ns,
			 (uint64_t)id->ctime_ns};

	return (uint32_t)hash_words(0, w, 5);
}

static inline bool file_id_eq(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/*
 * file_id_set - file identities remembered for a verdict ("not a Go
 * program"), at most @max: past it the set starts over (a verdict lost is
 * an open done again, never a wrong answer).  One thread at a time.
 */
struct file_id_set;

/** file_id_set__new() - an empty set of at most @max ids; NULL with errno set. */
struct file_id_set *file_id_set__new(size_t max);

/** file_id_set__free() - accepts NULL. */
void file_id_set__free(struct file_id_set *set);

/** file_id_set__add() - remember @id (ino 0: ignored); an allocation failure forgets it. */
void file_id_set__add(struct file_id_set *set, const struct file_id *id);

/** file_id_set__has() - whether @id was added (ino 0: never). */
bool file_id_set__has(const struct file_id_set *set, const struct file_id *id);

#endif /* CTXPROF_FILE_ID_H */
