/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tracker - whole-host (or process-tree) tracking for --all and --children.
 *
 * Owns the RCU thread registry, fed by the lifecycle BPF ring and a /proc
 * scan at start, and a thread that applies lifecycle events as they come.
 * On each exec and new process it snapshots the process's mappings (under
 * the symbolizer's lock), so a process that exits before the export is
 * still symbolized, and it keeps the process's labels (name, container id)
 * until the export after its exit.  With --children it adds every new
 * descendant of the root process to the sampler's pid filter.
 */
#ifndef CTXPROF_TRACKER_H
#define CTXPROF_TRACKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "symbols/symbolizer.h"

#define TRACKER_CONTAINER_ID_LEN 64

struct tracker;

struct tracker_opts {
	pid_t root;		   /* with children: the root of the tree; else 0 (--all) */
	bool children;		   /* profile root and its descendants only */
	int pid_map_fd;		   /* with children: the sampler's pid filter map */
	const char *btf_path;	   /* kernel BTF override, may be NULL */
	struct symbolizer *sym;	   /* shared with the exporter ... */
	pthread_mutex_t *sym_lock; /* ... under this lock */
};

struct tracker_stats {
	uint64_t processes;   /* live processes in the registry */
	uint64_t threads;     /* live threads */
	uint64_t snapshots;   /* mapping snapshots taken on exec/fork */
	uint64_t tracked;     /* with children: processes added to the filter */
	uint64_t events;      /* lifecycle records applied */
	uint64_t dropped;     /* lifecycle records lost in BPF (ring full, ...) */
	uint64_t labels_kept; /* processes whose labels are kept for export */
};

/**
 * tracker__start() - open the lifecycle programs, scan /proc, start the
 * tracking thread.
 * Return: the tracker, or NULL with errno set and a reason in @err.
 * Pair with tracker__free().
 */
struct tracker *tracker__start(const struct tracker_opts *opts, char *err, size_t err_len);

/**
 * tracker__labels() - the name and container id of process @pid (also of
 * one that exited since the last export).
 * Return: 0, or -ENOENT when the process was never seen.
 */
int tracker__labels(struct tracker *t, pid_t pid, char comm[16],
		    char container_id[TRACKER_CONTAINER_ID_LEN + 1]);

/**
 * tracker__exported() - an export is done: forget the labels and mapping
 * snapshots of processes that had exited before it began.
 * Call from the exporter's thread, holding no lock.
 */
void tracker__exported(struct tracker *t);

void tracker__stats(struct tracker *t, struct tracker_stats *st);

/** tracker__free() - stop the thread, detach; accepts NULL. */
void tracker__free(struct tracker *t);

#endif /* CTXPROF_TRACKER_H */
