// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "processes/lifecycle.h"
#include "processes/proc_scan.h"
#include "processes/thread_registry.h"
#include "processes/tracker.h"

#define POLL_MS 20 /* lifecycle ring wait; exec snapshots must beat short lives */

/* a process's labels, kept past its exit until the next export */
struct label_ent {
	struct label_ent *next;
	pid_t pid;
	bool exited;
	char comm[16];
	char container_id[TRACKER_CONTAINER_ID_LEN + 1];
};

#define LABEL_BUCKETS 4096

struct tracker {
	struct tracker_opts o;
	struct thread_registry *reg;
	struct lifecycle *lc;
	pthread_t thread;
	bool started;
	_Atomic int stop;
	pthread_mutex_t labels_lock; /* tracker thread writes, exporter reads */
	struct label_ent *labels[LABEL_BUCKETS];
	_Atomic uint64_t snapshots, tracked, labels_kept;
};

static struct label_ent **label_slot(struct tracker *t, pid_t pid)
{
	struct label_ent **pp = &t->labels[(uint32_t)pid % LABEL_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* copy the registry's view of @pid into the label table */
static void keep_labels(struct tracker *t, pid_t pid)
{
	const struct process_info *p;
	const struct process_image *img;
	struct label_ent **pp, *e;

	pthread_mutex_lock(&t->labels_lock);
	pp = label_slot(t, pid);
	e = *pp;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			goto out;
		e->pid = pid;
		*pp = e;
		atomic_fetch_add(&t->labels_kept, 1);
	}
	e->exited = false;
	thread_registry__read_lock();
	p = thread_registry__lookup_process(t->reg, pid);
	img = p ? process_info__image(p) : NULL;
	if (img) {
		snprintf(e->comm, sizeof(e->comm), "%s", img->comm);
		snprintf(e->container_id, sizeof(e->container_id), "%s", img->container_id);
	}
	thread_registry__read_unlock();
out:
	pthread_mutex_unlock(&t->labels_lock);
}

static void mark_exited(struct tracker *t, pid_t pid)
{
	struct label_ent *e;

	pthread_mutex_lock(&t->labels_lock);
	e = *label_slot(t, pid);
	if (e)
		e->exited = true;
	pthread_mutex_unlock(&t->labels_lock);
}

static void snapshot(struct tracker *t, pid_t pid)
{
	pthread_mutex_lock(t->o.sym_lock);
	if (!symbolizer__snapshot(t->o.sym, pid))
		atomic_fetch_add(&t->snapshots, 1);
	pthread_mutex_unlock(t->o.sym_lock);
}

static bool tracked(struct tracker *t, uint32_t pid)
{
	__u8 v;

	return !bpf_map_lookup_elem(t->o.pid_map_fd, &pid, &v);
}

static void track(struct tracker *t, uint32_t pid)
{
	__u8 one = 1;

	if (!bpf_map_update_elem(t->o.pid_map_fd, &pid, &one, BPF_ANY))
		atomic_fetch_add(&t->tracked, 1);
}

/* on the tracker thread, after the registry applied @rec */
static void on_event(void *ctx, const struct lifecycle_record *rec, int err)
{
	struct tracker *t = ctx;

	if (rec->flags & LIFECYCLE_F_KTHREAD)
		return;
	switch (rec->type) {
	case LIFECYCLE_FORK:
		if (t->o.children) {
			if (!tracked(t, rec->ppid))
				return;
			track(t, rec->pid);
		}
		keep_labels(t, rec->pid);
		snapshot(t, rec->pid);
		break;
	case LIFECYCLE_EXEC:
		if (t->o.children && !tracked(t, rec->pid))
			return;
		keep_labels(t, rec->pid);
		snapshot(t, rec->pid);
		break;
	case LIFECYCLE_EXIT:
		if (rec->flags & LIFECYCLE_F_GROUP_DEAD) {
			mark_exited(t, rec->pid);
			if (t->o.children)
				bpf_map_delete_elem(t->o.pid_map_fd, &rec->pid);
		}
		break;
	default:
		break;
	}
}

static void *tracker_thread(void *arg)
{
	struct tracker *t = arg;

	thread_registry__register_thread();
	{
		int n;

		while (!atomic_load(&t->stop)) {
			n = lifecycle__poll(t->lc, POLL_MS);
			if (n < 0 && n != -EINTR)
				break;
		}
	}
	lifecycle__consume(t->lc);
	thread_registry__unregister_thread();
	return NULL;
}

static void scan_tick(void *ctx)
{
	lifecycle__consume(ctx);
}

struct seed_ctx {
	struct tracker *t;
	int depth;
};

/* --children: the root and every descendant the scan found */
static int seed_tree(void *ctx, const struct process_info *p)
{
	struct seed_ctx *sc = ctx;
	struct seed_ctx child = {sc->t, sc->depth + 1};

	track(sc->t, p->pid);
	/* bounded: a process tree is not deeper than this in practice */
	if (sc->depth < 64)
		thread_registry__for_each_child(sc->t->reg, p->pid, seed_tree, &child);
	return 0;
}

static int seed_labels(void *ctx, const struct process_info *p)
{
	struct tracker *t = ctx;

	if (!t->o.children || tracked(t, p->pid))
		keep_labels(t, p->pid);
	return 0;
}

struct tracker *tracker__start(const struct tracker_opts *opts, char *err, size_t err_len)
{
	struct lifecycle_opts lo = {.btf_path = opts->btf_path, .on_event = on_event};
	struct proc_scan_opts so = {.tick = scan_tick};
	struct proc_scan_stats ss;
	struct tracker *t;
	int e;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->o = *opts;
	pthread_mutex_init(&t->labels_lock, NULL);
	lo.ctx = t;
	thread_registry__register_thread();
	t->reg = thread_registry__new(NULL);
	if (!t->reg) {
		e = errno;
		snprintf(err, err_len, "cannot create the thread registry: %s", strerror(e));
		goto err_free;
	}
	/* events first, then the scan: what happens meanwhile is in the ring */
	t->lc = lifecycle__open(&lo, t->reg, err, err_len);
	if (!t->lc) {
		e = errno;
		goto err_free;
	}
	so.tick_ctx = t->lc;
	e = -proc_scan__run(t->reg, &so, &ss);
	if (e) {
		snprintf(err, err_len, "cannot scan /proc: %s", strerror(e));
		goto err_free;
	}
	if (opts->children) {
		struct seed_ctx sc = {t, 0};

		thread_registry__read_lock();
		if (thread_registry__lookup_process(t->reg, opts->root))
			seed_tree(&sc, thread_registry__lookup_process(t->reg, opts->root));
		thread_registry__read_unlock();
		if (!tracked(t, opts->root))
			track(t, opts->root);
	}
	thread_registry__read_lock();
	thread_registry__for_each_process(t->reg, seed_labels, t);
	thread_registry__read_unlock();
	e = pthread_create(&t->thread, NULL, tracker_thread, t);
	if (e) {
		snprintf(err, err_len, "cannot start the tracking thread: %s", strerror(e));
		goto err_free;
	}
	t->started = true;
	return t;

err_free:
	tracker__free(t);
	errno = e;
	return NULL;
}

int tracker__labels(struct tracker *t, pid_t pid, char comm[16],
		    char container_id[TRACKER_CONTAINER_ID_LEN + 1])
{
	struct label_ent *e;
	int err = -ENOENT;

	pthread_mutex_lock(&t->labels_lock);
	e = *label_slot(t, pid);
	if (e) {
		memcpy(comm, e->comm, 16);
		memcpy(container_id, e->container_id, TRACKER_CONTAINER_ID_LEN + 1);
		err = 0;
	}
	pthread_mutex_unlock(&t->labels_lock);
	return err;
}

void tracker__exported(struct tracker *t)
{
	struct label_ent **pp, *e;
	size_t i;

	for (i = 0; i < LABEL_BUCKETS; i++) {
		pthread_mutex_lock(&t->labels_lock);
		for (pp = &t->labels[i]; (e = *pp);) {
			if (!e->exited) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			pthread_mutex_unlock(&t->labels_lock);
			pthread_mutex_lock(t->o.sym_lock);
			symbolizer__forget(t->o.sym, e->pid);
			pthread_mutex_unlock(t->o.sym_lock);
			free(e);
			atomic_fetch_sub(&t->labels_kept, 1);
			pthread_mutex_lock(&t->labels_lock);
		}
		pthread_mutex_unlock(&t->labels_lock);
	}
}

void tracker__stats(struct tracker *t, struct tracker_stats *st)
{
	struct thread_registry_stats rs;
	struct lifecycle_counters lc;
	uint64_t bpf[LIFECYCLE_STAT_MAX] = {};
	int i;

	memset(st, 0, sizeof(*st));
	thread_registry__stats(t->reg, &rs);
	lifecycle__counters(t->lc, &lc);
	lifecycle__read_stats(t->lc, bpf);
	st->processes = rs.nr_processes;
	st->threads = rs.nr_threads;
	st->snapshots = atomic_load(&t->snapshots);
	st->tracked = atomic_load(&t->tracked);
	st->events = lc.records;
	for (i = LIFECYCLE_STAT_DROP_FIRST; i <= LIFECYCLE_STAT_DROP_LAST; i++)
		st->dropped += bpf[i];
	st->labels_kept = atomic_load(&t->labels_kept);
}

void tracker__free(struct tracker *t)
{
	struct label_ent *e, *next;
	size_t i;

	if (!t)
		return;
	if (t->started) {
		atomic_store(&t->stop, 1);
		pthread_join(t->thread, NULL);
	}
	lifecycle__free(t->lc);
	thread_registry__free(t->reg);
	thread_registry__unregister_thread();
	for (i = 0; i < LABEL_BUCKETS; i++)
		for (e = t->labels[i]; e; e = next) {
			next = e->next;
			free(e);
		}
	pthread_mutex_destroy(&t->labels_lock);
	free(t);
}
