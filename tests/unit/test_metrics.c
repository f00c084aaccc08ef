// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "export/metrics.h"

static const struct metrics_family taken = {"ctxprof_samples_taken_total", METRICS_COUNTER,
					    "Samples taken.", NULL};
static const struct metrics_family dropped = {"ctxprof_samples_dropped_total", METRICS_COUNTER,
					      "Samples lost, by reason.", "reason"};
static const struct metrics_family when = {"ctxprof_last_export_timestamp_seconds", METRICS_GAUGE,
					   "When.", NULL};

static void filled(struct metrics_snapshot *m)
{
	memset(m, 0, sizeof(*m));
	m->version = "0.1.0";
	m->node = "node \"a\"\\\n";
	m->mode = "all";
	/* a family's samples apart in the snapshot: together on the page */
	metrics_snapshot__add(m, &dropped, "ring_full", 3);
	metrics_snapshot__add(m, &taken, NULL, 10);
	metrics_snapshot__add(m, &dropped, "no_trace", 0);
	metrics_snapshot__add(m, &when, NULL, 1795244405.5);
	m->ring_fill[0] = 0.25;
	m->ring_fill[1] = -1;
	m->nr_rings = 2;
}

static char *render(const struct metrics_snapshot *m)
{
	char *out = NULL;
	size_t len = 0;

	assert_int_equal(metrics__render(m, &out, &len), 0);
	assert_int_equal(strlen(out), len);
	return out;
}

static void metrics__render__values_and_escaped_labels(void **state)
{
	struct metrics_snapshot m;
	char *out;

	filled(&m);
	out = render(&m);
	assert_non_null(strstr(out, "\nctxprof_samples_taken_total 10\n"));
	assert_non_null(strstr(out, "\nctxprof_samples_dropped_total{reason=\"ring_full\"} 3\n"
				    "ctxprof_samples_dropped_total{reason=\"no_trace\"} 0\n"));
	assert_non_null(strstr(out, "node=\"node \\\"a\\\"\\\\\\n\""));
	assert_non_null(strstr(out, "\nctxprof_ring_fill_ratio{cpu=\"0\"} 0.250000\n"));
	assert_null(strstr(out, "cpu=\"1\"")); /* unknown fill: no sample */
	assert_non_null(strstr(out, "\nctxprof_last_export_timestamp_seconds 1795244405.5\n"));
	assert_non_null(strstr(out, "\nctxprof_metrics_samples_lost 0\n"));
	free(out);
}

/* every metric has HELP and TYPE right before its first sample, once */
static void metrics__render__each_family_declared_once(void **state)
{
	struct metrics_snapshot m;
	char *out, *line, *save = NULL, last_type[128] = "";
	int types = 0;

	filled(&m);
	out = render(&m);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128];

		if (!strncmp(line, "# TYPE ", 7)) {
			assert_int_equal(sscanf(line + 7, "%127s", name), 1);
			assert_string_not_equal(name, last_type);
			snprintf(last_type, sizeof(last_type), "%s", name);
			types++;
			continue;
		}
		if (line[0] == '#')
			continue;
		assert_int_equal(sscanf(line, "%127[a-z_]", name), 1);
		assert_string_equal(name, last_type);
	}
	assert_int_equal(types, 6);
	free(out);
}

/* a value reads back exactly, in the fewest digits */
static void metrics__render__values_shortest_exact(void **state)
{
	struct metrics_snapshot m = {};
	char *out;

	metrics_snapshot__add(&m, &taken, NULL, 0.1);
	metrics_snapshot__add(&m, &when, NULL, 18446744073709551616.0);
	out = render(&m);
	assert_non_null(strstr(out, "\nctxprof_samples_taken_total 0.1\n"));
	assert_non_null(
		strstr(out, "\nctxprof_last_export_timestamp_seconds 1.8446744073709552e+19\n"));
	free(out);
}

static void metrics_snapshot__add__full__counted(void **state)
{
	struct metrics_snapshot *m = calloc(1, sizeof(*m));
	int i;

	assert_non_null(m);
	for (i = 0; i < METRICS_MAX_SAMPLES + 3; i++)
		metrics_snapshot__add(m, &dropped, "x", i);
	assert_int_equal(m->n, METRICS_MAX_SAMPLES);
	assert_int_equal(m->lost, 3);
	free(m);
}

static void metrics_parse_addr__forms__parsed_or_refused(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;

	assert_int_equal(metrics_parse_addr("127.0.0.1:9464", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(in->sin_port), 9464);
	assert_int_equal(ntohl(in->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(metrics_parse_addr("[::1]:80", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(in6->sin6_port), 80);
	assert_int_equal(metrics_parse_addr(":9464", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(in->sin_addr.s_addr, htonl(INADDR_ANY));
	assert_int_equal(metrics_parse_addr("[::]:9464", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(metrics_parse_addr("0.0.0.0:1", &ss, &len), 0);
	assert_int_equal(metrics_parse_addr("127.0.0.1", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("127.0.0.1:", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("127.0.0.1:0", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("127.0.0.1:65536", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("127.0.0.1:-1", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("127.0.0.1:9x", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("::1:80", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("[::1]80", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr("999.1.1.1:80", &ss, &len), -EINVAL);
	assert_int_equal(metrics_parse_addr(NULL, &ss, &len), -EINVAL);
}

/* a connection to 127.0.0.1:@port from @from (NULL: any source address) */
static int dial(int port, const char *from)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval patience = {.tv_sec = 3};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	/* a server that never answers fails the test, not hangs it */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
	if (from) {
		struct sockaddr_in src = {.sin_family = AF_INET};

		inet_pton(AF_INET, from, &src.sin_addr);
		assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* a request on 127.0.0.1:@port; the whole response in @buf; the status */
static int get(int port, const char *method, const char *path, char *buf, size_t len)
{
	size_t used = 0;
	ssize_t n;
	int fd = dial(port, NULL);

	dprintf(fd, "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", method, path);
	while (used + 1 < len && (n = read(fd, buf + used, len - used - 1)) > 0)
		used += n;
	buf[used] = '\0';
	close(fd);
	return atoi(buf + 9); /* "HTTP/1.1 200" */
}

/* closed by the server: EOF (or a reset) within @ms */
static bool closed_within(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char c;

	return poll(&p, 1, ms) == 1 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

static enum metrics_health verdict;

static enum metrics_health health(void *ctx, char *why, size_t len)
{
	if (verdict == METRICS_UNHEALTHY)
		snprintf(why, len, "drain thread 0 made no progress for 12 s");
	if (verdict == METRICS_DEGRADED)
		snprintf(why, len, "throttled: 250 of 999 Hz");
	return verdict;
}

/* a server on a free port (a range unlikely to be taken), @port its metrics one */
static struct metrics_server *start(int *port, bool health_listener)
{
	struct metrics_server *s = NULL;
	char addr[32], haddr[32], err[256];
	int i;

	for (i = 0; i < 50 && !s; i++) {
		*port = 20000 + (getpid() * 7 + i * 13) % 20000;
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", *port);
		snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", *port + 1);
		s = metrics_server__start(
			&(struct metrics_server_opts){.metrics_addr = addr,
						      .health_addr = health_listener ? haddr : NULL,
						      .health = health},
			err, sizeof(err));
	}
	assert_non_null(s);
	return s;
}

static void metrics_server__requests__served(void **state)
{
	struct metrics_server *s;
	struct metrics_server_stats st;
	struct metrics_snapshot m;
	char addr[32], err[256], *buf = malloc(1 << 16);
	int port;

	assert_non_null(buf);
	s = start(&port, true);
	/* before any publish: served, no counter yet */
	assert_int_equal(get(port, "GET", "/metrics", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "Content-Type: text/plain; version=0.0.4"));
	assert_null(strstr(buf, "ctxprof_samples_taken_total"));
	filled(&m);
	assert_true(metrics_server__publish(s, &m));
	assert_int_equal(get(port, "GET", "/metrics", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "\nctxprof_samples_taken_total 10\n"));
	/* the same answer until the next publish, then the new one */
	assert_int_equal(get(port, "GET", "/metrics", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "\nctxprof_samples_taken_total 10\n"));
	m.s[1].value = 11;
	assert_true(metrics_server__publish(s, &m));
	assert_int_equal(get(port, "GET", "/metrics", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "\nctxprof_samples_taken_total 11\n"));
	/* /healthz on both listeners: healthy, degraded, unhealthy */
	verdict = METRICS_HEALTHY;
	assert_int_equal(get(port, "GET", "/healthz", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "\r\n\r\nok\n"));
	assert_int_equal(get(port + 1, "GET", "/healthz", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "\r\n\r\nok\n"));
	verdict = METRICS_DEGRADED;
	assert_int_equal(get(port + 1, "GET", "/healthz", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "\r\n\r\ndegraded: throttled: 250 of 999 Hz\n"));
	verdict = METRICS_UNHEALTHY;
	assert_int_equal(get(port + 1, "GET", "/healthz", buf, 1 << 16), 503);
	assert_non_null(strstr(buf, "\r\n\r\ndrain thread 0 made no progress for 12 s\n"));
	assert_int_equal(get(port, "GET", "/healthz", buf, 1 << 16), 503);
	/* the health listener serves /healthz alone */
	assert_int_equal(get(port + 1, "GET", "/metrics", buf, 1 << 16), 404);
	assert_int_equal(get(port, "GET", "/", buf, 1 << 16), 404);
	assert_int_equal(get(port, "POST", "/metrics", buf, 1 << 16), 405);
	metrics_server__stats(s, &st);
	assert_int_equal(st.metrics.requests, 8);
	assert_int_equal(st.health.requests, 4);
	assert_int_equal(st.metrics.evicted + st.health.evicted, 0);
	/* the port is taken now: a second server says so */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	assert_null(metrics_server__start(&(struct metrics_server_opts){.metrics_addr = addr}, err,
					  sizeof(err)));
	assert_non_null(strstr(err, "cannot serve metrics on"));
	assert_null(metrics_server__start(&(struct metrics_server_opts){.health_addr = "nonsense"},
					  err, sizeof(err)));
	assert_non_null(strstr(err, "--health-addr nonsense: not HOST:PORT"));
	assert_null(metrics_server__start(&(struct metrics_server_opts){}, err, sizeof(err)));
	metrics_server__free(s);
	metrics_server__free(NULL);
	free(buf);
}

/*
 * More idle connections than a listener holds, from the probe's own
 * address: each newcomer evicts the oldest, and a probe still gets its
 * answer at once.
 */
static void metrics_server__slow_connections__probe_answered(void **state)
{
	struct metrics_server_stats st;
	struct metrics_server *s;
	struct timespec t0, t1;
	int fds[3 * METRICS_CONNECTIONS], port, i, open_left = 0;
	char buf[4096];

	verdict = METRICS_HEALTHY;
	s = start(&port, false);
	for (i = 0; i < 3 * METRICS_CONNECTIONS; i++) {
		fds[i] = dial(port, NULL);
		/* half a request, never finished */
		assert_int_equal(write(fds[i], "GET /metrics HTTP/1.1\r\n", 23), 23);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(get(port, "GET", "/healthz", buf, sizeof(buf)), 200);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 1);
	/* the newest ones are kept, the oldest shut down */
	for (i = 0; i < 3 * METRICS_CONNECTIONS; i++) {
		bool closed = closed_within(fds[i], i < METRICS_CONNECTIONS ? 1000 : 0);

		if (i < METRICS_CONNECTIONS)
			assert_true(closed);
		open_left += !closed;
		close(fds[i]);
	}
	assert_true(open_left > 0 && open_left <= METRICS_CONNECTIONS);
	metrics_server__stats(s, &st);
	assert_true(st.metrics.evicted >= 2 * METRICS_CONNECTIONS);
	metrics_server__free(s);
}

/*
 * A probe connected but not yet heard from (its process not scheduled) is
 * kept through a burst of half-requests opened after it from its own
 * address: it is not even accepted before it speaks, and those that spoke
 * and did not finish go first.
 */
static void metrics_server__burst_after_probe__probe_kept(void **state)
{
	int fds[2 * METRICS_CONNECTIONS], port, probe, i;
	struct metrics_server_stats st;
	struct metrics_server *s;
	char buf[4096];
	ssize_t n;

	verdict = METRICS_HEALTHY;
	s = start(&port, false);
	probe = dial(port, NULL);
	usleep(50 * 1000);
	for (i = 0; i < 2 * METRICS_CONNECTIONS; i++) {
		fds[i] = dial(port, NULL);
		assert_int_equal(write(fds[i], "GET /metrics HTTP/1.1\r\n", 23), 23);
	}
	usleep(200 * 1000);
	metrics_server__stats(s, &st);
	assert_int_equal(st.metrics.connections, 2 * METRICS_CONNECTIONS);
	dprintf(probe, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	n = read(probe, buf, sizeof(buf) - 1);
	assert_true(n > 12);
	buf[n] = '\0';
	assert_int_equal(atoi(buf + 9), 200);
	close(probe);
	for (i = 0; i < 2 * METRICS_CONNECTIONS; i++)
		close(fds[i]);
	metrics_server__free(s);
}

/* when full, the address holding the most connections loses one, not a lighter one */
static void metrics_server__full__heaviest_address_evicted(void **state)
{
	int heavy[METRICS_CONNECTIONS], light[4], port, i;
	struct metrics_server *s;
	char buf[4096];

	s = start(&port, false);
	/* each a request line and no more: all slow alike */
	for (i = 0; i < 4; i++) {
		light[i] = dial(port, "127.0.0.1");
		assert_int_equal(write(light[i], "GET / HTTP/1.1\r\n", 16), 16);
	}
	usleep(100 * 1000);
	/* newer, from another address: it fills the listener */
	for (i = 0; i < METRICS_CONNECTIONS; i++) {
		heavy[i] = dial(port, "127.0.0.2");
		assert_int_equal(write(heavy[i], "GET / HTTP/1.1\r\n", 16), 16);
		usleep(2000); /* read before the next comes */
	}
	usleep(100 * 1000);
	assert_int_equal(get(port, "GET", "/healthz", buf, sizeof(buf)), 200);
	for (i = 0; i < 4; i++) {
		assert_false(closed_within(light[i], 200));
		close(light[i]);
	}
	/* 4 + 32 + the probe: 5 too many, each the oldest of 127.0.0.2's */
	for (i = 0; i < METRICS_CONNECTIONS; i++) {
		assert_int_equal(closed_within(heavy[i], i < 5 ? 1000 : 0), i < 5);
		close(heavy[i]);
	}
	metrics_server__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(metrics__render__values_and_escaped_labels),
		cmocka_unit_test(metrics__render__each_family_declared_once),
		cmocka_unit_test(metrics__render__values_shortest_exact),
		cmocka_unit_test(metrics_snapshot__add__full__counted),
		cmocka_unit_test(metrics_parse_addr__forms__parsed_or_refused),
		cmocka_unit_test(metrics_server__requests__served),
		cmocka_unit_test(metrics_server__slow_connections__probe_answered),
		cmocka_unit_test(metrics_server__burst_after_probe__probe_kept),
		cmocka_unit_test(metrics_server__full__heaviest_address_evicted),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
