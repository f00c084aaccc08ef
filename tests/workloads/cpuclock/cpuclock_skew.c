// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cpuclock_skew TID - a test oracle for test_offcpu.sh: the time thread TID
 * really ran against what its own CPU clock (CLOCK_THREAD_CPUTIME_ID) says,
 * so that a wait the thread measures as "wall time less CPU time" can be
 * set right.
 *
 * Why: the kernel's CPU clock of a thread is not the time it ran.  It
 * starts at its run queue's clock as last read, which after a wake-up that
 * preempts (or wakes an idle CPU) is the wake-up's: the clock's next update
 * is skipped (rq_clock_skip_update() in wakeup_preempt()), so the time the
 * thread waited to run after its wake-up is on its CPU clock (5-60 us a
 * wake-up measured here; and not in its schedstat run delay either).
 * Steal time goes the other way (PARAVIRT_TIME_ACCOUNTING leaves it off the
 * CPU clock while the thread runs).  A profiler that times waits from
 * switch out to switch in cannot agree with wall - CPU time by those
 * amounts, and on short waits (an fsync's 50-300 us blocks) they are tens
 * of percent.
 *
 * Prints "attached" on stderr once tracing, then until SIGINT/SIGTERM:
 *   stretch IN_NS OUT_NS     the thread ran from IN_NS to OUT_NS
 *                            (CLOCK_MONOTONIC at sched_switch); IN_NS 0:
 *                            from a switch in that fired no sched_switch
 *                            (seen on 6.18), when is not known
 *   cpuclock AT_NS VALUE_NS  a read of its CPU clock returned VALUE_NS at
 *                            AT_NS (reads that follow another syscall: the
 *                            first of a run of reads)
 * Between two reads, the time it ran is AT2 - AT1 less its time switched
 * out; the CPU clock's advance, VALUE2 - VALUE1, strays from that.
 * Start it before the profiler: BPF programs on one tracepoint run in the
 * order they were attached, and its switch-out time must come before the
 * profiler's work at that switch.
 * Exit: 0; 1 on a bad argument or when the programs do not load.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cpuclock_skew.skel.h"

enum { EV_STRETCH = 1, EV_CPUCLOCK };

struct event {
	unsigned long long type, a, b;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int print_event(void *ctx, void *data, size_t size)
{
	const struct event *e = data;

	if (size < sizeof(*e))
		return 0;
	if (e->type == EV_STRETCH)
		printf("stretch %llu %llu\n", e->a, e->b);
	else if (e->type == EV_CPUCLOCK)
		printf("cpuclock %llu %llu\n", e->a, e->b);
	return 0;
}

int main(int argc, char **argv)
{
	struct cpuclock_skew_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	char *end;
	long tid;
	int rc = 1;

	tid = argc == 2 ? strtol(argv[1], &end, 10) : 0;
	if (argc != 2 || *end || tid <= 0) {
		fprintf(stderr, "usage: %s TID\n", argv[0]);
		return 1;
	}
	skel = cpuclock_skew_bpf__open();
	if (!skel)
		goto cleanup;
	skel->rodata->target_tid = tid;
	skel->rodata->clock_gettime_nr = SYS_clock_gettime;
	if (cpuclock_skew_bpf__load(skel) || cpuclock_skew_bpf__attach(skel))
		goto cleanup;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), print_event, NULL, NULL);
	if (!rb)
		goto cleanup;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	fprintf(stderr, "attached\n");
	/* the programs do not wake us (cpuclock_skew.bpf.c says why): the
	 * ring is read every 20 ms */
	while (!stop) {
		usleep(20000);
		if (ring_buffer__consume(rb) < 0)
			goto cleanup;
	}
	ring_buffer__consume(rb);
	rc = 0;
cleanup:
	if (rc)
		fprintf(stderr, "cpuclock_skew: %s\n", strerror(errno));
	ring_buffer__free(rb);
	cpuclock_skew_bpf__destroy(skel);
	fflush(stdout);
	return rc;
}
