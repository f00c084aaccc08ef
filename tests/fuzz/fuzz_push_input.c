// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: what comes from outside into --push and
 * /debug/pprof/profile.  The first byte picks the parser, the rest is its
 * input:
 *   0  push_spool_parse()          a spool directory's file (anyone able to write there)
 *   1  push_retry_after_s()        a store's Retry-After header
 *   2  push_secret_parse()         a token or password file
 *   3  push_redact_url(), push_ingest_url()   a URL from the command line or a Secret
 *   4  scrape_request_args__add()  a scraper's query, "k=v&k=v" already split
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "export/push.h"
#include "export/scrape_queue.h"

/* @data as a NUL-terminated string (libFuzzer's buffer has no terminator) */
static char *text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static void spool(const uint8_t *data, size_t size)
{
	struct push_spool_header h;

	if (push_spool_parse(data, size, &h))
		return;
	if (h.body > size || strnlen(h.name, sizeof(h.name)) >= sizeof(h.name) || !h.name[0])
		abort();
}

static void url(const uint8_t *data, size_t size)
{
	char *s = text(data, size), out[PUSH_URL_MAX], shown[PUSH_URL_MAX];

	push_redact_url(s, shown, sizeof(shown));
	if (!push_ingest_url(s, out, sizeof(out))) {
		push_redact_url(out, shown, sizeof(shown));
		if (strchr(shown, '?') || strlen(out) >= sizeof(out))
			abort();
	}
	free(s);
}

static void query(const uint8_t *data, size_t size)
{
	struct scrape_request_args a;
	char *s = text(data, size), *kv, *save = NULL, *eq, err[256];

	scrape_request_args__init(&a);
	for (kv = strtok_r(s, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		eq = strchr(kv, '=');
		if (eq)
			*eq++ = '\0';
		if (scrape_request_args__add(&a, kv, eq, err, sizeof(err)) && strchr(err, '\n'))
			abort();
	}
	if (a.seconds < 1 || a.seconds > SCRAPE_MAX_SECONDS || a.nr_match > SCRAPE_MAX_MATCH ||
	    a.text_used > sizeof(a.text))
		abort();
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[PUSH_SECRET_MAX], *s;

	if (!size)
		return 0;
	switch (data[0] % 5) {
	case 0:
		spool(data + 1, size - 1);
		break;
	case 1:
		s = text(data + 1, size - 1);
		if (push_retry_after_s(s, 1795244405) > PUSH_RETRY_AFTER_MAX_S)
			abort();
		free(s);
		break;
	case 2:
		if (!push_secret_parse((const char *)data + 1, size - 1, out, sizeof(out)) &&
		    (strchr(out, '\n') || strchr(out, '\r')))
			abort();
		break;
	case 3:
		url(data + 1, size - 1);
		break;
	case 4:
		query(data + 1, size - 1);
		break;
	}
	return 0;
}
