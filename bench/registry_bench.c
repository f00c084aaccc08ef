// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * registry_bench - thread registry lookups while a writer churns threads.
 *
 * Lookups per second with 1 and 2 reader threads while a writer inserts and
 * removes 10k threads/s, for user/processes/thread_registry.c (RCU,
 * call_rcu reclamation) next to a pthread_rwlock registry written here over
 * the same kind of table, measured in the same run.  Then the writer alone,
 * unpaced, for the cost of an insert+remove, and how many retired objects
 * wait for their grace period.
 *
 * The rwlock registry runs twice: glibc's default rwlock prefers readers (two
 * busy readers can starve the writer), the writer-preferring kind keeps the
 * writer on time at the readers' expense.
 *
 * Readers are pinned one per CPU; every configuration runs REPEAT times,
 * round-robin with the others, and the median is printed (a 2-CPU VM is noisy).
 *
 * Usage: registry_bench [seconds per run, default 2] [only: rwlock | call_rcu |
 *        batched | reclaim]  (one family, e.g. to count its syscalls)
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "processes/thread_registry.h"

#define NR_LIVE		 10000 /* threads alive at any time */
#define TID_BASE	 1000
#define TID_RANGE	 (1u << 17) /* tids cycle through [TID_BASE, TID_BASE + TID_RANGE) */
#define THREADS_PER_PROC 4	    /* tid t belongs to process t & ~3 */
#define CHURN_RATE	 10000	    /* inserts (and removes) per second */
#define BATCH		 1024	    /* lookups between two looks at the clock */
#define REPEAT		 3	    /* runs per configuration; the median is printed */

static double run_seconds = 2;
static int nr_cpus = 1;
static const char *only; /* run one family of rows */

static bool wanted(const char *family)
{
	return !only || !strcmp(only, family);
}

/* the writer's sequence: thread number s has tid seq_tid(s); live: [lo, lo + NR_LIVE) */
static uint64_t live_lo;
static int stop;

static inline uint32_t seq_tid(uint64_t s)
{
	return TID_BASE + (uint32_t)(s % TID_RANGE);
}

static inline uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* a live tid, as a sampler would see: uniformly among the live threads */
static inline uint32_t pick_tid(uint64_t *seed)
{
	uint64_t lo = __atomic_load_n(&live_lo, __ATOMIC_RELAXED);

	/* multiply-shift, not %: a 64-bit division would cost more than a lookup */
	return seq_tid(lo + (((xorshift(seed) >> 32) * NR_LIVE) >> 32));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the baseline: the same table under a pthread_rwlock --------------- */

struct rw_proc {
	uint32_t pid;
	int refs;
	char exe[32];
};

struct rw_thread {
	uint32_t tid, pid, ppid;
	char comm[16];
	struct rw_proc *proc;
};

struct rw_registry {
	pthread_rwlock_t lock;
	struct rw_thread **table; /* flat, indexed by tid */
};

static struct rw_registry *rw_new(bool prefer_writer)
{
	struct rw_registry *r = calloc(1, sizeof(*r));
	pthread_rwlockattr_t attr;

	pthread_rwlockattr_init(&attr);
	if (prefer_writer)
		pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&r->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	r->table = calloc(TID_BASE + TID_RANGE, sizeof(*r->table));
	return r;
}

static void rw_insert(struct rw_registry *r, uint32_t tid)
{
	uint32_t pid = tid & ~(THREADS_PER_PROC - 1u);
	struct rw_thread *t = calloc(1, sizeof(*t));
	struct rw_proc *p;

	t->tid = tid;
	t->pid = pid;
	strcpy(t->comm, "bench");
	pthread_rwlock_wrlock(&r->lock);
	p = r->table[pid] && r->table[pid]->pid == pid ? r->table[pid]->proc : NULL;
	if (!p) {
		/* a non-leader's process may already hang off another thread */
		for (uint32_t i = pid; i < pid + THREADS_PER_PROC && !p; i++)
			if (r->table[i] && r->table[i]->pid == pid)
				p = r->table[i]->proc;
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		p->pid = pid;
		snprintf(p->exe, sizeof(p->exe), "/bin/p%u", pid);
	}
	p->refs++;
	t->proc = p;
	r->table[tid] = t;
	pthread_rwlock_unlock(&r->lock);
}

static void rw_remove(struct rw_registry *r, uint32_t tid)
{
	struct rw_thread *t;

	pthread_rwlock_wrlock(&r->lock);
	t = r->table[tid];
	r->table[tid] = NULL;
	if (t && !--t->proc->refs)
		free(t->proc);
	pthread_rwlock_unlock(&r->lock);
	/* no reader holds it: they all hold the lock while they look */
	free(t);
}

static void rw_free(struct rw_registry *r)
{
	uint32_t i;

	for (i = 0; i < TID_BASE + TID_RANGE; i++)
		if (r->table[i])
			rw_remove(r, i);
	free(r->table);
	pthread_rwlock_destroy(&r->lock);
	free(r);
}

/* ---- one measurement ----------------------------------------------------- */

enum impl { IMPL_RCU, IMPL_RCU_BATCHED, IMPL_RWLOCK, IMPL_RWLOCK_WPREF };

struct bench {
	enum impl impl;
	struct thread_registry *r;
	struct rw_registry *rw;
	int churn_rate; /* pairs per second; 0: as fast as possible */
};

struct reader {
	struct bench *b;
	pthread_t th;
	uint64_t lookups, hits, sum;
	double seconds;
};

static int touch(void *ctx, const struct thread_info *t)
{
	/* what a drain thread reads: the thread and its process */
	*(uint64_t *)ctx += t->pid + t->proc->pid;
	return 0;
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct bench *b = rd->b;
	const struct thread_info *t;
	uint64_t seed = (uintptr_t)arg | 1, n = 0, hits = 0, sum = 0;
	struct rw_thread *rt;
	double start;
	uint32_t tid;
	int i;

	if (!b->rw)
		thread_registry__register_thread();
	start = now();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		switch (b->impl) {
		case IMPL_RCU:
			for (i = 0; i < BATCH; i++)
				hits += !thread_registry__visit(b->r, pick_tid(&seed), touch, &sum);
			break;
		case IMPL_RCU_BATCHED:
			/* one read-side section around many lookups */
			thread_registry__read_lock();
			for (i = 0; i < BATCH; i++) {
				t = thread_registry__lookup(b->r, pick_tid(&seed));
				if (t) {
					hits++;
					sum += t->pid + t->proc->pid;
				}
			}
			thread_registry__read_unlock();
			break;
		case IMPL_RWLOCK:
		case IMPL_RWLOCK_WPREF:
			for (i = 0; i < BATCH; i++) {
				tid = pick_tid(&seed);
				pthread_rwlock_rdlock(&b->rw->lock);
				rt = b->rw->table[tid];
				if (rt) {
					hits++;
					sum += rt->pid + rt->proc->pid;
				}
				pthread_rwlock_unlock(&b->rw->lock);
			}
			break;
		}
		n += BATCH;
	}
	rd->seconds = now() - start;
	rd->lookups = n;
	rd->hits = hits;
	rd->sum = sum;
	if (!b->rw)
		thread_registry__unregister_thread();
	return NULL;
}

/* thread number @s starts at tick s + 10; its process is its leader's */
static void insert_seq(struct bench *b, uint64_t s)
{
	uint32_t tid = seq_tid(s), pid = tid & ~(THREADS_PER_PROC - 1u);
	struct thread_desc td = {.tid = tid, .pid = pid, .ppid = 1, .start = s + 10};
	struct process_desc pd = {
		.pid = pid,
		.ppid = 1,
		.start = (s & ~(uint64_t)(THREADS_PER_PROC - 1)) + 10,
		.exe = "/bin/bench",
	};

	if (b->rw) {
		rw_insert(b->rw, tid);
		return;
	}
	strcpy(td.comm, "bench");
	thread_registry__insert(b->r, &td, &pd, 0);
}

static void remove_seq(struct bench *b, uint64_t s)
{
	if (b->rw)
		rw_remove(b->rw, seq_tid(s));
	else
		thread_registry__remove(b->r, seq_tid(s), 0);
}

struct writer {
	struct bench *b;
	pthread_t th;
	uint64_t ops;	      /* insert+remove pairs */
	uint64_t max_backlog; /* retired, not yet reclaimed: the most seen */
	double seconds;	      /* wall time */
	double busy;	      /* time inside the ops, not sleeping */
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct bench *b = w->b;
	struct thread_registry_stats st;
	uint64_t hi = __atomic_load_n(&live_lo, __ATOMIC_RELAXED) + NR_LIVE;
	struct timespec next;
	double start = now(), t0;
	int i, per_ms = b->churn_rate / 1000;

	if (!b->rw)
		thread_registry__register_thread();
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		t0 = now();
		for (i = 0; i < (per_ms ? per_ms : 64); i++) {
			/* one thread is born, the oldest dies: NR_LIVE stay */
			insert_seq(b, hi);
			hi++;
			remove_seq(b, __atomic_load_n(&live_lo, __ATOMIC_RELAXED));
			__atomic_store_n(&live_lo, live_lo + 1, __ATOMIC_RELAXED);
			w->ops++;
		}
		w->busy += now() - t0;
		if (!b->rw && !(w->ops & 1023)) {
			thread_registry__stats(b->r, &st);
			if (st.retired - st.reclaimed > w->max_backlog)
				w->max_backlog = st.retired - st.reclaimed;
		}
		if (per_ms) {
			next.tv_nsec += 1000000;
			if (next.tv_nsec >= 1000000000) {
				next.tv_sec++;
				next.tv_nsec -= 1000000000;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		}
	}
	w->seconds = now() - start;
	if (!b->rw)
		thread_registry__unregister_thread();
	return NULL;
}

struct result {
	double lookups_per_s; /* all readers together */
	double ns_per_lookup; /* per reader: wall time / its lookups */
	double hit_rate;
	double writer_ops_per_s;
	double ns_per_write; /* writer time inside the ops per insert+remove */
	uint64_t max_backlog;
};

static struct result run(enum impl impl, int nr_readers, int churn_rate)
{
	struct thread_registry_opts opts = {0};
	struct bench b = {.impl = impl, .churn_rate = churn_rate};
	struct reader rd[2] = {{.b = &b}, {.b = &b}};
	struct writer w = {.b = &b};
	struct result res = {0};
	uint64_t s, lookups = 0, hits = 0;
	int i;

	if (impl == IMPL_RWLOCK || impl == IMPL_RWLOCK_WPREF)
		b.rw = rw_new(impl == IMPL_RWLOCK_WPREF);
	else
		b.r = thread_registry__new(&opts);
	__atomic_store_n(&live_lo, 0, __ATOMIC_RELAXED);
	for (s = 0; s < NR_LIVE; s++)
		insert_seq(&b, s);
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);

	pthread_create(&w.th, NULL, writer_main, &w);
	for (i = 0; i < nr_readers; i++) {
		cpu_set_t cpus;

		pthread_create(&rd[i].th, NULL, reader_main, &rd[i]);
		/* one reader per CPU: the scheduler's whims are not the lock's cost */
		CPU_ZERO(&cpus);
		CPU_SET(i % nr_cpus, &cpus);
		pthread_setaffinity_np(rd[i].th, sizeof(cpus), &cpus);
	}
	struct timespec ts = {(time_t)run_seconds,
			      (long)((run_seconds - (time_t)run_seconds) * 1e9)};
	nanosleep(&ts, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nr_readers; i++) {
		pthread_join(rd[i].th, NULL);
		lookups += rd[i].lookups;
		hits += rd[i].hits;
		res.lookups_per_s += rd[i].lookups / rd[i].seconds;
		res.ns_per_lookup += rd[i].seconds * 1e9 / rd[i].lookups / nr_readers;
	}
	pthread_join(w.th, NULL);
	res.hit_rate = lookups ? (double)hits / lookups : 0;
	res.writer_ops_per_s = w.ops / w.seconds;
	res.ns_per_write = w.busy * 1e9 / w.ops;
	res.max_backlog = w.max_backlog;

	if (b.rw)
		rw_free(b.rw);
	else
		thread_registry__free(b.r);
	return res;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the unpaced writer REPEAT times: median ns/op, largest backlog */
static void reclaim_run(const char *name, int nr_readers)
{
	double ns[REPEAT];
	uint64_t backlog = 0;
	struct result r;
	int i;

	for (i = 0; i < REPEAT; i++) {
		r = run(IMPL_RCU, nr_readers, 0);
		ns[i] = r.ns_per_write;
		if (r.max_backlog > backlog)
			backlog = r.max_backlog;
	}
	qsort(ns, REPEAT, sizeof(ns[0]), cmp_double);
	printf("%-16s %8d %10.0f %10.0f %10.0f %14llu\n", name, nr_readers, ns[0], ns[REPEAT / 2],
	       ns[REPEAT - 1], (unsigned long long)backlog);
}

/* the median of REPEAT results, field by field */
static struct result median(struct result *r)
{
	struct result m = {0};
	double v[REPEAT];
	size_t off, offs[] = {
			    offsetof(struct result, lookups_per_s),
			    offsetof(struct result, ns_per_lookup),
			    offsetof(struct result, hit_rate),
			    offsetof(struct result, writer_ops_per_s),
			    offsetof(struct result, ns_per_write),
		    };
	int i, f;

	for (f = 0; f < 5; f++) {
		off = offs[f];
		for (i = 0; i < REPEAT; i++)
			v[i] = *(double *)((char *)&r[i] + off);
		qsort(v, REPEAT, sizeof(v[0]), cmp_double);
		*(double *)((char *)&m + off) = v[REPEAT / 2];
	}
	for (i = 0; i < REPEAT; i++)
		if (r[i].max_backlog > m.max_backlog)
			m.max_backlog = r[i].max_backlog;
	return m;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		"pthread_rwlock (default)",
		"pthread_rwlock (writer pref)",
		"rcu visit (call_rcu)",
		"rcu, 1024 lookups/section",
	};
	static const char *const family[] = {"rwlock", "rwlock", "call_rcu", "batched"};
	static const enum impl impl[] = {IMPL_RWLOCK, IMPL_RWLOCK_WPREF, IMPL_RCU,
					 IMPL_RCU_BATCHED};
	struct result runs[2][4][REPEAT], res[2][4], *rw, *rww, *rcu, *floor_;
	int n, m, k;

	if (argc > 1)
		run_seconds = atof(argv[1]);
	if (argc > 2)
		only = argv[2];
	if (run_seconds <= 0)
		run_seconds = 2;
	nr_cpus = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	thread_registry__register_thread();

	printf("registry_bench: %d live threads, writer %d inserts + %d removes/s, %.1f s per run,"
	       " median of %d, %d CPUs\n",
	       NR_LIVE, CHURN_RATE, CHURN_RATE, run_seconds, REPEAT, nr_cpus);
	memset(runs, 0, sizeof(runs));
	memset(res, 0, sizeof(res));
	for (k = 0; k < REPEAT; k++)
		for (n = 1; n <= 2; n++)
			for (m = 0; m < 4; m++)
				if (wanted(family[m]))
					runs[n - 1][m][k] = run(impl[m], n, CHURN_RATE);
	printf("%-28s %7s %12s %10s %6s %12s %14s\n", "registry", "readers", "lookups/s",
	       "ns/lookup", "hits", "writer ops/s", "writer ns/op");
	for (n = 1; n <= 2; n++)
		for (m = 0; m < 4; m++) {
			if (!wanted(family[m]))
				continue;
			res[n - 1][m] = median(runs[n - 1][m]);
			printf("%-28s %7d %12.0f %10.2f %5.1f%% %12.0f %14.0f\n", names[m], n,
			       res[n - 1][m].lookups_per_s, res[n - 1][m].ns_per_lookup,
			       res[n - 1][m].hit_rate * 100, res[n - 1][m].writer_ops_per_s,
			       res[n - 1][m].ns_per_write);
		}
	printf("\n");
	for (n = 1; n <= 2 && !only; n++) {
		rw = &res[n - 1][0];
		rww = &res[n - 1][1];
		rcu = &res[n - 1][2];
		floor_ = &res[n - 1][3];
		printf("%d reader%s: rcu/rwlock lookups %.1fx (default rwlock), %.1fx (writer "
		       "pref)\n",
		       n, n > 1 ? "s" : " ", rcu->lookups_per_s / rw->lookups_per_s,
		       rcu->lookups_per_s / rww->lookups_per_s);
		/* what the lock costs beyond the lookup itself (the batched row
		 * pays one read-side section per 1024 lookups: the floor) */
		printf("          synchronization per lookup over the %.2f ns floor: rcu %.2f ns, "
		       "rwlock %.2f ns, writer pref %.2f ns\n",
		       floor_->ns_per_lookup, rcu->ns_per_lookup - floor_->ns_per_lookup,
		       rw->ns_per_lookup - floor_->ns_per_lookup,
		       rww->ns_per_lookup - floor_->ns_per_lookup);
	}

	/* reclamation: the writer unpaced, alone and against 2 readers */
	if (only && strcmp(only, "reclaim"))
		goto out;
	printf("\nreclamation, writer unpaced, %d runs: ns per op (insert + remove of a thread;\n"
	       "every 4th op also retires a process and its image), largest backlog of retired\n"
	       "objects waiting for their grace period\n",
	       REPEAT);
	printf("%-16s %8s %10s %10s %10s %14s\n", "reclamation", "readers", "min", "median", "max",
	       "max backlog");
	for (n = 0; n <= 2; n += 2)
		reclaim_run("call_rcu", n);
out:
	thread_registry__unregister_thread();
	return 0;
}
