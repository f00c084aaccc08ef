// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * scrape_queue - /debug/pprof/profile requests between the listener and the
 * main thread.  See scrape_queue.h.
 *
 * libmicrohttpd's rules this follows (0.9.75): a connection is suspended from
 * its access handler only; it may be resumed from any thread; it never
 * completes while suspended (a client that goes away is noticed at resume);
 * the daemon aborts the process if stopped with one still suspended.  So a
 * request is resumed exactly once (@resumed, under the lock), always outside
 * the lock (libmicrohttpd may hold its own mutex while calling us back), and
 * shutdown resumes every one before the listener stops.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <microhttpd.h>
#include "export/scrape_queue.h"
#include "util/clock.h"

struct scrape_entry {
	struct scrape_request req; /* first: the main thread's view of it */
	struct MHD_Connection *mc;
	uint64_t seq; /* arrival order */
	int refs;     /* the listener's and the main thread's; under the lock */
	bool taken, resumed, done;
	unsigned int status;
	uint8_t *body;
	size_t len;
	bool pprof;
};

struct scrape_queue {
	pthread_mutex_t lock;	    /* the fields below, and every entry's flags */
	struct scrape_entry **open; /* admitted, not resumed yet; @max_pending slots */
	unsigned int max_pending;
	unsigned int live; /* entries allocated (until their request completed) */
	uint64_t next_seq;
	bool shutting;
	int efd;
	_Atomic uint64_t requests, bad, busy, answered;
};

void scrape_request_args__init(struct scrape_request_args *a)
{
	memset(a, 0, sizeof(*a));
	a->seconds = SCRAPE_DEFAULT_SECONDS;
}

/* a whole decimal number in [1, max] */
static bool parse_count(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!s || !*s || strlen(s) > 10)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (!v || v > max)
		return false;
	*out = v;
	return true;
}

/* @s into the request's text; NULL when it does not fit */
static const char *keep_text(struct scrape_request_args *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *at;

	if (n > sizeof(a->text) - a->text_used)
		return NULL;
	at = a->text + a->text_used;
	memcpy(at, s, n);
	a->text_used += n;
	return at;
}

int scrape_request_args__add(struct scrape_request_args *a, const char *key, const char *value,
			     char *err, size_t err_len)
{
	unsigned long v;
	const char *k, *val;
	size_t i;

	if (!strcmp(key, "seconds")) {
		if (!parse_count(value, SCRAPE_MAX_SECONDS, &v)) {
			snprintf(err, err_len, "seconds: a whole number of seconds, 1 to %d",
				 SCRAPE_MAX_SECONDS);
			return -EINVAL;
		}
		a->seconds = (unsigned int)v;
		a->seconds_given = true;
		return 0;
	}
	if (!strcmp(key, "pid")) {
		if (!parse_count(value, 4194304, &v)) {
			snprintf(err, err_len, "pid: a process id");
			return -EINVAL;
		}
		a->pid = (uint32_t)v;
		return 0;
	}
	/* Go's handler takes these too; they change nothing in a CPU profile */
	if (!strcmp(key, "debug") || !strcmp(key, "gc"))
		return 0;
	if (!*key || !value || !*value) {
		char shown[65];

		/* the scraper's text, echoed printable and short: the answer is one line */
		for (i = 0; key[i] && i + 1 < sizeof(shown); i++)
			shown[i] = (unsigned char)key[i] >= ' ' && key[i] != 0x7f ? key[i] : '?';
		shown[i] = '\0';
		snprintf(err, err_len, "%s: a label filter needs a value (KEY=VALUE)",
			 *key ? shown : "(empty key)");
		return -EINVAL;
	}
	if (a->nr_match >= SCRAPE_MAX_MATCH) {
		snprintf(err, err_len, "more than %d label filters", SCRAPE_MAX_MATCH);
		return -EINVAL;
	}
	k = keep_text(a, key);
	val = k ? keep_text(a, value) : NULL;
	if (!val) {
		snprintf(err, err_len, "label filters longer than %d bytes in all",
			 SCRAPE_MAX_TEXT);
		return -EINVAL;
	}
	a->match[a->nr_match++] = (struct export_match){k, val};
	return 0;
}

struct scrape_queue *scrape_queue__new(unsigned int max_pending)
{
	struct scrape_queue *q;

	if (!max_pending || max_pending > SCRAPE_QUEUE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->open = calloc(max_pending, sizeof(struct scrape_entry *));
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!q->open || q->efd < 0) {
		free(q->open);
		if (q->efd >= 0)
			close(q->efd);
		free(q);
		return NULL;
	}
	q->max_pending = max_pending;
	pthread_mutex_init(&q->lock, NULL);
	return q;
}

void scrape_queue__free(struct scrape_queue *q)
{
	if (!q)
		return;
	/* entries still open would belong to a listener still running: a bug */
	close(q->efd);
	pthread_mutex_destroy(&q->lock);
	free(q->open);
	free(q);
}

int scrape_queue__fd(const struct scrape_queue *q)
{
	return q->efd;
}

/* under the lock: one reference less, the entry freed with the last */
static void entry_unref(struct scrape_queue *q, struct scrape_entry *e)
{
	if (--e->refs)
		return;
	free(e->body);
	free(e);
	q->live--;
}

/* under the lock: @e answered; its connection to resume (outside the lock) */
static struct MHD_Connection *entry_resolve(struct scrape_queue *q, struct scrape_entry *e,
					    unsigned int status, uint8_t *body, size_t len,
					    bool pprof)
{
	unsigned int i;

	for (i = 0; i < q->max_pending; i++)
		if (q->open[i] == e)
			q->open[i] = NULL;
	e->status = status;
	e->body = body;
	e->len = len;
	e->pprof = pprof;
	e->done = e->resumed = true;
	return e->mc;
}

static enum MHD_Result reply_text(struct MHD_Connection *mc, unsigned int status, const char *text,
				  bool retry)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char line[320], secs[16];

	snprintf(line, sizeof(line), "%s\n", text);
	r = MHD_create_response_from_buffer(strlen(line), line, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (retry) {
		snprintf(secs, sizeof(secs), "%d", SCRAPE_RETRY_AFTER_S);
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, secs);
	}
	ret = MHD_queue_response(mc, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* the main thread's answer, on the listener's thread after the resume */
static enum MHD_Result reply_entry(struct scrape_queue *q, struct MHD_Connection *mc,
				   struct scrape_entry *e)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	uint8_t *body;
	size_t len;

	pthread_mutex_lock(&q->lock);
	body = e->body;
	len = e->len;
	e->body = NULL;
	pthread_mutex_unlock(&q->lock);
	if (!e->pprof) {
		ret = reply_text(mc, e->status, body ? (const char *)body : "error",
				 e->status == MHD_HTTP_SERVICE_UNAVAILABLE);
		free(body);
		return ret;
	}
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
				"attachment; filename=\"profile\"");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(mc, e->status, r);
	MHD_destroy_response(r);
	return ret;
}

struct parse_ctx {
	struct scrape_request_args *args;
	char err[256];
	int rc;
};

static enum MHD_Result parse_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct parse_ctx *p = cls;

	p->rc = scrape_request_args__add(p->args, key, value, p->err, sizeof(p->err));
	return p->rc ? MHD_NO : MHD_YES;
}

int scrape_queue__serve(struct scrape_queue *q, struct MHD_Connection *mc, const char *method,
			void **req_cls, bool *suspended)
{
	struct scrape_entry *e = *req_cls;
	struct parse_ctx p = {0};
	unsigned int i;

	*suspended = false;
	if (e)
		return e->done ? reply_entry(q, mc, e) : MHD_YES;
	atomic_fetch_add_explicit(&q->requests, 1, memory_order_relaxed);
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return reply_text(mc, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "GET only: a profile is taken for each request", false);
	e = calloc(1, sizeof(*e));
	if (!e)
		return reply_text(mc, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory", false);
	scrape_request_args__init(&e->req.args);
	p.args = &e->req.args;
	MHD_get_connection_values(mc, MHD_GET_ARGUMENT_KIND, parse_arg, &p);
	if (p.rc) {
		free(e);
		atomic_fetch_add_explicit(&q->bad, 1, memory_order_relaxed);
		return reply_text(mc, MHD_HTTP_BAD_REQUEST, p.err, false);
	}
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->max_pending && q->open[i]; i++)
		;
	if (q->shutting || i == q->max_pending) {
		pthread_mutex_unlock(&q->lock);
		free(e);
		if (!q->shutting)
			atomic_fetch_add_explicit(&q->busy, 1, memory_order_relaxed);
		return reply_text(mc, MHD_HTTP_SERVICE_UNAVAILABLE,
				  q->shutting ? "the collector is stopping"
					      : "as many profiles are being taken as the "
						"collector takes at once: retry later",
				  true);
	}
	e->mc = mc;
	e->refs = 2;
	e->seq = q->next_seq++;
	e->req.received_ns = mono_ns();
	q->open[i] = e;
	q->live++;
	/* suspended before the main thread can hear of it: its answer resumes */
	MHD_suspend_connection(mc);
	pthread_mutex_unlock(&q->lock);
	eventfd_write(q->efd, 1);
	*req_cls = e;
	*suspended = true;
	return MHD_YES;
}

void scrape_queue__completed(struct scrape_queue *q, void **req_cls)
{
	struct scrape_entry *e = *req_cls;
	unsigned int i;

	if (!e)
		return;
	pthread_mutex_lock(&q->lock);
	/* only a listener stopped with it suspended: still open */
	for (i = 0; i < q->max_pending; i++)
		if (q->open[i] == e)
			q->open[i] = NULL;
	entry_unref(q, e);
	pthread_mutex_unlock(&q->lock);
	*req_cls = NULL;
}

struct scrape_request *scrape_queue__take(struct scrape_queue *q)
{
	struct scrape_entry *e = NULL;
	eventfd_t ignored;
	unsigned int i;

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->max_pending; i++)
		if (q->open[i] && !q->open[i]->taken && (!e || q->open[i]->seq < e->seq))
			e = q->open[i];
	if (e)
		e->taken = true;
	else
		/* nothing left: the fd goes quiet until the next arrival */
		eventfd_read(q->efd, &ignored);
	pthread_mutex_unlock(&q->lock);
	return e ? &e->req : NULL;
}

void scrape_queue__answer(struct scrape_queue *q, struct scrape_request *r, unsigned int status,
			  uint8_t *body, size_t len, bool pprof)
{
	struct scrape_entry *e = (struct scrape_entry *)r;
	struct MHD_Connection *mc = NULL;

	pthread_mutex_lock(&q->lock);
	if (!e->resumed)
		mc = entry_resolve(q, e, status, body, len, pprof);
	else
		free(body);
	atomic_fetch_add_explicit(&q->answered, 1, memory_order_relaxed);
	entry_unref(q, e);
	pthread_mutex_unlock(&q->lock);
	/* suspended until this call: the connection is still there */
	if (mc)
		MHD_resume_connection(mc);
}

void scrape_queue__shutdown(struct scrape_queue *q, unsigned int wait_ms)
{
	struct MHD_Connection *mcs[SCRAPE_QUEUE_MAX];
	static const char stopping[] = "the collector is stopping";
	unsigned int i, n = 0, waited;
	uint8_t *body;

	pthread_mutex_lock(&q->lock);
	q->shutting = true;
	for (i = 0; i < q->max_pending; i++) {
		if (!q->open[i] || n == sizeof(mcs) / sizeof(mcs[0]))
			continue;
		body = (uint8_t *)strdup(stopping);
		mcs[n++] = entry_resolve(q, q->open[i], MHD_HTTP_SERVICE_UNAVAILABLE, body,
					 body ? sizeof(stopping) - 1 : 0, false);
	}
	pthread_mutex_unlock(&q->lock);
	for (i = 0; i < n; i++)
		MHD_resume_connection(mcs[i]);
	/* let the listener send those answers before it is stopped */
	for (waited = 0; waited < wait_ms; waited += 10) {
		pthread_mutex_lock(&q->lock);
		n = q->live;
		pthread_mutex_unlock(&q->lock);
		if (!n)
			break;
		usleep(10000);
	}
}

void scrape_queue__stats(struct scrape_queue *q, struct scrape_queue_stats *out)
{
	unsigned int i;

	out->requests = atomic_load_explicit(&q->requests, memory_order_relaxed);
	out->bad = atomic_load_explicit(&q->bad, memory_order_relaxed);
	out->busy = atomic_load_explicit(&q->busy, memory_order_relaxed);
	out->answered = atomic_load_explicit(&q->answered, memory_order_relaxed);
	out->pending = 0;
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->max_pending; i++)
		out->pending += q->open[i] != NULL;
	pthread_mutex_unlock(&q->lock);
}
