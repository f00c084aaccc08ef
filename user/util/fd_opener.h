/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fd_opener - a child that keeps one capability the collector gives up
 * after start-up, to open one kind of fd for it later: a CPU's perf event
 * (CAP_PERFMON, sampling/perf_opener.h), a chunk of the unwinder's rows
 * (CAP_BPF, unwind/unwind_store.h).
 *
 * The collector drops its capabilities once started (collector/privileges.h)
 * so that the ELF files and /proc text it parses then cannot lend an
 * attacker one.  So, while the process is privileged and has one thread,
 * it forks this child: it keeps the first of @caps the kernel grants it
 * (and no other), closes every other fd, sets no_new_privs, dies with its
 * parent, and answers one request only: "@fn(@ctx, n)", the fd it returns
 * passed back over a socket (SCM_RIGHTS).  @fn and @ctx are fixed at fork: a
 * compromised collector can get nothing else from it.
 *
 * One request at a time, from one thread.
 */
#ifndef CTXPROF_FD_OPENER_H
#define CTXPROF_FD_OPENER_H

#include <stddef.h>
#include <stdint.h>

/* what the child does for request @arg: an fd (close-on-exec), or -errno */
typedef int (*fd_opener_fn)(void *ctx, int32_t arg);

struct fd_opener;

/**
 * fd_opener__start() - fork the child.  Call from the process's only
 * thread, while it holds one of @caps.
 * @name: the child's name (prctl, ps)
 * @caps: the capabilities to keep, the first the kernel grants (cap_value_t
 *	values); none granted: the child keeps none
 * @ctx: @ctx_size bytes copied for the child's @fn
 * Return: the opener, or NULL with errno set.  Pair with fd_opener__stop().
 */
struct fd_opener *fd_opener__start(const char *name, const int *caps, size_t nr_caps,
				   fd_opener_fn fn, const void *ctx, size_t ctx_size);

/**
 * fd_opener__open() - ask for @fn(ctx, @arg) in the child.
 * Return: the fd, or -errno: @fn's, or -EPIPE when the child is gone,
 * -ETIMEDOUT when it did not answer in a second.
 */
int fd_opener__open(struct fd_opener *o, int32_t arg);

/** fd_opener__stop() - end the child and reap it; accepts NULL. */
void fd_opener__stop(struct fd_opener *o);

#endif /* CTXPROF_FD_OPENER_H */
