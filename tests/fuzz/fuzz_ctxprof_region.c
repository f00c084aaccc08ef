// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the input bytes are an application's registry region
 * (include/ctxprof_abi.h).  ctxprof_region__validate(), then slot iteration,
 * context reads and a drain of every lane must neither crash, read outside
 * the input, nor loop without bound.  The seed corpus is a real region made
 * by libctxprof (make ctxprof-corpus).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "appctx/ctxprof_region.h"

static uint64_t sink;

static void on_event(void *ctx, const struct ctxprof_slot_view *slot,
		     const struct ctxprof_span_event *ev)
{
	sink += ev->span_id ^ ev->time_ns ^ slot->tid;
}

static void on_tag(void *ctx, const struct ctxprof_slot_view *slot, uint32_t id, const char *key,
		   uint32_t key_len, const char *value, uint32_t value_len)
{
	uint32_t i;

	if (!key_len || key_len > CTXPROF_TAG_KEY_MAX || value_len > CTXPROF_TAG_VALUE_MAX)
		abort();
	/* touch every byte: ASan checks the reader handed us a buffer this long */
	for (i = 0; i < key_len; i++)
		sink += (unsigned char)key[i];
	for (i = 0; i < value_len; i++)
		sink += (unsigned char)value[i];
}

static const struct ctxprof_drain_ops ops = {.span_event = on_event, .tag = on_tag};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctxprof_region_stats st = {};
	struct ctxprof_region_geom g;
	struct ctxprof_slot_view v;
	struct ctxprof_context c;
	uint32_t cursor = 0, visited = 0;
	void *base;
	int pass;

	/* mmap gives page alignment and a writable mapping: so does this copy */
	base = aligned_alloc(4096, (size + 4095) & ~(size_t)4095 ?: 4096);
	if (!base)
		return 0;
	memcpy(base, data, size);
	if (ctxprof_region__validate(base, size, &g, NULL))
		goto out;
	if (g.region_size > size)
		abort();
	while (ctxprof_region__next_slot(base, &g, &cursor, &v, &st)) {
		if (v.index >= g.max_threads || ++visited > g.max_threads)
			abort();
		ctxprof_region__read_context(base, &g, v.index, &c);
	}
	/* twice: the first pass rewrote queue positions and states */
	for (pass = 0; pass < 2; pass++)
		ctxprof_region__drain(base, &g, 1 + pass, &ops, NULL, &st);
out:
	free(base);
	return 0;
}
