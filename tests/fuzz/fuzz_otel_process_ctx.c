// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: OpenTelemetry's process context as another process
 * publishes it (OTEP 4719) and the thread record attributes it names (OTEP
 * 4947).  The input is read three ways: as a target's memory whose header
 * is at address 0 (the reading protocol, the payload pointer an offset into
 * the input); as a ProcessContext payload; and, when that decodes, as a
 * thread record's attribute bytes named by its key map.  Invariants: caps
 * held, every kept string a NUL-terminated UTF-8 label, every attribute
 * inside the input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "appctx/otel_process_ctx.h"
#include "appctx/otel_thread_ctx.h"
#include "util/utf8.h"

struct mem {
	const uint8_t *data;
	size_t size;
};

static int fuzz_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct mem *m = ctx;

	if (addr > m->size || len > m->size - addr)
		return -EFAULT;
	memcpy(buf, m->data + addr, len);
	return 0;
}

static void check_label(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max || !utf8_valid(s, n))
		abort();
}

static void check(const struct otel_process_ctx *pc, const uint8_t *data, size_t size)
{
	struct otel_thread_attr attrs[OTEL_THREAD_ATTRS_DISTINCT];
	bool truncated;
	size_t i, n;

	if (pc->nr_resource > OTEL_PROCESS_CTX_MAX_RESOURCE || pc->nr_keys > OTEL_TLS_KEY_MAP_MAX)
		abort();
	for (i = 0; i < pc->nr_resource; i++) {
		check_label(pc->resource[i].key, OTEL_PROCESS_CTX_MAX_KEY);
		check_label(pc->resource[i].value, OTEL_PROCESS_CTX_MAX_VALUE);
		if (!strncmp(pc->resource[i].key, "threadlocal.", 12))
			abort();
	}
	for (i = 0; i < pc->nr_keys; i++)
		if (pc->keys[i])
			check_label(pc->keys[i], OTEL_PROCESS_CTX_MAX_KEY);
	n = otel_thread_ctx__decode_attrs(data, size, attrs, &truncated);
	for (i = 0; i < n; i++) {
		if (attrs[i].value < data || attrs[i].value + attrs[i].len > data + size)
			abort();
		if (attrs[i].key < pc->nr_keys && pc->keys[attrs[i].key])
			check_label(pc->keys[attrs[i].key], OTEL_PROCESS_CTX_MAX_KEY);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = {data, size};
	struct otel_process_ctx_header h;
	struct otel_process_ctx *pc;
	void *payload;

	if (!otel_process_ctx__read(fuzz_read, &m, 0, &h, &payload)) {
		if (h.payload_size > OTEL_PROCESS_CTX_MAX_PAYLOAD || h.payload > size)
			abort();
		pc = otel_process_ctx__decode(payload, h.payload_size);
		if (pc)
			check(pc, data, size);
		otel_process_ctx__free(pc);
		free(payload);
	}
	pc = otel_process_ctx__decode(data, size);
	if (pc)
		check(pc, data, size);
	otel_process_ctx__free(pc);
	return 0;
}
