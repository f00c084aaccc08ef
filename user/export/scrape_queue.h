/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * scrape_queue - GET /debug/pprof/profile?seconds=N between the HTTP
 * listener that receives it and the main thread that profiles it.
 *
 * Go's net/http/pprof convention, what Parca, Alloy's pyroscope.scrape and
 * `pprof http://HOST:PORT/debug/pprof/profile` fetch: the answer is the
 * gzipped pprof of the next N seconds (default 30, 1 to
 * SCRAPE_MAX_SECONDS), served as application/octet-stream.  Query
 * parameters besides `seconds`: `pid=PID` (one process), and any other
 * KEY=VALUE (`service.name=checkout`, `pod=web-1`, `comm=nginx`) selects the
 * samples carrying that label with that value; `debug` and `gc`, which Go's
 * handler also takes, are ignored.  A bad parameter is a 400 with one line.
 *
 * A request is parsed on the listener's thread, its connection suspended
 * (libmicrohttpd: the listener goes on serving others meanwhile) and the
 * request queued; the main thread takes it, profiles, then answers, which
 * resumes the connection.  At most @max_pending requests are queued or being
 * profiled: one more gets 503 with Retry-After at once.  Nothing here blocks
 * the listener: a mutex held for list operations only, and an eventfd the
 * main thread polls to hear of a new request.
 *
 * Lifetime of a request: the listener's reference until libmicrohttpd says
 * the connection's request ended (scrape_queue__completed()), the main
 * thread's from scrape_queue__take() until scrape_queue__answer().
 */
#ifndef CTXPROF_SCRAPE_QUEUE_H
#define CTXPROF_SCRAPE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export/export.h"

#define SCRAPE_DEFAULT_SECONDS 30   /* Go's, when seconds is not given */
#define SCRAPE_MAX_SECONDS     300  /* longer: 400 */
#define SCRAPE_MAX_MATCH       8    /* label filters a request may give */
#define SCRAPE_MAX_TEXT	       1024 /* their keys and values, in all */
#define SCRAPE_RETRY_AFTER_S   5    /* what a 503 asks the scraper to wait */
#define SCRAPE_QUEUE_MAX       64   /* scrape_queue__new()'s @max_pending at most */

/* what a request asks, parsed from its query (scrape_request__arg()) */
struct scrape_request_args {
	unsigned int seconds;
	uint32_t pid; /* 0: every process */
	struct export_match match[SCRAPE_MAX_MATCH];
	size_t nr_match;
	char text[SCRAPE_MAX_TEXT]; /* the match's keys and values */
	size_t text_used;
	bool seconds_given;
};

struct scrape_request {
	struct scrape_request_args args; /* read-only once queued */
	uint64_t received_ns;		 /* CLOCK_MONOTONIC */
};

struct scrape_queue_stats {
	uint64_t requests; /* /debug/pprof/profile requests received */
	uint64_t bad;	   /* answered 400 */
	uint64_t busy;	   /* answered 503: SCRAPE_MAX_PENDING already */
	uint64_t answered; /* answered by the main thread, any status */
	uint64_t pending;  /* queued or being profiled now */
};

struct scrape_queue;
struct MHD_Connection;

/**
 * scrape_request_args__init() - the defaults (seconds 30, every process).
 */
void scrape_request_args__init(struct scrape_request_args *a);

/**
 * scrape_request_args__add() - one query parameter, URL-decoded.
 * @value: NULL for a key without '='
 * Return: 0, or -EINVAL with a one-line reason in @err (the answer's body).
 */
int scrape_request_args__add(struct scrape_request_args *a, const char *key, const char *value,
			     char *err, size_t err_len);

/**
 * scrape_queue__new() - an empty queue admitting @max_pending requests at once.
 * Return: the queue, or NULL with errno set.  Pair with scrape_queue__free().
 */
struct scrape_queue *scrape_queue__new(unsigned int max_pending);

/**
 * scrape_queue__free() - accepts NULL.  Call once the HTTP listener that
 * serves from it is stopped (metrics_server__free()).
 */
void scrape_queue__free(struct scrape_queue *q);

/**
 * scrape_queue__fd() - an eventfd readable while a request waits to be
 * taken, for the main thread's poll(); scrape_queue__take() empties it.
 */
int scrape_queue__fd(const struct scrape_queue *q);

/**
 * scrape_queue__serve() - the listener's access handler for
 * /debug/pprof/profile (libmicrohttpd calls it with @req_cls, which this
 * owns).  Listener's thread.  @suspended is set when the connection now
 * waits for the main thread (the listener must not evict it).
 * Return: MHD_YES or MHD_NO, as an int.
 */
int scrape_queue__serve(struct scrape_queue *q, struct MHD_Connection *mc, const char *method,
			void **req_cls, bool *suspended);

/**
 * scrape_queue__completed() - libmicrohttpd's request-completed callback,
 * for a connection scrape_queue__serve() answered.  Listener's thread.
 */
void scrape_queue__completed(struct scrape_queue *q, void **req_cls);

/**
 * scrape_queue__take() - the oldest request not taken yet, NULL when none.
 * Main thread; the request is then its own until scrape_queue__answer().
 */
struct scrape_request *scrape_queue__take(struct scrape_queue *q);

/**
 * scrape_queue__answer() - answer @r (taken) with @status and @body
 * (malloc()ed, owned by the queue from now): a gzipped pprof of @len bytes
 * when @pprof, else a NUL-terminated line of text (NULL: "error").  The
 * connection is resumed; @r must not be used after.  Main thread.
 */
void scrape_queue__answer(struct scrape_queue *q, struct scrape_request *r, unsigned int status,
			  uint8_t *body, size_t len, bool pprof);

/**
 * scrape_queue__shutdown() - answer every request not taken with 503 and
 * refuse new ones, then wait up to @wait_ms for the answers given so far to
 * go out.  Main thread, after answering what it took, before the listener
 * stops (libmicrohttpd refuses to stop with a connection suspended).
 */
void scrape_queue__shutdown(struct scrape_queue *q, unsigned int wait_ms);

/** scrape_queue__stats() - counts so far; any thread. */
void scrape_queue__stats(struct scrape_queue *q, struct scrape_queue_stats *out);

#endif /* CTXPROF_SCRAPE_QUEUE_H */
