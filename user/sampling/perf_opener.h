/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * perf_opener - opens the sampler's cpu-clock perf events after the
 * collector gave up CAP_PERFMON, for CPUs that come online later.
 *
 * A per-CPU perf event needs CAP_PERFMON, which the collector drops once
 * started (collector/privileges.h): the ELF files and /proc text it parses
 * then could not lend an attacker that capability.  So sampler__prepare(),
 * while the process is privileged and has one thread, forks this child: it
 * keeps CAP_PERFMON alone (CAP_SYS_ADMIN on kernels before 5.8), closes
 * every other fd, sets no_new_privs, dies with its parent, and answers one
 * request only: "the event of the attributes fixed at fork, on CPU n", its fd
 * passed back over a socket (SCM_RIGHTS).  A compromised collector can get
 * nothing else from it.
 *
 * One per kind of event: the sampler's cpu-clock events, the tracker's mapping
 * events (processes/mmap_events.h).  Main thread (one request at a time).
 * The child is a util/fd_opener.h one, its request the perf_event_open().
 */
#ifndef CTXPROF_PERF_OPENER_H
#define CTXPROF_PERF_OPENER_H

#include <linux/perf_event.h>

struct perf_opener;

/**
 * perf_opener__start() - fork the opener.  Call from the process's only
 * thread, while it holds CAP_PERFMON.
 * Return: the opener, or NULL with errno set.  Pair with perf_opener__stop().
 */
struct perf_opener *perf_opener__start(const struct perf_event_attr *attr);

/**
 * perf_opener__open() - the event of the opener's attributes on @cpu, for
 * every process (pid -1), close-on-exec.
 * Return: its fd, or -errno: the kernel's (-ENODEV: @cpu is offline), or
 * -EPIPE when the opener is gone, -ETIMEDOUT when it did not answer in 1 s.
 */
int perf_opener__open(struct perf_opener *o, int cpu);

/** perf_opener__stop() - end the child and reap it; accepts NULL. */
void perf_opener__stop(struct perf_opener *o);

#endif /* CTXPROF_PERF_OPENER_H */
