/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cpus - which CPUs are online, how fast the kernel lets them sample, and
 * how fast they do.
 *
 * libbpf's CPU-mask parser is internal (not LIBBPF_API), so we parse the
 * kernel's list format ("0-3,5,7-8") ourselves.
 *
 * Plain functions and a value type: any thread, no shared state.
 */
#ifndef CTXPROF_CPUS_H
#define CTXPROF_CPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * cpus_parse_list() - parse a CPU list such as "0-3,5\n" into @mask[@n].
 * CPUs >= @n in the list are an error (-ERANGE); malformed text -EINVAL.
 * Return: 0 or -errno.
 */
int cpus_parse_list(const char *text, bool *mask, int n);

/**
 * cpus_online() - read /sys/devices/system/cpu/online into @mask[@n].
 * Return: 0 or -errno.
 */
int cpus_online(bool *mask, int n);

/**
 * cpus_max_sample_rate() - kernel.perf_event_max_sample_rate: the samples
 * per second the kernel lets one perf event take before it throttles it.
 * The kernel lowers it on its own when perf interrupts take too long.
 * Return: the rate, or -errno.
 */
long cpus_max_sample_rate(void);

/**
 * cpus_parse_busy() - from /proc/stat's text, each CPU's busy time (user,
 * nice, system, irq and softirq; not idle, iowait or steal, when no task of
 * the guest runs there) in ns into @busy_ns[@n], given USER_HZ @ticks_per_s.
 * Only the "cpuN" lines are read, and they must all come before any other
 * line but the "cpu" total; CPUs >= @n are an error (-ERANGE), malformed
 * text -EINVAL.  CPUs the text does not name get 0.
 * Return: 0 or -errno.
 */
int cpus_parse_busy(const char *text, uint64_t *busy_ns, int n, long ticks_per_s);

/**
 * cpus_busy_ns() - each CPU's busy time since boot, from /proc/stat, into
 * @busy_ns[@n].
 * Return: 0 or -errno.
 */
int cpus_busy_ns(uint64_t *busy_ns, int n);

/* checks the effective sampling rate is measured over (about one a second) */
#define CPU_RATE_WINDOW 3

/*
 * cpu_rate - how often the sampler's program ran per second of busy CPU,
 * over the last CPU_RATE_WINDOW checks.  Each check adds the program's runs
 * on tasks (samples and filtered ticks; not ticks on the idle task) and the
 * busy time of the CPUs they came from (capped at their events' enabled
 * time), summed over the CPUs whose event lived from the previous check to
 * this one: a CPU offline, or whose event just opened, adds nothing to
 * either, so the rate is per sampled CPU.  Busy time, not enabled time: a
 * kernel that stops the tick in idle stops a cpu-clock event's timer with
 * it (seen here, 6.18 in a Firecracker guest: an idle CPU took 2 of 999
 * ticks a second), and an idle CPU is not a throttled one.
 */
struct cpu_rate {
	uint64_t runs[CPU_RATE_WINDOW];
	uint64_t busy_ns[CPU_RATE_WINDOW];
	unsigned int n;	   /* entries filled, up to CPU_RATE_WINDOW */
	unsigned int next; /* the entry the next check overwrites */
};

/** cpu_rate__add() - one check's @runs over @busy_ns of the CPUs' time. */
void cpu_rate__add(struct cpu_rate *r, uint64_t runs, uint64_t busy_ns);

/**
 * cpu_rate__hz() - runs per second of one CPU's busy time over the
 * window.
 * Return: the rate, or -1 until the window is full and holds a second of
 * busy time (an idle machine's rate is not known).
 */
double cpu_rate__hz(const struct cpu_rate *r);

#endif /* CTXPROF_CPUS_H */
