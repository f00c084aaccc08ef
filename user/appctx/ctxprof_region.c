// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ctxprof_region - the collector's side of an application's registry region.
 *
 * The application may change any byte while we read.  Rules kept here:
 *  - a value that decides an address or a loop bound is loaded once (an
 *    atomic load: the compiler may not load it again after the check) and
 *    checked, and only the checked copy is used;
 *  - records are copied out of the ring before they are checked, so a
 *    callback never sees bytes that change under it;
 *  - every loop is bounded by the validated geometry, whatever the region says.
 * Shared fields are accessed with C11 atomics on the ABI's plain integers,
 * as in the library.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "appctx/ctxprof_region.h"
#include "util/hash.h"

#define ld32(p, mo)	 atomic_load_explicit((_Atomic __u32 *)(p), memory_order_##mo)
#define ld64(p, mo)	 atomic_load_explicit((_Atomic __u64 *)(p), memory_order_##mo)
#define st32(p, v, mo)	 atomic_store_explicit((_Atomic __u32 *)(p), (v), memory_order_##mo)
#define st64(p, v, mo)	 atomic_store_explicit((_Atomic __u64 *)(p), (v), memory_order_##mo)
#define count(st, field) ((st) ? (void)(st)->field++ : (void)0)

static int fail(const char **why, const char *msg, int err)
{
	if (why)
		*why = msg;
	return err;
}

static int check_lane(const struct ctxprof_lane_geometry *lg, __u32 min_size, __u64 offset,
		      const char **why)
{
	if (!lg->ring_count || lg->ring_count > CTXPROF_LANE_QUEUE_CAP)
		return fail(why, "lane ring_count", -EBADMSG);
	if (lg->ring_size < min_size || lg->ring_size > CTXPROF_RING_MAX_SIZE || lg->ring_size % 64)
		return fail(why, "lane ring_size", -EBADMSG);
	if (lg->offset != offset)
		return fail(why, "lane ring offset", -EBADMSG);
	return 0;
}

/*
 * A token no other consumer holds: this process's address space layout
 * (randomised), the mapping, the time (vDSO, no syscall) and a count of the
 * calls here, hashed.  Two collectors would need all four equal.
 */
static uint64_t consumer_token(const void *base)
{
	static _Atomic uint64_t calls;
	struct timespec ts;
	uint64_t h;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	h = hash_combine(hash_u64((uintptr_t)&calls), (uintptr_t)base);
	h = hash_combine(h, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
	h = hash_combine(h, atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed));
	return h ? h : 1;
}

int ctxprof_region__validate(const void *base, size_t size, struct ctxprof_region_geom *geom,
			     const char **why)
{
	const struct ctxprof_lane_geometry *li, *ld;
	union {
		struct ctxprof_region_header h;
		__u64 words[sizeof(struct ctxprof_region_header) / sizeof(__u64)];
	} copy;
	struct ctxprof_region_header *hp = &copy.h;
	__u64 ring_set;
	size_t i;
	int err, l;

	if (!base || (uintptr_t)base % 64)
		return fail(why, "base", -EINVAL);
	if (size < sizeof(copy))
		return fail(why, "mapped size", -EINVAL);
	/* acquire: pairs with the library's release of magic, written last */
	copy.words[0] = ld64(base, acquire);
	if (hp->magic != CTXPROF_REGION_MAGIC)
		return fail(why, "magic", -EPROTO);
	/*
	 * One copy; only the copy is checked and used.  Word by word with
	 * atomic loads: the library updates the counters in the same header.
	 */
	for (i = 1; i < sizeof(copy.words) / sizeof(copy.words[0]); i++)
		copy.words[i] = ld64((const __u64 *)base + i, relaxed);
	if (hp->abi_version != CTXPROF_ABI_VERSION)
		return fail(why, "abi_version", -EPROTO);
	if (hp->header_size != sizeof(*hp))
		return fail(why, "header_size", -EBADMSG);
	if (!hp->max_threads || hp->max_threads > CTXPROF_MAX_THREADS_LIMIT)
		return fail(why, "max_threads", -EBADMSG);
	if (hp->slot_size != sizeof(struct ctxprof_slot))
		return fail(why, "slot_size", -EBADMSG);
	if (hp->context_offset != 0)
		return fail(why, "context_offset", -EBADMSG);
	if (hp->lane_size != sizeof(struct ctxprof_lane))
		return fail(why, "lane_size", -EBADMSG);
	for (l = 0; l < CTXPROF_NR_LANES; l++)
		if (hp->lane_offset[l] != CTXPROF_LANE_OFFSET(l))
			return fail(why, "lane_offset", -EBADMSG);
	if (hp->slots_offset != CTXPROF_SLOTS_OFFSET)
		return fail(why, "slots_offset", -EBADMSG);
	li = &hp->lanes[CTXPROF_LANE_INDEX];
	ld = &hp->lanes[CTXPROF_LANE_DETAIL];
	err = check_lane(li, CTXPROF_INDEX_RING_MIN_SIZE, 0, why);
	if (err)
		return err;
	/* the counts and sizes are in range now, so none of this overflows */
	err = check_lane(ld, CTXPROF_DETAIL_RING_MIN_SIZE, (__u64)li->ring_count * li->ring_size,
			 why);
	if (err)
		return err;
	ring_set =
		ctxprof_ring_set_size(li->ring_count, li->ring_size, ld->ring_count, ld->ring_size);
	if (hp->ring_set_size != ring_set)
		return fail(why, "ring_set_size", -EBADMSG);
	if (hp->rings_offset != ctxprof_rings_offset(hp->max_threads))
		return fail(why, "rings_offset", -EBADMSG);
	if (hp->region_size != ctxprof_region_size(hp->max_threads, ring_set))
		return fail(why, "region_size", -EBADMSG);
	if (hp->region_size > size)
		return fail(why, "region_size past the mapping", -EBADMSG);

	memset(geom, 0, sizeof(*geom));
	geom->region_size = hp->region_size;
	geom->slots_offset = hp->slots_offset;
	geom->rings_offset = hp->rings_offset;
	geom->ring_set_size = ring_set;
	geom->max_threads = hp->max_threads;
	geom->slot_size = hp->slot_size;
	geom->owner_pid = hp->owner_pid;
	for (l = 0; l < CTXPROF_NR_LANES; l++) {
		geom->ring_count[l] = hp->lanes[l].ring_count;
		geom->ring_size[l] = hp->lanes[l].ring_size;
		geom->lane_rings_offset[l] = hp->lanes[l].offset;
		geom->lane_offset[l] = hp->lane_offset[l];
	}
	geom->consumer_token = consumer_token(base);
	return 0;
}

static struct ctxprof_slot *slot_at(const void *base, const struct ctxprof_region_geom *g,
				    __u32 index)
{
	return (struct ctxprof_slot *)((char *)base + ctxprof_region__slot_offset(g, index));
}

static __u32 slot_limit(const void *base, const struct ctxprof_region_geom *g)
{
	const struct ctxprof_region_header *h = base;
	__u32 n = ld32(&h->thread_count, acquire);

	return n < g->max_threads ? n : g->max_threads;
}

bool ctxprof_region__next_slot(const void *base, const struct ctxprof_region_geom *g,
			       uint32_t *cursor, struct ctxprof_slot_view *v,
			       struct ctxprof_region_stats *st)
{
	__u32 n = slot_limit(base, g);

	for (; *cursor < n; (*cursor)++) {
		struct ctxprof_slot *s = slot_at(base, g, *cursor);
		/* acquire: pairs with the library's release of Active */
		__u64 w = ld64(&s->state_gen, acquire);
		__u32 state = CTXPROF_SLOT_STATE(w);

		if (state > CTXPROF_SLOT_INACTIVE)
			count(st, bad_slot_state);
		if (state != CTXPROF_SLOT_ACTIVE && state != CTXPROF_SLOT_DRAINING)
			continue;
		v->index = *cursor;
		v->state = state;
		v->tid = ld32(&s->tid, relaxed);
		v->generation = CTXPROF_SLOT_GENERATION(w);
		v->offset = ctxprof_region__slot_offset(g, *cursor);
		v->events_generated = ld64(&s->events_generated, relaxed);
		v->events_refused = ld64(&s->events_refused, relaxed);
		(*cursor)++;
		return true;
	}
	return false;
}

int ctxprof_region__read_context(const void *base, const struct ctxprof_region_geom *g,
				 uint32_t index, struct ctxprof_context *out)
{
	struct ctxprof_context *c;
	int i;

	memset(out, 0, sizeof(*out));
	if (index >= g->max_threads)
		return CTXPROF_CONTEXT_BAD_SLOT;
	c = &slot_at(base, g, index)->context;
	/* the slot's reader: checksum first (acquire: the fields are not read before it) */
	out->checksum = ld64(&c->checksum, acquire);
	out->span_id = ld64(&c->span_id, relaxed);
	out->local_root_span_id = ld64(&c->local_root_span_id, relaxed);
	for (i = 0; i < CTXPROF_MAX_TAGS; i++)
		out->tags[i] = ld32(&c->tags[i], relaxed);
	if (!out->checksum)
		return CTXPROF_CONTEXT_EMPTY;
	if (out->checksum != ctxprof_context_checksum(out->span_id, out->local_root_span_id))
		return CTXPROF_CONTEXT_TORN;
	return CTXPROF_CONTEXT_OK;
}

/* ------------------------------------------------------------------------ */
/* lanes, consumer side                                                       */

struct drain_call {
	const struct ctxprof_drain_ops *ops;
	void *ctx;
	struct ctxprof_region_stats *st;
	struct ctxprof_region_header *hdr;
	uint64_t token;
	const struct ctxprof_slot_view *slot;
	struct ctxprof_lane *lane;
	__u64 delivered;
	__u64 malformed;
	bool lost; /* the lanes were taken from us: write nothing more */
};

static void parse_index_ring(struct drain_call *dc, const unsigned char *data, __u32 used)
{
	struct ctxprof_span_event ev;
	__u32 off;

	if (used % CTXPROF_SPAN_EVENT_SIZE) {
		count(dc->st, bad_record);
		dc->malformed++;
		used -= used % CTXPROF_SPAN_EVENT_SIZE;
	}
	for (off = 0; off < used; off += CTXPROF_SPAN_EVENT_SIZE) {
		memcpy(&ev, data + off, sizeof(ev));
		if ((ev.type != CTXPROF_EVENT_SPAN_BEGIN && ev.type != CTXPROF_EVENT_SPAN_END) ||
		    ev.size != CTXPROF_SPAN_EVENT_SIZE) {
			count(dc->st, bad_record);
			dc->malformed++;
			continue;
		}
		count(dc->st, span_events);
		dc->delivered++;
		if (dc->ops && dc->ops->span_event)
			dc->ops->span_event(dc->ctx, dc->slot, &ev);
	}
}

static bool tag_record_ok(const struct ctxprof_tag_record *r, __u32 size)
{
	return r->tag_id && r->key_len && r->key_len <= CTXPROF_TAG_KEY_MAX &&
	       r->value_len <= CTXPROF_TAG_VALUE_MAX &&
	       sizeof(*r) + r->key_len + r->value_len <= size;
}

static void parse_detail_ring(struct drain_call *dc, const unsigned char *data, __u32 used)
{
	/* room for the largest valid record, 8-aligned for the struct view */
	union {
		struct ctxprof_tag_record r;
		unsigned char bytes[CTXPROF_TAG_RECORD_MAX];
	} buf;
	struct ctxprof_record_header rh;
	__u32 off = 0;

	/* each step consumes at least sizeof(rh) bytes: bounded by used */
	while (used - off >= sizeof(rh)) {
		memcpy(&rh, data + off, sizeof(rh));
		if (rh.size < sizeof(rh) || rh.size % CTXPROF_RECORD_ALIGN ||
		    rh.size > used - off) {
			/* no way to find the next record: give up on this ring */
			count(dc->st, bad_record);
			dc->malformed++;
			return;
		}
		if (rh.type != CTXPROF_RECORD_TAG) {
			count(dc->st, unknown_record);
		} else if (rh.size < sizeof(buf.r) || rh.size > sizeof(buf)) {
			count(dc->st, bad_record);
			dc->malformed++;
		} else {
			memcpy(buf.bytes, data + off, rh.size);
			if (!tag_record_ok(&buf.r, rh.size)) {
				count(dc->st, bad_record);
				dc->malformed++;
			} else {
				const char *key = (const char *)(&buf.r + 1);

				count(dc->st, tag_records);
				dc->delivered++;
				if (dc->ops && dc->ops->tag)
					dc->ops->tag(dc->ctx, dc->slot, buf.r.tag_id, key,
						     buf.r.key_len, key + buf.r.key_len,
						     buf.r.value_len);
			}
		}
		off += rh.size;
	}
	if (off != used) {
		count(dc->st, bad_record);
		dc->malformed++;
	}
}

/* give ring @idx back on the free queue; false when the queue is (claimed) full */
static bool give_back(struct drain_call *dc, __u32 idx)
{
	struct ctxprof_lane *lane = dc->lane;
	__u32 tail = ld32(&lane->free_tail, relaxed);
	/* acquire: the producer has read the entries it took before we overwrite them */
	__u32 head = ld32(&lane->free_head, acquire);

	if (tail - head >= CTXPROF_LANE_QUEUE_CAP) {
		count(dc->st, free_queue_full);
		return false;
	}
	st32(&lane->free_queue[tail % CTXPROF_LANE_QUEUE_CAP], idx, relaxed);
	/* release: the entry, and our reads of the ring, come before the producer reuses it */
	st32(&lane->free_tail, tail + 1, release);
	return true;
}

/* the slot went through a recycle since @v was taken (or is in one) */
static bool slot_changed(const struct ctxprof_slot *s, const struct ctxprof_slot_view *v)
{
	__u64 w = ld64(&s->state_gen, relaxed);
	__u32 state = CTXPROF_SLOT_STATE(w);

	return CTXPROF_SLOT_GENERATION(w) != v->generation ||
	       (state != CTXPROF_SLOT_ACTIVE && state != CTXPROF_SLOT_DRAINING);
}

/*
 * Whether we still hold the lanes, just before a write to them.  A
 * compare-and-swap of the token with itself, not a load: a read-modify-write
 * reads the last value in the word's modification order, so a takeover that
 * happened before it is never missed.
 */
static bool still_owner(struct drain_call *dc)
{
	__u64 expect = dc->token;

	if (dc->lost)
		return false;
	if (!atomic_compare_exchange_strong_explicit((_Atomic __u64 *)&dc->hdr->consumer_owner,
						     &expect, dc->token, memory_order_acq_rel,
						     memory_order_acquire)) {
		dc->lost = true;
		count(dc->st, consumer_lost);
	}
	return !dc->lost;
}

/* the lane's consumer counters, then (release, last) the submit queue's head */
static void advance(struct drain_call *dc, __u32 head)
{
	struct ctxprof_lane *lane = dc->lane;

	if (dc->delivered)
		st64(&lane->records_consumed,
		     ld64(&lane->records_consumed, relaxed) + dc->delivered, relaxed);
	if (dc->malformed)
		st64(&lane->records_malformed,
		     ld64(&lane->records_malformed, relaxed) + dc->malformed, relaxed);
	dc->delivered = 0;
	dc->malformed = 0;
	/* last: "submit_head == submit_tail" tells the producer all is given back */
	st32(&lane->submit_head, head, release);
}

/* returns the records delivered */
static __u64 drain_lane(void *base, const struct ctxprof_region_geom *g, struct drain_call *dc,
			const struct ctxprof_slot *s, int lane_id)
{
	struct ctxprof_lane *lane = dc->lane;
	const unsigned char *rings;
	__u32 head, tail, n, ring_size = g->ring_size[lane_id];
	__u64 total = 0;

	rings = (unsigned char *)base + g->rings_offset +
		(__u64)dc->slot->index * g->ring_set_size + g->lane_rings_offset[lane_id];
	/*
	 * acquire both: tail pairs with the producer's release (entries and
	 * rings complete); and if either is a new thread's reset value, the
	 * check below sees its new generation, so a queue in the middle of a
	 * reset is never mistaken for a corrupt one.
	 */
	head = ld32(&lane->submit_head, acquire);
	tail = ld32(&lane->submit_tail, acquire);
	if (slot_changed(s, dc->slot))
		return 0; /* next pass, with the new owner's view */
	n = tail - head;
	if (n > CTXPROF_LANE_QUEUE_CAP) {
		/* nonsense positions: resynchronise, losing whatever was there */
		count(dc->st, bad_queue);
		dc->malformed++;
		if (still_owner(dc))
			advance(dc, tail);
		return 0;
	}
	while (n--) {
		__u32 idx = ld32(&lane->submit_queue[head % CTXPROF_LANE_QUEUE_CAP], relaxed);
		bool parsed = false;

		/* a consumer that lost the lanes does not even read their rings */
		if (!still_owner(dc))
			break;

		if (idx >= g->ring_count[lane_id]) {
			count(dc->st, bad_ring_index);
			dc->malformed++;
		} else {
			const unsigned char *ring = rings + (__u64)idx * ring_size;
			__u32 used =
				ld32(&((const struct ctxprof_ring_header *)ring)->used, relaxed);
			const unsigned char *data = ring + sizeof(struct ctxprof_ring_header);

			if (used > ring_size - sizeof(struct ctxprof_ring_header)) {
				count(dc->st, bad_ring_used);
				dc->malformed++;
			} else if (lane_id == CTXPROF_LANE_INDEX) {
				parse_index_ring(dc, data, used);
			} else {
				parse_detail_ring(dc, data, used);
			}
			count(dc->st, rings);
			parsed = true;
		}
		total += dc->delivered;
		/*
		 * The callbacks may have run for long: another consumer may
		 * have taken the lanes over.  Then the ring and the queue are
		 * its now.  (The slot's generation is checked once per lane,
		 * above: the thread recycles a slot only once its lanes are
		 * drained, which our own last advance() tells it; and a
		 * re-check here would meet try_recycle()'s moment of
		 * (Registering, generation + 1) on a slot that stays ours:
		 * docs/design/app-region.md.)
		 */
		if (!still_owner(dc))
			break;
		if (parsed) {
			st64(&lane->rings_consumed, ld64(&lane->rings_consumed, relaxed) + 1,
			     relaxed);
			give_back(dc, idx);
		}
		advance(dc, ++head);
	}
	return total;
}

/*
 * Hold the lanes for this pass: ours already, or free, or held by a
 * consumer silent for CTXPROF_CONSUMER_STALE_NS (taken over).
 */
static bool claim_lanes(struct ctxprof_region_header *h, uint64_t token, uint64_t now_ns,
			struct ctxprof_region_stats *st)
{
	__u64 owner = ld64(&h->consumer_owner, acquire);
	__u64 hb;

	if (owner == token)
		return true;
	if (owner) {
		hb = ld64(&h->consumer_heartbeat_ns, relaxed);
		if (now_ns <= hb || now_ns - hb <= CTXPROF_CONSUMER_STALE_NS) {
			count(st, consumer_refused);
			return false;
		}
	}
	if (!atomic_compare_exchange_strong_explicit((_Atomic __u64 *)&h->consumer_owner, &owner,
						     token, memory_order_acq_rel,
						     memory_order_acquire)) {
		count(st, consumer_refused);
		return false;
	}
	if (owner)
		count(st, consumer_takeovers);
	return true;
}

void ctxprof_region__release(void *base, const struct ctxprof_region_geom *g)
{
	struct ctxprof_region_header *h = base;
	__u64 expect = g->consumer_token;

	atomic_compare_exchange_strong_explicit((_Atomic __u64 *)&h->consumer_owner, &expect, 0,
						memory_order_release, memory_order_relaxed);
}

uint64_t ctxprof_region__drain(void *base, const struct ctxprof_region_geom *g, uint64_t now_ns,
			       const struct ctxprof_drain_ops *ops, void *ctx,
			       struct ctxprof_region_stats *st)
{
	struct ctxprof_region_header *h = base;
	struct ctxprof_slot_view v;
	__u64 delivered = 0;
	__u32 cursor = 0;
	bool lost = false;
	int l;

	if (!claim_lanes(h, g->consumer_token, now_ns, st))
		return 0;
	/* shut down: no new records come, but we drain what was submitted before */
	if (ld32(&h->registration_flags, relaxed) & CTXPROF_REG_SHUTDOWN)
		count(st, shut_down);
	while (!lost && ctxprof_region__next_slot(base, g, &cursor, &v, st)) {
		struct ctxprof_slot *s = slot_at(base, g, v.index);
		bool empty = true;

		count(st, slots_seen);
		for (l = 0; l < CTXPROF_NR_LANES && !lost; l++) {
			struct drain_call dc = {
				.ops = ops,
				.ctx = ctx,
				.st = st,
				.hdr = h,
				.token = g->consumer_token,
				.slot = &v,
				.lane = (struct ctxprof_lane *)((char *)s + g->lane_offset[l]),
			};

			delivered += drain_lane(base, g, &dc, s, l);
			lost = dc.lost;
			if (ld32(&dc.lane->submit_head, relaxed) !=
			    ld32(&dc.lane->submit_tail, acquire))
				empty = false;
		}
		/* the thread is gone and we have all it submitted: the slot may be recycled */
		/* (the generation makes a Draining of the slot's next thread not match) */
		if (!lost && v.state == CTXPROF_SLOT_DRAINING && empty) {
			__u64 expect = CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_DRAINING, v.generation);

			if (atomic_compare_exchange_strong_explicit(
				    (_Atomic __u64 *)&s->state_gen, &expect,
				    CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_INACTIVE, v.generation),
				    memory_order_acq_rel, memory_order_relaxed))
				count(st, slots_retired);
		}
	}
	/* only the owner's heartbeat: a stale consumer must not keep its claim alive */
	if (!lost)
		st64(&h->consumer_heartbeat_ns, now_ns, relaxed);
	return delivered;
}
