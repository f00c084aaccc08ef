// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What libctxprof's unit tests (test_ctxprof_context, test_ctxprof_lanes)
 * share: a fresh library per test, the live region validated and drained by
 * the collector's reader (user/appctx/ctxprof_region.c) as the collector
 * would.  Contract in ctxprof_check.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctxprof.h"
#include "ctxprof_abi.h"
#include "appctx/ctxprof_region.h"
#include "internal.h"
#include "ctxprof_check.h"

int setup(void **state)
{
	ctxprof__reset();
	return 0;
}

int teardown(void **state)
{
	ctxprof_unregister_thread();
	ctxprof__reset();
	return 0;
}

void init_small(uint32_t max_threads, uint32_t index_rings, uint32_t index_ring_size)
{
	struct ctxprof_options o = {
		.sz = sizeof(o),
		.max_threads = max_threads,
		.index_rings = index_rings,
		.index_ring_size = index_ring_size,
	};

	assert_int_equal(ctxprof_init(&o), 0);
}

/* the live region, validated like the collector does */
void *region(struct ctxprof_region_geom *g)
{
	size_t size;
	void *base = ctxprof__region(&size);
	const char *why = NULL;

	assert_non_null(base);
	if (ctxprof_region__validate(base, size, g, &why))
		fail_msg("region invalid: %s", why);
	/* one collector across the test's validations: the lanes' one consumer */
	g->consumer_token = TEST_CONSUMER;
	return base;
}

struct ctxprof_slot *slot_of(void *base, const struct ctxprof_region_geom *g, uint32_t i)
{
	return (struct ctxprof_slot *)((char *)base + ctxprof_region__slot_offset(g, i));
}

static void on_event(void *ctx, const struct ctxprof_slot_view *slot,
		     const struct ctxprof_span_event *ev)
{
	struct seen *s = ctx;

	if (s->nr_events < MAX_SEEN) {
		s->ev_slot[s->nr_events] = slot->index;
		s->ev[s->nr_events++] = *ev;
	}
}

static void on_tag(void *ctx, const struct ctxprof_slot_view *slot, uint32_t id, const char *key,
		   uint32_t key_len, const char *value, uint32_t value_len)
{
	struct seen *s = ctx;

	if (s->nr_tags < 64) {
		s->tag_id[s->nr_tags] = id;
		memcpy(s->tag_key[s->nr_tags], key, key_len);
		s->tag_key[s->nr_tags][key_len] = 0;
		memcpy(s->tag_value[s->nr_tags], value, value_len);
		s->tag_value[s->nr_tags][value_len] = 0;
		s->nr_tags++;
	}
}

const struct ctxprof_drain_ops seen_ops = {.span_event = on_event, .tag = on_tag};

uint64_t drain_into(struct seen *s, struct ctxprof_region_stats *st)
{
	struct ctxprof_region_geom g;
	void *base = region(&g);

	return ctxprof_region__drain(base, &g, ctxprof_now_ns(), &seen_ops, s, st);
}
