// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/bpf.h>
#include "processes/lifecycle.h"
#include "processes/mmap_events.h"
#include "processes/proc_scan.h"
#include "processes/thread_registry.h"
#include "processes/tracker.h"
#include "traces/trace.h"
#include "traces/trace_event.h"
#include "util/clock.h"

/*
 * The longest wait for lifecycle records and mapping reports: an exec or a
 * report wakes the thread at once (lifecycle__fd(), mmap_events__fd()); the
 * rest (forks, exits, renames) waits for this or for a quarter-full ring.
 */
#define POLL_MS 500

/*
 * What a wake-up waits before it reads: an exec and the libraries its loader
 * maps right after arrive together, so one read of /proc/PID/maps covers all.
 */
#define COALESCE_US 10000

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
	/* new executable mappings the kernel reports, NULL without; those
	 * read off its rings at one poll, then applied per process */
	struct mmap_events *me;
	struct mapped_ev *batch;
	size_t nr_batch, cap_batch;
	_Atomic uint64_t mapped_skipped; /* reported mappings not applied: batch full */
};

/* a reported mapping of one process, waiting to be applied */
struct mapped_ev {
	uint32_t pid;
	struct process_mapped m;
};

/* a poll's reported mappings at most; more wait for the next (counted) */
#define MAPPED_BATCH_MAX 4096

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

/* on the tracking thread, under mmap_events' lock: keep it for after the poll */
static void on_mmap(void *ctx, const struct mmap_event *ev)
{
	struct tracker *t = ctx;
	struct mapped_ev *grown;

	/* files only: anonymous code (a JIT's) names no file, nor does [vdso] */
	if (ev->path[0] != '/' || !tracker__wants(t, ev->pid))
		return;
	if (t->nr_batch == t->cap_batch) {
		size_t cap = t->cap_batch ? t->cap_batch * 2 : 64;

		grown = cap <= MAPPED_BATCH_MAX ? realloc(t->batch, cap * sizeof(*grown)) : NULL;
		if (!grown) {
			atomic_fetch_add_explicit(&t->mapped_skipped, 1, memory_order_relaxed);
			return;
		}
		t->batch = grown;
		t->cap_batch = cap;
	}
	t->batch[t->nr_batch++] = (struct mapped_ev){
		ev->pid, {.time_ns = ev->time_ns, .start = ev->start, .end = ev->start + ev->len}};
}

static int by_pid_then_time(const void *a, const void *b)
{
	const struct mapped_ev *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->m.time_ns < y->m.time_ns ? -1 : x->m.time_ns > y->m.time_ns;
}

/*
 * The mappings reported since the last poll, a process at a time: new
 * generations of its mappings at their times, then one read.  After the
 * lifecycle records: an exec or fork they follow is applied already.
 */
static void apply_mapped(struct tracker *t)
{
	struct process_mapped one[64];
	struct process_state *st;
	size_t i, j, n;

	t->nr_batch = 0;
	mmap_events__consume(t->me, on_mmap, t);
	qsort(t->batch, t->nr_batch, sizeof(*t->batch), by_pid_then_time);
	for (i = 0; i < t->nr_batch; i = j) {
		for (j = i, n = 0; j < t->nr_batch && t->batch[j].pid == t->batch[i].pid; j++)
			if (n < sizeof(one) / sizeof(one[0]))
				one[n++] = t->batch[j].m;
		st = process_states__get(t->o.states, t->reg, t->batch[i].pid);
		if (st)
			process_states__mapped(t->o.states, st, one, n);
	}
}

/* one epoll over the lifecycle ring and the mapping reports; -1 on failure */
static int wait_set(struct tracker *t)
{
	struct epoll_event e = {.events = EPOLLIN};
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return -1;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lifecycle__fd(t->lc), &e) ||
	    (t->me && epoll_ctl(ep, EPOLL_CTL_ADD, mmap_events__fd(t->me), &e))) {
		close(ep);
		return -1;
	}
	return ep;
}

static void *tracker_thread(void *arg)
{
	struct tracker *t = arg;
	struct epoll_event ev[2];
	uint64_t last_sweep = 0, now;
	int n, ep;

	thread_registry__register_thread();
	/* top -H and /proc/PID/task name what uses the CPU */
	pthread_setname_np(pthread_self(), "ctxprof-track");
	ep = wait_set(t);
	while (!atomic_load(&t->stop)) {
		atomic_fetch_add_explicit(&t->heartbeat, 1, memory_order_relaxed);
		/* without the set (no memory for an epoll): the ring alone, as before */
		if (ep >= 0 && epoll_wait(ep, ev, 2, POLL_MS) > 0)
			usleep(COALESCE_US);
		n = ep >= 0 ? lifecycle__consume(t->lc) : lifecycle__poll(t->lc, 20);
		if (n < 0 && n != -EINTR)
			break;
		if (t->me)
			apply_mapped(t);
		/* about once a second: let the traces of gone threads go */
		now = mono_ns();
		if (t->tw && now - last_sweep >= 1000000000ull) {
			trace_writer__sweep(t->tw);
			last_sweep = now;
		}
	}
	if (ep >= 0)
		close(ep);
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
	char why[160];
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
	/* without them a library swapped between two reads is named by mapping */
	t->me = mmap_events__new(0, why, sizeof(why));
	if (!t->me)
		fprintf(stderr,
			"ctxprof: no mapping events (%s): code mapped between two reads of a "
			"process's mappings is named by its mapping only\n",
			why);
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
	st->proc_reads = lc.proc_reads;
	st->exe_known = lc.exe_known;
	for (i = LIFECYCLE_STAT_DROP_FIRST; i <= LIFECYCLE_STAT_DROP_LAST; i++)
		st->dropped += bpf[i];
	st->retired = process_states__nr_retired(t->o.states);
	if (t->me) {
		struct mmap_events_stats ms;

		mmap_events__stats(t->me, &ms);
		st->mapping_events = ms.mmap2;
		st->mapping_events_lost = ms.lost + ms.malformed;
		st->mapping_events_gaps = ms.cpus_opened;
	}
	st->mapping_events_lost += atomic_load(&t->mapped_skipped);
	st->mapping_events_on = t->me != NULL;
}

int tracker__check_cpus(struct tracker *t, const bool *online, int n)
{
	return t->me ? mmap_events__check_cpus(t->me, online, n) : 0;
}

const struct perf_event_attr *tracker__mapping_attr(const struct tracker *t)
{
	return t->me ? mmap_events__attr(t->me) : NULL;
}

void tracker__set_mapping_opener(struct tracker *t, int (*fn)(void *ctx, int cpu), void *ctx)
{
	if (t->me)
		mmap_events__set_opener(t->me, fn, ctx);
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
	mmap_events__free(t->me);
	free(t->batch);
	free(t);
}
