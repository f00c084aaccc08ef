// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collector - profile one process with the BPF sampler and write pprof.
 *
 * Main thread: poll the per-CPU rings on a short timer, dedup each stack in
 * the call-trace storage and count it per thread; once a second refresh the
 * target's mapping snapshot and print the status line; at the end (duration,
 * signal or target exit) stop sampling, drain, symbolize and export.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "calltrace_storage.h"
#include "cli.h"
#include "export.h"
#include "sample_table.h"
#include "sampler.h"
#include "symbolizer.h"

#define POLL_MS 100 /* ring sweep period; the BPF side wakes us earlier when a ring fills */

/* reasons the collector itself drops a record the BPF side emitted */
enum collector_drop {
	DROP_MALFORMED,	       /* record size and frame counts disagree */
	DROP_STACK_TABLE_FULL, /* calltrace storage answered DROPPED_TRACE_ID */
	DROP_SAMPLE_TABLE_FULL,
	DROP_MAX,
};

static const char *const drop_names[DROP_MAX] = {
	[DROP_MALFORMED] = "malformed_record",
	[DROP_STACK_TABLE_FULL] = "stack_table_full",
	[DROP_SAMPLE_TABLE_FULL] = "sample_table_full",
};

struct collector {
	struct collector_opts opts;
	struct calltrace_storage *traces;
	struct sample_table *samples;
	uint64_t received;
	uint64_t drops[DROP_MAX];
};

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

/* the drain path: no allocation, lock or syscall per record */
static void on_record(void *ctx, const struct sample_record *rec, size_t size)
{
	struct collector *c = ctx;
	uint64_t trace_id;

	c->received++;
	if (size < sizeof(*rec) || rec->nr_kframes > SAMPLER_MAX_KSTACK ||
	    rec->nr_uframes > SAMPLER_MAX_USTACK ||
	    size < sizeof(*rec) + (size_t)(rec->nr_kframes + rec->nr_uframes) * sizeof(__u64)) {
		c->drops[DROP_MALFORMED]++;
		return;
	}
	trace_id = calltrace_storage__put(c->traces, rec->pid, rec->frames, rec->nr_kframes,
					  rec->nr_uframes, rec->flags);
	if (trace_id == CALLTRACE_DROPPED_TRACE_ID) {
		c->drops[DROP_STACK_TABLE_FULL]++;
		return;
	}
	if (sample_table__add(c->samples, trace_id, rec->pid, rec->tid, rec->comm))
		c->drops[DROP_SAMPLE_TABLE_FULL]++;
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* root alone is not enough in a container: name the missing capability */
static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data)) {
		fprintf(stderr, "collector: cannot read capabilities: %s\n", strerror(errno));
		return -errno;
	}
	if (has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
		return 0;
	fprintf(stderr,
		"collector: missing capability %s: run as root (sudo) or grant "
		"CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)\n",
		!has_cap(data, CAP_BPF) && !has_cap(data, CAP_PERFMON) ? "CAP_BPF and CAP_PERFMON"
		: !has_cap(data, CAP_BPF)				 ? "CAP_BPF"
									 : "CAP_PERFMON");
	return -EPERM;
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
			"collector: kernel has no BTF (/sys/kernel/btf/vmlinux: %s): needs a kernel "
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
static int check_output(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (access(dir, W_OK | X_OK)) {
		fprintf(stderr, "collector: cannot write %s: %s\n", path, strerror(errno));
		return -errno;
	}
	return 0;
}

static int open_target(pid_t pid)
{
	int fd = syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0) {
		if (errno == ESRCH)
			fprintf(stderr, "collector: no process with pid %d\n", pid);
		else
			fprintf(stderr, "collector: cannot watch pid %d: %s\n", pid,
				strerror(errno));
		return -errno;
	}
	return fd;
}

static bool target_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t sum_drops(const uint64_t *bpf, const struct collector *c)
{
	uint64_t n = 0;
	int i;

	for (i = SAMPLER_STAT_DROP_FIRST; i <= SAMPLER_STAT_DROP_LAST; i++)
		n += bpf[i];
	for (i = 0; i < DROP_MAX; i++)
		n += c->drops[i];
	return n;
}

static void print_status(struct sampler *s, const struct collector *c, double elapsed,
			 uint64_t *last_samples, double *last_t)
{
	uint64_t st[SAMPLER_STAT_MAX];
	struct calltrace_storage_stats cs;
	double dt = elapsed - *last_t;

	if (sampler__read_stats(s, st))
		return;
	calltrace_storage__stats(c->traces, &cs);
	fprintf(stderr, "\r\033[Kctxprof: %6.1fs  %7.0f samples/s  %llu samples  %llu dropped  "
			"%llu stacks",
		elapsed, dt > 0 ? (st[SAMPLER_STAT_SAMPLES] - *last_samples) / dt : 0.0,
		(unsigned long long)st[SAMPLER_STAT_SAMPLES],
		(unsigned long long)sum_drops(st, c), (unsigned long long)cs.traces);
	*last_samples = st[SAMPLER_STAT_SAMPLES];
	*last_t = elapsed;
}

static void print_summary(const struct collector *c, const uint64_t *st,
			  const struct export_result *res, const char *path, double elapsed,
			  const char *why, const struct symbolizer_stats *ss, double cpu_s)
{
	uint64_t drops = sum_drops(st, c);
	int i;

	fprintf(stderr, "ctxprof: stopped after %.1fs (%s)\n", elapsed, why);
	fprintf(stderr, "ctxprof: samples: %llu taken, %llu in profile, %llu dropped\n",
		(unsigned long long)st[SAMPLER_STAT_SAMPLES], (unsigned long long)res->samples,
		(unsigned long long)drops);
	fprintf(stderr, "ctxprof: dropped by reason:");
	for (i = SAMPLER_STAT_DROP_FIRST; i <= SAMPLER_STAT_DROP_LAST; i++)
		fprintf(stderr, " %s=%llu", sampler_stat_name(i), (unsigned long long)st[i]);
	for (i = 0; i < DROP_MAX; i++)
		fprintf(stderr, " %s=%llu", drop_names[i], (unsigned long long)c->drops[i]);
	fprintf(stderr, " no_trace=%llu\n", (unsigned long long)res->no_trace);
	fprintf(stderr, "ctxprof: stack errors (samples kept): user=%llu kernel=%llu\n",
		(unsigned long long)st[SAMPLER_STAT_USTACK_ERR],
		(unsigned long long)st[SAMPLER_STAT_KSTACK_ERR]);
	fprintf(stderr,
		"ctxprof: %llu unique stacks, %zu locations, %zu functions, %zu mappings; "
		"%llu addresses unnamed, %llu unmapped; %llu ELF files read, %llu unreadable\n",
		(unsigned long long)res->traces, res->locations, res->functions, res->mappings,
		(unsigned long long)ss->unnamed, (unsigned long long)ss->unmapped,
		(unsigned long long)ss->elf_opened,
		(unsigned long long)(ss->elf_open_failed + ss->elf_parse_failed));
	fprintf(stderr, "ctxprof: collector CPU %.3f s, %.1f us per sample\n", cpu_s,
		st[SAMPLER_STAT_SAMPLES] ? cpu_s * 1e6 / st[SAMPLER_STAT_SAMPLES] : 0.0);
	fprintf(stderr, "ctxprof: wrote %s\n", path);
}

/* user + system CPU time the collector itself has used */
static double self_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	struct collector c = {};
	struct collector_opts *o = &c.opts;
	struct sampler_opts so = {};
	struct sampler *s = NULL;
	struct symbolizer *sym = NULL;
	struct export_result res = {};
	struct symbolizer_stats ss;
	struct sigaction sa = { .sa_handler = on_signal };
	char err_msg[256] = "", default_out[64], comment[512];
	const char *comments[3] = { comment, NULL, NULL };
	uint64_t st[SAMPLER_STAT_MAX] = {}, last_samples = 0;
	double start, elapsed = 0, last_tick = 0, last_status = 0;
	int64_t wall_start;
	const char *why = "target exited";
	int pidfd = -1, err, n;
	bool status;

	err = cli__parse(argc, argv, o, stdout, stderr);
	if (err)
		return err == CLI_EXIT_OK ? 0 : 2;
	if (!o->output) {
		snprintf(default_out, sizeof(default_out), "ctxprof-%d.pb.gz", o->pid);
		o->output = default_out;
	}
	status = o->status < 0 ? isatty(STDERR_FILENO) : o->status;
	verbose = o->verbose;
	libbpf_set_print(libbpf_print);

	err = check_privileges();
	if (err)
		goto cleanup;
	err = check_kernel(o);
	if (err)
		goto cleanup;
	err = check_output(o->output);
	if (err)
		goto cleanup;
	pidfd = open_target(o->pid);
	if (pidfd < 0) {
		err = pidfd;
		goto cleanup;
	}

	sym = symbolizer__new(o->kernel);
	c.traces = calltrace_storage__new(o->max_stacks);
	c.samples = sample_table__new(CLI_DEFAULT_MAX_ROWS);
	if (!sym || !c.traces || !c.samples) {
		err = -ENOMEM;
		fprintf(stderr, "collector: out of memory setting up tables\n");
		goto cleanup;
	}
	/* map the target before the first sample, so that even a target that
	 * exits at once is symbolized */
	err = symbolizer__snapshot(sym, o->pid);
	if (err == -ESRCH) {
		fprintf(stderr, "collector: no process with pid %d\n", o->pid);
		goto cleanup;
	}

	so.pid = o->pid;
	so.frequency = o->frequency;
	so.kernel_stacks = o->kernel;
	so.ring_bytes = o->ring_kib * 1024;
	so.btf_path = o->btf_path;
	s = sampler__open(&so, on_record, &c, err_msg, sizeof(err_msg));
	if (!s) {
		err = -errno;
		fprintf(stderr, "collector: %s\n", err_msg);
		goto cleanup;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	wall_start = (int64_t)(now_s(CLOCK_REALTIME) * 1e9);
	start = now_s(CLOCK_MONOTONIC);
	fprintf(stderr, "ctxprof: profiling pid %d at %u Hz on %d CPUs%s; Ctrl-C to stop\n",
		o->pid, o->frequency, sampler__nr_cpus(s), o->kernel ? "" : " (no kernel stacks)");

	for (;;) {
		n = sampler__poll(s, POLL_MS);
		if (n < 0 && n != -EINTR) {
			err = n;
			fprintf(stderr, "\ncollector: reading the ring buffers: %s\n", strerror(-n));
			break;
		}
		elapsed = now_s(CLOCK_MONOTONIC) - start;
		if (stop_signal) {
			why = stop_signal == SIGINT ? "interrupted" : "terminated";
			break;
		}
		if (o->duration && elapsed >= o->duration) {
			why = "duration reached";
			break;
		}
		if (target_exited(pidfd))
			break;
		if (elapsed - last_tick >= 1.0) {
			/* catch libraries loaded since: cheap when the maps text is unchanged */
			symbolizer__snapshot(sym, o->pid);
			last_tick = elapsed;
		}
		if (status && elapsed - last_status >= 1.0) {
			print_status(s, &c, elapsed, &last_samples, &last_status);
		}
	}
	if (status)
		fputc('\n', stderr);

	n = sampler__stop(s);
	if (n < 0)
		fprintf(stderr, "collector: draining the ring buffers: %s\n", strerror(-n));
	err = sampler__read_stats(s, st);
	if (err) {
		fprintf(stderr, "collector: cannot read the sampler's counters: %s\n",
			strerror(-err));
		goto cleanup;
	}
	snprintf(comment, sizeof(comment),
		 "ctxprof collector: pid %d, %u Hz, %.1f s, %llu samples taken, %llu dropped",
		 o->pid, o->frequency, elapsed, (unsigned long long)st[SAMPLER_STAT_SAMPLES],
		 (unsigned long long)sum_drops(st, &c));
	err = export_pprof(c.traces, c.samples, sym,
			   &(struct export_opts){
				   .period_ns = 1000000000ull / o->frequency,
				   .time_nanos = wall_start,
				   .duration_nanos = (int64_t)(elapsed * 1e9),
				   .comments = comments,
			   },
			   o->output, &res);
	if (err) {
		fprintf(stderr, "collector: cannot write %s: %s\n", o->output, strerror(-err));
		goto cleanup;
	}
	symbolizer__stats(sym, &ss);
	print_summary(&c, st, &res, o->output, elapsed, why, &ss, self_cpu_s());

cleanup:
	sampler__free(s);
	symbolizer__free(sym);
	sample_table__free(c.samples);
	calltrace_storage__free(c.traces);
	if (pidfd >= 0)
		close(pidfd);
	return err ? 1 : 0;
}
