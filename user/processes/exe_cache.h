/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * exe_cache - the path /proc/PID/exe gave for an executable file, by the
 * file as exec saw it (device and inode, from the lifecycle record) and the
 * name execve was given.  An exec of a file seen before then needs no read
 * of /proc: on a node starting programs all the time, most execs run a few
 * files (a shell loop's, a cron job's).
 *
 * The name given is part of the key: an inode freed (a package upgrade
 * replaced the file) and used again by another file is another file at
 * another name; a hard link exec'd by its other name is read once more.
 * A path is only added when a stat of the same /proc/PID/exe, taken after
 * its readlink, found the record's file: the path names that file.
 *
 * Fixed size (EXE_CACHE_SLOTS, one entry per slot: a newer one replaces an
 * older); no allocation at lookup.  Used by one thread (the lifecycle
 * thread); no locking.
 */
#ifndef CTXPROF_EXE_CACHE_H
#define CTXPROF_EXE_CACHE_H

#include <stdint.h>

#define EXE_CACHE_SLOTS 256

struct exe_cache;

/** exe_cache__new() - an empty cache; NULL with errno set. */
struct exe_cache *exe_cache__new(void);

/** exe_cache__free() - accepts NULL. */
void exe_cache__free(struct exe_cache *c);

/**
 * exe_cache__find() - the path added for this file and name, or NULL.
 * @dev: the file's device as st_dev encodes it
 * The string lives until the next exe_cache__add() or __free().
 */
const char *exe_cache__find(const struct exe_cache *c, uint64_t dev, uint64_t ino,
			    const char *filename);

/**
 * exe_cache__add() - remember @exe for this file and name.  Paths of a
 * deleted file (" (deleted)") and empty ones are not kept; nor, silently,
 * anything when memory runs out (a miss reads /proc again).
 */
void exe_cache__add(struct exe_cache *c, uint64_t dev, uint64_t ino, const char *filename,
		    const char *exe);

#endif /* CTXPROF_EXE_CACHE_H */
