// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "export/metrics.h"

static void filled(struct metrics_snapshot *m)
{
	memset(m, 0, sizeof(*m));
	m->version = "0.1.0";
	m->node = "node \"a\"\\\n";
	m->mode = "all";
	m->samples_taken = 10;
	m->samples_in_profile = 7;
	m->dropped.v[0] = (struct metrics_counter){"ring_full", 3};
	m->dropped.n = 1;
	m->ring_fill[0] = 0.25;
	m->ring_fill[1] = -1;
	m->nr_rings = 2;
	m->last_export_time = 1795244405.5;
	m->rss_bytes = 1 << 20;
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
	assert_non_null(strstr(out, "\nctxprof_samples_in_profile_total 7\n"));
	assert_non_null(strstr(out, "\nctxprof_samples_dropped_total{reason=\"ring_full\"} 3\n"));
	assert_non_null(strstr(out, "node=\"node \\\"a\\\"\\\\\\n\""));
	assert_non_null(strstr(out, "\nctxprof_ring_fill_ratio{cpu=\"0\"} 0.250000\n"));
	assert_null(strstr(out, "cpu=\"1\"")); /* unknown fill: no sample */
	assert_non_null(strstr(out, "\nctxprof_last_export_timestamp_seconds 1795244405.5\n"));
	assert_non_null(strstr(out, "\nprocess_resident_memory_bytes 1048576\n"));
	assert_non_null(strstr(out, "\nctxprof_last_export_success 1\n"));
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
	assert_true(types > 30);
	free(out);
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

/* a GET on 127.0.0.1:@port; the whole response in @buf */
static int get(int port, const char *method, const char *path, char *buf, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	size_t used = 0;
	ssize_t n;
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	dprintf(fd, "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", method, path);
	while (used + 1 < len && (n = read(fd, buf + used, len - used - 1)) > 0)
		used += n;
	buf[used] = '\0';
	close(fd);
	return atoi(buf + 9); /* "HTTP/1.1 200" */
}

static bool healthy;

static bool health(void *ctx, char *why, size_t len)
{
	if (!healthy)
		snprintf(why, len, "drain thread 0 made no progress for 12 s");
	return healthy;
}

static void metrics_server__requests__served(void **state)
{
	struct metrics_server *s = NULL;
	struct metrics_snapshot m;
	char addr[32], err[256], *buf = malloc(1 << 16);
	int port = 0, i;

	assert_non_null(buf);
	/* a free port, from a range unlikely to be taken */
	for (i = 0; i < 50 && !s; i++) {
		port = 20000 + (getpid() * 7 + i * 13) % 20000;
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
		s = metrics_server__start(addr, health, NULL, err, sizeof(err));
	}
	assert_non_null(s);
	/* before any publish: served, zeros */
	assert_int_equal(get(port, "GET", "/metrics", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "Content-Type: text/plain; version=0.0.4"));
	assert_non_null(strstr(buf, "\nctxprof_samples_taken_total 0\n"));
	filled(&m);
	assert_true(metrics_server__publish(s, &m));
	assert_int_equal(get(port, "GET", "/metrics", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "\nctxprof_samples_taken_total 10\n"));
	healthy = true;
	assert_int_equal(get(port, "GET", "/healthz", buf, 1 << 16), 200);
	assert_non_null(strstr(buf, "\r\n\r\nok\n"));
	healthy = false;
	assert_int_equal(get(port, "GET", "/healthz", buf, 1 << 16), 503);
	assert_non_null(strstr(buf, "\r\n\r\ndrain thread 0 made no progress for 12 s\n"));
	assert_int_equal(get(port, "GET", "/", buf, 1 << 16), 404);
	assert_int_equal(get(port, "POST", "/metrics", buf, 1 << 16), 405);
	/* the port is taken now: a second server says so */
	assert_null(metrics_server__start(addr, health, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot serve metrics on"));
	assert_null(metrics_server__start("nonsense", health, NULL, err, sizeof(err)));
	metrics_server__free(s);
	metrics_server__free(NULL);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(metrics__render__values_and_escaped_labels),
		cmocka_unit_test(metrics__render__each_family_declared_once),
		cmocka_unit_test(metrics_parse_addr__forms__parsed_or_refused),
		cmocka_unit_test(metrics_server__requests__served),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
