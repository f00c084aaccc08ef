// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "processes/proc_maps.h"
#include "processes/process_state.h"
#include "util/clock.h"
#include "util/hash.h"

/*
 * Reads waiting for the main thread's subscribers.  A process whose read
 * finds the queue full is not marked delivered, so its next read queues it
 * again: nothing is lost for good, only late (counted).
 */
#define EVENT_QUEUE_MAX 256

struct event {
	struct process_state *st; /* pinned while queued */
	struct proc_maps *all;	  /* every mapping of the read, owned by the queue */
};

struct process_states {
	struct process_state_resolver resolver;
	struct mappings_owner owner; /* the resolver's detach, for every snapshot */
	struct process_state_subscriber subs[PROCESS_STATES_MAX_SUBSCRIBERS];
	unsigned int nr_subs;
	uint32_t main_wants;	       /* the main-thread subscribers' wants, together */
	bool main_first;	       /* one of them wants every image's first read */
	struct pod_index *pods;	       /* NULL: no Kubernetes names */
	uint64_t refresh_max_ns;       /* process_states__set_refresh_max() */
	pthread_mutex_t retired_lock;  /* writer and reclaim thread push, the exporter collects */
	struct process_state *retired; /* newest first */
	unsigned int nr_retired;
	pthread_mutex_t queue_lock; /* @queue, @nr_queued */
	struct event queue[EVENT_QUEUE_MAX];
	unsigned int nr_queued;
	struct {
		_Atomic uint64_t reads, reads_changed, mapped, bad_lines, snapshots, inherited,
			events_lost;
	} st;
};

static void count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static void owner_release(void *ctx, struct mappings *m)
{
	struct process_states *ps = ctx;

	if (ps->resolver.detach)
		ps->resolver.detach(ps->resolver.ctx, m);
}

struct process_states *process_states__new(void)
{
	struct process_states *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->owner = (struct mappings_owner){owner_release, ps};
	ps->refresh_max_ns = PROCESS_STATE_REFRESH_NS;
	pthread_mutex_init(&ps->retired_lock, NULL);
	pthread_mutex_init(&ps->queue_lock, NULL);
	return ps;
}

void process_states__set_resolver(struct process_states *ps, const struct process_state_resolver *r)
{
	ps->resolver = *r;
}

int process_states__subscribe(struct process_states *ps, const struct process_state_subscriber *s)
{
	if (ps->nr_subs == PROCESS_STATES_MAX_SUBSCRIBERS)
		return -ENOSPC;
	ps->subs[ps->nr_subs++] = *s;
	if (s->main_thread) {
		ps->main_wants |= s->wants;
		ps->main_first |= s->first_read;
	}
	return 0;
}

static void state_free(struct process_state *st, void (*release)(struct process_state *st))
{
	if (release)
		release(st);
	mappings_history__release(&st->maps);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

unsigned int process_states__collect(struct process_states *ps, uint64_t before_ns,
				     void (*release)(struct process_state *st))
{
	struct process_state **pp, *st, *done = NULL;
	unsigned int n = 0;

	pthread_mutex_lock(&ps->retired_lock);
	for (pp = &ps->retired; (st = *pp);) {
		if (st->retired_ns >= before_ns ||
		    atomic_load_explicit(&st->pins, memory_order_acquire)) {
			pp = &st->next_retired;
			continue;
		}
		*pp = st->next_retired;
		st->next_retired = done;
		done = st;
		ps->nr_retired--;
	}
	pthread_mutex_unlock(&ps->retired_lock);
	for (; done; done = st, n++) {
		st = done->next_retired;
		state_free(done, release);
	}
	return n;
}

static void queue_drop_all(struct process_states *ps)
{
	unsigned int i;

	for (i = 0; i < ps->nr_queued; i++) {
		proc_maps__free(ps->queue[i].all);
		process_states__unpin(ps->queue[i].st);
	}
	ps->nr_queued = 0;
}

void process_states__free(struct process_states *ps)
{
	if (!ps)
		return;
	queue_drop_all(ps);
	process_states__collect(ps, UINT64_MAX, NULL);
	pthread_mutex_destroy(&ps->retired_lock);
	pthread_mutex_destroy(&ps->queue_lock);
	free(ps);
}

/* @st retired at @ns, onto the retired list (newest first) unless there
 * already; with retired_lock */
static void list_retired(struct process_states *ps, struct process_state *st, uint64_t ns)
{
	if (!st->retired_ns) {
		st->next_retired = ps->retired;
		ps->retired = st;
		ps->nr_retired++;
	}
	st->retired_ns = ns;
}

void process_states_unlinked(void *ctx, void *state)
{
	struct process_states *ps = ctx;
	struct process_state *st = state;

	pthread_mutex_lock(&ps->retired_lock);
	/* found by process_states__find(), never collected before its retirement */
	if (!st->retired_ns)
		list_retired(ps, st, UINT64_MAX);
	pthread_mutex_unlock(&ps->retired_lock);
}

void process_states_retire(void *ctx, void *state)
{
	struct process_states *ps = ctx;
	struct process_state *st = state;
	unsigned int i;

	pthread_mutex_lock(&st->lock);
	st->retired = true;
	for (i = 0; i < ps->nr_subs; i++)
		if (ps->subs[i].gone)
			ps->subs[i].gone(ps->subs[i].ctx, st);
	pthread_mutex_unlock(&st->lock);
	pthread_mutex_lock(&ps->retired_lock);
	list_retired(ps, st, mono_ns());
	pthread_mutex_unlock(&ps->retired_lock);
}

static struct process_state *state_new(uint32_t pid, const struct process_image *img,
				       const char *kube_id, const struct pod_meta *kube)
{
	struct process_state *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->pid = pid;
	st->exec_id = img->exec_id;
	memcpy(st->comm, img->comm, sizeof(st->comm));
	memcpy(st->container_id, img->container_id, sizeof(st->container_id));
	/* names looked up for this very id (the image may have changed since) */
	if (kube && !strcmp(kube_id, st->container_id))
		st->kube = *kube;
	pthread_mutex_init(&st->lock, NULL);
	return st;
}

static struct process_state *get(struct process_states *ps, struct thread_registry *reg,
				 uint32_t pid, bool pin)
{
	char kube_id[THREAD_REGISTRY_CONTAINER_ID_LEN + 1] = "";
	const struct process_image *img;
	const struct process_info *p;
	struct process_state *st = NULL, *mine;
	struct pod_meta kube, *found = NULL;

again:
	thread_registry__read_lock();
	p = thread_registry__lookup_process(reg, pid);
	img = p ? process_info__image(p) : NULL;
	if (!img)
		goto out;
	st = process_image__state(img);
	if (st)
		goto out;
	/* a container's names take the index's lock: look them up outside
	 * the read-side section, then look the image up again */
	if (ps->pods && img->container_id[0] && !kube_id[0]) {
		memcpy(kube_id, img->container_id, sizeof(kube_id));
		thread_registry__read_unlock();
		if (pod_index__lookup(ps->pods, kube_id, &kube))
			found = &kube;
		goto again;
	}
	mine = state_new(pid, img, kube_id, found);
	if (!mine)
		goto out;
	if (process_image__set_state(img, mine)) {
		st = mine;
	} else {
		/* another thread installed one first */
		state_free(mine, NULL);
		st = process_image__state(img);
	}
out:
	/* in the read-side section the image, so its state, cannot be retired */
	if (st && pin)
		atomic_fetch_add_explicit(&st->pins, 1, memory_order_acq_rel);
	thread_registry__read_unlock();
	return st;
}

void process_states__set_pods(struct process_states *ps, struct pod_index *pods)
{
	ps->pods = pods;
}

void process_states__set_refresh_max(struct process_states *ps, uint64_t max_ns)
{
	ps->refresh_max_ns = max_ns > PROCESS_STATE_REFRESH_NS ? max_ns : PROCESS_STATE_REFRESH_NS;
}

struct process_state *process_states__get(struct process_states *ps, struct thread_registry *reg,
					  uint32_t pid)
{
	return get(ps, reg, pid, false);
}

struct process_state *process_states__get_pinned(struct process_states *ps,
						 struct thread_registry *reg, uint32_t pid)
{
	return get(ps, reg, pid, true);
}

struct mappings *process_states__latest(struct process_state *st)
{
	struct mappings *m;

	pthread_mutex_lock(&st->lock);
	m = mappings_history__latest(&st->maps);
	if (m)
		mappings__get(m);
	pthread_mutex_unlock(&st->lock);
	return m;
}

/*
 * Queue @all for the main thread's subscribers; consumed, queued or freed.
 * A process queued already has its newer read replace the older one.
 */
static void queue_event(struct process_states *ps, struct process_state *st, struct proc_maps *all)
{
	unsigned int i;

	pthread_mutex_lock(&ps->queue_lock);
	for (i = 0; i < ps->nr_queued && ps->queue[i].st != st; i++)
		;
	if (i < ps->nr_queued) {
		proc_maps__free(ps->queue[i].all);
		ps->queue[i].all = all;
	} else if (ps->nr_queued < EVENT_QUEUE_MAX) {
		atomic_fetch_add_explicit(&st->pins, 1, memory_order_acq_rel);
		ps->queue[ps->nr_queued++] = (struct event){st, all};
	} else {
		proc_maps__free(all);
		count(&ps->st.events_lost, 1);
	}
	pthread_mutex_unlock(&ps->queue_lock);
}

/* the subscribers that run on the refreshing thread */
static void notify(struct process_states *ps, struct process_state *st, struct mappings *snap,
		   const struct proc_maps *all)
{
	unsigned int i;

	for (i = 0; i < ps->nr_subs; i++)
		if (!ps->subs[i].main_thread && ps->subs[i].changed)
			ps->subs[i].changed(ps->subs[i].ctx, st, snap, all);
}

/* a new generation of @st's mappings from @since_ns on, for the drains; with @st->lock */
static void publish_gen(struct process_state *st, uint64_t since_ns)
{
	st->maps_gen++;
	atomic_store_explicit(&st->gen_since[st->maps_gen % PROCESS_STATE_GEN_TIMES], since_ns,
			      memory_order_relaxed);
	atomic_store_explicit(&st->gen_pub, st->maps_gen, memory_order_release);
}

/*
 * Add a snapshot of @pm unless its executable mappings are the latest's.
 * With @st->lock held.  Return: the snapshot added, or NULL.
 */
static struct mappings *add_snapshot(struct process_states *ps, struct process_state *st, pid_t pid,
				     const struct proc_maps *pm, uint64_t now)
{
	struct mappings *prev = mappings_history__latest(&st->maps), *snap;

	snap = mappings__new(pm, mappings__flags(pm), now);
	if (!snap)
		return NULL;
	/* heap or stack growth changes the text, not the code: keep one snapshot */
	if (!snap->nr || (prev && mappings__same(prev, snap))) {
		mappings__put(snap);
		return NULL;
	}
	if (ps->resolver.attach)
		ps->resolver.attach(ps->resolver.ctx, pid, snap, prev, 0, 0);
	snap->owner = &ps->owner;
	if (mappings_history__add(&st->maps, snap, st->maps_gen + 1, now))
		return NULL;
	publish_gen(st, now);
	count(&ps->st.snapshots, 1);
	return snap;
}

int process_states__add_text(struct process_states *ps, struct process_state *st, pid_t pid,
			     const char *text, size_t len, uint64_t now_ns)
{
	uint64_t hash = hash_bytes(text, len);
	struct mappings *snap = NULL;
	struct proc_maps *pm = NULL;
	bool changed, main, first;
	uint32_t flags;
	uint64_t wait;
	int err = 0;

	count(&ps->st.reads, 1);
	pthread_mutex_lock(&st->lock);
	flags = st->maps_flags;
	changed = st->text_len != len || st->text_hash != hash;
	first = !atomic_load_explicit(&st->delivered, memory_order_relaxed);
	main = first && ((st->maps_flags & ps->main_wants) || ps->main_first);
	if (changed || main) {
		pm = proc_maps__parse(text, len);
		err = pm ? 0 : -errno;
	}
	if (pm && changed) {
		count(&ps->st.reads_changed, 1);
		count(&ps->st.bad_lines, pm->nr_bad_lines);
		st->text_hash = hash;
		st->text_len = len;
		st->maps_flags = mappings__flags(pm);
		snap = add_snapshot(ps, st, pid, pm, now_ns);
		if (snap)
			mappings__get(snap);
	}
	/* new code, or what the readers look for: soon again; else later each time */
	if (snap || st->maps_flags != flags || !st->refresh_step_ns)
		st->refresh_step_ns = PROCESS_STATE_REFRESH_NS;
	else if (st->refresh_step_ns < ps->refresh_max_ns)
		st->refresh_step_ns *= 2;
	if (st->refresh_step_ns > ps->refresh_max_ns)
		st->refresh_step_ns = ps->refresh_max_ns;
	wait = snap ? PROCESS_STATE_REFRESH_SOON_NS : st->refresh_step_ns;
	pthread_mutex_unlock(&st->lock);
	atomic_store_explicit(&st->refresh_after_ns, now_ns + wait, memory_order_relaxed);
	if (snap) {
		notify(ps, st, snap, pm);
		mappings__put(snap);
	}
	/* the application-context readers: a first look, and every change */
	if (pm && (changed || main) &&
	    ((mappings__flags(pm) & ps->main_wants) || (first && ps->main_first))) {
		queue_event(ps, st, pm);
		pm = NULL;
	}
	proc_maps__free(pm);
	return err ? err : snap != NULL;
}

int process_states__refresh(struct process_states *ps, struct process_state *st)
{
	char *text;
	size_t len;
	int err;

	err = proc_maps__read_text(st->pid, &text, &len);
	if (err)
		return err;
	err = process_states__add_text(ps, st, st->pid, text, len, mono_ns());
	free(text);
	return err < 0 ? err : 0;
}

/*
 * Generations for the reported mappings of @ev newer than @st's last read;
 * their range in [*lo, *hi).  With @st->lock.  Return: how many.
 */
static unsigned int announce(struct process_state *st, const struct process_mapped *ev,
			     unsigned int n, uint64_t *lo, uint64_t *hi)
{
	uint64_t last_read = st->maps.e[st->maps.nr - 1].read_ns;
	unsigned int i, done = 0;

	for (i = 0; i < n; i++) {
		if (ev[i].time_ns <= last_read || ev[i].start >= ev[i].end)
			continue;
		if (mappings_history__announce(&st->maps, st->maps_gen + 1, ev[i].time_ns,
					       ev[i].start, ev[i].end))
			break;
		publish_gen(st, ev[i].time_ns);
		*lo = ev[i].start < *lo ? ev[i].start : *lo;
		*hi = ev[i].end > *hi ? ev[i].end : *hi;
		done++;
	}
	return done;
}

/* whether @ev holds a change after @st's last read (or it was never read) */
static bool newer_than_read(struct process_state *st, const struct process_mapped *ev,
			    unsigned int n)
{
	uint64_t last_read = 0;
	unsigned int i;

	pthread_mutex_lock(&st->lock);
	if (st->maps.nr)
		last_read = st->maps.e[st->maps.nr - 1].read_ns;
	pthread_mutex_unlock(&st->lock);
	if (!last_read)
		return true;
	for (i = 0; i < n; i++)
		if (ev[i].time_ns > last_read && ev[i].start < ev[i].end)
			return true;
	return false;
}

int process_states__mapped(struct process_states *ps, struct process_state *st,
			   const struct process_mapped *ev, unsigned int n)
{
	uint64_t lo = UINT64_MAX, hi = 0, now, hash = 0;
	struct mappings *snap = NULL, *prev;
	struct proc_maps *pm = NULL;
	unsigned int done = 0;
	char *text = NULL;
	size_t len = 0;
	int err;

	/* a read since the changes shows them already: nothing to announce */
	if (!newer_than_read(st, ev, n))
		return 0;
	/* read after the changes were made: it shows them */
	err = proc_maps__read_text(st->pid, &text, &len);
	now = mono_ns();
	if (!err) {
		count(&ps->st.reads, 1);
		hash = hash_bytes(text, len);
		pm = proc_maps__parse(text, len);
		err = pm ? 0 : -errno;
	}
	free(text);
	pthread_mutex_lock(&st->lock);
	/* never read yet: the read is the first generation (or none) */
	if (!st->maps.nr) {
		pthread_mutex_unlock(&st->lock);
		proc_maps__free(pm);
		return err ? err : process_states__refresh(ps, st);
	}
	done = announce(st, ev, n, &lo, &hi);
	if (done && pm) {
		prev = mappings_history__latest(&st->maps);
		snap = mappings__new(pm, mappings__flags(pm), now);
	}
	if (snap) {
		if (ps->resolver.attach)
			ps->resolver.attach(ps->resolver.ctx, st->pid, snap, prev, lo, hi);
		snap->owner = &ps->owner;
		mappings_history__settle(&st->maps, mappings__get(snap), now);
		st->text_hash = hash;
		st->text_len = len;
		st->maps_flags = mappings__flags(pm);
	}
	pthread_mutex_unlock(&st->lock);
	count(&ps->st.mapped, done);
	if (snap) {
		atomic_store_explicit(&st->refresh_after_ns, now + PROCESS_STATE_REFRESH_SOON_NS,
				      memory_order_relaxed);
		notify(ps, st, snap, pm);
		mappings__put(snap);
	}
	proc_maps__free(pm);
	return err;
}

int process_states__inherit(struct process_states *ps, struct thread_registry *reg, uint32_t child,
			    uint32_t parent)
{
	struct process_state *pst, *cst;
	uint64_t now = mono_ns();
	struct mappings *snap;
	bool added = false;

	pst = process_states__get(ps, reg, parent);
	snap = pst ? process_states__latest(pst) : NULL;
	if (!snap)
		return -ENOENT;
	cst = process_states__get(ps, reg, child);
	if (!cst) {
		mappings__put(snap);
		return -ESRCH;
	}
	pthread_mutex_lock(&cst->lock);
	if (!cst->maps.nr && !mappings_history__add(&cst->maps, mappings__get(snap), 1, now)) {
		publish_gen(cst, now);
		added = true;
	}
	pthread_mutex_unlock(&cst->lock);
	if (added) {
		count(&ps->st.inherited, 1);
		notify(ps, cst, snap, NULL);
	}
	mappings__put(snap);
	return 0;
}

void process_states__deliver(struct process_states *ps)
{
	struct event *ev, batch[EVENT_QUEUE_MAX];
	struct mappings *snap;
	unsigned int i, j, n;
	uint32_t flags;
	bool first;

	pthread_mutex_lock(&ps->queue_lock);
	n = ps->nr_queued;
	memcpy(batch, ps->queue, n * sizeof(batch[0]));
	ps->nr_queued = 0;
	pthread_mutex_unlock(&ps->queue_lock);
	for (i = 0; i < n; i++) {
		ev = &batch[i];
		flags = mappings__flags(ev->all);
		first = !atomic_load_explicit(&ev->st->delivered, memory_order_relaxed);
		snap = process_states__latest(ev->st);
		for (j = 0; j < ps->nr_subs; j++)
			if (ps->subs[j].main_thread &&
			    ((ps->subs[j].wants & flags) || (ps->subs[j].first_read && first)))
				ps->subs[j].changed(ps->subs[j].ctx, ev->st, snap, ev->all);
		atomic_store_explicit(&ev->st->delivered, true, memory_order_relaxed);
		mappings__put(snap);
		proc_maps__free(ev->all);
		process_states__unpin(ev->st);
	}
}

struct process_state *process_states__find(struct process_states *ps, struct thread_registry *reg,
					   uint32_t pid, uint32_t exec_id)
{
	struct process_state *cur = NULL, *st, *unknown = NULL;
	const struct process_image *img;
	const struct process_info *p;

	thread_registry__read_lock();
	p = thread_registry__lookup_process(reg, pid);
	img = p ? process_info__image(p) : NULL;
	if (img)
		cur = process_image__state(img);
	thread_registry__read_unlock();
	if (cur && cur->exec_id == exec_id)
		return cur;
	if (cur && !cur->exec_id)
		unknown = cur;
	/* newest first: a pid reused within one interval names its latest image */
	pthread_mutex_lock(&ps->retired_lock);
	for (st = ps->retired; st; st = st->next_retired) {
		if (st->pid != pid)
			continue;
		if (st->exec_id == exec_id)
			break;
		if (!st->exec_id && !unknown)
			unknown = st;
	}
	pthread_mutex_unlock(&ps->retired_lock);
	if (st)
		return st;
	if (unknown)
		return unknown;
	/* a sample without an exec id (0) takes whatever the pid has now */
	return exec_id ? NULL : cur;
}

unsigned int process_states__nr_retired(struct process_states *ps)
{
	unsigned int n;

	pthread_mutex_lock(&ps->retired_lock);
	n = ps->nr_retired;
	pthread_mutex_unlock(&ps->retired_lock);
	return n;
}

void process_states__stats(struct process_states *ps, struct process_states_stats *out)
{
	out->reads = atomic_load_explicit(&ps->st.reads, memory_order_relaxed);
	out->reads_changed = atomic_load_explicit(&ps->st.reads_changed, memory_order_relaxed);
	out->mapped = atomic_load_explicit(&ps->st.mapped, memory_order_relaxed);
	out->bad_lines = atomic_load_explicit(&ps->st.bad_lines, memory_order_relaxed);
	out->snapshots = atomic_load_explicit(&ps->st.snapshots, memory_order_relaxed);
	out->inherited = atomic_load_explicit(&ps->st.inherited, memory_order_relaxed);
	out->events_lost = atomic_load_explicit(&ps->st.events_lost, memory_order_relaxed);
}
