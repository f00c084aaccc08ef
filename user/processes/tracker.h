/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tracker - who runs where: keeps the RCU thread registry current, from the
 * lifecycle BPF ring and a /proc scan at start, on a thread of its own that
 * applies lifecycle events as they come (the registry's writer).  Runs in
 * every mode: the registry is where the collector keeps what it knows of
 * each process (process_state.h).
 *
 * On an exec or a new process it wants profiled (every process with --all,
 * the tree with --children, the target with --pid) it creates the image's
 * state and snapshots its mappings at once, so a process that exits before
 * the export is still symbolized.  With --children it adds every new
 * descendant of the root process to the sampler's pid filter.
 *
 * Threads: tracker__open(), __run(), __stats(), __check_cpus(),
 * __set_mapping_opener() and __free() on the main thread (__run() before
 * the other threads start: its /proc scan makes the main thread the
 * registry's writer until it returns); tracker__heartbeat() and
 * tracker__wants() from any thread; the rest runs on the tracking thread,
 * the registry's only writer afterwards.
 */
#ifndef CTXPROF_TRACKER_H
#define CTXPROF_TRACKER_H

#include <stdbool.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>
#include "processes/process_state.h"
#include "processes/thread_registry.h"

struct tracker;

struct tracker_opts {
	pid_t root;		     /* --pid, --children: the target (the tree's root); 0: --all */
	bool children;		     /* profile root and its descendants */
	int pid_map_fd;		     /* with children: the sampler's pid filter map */
	const char *btf_path;	     /* kernel BTF override, may be NULL */
	struct thread_registry *reg; /* filled by the tracker; freed by the caller after it */
	struct process_states *states; /* the per-process states the registry keeps */
	struct traces *tl; /* per-thread traces: exits of traced threads go there; NULL: none */
};

struct tracker_stats {
	uint64_t processes;	 /* live processes in the registry */
	uint64_t threads;	 /* live threads */
	uint64_t snapshots;	 /* mapping snapshots taken on exec/fork */
	uint64_t proc_reads;	 /* execs (and forks into another cgroup) completed from /proc */
	uint64_t exe_known;	 /* execs of a file read before: no /proc read */
	uint64_t tracked;	 /* with children: processes added to the filter */
	uint64_t events;	 /* lifecycle records applied */
	uint64_t dropped;	 /* lifecycle records lost in BPF (ring full, ...) */
	uint64_t retired;	 /* process states kept past their exit or exec for the export */
	bool mapping_events_on;	 /* the kernel reports new executable mappings */
	uint64_t mapping_events; /* new executable mappings it reported */
	uint64_t mapping_events_lost; /* reports lost (its ring full, malformed, our batch full) */
	uint64_t mapping_events_gaps; /* CPUs whose reports had a gap (offline, then back) */
};

/**
 * tracker__start() - open the lifecycle programs, scan /proc into
 * opts->reg, start the tracking thread.  The calling thread must be a
 * registered registry thread.
 * Return: the tracker, or NULL with errno set and a reason in @err.
 * Pair with tracker__free().
 */
struct tracker *tracker__start(const struct tracker_opts *opts, char *err, size_t err_len);

/**
 * tracker__open() - the first half of tracker__start(): load and attach the
 * lifecycle programs (what needs CAP_BPF and CAP_PERFMON), no thread yet;
 * events queue in the ring until tracker__run().
 * Return: the tracker, or NULL with errno set and a reason in @err.
 */
struct tracker *tracker__open(const struct tracker_opts *opts, char *err, size_t err_len);

/**
 * tracker__run() - the second half: scan /proc, start the tracking thread.
 * Registered registry thread; once.
 * Return: 0 or -errno with a reason in @err (tracker__free() still due).
 */
int tracker__run(struct tracker *t, char *err, size_t err_len);

/**
 * tracker__heartbeat() - a count the tracking thread bumps at every poll of
 * the lifecycle ring (at least every 20 ms while it runs).  Any thread.
 */
uint64_t tracker__heartbeat(struct tracker *t);

/** tracker__wants() - whether process @pid is profiled (mode and tree). */
bool tracker__wants(struct tracker *t, uint32_t pid);

void tracker__stats(struct tracker *t, struct tracker_stats *st);

/*
 * The kernel's reports of new executable mappings (processes/mmap_events.h)
 * come from an event per online CPU.  tracker__check_cpus(): main thread,
 * each second, with the online CPUs: a CPU that went has its event closed,
 * one that came back gets a new one, through the opener set with
 * tracker__set_mapping_opener() (a process that kept the capability, forked
 * at start with tracker__mapping_attr()).  All three do nothing when the
 * reports could not be had (mapping_events_on false).
 */
int tracker__check_cpus(struct tracker *t, const bool *online, int n);
const struct perf_event_attr *tracker__mapping_attr(const struct tracker *t);
void tracker__set_mapping_opener(struct tracker *t, int (*fn)(void *ctx, int cpu), void *ctx);

/** tracker__free() - stop the thread, detach; accepts NULL. */
void tracker__free(struct tracker *t);

#endif /* CTXPROF_TRACKER_H */
