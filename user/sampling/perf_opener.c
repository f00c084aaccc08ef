// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perf_opener - the child that opens cpu-clock events for the sampler
 * (util/fd_opener.h with CAP_PERFMON).  See perf_opener.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sampling/perf_opener.h"
#include "util/fd_opener.h"

struct perf_opener {
	struct fd_opener *child;
};

/* in the child: the event of the attributes fixed at fork, on CPU @cpu */
static int open_event(void *ctx, int32_t cpu)
{
	/* the kernel may write into it (size, on E2BIG): a copy each time */
	struct perf_event_attr a = *(const struct perf_event_attr *)ctx;
	int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

struct perf_opener *perf_opener__start(const struct perf_event_attr *attr)
{
	/* CAP_PERFMON, else CAP_SYS_ADMIN (kernels without CAP_PERFMON refuse
	 * it), else nothing: perf_event_paranoid may still allow the open */
	static const int caps[] = {CAP_PERFMON, CAP_SYS_ADMIN};
	struct perf_opener *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->child = fd_opener__start("ctxprof-perf", caps, 2, open_event, attr, sizeof(*attr));
	if (!o->child) {
		free(o);
		return NULL;
	}
	return o;
}

int perf_opener__open(struct perf_opener *o, int cpu)
{
	return fd_opener__open(o->child, cpu);
}

void perf_opener__stop(struct perf_opener *o)
{
	if (!o)
		return;
	fd_opener__stop(o->child);
	free(o);
}
