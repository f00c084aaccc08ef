// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Lanes, producer side (docs/design/app-region.md, the queues).  The owning thread fills one ring
 * at a time; a full (or flushed) ring goes on the submit queue and the next one comes from the
 * thread's own unused rings or, once all have been out, from the free queue
 * the consumer refills.  No ring free means the record is dropped and
 * counted: the producer never waits for the consumer.
 *
 * The submit queue cannot overflow: it holds only rings this thread
 * submitted and the consumer has not taken, at most ring_count <=
 * CTXPROF_LANE_QUEUE_CAP of them, so the producer never reads submit_head
 * except to tell whether the lane is drained.
 */
#include <string.h>

#include "internal.h"

static unsigned char *ring_at(const struct ctxprof_lane_producer *p, __u32 idx)
{
	return p->rings + (size_t)idx * p->ring_size;
}

static __u32 all_rings(const struct ctxprof_lane_producer *p)
{
	return (1u << p->ring_count) - 1; /* ring_count <= 16 */
}

void ctxprof_lane__init(struct ctxprof_lane_producer *p, struct ctxprof_lane *lane,
			unsigned char *rings, __u32 ring_count, __u32 ring_size, __u64 flush_ns)
{
	memset(p, 0, sizeof(*p));
	p->lane = lane;
	p->rings = rings;
	p->ring_count = ring_count;
	p->ring_size = ring_size;
	p->active = CTXPROF_RING_NONE;
	p->flush_ns = flush_ns;

	/*
	 * The slot is ours (Registering): reset both sides' positions.  The
	 * release store of state Active publishes them to the consumer.
	 */
	st32(&lane->submit_tail, 0, relaxed);
	st32(&lane->free_head, 0, relaxed);
	st32(&lane->active_ring, CTXPROF_RING_NONE, relaxed);
	st32(&lane->next_seq, 0, relaxed);
	st64(&lane->records_written, 0, relaxed);
	st64(&lane->records_dropped, 0, relaxed);
	st64(&lane->rings_submitted, 0, relaxed);
	st64(&lane->bad_free_entries, 0, relaxed);
	st32(&lane->submit_head, 0, relaxed);
	st32(&lane->free_tail, 0, relaxed);
	st64(&lane->rings_consumed, 0, relaxed);
	st64(&lane->records_consumed, 0, relaxed);
	st64(&lane->records_malformed, 0, relaxed);
}

/* make ring @idx the one being filled */
static void activate(struct ctxprof_lane_producer *p, __u32 idx)
{
	p->active = idx;
	p->pos = 0;
	st32(&p->lane->active_ring, idx, relaxed);
}

/* a ring from our own unused ones, else from the free queue */
static bool take_ring(struct ctxprof_lane_producer *p)
{
	struct ctxprof_lane *lane = p->lane;
	__u32 home = all_rings(p) & ~p->out_mask;
	__u32 tail, n;

	if (home) {
		activate(p, __builtin_ctz(home));
		return true;
	}
	/* acquire: pairs with the consumer's release of free_tail, entries first */
	tail = ld32(&lane->free_tail, acquire);
	n = tail - p->free_head;
	if (n > CTXPROF_LANE_QUEUE_CAP) {
		/* the consumer wrote nonsense: skip whatever it claims */
		p->bad_free++;
		st64(&lane->bad_free_entries, p->bad_free, relaxed);
		p->free_head = tail;
		st32(&lane->free_head, tail, release);
		return false;
	}
	while (n--) {
		__u32 idx = ld32(&lane->free_queue[p->free_head % CTXPROF_LANE_QUEUE_CAP], relaxed);

		/* release: our read of the entry comes before the consumer reuses it */
		st32(&lane->free_head, ++p->free_head, release);
		/* only a ring the consumer really has may come back, and only once */
		if (idx < p->ring_count && (p->out_mask & (1u << idx))) {
			p->out_mask &= ~(1u << idx);
			activate(p, idx);
			return true;
		}
		p->bad_free++;
		st64(&lane->bad_free_entries, p->bad_free, relaxed);
	}
	return false;
}

static bool free_ring_available(const struct ctxprof_lane_producer *p)
{
	return (all_rings(p) & ~p->out_mask) || ld32(&p->lane->free_tail, relaxed) != p->free_head;
}

static void submit(struct ctxprof_lane_producer *p)
{
	struct ctxprof_lane *lane = p->lane;
	struct ctxprof_ring_header *rh = (void *)ring_at(p, p->active);

	/* plain stores: the release of submit_tail below publishes them */
	rh->used = p->pos;
	rh->seq = (__u32)p->submitted;
	st32(&lane->submit_queue[p->submit_tail % CTXPROF_LANE_QUEUE_CAP], p->active, relaxed);
	st32(&lane->submit_tail, ++p->submit_tail, release);
	p->out_mask |= 1u << p->active;
	p->active = CTXPROF_RING_NONE;
	p->pos = 0;
	p->submitted++;
	st64(&lane->rings_submitted, p->submitted, relaxed);
	st32(&lane->active_ring, CTXPROF_RING_NONE, relaxed);
}

void *ctxprof_lane__reserve(struct ctxprof_lane_producer *p, __u32 len, __u32 *seq)
{
	__u32 room = p->ring_size - sizeof(struct ctxprof_ring_header);

	if (p->active != CTXPROF_RING_NONE && p->pos + len > room)
		submit(p);
	if (p->active == CTXPROF_RING_NONE && !take_ring(p)) {
		/* pool exhausted: the seq gap tells the consumer a record is missing */
		p->seq++;
		p->dropped++;
		st64(&p->lane->records_dropped, p->dropped, relaxed);
		return NULL;
	}
	*seq = p->seq;
	return ring_at(p, p->active) + sizeof(struct ctxprof_ring_header) + p->pos;
}

void ctxprof_lane__commit(struct ctxprof_lane_producer *p, __u32 len, __u64 now)
{
	if (!p->pos)
		p->opened_ns = now;
	p->pos += len;
	p->seq++;
	p->written++;
	st64(&p->lane->records_written, p->written, relaxed);
	st32(&p->lane->next_seq, p->seq, relaxed);
	ctxprof_lane__flush_aged(p, now);
}

void ctxprof_lane__flush(struct ctxprof_lane_producer *p)
{
	if (p->active != CTXPROF_RING_NONE && p->pos)
		submit(p);
}

void ctxprof_lane__flush_aged(struct ctxprof_lane_producer *p, __u64 now)
{
	if (p->active == CTXPROF_RING_NONE || !p->pos || now - p->opened_ns < p->flush_ns)
		return;
	/* for latency only: never give up the ring if none would replace it */
	if (!free_ring_available(p))
		return;
	submit(p);
	take_ring(p);
}

bool ctxprof_lane__can_reserve(const struct ctxprof_lane_producer *p)
{
	return p->active != CTXPROF_RING_NONE || free_ring_available(p);
}

bool ctxprof_lane__drained(const struct ctxprof_lane_producer *p)
{
	/* acquire: the consumer advances submit_head after it gave the ring back */
	return ld32(&p->lane->submit_head, acquire) == p->submit_tail;
}
