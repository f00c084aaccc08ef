/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * metrics - the collector's counters and health over HTTP: Prometheus text
 * at /metrics, a health verdict at /healthz.
 *
 * This module knows metric families and samples, not what they count: the
 * collector describes every counter once (collector/counters.h) and fills a
 * struct metrics_snapshot from those descriptions about once a second, then
 * publishes it.  Publishing is a copy under a lock the HTTP threads hold only
 * for a copy too, and is skipped when that lock is busy: it never blocks the
 * collector.  /metrics renders a published snapshot once and serves the same
 * bytes to every request until the next one.  /healthz asks a callback (which
 * must not block) for its verdict.
 *
 * Listeners: one for /metrics (and /healthz), optionally a second one for
 * /healthz alone, each a libmicrohttpd daemon with its own thread (epoll: no
 * FD_SETSIZE limit on the collector's descriptors), so a flood of scrapes
 * cannot delay the kubelet's probes.  A connection is accepted only once
 * its first bytes arrive (TCP_DEFER_ACCEPT: one that says nothing waits in
 * the kernel).  Each listener holds at most METRICS_CONNECTIONS; when one
 * more arrives, one other is shut down (and counted): first one that sent
 * a request line and no end to it or waits idle after an answer, then one
 * silent for a second, then the others; within those, from the address
 * holding the most connections, the oldest; never one whose request waits
 * unread.  So a newcomer always gets in, a probe is answered however many
 * slow connections its own address holds, and whoever holds many pays with
 * its own.  There is no per-address limit: the kubelet's probes come from
 * the node's address, which every host process shares.  Idle connections
 * close after METRICS_IDLE_S; libmicrohttpd's own messages are printed at
 * most once every 10 s (a flood would fill the log).
 *
 * With a scrape queue (export/scrape_queue.h), the metrics listener also
 * serves /debug/pprof/profile: a connection waiting for its profile is
 * suspended (it takes no thread) and never evicted; the queue bounds how
 * many wait.
 */
#ifndef CTXPROF_METRICS_H
#define CTXPROF_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define METRICS_MAX_SAMPLES 512	 /* samples of a snapshot, all families */
#define METRICS_MAX_RINGS   1024 /* CPUs whose ring fill is reported */
#define METRICS_CONNECTIONS 32	 /* connections a listener holds before it evicts one */
#define METRICS_IDLE_S	    10	 /* seconds a connection may stay silent */

enum metrics_type {
	METRICS_COUNTER,
	METRICS_GAUGE,
};

/* one Prometheus metric family; static, compared by address */
struct metrics_family {
	const char *name; /* "ctxprof_samples_dropped_total" */
	enum metrics_type type;
	const char *help;  /* one line */
	const char *label; /* the name of its one label; NULL: unlabelled */
};

/* one sample of a family: @label is the label's value (a static string), NULL when unlabelled */
struct metrics_sample {
	const struct metrics_family *family;
	const char *label;
	double value;
};

struct metrics_snapshot {
	const char *version; /* static strings: ctxprof_info's labels */
	const char *node;
	const char *mode; /* "all", "pid", "children" */
	/* every described counter, in any order: rendered grouped by family */
	struct metrics_sample s[METRICS_MAX_SAMPLES];
	unsigned int n;
	unsigned int lost; /* samples that did not fit */
	/* rings: fill of each CPU's ring, 0-1; negative: unknown */
	double ring_fill[METRICS_MAX_RINGS];
	unsigned int nr_rings;
};

/** metrics_snapshot__add() - append a sample of @f (counted in @m->lost when full). */
void metrics_snapshot__add(struct metrics_snapshot *m, const struct metrics_family *f,
			   const char *label, double value);

/**
 * metrics__render() - @m as Prometheus text exposition format 0.0.4: every
 * family's HELP and TYPE once, then its samples.
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

enum metrics_health {
	METRICS_HEALTHY,   /* 200 "ok" */
	METRICS_DEGRADED,  /* 200 "degraded: why": working, but the profile is not whole */
	METRICS_UNHEALTHY, /* 503 "why": a restart may help */
};

/*
 * The /healthz verdict, with a one-line reason in @why unless healthy.
 * Runs on the listeners' threads, possibly two at once; must not block.
 */
typedef enum metrics_health (*metrics_health_fn)(void *ctx, char *why, size_t why_len);

struct scrape_queue;

struct metrics_server_opts {
	const char *metrics_addr; /* /metrics and /healthz; NULL: no such listener */
	/* where /debug/pprof/profile requests go (on the metrics listener);
	 * NULL: not served */
	struct scrape_queue *scrapes;
	const char *health_addr;  /* /healthz only; NULL: no such listener */
	metrics_health_fn health; /* NULL: always healthy */
	void *health_ctx;
};

/* what one listener did, since it started */
struct metrics_listener_stats {
	uint64_t connections; /* accepted */
	uint64_t requests;    /* answered */
	uint64_t evicted;     /* shut down to make room for a newcomer */
};

struct metrics_server_stats {
	struct metrics_listener_stats metrics, health;
	uint64_t log_suppressed; /* libmicrohttpd messages not printed (rate limit) */
};

struct metrics_server;

/**
 * metrics_server__start() - serve @o's listeners, each from a thread of its
 * own.  Until the first metrics_server__publish(), /metrics serves an empty
 * snapshot.
 * Return: the server, or NULL with errno set and a reason in @err.
 * Pair with metrics_server__free().
 */
struct metrics_server *metrics_server__start(const struct metrics_server_opts *o, char *err,
					     size_t err_len);

/**
 * metrics_server__publish() - make @m what /metrics serves.  Never blocks:
 * skipped (returns false) while a listener copies the previous one.
 */
bool metrics_server__publish(struct metrics_server *s, const struct metrics_snapshot *m);

/** metrics_server__stats() - the listeners' counts (relaxed reads); zeros for NULL @s. */
void metrics_server__stats(const struct metrics_server *s, struct metrics_server_stats *out);

/** metrics_server__free() - stop serving and free; accepts NULL. */
void metrics_server__free(struct metrics_server *s);

#endif /* CTXPROF_METRICS_H */
