// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The triple buffer of docs/design/calltrace-storage.md in C11 atomics.  Who touches what:
 *  - writers (put, any number of threads): s->active, the hazard slot they
 *    own, and the table that slot protects: its slots (CAS), count and arena
 *    (fetch_add); a put_held() writer keeps the hazard until it named the
 *    trace where the liveness checkers look, then releases;
 *  - the processor (one thread): everything, but a table only while no
 *    writer holds a hazard on it, or after the table stopped being ACTIVE and
 *    the writers that held it left.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "storage/calltrace_storage.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/htable.h"

#if defined(__SANITIZE_ADDRESS__)
#define CT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CT_ASAN 1
#endif
#endif

/* madvise() takes whole pages; the kernel rounds a length up to its own */
#define PAGE_MASK_BYTES ((size_t)4095)

#ifdef CT_ASAN
/* poison arena memory no trace owns, so a stale trace pointer is caught */
#include <sanitizer/asan_interface.h>
#define arena_poison(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define arena_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define arena_poison(p, n)   ((void)(p), (void)(n))
#define arena_unpoison(p, n) ((void)(p), (void)(n))
#endif

/* stop inserting past this load so probe chains stay short */
#define MAX_LOAD_PCT 75
#define MIN_ARENA    (64u << 10)
#define CACHELINE    64
/* a claimed slot is published one store later; only preemption stretches that */
#define PUBLISH_SPINS  1024
#define PUBLISH_YIELDS 4
/* pure spins on a hazard before process() starts yielding and the clock */
#define HAZARD_SPINS 256
#define KNUTH	     0x9e3779b97f4a7c15ULL

struct ct_slot {
	_Atomic uint64_t key;		   /* 0: empty; else the hash of the trace claiming it */
	_Atomic(struct calltrace *) trace; /* NULL until published (release) */
};

/* one of the three tables */
struct ct_table {
	struct ct_slot *slots;
	size_t mask;	  /* slots - 1 */
	size_t max_count; /* load cap */
	uint8_t *arena;	  /* trace memory, bump-allocated */
	size_t arena_size;
	size_t arena_kept;	/* bytes of it left resident by the last clear */
	_Atomic uint64_t epoch; /* upper half of the ids this table hands out */
	struct ct_table *next;	/* retired list; processor only */
	/* written by every insert: keep them off the read-mostly line above */
	_Alignas(CACHELINE) _Atomic size_t count; /* slots claimed or reserved */
	_Alignas(CACHELINE) _Atomic size_t arena_used;
};

/*
 * Put counters kept per hazard slot: a slot has one owner at a time, so the
 * owner updates them with plain load + store, no locked instruction and no
 * cache line shared between writers.
 */
struct ct_counters {
	_Atomic uint64_t puts;
	_Atomic uint64_t table_full;
	_Atomic uint64_t arena_full;
	_Atomic uint64_t busy_skips;
};

struct liveness {
	calltrace_liveness_fn fn;
	void *ctx;
};

struct calltrace_storage {
	/* the three roles; writers read only active */
	_Atomic(struct ct_table *) active;
	_Atomic(struct ct_table *) standby;
	_Atomic(struct ct_table *) scratch;
	_Atomic uint64_t generation; /* bumped by every rotation (ABA guard) */

	size_t capacity;
	size_t arena_size;
	unsigned int hazard_bits; /* log2 of the hazard slots */
	size_t hazard_mask;
	uint64_t hazard_wait_ns;

	/* the hazard pointer slot array, owner array and our counters */
	_Atomic(struct ct_table *) *hazards;
	_Atomic uint32_t *owners; /* tid owning each slot; 0: free */
	struct ct_counters *counters;
	_Atomic uint64_t no_hazard_slot;

	/*
	 * The processor's collections.  A design could keep them thread-local so that
	 * several threads may process; we have one process() caller, so they
	 * live here, grow outside the put path and are reused every cycle.
	 */
	struct liveness checkers[CALLTRACE_MAX_LIVENESS];
	unsigned int nr_checkers;
	struct trace_id_set *preserve;
	uint8_t *carry; /* copies of STANDBY's traces (standby_traces) */
	size_t carry_size;
	const struct calltrace **kept;
	size_t kept_size;
	struct ct_table *retired; /* tables a stalled writer still holds */

	_Atomic uint64_t rotations;
	_Atomic uint64_t hazard_waits;
	_Atomic uint64_t hazard_timeouts;
	_Atomic uint64_t hazard_wait_max_ns;
	_Atomic uint64_t tables_retired;
	_Atomic uint64_t preserve_dropped;
};

/* probe steps: odd, so coprime to any power-of-two slot count */
static const unsigned int prime_steps[16] = {
	1009, 1013, 1019, 1021, 1031, 1033, 1039, 1049,
	1051, 1061, 1063, 1069, 1087, 1091, 1093, 1097,
};

/* process-wide, so ids stay unique across storage instances too */
static _Atomic uint64_t epoch_counter = 1;

static _Thread_local uint32_t ct_tid;

#ifdef CALLTRACE_STRESS_HOOKS
/* stress builds widen the race windows: a yield, one time in 32 */
static _Thread_local uint64_t stress_rng;

static void race_window(void)
{
	if (!stress_rng)
		stress_rng = (uint64_t)gettid() * 0x9e3779b97f4a7c15ULL | 1;
	stress_rng ^= stress_rng << 13;
	stress_rng ^= stress_rng >> 7;
	stress_rng ^= stress_rng << 17;
	if (!(stress_rng & 31))
		sched_yield();
}
#else
static inline void race_window(void)
{
}
#endif

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/*
 * The hit path hashes every frame: hash_words() costs one independent
 * multiply per pair of frames.
 */
uint64_t calltrace_hash(uint32_t pid, uint32_t exec_id, const __u64 *frames, uint16_t nr_kframes,
			uint16_t nr_uframes, uint32_t flags)
{
	uint64_t seed = ((uint64_t)pid << 32) ^ ((uint64_t)nr_kframes << 16) ^ nr_uframes ^
			((uint64_t)flags << 48) ^ ((uint64_t)exec_id * KNUTH);
	uint64_t h = hash_words(seed, frames, nr_kframes + nr_uframes);

	/* 0 marks an empty slot */
	return h ? h : 1;
}

static uint64_t next_epoch(void)
{
	uint64_t e;

	/* epoch 0 is reserved; the counter wraps after 2^32 activations */
	do
		e = atomic_fetch_add_explicit(&epoch_counter, 1, memory_order_relaxed) & UINT32_MAX;
	while (!e);
	return e;
}

static inline void counter_inc(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static size_t trace_size(unsigned int nr_frames)
{
	return sizeof(struct calltrace) + (size_t)nr_frames * sizeof(__u64);
}

/* --- tables */

static void table_free(struct ct_table *t)
{
	if (!t)
		return;
	if (t->arena) {
		arena_unpoison(t->arena, t->arena_size);
		munmap(t->arena, t->arena_size);
	}
	free(t->slots);
	free(t);
}

static struct ct_table *table_new(const struct calltrace_storage *s)
{
	struct ct_table *t = aligned_alloc(CACHELINE, sizeof(*t));
	void *arena;

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->mask = s->capacity - 1;
	t->max_count = s->capacity * MAX_LOAD_PCT / 100;
	t->arena_size = s->arena_size;
	t->slots = calloc(s->capacity, sizeof(*t->slots));
	if (!t->slots)
		goto err_free;
	/*
	 * Resident now rather than over the first rotations: clearing a table
	 * writes all of it, so a table is whole in memory from its first clear
	 * on; the collector's memory is then what it will stay.
	 */
	explicit_bzero(t->slots, s->capacity * sizeof(*t->slots));
	/* reserve, don't commit: only pages traces touch become resident */
	arena = mmap(NULL, t->arena_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED)
		goto err_free;
	t->arena = arena;
	arena_poison(t->arena, t->arena_size);
	atomic_store_explicit(&t->epoch, next_epoch(), memory_order_relaxed);
	return t;

err_free:
	table_free(t);
	errno = ENOMEM;
	return NULL;
}

/* call with no writer on @t: the hazard wait or retirement ensured that */
static void table_clear(struct ct_table *t)
{
	size_t used = atomic_load_explicit(&t->arena_used, memory_order_relaxed);
	size_t keep = (t->arena_kept < used ? t->arena_kept : used) & ~PAGE_MASK_BYTES;

	/* count is exactly the claimed slots once writers are gone */
	if (atomic_load_explicit(&t->count, memory_order_relaxed))
		memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	atomic_store_explicit(&t->count, 0, memory_order_relaxed);
	arena_poison(t->arena, used);
	/*
	 * What this interval used beyond the one before goes back: an arena
	 * would stay as resident as the busiest interval it ever held, and
	 * under process churn (new stacks every interval) that crept up for
	 * minutes.  What both used stays: giving it back too costs a page
	 * fault per 4 KiB of new traces in every interval (6x the miss path).
	 */
	if (used > keep)
		madvise(t->arena + keep, ((used + PAGE_MASK_BYTES) & ~PAGE_MASK_BYTES) - keep,
			MADV_DONTNEED);
	if (used)
		t->arena_kept = used;
	atomic_store_explicit(&t->arena_used, 0, memory_order_relaxed);
}

/*
 * Bump by compare-and-swap, not fetch_add: a fetch_add past the end needs an
 * undo, and an undo racing a successful allocation hands its block out twice.
 * acquire orders our unpoison after the poison of a rolled-back block.
 */
static struct calltrace *arena_alloc(struct ct_table *t, size_t size)
{
	size_t off = atomic_load_explicit(&t->arena_used, memory_order_acquire);

	do {
		if (size > t->arena_size - off)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(
		&t->arena_used, &off, off + size, memory_order_acq_rel, memory_order_acquire));
	arena_unpoison(t->arena + off, size);
	return (struct calltrace *)(t->arena + off);
}

/* give back the last block if nobody allocated after it; else it stays unused */
static void arena_unalloc(struct ct_table *t, struct calltrace *tr, size_t size)
{
	size_t off = (uint8_t *)tr - t->arena, end = off + size;

	arena_poison(tr, size);
	atomic_compare_exchange_strong_explicit(&t->arena_used, &end, off, memory_order_release,
						memory_order_relaxed);
}

static bool trace_equal(const struct calltrace *t, uint64_t h, uint32_t pid, uint32_t exec_id,
			const __u64 *frames, uint16_t nk, uint16_t nu, uint32_t flags)
{
	return t->hash == h && t->pid == pid && t->exec_id == exec_id && t->nr_kframes == nk &&
	       t->nr_uframes == nu && t->flags == flags &&
	       !memcmp(t->frames, frames, (size_t)(nk + nu) * sizeof(*frames));
}

/* NULL if the claimer did not publish within a short, bounded wait */
static struct calltrace *slot_wait_published(struct ct_slot *sl)
{
	struct calltrace *tr;
	unsigned int i;

	for (i = 0; i < PUBLISH_SPINS + PUBLISH_YIELDS; i++) {
		tr = atomic_load_explicit(&sl->trace, memory_order_acquire);
		if (tr)
			return tr;
		if (i < PUBLISH_SPINS)
			cpu_relax();
		else
			sched_yield();
	}
	return NULL;
}

/*
 * Find or insert a trace in @t, which the caller's hazard protects.  A miss
 * reserves a count and arena memory and fills the trace before it claims a
 * slot, so that claim and publish are one store apart.
 */
static uint64_t table_put(struct ct_table *t, struct ct_counters *ctr, uint64_t h, uint32_t pid,
			  uint32_t exec_id, const __u64 *frames, uint16_t nk, uint16_t nu,
			  uint32_t flags)
{
	size_t i = h & t->mask, probes, size = trace_size(nk + nu);
	struct calltrace *nt = NULL, *tr;
	struct ct_slot *sl;
	uint64_t k, epoch;

	for (probes = 0; probes <= t->mask; probes++, i = (i + 1) & t->mask) {
		sl = &t->slots[i];
		k = atomic_load_explicit(&sl->key, memory_order_acquire);
		if (!k) {
			if (!nt) {
				if (atomic_fetch_add_explicit(&t->count, 1, memory_order_relaxed) >=
				    t->max_count)
					goto table_full;
				nt = arena_alloc(t, size);
				if (!nt)
					goto arena_full;
				nt->hash = h;
				nt->pid = pid;
				nt->nr_kframes = nk;
				nt->nr_uframes = nu;
				nt->flags = flags;
				nt->exec_id = exec_id;
				memcpy(nt->frames, frames, (size_t)(nk + nu) * sizeof(*frames));
				race_window();
			}
			if (atomic_compare_exchange_strong_explicit(
				    &sl->key, &k, h, memory_order_acq_rel, memory_order_acquire)) {
				race_window();
				epoch = atomic_load_explicit(&t->epoch, memory_order_relaxed);
				nt->trace_id = epoch << 32 | i;
				atomic_store_explicit(&sl->trace, nt, memory_order_release);
				counter_inc(&ctr->puts);
				return nt->trace_id;
			}
			/* lost the slot; k is the winner's key: maybe our very trace */
		}
		if (k != h)
			continue;
		tr = slot_wait_published(sl);
		if (!tr) {
			counter_inc(&ctr->busy_skips);
			continue;
		}
		if (!trace_equal(tr, h, pid, exec_id, frames, nk, nu, flags))
			continue;
		if (nt) {
			arena_unalloc(t, nt, size);
			atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
		}
		counter_inc(&ctr->puts);
		return tr->trace_id;
	}
	/* unreachable: the load cap leaves empty slots; keep the count honest */
	if (nt) {
		arena_unalloc(t, nt, size);
		atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
	}
	counter_inc(&ctr->table_full);
	return CALLTRACE_DROPPED_TRACE_ID;

table_full:
	atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
	counter_inc(&ctr->table_full);
	return CALLTRACE_DROPPED_TRACE_ID;
arena_full:
	atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
	counter_inc(&ctr->arena_full);
	return CALLTRACE_DROPPED_TRACE_ID;
}

/*
 * putWithExistingIdLockFree(): a live trace moves into STANDBY, id and all.
 * Only the processor writes STANDBY, so no dedup: a stack may legitimately
 * be there twice, under its preserved id and under a newer one.
 */
static bool table_put_existing(struct ct_table *t, const struct calltrace *src)
{
	size_t i = src->hash & t->mask, size = trace_size(src->nr_kframes + src->nr_uframes);
	struct calltrace *nt;
	size_t probes;
	uint64_t k;

	if (atomic_fetch_add_explicit(&t->count, 1, memory_order_relaxed) >= t->max_count)
		goto err_unreserve;
	nt = arena_alloc(t, size);
	if (!nt)
		goto err_unreserve;
	memcpy(nt, src, size);
	/* the load cap leaves a slot empty; the bound only guards against a bug */
	for (probes = 0; probes <= t->mask; probes++, i = (i + 1) & t->mask) {
		k = 0;
		if (atomic_compare_exchange_strong_explicit(&t->slots[i].key, &k, src->hash,
							    memory_order_acq_rel,
							    memory_order_relaxed)) {
			atomic_store_explicit(&t->slots[i].trace, nt, memory_order_release);
			return true;
		}
	}
	arena_unalloc(t, nt, size);

err_unreserve:
	atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
	return false;
}

/* --- hazard pointers */

/* after fork() the child keeps its parent thread's tid: still unique in the child */
static inline uint32_t self_tid(void)
{
	if (!ct_tid)
		ct_tid = (uint32_t)gettid();
	return ct_tid;
}

/* a thread's hazard slot: -1 when every probed slot is taken */
static long hazard_acquire(struct calltrace_storage *s, uint32_t tid)
{
	uint64_t h = (uint64_t)tid * KNUTH;
	size_t base = s->hazard_bits ? h >> (64 - s->hazard_bits) : 0;
	size_t step = prime_steps[(h >> 4) % 16], slot;
	uint32_t owner;
	unsigned int i;

	for (i = 0; i < CALLTRACE_HAZARD_MAX_PROBE; i++) {
		slot = (base + i * step) & s->hazard_mask;
		owner = 0;
		if (atomic_compare_exchange_strong_explicit(&s->owners[slot], &owner, tid,
							    memory_order_acquire,
							    memory_order_relaxed))
			return (long)slot;
		/*
		 * owner == tid would be a put of ours further up this stack.  The
		 * design reuses the slot there; put() is never reentered here, and
		 * reusing would let the inner put clear the outer one's hazard,
		 * so such a slot is skipped like any taken one.
		 */
	}
	return -1;
}

static void hazard_release(struct calltrace_storage *s, long slot)
{
	atomic_store_explicit(&s->hazards[slot], NULL, memory_order_release);
	atomic_store_explicit(&s->owners[slot], 0, memory_order_release);
}

/*
 * Wait until no hazard slot holds @t: one pass over the slots, waiting at
 * each slot that does.  One pass suffices: @t is no longer ACTIVE (or never
 * was), so a writer publishing @t behind the scan fails its re-check and
 * never touches @t.  Spins, then sched_yield()s until hazard_wait_ns passed.
 * Return: false on timeout.
 */
static void note_wait(struct calltrace_storage *s, uint64_t start)
{
	uint64_t ns = mono_ns() - start;

	if (ns > atomic_load_explicit(&s->hazard_wait_max_ns, memory_order_relaxed))
		atomic_store_explicit(&s->hazard_wait_max_ns, ns, memory_order_relaxed);
}

static bool hazard_wait(struct calltrace_storage *s, const struct ct_table *t)
{
	uint64_t start = 0, now;
	unsigned int spins = 0;
	size_t i;

	for (i = 0; i <= s->hazard_mask; i++) {
		/* seq_cst: pairs with the writer's store-then-recheck (Dekker) */
		while (atomic_load(&s->hazards[i]) == t) {
			if (spins++ < HAZARD_SPINS) {
				cpu_relax();
				continue;
			}
			now = mono_ns();
			if (!start) {
				atomic_fetch_add_explicit(&s->hazard_waits, 1,
							  memory_order_relaxed);
				start = now;
			} else if (now - start >= s->hazard_wait_ns) {
				atomic_fetch_add_explicit(&s->hazard_timeouts, 1,
							  memory_order_relaxed);
				note_wait(s, start);
				return false;
			}
			sched_yield();
		}
	}
	if (start)
		note_wait(s, start);
	return true;
}

static bool hazard_held(struct calltrace_storage *s, const struct ct_table *t)
{
	size_t i;

	for (i = 0; i <= s->hazard_mask; i++)
		if (atomic_load(&s->hazards[i]) == t)
			return true;
	return false;
}

uint64_t calltrace_storage__put_held(struct calltrace_storage *s, uint32_t pid, uint32_t exec_id,
				     const __u64 *frames, uint16_t nr_kframes, uint16_t nr_uframes,
				     uint32_t flags, long *hold)
{
	uint64_t h = calltrace_hash(pid, exec_id, frames, nr_kframes, nr_uframes, flags), gen, id;
	long slot = hazard_acquire(s, self_tid());
	struct ct_table *t;

	*hold = slot;
	if (slot < 0) {
		atomic_fetch_add_explicit(&s->no_hazard_slot, 1, memory_order_relaxed);
		return CALLTRACE_DROPPED_TRACE_ID;
	}
	/*
	 * Load, publish, re-verify.  The hazard store and the re-check are
	 * seq_cst against process()'s exchange and scan (Dekker): either it sees
	 * our hazard, or we see its rotation and retry.  (A membarrier()-based
	 * asymmetric fence would make the store plain; measured, the locked
	 * store costs nothing visible next to the hash and probe, so we stay
	 * within C11, where TSan can check us.)  The pointer check alone
	 * keeps memory safe; the generation also catches a table address that
	 * left ACTIVE and came back (or was freed and reallocated) meanwhile.
	 * Each retry means a rotation happened: lock-free, not wait-free.
	 */
	for (;;) {
		gen = atomic_load_explicit(&s->generation, memory_order_acquire);
		t = atomic_load_explicit(&s->active, memory_order_acquire);
		race_window();
		atomic_store(&s->hazards[slot], t);
		if (atomic_load(&s->active) == t && atomic_load(&s->generation) == gen)
			break;
	}
	race_window();
	id = table_put(t, &s->counters[slot], h, pid, exec_id, frames, nr_kframes, nr_uframes,
		       flags);
	race_window();
	return id;
}

void calltrace_storage__release(struct calltrace_storage *s, long hold)
{
	if (hold >= 0)
		hazard_release(s, hold);
}

uint64_t calltrace_storage__put(struct calltrace_storage *s, uint32_t pid, uint32_t exec_id,
				const __u64 *frames, uint16_t nr_kframes, uint16_t nr_uframes,
				uint32_t flags)
{
	long hold;
	uint64_t id = calltrace_storage__put_held(s, pid, exec_id, frames, nr_kframes, nr_uframes,
						  flags, &hold);

	calltrace_storage__release(s, hold);
	return id;
}

/* --- the processor */

/*
 * A table due to be cleared must have no writer left.  Normally the wait is
 * instant (its writers left when it stopped being ACTIVE).  A writer stalled
 * past the bound keeps the table: it is retired, freed by a later call, and
 * a fresh table stands in.  Without memory for one, wait as long as it takes.
 */
static struct ct_table *table_reclaim(struct calltrace_storage *s, struct ct_table *t)
{
	struct ct_table *fresh;

	if (hazard_wait(s, t))
		return t;
	fresh = table_new(s);
	if (!fresh) {
		while (!hazard_wait(s, t))
			;
		return t;
	}
	t->next = s->retired;
	s->retired = t;
	atomic_fetch_add_explicit(&s->tables_retired, 1, memory_order_relaxed);
	return fresh;
}

static void retired_reap(struct calltrace_storage *s)
{
	struct ct_table **pp = &s->retired, *t;

	while ((t = *pp)) {
		if (hazard_held(s, t)) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		table_free(t);
	}
}

/*
 * Step 1: STANDBY's traces, copied out, because STANDBY is cleared and
 * written by writers as ACTIVE before step 5 hands them over.
 * Return: traces in s->kept.
 */
static size_t standby_collect(struct calltrace_storage *s, struct ct_table *t)
{
	size_t count = atomic_load_explicit(&t->count, memory_order_relaxed);
	size_t used = atomic_load_explicit(&t->arena_used, memory_order_relaxed);
	size_t i, n = 0, off = 0, size;
	const struct calltrace *tr;

	if (!count)
		return 0;
	if (array_grow((void **)&s->carry, &s->carry_size, used, 1, 64) ||
	    array_grow((void **)&s->kept, &s->kept_size, count, sizeof(struct calltrace *), 64)) {
		atomic_fetch_add_explicit(&s->preserve_dropped, count, memory_order_relaxed);
		return 0;
	}
	for (i = 0; i <= t->mask && n < count; i++) {
		tr = atomic_load_explicit(&t->slots[i].trace, memory_order_acquire);
		if (!tr)
			continue;
		size = trace_size(tr->nr_kframes + tr->nr_uframes);
		memcpy(s->carry + off, tr, size);
		s->kept[n++] = (const struct calltrace *)(s->carry + off);
		off += size;
	}
	return n;
}

static void preserve(struct calltrace_storage *s, struct ct_table *standby,
		     const struct calltrace *tr)
{
	if (!trace_id_set__contains(s->preserve, tr->trace_id))
		return;
	if (!table_put_existing(standby, tr))
		atomic_fetch_add_explicit(&s->preserve_dropped, 1, memory_order_relaxed);
}

size_t calltrace_storage__process(struct calltrace_storage *s, calltrace_fn fn, void *ctx)
{
	struct ct_table *standby, *old_active, *old_scratch, *fresh;
	bool live;
	size_t i, n, nr_kept;
	const struct calltrace *tr;

	retired_reap(s);

	/* step 1: collect STANDBY (traces preserved by the previous call) */
	standby = atomic_load_explicit(&s->standby, memory_order_relaxed);
	nr_kept = standby_collect(s, standby);

	/* step 2: clear STANDBY, a new epoch for its turn as ACTIVE */
	standby = table_reclaim(s, standby);
	table_clear(standby);
	atomic_store_explicit(&standby->epoch, next_epoch(), memory_order_relaxed);

	/* step 3: rotation; seq_cst, the writers' re-check pairs with it */
	atomic_fetch_add(&s->generation, 1);
	old_active = atomic_exchange(&s->active, standby);
	old_scratch = atomic_exchange(&s->scratch, old_active);
	atomic_store(&s->standby, old_scratch);

	/*
	 * Step 4: SCRATCH (the old ACTIVE) is read-only once its writers left.
	 * On timeout a stalled writer may still add its one trace; we read what
	 * is published (claimed-but-unpublished slots read as empty).
	 * Steps 4 and 5 are one pass: the old ACTIVE's traces stay put until
	 * the next call, so they need no collection of their own.
	 */
	hazard_wait(s, old_active);

	/*
	 * Liveness, after the rotation and the wait: a writer holds its hazard
	 * from its put until the event naming the trace is appended
	 * (put_held()/release()), so every trace of the old ACTIVE is named by
	 * now, and the checkers see every reference into the tables this call
	 * is about to clear (the copies of STANDBY and the old ACTIVE).  Run
	 * before the rotation, they missed an event appended in between.
	 */
	trace_id_set__clear(s->preserve);
	for (i = 0; i < s->nr_checkers; i++)
		s->checkers[i].fn(s->checkers[i].ctx, s->preserve);
	live = trace_id_set__count(s->preserve) > 0;

	/* step 5: hand over STANDBY's preserved traces and the old ACTIVE's */
	for (i = 0; i < nr_kept; i++)
		fn(ctx, s->kept[i]);
	n = nr_kept;
	for (i = 0; i <= old_active->mask; i++) {
		tr = atomic_load_explicit(&old_active->slots[i].trace, memory_order_acquire);
		if (!tr)
			continue;
		fn(ctx, tr);
		n++;
	}

	/* step 6: the new STANDBY takes the live traces, ids unchanged */
	fresh = table_reclaim(s, old_scratch);
	if (fresh != old_scratch)
		atomic_store(&s->standby, fresh);
	table_clear(fresh);
	if (live) {
		for (i = 0; i < nr_kept; i++)
			preserve(s, fresh, s->kept[i]);
		for (i = 0; i <= old_active->mask; i++) {
			tr = atomic_load_explicit(&old_active->slots[i].trace,
						  memory_order_acquire);
			if (tr)
				preserve(s, fresh, tr);
		}
	}
	atomic_fetch_add_explicit(&s->rotations, 1, memory_order_relaxed);
	return n;
}

int calltrace_storage__register_liveness(struct calltrace_storage *s, calltrace_liveness_fn fn,
					 void *ctx)
{
	if (!fn)
		return -EINVAL;
	if (s->nr_checkers >= CALLTRACE_MAX_LIVENESS)
		return -ENOSPC;
	s->checkers[s->nr_checkers].fn = fn;
	s->checkers[s->nr_checkers].ctx = ctx;
	s->nr_checkers++;
	return 0;
}

/* --- life cycle and stats */

struct calltrace_storage *calltrace_storage__new_opts(const struct calltrace_storage_opts *opts)
{
	size_t cap = 16, hz = opts->hazard_slots ? opts->hazard_slots : CALLTRACE_HAZARD_SLOTS;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct calltrace_storage *s;

	if (!opts->capacity || opts->capacity > (1u << 30) || hz > CALLTRACE_HAZARD_SLOTS ||
	    (hz & (hz - 1)) || opts->arena_bytes > ((size_t)1 << 40)) {
		errno = EINVAL;
		return NULL;
	}
	while (cap < opts->capacity)
		cap <<= 1;
	s = aligned_alloc(CACHELINE, (sizeof(*s) + CACHELINE - 1) / CACHELINE * CACHELINE);
	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->capacity = cap;
	s->arena_size = opts->arena_bytes;
	if (!s->arena_size) {
		s->arena_size = cap * MAX_LOAD_PCT / 100 * CALLTRACE_ARENA_BYTES_PER_TRACE;
		if (s->arena_size < MIN_ARENA)
			s->arena_size = MIN_ARENA;
	}
	s->arena_size = (s->arena_size + page - 1) / page * page;
	s->hazard_mask = hz - 1;
	while ((1ul << s->hazard_bits) < hz)
		s->hazard_bits++;
	s->hazard_wait_ns =
		(uint64_t)(opts->hazard_wait_ms ? opts->hazard_wait_ms : CALLTRACE_HAZARD_WAIT_MS) *
		1000000ull;

	s->hazards = calloc(hz, sizeof(*s->hazards));
	s->owners = calloc(hz, sizeof(*s->owners));
	s->counters = calloc(hz, sizeof(*s->counters));
	s->preserve = trace_id_set__new(64);
	if (!s->hazards || !s->owners || !s->counters || !s->preserve)
		goto err_free;
	atomic_init(&s->active, table_new(s));
	atomic_init(&s->standby, table_new(s));
	atomic_init(&s->scratch, table_new(s));
	if (!atomic_load(&s->active) || !atomic_load(&s->standby) || !atomic_load(&s->scratch))
		goto err_free;
	return s;

err_free:
	calltrace_storage__free(s);
	errno = ENOMEM;
	return NULL;
}

struct calltrace_storage *calltrace_storage__new(size_t capacity)
{
	struct calltrace_storage_opts opts = {.capacity = capacity};

	return calltrace_storage__new_opts(&opts);
}

void calltrace_storage__free(struct calltrace_storage *s)
{
	struct ct_table *t;

	if (!s)
		return;
	table_free(atomic_load(&s->active));
	table_free(atomic_load(&s->standby));
	table_free(atomic_load(&s->scratch));
	while ((t = s->retired)) {
		s->retired = t->next;
		table_free(t);
	}
	free(s->hazards);
	free(s->owners);
	free(s->counters);
	trace_id_set__free(s->preserve);
	free(s->carry);
	free(s->kept);
	free(s);
}

void calltrace_storage__stats(const struct calltrace_storage *s, struct calltrace_storage_stats *st)
{
	/* only atomic loads through it: stats() takes a const storage */
	struct calltrace_storage *m = (struct calltrace_storage *)s;
	struct ct_table *active = atomic_load(&m->active), *standby = atomic_load(&m->standby);
	struct ct_counters *c;
	size_t i, n;

	memset(st, 0, sizeof(*st));
	for (i = 0; i <= s->hazard_mask; i++) {
		c = &m->counters[i];
		st->puts += atomic_load_explicit(&c->puts, memory_order_relaxed);
		st->dropped_table_full +=
			atomic_load_explicit(&c->table_full, memory_order_relaxed);
		st->dropped_arena_full +=
			atomic_load_explicit(&c->arena_full, memory_order_relaxed);
		st->busy_skips += atomic_load_explicit(&c->busy_skips, memory_order_relaxed);
	}
	st->dropped_no_hazard_slot = atomic_load_explicit(&m->no_hazard_slot, memory_order_relaxed);
	st->dropped = st->dropped_table_full + st->dropped_arena_full + st->dropped_no_hazard_slot;
	/* count runs ahead of the slots by in-flight reservations; clamp */
	n = atomic_load_explicit(&active->count, memory_order_relaxed);
	st->traces = n < active->max_count ? n : active->max_count;
	st->preserved = atomic_load_explicit(&standby->count, memory_order_relaxed);
	st->arena_used = atomic_load_explicit(&active->arena_used, memory_order_relaxed);
	st->arena_bytes = s->arena_size;
	st->capacity = s->capacity;
	st->preserve_dropped = atomic_load_explicit(&m->preserve_dropped, memory_order_relaxed);
	st->rotations = atomic_load_explicit(&m->rotations, memory_order_relaxed);
	st->hazard_waits = atomic_load_explicit(&m->hazard_waits, memory_order_relaxed);
	st->hazard_timeouts = atomic_load_explicit(&m->hazard_timeouts, memory_order_relaxed);
	st->hazard_wait_max_ns = atomic_load_explicit(&m->hazard_wait_max_ns, memory_order_relaxed);
	st->tables_retired = atomic_load_explicit(&m->tables_retired, memory_order_relaxed);
}

#ifdef CALLTRACE_TEST_HOOKS
/* owner of the hazard slots the test hooks occupy: above any pid_max */
#define GHOST_TID UINT32_MAX

size_t calltrace_storage__test_hazards(struct calltrace_storage *s, unsigned int what)
{
	uint32_t owner;
	size_t i, n = 0;

	for (i = 0; i <= s->hazard_mask; i++) {
		if (atomic_load(&s->owners[i]) == GHOST_TID)
			hazard_release(s, (long)i);
	}
	for (i = 0; i <= s->hazard_mask && what; i++) {
		owner = 0;
		if (!atomic_compare_exchange_strong(&s->owners[i], &owner, GHOST_TID))
			continue;
		n++;
		if (what & CALLTRACE_TEST_PIN_ACTIVE) {
			atomic_store(&s->hazards[i], atomic_load(&s->active));
			what &= ~CALLTRACE_TEST_PIN_ACTIVE;
		}
		if (!(what & CALLTRACE_TEST_HOG_SLOTS))
			break;
	}
	return n;
}
#endif /* CALLTRACE_TEST_HOOKS */

/* @trace_id in @t when @t hands out its epoch: a slot read, no probe */
static const struct calltrace *table_find(const struct ct_table *t, uint64_t trace_id)
{
	uint64_t slot = trace_id & 0xffffffffu;
	struct calltrace *tr;

	if (trace_id >> 32 != atomic_load_explicit(&t->epoch, memory_order_acquire) ||
	    slot > t->mask)
		return NULL;
	tr = atomic_load_explicit(&t->slots[slot].trace, memory_order_acquire);
	return tr && tr->trace_id == trace_id ? tr : NULL;
}

const struct calltrace *calltrace_storage__lookup(struct calltrace_storage *s, uint64_t trace_id)
{
	const struct calltrace *tr;

	/* only the processor clears tables, and it is the caller: no hazard needed */
	tr = table_find(atomic_load_explicit(&s->active, memory_order_acquire), trace_id);
	if (!tr)
		tr = table_find(atomic_load_explicit(&s->scratch, memory_order_acquire), trace_id);
	return tr;
}

/* --- trace_id_set: ids in add order, indexed by util/htable */

struct trace_id_set {
	uint64_t *ids;
	size_t nr, cap;
	struct htable index;
};

struct trace_id_set *trace_id_set__new(size_t hint)
{
	struct trace_id_set *set = calloc(1, sizeof(*set));
	int err = 0;

	if (!set)
		return NULL;
	/* zeroed, index and array are empty and grow on add: size them only when told */
	if (hint) {
		err = htable__init(&set->index, hint, 0);
		if (!err)
			err = array_grow((void **)&set->ids, &set->cap, hint, sizeof(*set->ids),
					 hint);
	}
	if (err) {
		trace_id_set__free(set);
		errno = -err;
		return NULL;
	}
	return set;
}

void trace_id_set__free(struct trace_id_set *set)
{
	if (!set)
		return;
	htable__destroy(&set->index);
	free(set->ids);
	free(set);
}

static bool id_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const uint64_t *)ctx)[idx] == *(const uint64_t *)key;
}

static bool id_find(const struct trace_id_set *set, uint64_t id, uint32_t hash)
{
	return htable__find(&set->index, hash, id_eq, set->ids, &id) != HTABLE_NONE;
}

int trace_id_set__add(struct trace_id_set *set, uint64_t id)
{
	uint32_t hash = hash_u64(id);
	int err;

	if (!(id >> 32))
		return -EINVAL;
	if (id_find(set, id, hash))
		return 0;
	err = array_grow((void **)&set->ids, &set->cap, set->nr + 1, sizeof(*set->ids), 64);
	if (err)
		return err;
	err = htable__insert(&set->index, hash, set->nr);
	if (err)
		return err;
	set->ids[set->nr++] = id;
	return 0;
}

bool trace_id_set__contains(const struct trace_id_set *set, uint64_t id)
{
	return id >> 32 && id_find(set, id, hash_u64(id));
}

size_t trace_id_set__count(const struct trace_id_set *set)
{
	return set->nr;
}

void trace_id_set__clear(struct trace_id_set *set)
{
	htable__clear(&set->index);
	set->nr = 0;
}
