// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sampler - loader and ring consumer for bpf/sampler.bpf.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "util/errmsg.h"
#include "sampling/sampler.h"
#include "sampling/cpus.h"
#include "sampling/perf_opener.h"
#include "sampler.skel.h"
#include "sampler_compat.skel.h"
#include "util/percpu_stats.h"

/* a set of rings consumed by one thread */
struct ring_part {
	struct sampler *s;
	struct ring_buffer *rb;
	uint64_t nr_records; /* records handed to fn; written by the part's thread only */
	void *ctx;	     /* the callback's argument for this part */
};

/* the sampler's perf event on one CPU */
struct cpu_event {
	int fd;		       /* the cpu-clock event; -1: none */
	struct bpf_link *link; /* the program on it, which owns @fd once set */
	bool offline;	       /* the CPU was offline (or its event died) at the last look */
	bool said;	       /* that its event cannot be opened was said, until it opens */
	/* at the last check, when @measured: the event's enabled time, the
	 * program's runs on this CPU's tasks and the CPU's busy time */
	bool measured;
	uint64_t enabled_ns;
	uint64_t runs;
	uint64_t busy_ns;
};

struct sampler {
	struct sampler_bpf *skel;
	struct ring_part *parts;
	int nr_parts;
	int *ring_fds;		/* one per possible CPU */
	struct cpu_event *cpus; /* one per possible CPU */
	int nr_links;		/* CPUs whose event has the program on it */
	bool enabled;
	struct perf_event_attr attr; /* every CPU's event's; size 0 before the first opens */
	/* opens events once the collector lost CAP_PERFMON; NULL: it could not start */
	struct perf_opener *opener;
	/* each ring's consumer and producer positions, mapped read-only for
	 * sampler__ring_fill(); NULL entries where the mapping failed */
	const unsigned long **ring_pos;
	size_t ring_bytes;
	int nr_possible;
	sampler_record_fn fn;
	struct bpf_link *offcpu_link; /* --off-cpu: the sched_switch program; NULL: none */
	int stats_fd;		      /* BPF_ENABLE_STATS while held; -1: not asked */
	/* sampler__check()'s: scratch masks and counters, the rate window */
	bool *online;
	uint64_t *percpu, *runs, *busy;
	struct cpu_rate rate;
	uint64_t run_runs, run_ns; /* since sampling began */
	bool said_slow;
	struct sampler_health health;
};

static const char *const stat_names[SAMPLER_STAT_MAX] = {
	[SAMPLER_STAT_SAMPLES] = "samples",
	[SAMPLER_STAT_EMITTED] = "emitted",
	[SAMPLER_STAT_DROP_RING_FULL] = "ring_full",
	[SAMPLER_STAT_DROP_NO_RING] = "no_ring",
	[SAMPLER_STAT_DROP_NO_SCRATCH] = "no_scratch",
	[SAMPLER_STAT_USTACK_ERR] = "user_stack_error",
	[SAMPLER_STAT_KSTACK_ERR] = "kernel_stack_error",
	[SAMPLER_STAT_FILTERED] = "filtered",
	[SAMPLER_STAT_IDLE] = "idle",
	[SAMPLER_STAT_CTX_OK] = "context_ok",
	[SAMPLER_STAT_CTX_EMPTY] = "context_empty",
	[SAMPLER_STAT_CTX_TORN] = "context_torn",
	[SAMPLER_STAT_CTX_READ_ERR] = "context_read_error",
	[SAMPLER_STAT_CTX_STALE] = "context_stale",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_COMPLETE] = "complete",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_TRUNCATED] = "truncated",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_NO_MAPPING] = "no_mapping",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_NO_CFI] = "no_cfi",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_UNSUPPORTED] = "unsupported_cfi",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_READ_ERR] = "stack_unreadable",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_BAD_FRAME] = "bad_frame",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_NO_USER] = "no_user_context",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_NO_TABLE_YET] = "no_table_yet",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_FP] = "frame_pointers",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_GO_SYSTEM_STACK] = "go_system_stack",
	[SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_JIT_NO_FP] = "jit_no_frame_pointer",
	[SAMPLER_STAT_UFRAMES_CFI] = "frames_cfi",
	[SAMPLER_STAT_UFRAMES_PLT] = "frames_plt",
	[SAMPLER_STAT_UFRAMES_SIGNAL] = "frames_signal",
	[SAMPLER_STAT_UFRAMES_FP] = "frames_fp",
	[SAMPLER_STAT_OTEL_OK] = "otel_ok",
	[SAMPLER_STAT_OTEL_NONE] = "otel_none",
	[SAMPLER_STAT_OTEL_INVALID] = "otel_invalid",
	[SAMPLER_STAT_OTEL_READ_ERR] = "otel_read_error",
	[SAMPLER_STAT_OTEL_NO_BLOCK] = "otel_no_tls_block",
	[SAMPLER_STAT_OTEL_STALE] = "otel_stale",
	[SAMPLER_STAT_OTEL_ATTRS_BIG] = "otel_attrs_too_big",
	[SAMPLER_STAT_OTEL_ATTRS_ERR] = "otel_attrs_unreadable",
	[SAMPLER_STAT_GO_OK] = "go_labels_ok",
	[SAMPLER_STAT_GO_NONE] = "go_labels_none",
	[SAMPLER_STAT_GO_TRUNCATED] = "go_labels_truncated",
	[SAMPLER_STAT_GO_READ_ERR] = "go_labels_read_error",
	[SAMPLER_STAT_GO_BAD_MAP] = "go_labels_bad_map",
	[SAMPLER_STAT_GO_STALE] = "go_labels_stale",
	[SAMPLER_STAT_GO_SWITCH_OK] = "go_switch_followed",
	[SAMPLER_STAT_GO_SWITCH_OWN_FRAME] = "go_switch_own_frame",
	[SAMPLER_STAT_GO_SWITCH_OTHER] = "go_switch_other",
	[SAMPLER_STAT_GO_SWITCH_NO_LAYOUT] = "go_switch_no_layout",
	[SAMPLER_STAT_GO_SWITCH_NO_GOROUTINE] = "go_switch_no_goroutine",
	[SAMPLER_STAT_GO_SWITCH_READ_ERR] = "go_switch_read_error",
	[SAMPLER_STAT_GO_SWITCH_BAD_STATE] = "go_switch_bad_state",
	[SAMPLER_STAT_PY_OK] = "python_ok",
	[SAMPLER_STAT_PY_FRAMES] = "python_frames",
	[SAMPLER_STAT_PY_NO_THREAD] = "python_no_thread_state",
	[SAMPLER_STAT_PY_IDLE] = "python_no_frame",
	[SAMPLER_STAT_PY_READ_ERR] = "python_read_error",
	[SAMPLER_STAT_PY_BAD_CODE] = "python_bad_code",
	[SAMPLER_STAT_PY_LOOP] = "python_loop",
	[SAMPLER_STAT_PY_TRUNCATED] = "python_truncated",
	[SAMPLER_STAT_PY_UNPLACED] = "python_unplaced",
	[SAMPLER_STAT_PY_STALE] = "python_stale",
};

const char *sampler_stat_name(enum sampler_stat stat)
{
	return stat < SAMPLER_STAT_MAX ? stat_names[stat] : "unknown";
}

static int handle_record(void *ctx, void *data, size_t size)
{
	struct ring_part *part = ctx;

	part->nr_records++;
	part->s->fn(part->ctx, data, size);
	return 0;
}

static void set_attr(struct sampler *s, unsigned int frequency)
{
	s->attr = (struct perf_event_attr){
		.size = sizeof(s->attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* a fixed period, not freq mode: cpu-clock is an hrtimer, so
		 * every sample then stands for exactly 1e9/frequency ns */
		.sample_period = 1000000000ull / frequency,
		/* how long it sampled: the rate check's denominator, and
		 * still while its CPU went offline and back */
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED,
		/* enabled by the attach, once the program is on it */
		.disabled = 1,
	};
	s->health.requested_hz = frequency;
}

/* the event on @cpu: ourselves while privileged (@direct), else through the opener */
static int open_cpu_clock(struct sampler *s, int cpu, bool direct)
{
	struct perf_event_attr attr = s->attr;
	int fd;

	if (!direct && s->opener)
		return perf_opener__open(s->opener, cpu);
	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* one ring per possible CPU, created before load: the first one also serves
 * as the inner-map template of the outer array (libbpf 1.1 cannot resize the
 * template it builds from the BTF definition) */
static int create_rings(struct sampler *s, size_t ring_bytes, char *err_msg, size_t err_len)
{
	int i, fd, err;

	for (i = 0; i < s->nr_possible; i++) {
		fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ctxprof_ring", 0, 0, ring_bytes, NULL);
		if (fd < 0) {
			err = -errno;
			set_err(err_msg, err_len, "cannot create ring buffer %d (%zu bytes): %s", i,
				ring_bytes, strerror(-err));
			return err;
		}
		s->ring_fds[i] = fd;
	}
	err = bpf_map__set_inner_map_fd(s->skel->maps.rings, s->ring_fds[0]);
	if (err)
		set_err(err_msg, err_len, "cannot set the ring template: %s", strerror(-err));
	return err;
}

/* after load: put every ring into the outer array, and ring i into part
 * i % nr_parts, so each part's thread owns a fixed subset of the CPUs */
static int register_rings(struct sampler *s, char *err_msg, size_t err_len)
{
	int outer = bpf_map__fd(s->skel->maps.rings);
	struct ring_part *part;
	int i, err;

	for (i = 0; i < s->nr_possible; i++) {
		if (bpf_map_update_elem(outer, &i, &s->ring_fds[i], BPF_ANY)) {
			err = -errno;
			set_err(err_msg, err_len, "cannot register ring buffer %d: %s", i,
				strerror(-err));
			return err;
		}
		part = &s->parts[i % s->nr_parts];
		if (!part->rb)
			part->rb = ring_buffer__new(s->ring_fds[i], handle_record, part, NULL);
		else if (ring_buffer__add(part->rb, s->ring_fds[i], handle_record, part))
			goto err_consumer;
		if (!part->rb)
			goto err_consumer;
	}
	return 0;

err_consumer:
	err = -errno;
	set_err(err_msg, err_len, "cannot set up the ring consumer: %s", strerror(-err));
	return err;
}

/* the privileged half of attaching: perf_event_open() on every online CPU */
static int open_events(struct sampler *s, char *err_msg, size_t err_len)
{
	int i, fd, err, nr = 0;

	err = cpus_online(s->online, s->nr_possible);
	if (err) {
		set_err(err_msg, err_len, "cannot read online CPUs: %s", strerror(-err));
		return err;
	}
	s->health.cpus_online = 0;
	for (i = 0; i < s->nr_possible; i++) {
		s->cpus[i].offline = !s->online[i];
		s->health.cpus_online += s->online[i];
		if (!s->online[i])
			continue;
		fd = open_cpu_clock(s, i, true);
		/* gone offline since we read the mask: sampler__check() sees it back */
		if (fd == -ENODEV) {
			s->cpus[i].offline = true;
			continue;
		}
		if (fd < 0) {
			set_err(err_msg, err_len, "perf_event_open(cpu-clock, cpu %d): %s", i,
				strerror(-fd));
			return fd;
		}
		s->cpus[i].fd = fd;
		nr++;
	}
	if (!nr) {
		set_err(err_msg, err_len, "no online CPU to sample");
		return -ENODEV;
	}
	return 0;
}

/* close @cpu's event (its link's, once attached) */
static void close_cpu(struct sampler *s, int cpu)
{
	struct cpu_event *ev = &s->cpus[cpu];

	if (ev->link) {
		bpf_link__destroy(ev->link);
		s->nr_links--;
	} else if (ev->fd >= 0) {
		close(ev->fd);
	}
	ev->link = NULL;
	ev->fd = -1;
	ev->measured = false;
}

/* the program onto @cpu's opened event; libbpf enables it, and the link owns it */
static int attach_cpu(struct sampler *s, int cpu)
{
	struct cpu_event *ev = &s->cpus[cpu];

	ev->link = bpf_program__attach_perf_event(s->skel->progs.sample, ev->fd);
	if (!ev->link)
		return -errno;
	s->nr_links++;
	return 0;
}

static int attach_cpus(struct sampler *s, char *err_msg, size_t err_len)
{
	int i, err;

	for (i = 0; i < s->nr_possible; i++) {
		if (s->cpus[i].fd < 0 || s->cpus[i].link)
			continue;
		err = attach_cpu(s, i);
		if (err) {
			set_err(err_msg, err_len, "cannot attach to the perf event on cpu %d: %s",
				i, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* pause or resume every attached event: an ioctl on our own fd, no capability */
static int enable_events(struct sampler *s, bool on, char *err_msg, size_t err_len)
{
	int i;

	for (i = 0; i < s->nr_possible; i++)
		if (s->cpus[i].link &&
		    ioctl(s->cpus[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0)) {
			set_err(err_msg, err_len, "cannot %s the perf event on cpu %d: %s",
				on ? "enable" : "pause", i, strerror(errno));
			return -errno;
		}
	s->enabled = on;
	/* the off-CPU program runs with the events: a wait ends in the window */
	s->skel->bss->off_cpu_running = on;
	return 0;
}

/* say at start what the kernel will make of the frequency */
static void check_max_rate(struct sampler *s, unsigned int frequency)
{
	long max = cpus_max_sample_rate();

	s->health.max_sample_rate = max;
	if (max >= 0 && max < frequency)
		fprintf(stderr,
			"ctxprof: -F %u is above kernel.perf_event_max_sample_rate=%ld: the "
			"kernel will throttle each CPU to about %ld samples/s, and the profile's "
			"CPU times will read that much short; ask for -F %ld or less, or raise "
			"the limit: sysctl -w kernel.perf_event_max_sample_rate=%u\n",
			frequency, max, max, max, frequency);
}

/* what sampler__prepare() and the non-prepared sampler__attach() share */
static int open_and_attach(struct sampler *s, unsigned int frequency, char *err_msg, size_t err_len)
{
	int err;

	set_attr(s, frequency);
	check_max_rate(s, frequency);
	err = open_events(s, err_msg, err_len);
	if (!err)
		err = attach_cpus(s, err_msg, err_len);
	s->health.cpus_sampled = s->nr_links;
	return err;
}

struct sampler *sampler__open(const struct sampler_opts *opts, sampler_record_fn fn,
			      void *const *ctxs, char *err_msg, size_t err_len)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = opts->btf_path);
	struct sampler *s;
	bool hops;
	int i, err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fn = fn;
	s->stats_fd = -1;
	s->health.effective_hz = -1;
	s->health.run_hz = -1;
	s->health.lowest_hz = -1;
	s->nr_possible = libbpf_num_possible_cpus();
	if (s->nr_possible <= 0) {
		err = s->nr_possible ? s->nr_possible : -ENODEV;
		set_err(err_msg, err_len, "cannot count possible CPUs: %s", strerror(-err));
		goto err_free;
	}
	/* more parts than rings would leave a consumer with nothing to do */
	s->nr_parts = opts->nr_parts < 1 ? 1 : opts->nr_parts;
	if (s->nr_parts > s->nr_possible)
		s->nr_parts = s->nr_possible;
	s->cpus = calloc(s->nr_possible, sizeof(*s->cpus));
	s->online = calloc(s->nr_possible, sizeof(*s->online));
	s->percpu = calloc(s->nr_possible, sizeof(*s->percpu));
	s->runs = calloc(s->nr_possible, sizeof(*s->runs));
	s->busy = calloc(s->nr_possible, sizeof(*s->busy));
	s->ring_pos = calloc(s->nr_possible, sizeof(*s->ring_pos));
	s->ring_bytes = opts->ring_bytes;
	s->ring_fds = malloc(s->nr_possible * sizeof(*s->ring_fds));
	/* before anything can fail: sampler__free() closes the fds it finds */
	for (i = 0; s->ring_fds && i < s->nr_possible; i++)
		s->ring_fds[i] = -1;
	for (i = 0; s->cpus && i < s->nr_possible; i++)
		s->cpus[i].fd = -1;
	s->parts = calloc(s->nr_parts, sizeof(*s->parts));
	if (!s->ring_fds || !s->parts || !s->cpus || !s->online || !s->percpu || !s->runs ||
	    !s->busy || !s->ring_pos) {
		err = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < s->nr_parts; i++) {
		s->parts[i].s = s;
		s->parts[i].ctx = ctxs[i];
	}

	/*
	 * Without bpf_loop (before 5.17), the build of the sampler that calls
	 * none of its callbacks: the kernel refuses a program that references
	 * one.  Its skeleton's struct is sampler_bpf's (the Makefile checks),
	 * and load and destroy go through the skeleton it carries.  It walks
	 * the tables by tail calls (unwind_hop, bpf/sampler.bpf.c).
	 */
	hops = !sampler__has_bpf_loop() && opts->unwind != UNWIND_MODE_FP;
	if (sampler__has_bpf_loop())
		s->skel = sampler_bpf__open_opts(&open_opts);
	else
		s->skel = (struct sampler_bpf *)sampler_compat_bpf__open_opts(&open_opts);
	if (!s->skel) {
		err = -errno;
		set_err(err_msg, err_len, "cannot open the BPF object: %s", strerror(errno));
		goto err_free;
	}
	bpf_program__set_autoload(s->skel->progs.unwind_hop, hops);
	bpf_map__set_autocreate(s->skel->maps.unwind_hops, hops);
	s->skel->rodata->target_tgid = opts->filter_pids ? 0 : opts->pid;
	s->skel->rodata->filter_pids = opts->filter_pids;
	s->skel->rodata->kernel_stacks = opts->kernel_stacks;
	s->skel->rodata->read_context = opts->read_context;
	/* the label map's walk is a bpf_loop: not read on a kernel without it */
	s->skel->rodata->read_go = opts->read_context && sampler__has_bpf_loop();
	s->skel->rodata->read_py = opts->read_python && sampler__has_bpf_loop();
	s->skel->rodata->off_cpu = opts->off_cpu;
	s->skel->rodata->off_cpu_threshold_ns = opts->off_cpu_threshold_ns;
	if (opts->off_cpu_budget)
		s->skel->rodata->off_cpu_budget = opts->off_cpu_budget;
	/* not loaded at all without --off-cpu: nothing on the scheduler's path */
	bpf_program__set_autoload(s->skel->progs.offcpu_switch, opts->off_cpu);
	bpf_map__set_autocreate(s->skel->maps.offcpu_store, opts->off_cpu);
	bpf_map__set_autocreate(s->skel->maps.offcpu_extras, opts->off_cpu);
	/* wake the collector when a ring is a quarter full: far from
	 * overflowing, yet rare (a 4 MiB ring holds seconds of samples) */
	s->skel->rodata->wakeup_bytes = opts->ring_bytes / 4;
	s->skel->rodata->unwind_mode = opts->unwind;
	bpf_map__set_max_entries(s->skel->maps.rings, s->nr_possible);
	/* --unwind fp never reads them: keep them at one entry */
	if (opts->unwind != UNWIND_MODE_FP) {
		/* chunks of rows: made as tables land (unwind/unwind_store.h) */
		bpf_map__set_max_entries(s->skel->maps.unwind_rows,
					 (opts->unwind_rows + UNWIND_CHUNK_ROWS - 1) /
						 UNWIND_CHUNK_ROWS);
		bpf_map__set_max_entries(s->skel->maps.unwind_rules, opts->unwind_rules);
		bpf_map__set_max_entries(s->skel->maps.unwind_mappings, opts->unwind_mappings);
		bpf_map__set_max_entries(s->skel->maps.unwind_procs, opts->unwind_procs);
	}
	err = create_rings(s, opts->ring_bytes, err_msg, err_len);
	if (err)
		goto err_free;

	err = sampler_bpf__load(s->skel);
	if (err) {
		set_err(err_msg, err_len, "cannot load the BPF sampler: %s%s", strerror(-err),
			err == -EPERM ? " (missing CAP_BPF/CAP_PERFMON, or locked down kernel?)"
				      : "");
		goto err_free;
	}
	err = register_rings(s, err_msg, err_len);
	if (err)
		goto err_free;
	if (hops &&
	    bpf_map_update_elem(bpf_map__fd(s->skel->maps.unwind_hops), &(__u32){0},
				&(int){bpf_program__fd(s->skel->progs.unwind_hop)}, BPF_ANY)) {
		err = -errno;
		set_err(err_msg, err_len, "cannot insert the unwinder's tail call: %s",
			strerror(errno));
		goto err_free;
	}
	if (opts->off_cpu) {
		/* attached now, while privileged; it records nothing until
		 * the events are enabled (off_cpu_running) */
		s->offcpu_link = bpf_program__attach(s->skel->progs.offcpu_switch);
		if (!s->offcpu_link) {
			err = -errno;
			set_err(err_msg, err_len,
				"cannot attach the off-CPU program to sched_switch: %s (run "
				"without --off-cpu)",
				strerror(errno));
			goto err_free;
		}
	}
	return s;

err_free:
	sampler__free(s);
	errno = -err;
	return NULL;
}

int sampler__prepare(struct sampler *s, unsigned int frequency, char *err_msg, size_t err_len)
{
	int err;

	if (s->nr_links)
		return 0;
	err = open_and_attach(s, frequency, err_msg, err_len);
	/* libbpf enabled each event: the drains do not run yet */
	if (!err)
		err = enable_events(s, false, err_msg, err_len);
	if (err)
		return err;
	/* while we hold CAP_PERFMON and run alone: for CPUs that come online later */
	s->opener = perf_opener__start(&s->attr);
	if (!s->opener)
		fprintf(stderr,
			"ctxprof: cannot start the perf event opener (%s): a CPU that comes "
			"online later will not be sampled\n",
			strerror(errno));
	return 0;
}

int sampler__attach(struct sampler *s, unsigned int frequency, char *err_msg, size_t err_len)
{
	int err;

	if (!s->nr_links) {
		err = open_and_attach(s, frequency, err_msg, err_len);
		if (!err)
			s->enabled = true;
		return err;
	}
	return s->enabled ? 0 : enable_events(s, true, err_msg, err_len);
}

/* a ring map's first page is the consumer position, the second the
 * producer's; both may be mapped read-only by anyone holding the fd */
static const unsigned long *map_ring_pos(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

int sampler__ring_fill(struct sampler *s, double *fill, int n)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long cons, prod;
	int i;

	for (i = 0; i < n && i < s->nr_possible; i++) {
		const unsigned long *pos = s->ring_pos[i];

		if (!pos && s->ring_fds[i] >= 0)
			pos = s->ring_pos[i] = map_ring_pos(s->ring_fds[i]);
		if (!pos) {
			fill[i] = -1;
			continue;
		}
		cons = __atomic_load_n(&pos[0], __ATOMIC_ACQUIRE);
		prod = __atomic_load_n(&pos[page / sizeof(long)], __ATOMIC_ACQUIRE);
		fill[i] = prod >= cons ? (double)(prod - cons) / s->ring_bytes : 0;
	}
	return i;
}

int sampler__poll(struct sampler *s, int part, int timeout_ms)
{
	struct ring_buffer *rb = s->parts[part].rb;
	int n, m;

	/* records submitted without wakeup are not signalled on epoll: wait
	 * for the watermark or the timeout, then sweep every ring */
	n = ring_buffer__poll(rb, timeout_ms);
	if (n < 0)
		return n;
	m = ring_buffer__consume(rb);
	if (m < 0)
		return m;
	return n + m;
}

int sampler__stop(struct sampler *s)
{
	uint64_t stats[SAMPLER_STAT_MAX], records;
	int i, p, n, total = 0, err;

	for (i = 0; i < s->nr_possible; i++)
		close_cpu(s, i);
	s->enabled = false;
	s->skel->bss->off_cpu_running = false;
	/* closing a cpu-clock event cancels its hrtimer and waits for a running
	 * handler; still, sweep until every record the BPF side counted as
	 * emitted has arrived, so the counters reconcile (bounded: 1 s) */
	for (i = 0; i < 100; i++) {
		records = 0;
		for (p = 0; p < s->nr_parts; p++) {
			n = ring_buffer__consume(s->parts[p].rb);
			if (n < 0)
				return n;
			total += n;
			records += s->parts[p].nr_records;
		}
		err = sampler__read_stats(s, stats);
		if (err)
			return err;
		if (records >= stats[SAMPLER_STAT_EMITTED])
			break;
		usleep(10000);
	}
	return total;
}

/* @prog's run count and time; 0s when it is not loaded or not readable */
static void prog_cost(const struct bpf_program *prog, uint64_t *runs, uint64_t *ns)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = prog ? bpf_program__fd(prog) : -1;

	*runs = *ns = 0;
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	*runs = info.run_cnt;
	*ns = info.run_time_ns;
}

void sampler__prog_cost(const struct sampler *s, struct sampler_prog_cost *out)
{
	prog_cost(s->skel->progs.sample, &out->sample_runs, &out->sample_ns);
	prog_cost(bpf_program__autoload(s->skel->progs.offcpu_switch) ? s->skel->progs.offcpu_switch
								      : NULL,
		  &out->switch_runs, &out->switch_ns);
}

int sampler__enable_bpf_stats(struct sampler *s)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0)
		return -errno;
	s->stats_fd = fd;
	return 0;
}

int sampler__read_stats(struct sampler *s, uint64_t *out)
{
	return percpu_stats__read(bpf_map__fd(s->skel->maps.stats), SAMPLER_STAT_MAX, out);
}

/* the program's runs on each CPU's tasks (samples and filtered ticks, not
 * idle ones) into s->runs */
static int read_runs(struct sampler *s)
{
	int fd = bpf_map__fd(s->skel->maps.stats);
	__u32 keys[] = {SAMPLER_STAT_SAMPLES, SAMPLER_STAT_FILTERED};
	unsigned int k;
	int i;

	memset(s->runs, 0, s->nr_possible * sizeof(*s->runs));
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		if (bpf_map_lookup_elem(fd, &keys[k], s->percpu))
			return -errno;
		for (i = 0; i < s->nr_possible; i++)
			s->runs[i] += s->percpu[i];
	}
	return 0;
}

/* how long @cpu's event has been enabled, -errno when it cannot be read */
static int64_t enabled_ns(const struct sampler *s, int cpu)
{
	uint64_t v[2];

	if (read(s->cpus[cpu].fd, v, sizeof(v)) != sizeof(v))
		return -EIO;
	return (int64_t)v[1];
}

/* an online CPU without an event gets one; said once until it works */
static void reopen_cpu(struct sampler *s, int cpu)
{
	struct cpu_event *ev = &s->cpus[cpu];
	int err;

	ev->fd = open_cpu_clock(s, cpu, false);
	err = ev->fd < 0 ? ev->fd : attach_cpu(s, cpu);
	if (!err && !s->enabled)
		err = ioctl(ev->fd, PERF_EVENT_IOC_DISABLE, 0) ? -errno : 0;
	if (err) {
		close_cpu(s, cpu);
		s->health.open_failed++;
		if (!ev->said)
			fprintf(stderr,
				"ctxprof: cpu %d is online but its perf event cannot be opened "
				"(%s): it is not sampled; trying again every second\n",
				cpu, strerror(-err));
		ev->said = true;
		return;
	}
	if (ev->said)
		fprintf(stderr, "ctxprof: cpu %d is sampled again\n", cpu);
	ev->said = false;
}

/* one CPU's busy time since the last check, within its event's @enabled */
static uint64_t busy_since(const struct sampler *s, int cpu, uint64_t enabled)
{
	uint64_t busy =
		s->busy[cpu] > s->cpus[cpu].busy_ns ? s->busy[cpu] - s->cpus[cpu].busy_ns : 0;

	return busy < enabled ? busy : enabled;
}

/*
 * Hotplug: an event whose CPU went offline is closed, and one whose enabled
 * time stood still since the last check died with an offline and online
 * cycle in between (the kernel removes the events of a CPU that goes and
 * never restores them); an online CPU without an event gets one.  Adds what
 * the events that lived through the interval counted, over the busy time of
 * their CPUs, to the rate window.
 */
static void check_cpus(struct sampler *s)
{
	uint64_t runs = 0, ns = 0;
	struct cpu_event *ev;
	int64_t en;
	int i;

	if (cpus_online(s->online, s->nr_possible) || read_runs(s) ||
	    cpus_busy_ns(s->busy, s->nr_possible))
		return;
	s->health.cpus_online = 0;
	for (i = 0; i < s->nr_possible; i++) {
		ev = &s->cpus[i];
		s->health.cpus_online += s->online[i];
		if (ev->fd >= 0) {
			en = enabled_ns(s, i);
			if (!s->online[i] || en < 0 ||
			    (ev->measured && (uint64_t)en == ev->enabled_ns)) {
				close_cpu(s, i);
				s->health.cpus_offlined++;
				ev->offline = true;
				fprintf(stderr,
					"ctxprof: cpu %d went offline: its perf event is closed\n",
					i);
			} else {
				if (ev->measured) {
					runs += s->runs[i] - ev->runs;
					ns += busy_since(s, i, en - ev->enabled_ns);
				}
				ev->measured = true;
				ev->enabled_ns = en;
				ev->runs = s->runs[i];
				ev->busy_ns = s->busy[i];
			}
		}
		if (!s->online[i]) {
			ev->offline = true;
			continue;
		}
		if (ev->offline) {
			s->health.cpus_onlined++;
			ev->offline = false;
			fprintf(stderr, "ctxprof: cpu %d came online: opening its perf event\n", i);
		}
		if (ev->fd < 0)
			reopen_cpu(s, i);
	}
	s->health.cpus_sampled = s->nr_links;
	if (!ns)
		return;
	cpu_rate__add(&s->rate, runs, ns);
	s->run_runs += runs;
	s->run_ns += ns;
}

/* the effective rate against the requested one; said once when well below */
static void check_rate(struct sampler *s)
{
	struct sampler_health *h = &s->health;
	double hz = cpu_rate__hz(&s->rate);

	if (s->run_ns >= 1000000000ull)
		h->run_hz = s->run_runs * 1e9 / s->run_ns;
	if (hz < 0)
		return;
	h->effective_hz = hz;
	if (h->lowest_hz < 0 || hz < h->lowest_hz)
		h->lowest_hz = hz;
	h->throttled = hz < SAMPLER_RATE_LOW * h->requested_hz;
	if (!h->throttled)
		return;
	h->throttled_checks++;
	if (s->said_slow)
		return;
	s->said_slow = true;
	if (h->max_sample_rate >= 0 && h->max_sample_rate < h->requested_hz)
		fprintf(stderr,
			"ctxprof: kernel throttles sampling: %.0f Hz effective of %u Hz requested; "
			"perf_event_max_sample_rate=%ld\n",
			hz, h->requested_hz, h->max_sample_rate);
	else
		fprintf(stderr,
			"ctxprof: sampling below the requested rate: %.0f Hz effective of %u Hz "
			"requested (perf_event_max_sample_rate=%ld): perf interrupts throttled or "
			"timer interrupts late\n",
			hz, h->requested_hz, h->max_sample_rate);
}

void sampler__check(struct sampler *s)
{
	s->health.max_sample_rate = cpus_max_sample_rate();
	if (!s->enabled)
		return;
	check_cpus(s);
	check_rate(s);
}

void sampler__health(const struct sampler *s, struct sampler_health *out)
{
	*out = s->health;
}

int sampler__pid_map_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.target_pids);
}

int sampler__ctx_map_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.ctx_slots);
}

int sampler__otel_map_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.otel_tls);
}

int sampler__go_map_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.go_procs);
}

int sampler__python_map_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.python_procs);
}

void sampler__unwind_maps(const struct sampler *s, struct unwind_store_maps *out)
{
	*out = (struct unwind_store_maps){
		.rows_fd = bpf_map__fd(s->skel->maps.unwind_rows),
		.rules_fd = bpf_map__fd(s->skel->maps.unwind_rules),
		.mappings_fd = bpf_map__fd(s->skel->maps.unwind_mappings),
		.procs_fd = bpf_map__fd(s->skel->maps.unwind_procs),
		.nr_rows = bpf_map__max_entries(s->skel->maps.unwind_rows) * UNWIND_CHUNK_ROWS,
		.nr_rules = bpf_map__max_entries(s->skel->maps.unwind_rules),
		.nr_mappings = bpf_map__max_entries(s->skel->maps.unwind_mappings),
		.nr_procs = bpf_map__max_entries(s->skel->maps.unwind_procs),
	};
}

bool sampler__has_bpf_loop(void)
{
	const char *walker = getenv("CTXPROF_UNWIND_WALKER");

	/* the tests' way to run the tail-call walker on a kernel with bpf_loop */
	if (walker && !strcmp(walker, "tail"))
		return false;
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) == 1;
}

bool sampler__can_tail_unwind(void)
{
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_PROG_ARRAY, NULL) == 1 &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_tail_call, NULL) == 1;
}

/* the number of arguments sched_switch's tracepoint passes (its BTF prototype), -1: unknown */
static int sched_switch_args(const char *btf_path)
{
	struct btf *btf = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	const struct btf_type *t;
	int id, n = -1;

	if (!btf)
		return -1;
	/* typedef void (*btf_trace_sched_switch)(void *, bool, prev, next[, prev_state]) */
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	if (t)
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_func_proto(t))
		n = btf_vlen(t) - 1; /* less the context */
	btf__free(btf);
	return n;
}

bool sampler__can_off_cpu(const char *btf_path, char *why, size_t len)
{
	/* the real reasons first: a kernel with prev_state has bpf_loop */
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) != 1) {
		snprintf(why, len, "task storage (Linux 5.11+)");
		return false;
	}
	if (sched_switch_args(btf_path) < 4) {
		snprintf(why, len, "sched_switch's prev_state (Linux 5.18+)");
		return false;
	}
	/* the off-CPU program walks under bpf_loop: no tail-call walker for
	 * it (no kernel needs one: prev_state came after bpf_loop) */
	if (!sampler__has_bpf_loop()) {
		snprintf(why, len, "Linux 5.17+ (bpf_loop)");
		return false;
	}
	return true;
}

int sampler__nr_parts(const struct sampler *s)
{
	return s->nr_parts;
}

int sampler__nr_cpus(const struct sampler *s)
{
	return s->nr_links;
}

void sampler__free(struct sampler *s)
{
	int i;

	if (!s)
		return;
	if (s->cpus)
		for (i = 0; i < s->nr_possible; i++)
			close_cpu(s, i);
	perf_opener__stop(s->opener);
	bpf_link__destroy(s->offcpu_link);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	if (s->ring_pos)
		for (i = 0; i < s->nr_possible; i++)
			if (s->ring_pos[i])
				munmap((void *)s->ring_pos[i], 2 * sysconf(_SC_PAGESIZE));
	if (s->parts)
		for (i = 0; i < s->nr_parts; i++)
			ring_buffer__free(s->parts[i].rb);
	if (s->ring_fds)
		for (i = 0; i < s->nr_possible; i++)
			if (s->ring_fds[i] >= 0)
				close(s->ring_fds[i]);
	sampler_bpf__destroy(s->skel);
	free(s->parts);
	free(s->cpus);
	free(s->online);
	free(s->percpu);
	free(s->runs);
	free(s->busy);
	free(s->ring_pos);
	free(s->ring_fds);
	free(s);
}
