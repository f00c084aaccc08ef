/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * proc_scan - fill the thread registry with every thread alive at start, from
 * /proc, and read one process's details for the lifecycle consumer.
 *
 * All /proc text is hostile: a process names itself (comm may hold spaces,
 * parentheses, newlines), and a process or thread may vanish between any
 * two reads.  Files are read through a directory fd of /proc/PID, with size
 * caps; a bad file is a counted skip, a vanished process is normal.
 *
 * The race with lifecycle events: start the lifecycle ring BEFORE the scan.
 * The scan reads one process and inserts its threads with the registry's
 * writer lock held, so no event is applied in between, and inserts with
 * THREAD_REGISTRY_F_SCAN: what an event already did wins (an exit applied
 * earlier left a tombstone of that incarnation, a fork applied earlier the
 * entry itself), and events applied later land on top of the scan's entries.
 * See "Incarnations" in thread_registry.h.
 */
#ifndef CTXPROF_PROC_SCAN_H
#define CTXPROF_PROC_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "processes/thread_registry.h"

/* /proc/PID/stat is a few hundred bytes: anything this long is not one */
#define PROC_SCAN_MAX_STAT 2048
/* the kernel prints a stat name into 64 bytes: a workqueue worker's comm
 * comes with its queue's name, "kworker/0:0H-events_highpri" */
#define PROC_SCAN_MAX_NAME 63
/* /proc/PID/cgroup: one line per v1 hierarchy, each path up to PATH_MAX */
#define PROC_SCAN_MAX_CGROUP (64u << 10)

/* what the scan takes from a /proc/PID/stat line */
struct proc_stat {
	uint32_t pid;			     /* field 1 */
	char comm[THREAD_REGISTRY_COMM_LEN]; /* field 2, without the parentheses, cut to 15 */
	char state;			     /* field 3: R, S, D, Z, X, ... */
	uint32_t ppid;			     /* field 4 */
	uint64_t starttime;		     /* field 22: clock ticks since boot */
};

/* one process as read from /proc, for proc_scan__read_process() */
struct proc_process {
	struct proc_stat stat;		    /* of the group leader */
	char exe[THREAD_REGISTRY_MAX_PATH]; /* readlink of exe; "" if unreadable (kthreads) */
	/* stat of exe, after the readlink: the file's device (st_dev) and
	 * inode; 0 if unreadable */
	uint64_t exe_dev, exe_ino;
	char cgroup[THREAD_REGISTRY_MAX_PATH]; /* proc_scan__parse_cgroup() of cgroup; "" */
};

struct proc_scan_opts {
	const char *proc_root; /* NULL: "/proc" (tests point it at a fixture tree) */
	/* called after every @tick_every processes, without the writer lock:
	 * the lifecycle thread drains its ring there when it runs the scan */
	void (*tick)(void *ctx);
	void *tick_ctx;
	unsigned int tick_every; /* 0: 64 */
	uint32_t only_pid;	 /* scan this process alone (--pid); 0: every process */
};

struct proc_scan_stats {
	uint64_t processes; /* /proc/PID directories read */
	uint64_t threads;   /* threads inserted */
	uint64_t known;	    /* already in the registry: an event came first (-EEXIST) */
	uint64_t stale;	    /* refused: exited meanwhile (-ESTALE) */
	uint64_t vanished;  /* gone between readdir and read: normal */
	uint64_t zombies;   /* threads in state Z or X: skipped */
	uint64_t malformed; /* unparsable stat or cgroup text, bad names: skipped */
	uint64_t refused;   /* other registry refusals (-ERANGE, -EINVAL) */
	uint64_t relinked;  /* processes linked to a parent scanned after them */
};

/**
 * proc_scan__run() - insert every live thread under @opts->proc_root into @r.
 * Call after the lifecycle ring is attached; from a thread registered with
 * thread_registry__register_thread().  Takes the writer lock per process.
 * @opts: may be NULL
 * @stats: receives the counters; may be NULL
 * Return: 0, or -errno when the /proc directory itself cannot be read or
 * memory runs out (per-process failures are counted, not returned).
 */
int proc_scan__run(struct thread_registry *r, const struct proc_scan_opts *opts,
		   struct proc_scan_stats *stats);

/**
 * proc_scan__parse_stat() - parse the text of /proc/PID/stat.
 * @buf: not necessarily NUL-terminated
 * comm is taken between the first '(' and the LAST ')' (a name may contain
 * ')'), at most PROC_SCAN_MAX_NAME bytes, and cut to the 15 bytes of a
 * task comm.  ppid and starttime must be plain decimal numbers that fit.
 * Return: 0, or -EINVAL.
 */
int proc_scan__parse_stat(const char *buf, size_t len, struct proc_stat *out);

/**
 * proc_scan__parse_cgroup() - pick the path out of /proc/PID/cgroup text.
 * @buf: "hierarchy-id:controllers:path" lines, not necessarily NUL-terminated
 * @path: receives the path of the cgroup v2 line ("0::"), else of the first
 *        v1 line holding a container id, else of the first line
 * Return: 0; -EINVAL when no line is well formed; -ENAMETOOLONG when the
 * chosen path does not fit @path_len (nothing is written then).
 */
int proc_scan__parse_cgroup(const char *buf, size_t len, char *path, size_t path_len);

/**
 * proc_scan__read_process() - read process @pid's leader stat, exe and, when
 * @cgroup, its cgroup.  The lifecycle consumer uses it to complete an exec
 * event; it skips the cgroup when the event's cgroup id says it is known.
 * @proc_root: NULL for "/proc"
 * Return: 0 (an unreadable exe or cgroup leaves "": kernel threads have
 * none), -ESRCH when the process is gone, -EINVAL when its stat is malformed.
 */
int proc_scan__read_process(const char *proc_root, uint32_t pid, struct proc_process *out,
			    bool cgroup);

#endif /* CTXPROF_PROC_SCAN_H */
