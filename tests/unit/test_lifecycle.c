// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/processes/lifecycle.c: records applied to a registry, no BPF */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"
#include "processes/lifecycle.h"

/* start_boottime of @ticks clock ticks, as BPF reports it */
static uint64_t ticks_ns(uint64_t ticks)
{
	return ticks * (1000000000ull / sysconf(_SC_CLK_TCK));
}

static char *fixture; /* a fake /proc, fixture_tmpdir() */

static int setup(void **state)
{
	fixture_registry_setup(state);
	fixture = fixture_tmpdir("lifecycle");
	return 0;
}

static int teardown(void **state)
{
	fixture_tmpdir_remove(fixture);
	fixture = NULL;
	return fixture_registry_teardown(state);
}

static struct lifecycle_record rec(uint32_t type, uint32_t pid, uint32_t tid, uint64_t start,
				   uint64_t pstart, const char *comm)
{
	struct lifecycle_record r = {
		.type = type,
		.pid = pid,
		.tid = tid,
		.ppid = 1,
		.start_ns = ticks_ns(start),
		.pstart_ns = ticks_ns(pstart),
	};

	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	return r;
}

static int apply(struct thread_registry *r, const struct lifecycle_record *l,
		 struct lifecycle_counters *c)
{
	return lifecycle_apply(r, l, sizeof(*l), fixture, c);
}

static void lifecycle_apply__fork_thread_exit__threads_come_and_go(void **state)
{
	struct thread_registry *r = *state;
	struct lifecycle_counters c = {0};
	struct lifecycle_record l;

	l = rec(LIFECYCLE_FORK, 100, 100, 50, 50, "parent");
	assert_int_equal(apply(r, &l, &c), 0);
	l = rec(LIFECYCLE_THREAD, 100, 101, 51, 50, "parent");
	l.ptid = 100;
	assert_int_equal(apply(r, &l, &c), 0);
	assert_int_equal(fixture_look(r, 101).t.pid, 100);
	assert_int_equal(fixture_look(r, 101).t.ptid, 100);

	/* the thread exits; the leader's exit takes the process */
	l = rec(LIFECYCLE_EXIT, 100, 101, 51, 50, "parent");
	assert_int_equal(apply(r, &l, &c), 0);
	assert_false(fixture_look(r, 101).found);
	assert_true(fixture_look(r, 100).found);
	l = rec(LIFECYCLE_EXIT, 100, 100, 50, 50, "parent");
	l.flags = LIFECYCLE_F_GROUP_DEAD;
	assert_int_equal(apply(r, &l, &c), 0);
	assert_false(fixture_look(r, 100).found);

	/* an exit of a thread never seen is counted, not an error */
	l = rec(LIFECYCLE_EXIT, 300, 300, 70, 70, "stranger");
	assert_int_equal(apply(r, &l, &c), -ENOENT);
	assert_int_equal(c.records, 5);
	assert_int_equal(c.applied, 4);
	assert_int_equal(c.unknown, 1);
	assert_int_equal(c.by_type[LIFECYCLE_EXIT], 3);
}

static void lifecycle_apply__rename__thread_comm_replaced(void **state)
{
	struct thread_registry *r = *state;
	struct lifecycle_record l;

	l = rec(LIFECYCLE_FORK, 200, 200, 60, 60, "before");
	assert_int_equal(apply(r, &l, NULL), 0);
	l = rec(LIFECYCLE_RENAME, 200, 200, 60, 60, "after");
	assert_int_equal(apply(r, &l, NULL), 0);
	assert_string_equal(fixture_look(r, 200).t.comm, "after");
	/* a rename of an older incarnation of the tid does not apply */
	l = rec(LIFECYCLE_RENAME, 200, 200, 59, 59, "old");
	assert_int_equal(apply(r, &l, NULL), -ESTALE);
	assert_string_equal(fixture_look(r, 200).t.comm, "after");
}

static void lifecycle_apply__exec_of_vanished_process__filename_used(void **state)
{
	struct thread_registry *r = *state;
	struct lifecycle_counters c = {0};
	struct lifecycle_record l;
	struct fixture_thread s;

	l = rec(LIFECYCLE_FORK, 400, 400, 80, 80, "sh");
	assert_int_equal(apply(r, &l, &c), 0);
	l = rec(LIFECYCLE_EXEC, 400, 400, 80, 80, "true");
	l.ptid = 400;
	strcpy(l.filename, "/bin/true");
	assert_int_equal(apply(r, &l, &c), 0);
	s = fixture_look(r, 400);
	assert_string_equal(s.exe, "/bin/true");
	assert_string_equal(s.t.comm, "true");
	assert_string_equal(s.img.comm, "true");
	assert_int_equal(c.proc_misses, 1);
}

static void lifecycle_apply__exec_with_proc_entry__exe_and_cgroup_from_proc(void **state)
{
	struct thread_registry *r = *state;
	struct lifecycle_counters c = {0};
	struct lifecycle_record l;
	char link[256];
	struct fixture_thread s;

	/* /proc/500 is the same incarnation (starttime 90): trust it */
	fixture_put(fixture, "500/stat",
		    "500 (app) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 90 0 0\n");
	fixture_put(fixture, "500/cgroup",
		    "0::/system.slice/docker-"
		    "3f9c2b1a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8.scope\n");
	snprintf(link, sizeof(link), "%s/500/exe", fixture);
	assert_int_equal(symlink("/opt/real/app", link), 0);
	/* /proc/600 was reused by another process (starttime 99, not 95) */
	fixture_put(fixture, "600/stat",
		    "600 (other) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0\n");
	snprintf(link, sizeof(link), "%s/600/exe", fixture);
	assert_int_equal(symlink("/usr/bin/other", link), 0);

	l = rec(LIFECYCLE_EXEC, 500, 500, 90, 90, "app");
	strcpy(l.filename, "./app");
	l.ptid = 500;
	assert_int_equal(apply(r, &l, &c), 0);
	s = fixture_look(r, 500);
	assert_string_equal(s.exe, "/opt/real/app");
	assert_true(strstr(s.cgroup, "docker-3f9c") != NULL);

	l = rec(LIFECYCLE_EXEC, 600, 600, 95, 95, "mine");
	strcpy(l.filename, "/bin/mine");
	l.ptid = 600;
	assert_int_equal(apply(r, &l, &c), 0);
	assert_string_equal(fixture_look(r, 600).exe, "/bin/mine");
	assert_int_equal(c.proc_reads, 1);
	assert_int_equal(c.proc_misses, 1);
}

static void lifecycle_apply__malformed_records__einval_counted(void **state)
{
	struct thread_registry *r = *state;
	struct lifecycle_counters c = {0};
	struct lifecycle_record l = rec(LIFECYCLE_FORK, 700, 700, 1, 1, "x");

	assert_int_equal(lifecycle_apply(r, &l, sizeof(l) - 8, fixture, &c), -EINVAL);
	l.type = 0;
	assert_int_equal(apply(r, &l, &c), -EINVAL);
	l.type = LIFECYCLE_TYPE_MAX;
	assert_int_equal(apply(r, &l, &c), -EINVAL);
	/* unterminated strings are cut, not read past */
	l = rec(LIFECYCLE_FORK, 700, 700, 1, 1, "");
	memset(l.comm, 'A', sizeof(l.comm));
	memset(l.filename, 'B', sizeof(l.filename));
	assert_int_equal(apply(r, &l, &c), 0);
	assert_string_equal(fixture_look(r, 700).t.comm, "AAAAAAAAAAAAAAA");
	assert_int_equal(c.malformed, 3);
	assert_int_equal(c.records, 4);
}

static void lifecycle_stat_name__every_stat__named(void **state)
{
	int i;

	for (i = 0; i < LIFECYCLE_STAT_MAX; i++)
		assert_non_null(lifecycle_stat_name(i));
	assert_string_equal(lifecycle_stat_name(LIFECYCLE_STAT_DROP_RING_FULL), "ring_full");
	assert_string_equal(lifecycle_stat_name(LIFECYCLE_STAT_MAX), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(lifecycle_apply__fork_thread_exit__threads_come_and_go),
		T(lifecycle_apply__rename__thread_comm_replaced),
		T(lifecycle_apply__exec_of_vanished_process__filename_used),
		T(lifecycle_apply__exec_with_proc_entry__exe_and_cgroup_from_proc),
		T(lifecycle_apply__malformed_records__einval_counted),
		cmocka_unit_test(lifecycle_stat_name__every_stat__named),
#undef T
	};

	return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL);
}
