// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/processes/thread_registry.c */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"
#include "processes/thread_registry.h"

static int state_freed;

static void count_state_free(void *ctx, void *maps)
{
	__atomic_fetch_add(&state_freed, 1, __ATOMIC_RELAXED);
	free(maps);
}

static const struct thread_registry_opts counting_opts = {
	.state_free = count_state_free,
};

/* a second registry, for a test that needs it (the thread is registered) */
static struct thread_registry *new_registry(void)
{
	struct thread_registry *r = thread_registry__new(&counting_opts);

	assert_non_null(r);
	return r;
}

static int setup(void **state)
{
	state_freed = 0;
	*state = fixture_registry_new(&counting_opts);
	return 0;
}

static struct thread_desc tdesc(uint32_t tid, uint32_t pid, uint64_t start, const char *comm)
{
	struct thread_desc td = {.tid = tid, .pid = pid, .ppid = 1, .start = start};

	snprintf(td.comm, sizeof(td.comm), "%s", comm);
	return td;
}

static struct process_desc pdesc(uint32_t pid, uint32_t ppid, uint64_t start, const char *exe,
				 const char *cgroup)
{
	struct process_desc pd = {
		.pid = pid, .ppid = ppid, .start = start, .exe = exe, .cgroup = cgroup};

	return pd;
}

/* insert a thread, creating its process as the child of @ppid */
static int add(struct thread_registry *r, uint32_t tid, uint32_t pid, uint32_t ppid, uint64_t start,
	       const char *comm, unsigned int flags)
{
	struct thread_desc td = tdesc(tid, pid, start, comm);
	struct process_desc pd = pdesc(pid, ppid, start, "/bin/x", "/");

	td.ppid = ppid;
	return thread_registry__insert(r, &td, &pd, flags);
}

static int count_thread(void *ctx, const struct thread_info *t)
{
	(*(int *)ctx)++;
	return 0;
}

static int count_process(void *ctx, const struct process_info *p)
{
	(*(int *)ctx)++;
	return 0;
}

static int nr_threads(struct thread_registry *r)
{
	int n = 0;

	thread_registry__for_each_thread(r, count_thread, &n);
	return n;
}

/* pids of @pid's children, as a bit set over small pids */
static int child_bits(void *ctx, const struct process_info *p)
{
	if (p->pid < 64)
		*(uint64_t *)ctx |= 1ull << p->pid;
	return 0;
}

static uint64_t children_of(struct thread_registry *r, uint32_t pid)
{
	uint64_t bits = 0;

	thread_registry__for_each_child(r, pid, child_bits, &bits);
	return bits;
}

static void thread_registry__insert__new_process__lookup_finds_thread_and_process(void **state)
{
	struct thread_registry *r = *state;
	struct thread_desc td = tdesc(100, 100, 5, "main");
	struct process_desc pd =
		pdesc(100, 1, 5, "/usr/bin/app",
		      "/system.slice/docker-"
		      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		      ".scope");
	struct fixture_thread s;

	strcpy(pd.comm, "app");
	assert_int_equal(thread_registry__insert(r, &td, &pd, 0), 0);
	s = fixture_look(r, 100);
	assert_true(s.found);
	assert_int_equal(s.t.tid, 100);
	assert_int_equal(s.t.pid, 100);
	assert_int_equal(s.t.ppid, 1);
	assert_string_equal(s.t.comm, "main");
	assert_int_equal(s.p.pid, 100);
	assert_string_equal(s.img.comm, "app");
	assert_string_equal(s.exe, "/usr/bin/app");
	assert_string_equal(s.img.container_id,
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_false(fixture_look(r, 101).found);

	thread_registry__read_lock();
	assert_non_null(thread_registry__lookup_process(r, 100));
	assert_null(thread_registry__lookup_process(r, 101));
	thread_registry__read_unlock();
}

static void thread_registry__insert__same_incarnation_twice__eexist_one_entry(void **state)
{
	struct thread_registry *r = *state;
	struct thread_registry_stats st;

	assert_int_equal(add(r, 200, 200, 1, 7, "a", 0), 0);
	/* the fork event after the scan found the child, and the reverse */
	assert_int_equal(add(r, 200, 200, 1, 7, "a", 0), -EEXIST);
	assert_int_equal(add(r, 200, 200, 1, 7, "a", THREAD_REGISTRY_F_SCAN), -EEXIST);
	assert_int_equal(nr_threads(r), 1);
	thread_registry__stats(r, &st);
	assert_int_equal(st.duplicates, 2);
	assert_int_equal(st.nr_threads, 1);
	assert_int_equal(st.nr_processes, 1);
}

static void thread_registry__insert__ids_out_of_range__erange(void **state)
{
	struct thread_registry_opts opts = {.max_tid = 1024};
	struct thread_registry *r = *state, *small;
	struct thread_registry_stats st;

	assert_int_equal(add(r, 0, 0, 1, 1, "zero", 0), -ERANGE);
	assert_int_equal(add(r, THREAD_REGISTRY_MAX_TID, THREAD_REGISTRY_MAX_TID, 1, 1, "big", 0),
			 -ERANGE);
	assert_int_equal(
		add(r, THREAD_REGISTRY_MAX_TID - 1, THREAD_REGISTRY_MAX_TID - 1, 1, 1, "last", 0),
		0);
	assert_int_equal(thread_registry__remove(r, THREAD_REGISTRY_MAX_TID + 5, 0), -ERANGE);
	assert_int_equal(thread_registry__rename(r, 0, 0, "x"), -ERANGE);

	small = thread_registry__new(&opts);
	assert_non_null(small);
	assert_int_equal(add(small, 1024, 1024, 1, 1, "over", 0), -ERANGE);
	assert_int_equal(add(small, 1023, 1023, 1, 1, "under", 0), 0);
	thread_registry__stats(small, &st);
	assert_int_equal(st.out_of_range, 1);
	assert_int_equal(st.nr_chunks, 1);
	thread_registry__free(small);
}

static void thread_registry__insert__thread_of_known_process__shares_it(void **state)
{
	struct thread_registry *r = *state;
	struct thread_desc td = tdesc(301, 300, 12, "worker");
	int n = 0;
	struct fixture_thread a, b;

	assert_int_equal(add(r, 300, 300, 1, 10, "main", 0), 0);
	/* a clone(CLONE_THREAD) event carries no process description */
	td.ptid = 300;
	assert_int_equal(thread_registry__insert(r, &td, NULL, 0), 0);
	a = fixture_look(r, 300);
	b = fixture_look(r, 301);
	assert_int_equal(b.t.pid, 300);
	assert_int_equal(b.t.ptid, 300);
	assert_string_equal(b.t.comm, "worker");
	assert_true(a.p.start == b.p.start);
	assert_int_equal(thread_registry__for_each_group_thread(r, 300, count_thread, &n), 0);
	assert_int_equal(n, 2);
	/* a thread of an unknown process needs its description */
	td = tdesc(401, 400, 3, "lost");
	assert_int_equal(thread_registry__insert(r, &td, NULL, 0), -EINVAL);
}

static void thread_registry__insert__older_incarnation_in_slot__replaced(void **state)
{
	struct thread_registry *r = *state;
	struct thread_registry_stats st;

	assert_int_equal(add(r, 500, 500, 1, 10, "old", 0), 0);
	/* the exit of the first was lost; pid 500 came around again */
	assert_int_equal(add(r, 500, 500, 1, 90, "new", 0), 0);
	assert_string_equal(fixture_look(r, 500).t.comm, "new");
	assert_true(fixture_look(r, 500).t.start == 90);
	/* and the late news about the old one changes nothing */
	assert_int_equal(add(r, 500, 500, 1, 10, "old", THREAD_REGISTRY_F_SCAN), -ESTALE);
	assert_int_equal(thread_registry__remove(r, 500, 10), -ESTALE);
	assert_string_equal(fixture_look(r, 500).t.comm, "new");
	thread_registry__stats(r, &st);
	assert_int_equal(st.superseded, 1);
	assert_int_equal(st.nr_processes, 1);
	assert_int_equal(nr_threads(r), 1);
}

static void thread_registry__insert__scan_after_exit_same_incarnation__rejected(void **state)
{
	struct thread_registry *r = *state;

	/* the scan read 600 alive; its exit event got applied first */
	assert_int_equal(add(r, 600, 600, 1, 44, "gone", 0), 0);
	assert_int_equal(thread_registry__remove(r, 600, 44), 0);
	assert_int_equal(add(r, 600, 600, 1, 44, "gone", THREAD_REGISTRY_F_SCAN), -ESTALE);
	assert_false(fixture_look(r, 600).found);
	/* the same with the thread never seen before its exit */
	assert_int_equal(thread_registry__remove(r, 601, 45), -ENOENT);
	assert_int_equal(add(r, 601, 601, 1, 45, "ghost", THREAD_REGISTRY_F_SCAN), -ESTALE);
	assert_false(fixture_look(r, 601).found);
	/* a later incarnation of the same tid is a different thread */
	assert_int_equal(add(r, 601, 601, 1, 46, "reborn", THREAD_REGISTRY_F_SCAN), 0);
	assert_true(fixture_look(r, 601).found);
	/* events are not observed state: a fork after a tombstone inserts */
	assert_int_equal(thread_registry__remove(r, 602, 50), -ENOENT);
	assert_int_equal(add(r, 602, 602, 1, 50, "event", 0), 0);
}

static void thread_registry__remove__leader_with_live_threads__process_kept(void **state)
{
	struct thread_registry *r = *state;
	struct thread_desc td = tdesc(701, 700, 21, "t1");
	struct process_desc pd = pdesc(700, 1, 20, NULL, NULL);
	int n = 0;

	assert_int_equal(add(r, 700, 700, 1, 20, "lead", 0), 0);
	assert_int_equal(thread_registry__insert(r, &td, NULL, 0), 0);
	assert_int_equal(thread_registry__remove(r, 700, 20), 0);
	assert_false(fixture_look(r, 700).found);
	/* the pid still finds its process, like the kernel's zombie leader */
	assert_int_equal(thread_registry__for_each_group_thread(r, 700, count_thread, &n), 0);
	assert_int_equal(n, 1);
	/* the scan read the leader alive: it stays dead */
	td = tdesc(700, 700, 20, "lead");
	assert_int_equal(thread_registry__insert(r, &td, &pd, THREAD_REGISTRY_F_SCAN), -ESTALE);
	/* the last thread takes the process */
	assert_int_equal(thread_registry__remove(r, 701, 21), 0);
	assert_int_equal(thread_registry__for_each_group_thread(r, 700, count_thread, &n), -ENOENT);
	n = 0;
	thread_registry__for_each_process(r, count_process, &n);
	assert_int_equal(n, 0);
}

static void thread_registry__insert__scan_non_leader_first__leader_joins(void **state)
{
	struct thread_registry *r = *state;
	struct thread_desc t1 = tdesc(801, 800, 31, "t1"), lead = tdesc(800, 800, 30, "lead");
	struct process_desc pd = pdesc(800, 1, 30, "/bin/p", "/");
	int n = 0;

	assert_int_equal(thread_registry__insert(r, &t1, &pd, THREAD_REGISTRY_F_SCAN), 0);
	assert_int_equal(thread_registry__insert(r, &lead, &pd, THREAD_REGISTRY_F_SCAN), 0);
	assert_int_equal(thread_registry__for_each_group_thread(r, 800, count_thread, &n), 0);
	assert_int_equal(n, 2);
	n = 0;
	thread_registry__for_each_process(r, count_process, &n);
	assert_int_equal(n, 1);
	assert_int_equal(fixture_look(r, 800).p.start, 30);
}

static void thread_registry__remove__last_known_thread_not_leader__leader_scannable(void **state)
{
	struct thread_registry *r = *state;
	struct thread_desc worker = tdesc(851, 850, 52, "worker"),
			   lead = tdesc(850, 850, 50, "lead");
	struct process_desc pd = pdesc(850, 1, 50, "/bin/bench", "/");

	/* a process older than the ring: a worker's events come before the
	 * scan reaches its leader, and the worker is gone by then */
	assert_int_equal(thread_registry__insert(r, &worker, &pd, 0), 0);
	assert_int_equal(thread_registry__remove(r, 851, 52), 0);
	/* the leader never exited: the scan must still insert it */
	assert_int_equal(thread_registry__insert(r, &lead, &pd, THREAD_REGISTRY_F_SCAN), 0);
	assert_string_equal(fixture_look(r, 850).t.comm, "lead");
}

static void thread_registry__rename__live_thread__replaced_old_reclaimed(void **state)
{
	struct thread_registry *r = *state;
	struct thread_registry_stats st;
	const struct thread_info *old;

	assert_int_equal(add(r, 900, 900, 1, 3, "before", 0), 0);
	thread_registry__read_lock();
	old = thread_registry__lookup(r, 900);
	assert_int_equal(thread_registry__rename(r, 900, 3, "after"), 0);
	/* the reader's copy stays whole until it leaves */
	assert_string_equal(old->comm, "before");
	assert_string_equal(thread_registry__lookup(r, 900)->comm, "after");
	thread_registry__read_unlock();
	assert_int_equal(thread_registry__rename(r, 900, 4, "wrong"), -ESTALE);
	assert_int_equal(thread_registry__rename(r, 901, 0, "none"), -ENOENT);
	thread_registry__barrier(r);
	thread_registry__stats(r, &st);
	assert_int_equal(st.renamed, 1);
	assert_int_equal(st.retired, 1);
	assert_int_equal(st.reclaimed, 1);
	assert_int_equal(nr_threads(r), 1);
}

static int set_maps(void *ctx, const struct thread_info *t)
{
	return process_image__set_state(process_info__image(t->proc), ctx) ? 0 : 1;
}

static void thread_registry__exec__leader__new_image_old_state_freed(void **state)
{
	struct thread_registry *r = *state;
	struct exec_desc ed = {.tid = 1000, .old_tid = 1000};
	void *spare = malloc(8);
	struct fixture_thread s;

	assert_int_equal(add(r, 1000, 1000, 1, 8, "sh", 0), 0);
	assert_int_equal(thread_registry__visit(r, 1000, set_maps, malloc(8)), 0);
	/* the slot is taken: the caller keeps its copy */
	assert_int_equal(thread_registry__visit(r, 1000, set_maps, spare), 1);
	free(spare);

	ed.pd = pdesc(1000, 1, 8, "/usr/bin/true", NULL);
	strcpy(ed.pd.comm, "true");
	assert_int_equal(thread_registry__exec(r, &ed), 0);
	s = fixture_look(r, 1000);
	assert_string_equal(s.t.comm, "true");
	assert_string_equal(s.img.comm, "true");
	assert_string_equal(s.exe, "/usr/bin/true");
	thread_registry__barrier(r);
	assert_int_equal(state_freed, 1);
}

static void thread_registry__exec__non_leader__takes_over_the_pid(void **state)
{
	struct thread_registry *r = *state;
	struct thread_desc td;
	struct exec_desc ed = {.tid = 1100, .old_tid = 1102};
	int n = 0;

	assert_int_equal(add(r, 1100, 1100, 1, 8, "java", 0), 0);
	td = tdesc(1101, 1100, 9, "gc");
	assert_int_equal(thread_registry__insert(r, &td, NULL, 0), 0);
	td = tdesc(1102, 1100, 9, "worker");
	assert_int_equal(thread_registry__insert(r, &td, NULL, 0), 0);
	/* de_thread(): the leader's exit comes first, 1101's exit was lost */
	assert_int_equal(thread_registry__remove(r, 1100, 8), 0);

	ed.pd = pdesc(1100, 1, 8, "/bin/ls", NULL);
	strcpy(ed.pd.comm, "ls");
	assert_int_equal(thread_registry__exec(r, &ed), 0);
	assert_string_equal(fixture_look(r, 1100).t.comm, "ls");
	assert_false(fixture_look(r, 1101).found);
	assert_false(fixture_look(r, 1102).found);
	assert_int_equal(thread_registry__for_each_group_thread(r, 1100, count_thread, &n), 0);
	assert_int_equal(n, 1);
}

static void thread_registry__exec__unknown_process__created(void **state)
{
	struct thread_registry *r = *state;
	struct exec_desc ed = {.tid = 1200, .old_tid = 1200};

	ed.pd = pdesc(1200, 1, 70, NULL,
		      "/kubepods/pod1/"
		      "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
	strcpy(ed.pd.comm, "new");
	assert_int_equal(thread_registry__exec(r, &ed), 0);
	assert_string_equal(fixture_look(r, 1200).exe, "");
	assert_string_equal(fixture_look(r, 1200).img.container_id,
			    "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
}

static void thread_registry__insert__fork__inherits_parent_image(void **state)
{
	struct thread_registry *r = *state;
	struct thread_desc td = tdesc(1301, 1301, 41, "child");
	struct process_desc pd = pdesc(1301, 1300, 41, NULL, NULL);

	assert_int_equal(add(r, 1300, 1300, 1, 40, "parent", 0), 0);
	assert_int_equal(thread_registry__insert(r, &td, &pd, 0), 0);
	assert_string_equal(fixture_look(r, 1301).exe, "/bin/x");
	assert_int_equal(fixture_look(r, 1301).p.ppid, 1300);
}

static void thread_registry__remove__parent_exits__children_go_to_init(void **state)
{
	struct thread_registry *r = *state;
	struct thread_registry_stats st;

	assert_int_equal(add(r, 1, 1, 0, 1, "init", 0), 0);
	assert_int_equal(add(r, 10, 10, 1, 2, "shell", 0), 0);
	assert_int_equal(add(r, 11, 11, 10, 3, "a", 0), 0);
	assert_int_equal(add(r, 12, 12, 10, 4, "b", 0), 0);
	assert_int_equal(add(r, 13, 13, 11, 5, "grandchild", 0), 0);
	assert_true(children_of(r, 1) == 1ull << 10);
	assert_true(children_of(r, 10) == ((1ull << 11) | (1ull << 12)));
	assert_true(children_of(r, 11) == 1ull << 13);

	assert_int_equal(thread_registry__remove(r, 10, 2), 0);
	assert_true(children_of(r, 1) == ((1ull << 11) | (1ull << 12)));
	assert_int_equal(fixture_look(r, 11).p.ppid, 1);
	assert_int_equal(fixture_look(r, 11).t.ppid, 1);
	assert_int_equal(fixture_look(r, 12).p.ppid, 1);
	/* a grandchild keeps its own parent */
	assert_int_equal(fixture_look(r, 13).p.ppid, 11);
	assert_true(children_of(r, 11) == 1ull << 13);
	thread_registry__stats(r, &st);
	assert_int_equal(st.reparented, 2);
}

static void thread_registry__relink__children_scanned_first__linked(void **state)
{
	struct thread_registry *r = *state;

	/* /proc order is not parents first */
	assert_int_equal(add(r, 21, 21, 20, 6, "child", THREAD_REGISTRY_F_SCAN), 0);
	assert_int_equal(add(r, 22, 22, 21, 7, "grandchild", THREAD_REGISTRY_F_SCAN), 0);
	assert_int_equal(add(r, 20, 20, 1, 5, "parent", THREAD_REGISTRY_F_SCAN), 0);
	assert_true(children_of(r, 20) == 0);
	assert_true(children_of(r, 21) == 1ull << 22);
	assert_int_equal(thread_registry__relink(r), 1);
	assert_true(children_of(r, 20) == 1ull << 21);
	assert_int_equal(thread_registry__relink(r), 0);
	/* no init known: the children of an exiting parent wait as orphans */
	assert_int_equal(thread_registry__remove(r, 20, 5), 0);
	assert_int_equal(fixture_look(r, 21).p.ppid, 1);
	assert_int_equal(add(r, 1, 1, 0, 1, "init", THREAD_REGISTRY_F_SCAN), 0);
	assert_int_equal(thread_registry__relink(r), 1);
	assert_true(children_of(r, 1) == 1ull << 21);
}

/* ---- concurrency -------------------------------------------------------- */

struct holder {
	struct thread_registry *r;
	uint32_t tid;
	int state; /* 0 start, 1 holding, 2 release, 3 done */
	char comm[16];
};

static void *hold_reader(void *arg)
{
	struct holder *h = arg;
	const struct thread_info *t;

	thread_registry__register_thread();
	thread_registry__read_lock();
	t = thread_registry__lookup(h->r, h->tid);
	__atomic_store_n(&h->state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != 2)
		usleep(1000);
	/* still valid: the writer removed it, but we have not left */
	if (t)
		memcpy(h->comm, t->comm, sizeof(h->comm));
	thread_registry__read_unlock();
	thread_registry__unregister_thread();
	__atomic_store_n(&h->state, 3, __ATOMIC_RELEASE);
	return NULL;
}

static void thread_registry__remove__reader_inside__call_rcu_waits_for_it(void **state)
{
	struct thread_registry *r = new_registry();
	struct thread_registry_stats st;
	struct holder h = {.r = r, .tid = 3000};
	pthread_t th;

	state_freed = 0;
	assert_int_equal(add(r, 3000, 3000, 1, 1, "held", 0), 0);
	assert_int_equal(thread_registry__visit(r, 3000, set_maps, malloc(8)), 0);
	assert_int_equal(pthread_create(&th, NULL, hold_reader, &h), 0);
	while (__atomic_load_n(&h.state, __ATOMIC_ACQUIRE) != 1)
		usleep(1000);

	assert_int_equal(thread_registry__remove(r, 3000, 1), 0);
	/* a grace period cannot end while the reader holds on: give the
	 * reclaimer every chance to run early, then check it did not */
	usleep(200 * 1000);
	thread_registry__stats(r, &st);
	assert_int_equal(st.retired, 2); /* the thread and its process */
	assert_int_equal(st.reclaimed, 0);
	assert_int_equal(__atomic_load_n(&state_freed, __ATOMIC_RELAXED), 0);

	__atomic_store_n(&h.state, 2, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_string_equal(h.comm, "held");
	thread_registry__barrier(r);
	thread_registry__stats(r, &st);
	assert_int_equal(st.reclaimed, 2);
	assert_int_equal(state_freed, 1);
	thread_registry__free(r);
}

#define STABLE_BASE 5000
#define NR_STABLE   64
#define CHURN_BASE  6000
#define NR_CHURN    256

struct iter_ctx {
	struct thread_registry *r;
	int stop;
	int passes;
	int bad;
};

struct pass {
	uint64_t stable[NR_STABLE / 64];
	int dup;
	int garbage;
};

static int check_thread(void *ctx, const struct thread_info *t)
{
	struct pass *p = ctx;
	uint32_t i;

	if (t->tid >= STABLE_BASE && t->tid < STABLE_BASE + NR_STABLE) {
		i = t->tid - STABLE_BASE;
		if (p->stable[i / 64] & (1ull << (i % 64)))
			p->dup++;
		p->stable[i / 64] |= 1ull << (i % 64);
	} else if (t->tid < CHURN_BASE || t->tid >= CHURN_BASE + NR_CHURN || t->pid != t->tid ||
		   t->proc->pid != t->pid) {
		p->garbage++;
	}
	return 0;
}

static void *iterate(void *arg)
{
	struct iter_ctx *c = arg;
	struct pass p;
	int i;

	thread_registry__register_thread();
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		memset(&p, 0, sizeof(p));
		thread_registry__for_each_thread(c->r, check_thread, &p);
		/* every thread that stays put is seen once per pass */
		for (i = 0; i < NR_STABLE / 64; i++)
			if (p.stable[i] != ~0ull)
				c->bad++;
		c->bad += p.dup + p.garbage;
		c->passes++;
	}
	thread_registry__unregister_thread();
	return NULL;
}

static void thread_registry__for_each_thread__writer_churning__stable_seen_once(void **state)
{
	struct thread_registry *r = *state;
	struct iter_ctx c = {.r = r};
	uint64_t gen = 100;
	pthread_t th;
	int i, round;

	for (i = 0; i < NR_STABLE; i++)
		assert_int_equal(add(r, STABLE_BASE + i, STABLE_BASE + i, 1, 1, "stable", 0), 0);
	assert_int_equal(pthread_create(&th, NULL, iterate, &c), 0);
	for (round = 0; round < 40 || c.passes < 20; round++) {
		for (i = 0; i < NR_CHURN; i++)
			assert_int_equal(add(r, CHURN_BASE + i, CHURN_BASE + i, 1, gen, "churn", 0),
					 0);
		for (i = 0; i < NR_CHURN; i++) {
			if (i % 3 == 0)
				assert_int_equal(
					thread_registry__rename(r, CHURN_BASE + i, 0, "re"), 0);
			assert_int_equal(thread_registry__remove(r, CHURN_BASE + i, gen), 0);
		}
		gen++;
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_true(c.passes > 0);
	assert_int_equal(c.bad, 0);
	assert_int_equal(nr_threads(r), NR_STABLE);
}

/* ---- container ids ------------------------------------------------------ */

#define ID64 "3f9c2b1a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"

static void expect_id(const char *path, const char *id)
{
	char out[THREAD_REGISTRY_CONTAINER_ID_LEN + 1] = "junk";

	assert_int_equal(thread_registry_parse_container_id(path, out), id != NULL);
	assert_string_equal(out, id ? id : "");
}

static void thread_registry_parse_container_id__runtime_paths__id_found(void **state)
{
	/* systemd cgroup driver: docker, containerd, cri-o, podman */
	expect_id("/system.slice/docker-" ID64 ".scope", ID64);
	expect_id("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_"
		  "7182_93a4_b5c6d7e8f901.slice/cri-containerd-" ID64 ".scope",
		  ID64);
	expect_id("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podabc.slice/"
		  "crio-" ID64 ".scope",
		  ID64);
	expect_id("/machine.slice/libpod-" ID64 ".scope/container", ID64);
	/* cgroupfs driver */
	expect_id("/docker/" ID64, ID64);
	expect_id("/kubepods/burstable/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901/" ID64, ID64);
	expect_id("/kubepods/" ID64 "/", ID64);
	/* docker in docker: the innermost wins */
	expect_id("/docker/0000000000000000000000000000000000000000000000000000000000000000/"
		  "docker/" ID64,
		  ID64);
}

static void thread_registry_parse_container_id__no_container__empty(void **state)
{
	expect_id("/", NULL);
	expect_id("", NULL);
	expect_id(NULL, NULL);
	expect_id("/user.slice/user-1000.slice/session-2.scope", NULL);
	expect_id("/system.slice/containerd.service", NULL);
	/* a pod uid is not a container id */
	expect_id("/kubepods/burstable/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901", NULL);
	/* 63 and 65 digits */
	expect_id("/docker/"
		  "3f9c2b1a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f",
		  NULL);
	expect_id("/docker/" ID64 "0", NULL);
	/* upper case, or glued to a letter or digit */
	expect_id("/docker/3F9C2B1A4D5E6F708192A3B4C5D6E7F8091A2B3C4D5E6F708192A3B4C5D6E7F8", NULL);
	expect_id("/docker/x" ID64, NULL);
	expect_id("/docker/" ID64 "g", NULL);
	expect_id("/docker/" ID64 "Z.scope", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fixture_registry_teardown)
		T(thread_registry__insert__new_process__lookup_finds_thread_and_process),
		T(thread_registry__insert__same_incarnation_twice__eexist_one_entry),
		T(thread_registry__insert__ids_out_of_range__erange),
		T(thread_registry__insert__thread_of_known_process__shares_it),
		T(thread_registry__insert__older_incarnation_in_slot__replaced),
		T(thread_registry__insert__scan_after_exit_same_incarnation__rejected),
		T(thread_registry__remove__leader_with_live_threads__process_kept),
		T(thread_registry__insert__scan_non_leader_first__leader_joins),
		T(thread_registry__remove__last_known_thread_not_leader__leader_scannable),
		T(thread_registry__rename__live_thread__replaced_old_reclaimed),
		T(thread_registry__exec__leader__new_image_old_state_freed),
		T(thread_registry__exec__non_leader__takes_over_the_pid),
		T(thread_registry__exec__unknown_process__created),
		T(thread_registry__insert__fork__inherits_parent_image),
		T(thread_registry__remove__parent_exits__children_go_to_init),
		T(thread_registry__relink__children_scanned_first__linked),
		T(thread_registry__remove__reader_inside__call_rcu_waits_for_it),
		T(thread_registry__for_each_thread__writer_churning__stable_seen_once),
		T(thread_registry_parse_container_id__runtime_paths__id_found),
		T(thread_registry_parse_container_id__no_container__empty),
#undef T
	};

	return cmocka_run_group_tests_name("thread_registry", tests, NULL, NULL);
}
