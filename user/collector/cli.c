// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "collector/cli.h"
#include "export/push.h"
#include "export/scrape_queue.h"
#include "sampling/drain.h"

enum {
	OPT_NO_KERNEL = 256,
	OPT_RING_SIZE,
	OPT_MAX_STACKS,
	OPT_BTF,
	OPT_STATUS,
	OPT_NO_STATUS,
	OPT_INTERVAL,
	OPT_OUTPUT_DIR,
	OPT_MAX_FILES,
	OPT_DRAIN_THREADS,
	OPT_NO_CONTEXT,
	OPT_CHILDREN,
	OPT_UNWIND,
	OPT_PYTHON,
	OPT_OFF_CPU,
	OPT_BPF_STATS,
	OPT_OFF_CPU_THRESHOLD,
	OPT_UNWIND_MEMORY,
	OPT_SYMBOL_MEMORY,
	OPT_TIMELINE,
	OPT_TIMELINES,
	OPT_TIMELINE_MEMORY,
	OPT_TIMELINE_FORMAT,
	OPT_METRICS_ADDR,
	OPT_HEALTH_ADDR,
	OPT_PUSH,
	OPT_PUSH_TOKEN_FILE,
	OPT_PUSH_USER,
	OPT_PUSH_PASSWORD_FILE,
	OPT_PUSH_TENANT,
	OPT_PUSH_CA_FILE,
	OPT_PUSH_SPOOL,
	OPT_PUSH_TIMEOUT,
	OPT_PUSH_FLUSH,
	OPT_PUSH_CONFIG,
};

static const struct option long_opts[] = {
	{"pid", required_argument, NULL, 'p'},
	{"all", no_argument, NULL, 'a'},
	{"children", no_argument, NULL, OPT_CHILDREN},
	{"frequency", required_argument, NULL, 'F'},
	{"duration", required_argument, NULL, 'd'},
	{"output", required_argument, NULL, 'o'},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"output-dir", required_argument, NULL, OPT_OUTPUT_DIR},
	{"max-files", required_argument, NULL, OPT_MAX_FILES},
	{"drain-threads", required_argument, NULL, OPT_DRAIN_THREADS},
	{"no-kernel", no_argument, NULL, OPT_NO_KERNEL},
	{"no-context", no_argument, NULL, OPT_NO_CONTEXT},
	{"unwind", required_argument, NULL, OPT_UNWIND},
	{"python", required_argument, NULL, OPT_PYTHON},
	{"off-cpu", no_argument, NULL, OPT_OFF_CPU},
	{"bpf-stats", no_argument, NULL, OPT_BPF_STATS},
	{"off-cpu-threshold", required_argument, NULL, OPT_OFF_CPU_THRESHOLD},
	{"unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY},
	{"symbol-memory", required_argument, NULL, OPT_SYMBOL_MEMORY},
	{"timeline", required_argument, NULL, OPT_TIMELINE},
	{"timeline-format", required_argument, NULL, OPT_TIMELINE_FORMAT},
	{"timelines", no_argument, NULL, OPT_TIMELINES},
	{"timeline-memory", required_argument, NULL, OPT_TIMELINE_MEMORY},
	{"ring-size", required_argument, NULL, OPT_RING_SIZE},
	{"max-stacks", required_argument, NULL, OPT_MAX_STACKS},
	{"btf", required_argument, NULL, OPT_BTF},
	{"metrics-addr", required_argument, NULL, OPT_METRICS_ADDR},
	{"health-addr", required_argument, NULL, OPT_HEALTH_ADDR},
	{"push", required_argument, NULL, OPT_PUSH},
	{"push-token-file", required_argument, NULL, OPT_PUSH_TOKEN_FILE},
	{"push-user", required_argument, NULL, OPT_PUSH_USER},
	{"push-password-file", required_argument, NULL, OPT_PUSH_PASSWORD_FILE},
	{"push-tenant", required_argument, NULL, OPT_PUSH_TENANT},
	{"push-ca-file", required_argument, NULL, OPT_PUSH_CA_FILE},
	{"push-spool", required_argument, NULL, OPT_PUSH_SPOOL},
	{"push-timeout", required_argument, NULL, OPT_PUSH_TIMEOUT},
	{"push-flush", required_argument, NULL, OPT_PUSH_FLUSH},
	{"push-config", required_argument, NULL, OPT_PUSH_CONFIG},
	{"status", no_argument, NULL, OPT_STATUS},
	{"no-status", no_argument, NULL, OPT_NO_STATUS},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{},
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s --pid PID [--children] [OPTIONS]\n"
		"       %s --all [OPTIONS]\n"
		"\n"
		"Sample the CPU stacks of every thread of process PID (or of every process,\n"
		"--all) with eBPF and write a gzipped pprof profile (readable by pprof,\n"
		"Pyroscope, Parca, speedscope).  Runs until --duration elapses, Ctrl-C /\n"
		"SIGTERM, or the process exits (--pid alone); the profile collected so far is\n"
		"written in every case.  Needs root (see Privileges below) and a kernel with\n"
		"BTF.\n"
		"\n"
		"What to profile (one of):\n"
		"  -p, --pid PID          process to profile, all its threads\n"
		"      --children         with --pid: also every descendant of PID, present\n"
		"                         and future (runs until --duration or a signal)\n"
		"  -a, --all              every process on the host; samples get comm and\n"
		"                         container_id labels (what the DaemonSet runs)\n"
		"\n"
		"Options:\n"
		"  -F, --frequency HZ     samples per second on each CPU, 1-%d (default %d;\n"
		"                         an odd rate avoids lockstep with periodic work)\n"
		"  -d, --duration SEC     stop after SEC seconds, fractions allowed\n"
		"                         (default: run until Ctrl-C or the process exits)\n"
		"  -o, --output FILE      pprof file to write (default ctxprof-PID.pb.gz)\n"
		"\n"
		"Application context (off with --no-context):\n"
		"  libctxprof             span_id, local_root_span_id and tag labels on the\n"
		"                         samples of threads serving a span, in every mode\n"
		"  OpenTelemetry          in every mode: a process that publishes its process\n"
		"                         context (OTEP 4719) gets its string resource\n"
		"                         attributes (service.name, ...) on every sample; one\n"
		"                         that also publishes thread context (OTEP 4947)\n"
		"                         gets trace_id, span_id and the span's attributes\n"
		"                         (http.route, ...) on its samples in a span\n"
		"\n"
		"User stacks:\n"
		"      --unwind MODE      how user stacks are walked (default auto):\n"
		"                         auto   from each file's CFI (.eh_frame), as perf\n"
		"                                --call-graph dwarf would, in BPF; frame\n"
		"                                pointers for code without CFI (JIT, V8's\n"
		"                                builtins) and for a process whose tables\n"
		"                                are not built yet\n"
		"                         dwarf  CFI only: code without it ends the stack\n"
		"                         fp     frame pointers only (the kernel's walk): the\n"
		"                                cheapest, but code built without them (most\n"
		"                                distribution binaries) yields short, partly\n"
		"                                wrong stacks\n"
		"                         auto and dwarf walk under bpf_loop (Linux 5.17+),\n"
		"                         else by tail calls (CTXPROF_UNWIND_WALKER=tail\n"
		"                         forces those, for tests); tables are built once\n"
		"                         per file on a thread of their own\n"
		"      --python on|off    CPython's frames in place of the interpreter's\n"
		"                         (default on): where a stack passes\n"
		"                         _PyEval_EvalFrameDefault, the Python functions it\n"
		"                         ran, with their files and lines; Python 3.11, the\n"
		"                         python3 executable or a program embedding libpython.\n"
		"                         Costs a walk of the thread's frames per sample of a\n"
		"                         Python process (see bench/README.md); needs bpf_loop\n"
		"      --unwind-memory MIB  BPF memory for unwind tables, 8-4096 (default %d);\n"
		"                         least recently used tables are evicted beyond it\n"
		"      --symbol-memory MIB  memory for the symbols of the ELF files processes\n"
		"                         map, 16-65536 (default %d); files no process maps\n"
		"                         go first, and a file that does not fit is named by\n"
		"                         its mapping only (counted in the summary)\n"
		"\n"
		"Off-CPU time (what each request waited on):\n"
		"      --off-cpu          also record the waits of profiled threads: each time\n"
		"                         one blocks (a lock, a sleep, a read, fsync) for at\n"
		"                         least --off-cpu-threshold, its stacks where it\n"
		"                         blocked, its span and the time it was away, as\n"
		"                         samples of a third type, off_cpu/nanoseconds, with\n"
		"                         an off_cpu_class label (lock, sleep, io, network,\n"
		"                         other), and a fourth, wall/nanoseconds, holding CPU\n"
		"                         and off-CPU time alike (-sample_index=wall: where a\n"
		"                         span's time went); CPU stays the type shown first.\n"
		"                         Off by default: it adds a program on every context\n"
		"                         switch (see bench/README.md), bounded to %d\n"
		"                         captures a second per CPU (past it, sampled)\n"
		"      --off-cpu-threshold USEC  shorter waits are counted, not recorded\n"
		"                         (default %d)\n"
		"\n"
		"Timelines (what each request ran, in order):\n"
		"      --timeline FILE    also write a Chrome trace-event JSON timeline (gzipped\n"
		"                         when FILE ends in .gz) that Perfetto, chrome://tracing\n"
		"                         and speedscope open: a track per thread, each span a\n"
		"                         slice (args span_id, local_root_span_id) holding its\n"
		"                         sampled stacks in time order\n"
		"      --timelines        with --interval: one timeline per profile, named as\n"
		"                         the profile with .timeline.json.gz\n"
		"      --timeline-format chrome|speedscope  chrome (the default) is the above;\n"
		"                         speedscope is speedscope's own format, which opens on\n"
		"                         the thread with the most time in spans (speedscope\n"
		"                         opens a Chrome trace on its lowest thread id, often\n"
		"                         an idle main thread).  The default for a --timeline\n"
		"                         FILE ending in .speedscope.json[.gz]; --timelines then\n"
		"                         end in .speedscope.json.gz\n"
		"      --timeline-memory MIB  memory for the per-thread event histories, 1-65536\n"
		"                         (default %d); past it the oldest events are recycled,\n"
		"                         and the summary counts them\n"
		"\n"
		"Continuous mode:\n"
		"  -i, --interval SEC     write one profile every SEC seconds (>= 1) instead of\n"
		"                         one at the end; files are named\n"
		"                         ctxprof-PID-<UTC start time>.pb.gz\n"
		"      --output-dir DIR   where interval files go (default: current directory)\n"
		"      --max-files N      keep only the N newest interval files written by this\n"
		"                         run, deleting older ones; 0 keeps all (default %u)\n"
		"\n"
		"Monitoring, and profiles leaving the node:\n"
		"      --metrics-addr HOST:PORT  serve Prometheus metrics at /metrics and a\n"
		"                         health check at /healthz (200 \"ok\", 200 \"degraded:\n"
		"                         why\", or 503 and why) on HOST:PORT (:PORT for every\n"
		"                         IPv4 address, [::]:PORT for IPv6 and IPv4), from a\n"
		"                         thread of its own; and, as Go's net/http/pprof,\n"
		"                         /debug/pprof/profile?seconds=N (default 30, at\n"
		"                         most %d): the gzipped pprof of the next N seconds,\n"
		"                         what Parca, Alloy's pyroscope.scrape and `pprof\n"
		"                         http://HOST:PORT/debug/pprof/profile` fetch, %d at\n"
		"                         once; &pid=PID keeps one process, &KEY=VALUE the\n"
		"                         samples with that label (service.name=, pod=,\n"
		"                         comm=, ...)\n"
		"      --push URL         upload each interval's profiles to a Grafana\n"
		"                         Pyroscope server (URL: http(s)://HOST:PORT, its\n"
		"                         /ingest), one per service: service.name from\n"
		"                         OpenTelemetry, else namespace/container, else the\n"
		"                         container id, else the process name; pod,\n"
		"                         namespace, container and node as series labels.\n"
		"                         Sets --interval %d unless given; local files only\n"
		"                         with --output-dir.  From a thread of its own: a slow\n"
		"                         or down store never holds up sampling; failed\n"
		"                         uploads are retried in order (backoff, the store's\n"
		"                         Retry-After), a 4xx refusal is not retried\n"
		"      --push-config DIR  --push and its credentials from files in DIR (a\n"
		"                         mounted Kubernetes Secret): url, and if there\n"
		"                         token, username and password, tenant, ca.crt;\n"
		"                         without DIR/url nothing is pushed\n"
		"      --push-token-file FILE  send its one line as a bearer token (read again\n"
		"                         when the file changes)\n"
		"      --push-user USER   basic auth, with --push-password-file FILE\n"
		"      --push-tenant ID   X-Scope-OrgID, for a multi-tenant store\n"
		"      --push-ca-file FILE  CA certificates for https (default: the system's)\n"
		"      --push-spool MIB   profiles kept while the store is slow or down, 1-65536\n"
		"                         (default %d); past it the oldest are dropped and\n"
		"                         counted.  With --output-dir a profile whose upload\n"
		"                         failed is also kept in DIR/" PUSH_SPOOL_DIR ",\n"
		"                         and sent after a restart\n"
		"      --push-timeout SEC  one upload's limit, 1-600 (default %d)\n"
		"      --push-flush SEC   at the stop, how long to go on sending, 0-600\n"
		"                         (default %d)\n"
		"      --health-addr HOST:PORT  also serve /healthz alone on HOST:PORT, from\n"
		"                         another thread: probes there never wait behind\n"
		"                         scrapes\n"
		"      --bpf-stats        have the kernel count the BPF programs' run time while\n"
		"                         the collector runs (BPF_ENABLE_STATS; each run costs a\n"
		"                         clock read more): the summary and /metrics then show\n"
		"                         ns per sample.  Shown too when kernel.bpf_stats_enabled\n"
		"                         is 1\n"
		"\n"
		"Tuning:\n"
		"      --drain-threads N  threads reading the per-CPU ring buffers, each owning\n"
		"                         a subset of the CPUs, 1-%d (default %d: one thread\n"
		"                         keeps up with well over 100k samples/s)\n"
		"      --no-kernel        do not capture kernel frames\n"
		"      --no-context       do not read the context applications publish "
		"(libctxprof\n"
		"                         slots, OpenTelemetry process and thread context)\n"
		"      --ring-size KIB    per-CPU ring buffer size in KiB, a power of two\n"
		"                         >= 64 (default: 2 s of 2 KiB records at -F, with\n"
		"                         --off-cpu's budget, %d-%d: 512 at 99 Hz, %d at\n"
		"                         999 Hz); raise it if ring_full drops show\n"
		"      --max-stacks N     distinct stacks kept per interval, and (stack, thread)\n"
		"                         pairs per drain thread (default: twice the samples\n"
		"                         an interval can hold, CPUs x -F x 1.5 intervals,\n"
		"                         %u-%u; with no interval or duration, the most);\n"
		"                         more are counted as dropped (stack_table_full,\n"
		"                         sample_table_full)\n"
		"      --btf FILE         kernel BTF to use when /sys/kernel/btf/vmlinux is "
		"missing\n"
		"      --status           print a status line every second on stderr\n"
		"      --no-status        never print it (default: only when stderr is a "
		"terminal)\n"
		"  -v, --verbose          print libbpf's messages; twice for its debug output\n"
		"  -h, --help             show this help and exit\n"
		"  -V, --version          show the version and exit\n"
		"\n"
		"Privileges: start-up needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to\n"
		"load the BPF programs and open perf events, CAP_SYSLOG to read kernel\n"
		"addresses from /proc/kallsyms (else kernel frames stay unnamed), and\n"
		"CAP_SETPCAP to empty the bounding set.  Then every capability is dropped but\n"
		"CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (other processes' /proc entries and\n"
		"files) and CAP_CHECKPOINT_RESTORE (/proc/PID/map_files), and no_new_privs is\n"
		"set; a child, ctxprof-perf, keeps CAP_PERFMON alone to open the perf event\n"
		"of a CPU that comes online later, and another, ctxprof-bpf, CAP_BPF alone\n"
		"to make 1 MiB chunks of unwind rows as tables need them.  Samples get a\n"
		"node label: $NODE_NAME, else the host name.\n"
		"\n"
		"At exit a summary shows samples, drops by reason and unique stacks.\n"
		"Example:  sudo %s --pid $(pidof myserver) --duration 30 -o cpu.pb.gz\n"
		"          pprof -top cpu.pb.gz\n",
		prog, prog, CLI_MAX_FREQUENCY, CLI_DEFAULT_FREQUENCY, CLI_DEFAULT_UNWIND_MIB,
		CLI_DEFAULT_SYMBOL_MIB, CLI_OFF_CPU_BUDGET, CLI_OFF_CPU_THRESHOLD_US,
		CLI_DEFAULT_TIMELINE_MIB, CLI_DEFAULT_MAX_FILES, SCRAPE_MAX_SECONDS, DRAIN_SCRAPES,
		CLI_PUSH_INTERVAL, PUSH_DEFAULT_SPOOL_MIB, PUSH_DEFAULT_TIMEOUT_S, CLI_PUSH_FLUSH_S,
		CLI_MAX_DRAIN_THREADS, CLI_DEFAULT_DRAIN_THREADS, CLI_RING_AUTO_MIN_KIB,
		CLI_RING_AUTO_MAX_KIB, CLI_RING_AUTO_MAX_KIB, CLI_MIN_MAX_STACKS,
		CLI_DEFAULT_MAX_STACKS, prog);
}

/* a whole decimal number in [min, max]; nothing else accepted */
static int parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int bad(FILE *err, const char *prog, const char *opt, const char *arg, const char *want)
{
	fprintf(err, "%s: %s: '%s' is not %s (see --help)\n", prog, opt, arg ? arg : "", want);
	return -EINVAL;
}

static void set_defaults(struct collector_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->frequency = CLI_DEFAULT_FREQUENCY;
	opts->kernel = true;
	opts->context = true;
	opts->python = true;
	opts->off_cpu_threshold_us = CLI_OFF_CPU_THRESHOLD_US;
	opts->ring_kib = 0;   /* ring_kib_for() once -F and --off-cpu are known */
	opts->max_stacks = 0; /* max_stacks_for() once -F and the window are known */
	opts->status = -1;
	opts->max_files = CLI_DEFAULT_MAX_FILES;
	opts->drain_threads = CLI_DEFAULT_DRAIN_THREADS;
	opts->unwind = UNWIND_MODE_AUTO;
	opts->unwind_mib = CLI_DEFAULT_UNWIND_MIB;
	opts->symbol_mib = CLI_DEFAULT_SYMBOL_MIB;
	opts->timeline_mib = CLI_DEFAULT_TIMELINE_MIB;
	opts->push_spool_mib = PUSH_DEFAULT_SPOOL_MIB;
	opts->push_timeout_s = PUSH_DEFAULT_TIMEOUT_S;
	opts->push_flush_s = CLI_PUSH_FLUSH_S;
}

/* a finite number of seconds in [min, a year] */
static int parse_seconds(const char *s, double min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > 31536000.0)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * The per-CPU ring when --ring-size is not given: room for 2 s of records,
 * 2 KiB each (a deep stack and its context), at @frequency plus, with
 * --off-cpu, its budget of waits a second; a power of two within the
 * bounds.  Each ring is mapped twice (records wrap contiguously), so the
 * collector's RSS holds twice this per CPU: sized by the rate, not the most.
 */
static size_t ring_kib_for(unsigned int frequency, bool off_cpu)
{
	size_t need = ((size_t)frequency + (off_cpu ? CLI_OFF_CPU_BUDGET : 0)) * 2 * 2, kib;

	for (kib = CLI_RING_AUTO_MIN_KIB; kib < need && kib < CLI_RING_AUTO_MAX_KIB; kib *= 2)
		;
	return kib;
}

/*
 * --max-stacks when not given: twice what a profile window can hold (each
 * CPU's samples at -F, and with --off-cpu its budget of waits, over 1.5
 * intervals: an export that overruns makes the next window longer), within
 * the bounds; without an interval, over --duration, and the most when the
 * run is unbounded.  A window's distinct stacks, and its (stack, thread)
 * rows, are at most its samples; the second half is for the stacks a
 * timeline keeps alive across a rotation.  The stack and sample tables are
 * this size: what a 2-CPU node uses, not what a 192-CPU one might.
 */
static size_t max_stacks_for(const struct collector_opts *opts)
{
	double window = opts->interval ? 1.5 * opts->interval : opts->duration;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	double records, want;
	size_t n = CLI_MIN_MAX_STACKS;

	if (!window || cpus <= 0)
		return CLI_DEFAULT_MAX_STACKS;
	records = (double)cpus * (opts->frequency + (opts->off_cpu ? CLI_OFF_CPU_BUDGET : 0));
	want = 2 * records * window;
	while (n < want && n < CLI_DEFAULT_MAX_STACKS)
		n *= 2;
	return n;
}

/* a file named for speedscope's format: NAME.speedscope.json, gzipped or not */
static bool speedscope_name(const char *path)
{
	static const char *const ends[] = {".speedscope.json", ".speedscope.json.gz"};
	size_t n = strlen(path), e;

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		e = strlen(ends[i]);
		if (n > e && !strcmp(path + n - e, ends[i]))
			return true;
	}
	return false;
}

/* --push's options agree with each other and with the rest; --interval set when not given */
static int push_options(struct collector_opts *opts, const char *prog, FILE *err)
{
	const char *needs = opts->push_token_file      ? "--push-token-file"
			    : opts->push_user	       ? "--push-user"
			    : opts->push_password_file ? "--push-password-file"
			    : opts->push_tenant	       ? "--push-tenant"
			    : opts->push_ca_file       ? "--push-ca-file"
						       : NULL;

	if (opts->push_config && (opts->push_url || needs)) {
		fprintf(err,
			"%s: --push-config DIR holds the store's URL and credentials: not "
			"with %s\n",
			prog, opts->push_url ? "--push" : needs);
		return -EINVAL;
	}
	if (!opts->push_url && !opts->push_config) {
		if (needs)
			fprintf(err, "%s: %s is for --push URL (see --help)\n", prog, needs);
		return needs ? -EINVAL : 0;
	}
	if (opts->push_token_file && (opts->push_user || opts->push_password_file)) {
		fprintf(err,
			"%s: --push-token-file and --push-user are two ways to authenticate: "
			"give one\n",
			prog);
		return -EINVAL;
	}
	if (opts->push_password_file && !opts->push_user) {
		fprintf(err, "%s: --push-password-file needs --push-user\n", prog);
		return -EINVAL;
	}
	if (opts->output) {
		fprintf(err,
			"%s: --output names one file: with --push, profiles go out each "
			"interval (--output-dir keeps them here too)\n",
			prog);
		return -EINVAL;
	}
	if (opts->timelines && !opts->output_dir) {
		fprintf(err, "%s: --timelines are files: with --push, give --output-dir for them\n",
			prog);
		return -EINVAL;
	}
	if (!opts->interval)
		opts->interval = CLI_PUSH_INTERVAL;
	return 0;
}

int cli__parse(int argc, char **argv, struct collector_opts *opts, FILE *out, FILE *err)
{
	const char *prog = "collector";
	bool format_given = false;
	unsigned long v;
	int c;

	set_defaults(opts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:aF:d:o:i:vhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_ulong(optarg, 1, INT_MAX, &v))
				return bad(err, prog, "--pid", optarg, "a process id");
			if (opts->pid) {
				fprintf(err,
					"%s: --pid given twice (%d and %lu): one process, or "
					"--children for a tree, or --all (see --help)\n",
					prog, opts->pid, v);
				return -EINVAL;
			}
			opts->pid = v;
			break;
		case 'F':
			if (parse_ulong(optarg, 1, CLI_MAX_FREQUENCY, &v))
				return bad(err, prog, "--frequency", optarg,
					   "a whole number of Hz between 1 and 100000");
			opts->frequency = v;
			break;
		case 'd':
			if (parse_seconds(optarg, 0.001, &opts->duration))
				return bad(err, prog, "--duration", optarg,
					   "a number of seconds above 0 (at most a year)");
			break;
		case 'i':
		case OPT_INTERVAL:
			if (parse_seconds(optarg, 1, &opts->interval))
				return bad(err, prog, "--interval", optarg,
					   "a number of seconds, at least 1");
			break;
		case OPT_OUTPUT_DIR:
			if (!*optarg)
				return bad(err, prog, "--output-dir", optarg, "a directory");
			opts->output_dir = optarg;
			break;
		case OPT_MAX_FILES:
			if (parse_ulong(optarg, 0, 1000000, &v))
				return bad(err, prog, "--max-files", optarg,
					   "a number between 0 and 1000000");
			opts->max_files = v;
			break;
		case OPT_DRAIN_THREADS:
			if (parse_ulong(optarg, 1, CLI_MAX_DRAIN_THREADS, &v))
				return bad(err, prog, "--drain-threads", optarg,
					   "a number between 1 and 64");
			opts->drain_threads = v;
			break;
		case 'o':
			if (!*optarg)
				return bad(err, prog, "--output", optarg, "a file name");
			opts->output = optarg;
			break;
		case 'a':
			opts->all = true;
			break;
		case OPT_CHILDREN:
			opts->children = true;
			break;
		case OPT_NO_KERNEL:
			opts->kernel = false;
			break;
		case OPT_NO_CONTEXT:
			opts->context = false;
			break;
		case OPT_BPF_STATS:
			opts->bpf_stats = true;
			break;
		case OPT_OFF_CPU:
			opts->off_cpu = true;
			break;
		case OPT_OFF_CPU_THRESHOLD:
			if (parse_ulong(optarg, 0, 10000000, &v))
				return bad(err, prog, "--off-cpu-threshold", optarg,
					   "microseconds between 0 and 10000000");
			opts->off_cpu_threshold_us = v;
			break;
		case OPT_PYTHON:
			if (!strcmp(optarg, "on"))
				opts->python = true;
			else if (!strcmp(optarg, "off"))
				opts->python = false;
			else
				return bad(err, prog, "--python", optarg, "on or off");
			break;
		case OPT_UNWIND:
			if (!strcmp(optarg, "auto"))
				opts->unwind = UNWIND_MODE_AUTO;
			else if (!strcmp(optarg, "dwarf"))
				opts->unwind = UNWIND_MODE_DWARF;
			else if (!strcmp(optarg, "fp"))
				opts->unwind = UNWIND_MODE_FP;
			else
				return bad(err, prog, "--unwind", optarg, "auto, dwarf or fp");
			break;
		case OPT_UNWIND_MEMORY:
			if (parse_ulong(optarg, 8, 4096, &v))
				return bad(err, prog, "--unwind-memory", optarg,
					   "a number of MiB between 8 and 4096");
			opts->unwind_mib = v;
			break;
		case OPT_SYMBOL_MEMORY:
			if (parse_ulong(optarg, 16, 65536, &v))
				return bad(err, prog, "--symbol-memory", optarg,
					   "a number of MiB between 16 and 65536");
			opts->symbol_mib = v;
			break;
		case OPT_TIMELINE:
			if (!*optarg)
				return bad(err, prog, "--timeline", optarg, "a file name");
			opts->timeline = optarg;
			break;
		case OPT_TIMELINES:
			opts->timelines = true;
			break;
		case OPT_TIMELINE_FORMAT:
			if (strcmp(optarg, "chrome") && strcmp(optarg, "speedscope"))
				return bad(err, prog, "--timeline-format", optarg,
					   "chrome or speedscope");
			opts->timeline_speedscope = !strcmp(optarg, "speedscope");
			format_given = true;
			break;
		case OPT_TIMELINE_MEMORY:
			if (parse_ulong(optarg, 1, 65536, &v))
				return bad(err, prog, "--timeline-memory", optarg,
					   "a number of MiB between 1 and 65536");
			opts->timeline_mib = v;
			break;
		case OPT_RING_SIZE:
			if (parse_ulong(optarg, 64, 1u << 20, &v) || (v & (v - 1)))
				return bad(err, prog, "--ring-size", optarg,
					   "a power of two of KiB between 64 and 1048576");
			opts->ring_kib = v;
			break;
		case OPT_MAX_STACKS:
			if (parse_ulong(optarg, 16, 1u << 28, &v))
				return bad(err, prog, "--max-stacks", optarg,
					   "a number between 16 and 268435456");
			opts->max_stacks = v;
			break;
		case OPT_BTF:
			opts->btf_path = optarg;
			break;
		case OPT_METRICS_ADDR:
			if (!strchr(optarg, ':'))
				return bad(err, prog, "--metrics-addr", optarg,
					   "HOST:PORT or :PORT");
			opts->metrics_addr = optarg;
			break;
		case OPT_HEALTH_ADDR:
			if (!strchr(optarg, ':'))
				return bad(err, prog, "--health-addr", optarg,
					   "HOST:PORT or :PORT");
			opts->health_addr = optarg;
			break;
		case OPT_PUSH:
			if (strncasecmp(optarg, "http://", 7) && strncasecmp(optarg, "https://", 8))
				return bad(err, prog, "--push",
					   "(not shown: it may hold a password)",
					   "an http:// or https:// URL");
			opts->push_url = optarg;
			break;
		case OPT_PUSH_CONFIG:
			if (!*optarg)
				return bad(err, prog, "--push-config", optarg, "a directory");
			opts->push_config = optarg;
			break;
		case OPT_PUSH_TOKEN_FILE:
		case OPT_PUSH_PASSWORD_FILE:
		case OPT_PUSH_CA_FILE:
			if (!*optarg)
				return bad(err, prog, argv[optind - 1], optarg, "a file name");
			*(c == OPT_PUSH_TOKEN_FILE	? &opts->push_token_file
			  : c == OPT_PUSH_PASSWORD_FILE ? &opts->push_password_file
							: &opts->push_ca_file) = optarg;
			break;
		case OPT_PUSH_USER:
		case OPT_PUSH_TENANT:
			if (!*optarg)
				return bad(err, prog, argv[optind - 1], optarg, "a name");
			*(c == OPT_PUSH_USER ? &opts->push_user : &opts->push_tenant) = optarg;
			break;
		case OPT_PUSH_SPOOL:
			if (parse_ulong(optarg, 1, 65536, &v))
				return bad(err, prog, "--push-spool", optarg,
					   "a number of MiB between 1 and 65536");
			opts->push_spool_mib = v;
			break;
		case OPT_PUSH_TIMEOUT:
			if (parse_ulong(optarg, 1, 600, &v))
				return bad(err, prog, "--push-timeout", optarg,
					   "a number of seconds between 1 and 600");
			opts->push_timeout_s = v;
			break;
		case OPT_PUSH_FLUSH:
			if (parse_ulong(optarg, 0, 600, &v))
				return bad(err, prog, "--push-flush", optarg,
					   "a number of seconds between 0 and 600");
			opts->push_flush_s = v;
			break;
		case OPT_STATUS:
			opts->status = 1;
			break;
		case OPT_NO_STATUS:
			opts->status = 0;
			break;
		case 'v':
			opts->verbose++;
			break;
		case 'h':
			usage(out, prog);
			return CLI_EXIT_OK;
		case 'V':
			fprintf(out, "ctxprof collector %s\n", CTXPROF_VERSION);
			return CLI_EXIT_OK;
		case ':':
			fprintf(err, "%s: option %s needs a value (see --help)\n", prog,
				argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(err, "%s: unknown option '%s' (see --help)\n", prog,
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(err, "%s: unexpected argument '%s' (see --help)\n", prog, argv[optind]);
		return -EINVAL;
	}
	if (opts->all && opts->pid) {
		fprintf(err, "%s: --all and --pid exclude each other (see --help)\n", prog);
		return -EINVAL;
	}
	if (!opts->pid && !opts->all) {
		fprintf(err, "%s: --pid PID or --all is required (see --help)\n", prog);
		return -EINVAL;
	}
	if (opts->children && !opts->pid) {
		fprintf(err, "%s: --children needs --pid PID (see --help)\n", prog);
		return -EINVAL;
	}
	if (push_options(opts, prog, err))
		return -EINVAL;
	if (opts->interval && opts->output) {
		fprintf(err, "%s: --output names one file: with --interval use --output-dir\n",
			prog);
		return -EINVAL;
	}
	if (opts->interval && opts->timeline) {
		fprintf(err,
			"%s: --timeline names one file: with --interval use --timelines (one "
			"per profile)\n",
			prog);
		return -EINVAL;
	}
	if (!opts->interval && opts->timelines) {
		fprintf(err, "%s: --timelines is for --interval files: use --timeline FILE\n",
			prog);
		return -EINVAL;
	}
	if (format_given && !opts->timeline && !opts->timelines) {
		fprintf(err, "%s: --timeline-format is for --timeline FILE or --timelines\n", prog);
		return -EINVAL;
	}
	if (!format_given && opts->timeline)
		opts->timeline_speedscope = speedscope_name(opts->timeline);
	if (!opts->ring_kib)
		opts->ring_kib = ring_kib_for(opts->frequency, opts->off_cpu);
	if (!opts->max_stacks)
		opts->max_stacks = max_stacks_for(opts);
	if (!opts->context && (opts->timeline || opts->timelines)) {
		fprintf(err,
			"%s: a timeline shows spans: it needs the trace context (drop "
			"--no-context)\n",
			prog);
		return -EINVAL;
	}
	if (!opts->interval && opts->output_dir) {
		fprintf(err, "%s: --output-dir is for --interval files: use --output FILE\n", prog);
		return -EINVAL;
	}
	return 0;
}
