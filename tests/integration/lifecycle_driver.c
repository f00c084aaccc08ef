// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lifecycle_driver - load the lifecycle programs, scan /proc while a child
 * churns processes and threads (the scan race), check the registry agrees
 * with /proc, then make known lifecycle traffic and check the registry saw
 * it come and go: 50 children that exec /bin/true, 20 threads that rename
 * themselves.
 * Prints "ok: ..." / "FAIL: ..." lines; exit 0 when all checks pass, 77
 * (with "SKIP reason") when the programs cannot be loaded here.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "processes/lifecycle.h"
#include "processes/proc_scan.h"
#include "processes/thread_registry.h"

#define NR_CHILDREN 50
#define NR_THREADS  20

struct child {
	pid_t pid;
	bool forked, execd, exited;
	bool exec_seen_in_registry; /* the registry had the new image at exec */
	char exe[128];
};

struct renamer {
	pthread_t th;
	pid_t tid;
	char name[16];
	bool created, renamed, exited;
};

static struct thread_registry *reg;
static struct child children[NR_CHILDREN];
static struct renamer threads[NR_THREADS];
static pthread_barrier_t named, release;
static int failures;

/* every event seen, to explain a disagreement with /proc */
#define MAX_LOG 200000
static struct {
	uint32_t type, pid, tid, ptid;
	uint64_t start;
	int err;
} event_log[MAX_LOG];
static int nr_logged;

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf(ok ? "ok: " : "FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		failures++;
}

static struct child *child_of(pid_t pid)
{
	int i;

	for (i = 0; i < NR_CHILDREN; i++)
		if (children[i].pid == pid)
			return &children[i];
	return NULL;
}

static struct renamer *thread_of(pid_t tid)
{
	int i;

	for (i = 0; i < NR_THREADS; i++)
		if (threads[i].tid == tid)
			return &threads[i];
	return NULL;
}

static int copy_exe(void *ctx, const struct thread_info *t)
{
	snprintf(ctx, 128, "%s", process_info__image(t->proc)->exe);
	return 0;
}

/* runs on the polling thread, right after each record was applied */
static void on_event(void *ctx, const struct lifecycle_record *rec, int err)
{
	struct renamer *t;
	struct child *c;

	if (nr_logged < MAX_LOG) {
		event_log[nr_logged].type = rec->type;
		event_log[nr_logged].pid = rec->pid;
		event_log[nr_logged].tid = rec->tid;
		event_log[nr_logged].ptid = rec->ptid;
		event_log[nr_logged].start = rec->start_ns;
		event_log[nr_logged++].err = err;
	}
	if (rec->pid != (uint32_t)getpid() && !(c = child_of(rec->pid)))
		return;
	c = child_of(rec->pid);
	switch (rec->type) {
	case LIFECYCLE_FORK:
		if (c && rec->ppid == (uint32_t)getpid())
			c->forked = true;
		break;
	case LIFECYCLE_EXEC:
		if (c && !strcmp(rec->filename, "/bin/true")) {
			c->execd = true;
			c->exec_seen_in_registry =
				!thread_registry__visit(reg, rec->tid, copy_exe, c->exe);
		}
		break;
	case LIFECYCLE_EXIT:
		if (c && (rec->flags & LIFECYCLE_F_GROUP_DEAD))
			c->exited = true;
		if ((t = thread_of(rec->tid)))
			t->exited = true;
		break;
	case LIFECYCLE_THREAD:
		/* the event can come before the thread stored its tid */
		break;
	case LIFECYCLE_RENAME:
		if ((t = thread_of(rec->tid)) && !strcmp(rec->comm, t->name))
			t->renamed = true;
		break;
	}
}

static void *renamer_main(void *arg)
{
	struct renamer *t = arg;

	__atomic_store_n(&t->tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	pthread_setname_np(pthread_self(), t->name);
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&release);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* poll until @done says so, for at most 10 s */
static bool poll_until(struct lifecycle *l, bool (*done)(void))
{
	double end = now() + 10;

	while (!done() && now() < end)
		lifecycle__poll(l, 20);
	return done();
}

static bool children_gone(void)
{
	int i;

	for (i = 0; i < NR_CHILDREN; i++)
		if (!children[i].exited)
			return false;
	return true;
}

static bool threads_renamed(void)
{
	int i;

	for (i = 0; i < NR_THREADS; i++)
		if (!threads[i].renamed)
			return false;
	return true;
}

static bool threads_gone(void)
{
	int i;

	for (i = 0; i < NR_THREADS; i++)
		if (!threads[i].exited)
			return false;
	return true;
}

/* between two processes of the scan: apply events, and leave the churner
 * time to make some, so exits and forks land in the middle of the scan */
static void drain(void *ctx)
{
	lifecycle__consume(ctx);
	usleep(2000);
}

/* ---- the scan race: a churner runs while the scan reads /proc ---------- */

static void *churn_thread(void *arg)
{
	return arg;
}

static volatile sig_atomic_t churn_stop;

static void stop_churning(int sig)
{
	churn_stop = 1;
}

/* forks children that exit at once and starts threads that end at once,
 * until SIGUSR1; then stays alive, quiet, for the comparison */
static void churner(void)
{
	pthread_t th;
	pid_t pid;

	signal(SIGUSR1, stop_churning);
	while (!churn_stop) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		if (!pthread_create(&th, NULL, churn_thread, NULL))
			pthread_join(th, NULL);
	}
	for (;;)
		pause();
}

static void explain(uint32_t tid)
{
	int i;

	for (i = 0; i < nr_logged; i++)
		if (event_log[i].tid == tid || event_log[i].ptid == tid || event_log[i].pid == tid)
			printf("    event %d: type %u pid %u tid %u ptid %u start_ns %llu -> %d\n",
			       i, event_log[i].type, event_log[i].pid, event_log[i].tid,
			       event_log[i].ptid, (unsigned long long)event_log[i].start,
			       event_log[i].err);
}

/* start time (ticks) of task @tid and whether it is dead; -1 if gone */
static long long proc_start(uint32_t tid, char *state)
{
	struct proc_stat ps;
	char path[64], buf[PROC_SCAN_MAX_STAT];
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n <= 0 || proc_scan__parse_stat(buf, n, &ps))
		return -1;
	*state = ps.state;
	return ps.starttime;
}

#define MAX_CHECK 65536

struct snapshot {
	uint32_t tid[MAX_CHECK];
	uint64_t start[MAX_CHECK];
	int n;
};

static int snap_thread(void *ctx, const struct thread_info *t)
{
	struct snapshot *s = ctx;

	if (s->n < MAX_CHECK) {
		s->tid[s->n] = t->tid;
		s->start[s->n++] = t->start;
	}
	return 0;
}

/* a registry thread that /proc does not have alive, with that start */
static bool ghost(uint32_t tid, uint64_t start)
{
	char state = 0;
	long long st = proc_start(tid, &state);

	return st < 0 || (uint64_t)st != start || state == 'Z' || state == 'X';
}

static struct snapshot snap;

/* registry vs /proc, both ways; what disagrees gets a second look after
 * the ring is drained again (an event may be on its way) */
static void compare_with_proc(struct lifecycle *l, int *ghosts, int *missing)
{
	struct dirent *pe, *te;
	char path[300], state;
	DIR *pd, *td;
	uint32_t tid;
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		lifecycle__consume(l);
		usleep(pass ? 100000 : 0);
		lifecycle__consume(l);
		snap.n = 0;
		thread_registry__for_each_thread(reg, snap_thread, &snap);
		*ghosts = 0;
		for (i = 0; i < snap.n; i++) {
			if (!ghost(snap.tid[i], snap.start[i]))
				continue;
			(*ghosts)++;
			if (pass) {
				printf("  ghost: tid %u start %llu\n", snap.tid[i],
				       (unsigned long long)snap.start[i]);
				explain(snap.tid[i]);
			}
		}

		*missing = 0;
		pd = opendir("/proc");
		while (pd && (pe = readdir(pd))) {
			if (pe->d_name[0] < '1' || pe->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task", pe->d_name);
			td = opendir(path);
			while (td && (te = readdir(td))) {
				if (te->d_name[0] < '1' || te->d_name[0] > '9')
					continue;
				tid = strtoul(te->d_name, NULL, 10);
				if (proc_start(tid, &state) < 0 || state == 'Z' || state == 'X')
					continue;
				if (thread_registry__visit(reg, tid, copy_exe, path) == -ENOENT) {
					/* born after the drain: not missed */
					lifecycle__consume(l);
					if (thread_registry__visit(reg, tid, copy_exe, path) ==
					    -ENOENT) {
						(*missing)++;
						if (pass) {
							printf("  missing: /proc/%s/task/%u, state "
							       "%c, "
							       "start %lld\n",
							       pe->d_name, tid, state,
							       proc_start(tid, &state));
							explain(tid);
						}
					}
				}
			}
			if (td)
				closedir(td);
		}
		if (pd)
			closedir(pd);
		if (!*ghosts && !*missing)
			break;
	}
}

struct comm_check {
	const char *want;
	bool match;
};

static int check_comm(void *ctx, const struct thread_info *t)
{
	struct comm_check *c = ctx;

	c->match = !strcmp(t->comm, c->want) && t->pid == (uint32_t)getpid();
	return 0;
}

int main(void)
{
	struct lifecycle_opts opts = {.on_event = on_event};
	struct proc_scan_opts sopts = {0};
	uint64_t bpf_stats[LIFECYCLE_STAT_MAX], drops = 0;
	struct thread_registry_stats rs;
	struct lifecycle_counters lc;
	struct proc_scan_stats ss;
	struct comm_check cc;
	struct lifecycle *l;
	char err[256] = "";
	int i, n, status, ghosts, missing;
	pid_t churn[2];

	setvbuf(stdout, NULL, _IOLBF, 0);
	thread_registry__register_thread();
	reg = thread_registry__new(NULL);
	if (!reg) {
		perror("thread_registry__new");
		return 1;
	}
	/* two churners older than the ring: the registry learns about them
	 * from the scan, while events about their threads come and go, some
	 * before the scan reaches them, some after.  One stops and stays for
	 * the comparison (its leader must be there), the other is killed mid
	 * churn (none of its threads may stay) */
	for (i = 0; i < 2; i++) {
		churn[i] = fork();
		if (churn[i] == 0) {
			churner();
			_exit(0);
		}
	}
	/* the ring first, then the scan: nothing falls between the two */
	l = lifecycle__open(&opts, reg, err, sizeof(err));
	if (!l) {
		kill(churn[0], SIGKILL);
		kill(churn[1], SIGKILL);
		printf("SKIP cannot load the lifecycle programs: %s\n", err);
		return 77;
	}
	/* the scan runs while the churner forks and exits, starts and ends
	 * threads: some seen by the scan, some by events, some by both */
	usleep(20000);
	sopts.tick = drain;
	sopts.tick_ctx = l;
	sopts.tick_every = 1;
	n = proc_scan__run(reg, &sopts, &ss);
	kill(churn[0], SIGUSR1);
	kill(churn[1], SIGKILL);
	waitpid(churn[1], NULL, 0);
	check(!n,
	      "scan: %llu processes, %llu threads, %llu already known, %llu stale, "
	      "%llu vanished, %llu malformed",
	      (unsigned long long)ss.processes, (unsigned long long)ss.threads,
	      (unsigned long long)ss.known, (unsigned long long)ss.stale,
	      (unsigned long long)ss.vanished, (unsigned long long)ss.malformed);
	check(!thread_registry__visit(reg, getpid(), copy_exe, err),
	      "scan found the driver itself");
	compare_with_proc(l, &ghosts, &missing);
	check(!ghosts && !missing,
	      "after a scan under churn the registry agrees with /proc: %d threads, %d dead ones "
	      "left in it, %d live ones missing",
	      snap.n, ghosts, missing);
	kill(churn[0], SIGKILL);
	waitpid(churn[0], NULL, 0);

	/* 50 short-lived children exec'ing /bin/true */
	for (i = 0; i < NR_CHILDREN; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		children[i].pid = pid;
	}
	for (i = 0; i < NR_CHILDREN; i++) {
		waitpid(children[i].pid, &status, 0);
		check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d ran /bin/true",
		      children[i].pid);
	}
	check(poll_until(l, children_gone), "all %d children's exits seen", NR_CHILDREN);
	for (i = n = 0; i < NR_CHILDREN; i++)
		n += children[i].forked && children[i].execd && children[i].exited;
	check(n == NR_CHILDREN, "%d/%d children seen fork, exec /bin/true, exit", n, NR_CHILDREN);
	for (i = n = 0; i < NR_CHILDREN; i++) {
		const char *e = children[i].exe;
		size_t len = strlen(e);

		n += children[i].exec_seen_in_registry && len >= 5 && !strcmp(e + len - 5, "/true");
	}
	check(n == NR_CHILDREN, "%d/%d exec images in the registry name .../true", n, NR_CHILDREN);
	for (i = n = 0; i < NR_CHILDREN; i++)
		n += thread_registry__visit(reg, children[i].pid, copy_exe, err) == -ENOENT;
	check(n == NR_CHILDREN, "%d/%d children gone from the registry", n, NR_CHILDREN);

	/* 20 threads renaming themselves */
	pthread_barrier_init(&named, NULL, NR_THREADS + 1);
	pthread_barrier_init(&release, NULL, NR_THREADS + 1);
	for (i = 0; i < NR_THREADS; i++) {
		snprintf(threads[i].name, sizeof(threads[i].name), "lc-rename-%02d", i);
		pthread_create(&threads[i].th, NULL, renamer_main, &threads[i]);
	}
	pthread_barrier_wait(&named);
	check(poll_until(l, threads_renamed), "all %d renames seen", NR_THREADS);
	for (i = n = 0; i < NR_THREADS; i++) {
		cc = (struct comm_check){.want = threads[i].name};
		thread_registry__visit(reg, threads[i].tid, check_comm, &cc);
		n += cc.match;
	}
	check(n == NR_THREADS, "%d/%d live threads carry their new name in the registry", n,
	      NR_THREADS);
	pthread_barrier_wait(&release);
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(threads[i].th, NULL);
	check(poll_until(l, threads_gone), "all %d thread exits seen", NR_THREADS);
	for (i = n = 0; i < NR_THREADS; i++)
		n += thread_registry__visit(reg, threads[i].tid, check_comm, &cc) == -ENOENT;
	check(n == NR_THREADS, "%d/%d threads gone from the registry", n, NR_THREADS);
	check(!thread_registry__visit(reg, getpid(), copy_exe, err),
	      "the driver's process outlived its threads");

	/* every exit was reclaimed once readers (none here) left */
	thread_registry__barrier(reg);
	thread_registry__stats(reg, &rs);
	check(rs.retired == rs.reclaimed, "reclaimed %llu of %llu retired objects",
	      (unsigned long long)rs.reclaimed, (unsigned long long)rs.retired);

	lifecycle__counters(l, &lc);
	check(lc.malformed == 0 && lc.failed == 0,
	      "records: %llu read, %llu applied, %llu duplicate, %llu stale, %llu unknown, "
	      "%llu malformed, %llu failed; exec details from /proc %llu, missed %llu",
	      (unsigned long long)lc.records, (unsigned long long)lc.applied,
	      (unsigned long long)lc.duplicate, (unsigned long long)lc.stale,
	      (unsigned long long)lc.unknown, (unsigned long long)lc.malformed,
	      (unsigned long long)lc.failed, (unsigned long long)lc.proc_reads,
	      (unsigned long long)lc.proc_misses);
	n = lifecycle__read_stats(l, bpf_stats);
	for (i = LIFECYCLE_STAT_DROP_FIRST; i <= LIFECYCLE_STAT_DROP_LAST; i++)
		drops += bpf_stats[i];
	check(!n && bpf_stats[LIFECYCLE_STAT_EVENTS] == bpf_stats[LIFECYCLE_STAT_EMITTED] + drops,
	      "BPF: %llu events = %llu emitted + %llu dropped (%s %llu, %s %llu)",
	      (unsigned long long)bpf_stats[LIFECYCLE_STAT_EVENTS],
	      (unsigned long long)bpf_stats[LIFECYCLE_STAT_EMITTED], (unsigned long long)drops,
	      lifecycle_stat_name(LIFECYCLE_STAT_DROP_RING_FULL),
	      (unsigned long long)bpf_stats[LIFECYCLE_STAT_DROP_RING_FULL],
	      lifecycle_stat_name(LIFECYCLE_STAT_FILENAME_ERR),
	      (unsigned long long)bpf_stats[LIFECYCLE_STAT_FILENAME_ERR]);

	lifecycle__free(l);
	thread_registry__free(reg);
	thread_registry__unregister_thread();
	printf("%s\n",
	       failures ? "lifecycle driver: FAILED" : "lifecycle driver: all checks passed");
	return failures ? 1 : 0;
}
