/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lifecycle - load bpf/lifecycle.bpf.c (fork, thread creation, exec, exit and
 * rename tracepoints) and apply its records to the thread registry.
 *
 * One ring buffer for all CPUs: the kernel reserves records in one order, so
 * a fork is always read before anything its child does.  The BPF side
 * submits without waking us unless the ring passes a quarter full;
 * lifecycle__poll() sleeps on epoll with a timeout and then drains the ring.
 *
 * The thread that polls is the registry's writer (with the /proc scan): it
 * must be registered with thread_registry__register_thread().  Start the
 * lifecycle (lifecycle__open) BEFORE proc_scan__run(), so no thread can be
 * born or die unseen between the two; see proc_scan.h for the race.
 */
#ifndef CTXPROF_LIFECYCLE_USER_H
#define CTXPROF_LIFECYCLE_USER_H

#include <stddef.h>
#include <stdint.h>
#include "records.h"
#include "processes/thread_registry.h"

struct lifecycle;
struct exe_cache;

/*
 * Called on the polling thread after each record was applied, with the
 * registry's result (0, -EEXIST, -ESTALE, -ENOENT, ...).  The record is only
 * valid during the call.
 */
typedef void (*lifecycle_event_fn)(void *ctx, const struct lifecycle_record *rec, int err);

struct lifecycle_opts {
	size_t ring_bytes;	     /* a power of two >= the page size; 0: 4 MiB */
	const char *btf_path;	     /* kernel BTF if not /sys/kernel/btf/vmlinux; NULL: default */
	const char *proc_root;	     /* where exec details are read; NULL: "/proc" */
	uint32_t only_pid;	     /* events of this process alone (--pid); 0: every one */
	lifecycle_event_fn on_event; /* may be NULL */
	void *ctx;		     /* on_event's argument */
};

/* userspace side counters: what became of the records read */
struct lifecycle_counters {
	uint64_t records;		      /* read from the ring */
	uint64_t malformed;		      /* wrong size or type: skipped */
	uint64_t by_type[LIFECYCLE_TYPE_MAX]; /* well-formed records per type */
	uint64_t applied;		      /* the registry took them (0) */
	uint64_t duplicate;		      /* already known (-EEXIST): the scan came first */
	uint64_t stale;			      /* older than what the registry holds (-ESTALE) */
	uint64_t unknown;		      /* about a thread never seen (-ENOENT) */
	uint64_t failed;		      /* other errors (-ERANGE, -ENOMEM, ...) */
	uint64_t proc_reads;		      /* exec or cgroup change completed from /proc */
	uint64_t proc_misses;		      /* /proc had moved on: event data used alone */
	uint64_t exe_known;		      /* exec of a file read before: no /proc read */
};

/**
 * lifecycle__open() - load, configure and attach the lifecycle programs; the
 * ring fills from then on.
 * @r: the registry the records are applied to
 * @err_msg: on failure, receives a one-line reason for the user (may be NULL)
 * Return: the lifecycle, or NULL with errno set.  Pair with lifecycle__free().
 */
struct lifecycle *lifecycle__open(const struct lifecycle_opts *opts, struct thread_registry *r,
				  char *err_msg, size_t err_len);

/**
 * lifecycle__poll() - wait up to @timeout_ms for a wakeup, then apply every
 * record the ring holds.  One thread at a time.
 * Return: records consumed (>= 0), or -errno (-EINTR when a signal came).
 */
int lifecycle__poll(struct lifecycle *l, int timeout_ms);

/** lifecycle__consume() - apply what the ring holds now, without waiting. */
int lifecycle__consume(struct lifecycle *l);

/**
 * lifecycle__fd() - an fd (epoll) readable when the ring signalled: an exec
 * record (each wakes its reader, so that the process's mappings are read
 * while it lives), or the ring a quarter full; other records wait for the
 * reader's timeout.  For a reader waiting on more than the ring.
 */
int lifecycle__fd(const struct lifecycle *l);

/**
 * lifecycle__read_stats() - sum the BPF per-CPU counters into
 * @out[LIFECYCLE_STAT_MAX].  Any thread.
 * Return: 0 or -errno.
 */
int lifecycle__read_stats(struct lifecycle *l, uint64_t *out);

/**
 * lifecycle__counters() - the userspace counters as of the last poll.  Any
 * thread (a copy the polling thread publishes under a lock of its own).
 */
void lifecycle__counters(struct lifecycle *l, struct lifecycle_counters *out);

/** lifecycle__free() - detach and unload; accepts NULL. */
void lifecycle__free(struct lifecycle *l);

/** lifecycle_stat_name() - short stable name of a BPF counter ("ring_full", ...). */
const char *lifecycle_stat_name(enum lifecycle_stat stat);

/**
 * lifecycle_apply() - apply one record to @r (what lifecycle__poll() does
 * for each): FORK and THREAD insert, EXEC replaces the image (exe and cgroup
 * from @proc_root/PID when it is still the same incarnation, else the
 * record's filename), EXIT removes, RENAME renames.  Takes the writer lock.
 * @size: the record's size as the ring gave it
 * @exes: the exe paths read before (processes/exe_cache.h), taken for an
 *        exec of the same file under the same name, added to after a read;
 *        NULL: /proc read at every exec
 * @counters: updated; may be NULL
 * Return: the registry's result, or -EINVAL for a malformed record.
 */
int lifecycle_apply(struct thread_registry *r, const struct lifecycle_record *rec, size_t size,
		    const char *proc_root, struct exe_cache *exes,
		    struct lifecycle_counters *counters);

#endif /* CTXPROF_LIFECYCLE_USER_H */
