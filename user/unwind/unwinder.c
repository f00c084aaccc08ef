// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "unwind/table_cache.h"
#include "unwind/unwinder.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/htable.h"

/* a pid asked for while the thread is busy waits here (deduplicated) */
#define MAX_PENDING 65536

/*
 * The least time between two rounds of requests and releases: a node
 * starting programs all the time (each a fork, an exec, a loader's mmaps,
 * an exit) gets a round per gap rather than a wake-up per event.
 */
#define ROUND_GAP_NS 20000000ull

/* one mapping as installed, kept to install the process again when a table lands */
struct inst_map {
	uint64_t start, end, pgoff;
	struct utable *t; /* NULL: anonymous, or a file that could not be read */
	bool file;	  /* a file mapping */
};

/* what the BPF unwinder has of one process image (process_state.unwind) */
struct unwind_proc_state {
	uint32_t pid;
	uint32_t exec_id;
	uint32_t maps_gen; /* process_state.maps_gen it was built from */
	struct unwind_proc bpf;
	struct inst_map *maps;
	uint32_t nr_maps;
	uint32_t nr_waiting;		/* mappings whose table is being built */
	struct unwind_proc_state *next; /* on the release queue */
};

struct unwinder {
	struct unwinder_opts o;
	struct unwind_store *store;
	pthread_t thread;
	bool started;
	atomic_bool cancel; /* set first by unwinder__stop(): a build stops in one libdw call */

	pthread_mutex_t lock; /* the queues below and the stats */
	pthread_cond_t wake;
	pthread_cond_t idle; /* signalled when the queues are found empty */
	bool busy;	     /* the thread works on what it took off the queues */
	bool holding;	     /* lets the queues fill until the gap is over: no signal */
	bool stop;
	uint32_t *pending;
	uint32_t nr_pending;
	struct htable pending_index; /* over pending[] */
	struct unwind_proc_state *releases;
	struct unwinder_stats st;

	/* the unwinder thread's own */
	struct table_cache cache; /* the files' tables and their builds */
	struct unwind_mapping *scratch;
	size_t scratch_cap;
	struct unwind_proc_state **waiting; /* installed with tables still building */
	size_t nr_waiting, cap_waiting;
};

static void count(struct unwinder *u, uint64_t *c, uint64_t n)
{
	pthread_mutex_lock(&u->lock);
	*c += n;
	pthread_mutex_unlock(&u->lock);
}

/* --- installing a process --------------------------------------------- */

static void waiting_del(struct unwinder *u, struct unwind_proc_state *ups)
{
	for (size_t i = 0; i < u->nr_waiting; i++) {
		if (u->waiting[i] == ups) {
			u->waiting[i] = u->waiting[--u->nr_waiting];
			return;
		}
	}
}

static void ups_free(struct unwinder *u, struct unwind_proc_state *ups)
{
	uint32_t i;

	waiting_del(u, ups);
	for (i = 0; i < ups->nr_maps; i++)
		table_cache__put(&u->cache, ups->maps[i].t);
	free(ups->maps);
	free(ups);
}

static void release_proc(struct unwinder *u, struct unwind_proc_state *ups, bool delete_entry)
{
	if (delete_entry)
		unwind_store__del_proc(u->store, ups->pid, &ups->bpf);
	else
		unwind_store__drop_proc_range(u->store, &ups->bpf);
	ups_free(u, ups);
}

/* put @ups's mappings in the store as their tables are now; count its waiting ones */
static int put_proc(struct unwinder *u, struct unwind_proc_state *ups, struct unwind_proc *bpf)
{
	uint32_t i;

	if (array_grow((void **)&u->scratch, &u->scratch_cap, ups->nr_maps ? ups->nr_maps : 1,
		       sizeof(*u->scratch), 64))
		return -ENOMEM;
	ups->nr_waiting = 0;
	for (i = 0; i < ups->nr_maps; i++) {
		const struct inst_map *m = &ups->maps[i];

		table_cache__mapping(m->t, m->file, m->start, m->end, m->pgoff, &u->scratch[i]);
		ups->nr_waiting += table_cache__building(m->t);
	}
	if (!ups->nr_maps)
		return -EINVAL;
	return unwind_store__put_proc(u->store, ups->pid, ups->exec_id, u->scratch, ups->nr_maps,
				      bpf);
}

/*
 * Tables landed: install again the processes that waited for them, from
 * the mappings they were installed with (their own install replaces that
 * when their mappings change).
 */
static void install_waiting(struct unwinder *u)
{
	struct unwind_proc bpf;
	size_t i = 0;

	while (i < u->nr_waiting) {
		struct unwind_proc_state *ups = u->waiting[i];
		uint32_t k, still = 0;

		for (k = 0; k < ups->nr_maps; k++)
			still += table_cache__building(ups->maps[k].t);
		if (still == ups->nr_waiting) {
			i++;
			continue;
		}
		if (put_proc(u, ups, &bpf)) {
			count(u, &u->st.install_failed, 1);
		} else {
			unwind_store__drop_proc_range(u->store, &ups->bpf);
			ups->bpf = bpf;
			count(u, &u->st.reinstalls, 1);
		}
		ups->nr_waiting = still;
		if (!still)
			u->waiting[i] = u->waiting[--u->nr_waiting];
		else
			i++;
	}
}

/* @st's newest snapshot, unless installed already: NULL when there is nothing to do */
static struct mappings *take_maps(struct process_state *st, uint32_t *gen)
{
	struct mappings *snap = NULL;

	pthread_mutex_lock(&st->lock);
	if (st->retired || (st->unwind && st->unwind->maps_gen == st->maps_gen))
		goto out;
	snap = mappings_history__latest(&st->maps);
	if (snap)
		mappings__get(snap);
	*gen = st->maps_gen;
out:
	pthread_mutex_unlock(&st->lock);
	return snap;
}

static void install(struct unwinder *u, uint32_t pid)
{
	struct unwind_proc_state *ups = NULL, *prev;
	struct process_state *st;
	const struct mapping *maps;
	struct mappings *snap;
	uint32_t i, nr = 0, gen = 0;
	struct utable *t;
	int err;

	st = process_states__get_pinned(u->o.states, u->o.reg, pid);
	if (!st)
		return;
	snap = take_maps(st, &gen);
	if (!snap)
		goto out_unpin;
	/* a fork that lived a millisecond: its files cannot be opened any more */
	if (kill((pid_t)pid, 0) && errno == ESRCH) {
		count(u, &u->st.install_gone, 1);
		goto out_unpin;
	}
	maps = snap->maps;
	nr = snap->nr < UNWIND_MAX_PROC_MAPPINGS ? snap->nr : UNWIND_MAX_PROC_MAPPINGS;
	if (array_grow((void **)&u->waiting, &u->cap_waiting, u->nr_waiting + 1,
		       sizeof(struct unwind_proc_state *), 64))
		goto out_unpin;
	ups = calloc(1, sizeof(*ups));
	if (!ups || !(ups->maps = calloc(nr ? nr : 1, sizeof(*ups->maps))))
		goto out_unpin;
	ups->pid = pid;
	ups->exec_id = st->exec_id;
	ups->maps_gen = gen;
	ups->nr_maps = nr;
	for (i = 0; i < nr; i++) {
		t = table_cache__get(&u->cache, pid, &maps[i]);
		ups->maps[i] = (struct inst_map){
			.start = maps[i].start,
			.end = maps[i].end,
			.pgoff = maps[i].pgoff,
			.t = t,
			.file = maps[i].path[0] == '/',
		};
		table_cache__hold(&u->cache, t);
	}
	err = put_proc(u, ups, &ups->bpf);
	if (err) {
		count(u, &u->st.install_failed, 1);
		goto out_unpin;
	}
	pthread_mutex_lock(&st->lock);
	if (st->retired) {
		/* the image went while we built: its retire found nothing to take */
		pthread_mutex_unlock(&st->lock);
		release_proc(u, ups, true);
		ups = NULL;
		goto out_unpin;
	}
	prev = st->unwind;
	st->unwind = ups;
	pthread_mutex_unlock(&st->lock);
	/* some of its tables are still building: installed again when they land */
	if (ups->nr_waiting)
		u->waiting[u->nr_waiting++] = ups;
	ups = NULL;
	/* put_proc replaced the previous install's entry: its range and refs go */
	if (prev)
		release_proc(u, prev, false);
	count(u, &u->st.installs, 1);
out_unpin:
	if (ups)
		ups_free(u, ups);
	mappings__put(snap);
	process_states__unpin(st);
	table_cache__compact(&u->cache);
}

/* --- the thread and its queues ---------------------------------------- */

static bool pending_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct unwinder *u = ctx;

	return u->pending[idx] == *(const uint32_t *)key;
}

static uint32_t pending_hash(const void *ctx, uint32_t idx)
{
	const struct unwinder *u = ctx;

	return (uint32_t)hash_u64(u->pending[idx]);
}

void unwinder__request(struct unwinder *u, uint32_t pid)
{
	uint32_t hash = (uint32_t)hash_u64(pid);

	pthread_mutex_lock(&u->lock);
	if (htable__find(&u->pending_index, hash, pending_eq, u, &pid) == HTABLE_NONE &&
	    u->nr_pending < MAX_PENDING &&
	    !htable__insert(&u->pending_index, hash, u->nr_pending)) {
		u->pending[u->nr_pending++] = pid;
		if (!u->holding)
			pthread_cond_signal(&u->wake);
	}
	pthread_mutex_unlock(&u->lock);
}

static void on_mapped(void *ctx, struct process_state *st, struct mappings *snap,
		      const struct proc_maps *all)
{
	unwinder__request(ctx, st->pid);
}

/* with @st->lock held, on the registry's reclaim thread */
static void on_retired(void *ctx, struct process_state *st)
{
	struct unwinder *u = ctx;
	struct unwind_proc_state *ups = st->unwind;

	if (!ups)
		return;
	st->unwind = NULL;
	pthread_mutex_lock(&u->lock);
	ups->next = u->releases;
	u->releases = ups;
	if (!u->holding)
		pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
}

/*
 * One round: releases first (they free room the installs may need), then
 * the installs asked for (never waiting for a build: a file's table is
 * queued, its mappings walked by frame pointers meanwhile), then one slice
 * of the builds, then the processes whose tables landed.
 */
static void work(struct unwinder *u, struct unwind_proc_state *rel, const uint32_t *batch,
		 uint32_t n)
{
	struct unwind_proc_state *next;
	uint32_t i;

	for (; rel; rel = next) {
		next = rel->next;
		release_proc(u, rel, true);
	}
	for (i = 0; i < n && !atomic_load(&u->cancel); i++)
		install(u, batch[i]);
	if (table_cache__run(&u->cache))
		install_waiting(u);
}

/* @ts: CLOCK_REALTIME @ns from now, for pthread_cond_timedwait() */
static void realtime_after(struct timespec *ts, uint64_t ns)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ns / 1000000000ull;
	ts->tv_nsec += ns % 1000000000ull;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

static void *unwinder_thread(void *arg)
{
	struct unwinder *u = arg;
	struct unwind_proc_state *rel;
	uint32_t *batch = NULL, n;
	uint64_t last = 0, now;
	struct timespec ts;

	pthread_setname_np(pthread_self(), "ctxprof-unwind");
	thread_registry__register_thread();
	batch = malloc(MAX_PENDING * sizeof(*batch));
	pthread_mutex_lock(&u->lock);
	while (!u->stop && batch) {
		if (!u->nr_pending && !u->releases && !table_cache__busy(&u->cache)) {
			u->busy = false;
			pthread_cond_broadcast(&u->idle);
			/* requests and releases signal: the timeout only refreshes
			 * the stats, and lets quarantined ranges out */
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec++;
			pthread_cond_timedwait(&u->wake, &u->lock, &ts);
			continue;
		}
		/* work soon after the last round (builds aside): more gathers meanwhile */
		now = mono_ns();
		if (!table_cache__busy(&u->cache) && now - last < ROUND_GAP_NS) {
			realtime_after(&ts, last + ROUND_GAP_NS - now);
			u->holding = true;
			pthread_cond_timedwait(&u->wake, &u->lock, &ts);
			u->holding = false;
			continue;
		}
		last = now;
		u->busy = true;
		rel = u->releases;
		u->releases = NULL;
		n = u->nr_pending;
		memcpy(batch, u->pending, n * sizeof(*batch));
		/* a few pids in an index for 64k: their slots, not the megabyte */
		htable__clear_by(&u->pending_index, pending_hash, u);
		u->nr_pending = 0;
		pthread_mutex_unlock(&u->lock);

		work(u, rel, batch, n);

		pthread_mutex_lock(&u->lock);
		unwind_store__stats(u->store, &u->st.store);
	}
	u->busy = false;
	pthread_cond_broadcast(&u->idle);
	pthread_mutex_unlock(&u->lock);
	/* what the stop left unbuilt, queued or between two slices */
	table_cache__cancel(&u->cache);
	free(batch);
	thread_registry__unregister_thread();
	return NULL;
}

struct unwinder *unwinder__start(const struct unwinder_opts *opts, char *err, size_t err_len)
{
	struct process_state_subscriber sub = {.changed = on_mapped, .gone = on_retired};
	struct unwinder *u;
	int e;

	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->o = *opts;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->wake, NULL);
	pthread_cond_init(&u->idle, NULL);
	u->pending = calloc(MAX_PENDING, sizeof(*u->pending));
	e = u->pending ? htable__init(&u->pending_index, MAX_PENDING, HTABLE_FIXED) : -ENOMEM;
	if (e) {
		snprintf(err, err_len, "out of memory for the unwinder");
		goto err_free;
	}
	u->store = unwind_store__new(&opts->maps);
	if (!u->store) {
		e = -errno;
		snprintf(err, err_len, "cannot map the unwind tables: %s", strerror(errno));
		goto err_free;
	}
	u->cache = (struct table_cache){.store = u->store,
					.lock = &u->lock,
					.st = &u->st,
					.cancel = &u->cancel,
					.verbose = opts->verbose};
	e = table_cache__init(&u->cache);
	if (e) {
		snprintf(err, err_len, "cannot read the vdso: %s", strerror(-e));
		goto err_free;
	}
	sub.ctx = u;
	e = process_states__subscribe(opts->states, &sub);
	if (e) {
		snprintf(err, err_len, "cannot follow process mappings: %s", strerror(-e));
		goto err_free;
	}
	e = -pthread_create(&u->thread, NULL, unwinder_thread, u);
	if (e) {
		snprintf(err, err_len, "cannot start the unwinder thread: %s", strerror(-e));
		goto err_free;
	}
	u->started = true;
	return u;

err_free:
	unwinder__free(u);
	errno = -e;
	return NULL;
}

bool unwinder__wait_idle(struct unwinder *u, int timeout_ms)
{
	struct timespec ts;
	bool idle;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&u->lock);
	while ((u->busy || u->nr_pending || u->releases) && u->started)
		if (pthread_cond_timedwait(&u->idle, &u->lock, &ts))
			break;
	idle = !u->busy && !u->nr_pending && !u->releases;
	pthread_mutex_unlock(&u->lock);
	return idle;
}

void unwinder__stats(struct unwinder *u, struct unwinder_stats *st)
{
	pthread_mutex_lock(&u->lock);
	*st = u->st;
	pthread_mutex_unlock(&u->lock);
}

void unwinder__stop(struct unwinder *u)
{
	if (!u || !u->started)
		return;
	/* a build under way sees this within one libdw call */
	atomic_store(&u->cancel, true);
	pthread_mutex_lock(&u->lock);
	u->stop = true;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	pthread_join(u->thread, NULL);
	u->started = false;
}

void unwinder__free(struct unwinder *u)
{
	struct unwind_proc_state *rel, *next;

	if (!u)
		return;
	unwinder__stop(u);
	for (rel = u->releases; rel; rel = next) {
		next = rel->next;
		free(rel->maps);
		free(rel);
	}
	table_cache__destroy(&u->cache);
	free(u->waiting);
	htable__destroy(&u->pending_index);
	free(u->pending);
	free(u->scratch);
	unwind_store__free(u->store);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->wake);
	pthread_cond_destroy(&u->idle);
	free(u);
}
