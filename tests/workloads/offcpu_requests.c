// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * offcpu_requests - a server thread whose requests wait in known ways, for
 * the off-CPU profile (tests/integration/test_offcpu.sh, bench/offcpu.sh).
 *
 * The main thread serves requests A, B, C, D, E in turn.  Each request is a
 * span (ctxprof_set_context(): the span id's high byte says the kind, 0xa1,
 * 0xb2, 0xc3, 0xd4, 0xe5; its root is the span id with 0xf0 in the second
 * byte), burns a known amount of thread CPU time in burn_cpu(), then waits
 * once:
 *   A wait_lock()   pthread_mutex_lock() of a mutex a helper thread holds
 *                   until ~20 ms after the server says it is about to block
 *   B wait_sleep()  nanosleep 15 ms
 *   C wait_pipe()   read() of a pipe a helper writes ~25 ms after being told
 *   D wait_fsync()  pwrite() of --fsync-kib KiB then fsync(), in --dir
 *   E wait_socket() recv() on a loopback TCP connection a helper sends one
 *                   byte on ~12 ms after being told
 * then clears the context and sleeps 10 ms outside any span
 * (between_requests()).  The helpers are told through semaphores, and every
 * handshake that can block happens outside the span, so the only off-CPU
 * time inside a span is the wait itself (telling a helper to go, inside the
 * span just before the wait, may hand it the CPU: a preemption, not a wait,
 * and outside the measured call).
 *
 * Measured with the workload's own clocks, per kind: wall and thread CPU
 * time inside the span, the wait's wall time (clock_gettime around the
 * blocking call), the thread CPU time spent inside that call (so that
 * wait_ns - wait_cpu_ns is the time the thread was off the CPU), the
 * runqueue delay inside the span (/proc/thread-self/schedstat), the
 * shortest wait.  Printed at exit, one line per kind:
 *   kind A span 0xa1 wall_ns X cpu_ns Y wait_ns Z count N wait_cpu_ns W runq_ns R min_wait_ns M
 * ("span 0xa1": the high byte of every span id of that kind), then
 *   between wall_ns X count N
 *   server_tid T
 * and one line per request (the first SPAN_LOG of them), its wait by the
 * same clocks, with the involuntary switches (getrusage) and the runqueue
 * delay inside the blocking call: with no involuntary switch, the call's
 * wall time less its CPU time is exactly the time the thread was off the
 * CPU in it from blocking to running again, its wake-up's runqueue delay
 * included:
 *   span ID kind A wait_ns W wait_cpu_ns C involuntary N runq_ns R voluntary V begin_ns B end_ns E
 * cpu_begin_ns U (V: the times it blocked in the call; B, E: the call's start and end by
 * CLOCK_MONOTONIC; U: its CPU clock at the start, C + U at the end: the
 * reads tests/workloads/cpuclock/cpuclock_skew sees)
 *
 * --storm: two threads ping-pong one byte through a pair of pipes as fast as
 * they can (each round trip: two blocking reads), each in a span of its own
 * (0x51...01 and 0x51...02).  Each thread measures its wall and CPU time over
 * the storm (blocked_ns = wall - cpu) and its switches (getrusage); printed:
 *   storm_tid I T   (before "ready", each thread's tid)
 *   storm_thread I tid T wall_ns W cpu_ns C blocked_ns B voluntary V involuntary N
 *     runq_ns R begin_ns T0   (T0: CLOCK_MONOTONIC at its start; it ends at T0 + W)
 *   storm round_trips N seconds S per_second P blocked_ns B
 * --cpu same|split|none: both storm threads on one CPU (default), on two
 * CPUs, or not pinned.
 *
 * --sleepers N: N threads, each in a span of its own (0x52...0i), sleeping
 * --sleep-ms M (default 2) in a loop: waits that meet the default threshold,
 * for bench/offcpu.sh; printed: "sleepers N sleeps S seconds T".
 *
 * --wait-signal: set up every thread, print "ready", then wait for SIGUSR1
 * before the first request, so a profiler attached in between sees the whole
 * measured window; the process exits when the work is done.
 *
 * Usage: offcpu_requests [--seconds S] [--dir DIR] [--fsync-kib N] [--wait-signal]
 *                        [--storm [--cpu same|split|none]] [--sleepers N [--sleep-ms M]]
 * (default: 6 s, /tmp, 256 KiB)
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "ctxprof.h"

#define NOINLINE __attribute__((noinline))
#define MS	 1000000ull

enum { KIND_A, KIND_B, KIND_C, KIND_D, KIND_E, NR_KINDS };

static const uint64_t kind_byte[NR_KINDS] = {0xa1, 0xb2, 0xc3, 0xd4, 0xe5};
/* thread CPU time each kind burns inside its span, then its wait */
static const uint64_t burn_ns[NR_KINDS] = {6 * MS, 4 * MS, 8 * MS, 2 * MS, 3 * MS};
#define LOCK_HOLD_NS	(20 * MS)
#define SLEEP_NS	(15 * MS)
#define PIPE_DELAY_NS	(25 * MS)
#define SOCKET_DELAY_NS (12 * MS)
#define BETWEEN_NS	(10 * MS)
/* requests logged one by one (a minute of them) */
#define SPAN_LOG 4096

struct kind_stats {
	uint64_t wall_ns, cpu_ns, wait_ns, wait_cpu_ns, runq_ns, min_wait_ns, count;
};

/* one request's wait, by the workload's clocks */
struct span_wait {
	uint64_t span, wait_ns, wait_cpu_ns, runq_ns, begin_ns, end_ns, cpu_begin_ns;
	long involuntary, voluntary;
	int kind;
};

static struct kind_stats stats[NR_KINDS];
static struct span_wait span_log[SPAN_LOG];
static unsigned int nr_span_log;
static uint64_t between_ns, between_count;
static double seconds = 6;
static const char *dir = "/tmp";
static unsigned int fsync_kib = 256;
static volatile uint64_t sink;
static atomic_int done;
static void *start_barrier; /* the sleepers' start barrier */

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t lock_take, lock_taken, lock_waiting, pipe_go, sock_go;
static int req_pipe[2];
static int sock_fd[2] = {-1, -1}; /* the server's end, the helper's */
static int data_fd = -1;
static char data_path[4096];
static char *data_buf;
static int schedstat_fd = -1;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* the runqueue delay so far of the thread whose schedstat file is @fd, 0
 * without schedstats */
static uint64_t runq_ns(int fd)
{
	unsigned long long run, delay;
	char buf[128];
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return 0;
	return delay;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {ns / 1000000000ull, ns % 1000000000ull};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void die(const char *what)
{
	fprintf(stderr, "offcpu_requests: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* spin until the calling thread has used @ns more CPU time */
static NOINLINE void burn_cpu(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;
	volatile uint64_t x = 0;
	int i;

	while (thread_cpu_ns() < end)
		for (i = 0; i < 2000; i++)
			x = x + 1;
	sink += x;
}

/* the helper holding held_lock: takes it when asked, lets it go ~20 ms after
 * the server said it is about to block on it */
static void *lock_helper(void *arg)
{
	ctxprof_register_thread();
	pthread_setname_np(pthread_self(), "lock_helper");
	for (;;) {
		sem_wait(&lock_take);
		if (atomic_load(&done))
			return NULL;
		pthread_mutex_lock(&held_lock);
		sem_post(&lock_taken);
		sem_wait(&lock_waiting);
		sleep_ns(LOCK_HOLD_NS);
		pthread_mutex_unlock(&held_lock);
	}
}

/* the writer of the request pipe: one byte ~25 ms after being told */
static void *pipe_helper(void *arg)
{
	char c = 'x';

	ctxprof_register_thread();
	pthread_setname_np(pthread_self(), "pipe_helper");
	for (;;) {
		sem_wait(&pipe_go);
		if (atomic_load(&done))
			return NULL;
		sleep_ns(PIPE_DELAY_NS);
		if (write(req_pipe[1], &c, 1) != 1)
			die("write to the request pipe");
	}
}

/*
 * The current request's blocking call by the workload's clocks, taken
 * around the call alone (call_begin(), call_end()): the handshake with a
 * helper before it (a sem_post() that may hand the CPU to the helper) is
 * not the wait.
 */
static struct {
	uint64_t wall_ns, cpu_ns, runq_ns;
	long involuntary, voluntary;
	uint64_t w0, w1, c0, q0;
	long v0, vv0;
} call;

static void call_begin(void)
{
	struct rusage r;

	getrusage(RUSAGE_THREAD, &r);
	call.v0 = r.ru_nivcsw;
	call.vv0 = r.ru_nvcsw;
	call.q0 = runq_ns(schedstat_fd);
	call.c0 = thread_cpu_ns();
	call.w0 = wall_ns();
}

static void call_end(void)
{
	uint64_t w1 = wall_ns(), c1 = thread_cpu_ns();
	struct rusage r;

	call.w1 = w1;
	call.wall_ns = w1 - call.w0;
	call.cpu_ns = c1 - call.c0;
	call.runq_ns = runq_ns(schedstat_fd) - call.q0;
	getrusage(RUSAGE_THREAD, &r);
	call.involuntary = r.ru_nivcsw - call.v0;
	call.voluntary = r.ru_nvcsw - call.vv0;
}

/* the sender on the request socket: one byte ~12 ms after being told */
static void *socket_helper(void *arg)
{
	char c = 's';

	ctxprof_register_thread();
	pthread_setname_np(pthread_self(), "socket_helper");
	for (;;) {
		sem_wait(&sock_go);
		if (atomic_load(&done))
			return NULL;
		sleep_ns(SOCKET_DELAY_NS);
		if (send(sock_fd[1], &c, 1, 0) != 1)
			die("send on the request socket");
	}
}

/* a connected loopback TCP pair into sock_fd */
static void connect_sockets(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("listen on loopback");
	sock_fd[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock_fd[1] < 0 || connect(sock_fd[1], (struct sockaddr *)&a, sizeof(a)))
		die("connect on loopback");
	sock_fd[0] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (sock_fd[0] < 0)
		die("accept");
	setsockopt(sock_fd[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	close(l);
}

/* outside any span: have the helper hold the lock before the request starts */
static NOINLINE void prepare_lock(void)
{
	sem_post(&lock_take);
	sem_wait(&lock_taken);
}

static NOINLINE void wait_lock(void)
{
	sem_post(&lock_waiting);
	call_begin();
	pthread_mutex_lock(&held_lock);
	call_end();
	pthread_mutex_unlock(&held_lock);
}

static NOINLINE void wait_sleep(void)
{
	struct timespec ts = {0, SLEEP_NS};

	call_begin();
	nanosleep(&ts, NULL);
	call_end();
}

static NOINLINE void wait_pipe(void)
{
	char c;

	sem_post(&pipe_go);
	call_begin();
	if (read(req_pipe[0], &c, 1) != 1)
		die("read of the request pipe");
	call_end();
}

static NOINLINE void wait_fsync(void)
{
	call_begin();
	if (pwrite(data_fd, data_buf, fsync_kib * 1024ull, 0) != (ssize_t)(fsync_kib * 1024ull))
		die("pwrite");
	if (fsync(data_fd))
		die("fsync");
	call_end();
}

static NOINLINE void wait_socket(void)
{
	char c;

	sem_post(&sock_go);
	call_begin();
	if (recv(sock_fd[0], &c, 1, 0) != 1)
		die("recv on the request socket");
	call_end();
}

static NOINLINE void between_requests(void)
{
	uint64_t t0 = wall_ns();

	sleep_ns(BETWEEN_NS);
	between_ns += wall_ns() - t0;
	between_count++;
}

static void serve(int kind, uint64_t n)
{
	static void (*const waits[NR_KINDS])(void) = {wait_lock, wait_sleep, wait_pipe, wait_fsync,
						      wait_socket};
	uint64_t span = kind_byte[kind] << 56 | n;
	uint64_t root = span | 0x00f0000000000000ull;
	uint64_t q0, q1, t0, t1, c0, c1;
	struct kind_stats *s = &stats[kind];

	if (kind == KIND_A)
		prepare_lock();
	q0 = runq_ns(schedstat_fd);
	ctxprof_set_context(span, root);
	t0 = wall_ns();
	c0 = thread_cpu_ns();

	burn_cpu(burn_ns[kind]);
	waits[kind]();

	c1 = thread_cpu_ns();
	t1 = wall_ns();
	ctxprof_clear_context();
	q1 = runq_ns(schedstat_fd);

	s->wall_ns += t1 - t0;
	s->cpu_ns += c1 - c0;
	s->wait_ns += call.wall_ns;
	s->wait_cpu_ns += call.cpu_ns;
	s->runq_ns += q1 - q0;
	if (!s->count || call.wall_ns < s->min_wait_ns)
		s->min_wait_ns = call.wall_ns;
	s->count++;
	if (nr_span_log < SPAN_LOG)
		span_log[nr_span_log++] = (struct span_wait){
			.span = span,
			.kind = kind,
			.wait_ns = call.wall_ns,
			.wait_cpu_ns = call.cpu_ns,
			.runq_ns = call.runq_ns,
			.involuntary = call.involuntary,
			.voluntary = call.voluntary,
			.begin_ns = call.w0,
			.end_ns = call.w1,
			.cpu_begin_ns = call.c0,
		};
}

static void run_requests(void)
{
	pthread_t lock_t, pipe_t, sock_t;

	if (sem_init(&lock_take, 0, 0) || sem_init(&lock_taken, 0, 0) ||
	    sem_init(&lock_waiting, 0, 0) || sem_init(&pipe_go, 0, 0) || sem_init(&sock_go, 0, 0))
		die("sem_init");
	if (pipe(req_pipe))
		die("pipe");
	snprintf(data_path, sizeof(data_path), "%s/offcpu_requests.%d.dat", dir, (int)getpid());
	data_fd = open(data_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (data_fd < 0)
		die(data_path);
	data_buf = malloc(fsync_kib * 1024ull);
	if (!data_buf)
		die("malloc");
	memset(data_buf, 'd', fsync_kib * 1024ull);
	schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	connect_sockets();
	if (pthread_create(&lock_t, NULL, lock_helper, NULL) ||
	    pthread_create(&pipe_t, NULL, pipe_helper, NULL) ||
	    pthread_create(&sock_t, NULL, socket_helper, NULL))
		die("pthread_create");
	ctxprof_register_thread();
	pthread_setname_np(pthread_self(), "server");
	printf("server_tid %ld\n", (long)syscall(SYS_gettid));
	printf("ready\n");
	fflush(stdout);
}

static void finish_requests(void)
{
	int k;

	atomic_store(&done, 1);
	sem_post(&lock_take);
	sem_post(&pipe_go);
	sem_post(&sock_go);
	unlink(data_path);
	for (k = 0; k < NR_KINDS; k++)
		printf("kind %c span 0x%02llx wall_ns %llu cpu_ns %llu wait_ns %llu count %llu "
		       "wait_cpu_ns %llu runq_ns %llu min_wait_ns %llu\n",
		       'A' + k, (unsigned long long)kind_byte[k],
		       (unsigned long long)stats[k].wall_ns, (unsigned long long)stats[k].cpu_ns,
		       (unsigned long long)stats[k].wait_ns, (unsigned long long)stats[k].count,
		       (unsigned long long)stats[k].wait_cpu_ns,
		       (unsigned long long)stats[k].runq_ns,
		       (unsigned long long)stats[k].min_wait_ns);
	printf("between wall_ns %llu count %llu\n", (unsigned long long)between_ns,
	       (unsigned long long)between_count);
	for (k = 0; k < (int)nr_span_log; k++)
		printf("span %016llx kind %c wait_ns %llu wait_cpu_ns %llu involuntary %ld "
		       "runq_ns %llu voluntary %ld begin_ns %llu end_ns %llu cpu_begin_ns %llu\n",
		       (unsigned long long)span_log[k].span, 'A' + span_log[k].kind,
		       (unsigned long long)span_log[k].wait_ns,
		       (unsigned long long)span_log[k].wait_cpu_ns, span_log[k].involuntary,
		       (unsigned long long)span_log[k].runq_ns, span_log[k].voluntary,
		       (unsigned long long)span_log[k].begin_ns,
		       (unsigned long long)span_log[k].end_ns,
		       (unsigned long long)span_log[k].cpu_begin_ns);
}

/* --- the switch storm */

struct storm_thread {
	int index;
	int cpu;     /* -1: not pinned */
	int in, out; /* read end, write end */
	pthread_barrier_t *known, *start;
	long tid;
	uint64_t begin_ns, wall_ns, cpu_ns, round_trips, runq_ns;
	long voluntary, involuntary;
};

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "offcpu_requests: could not pin to CPU %d\n", cpu);
}

static NOINLINE void storm_ping(struct storm_thread *st)
{
	char c = 'p';

	while (!atomic_load_explicit(&done, memory_order_relaxed)) {
		if (write(st->out, &c, 1) != 1 || read(st->in, &c, 1) != 1)
			die("storm pipe");
		st->round_trips++;
	}
	c = 'q';
	if (write(st->out, &c, 1) != 1)
		die("storm pipe");
}

static NOINLINE void storm_pong(struct storm_thread *st)
{
	char c;

	for (;;) {
		if (read(st->in, &c, 1) != 1)
			die("storm pipe");
		if (c == 'q')
			return;
		if (write(st->out, &c, 1) != 1)
			die("storm pipe");
	}
}

static void *storm_thread(void *arg)
{
	struct storm_thread *st = arg;
	uint64_t span = 0x5100000000000000ull | (st->index + 1);
	uint64_t t0, c0, q0;
	struct rusage ru;
	int fd;

	ctxprof_register_thread();
	pthread_setname_np(pthread_self(), st->index ? "storm_pong" : "storm_ping");
	pin(st->cpu);
	st->tid = syscall(SYS_gettid);
	fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	pthread_barrier_wait(st->known);
	pthread_barrier_wait(st->start);

	ctxprof_set_context(span, span | 0x00f0000000000000ull);
	q0 = runq_ns(fd);
	t0 = wall_ns();
	c0 = thread_cpu_ns();
	st->begin_ns = t0;
	if (st->index)
		storm_pong(st);
	else
		storm_ping(st);
	st->cpu_ns = thread_cpu_ns() - c0;
	st->wall_ns = wall_ns() - t0;
	st->runq_ns = runq_ns(fd) - q0;
	ctxprof_clear_context();
	getrusage(RUSAGE_THREAD, &ru);
	st->voluntary = ru.ru_nvcsw;
	st->involuntary = ru.ru_nivcsw;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int run_storm(const char *cpu_mode, sigset_t *wait_set)
{
	struct storm_thread st[2] = {{.index = 0}, {.index = 1}};
	int p01[2], p10[2], i, cpu = sched_getcpu(), ncpu = sysconf(_SC_NPROCESSORS_ONLN), sig;
	pthread_barrier_t known, start;
	pthread_t t[2];
	uint64_t blocked = 0;

	if (pipe(p01) || pipe(p10))
		die("pipe");
	if (pthread_barrier_init(&known, NULL, 3) || pthread_barrier_init(&start, NULL, 3))
		die("pthread_barrier_init");
	st[0].in = p10[0], st[0].out = p01[1];
	st[1].in = p01[0], st[1].out = p10[1];
	for (i = 0; i < 2; i++) {
		st[i].known = &known;
		st[i].start = &start;
		if (!strcmp(cpu_mode, "same"))
			st[i].cpu = cpu < 0 ? 0 : cpu;
		else if (!strcmp(cpu_mode, "split") && ncpu >= 2)
			st[i].cpu = i;
		else
			st[i].cpu = -1;
		if (pthread_create(&t[i], NULL, storm_thread, &st[i]))
			die("pthread_create");
	}
	/* their tids before "ready": a test traces them from there */
	pthread_barrier_wait(&known);
	for (i = 0; i < 2; i++)
		printf("storm_tid %d %ld\n", i, st[i].tid);
	printf("ready\n");
	fflush(stdout);
	if (wait_set)
		sigwait(wait_set, &sig);
	pthread_barrier_wait(&start);
	sleep_ns(seconds * 1e9);
	atomic_store(&done, 1);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 2; i++) {
		uint64_t b = st[i].wall_ns > st[i].cpu_ns ? st[i].wall_ns - st[i].cpu_ns : 0;

		blocked += b;
		printf("storm_thread %d tid %ld cpu %d wall_ns %llu cpu_ns %llu blocked_ns %llu "
		       "voluntary %ld involuntary %ld runq_ns %llu begin_ns %llu\n",
		       i, st[i].tid, st[i].cpu, (unsigned long long)st[i].wall_ns,
		       (unsigned long long)st[i].cpu_ns, (unsigned long long)b, st[i].voluntary,
		       st[i].involuntary, (unsigned long long)st[i].runq_ns,
		       (unsigned long long)st[i].begin_ns);
	}
	printf("storm round_trips %llu seconds %.3f per_second %.0f blocked_ns %llu\n",
	       (unsigned long long)st[0].round_trips, st[0].wall_ns / 1e9,
	       st[0].wall_ns ? st[0].round_trips / (st[0].wall_ns / 1e9) : 0.0,
	       (unsigned long long)blocked);
	return 0;
}

/* --- the sleepers */

static double sleep_ms = 2;
static atomic_ullong sleeps;

static NOINLINE void sleep_loop(void)
{
	while (!atomic_load_explicit(&done, memory_order_relaxed)) {
		sleep_ns(sleep_ms * 1e6);
		atomic_fetch_add_explicit(&sleeps, 1, memory_order_relaxed);
	}
}

static void *sleeper(void *arg)
{
	uint64_t span = 0x5200000000000000ull | (uintptr_t)arg;
	pthread_barrier_t *start = start_barrier;

	ctxprof_register_thread();
	pthread_setname_np(pthread_self(), "sleeper");
	pthread_barrier_wait(start);
	ctxprof_set_context(span, span | 0x00f0000000000000ull);
	sleep_loop();
	ctxprof_clear_context();
	return NULL;
}

static int run_sleepers(int n, sigset_t *wait_set)
{
	pthread_barrier_t start;
	pthread_t t[64];
	uint64_t t0;
	int i, sig;

	if (n < 1 || n > 64 || pthread_barrier_init(&start, NULL, n + 1))
		return 2;
	start_barrier = &start;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, sleeper, (void *)(uintptr_t)(i + 1)))
			die("pthread_create");
	printf("ready\n");
	fflush(stdout);
	if (wait_set)
		sigwait(wait_set, &sig);
	pthread_barrier_wait(&start);
	t0 = wall_ns();
	sleep_ns(seconds * 1e9);
	atomic_store(&done, 1);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("sleepers %d sleeps %llu seconds %.3f\n", n,
	       (unsigned long long)atomic_load(&sleeps), (wall_ns() - t0) / 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cpu_mode = "same";
	int storm = 0, wait_signal = 0, sleepers = 0, i, k, sig;
	uint64_t n, end;
	sigset_t set;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--fsync-kib") && i + 1 < argc)
			fsync_kib = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu_mode = argv[++i];
		else if (!strcmp(argv[i], "--sleepers") && i + 1 < argc)
			sleepers = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc)
			sleep_ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "--storm"))
			storm = 1;
		else if (!strcmp(argv[i], "--wait-signal"))
			wait_signal = 1;
		else {
			fprintf(stderr,
				"usage: %s [--seconds S] [--dir DIR] [--fsync-kib N] "
				"[--wait-signal] [--storm [--cpu same|split|none]] "
				"[--sleepers N [--sleep-ms M]]\n",
				argv[0]);
			return 2;
		}
	}
	if (seconds <= 0 || fsync_kib < 1 || fsync_kib > 65536)
		return 2;
	/* blocked before any thread exists: every thread inherits the mask and
	 * a SIGUSR1 sent early stays pending for sigwait() */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (storm)
		return run_storm(cpu_mode, wait_signal ? &set : NULL);
	if (sleepers)
		return run_sleepers(sleepers, wait_signal ? &set : NULL);

	run_requests();
	if (wait_signal)
		sigwait(&set, &sig);
	end = wall_ns() + seconds * 1e9;
	for (n = 1; wall_ns() < end; n++) {
		for (k = 0; k < NR_KINDS; k++) {
			serve(k, n);
			between_requests();
		}
	}
	finish_requests();
	return 0;
}
