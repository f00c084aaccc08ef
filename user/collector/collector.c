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
 * flip the drains' sample tables, symbolize, write pprof.  See
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "appctx/app_context.h"
#include "appctx/otel_context.h"
#include "collector/cli.h"
#include "collector/collector.h"
#include "collector/health.h"
#include "collector/metrics_feed.h"
#include "collector/privileges.h"
#include "collector/report.h"
#include "export/export.h"
#include "export/metrics.h"
#include "export/output.h"
#include "export/outfiles.h"
#include "export/timeline.h"
#include "processes/pod_meta.h"
#include "processes/process_state.h"
#include "processes/tracker.h"
#include "sampling/drain.h"
#include "sampling/sample_table.h"
#include "sampling/sampler.h"
#include "storage/calltrace_storage.h"
#include "symbols/symbolizer.h"
#include "traces/trace.h"
#include "unwind/unwinder.h"
#include "util/clock.h"

#define POLL_MS	   100 /* ring sweep period; the BPF side wakes us earlier when a ring fills */
#define PF_KTHREAD 0x00200000 /* include/linux/sched.h: /proc/PID/stat's flags */
/*
 * How long the state of an exited (or exec'd) process is kept: its last
 * samples may still sit in a ring for a poll period when an export begins.
 */
#define STATE_GRACE_NS 1000000000ull
/* at start, how long to wait for the tables of what runs, silently, then in all */
#define UNWIND_START_WAIT_MS 1000
#define UNWIND_START_MAX_MS  30000

/* how far behind the samples span events may come (see timeline_cut()) */
#define TIMELINE_HOLD_NS 300000000l

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
			"collector: kernel has no BTF (/sys/kernel/btf/vmlinux: %s): needs a "
			"kernel "
			"built with CONFIG_DEBUG_INFO_BTF=y, or pass --btf FILE\n",
			strerror(errno));
		return -ENOENT;
	}
	if (access("/proc/sys/kernel/perf_event_paranoid", R_OK)) {
		fprintf(stderr, "collector: kernel has no perf events (CONFIG_PERF_EVENTS)\n");
		return -ENOENT;
	}
	return 0;
}

/* fail before profiling, not after an hour of it, when the output cannot be written */
static int check_outputs(const struct collector_opts *o)
{
	const char *dir = o->output_dir ? o->output_dir : ".";
	char why[256];
	int err;

	if (o->interval) {
		err = output_dir_check(dir, why, sizeof(why));
		if (err)
			fprintf(stderr, "collector: --output-dir %s: %s\n", dir, why);
	} else {
		err = output_check(o->output, why, sizeof(why));
		if (err)
			fprintf(stderr, "collector: cannot write %s: %s\n", o->output, why);
	}
	if (!err && o->timeline) {
		if (o->output && !strcmp(o->timeline, o->output)) {
			fprintf(stderr, "collector: --timeline and --output name the same file\n");
			return -EINVAL;
		}
		err = output_check(o->timeline, why, sizeof(why));
		if (err)
			fprintf(stderr, "collector: cannot write the timeline %s: %s\n",
				o->timeline, why);
	}
	return err;
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
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
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

/* what the main thread attached to a process state, released with it */
static void release_state(struct process_state *st)
{
	app_context__release(st->app);
	otel_context__release(st->otel);
}

static void add_table(void *ctx, struct sample_table *t)
{
	struct exporter *e = ctx;

	exporter__add_samples(e, t);
}

static void clear_table(void *ctx, struct sample_table *t)
{
	sample_table__clear(t);
}

/*
 * Where the timeline of this export ends.  Span events reach us later than
 * samples (libctxprof hands a ring over when it is full or 100 ms old, and
 * we poll): an interval's timeline ends TIMELINE_HOLD_NS ago, the rest waits
 * for the next.  The last one takes everything, after giving the
 * applications' rings that time to come.
 */
static void timeline_cut(struct collector *c, bool final, uint64_t *end_ns)
{
	struct timespec hold = {0, TIMELINE_HOLD_NS};

	if (final && c->app) {
		app_context__poll(c->app);
		nanosleep(&hold, NULL);
		app_context__poll(c->app);
	}
	*end_ns = final ? c->stopped_ns : mono_ns() - TIMELINE_HOLD_NS;
	traces__cut(c->tl, final ? UINT64_MAX : *end_ns);
}

/* the timeline of the interval just exported, beside its profile */
static int write_timeline(struct collector *c, struct exporter *e, uint64_t end_ns)
{
	const char *path = c->files ? outfiles__sibling(c->files) : c->opts.timeline;
	struct timeline_opts to = {
		.period_ns = 1000000000ull / c->opts.frequency,
		.begin_ns = c->interval_ns,
		.end_ns = end_ns,
		.names = e,
		.reg = c->reg,
	};
	int err;

	if (!path)
		return -errno;
	err = timeline__write(c->timeline, c->tl, path, &to, &c->tl_last);
	if (err) {
		fprintf(stderr, "\ncollector: cannot write the timeline %s: %s\n", path,
			strerror(-err));
		return err;
	}
	c->tl_written++;
	c->interval_ns = end_ns;
	return 0;
}

/*
 * Write one profile covering [start, start + duration).  The storage is
 * rotated first, then the drains flip: every sample in the tables exported
 * here was counted before the flip, so its trace was put before it too.
 * @final: the drains are stopped; export every table.
 */
static int export_profile(struct collector *c, const char *path, int64_t wall_start,
			  double duration, bool final)
{
	uint64_t st[SAMPLER_STAT_MAX] = {};
	char comment[256];
	const char *comments[] = {comment, NULL};
	struct export_result res;
	struct exporter *e;
	uint64_t begin_ns, tl_end_ns = 0;
	int err;

	begin_ns = mono_ns();
	sampler__read_stats(c->sampler, st);
	/* the timeline goes up to here; the storage keeps what is past it */
	if (c->tl)
		timeline_cut(c, final, &tl_end_ns);
	/* the dictionary may have named new tags since the last poll */
	if (c->app)
		app_context__poll(c->app);
	snprintf(comment, sizeof(comment),
		 "ctxprof collector: %s %d%s, %u Hz, %.1f s; %llu samples taken since start",
		 c->opts.all ? "all processes" : "pid", c->opts.all ? 0 : c->opts.pid,
		 c->opts.children ? " and its descendants" : "", c->opts.frequency, duration,
		 (unsigned long long)st[SAMPLER_STAT_SAMPLES]);
	e = exporter__begin(c->traces, c->sym,
			    &(struct export_opts){
				    .period_ns = 1000000000ull / c->opts.frequency,
				    .time_nanos = wall_start,
				    .duration_nanos = (int64_t)(duration * 1e9),
				    .comments = comments,
				    .states = c->states,
				    .reg = c->reg,
				    .proc_labels = c->opts.all || c->opts.children,
				    .node = c->node,
			    });
	if (!e)
		return -errno;
	if (!final) {
		err = drains__flip(c->drains);
		if (err)
			goto out;
	}
	drains__for_each_table(c->drains, final, add_table, e);
	err = exporter__write(e, path, &res);
	if (err)
		goto out;
	c->files_written++;
	c->last_export_duration = (mono_ns() - begin_ns) / 1e9;
	c->last_export_time = clock_s(CLOCK_REALTIME);
	drains__for_each_table(c->drains, final, clear_table, NULL);
	if (c->tl) {
		err = write_timeline(c, e, tl_end_ns);
		if (err)
			goto out;
	}
	c->exported += res.samples;
	c->no_trace += res.no_trace;
	c->traces_exported += res.traces;
	c->stacks_cut += res.stacks_cut;
	c->last = res;
	/* images gone well before this export began have no samples left */
	if (begin_ns > STATE_GRACE_NS)
		process_states__collect(c->states, begin_ns - STATE_GRACE_NS, release_state);
out:
	exporter__free(e);
	c->last_export_failed = err != 0;
	if (err)
		c->exports_failed++;
	else
		c->exports_ok++;
	health__exported(c->health, err);
	return err;
}

static int export_interval(struct collector *c, int64_t wall_start, double duration, bool final)
{
	const char *path = outfiles__path(c->files, (time_t)(wall_start / 1000000000));
	int err;

	if (!path)
		return -errno;
	err = export_profile(c, path, wall_start, duration, final);
	if (err)
		return err;
	err = outfiles__written(c->files);
	if (err)
		fprintf(stderr, "\ncollector: cannot delete an old profile: %s\n", strerror(-err));
	return 0;
}

/* a process the drains found unread gets its mappings read; one read
 * already is re-read at most once a second (PROCESS_STATE_REFRESH_NS), which
 * catches libraries loaded since (cheap when nothing changed) */
static void snapshot_recent(void *ctx, uint32_t pid)
{
	struct collector *c = ctx;
	struct process_state *st;

	st = process_states__get(c->states, c->reg, pid);
	if (st && atomic_load(&st->refresh_after_ns) <= mono_ns()) {
		process_states__refresh(c->states, st);
		/* an OpenTelemetry process context published or updated since */
		if (c->otel)
			otel_context__refresh(c->otel, st);
	}
	/* a no-table-yet sample: installed unless its tables are current */
	if (st && c->unwinder)
		unwinder__request(c->unwinder, pid);
}

/* the target's libctxprof region, once it has created one */
static void scan_app(struct collector *c)
{
	struct process_state *st;

	st = process_states__get(c->states, c->reg, c->opts.pid);
	if (st)
		app_context__scan(c->app, c->opts.pid, &st->app);
}

static void scan_app_due(void *ctx, uint32_t pid)
{
	struct collector *c = ctx;
	struct process_state *st;

	st = process_states__get(c->states, c->reg, pid);
	if (!st)
		return;
	/* we map the applications' regions: our own mappings show them too */
	if (pid != (uint32_t)getpid())
		app_context__scan(c->app, pid, &st->app);
	atomic_store_explicit(&st->app_seen, true, memory_order_relaxed);
	if (c->otel)
		otel_context__refresh(c->otel, st);
}

/* processes whose mappings showed a libctxprof region or an OpenTelemetry
 * context (any mode) */
static void scan_apps_due(struct collector *c)
{
	process_states__app_due(c->states, scan_app_due, c);
}

static int64_t wall_ns(void)
{
	return (int64_t)clock_ns(CLOCK_REALTIME);
}

/* wait up to POLL_MS for the target to exit (just sleep without one, -1);
 * true once it has */
static bool wait_target(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	return poll(&p, pidfd >= 0, POLL_MS) > 0 && (p.revents & POLLIN);
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
		outfiles__set_sibling(c->files, ".timeline.json.gz");
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

static int setup(struct collector *c, char *err_msg, size_t err_len)
{
	struct collector_opts *o = &c->opts;
	struct process_state *st = NULL;
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
		.unwind = o->unwind,
	};

	c->sym = symbolizer__new(o->kernel);
	c->states = c->sym ? process_states__new(c->sym) : NULL;
	if (c->states)
		c->reg = thread_registry__new(&(struct thread_registry_opts){
			.state_free = process_states_retire,
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
		c->files = o->interval ? outfiles__new(o->output_dir ? o->output_dir : ".", who,
						       o->max_files)
				       : NULL;
	}
	if (!c->sym || !c->states || !c->reg || !c->traces || !c->drains ||
	    (o->interval && !c->files)) {
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
	err = drop_privileges(c, err_msg, err_len);
	if (err)
		return err;
	if (so.unwind != UNWIND_MODE_FP) {
		struct unwinder_opts uo = {
			.states = c->states,
			.reg = c->reg,
			.verbose = o->verbose,
		};

		sampler__unwind_maps(c->sampler, &uo.maps);
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
	if (o->context) {
		c->otel = otel_context__new(sampler__otel_map_fd(c->sampler), o->verbose);
		if (!c->otel) {
			snprintf(err_msg, err_len, "out of memory");
			return -ENOMEM;
		}
	}
	if (o->pid) {
		st = process_states__get(c->states, c->reg, o->pid);
		err = st ? process_states__refresh(c->states, st) : -ESRCH;
		if (!err && c->otel)
			otel_context__refresh(c->otel, st);
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
	/* trace context: the target's region now (--pid); other processes as
	 * their mappings show one (process_states__app_due()) */
	if (o->context) {
		c->app = app_context__new(sampler__ctx_map_fd(c->sampler), o->verbose);
		if (!c->app) {
			snprintf(err_msg, err_len, "out of memory");
			return -ENOMEM;
		}
		if (c->tw_main)
			app_context__trace(c->app, c->tw_main);
		if (st)
			app_context__scan(c->app, o->pid, &st->app);
		scan_apps_due(c);
		app_context__poll(c->app);
	}
	/* tables of what runs now, before its first samples */
	if (c->unwinder && !unwinder__wait_idle(c->unwinder, UNWIND_START_WAIT_MS)) {
		fprintf(stderr, "ctxprof: building unwind tables for what runs...\n");
		if (!unwinder__wait_idle(c->unwinder, UNWIND_START_MAX_MS))
			fprintf(stderr, "ctxprof: sampling before every table is built: the "
					"others' first samples are walked by frame pointers\n");
	}
	err = drains__start(c->drains, c->sampler, POLL_MS);
	if (err)
		return err;
	/* the first timeline covers what is sampled */
	c->interval_ns = mono_ns();
	err = sampler__attach(c->sampler, o->frequency, err_msg, err_len);
	if (err || !o->metrics_addr)
		return err;
	return metrics_feed__start(c, err_msg, err_len);
}

int main(int argc, char **argv)
{
	struct collector c = {};
	struct collector_opts *o = &c.opts;
	struct sigaction sa = {.sa_handler = on_signal};
	struct drain_counters dc;
	char err_msg[256] = "", default_out[128], node_file[64];
	uint64_t st[SAMPLER_STAT_MAX] = {}, last_samples = 0;
	double start, elapsed = 0, last_tick = 0, last_status = 0, interval_start = 0;
	double last_sweep = 0, last_publish = 0;
	int64_t wall_start, wall_interval;
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
	wall_start = wall_interval = wall_ns();
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
		/* --children outlives its root: the tree may go on without it */
		bool exited = wait_target(pidfd) && !o->children;

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
		if (elapsed - last_tick >= 1.0) {
			/* a libctxprof region created since */
			if (c.app && o->pid)
				scan_app(&c);
			if (c.otel)
				otel_context__poll(c.otel);
			last_tick = elapsed;
		}
		if (c.app)
			scan_apps_due(&c);
		/* new threads get their slot into the sampler's map within a poll */
		if (c.app)
			app_context__poll(c.app);
		if (c.tw_main && elapsed - last_sweep >= 1.0) {
			trace_writer__sweep(c.tw_main);
			last_sweep = elapsed;
		}
		if (o->interval && elapsed - interval_start >= o->interval) {
			err = export_interval(&c, wall_interval, elapsed - interval_start, false);
			if (err) {
				fprintf(stderr, "\ncollector: cannot write a profile: %s\n",
					strerror(-err));
				why = "write error";
				break;
			}
			interval_start = elapsed;
			wall_interval = wall_ns();
		}
		if (status && elapsed - last_status >= 1.0)
			report__status(&c, elapsed, &last_samples, &last_status);
		if (c.metrics && elapsed - last_publish >= 1.0) {
			metrics_feed__publish(&c);
			last_publish = elapsed;
		}
	}
	health__stopping(c.health);
	if (status)
		fputc('\n', stderr);

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
	n = o->interval ? export_interval(&c, wall_interval, elapsed - interval_start, true)
			: export_profile(&c, o->output, wall_start, elapsed, true);
	if (n) {
		err = n;
		fprintf(stderr, "collector: cannot write %s: %s\n",
			o->interval ? "the last profile" : o->output, strerror(-err));
		goto cleanup;
	}
	drains__counters(c.drains, &dc);
	report__summary(&c, st, &dc, elapsed, why);

cleanup:
	/* the HTTP thread reads the drains, the tracker and the health checker */
	metrics_server__free(c.metrics);
	health__free(c.health);
	free(c.snap);
	/* the drains read the registry; freeing the registry retires every state */
	drains__free(c.drains);
	tracker__free(c.tracker);
	unwinder__stop(c.unwinder);
	thread_registry__free(c.reg);
	thread_registry__unregister_thread();
	unwinder__free(c.unwinder);
	if (c.states)
		process_states__collect(c.states, UINT64_MAX, release_state);
	process_states__free(c.states);
	app_context__free(c.app);
	otel_context__free(c.otel);
	sampler__free(c.sampler);
	symbolizer__free(c.sym);
	calltrace_storage__free(c.traces);
	traces__free(c.tl);
	timeline__free(c.timeline);
	outfiles__free(c.files);
	pod_index__free(c.pods);
	if (pidfd >= 0)
		close(pidfd);
	return err ? 1 : 0;
}
