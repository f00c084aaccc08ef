/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libctxprof internals shared by its files (and by the tests, which link the
 * static library).  Hidden from the shared library by -fvisibility=hidden;
 * every non-static name carries the ctxprof_ prefix so that a static link
 * cannot collide with the application.
 *
 * Trust: the region is shared with the collector, which may write anything
 * into it.  The library keeps its own private copy of everything it needs to
 * stay memory-safe (geometry, queue positions, ring ownership) and only
 * writes to the region, or reads values it validates (free-queue entries).
 */
#ifndef CTXPROF_LIB_INTERNAL_H
#define CTXPROF_LIB_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "ctxprof.h"
#include "ctxprof_abi.h"

#define CTXPROF_HIDDEN __attribute__((visibility("hidden")))
#define likely(x)      __builtin_expect(!!(x), 1)
#define unlikely(x)    __builtin_expect(!!(x), 0)

#define CTXPROF_DEFAULT_INDEX_RINGS	 4u
#define CTXPROF_DEFAULT_INDEX_RING_SIZE	 4096u
#define CTXPROF_DEFAULT_DETAIL_RINGS	 2u
#define CTXPROF_DEFAULT_DETAIL_RING_SIZE 4096u
#define CTXPROF_DEFAULT_MAX_TAGS	 65536u
#define CTXPROF_DEFAULT_FLUSH_NS	 (100ull * 1000 * 1000)
#define CTXPROF_DEFAULT_STALE_NS	 CTXPROF_CONSUMER_STALE_NS
#define CTXPROF_MAX_REGION_SIZE		 (1ull << 32)

/*
 * Shared fields are plain __u32/__u64 in the ABI (the BPF side cannot see
 * _Atomic); every access to one that another party may touch concurrently
 * goes through these C11 atomics on the same object.
 */
#define ld32(p, mo)	atomic_load_explicit((_Atomic __u32 *)(p), memory_order_##mo)
#define ld64(p, mo)	atomic_load_explicit((_Atomic __u64 *)(p), memory_order_##mo)
#define st32(p, v, mo)	atomic_store_explicit((_Atomic __u32 *)(p), (v), memory_order_##mo)
#define st64(p, v, mo)	atomic_store_explicit((_Atomic __u64 *)(p), (v), memory_order_##mo)
#define add32(p, v, mo) atomic_fetch_add_explicit((_Atomic __u32 *)(p), (v), memory_order_##mo)
#define add64(p, v, mo) atomic_fetch_add_explicit((_Atomic __u64 *)(p), (v), memory_order_##mo)

static inline __u64 ctxprof_now_ns(void)
{
	struct timespec ts;

	/* vDSO: no syscall where the clocksource supports it (TSC, kvm-clock) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* the library's private copy of the region's geometry: never re-read from the region */
struct ctxprof_shm {
	unsigned char *base;
	size_t size;
	struct ctxprof_region_header *hdr;
	__u32 max_threads;
	__u32 max_tags;
	__u32 ring_count[CTXPROF_NR_LANES];
	__u32 ring_size[CTXPROF_NR_LANES];
	__u64 lane_rings_offset[CTXPROF_NR_LANES]; /* within a ring set */
	__u64 rings_offset;
	__u64 ring_set_size;
	__u64 flush_interval_ns;
	__u64 consumer_stale_ns;
};

/*
 * Producer side of one lane, private to the owning thread.  Ring ownership
 * is tracked here, not read back from the region: a ring index the consumer
 * gives back is taken only if out_mask says the consumer has that ring.
 */
struct ctxprof_lane_producer {
	struct ctxprof_lane *lane; /* shared control */
	unsigned char *rings;	   /* this lane's first ring */
	__u32 ring_size;
	__u32 ring_count;
	__u32 active;	   /* ring being filled, or CTXPROF_RING_NONE */
	__u32 pos;	   /* bytes of records in it */
	__u32 submit_tail; /* private copies of the positions we own */
	__u32 free_head;
	__u32 out_mask;	 /* bit i: ring i is with the consumer */
	__u32 seq;	 /* of the next record, drops included */
	__u64 opened_ns; /* time of the active ring's first record */
	__u64 flush_ns;
	__u64 written;
	__u64 dropped;
	__u64 submitted;
	__u64 bad_free;
};

/* per slot, private; valid while the slot's state says a thread owns it */
struct ctxprof_thread {
	struct ctxprof_slot *slot;
	__u32 index;
	__u32 generation; /* ours, not re-read from the region */
	__u64 generated;  /* private copies of the slot's events_generated, */
	__u64 refused;	  /* events_refused */
	struct ctxprof_lane_producer lanes[CTXPROF_NR_LANES];
};

/* region.c */
int ctxprof_shm__create(const struct ctxprof_options *opts, struct ctxprof_shm *shm) CTXPROF_HIDDEN;
void ctxprof_shm__destroy(struct ctxprof_shm *shm) CTXPROF_HIDDEN;
struct ctxprof_slot *ctxprof_shm__slot(const struct ctxprof_shm *shm, __u32 index) CTXPROF_HIDDEN;
unsigned char *ctxprof_shm__rings(const struct ctxprof_shm *shm, __u32 index,
				  enum ctxprof_lane_id lane) CTXPROF_HIDDEN;

/* lanes.c: producer side; call only from the thread owning the lane */
void ctxprof_lane__init(struct ctxprof_lane_producer *p, struct ctxprof_lane *lane,
			unsigned char *rings, __u32 ring_count, __u32 ring_size,
			__u64 flush_ns) CTXPROF_HIDDEN;
void *ctxprof_lane__reserve(struct ctxprof_lane_producer *p, __u32 len, __u32 *seq) CTXPROF_HIDDEN;
void ctxprof_lane__commit(struct ctxprof_lane_producer *p, __u32 len, __u64 now) CTXPROF_HIDDEN;
void ctxprof_lane__flush(struct ctxprof_lane_producer *p) CTXPROF_HIDDEN;
void ctxprof_lane__flush_aged(struct ctxprof_lane_producer *p, __u64 now) CTXPROF_HIDDEN;
bool ctxprof_lane__drained(const struct ctxprof_lane_producer *p) CTXPROF_HIDDEN;
/* a ring being filled, or one to take: a reserve may work (cheap, no side effect) */
bool ctxprof_lane__can_reserve(const struct ctxprof_lane_producer *p) CTXPROF_HIDDEN;

/* tags.c: the process-wide dictionary */
__u32 ctxprof_dict__intern(const char *key, const char *value) CTXPROF_HIDDEN;
/* the dict_replay_request value last served in full; see ctxprof_dict__replay_pending() */
extern _Atomic __u32 ctxprof_dict_replay_served CTXPROF_HIDDEN;
/* entries whose record has not gone out yet (did not fit a ring) */
extern _Atomic __u32 ctxprof_dict_unsent CTXPROF_HIDDEN;
void ctxprof_dict__serve_replay(struct ctxprof_lane_producer *detail) CTXPROF_HIDDEN;

/*
 * ctxprof_dict__replay_pending() - dictionary records are owed: the
 * collector asked for the dictionary again (dict_replay_request changed) and
 * it is not all sent yet, or some entries' first record did not fit.  Three
 * loads: cheap enough for the span event path, which then calls
 * ctxprof_dict__serve_replay() with the thread's detail lane.
 */
static inline bool ctxprof_dict__replay_pending(const struct ctxprof_shm *shm)
{
	return ld32(&shm->hdr->dict_replay_request, relaxed) !=
		       atomic_load_explicit(&ctxprof_dict_replay_served, memory_order_relaxed) ||
	       atomic_load_explicit(&ctxprof_dict_unsent, memory_order_relaxed);
}
void ctxprof_dict__forget_emitted(void) CTXPROF_HIDDEN;
void ctxprof_dict__reset(void) CTXPROF_HIDDEN;
void ctxprof_dict__lock(void) CTXPROF_HIDDEN;
void ctxprof_dict__unlock(void) CTXPROF_HIDDEN;
void ctxprof_dict__reinit_lock(void) CTXPROF_HIDDEN;

/* ctxprof.c, for tags.c */
struct ctxprof_shm *ctxprof__shm(void) CTXPROF_HIDDEN;
bool ctxprof__emit_tag(__u32 id, const char *key, __u16 key_len, const char *value,
		       __u16 value_len) CTXPROF_HIDDEN;

/* for the tests: forget everything (no thread may be registered) */
void ctxprof__reset(void) CTXPROF_HIDDEN;
/* for the tests: the region's address and size, NULL before init */
void *ctxprof__region(size_t *size) CTXPROF_HIDDEN;
/* for the tests: the calling thread's private state, NULL without a slot */
struct ctxprof_thread *ctxprof__current_thread(void) CTXPROF_HIDDEN;

#endif /* CTXPROF_LIB_INTERNAL_H */
