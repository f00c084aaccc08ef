// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/appctx/ctxprof_region.c, the collector's reader of an
 * application's registry region.  Every test corrupts a copy of a real
 * region made by libctxprof (small geometry, two threads' worth of slots,
 * span events and dictionary records submitted) and checks that the reader
 * rejects or skips exactly what was corrupted, counts it, and goes on.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctxprof.h"
#include "ctxprof_abi.h"
#include "appctx/ctxprof_region.h"
#include "internal.h"

struct fixture {
	unsigned char *copy; /* a private copy of the live region, page aligned */
	size_t size;
	struct ctxprof_region_geom g;
	uint32_t tag_a, tag_b;
};

struct tally {
	uint32_t events, tags;
	uint64_t last_span;
	char last_key[CTXPROF_TAG_KEY_MAX + 1];
};

static void on_event(void *ctx, const struct ctxprof_slot_view *slot,
		     const struct ctxprof_span_event *ev)
{
	struct tally *t = ctx;

	t->events++;
	t->last_span = ev->span_id;
}

static void on_tag(void *ctx, const struct ctxprof_slot_view *slot, uint32_t id, const char *key,
		   uint32_t key_len, const char *value, uint32_t value_len)
{
	struct tally *t = ctx;

	assert_true(key_len >= 1 && key_len <= CTXPROF_TAG_KEY_MAX);
	assert_true(value_len <= CTXPROF_TAG_VALUE_MAX);
	t->tags++;
	memcpy(t->last_key, key, key_len);
	t->last_key[key_len] = 0;
}

static const struct ctxprof_drain_ops ops = {.span_event = on_event, .tag = on_tag};

/* a region with slot 0: 3 span events (1 ring) and 2 tag records, all submitted */
static int setup(void **state)
{
	struct ctxprof_options o = {
		.sz = sizeof(o),
		.max_threads = 4,
		.index_rings = 2,
		.index_ring_size = 256,
		.detail_rings = 2,
		.detail_ring_size = CTXPROF_DETAIL_RING_MIN_SIZE,
	};
	struct fixture *f = calloc(1, sizeof(*f));
	void *live;

	ctxprof__reset();
	if (!f || ctxprof_init(&o))
		return -1;
	ctxprof_set_context(11, 12);
	f->tag_a = ctxprof_intern_tag("service", "checkout");
	f->tag_b = ctxprof_intern_tag("endpoint", "/pay");
	ctxprof_set_tag(0, f->tag_a);
	ctxprof_span_begin(11, 12);
	ctxprof_span_begin(13, 12);
	ctxprof_span_end(13);
	ctxprof_flush();
	live = ctxprof__region(&f->size);
	f->copy = aligned_alloc(4096, f->size);
	if (!live || !f->copy)
		return -1;
	memcpy(f->copy, live, f->size);
	if (ctxprof_region__validate(f->copy, f->size, &f->g, NULL))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ctxprof_unregister_thread();
	ctxprof__reset();
	free(f->copy);
	free(f);
	return 0;
}

static struct ctxprof_region_header *hdr(struct fixture *f)
{
	return (struct ctxprof_region_header *)f->copy;
}

static struct ctxprof_slot *slot0(struct fixture *f)
{
	return (struct ctxprof_slot *)(f->copy + ctxprof_region__slot_offset(&f->g, 0));
}

static unsigned char *ring(struct fixture *f, int lane, uint32_t idx)
{
	return f->copy + f->g.rings_offset + f->g.lane_rings_offset[lane] +
	       (uint64_t)idx * f->g.ring_size[lane];
}

static uint64_t drain(struct fixture *f, struct tally *t, struct ctxprof_region_stats *st)
{
	return ctxprof_region__drain(f->copy, &f->g, 1, &ops, t, st);
}

static void ctxprof_region__validate__real_region__accepted_and_drained(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_region_stats st = {};
	struct ctxprof_slot_view v;
	struct ctxprof_context c;
	struct tally t = {};
	uint32_t cursor = 0;

	assert_int_equal(f->g.max_threads, 4);
	assert_int_equal(f->g.ring_count[CTXPROF_LANE_INDEX], 2);
	assert_true(f->g.region_size == f->size);
	assert_true(f->size < 65536);
	assert_true(ctxprof_region__next_slot(f->copy, &f->g, &cursor, &v, &st));
	assert_int_equal(v.index, 0);
	assert_false(ctxprof_region__next_slot(f->copy, &f->g, &cursor, &v, &st));
	assert_int_equal(ctxprof_region__read_context(f->copy, &f->g, 0, &c), CTXPROF_CONTEXT_OK);
	assert_true(c.span_id == 11 && c.tags[0] == f->tag_a);
	assert_int_equal(ctxprof_region__read_context(f->copy, &f->g, 4, &c),
			 CTXPROF_CONTEXT_BAD_SLOT);

	assert_int_equal(drain(f, &t, &st), 5);
	assert_int_equal(t.events, 3);
	assert_int_equal(t.tags, 2);
	assert_string_equal(t.last_key, "endpoint");
	assert_int_equal(st.rings, 2);
	assert_true(hdr(f)->consumer_heartbeat_ns == 1);
	/* the rings went back: the free queues hold them */
	assert_int_equal(slot0(f)->lanes[CTXPROF_LANE_INDEX].free_tail, 1);
	assert_int_equal(slot0(f)->lanes[CTXPROF_LANE_INDEX].submit_head, 1);
	assert_true(slot0(f)->lanes[CTXPROF_LANE_INDEX].records_consumed == 3);
	/* nothing twice */
	memset(&t, 0, sizeof(t));
	assert_int_equal(drain(f, &t, &st), 0);
	assert_int_equal(st.bad_queue + st.bad_ring_index + st.bad_ring_used + st.bad_record +
				 st.unknown_record + st.free_queue_full + st.bad_slot_state,
			 0);
}

/* one header field, its corrupt value, and the check that must catch it */
struct mutation {
	const char *name;
	size_t offset;
	int width; /* 4 or 8 */
	uint64_t value;
	const char *why;
	int err;
};

#define HOFF(field) offsetof(struct ctxprof_region_header, field)
#define LOFF(lane, field)                                                                          \
	(offsetof(struct ctxprof_region_header, lanes) +                                           \
	 (lane) * sizeof(struct ctxprof_lane_geometry) +                                           \
	 offsetof(struct ctxprof_lane_geometry, field))

static const struct mutation mutations[] = {
	{"magic", HOFF(magic), 8, 0x4745524650585444ull, "magic", -EPROTO},
	{"abi_version", HOFF(abi_version), 4, 2, "abi_version", -EPROTO},
	{"header_size small", HOFF(header_size), 4, 128, "header_size", -EBADMSG},
	{"header_size big", HOFF(header_size), 4, 1 << 30, "header_size", -EBADMSG},
	{"region_size big", HOFF(region_size), 8, 1ull << 40, "region_size", -EBADMSG},
	{"region_size small", HOFF(region_size), 8, 4096, "region_size", -EBADMSG},
	{"max_threads 0", HOFF(max_threads), 4, 0, "max_threads", -EBADMSG},
	{"max_threads huge", HOFF(max_threads), 4, 0xffffffffu, "max_threads", -EBADMSG},
	{"max_threads more", HOFF(max_threads), 4, 5, "rings_offset", -EBADMSG},
	{"max_threads fewer", HOFF(max_threads), 4, 3, "rings_offset", -EBADMSG},
	{"slot_size", HOFF(slot_size), 4, 64, "slot_size", -EBADMSG},
	{"slots_offset", HOFF(slots_offset), 8, 0, "slots_offset", -EBADMSG},
	{"slots_offset past", HOFF(slots_offset), 8, 1ull << 62, "slots_offset", -EBADMSG},
	{"rings_offset", HOFF(rings_offset), 8, 256, "rings_offset", -EBADMSG},
	{"rings_offset past", HOFF(rings_offset), 8, ~0ull, "rings_offset", -EBADMSG},
	{"ring_set_size", HOFF(ring_set_size), 8, 1ull << 33, "ring_set_size", -EBADMSG},
	{"ring_set_size 0", HOFF(ring_set_size), 8, 0, "ring_set_size", -EBADMSG},
	{"index lane_offset", HOFF(lane_offset[0]), 4, 0, "lane_offset", -EBADMSG},
	{"detail lane_offset", HOFF(lane_offset[1]), 4, 600, "lane_offset", -EBADMSG},
	{"context_offset", HOFF(context_offset), 4, 8, "context_offset", -EBADMSG},
	{"lane_size", HOFF(lane_size), 4, 4096, "lane_size", -EBADMSG},
	{"index ring_count 0", LOFF(0, ring_count), 4, 0, "lane ring_count", -EBADMSG},
	{"index ring_count big", LOFF(0, ring_count), 4, CTXPROF_LANE_QUEUE_CAP + 1,
	 "lane ring_count", -EBADMSG},
	{"index ring_count other", LOFF(0, ring_count), 4, 3, "lane ring offset", -EBADMSG},
	{"index ring_size small", LOFF(0, ring_size), 4, 0, "lane ring_size", -EBADMSG},
	{"index ring_size odd", LOFF(0, ring_size), 4, 250, "lane ring_size", -EBADMSG},
	{"index ring_size huge", LOFF(0, ring_size), 4, 1u << 31, "lane ring_size", -EBADMSG},
	{"index ring_size other", LOFF(0, ring_size), 4, 512, "lane ring offset", -EBADMSG},
	{"index ring offset", LOFF(0, offset), 8, 64, "lane ring offset", -EBADMSG},
	{"detail ring_count 0", LOFF(1, ring_count), 4, 0, "lane ring_count", -EBADMSG},
	{"detail ring_count big", LOFF(1, ring_count), 4, 1000, "lane ring_count", -EBADMSG},
	{"detail ring_count other", LOFF(1, ring_count), 4, 3, "ring_set_size", -EBADMSG},
	{"detail ring_size small", LOFF(1, ring_size), 4, 1024, "lane ring_size", -EBADMSG},
	{"detail ring_size other", LOFF(1, ring_size), 4, 4096, "ring_set_size", -EBADMSG},
	{"detail ring offset", LOFF(1, offset), 8, 0, "lane ring offset", -EBADMSG},
	{"detail ring offset past", LOFF(1, offset), 8, 1ull << 50, "lane ring offset", -EBADMSG},
};

static void ctxprof_region__validate__each_corrupted_field__rejected(void **state)
{
	struct fixture *f = *state;
	unsigned char saved[sizeof(struct ctxprof_region_header)];
	struct ctxprof_region_geom g;
	size_t i;

	memcpy(saved, f->copy, sizeof(saved));
	for (i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
		const struct mutation *m = &mutations[i];
		const char *why = NULL;
		uint32_t v32 = m->value;
		int err;

		if (m->width == 8)
			memcpy(f->copy + m->offset, &m->value, 8);
		else
			memcpy(f->copy + m->offset, &v32, 4);
		err = ctxprof_region__validate(f->copy, f->size, &g, &why);
		if (err != m->err || !why || strcmp(why, m->why))
			fail_msg("%s: got %d (%s), want %d (%s)", m->name, err, why ? why : "-",
				 m->err, m->why);
		memcpy(f->copy, saved, sizeof(saved));
		assert_int_equal(ctxprof_region__validate(f->copy, f->size, &g, NULL), 0);
	}
}

static void ctxprof_region__validate__bad_mapping__rejected(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_region_geom g;
	const char *why = NULL;

	assert_int_equal(ctxprof_region__validate(NULL, f->size, &g, &why), -EINVAL);
	assert_int_equal(ctxprof_region__validate(f->copy + 8, f->size - 8, &g, &why), -EINVAL);
	assert_string_equal(why, "base");
	assert_int_equal(ctxprof_region__validate(f->copy, 100, &g, &why), -EINVAL);
	assert_string_equal(why, "mapped size");
	/* the memfd is smaller than the region claims */
	assert_int_equal(ctxprof_region__validate(f->copy, f->size - 4096, &g, &why), -EBADMSG);
	assert_string_equal(why, "region_size past the mapping");
}

static void ctxprof_region__next_slot__bad_state_and_count__skipped_and_clamped(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_region_stats st = {};
	struct ctxprof_slot_view v;
	struct tally t = {};
	uint32_t cursor = 0, n = 0;

	slot0(f)->state_gen = CTXPROF_SLOT_STATE_GEN(99, 1);
	hdr(f)->thread_count = 0xffffffffu; /* clamped to max_threads */
	while (ctxprof_region__next_slot(f->copy, &f->g, &cursor, &v, &st))
		n++;
	assert_int_equal(n, 0);
	assert_int_equal(st.bad_slot_state, 1);
	assert_int_equal(cursor, 4);
	assert_int_equal(drain(f, &t, &st), 0);
	assert_int_equal(t.events + t.tags, 0);
}

static void ctxprof_region__drain__queue_positions_out_of_range__resynchronised(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_lane *lane = &slot0(f)->lanes[CTXPROF_LANE_INDEX];
	struct ctxprof_region_stats st = {};
	struct tally t = {};

	/* a submit queue claiming 1000 entries: nothing read, head jumps to tail */
	lane->submit_tail = lane->submit_head + 1000;
	drain(f, &t, &st);
	assert_int_equal(st.bad_queue, 1);
	assert_int_equal(t.events, 0);
	assert_int_equal(t.tags, 2); /* the other lane is fine */
	assert_int_equal(lane->submit_head, lane->submit_tail);
	assert_true(lane->records_malformed == 1);
	/* tail behind head wraps to a huge count: the same */
	lane->submit_tail = lane->submit_head - 1;
	drain(f, &t, &st);
	assert_int_equal(st.bad_queue, 2);
	assert_int_equal(t.events, 0);
}

static void ctxprof_region__drain__ring_index_out_of_range__skipped(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_lane *lane = &slot0(f)->lanes[CTXPROF_LANE_INDEX];
	struct ctxprof_region_stats st = {};
	struct tally t = {};

	lane->submit_queue[lane->submit_head % CTXPROF_LANE_QUEUE_CAP] = 2; /* 2 rings: 0, 1 */
	drain(f, &t, &st);
	assert_int_equal(st.bad_ring_index, 1);
	assert_int_equal(t.events, 0);
	assert_int_equal(lane->free_tail, 0); /* no such ring to give back */
	assert_int_equal(lane->submit_head, lane->submit_tail);

	lane->submit_queue[lane->submit_head % CTXPROF_LANE_QUEUE_CAP] = 0xffffffffu;
	lane->submit_tail++;
	drain(f, &t, &st);
	assert_int_equal(st.bad_ring_index, 2);
}

static void ctxprof_region__drain__ring_used_past_the_ring__skipped(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_lane *lane = &slot0(f)->lanes[CTXPROF_LANE_DETAIL];
	uint32_t idx = lane->submit_queue[lane->submit_head % CTXPROF_LANE_QUEUE_CAP];
	struct ctxprof_ring_header *rh = (void *)ring(f, CTXPROF_LANE_DETAIL, idx);
	struct ctxprof_region_stats st = {};
	struct tally t = {};

	rh->used = f->g.ring_size[CTXPROF_LANE_DETAIL]; /* the header makes it 8 too many */
	drain(f, &t, &st);
	assert_int_equal(st.bad_ring_used, 1);
	assert_int_equal(t.tags, 0);
	assert_int_equal(t.events, 3);
	/* the ring still goes back: it is a real ring */
	assert_int_equal(lane->free_tail, 1);
}

static void ctxprof_region__drain__bad_span_events__skipped_others_delivered(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_lane *lane = &slot0(f)->lanes[CTXPROF_LANE_INDEX];
	uint32_t idx = lane->submit_queue[lane->submit_head % CTXPROF_LANE_QUEUE_CAP];
	unsigned char *r = ring(f, CTXPROF_LANE_INDEX, idx);
	struct ctxprof_ring_header *rh = (void *)r;
	struct ctxprof_span_event *ev = (void *)(r + sizeof(*rh));
	struct ctxprof_region_stats st = {};
	struct tally t = {};

	assert_int_equal(rh->used, 3 * CTXPROF_SPAN_EVENT_SIZE);
	ev[0].type = 77;
	ev[1].size = 8;
	rh->used += 5; /* not a multiple of the event size */
	drain(f, &t, &st);
	assert_int_equal(st.bad_record, 3);
	assert_int_equal(t.events, 1);
	assert_true(t.last_span == 13);
}

static void ctxprof_region__drain__record_length_past_the_ring__rest_skipped(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_lane *lane = &slot0(f)->lanes[CTXPROF_LANE_DETAIL];
	uint32_t idx = lane->submit_queue[lane->submit_head % CTXPROF_LANE_QUEUE_CAP];
	unsigned char *r = ring(f, CTXPROF_LANE_DETAIL, idx);
	struct ctxprof_ring_header *rh = (void *)r;
	struct ctxprof_tag_record *rec = (void *)(r + sizeof(*rh));
	unsigned char saved[CTXPROF_DETAIL_RING_MIN_SIZE];
	struct ctxprof_region_stats st;
	struct ctxprof_lane saved_lane;
	struct tally t;
	int i;
	/* each corruption of the first record, and how many tags still arrive */
	static const struct {
		uint32_t size;
		uint16_t key_len, value_len, type;
		uint32_t tag_id;
		uint32_t tags, bad, unknown; /* expected */
	} cases[] = {
		/* a bad size loses the way to the next record: the rest is skipped */
		{1u << 20, 7, 8, CTXPROF_RECORD_TAG, 1, 0, 1, 0}, /* size past used */
		{12, 7, 8, CTXPROF_RECORD_TAG, 1, 0, 1, 0},	  /* size below a header */
		{41, 7, 8, CTXPROF_RECORD_TAG, 1, 0, 1, 0},	  /* size not 8-aligned */
		{0, 7, 8, CTXPROF_RECORD_TAG, 1, 0, 1, 0},	  /* size 0: no progress */
		/* a bad field inside a well-sized record loses that record only */
		{40, 200, 8, CTXPROF_RECORD_TAG, 1, 1, 1, 0},  /* key past the record */
		{40, 7, 2000, CTXPROF_RECORD_TAG, 1, 1, 1, 0}, /* value past the record */
		{40, 0, 8, CTXPROF_RECORD_TAG, 1, 1, 1, 0},    /* empty key */
		{40, 7, 8, CTXPROF_RECORD_TAG, 0, 1, 1, 0},    /* tag id 0 */
		{40, 7, 8, 9, 1, 1, 0, 1},		       /* unknown type: skipped */
		/* too short for a tag; the "next record" is its body: size 0x80007 */
		{16, 7, 8, CTXPROF_RECORD_TAG, 1, 0, 2, 0},
	};

	assert_int_equal(rec->hdr.size, 40); /* "service" + "checkout" */
	memcpy(saved, r, sizeof(saved));
	saved_lane = *lane;
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		memcpy(r, saved, sizeof(saved));
		*lane = saved_lane;
		memset(&st, 0, sizeof(st));
		memset(&t, 0, sizeof(t));
		rec->hdr.size = cases[i].size;
		rec->hdr.type = cases[i].type;
		rec->key_len = cases[i].key_len;
		rec->value_len = cases[i].value_len;
		rec->tag_id = cases[i].tag_id;
		drain(f, &t, &st);
		if (t.tags != cases[i].tags || st.bad_record != cases[i].bad ||
		    st.unknown_record != cases[i].unknown)
			fail_msg("case %d: tags %u bad %lu unknown %lu", i, t.tags,
				 (unsigned long)st.bad_record, (unsigned long)st.unknown_record);
		if (t.tags)
			assert_string_equal(t.last_key, "endpoint");
	}
}

static void ctxprof_region__drain__free_queue_full__ring_kept_counted(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_lane *lane = &slot0(f)->lanes[CTXPROF_LANE_INDEX];
	struct ctxprof_region_stats st = {};
	struct tally t = {};

	/* the app claims it has taken nothing while we gave back 16 */
	lane->free_tail = lane->free_head + CTXPROF_LANE_QUEUE_CAP;
	drain(f, &t, &st);
	assert_int_equal(t.events, 3);
	assert_int_equal(st.free_queue_full, 1);
	assert_int_equal(lane->submit_head, lane->submit_tail);
}

static void ctxprof_region__drain__draining_slot__retired_once_empty(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_region_stats st = {};
	struct tally t = {};

	slot0(f)->state_gen = CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_DRAINING, 1);
	drain(f, &t, &st);
	assert_int_equal(t.events, 3);
	assert_int_equal(CTXPROF_SLOT_STATE(slot0(f)->state_gen), CTXPROF_SLOT_INACTIVE);
	assert_int_equal(st.slots_retired, 1);
	/* Inactive slots are not visited */
	memset(&st, 0, sizeof(st));
	drain(f, &t, &st);
	assert_int_equal(st.slots_seen, 0);
}

/* a second collector on the same region: its own geometry copy, its own token */
static struct ctxprof_region_geom other_consumer(const struct fixture *f)
{
	struct ctxprof_region_geom g = f->g;

	g.consumer_token = f->g.consumer_token + 1;
	return g;
}

static void ctxprof_region__drain__second_consumer__refused_until_the_first_goes_stale(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_region_geom b = other_consumer(f);
	struct ctxprof_region_stats st = {}, st_b = {};
	struct tally t = {}, t_b = {};
	uint64_t later = 1 + CTXPROF_CONSUMER_STALE_NS + 1;

	assert_true(f->g.consumer_token != 0);
	assert_int_equal(drain(f, &t, &st), 5);
	assert_true(hdr(f)->consumer_owner == f->g.consumer_token);
	/* the first one is alive (heartbeat 1): the second writes nothing */
	assert_int_equal(ctxprof_region__drain(f->copy, &b, 2, &ops, &t_b, &st_b), 0);
	assert_int_equal(st_b.consumer_refused, 1);
	assert_int_equal(st_b.slots_seen, 0);
	assert_true(hdr(f)->consumer_heartbeat_ns == 1);
	/* silent for longer than CTXPROF_CONSUMER_STALE_NS: taken over */
	ctxprof_region__drain(f->copy, &b, later, &ops, &t_b, &st_b);
	assert_int_equal(st_b.consumer_takeovers, 1);
	assert_true(hdr(f)->consumer_owner == b.consumer_token);
	assert_true(hdr(f)->consumer_heartbeat_ns == later);
	/* and the first one, back, is refused in turn */
	memset(&st, 0, sizeof(st));
	assert_int_equal(ctxprof_region__drain(f->copy, &f->g, later, &ops, &t, &st), 0);
	assert_int_equal(st.consumer_refused, 1);
	assert_true(hdr(f)->consumer_heartbeat_ns == later);
}

/* a collector that exits gives the lanes up: its successor drains at once */
static void ctxprof_region__release__next_consumer_drains_at_once(void **state)
{
	struct fixture *f = *state;
	struct ctxprof_region_geom b = other_consumer(f);
	struct ctxprof_region_stats st = {}, st_b = {};
	struct tally t = {}, t_b = {};

	assert_int_equal(drain(f, &t, &st), 5);
	/* another's release changes nothing: only the holder's token frees them */
	ctxprof_region__release(f->copy, &b);
	assert_true(hdr(f)->consumer_owner == f->g.consumer_token);
	ctxprof_region__release(f->copy, &f->g);
	assert_true(hdr(f)->consumer_owner == 0);
	/* the heartbeat is fresh (1), yet the successor is not refused */
	ctxprof_region__drain(f->copy, &b, 2, &ops, &t_b, &st_b);
	assert_int_equal(st_b.consumer_refused, 0);
	assert_int_equal(st_b.consumer_takeovers, 0);
	assert_true(hdr(f)->consumer_owner == b.consumer_token);
}

struct stale {
	struct fixture *f;
	struct ctxprof_region_geom b;
	struct ctxprof_region_stats st_b;
	struct tally t, t_b;
	bool taken;
};

/* the first consumer's callback: it stalls here, and meanwhile a second takes the lanes over */
static void on_event_stalled(void *ctx, const struct ctxprof_slot_view *slot,
			     const struct ctxprof_span_event *ev)
{
	struct stale *x = ctx;

	on_event(&x->t, slot, ev);
	if (x->taken)
		return;
	x->taken = true;
	ctxprof_region__drain(x->f->copy, &x->b, 1 + CTXPROF_CONSUMER_STALE_NS + 1, &ops, &x->t_b,
			      &x->st_b);
}

/*
 * The single-writer rule across consumers: a consumer whose lanes were
 * taken over while it parsed a ring (stopped, descheduled for longer than
 * CTXPROF_CONSUMER_STALE_NS) must not give that ring back, advance the
 * queue or bump the counters the new consumer already did.
 */
static void ctxprof_region__drain__taken_over_mid_pass__stale_consumer_writes_nothing(void **state)
{
	struct fixture *f = *state;
	struct stale x = {.f = f, .b = other_consumer(f)};
	static const struct ctxprof_drain_ops stalled_ops = {.span_event = on_event_stalled};
	struct ctxprof_lane *lane = &slot0(f)->lanes[CTXPROF_LANE_INDEX];
	struct ctxprof_region_stats st = {};

	ctxprof_region__drain(f->copy, &f->g, 1, &stalled_ops, &x, &st);
	assert_true(x.taken);
	assert_int_equal(x.st_b.consumer_takeovers, 1);
	/* the new consumer drained the index ring once and gave it back once */
	assert_int_equal(x.t_b.events, 3);
	assert_int_equal(lane->submit_head, 1);
	assert_int_equal(lane->free_tail, 1);
	assert_true(lane->rings_consumed == 1);
	assert_true(lane->records_consumed == 3);
	/* the stale one noticed before writing, and wrote nothing after */
	assert_int_equal(st.consumer_lost, 1);
	assert_true(hdr(f)->consumer_owner == x.b.consumer_token);
	assert_true(hdr(f)->consumer_heartbeat_ns == 1 + CTXPROF_CONSUMER_STALE_NS + 1);
	/* the detail lane, which it had not reached, is the new consumer's alone */
	assert_int_equal(slot0(f)->lanes[CTXPROF_LANE_DETAIL].free_tail, 1);
	assert_int_equal(x.t_b.tags, 2);
	assert_int_equal(x.t.tags, 0);
}

/* random bytes anywhere in the lanes and rings: counted, never a crash or a hang */
static void ctxprof_region__drain__random_corruption__bounded(void **state)
{
	struct fixture *f = *state;
	unsigned char *orig = malloc(f->size);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct ctxprof_region_stats st;
	size_t from = ctxprof_region__slot_offset(&f->g, 0) + 64; /* past the context */
	int round, i;

	assert_non_null(orig);
	memcpy(orig, f->copy, f->size);
	for (round = 0; round < 3000; round++) {
		struct tally t = {};

		memcpy(f->copy, orig, f->size);
		for (i = 0; i < 1 + round % 16; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			f->copy[from + x % (f->size - from)] = x >> 56;
		}
		hdr(f)->thread_count = 1 + (x >> 40) % 8;
		memset(&st, 0, sizeof(st));
		drain(f, &t, &st);
		/* every slot, a full queue of full rings: the most one pass can deliver */
		assert_true(t.events <= f->g.max_threads * CTXPROF_LANE_QUEUE_CAP *
						(256 - sizeof(struct ctxprof_ring_header)) /
						CTXPROF_SPAN_EVENT_SIZE);
	}
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(ctxprof_region__validate__real_region__accepted_and_drained),
		T(ctxprof_region__validate__each_corrupted_field__rejected),
		T(ctxprof_region__validate__bad_mapping__rejected),
		T(ctxprof_region__next_slot__bad_state_and_count__skipped_and_clamped),
		T(ctxprof_region__drain__queue_positions_out_of_range__resynchronised),
		T(ctxprof_region__drain__ring_index_out_of_range__skipped),
		T(ctxprof_region__drain__ring_used_past_the_ring__skipped),
		T(ctxprof_region__drain__bad_span_events__skipped_others_delivered),
		T(ctxprof_region__drain__record_length_past_the_ring__rest_skipped),
		T(ctxprof_region__drain__free_queue_full__ring_kept_counted),
		T(ctxprof_region__drain__draining_slot__retired_once_empty),
		T(ctxprof_region__drain__random_corruption__bounded),
		T(ctxprof_region__drain__second_consumer__refused_until_the_first_goes_stale),
		T(ctxprof_region__release__next_consumer_drains_at_once),
		T(ctxprof_region__drain__taken_over_mid_pass__stale_consumer_writes_nothing),
#undef T
	};

	return cmocka_run_group_tests_name("ctxprof_region", tests, NULL, NULL);
}
