// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stress_thread_registry - two readers (lookups, iteration, children walks,
 * maps slot installs) against a writer churning inserts, removes, renames,
 * execs and whole-process exits with re-parenting, first with call_rcu
 * reclamation, then with the dedicated reclaim thread.
 *
 * Built twice by tests/unit/registry.mk: under ThreadSanitizer (with the
 * liburcu-only suppressions of tests/unit/tsan.supp compiled in) and under
 * ASan+UBSan (use-after-free of a reclaimed entry, leaks at the end).
 * Exit 0 and one result line on success; non-zero on any inconsistency.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "processes/thread_registry.h"

#ifdef TSAN_SUPPRESSIONS_H
#include TSAN_SUPPRESSIONS_H
/* the suppressions travel in the binary: tests/run.sh sets no TSAN_OPTIONS */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
	return TSAN_SUPPRESSIONS;
}
#endif

#define PHASE_SECONDS  3
#define NR_READERS     2
#define STABLE_BASE    1000 /* 32 single-thread processes that never change */
#define NR_STABLE      32
#define CHURN_BASE     2000 /* processes at CHURN_BASE + 4k, threads pid .. pid + 3 */
#define NR_CHURN_PROCS 1024
#define CHURN_END      (CHURN_BASE + 4 * NR_CHURN_PROCS)
#define MAPS_MAGIC     0x6d617073u

struct maps {
	uint32_t magic;
	uint32_t pid;
};

static struct thread_registry *reg;
static int stop;
static int errors;
static uint64_t maps_installed, state_freed;

#define fail(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "stress_thread_registry: " __VA_ARGS__);                           \
		fputc('\n', stderr);                                                               \
		__atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);                                  \
	} while (0)

static void state_free(void *ctx, void *p)
{
	struct maps *m = p;

	if (m->magic != MAPS_MAGIC)
		fail("maps freed twice or corrupt");
	m->magic = 0;
	free(m);
	__atomic_fetch_add(&state_freed, 1, __ATOMIC_RELAXED);
}

static uint32_t expected_pid(uint32_t tid)
{
	if (tid >= CHURN_BASE && tid < CHURN_END)
		return CHURN_BASE + ((tid - CHURN_BASE) & ~3u);
	return tid;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* everything a reader may look at must be whole and match its key */
static void check_process(const struct process_info *p)
{
	const struct process_image *img = process_info__image(p);
	const struct maps *m;
	char want[32];

	if (!img) {
		fail("process %u without image", p->pid);
		return;
	}
	snprintf(want, sizeof(want), "/bin/p%u", p->pid);
	if (strncmp(img->exe, want, strlen(want)) || strlen(img->comm) >= sizeof(img->comm))
		fail("process %u: image exe '%s'", p->pid, img->exe);
	m = process_image__state(img);
	if (m && (m->magic != MAPS_MAGIC || m->pid != p->pid))
		fail("process %u: bad maps", p->pid);
}

static int check_thread(void *ctx, const struct thread_info *t)
{
	uint32_t *want_tid = ctx;

	if (want_tid && t->tid != *want_tid)
		fail("lookup %u returned tid %u", *want_tid, t->tid);
	if (t->pid != expected_pid(t->tid) || t->proc->pid != t->pid)
		fail("thread %u: pid %u, process %u", t->tid, t->pid, t->proc->pid);
	if (t->comm[0] != 'w' && t->comm[0] != 'r' && t->comm[0] != 'x' && t->comm[0] != 's')
		fail("thread %u: comm '%.16s'", t->tid, t->comm);
	check_process(t->proc);
	return 0;
}

static int install_maps(void *ctx, const struct thread_info *t)
{
	const struct process_image *img = process_info__image(t->proc);
	struct maps *m;

	if (process_image__state(img))
		return 0;
	m = malloc(sizeof(*m));
	m->magic = MAPS_MAGIC;
	m->pid = t->pid;
	if (process_image__set_state(img, m))
		__atomic_fetch_add(&maps_installed, 1, __ATOMIC_RELAXED);
	else
		free(m);
	return 0;
}

struct pass {
	uint8_t stable[NR_STABLE];
};

static int count_stable(void *ctx, const struct thread_info *t)
{
	struct pass *p = ctx;

	check_thread(NULL, t);
	if (t->tid >= STABLE_BASE && t->tid < STABLE_BASE + NR_STABLE)
		p->stable[t->tid - STABLE_BASE]++;
	return 0;
}

static int check_child(void *ctx, const struct process_info *c)
{
	bool stable = c->pid >= STABLE_BASE && c->pid < STABLE_BASE + NR_STABLE;

	if (!stable && (c->pid < CHURN_BASE || c->pid >= CHURN_END || (c->pid - CHURN_BASE) % 4))
		fail("child pid %u out of place", c->pid);
	check_process(c);
	return 0;
}

struct reader_stats {
	uint64_t lookups, hits, passes, child_walks;
};

static void *reader_main(void *arg)
{
	struct reader_stats *rs = arg;
	uint64_t seed = (uintptr_t)arg | 1;
	struct pass p;
	uint32_t tid;
	int i;

	thread_registry__register_thread();
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < 1000; i++) {
			tid = CHURN_BASE + xorshift(&seed) % (CHURN_END - CHURN_BASE);
			rs->lookups++;
			if (thread_registry__visit(reg, tid, i % 8 ? check_thread : install_maps,
						   &tid) != -ENOENT)
				rs->hits++;
		}
		/* a whole walk while the writer runs: stable threads once each */
		memset(&p, 0, sizeof(p));
		thread_registry__for_each_thread(reg, count_stable, &p);
		for (i = 0; i < NR_STABLE; i++)
			if (p.stable[i] != 1)
				fail("stable thread %d seen %d times in one walk", STABLE_BASE + i,
				     p.stable[i]);
		rs->passes++;
		thread_registry__for_each_child(reg, 1, check_child, NULL);
		thread_registry__for_each_child(reg,
						CHURN_BASE + 4 * (xorshift(&seed) % NR_CHURN_PROCS),
						check_child, NULL);
		rs->child_walks += 2;
	}
	thread_registry__unregister_thread();
	return NULL;
}

/* ---- the writer ---------------------------------------------------------- */

struct churn_proc {
	uint64_t start;	    /* incarnation of the live process, 0: none */
	uint64_t tstart[4]; /* incarnation of each live thread, 0: none */
};

static struct churn_proc procs[NR_CHURN_PROCS];
static uint64_t next_start = 10;
static uint64_t nr_lost_exits;

static void make_desc(uint32_t pid, uint32_t ppid, uint64_t start, struct process_desc *pd,
		      char *exe, size_t exe_len)
{
	snprintf(exe, exe_len, "/bin/p%u", pid);
	*pd = (struct process_desc){
		.pid = pid, .ppid = ppid, .start = start, .exe = exe, .cgroup = "/stress"};
}

static uint64_t churn_op(uint64_t *seed)
{
	uint32_t k = xorshift(seed) % NR_CHURN_PROCS, pid = CHURN_BASE + 4 * k, ppid;
	struct churn_proc *cp = &procs[k];
	struct process_desc pd;
	struct thread_desc td;
	struct exec_desc ed;
	char exe[32];
	int i, err = 0, op = xorshift(seed) % 16;

	if (!cp->start) {
		/* fork: a child of init or of another live churn process */
		uint32_t pk = xorshift(seed) % NR_CHURN_PROCS;

		ppid = procs[pk].start && pk != k ? CHURN_BASE + 4 * pk : 1;
		cp->start = next_start++;
		make_desc(pid, ppid, cp->start, &pd, exe, sizeof(exe));
		td = (struct thread_desc){.tid = pid, .pid = pid, .ppid = ppid, .start = cp->start};
		strcpy(td.comm, "w-lead");
		err = thread_registry__insert(reg, &td, &pd, 0);
		cp->tstart[0] = cp->start;
		if (err)
			fail("fork %u: %d", pid, err);
		return 1;
	}
	i = xorshift(seed) % 4;
	if (op < 6) { /* thread create or exit */
		td = (struct thread_desc){.tid = pid + i, .pid = pid, .ptid = pid};
		if (!cp->tstart[i] && i == 0) {
			/* a dead leader's pid stays taken while its process lives */
		} else if (!cp->tstart[i]) {
			td.start = cp->tstart[i] = next_start++;
			strcpy(td.comm, "w-thread");
			make_desc(pid, 1, cp->start, &pd, exe, sizeof(exe));
			err = thread_registry__insert(reg, &td, &pd, 0);
		} else {
			err = thread_registry__remove(reg, pid + i, cp->tstart[i]);
			cp->tstart[i] = 0;
			if (!cp->tstart[0] && !cp->tstart[1] && !cp->tstart[2] && !cp->tstart[3])
				cp->start = 0; /* the last thread took the process */
		}
	} else if (op < 11) { /* rename */
		if (cp->tstart[i])
			err = thread_registry__rename(reg, pid + i, cp->tstart[i],
						      op & 1 ? "r-renamed" : "w-back");
	} else if (op < 13) { /* exec, from any thread */
		if (cp->tstart[i]) {
			ed = (struct exec_desc){.tid = pid, .old_tid = pid + i};
			make_desc(pid, 1, cp->start, &ed.pd, exe, sizeof(exe));
			strcpy(ed.pd.comm, "x-exec");
			err = thread_registry__exec(reg, &ed);
			/* the exec'ing thread took the leader's incarnation */
			memset(cp->tstart, 0, sizeof(cp->tstart));
			cp->tstart[0] = cp->start;
		}
	} else if (op == 15) {
		/*
		 * Its exit was lost: a new incarnation of the pid forks.  The
		 * registry kills the old one (process_kill()), every thread of it.
		 */
		cp->start = next_start++;
		make_desc(pid, 1, cp->start, &pd, exe, sizeof(exe));
		td = (struct thread_desc){.tid = pid, .pid = pid, .ppid = 1, .start = cp->start};
		strcpy(td.comm, "w-again");
		err = thread_registry__insert(reg, &td, &pd, 0);
		memset(cp->tstart, 0, sizeof(cp->tstart));
		cp->tstart[0] = cp->start;
		nr_lost_exits++;
	} else { /* the whole process exits, children re-parented */
		for (i = 0; i < 4; i++) {
			if (cp->tstart[i] && thread_registry__remove(reg, pid + i, cp->tstart[i]))
				fail("exit of %u failed", pid + i);
			cp->tstart[i] = 0;
		}
		cp->start = 0;
	}
	if (err)
		fail("op %d on %u: %d", op, pid + i, err);
	return 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int phase(const char *name)
{
	struct thread_registry_opts opts = {.state_free = state_free};
	struct reader_stats rs[NR_READERS] = {0};
	struct thread_registry_stats st;
	pthread_t readers[NR_READERS];
	struct process_desc pd;
	struct thread_desc td;
	uint64_t ops = 0, seed = 0x9e3779b97f4a7c15ull;
	char exe[32];
	double end;
	int i;

	reg = thread_registry__new(&opts);
	if (!reg)
		return 1;
	memset(procs, 0, sizeof(procs));
	nr_lost_exits = 0;
	__atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
	td = (struct thread_desc){.tid = 1, .pid = 1, .start = 1};
	strcpy(td.comm, "s-init");
	make_desc(1, 0, 1, &pd, exe, sizeof(exe));
	thread_registry__insert(reg, &td, &pd, 0);
	for (i = 0; i < NR_STABLE; i++) {
		td = (struct thread_desc){
			.tid = STABLE_BASE + i, .pid = STABLE_BASE + i, .start = 2};
		strcpy(td.comm, "s-stable");
		make_desc(STABLE_BASE + i, 1, 2, &pd, exe, sizeof(exe));
		if (thread_registry__insert(reg, &td, &pd, 0))
			fail("stable insert");
	}
	for (i = 0; i < NR_READERS; i++)
		pthread_create(&readers[i], NULL, reader_main, &rs[i]);
	end = now() + PHASE_SECONDS;
	while (now() < end && !__atomic_load_n(&errors, __ATOMIC_RELAXED))
		for (i = 0; i < 256; i++)
			ops += churn_op(&seed);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NR_READERS; i++)
		pthread_join(readers[i], NULL);

	thread_registry__barrier(reg);
	thread_registry__stats(reg, &st);
	if (st.retired != st.reclaimed)
		fail("%s: %llu retired, %llu reclaimed after the barrier", name,
		     (unsigned long long)st.retired, (unsigned long long)st.reclaimed);
	printf("  %s: %llu writer ops (%llu reparented, %llu lost exits, %llu superseded), "
	       "%llu+%llu lookups, %llu+%llu walks, %llu reclaimed\n",
	       name, (unsigned long long)ops, (unsigned long long)st.reparented,
	       (unsigned long long)nr_lost_exits, (unsigned long long)st.superseded,
	       (unsigned long long)rs[0].lookups, (unsigned long long)rs[1].lookups,
	       (unsigned long long)rs[0].passes, (unsigned long long)rs[1].passes,
	       (unsigned long long)st.reclaimed);
	if (!rs[0].passes || !rs[1].passes || !st.reparented)
		fail("%s: a thread made no progress, or nothing was re-parented", name);
	/* each lost exit superseded the old leader thread at least */
	if (st.superseded < nr_lost_exits)
		fail("%s: %llu lost exits, %llu superseded", name,
		     (unsigned long long)nr_lost_exits, (unsigned long long)st.superseded);
	thread_registry__free(reg);
	/* every maps object installed was freed exactly once */
	if (maps_installed != state_freed)
		fail("%s: %llu maps installed, %llu freed", name,
		     (unsigned long long)maps_installed, (unsigned long long)state_freed);
	return 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	thread_registry__register_thread();
	phase("call_rcu");
	thread_registry__unregister_thread();
	if (errors) {
		printf("stress_thread_registry: FAIL: %d inconsistencies\n", errors);
		return 1;
	}
	printf("stress_thread_registry: OK\n");
	return 0;
}
