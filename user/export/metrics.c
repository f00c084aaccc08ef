// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metrics - Prometheus text from described families, and the HTTP
 * listeners that serve it.  See metrics.h.
 */
#include <errno.h>
#include <math.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <microhttpd.h>
#include "export/metrics.h"
#include "export/scrape_queue.h"
#include "util/clock.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* connections libmicrohttpd may hold: ours, plus room for those being evicted */
#define METRICS_SLOTS (2 * METRICS_CONNECTIONS)
/* an answer begun this recently is cut for a newcomer only if all are */
#define METRICS_ANSWER_GRACE_NS 2000000000ull
/* a silent connection this young likewise, before any that spoke or is older */
#define METRICS_NEW_GRACE_NS 1000000000ull
/* seconds the kernel keeps a connection that sent nothing before handing it over */
#define METRICS_DEFER_ACCEPT_S 5
#define METRICS_LOG_EVERY_NS   10000000000ull
#define METRICS_CONN_MEMORY    (16 * 1024) /* request headers and reply headers */

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

/* the shortest text that reads back as @v, as Prometheus' own clients write it */
static void put_value(FILE *f, double v)
{
	char buf[32];

	if (isnan(v)) {
		fputs("NaN", f);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? "+Inf" : "-Inf", f);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, f);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_snapshot__add(struct metrics_snapshot *m, const struct metrics_family *f,
			   const char *label, double value)
{
	if (m->n >= METRICS_MAX_SAMPLES) {
		m->lost++;
		return;
	}
	m->s[m->n++] = (struct metrics_sample){f, label, value};
}

/* @f's HELP, TYPE and every sample of it in @m, from the @first-th on */
static void family(FILE *f, const struct metrics_snapshot *m, unsigned int first)
{
	const struct metrics_family *fam = m->s[first].family;
	unsigned int i;

	head(f, fam->name, fam->type == METRICS_COUNTER ? "counter" : "gauge", fam->help);
	for (i = first; i < m->n; i++) {
		if (m->s[i].family != fam)
			continue;
		fputs(fam->name, f);
		if (fam->label) {
			fprintf(f, "{%s=\"", fam->label);
			put_label_value(f, m->s[i].label);
			fputs("\"}", f);
		}
		fputc(' ', f);
		put_value(f, m->s[i].value);
		fputc('\n', f);
	}
}

int metrics__render(const struct metrics_snapshot *m, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	unsigned int i, j, n = m->n < METRICS_MAX_SAMPLES ? m->n : METRICS_MAX_SAMPLES;

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
	/* a family's samples together, at its first sample's place */
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && m->s[j].family != m->s[i].family; j++)
			;
		if (j == i)
			family(f, m, i);
	}
	head(f, "ctxprof_ring_fill_ratio", "gauge",
	     "How full each CPU's ring buffer is, 0 to 1 (ring_full drops follow 1).");
	for (i = 0; i < m->nr_rings && i < METRICS_MAX_RINGS; i++)
		if (m->ring_fill[i] >= 0)
			fprintf(f, "ctxprof_ring_fill_ratio{cpu=\"%u\"} %.6f\n", i,
				m->ring_fill[i]);
	head(f, "ctxprof_metrics_samples_lost", "gauge",
	     "Samples this page left out: more than it has room for (a bug if not 0).");
	fprintf(f, "ctxprof_metrics_samples_lost %u\n", m->lost);
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

/* a client connection, as its listener's thread tracks it */
struct conn {
	struct sockaddr_storage addr;
	uint64_t accepted_ns;
	bool spoke;	       /* a request line came (libmicrohttpd read one) */
	uint64_t answering_ns; /* when the answer to its current request began; 0: none */
	int fd;
	bool used;
	bool cut;     /* shut down for a newcomer: libmicrohttpd closes it next */
	bool waiting; /* suspended until its profile is taken: never evicted */
};

struct listener {
	struct metrics_server *s;
	const char *name; /* "metrics", "health" */
	bool serves_metrics;
	struct MHD_Daemon *daemon;
	/* the listener's thread only (libmicrohttpd calls back on it) */
	struct conn conns[METRICS_SLOTS];
	struct MHD_Response *answer; /* /metrics, rendered from publish @answer_gen */
	uint64_t answer_gen;
	/* read by any thread */
	_Atomic uint64_t connections, requests, evicted;
};

struct metrics_server {
	struct listener metrics, health;
	metrics_health_fn health_fn;
	void *health_ctx;
	struct scrape_queue *scrapes; /* NULL: /debug/pprof/profile not served */
	pthread_mutex_t lock;	      /* @latest, @gen */
	struct metrics_snapshot latest;
	uint64_t gen; /* publishes so far */
	_Atomic uint64_t log_ns, log_suppressed;
};

bool metrics_server__publish(struct metrics_server *s, const struct metrics_snapshot *m)
{
	if (pthread_mutex_trylock(&s->lock))
		return false;
	s->latest = *m;
	s->gen++;
	pthread_mutex_unlock(&s->lock);
	return true;
}

static void listener_stats(const struct listener *l, struct metrics_listener_stats *out)
{
	out->connections = atomic_load_explicit(&l->connections, memory_order_relaxed);
	out->requests = atomic_load_explicit(&l->requests, memory_order_relaxed);
	out->evicted = atomic_load_explicit(&l->evicted, memory_order_relaxed);
}

void metrics_server__stats(const struct metrics_server *s, struct metrics_server_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	listener_stats(&s->metrics, &out->metrics);
	listener_stats(&s->health, &out->health);
	out->log_suppressed = atomic_load_explicit(&s->log_suppressed, memory_order_relaxed);
}

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return true;
}

/* how much @c deserves eviction, compared in this order (larger: sooner) */
/*
 * What a connection is doing, from the most worth keeping to the least: a
 * probe just connected has said nothing yet and must survive a burst of
 * connections opened after it; one that sent a request line and no end to
 * it, or waits idle after an answer, has had its chance.
 */
enum evict_class {
	EVICT_ANSWERING, /* its answer began within METRICS_ANSWER_GRACE_NS */
	EVICT_NEW,	 /* nothing read yet, connected within METRICS_NEW_GRACE_NS */
	EVICT_QUIET,	 /* nothing read yet, for longer */
	EVICT_SPOKE,	 /* a request begun and not ended, or idle after an answer */
};

/* how much a connection deserves eviction, compared in this order (larger: sooner) */
struct evict_key {
	enum evict_class class;
	unsigned int peers; /* live connections from its address, its own included */
	uint64_t age_ns;
};

static bool evict_key_greater(const struct evict_key *a, const struct evict_key *b)
{
	if (a->class != b->class)
		return a->class > b->class;
	if (a->peers != b->peers)
		return a->peers > b->peers;
	return a->age_ns > b->age_ns;
}

static enum evict_class evict_class(const struct conn *c, uint64_t now)
{
	if (c->answering_ns)
		return now - c->answering_ns < METRICS_ANSWER_GRACE_NS ? EVICT_ANSWERING
								       : EVICT_SPOKE;
	if (c->spoke)
		return EVICT_SPOKE;
	return now - c->accepted_ns < METRICS_NEW_GRACE_NS ? EVICT_NEW : EVICT_QUIET;
}

/* bytes the client sent that libmicrohttpd has not read yet: a request about to be answered */
static bool has_unread(int fd)
{
	int n = 0;

	return !ioctl(fd, FIONREAD, &n) && n > 0;
}

static unsigned int live_conns(const struct listener *l)
{
	unsigned int i, n = 0;

	for (i = 0; i < METRICS_SLOTS; i++)
		n += l->conns[i].used && !l->conns[i].cut;
	return n;
}

/*
 * The connection to shut down for @newcomer: the most deserving by struct
 * evict_key, other than @newcomer and those in @spared.  NULL: none.
 */
static struct conn *victim_of(struct listener *l, const struct conn *newcomer, const bool *spared)
{
	struct evict_key key, best = {};
	struct conn *victim = NULL;
	uint64_t now = mono_ns();
	unsigned int i, j;

	for (i = 0; i < METRICS_SLOTS; i++) {
		struct conn *c = &l->conns[i];

		if (!c->used || c->cut || c->waiting || c == newcomer || spared[i])
			continue;
		key.class = evict_class(c, now);
		key.peers = 0;
		for (j = 0; j < METRICS_SLOTS; j++)
			key.peers += l->conns[j].used && !l->conns[j].cut &&
				     same_host(&l->conns[j].addr, &c->addr);
		key.age_ns = now - c->accepted_ns;
		if (!victim || evict_key_greater(&key, &best)) {
			victim = c;
			best = key;
		}
	}
	return victim;
}

/*
 * More live connections than METRICS_CONNECTIONS: shut the most deserving
 * down until there are not, sparing @newcomer and every connection with
 * unread bytes (a probe whose request libmicrohttpd has yet to read must
 * not lose to a burst of connections opened after it).  libmicrohttpd sees
 * a victim's stream end and closes it; the fd stays open until then (and
 * its close is notified on this thread first), so no other socket can be
 * shut down by mistake.
 */
static void evict(struct listener *l, const struct conn *newcomer)
{
	bool spared[METRICS_SLOTS] = {};
	struct conn *victim;

	while (live_conns(l) > METRICS_CONNECTIONS && (victim = victim_of(l, newcomer, spared))) {
		if (has_unread(victim->fd)) {
			spared[victim - l->conns] = true;
			continue;
		}
		shutdown(victim->fd, SHUT_RDWR);
		victim->cut = true;
		atomic_fetch_add_explicit(&l->evicted, 1, memory_order_relaxed);
	}
}

/* the context of a /debug/pprof/symbol request while its body is read */
static char symbol_request;

/* libmicrohttpd accepted or closed a connection (on the listener's thread) */
static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *fd, *addr;
	struct listener *l = cls;
	struct conn *c = NULL;
	unsigned int i;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		c = *socket_ctx;
		if (c)
			c->used = false;
		*socket_ctx = NULL;
		return;
	}
	atomic_fetch_add_explicit(&l->connections, 1, memory_order_relaxed);
	fd = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	for (i = 0; i < METRICS_SLOTS && !c; i++)
		if (!l->conns[i].used)
			c = &l->conns[i];
	/* libmicrohttpd holds no more than there are slots */
	if (!c || !fd)
		return;
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->fd = fd->connect_fd;
	c->accepted_ns = mono_ns();
	if (addr && addr->client_addr)
		memcpy(&c->addr, addr->client_addr,
		       addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								: sizeof(struct sockaddr_in));
	*socket_ctx = c;
	evict(l, c);
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* a request line was read: the connection spoke (libmicrohttpd's URI logger) */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (c)
		c->spoke = true;
	return NULL;
}

/* a request was answered (or given up): its connection may be evicted again */
static void on_completed(void *cls, struct MHD_Connection *mc, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct listener *l = cls;
	struct conn *c = conn_of(mc);

	if (c) {
		c->answering_ns = 0;
		c->waiting = false;
	}
	/* a scrape's request has a context of its own, a symbol request ours */
	if (*req_cls && *req_cls != &symbol_request && l->s->scrapes)
		scrape_queue__completed(l->s->scrapes, req_cls);
	*req_cls = NULL;
}

static enum MHD_Result reply(struct MHD_Connection *mc, unsigned int status, char *body, size_t len,
			     const char *type)
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
	ret = MHD_queue_response(mc, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *mc, unsigned int status, const char *text)
{
	char *body = strdup(text);

	return body ? reply(mc, status, body, strlen(body), "text/plain; charset=utf-8") : MHD_NO;
}

/*
 * /metrics: the latest published snapshot, rendered once per publish and
 * the same response queued for every request until the next (many clients
 * cost a reference each, not a render each).  NULL when out of memory.
 */
static struct MHD_Response *metrics_answer(struct listener *l)
{
	struct metrics_server *s = l->s;
	struct metrics_snapshot *copy;
	struct MHD_Response *r;
	char *body = NULL;
	size_t len = 0;
	uint64_t gen;
	int err;

	pthread_mutex_lock(&s->lock);
	gen = s->gen;
	pthread_mutex_unlock(&s->lock);
	if (l->answer && l->answer_gen == gen)
		return l->answer;
	/* a copy, so the lock is held for a memcpy only */
	copy = malloc(sizeof(*copy));
	if (!copy)
		return NULL;
	pthread_mutex_lock(&s->lock);
	*copy = s->latest;
	gen = s->gen;
	pthread_mutex_unlock(&s->lock);
	err = metrics__render(copy, &body, &len);
	free(copy);
	if (err) {
		free(body);
		return NULL;
	}
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return NULL;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, METRICS_CONTENT_TYPE);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	/* connections still sending the old one keep it until they are done */
	if (l->answer)
		MHD_destroy_response(l->answer);
	l->answer = r;
	l->answer_gen = gen;
	return r;
}

static enum MHD_Result health_answer(struct listener *l, struct MHD_Connection *mc)
{
	struct metrics_server *s = l->s;
	enum metrics_health h = METRICS_HEALTHY;
	char why[256] = "", line[300];

	if (s->health_fn)
		h = s->health_fn(s->health_ctx, why, sizeof(why));
	if (h == METRICS_HEALTHY)
		return reply_text(mc, MHD_HTTP_OK, "ok\n");
	if (h == METRICS_DEGRADED) {
		snprintf(line, sizeof(line), "degraded: %s\n", why[0] ? why : "unknown");
		return reply_text(mc, MHD_HTTP_OK, line);
	}
	snprintf(line, sizeof(line), "%s\n", why[0] ? why : "unhealthy");
	return reply_text(mc, MHD_HTTP_SERVICE_UNAVAILABLE, line);
}

/*
 * /debug/pprof/symbol, as Go's net/http/pprof answers it: pprof asks it by
 * POST for the names of a fetched profile's addresses in mappings it does
 * not see as named, and fails the whole fetch without an answer.  Ours
 * names what it can before serving, and one node's addresses are many
 * processes' (a mapping's address names no process): the body is read and
 * dropped, and no address is named.
 */
static enum MHD_Result symbol_answer(struct MHD_Connection *mc, size_t *upload_data_size)
{
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	return reply_text(mc, MHD_HTTP_OK, "num_symbols: 1\n");
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *mc, const char *url,
			     const char *method, const char *version, const char *upload_data,
			     size_t *upload_data_size, void **req_cls)
{
	struct listener *l = cls;
	struct MHD_Response *r;
	struct conn *c = conn_of(mc);
	bool suspended;
	enum MHD_Result ret;

	if (*req_cls == &symbol_request)
		return symbol_answer(mc, upload_data_size);
	/* a scrape's second call: its profile is ready */
	if (*req_cls)
		return (enum MHD_Result)scrape_queue__serve(l->s->scrapes, mc, method, req_cls,
							    &suspended);
	if (c && !c->answering_ns)
		c->answering_ns = mono_ns();
	atomic_fetch_add_explicit(&l->requests, 1, memory_order_relaxed);
	if (l->serves_metrics && l->s->scrapes && !strcmp(url, "/debug/pprof/profile")) {
		ret = (enum MHD_Result)scrape_queue__serve(l->s->scrapes, mc, method, req_cls,
							   &suspended);
		if (c && suspended)
			c->waiting = true;
		return ret;
	}
	if (l->serves_metrics && l->s->scrapes && !strcmp(url, "/debug/pprof/symbol")) {
		/* a POST's body comes in the calls after this one */
		if (!strcmp(method, MHD_HTTP_METHOD_POST)) {
			*req_cls = &symbol_request;
			return MHD_YES;
		}
		return symbol_answer(mc, upload_data_size);
	}
	/* an unknown path is 404 whatever the method: pprof asks for
	 * /debug/pprof/symbol by POST and takes 404 as "no symbols here" */
	if (strcmp(url, "/healthz") && (!l->serves_metrics || strcmp(url, "/metrics")))
		return reply_text(mc, MHD_HTTP_NOT_FOUND,
				  !l->serves_metrics ? "not found: try /healthz\n"
				  : l->s->scrapes    ? "not found: try /metrics, /healthz or "
						       "/debug/pprof/profile\n"
						     : "not found: try /metrics or /healthz\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(mc, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
	if (!strcmp(url, "/healthz"))
		return health_answer(l, mc);
	r = metrics_answer(l);
	if (!r)
		return reply_text(mc, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return MHD_queue_response(mc, MHD_HTTP_OK, r);
}

/* libmicrohttpd's own messages, said as ours, at most one every 10 s */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct listener *l = cls;
	struct metrics_server *s = l->s;
	uint64_t now = mono_ns(), last = atomic_load(&s->log_ns);

	if (last && now - last < METRICS_LOG_EVERY_NS) {
		atomic_fetch_add_explicit(&s->log_suppressed, 1, memory_order_relaxed);
		return;
	}
	atomic_store(&s->log_ns, now);
	fprintf(stderr, "ctxprof: %s listener: ", l->name);
	vfprintf(stderr, fmt, ap);
}

/* @l on @addr; @what names it in messages ("metrics", "health checks") */
static int listener__start(struct listener *l, const char *addr, const char *flag, const char *what,
			   char *err, size_t err_len)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
			     (l->serves_metrics && l->s->scrapes ? MHD_ALLOW_SUSPEND_RESUME : 0);
	const union MHD_DaemonInfo *info;
	int defer_s = METRICS_DEFER_ACCEPT_S;
	struct sockaddr_storage sa;
	socklen_t sa_len;
	uint16_t port;
	int e;

	if (metrics_parse_addr(addr, &sa, &sa_len)) {
		snprintf(err, err_len, "%s %s: not HOST:PORT", flag, addr);
		return -EINVAL;
	}
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_DUAL_STACK;
	/* the port is in @sa; given here too, it names the port in MHD's messages */
	port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
					      : ((struct sockaddr_in *)&sa)->sin_port);
	errno = 0;
	/* the logger first: options before it would log through MHD's own */
	l->daemon = MHD_start_daemon(
		flags, port, NULL, NULL, serve, l, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l,
		MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_SLOTS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_IDLE_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_CONN_MEMORY,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, l, MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, l, MHD_OPTION_URI_LOG_CALLBACK, on_request_line, l, MHD_OPTION_END);
	if (!l->daemon) {
		e = errno ? errno : EADDRINUSE;
		snprintf(err, err_len, "cannot serve %s on %s: %s", what, addr, strerror(e));
		return -e;
	}
	/*
	 * A connection is accepted once its request's first bytes arrive:
	 * one that sends nothing waits in the kernel, not in a slot, and
	 * cannot be told from a probe whose client was not scheduled yet.
	 */
	info = MHD_get_daemon_info(l->daemon, MHD_DAEMON_INFO_LISTEN_FD);
	if (info)
		setsockopt(info->listen_fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s,
			   sizeof(defer_s));
	return 0;
}

static void listener__stop(struct listener *l)
{
	if (l->daemon)
		MHD_stop_daemon(l->daemon);
	if (l->answer)
		MHD_destroy_response(l->answer);
}

struct metrics_server *metrics_server__start(const struct metrics_server_opts *o, char *err,
					     size_t err_len)
{
	struct metrics_server *s;
	int e = 0;

	if (!o->metrics_addr && !o->health_addr) {
		snprintf(err, err_len, "no address to serve metrics or health checks on");
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->health_fn = o->health;
	s->health_ctx = o->health_ctx;
	s->scrapes = o->scrapes;
	pthread_mutex_init(&s->lock, NULL);
	s->metrics = (struct listener){.s = s, .name = "metrics", .serves_metrics = true};
	s->health = (struct listener){.s = s, .name = "health"};
	if (o->metrics_addr)
		e = listener__start(&s->metrics, o->metrics_addr, "--metrics-addr", "metrics", err,
				    err_len);
	if (!e && o->health_addr)
		e = listener__start(&s->health, o->health_addr, "--health-addr", "health checks",
				    err, err_len);
	if (e) {
		metrics_server__free(s);
		errno = -e;
		return NULL;
	}
	return s;
}

void metrics_server__free(struct metrics_server *s)
{
	if (!s)
		return;
	listener__stop(&s->metrics);
	listener__stop(&s->health);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
