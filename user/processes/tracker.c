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
#include "traces/trace.h"
#include "traces/trace_event.h"

#define POLL_MS 20 /* lifecycle ring wait; exec snapshots must beat short lives */

struct tracker {
	struct tracker_opts o;
	struct thread_registry *reg;
	struct lifecycle *lc;
	pthread_t thread;
	bool started;
	_Atomic int stop;
	_Atomic uint64_t snapshots, tracked;
	struct trace_writer *tw;    /* the exits of traced threads (opts.tl) */
	_Atomic uint64_t heartbeat; /* bumped by the thread at each ring poll */
};

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

bool tracker__wants(struct tracker *t, uint32_t pid)
{
	if (t->o.children)
		return tracked(t, pid);
	return !t->o.root || (pid_t)pid == t->o.root;
}

/* the image's state, its mappings read now: a short life still gets named */
static void snapshot(struct tracker *t, uint32_t pid)
{
	struct process_state *st = process_states__get(t->o.states, t->reg, pid);

	if (st && !process_states__refresh(t->o.states, st))
		atomic_fetch_add(&t->snapshots, 1);
}

/* a thread some writer traced has exited: its timeline says when */
static void trace_exit(struct tracker *t, const struct lifecycle_record *rec)
{
	struct trace *tr = trace_writer__get(t->tw, rec->pid, rec->tid, true);
	uint64_t ev[TRACE_EV_MAX_WORDS];

	trace__append(t->tw, tr, ev, trace_ev_thread_exit(ev, rec->time_ns));
	/* our own trace of it marked it again: a reused tid starts unmarked */
	traces__take_mark(t->o.tl, rec->tid);
}

/* on the tracker thread, after the registry applied @rec */
static void on_event(void *ctx, const struct lifecycle_record *rec, int err)
{
	struct tracker *t = ctx;

	if (rec->flags & LIFECYCLE_F_KTHREAD)
		return;
	switch (rec->type) {
	case LIFECYCLE_FORK:
		if (t->o.children && tracked(t, rec->ppid))
			track(t, rec->pid);
		/* the address space it copied: its creator's mappings, shared */
		if (tracker__wants(t, rec->pid) &&
		    process_states__inherit(t->o.states, t->reg, rec->pid, rec->ptgid))
			snapshot(t, rec->pid);
		break;
	case LIFECYCLE_EXEC:
		if (tracker__wants(t, rec->pid))
			snapshot(t, rec->pid);
		break;
	case LIFECYCLE_EXIT:
		if (t->o.children && (rec->flags & LIFECYCLE_F_GROUP_DEAD))
			bpf_map_delete_elem(t->o.pid_map_fd, &rec->pid);
		if (t->tw && traces__take_mark(t->o.tl, rec->tid))
			trace_exit(t, rec);
		break;
	default:
		break;
	}
}

static void *tracker_thread(void *arg)
{
	struct tracker *t = arg;
	unsigned int polls = 0;
	int n;

	thread_registry__register_thread();
	/* top -H and /proc/PID/task name what uses the CPU */
	pthread_setname_np(pthread_self(), "ctxprof-track");
	while (!atomic_load(&t->stop)) {
		atomic_fetch_add_explicit(&t->heartbeat, 1, memory_order_relaxed);
		n = lifecycle__poll(t->lc, POLL_MS);
		if (n < 0 && n != -EINTR)
			break;
		/* about once a second: let the traces of gone threads go */
		if (t->tw && ++polls % (1000 / POLL_MS) == 0)
			trace_writer__sweep(t->tw);
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

struct pid_list {
	uint32_t *pids;
	size_t nr, cap;
};

static int collect_wanted(void *ctx, const struct process_info *p)
{
	struct pid_list *l = ctx;
	uint32_t *n;

	if (l->nr == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		n = realloc(l->pids, l->cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		l->pids = n;
	}
	l->pids[l->nr++] = p->pid;
	return 0;
}

/*
 * A state, its mappings read, for every profiled process that runs already:
 * one that exits before its first sample is handled still has its name, and
 * its unwind tables are built before its samples come (the read calls the
 * states' hooks).
 */
static void seed_states(struct tracker *t)
{
	struct pid_list l = {0};
	size_t i;

	thread_registry__read_lock();
	thread_registry__for_each_process(t->reg, collect_wanted, &l);
	thread_registry__read_unlock();
	for (i = 0; i < l.nr; i++)
		if (tracker__wants(t, l.pids[i]))
			snapshot(t, l.pids[i]);
	free(l.pids);
}

struct tracker *tracker__open(const struct tracker_opts *opts, char *err, size_t err_len)
{
	/* --pid: the registry needs the target alone, not the host */
	uint32_t only = opts->children ? 0 : (uint32_t)opts->root;
	struct lifecycle_opts lo = {
		.btf_path = opts->btf_path,
		.only_pid = only,
		.on_event = on_event,
	};
	struct tracker *t;
	int e;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->o = *opts;
	t->reg = opts->reg;
	if (opts->tl) {
		t->tw = traces__writer(opts->tl);
		if (!t->tw) {
			snprintf(err, err_len, "out of memory");
			free(t);
			errno = ENOMEM;
			return NULL;
		}
	}
	lo.ctx = t;
	/* events first, then the scan: what happens meanwhile is in the ring */
	t->lc = lifecycle__open(&lo, t->reg, err, err_len);
	if (!t->lc) {
		e = errno;
		tracker__free(t);
		errno = e;
		return NULL;
	}
	return t;
}

int tracker__run(struct tracker *t, char *err, size_t err_len)
{
	uint32_t only = t->o.children ? 0 : (uint32_t)t->o.root;
	struct proc_scan_opts so = {.tick = scan_tick, .tick_ctx = t->lc, .only_pid = only};
	struct proc_scan_stats ss;
	int e;

	e = -proc_scan__run(t->reg, &so, &ss);
	if (e) {
		snprintf(err, err_len, "cannot scan /proc: %s", strerror(e));
		return -e;
	}
	if (t->o.children) {
		struct seed_ctx sc = {t, 0};
		const struct process_info *root;

		thread_registry__read_lock();
		root = thread_registry__lookup_process(t->reg, t->o.root);
		if (root)
			seed_tree(&sc, root);
		thread_registry__read_unlock();
		if (!tracked(t, t->o.root))
			track(t, t->o.root);
	}
	seed_states(t);
	e = pthread_create(&t->thread, NULL, tracker_thread, t);
	if (e) {
		snprintf(err, err_len, "cannot start the tracking thread: %s", strerror(e));
		return -e;
	}
	t->started = true;
	return 0;
}

struct tracker *tracker__start(const struct tracker_opts *opts, char *err, size_t err_len)
{
	struct tracker *t = tracker__open(opts, err, err_len);
	int e;

	if (!t)
		return NULL;
	e = tracker__run(t, err, err_len);
	if (e) {
		tracker__free(t);
		errno = -e;
		return NULL;
	}
	return t;
}

uint64_t tracker__heartbeat(struct tracker *t)
{
	return atomic_load_explicit(&t->heartbeat, memory_order_relaxed);
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
	st->retired = process_states__nr_retired(t->o.states);
}

void tracker__free(struct tracker *t)
{
	if (!t)
		return;
	if (t->started) {
		atomic_store(&t->stop, 1);
		pthread_join(t->thread, NULL);
	}
	lifecycle__free(t->lc);
	free(t);
}
