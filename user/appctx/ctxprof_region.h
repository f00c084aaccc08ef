/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ctxprof_region - the collector's reader of an application's registry
 * region (include/ctxprof_abi.h; docs/design/context-slot.md,
 * docs/design/app-region.md).
 *
 * The region is mapped read-write from a memfd of an untrusted process that
 * may rewrite any byte at any time.  So: ctxprof_region__validate() copies
 * the control block once and checks it; afterwards only that copy (struct
 * ctxprof_region_geom) is used for addressing, never the region's header.
 * Every value read from the region later (states, queue positions, ring
 * indices, record lengths) is read once and bounds-checked before use;
 * anything malformed is skipped and counted.  No call blocks, allocates or
 * makes a syscall: they only touch the already-mapped memory, in loops
 * bounded by the validated geometry.
 *
 * How the collector gets a region of process PID (the consumer protocol):
 *  1. find the lines of /proc/PID/maps whose path is CTXPROF_REGION_MAPS_NAME
 *     and whose offset is 0; the region's address in the application is the
 *     line's start;
 *  2. open /proc/PID/map_files/<start>-<end> (needs CAP_SYS_ADMIN), fstat it,
 *     and require fcntl(F_GET_SEALS) to include F_SEAL_SHRINK | F_SEAL_GROW:
 *     this proves a memfd (only shmem files have seals, so no FUSE or other
 *     file that could block) whose size can no longer change (no SIGBUS);
 *  3. mmap(st_size, PROT_READ | PROT_WRITE, MAP_SHARED), close the fd;
 *  4. ctxprof_region__validate(); a region that fails is skipped, counted;
 *  5. periodically: ctxprof_region__next_slot() to keep the BPF tid -> slot
 *     map current (struct ctx_slot_ref in records.h: address = start +
 *     ctxprof_region__slot_offset(), the slot's tid claim and generation),
 *     and ctxprof_region__drain() for the lanes (it writes the heartbeat).
 * The tid in a slot is the application's claim: check that it is a thread of
 * PID (/proc/PID/task/TID) before the BPF map sends that tid's samples to
 * read memory at an address PID chose.
 *
 * Threads: the collector's main thread, the one consumer of a region.
 */
#ifndef CTXPROF_REGION_H
#define CTXPROF_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxprof_abi.h"

/* the validated copy of a region's control block: use this, never the header */
struct ctxprof_region_geom {
	uint64_t region_size;
	uint64_t slots_offset;
	uint64_t rings_offset;
	uint64_t ring_set_size;
	uint32_t max_threads;
	uint32_t slot_size;
	uint32_t owner_pid; /* the application's claim */
	uint32_t ring_count[CTXPROF_NR_LANES];
	uint32_t ring_size[CTXPROF_NR_LANES];
	uint64_t lane_rings_offset[CTXPROF_NR_LANES]; /* within a ring set */
	uint32_t lane_offset[CTXPROF_NR_LANES];	      /* within a slot */
	uint64_t consumer_token; /* ours in the header's consumer_owner; never 0 */
};

/* what the reader skipped or did; every field only grows */
struct ctxprof_region_stats {
	uint64_t slots_seen;	     /* Active or Draining slots visited by drain */
	uint64_t slots_retired;	     /* Draining -> Inactive transitions made */
	uint64_t rings;		     /* rings parsed and given back */
	uint64_t span_events;	     /* span events delivered */
	uint64_t tag_records;	     /* dictionary records delivered */
	uint64_t bad_slot_state;     /* slot state outside the enum */
	uint64_t bad_queue;	     /* submit queue claiming more than CTXPROF_LANE_QUEUE_CAP */
	uint64_t bad_ring_index;     /* submit-queue entry naming no ring */
	uint64_t bad_ring_used;	     /* ring header claiming more bytes than the ring has */
	uint64_t bad_record;	     /* record with a bad type, size or length */
	uint64_t unknown_record;     /* detail record of an unknown type (skipped whole) */
	uint64_t free_queue_full;    /* a ring could not be given back */
	uint64_t consumer_refused;   /* passes not made: another consumer holds the lanes */
	uint64_t consumer_takeovers; /* lanes taken from a consumer whose heartbeat went stale */
	uint64_t consumer_lost;	     /* passes stopped: the lanes were taken from us meanwhile */
	uint64_t shut_down;	     /* passes over a region whose library was shut down */
};

/**
 * ctxprof_region__validate() - check a mapped region and copy its geometry.
 * @base: the mapping; 64-byte aligned (mmap gives page alignment)
 * @size: bytes mapped (the memfd's st_size)
 * @geom: filled on success only
 * @why: optional; on failure, set to a static string naming the failed check
 *
 * Also makes the consumer token of this mapping (@geom->consumer_token):
 * unique per call, so two collectors, or two mappings in one, never share
 * one.
 * Checks magic, ABI version, header, slot and lane sizes, and every offset
 * and count against the canonical layout (ctxprof_rings_offset(),
 * ctxprof_region_size() in ctxprof_abi.h), and region_size against @size.
 * Return: 0, or -EINVAL (bad base or size), -EPROTO (wrong magic or
 * version), -EBADMSG (inconsistent geometry).
 */
int ctxprof_region__validate(const void *base, size_t size, struct ctxprof_region_geom *geom,
			     const char **why);

/* ctxprof_region__slot_offset() - of slot @index (and of its context) from the region start */
static inline uint64_t ctxprof_region__slot_offset(const struct ctxprof_region_geom *g,
						   uint32_t index)
{
	return g->slots_offset + (uint64_t)index * g->slot_size;
}

/* one registered thread, as ctxprof_region__next_slot() saw it */
struct ctxprof_slot_view {
	uint32_t index;
	uint32_t state; /* CTXPROF_SLOT_ACTIVE or CTXPROF_SLOT_DRAINING */
	uint32_t tid;	/* a claim: verify it */
	uint32_t generation;
	uint64_t offset; /* ctxprof_region__slot_offset(index) */
	/* the owner's counts since it took the slot, as it wrote them (its word only) */
	uint64_t events_generated;
	uint64_t events_refused;
};

/**
 * ctxprof_region__next_slot() - the next Active or Draining slot at or after
 * *@cursor (start with 0).
 * @st: optional; counts bad states
 *
 * Visits at most max_threads slots in all (thread_count is clamped).
 * Return: true with @v filled and *@cursor moved past it, false at the end.
 */
bool ctxprof_region__next_slot(const void *base, const struct ctxprof_region_geom *g,
			       uint32_t *cursor, struct ctxprof_slot_view *v,
			       struct ctxprof_region_stats *st);

enum ctxprof_context_read {
	CTXPROF_CONTEXT_OK = 0,	  /* @out holds one consistent update */
	CTXPROF_CONTEXT_EMPTY,	  /* checksum 0: none set, cleared, or being written */
	CTXPROF_CONTEXT_TORN,	  /* checksum does not match the pair: rejected */
	CTXPROF_CONTEXT_BAD_SLOT, /* @index out of range */
};

/**
 * ctxprof_region__read_context() - copy slot @index's context and check it
 * like the BPF sampler does (checksum first, then the fields).
 * From another CPU the ids are protected by the checksum, the tags are not
 * (see struct ctxprof_context).
 * Return: enum ctxprof_context_read; @out is filled whatever the result.
 */
int ctxprof_region__read_context(const void *base, const struct ctxprof_region_geom *g,
				 uint32_t index, struct ctxprof_context *out);

/* callbacks of ctxprof_region__drain(); either may be NULL; pointers valid during the call */
struct ctxprof_drain_ops {
	void (*span_event)(void *ctx, const struct ctxprof_slot_view *slot,
			   const struct ctxprof_span_event *ev);
	/* @key and @value point into a private copy, not into the region */
	void (*tag)(void *ctx, const struct ctxprof_slot_view *slot, uint32_t tag_id,
		    const char *key, uint32_t key_len, const char *value, uint32_t value_len);
};

/**
 * ctxprof_region__drain() - the consumer's pass over every Active or
 * Draining slot: pop each submitted ring (at most CTXPROF_LANE_QUEUE_CAP per
 * lane), deliver its span events and dictionary records, give the ring back
 * on the free queue, then advance the submit queue.  A Draining slot whose
 * submit queues are empty is moved to Inactive (CAS).  Finally writes
 * @now_ns (CLOCK_MONOTONIC) to the consumer heartbeat.
 * @base: the read-write mapping
 *
 * One consumer per region at a time (SPSC), enforced: the pass is made only
 * while the header's consumer_owner holds @g->consumer_token, taken by CAS
 * when it is 0 or the heartbeat is older than CTXPROF_CONSUMER_STALE_NS
 * (counted consumer_takeovers), else refused (consumer_refused).  Before
 * each ring it reads and each write to a lane (a ring given back, the queue
 * advanced, its counters) the token is checked again with a
 * compare-and-swap: a consumer whose lanes were taken over while it parsed
 * stops, writing nothing more (consumer_lost).
 * Bounded by the geometry; never blocks.  Return: records delivered by this
 * call.
 */
uint64_t ctxprof_region__drain(void *base, const struct ctxprof_region_geom *g, uint64_t now_ns,
			       const struct ctxprof_drain_ops *ops, void *ctx,
			       struct ctxprof_region_stats *st);

/**
 * ctxprof_region__release() - give the lanes up: consumer_owner back to 0
 * if @g->consumer_token holds it (CAS), so the next collector (a restart)
 * drains at once instead of waiting out CTXPROF_CONSUMER_STALE_NS.  Called
 * by the region's owner before it unmaps @base; a crashed collector's claim
 * still lapses by the heartbeat.
 */
void ctxprof_region__release(void *base, const struct ctxprof_region_geom *g);

#endif /* CTXPROF_REGION_H */
