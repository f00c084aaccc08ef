// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "appctx/otel_process_ctx.h"
#include "util/protobuf_reader.h"
#include "util/utf8.h"

int otel_process_ctx__check_header(const struct otel_process_ctx_header *h)
{
	if (memcmp(h->signature, OTEL_CTX_SIGNATURE, sizeof(h->signature)))
		return -EINVAL;
	if (h->version != OTEL_CTX_VERSION)
		return -EPROTONOSUPPORT;
	if (!h->published_at_ns)
		return -EAGAIN;
	if (!h->payload_size || h->payload_size > OTEL_PROCESS_CTX_MAX_PAYLOAD || !h->payload)
		return -EFBIG;
	return 0;
}

int otel_process_ctx__read(otel_mem_read_fn read, void *ctx, uint64_t addr,
			   struct otel_process_ctx_header *hdr, void **payload)
{
	uint64_t again;
	void *buf;
	int err = -EAGAIN, i;

	*payload = NULL;
	for (i = 0; i < OTEL_PROCESS_CTX_READ_TRIES; i++) {
		err = read(ctx, addr, hdr, sizeof(*hdr));
		if (err)
			return err;
		err = otel_process_ctx__check_header(hdr);
		if (err == -EAGAIN)
			continue;
		if (err)
			return err;
		/* the protocol's barriers: our reads are system calls, in order */
		atomic_thread_fence(memory_order_seq_cst);
		buf = malloc(hdr->payload_size);
		if (!buf)
			return -ENOMEM;
		err = read(ctx, hdr->payload, buf, hdr->payload_size);
		atomic_thread_fence(memory_order_seq_cst);
		if (!err)
			err = read(ctx,
				   addr + offsetof(struct otel_process_ctx_header, published_at_ns),
				   &again, sizeof(again));
		if (!err && again == hdr->published_at_ns) {
			*payload = buf;
			return 0;
		}
		free(buf);
		/* an unreadable payload may be one freed by an update: try again */
		if (err && err != -EFAULT && err != -EIO)
			return err;
		err = -EAGAIN;
	}
	return err;
}

/* the AnyValue variants a reader uses; the others are skipped */
enum any_kind {
	ANY_NONE = 0,
	ANY_STRING,
	ANY_ARRAY,
	ANY_OTHER,
};

struct any_view {
	enum any_kind kind;
	const uint8_t *data;
	size_t len;
};

static int decode_any(const uint8_t *buf, size_t len, struct any_view *v)
{
	struct pb_reader r;
	struct pb_field f;
	int ret;

	v->kind = ANY_NONE;
	pb_reader__init(&r, buf, len);
	/* a oneof: the last variant on the wire is the value */
	while ((ret = pb_reader__next(&r, &f)) > 0) {
		if (f.number == OTEL_PB_ANY_VALUE_STRING || f.number == OTEL_PB_ANY_VALUE_ARRAY) {
			if (f.wire != PB_WIRE_LEN)
				return -EINVAL;
			v->kind = f.number == OTEL_PB_ANY_VALUE_STRING ? ANY_STRING : ANY_ARRAY;
			v->data = f.data;
			v->len = f.len;
		} else if (f.number <= 8) {
			v->kind = ANY_OTHER;
		}
	}
	return ret;
}

/* a copy of a label string, or NULL when it is not one (too long, not UTF-8) */
static char *label_string(const uint8_t *s, size_t len, size_t max, bool *nomem)
{
	char *copy;

	if (len > max || !utf8_valid(s, len))
		return NULL;
	copy = strndup((const char *)s, len);
	if (!copy)
		*nomem = true;
	/* a NUL inside is valid UTF-8 but cuts the label: refuse it */
	if (copy && strlen(copy) != len) {
		free(copy);
		return NULL;
	}
	return copy;
}

struct decoder {
	struct otel_process_ctx *pc;
	bool nomem;
	bool keys_from_attributes; /* the key map came from ProcessContext.attributes */
	bool schema_from_attributes;
};

static int decode_key_map(struct decoder *d, const struct any_view *v, bool from_attributes)
{
	struct otel_process_ctx *pc = d->pc;
	struct any_view item;
	struct pb_reader r;
	struct pb_field f;
	size_t i;
	int ret;

	/* ProcessContext.attributes is the OTEP's place: it wins over a copy in the resource */
	if (d->keys_from_attributes && !from_attributes)
		return 0;
	for (i = 0; i < pc->nr_keys; i++)
		free(pc->keys[i]);
	pc->nr_keys = 0;
	d->keys_from_attributes = from_attributes;
	if (v->kind != ANY_ARRAY) {
		pc->skipped++;
		return 0;
	}
	if (!pc->keys) {
		pc->keys = calloc(OTEL_TLS_KEY_MAP_MAX, sizeof(*pc->keys));
		if (!pc->keys) {
			d->nomem = true;
			return 0;
		}
	}
	pb_reader__init(&r, v->data, v->len);
	while ((ret = pb_reader__next(&r, &f)) > 0) {
		if (f.number != OTEL_PB_ARRAY_VALUE_VALUES)
			continue;
		if (f.wire != PB_WIRE_LEN)
			return -EINVAL;
		if (pc->nr_keys == OTEL_TLS_KEY_MAP_MAX) {
			/* a one-byte index never names it */
			pc->skipped++;
			continue;
		}
		ret = decode_any(f.data, f.len, &item);
		if (ret < 0)
			return ret;
		pc->keys[pc->nr_keys] = item.kind == ANY_STRING
						? label_string(item.data, item.len,
							       OTEL_PROCESS_CTX_MAX_KEY, &d->nomem)
						: NULL;
		if (!pc->keys[pc->nr_keys] || !pc->keys[pc->nr_keys][0])
			pc->skipped++;
		pc->nr_keys++;
	}
	return ret;
}

static void set_schema(struct decoder *d, const struct any_view *v, bool from_attributes)
{
	struct otel_process_ctx *pc = d->pc;

	if (d->schema_from_attributes && !from_attributes)
		return;
	free(pc->schema);
	pc->schema = v->kind == ANY_STRING
			     ? label_string(v->data, v->len, OTEL_PROCESS_CTX_MAX_KEY, &d->nomem)
			     : NULL;
	if (!pc->schema)
		pc->skipped++;
	d->schema_from_attributes = from_attributes;
}

static bool has_resource(const struct otel_process_ctx *pc, const uint8_t *key, size_t len)
{
	size_t i;

	for (i = 0; i < pc->nr_resource; i++)
		if (strlen(pc->resource[i].key) == len && !memcmp(pc->resource[i].key, key, len))
			return true;
	return false;
}

static void add_resource(struct decoder *d, const uint8_t *key, size_t key_len,
			 const struct any_view *v)
{
	struct otel_process_ctx *pc = d->pc;
	struct otel_resource_attr *a;

	if (v->kind != ANY_STRING || pc->nr_resource == OTEL_PROCESS_CTX_MAX_RESOURCE ||
	    has_resource(pc, key, key_len)) {
		pc->skipped++;
		return;
	}
	if (!pc->resource) {
		pc->resource = calloc(OTEL_PROCESS_CTX_MAX_RESOURCE, sizeof(*pc->resource));
		if (!pc->resource) {
			d->nomem = true;
			return;
		}
	}
	a = &pc->resource[pc->nr_resource];
	a->key = label_string(key, key_len, OTEL_PROCESS_CTX_MAX_KEY, &d->nomem);
	a->value = label_string(v->data, v->len, OTEL_PROCESS_CTX_MAX_VALUE, &d->nomem);
	if (!a->key || !a->value) {
		free(a->key);
		free(a->value);
		a->key = a->value = NULL;
		pc->skipped++;
		return;
	}
	pc->nr_resource++;
}

#define TLS_PREFIX "threadlocal."

static bool key_is(const uint8_t *key, size_t len, const char *name)
{
	return strlen(name) == len && !memcmp(key, name, len);
}

/* one KeyValue, of the resource or of ProcessContext.attributes */
static int decode_key_value(struct decoder *d, const uint8_t *buf, size_t len, bool from_attributes)
{
	const uint8_t *key = NULL;
	size_t key_len = 0;
	struct any_view v = {.kind = ANY_NONE};
	struct pb_reader r;
	struct pb_field f;
	int ret;

	pb_reader__init(&r, buf, len);
	while ((ret = pb_reader__next(&r, &f)) > 0) {
		if (f.number != OTEL_PB_KEY_VALUE_KEY && f.number != OTEL_PB_KEY_VALUE_VALUE)
			continue;
		if (f.wire != PB_WIRE_LEN)
			return -EINVAL;
		if (f.number == OTEL_PB_KEY_VALUE_KEY) {
			key = f.data;
			key_len = f.len;
		} else {
			ret = decode_any(f.data, f.len, &v);
			if (ret < 0)
				return ret;
		}
	}
	if (ret < 0)
		return ret;
	if (!key_len) {
		d->pc->skipped++;
		return 0;
	}
	if (key_is(key, key_len, OTEL_TLS_KEY_MAP_KEY))
		return decode_key_map(d, &v, from_attributes);
	if (key_is(key, key_len, OTEL_TLS_SCHEMA_KEY)) {
		set_schema(d, &v, from_attributes);
		return 0;
	}
	/* coordination data, never a label; other extra attributes are no resource */
	if (from_attributes ||
	    (key_len >= strlen(TLS_PREFIX) && !memcmp(key, TLS_PREFIX, strlen(TLS_PREFIX))))
		return 0;
	add_resource(d, key, key_len, &v);
	return 0;
}

static int decode_resource(struct decoder *d, const uint8_t *buf, size_t len)
{
	struct pb_reader r;
	struct pb_field f;
	int ret;

	pb_reader__init(&r, buf, len);
	while ((ret = pb_reader__next(&r, &f)) > 0) {
		if (f.number != OTEL_PB_RESOURCE_ATTRIBUTES)
			continue;
		if (f.wire != PB_WIRE_LEN)
			return -EINVAL;
		ret = decode_key_value(d, f.data, f.len, false);
		if (ret < 0)
			return ret;
	}
	return ret;
}

struct otel_process_ctx *otel_process_ctx__decode(const void *payload, size_t len)
{
	struct decoder d = {};
	struct pb_reader r;
	struct pb_field f;
	int ret;

	if (len > OTEL_PROCESS_CTX_MAX_PAYLOAD) {
		errno = EINVAL;
		return NULL;
	}
	d.pc = calloc(1, sizeof(*d.pc));
	if (!d.pc)
		return NULL;
	pb_reader__init(&r, payload, len);
	while ((ret = pb_reader__next(&r, &f)) > 0) {
		if (f.number != OTEL_PB_PROCESS_CONTEXT_RESOURCE &&
		    f.number != OTEL_PB_PROCESS_CONTEXT_ATTRIBUTES)
			continue;
		if (f.wire != PB_WIRE_LEN) {
			ret = -EINVAL;
			break;
		}
		ret = f.number == OTEL_PB_PROCESS_CONTEXT_RESOURCE
			      ? decode_resource(&d, f.data, f.len)
			      : decode_key_value(&d, f.data, f.len, true);
		if (ret < 0)
			break;
	}
	if (ret < 0 || d.nomem) {
		otel_process_ctx__free(d.pc);
		errno = d.nomem ? ENOMEM : EINVAL;
		return NULL;
	}
	return d.pc;
}

void otel_process_ctx__free(struct otel_process_ctx *pc)
{
	size_t i;

	if (!pc)
		return;
	for (i = 0; i < pc->nr_resource; i++) {
		free(pc->resource[i].key);
		free(pc->resource[i].value);
	}
	free(pc->resource);
	for (i = 0; i < pc->nr_keys; i++)
		free(pc->keys[i]);
	free(pc->keys);
	free(pc->schema);
	free(pc);
}

bool otel_process_ctx__thread_schema_ok(const struct otel_process_ctx *pc)
{
	return pc->schema && (!strcmp(pc->schema, OTEL_TLS_SCHEMA_V1) ||
			      !strcmp(pc->schema, OTEL_TLS_SCHEMA_V1_DEV));
}
