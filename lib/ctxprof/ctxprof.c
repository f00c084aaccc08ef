// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libctxprof: the public API, thread registration and the context write
 * protocol (docs/design/context-slot.md, docs/design/app-region.md).
 *
 * Per thread, three initial-exec TLS words (initial-exec: a plain %fs-relative
 * load, no __tls_get_addr call, on the hot path; 24 bytes of static TLS,
 * which glibc's surplus covers even when the library is dlopen()ed):
 *   tls_ctx     the context the hot calls write: the thread's slot, or
 *               dummy_context when it has none (refused, exited, disabled),
 *               or NULL before its first call (then: register);
 *   tls_thread  the thread's private producer state, NULL without a slot;
 *   tls_status  why.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define TLS_IE __attribute__((tls_model("initial-exec")))

enum thread_status {
	TS_NONE = 0,   /* no slot yet: the next call registers */
	TS_REGISTERED, /* tls_thread valid */
	TS_REFUSED,    /* no slot was free, or the library is disabled */
	TS_EXITED,     /* the exit destructor ran: never register again */
};

static __thread struct ctxprof_context *tls_ctx TLS_IE;
static __thread struct ctxprof_thread *tls_thread TLS_IE;
static __thread unsigned char tls_status TLS_IE;

/*
 * Where threads without a slot write, so the hot path has no extra branch.
 * Shared by all of them: the stores are atomic, so this is no data race,
 * and nobody reads it.
 */
static struct ctxprof_context dummy_context;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool initialized;		  /* under init_lock */
static int init_error;			  /* under init_lock; read racily by ctxprof_get_stats() */
static bool once_done;			  /* key and atfork handlers exist; under init_lock */
static struct ctxprof_options saved_opts; /* a fork child re-creates its region with them */
static bool have_saved_opts;
static pthread_key_t thread_key;
static struct ctxprof_shm shm_storage;
static struct ctxprof_shm *_Atomic shm_ready; /* &shm_storage once usable */
static struct ctxprof_thread *threads;	      /* [max_threads], private */
/*
 * Bit i: slot i was released by one of our threads (Draining, maybe
 * Inactive by now) and may be recycled.  Only the library releases slots,
 * so this private map is complete, and finding a slot to recycle costs a
 * few word loads instead of a scan of every slot's cache line.
 */
static _Atomic __u64 *released;
static _Atomic __u64 events_unregistered;

/* ------------------------------------------------------------------------ */
/* the context write protocol                                                */

/*
 * The reader that matters is the BPF sampler, which runs in the perf
 * interrupt of the CPU this thread is running on and copies the 64 bytes
 * (with the slot's state and tid behind them).
 * An interrupt is precise: it lands between two instructions, and a CPU sees
 * its own earlier stores, store buffer included, in program order, on x86
 * (TSO) and on arm64 alike (a PE's reads of its own writes are ordered by
 * per-location coherence and the interrupt is program-order after them).
 * So the sampler sees exactly the stores the compiler emitted before the
 * interrupted instruction, and the only reordering to prevent is the
 * compiler's: no hardware barrier is needed on either architecture.
 * atomic_signal_fence() is C11's compiler-only fence "between a thread and
 * a signal handler executed on the same thread", which is what an interrupt
 * on the thread's CPU is; it emits no instruction.  The stores are relaxed
 * atomics so that each is one single-copy-atomic instruction (no tearing,
 * no merging, no elision).  Release stores would cost an STLR
 * per store on arm64 and its volatile (seq_cst) final store an XCHG/MFENCE on
 * x86 (see bench/context_bench.c) without adding anything for this reader.
 * A reader on another CPU (the stress test, a userspace reader) gets no
 * ordering from this, which the checksum covers: a mix of two updates
 * fails the hash and is rejected.
 */
static inline void context_begin(struct ctxprof_context *c)
{
	/*
	 * checksum = 0 first (a release store would do).  Relaxed is enough: the fence
	 * below keeps the compiler from sinking it under the field stores,
	 * and the CPU shows it to its own interrupts in program order.  From
	 * here until the final store the sampler sees "no context".
	 */
	st64(&c->checksum, 0, relaxed);
	atomic_signal_fence(memory_order_release);
}

static inline void context_end(struct ctxprof_context *c, __u64 checksum)
{
	/*
	 * Every field store above must be emitted before the checksum: the
	 * fence is a compiler barrier for them (with release, the final store is
	 * volatile, a full fence; the same-CPU reader needs only this order).
	 * Relaxed store: one instruction, a plain MOV on x86, STR on arm64.
	 */
	atomic_signal_fence(memory_order_release);
	st64(&c->checksum, checksum, relaxed);
}

static inline void context_write(struct ctxprof_context *c, __u64 span_id, __u64 root_id)
{
	__u64 checksum = ctxprof_context_checksum(span_id, root_id);

	context_begin(c);
	/*
	 * span then root (release each would do).  Inside the window their
	 * relative order does not matter to the sampler, which sees checksum
	 * 0 until context_end(); relaxed keeps each a single untorn store.
	 */
	st64(&c->span_id, span_id, relaxed);
	st64(&c->local_root_span_id, root_id, relaxed);
	context_end(c, checksum);
}

static inline void context_clear(struct ctxprof_context *c, bool keep_checksum_zero)
{
	int i;

	context_begin(c);
	st64(&c->span_id, 0, relaxed);
	st64(&c->local_root_span_id, 0, relaxed);
	/* tags: inside the window like the ids, so all-or-nothing for the sampler */
	for (i = 0; i < CTXPROF_MAX_TAGS; i++)
		st32(&c->tags[i], 0, relaxed);
	if (!keep_checksum_zero)
		context_end(c, ctxprof_context_checksum(0, 0));
}

/* ------------------------------------------------------------------------ */
/* initialization                                                             */

static void thread_exit(void *arg);
static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

/* under init_lock */
static int init_locked(const struct ctxprof_options *opts)
{
	int err;

	if (!once_done) {
		err = pthread_key_create(&thread_key, thread_exit);
		if (err)
			return -err;
		err = pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		if (err) {
			pthread_key_delete(thread_key);
			return -err;
		}
		once_done = true;
	}
	err = ctxprof_shm__create(opts, &shm_storage);
	if (err)
		return err;
	threads = calloc(shm_storage.max_threads, sizeof(*threads));
	released = calloc((shm_storage.max_threads + 63) / 64, sizeof(*released));
	if (!threads || !released) {
		free(threads);
		free(released);
		threads = NULL;
		released = NULL;
		ctxprof_shm__destroy(&shm_storage);
		return -ENOMEM;
	}
	atomic_store_explicit(&shm_ready, &shm_storage, memory_order_release);
	return 0;
}

int ctxprof_init(const struct ctxprof_options *opts)
{
	int err;

	pthread_mutex_lock(&init_lock);
	if (initialized) {
		err = -EALREADY;
		goto out;
	}
	if (opts) {
		memset(&saved_opts, 0, sizeof(saved_opts));
		memcpy(&saved_opts, opts,
		       opts->sz < sizeof(saved_opts) ? opts->sz : sizeof(saved_opts));
		have_saved_opts = true;
	}
	err = init_locked(have_saved_opts ? &saved_opts : NULL);
	initialized = true;
	init_error = err;
out:
	pthread_mutex_unlock(&init_lock);
	return err;
}

/* the region, initializing with defaults on first use; NULL when disabled */
struct ctxprof_shm *ctxprof__shm(void)
{
	struct ctxprof_shm *shm = atomic_load_explicit(&shm_ready, memory_order_acquire);

	if (likely(shm))
		return shm;
	ctxprof_init(NULL);
	return atomic_load_explicit(&shm_ready, memory_order_acquire);
}

/* ------------------------------------------------------------------------ */
/* registration                                                               */

static void set_refused(void)
{
	tls_thread = NULL;
	tls_ctx = &dummy_context;
	tls_status = TS_REFUSED;
}

/* a never-used slot, by fetch_add; sets *gen */
static int claim_fresh(struct ctxprof_shm *shm, __u32 *gen)
{
	struct ctxprof_slot *s;
	__u32 i;

	/* don't let failed claims run the counter up forever */
	if (ld32(&shm->hdr->thread_count, relaxed) >= shm->max_threads)
		return -1;
	/*
	 * Relaxed: the RMW alone makes the index ours; the slot's contents
	 * are published by the release store of state Active.
	 */
	i = add32(&shm->hdr->thread_count, 1, relaxed);
	if (i >= shm->max_threads)
		return -1;
	s = ctxprof_shm__slot(shm, i);
	*gen = CTXPROF_SLOT_GENERATION(ld64(&s->state_gen, relaxed)) + 1;
	st64(&s->state_gen, CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_REGISTERING, *gen), relaxed);
	return i;
}

static bool consumer_stale(struct ctxprof_shm *shm)
{
	__u64 hb = ld64(&shm->hdr->consumer_heartbeat_ns, relaxed);
	__u64 now = ctxprof_now_ns();

	/* a heartbeat from the future (other clock) counts as alive: keep the events */
	return !hb || (now > hb && now - hb > shm->consumer_stale_ns);
}

/*
 * Try to take slot @i, released earlier by one of our threads.  We CAS
 * first and look second, so that only the owner of the slot (state
 * Registering) reads the private state its previous thread left; a Draining
 * slot that must stay goes back to Draining.  *@stale caches the heartbeat
 * verdict across the slots of one registration (-1: not known yet).
 */
static bool try_recycle(struct ctxprof_shm *shm, __u32 i, __u32 *gen, int *stale)
{
	struct ctxprof_slot *s = ctxprof_shm__slot(shm, i);
	struct ctxprof_thread *old = &threads[i];
	__u64 sw = ld64(&s->state_gen, relaxed);
	__u32 st = CTXPROF_SLOT_STATE(sw);

	if (st != CTXPROF_SLOT_INACTIVE && st != CTXPROF_SLOT_DRAINING)
		return false;
	*gen = CTXPROF_SLOT_GENERATION(sw) + 1;
	/* acquire: see what the slot's last thread wrote before it let go */
	if (!atomic_compare_exchange_strong_explicit(
		    (_Atomic __u64 *)&s->state_gen, &sw,
		    CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_REGISTERING, *gen), memory_order_acquire,
		    memory_order_relaxed))
		return false;
	/* Inactive, or Draining with nothing left for the consumer, or no consumer coming */
	if (st == CTXPROF_SLOT_DRAINING &&
	    !(ctxprof_lane__drained(&old->lanes[CTXPROF_LANE_INDEX]) &&
	      ctxprof_lane__drained(&old->lanes[CTXPROF_LANE_DETAIL]))) {
		if (*stale < 0)
			*stale = consumer_stale(shm);
		if (!*stale) {
			/* as it was: a collector's CAS from (Draining, generation) still works */
			st64(&s->state_gen, sw, release);
			return false;
		}
	}
	/*
	 * Our resets of the lane positions must not be seen before the new
	 * generation: a collector that reads a reset position (acquire) then
	 * sees that the slot changed.
	 */
	atomic_thread_fence(memory_order_release);
	return true;
}

/*
 * A recycled slot, tried before fresh ones so that the slots (and the ring
 * pages they touched) stay as few as the peak of live threads.
 */
static int claim_recycled(struct ctxprof_shm *shm, __u32 *gen)
{
	__u32 words = (shm->max_threads + 63) / 64, w;
	int stale = -1;

	for (w = 0; w < words; w++) {
		__u64 bits = atomic_load_explicit(&released[w], memory_order_relaxed);

		while (bits) {
			__u32 i = w * 64 + __builtin_ctzll(bits);

			bits &= bits - 1;
			if (try_recycle(shm, i, gen, &stale)) {
				atomic_fetch_and_explicit(&released[w], ~(1ull << (i % 64)),
							  memory_order_relaxed);
				return i;
			}
		}
	}
	return -1;
}

/* fold the counters of a recycled slot's previous thread into the region's totals */
static void retire_counters(struct ctxprof_shm *shm, struct ctxprof_thread *old)
{
	__u64 written = 0, dropped = 0;
	int l;

	for (l = 0; l < CTXPROF_NR_LANES; l++) {
		written += old->lanes[l].written;
		dropped += old->lanes[l].dropped;
	}
	add64(&shm->hdr->retired_records_written, written, relaxed);
	add64(&shm->hdr->retired_records_dropped, dropped, relaxed);
}

static int register_current(void)
{
	struct ctxprof_shm *shm;
	struct ctxprof_thread *t;
	struct ctxprof_slot *s;
	bool recycled = false;
	__u32 gen = 0;
	int i, l;

	if (tls_status == TS_REGISTERED)
		return 0;
	if (tls_status == TS_EXITED)
		return -ECANCELED;
	shm = ctxprof__shm();
	if (!shm) {
		set_refused();
		return init_error ? init_error : -ENODEV;
	}
	i = -1;
	if (ld32(&shm->hdr->registration_flags, relaxed) & CTXPROF_REG_ACCEPTING) {
		i = claim_recycled(shm, &gen);
		recycled = i >= 0;
		if (i < 0)
			i = claim_fresh(shm, &gen);
	}
	if (i < 0) {
		add64(&shm->hdr->registrations_rejected, 1, relaxed);
		set_refused();
		return -ENOSPC;
	}

	/* the slot is ours (Registering) */
	s = ctxprof_shm__slot(shm, i);
	t = &threads[i];
	if (recycled) {
		retire_counters(shm, t);
		add64(&shm->hdr->slots_reclaimed, 1, relaxed);
	}
	t->slot = s;
	t->index = i;
	t->generation = gen;
	t->generated = 0;
	t->refused = 0;
	st64(&s->events_generated, 0, relaxed);
	st64(&s->events_refused, 0, relaxed);
	for (l = 0; l < CTXPROF_NR_LANES; l++)
		ctxprof_lane__init(&t->lanes[l], &s->lanes[l], ctxprof_shm__rings(shm, i, l),
				   shm->ring_count[l], shm->ring_size[l], shm->flush_interval_ns);
	/* a sampler may still read this address for the previous tid: use the protocol */
	context_clear(&s->context, false);
	st32(&s->tid, gettid(), relaxed);
	st64(&s->registered_ns, ctxprof_now_ns(), relaxed);

	tls_thread = t;
	tls_ctx = &s->context;
	tls_status = TS_REGISTERED;
	/* non-NULL, so that the key's destructor runs at thread exit */
	pthread_setspecific(thread_key, t);
	add64(&shm->hdr->registrations, 1, relaxed);
	/* release: the collector that sees Active sees tid and lanes */
	st64(&s->state_gen, CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_ACTIVE, gen), release);
	/* a new thread is a regular event even where spans are not used */
	if (ctxprof_dict__replay_pending(shm))
		ctxprof_dict__serve_replay(&t->lanes[CTXPROF_LANE_DETAIL]);
	return 0;
}

/* the hot calls' slow path: first call on this thread */
static __attribute__((noinline)) struct ctxprof_context *context_slow(void)
{
	if (tls_status == TS_NONE && register_current())
		set_refused();
	if (!tls_ctx)
		set_refused();
	return tls_ctx;
}

static inline struct ctxprof_context *current_context(void)
{
	struct ctxprof_context *c = tls_ctx;

	if (unlikely(!c))
		c = context_slow();
	return c;
}

static inline struct ctxprof_thread *current_thread(void)
{
	struct ctxprof_thread *t = tls_thread;

	if (unlikely(!t)) {
		if (tls_status == TS_NONE)
			context_slow();
		t = tls_thread;
	}
	return t;
}

int ctxprof_register_thread(void)
{
	if (tls_status == TS_REFUSED)
		tls_status = TS_NONE;
	return register_current();
}

void ctxprof_unregister_thread(void)
{
	struct ctxprof_thread *t = tls_thread;
	struct ctxprof_slot *slot;
	__u32 index, gen;
	int l;

	if (!t) {
		/* refused threads try again at their next call */
		if (tls_status == TS_REFUSED) {
			tls_ctx = NULL;
			tls_status = TS_NONE;
		}
		return;
	}
	/* no context from here on: checksum 0 stays */
	context_clear(&t->slot->context, true);
	for (l = 0; l < CTXPROF_NR_LANES; l++)
		ctxprof_lane__flush(&t->lanes[l]);
	tls_thread = NULL;
	tls_ctx = NULL;
	tls_status = TS_NONE;
	pthread_setspecific(thread_key, NULL);
	slot = t->slot;
	index = t->index;
	gen = t->generation;
	/*
	 * release: a recycler or the collector sees our final lane state.
	 * From here on *t belongs to whoever recycles the slot: not one more
	 * access to it.
	 */
	st64(&slot->state_gen, CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_DRAINING, gen), release);
	atomic_fetch_or_explicit(&released[index / 64], 1ull << (index % 64), memory_order_release);
}

static void thread_exit(void *arg)
{
	ctxprof_unregister_thread();
	/* later destructors calling us must not register the thread again */
	tls_ctx = &dummy_context;
	tls_status = TS_EXITED;
}

/* ------------------------------------------------------------------------ */
/* fork                                                                       */

/* lock order: dict_lock, then init_lock (an intern may register, which may init) */
static void atfork_prepare(void)
{
	ctxprof_dict__lock();
	pthread_mutex_lock(&init_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&init_lock);
	ctxprof_dict__unlock();
}

/* drop the parent's region: the mapping is shared, our writes would land in it */
static void forget_region(void)
{
	atomic_store_explicit(&shm_ready, NULL, memory_order_relaxed);
	ctxprof_shm__destroy(&shm_storage);
	free(threads);
	threads = NULL;
	free((void *)released);
	released = NULL;
	initialized = false;
	init_error = 0;
	tls_thread = NULL;
	tls_ctx = NULL;
	tls_status = TS_NONE;
	atomic_store_explicit(&events_unregistered, 0, memory_order_relaxed);
}

static void atfork_child(void)
{
	/* the locks were taken by the forking thread, which is us now */
	ctxprof_dict__reinit_lock();
	pthread_mutex_init(&init_lock, NULL);
	forget_region();
	/* the ids stay valid in the child; its new region needs the strings again */
	ctxprof_dict__forget_emitted();
}

void ctxprof__reset(void)
{
	pthread_mutex_lock(&init_lock);
	if (tls_thread)
		pthread_setspecific(thread_key, NULL);
	forget_region();
	have_saved_opts = false;
	ctxprof_dict__reset();
	pthread_mutex_unlock(&init_lock);
}

struct ctxprof_thread *ctxprof__current_thread(void)
{
	return tls_thread;
}

void *ctxprof__region(size_t *size)
{
	struct ctxprof_shm *shm = atomic_load_explicit(&shm_ready, memory_order_acquire);

	if (!shm)
		return NULL;
	if (size)
		*size = shm->size;
	return shm->base;
}

/* ------------------------------------------------------------------------ */
/* hot calls                                                                  */

void ctxprof_set_context(uint64_t span_id, uint64_t local_root_span_id)
{
	context_write(current_context(), span_id, local_root_span_id);
}

void ctxprof_clear_context(void)
{
	context_clear(current_context(), false);
}

void ctxprof_set_tag(unsigned int slot, uint32_t tag_id)
{
	struct ctxprof_context *c;
	__u64 checksum;

	if (slot >= CTXPROF_MAX_TAGS)
		return;
	c = current_context();
	/*
	 * Our own last checksum (only this thread writes its slot).  Inside
	 * the window like the ids; if a signal handler interrupted one of our
	 * writes and lands here, it reads 0 and leaves 0: no context until
	 * the next update, never a wrong one.
	 */
	checksum = ld64(&c->checksum, relaxed);
	context_begin(c);
	st32(&c->tags[slot], tag_id, relaxed);
	context_end(c, checksum);
}

void ctxprof_clear_tag(unsigned int slot)
{
	ctxprof_set_tag(slot, 0);
}

/*
 * One more event made by @t (the seed's events_generated); false when the
 * registry is shut down: refused, counted, and the rings this thread holds
 * submitted so that the collector drains everything written before.  One
 * load of a flag that is written once.
 */
static bool generate(struct ctxprof_thread *t)
{
	st64(&t->slot->events_generated, ++t->generated, relaxed);
	if (likely(!(ld32(&shm_storage.hdr->registration_flags, relaxed) & CTXPROF_REG_SHUTDOWN)))
		return true;
	st64(&t->slot->events_refused, ++t->refused, relaxed);
	for (int l = 0; l < CTXPROF_NR_LANES; l++)
		ctxprof_lane__flush(&t->lanes[l]);
	return false;
}

static void span_event(__u16 type, __u64 span_id, __u64 root_id)
{
	struct ctxprof_thread *t = current_thread();
	struct ctxprof_span_event *ev;
	__u64 now;
	__u32 seq;

	if (unlikely(!t)) {
		atomic_fetch_add_explicit(&events_unregistered, 1, memory_order_relaxed);
		return;
	}
	if (unlikely(!generate(t)))
		return;
	now = ctxprof_now_ns();
	ev = ctxprof_lane__reserve(&t->lanes[CTXPROF_LANE_INDEX], sizeof(*ev), &seq);
	if (ev) {
		ev->type = type;
		ev->size = sizeof(*ev);
		ev->seq = seq;
		ev->time_ns = now;
		ev->span_id = span_id;
		ev->local_root_span_id = root_id;
		ctxprof_lane__commit(&t->lanes[CTXPROF_LANE_INDEX], sizeof(*ev), now);
	}
	/* dictionary records ride on span traffic to the collector, too */
	ctxprof_lane__flush_aged(&t->lanes[CTXPROF_LANE_DETAIL], now);
	/* and so does a dictionary replay the collector asked for (rare: out of line) */
	if (unlikely(ctxprof_dict__replay_pending(&shm_storage)))
		ctxprof_dict__serve_replay(&t->lanes[CTXPROF_LANE_DETAIL]);
}

void ctxprof_span_begin(uint64_t span_id, uint64_t local_root_span_id)
{
	span_event(CTXPROF_EVENT_SPAN_BEGIN, span_id, local_root_span_id);
}

void ctxprof_span_end(uint64_t span_id)
{
	struct ctxprof_context *c = current_context();

	span_event(CTXPROF_EVENT_SPAN_END, span_id, ld64(&c->local_root_span_id, relaxed));
}

void ctxprof_span_enter(uint64_t span_id, uint64_t local_root_span_id)
{
	ctxprof_span_begin(span_id, local_root_span_id);
	ctxprof_set_context(span_id, local_root_span_id);
}

void ctxprof_span_exit(uint64_t span_id, uint64_t parent_span_id)
{
	struct ctxprof_context *c = current_context();

	ctxprof_span_end(span_id);
	if (parent_span_id)
		context_write(c, parent_span_id, ld64(&c->local_root_span_id, relaxed));
	else
		context_clear(c, false);
}

void ctxprof_flush(void)
{
	struct ctxprof_thread *t = tls_thread;
	int l;

	if (!t)
		return;
	if (ctxprof_dict__replay_pending(&shm_storage))
		ctxprof_dict__serve_replay(&t->lanes[CTXPROF_LANE_DETAIL]);
	for (l = 0; l < CTXPROF_NR_LANES; l++)
		ctxprof_lane__flush(&t->lanes[l]);
}

void ctxprof_shutdown(void)
{
	struct ctxprof_shm *shm = atomic_load_explicit(&shm_ready, memory_order_acquire);
	_Atomic __u32 *flags;

	if (!shm)
		return;
	flags = (_Atomic __u32 *)&shm->hdr->registration_flags;
	atomic_fetch_and_explicit(flags, ~CTXPROF_REG_ACCEPTING, memory_order_relaxed);
	atomic_fetch_or_explicit(flags, CTXPROF_REG_SHUTDOWN, memory_order_relaxed);
	ctxprof_flush();
}

/* ------------------------------------------------------------------------ */
/* tags and stats                                                             */

bool ctxprof__emit_tag(__u32 id, const char *key, __u16 key_len, const char *value, __u16 value_len)
{
	struct ctxprof_thread *t = current_thread();
	struct ctxprof_lane_producer *p;
	struct ctxprof_tag_record *r;
	__u32 size, seq;
	__u64 now;

	if (!t || !generate(t))
		return false;
	p = &t->lanes[CTXPROF_LANE_DETAIL];
	size = (sizeof(*r) + key_len + value_len + CTXPROF_RECORD_ALIGN - 1) &
	       ~(CTXPROF_RECORD_ALIGN - 1);
	r = ctxprof_lane__reserve(p, size, &seq);
	if (!r)
		return false;
	memset(r, 0, size);
	r->hdr.type = CTXPROF_RECORD_TAG;
	r->hdr.size = size;
	r->hdr.seq = seq;
	r->tag_id = id;
	r->key_len = key_len;
	r->value_len = value_len;
	memcpy(r + 1, key, key_len);
	memcpy((char *)(r + 1) + key_len, value, value_len);
	now = ctxprof_now_ns();
	ctxprof_lane__commit(p, size, now);
	ctxprof_lane__flush_aged(&t->lanes[CTXPROF_LANE_INDEX], now);
	return true;
}

uint32_t ctxprof_intern_tag(const char *key, const char *value)
{
	return ctxprof_dict__intern(key, value);
}

int ctxprof_get_stats(struct ctxprof_stats *st)
{
	struct ctxprof_shm *shm = atomic_load_explicit(&shm_ready, memory_order_acquire);
	struct ctxprof_region_header *h;
	__u32 n, i;
	int l;

	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->init_error = init_error;
	st->events_unregistered = atomic_load_explicit(&events_unregistered, memory_order_relaxed);
	if (!shm)
		return 0;
	h = shm->hdr;
	st->max_threads = shm->max_threads;
	st->registrations = ld64(&h->registrations, relaxed);
	st->registrations_rejected = ld64(&h->registrations_rejected, relaxed);
	st->slots_reclaimed = ld64(&h->slots_reclaimed, relaxed);
	st->events_written = ld64(&h->retired_records_written, relaxed);
	st->events_dropped = ld64(&h->retired_records_dropped, relaxed);
	st->tags_interned = ld64(&h->tags_interned, relaxed);
	st->tag_intern_failures = ld64(&h->tag_intern_failures, relaxed);
	n = ld32(&h->thread_count, relaxed);
	if (n > shm->max_threads)
		n = shm->max_threads;
	/* the lanes' own counters, published by their threads (the region's copy) */
	for (i = 0; i < n; i++) {
		struct ctxprof_slot *s = ctxprof_shm__slot(shm, i);
		__u32 state = CTXPROF_SLOT_STATE(ld64(&s->state_gen, acquire));

		if (state == CTXPROF_SLOT_ACTIVE)
			st->threads_registered++;
		if (state == CTXPROF_SLOT_UNALLOCATED || state == CTXPROF_SLOT_REGISTERING)
			continue;
		for (l = 0; l < CTXPROF_NR_LANES; l++) {
			st->events_written += ld64(&s->lanes[l].records_written, relaxed);
			st->events_dropped += ld64(&s->lanes[l].records_dropped, relaxed);
			st->rings_submitted += ld64(&s->lanes[l].rings_submitted, relaxed);
			st->bad_free_entries += ld64(&s->lanes[l].bad_free_entries, relaxed);
		}
	}
	return 0;
}
