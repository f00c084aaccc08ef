// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "appctx/go_labels.h"
#include "appctx/otel_thread_ctx.h"
#include "processes/process_state.h"
#include "sampling/drain.h"
#include "traces/trace_event.h"
#include "util/clock.h"

/* one slot of struct drain's codes: @seq odd while the drain writes it */
struct recent_code {
	_Atomic uint32_t seq;
	_Atomic uint32_t pid, exec_id;
	_Atomic uint64_t w1, w2;
	uint32_t read_seq;  /* the main thread's: the last @seq it took */
	uint32_t tried_seq; /* ... the one it could not take yet */
	uint32_t tries;	    /* ... and how many calls could not */
};

/* offers of a code its reader could not take yet (a main-loop poll apart, 100 ms
 * there) before it is dropped: a process still unknown after them is gone */
#define RECENT_CODE_TRIES 50

struct drain {
	struct drains *set;
	pthread_t thread;
	int part;
	struct sample_table *tables[2];
	/*
	 * The windows (see drain.h), as whoever calls drains__record() sees
	 * them (the drain thread, or the thread that stops the sampler once
	 * it has exited): records in [lower, split) go to tables[active],
	 * from split on to the other table, before lower nowhere.
	 */
	uint64_t lower, split;
	_Atomic unsigned int active; /* read by the exporter after a close */
	unsigned int open_seen;
	/* posted by the exporter: the next window's end */
	_Atomic uint64_t next_end;
	_Atomic unsigned int open_req;
	/* windows this drain closed; release: the exporter sees their rows */
	_Atomic unsigned int closed;
	/* single writer (the drain); relaxed so status reads are race-free */
	_Atomic uint64_t received;
	_Atomic uint64_t drops[DRAIN_DROP_MAX];
	/* off-CPU waits: records received, and dropped here (malformed, out
	 * of the window, a table full) */
	_Atomic uint64_t off_received, off_dropped;
	_Atomic uint64_t heartbeat; /* bumped at each poll of its rings */
	uint64_t cpu_ns;	    /* the thread's CPU time, set when it exits */
	struct trace_writer *tw;    /* its per-thread traces; NULL: none kept */
	/* processes sampled lately whose mappings the collector has not read
	 * yet, lossy (a slot per pid hash): the main thread takes them */
	_Atomic uint32_t recent[DRAIN_RECENT_PIDS];
	/* the code objects of Python frames sampled lately (lossy), each slot
	 * a seqlock with this drain its only writer: the main thread names
	 * them while their process lives */
	struct recent_code *codes;
	/* each scrape window's two tables (halves by profile window, as
	 * @tables), set by the opener before it publishes the slot */
	struct sample_table *scrape[DRAIN_SCRAPES][2];
	/* the scrape sequence this drain closed, per slot (release: the
	 * opener then reads its tables) */
	_Atomic unsigned int scrape_closed[DRAIN_SCRAPES];
	/* its samples a scrape's table refused (full), per slot */
	_Atomic uint64_t scrape_dropped[DRAIN_SCRAPES];
} __attribute__((aligned(64)));

/* a scrape window as every drain reads it (drains__scrape_open()) */
struct scrape_slot {
	_Atomic uint64_t start, end; /* CLOCK_MONOTONIC [start, end) */
	_Atomic uint32_t pid;	     /* 0: every process */
	_Atomic unsigned int seq;    /* bumped at each open: never 0 once open */
};

struct drains {
	struct drain *d;
	void **ctxs;
	int n; /* drains in use (<= nr_alloc) */
	int nr_alloc;
	int started;
	int poll_ms;
	struct sampler *sampler;
	struct thread_registry *reg;
	struct calltrace_storage *traces;
	size_t max_rows;
	unsigned int windows; /* windows the exporter closed */
	struct scrape_slot scrapes[DRAIN_SCRAPES];
	_Atomic uint32_t scrape_mask; /* the slots open */
	_Atomic int stopping;
	_Atomic int error;
};

static const char *const drop_names[DRAIN_DROP_MAX] = {
	[DRAIN_DROP_MALFORMED] = "malformed_record",
	[DRAIN_DROP_STACK_TABLE_FULL] = "stack_table_full",
	[DRAIN_DROP_SAMPLE_TABLE_FULL] = "sample_table_full",
	[DRAIN_DROP_OUTSIDE_WINDOW] = "outside_window",
};

const char *drain_drop_name(enum drain_drop drop)
{
	return drop < DRAIN_DROP_MAX ? drop_names[drop] : "unknown";
}

/* one writer: a plain load/add/store, no locked instruction */
static inline void bump(_Atomic uint64_t *v)
{
	atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/*
 * The generation of the sampled process's mappings at the sample's time
 * (0: none read yet), and whether they are due a read: its thread is looked
 * up in the registry (wait-free) and its image's state asked.  A thread the
 * registry does not know yet (its lifecycle event is still in the ring), or
 * an image with no state, is due.
 */
static uint32_t maps_gen(struct thread_registry *reg, const struct sample_record *rec, bool *due)
{
	const struct thread_info *ti;
	const struct process_image *img;
	const struct process_state *ps;
	uint32_t gen = 0;

	thread_registry__read_lock();
	ti = thread_registry__lookup(reg, rec->tid);
	img = ti ? process_info__image(ti->proc) : NULL;
	/* an image the /proc scan found has no exec id (0): it is the one */
	ps = img && (!img->exec_id || img->exec_id == rec->exec_id) ? process_image__state(img)
								    : NULL;
	*due = !ps ||
	       atomic_load_explicit(&ps->refresh_after_ns, memory_order_relaxed) <= rec->time_ns;
	if (ps)
		gen = process_state__gen_at(ps, rec->time_ns);
	thread_registry__read_unlock();
	return gen;
}

/* this drain's trace of @rec's thread, the thread's name appended when new */
static struct trace *thread_trace(struct trace_writer *tw, const struct sample_record *rec)
{
	struct trace *t = trace_writer__get(tw, rec->pid, rec->tid, true);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	unsigned int n;

	if (t && trace__renamed(t, rec->comm)) {
		n = trace_ev_thread_name(ev, rec->time_ns, rec->comm);
		trace__append(tw, t, ev, n);
	}
	return t;
}

/* the sample into this drain's trace of its thread */
static void trace_sample(struct trace_writer *tw, const struct sample_record *rec,
			 uint64_t trace_id)
{
	struct trace *t = thread_trace(tw, rec);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	unsigned int n;

	n = trace_ev_sample(ev, rec->time_ns, rec->cpu,
			    rec->flags & (SAMPLE_F_CONTEXT | SAMPLE_F_CONTEXT_NONE), trace_id,
			    rec->span_id);
	trace__append(tw, t, ev, n);
}

/* the window after the closed one, once the exporter posted its end */
static void take_open(struct drain *d)
{
	unsigned int req = atomic_load_explicit(&d->open_req, memory_order_acquire);

	if (req == d->open_seen)
		return;
	d->open_seen = req;
	d->split = atomic_load_explicit(&d->next_end, memory_order_relaxed);
	atomic_store_explicit(&d->active, !atomic_load_explicit(&d->active, memory_order_relaxed),
			      memory_order_relaxed);
}

/*
 * Which of its tables takes a record taken at @time_ns, -1 when it is older
 * than the open window.  Routing by the record's own time, not by when it is
 * read, is what keeps each profile to its window.
 */
static int window_index(struct drain *d, uint64_t time_ns)
{
	unsigned int active;

	take_open(d);
	if (time_ns < d->lower)
		return -1;
	active = atomic_load_explicit(&d->active, memory_order_relaxed);
	return (int)(active ^ (time_ns >= d->split));
}

/*
 * @rec (a sample, or a wait of @off_ns) into every open scrape window it
 * lies in, in the half @idx of the profile windows: a load when none is
 * open.
 */
static void scrape_add(struct drain *d, int idx, uint64_t trace_id, const struct sample_record *rec,
		       const struct otel_thread_record *otel, const struct go_labels_record *go,
		       bool wait, uint64_t off_ns)
{
	uint32_t mask = atomic_load_explicit(&d->set->scrape_mask, memory_order_acquire);
	const struct scrape_slot *sl;
	struct sample_table *t;
	unsigned int s, seq;
	uint32_t pid;
	int err;

	while (mask) {
		s = (unsigned int)__builtin_ctz(mask);
		mask &= mask - 1;
		sl = &d->set->scrapes[s];
		seq = atomic_load_explicit(&sl->seq, memory_order_acquire);
		if (atomic_load_explicit(&d->scrape_closed[s], memory_order_relaxed) == seq ||
		    rec->time_ns < atomic_load_explicit(&sl->start, memory_order_relaxed) ||
		    rec->time_ns >= atomic_load_explicit(&sl->end, memory_order_relaxed))
			continue;
		pid = atomic_load_explicit(&sl->pid, memory_order_relaxed);
		if (pid && pid != rec->pid)
			continue;
		t = d->scrape[s][idx];
		err = wait ? sample_table__add_wait(t, trace_id, rec, otel, go, off_ns)
			   : sample_table__add(t, trace_id, rec, otel, go);
		if (err)
			bump(&d->scrape_dropped[s]);
	}
}

/* a sweep that began at @sweep_ns read every record of the scrapes that
 * ended DRAIN_SETTLE_NS before: close them for this drain */
static void close_scrapes(struct drain *d, uint64_t sweep_ns)
{
	uint32_t mask = atomic_load_explicit(&d->set->scrape_mask, memory_order_acquire);
	const struct scrape_slot *sl;
	unsigned int s, seq;

	while (mask) {
		s = (unsigned int)__builtin_ctz(mask);
		mask &= mask - 1;
		sl = &d->set->scrapes[s];
		seq = atomic_load_explicit(&sl->seq, memory_order_acquire);
		if (atomic_load_explicit(&d->scrape_closed[s], memory_order_relaxed) != seq &&
		    sweep_ns >= DRAIN_SETTLE_NS &&
		    sweep_ns - DRAIN_SETTLE_NS >=
			    atomic_load_explicit(&sl->end, memory_order_relaxed))
			atomic_store_explicit(&d->scrape_closed[s], seq, memory_order_release);
	}
}

/* a sweep that began at @sweep_ns read every record of a window that ended
 * DRAIN_SETTLE_NS before: close it, later ones are outside it */
static void close_window(struct drain *d, uint64_t sweep_ns)
{
	if (d->lower == d->split || sweep_ns < DRAIN_SETTLE_NS ||
	    sweep_ns - DRAIN_SETTLE_NS < d->split)
		return;
	d->lower = d->split;
	atomic_store_explicit(&d->closed,
			      atomic_load_explicit(&d->closed, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* the Python frames' code objects of @rec into their slots, unless there already */
static void announce_codes(struct drain *d, const struct sample_record *rec)
{
	const __u64 *f = rec->frames + rec->nr_kframes;
	struct recent_code *c;
	uint64_t w1, w2;
	uint32_t i, seq;

	if (!d->codes)
		return;
	for (i = 0; i + 1 < rec->nr_uframes; i++) {
		w1 = f[i];
		if (!PYTHON_FRAME_IS(w1) || (w1 & PYTHON_FRAME_WORD2))
			continue;
		w2 = f[++i] & ~PYTHON_INSTR_MASK;
		c = &d->codes[((w1 ^ rec->pid) * 0x9E3779B97F4A7C15ull) >> 54 &
			      (DRAIN_RECENT_CODES - 1)];
		if (atomic_load_explicit(&c->w1, memory_order_relaxed) == w1 &&
		    atomic_load_explicit(&c->w2, memory_order_relaxed) == w2 &&
		    atomic_load_explicit(&c->pid, memory_order_relaxed) == rec->pid)
			continue;
		seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
		atomic_store_explicit(&c->seq, seq + 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		atomic_store_explicit(&c->pid, rec->pid, memory_order_relaxed);
		atomic_store_explicit(&c->exec_id, rec->exec_id, memory_order_relaxed);
		atomic_store_explicit(&c->w1, w1, memory_order_relaxed);
		atomic_store_explicit(&c->w2, w2, memory_order_relaxed);
		atomic_store_explicit(&c->seq, seq + 2, memory_order_release);
	}
}

/*
 * @rec's stacks into the storage, their Python code objects announced.  A
 * stack is filed under the mappings it was taken in (@gen): the same
 * addresses in a library loaded since are another stack.
 * The storage's hazard stays on its table (@hold) until the caller has
 * appended the event naming the stack to the thread's trace and released
 * it: the export's liveness check, which waits for it, then sees the event
 * and keeps the stack for the timeline that replays it.
 * Return: its trace id, or CALLTRACE_DROPPED_TRACE_ID.
 */
static uint64_t store_stack(struct drain *d, const struct sample_record *rec, uint32_t gen,
			    long *hold)
{
	uint64_t trace_id = calltrace_storage__put_held(
		d->set->traces, rec->pid, rec->exec_id, rec->frames, rec->nr_kframes,
		rec->nr_uframes,
		SAMPLE_STACK_FLAGS(rec->flags) | (gen & MAPPINGS_GEN_MASK)
							 << PROCESS_STATE_GEN_SHIFT,
		hold);

	if (rec->flags & SAMPLE_F_PYTHON)
		announce_codes(d, rec);
	return trace_id;
}

/* the wait into this drain's trace of its thread (timelines draw it inside its span) */
static void trace_wait(struct trace_writer *tw, const struct sample_record *rec,
		       const struct offcpu_trailer *tr, uint64_t trace_id)
{
	struct trace *t = thread_trace(tw, rec);
	uint64_t ev[TRACE_EV_MAX_WORDS];
	unsigned int n;

	n = trace_ev_wait(ev, rec->time_ns, tr->state,
			  rec->flags & (SAMPLE_F_CONTEXT | SAMPLE_F_CONTEXT_NONE), trace_id,
			  rec->span_id, tr->wait_ns);
	trace__append(tw, t, ev, n);
}

/*
 * An off-CPU wait (SAMPLE_F_OFFCPU): counted apart from CPU samples, its
 * time from the trailer that ends it (with the thread's waits sampled away
 * before it); into the thread's trace with its own length.
 */
static void record_wait(struct drain *d, const struct sample_record *rec, size_t size)
{
	size_t frames = sizeof(*rec) + (size_t)(rec->nr_kframes + rec->nr_uframes) * sizeof(__u64);
	const struct otel_thread_record *otel = NULL;
	const struct go_labels_record *go = NULL;
	struct offcpu_trailer tr;
	uint64_t trace_id;
	uint32_t gen;
	long hold;
	bool due;
	int idx;

	bump(&d->off_received);
	/* the trailer ends the record; before it, what a CPU sample holds */
	if (size < frames + sizeof(tr) ||
	    otel_thread_ctx__from_sample(rec, size - sizeof(tr), &otel) < 0 ||
	    go_labels__from_sample(rec, size - sizeof(tr), &go) < 0) {
		bump(&d->off_dropped);
		return;
	}
	memcpy(&tr, (const char *)rec + size - sizeof(tr), sizeof(tr));
	idx = window_index(d, rec->time_ns);
	if (idx < 0) {
		bump(&d->off_dropped);
		return;
	}
	gen = maps_gen(d->set->reg, rec, &due);
	trace_id = store_stack(d, rec, gen, &hold);
	if (trace_id == CALLTRACE_DROPPED_TRACE_ID ||
	    sample_table__add_wait(d->tables[idx], trace_id, rec, otel, go, tr.duration_ns)) {
		calltrace_storage__release(d->set->traces, hold);
		bump(&d->off_dropped);
		return;
	}
	scrape_add(d, idx, trace_id, rec, otel, go, true, tr.duration_ns);
	if (d->tw)
		trace_wait(d->tw, rec, &tr, trace_id);
	calltrace_storage__release(d->set->traces, hold);
}

void drains__record(void *ctx, const struct sample_record *rec, size_t size)
{
	const struct otel_thread_record *otel = NULL;
	const struct go_labels_record *go = NULL;
	struct drain *d = ctx;
	uint64_t trace_id;
	_Atomic uint32_t *recent;
	uint32_t gen;
	long hold;
	bool due;
	int idx;

	if (size >= sizeof(*rec) && (rec->flags & SAMPLE_F_OFFCPU) &&
	    rec->nr_kframes <= SAMPLER_MAX_KSTACK && rec->nr_uframes <= SAMPLER_MAX_USTACK) {
		record_wait(d, rec, size);
		return;
	}
	bump(&d->received);
	if (size < sizeof(*rec) || rec->nr_kframes > SAMPLER_MAX_KSTACK ||
	    rec->nr_uframes > SAMPLER_MAX_USTACK ||
	    size < sizeof(*rec) + (size_t)(rec->nr_kframes + rec->nr_uframes) * sizeof(__u64) ||
	    otel_thread_ctx__from_sample(rec, size, &otel) < 0 ||
	    go_labels__from_sample(rec, size, &go) < 0) {
		bump(&d->drops[DRAIN_DROP_MALFORMED]);
		return;
	}
	idx = window_index(d, rec->time_ns);
	if (idx < 0) {
		bump(&d->drops[DRAIN_DROP_OUTSIDE_WINDOW]);
		return;
	}
	gen = maps_gen(d->set->reg, rec, &due);
	/* load first: the slot's cache line is written only when the pid changes */
	recent = &d->recent[rec->pid % DRAIN_RECENT_PIDS];
	if (atomic_load_explicit(recent, memory_order_relaxed) != rec->pid &&
	    (SAMPLE_USTOP(rec->flags) == UNWIND_STOP_NO_TABLE_YET || due))
		atomic_store_explicit(recent, rec->pid, memory_order_relaxed);
	trace_id = store_stack(d, rec, gen, &hold);
	if (d->tw)
		trace_sample(d->tw, rec, trace_id);
	calltrace_storage__release(d->set->traces, hold);
	if (trace_id == CALLTRACE_DROPPED_TRACE_ID) {
		bump(&d->drops[DRAIN_DROP_STACK_TABLE_FULL]);
		return;
	}
	if (sample_table__add(d->tables[idx], trace_id, rec, otel, go))
		bump(&d->drops[DRAIN_DROP_SAMPLE_TABLE_FULL]);
	else
		scrape_add(d, idx, trace_id, rec, otel, go, false, 0);
}

static void *drain_thread(void *arg)
{
	struct drain *d = arg;
	struct drains *set = d->set;
	uint64_t now, last_sweep = 0;
	char name[16];
	int n;

	snprintf(name, sizeof(name), "ctxprof-drain%d", d->part);
	pthread_setname_np(pthread_self(), name);
	thread_registry__register_thread();
	while (!atomic_load_explicit(&set->stopping, memory_order_acquire)) {
		/* vDSO, no syscall */
		now = mono_ns();
		take_open(d);
		/* a sweep a second lets idle traces go */
		if (d->tw && now - last_sweep >= 1000000000ull) {
			trace_writer__sweep(d->tw);
			last_sweep = now;
		}
		atomic_fetch_add_explicit(&d->heartbeat, 1, memory_order_relaxed);
		n = sampler__poll(set->sampler, d->part, set->poll_ms);
		if (n < 0 && n != -EINTR) {
			int expected = 0;

			atomic_compare_exchange_strong(&set->error, &expected, n);
			break;
		}
		close_window(d, now);
		close_scrapes(d, now);
	}
	thread_registry__unregister_thread();
	d->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

struct drains *drains__new(int n, struct calltrace_storage *traces, struct thread_registry *reg,
			   size_t max_rows)
{
	struct drains *set;
	int i, j;

	set = calloc(1, sizeof(*set));
	if (!set)
		return NULL;
	set->n = set->nr_alloc = n;
	set->traces = traces;
	set->reg = reg;
	set->max_rows = max_rows;
	set->d = aligned_alloc(64, sizeof(*set->d) * n);
	set->ctxs = calloc(n, sizeof(*set->ctxs));
	if (!set->d || !set->ctxs)
		goto err_free;
	memset(set->d, 0, sizeof(*set->d) * n);
	for (i = 0; i < n; i++) {
		set->d[i].set = set;
		set->d[i].part = i;
		set->d[i].split = UINT64_MAX;
		set->ctxs[i] = &set->d[i];
		for (j = 0; j < 2; j++) {
			set->d[i].tables[j] = sample_table__new(max_rows);
			if (!set->d[i].tables[j])
				goto err_free;
		}
		set->d[i].codes = calloc(DRAIN_RECENT_CODES, sizeof(*set->d[i].codes));
		if (!set->d[i].codes)
			goto err_free;
	}
	return set;

err_free:
	drains__free(set);
	errno = ENOMEM;
	return NULL;
}

int drains__trace(struct drains *set, struct traces *tl)
{
	for (int i = 0; i < set->nr_alloc; i++) {
		set->d[i].tw = traces__writer(tl);
		if (!set->d[i].tw)
			return -errno;
	}
	return 0;
}

void *const *drains__ctxs(const struct drains *d)
{
	return d->ctxs;
}

int drains__start(struct drains *set, struct sampler *s, int poll_ms)
{
	sigset_t block, old;
	int i, err = 0;

	set->sampler = s;
	set->poll_ms = poll_ms;
	/* the drains poll fewer parts than asked when CPUs are few */
	set->n = sampler__nr_parts(s) < set->n ? sampler__nr_parts(s) : set->n;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (i = 0; i < set->n; i++) {
		err = -pthread_create(&set->d[i].thread, NULL, drain_thread, &set->d[i]);
		if (err)
			break;
		set->started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		drains__stop(set);
	return err;
}

void drains__begin_window(struct drains *set, uint64_t start_ns, uint64_t end_ns)
{
	for (int i = 0; i < set->nr_alloc; i++) {
		set->d[i].lower = start_ns;
		set->d[i].split = end_ns;
	}
}

int drains__close(struct drains *set)
{
	int i;

	set->windows++;
	for (i = 0; i < set->started; i++)
		/* bounded: a drain sweeps at least once per poll period */
		while (atomic_load_explicit(&set->d[i].closed, memory_order_acquire) !=
		       set->windows) {
			if (atomic_load_explicit(&set->error, memory_order_relaxed))
				return atomic_load(&set->error);
			usleep(1000);
		}
	return 0;
}

int drains__open(struct drains *set, uint64_t end_ns)
{
	int i;

	for (i = 0; i < set->n; i++) {
		atomic_store_explicit(&set->d[i].next_end, end_ns, memory_order_relaxed);
		atomic_fetch_add_explicit(&set->d[i].open_req, 1, memory_order_release);
	}
	/* the posts are seen by every CPU before the clock is read again: a
	 * drain reading a record taken after that time sees them */
	atomic_thread_fence(memory_order_seq_cst);
	return mono_ns() < end_ns ? 0 : -ETIME;
}

void drains__for_each_table(struct drains *set, bool all,
			    void (*fn)(void *ctx, struct sample_table *t), void *ctx)
{
	unsigned int active;
	int i;

	for (i = 0; i < set->n; i++) {
		active = atomic_load_explicit(&set->d[i].active, memory_order_acquire);
		fn(ctx, set->d[i].tables[active]);
		if (all)
			fn(ctx, set->d[i].tables[!active]);
	}
}

void drains__stop(struct drains *set)
{
	int i;

	atomic_store_explicit(&set->stopping, 1, memory_order_release);
	for (i = 0; i < set->started; i++)
		pthread_join(set->d[i].thread, NULL);
	set->started = 0;
}

void drains__counters(const struct drains *set, struct drain_counters *out)
{
	int i, j;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < set->n; i++) {
		clockid_t cpu;

		/* a running thread's CPU time from its clock; a stopped one's as it left */
		if (i < set->started && !pthread_getcpuclockid(set->d[i].thread, &cpu))
			out->cpu_ns += clock_ns(cpu);
		else
			out->cpu_ns += set->d[i].cpu_ns;
		out->received += atomic_load_explicit(&set->d[i].received, memory_order_relaxed);
		for (j = 0; j < DRAIN_DROP_MAX; j++)
			out->drops[j] +=
				atomic_load_explicit(&set->d[i].drops[j], memory_order_relaxed);
		out->off_received +=
			atomic_load_explicit(&set->d[i].off_received, memory_order_relaxed);
		out->off_dropped +=
			atomic_load_explicit(&set->d[i].off_dropped, memory_order_relaxed);
	}
}

int drains__nr(const struct drains *set)
{
	return set->n;
}

uint64_t drains__heartbeat(const struct drains *set, int i)
{
	return atomic_load_explicit(&set->d[i].heartbeat, memory_order_relaxed);
}

void drains__recent_pids(struct drains *set, void (*fn)(void *ctx, uint32_t pid), void *ctx)
{
	uint32_t pid;
	int i, j;

	for (i = 0; i < set->n; i++)
		for (j = 0; j < DRAIN_RECENT_PIDS; j++) {
			if (!atomic_load_explicit(&set->d[i].recent[j], memory_order_relaxed))
				continue;
			pid = atomic_exchange_explicit(&set->d[i].recent[j], 0,
						       memory_order_relaxed);
			if (pid)
				fn(ctx, pid);
		}
}

void drains__recent_codes(struct drains *set,
			  bool (*fn)(void *ctx, uint32_t pid, uint32_t exec_id, uint64_t w1,
				     uint64_t w2),
			  void *ctx)
{
	struct recent_code *c;
	uint32_t s1, s2, pid, exec_id;
	uint64_t w1, w2;
	int i, j;

	for (i = 0; i < set->n; i++) {
		for (j = 0; set->d[i].codes && j < DRAIN_RECENT_CODES; j++) {
			c = &set->d[i].codes[j];
			s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
			if (s1 == c->read_seq || (s1 & 1))
				continue;
			pid = atomic_load_explicit(&c->pid, memory_order_relaxed);
			exec_id = atomic_load_explicit(&c->exec_id, memory_order_relaxed);
			w1 = atomic_load_explicit(&c->w1, memory_order_relaxed);
			w2 = atomic_load_explicit(&c->w2, memory_order_relaxed);
			atomic_thread_fence(memory_order_acquire);
			s2 = atomic_load_explicit(&c->seq, memory_order_relaxed);
			/* torn by a write: the next call takes it */
			if (s1 != s2)
				continue;
			if (c->tried_seq != s1) {
				c->tried_seq = s1;
				c->tries = 0;
			}
			if (fn(ctx, pid, exec_id, w1, w2) || ++c->tries >= RECENT_CODE_TRIES)
				c->read_seq = s1;
		}
	}
}

/* the scrape tables of @s, every drain's; NULL-safe */
static void scrape_tables_free(struct drains *set, unsigned int s)
{
	for (int i = 0; i < set->nr_alloc; i++)
		for (int j = 0; j < 2; j++) {
			sample_table__free(set->d[i].scrape[s][j]);
			set->d[i].scrape[s][j] = NULL;
		}
}

int drains__scrape_open(struct drains *set, unsigned int s, uint32_t pid, uint64_t duration_ns,
			uint64_t *start_ns, uint64_t *end_ns)
{
	struct scrape_slot *sl;
	uint64_t start;
	unsigned int seq;
	int i, j;

	if (s >= DRAIN_SCRAPES || (atomic_load(&set->scrape_mask) & 1u << s))
		return -EINVAL;
	sl = &set->scrapes[s];
	for (i = 0; i < set->nr_alloc; i++)
		for (j = 0; j < 2; j++) {
			/* calloc()ed: untouched rows cost no memory */
			set->d[i].scrape[s][j] = sample_table__new(set->max_rows);
			if (!set->d[i].scrape[s][j]) {
				scrape_tables_free(set, s);
				return -ENOMEM;
			}
			atomic_store_explicit(&set->d[i].scrape_dropped[s], 0,
					      memory_order_relaxed);
		}
	/* the window starts a little ahead, so that every drain sees it open
	 * before the first record of it: what a drain reads later was taken
	 * later */
	start = mono_ns() + DRAIN_SCRAPE_LEAD_NS;
	atomic_store_explicit(&sl->start, start, memory_order_relaxed);
	atomic_store_explicit(&sl->end, start + duration_ns, memory_order_relaxed);
	atomic_store_explicit(&sl->pid, pid, memory_order_relaxed);
	seq = atomic_load_explicit(&sl->seq, memory_order_relaxed) + 1;
	atomic_store_explicit(&sl->seq, seq ? seq : 1, memory_order_release);
	atomic_fetch_or_explicit(&set->scrape_mask, 1u << s, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	*start_ns = start;
	*end_ns = start + duration_ns;
	return mono_ns() < start ? 0 : -ETIME;
}

bool drains__scrape_closed(const struct drains *set, unsigned int s)
{
	unsigned int seq = atomic_load_explicit(&set->scrapes[s].seq, memory_order_relaxed);
	int i;

	for (i = 0; i < set->started; i++)
		if (atomic_load_explicit(&set->d[i].scrape_closed[s], memory_order_acquire) != seq)
			return false;
	return true;
}

void drains__for_each_scrape_table(struct drains *set, unsigned int s, bool all,
				   void (*fn)(void *ctx, struct sample_table *t), void *ctx)
{
	unsigned int active;
	int i;

	for (i = 0; i < set->n; i++) {
		active = atomic_load_explicit(&set->d[i].active, memory_order_acquire);
		fn(ctx, set->d[i].scrape[s][active]);
		if (all)
			fn(ctx, set->d[i].scrape[s][!active]);
	}
}

uint64_t drains__scrape_dropped(const struct drains *set, unsigned int s)
{
	uint64_t n = 0;

	for (int i = 0; i < set->n; i++)
		n += atomic_load_explicit(&set->d[i].scrape_dropped[s], memory_order_relaxed);
	return n;
}

void drains__scrape_close(struct drains *set, unsigned int s)
{
	atomic_fetch_and_explicit(&set->scrape_mask, ~(1u << s), memory_order_release);
	scrape_tables_free(set, s);
}

int drains__error(const struct drains *set)
{
	return atomic_load(&set->error);
}

void drains__free(struct drains *set)
{
	int i;

	if (!set)
		return;
	if (set->started)
		drains__stop(set);
	if (set->d)
		for (i = 0; i < set->nr_alloc; i++) {
			sample_table__free(set->d[i].tables[0]);
			sample_table__free(set->d[i].tables[1]);
			free(set->d[i].codes);
		}
	if (set->d)
		for (i = 0; i < DRAIN_SCRAPES; i++)
			scrape_tables_free(set, i);
	free(set->d);
	free(set->ctxs);
	free(set);
}
