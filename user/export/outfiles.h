/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * outfiles - names and retention of the profile files of continuous mode,
 * and the files that could not be written yet.
 *
 * Files are named <dir>/ctxprof-<who>-<UTC start, YYYYmmddTHHMMSSZ>.pb.gz
 * (<who>: the pid, or "all"), and a sibling file beside each when asked
 * (the timeline: .timeline.json.gz)
 * (a suffix -1, -2... when two intervals start within one second), and only
 * the newest max_files written by this run are kept (with their siblings): a file this run did not
 * write is never deleted.
 *
 * outqueue - a document (profile or timeline) whose write failed (disk
 * full, directory gone) is kept in memory, gzipped as it would be on disk,
 * while all that is kept fits in a bound (OUTQUEUE_MAX_BYTES: 64 MiB, a few
 * intervals of a busy host), and written again, oldest first, before the
 * next one; one that does not fit is dropped, and so is what is still kept
 * when the collector stops.  Every attempt, late write and drop is counted,
 * and the samples of the profiles dropped too, so that taken = in files +
 * dropped still holds.
 *
 * Main thread (the exporter's); no locks.
 */
#ifndef CTXPROF_OUTFILES_H
#define CTXPROF_OUTFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct outfiles;
struct output_keep;

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
 * outfiles__written() - record that profile @path (an outfiles__path()
 * name) was written; deletes the oldest files beyond max_files.
 * Return: 0, or -errno of a failed deletion (the run goes on).
 */
int outfiles__written(struct outfiles *o, const char *path);

/** outfiles__count() - files written so far. */
unsigned long outfiles__count(const struct outfiles *o);

void outfiles__free(struct outfiles *o);

/* what the documents kept in memory may take at most, in all */
#define OUTQUEUE_MAX_BYTES ((size_t)64 << 20)

struct outqueue_stats {
	uint64_t written;	  /* files written, at the first attempt or a later one */
	uint64_t failed;	  /* write attempts that failed, first or again */
	uint64_t kept;		  /* documents kept in memory after a failed write */
	uint64_t written_late;	  /* of those, written by a later attempt */
	uint64_t dropped;	  /* documents given up: not kept, or still kept at the end */
	uint64_t dropped_samples; /* the samples of the profiles given up */
	uint64_t pending;	  /* documents kept now */
	uint64_t pending_bytes;	  /* their bytes */
	size_t max_bytes;	  /* the bound on those */
	int last_err;		  /* the latest failure's -errno; 0: none */
};

struct outqueue;

/**
 * outqueue__new() - an empty queue keeping at most @max_bytes; profiles it
 * writes are recorded in @files (NULL: none, one file without --interval).
 * Return: NULL with errno set.  Pair with outqueue__free().
 */
struct outqueue *outqueue__new(struct outfiles *files, size_t max_bytes);

/**
 * outqueue__keep() - set @k up for output_write(): as much as the queue can
 * still take.
 */
void outqueue__keep(const struct outqueue *q, struct output_keep *k);

/**
 * outqueue__done() - the outcome of writing a document to @path (@err, 0:
 * written), @k the output_keep it was written with: a document kept there
 * is queued (the queue takes @k->buf), else it is dropped.
 * @profile: a profile (recorded in the outfiles, its samples counted when
 *	dropped), not a timeline
 * @samples: the profile's samples
 * Return: true when the document was written or kept, false when dropped.
 */
bool outqueue__done(struct outqueue *q, const char *path, bool profile, uint64_t samples, int err,
		    struct output_keep *k);

/**
 * outqueue__retry() - write the kept documents, oldest first, up to the
 * first that fails again (the ones after it wait for the next call).
 * @profiles, @samples: incremented by the profiles written and their samples
 * Return: 0, or the -errno of the write that failed.
 */
int outqueue__retry(struct outqueue *q, uint64_t *profiles, uint64_t *samples);

/** outqueue__drop_all() - give up every kept document (at the end), counted. */
void outqueue__drop_all(struct outqueue *q);

/** outqueue__stats() - the counters; see struct outqueue_stats. */
void outqueue__stats(const struct outqueue *q, struct outqueue_stats *st);

/** outqueue__free() - frees what is still kept, uncounted; accepts NULL. */
void outqueue__free(struct outqueue *q);

#endif /* CTXPROF_OUTFILES_H */
