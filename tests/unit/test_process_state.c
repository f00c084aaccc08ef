// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/processes/process_state.c: the states of a real thread
 * registry's images (the registry retires them through
 * process_states_retire()), mappings read from this process's own
 * /proc/self/maps, hooks that record how they were called.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"
#include "processes/proc_maps.h"
#include "processes/process_state.h"

#define CONTAINER_ID "3f9c2b1a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"

/* what the hooks saw */
struct hook_log {
	int mapped;
	int mapped_locked; /* @lock was held during a mapped call */
	int retired;
	int retired_locked;   /* @lock was held during a retired call */
	int retired_flag_set; /* st->retired was already true */
	struct process_state *last_retired;
	struct mappings *last_snap;
	const struct proc_maps *last_all;
	int delivered;
	size_t delivered_maps;
	struct process_state *last_delivered;
	int firsts; /* calls of the first-read subscriber */
	struct process_state *last_first;
};

struct fixture {
	struct symbolizer *sym;
	struct process_states *ps;
	struct thread_registry *r;
	struct hook_log log;
};

/* the lock is not recursive: trylock by its holder fails too */
static bool lock_held(struct process_state *st)
{
	if (pthread_mutex_trylock(&st->lock))
		return true;
	pthread_mutex_unlock(&st->lock);
	return false;
}

static void on_mapped(void *ctx, struct process_state *st, struct mappings *snap,
		      const struct proc_maps *all)
{
	struct hook_log *log = ctx;

	log->mapped++;
	log->mapped_locked += lock_held(st);
	log->last_snap = snap;
	log->last_all = all;
}

/* a main-thread reader of libctxprof regions */
static void on_region(void *ctx, struct process_state *st, struct mappings *snap,
		      const struct proc_maps *all)
{
	struct hook_log *log = ctx;

	log->delivered++;
	log->delivered_maps = all ? all->nr : 0;
	log->last_delivered = st;
}

/* a main-thread reader of every image's first read (the goroutine labels') */
static void on_first(void *ctx, struct process_state *st, struct mappings *snap,
		     const struct proc_maps *all)
{
	struct hook_log *log = ctx;

	log->firsts++;
	log->last_first = st;
}

static void on_retired(void *ctx, struct process_state *st)
{
	struct hook_log *log = ctx;

	log->retired++;
	log->retired_locked += lock_held(st);
	log->retired_flag_set += st->retired;
	log->last_retired = st;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct process_state_subscriber sub = {.changed = on_mapped, .gone = on_retired};
	struct process_state_subscriber reader = {
		.changed = on_region,
		.main_thread = true,
		.wants = MAPPINGS_F_CTXPROF_REGION,
	};
	struct process_state_subscriber first = {
		.changed = on_first,
		.main_thread = true,
		.first_read = true,
	};

	assert_non_null(f);
	f->sym = symbolizer__new(0, 64 << 20);
	assert_non_null(f->sym);
	f->ps = fixture_states_new(f->sym);
	assert_non_null(f->ps);
	sub.ctx = reader.ctx = first.ctx = &f->log;
	assert_int_equal(process_states__subscribe(f->ps, &sub), 0);
	assert_int_equal(process_states__subscribe(f->ps, &reader), 0);
	assert_int_equal(process_states__subscribe(f->ps, &first), 0);
	f->r = fixture_registry_with_states(f->ps);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	/* retires every state left, then they are freed */
	fixture_registry_free(f->r);
	process_states__free(f->ps);
	symbolizer__free(f->sym);
	free(f);
	return 0;
}

/* the process's last thread exits: its image, so its state, is retired */
static void retire(struct fixture *f, uint32_t pid, uint64_t start)
{
	assert_int_equal(thread_registry__remove(f->r, pid, start), 0);
	thread_registry__barrier(f->r);
}

static void process_states__get__same_image_twice__one_state_with_its_labels(void **state)
{
	struct fixture *f = *state;
	struct process_state *st;

	assert_int_equal(fixture_add_process(f->r, 1000, 10, "app",
					     "/system.slice/docker-" CONTAINER_ID ".scope", 7),
			 0);
	st = process_states__get(f->ps, f->r, 1000);
	assert_non_null(st);
	assert_ptr_equal(process_states__get(f->ps, f->r, 1000), st);
	assert_int_equal(st->pid, 1000);
	assert_int_equal(st->exec_id, 7);
	assert_string_equal(st->comm, "app");
	assert_string_equal(st->container_id, CONTAINER_ID);
	assert_true(!st->maps.nr);
	assert_int_equal(st->maps_gen, 0);
	assert_false(st->retired);
	/* no process, no state */
	assert_null(process_states__get(f->ps, f->r, 1001));
	assert_int_equal(f->log.mapped + f->log.retired, 0);
}

/*
 * Racers released together on a fresh image, round after round: a get()
 * that ignored a lost install would hand out a second state.  The window is
 * a calloc wide: on two CPUs about one round in a thousand hits it.
 */
#define RACERS 4
#define ROUNDS 10000

struct race {
	struct fixture *f;
	pthread_barrier_t start, done;
	uint32_t pid;
	struct process_state *got[RACERS];
};

struct racer {
	struct race *race;
	int id;
};

static void *racer(void *arg)
{
	struct racer *me = arg;
	struct race *race = me->race;
	int round;

	thread_registry__register_thread();
	for (round = 0; round < ROUNDS; round++) {
		pthread_barrier_wait(&race->start);
		race->got[me->id] = process_states__get(race->f->ps, race->f->r, race->pid);
		pthread_barrier_wait(&race->done);
	}
	thread_registry__unregister_thread();
	return NULL;
}

static void process_states__get__threads_racing__one_state_installed(void **state)
{
	struct race race = {.f = *state};
	struct racer racers[RACERS];
	pthread_t th[RACERS];
	int i, round, missing = 0, split = 0, not_installed = 0;

	pthread_barrier_init(&race.start, NULL, RACERS + 1);
	pthread_barrier_init(&race.done, NULL, RACERS + 1);
	for (i = 0; i < RACERS; i++) {
		racers[i] = (struct racer){&race, i};
		assert_int_equal(pthread_create(&th[i], NULL, racer, &racers[i]), 0);
	}
	for (round = 0; round < ROUNDS; round++) {
		race.pid = 2000 + round;
		assert_int_equal(fixture_add_process(race.f->r, race.pid, 1, "racer", NULL, 1), 0);
		pthread_barrier_wait(&race.start);
		pthread_barrier_wait(&race.done);
		/* counted, not asserted: the racers must finish their rounds */
		for (i = 0; i < RACERS; i++) {
			missing += !race.got[i];
			split += race.got[i] != race.got[0];
		}
		/* the one the image holds */
		not_installed +=
			process_states__get(race.f->ps, race.f->r, race.pid) != race.got[0];
	}
	for (i = 0; i < RACERS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&race.start);
	pthread_barrier_destroy(&race.done);
	assert_int_equal(missing, 0);
	assert_int_equal(split, 0);
	assert_int_equal(not_installed, 0);
}

static void
process_states__refresh__exec_mappings_changed__maps_gen_bumped_hook_called(void **state)
{
	struct fixture *f = *state;
	long page = sysconf(_SC_PAGESIZE);
	struct process_state *st;
	uint64_t before = fixture_mono_ns();
	void *data, *code;

	/* this process, so that there are real maps to read */
	assert_int_equal(fixture_add_process(f->r, getpid(), 1, "self", NULL, 1), 0);
	st = process_states__get(f->ps, f->r, getpid());
	assert_non_null(st);

	assert_int_equal(process_states__refresh(f->ps, st), 0);
	assert_int_equal(st->maps_gen, 1);
	assert_int_equal(f->log.mapped, 1);
	assert_int_equal(f->log.mapped_locked, 0);
	/* handed the snapshot and every mapping of the read */
	assert_ptr_equal(f->log.last_snap, mappings_history__latest(&st->maps));
	assert_non_null(f->log.last_all);
	assert_false(!st->maps.nr);
	/* new code found: the next read comes soon (libraries still loading) */
	assert_true(st->refresh_after_ns >= before + PROCESS_STATE_REFRESH_SOON_NS);
	assert_true(st->refresh_after_ns < before + PROCESS_STATE_REFRESH_NS);

	/* nothing changed, then only data: no new snapshot, no hook, the long wait */
	before = fixture_mono_ns();
	assert_int_equal(process_states__refresh(f->ps, st), 0);
	assert_true(st->refresh_after_ns >= before + PROCESS_STATE_REFRESH_NS);
	data = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(data != MAP_FAILED);
	assert_int_equal(process_states__refresh(f->ps, st), 0);
	assert_int_equal(st->maps_gen, 1);
	assert_int_equal(f->log.mapped, 1);

	/* new code: a snapshot, and the hook; its removal is a change too */
	code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(code != MAP_FAILED);
	assert_int_equal(process_states__refresh(f->ps, st), 0);
	assert_int_equal(st->maps_gen, 2);
	assert_int_equal(f->log.mapped, 2);
	pthread_mutex_lock(&st->lock);
	assert_non_null(
		mappings_history__find(&st->maps, (uint64_t)(uintptr_t)code, UINT64_MAX, NULL));
	pthread_mutex_unlock(&st->lock);
	munmap(code, page);
	assert_int_equal(process_states__refresh(f->ps, st), 0);
	assert_int_equal(st->maps_gen, 3);
	assert_int_equal(f->log.mapped, 3);
	assert_int_equal(f->log.mapped_locked, 0);
	munmap(data, page);
}

static void process_states__retire__last_thread_removed__hook_under_lock_state_kept(void **state)
{
	struct fixture *f = *state;
	struct process_state *st;

	assert_int_equal(fixture_add_process(f->r, 3000, 5, "short", NULL, 9), 0);
	st = process_states__get(f->ps, f->r, 3000);
	assert_non_null(st);
	assert_int_equal(process_states__nr_retired(f->ps), 0);

	retire(f, 3000, 5);
	assert_int_equal(f->log.retired, 1);
	assert_ptr_equal(f->log.last_retired, st);
	assert_int_equal(f->log.retired_locked, 1);
	assert_int_equal(f->log.retired_flag_set, 1);
	assert_true(st->retired);
	assert_true(st->retired_ns > 0);
	assert_int_equal(process_states__nr_retired(f->ps), 1);
	/* the process is gone, its state is still found for the export */
	assert_null(process_states__get(f->ps, f->r, 3000));
	assert_ptr_equal(process_states__find(f->ps, f->r, 3000, 9), st);
}

/*
 * Between an image's unlinking (exit, exec) and its retirement a grace
 * period later, an export still finds its state (before: no state, and a
 * just-exited process's samples lost their mappings); none is collected or
 * listed twice.
 */
static void process_states__find__unlinked_before_its_grace_period__found(void **state)
{
	struct fixture *f = *state;
	struct process_state *gone, *old, *now;

	assert_int_equal(fixture_add_process(f->r, 3100, 5, "brief", NULL, 7), 0);
	assert_int_equal(fixture_add_process(f->r, 3101, 5, "sh", NULL, 3), 0);
	gone = process_states__get(f->ps, f->r, 3100);
	old = process_states__get(f->ps, f->r, 3101);
	assert_non_null(gone);
	assert_non_null(old);
	/* a reader in its section holds the grace period back */
	thread_registry__read_lock();
	assert_int_equal(thread_registry__remove(f->r, 3100, 5), 0);
	assert_int_equal(fixture_exec(f->r, 3101, 5, "worker", 4), 0);
	assert_ptr_equal(process_states__find(f->ps, f->r, 3100, 7), gone);
	assert_ptr_equal(process_states__find(f->ps, f->r, 3101, 3), old);
	assert_false(gone->retired);
	assert_false(old->retired);
	assert_int_equal(f->log.retired, 0);
	assert_int_equal(process_states__nr_retired(f->ps), 2);
	/* not retired yet: not collected, however late the cut */
	assert_int_equal(process_states__collect(f->ps, UINT64_MAX - 1, NULL), 0);
	thread_registry__read_unlock();
	thread_registry__barrier(f->r);
	assert_true(gone->retired);
	assert_true(old->retired);
	assert_int_equal(f->log.retired, 2);
	assert_int_equal(process_states__nr_retired(f->ps), 2);
	assert_ptr_equal(process_states__find(f->ps, f->r, 3100, 7), gone);
	now = process_states__get(f->ps, f->r, 3101);
	assert_ptr_equal(process_states__find(f->ps, f->r, 3101, 4), now);
	assert_int_equal(process_states__collect(f->ps, fixture_mono_ns() + 1, NULL), 2);
	assert_int_equal(process_states__nr_retired(f->ps), 0);
	assert_null(process_states__find(f->ps, f->r, 3100, 7));
}

static struct app_region *freed_app;
static int apps_freed;

/* the collector's release: only states with an app region have one to free */
static void count_free_app(struct process_state *st)
{
	if (!st->app)
		return;
	freed_app = st->app;
	apps_freed++;
}

static void process_states__collect__retired_before_and_unpinned__only_those_freed(void **state)
{
	struct fixture *f = *state;
	struct process_state *a, *b;
	static char app_marker;
	uint64_t before;

	assert_int_equal(fixture_add_process(f->r, 4000, 1, "a", NULL, 1), 0);
	assert_int_equal(fixture_add_process(f->r, 4001, 1, "b", NULL, 1), 0);
	a = process_states__get(f->ps, f->r, 4000);
	b = process_states__get_pinned(f->ps, f->r, 4001);
	assert_non_null(a);
	assert_non_null(b);
	a->app = (struct app_region *)&app_marker;
	apps_freed = 0;
	before = fixture_mono_ns();
	retire(f, 4000, 1);
	retire(f, 4001, 1);
	assert_int_equal(process_states__nr_retired(f->ps), 2);

	/* retired after @before: too recent */
	assert_int_equal(process_states__collect(f->ps, before, count_free_app), 0);
	assert_int_equal(process_states__nr_retired(f->ps), 2);
	/* a is old enough; b is pinned */
	assert_int_equal(process_states__collect(f->ps, fixture_mono_ns() + 1, count_free_app), 1);
	assert_int_equal(apps_freed, 1);
	assert_ptr_equal(freed_app, &app_marker);
	assert_int_equal(process_states__nr_retired(f->ps), 1);
	assert_null(process_states__find(f->ps, f->r, 4000, 1));
	assert_ptr_equal(process_states__find(f->ps, f->r, 4001, 1), b);
	/* unpinned: its turn */
	process_states__unpin(b);
	assert_int_equal(process_states__collect(f->ps, fixture_mono_ns() + 1, count_free_app), 1);
	assert_int_equal(apps_freed, 1);
	assert_int_equal(process_states__nr_retired(f->ps), 0);
	assert_null(process_states__find(f->ps, f->r, 4001, 1));
}

static void process_states__find__exact_exec_id_then_unknown__preferred(void **state)
{
	struct fixture *f = *state;
	struct process_state *s0, *s5, *s6, *q3, *q0, *r2;

	/* 5000: found by the scan (exec_id 0), then exec'd twice */
	assert_int_equal(fixture_add_process(f->r, 5000, 1, "p", NULL, 0), 0);
	s0 = process_states__get(f->ps, f->r, 5000);
	assert_int_equal(fixture_exec(f->r, 5000, 1, "p5", 5), 0);
	s5 = process_states__get(f->ps, f->r, 5000);
	assert_int_equal(fixture_exec(f->r, 5000, 1, "p6", 6), 0);
	s6 = process_states__get(f->ps, f->r, 5000);
	/* 5001: an image of known id, then one of unknown id (current) */
	assert_int_equal(fixture_add_process(f->r, 5001, 1, "q", NULL, 3), 0);
	q3 = process_states__get(f->ps, f->r, 5001);
	assert_int_equal(fixture_exec(f->r, 5001, 1, "q0", 0), 0);
	q0 = process_states__get(f->ps, f->r, 5001);
	/* 5002: one image of known id */
	assert_int_equal(fixture_add_process(f->r, 5002, 1, "r", NULL, 2), 0);
	r2 = process_states__get(f->ps, f->r, 5002);
	thread_registry__barrier(f->r);
	assert_true(s0 && s5 && s6 && q3 && q0 && r2);
	/* one state per image */
	assert_true(s0 != s5 && s5 != s6 && s0 != s6 && q3 != q0);
	assert_string_equal(s5->comm, "p5");
	assert_int_equal(process_states__nr_retired(f->ps), 3);

	/* exact, retired or current */
	assert_ptr_equal(process_states__find(f->ps, f->r, 5000, 5), s5);
	assert_ptr_equal(process_states__find(f->ps, f->r, 5000, 6), s6);
	assert_ptr_equal(process_states__find(f->ps, f->r, 5000, 0), s0);
	/* no exact one: the image of unknown id */
	assert_ptr_equal(process_states__find(f->ps, f->r, 5000, 9), s0);
	/* an exact retired one wins over the current one of unknown id */
	assert_ptr_equal(process_states__find(f->ps, f->r, 5001, 3), q3);
	assert_ptr_equal(process_states__find(f->ps, f->r, 5001, 8), q0);
	/* neither: none, but for a sample of unknown id */
	assert_ptr_equal(process_states__find(f->ps, f->r, 5002, 2), r2);
	assert_null(process_states__find(f->ps, f->r, 5002, 9));
	assert_ptr_equal(process_states__find(f->ps, f->r, 5002, 0), r2);
	assert_null(process_states__find(f->ps, f->r, 5999, 1));
}

/* a fork starts with its creator's snapshot, the same one, without a read */
static void process_states__inherit__forked_child__parent_snapshot_shared(void **state)
{
	struct fixture *f = *state;
	struct process_states_stats stats;
	struct process_state *parent, *child;

	assert_int_equal(fixture_add_process(f->r, getpid(), 1, "self", NULL, 1), 0);
	assert_int_equal(fixture_add_process(f->r, 6000, 1, "kid", NULL, 1), 0);
	/* a parent never read has nothing to give: the caller reads the child */
	assert_int_equal(process_states__inherit(f->ps, f->r, 6000, getpid()), -ENOENT);
	parent = process_states__get(f->ps, f->r, getpid());
	assert_int_equal(process_states__refresh(f->ps, parent), 0);
	assert_int_equal(f->log.mapped, 1);

	assert_int_equal(process_states__inherit(f->ps, f->r, 6000, getpid()), 0);
	child = process_states__get(f->ps, f->r, 6000);
	assert_non_null(child);
	assert_int_equal(child->maps.nr, 1);
	assert_ptr_equal(mappings_history__latest(&child->maps),
			 mappings_history__latest(&parent->maps));
	assert_int_equal(child->maps_gen, 1);
	/* the unwinder hears of it; no read, so no mappings handed */
	assert_int_equal(f->log.mapped, 2);
	assert_null(f->log.last_all);
	/* its first sample reads its own */
	assert_int_equal(child->refresh_after_ns, 0);
	/* a child with mappings of its own keeps them */
	assert_int_equal(process_states__inherit(f->ps, f->r, 6000, getpid()), 0);
	assert_int_equal(child->maps.nr, 1);
	assert_int_equal(process_states__inherit(f->ps, f->r, 6001, getpid()), -ESRCH);
	process_states__stats(f->ps, &stats);
	assert_int_equal(stats.inherited, 1);
}

#define REGION_LINE                                                                                \
	"7f0000000000-7f0000010000 rw-s 00000000 00:01 77 /memfd:ctxprof-region (deleted)\n"
#define CODE_LINE "7f1000000000-7f1000001000 r-xp 00000000 00:00 0 \n"

/* a region reader on the main thread: a first look, then every change */
static void process_states__deliver__region_mapped__main_reader_called_once_per_change(void **state)
{
	static const char text[] = CODE_LINE REGION_LINE;
	static const char grown[] =
		CODE_LINE REGION_LINE "7f2000000000-7f2000001000 rw-p 00000000 00:00 0 \n";
	struct fixture *f = *state;
	struct process_state *st;

	assert_int_equal(fixture_add_process(f->r, 7000, 1, "app", NULL, 1), 0);
	st = process_states__get(f->ps, f->r, 7000);
	assert_int_equal(process_states__add_text(f->ps, st, 7000, text, strlen(text), 1), 1);
	/* queued, not called: the reader is the main thread's */
	assert_int_equal(f->log.delivered, 0);
	process_states__deliver(f->ps);
	assert_int_equal(f->log.delivered, 1);
	assert_ptr_equal(f->log.last_delivered, st);
	assert_int_equal(f->log.delivered_maps, 2);
	/* the same text again: nothing new to hand over */
	assert_int_equal(process_states__add_text(f->ps, st, 7000, text, strlen(text), 2), 0);
	process_states__deliver(f->ps);
	assert_int_equal(f->log.delivered, 1);
	/* a change of the data mappings only: no snapshot, but the reader sees it */
	assert_int_equal(process_states__add_text(f->ps, st, 7000, grown, strlen(grown), 3), 0);
	process_states__deliver(f->ps);
	assert_int_equal(f->log.delivered, 2);
	assert_int_equal(f->log.delivered_maps, 3);
	assert_int_equal(st->maps_gen, 1);
}

/* a first-read reader: every image's first read, once, whatever it maps */
static void process_states__deliver__first_read__once_per_image(void **state)
{
	static const char text[] = CODE_LINE;
	static const char grown[] = CODE_LINE "7f2000000000-7f2000001000 rw-p 00000000 00:00 0 \n";
	static const char region[] = CODE_LINE REGION_LINE;
	struct fixture *f = *state;
	struct process_state *st, *other;

	assert_int_equal(fixture_add_process(f->r, 7100, 1, "app", NULL, 1), 0);
	assert_int_equal(fixture_add_process(f->r, 7101, 1, "other", NULL, 1), 0);
	st = process_states__get(f->ps, f->r, 7100);
	other = process_states__get(f->ps, f->r, 7101);
	assert_int_equal(process_states__add_text(f->ps, st, 7100, text, strlen(text), 1), 1);
	assert_int_equal(f->log.firsts, 0);
	process_states__deliver(f->ps);
	assert_int_equal(f->log.firsts, 1);
	assert_ptr_equal(f->log.last_first, st);
	/* no region: the region reader was not called */
	assert_int_equal(f->log.delivered, 0);
	/* later changes are not first reads */
	assert_int_equal(process_states__add_text(f->ps, st, 7100, grown, strlen(grown), 2), 0);
	assert_int_equal(process_states__add_text(f->ps, st, 7100, region, strlen(region), 3), 0);
	process_states__deliver(f->ps);
	assert_int_equal(f->log.firsts, 1);
	assert_int_equal(f->log.delivered, 1);
	/* another image has its own first read */
	assert_int_equal(process_states__add_text(f->ps, other, 7101, text, strlen(text), 4), 1);
	process_states__deliver(f->ps);
	assert_int_equal(f->log.firsts, 2);
	assert_ptr_equal(f->log.last_first, other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(process_states__get__same_image_twice__one_state_with_its_labels),
		T(process_states__get__threads_racing__one_state_installed),
		T(process_states__refresh__exec_mappings_changed__maps_gen_bumped_hook_called),
		T(process_states__retire__last_thread_removed__hook_under_lock_state_kept),
		T(process_states__collect__retired_before_and_unpinned__only_those_freed),
		T(process_states__find__exact_exec_id_then_unknown__preferred),
		T(process_states__find__unlinked_before_its_grace_period__found),
		T(process_states__inherit__forked_child__parent_snapshot_shared),
		T(process_states__deliver__region_mapped__main_reader_called_once_per_change),
		T(process_states__deliver__first_read__once_per_image),
#undef T
	};

	return cmocka_run_group_tests_name("process_state", tests, NULL, NULL);
}
