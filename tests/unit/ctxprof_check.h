/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ctxprof_check: the fixture and region reader libctxprof's unit tests share.
 * setup()/teardown() give every test a fresh library (ctxprof__reset());
 * region() and drain_into() read the live region as the collector does and
 * fail the calling cmocka test when it is invalid.
 */
#ifndef CTXPROF_TESTS_CTXPROF_CHECK_H
#define CTXPROF_TESTS_CTXPROF_CHECK_H

#include <stdint.h>

#include "ctxprof.h"
#include "ctxprof_abi.h"
#include "appctx/ctxprof_region.h"
#include "internal.h"

/* the token of the collector these tests play */
#define TEST_CONSUMER 0x7e57ull

#define MAX_SEEN 8192
struct seen {
	uint32_t nr_events;
	struct ctxprof_span_event ev[MAX_SEEN];
	uint32_t ev_slot[MAX_SEEN];
	uint32_t nr_tags;
	uint32_t tag_id[64];
	char tag_key[64][CTXPROF_TAG_KEY_MAX + 1];
	char tag_value[64][CTXPROF_TAG_VALUE_MAX + 1];
};

int setup(void **state);
int teardown(void **state);
/* ctxprof_init() with these sizes, which must succeed */
void init_small(uint32_t max_threads, uint32_t index_rings, uint32_t index_ring_size);
/* the live region, validated like the collector does; its geometry in *@g */
void *region(struct ctxprof_region_geom *g);
struct ctxprof_slot *slot_of(void *base, const struct ctxprof_region_geom *g, uint32_t i);
/* the span events and tag records the region drains into @s (seen_ops) */
extern const struct ctxprof_drain_ops seen_ops;
uint64_t drain_into(struct seen *s, struct ctxprof_region_stats *st);

#endif /* CTXPROF_TESTS_CTXPROF_CHECK_H */
