/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The application ABI: the registry region libctxprof creates in every
 * instrumented process, read by the collector (user/appctx/ctxprof_region.c) and, for
 * the first CTXPROF_SLOT_SAMPLER_READ bytes of a slot only (context, state,
 * tid), by the BPF sampler.
 * Seeds: thread-local-context (the context slot and its checksum) and
 * thread-registry-lanes (control block, thread registry, lane sets).
 *
 * Compiles in both worlds, like records.h: only __u8..__u64, #defines, enums
 * and one static inline; nothing included from outside include/.  Every
 * offset and size is pinned by a _Static_assert below the struct.
 *
 * The region is one shared memfd, named CTXPROF_REGION_NAME so that
 * /proc/PID/maps shows it as CTXPROF_REGION_MAPS_NAME.  Everything in it is
 * addressed by offsets from its start, never by pointers: the collector maps
 * it at another address.  Layout (all offsets in the control block):
 *
 *   0              struct ctxprof_region_header (control block)
 *   slots_offset   struct ctxprof_slot[max_threads] (thread registry)
 *   rings_offset   ring sets, one per slot, ring_set_size bytes each:
 *                    lanes[INDEX].offset:  index rings, ring_count x ring_size
 *                    lanes[DETAIL].offset: detail rings, ring_count x ring_size
 *   region_size    end (rounded up to CTXPROF_REGION_ALIGN)
 *
 * The region is written by an untrusted process at any time: a reader copies
 * what it needs once, validates the copy, and bounds-checks every index.
 */
#ifndef CTXPROF_ABI_H
#define CTXPROF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CTXPROF_REGION_NAME "ctxprof-region"
/* the memfd as a line of /proc/PID/maps names it */
#define CTXPROF_REGION_MAPS_NAME "/memfd:" CTXPROF_REGION_NAME " (deleted)"
/* "CTXPFREG" in memory on a little-endian machine */
#define CTXPROF_REGION_MAGIC 0x4745524650585443ULL
#define CTXPROF_ABI_VERSION  1

#define CTXPROF_REGION_ALIGN	    4096u  /* region_size is a multiple of this */
#define CTXPROF_MAX_THREADS_LIMIT   65536u /* largest max_threads a reader accepts */
#define CTXPROF_DEFAULT_MAX_THREADS 1024u
#define CTXPROF_LANE_QUEUE_CAP	    16u		/* entries per SPSC queue; power of two */
#define CTXPROF_RING_NONE	    0xffffffffu /* "no ring" in ctxprof_lane.active_ring */
#define CTXPROF_RING_MAX_SIZE	    (1u << 20)

/* ------------------------------------------------------------------------ */
/* context slot (docs/design/context-slot.md)                               */

#define CTXPROF_MAX_TAGS       10
#define CTXPROF_KNUTH_CONSTANT 0x9E3779B97F4A7C15ULL

/*
 * One thread's trace context, 64 bytes on one cache line.  The owning thread
 * writes it with this protocol: checksum = 0, fields, checksum =
 * ctxprof_context_checksum(span_id, local_root_span_id).  A reader copies the
 * 64 bytes, then: checksum 0 means "no context" (never set, cleared by
 * unregistration, or a write in progress); a checksum that does not match
 * the copied pair means a torn read.  Both are "no context", counted.
 * A reader interrupting the writer on the writer's own CPU (the BPF sampler)
 * never sees a torn state: when the checksum is valid, the span pair and the
 * tags are those of one completed update.  The tags are not in the hash, so a
 * reader on another CPU may pair valid ids with tags of a neighbouring update.
 */
struct ctxprof_context {
	__u64 span_id;		      /* current span; 0: none */
	__u64 local_root_span_id;     /* local root span of the current trace; 0: none */
	__u64 checksum;		      /* 0 while writing; else the Knuth hash of the pair */
	__u32 tags[CTXPROF_MAX_TAGS]; /* tag ids (see the detail lane's dictionary); 0: unset */
} __attribute__((aligned(64)));

_Static_assert(__builtin_offsetof(struct ctxprof_context, span_id) == 0, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_context, local_root_span_id) == 8, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_context, checksum) == 16, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_context, tags) == 24, "ctxprof ABI");
_Static_assert(sizeof(struct ctxprof_context) == 64, "ctxprof ABI");
_Static_assert(_Alignof(struct ctxprof_context) == 64, "ctxprof ABI");

/*
 * ctxprof_context_checksum() - a Knuth multiplicative hash: span_id
 * times the golden-ratio constant, XOR the half-swapped local root times the
 * same constant; a result of 0 (reserved for "in progress") becomes ~0.  So
 * (0, 0) and every (x, x with halves swapped) give 0xffffffffffffffff.
 */
static inline __u64 ctxprof_context_checksum(__u64 span_id, __u64 local_root_span_id)
{
	__u64 swapped = (local_root_span_id << 32) | (local_root_span_id >> 32);
	__u64 h = span_id * CTXPROF_KNUTH_CONSTANT ^ swapped * CTXPROF_KNUTH_CONSTANT;

	return h ? h : 0xffffffffffffffffULL;
}

/* ------------------------------------------------------------------------ */
/* lanes (docs/design/app-region.md)                                         */

enum ctxprof_lane_id {
	CTXPROF_LANE_INDEX = 0,	 /* fixed-size span begin/end events */
	CTXPROF_LANE_DETAIL = 1, /* variable-size records: the tag dictionary */
	CTXPROF_NR_LANES = 2,
};

/*
 * A lane moves rings between its producer (the slot's thread) and its
 * consumer (the collector) through two SPSC queues of ring indices:
 *   submit queue: producer pushes a filled ring, consumer pops it;
 *   free queue:   consumer pushes the ring back once parsed, producer pops it.
 * Positions are free-running __u32; an entry is queue[pos % CTXPROF_LANE_QUEUE_CAP].
 * A queue holds tail - head entries, never more than CTXPROF_LANE_QUEUE_CAP.
 * Each side writes only its own cache line and its own queue: publish an
 * entry, then its tail with a release store; read the tail with an acquire
 * load, then the entry.  Neither side trusts the other's values.
 */
struct ctxprof_lane {
	/* written by the producer */
	__u32 submit_tail;	/* next submit-queue position to fill */
	__u32 free_head;	/* next free-queue position to take */
	__u32 active_ring;	/* ring being filled, or CTXPROF_RING_NONE (informational) */
	__u32 next_seq;		/* seq the next record will carry (informational) */
	__u64 records_written;	/* records put into rings */
	__u64 records_dropped;	/* records lost: no free ring (pool exhausted) */
	__u64 rings_submitted;	/* rings pushed on the submit queue */
	__u64 bad_free_entries; /* free-queue entries the producer refused */
	__u64 producer_reserved[2];
	/* written by the consumer */
	__u32 submit_head;	 /* next submit-queue position to take */
	__u32 free_tail;	 /* next free-queue position to fill */
	__u64 rings_consumed;	 /* rings parsed and given back */
	__u64 records_consumed;	 /* records delivered */
	__u64 records_malformed; /* records or rings the consumer skipped */
	__u64 consumer_reserved[4];
	__u32 submit_queue[CTXPROF_LANE_QUEUE_CAP]; /* written by the producer */
	__u32 free_queue[CTXPROF_LANE_QUEUE_CAP];   /* written by the consumer */
};

_Static_assert(__builtin_offsetof(struct ctxprof_lane, submit_tail) == 0, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, free_head) == 4, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, active_ring) == 8, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, next_seq) == 12, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, records_written) == 16, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, records_dropped) == 24, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, rings_submitted) == 32, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, bad_free_entries) == 40, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, submit_head) == 64, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, free_tail) == 68, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, rings_consumed) == 72, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, records_consumed) == 80, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, records_malformed) == 88, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, submit_queue) == 128, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_lane, free_queue) == 192, "ctxprof ABI");
_Static_assert(sizeof(struct ctxprof_lane) == 256, "ctxprof ABI");

/*
 * Every ring starts with this header; records follow at offset 8, 8-aligned.
 * The producer sets used before it submits the ring.
 */
struct ctxprof_ring_header {
	__u32 used; /* bytes of records after the header */
	__u32 seq;  /* the lane's submission number of this ring */
};

_Static_assert(sizeof(struct ctxprof_ring_header) == 8, "ctxprof ABI");

/* index lane: fixed-size events, CTXPROF_SPAN_EVENT_SIZE each */
enum ctxprof_span_event_type {
	CTXPROF_EVENT_SPAN_BEGIN = 1,
	CTXPROF_EVENT_SPAN_END = 2,
};

struct ctxprof_span_event {
	__u16 type;		  /* enum ctxprof_span_event_type */
	__u16 size;		  /* sizeof(struct ctxprof_span_event) */
	__u32 seq;		  /* per lane, +1 per record written: a gap means a drop */
	__u64 time_ns;		  /* CLOCK_MONOTONIC of the application */
	__u64 span_id;		  /* the span that begins or ends */
	__u64 local_root_span_id; /* BEGIN: as given; END: the thread's current one, or 0 */
};

_Static_assert(__builtin_offsetof(struct ctxprof_span_event, type) == 0, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_span_event, size) == 2, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_span_event, seq) == 4, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_span_event, time_ns) == 8, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_span_event, span_id) == 16, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_span_event, local_root_span_id) == 24,
	       "ctxprof ABI");
_Static_assert(sizeof(struct ctxprof_span_event) == 32, "ctxprof ABI");
#define CTXPROF_SPAN_EVENT_SIZE 32u

/* detail lane: variable-size records, each starting with this header */
enum ctxprof_record_type {
	CTXPROF_RECORD_TAG = 1, /* struct ctxprof_tag_record */
};

struct ctxprof_record_header {
	__u16 type;  /* enum ctxprof_record_type; readers skip unknown types */
	__u16 flags; /* 0 */
	__u32 size;  /* whole record, header included; multiple of 8 */
	__u32 seq;   /* per lane, as in ctxprof_span_event */
	__u32 reserved;
};

_Static_assert(sizeof(struct ctxprof_record_header) == 16, "ctxprof ABI");

#define CTXPROF_TAG_KEY_MAX   128u  /* key bytes; at least 1 */
#define CTXPROF_TAG_VALUE_MAX 1024u /* value bytes; may be 0 */

/*
 * Tag dictionary entry: tag_id stands for (key, value) in the process.  The
 * key bytes then the value bytes follow the struct (__u8 key[key_len],
 * value[value_len]), no terminators, zero-padded to hdr.size.
 */
struct ctxprof_tag_record {
	struct ctxprof_record_header hdr; /* type CTXPROF_RECORD_TAG */
	__u32 tag_id;			  /* never 0 */
	__u16 key_len;			  /* 1..CTXPROF_TAG_KEY_MAX */
	__u16 value_len;		  /* 0..CTXPROF_TAG_VALUE_MAX */
};

_Static_assert(__builtin_offsetof(struct ctxprof_tag_record, tag_id) == 16, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_tag_record, key_len) == 20, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_tag_record, value_len) == 22, "ctxprof ABI");
_Static_assert(sizeof(struct ctxprof_tag_record) == 24, "ctxprof ABI");

#define CTXPROF_RECORD_ALIGN 8u
#define CTXPROF_TAG_RECORD_MAX                                                                     \
	((sizeof(struct ctxprof_tag_record) + CTXPROF_TAG_KEY_MAX + CTXPROF_TAG_VALUE_MAX + 7) &   \
	 ~7u)
/* the smallest rings that hold one record of their lane; sizes are multiples of 64 */
#define CTXPROF_INDEX_RING_MIN_SIZE  64u
#define CTXPROF_DETAIL_RING_MIN_SIZE 2048u
_Static_assert(CTXPROF_INDEX_RING_MIN_SIZE >=
		       sizeof(struct ctxprof_ring_header) + CTXPROF_SPAN_EVENT_SIZE,
	       "ctxprof ABI");
_Static_assert(CTXPROF_DETAIL_RING_MIN_SIZE >=
		       sizeof(struct ctxprof_ring_header) + CTXPROF_TAG_RECORD_MAX,
	       "ctxprof ABI");

/* ------------------------------------------------------------------------ */
/* thread registry                                                            */

/*
 * Slot lifecycle (state), and who moves it:
 *   UNALLOCATED -> REGISTERING  a thread took index thread_count++ (fetch_add)
 *   REGISTERING -> ACTIVE       that thread, once context, tid and lanes are set
 *   ACTIVE      -> DRAINING     the thread, at unregistration or exit, after it
 *                               cleared its context and submitted its rings
 *   DRAINING    -> INACTIVE     the collector (CAS), once the submit queues are empty
 *   INACTIVE    -> REGISTERING  a registering thread (CAS): slot recycled
 *   DRAINING    -> REGISTERING  a registering thread (CAS), only when the lanes
 *                               are drained or the consumer heartbeat is stale
 *                               (or no collector ever attached)
 * Inactive -> Unallocated -> Registering is the one CAS above;
 * UNALLOCATED only marks slots never used (index >= thread_count).
 *
 * State and generation share one 64-bit word, changed only as a whole
 * (atomic store or CAS): the generation grows by one each time a thread
 * takes the slot, so a CAS made from an old observation fails (no ABA: the
 * collector's Draining -> Inactive cannot hit the next thread's Draining).
 */
enum ctxprof_slot_state {
	CTXPROF_SLOT_UNALLOCATED = 0,
	CTXPROF_SLOT_REGISTERING = 1,
	CTXPROF_SLOT_ACTIVE = 2,
	CTXPROF_SLOT_DRAINING = 3,
	CTXPROF_SLOT_INACTIVE = 4,
};

#define CTXPROF_SLOT_STATE(w)		((__u32)(w))
#define CTXPROF_SLOT_GENERATION(w)	((__u32)((w) >> 32))
#define CTXPROF_SLOT_STATE_GEN(st, gen) (((__u64)(gen) << 32) | (__u32)(st))

struct ctxprof_slot {
	/* first: the BPF sampler reads context, state_gen and tid in one copy */
	struct ctxprof_context context;
	__u64 state_gen;     /* CTXPROF_SLOT_STATE_GEN(enum ctxprof_slot_state, generation) */
	__u32 tid;	     /* kernel tid of the owner; valid from ACTIVE on */
	__u32 flags;	     /* 0 */
	__u64 registered_ns; /* CLOCK_MONOTONIC at registration */
	/* the seed's ThreadLaneSet metrics, this owner's, from its registration */
	__u64 events_generated; /* span events and tag records the thread made */
	__u64 events_refused;	/* of them, refused: the registry was shut down */
	__u64 reserved[3];
	struct ctxprof_lane lanes[CTXPROF_NR_LANES]; /* control of the slot's lanes */
};

_Static_assert(__builtin_offsetof(struct ctxprof_slot, context) == 0, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_slot, state_gen) == 64, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_slot, tid) == 72, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_slot, flags) == 76, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_slot, registered_ns) == 80, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_slot, events_generated) == 88, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_slot, events_refused) == 96, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_slot, lanes) == 128, "ctxprof ABI");
_Static_assert(sizeof(struct ctxprof_slot) == 640, "ctxprof ABI");

/* what the BPF sampler copies of a slot: the context, state_gen, tid and flags */
#define CTXPROF_SLOT_SAMPLER_READ 80u
_Static_assert(CTXPROF_SLOT_SAMPLER_READ == __builtin_offsetof(struct ctxprof_slot, registered_ns),
	       "ctxprof ABI");

/* ------------------------------------------------------------------------ */
/* control block                                                              */

#define CTXPROF_REG_ACCEPTING (1u << 0) /* registration_flags: new threads may register */
/*
 * registration_flags: the registry's shutdown_requested (ctxprof_shutdown()):
 * no new thread, no new record into a lane (refused, counted per slot); what
 * the lanes hold is submitted for the collector to drain.  Never cleared.
 */
#define CTXPROF_REG_SHUTDOWN (1u << 1)

struct ctxprof_lane_geometry {
	__u32 ring_count; /* rings in each slot's pool, 1..CTXPROF_LANE_QUEUE_CAP */
	__u32 ring_size;  /* bytes per ring, header included; multiple of 64 */
	__u64 offset;	  /* of this lane's first ring from the start of a ring set */
};

_Static_assert(sizeof(struct ctxprof_lane_geometry) == 16, "ctxprof ABI");

/*
 * The control block at offset 0.  The first two cache lines are written once
 * by the library before it publishes magic (release) and never change; a
 * reader validates them against the canonical layout below and the size it
 * mapped.  The third line is the library's, the fourth the collector's.
 */
struct ctxprof_region_header {
	__u64 magic;			     /* CTXPROF_REGION_MAGIC */
	__u32 abi_version;		     /* CTXPROF_ABI_VERSION */
	__u32 header_size;		     /* sizeof(struct ctxprof_region_header) */
	__u64 region_size;		     /* bytes; the memfd's size */
	__u32 max_threads;		     /* slots; 1..CTXPROF_MAX_THREADS_LIMIT */
	__u32 slot_size;		     /* sizeof(struct ctxprof_slot) */
	__u64 slots_offset;		     /* of slot 0 */
	__u64 rings_offset;		     /* of slot 0's ring set */
	__u64 ring_set_size;		     /* bytes of rings per slot */
	__u32 lane_offset[CTXPROF_NR_LANES]; /* of each struct ctxprof_lane within a slot */
	struct ctxprof_lane_geometry lanes[CTXPROF_NR_LANES];
	__u32 context_offset; /* of the context within a slot: 0 */
	__u32 lane_size;      /* sizeof(struct ctxprof_lane) */
	__u32 owner_pid;      /* getpid() of the creator (a claim: verify it) */
	__u32 reserved0;
	__u64 created_ns; /* CLOCK_MONOTONIC of the creator */
	__u64 reserved1;

	/* written by the library */
	__u32 thread_count;	       /* slots handed out by fetch_add; may exceed max_threads */
	__u32 registration_flags;      /* CTXPROF_REG_* */
	__u64 registrations;	       /* threads that got a slot */
	__u64 registrations_rejected;  /* threads refused: no slot free */
	__u64 slots_reclaimed;	       /* registrations into a recycled slot */
	__u64 retired_records_written; /* lane counters of recycled slots, summed */
	__u64 retired_records_dropped;
	__u64 tags_interned;	   /* dictionary entries created */
	__u64 tag_intern_failures; /* ctxprof_intern_tag() calls that returned 0 */

	/* written by the collector */
	__u64 consumer_heartbeat_ns; /* CLOCK_MONOTONIC of its last drain pass; 0: none yet */
	__u32 consumer_pid;	     /* informational */
	__u32 dict_replay_request;   /* change it to have the dictionary emitted again */
	__u64 consumer_owner;	     /* token of the one consumer of the lanes; 0: none */
	__u64 consumer_reserved[5];
};

_Static_assert(__builtin_offsetof(struct ctxprof_region_header, magic) == 0, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, abi_version) == 8, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, header_size) == 12, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, region_size) == 16, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, max_threads) == 24, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, slot_size) == 28, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, slots_offset) == 32, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, rings_offset) == 40, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, ring_set_size) == 48,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, lane_offset) == 56, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, lanes) == 64, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, context_offset) == 96,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, lane_size) == 100, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, owner_pid) == 104, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, created_ns) == 112, "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, thread_count) == 128,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, registration_flags) == 132,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, registrations) == 136,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, registrations_rejected) == 144,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, slots_reclaimed) == 152,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, retired_records_written) == 160,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, retired_records_dropped) == 168,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, tags_interned) == 176,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, tag_intern_failures) == 184,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, consumer_heartbeat_ns) == 192,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, consumer_pid) == 200,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, dict_replay_request) == 204,
	       "ctxprof ABI");
_Static_assert(__builtin_offsetof(struct ctxprof_region_header, consumer_owner) == 208,
	       "ctxprof ABI");
_Static_assert(sizeof(struct ctxprof_region_header) == 256, "ctxprof ABI");

/*
 * The lanes have one consumer (SPSC).  Collectors that map the same region
 * (a restart, a rolling update of the DaemonSet) agree through
 * consumer_owner: a consumer drains only while the word holds its own
 * token, taken by compare-and-swap when it is 0 or when the heartbeat is
 * older than this; the owner checks it again (an RMW) before each write.
 */
#define CTXPROF_CONSUMER_STALE_NS (5ull * 1000 * 1000 * 1000)

/*
 * The canonical layout, which a valid region must have exactly.  The caller
 * range-checks the parameters first (max_threads <= CTXPROF_MAX_THREADS_LIMIT,
 * ring counts <= CTXPROF_LANE_QUEUE_CAP, ring sizes <= CTXPROF_RING_MAX_SIZE),
 * so nothing here overflows a __u64.
 */
#define CTXPROF_SLOTS_OFFSET ((__u64)sizeof(struct ctxprof_region_header))
#define CTXPROF_LANE_OFFSET(lane)                                                                  \
	((__u32) __builtin_offsetof(struct ctxprof_slot, lanes) +                                  \
	 (__u32)(lane) * (__u32)sizeof(struct ctxprof_lane))

static inline __u64 ctxprof_ring_set_size(__u32 index_count, __u32 index_size, __u32 detail_count,
					  __u32 detail_size)
{
	return (__u64)index_count * index_size + (__u64)detail_count * detail_size;
}

static inline __u64 ctxprof_rings_offset(__u32 max_threads)
{
	return CTXPROF_SLOTS_OFFSET + (__u64)max_threads * sizeof(struct ctxprof_slot);
}

static inline __u64 ctxprof_region_size(__u32 max_threads, __u64 ring_set_size)
{
	__u64 end = ctxprof_rings_offset(max_threads) + (__u64)max_threads * ring_set_size;

	return (end + CTXPROF_REGION_ALIGN - 1) & ~(__u64)(CTXPROF_REGION_ALIGN - 1);
}

#endif /* CTXPROF_ABI_H */
