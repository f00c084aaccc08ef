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
#include <bpf/libbpf.h>
#include "util/errmsg.h"
#include "sampling/sampler.h"
#include "sampling/cpus.h"
#include "sampler.skel.h"
#include "util/percpu_stats.h"

/* a set of rings consumed by one thread */
struct ring_part {
	struct sampler *s;
	struct ring_buffer *rb;
	uint64_t nr_records; /* records handed to fn; written by the part's thread only */
	void *ctx;	     /* the callback's argument for this part */
};

struct sampler {
	struct sampler_bpf *skel;
	struct ring_part *parts;
	int nr_parts;
	struct bpf_link **links; /* one per online CPU */
	int *ring_fds;		 /* one per possible CPU */
	int nr_links;
	/* the cpu-clock events sampler__prepare() opened, one per online CPU,
	 * each owned by its link once attached (nr_events = nr_links then) */
	int *event_fds;
	int *event_cpus;
	int nr_events;
	bool enabled;
	/* each ring's consumer and producer positions, mapped read-only for
	 * sampler__ring_fill(); NULL entries where the mapping failed */
	const unsigned long **ring_pos;
	size_t ring_bytes;
	int nr_possible;
	sampler_record_fn fn;
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

static int open_cpu_clock(int cpu, unsigned int frequency)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* a fixed period, not freq mode: cpu-clock is an hrtimer, so
		 * every sample then stands for exactly 1e9/frequency ns */
		.sample_period = 1000000000ull / frequency,
		/* enabled by the attach, once the program is on it */
		.disabled = 1,
	};

	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
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
static int open_events(struct sampler *s, unsigned int frequency, char *err_msg, size_t err_len)
{
	bool *online;
	int i, fd, err = 0;

	online = calloc(s->nr_possible, sizeof(*online));
	if (!online)
		return -ENOMEM;
	err = cpus_online(online, s->nr_possible);
	if (err) {
		set_err(err_msg, err_len, "cannot read online CPUs: %s", strerror(-err));
		goto out;
	}
	for (i = 0; i < s->nr_possible; i++) {
		if (!online[i])
			continue;
		fd = open_cpu_clock(i, frequency);
		if (fd < 0) {
			err = -errno;
			set_err(err_msg, err_len, "perf_event_open(cpu-clock, cpu %d): %s%s", i,
				strerror(errno),
				errno == EINVAL
					? " (frequency above kernel.perf_event_max_sample_rate?)"
					: "");
			goto out;
		}
		s->event_cpus[s->nr_events] = i;
		s->event_fds[s->nr_events++] = fd;
	}
	if (!s->nr_events) {
		err = -ENODEV;
		set_err(err_msg, err_len, "no online CPU to sample");
	}
out:
	free(online);
	return err;
}

static void close_events(struct sampler *s)
{
	int i;

	/* the first nr_links belong to their links */
	for (i = s->nr_links; i < s->nr_events; i++)
		close(s->event_fds[i]);
	s->nr_events = 0;
}

/* the program onto each opened event; libbpf enables it, and the link owns it */
static int attach_cpus(struct sampler *s, char *err_msg, size_t err_len)
{
	int i, err;

	for (i = s->nr_links; i < s->nr_events; i++) {
		s->links[i] =
			bpf_program__attach_perf_event(s->skel->progs.sample, s->event_fds[i]);
		if (!s->links[i]) {
			err = -errno;
			set_err(err_msg, err_len, "cannot attach to the perf event on cpu %d: %s",
				s->event_cpus[i], strerror(errno));
			return err;
		}
		s->nr_links++;
	}
	return 0;
}

/* pause or resume every attached event: an ioctl on our own fd, no capability */
static int enable_events(struct sampler *s, bool on, char *err_msg, size_t err_len)
{
	int i;

	for (i = 0; i < s->nr_links; i++)
		if (ioctl(s->event_fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE,
			  0)) {
			set_err(err_msg, err_len, "cannot %s the perf event on cpu %d: %s",
				on ? "enable" : "pause", s->event_cpus[i], strerror(errno));
			return -errno;
		}
	s->enabled = on;
	return 0;
}

struct sampler *sampler__open(const struct sampler_opts *opts, sampler_record_fn fn,
			      void *const *ctxs, char *err_msg, size_t err_len)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = opts->btf_path);
	struct sampler *s;
	int i, err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fn = fn;
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
	s->links = calloc(s->nr_possible, (sizeof(struct bpf_link *)));
	s->event_fds = calloc(s->nr_possible, sizeof(*s->event_fds));
	s->event_cpus = calloc(s->nr_possible, sizeof(*s->event_cpus));
	s->ring_pos = calloc(s->nr_possible, sizeof(*s->ring_pos));
	s->ring_bytes = opts->ring_bytes;
	s->ring_fds = malloc(s->nr_possible * sizeof(*s->ring_fds));
	/* before anything can fail: sampler__free() closes the fds it finds */
	for (i = 0; s->ring_fds && i < s->nr_possible; i++)
		s->ring_fds[i] = -1;
	s->parts = calloc(s->nr_parts, sizeof(*s->parts));
	if (!s->links || !s->ring_fds || !s->parts || !s->event_fds || !s->event_cpus ||
	    !s->ring_pos) {
		err = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < s->nr_parts; i++) {
		s->parts[i].s = s;
		s->parts[i].ctx = ctxs[i];
	}

	s->skel = sampler_bpf__open_opts(&open_opts);
	if (!s->skel) {
		err = -errno;
		set_err(err_msg, err_len, "cannot open the BPF object: %s", strerror(errno));
		goto err_free;
	}
	s->skel->rodata->target_tgid = opts->filter_pids ? 0 : opts->pid;
	s->skel->rodata->filter_pids = opts->filter_pids;
	s->skel->rodata->kernel_stacks = opts->kernel_stacks;
	s->skel->rodata->read_context = opts->read_context;
	/* wake the collector when a ring is a quarter full: far from
	 * overflowing, yet rare (a 4 MiB ring holds seconds of samples) */
	s->skel->rodata->wakeup_bytes = opts->ring_bytes / 4;
	s->skel->rodata->unwind_mode = opts->unwind;
	bpf_map__set_max_entries(s->skel->maps.rings, s->nr_possible);
	/* --unwind fp never reads them: keep them at one entry */
	if (opts->unwind != UNWIND_MODE_FP) {
		bpf_map__set_max_entries(s->skel->maps.unwind_rows, opts->unwind_rows);
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
	err = open_events(s, frequency, err_msg, err_len);
	if (!err)
		err = attach_cpus(s, err_msg, err_len);
	/* libbpf enabled each event: the drains do not run yet */
	if (!err)
		err = enable_events(s, false, err_msg, err_len);
	return err;
}

int sampler__attach(struct sampler *s, unsigned int frequency, char *err_msg, size_t err_len)
{
	int err;

	if (!s->nr_links) {
		err = open_events(s, frequency, err_msg, err_len);
		return err ? err : attach_cpus(s, err_msg, err_len);
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

	for (i = 0; i < s->nr_links; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
	}
	s->nr_links = 0;
	s->nr_events = 0;
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

int sampler__read_stats(struct sampler *s, uint64_t *out)
{
	return percpu_stats__read(bpf_map__fd(s->skel->maps.stats), SAMPLER_STAT_MAX, out);
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

void sampler__unwind_maps(const struct sampler *s, struct unwind_store_maps *out)
{
	*out = (struct unwind_store_maps){
		.rows_fd = bpf_map__fd(s->skel->maps.unwind_rows),
		.rules_fd = bpf_map__fd(s->skel->maps.unwind_rules),
		.mappings_fd = bpf_map__fd(s->skel->maps.unwind_mappings),
		.procs_fd = bpf_map__fd(s->skel->maps.unwind_procs),
		.nr_rows = bpf_map__max_entries(s->skel->maps.unwind_rows),
		.nr_rules = bpf_map__max_entries(s->skel->maps.unwind_rules),
		.nr_mappings = bpf_map__max_entries(s->skel->maps.unwind_mappings),
		.nr_procs = bpf_map__max_entries(s->skel->maps.unwind_procs),
	};
}

bool sampler__can_unwind(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) == 1;
}

int sampler__nr_parts(const struct sampler *s)
{
	return s->nr_parts;
}

int sampler__nr_possible(const struct sampler *s)
{
	return s->nr_possible;
}

int sampler__nr_cpus(const struct sampler *s)
{
	return s->nr_links;
}

int sampler__prog_fd(const struct sampler *s)
{
	return bpf_program__fd(s->skel->progs.sample);
}

void sampler__free(struct sampler *s)
{
	int i;

	if (!s)
		return;
	if (s->links)
		for (i = 0; i < s->nr_links; i++)
			bpf_link__destroy(s->links[i]);
	if (s->event_fds)
		close_events(s);
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
	free(s->links);
	free(s->event_fds);
	free(s->event_cpus);
	free(s->ring_pos);
	free(s->ring_fds);
	free(s);
}
