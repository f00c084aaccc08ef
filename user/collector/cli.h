/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cli - the collector's command line.
 *
 * Threads: main thread, at start.
 */
#ifndef CTXPROF_CLI_H
#define CTXPROF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "unwind.h"
#include <sys/types.h>

#define CTXPROF_VERSION "0.1.0"

#define CLI_DEFAULT_FREQUENCY 99
#define CLI_MAX_FREQUENCY     100000 /* cpu-clock's hrtimer floor is 10 us */
/* --ring-size by default (cli.c's ring_kib_for()): 2 s of records at -F, within these */
#define CLI_RING_AUTO_MIN_KIB	  256
#define CLI_RING_AUTO_MAX_KIB	  4096
#define CLI_DEFAULT_MAX_STACKS	  (1u << 18) /* --max-stacks at most by default */
#define CLI_MIN_MAX_STACKS	  (1u << 12) /* ... at least */
#define CLI_DEFAULT_MAX_FILES	  100
#define CLI_DEFAULT_DRAIN_THREADS 1
#define CLI_MAX_DRAIN_THREADS	  64
#define CLI_DEFAULT_UNWIND_MIB	  32   /* BPF unwind tables, --unwind-memory */
#define CLI_DEFAULT_SYMBOL_MIB	  128  /* parsed ELF symbols, --symbol-memory */
#define CLI_DEFAULT_TIMELINE_MIB  64   /* per-thread trace parts, --timeline-memory */
#define CLI_OFF_CPU_THRESHOLD_US  1000 /* --off-cpu-threshold */
#define CLI_OFF_CPU_BUDGET	  2000 /* off-CPU captures a second per CPU */
#define CLI_PUSH_INTERVAL	  15   /* --push's --interval when none is given */
#define CLI_PUSH_FLUSH_S	  10   /* --push-flush */

struct collector_opts {
	pid_t pid;		    /* --pid */
	bool all;		    /* --all: every process on the host */
	bool children;		    /* --children: --pid and its descendants */
	unsigned int frequency;	    /* --frequency, Hz per CPU */
	double duration;	    /* --duration, seconds; 0: until signal or target exit */
	const char *output;	    /* --output; NULL: ctxprof-<pid>.pb.gz */
	double interval;	    /* --interval, seconds; 0: one profile at the end */
	const char *output_dir;	    /* --output-dir, with --interval; NULL: "." */
	unsigned int max_files;	    /* --max-files, with --interval; 0: keep all */
	unsigned int drain_threads; /* --drain-threads */
	bool kernel;		    /* false with --no-kernel */
	bool context;		    /* false with --no-context */
	bool python;		    /* --python on|off: CPython frames */
	bool off_cpu;		    /* --off-cpu */
	bool bpf_stats;		    /* --bpf-stats: BPF_ENABLE_STATS while running */
	unsigned long off_cpu_threshold_us; /* --off-cpu-threshold */
	enum unwind_mode unwind;	    /* --unwind auto|dwarf|fp */
	size_t unwind_mib;		    /* --unwind-memory, MiB of BPF unwind tables */
	size_t symbol_mib;		    /* --symbol-memory, MiB of parsed ELF symbols */
	const char *timeline;		    /* --timeline FILE; NULL: none */
	bool timelines;			    /* --timelines: one per --interval file */
	bool timeline_speedscope;	    /* --timeline-format speedscope */
	size_t timeline_mib;		    /* --timeline-memory, MiB of trace parts */
	size_t ring_kib;		    /* --ring-size, or cli__ring_kib()'s */
	size_t max_stacks;		    /* --max-stacks, or max_stacks_for()'s */
	const char *btf_path;		    /* --btf */
	int verbose;			    /* -v, repeatable */
	int status;		  /* --status / --no-status; -1: when stderr is a terminal */
	const char *metrics_addr; /* --metrics-addr HOST:PORT; NULL: no /metrics */
	const char *health_addr;  /* --health-addr HOST:PORT; NULL: /healthz on the above only */
	/* --push URL and its options; NULL: profiles are not pushed */
	const char *push_url;
	const char *push_config; /* --push-config DIR: the same from a directory's files */
	const char *push_token_file;
	const char *push_user;
	const char *push_password_file;
	const char *push_tenant;
	const char *push_ca_file;
	size_t push_spool_mib;	     /* --push-spool */
	unsigned int push_timeout_s; /* --push-timeout */
	unsigned int push_flush_s;   /* --push-flush */
};

/* cli__parse() results besides 0 */
#define CLI_EXIT_OK 1 /* --help or --version printed: exit 0 */

/**
 * cli__parse() - parse @argv into @opts (defaults filled first).
 * @out: where --help and --version print
 * @err: where a bad argument's one-line error goes
 * Return: 0 to run, CLI_EXIT_OK after --help/--version, -EINVAL on a bad
 * argument (the error is printed).
 */
int cli__parse(int argc, char **argv, struct collector_opts *opts, FILE *out, FILE *err);

#endif /* CTXPROF_CLI_H */
