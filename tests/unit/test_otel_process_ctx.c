// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The process context reader against our OTEP 4719 publisher
 * (tests/workloads/otel/otel_sdk.c, linked in: it publishes in this very
 * process), and against hand-made hostile headers and payloads.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "appctx/otel_process_ctx.h"
#include "processes/proc_maps.h"
#include "otel_sdk.h"

static int self_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

/* the OTEL_CTX mapping of this process, as a reader finds it */
static uint64_t find_header(void)
{
	struct proc_maps *pm = proc_maps__read(getpid());
	uint64_t addr = 0;
	size_t i;

	assert_non_null(pm);
	for (i = 0; i < pm->nr; i++)
		if (strstr(pm->maps[i].path, "OTEL_CTX"))
			addr = pm->maps[i].start;
	proc_maps__free(pm);
	assert_int_not_equal(addr, 0);
	return addr;
}

static const struct otel_sdk_attr res[] = {
	{"service.name", "otel-shop"},
	{"service.version", "1.2.3"},
};
static const char *const keys[] = {"http.route", "http.method", "user.tier"};

static struct otel_process_ctx *read_self(struct otel_process_ctx_header *h)
{
	struct otel_process_ctx *pc;
	void *payload;

	assert_int_equal(otel_process_ctx__read(self_read, NULL, find_header(), h, &payload), 0);
	pc = otel_process_ctx__decode(payload, h->payload_size);
	free(payload);
	assert_non_null(pc);
	return pc;
}

static void read__our_publisher__resource_schema_and_key_map(void **state)
{
	struct otel_sdk_opts o = {.schema = "tls_v1"};
	struct otel_process_ctx_header h, h2;
	struct otel_process_ctx *pc;

	assert_int_equal(otel_sdk_publish(&o, res, 2, keys, 2), 0);
	pc = read_self(&h);
	assert_int_equal(pc->nr_resource, 2);
	assert_string_equal(pc->resource[0].key, "service.name");
	assert_string_equal(pc->resource[0].value, "otel-shop");
	assert_string_equal(pc->resource[1].value, "1.2.3");
	assert_int_equal(pc->skipped, 1); /* process.pid, an integer */
	assert_true(otel_process_ctx__thread_schema_ok(pc));
	assert_int_equal(pc->nr_keys, 2);
	assert_string_equal(pc->keys[1], "http.method");
	otel_process_ctx__free(pc);

	/* an update: a new timestamp, the key map grown */
	assert_int_equal(otel_sdk_publish(&o, res, 2, keys, 3), 0);
	pc = read_self(&h2);
	assert_true(h2.published_at_ns > h.published_at_ns);
	assert_int_equal(pc->nr_keys, 3);
	assert_string_equal(pc->keys[2], "user.tier");
	otel_process_ctx__free(pc);
}

static void read__header_left_mid_update__eagain(void **state)
{
	struct otel_sdk_opts o = {.schema = "tlsdesc_v1_dev"};
	struct otel_process_ctx_header h;
	void *payload;

	assert_int_equal(otel_sdk_publish(&o, res, 1, keys, 1), 0);
	otel_sdk_hold_update();
	assert_int_equal(otel_process_ctx__read(self_read, NULL, find_header(), &h, &payload),
			 -EAGAIN);
	assert_null(payload);
	/* published again: readable, and the development schema name is accepted */
	assert_int_equal(otel_sdk_publish(&o, res, 1, keys, 1), 0);
	otel_process_ctx__free(read_self(&h));
}

/* a header in our memory whose timestamp an "update" moves during the first @races reads */
struct racing {
	struct otel_process_ctx_header h;
	uint8_t payload[8];
	int races;
};

static int racing_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct racing *r = ctx;

	memcpy(buf, (const void *)(uintptr_t)addr, len);
	if (addr == (uintptr_t)r->payload && r->races > 0) {
		r->races--;
		r->h.published_at_ns++;
	}
	return 0;
}

static void read__update_during_the_copy__read_again_then_gives_up(void **state)
{
	struct racing r = {
		.h = {.signature = "OTEL_CTX",
		      .version = 2,
		      .payload_size = 8,
		      .published_at_ns = 5},
		.races = 1,
	};
	struct otel_process_ctx_header h;
	void *payload;

	r.h.payload = (uintptr_t)r.payload;
	assert_int_equal(otel_process_ctx__read(racing_read, &r, (uintptr_t)&r.h, &h, &payload), 0);
	assert_int_equal(h.published_at_ns, 6);
	free(payload);
	r.races = OTEL_PROCESS_CTX_READ_TRIES;
	assert_int_equal(otel_process_ctx__read(racing_read, &r, (uintptr_t)&r.h, &h, &payload),
			 -EAGAIN);
}

static void check_header__each_bad_field__refused(void **state)
{
	struct otel_process_ctx_header ok = {.signature = "OTEL_CTX",
					     .version = 2,
					     .payload_size = 10,
					     .published_at_ns = 1,
					     .payload = 64};
	struct otel_process_ctx_header h;

	assert_int_equal(otel_process_ctx__check_header(&ok), 0);
	h = ok, h.signature[7] = 'x';
	assert_int_equal(otel_process_ctx__check_header(&h), -EINVAL);
	h = ok, h.version = 1;
	assert_int_equal(otel_process_ctx__check_header(&h), -EPROTONOSUPPORT);
	h = ok, h.published_at_ns = 0;
	assert_int_equal(otel_process_ctx__check_header(&h), -EAGAIN);
	h = ok, h.payload_size = 0;
	assert_int_equal(otel_process_ctx__check_header(&h), -EFBIG);
	h = ok, h.payload_size = OTEL_PROCESS_CTX_MAX_PAYLOAD + 1;
	assert_int_equal(otel_process_ctx__check_header(&h), -EFBIG);
	h = ok, h.payload = 0;
	assert_int_equal(otel_process_ctx__check_header(&h), -EFBIG);
}

/* --- hand-made payloads */
struct buf {
	uint8_t b[8192];
	size_t n;
};

static void put_varint(struct buf *w, uint64_t v)
{
	while (v >= 0x80) {
		w->b[w->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	w->b[w->n++] = (uint8_t)v;
}

static void put_bytes(struct buf *w, unsigned int field, const void *p, size_t n)
{
	put_varint(w, field << 3 | 2);
	put_varint(w, n);
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

/* KeyValue{key, AnyValue{string_value}} of @klen / @vlen bytes */
static void put_kv(struct buf *w, unsigned int field, const char *k, size_t klen, const char *v,
		   size_t vlen)
{
	struct buf kv = {.n = 0}, any = {.n = 0};

	put_bytes(&any, 1, v, vlen);
	put_bytes(&kv, 1, k, klen);
	put_bytes(&kv, 2, any.b, any.n);
	put_bytes(w, field, kv.b, kv.n);
}

static struct otel_process_ctx *decode_resource(const struct buf *resource)
{
	struct buf pc = {.n = 0};

	put_bytes(&pc, 1, resource->b, resource->n);
	return otel_process_ctx__decode(pc.b, pc.n);
}

static void decode__hostile_values__skipped_and_counted(void **state)
{
	static struct buf r;
	char name[300];
	struct otel_process_ctx *pc;
	int i;

	r.n = 0;
	put_kv(&r, 1, "service.name", 12, "a", 1);
	put_kv(&r, 1, "service.name", 12, "dup", 3); /* a duplicate: first kept */
	put_kv(&r, 1, "bad.utf8", 8, "\xc3\x28", 2); /* not UTF-8 */
	put_kv(&r, 1, "nul", 3, "a\0b", 3);	     /* a NUL inside */
	put_kv(&r, 1, "", 0, "x", 1);		     /* no key */
	put_kv(&r, 1, "threadlocal.x", 13, "y", 1);  /* never a label */
	memset(name, 'k', sizeof(name));
	put_kv(&r, 1, name, sizeof(name), "v", 1); /* key past the cap */
	pc = decode_resource(&r);
	assert_non_null(pc);
	assert_int_equal(pc->nr_resource, 1);
	assert_string_equal(pc->resource[0].value, "a");
	assert_int_equal(pc->skipped, 5);
	otel_process_ctx__free(pc);

	r.n = 0;
	for (i = 0; i < OTEL_PROCESS_CTX_MAX_RESOURCE + 10; i++) {
		int n = snprintf(name, sizeof(name), "k%d", i);

		put_kv(&r, 1, name, n, "v", 1);
	}
	pc = decode_resource(&r);
	assert_int_equal(pc->nr_resource, OTEL_PROCESS_CTX_MAX_RESOURCE);
	assert_int_equal(pc->skipped, 10);
	otel_process_ctx__free(pc);
}

static void decode__key_map_of_300_names__first_256_kept(void **state)
{
	static struct buf arr, any, kv, pc;
	struct buf item;
	struct otel_process_ctx *p;
	char name[16];
	int i, n;

	arr.n = any.n = kv.n = pc.n = 0;
	for (i = 0; i < 300; i++) {
		item.n = 0;
		n = snprintf(name, sizeof(name), "key%d", i);
		put_bytes(&item, 1, name, n);
		put_bytes(&arr, 1, item.b, item.n);
	}
	put_bytes(&any, 5, arr.b, arr.n);
	put_bytes(&kv, 1, "threadlocal.attribute_key_map", 29);
	put_bytes(&kv, 2, any.b, any.n);
	put_bytes(&pc, 2, kv.b, kv.n);
	p = otel_process_ctx__decode(pc.b, pc.n);
	assert_non_null(p);
	assert_int_equal(p->nr_keys, 256);
	assert_string_equal(p->keys[255], "key255");
	assert_int_equal(p->skipped, 44);
	assert_false(otel_process_ctx__thread_schema_ok(p)); /* no schema */
	otel_process_ctx__free(p);
}

static void decode__malformed__einval(void **state)
{
	/* resource as a varint; a KeyValue cut inside; an AnyValue string as a varint */
	static const uint8_t wire[] = {0x08, 0x01};
	static const uint8_t cut[] = {0x0a, 0x04, 0x0a, 0x05, 0x0a, 0x01};
	static const uint8_t any_varint[] = {0x0a, 0x08, 0x0a, 0x06, 0x0a,
					     0x01, 'k',	 0x12, 0x01, 0x08};

	errno = 0;
	assert_null(otel_process_ctx__decode(wire, sizeof(wire)));
	assert_int_equal(errno, EINVAL);
	assert_null(otel_process_ctx__decode(cut, sizeof(cut)));
	assert_null(otel_process_ctx__decode(any_varint, sizeof(any_varint)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(read__our_publisher__resource_schema_and_key_map),
		cmocka_unit_test(read__header_left_mid_update__eagain),
		cmocka_unit_test(read__update_during_the_copy__read_again_then_gives_up),
		cmocka_unit_test(check_header__each_bad_field__refused),
		cmocka_unit_test(decode__hostile_values__skipped_and_counted),
		cmocka_unit_test(decode__key_map_of_300_names__first_256_kept),
		cmocka_unit_test(decode__malformed__einval),
	};

	return cmocka_run_group_tests_name("otel_process_ctx", tests, NULL, NULL);
}
