/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * outfiles - names and retention of the profile files of continuous mode.
 *
 * Files are named <dir>/ctxprof-<who>-<UTC start, YYYYmmddTHHMMSSZ>.pb.gz
 * (<who>: the pid, or "all"), and a sibling file beside each when asked
 * (the timeline: .timeline.json.gz)
 * (a suffix -1, -2... when two intervals start within one second), and only
 * the newest max_files written by this run are kept (with their siblings): a file this run did not
 * write is never deleted.
 */
#ifndef CTXPROF_OUTFILES_H
#define CTXPROF_OUTFILES_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

struct outfiles;

/**
 * outfiles__new() - @max_files 0 keeps every file.
 * Return: NULL with errno set on failure.  Pair with outfiles__free().
 */
struct outfiles *outfiles__new(const char *dir, const char *who, unsigned int max_files);

/**
 * outfiles__path() - the name for a profile starting at @start.
 * Return: the path (valid until the next call), or NULL with errno set.
 */
const char *outfiles__path(struct outfiles *o, time_t start);

/**
 * outfiles__set_sibling() - each profile has a file beside it, named as the
 * profile with ".pb.gz" replaced by @suffix (a static string), deleted with
 * it.
 */
void outfiles__set_sibling(struct outfiles *o, const char *suffix);

/**
 * outfiles__sibling() - the sibling of the last outfiles__path() file.
 * Return: the path (valid until the next call), or NULL with errno set.
 */
const char *outfiles__sibling(struct outfiles *o);

/**
 * outfiles__written() - record that the last outfiles__path() file was
 * written; deletes the oldest files beyond max_files.
 * Return: 0, or -errno of a failed deletion (the run goes on).
 */
int outfiles__written(struct outfiles *o);

/** outfiles__count() - files written so far. */
unsigned long outfiles__count(const struct outfiles *o);

void outfiles__free(struct outfiles *o);

#endif /* CTXPROF_OUTFILES_H */
