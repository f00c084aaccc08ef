// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collector - profile one process with the BPF sampler and write pprof.
 *
 * Drain threads (sampling/drain.c) empty the per-CPU rings: each stack goes
 * into the shared call-trace storage, each sample into the drain's sample
 * table.  The tracker (processes/tracker.c) keeps the thread registry, where
 * every profiled process has its state.  The main thread keeps time: it reads
 * the mappings of processes the drains found unread or due, polls libctxprof
 * regions, draws the status line; at each interval (continuous mode) and at
 * the end (duration, signal or target exit) it exports: rotate the storage,
 * close the drains' window (each sample goes by its time), symbolize, write
 * pprof.  See
 * docs/ARCHITECTURE.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "appctx/app_context.h"
#include "appctx/go_labels.h"
#include "appctx/python_proc.h"
#include "appctx/otel_context.h"
#include "collector/cli.h"
#include "collector/state.h"
#include "collector/health.h"
#include "collector/intervals.h"
#include "collector/metrics_feed.h"
#include "collector/privileges.h"
#include "collector/report.h"
#include "export/export.h"
#include "export/metrics.h"
#include "export/output.h"
#include "export/outfiles.h"
#include "export/push.h"
#include "export/scrape.h"
#include "export/series.h"
#include "export/scrape_queue.h"
#include "export/timeline.h"
#include "processes/pod_meta.h"
#include "processes/process_state.h"
#include "processes/tracker.h"
#include "sampling/cpus.h"
#include "sampling/drain.h"
#include "sampling/perf_opener.h"
#include "sampling/sample_table.h"
#include "sampling/sampler.h"
#include "storage/calltrace_storage.h"
#include "symbols/perf_map.h"
#include "symbols/symbolizer.h"
#include "traces/trace.h"
#include "unwind/unwinder.h"
#include "util/clock.h"
#include "util/fd_opener.h"
#include "util/read_capped.h"

#define POLL_MS	   100 /* ring sweep period; the BPF side wakes us earlier when a ring fills */
#define PF_KTHREAD 0x00200000 /* include/linux/sched.h: /proc/PID/stat's flags */
/* at start, how long to wait for the tables of what runs, silently, then in all */
#define UNWIND_START_WAIT_MS 1000
#define UNWIND_START_MAX_MS  30000

/*
 * How long before its window ends an interval's export begins: the storage
 * rotates then, so that the next window's samples, read from its first
 * moment on, put their stacks after it (the next export is handed them).
 * The main loop wakes every POLL_MS.
 */
#define EXPORT_LEAD_NS (2ull * POLL_MS * 1000000)
/* the app regions' poll period while dictionary records come in */
#define DICT_POLL_NS (10ull * 1000000)

static volatile sig_atomic_t stop_signal;
static int verbose;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && verbose < 2)
		return 0;
	if (level == LIBBPF_INFO && verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int check_kernel(const struct collector_opts *o)
{
	if (o->btf_path) {
		if (access(o->btf_path, R_OK)) {
			fprintf(stderr, "collector: --btf %s: %s\n", o->btf_path, strerror(errno));
			return -errno;
		}
		return 0;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr,
			"collector: kernel has no BTF (/sys/kernel/btf/vmlinux: %s): use a "
			"kernel built with CONFIG_DEBUG_INFO_BTF=y, or pass --btf FILE with this "
			"kernel's BTF (BTFHub's archive has one per distribution kernel; or "
			"pahole --btf_encode_detached FILE on its debug vmlinux)\n",
			strerror(errno));
		return -ENOENT;
	}
	if (access("/proc/sys/kernel/perf_event_paranoid", R_OK)) {
		fprintf(stderr, "collector: kernel has no perf events (CONFIG_PERF_EVENTS)\n");
		return -ENOENT;
	}
	return 0;
}

/* the temporary files a killed run left where ours go: removed, said */
static void clean_temps(const char *path, bool is_dir)
{
	unsigned int n;

	if (!output_clean_temps(path, is_dir, &n) && n)
		fprintf(stderr, "ctxprof: removed %u temporary file%s a killed run left %s %s\n", n,
			n == 1 ? "" : "s", is_dir ? "in" : "beside", path);
}

/* fail before profiling, not after an hour of it, when the output cannot be written */
static int check_outputs(const struct collector_opts *o)
{
	const char *dir = o->output_dir ? o->output_dir : ".";
	char why[256];
	int err;

	if (o->interval) {
		err = output_dir_check(dir, why, sizeof(why));
		if (err) {
			fprintf(stderr, "collector: --output-dir %s: %s\n", dir, why);
			return err;
		}
		clean_temps(dir, true);
	} else {
		err = output_check(o->output, why, sizeof(why));
		if (err) {
			fprintf(stderr, "collector: cannot write %s: %s\n", o->output, why);
			return err;
		}
		clean_temps(o->output, false);
	}
	if (o->timeline) {
		if (o->output && !strcmp(o->timeline, o->output)) {
			fprintf(stderr, "collector: --timeline and --output name the same file\n");
			return -EINVAL;
		}
		err = output_check(o->timeline, why, sizeof(why));
		if (err) {
			fprintf(stderr, "collector: cannot write the timeline %s: %s\n",
				o->timeline, why);
			return err;
		}
		clean_temps(o->timeline, false);
	}
	return 0;
}

/*
 * What /proc/@pid/stat says of the target: its leader's state (field 3), the
 * kernel's task flags (field 9) and its threads (field 20); false when it
 * cannot be read.
 */
static bool target_stat(pid_t pid, char *state, unsigned long *flags, long *threads)
{
	char path[32], buf[1024], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = read_small(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* the name may hold anything, ')' included: the fields follow the last ')' */
	p = strrchr(buf, ')');
	return p &&
	       sscanf(p + 1,
		      " %c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld",
		      state, flags, threads) == 3;
}

/* a process to profile: alive, and not a kernel thread */
static int open_target(pid_t pid)
{
	unsigned long flags = 0;
	long threads = 0;
	char state = 0;
	int fd = syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0) {
		if (errno == ESRCH)
			fprintf(stderr, "collector: no process with pid %d\n", pid);
		else
			fprintf(stderr, "collector: cannot watch pid %d: %s\n", pid,
				strerror(errno));
		return -errno;
	}
	if (target_stat(pid, &state, &flags, &threads)) {
		/* a zombie leader whose threads run on is a live process */
		if ((state == 'Z' || state == 'X') && threads <= 1) {
			fprintf(stderr,
				"collector: pid %d has exited (a zombie its parent has not "
				"reaped): nothing to profile\n",
				pid);
			close(fd);
			return -ESRCH;
		}
		if (flags & PF_KTHREAD) {
			fprintf(stderr,
				"collector: pid %d is a kernel thread: it has no user stack; "
				"--all profiles kernel threads' kernel stacks\n",
				pid);
			close(fd);
			return -EINVAL;
		}
	}
	return fd;
}

static int64_t wall_ns(void)
{
	return (int64_t)clock_ns(CLOCK_REALTIME);
}

/* the push options of the command line */
static void push_opts_of(const struct collector_opts *o, struct push_opts *po)
{
	*po = (struct push_opts){
		.url = o->push_url,
		.token_file = o->push_token_file,
		.user = o->push_user,
		.password_file = o->push_password_file,
		.tenant = o->push_tenant,
		.ca_file = o->push_ca_file,
		.spool_dir = o->output_dir,
		.spool_bytes = o->push_spool_mib << 20,
		.timeout_s = o->push_timeout_s,
		.sample_rate = o->frequency,
		.off_cpu = o->off_cpu,
	};
}

/* what a --push-config directory holds, as the --push options would say it */
static void push_config_apply(struct collector_opts *o, const struct push_config *pc)
{
	o->push_url = pc->url[0] ? pc->url : NULL;
	o->push_user = pc->user[0] ? pc->user : NULL;
	o->push_tenant = pc->tenant[0] ? pc->tenant : NULL;
	o->push_token_file = pc->token_file[0] ? pc->token_file : NULL;
	o->push_password_file = pc->password_file[0] ? pc->password_file : NULL;
	o->push_ca_file = pc->ca_file[0] ? pc->ca_file : NULL;
}

static bool push_pending(struct push *p)
{
	struct push_stats st;

	push__stats(p, &st);
	return st.pending;
}

/* whether --push sent or kept (for the next start) any profile */
static bool push_delivered(struct push *p)
{
	struct push_stats st;

	push__stats(p, &st);
	return st.sent || st.kept;
}

/* a process the drains found unread gets its mappings read; one read
 * already is re-read at most once a second (PROCESS_STATE_REFRESH_NS), which
 * catches libraries loaded since (cheap when nothing changed) */
static void snapshot_recent(void *ctx, uint32_t pid)
{
	struct collector *c = ctx;
	struct process_state *st;

	st = process_states__get(c->states, c->reg, pid);
	if (st && atomic_load(&st->refresh_after_ns) <= mono_ns())
		process_states__refresh(c->states, st);
	/* a no-table-yet sample: installed unless its tables are current */
	if (st && c->unwinder)
		unwinder__request(c->unwinder, pid);
}

/*
 * A Python frame's code object the drains saw: named while its process
 * lives.  A process the registry does not know yet (its fork or exec still
 * in the lifecycle ring, behind the samples) is asked for again next time:
 * named only at export, after a short-lived process left, it would be unreadable.
 */
static bool name_recent_code(void *ctx, uint32_t pid, uint32_t exec_id, uint64_t w1, uint64_t w2)
{
	struct collector *c = ctx;
	struct process_state *st = process_states__find(c->states, c->reg, pid, exec_id);

	if (!st)
		return kill((pid_t)pid, 0) && errno == ESRCH;
	if (!st->python)
		python_procs__look(c->python, st);
	if (st->python)
		python_proc__prefetch(c->python, st->python, w1, w2);
	return true;
}

/* --pid: the target's mappings now and then, for a libctxprof region or an
 * OpenTelemetry context it creates while no sample asks (a blocked target) */
static void refresh_target(struct collector *c)
{
	struct process_state *st;

	st = process_states__get(c->states, c->reg, c->opts.pid);
	if (st)
		process_states__refresh(c->states, st);
}

/*
 * The readers of application context follow process mappings from the
 * main thread: a libctxprof region or an OpenTelemetry context mapping
 * that a read shows (any mode) is handed to them there, and every image's
 * first read to the reader of goroutine labels.
 */
static int subscribe_context(struct collector *c, char *err_msg, size_t err_len)
{
	struct process_state_subscriber app = {
		.changed = app_context__changed,
		.ctx = c->app,
		.main_thread = true,
		.wants = MAPPINGS_F_CTXPROF_REGION,
	};
	struct process_state_subscriber otel = {
		.changed = otel_context__changed,
		.ctx = c->otel,
		.main_thread = true,
		.wants = MAPPINGS_F_OTEL_CTX,
	};
	/* every image's first read: is it a Go program? */
	struct process_state_subscriber go = {
		.changed = go_labels__changed,
		.ctx = c->go,
		.main_thread = true,
		.first_read = true,
	};
	int err;

	err = process_states__subscribe(c->states, &app);
	if (!err)
		err = process_states__subscribe(c->states, &otel);
	if (!err && c->go)
		err = process_states__subscribe(c->states, &go);
	if (err)
		snprintf(err_msg, err_len, "cannot follow process mappings: %s", strerror(-err));
	return err;
}

/* every image's first read: does it run a CPython interpreter? */
static int subscribe_python(struct collector *c, char *err_msg, size_t err_len)
{
	struct process_state_subscriber py = {
		.changed = python_procs__changed,
		.ctx = c->python,
		.main_thread = true,
		.first_read = true,
	};
	int err = process_states__subscribe(c->states, &py);

	if (err)
		snprintf(err_msg, err_len, "cannot follow process mappings: %s", strerror(-err));
	return err;
}

/*
 * Wait up to POLL_MS for the target to exit (just sleep without one, -1),
 * less when a scrape is due sooner, and no longer once a scrape request
 * comes (@scrape_fd, -1: none).  True once the target exited.
 */
static bool wait_target(int pidfd, int scrape_fd, uint64_t due_ns)
{
	struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = scrape_fd, .events = POLLIN}};
	uint64_t now = mono_ns(), ms = POLL_MS;

	if (due_ns <= now)
		ms = 0;
	else if ((due_ns - now) / 1000000 + 1 < ms)
		ms = (due_ns - now) / 1000000 + 1;
	return poll(p, 2, (int)ms) > 0 && pidfd >= 0 && (p[0].revents & POLLIN);
}

/*
 * The BPF unwinder's maps out of --unwind-memory: fixed parts for rules,
 * mappings and processes, the rest rows (8 bytes each).  --unwind auto on a
 * kernel without bpf_loop falls back to frame pointers, with a word.
 */
static int unwind_setup(const struct collector_opts *o, struct sampler_opts *so, char *err_msg,
			size_t err_len)
{
	uint64_t budget = (uint64_t)o->unwind_mib << 20, fixed;

	if (so->unwind == UNWIND_MODE_FP)
		return 0;
	if (!sampler__can_unwind()) {
		if (so->unwind == UNWIND_MODE_DWARF) {
			snprintf(err_msg, err_len,
				 "--unwind dwarf needs Linux 5.17+ (bpf_loop); use --unwind fp");
			return -EOPNOTSUPP;
		}
		fprintf(stderr, "ctxprof: this kernel has no bpf_loop (Linux 5.17+): user stacks "
				"are walked by frame pointers (--unwind fp)\n");
		so->unwind = UNWIND_MODE_FP;
		return 0;
	}
	so->unwind_rules = 1u << 16;
	so->unwind_mappings = 1u << 16;
	so->unwind_procs = 1u << 14;
	fixed = so->unwind_rules * sizeof(struct unwind_rule) +
		so->unwind_mappings * sizeof(struct unwind_mapping) +
		so->unwind_procs * (sizeof(struct unwind_proc) + 64);
	so->unwind_rows = (budget - fixed) / sizeof(struct unwind_row);
	return 0;
}

/*
 * Per-thread traces: a writer per drain, one for the main thread's span
 * events and one for the tracker's exits; the storage keeps the stacks of
 * events a timeline has not taken yet.
 */
static int timeline_setup(struct collector *c, char *err_msg, size_t err_len)
{
	struct traces_opts to = {.part_budget = (c->opts.timeline_mib << 20) / 4096};
	int err;

	c->tl = traces__new(&to);
	c->timeline = timeline__new();
	c->tw_main = c->tl ? traces__writer(c->tl) : NULL;
	if (!c->tl || !c->timeline || !c->tw_main || drains__trace(c->drains, c->tl)) {
		snprintf(err_msg, err_len, "out of memory setting up the timeline");
		return -ENOMEM;
	}
	err = calltrace_storage__register_liveness(c->traces, traces__liveness, c->tl);
	if (err) {
		snprintf(err_msg, err_len, "cannot keep the timeline's stacks: %s", strerror(-err));
		return err;
	}
	if (c->files)
		outfiles__set_sibling(c->files, c->opts.timeline_speedscope ? ".speedscope.json.gz"
									    : ".timeline.json.gz");
	return 0;
}

/* $NODE_NAME (the DaemonSet sets it from spec.nodeName), else the host name */
static void node_name(char *buf, size_t len)
{
	const char *env = getenv("NODE_NAME");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else if (gethostname(buf, len) || !buf[0])
		snprintf(buf, len, "unknown");
	buf[len - 1] = '\0';
}

/* the node name as a file-name part: no '/', no leading '.', printable ASCII */
static void file_safe(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i]; i++)
		dst[i] = (src[i] == '/' || src[i] <= ' ' || src[i] > '~' || (!i && src[i] == '.'))
				 ? '_'
				 : src[i];
	dst[i] = '\0';
}

static int open_mapping_cpu(void *ctx, int cpu)
{
	return perf_opener__open(ctx, cpu);
}

/*
 * The kernel's reports of new executable mappings come from an event per
 * online CPU: a CPU that comes back after the capabilities went gets its
 * event from an opener that kept CAP_PERFMON, forked now, alone.
 */
static int mapping_events_setup(struct collector *c, char *err_msg, size_t err_len)
{
	const struct perf_event_attr *attr = tracker__mapping_attr(c->tracker);
	int n = libbpf_num_possible_cpus();

	if (!attr || n <= 0)
		return 0;
	c->map_online = calloc(n, sizeof(*c->map_online));
	c->map_opener = c->map_online ? perf_opener__start(attr) : NULL;
	if (!c->map_opener) {
		snprintf(err_msg, err_len, "cannot start the mapping events' opener: %s",
			 strerror(errno));
		return -errno;
	}
	c->nr_possible = n;
	tracker__set_mapping_opener(c->tracker, open_mapping_cpu, c->map_opener);
	/* the kernel reports new code: a process long set up is re-read rarely */
	process_states__set_refresh_max(c->states, PROCESS_STATE_REFRESH_MAX_NS);
	return 0;
}

/*
 * Keep only what reading other processes needs (privileges.h), before any
 * thread starts, so that every thread runs with the narrowed sets.
 */
static int drop_privileges(struct collector *c, char *err_msg, size_t err_len)
{
	struct privileges_kept kept;
	int err;

	err = privileges__drop(sampler__pid_map_fd(c->sampler), &kept, err_msg, err_len);
	if (err)
		return err;
	fprintf(stderr, "ctxprof: capabilities kept after start-up: %s%s%s; no new privileges\n",
		kept.names,
		kept.bpf ? " (CAP_BPF: this kernel wants it for bpf() on held maps)" : "",
		kept.bounding_dropped ? "" : " (bounding set unchanged: no CAP_SETPCAP)");
	return 0;
}

/* in the chunk maker's child: a chunk of unwind rows, while fewer than it may make */
static int chunk_make(void *ctx, int32_t unused)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	uint32_t *left = ctx;
	int fd;

	if (!*left)
		return -ENOSPC;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_chunk", sizeof(uint32_t),
			    sizeof(struct unwind_row), UNWIND_CHUNK_ROWS, &o);
	if (fd < 0)
		return -errno;
	(*left)--;
	return fd;
}

/* the child that makes the unwinder's chunks (CAP_BPF), as many as @rows need */
static struct fd_opener *chunk_maker_start(uint32_t rows)
{
	static const int caps[] = {CAP_BPF, CAP_SYS_ADMIN};
	uint32_t chunks = (rows + UNWIND_CHUNK_ROWS - 1) / UNWIND_CHUNK_ROWS;

	return fd_opener__start("ctxprof-bpf", caps, 2, chunk_make, &chunks, sizeof(chunks));
}

/* the unwinder's thread: a new chunk, from the child */
static int chunk_new(void *ctx)
{
	return fd_opener__open(ctx, 0);
}

static int setup(struct collector *c, char *err_msg, size_t err_len)
{
	struct collector_opts *o = &c->opts;
	struct process_state *st;
	int err;
	struct sampler_opts so = {
		.pid = o->all ? 0 : o->pid,
		.filter_pids = o->children,
		.frequency = o->frequency,
		.kernel_stacks = o->kernel,
		.ring_bytes = o->ring_kib * 1024,
		.btf_path = o->btf_path,
		.nr_parts = o->drain_threads,
		.read_context = o->context,
		.read_python = o->python,
		.off_cpu = o->off_cpu,
		.off_cpu_threshold_ns = (uint64_t)o->off_cpu_threshold_us * 1000,
		.off_cpu_budget = CLI_OFF_CPU_BUDGET,
		.unwind = o->unwind,
	};

	if (o->off_cpu && !sampler__can_off_cpu(o->btf_path, err_msg, err_len)) {
		fprintf(stderr,
			"ctxprof: --off-cpu needs %s, which this kernel lacks: off-CPU "
			"time is not recorded\n",
			err_msg);
		o->off_cpu = so.off_cpu = false;
	}
	c->sym = symbolizer__new(o->kernel, (uint64_t)o->symbol_mib << 20);
	c->states = c->sym ? process_states__new() : NULL;
	if (c->states) {
		struct process_state_resolver r;

		symbolizer__resolver(c->sym, &r);
		process_states__set_resolver(c->states, &r);
	}
	if (c->states)
		c->reg = thread_registry__new(&(struct thread_registry_opts){
			.state_free = process_states_retire,
			.state_unlinked = process_states_unlinked,
			.state_ctx = c->states,
		});
	c->traces = calltrace_storage__new(o->max_stacks);
	/* a row is a (stack, thread) pair: as many as stacks is ample, and each
	 * table stays small (10 MiB at the default) */
	if (c->reg)
		c->drains = drains__new(o->drain_threads, c->traces, c->reg, o->max_stacks);
	{
		char who[64];

		/* --all: one collector per node, files named by it */
		if (o->all)
			file_safe(who, sizeof(who), c->node);
		else
			snprintf(who, sizeof(who), "%d", o->pid);
		/* --push keeps files only when told where */
		c->files = o->interval && (!o->push_url || o->output_dir)
				   ? outfiles__new(o->output_dir ? o->output_dir : ".", who,
						   o->max_files)
				   : NULL;
	}
	c->queue = outqueue__new(c->files, OUTQUEUE_MAX_BYTES);
	/* /debug/pprof/profile on the metrics listener: a scrape window each */
	if (o->metrics_addr) {
		c->scrapeq = scrape_queue__new(DRAIN_SCRAPES);
		c->scrape = c->scrapeq && c->drains
				    ? scrape__new(c->scrapeq, c->drains, c->traces, c->sym)
				    : NULL;
	}
	if (!c->sym || !c->states || !c->reg || !c->traces || !c->drains ||
	    (o->interval && (!o->push_url || o->output_dir) && !c->files) || !c->queue ||
	    (o->metrics_addr && !c->scrape)) {
		snprintf(err_msg, err_len, "out of memory setting up tables");
		return -ENOMEM;
	}
	err = unwind_setup(o, &so, err_msg, err_len);
	if (err)
		return err;
	if (o->timeline || o->timelines) {
		err = timeline_setup(c, err_msg, err_len);
		if (err)
			return err;
	}
	/* what needs a capability first, on this thread alone: load and attach the
	 * sampler (paused) and the lifecycle programs */
	c->sampler = sampler__open(&so, drains__record, drains__ctxs(c->drains), err_msg, err_len);
	if (!c->sampler)
		return -errno;
	err = sampler__prepare(c->sampler, o->frequency, err_msg, err_len);
	if (err)
		return err;
	if (o->bpf_stats) {
		err = sampler__enable_bpf_stats(c->sampler);
		if (err) {
			snprintf(err_msg, err_len,
				 "--bpf-stats: the kernel would not count BPF run time: %s "
				 "(BPF_ENABLE_STATS needs Linux 5.8 and CAP_SYS_ADMIN)",
				 strerror(-err));
			return err;
		}
	}
	/* the readers of application context, before any process is read */
	if (o->context) {
		c->app = app_context__new(sampler__ctx_map_fd(c->sampler), o->verbose);
		c->otel = otel_context__new(sampler__otel_map_fd(c->sampler), o->verbose);
		/* goroutine labels: the sampler reads them only with bpf_loop */
		if (sampler__can_unwind())
			c->go = go_labels__new(sampler__go_map_fd(c->sampler), o->verbose);
		if (!c->app || !c->otel || (sampler__can_unwind() && !c->go)) {
			snprintf(err_msg, err_len, "out of memory");
			return -ENOMEM;
		}
		err = subscribe_context(c, err_msg, err_len);
		if (err)
			return err;
	}
	/* CPython frames: the sampler walks them only with bpf_loop */
	if (o->python && sampler__can_unwind()) {
		c->python =
			python_procs__new(sampler__python_map_fd(c->sampler), c->sym, o->verbose);
		if (!c->python) {
			snprintf(err_msg, err_len, "out of memory");
			return -ENOMEM;
		}
		err = subscribe_python(c, err_msg, err_len);
		if (err)
			return err;
	}
	c->tracker = tracker__open(
		&(struct tracker_opts){
			.root = o->pid,
			.children = o->children,
			.pid_map_fd = sampler__pid_map_fd(c->sampler),
			.btf_path = o->btf_path,
			.reg = c->reg,
			.states = c->states,
			.tl = c->tl,
		},
		err_msg, err_len);
	if (!c->tracker)
		return -errno;
	err = mapping_events_setup(c, err_msg, err_len);
	if (err)
		return err;
	/* the unwinder's chunks of rows are BPF maps made after the drop: by a child */
	if (so.unwind != UNWIND_MODE_FP) {
		c->chunk_maker = chunk_maker_start(so.unwind_rows);
		if (!c->chunk_maker) {
			snprintf(err_msg, err_len, "cannot start the unwind chunk maker: %s",
				 strerror(errno));
			return -errno;
		}
	}
	err = drop_privileges(c, err_msg, err_len);
	if (err)
		return err;
	/* a thread of its own: once the capabilities are dropped (the process alone then) */
	if (o->push_url) {
		struct push_opts po;

		push_opts_of(o, &po);
		c->push = push__start(&po, err_msg, err_len);
		if (!c->push)
			return -errno;
	}
	if (so.unwind != UNWIND_MODE_FP) {
		struct unwinder_opts uo = {
			.states = c->states,
			.reg = c->reg,
			.verbose = o->verbose,
		};

		sampler__unwind_maps(c->sampler, &uo.maps);
		uo.maps.new_chunk = chunk_new;
		uo.maps.chunk_ctx = c->chunk_maker;
		c->unwinder = unwinder__start(&uo, err_msg, err_len);
		if (!c->unwinder)
			return -errno;
	}
	if (o->all || o->children) {
		c->pods = pod_index__new(POD_META_DEFAULT_LOGS);
		if (!c->pods) {
			snprintf(err_msg, err_len, "out of memory");
			return -ENOMEM;
		}
		process_states__set_pods(c->states, c->pods);
	}
	err = tracker__run(c->tracker, err_msg, err_len);
	if (err)
		return err;
	/* map the target before the first sample, so that even a target that
	 * exits at once is symbolized */
	if (o->pid) {
		st = process_states__get(c->states, c->reg, o->pid);
		err = st ? process_states__refresh(c->states, st) : -ESRCH;
		if (err == -ESRCH) {
			snprintf(err_msg, err_len, "no process with pid %d", o->pid);
			return err;
		}
		if (err == -EACCES || err == -EPERM) {
			snprintf(err_msg, err_len,
				 "cannot read /proc/%d/maps: %s (another user's process needs "
				 "CAP_SYS_PTRACE)",
				 o->pid, strerror(-err));
			return err;
		}
	}
	/* trace context of what runs now: its regions and contexts mapped */
	if (c->app) {
		if (c->tw_main)
			app_context__trace(c->app, c->tw_main);
		process_states__deliver(c->states);
		app_context__poll(c->app);
	}
	/* tables of what runs now, before its first samples */
	if (c->unwinder && !unwinder__wait_idle(c->unwinder, UNWIND_START_WAIT_MS)) {
		fprintf(stderr, "ctxprof: building unwind tables for what runs...\n");
		if (!unwinder__wait_idle(c->unwinder, UNWIND_START_MAX_MS))
			fprintf(stderr, "ctxprof: sampling before every table is built: the "
					"others' first samples are walked by frame pointers\n");
	}
	/* the first profile's window: from here, before the first sample */
	c->win_start_wall = wall_ns();
	c->win_start_ns = mono_ns();
	c->win_end_ns = o->interval ? c->win_start_ns + (uint64_t)(o->interval * 1e9) : UINT64_MAX;
	drains__begin_window(c->drains, c->win_start_ns, c->win_end_ns);
	err = drains__start(c->drains, c->sampler, POLL_MS);
	if (err)
		return err;
	/* the first timeline covers what is sampled */
	c->interval_ns = mono_ns();
	err = sampler__attach(c->sampler, o->frequency, err_msg, err_len);
	if (err)
		return err;
	return metrics_feed__start(c, err_msg, err_len);
}

int main(int argc, char **argv)
{
	struct collector c = {};
	struct collector_opts *o = &c.opts;
	struct sigaction sa = {.sa_handler = on_signal};
	char err_msg[256] = "", default_out[128], node_file[64];
	uint64_t st[SAMPLER_STAT_MAX] = {}, last_samples = 0;
	double start, elapsed = 0, last_tick = 0, last_status = 0;
	double last_sweep = 0, last_publish = 0;
	bool dict_streaming = false;
	const char *why = "target exited";
	int pidfd = -1, err, n;
	bool status;

	err = cli__parse(argc, argv, o, stdout, stderr);
	if (err)
		return err == CLI_EXIT_OK ? 0 : 2;
	/*
	 * Buffers of 32 KiB and more (mappings text, ELF sections, table
	 * builds) come and go with every process; from the heap they left
	 * holes between long-lived objects and --all's RSS kept growing under
	 * churn (51 -> 76 MiB anonymous in 40 s at 1000 spawns/s, against 28 ->
	 * 34 MiB with this).  As mappings they go back whole when freed.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 * 1024);
	node_name(c.node, sizeof(c.node));
	c.start_time = clock_s(CLOCK_REALTIME);
	if (!o->output && !o->interval) {
		file_safe(node_file, sizeof(node_file), c.node);
		if (o->all)
			snprintf(default_out, sizeof(default_out), "ctxprof-%s.pb.gz", node_file);
		else
			snprintf(default_out, sizeof(default_out), "ctxprof-%d.pb.gz", o->pid);
		o->output = default_out;
	}
	status = o->status < 0 ? isatty(STDERR_FILENO) : o->status;
	/* the main thread reads the registry (exports, process states) */
	thread_registry__register_thread();
	verbose = o->verbose;
	libbpf_set_print(libbpf_print);

	/* --push-config: the store's URL and credentials from a directory's files */
	if (o->push_config) {
		err = push_config_read(o->push_config, &c.push_config, err_msg, sizeof(err_msg));
		if (err) {
			fprintf(stderr, "collector: %s\n", err_msg);
			goto cleanup;
		}
		if (!c.push_config.url[0])
			fprintf(stderr, "ctxprof: push: no %s/url: profiles are not pushed\n",
				o->push_config);
		push_config_apply(o, &c.push_config);
	}
	/* the store's URL and secret files: a mistake is said before anything starts */
	if (o->push_url) {
		struct push_opts po;

		push_opts_of(o, &po);
		err = push_check(&po, err_msg, sizeof(err_msg));
		if (err) {
			fprintf(stderr, "collector: %s\n", err_msg);
			goto cleanup;
		}
	}
	err = privileges__check(o->kernel, &(struct privileges_start){});
	if (err)
		goto cleanup;
	err = check_kernel(o);
	if (err)
		goto cleanup;
	err = check_outputs(o);
	if (err)
		goto cleanup;
	if (o->pid) {
		pidfd = open_target(o->pid);
		if (pidfd < 0) {
			err = pidfd;
			goto cleanup;
		}
	}
	err = setup(&c, err_msg, sizeof(err_msg));
	if (err) {
		fprintf(stderr, "collector: %s\n", err_msg[0] ? err_msg : strerror(-err));
		goto cleanup;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	start = clock_s(CLOCK_MONOTONIC);
	if (o->all)
		fprintf(stderr, "ctxprof: profiling all processes");
	else
		fprintf(stderr, "ctxprof: profiling pid %d%s", o->pid,
			o->children ? " and its descendants" : "");
	fprintf(stderr, " at %u Hz on %d CPUs%s%s; Ctrl-C to stop\n", o->frequency,
		sampler__nr_cpus(c.sampler), o->kernel ? "" : " (no kernel stacks)",
		o->interval ? ", one profile per interval" : "");

	for (;;) {
		uint64_t due = c.scrape ? scrape__next_end(c.scrape) : UINT64_MAX;
		bool exited;

		/* a dictionary streams in (a burst of interns, a replay): the library
		 * sends more as soon as we give its rings back */
		if (dict_streaming && mono_ns() + DICT_POLL_NS < due)
			due = mono_ns() + DICT_POLL_NS;
		exited = wait_target(pidfd, c.scrapeq ? scrape_queue__fd(c.scrapeq) : -1, due);

		/* --children outlives its root: the tree may go on without it (and
		 * a pidfd that stays readable would make every wait return at once) */
		if (exited && o->children) {
			close(pidfd);
			pidfd = -1;
			exited = false;
		}

		elapsed = clock_s(CLOCK_MONOTONIC) - start;
		if (exited)
			break;
		if (stop_signal) {
			why = stop_signal == SIGINT ? "interrupted" : "terminated";
			break;
		}
		if (o->duration && elapsed >= o->duration) {
			why = "duration reached";
			break;
		}
		err = drains__error(c.drains);
		if (err) {
			fprintf(stderr, "\ncollector: reading the ring buffers: %s\n",
				strerror(-err));
			why = "ring buffer error";
			break;
		}
		drains__recent_pids(c.drains, snapshot_recent, &c);
		if (c.python)
			drains__recent_codes(c.drains, name_recent_code, &c);
		if (elapsed - last_tick >= 1.0) {
			/* CPU hotplug, and the rate the kernel lets us sample at */
			sampler__check(c.sampler);
			if (c.map_online && !cpus_online(c.map_online, c.nr_possible))
				tracker__check_cpus(c.tracker, c.map_online, c.nr_possible);
			if (o->pid)
				refresh_target(&c);
			if (c.otel)
				otel_context__poll(c.otel);
			if (c.go)
				go_labels__poll(c.go);
			if (c.python)
				python_procs__poll(c.python);
			last_tick = elapsed;
		}
		process_states__deliver(c.states);
		/* new threads get their slot into the sampler's map within a poll */
		if (c.app)
			dict_streaming = app_context__poll(c.app);
		if (c.tw_main && elapsed - last_sweep >= 1.0) {
			trace_writer__sweep(c.tw_main);
			last_sweep = elapsed;
		}
		if (o->interval && mono_ns() + EXPORT_LEAD_NS >= c.win_end_ns) {
			err = intervals__export(&c, false);
			if (err) {
				fprintf(stderr, "\ncollector: cannot export a profile: %s\n",
					strerror(-err));
				why = "export error";
				break;
			}
		}
		if (c.scrape) {
			struct export_opts eo;

			intervals__profile_opts(&c, &eo);
			scrape__poll(c.scrape, &eo);
		}
		if (status && elapsed - last_status >= 1.0)
			report__status(&c, elapsed, &last_samples, &last_status);
		if (elapsed - last_publish >= 1.0) {
			metrics_feed__tick(&c);
			last_publish = elapsed;
		}
	}
	health__stopping(c.health);
	if (status)
		fputc('\n', stderr);
	/* scrapes cut short are answered now, before their window stops filling */
	if (c.scrape)
		scrape__stop(c.scrape);
	if (c.scrapeq)
		scrape_queue__shutdown(c.scrapeq, 200);

	drains__stop(c.drains);
	n = sampler__stop(c.sampler);
	c.stopped_ns = mono_ns();
	/* no table is needed past the last sample: a build under way stops now */
	unwinder__stop(c.unwinder);
	/* samples of processes never mapped yet: try while they may live */
	drains__recent_pids(c.drains, snapshot_recent, &c);
	if (n < 0)
		fprintf(stderr, "collector: draining the ring buffers: %s\n", strerror(-n));
	n = sampler__read_stats(c.sampler, st);
	if (n) {
		err = n;
		fprintf(stderr, "collector: cannot read the sampler's counters: %s\n",
			strerror(-err));
		goto cleanup;
	}
	n = o->interval ? intervals__export(&c, true)
			: intervals__export_profile(&c, o->output, true);
	if (n) {
		err = n;
		fprintf(stderr, "collector: cannot export the last profile: %s\n", strerror(-err));
		goto cleanup;
	}
	/* what could not be written by now never will be: counted as dropped */
	outqueue__drop_all(c.queue);
	/* the last uploads, for --push-flush at most; the rest kept or dropped, counted */
	if (c.push) {
		if (push_pending(c.push))
			fprintf(stderr, "ctxprof: push: sending what is left (at most %u s)\n",
				o->push_flush_s);
		push__stop(c.push, o->push_flush_s * 1000);
	}
	report__summary(&c, elapsed, why);
	/* a run that wrote nothing failed, whatever else it did */
	if (!c.files_written && !push_delivered(c.push)) {
		err = -EIO;
		fprintf(stderr, "collector: no profile could be %s\n",
			c.push ? "written or sent" : "written");
	}

cleanup:
	/* the HTTP thread reads the drains, the tracker and the health checker;
	 * it stops with no connection suspended */
	if (c.scrape)
		scrape__stop(c.scrape);
	if (c.scrapeq)
		scrape_queue__shutdown(c.scrapeq, 0);
	metrics_server__free(c.metrics);
	scrape__free(c.scrape);
	scrape_queue__free(c.scrapeq);
	push__free(c.push);
	health__free(c.health);
	free(c.snap);
	/* the drains read the registry; freeing the registry retires every state */
	drains__free(c.drains);
	tracker__free(c.tracker);
	perf_opener__stop(c.map_opener);
	fd_opener__stop(c.chunk_maker);
	free(c.map_online);
	unwinder__stop(c.unwinder);
	thread_registry__free(c.reg);
	thread_registry__unregister_thread();
	unwinder__free(c.unwinder);
	if (c.states)
		process_states__collect(c.states, UINT64_MAX, intervals__release_state);
	process_states__free(c.states);
	app_context__free(c.app);
	otel_context__free(c.otel);
	go_labels__free(c.go);
	python_procs__free(c.python);
	sampler__free(c.sampler);
	symbolizer__free(c.sym);
	calltrace_storage__free(c.traces);
	traces__free(c.tl);
	timeline__free(c.timeline);
	outqueue__free(c.queue);
	outfiles__free(c.files);
	pod_index__free(c.pods);
	if (pidfd >= 0)
		close(pidfd);
	return err ? 1 : 0;
}
