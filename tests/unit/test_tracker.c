// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/processes/tracker.c: a tracker in --pid mode on a
 * child of the test, with a real thread registry and process states.
 * tracker__start() loads the lifecycle BPF programs, so every case needs
 * root and skips, saying so, without it (or without BPF).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"
#include "processes/tracker.h"

#define WAIT_NS 1000000000ull /* what "at once" may take: one second */

struct fixture {
	struct symbolizer *sym;
	struct process_states *states;
	struct thread_registry *reg;
	struct tracker *t;
	pid_t child;
	int go_fd; /* a byte written here makes the child exec sleep */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->sym = symbolizer__new(0, 64 << 20);
	assert_non_null(f->sym);
	f->states = fixture_states_new(f->sym);
	assert_non_null(f->states);
	f->reg = fixture_registry_with_states(f->states);
	f->go_fd = -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tracker__free(f->t);
	if (f->go_fd >= 0)
		close(f->go_fd);
	if (f->child > 0) {
		kill(f->child, SIGKILL);
		waitpid(f->child, NULL, 0);
	}
	fixture_registry_free(f->reg);
	process_states__free(f->states);
	symbolizer__free(f->sym);
	free(f);
	return 0;
}

/* a child that waits for a byte on a pipe, then execs sleep */
static void start_child(struct fixture *f)
{
	int go[2];
	char c;

	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	f->child = fork();
	assert_true(f->child >= 0);
	if (!f->child) {
		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(0);
	}
	close(go[0]);
	f->go_fd = go[1];
}

/* a --pid tracker on the child; skips without root or BPF */
static void start_tracker(struct fixture *f)
{
	struct tracker_opts o = {
		.root = f->child,
		.pid_map_fd = -1,
		.reg = f->reg,
		.states = f->states,
	};
	char err[256] = "";

	f->t = tracker__start(&o, err, sizeof(err));
	if (!f->t && (errno == EPERM || errno == EACCES || errno == ENOSYS)) {
		print_message("SKIP: no BPF here: %s\n", err);
		skip();
	}
	if (!f->t)
		fail_msg("tracker__start: %s (%s)", err, strerror(errno));
}

/* the state of the child's current image, NULL while it has none (not created here) */
static struct process_state *current_state(struct fixture *f)
{
	const struct process_info *p;
	struct process_state *st = NULL;

	thread_registry__read_lock();
	p = thread_registry__lookup_process(f->reg, f->child);
	if (p)
		st = process_image__state(process_info__image(p));
	thread_registry__read_unlock();
	return st;
}

/* the current image's state of the child, once its maps hold a file named @exe */
static struct process_state *wait_for_mapping(struct fixture *f, const char *exe)
{
	uint64_t deadline = fixture_mono_ns() + WAIT_NS;
	struct process_state *st;
	const struct mappings *snap;
	bool found;
	size_t i;

	do {
		found = false;
		st = current_state(f);
		if (st) {
			pthread_mutex_lock(&st->lock);
			snap = mappings_history__latest(&st->maps);
			for (i = 0; snap && i < snap->nr && !found; i++)
				found = strstr(snap->maps[i].path, exe) != NULL;
			pthread_mutex_unlock(&st->lock);
		}
		if (found)
			return st;
		usleep(10 * 1000);
	} while (fixture_mono_ns() < deadline);
	fail_msg("no state of %d with %s mapped within a second", f->child, exe);
	return NULL;
}

static char self_exe[4096];

static void tracker__start__pid_mode__child_and_its_mappings_at_once(void **state)
{
	struct fixture *f = *state;
	struct tracker_stats ts;
	struct fixture_thread th;
	struct process_state *st;
	ssize_t n;

	fixture_require_root("tracker__start() loads the lifecycle BPF programs");
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	assert_true(n > 0);
	self_exe[n] = '\0';
	start_child(f);
	start_tracker(f);

	/* the /proc scan found the child, the seed snapshot read its maps */
	th = fixture_look(f->reg, f->child);
	assert_true(th.found);
	assert_int_equal(th.t.pid, f->child);
	st = wait_for_mapping(f, self_exe);
	assert_int_equal(st->pid, f->child);
	assert_true(st->maps_gen >= 1);
	/* --pid: the target alone */
	assert_true(tracker__wants(f->t, f->child));
	assert_false(tracker__wants(f->t, getpid()));
	assert_false(fixture_look(f->reg, getpid()).found);
	tracker__stats(f->t, &ts);
	assert_int_equal(ts.processes, 1);
	assert_true(ts.snapshots >= 1);
}

static void tracker__exec__of_the_target__new_image_state_with_its_mappings(void **state)
{
	struct fixture *f = *state;
	struct process_state *before, *after;
	uint64_t deadline;

	fixture_require_root("tracker__start() loads the lifecycle BPF programs");
	start_child(f);
	start_tracker(f);
	before = wait_for_mapping(f, "test_tracker");

	/* the lifecycle ring's exec event: a new image, snapshot taken at once */
	assert_int_equal(write(f->go_fd, "x", 1), 1);
	after = wait_for_mapping(f, "sleep");
	assert_ptr_not_equal(after, before);
	deadline = fixture_mono_ns() + WAIT_NS;
	while (strcmp(fixture_look(f->reg, f->child).img.comm, "sleep") &&
	       fixture_mono_ns() < deadline)
		usleep(10 * 1000);
	assert_string_equal(fixture_look(f->reg, f->child).img.comm, "sleep");
	/* the old image's state waits, retired, for the export */
	thread_registry__barrier(f->reg);
	assert_true(before->retired);
	assert_int_equal(process_states__nr_retired(f->states), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(tracker__start__pid_mode__child_and_its_mappings_at_once),
		T(tracker__exec__of_the_target__new_image_state_with_its_mappings),
#undef T
	};

	return cmocka_run_group_tests_name("tracker", tests, NULL, NULL);
}
