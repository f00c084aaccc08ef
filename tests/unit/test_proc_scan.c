// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/processes/proc_scan.c */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"
#include "processes/proc_scan.h"

/* the fields after ppid (5..), starttime 777, as a literal and as a format */
#define STAT_TAIL     " 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 777 1000 10 18446744073709551615\n"
#define STAT_TAIL_FMT " 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 1000 10 18446744073709551615\n"

/* exactly the text: the parser gets no terminator to lean on */
static struct proc_stat parse_ok(const char *text)
{
	size_t len = strlen(text);
	char *copy = fixture_exact_copy(text, len);
	struct proc_stat ps;

	assert_int_equal(proc_scan__parse_stat(copy, len, &ps), 0);
	free(copy);
	return ps;
}

static int parse_err(const char *text)
{
	size_t len = strlen(text);
	char *copy = fixture_exact_copy(text, len);
	struct proc_stat ps;
	int err;

	err = proc_scan__parse_stat(copy, len, &ps);
	free(copy);
	return err;
}

static void proc_scan__parse_stat__real_line__fields_taken(void **state)
{
	struct proc_stat ps = parse_ok("1234 (bash) S 1000 1234 1234 34816 5678 4194304 900 0 0 0 "
				       "12 3 0 0 20 0 1 0 987654 8192000 1000 18446744073709551615 "
				       "1 1 0 0 0 0 65536 3686404 1266761467 0 0 0 17 1 0 0\n");

	assert_int_equal(ps.pid, 1234);
	assert_string_equal(ps.comm, "bash");
	assert_int_equal(ps.state, 'S');
	assert_int_equal(ps.ppid, 1000);
	assert_true(ps.starttime == 987654);
}

static void proc_scan__parse_stat__hostile_name__last_paren_wins(void **state)
{
	/* a process can call itself ") R 1 (x" or put a newline in */
	struct proc_stat ps = parse_ok("77 (a) R 1 (x) S 5" STAT_TAIL);

	assert_string_equal(ps.comm, "a) R 1 (x");
	assert_int_equal(ps.state, 'S');
	assert_int_equal(ps.ppid, 5);
	assert_true(ps.starttime == 777);
	ps = parse_ok("78 (new\nline) R 9 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 42\n");
	assert_string_equal(ps.comm, "new\nline");
	assert_true(ps.starttime == 42);
	ps = parse_ok("79 () R 9 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 43");
	assert_string_equal(ps.comm, "");
	/* a workqueue worker: the kernel appends the queue's name */
	ps = parse_ok("10 (kworker/0:0H-events_highpri) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 0 "
		      "-20 1 0 25 0 0 18446744073709551615 0 0\n");
	assert_string_equal(ps.comm, "kworker/0:0H-ev");
	assert_int_equal(ps.state, 'I');
	assert_true(ps.starttime == 25);
}

static void proc_scan__parse_stat__malformed__einval(void **state)
{
	assert_int_equal(parse_err(""), -EINVAL);
	assert_int_equal(parse_err("12"), -EINVAL);
	assert_int_equal(parse_err("12 bash S 1"), -EINVAL);
	assert_int_equal(parse_err("12 (bash S 1 0 0"), -EINVAL);
	assert_int_equal(parse_err("0 (zero) S 1" STAT_TAIL), -EINVAL);
	assert_int_equal(parse_err("-12 (neg) S 1" STAT_TAIL), -EINVAL);
	/* 64 bytes of name: the kernel never writes that */
	assert_int_equal(
		parse_err("12 (0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab"
			  "cdef) S 1" STAT_TAIL),
		-EINVAL);
	/* ppid negative or too large, state missing or long */
	assert_int_equal(parse_err("12 (x) S -1" STAT_TAIL), -EINVAL);
	assert_int_equal(parse_err("12 (x) S 4294967296" STAT_TAIL), -EINVAL);
	assert_int_equal(parse_err("12 (x)  1" STAT_TAIL), -EINVAL);
	assert_int_equal(parse_err("12 (x) SS 1" STAT_TAIL), -EINVAL);
	/* cut before starttime, starttime overflowing, junk in a field */
	assert_int_equal(parse_err("12 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0"), -EINVAL);
	assert_int_equal(parse_err("12 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 "
				   "18446744073709551616\n"),
			 -EINVAL);
	assert_int_equal(parse_err("12 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 2x 0 1 0 5\n"), -EINVAL);
	/* an embedded NUL in the name */
	assert_int_equal(proc_scan__parse_stat("12 (a\0b) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 2 0 1 0 5",
					       48, &(struct proc_stat){0}),
			 -EINVAL);
}

static int parse_cgroup(const char *text, char *out, size_t out_len)
{
	return proc_scan__parse_cgroup(text, strlen(text), out, out_len);
}

static void proc_scan__parse_cgroup__v2_or_container_line__chosen(void **state)
{
	char path[256];

	assert_int_equal(parse_cgroup("0::/system.slice/sshd.service\n", path, sizeof(path)), 0);
	assert_string_equal(path, "/system.slice/sshd.service");
	/* hybrid: the v2 line wins wherever it is */
	assert_int_equal(parse_cgroup("12:pids:/a\n1:name=systemd:/b\n0::/c\n", path, sizeof(path)),
			 0);
	assert_string_equal(path, "/c");
	/* v1 only: a line with a container id beats the first line */
	assert_int_equal(
		parse_cgroup("4:memory:/\n3:cpu,cpuacct:/docker/"
			     "3f9c2b1a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8\n",
			     path, sizeof(path)),
		0);
	assert_string_equal(
		path, "/docker/3f9c2b1a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8");
	assert_int_equal(parse_cgroup("4:memory:/x\n3:cpu:/y\n", path, sizeof(path)), 0);
	assert_string_equal(path, "/x");
	/* a path with ':' in it, and bad lines around a good one */
	assert_int_equal(parse_cgroup("garbage\n:x:/no-id\n7:cpu:\n0::/a:b\n", path, sizeof(path)),
			 0);
	assert_string_equal(path, "/a:b");
}

static void proc_scan__parse_cgroup__no_line_or_too_long__error(void **state)
{
	char path[8];

	assert_int_equal(parse_cgroup("", path, sizeof(path)), -EINVAL);
	assert_int_equal(parse_cgroup("nonsense\n", path, sizeof(path)), -EINVAL);
	assert_int_equal(parse_cgroup("0::relative\n", path, sizeof(path)), -EINVAL);
	assert_int_equal(parse_cgroup("0::/much/too/long\n", path, sizeof(path)), -ENAMETOOLONG);
}

/* ---- the scan of this very process ------------------------------------- */

struct named {
	pthread_barrier_t *started, *done;
	char name[16];
	pid_t tid;
};

static void *named_thread(void *arg)
{
	struct named *n = arg;

	n->tid = syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), n->name);
	pthread_barrier_wait(n->started);
	pthread_barrier_wait(n->done);
	return NULL;
}

struct seen {
	uint32_t pid;
	char comm[16];
	char exe[PATH_MAX];
	int found;
};

static int copy_seen(void *ctx, const struct thread_info *t)
{
	struct seen *s = ctx;

	s->found = 1;
	s->pid = t->pid;
	memcpy(s->comm, t->comm, sizeof(s->comm));
	snprintf(s->exe, sizeof(s->exe), "%s", process_info__image(t->proc)->exe);
	return 0;
}

static void proc_scan__run__own_threads__registered_with_tgid_and_comm(void **state)
{
	struct thread_registry *r = *state;
	pthread_barrier_t started, done;
	struct named n[3];
	struct proc_scan_stats st;
	struct seen s;
	char self_exe[PATH_MAX];
	pthread_t th[3];
	ssize_t len;
	int i;

	pthread_barrier_init(&started, NULL, 4);
	pthread_barrier_init(&done, NULL, 4);
	for (i = 0; i < 3; i++) {
		n[i] = (struct named){.started = &started, .done = &done};
		snprintf(n[i].name, sizeof(n[i].name), "scan-worker-%d", i);
		assert_int_equal(pthread_create(&th[i], NULL, named_thread, &n[i]), 0);
	}
	pthread_barrier_wait(&started);

	assert_int_equal(proc_scan__run(r, NULL, &st), 0);
	len = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	assert_true(len > 0);
	self_exe[len] = '\0';
	for (i = 0; i < 3; i++) {
		s = (struct seen){0};
		assert_int_equal(thread_registry__visit(r, n[i].tid, copy_seen, &s), 0);
		assert_int_equal(s.pid, getpid());
		assert_string_equal(s.comm, n[i].name);
		assert_string_equal(s.exe, self_exe);
	}
	s = (struct seen){0};
	assert_int_equal(thread_registry__visit(r, getpid(), copy_seen, &s), 0);
	assert_int_equal(s.pid, getpid());
	assert_true(st.processes > 1);
	assert_true(st.threads >= 4);

	pthread_barrier_wait(&done);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&started);
	pthread_barrier_destroy(&done);
}

static void proc_scan__read_process__self__stat_and_exe(void **state)
{
	struct proc_process *p = malloc(sizeof(*p));

	assert_int_equal(proc_scan__read_process(NULL, getpid(), p, true), 0);
	assert_int_equal(p->stat.pid, getpid());
	assert_int_equal(p->stat.ppid, getppid());
	assert_true(p->stat.starttime > 0);
	assert_true(p->exe[0] == '/');
	assert_true(p->cgroup[0] == '/');
	/* the cgroup left out when the caller knows it */
	assert_int_equal(proc_scan__read_process(NULL, getpid(), p, false), 0);
	assert_true(p->exe[0] == '/');
	assert_true(p->cgroup[0] == '\0');
	assert_int_equal(proc_scan__read_process(NULL, THREAD_REGISTRY_MAX_TID + 7, p, true),
			 -ESRCH);
	free(p);
}

/* ---- a fixture /proc tree ------------------------------------------------ */

static char *fixture; /* the tree's root, fixture_tmpdir() */

static void put_stat(const char *rel, unsigned int pid, const char *comm, char state,
		     unsigned int ppid, unsigned long long start)
{
	fixture_put(fixture, rel, "%u (%s) %c %u" STAT_TAIL_FMT, pid, comm, state, ppid, start);
}

static int tree_setup(void **state)
{
	char link[512];

	fixture_registry_setup(state);
	fixture = fixture_tmpdir("procscan");
	/* 100: a good process with two threads, one of them a zombie */
	put_stat("100/stat", 100, "good", 'S', 1, 500);
	fixture_put(fixture, "100/cgroup",
		    "0::/system.slice/docker-"
		    "3f9c2b1a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8.scope\n");
	snprintf(link, sizeof(link), "%s/100/exe", fixture);
	assert_int_equal(symlink("/usr/bin/good", link), 0);
	put_stat("100/task/100/stat", 100, "good", 'S', 1, 500);
	put_stat("100/task/101/stat", 101, "worker", 'R', 1, 510);
	put_stat("100/task/102/stat", 102, "dead", 'Z', 1, 520);
	/* 200: a stat that is not one */
	fixture_put(fixture, "200/stat", "this is not a stat line\n");
	/* 300: its thread's stat went away (vanished), and one lies about its tid */
	put_stat("300/stat", 300, "shaky", 'S', 100, 600);
	mkdir(strcat(strcpy(link, fixture), "/300/task"), 0755);
	mkdir(strcat(strcpy(link, fixture), "/300/task/300"), 0755);
	put_stat("300/task/301/stat", 999, "liar", 'S', 100, 601);
	/* 400: kernel thread, no exe, no cgroup file; a name with spaces */
	put_stat("400/stat", 400, "kworker/0:1 x", 'I', 2, 5);
	put_stat("400/task/400/stat", 400, "kworker/0:1 x", 'I', 2, 5);
	/* not pids */
	fixture_put(fixture, "self/stat", "x");
	fixture_put(fixture, "0123/stat", "x");
	fixture_put(fixture, "sys/kernel", "x");
	return 0;
}

static int tree_teardown(void **state)
{
	fixture_tmpdir_remove(fixture);
	fixture = NULL;
	return fixture_registry_teardown(state);
}

static void proc_scan__run__fixture_tree__bad_entries_counted(void **state)
{
	struct proc_scan_opts opts = {.proc_root = fixture};
	struct thread_registry *r = *state;
	struct proc_scan_stats st;
	struct seen s = {0};

	assert_int_equal(proc_scan__run(r, &opts, &st), 0);
	assert_int_equal(st.processes, 3); /* 100, 300, 400 */
	assert_int_equal(st.threads, 3);   /* 100, 101, 400 */
	assert_int_equal(st.zombies, 1);   /* 102 */
	assert_int_equal(st.malformed, 2); /* 200's stat, 301 lying */
	assert_int_equal(st.vanished, 1);  /* 300/task/300 without stat */
	assert_int_equal(st.relinked, 0);

	assert_int_equal(thread_registry__visit(r, 101, copy_seen, &s), 0);
	assert_int_equal(s.pid, 100);
	assert_string_equal(s.comm, "worker");
	assert_string_equal(s.exe, "/usr/bin/good");
	assert_int_equal(thread_registry__visit(r, 102, copy_seen, &s), -ENOENT);
	s = (struct seen){0};
	assert_int_equal(thread_registry__visit(r, 400, copy_seen, &s), 0);
	assert_string_equal(s.comm, "kworker/0:1 x");
	assert_string_equal(s.exe, "");
}

static void count_tick(void *ctx)
{
	(*(int *)ctx)++;
}

static int count_thread(void *ctx, const struct thread_info *t)
{
	(*(int *)ctx)++;
	return 0;
}

static void proc_scan__run__events_applied_first__scan_does_not_undo_them(void **state)
{
	struct thread_registry *r = *state;
	int ticks = 0;
	struct proc_scan_opts opts = {
		.proc_root = fixture, .tick = count_tick, .tick_ctx = &ticks, .tick_every = 1};
	struct thread_desc td = {.tid = 100, .pid = 100, .ppid = 1, .start = 500};
	struct process_desc pd = {.pid = 100, .ppid = 1, .start = 500, .exe = "/usr/bin/good"};
	struct proc_scan_stats st;
	int n = 0;

	/* the fork of 100 was applied before the scan got to it */
	strcpy(td.comm, "renamed-later");
	assert_int_equal(thread_registry__insert(r, &td, &pd, 0), 0);
	/* 101 exited while the scan was running, and its exit came first */
	assert_int_equal(thread_registry__remove(r, 101, 510), -ENOENT);

	assert_int_equal(proc_scan__run(r, &opts, &st), 0);
	assert_int_equal(st.known, 1);
	assert_int_equal(st.stale, 1);
	assert_int_equal(st.threads, 1); /* 400 only */
	assert_int_equal(ticks, 4);	 /* one per pid directory */
	/* 100 is not duplicated and keeps what the event said */
	assert_int_equal(thread_registry__for_each_group_thread(r, 100, count_thread, &n), 0);
	assert_int_equal(n, 1);
	thread_registry__read_lock();
	assert_string_equal(thread_registry__lookup(r, 100)->comm, "renamed-later");
	assert_null(thread_registry__lookup(r, 101));
	thread_registry__read_unlock();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(proc_scan__parse_stat__real_line__fields_taken),
		cmocka_unit_test(proc_scan__parse_stat__hostile_name__last_paren_wins),
		cmocka_unit_test(proc_scan__parse_stat__malformed__einval),
		cmocka_unit_test(proc_scan__parse_cgroup__v2_or_container_line__chosen),
		cmocka_unit_test(proc_scan__parse_cgroup__no_line_or_too_long__error),
		cmocka_unit_test_setup_teardown(
			proc_scan__run__own_threads__registered_with_tgid_and_comm,
			fixture_registry_setup, fixture_registry_teardown),
		cmocka_unit_test(proc_scan__read_process__self__stat_and_exe),
		cmocka_unit_test_setup_teardown(proc_scan__run__fixture_tree__bad_entries_counted,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(
			proc_scan__run__events_applied_first__scan_does_not_undo_them, tree_setup,
			tree_teardown),
	};

	return cmocka_run_group_tests_name("proc_scan", tests, NULL, NULL);
}
