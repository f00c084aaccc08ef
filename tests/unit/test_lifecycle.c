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
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"
#include "processes/exe_cache.h"
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
	return lifecycle_apply(r, l, sizeof(*l), fixture, NULL, c);
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

/* the record's device as the kernel encodes it (major << 20 | minor) */
static uint32_t kernel_dev(dev_t dev)
{
	return major(dev) << 20 | minor(dev);
}

static void lifecycle_apply__exec_of_a_file_read_before__no_proc_read(void **state)
{
	struct thread_registry *r = *state;
	struct exe_cache *exes = exe_cache__new();
	struct lifecycle_counters c = {0};
	struct lifecycle_record l;
	char link[256], app[256];
	struct stat st;
	uint32_t pid;

	/* a real file behind /proc/900/exe, as the kernel saw it at exec */
	fixture_put(fixture, "files/app", "#!/bin/true\n");
	snprintf(app, sizeof(app), "%s/files/app", fixture);
	assert_int_equal(stat(app, &st), 0);
	fixture_put(fixture, "900/stat",
		    "900 (app) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 90 0 0\n");
	snprintf(link, sizeof(link), "%s/900/exe", fixture);
	assert_int_equal(symlink(app, link), 0);

	/* forks in cgroup 7, then execs of the file: the first one reads /proc;
	 * 901 has no /proc entry, yet gets the path read for 900 */
	for (pid = 900; pid <= 901; pid++) {
		l = rec(LIFECYCLE_FORK, pid, pid, 90, 90, "sh");
		l.cgroup_id = 7;
		assert_int_equal(apply(r, &l, &c), 0);
		l = rec(LIFECYCLE_EXEC, pid, pid, 90, 90, "app");
		l.cgroup_id = 7;
		l.ptid = pid;
		strcpy(l.filename, "./app");
		l.exe_dev = kernel_dev(st.st_dev);
		l.exe_ino = st.st_ino;
		assert_int_equal(lifecycle_apply(r, &l, sizeof(l), fixture, exes, &c), 0);
		assert_string_equal(fixture_look(r, pid).exe, app);
	}
	assert_int_equal(c.proc_reads, 1);
	assert_int_equal(c.exe_known, 1);

	/* another inode under the same name, or the same one under another
	 * name: not known, and without /proc the record's filename */
	l = rec(LIFECYCLE_FORK, 902, 902, 90, 90, "sh");
	l.cgroup_id = 7;
	assert_int_equal(apply(r, &l, &c), 0);
	l = rec(LIFECYCLE_EXEC, 902, 902, 90, 90, "app");
	l.cgroup_id = 7;
	strcpy(l.filename, "./app");
	l.exe_dev = kernel_dev(st.st_dev);
	l.exe_ino = st.st_ino + 1;
	assert_int_equal(lifecycle_apply(r, &l, sizeof(l), fixture, exes, &c), 0);
	assert_string_equal(fixture_look(r, 902).exe, "./app");
	l.exe_ino = st.st_ino;
	strcpy(l.filename, "/other/app");
	assert_int_equal(lifecycle_apply(r, &l, sizeof(l), fixture, exes, &c), 0);
	assert_string_equal(fixture_look(r, 902).exe, "/other/app");
	assert_int_equal(c.exe_known, 1);
	assert_int_equal(c.proc_misses, 2);
	exe_cache__free(exes);
}

static void lifecycle_apply__exe_not_the_records_file__path_not_remembered(void **state)
{
	struct thread_registry *r = *state;
	struct exe_cache *exes = exe_cache__new();
	struct lifecycle_counters c = {0};
	struct lifecycle_record l;
	char link[256], app[256];
	struct stat st;
	uint32_t pid;

	/* /proc/910/exe is another file than the one the record names (the
	 * process exec'd again before the read): its path is used, not kept */
	fixture_put(fixture, "files/later", "later\n");
	snprintf(app, sizeof(app), "%s/files/later", fixture);
	assert_int_equal(stat(app, &st), 0);
	fixture_put(fixture, "910/stat",
		    "910 (app) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 90 0 0\n");
	snprintf(link, sizeof(link), "%s/910/exe", fixture);
	assert_int_equal(symlink(app, link), 0);
	for (pid = 910; pid <= 911; pid++) {
		l = rec(LIFECYCLE_FORK, pid, pid, 90, 90, "sh");
		l.cgroup_id = 7;
		assert_int_equal(apply(r, &l, &c), 0);
		l = rec(LIFECYCLE_EXEC, pid, pid, 90, 90, "first");
		l.cgroup_id = 7;
		strcpy(l.filename, "/bin/first");
		l.exe_dev = kernel_dev(st.st_dev);
		l.exe_ino = st.st_ino + 1;
		assert_int_equal(lifecycle_apply(r, &l, sizeof(l), fixture, exes, &c), 0);
	}
	assert_string_equal(fixture_look(r, 910).exe, app);
	assert_string_equal(fixture_look(r, 911).exe, "/bin/first");
	assert_int_equal(c.exe_known, 0);
	exe_cache__free(exes);
}

static void lifecycle_apply__malformed_records__einval_counted(void **state)
{
	struct thread_registry *r = *state;
	struct lifecycle_counters c = {0};
	struct lifecycle_record l = rec(LIFECYCLE_FORK, 700, 700, 1, 1, "x");

	assert_int_equal(lifecycle_apply(r, &l, sizeof(l) - 8, fixture, NULL, &c), -EINVAL);
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
		T(lifecycle_apply__exec_of_a_file_read_before__no_proc_read),
		T(lifecycle_apply__exe_not_the_records_file__path_not_remembered),
		T(lifecycle_apply__malformed_records__einval_counted),
		cmocka_unit_test(lifecycle_stat_name__every_stat__named),
#undef T
	};

	return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL);
}
