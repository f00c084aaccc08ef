/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sampler - load bpf/sampler.bpf.c, attach it to a cpu-clock perf event on
 * every online CPU, and hand its records to a callback.
 *
 * CPUs come and go (hotplug): sampler__check(), about once a second, closes
 * the event of a CPU that went offline and opens one on a CPU that came
 * online (through perf_opener.h: the collector no longer holds CAP_PERFMON
 * then), and compares the rate the CPUs sample at with the requested one:
 * the kernel throttles perf events above kernel.perf_event_max_sample_rate
 * (which another tool may lower, and the kernel lowers on its own when perf
 * interrupts take too long) without a word to us.
 *
 * One BPF ring buffer per possible CPU (an array of maps): a CPU only ever
 * writes its own ring, so producers never contend, and the records of one
 * CPU arrive in order.  The BPF side submits without waking the collector
 * unless a ring passes a fill watermark; sampler__poll() sleeps on epoll with
 * a timeout and then consumes every ring, so wakeups stay rare.
 *
 * The rings are split into parts (ring i belongs to part i % nr_parts), each
 * consumed by one thread: sampler__poll(s, part, ...) calls the callback on
 * the calling thread with that part's context.  Different parts may be polled
 * concurrently; one part by one thread at a time.
 */
#ifndef CTXPROF_SAMPLER_H
#define CTXPROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "records.h"
#include "unwind/unwind_store.h"

struct sampler;

/*
 * Called for every record with its size in bytes as the ring holds it.
 * The record is only valid during the call and is NOT validated: the
 * callback checks nr_kframes/nr_uframes against @size.
 */
typedef void (*sampler_record_fn)(void *ctx, const struct sample_record *rec, size_t size);

struct sampler_opts {
	pid_t pid;		/* profile this process (all threads); 0: every process */
	bool filter_pids;	/* profile the processes in sampler__pid_map_fd() instead */
	unsigned int frequency; /* samples per second per CPU */
	bool kernel_stacks;	/* capture kernel frames too */
	size_t ring_bytes;	/* per-CPU ring size; a power of two >= page size */
	const char *btf_path;	/* kernel BTF if not /sys/kernel/btf/vmlinux; NULL: default */
	int nr_parts;		/* ring consumers (drain threads); capped at the CPU count */
	bool read_context;	/* read libctxprof slots and OpenTelemetry thread records */
	bool read_python;	/* CPython frames for the processes in sampler__python_map_fd() */
	bool off_cpu;		/* record waits (bpf/offcpu.bpf.h) */
	uint64_t off_cpu_threshold_ns; /* shorter waits are counted, not recorded */
	uint32_t off_cpu_budget;       /* captures per second per CPU; 0: the default */
	enum unwind_mode unwind;       /* how user stacks are walked */
	/* sizes of the unwinder's maps (unwind != UNWIND_MODE_FP) */
	uint32_t unwind_rows, unwind_rules, unwind_mappings, unwind_procs;
};

/**
 * sampler__open() - load and configure the sampler; it samples nothing
 * before sampler__attach().
 * @ctxs: the callback's argument for each part (opts->nr_parts entries)
 * @err_msg: on failure, receives a one-line reason for the user (may be NULL)
 * @err_len: its size
 * Return: the sampler, or NULL with errno set.  Pair with sampler__free().
 */
struct sampler *sampler__open(const struct sampler_opts *opts, sampler_record_fn fn,
			      void *const *ctxs, char *err_msg, size_t err_len);

/**
 * sampler__prepare() - what sampler__attach() does that needs a capability
 * (CAP_PERFMON for perf_event_open, CAP_BPF for the attach), ahead of it: a
 * cpu-clock event at @frequency on every online CPU with the program
 * attached, then paused.  A sample may land between attach and pause.  Also
 * forks the perf event opener (perf_opener.h), for CPUs that come online
 * later: call it from the process's only thread.  Says on stderr when
 * @frequency is above kernel.perf_event_max_sample_rate.
 * Return: 0 or -errno, with a one-line reason in @err_msg.
 */
int sampler__prepare(struct sampler *s, unsigned int frequency, char *err_msg, size_t err_len);

/**
 * sampler__attach() - start sampling: a cpu-clock perf event at @frequency
 * on every online CPU, with the program attached; after sampler__prepare(),
 * only resumes its events (an ioctl on fds the sampler holds: no capability).
 * Return: 0 or -errno, with a one-line reason in @err_msg.
 */
int sampler__attach(struct sampler *s, unsigned int frequency, char *err_msg, size_t err_len);

/**
 * sampler__ring_fill() - how full each CPU's ring is, 0 to 1 (-1: unknown),
 * for the first @n possible CPUs.  Lock-free; any one thread at a time.
 * Return: how many entries were written.
 */
int sampler__ring_fill(struct sampler *s, double *fill, int n);

/**
 * sampler__poll() - wait up to @timeout_ms for a watermark wakeup on one of
 * @part's rings, then consume all of them.  Call from @part's thread only.
 * Return: records consumed (>= 0), or -errno (-EINTR when a signal came).
 */
int sampler__poll(struct sampler *s, int part, int timeout_ms);

/**
 * sampler__stop() - detach the perf events (no new samples), then consume
 * what every ring still holds, on the calling thread (no part may be polled
 * concurrently).  After it, the counters are final.
 * Return: records consumed, or -errno.
 */
int sampler__stop(struct sampler *s);

/**
 * sampler__read_stats() - sum the per-CPU counters into @out[SAMPLER_STAT_MAX].
 * Return: 0 or -errno.
 */
int sampler__read_stats(struct sampler *s, uint64_t *out);

/*
 * What the sampler's programs cost, from the kernel's own accounting
 * (bpf_prog_info run_cnt, run_time_ns): counted only while BPF run-time
 * statistics are on, system-wide (sysctl kernel.bpf_stats_enabled=1) or
 * for this process (sampler__enable_bpf_stats()); all 0 otherwise.
 */
struct sampler_prog_cost {
	uint64_t sample_runs, sample_ns; /* the cpu-clock program: every tick on a task */
	uint64_t switch_runs, switch_ns; /* the off-CPU program (--off-cpu): every switch */
};

/** sampler__prog_cost() - read the programs' run counts and times into @out. */
void sampler__prog_cost(const struct sampler *s, struct sampler_prog_cost *out);

/**
 * sampler__enable_bpf_stats() - turn the kernel's BPF run-time statistics on
 * for as long as the sampler lives (BPF_ENABLE_STATS: the kernel keeps them
 * on while a descriptor is held; each program run then costs a clock read
 * or two more).  Main thread, once.
 * Return: 0 or -errno (a kernel without it: -EINVAL).
 */
int sampler__enable_bpf_stats(struct sampler *s);

/* the effective rate below this share of the requested one is "throttled" */
#define SAMPLER_RATE_LOW 0.9

/*
 * What the sampler knows of sample loss that is not its own: the rate the
 * CPUs sample at against the one requested, and CPUs that are online but not
 * sampled.  Rates are per second of busy sampled CPU: a CPU's cpu-clock
 * event ticks at the requested frequency while a task runs there (in idle,
 * some kernels stop its timer with the tick), and the program counts every
 * tick on a task (SAMPLER_STAT_SAMPLES + SAMPLER_STAT_FILTERED), over the
 * CPU's busy time from /proc/stat (see struct cpu_rate); an offline CPU
 * counts neither.
 */
struct sampler_health {
	unsigned int requested_hz;
	/* ticks per second of busy sampled CPU: over the last CPU_RATE_WINDOW
	 * checks, since sampling began, and the lowest window; -1: not yet
	 * (or the CPUs were idle) */
	double effective_hz, run_hz, lowest_hz;
	long max_sample_rate;	   /* kernel.perf_event_max_sample_rate at the last check; -errno */
	bool throttled;		   /* effective_hz < SAMPLER_RATE_LOW * requested_hz */
	uint64_t throttled_checks; /* checks (about seconds) it was */
	/* cpus_sampled < cpus_online: some online CPU has no event (not sampled) */
	int cpus_online, cpus_sampled;
	uint64_t cpus_offlined, cpus_onlined; /* hotplug: CPUs seen to go, and to come back */
	uint64_t open_failed; /* attempts to open an event on an online CPU that failed */
};

/**
 * sampler__check() - once a second or so while sampling, from the thread
 * that attached (the collector's main thread): follow CPU hotplug and
 * measure the effective rate, as described at the top.  Says on stderr when
 * a CPU goes or comes, when one cannot be sampled, and once when the rate is
 * well below the requested one.  A read of sysfs, procfs, two BPF map
 * lookups and one read() per CPU; no-op (but for the rate limit's read)
 * before sampler__attach() and after sampler__stop().
 */
void sampler__check(struct sampler *s);

/**
 * sampler__health() - the state sampler__check() left, into @out.  Same
 * thread as sampler__check(); after sampler__stop(), as of the last check.
 */
void sampler__health(const struct sampler *s, struct sampler_health *out);

/**
 * sampler__ctx_map_fd() - the BPF hash map tid -> the thread's libctxprof
 * context slot (u32 -> struct ctx_slot_ref in records.h) the sampler reads.
 */
int sampler__ctx_map_fd(const struct sampler *s);

/**
 * sampler__otel_map_fd() - the BPF hash map pid -> where its threads'
 * OpenTelemetry context pointer lies (u32 -> struct otel_tls_ref in
 * records.h), read when opts->read_context.
 */
int sampler__otel_map_fd(const struct sampler *s);

/**
 * sampler__go_map_fd() - the BPF hash map pid -> where its goroutines'
 * labels are (u32 -> struct go_labels_ref in go_abi.h), read when
 * opts->read_context on a kernel with bpf_loop (sampler__has_bpf_loop()).
 */
int sampler__go_map_fd(const struct sampler *s);

/**
 * sampler__python_map_fd() - the BPF hash map pid -> its CPython
 * interpreter's layout (u32 -> struct python_proc_ref in python_abi.h),
 * read when opts->read_python on a kernel with bpf_loop.
 */
int sampler__python_map_fd(const struct sampler *s);

/**
 * sampler__pid_map_fd() - with opts->filter_pids, the BPF hash map of the
 * process ids (u32 -> u8) to profile.
 */
int sampler__pid_map_fd(const struct sampler *s);

/**
 * sampler__unwind_maps() - the BPF unwinder's maps, for the unwinder
 * (unwind/unwinder.h) to fill.
 */
void sampler__unwind_maps(const struct sampler *s, struct unwind_store_maps *out);

/**
 * sampler__has_bpf_loop() - whether this kernel has bpf_loop (Linux
 * 5.17+), which the table walk's first driver, CPython's frames, goroutine
 * labels and the off-CPU program need.  Without it the sampler loads the
 * build that walks the tables by tail calls (sampler__can_tail_unwind()).
 * CTXPROF_UNWIND_WALKER=tail in the environment answers false, so that
 * tests and benchmarks run the tail-call walker on any kernel.
 */
bool sampler__has_bpf_loop(void);

/**
 * sampler__can_tail_unwind() - whether this kernel has what the tail-call
 * table walk needs (program arrays, bpf_tail_call from perf_event
 * programs); without it nor bpf_loop only UNWIND_MODE_FP loads.
 */
bool sampler__can_tail_unwind(void);

/**
 * sampler__can_off_cpu() - whether this kernel runs the off-CPU program:
 * task storage for tracing programs, and sched_switch's
 * prev_state argument (5.18), and bpf_loop (5.17), read from the kernel's BTF (@btf_path, NULL:
 * its own).  When not, @why (@len bytes) says what is missing.
 */
bool sampler__can_off_cpu(const char *btf_path, char *why, size_t len);

/** sampler__nr_parts() - ring consumers actually set up (<= opts->nr_parts). */
int sampler__nr_parts(const struct sampler *s);

/** sampler__nr_cpus() - CPUs a perf event is attached on now. */
int sampler__nr_cpus(const struct sampler *s);

/** sampler__free() - detach and unload; accepts NULL. */
void sampler__free(struct sampler *s);

/** sampler_stat_name() - short stable name of a counter ("ring_full", ...). */
const char *sampler_stat_name(enum sampler_stat stat);

#endif /* CTXPROF_SAMPLER_H */
