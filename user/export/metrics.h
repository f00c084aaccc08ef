/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * metrics - the collector's health and counters over HTTP (--metrics-addr):
 * Prometheus text at /metrics, a health verdict at /healthz.
 *
 * The main thread fills a struct metrics_snapshot from the modules' stats
 * (about once a second) and publishes it; the HTTP server runs on a thread
 * of its own (libmicrohttpd's) and renders the latest published snapshot.
 * Publishing is a copy under a lock the HTTP thread holds only for a copy
 * too, and is skipped when that lock is busy: it never blocks the collector.
 * /healthz asks a callback (which must not block either) for its verdict.
 */
#ifndef CTXPROF_METRICS_H
#define CTXPROF_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define METRICS_MAX_LABELLED 32	  /* entries of one labelled counter family */
#define METRICS_MAX_RINGS    1024 /* CPUs whose ring fill is reported */

/* one value of a labelled family: @label is a static string (a stat's name) */
struct metrics_counter {
	const char *label;
	uint64_t value;
};

struct metrics_family {
	struct metrics_counter v[METRICS_MAX_LABELLED];
	unsigned int n;
};

struct metrics_snapshot {
	const char *version; /* static strings */
	const char *node;
	const char *mode; /* "all", "pid", "children" */

	/* samples: taken == in_profile + sum(dropped) once exported */
	uint64_t samples_taken;
	uint64_t samples_in_profile;
	struct metrics_family dropped;	 /* by reason */
	struct metrics_family stack_end; /* user stacks by how they end */
	struct metrics_family frames;	 /* user frames by how they were found */
	uint64_t user_stack_errors, kernel_stack_errors;
	struct metrics_family context; /* libctxprof context reads by result */

	/* unwinding tables (all 0 with --unwind fp) */
	uint64_t tables_built, tables_shared, tables_evicted, tables_cached, table_rows;
	struct metrics_family table_errors; /* files without a table, by reason */
	double table_build_seconds;
	uint64_t table_bytes, table_bytes_limit;

	/* symbolization */
	struct metrics_family symbol_errors; /* unnamed, unmapped, elf_unreadable, ... */
	uint64_t elf_files_read;

	/* the sampling rate and CPUs (sampling/sampler.h: struct sampler_health) */
	unsigned int sampling_hz;     /* requested per CPU */
	double sampling_effective_hz; /* per sampled CPU, last seconds; negative: not yet */
	long max_sample_rate;	      /* kernel.perf_event_max_sample_rate; negative: unreadable */
	bool sampling_throttled;      /* effective below 90 % of requested */
	uint64_t sampling_throttled_seconds;
	int cpus_online, cpus_sampled;
	uint64_t cpus_offlined, cpus_onlined, cpu_event_open_failures;

	/* rings: fill of each CPU's ring, 0-1; negative: unknown */
	double ring_fill[METRICS_MAX_RINGS];
	unsigned int nr_rings;

	/* processes (the registry) */
	uint64_t processes, threads;
	uint64_t lifecycle_events, lifecycle_lost, mapping_snapshots;

	/* the collector itself */
	double cpu_seconds;
	uint64_t rss_bytes;
	double start_time; /* Unix time */

	/* export */
	uint64_t files_written;
	/* writes that failed (disk full...): attempts, documents written later
	 * from memory, given up, kept now (export/outfiles.h's outqueue) */
	uint64_t file_writes_failed, files_written_late, files_dropped;
	uint64_t files_pending, files_pending_bytes;
	uint64_t exports_ok, exports_failed;
	double last_export_time;     /* Unix time of the last successful export; 0: none */
	double last_export_duration; /* seconds it took */
	bool last_export_failed;     /* the latest export attempt failed */
};

/**
 * metrics__render() - @m as Prometheus text exposition format 0.0.4.
 * @out: receives a malloc()ed, NUL-terminated buffer; @len its length
 * Return: 0 or -ENOMEM.
 */
int metrics__render(const struct metrics_snapshot *m, char **out, size_t *len);

/**
 * metrics_parse_addr() - "HOST:PORT", "[IPV6]:PORT" or ":PORT" (every IPv4
 * address; "[::]:PORT" serves IPv6 and IPv4) into a socket address; HOST may
 * be a name.
 * Return: 0 or -EINVAL.
 */
int metrics_parse_addr(const char *s, struct sockaddr_storage *out, socklen_t *len);

/*
 * The /healthz verdict: true when healthy; false with a one-line reason in
 * @why.  Runs on the HTTP thread; must not block.
 */
typedef bool (*metrics_health_fn)(void *ctx, char *why, size_t why_len);

struct metrics_server;

/**
 * metrics_server__start() - serve /metrics and /healthz on @addr from a
 * thread of its own.  Until the first metrics_server__publish(), /metrics
 * serves an empty snapshot.
 * Return: the server, or NULL with errno set and a reason in @err.
 * Pair with metrics_server__free().
 */
struct metrics_server *metrics_server__start(const char *addr, metrics_health_fn health,
					     void *health_ctx, char *err, size_t err_len);

/**
 * metrics_server__publish() - make @m what /metrics serves.  Never blocks:
 * skipped (returns false) while the HTTP thread copies the previous one.
 */
bool metrics_server__publish(struct metrics_server *s, const struct metrics_snapshot *m);

/** metrics_server__free() - stop serving and free; accepts NULL. */
void metrics_server__free(struct metrics_server *s);

#endif /* CTXPROF_METRICS_H */
