// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>
#include "export/metrics.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* a label value: backslash, double quote and newline escaped */
static void put_label_value(FILE *f, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*v, f);
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metric_u64(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	head(f, name, type, help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void metric_f(FILE *f, const char *name, const char *type, const char *help, double v)
{
	head(f, name, type, help);
	fprintf(f, "%s %.17g\n", name, v);
}

static void family(FILE *f, const char *name, const char *help, const char *label,
		   const struct metrics_family *fam)
{
	unsigned int i;

	head(f, name, "counter", help);
	for (i = 0; i < fam->n && i < METRICS_MAX_LABELLED; i++) {
		fprintf(f, "%s{%s=\"", name, label);
		put_label_value(f, fam->v[i].label);
		fprintf(f, "\"} %llu\n", (unsigned long long)fam->v[i].value);
	}
}

int metrics__render(const struct metrics_snapshot *m, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	unsigned int i;

	if (!f)
		return -ENOMEM;
	head(f, "ctxprof_info", "gauge", "Collector version, node and mode (always 1).");
	fputs("ctxprof_info{version=\"", f);
	put_label_value(f, m->version);
	fputs("\",node=\"", f);
	put_label_value(f, m->node);
	fputs("\",mode=\"", f);
	put_label_value(f, m->mode);
	fputs("\"} 1\n", f);

	metric_u64(f, "ctxprof_samples_taken_total", "counter",
		   "Samples the BPF program took of profiled threads.", m->samples_taken);
	metric_u64(f, "ctxprof_samples_in_profile_total", "counter",
		   "Samples written into profiles.", m->samples_in_profile);
	family(f, "ctxprof_samples_dropped_total",
	       "Samples lost, by reason (taken = in profile + dropped once exported).", "reason",
	       &m->dropped);
	head(f, "ctxprof_stack_errors_total", "counter",
	     "Samples whose user or kernel stack could not be read (samples kept).");
	fprintf(f, "ctxprof_stack_errors_total{stack=\"user\"} %llu\n",
		(unsigned long long)m->user_stack_errors);
	fprintf(f, "ctxprof_stack_errors_total{stack=\"kernel\"} %llu\n",
		(unsigned long long)m->kernel_stack_errors);
	family(f, "ctxprof_user_stacks_total", "User stacks by how they end.", "end",
	       &m->stack_end);
	family(f, "ctxprof_user_frames_total", "User frames by how the unwinder found them.",
	       "method", &m->frames);
	family(f, "ctxprof_trace_context_reads_total", "libctxprof trace context reads by result.",
	       "result", &m->context);

	metric_u64(f, "ctxprof_unwind_tables_built_total", "counter",
		   "Unwind tables built from files' CFI.", m->tables_built);
	metric_f(f, "ctxprof_unwind_table_build_seconds_total", "counter",
		 "Time spent building unwind tables.", m->table_build_seconds);
	metric_u64(f, "ctxprof_unwind_tables_shared_total", "counter",
		   "Unwind tables found already built (same file in another process).",
		   m->tables_shared);
	metric_u64(f, "ctxprof_unwind_tables_evicted_total", "counter",
		   "Unwind tables evicted to stay within --unwind-memory.", m->tables_evicted);
	family(f, "ctxprof_unwind_table_errors_total", "Files left without an unwind table.",
	       "reason", &m->table_errors);
	metric_u64(f, "ctxprof_unwind_tables", "gauge", "Unwind tables in BPF maps.",
		   m->tables_cached);
	metric_u64(f, "ctxprof_unwind_rows", "gauge", "Unwind rows in BPF maps.", m->table_rows);
	metric_u64(f, "ctxprof_unwind_memory_used_bytes", "gauge",
		   "BPF memory the unwind rows take.", m->table_bytes);
	metric_u64(f, "ctxprof_unwind_memory_limit_bytes", "gauge",
		   "BPF memory for unwind tables (--unwind-memory).", m->table_bytes_limit);

	family(f, "ctxprof_symbolization_errors_total",
	       "Addresses left unnamed or unmapped, and ELF files that could not be read.", "kind",
	       &m->symbol_errors);
	metric_u64(f, "ctxprof_elf_files_read_total", "counter", "ELF files read for symbols.",
		   m->elf_files_read);

	metric_u64(f, "ctxprof_sampling_frequency_hz", "gauge",
		   "Samples per second per CPU requested (-F).", m->sampling_hz);
	if (m->sampling_effective_hz >= 0)
		metric_f(f, "ctxprof_sampling_effective_hz", "gauge",
			 "Samples per second per sampled CPU over the last seconds (every tick, "
			 "profiled or not).",
			 m->sampling_effective_hz);
	if (m->max_sample_rate >= 0)
		metric_u64(f, "ctxprof_perf_event_max_sample_rate", "gauge",
			   "kernel.perf_event_max_sample_rate: the kernel throttles above it.",
			   m->max_sample_rate);
	metric_u64(f, "ctxprof_sampling_throttled", "gauge",
		   "1 while the effective rate is below 90 % of the requested one.",
		   m->sampling_throttled);
	metric_u64(f, "ctxprof_sampling_throttled_seconds_total", "counter",
		   "Seconds the effective rate was below 90 % of the requested one.",
		   m->sampling_throttled_seconds);
	metric_u64(f, "ctxprof_cpus_online", "gauge", "Online CPUs.", m->cpus_online);
	metric_u64(f, "ctxprof_cpus_sampled", "gauge",
		   "CPUs with a perf event (fewer than online: some CPU is not sampled).",
		   m->cpus_sampled);
	head(f, "ctxprof_cpu_hotplug_total", "counter",
	     "CPUs seen to go offline and to come online.");
	fprintf(f, "ctxprof_cpu_hotplug_total{event=\"offline\"} %llu\n",
		(unsigned long long)m->cpus_offlined);
	fprintf(f, "ctxprof_cpu_hotplug_total{event=\"online\"} %llu\n",
		(unsigned long long)m->cpus_onlined);
	metric_u64(f, "ctxprof_cpu_event_open_failures_total", "counter",
		   "Failed attempts to open the perf event of an online CPU.",
		   m->cpu_event_open_failures);

	head(f, "ctxprof_ring_fill_ratio", "gauge",
	     "How full each CPU's ring buffer is, 0 to 1 (ring_full drops follow 1).");
	for (i = 0; i < m->nr_rings && i < METRICS_MAX_RINGS; i++)
		if (m->ring_fill[i] >= 0)
			fprintf(f, "ctxprof_ring_fill_ratio{cpu=\"%u\"} %.6f\n", i,
				m->ring_fill[i]);

	metric_u64(f, "ctxprof_processes", "gauge", "Live processes the collector tracks.",
		   m->processes);
	metric_u64(f, "ctxprof_threads", "gauge", "Live threads the collector tracks.", m->threads);
	metric_u64(f, "ctxprof_lifecycle_events_total", "counter",
		   "Fork, exec, exit and rename events applied.", m->lifecycle_events);
	metric_u64(f, "ctxprof_lifecycle_events_lost_total", "counter",
		   "Lifecycle events lost in BPF (ring full).", m->lifecycle_lost);
	metric_u64(f, "ctxprof_mapping_snapshots_total", "counter",
		   "Mapping snapshots taken at exec and fork.", m->mapping_snapshots);

	metric_f(f, "process_cpu_seconds_total", "counter",
		 "User and system CPU time of the collector.", m->cpu_seconds);
	metric_u64(f, "process_resident_memory_bytes", "gauge", "Resident memory of the collector.",
		   m->rss_bytes);
	metric_f(f, "process_start_time_seconds", "gauge",
		 "Start time of the collector since the Unix epoch.", m->start_time);

	metric_u64(f, "ctxprof_files_written_total", "counter", "Profile files written.",
		   m->files_written);
	metric_u64(f, "ctxprof_file_writes_failed_total", "counter",
		   "File writes that failed (the file is kept in memory, or dropped).",
		   m->file_writes_failed);
	metric_u64(f, "ctxprof_files_written_late_total", "counter",
		   "Files written from memory after a failed write.", m->files_written_late);
	metric_u64(f, "ctxprof_files_dropped_total", "counter",
		   "Files never written: no room left in memory for them.", m->files_dropped);
	metric_u64(f, "ctxprof_files_pending", "gauge",
		   "Files kept in memory, to be written again.", m->files_pending);
	metric_u64(f, "ctxprof_files_pending_bytes", "gauge", "Their bytes.",
		   m->files_pending_bytes);
	head(f, "ctxprof_exports_total", "counter", "Profile exports by result.");
	fprintf(f, "ctxprof_exports_total{result=\"ok\"} %llu\n",
		(unsigned long long)m->exports_ok);
	fprintf(f, "ctxprof_exports_total{result=\"error\"} %llu\n",
		(unsigned long long)m->exports_failed);
	metric_f(f, "ctxprof_last_export_timestamp_seconds", "gauge",
		 "When the last successful export ended, since the Unix epoch (0: none yet).",
		 m->last_export_time);
	metric_f(f, "ctxprof_last_export_duration_seconds", "gauge",
		 "How long the last successful export took.", m->last_export_duration);
	metric_u64(f, "ctxprof_last_export_success", "gauge",
		   "1 unless the latest export attempt failed.", !m->last_export_failed);
	if (fclose(f))
		return -ENOMEM;
	return 0;
}

int metrics_parse_addr(const char *s, struct sockaddr_storage *out, socklen_t *len)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	char host[256];
	const char *port, *colon;
	unsigned long p;
	char *end;
	size_t n;

	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		colon = strchr(s, ']');
		if (!colon || colon[1] != ':')
			return -EINVAL;
		n = colon - s - 1;
		s++;
		port = colon + 2;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', colon - s))
			return -EINVAL;
		n = colon - s;
		port = colon + 1;
	}
	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p == 0 || p > 65535 || *port == '+' || *port == '-' ||
	    n >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = '\0';
	/* ":PORT": every IPv4 address; "[::]:PORT" every address, IPv4 too */
	if (!n) {
		hints.ai_flags |= AI_PASSIVE;
		hints.ai_family = AF_INET;
	}
	if (getaddrinfo(n ? host : NULL, port, &hints, &res) || !res)
		return -EINVAL;
	if (res->ai_addrlen > sizeof(*out)) {
		freeaddrinfo(res);
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

struct metrics_server {
	struct MHD_Daemon *daemon;
	metrics_health_fn health;
	void *health_ctx;
	pthread_mutex_t lock; /* @latest */
	struct metrics_snapshot latest;
};

bool metrics_server__publish(struct metrics_server *s, const struct metrics_snapshot *m)
{
	if (pthread_mutex_trylock(&s->lock))
		return false;
	s->latest = *m;
	pthread_mutex_unlock(&s->lock);
	return true;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, const char *type)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	char *body = strdup(text);

	return body ? reply(conn, status, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
			     const char *method, const char *version, const char *upload_data,
			     size_t *upload_data_size, void **req_cls)
{
	struct metrics_server *s = cls;
	struct metrics_snapshot *copy;
	char why[256], line[300];
	char *body = NULL;
	size_t len = 0;
	int err;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
	if (!strcmp(url, "/healthz")) {
		why[0] = '\0';
		if (!s->health || s->health(s->health_ctx, why, sizeof(why)))
			return reply_text(conn, MHD_HTTP_OK, "ok\n");
		snprintf(line, sizeof(line), "%s\n", why[0] ? why : "unhealthy");
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, line);
	}
	if (strcmp(url, "/metrics"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND,
				  "not found: try /metrics or /healthz\n");
	/* a copy, so the lock is held for a memcpy only */
	copy = malloc(sizeof(*copy));
	if (!copy)
		return MHD_NO;
	pthread_mutex_lock(&s->lock);
	*copy = s->latest;
	pthread_mutex_unlock(&s->lock);
	err = metrics__render(copy, &body, &len);
	free(copy);
	if (err) {
		free(body);
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return reply(conn, MHD_HTTP_OK, body, len, METRICS_CONTENT_TYPE);
}

/* libmicrohttpd's own messages, said as ours */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	fputs("ctxprof: metrics: ", stderr);
	vfprintf(stderr, fmt, ap);
}

struct metrics_server *metrics_server__start(const char *addr, metrics_health_fn health,
					     void *health_ctx, char *err, size_t err_len)
{
	struct sockaddr_storage sa;
	struct metrics_server *s;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	socklen_t sa_len;
	uint16_t port;
	int e;

	if (metrics_parse_addr(addr, &sa, &sa_len)) {
		snprintf(err, err_len, "--metrics-addr %s: not HOST:PORT", addr);
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->health = health;
	s->health_ctx = health_ctx;
	pthread_mutex_init(&s->lock, NULL);
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_DUAL_STACK;
	/* the port is in @sa; given here too, it names the port in MHD's messages */
	port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
					      : ((struct sockaddr_in *)&sa)->sin_port);
	errno = 0;
	s->daemon =
		MHD_start_daemon(flags, port, NULL, NULL, serve, s, MHD_OPTION_SOCK_ADDR, &sa,
				 MHD_OPTION_CONNECTION_LIMIT, 32u, MHD_OPTION_CONNECTION_TIMEOUT,
				 10u, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (!s->daemon) {
		e = errno ? errno : EADDRINUSE;
		snprintf(err, err_len, "cannot serve metrics on %s: %s", addr, strerror(e));
		pthread_mutex_destroy(&s->lock);
		free(s);
		errno = e;
		return NULL;
	}
	return s;
}

void metrics_server__free(struct metrics_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->daemon);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
