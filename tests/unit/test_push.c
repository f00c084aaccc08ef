// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * push: the request's pieces, the retry policy, and the spool, against a
 * real libcurl and a small HTTP server on loopback that answers as it is
 * told (this file's; the integration test speaks with a Pyroscope-like
 * receiver).  No root needed.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "export/push.h"
#include "util/clock.h"

static void push_redact_url__credentials_and_query__left_out(void **state)
{
	char out[256];

	push_redact_url("https://alice:s3cret@profiles.example:4040/base/ingest?token=abc#x", out,
			sizeof(out));
	assert_string_equal(out, "https://profiles.example:4040/base/ingest");
	push_redact_url("http://u:p@ss@h/", out, sizeof(out));
	assert_string_equal(out, "http://h/");
	push_redact_url("http://host:4040", out, sizeof(out));
	assert_string_equal(out, "http://host:4040");
	push_redact_url("no url at all", out, sizeof(out));
	assert_string_equal(out, "(not a URL)");
}

static void push_ingest_url__base__ingest_appended_once(void **state)
{
	char out[PUSH_URL_MAX];

	assert_int_equal(push_ingest_url("http://h:4040", out, sizeof(out)), 0);
	assert_string_equal(out, "http://h:4040/ingest");
	assert_int_equal(push_ingest_url("https://h/prefix/", out, sizeof(out)), 0);
	assert_string_equal(out, "https://h/prefix/ingest");
	assert_int_equal(push_ingest_url("http://h/ingest", out, sizeof(out)), 0);
	assert_string_equal(out, "http://h/ingest");
	assert_int_equal(push_ingest_url("ftp://h", out, sizeof(out)), -EINVAL);
	assert_int_equal(push_ingest_url("http://h/?x=1", out, sizeof(out)), -EINVAL);
	assert_int_equal(push_ingest_url("http:///", out, sizeof(out)), -EINVAL);
	assert_int_equal(push_ingest_url("http://h/a b", out, sizeof(out)), -EINVAL);
}

static void push_classify__statuses__sent_retried_or_refused(void **state)
{
	assert_int_equal(push_classify(200), PUSH_SENT);
	assert_int_equal(push_classify(204), PUSH_SENT);
	assert_int_equal(push_classify(0), PUSH_RETRY);
	assert_int_equal(push_classify(408), PUSH_RETRY);
	assert_int_equal(push_classify(429), PUSH_RETRY);
	assert_int_equal(push_classify(500), PUSH_RETRY);
	assert_int_equal(push_classify(503), PUSH_RETRY);
	assert_int_equal(push_classify(400), PUSH_REJECT);
	assert_int_equal(push_classify(401), PUSH_REJECT);
	assert_int_equal(push_classify(413), PUSH_REJECT);
	assert_int_equal(push_classify(422), PUSH_REJECT);
	assert_int_equal(push_classify(301), PUSH_REJECT);
}

static void push_backoff_ms__failures__doubling_jittered_capped(void **state)
{
	unsigned int f;
	uint64_t lo, hi;

	for (f = 1; f < 20; f++) {
		uint64_t base = PUSH_BACKOFF_MIN_MS << (f - 1 < 10 ? f - 1 : 10);

		if (base > PUSH_BACKOFF_MAX_MS)
			base = PUSH_BACKOFF_MAX_MS;
		lo = push_backoff_ms(f, 0);
		hi = push_backoff_ms(f, UINT32_MAX);
		assert_int_equal(lo, base / 2);
		assert_true(hi >= lo && hi <= base);
	}
	assert_true(push_backoff_ms(1, 12345) >= 500 && push_backoff_ms(1, 12345) <= 1000);
}

static void push_retry_after_s__seconds_or_date__capped(void **state)
{
	time_t now = 1795244405; /* Fri, 21 Nov 2026 07:00:05 GMT */

	assert_int_equal(push_retry_after_s(" 7\r\n", now), 7);
	assert_int_equal(push_retry_after_s("0", now), 0);
	assert_int_equal(push_retry_after_s("99999999999999", now), PUSH_RETRY_AFTER_MAX_S);
	assert_int_equal(push_retry_after_s("Fri, 21 Nov 2026 07:00:35 GMT", now), 30);
	assert_int_equal(push_retry_after_s("Fri, 21 Nov 2026 06:00:00 GMT", now), 0);
	assert_int_equal(push_retry_after_s("soon", now), -1);
	assert_int_equal(push_retry_after_s("5x", now), -1);
}

static void push_secret_parse__one_line__control_characters_refused(void **state)
{
	char out[64];

	assert_int_equal(push_secret_parse("tok3n\n", 6, out, sizeof(out)), 0);
	assert_string_equal(out, "tok3n");
	assert_int_equal(push_secret_parse("a b\t\r\n", 6, out, sizeof(out)), 0);
	assert_string_equal(out, "a b");
	/* a second line would forge a header */
	assert_int_equal(push_secret_parse("a\nX-Evil: 1\n", 12, out, sizeof(out)), -EINVAL);
	assert_int_equal(push_secret_parse("\n\n", 2, out, sizeof(out)), -EINVAL);
	assert_int_equal(push_secret_parse("abc", 3, out, 3), -EINVAL);
}

static void push_sample_type_config__types__every_one_named(void **state)
{
	const char *cpu = push_sample_type_config(false), *all = push_sample_type_config(true);

	assert_non_null(strstr(cpu, "\"samples\":{"));
	assert_non_null(strstr(cpu, "\"cpu\":{"));
	assert_null(strstr(cpu, "off_cpu"));
	assert_non_null(strstr(all, "\"off_cpu\":{"));
	assert_non_null(strstr(all, "\"wall\":{"));
}

/* --- a store on loopback, answering what its script says */

#define STORE_MAX 64

struct store {
	int fd;
	uint16_t port;
	pthread_t thread;
	/* statuses answered in turn, the last one repeated; 0: reset the connection */
	int script[STORE_MAX];
	int nr_script;
	const char *retry_after;
	/* what came: each request's name and from, and the status given */
	char names[STORE_MAX][128];
	long froms[STORE_MAX];
	int statuses[STORE_MAX];
	bool auth_ok[STORE_MAX], multipart[STORE_MAX], no_format[STORE_MAX];
	uint64_t at_ns[STORE_MAX];
	int nr;
	pthread_mutex_t lock;
	volatile bool stop;
};

/* the value of @key=... in the request line's query, URL-decoded crudely */
static void query_value(const char *req, const char *key, char *out, size_t len)
{
	const char *p = strstr(req, key), *end;
	size_t n = 0;

	out[0] = '\0';
	if (!p)
		return;
	p += strlen(key);
	end = p + strcspn(p, "& ");
	while (p < end && n + 1 < len) {
		if (*p == '%' && p + 2 < end) {
			unsigned int c;

			sscanf(p + 1, "%2x", &c);
			out[n++] = (char)c;
			p += 3;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
}

static void *store_thread(void *arg)
{
	struct store *s = arg;
	static char buf[1 << 20];
	char from[32], resp[256];
	struct linger lg = {1, 0};
	size_t got, need;
	char *hdr_end, *cl;
	int c, status, i;

	while (!s->stop) {
		c = accept(s->fd, NULL, NULL);
		if (c < 0)
			continue;
		got = 0;
		need = SIZE_MAX;
		while (got < need && got < sizeof(buf) - 1) {
			ssize_t n = read(c, buf + got, sizeof(buf) - 1 - got);

			if (n <= 0)
				break;
			got += (size_t)n;
			buf[got] = '\0';
			hdr_end = strstr(buf, "\r\n\r\n");
			if (hdr_end && need == SIZE_MAX) {
				cl = strcasestr(buf, "Content-Length:");
				need = (size_t)(hdr_end + 4 - buf) +
				       (cl ? strtoul(cl + 15, NULL, 10) : 0);
			}
		}
		pthread_mutex_lock(&s->lock);
		i = s->nr < STORE_MAX ? s->nr++ : STORE_MAX - 1;
		status = s->script[i < s->nr_script ? i : s->nr_script - 1];
		query_value(buf, "name=", s->names[i], sizeof(s->names[i]));
		query_value(buf, "from=", from, sizeof(from));
		s->froms[i] = strtol(from, NULL, 10);
		s->statuses[i] = status;
		s->auth_ok[i] = strstr(buf, "\r\nAuthorization: Bearer t0ken\r\n") != NULL;
		s->multipart[i] = strstr(buf, "multipart/form-data; boundary=") &&
				  strstr(buf, "name=\"profile\"; filename=\"profile.pprof\"") &&
				  strstr(buf, "name=\"sample_type_config\"");
		s->no_format[i] = !strstr(buf, "format=");
		s->at_ns[i] = mono_ns();
		pthread_mutex_unlock(&s->lock);
		if (!status) {
			setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		} else {
			snprintf(resp, sizeof(resp),
				 "HTTP/1.1 %d X\r\nContent-Length: 0\r\nConnection: "
				 "close\r\n%s%s%s\r\n",
				 status, s->retry_after ? "Retry-After: " : "",
				 s->retry_after ? s->retry_after : "",
				 s->retry_after ? "\r\n" : "");
			/* a client gone early is the test's failure to see, not this thread's */
			(void)!write(c, resp, strlen(resp));
		}
		close(c);
	}
	return NULL;
}

static void store_start(struct store *s)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	struct timeval tv = {0, 100000};

	pthread_mutex_init(&s->lock, NULL);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 16), 0);
	setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	getsockname(s->fd, (struct sockaddr *)&a, &len);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->thread, NULL, store_thread, s), 0);
}

static void store_stop(struct store *s)
{
	s->stop = true;
	pthread_join(s->thread, NULL);
	close(s->fd);
}

static uint8_t *blob(size_t len)
{
	uint8_t *b = malloc(len);

	assert_non_null(b);
	memset(b, 0x1f, len);
	return b;
}

/* until @fn is true of the stats, at most @ms */
static bool wait_for(struct push *p, bool (*fn)(const struct push_stats *), unsigned int ms)
{
	struct push_stats st;

	for (unsigned int t = 0; t < ms; t += 10) {
		push__stats(p, &st);
		if (fn(&st))
			return true;
		usleep(10000);
	}
	return false;
}

static bool three_done(const struct push_stats *st)
{
	return st->sent + st->dropped[PUSH_DROP_REJECTED] == 3;
}

static void push__store_fails_then_answers__every_profile_sent_in_order(void **state)
{
	struct store s = {.script = {500, 0, 200}, .nr_script = 3};
	char url[64], err[256], tok[] = "/tmp/ctxprof-push-token-XXXXXX";
	struct push_stats st;
	struct push *p;
	int fd;

	fd = mkstemp(tok);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "t0ken\n", 6), 6);
	close(fd);
	store_start(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", s.port);
	p = push__start(&(struct push_opts){.url = url,
					    .token_file = tok,
					    .spool_bytes = 1 << 20,
					    .timeout_s = 5,
					    .sample_rate = 99},
			err, sizeof(err));
	assert_non_null(p);
	push__enqueue(p, "a{node=n}", 100, 110, blob(100), 100, 7);
	push__enqueue(p, "b{node=n}", 110, 120, blob(100), 100, 8);
	push__enqueue(p, "c{node=n}", 120, 130, blob(100), 100, 9);
	/* 500, a reset: the first waits ~0.5-1 s, then ~1-2 s */
	assert_true(wait_for(p, three_done, 8000));
	push__stop(p, 0);
	push__stats(p, &st);
	assert_int_equal(st.sent, 3);
	assert_int_equal(st.sent_samples, 24);
	assert_int_equal(st.failed_status, 1);
	assert_int_equal(st.failed_no_answer, 1);
	assert_int_equal(st.retries, 2);
	assert_int_equal(st.attempts, 5);
	/* the first twice more, then the rest in order */
	assert_int_equal(s.nr, 5);
	assert_string_equal(s.names[0], "a{node=n}");
	assert_string_equal(s.names[1], "a{node=n}");
	assert_string_equal(s.names[2], "a{node=n}");
	assert_string_equal(s.names[3], "b{node=n}");
	assert_string_equal(s.names[4], "c{node=n}");
	assert_int_equal(s.froms[4], 120);
	for (int i = 0; i < s.nr; i++) {
		assert_true(s.auth_ok[i]);
		assert_true(s.multipart[i]);
		assert_true(s.no_format[i]);
	}
	/* the backoff was waited */
	assert_true(s.at_ns[1] - s.at_ns[0] >= 400000000ull);
	push__free(p);
	store_stop(&s);
	unlink(tok);
}

static void push__store_refuses__dropped_not_retried(void **state)
{
	struct store s = {.script = {400, 200}, .nr_script = 2};
	char url[64], err[256];
	struct push_stats st;
	struct push *p;

	store_start(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", s.port);
	p = push__start(&(struct push_opts){.url = url, .spool_bytes = 1 << 20, .timeout_s = 5},
			err, sizeof(err));
	assert_non_null(p);
	push__enqueue(p, "a", 1, 2, blob(10), 10, 5);
	push__enqueue(p, "b", 2, 3, blob(10), 10, 6);
	push__enqueue(p, "c", 3, 4, blob(10), 10, 7);
	assert_true(wait_for(p, three_done, 5000));
	push__stop(p, 0);
	push__stats(p, &st);
	assert_int_equal(st.dropped[PUSH_DROP_REJECTED], 1);
	assert_int_equal(st.dropped_samples[PUSH_DROP_REJECTED], 5);
	assert_int_equal(st.sent, 2);
	assert_int_equal(s.nr, 3);
	push__free(p);
	store_stop(&s);
}

static bool one_retry_after(const struct push_stats *st)
{
	return st->sent == 1;
}

static void push__429_retry_after__waited(void **state)
{
	struct store s = {.script = {429, 200}, .nr_script = 2, .retry_after = "2"};
	char url[64], err[256];
	struct push *p;

	store_start(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", s.port);
	p = push__start(&(struct push_opts){.url = url, .spool_bytes = 1 << 20, .timeout_s = 5},
			err, sizeof(err));
	assert_non_null(p);
	push__enqueue(p, "a", 1, 2, blob(10), 10, 1);
	assert_true(wait_for(p, one_retry_after, 6000));
	push__stop(p, 0);
	assert_int_equal(s.nr, 2);
	/* Retry-After: 2 over the backoff's 0.5-1 s */
	assert_true(s.at_ns[1] - s.at_ns[0] >= 1900000000ull);
	push__free(p);
	store_stop(&s);
}

static void
push__store_down__oldest_dropped_past_bound_rest_kept_on_disk_then_restored(void **state)
{
	char dir[] = "/tmp/ctxprof-push-spool-XXXXXX", err[256], path[300];
	struct push_stats st;
	struct push *p;
	struct dirent *de;
	DIR *d;
	int files = 0, i;

	assert_non_null(mkdtemp(dir));
	/* port 1: refused at once */
	p = push__start(&(struct push_opts){.url = "http://127.0.0.1:1",
					    .spool_dir = dir,
					    .spool_bytes = 3000,
					    .timeout_s = 2},
			err, sizeof(err));
	assert_non_null(p);
	for (i = 0; i < 5; i++)
		push__enqueue(p, "svc{node=n}", i * 10, i * 10 + 10, blob(1000), 1000, 10 + i);
	push__stop(p, 0);
	push__stats(p, &st);
	assert_int_equal(st.queued, 5);
	assert_int_equal(st.sent, 0);
	/* 3000 bytes hold three: the two oldest made room */
	assert_int_equal(st.dropped[PUSH_DROP_SPOOL_FULL], 2);
	assert_int_equal(st.dropped_samples[PUSH_DROP_SPOOL_FULL], 10 + 11);
	assert_int_equal(st.kept, 3);
	assert_int_equal(st.kept_samples, 12 + 13 + 14);
	push__free(p);
	snprintf(path, sizeof(path), "%s/%s", dir, PUSH_SPOOL_DIR);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)))
		files += de->d_name[0] != '.';
	closedir(d);
	assert_int_equal(files, 3);
	/* a file that is not whole is removed, not sent */
	snprintf(path, sizeof(path), "%s/%s/00000000000000ff.push", dir, PUSH_SPOOL_DIR);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("ctxprof-push 1\nname=x\n", f);
	fclose(f);

	/* the next start sends them, in order */
	struct store s = {.script = {200}, .nr_script = 1};
	char url[64];

	store_start(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", s.port);
	p = push__start(
		&(struct push_opts){
			.url = url, .spool_dir = dir, .spool_bytes = 1 << 20, .timeout_s = 5},
		err, sizeof(err));
	assert_non_null(p);
	push__stats(p, &st);
	assert_int_equal(st.restored, 3);
	assert_int_equal(st.restored_samples, 12 + 13 + 14);
	assert_int_equal(st.spool_bad, 1);
	push__stop(p, 5000);
	push__stats(p, &st);
	assert_int_equal(st.sent, 3);
	assert_int_equal(s.froms[0], 20);
	assert_int_equal(s.froms[1], 30);
	assert_int_equal(s.froms[2], 40);
	push__free(p);
	store_stop(&s);
	snprintf(path, sizeof(path), "%s/%s", dir, PUSH_SPOOL_DIR);
	d = opendir(path);
	assert_non_null(d);
	files = 0;
	while ((de = readdir(d)))
		files += de->d_name[0] != '.';
	closedir(d);
	assert_int_equal(files, 0);
	rmdir(path);
	rmdir(dir);
}

static void push__stop_without_spool_dir__pending_dropped_counted(void **state)
{
	char err[256];
	struct push_stats st;
	struct push *p;

	p = push__start(&(struct push_opts){.url = "http://127.0.0.1:1",
					    .spool_bytes = 1 << 20,
					    .timeout_s = 2},
			err, sizeof(err));
	assert_non_null(p);
	push__enqueue(p, "a", 1, 2, blob(10), 10, 3);
	push__enqueue(p, "b", 2, 3, blob(10), 10, 4);
	push__stop(p, 0);
	push__enqueue(p, "late", 3, 4, blob(10), 10, 5);
	push__stats(p, &st);
	assert_int_equal(st.dropped[PUSH_DROP_STOPPING], 3);
	assert_int_equal(st.dropped_samples[PUSH_DROP_STOPPING], 12);
	assert_int_equal(st.queued_samples, 12);
	push__free(p);
}

static void push__start__bad_url_or_secret__one_clear_error(void **state)
{
	char err[256];

	assert_null(
		push__start(&(struct push_opts){.url = "http://user:pw@h/x?y"}, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_null(strstr(err, "pw"));
	assert_non_null(strstr(err, "http://h/x"));
	assert_null(push__start(
		&(struct push_opts){.url = "http://h", .token_file = "/nonexistent/token"}, err,
		sizeof(err)));
	assert_non_null(strstr(err, "--push-token-file /nonexistent/token"));
	assert_null(push__start(&(struct push_opts){.url = "http://h", .token_file = "/tmp"}, err,
				sizeof(err)));
	assert_non_null(strstr(err, "--push-token-file /tmp"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(push_redact_url__credentials_and_query__left_out),
		cmocka_unit_test(push_ingest_url__base__ingest_appended_once),
		cmocka_unit_test(push_classify__statuses__sent_retried_or_refused),
		cmocka_unit_test(push_backoff_ms__failures__doubling_jittered_capped),
		cmocka_unit_test(push_retry_after_s__seconds_or_date__capped),
		cmocka_unit_test(push_secret_parse__one_line__control_characters_refused),
		cmocka_unit_test(push_sample_type_config__types__every_one_named),
		cmocka_unit_test(push__store_fails_then_answers__every_profile_sent_in_order),
		cmocka_unit_test(push__store_refuses__dropped_not_retried),
		cmocka_unit_test(push__429_retry_after__waited),
		cmocka_unit_test(
			push__store_down__oldest_dropped_past_bound_rest_kept_on_disk_then_restored),
		cmocka_unit_test(push__stop_without_spool_dir__pending_dropped_counted),
		cmocka_unit_test(push__start__bad_url_or_secret__one_clear_error),
	};

	return cmocka_run_group_tests_name("push", tests, NULL, NULL);
}
