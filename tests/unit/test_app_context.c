// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/appctx/app_context.c, the collector's reader of the
 * libctxprof region of another process.
 *
 * The other process is a child of the test: it creates its region with the
 * real library (two registered threads, contexts, a tag), optionally makes
 * it hostile, reports what the collector should find, then obeys one-byte
 * commands on a pipe.  The sampler's tid -> slot map is a real BPF hash map
 * (no program: nothing samples).  Root only: opening a region through
 * /proc/PID/map_files needs CAP_SYS_ADMIN, and so does the map.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <cmocka.h>

#include "ctxprof.h"
#include "ctxprof_abi.h"
#include "internal.h"
#include "appctx/app_context.h"
#include "processes/proc_maps.h"
#include "appctx/ctxprof_region.h"
#include "records.h"
#include "fixtures.h"

enum child_mode {
	CHILD_VALID,	 /* a region as the library makes it */
	CHILD_UNSEALED,	 /* plus look-alikes: an unsealed copy, a sealed one of zeros */
	CHILD_FOREIGN,	 /* the worker's slot claims the parent's pid as its tid */
	CHILD_BAD_LANES, /* the main thread's lanes claim impossible queues */
	/* every slot past the two threads' is Active and claims ... */
	CHILD_BOGUS_SLOTS, /* ... a tid no task has (MANY_SLOTS slots) */
	CHILD_DUP_CLAIMS,  /* ... the main thread's tid */
	CHILD_NEW_PIDNS,   /* CHILD_VALID, in a pid namespace of its own (a container) */
};

#define MANY_SLOTS     2048u
#define BOGUS_TID_BASE 0x7fff0000u /* above any pid_max */

/* child commands, each acknowledged with one byte */
#define CMD_UNREGISTER 'u' /* the worker leaves its slot (and lives on) */
#define CMD_REGISTER   'r' /* the worker takes a slot again: its old one, recycled */
#define CMD_GARBAGE    'g' /* random bytes over the slots and rings */
#define CMD_BUMP_GEN   'b' /* the worker's slot: same claim, next generation */
#define CMD_SHUTDOWN   's' /* ctxprof_shutdown(), then SHUTDOWN_SPANS spans refused */
#define SHUTDOWN_SPANS 3
#define CMD_QUIT       'q'

/* what the child tells the parent once its region is ready */
struct child_report {
	uint32_t tids[2];  /* main thread, worker */
	uint64_t slots[2]; /* their slots' addresses in the child */
	uint32_t tag;	   /* ("service", "checkout") */
	uint32_t foreign;  /* CHILD_FOREIGN: the tid the worker's slot claims */
};

struct fixture {
	pid_t child;
	pid_t reaper; /* CHILD_NEW_PIDNS: the child's parent, our child */
	int cmd_fd, rep_fd;
	struct child_report rep;
	int map_fd;
	struct app_context *a;
	struct app_region *regions;
};

/* ---- the child --------------------------------------------------------- */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char cmd; /* for the worker; 0: none */
	bool ready, done;
	uint32_t tid;
	uint64_t slot;
} worker = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void *worker_main(void *arg)
{
	char cmd = 0;

	if (ctxprof_register_thread())
		_exit(10);
	ctxprof_set_context(21, 12);
	pthread_mutex_lock(&worker.lock);
	worker.tid = gettid();
	worker.slot = (uint64_t)(uintptr_t)ctxprof__current_thread()->slot;
	worker.ready = true;
	pthread_cond_broadcast(&worker.cond);
	while (cmd != CMD_QUIT) {
		while (!worker.cmd)
			pthread_cond_wait(&worker.cond, &worker.lock);
		cmd = worker.cmd;
		worker.cmd = 0;
		if (cmd == CMD_UNREGISTER)
			ctxprof_unregister_thread();
		if (cmd == CMD_REGISTER && !ctxprof_register_thread())
			ctxprof_set_context(22, 12);
		worker.done = true;
		pthread_cond_broadcast(&worker.cond);
	}
	pthread_mutex_unlock(&worker.lock);
	return NULL;
}

static void worker_do(char cmd)
{
	pthread_mutex_lock(&worker.lock);
	worker.done = false;
	worker.cmd = cmd;
	pthread_cond_broadcast(&worker.cond);
	while (!worker.done)
		pthread_cond_wait(&worker.cond, &worker.lock);
	pthread_mutex_unlock(&worker.lock);
}

/* a memfd named like the library's, @size bytes of @from (zeros: NULL) */
static void look_alike(const void *from, size_t size, bool sealed)
{
	int fd = memfd_create(CTXPROF_REGION_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p;

	if (fd < 0 || ftruncate(fd, size))
		_exit(11);
	if (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		_exit(12);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		_exit(13);
	if (from)
		memcpy(p, from, size);
	close(fd); /* the mapping keeps it */
}

/* the main thread's lanes: a submit queue of 1000 entries, a ring that does not exist */
static void bad_lanes(void)
{
	struct ctxprof_slot *s = ctxprof__current_thread()->slot;
	struct ctxprof_lane *index = &s->lanes[CTXPROF_LANE_INDEX];
	struct ctxprof_lane *detail = &s->lanes[CTXPROF_LANE_DETAIL];

	index->submit_tail = index->submit_head + 1000;
	detail->submit_queue[detail->submit_tail % CTXPROF_LANE_QUEUE_CAP] = 99;
	detail->submit_tail++;
}

/* every slot past the first two Active (generation 1), claiming @tid, or
 * each a tid no task has when @tid is 0 */
static void claim_free_slots(uint32_t tid)
{
	unsigned char *base = ctxprof__region(NULL);
	struct ctxprof_region_header *h = (void *)base;
	uint32_t i;

	for (i = 2; i < h->max_threads; i++) {
		struct ctxprof_slot *s =
			(void *)(base + CTXPROF_SLOTS_OFFSET + (size_t)i * sizeof(*s));

		s->tid = tid ? tid : BOGUS_TID_BASE + i;
		s->state_gen = CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_ACTIVE, 1);
	}
	h->thread_count = h->max_threads;
}

/* the worker's slot stays Active with its claim, in the next generation */
static void bump_generation(void)
{
	struct ctxprof_slot *s = (struct ctxprof_slot *)(uintptr_t)worker.slot;

	s->state_gen = CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_ACTIVE,
					      CTXPROF_SLOT_GENERATION(s->state_gen) + 1);
}

/* random bytes past slot 0's context, and a random thread count */
static void garbage(uint64_t *x)
{
	size_t size, from = CTXPROF_SLOTS_OFFSET + 64;
	unsigned char *base = ctxprof__region(&size);
	struct ctxprof_region_header *h = (void *)base;
	int i;

	for (i = 0; i < 64; i++) {
		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		base[from + *x % (size - from)] = *x >> 56;
	}
	h->thread_count = (*x >> 32) % 16;
}

/* CMD_SHUTDOWN: the main thread's span events after it, each refused and counted */
static void shut_down(void)
{
	int i;

	ctxprof_shutdown();
	for (i = 0; i < SHUTDOWN_SPANS; i++) {
		ctxprof_span_begin(41, 42);
		ctxprof_span_end(41);
	}
}

static void __attribute__((noreturn)) child_main(enum child_mode mode, int cmd_fd, int rep_fd)
{
	struct ctxprof_options o = {
		.sz = sizeof(o),
		.max_threads = 8,
		.index_rings = 2,
		.index_ring_size = 256,
		.detail_rings = 2,
		.detail_ring_size = CTXPROF_DETAIL_RING_MIN_SIZE,
	};
	struct child_report rep = {0};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	void *region;
	pthread_t th;
	size_t size;
	char cmd;

	if (mode == CHILD_BOGUS_SLOTS)
		o.max_threads = MANY_SLOTS;
	if (mode == CHILD_DUP_CLAIMS)
		o.max_threads = 64;
	if (ctxprof_init(&o) || ctxprof_register_thread())
		_exit(2);
	ctxprof_set_context(11, 12);
	rep.tag = ctxprof_intern_tag("service", "checkout");
	ctxprof_set_tag(0, rep.tag);
	ctxprof_span_begin(11, 12);
	ctxprof_flush();
	rep.tids[0] = gettid();
	rep.slots[0] = (uint64_t)(uintptr_t)ctxprof__current_thread()->slot;
	if (pthread_create(&th, NULL, worker_main, NULL))
		_exit(3);
	pthread_mutex_lock(&worker.lock);
	while (!worker.ready)
		pthread_cond_wait(&worker.cond, &worker.lock);
	pthread_mutex_unlock(&worker.lock);
	rep.tids[1] = worker.tid;
	rep.slots[1] = worker.slot;

	switch (mode) {
	case CHILD_UNSEALED:
		region = ctxprof__region(&size);
		look_alike(region, size, false);
		look_alike(NULL, size, true);
		break;
	case CHILD_FOREIGN:
		/* a task that exists, but in another process: the test */
		rep.foreign = getppid();
		((struct ctxprof_slot *)(uintptr_t)worker.slot)->tid = rep.foreign;
		break;
	case CHILD_BAD_LANES:
		bad_lanes();
		break;
	case CHILD_BOGUS_SLOTS:
		claim_free_slots(0);
		break;
	case CHILD_DUP_CLAIMS:
		claim_free_slots(rep.tids[0]);
		break;
	default:
		break;
	}
	if (write(rep_fd, &rep, sizeof(rep)) != sizeof(rep))
		_exit(4);
	while (read(cmd_fd, &cmd, 1) == 1 && cmd != CMD_QUIT) {
		if (cmd == CMD_GARBAGE)
			garbage(&x);
		else if (cmd == CMD_BUMP_GEN)
			bump_generation();
		else if (cmd == CMD_SHUTDOWN)
			shut_down();
		else
			worker_do(cmd);
		if (write(rep_fd, &cmd, 1) != 1)
			_exit(5);
	}
	_exit(0);
}

/*
 * CHILD_NEW_PIDNS: the child runs as pid 1 of a new pid namespace, its
 * threads' tids (in the report and in the slots) the namespace's.  First
 * this process, its parent, reports its pid as we see it (0: no namespace).
 */
static void __attribute__((noreturn)) child_in_new_pidns(int cmd_fd, int rep_fd)
{
	int go[2] = {-1, -1};
	pid_t pid = 0;
	char c;

	if (!pipe(go) && !unshare(CLONE_NEWPID)) {
		pid = fork();
		if (!pid) {
			/* the report comes after the pid, on the same pipe */
			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(21);
			child_main(CHILD_VALID, cmd_fd, rep_fd);
		}
		if (pid < 0)
			pid = 0;
	}
	if (write(rep_fd, &pid, sizeof(pid)) != sizeof(pid))
		_exit(22);
	if (pid > 0) {
		if (write(go[1], "g", 1) != 1)
			_exit(23);
		waitpid(pid, NULL, 0);
	}
	_exit(0);
}

/* ---- the parent -------------------------------------------------------- */

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->cmd_fd = f->rep_fd = f->map_fd = -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	app_context__release(f->regions);
	app_context__free(f->a);
	if (f->map_fd >= 0)
		close(f->map_fd);
	if (f->cmd_fd >= 0)
		close(f->cmd_fd);
	if (f->rep_fd >= 0)
		close(f->rep_fd);
	if (f->child > 0) {
		kill(f->child, SIGKILL);
		waitpid(f->reaper > 0 ? f->reaper : f->child, NULL, 0);
	}
	free(f);
	return 0;
}

/* read @len bytes from the child, or fail after 5 s */
static void child_read(struct fixture *f, void *buf, size_t len)
{
	struct pollfd pfd = {.fd = f->rep_fd, .events = POLLIN};
	ssize_t n;

	if (poll(&pfd, 1, 5000) != 1)
		fail_msg("the child did not answer in 5 s");
	n = read(f->rep_fd, buf, len);
	if (n != (ssize_t)len)
		fail_msg("the child's answer: %zd bytes, want %zu (did it die?)", n, len);
}

static void child_cmd(struct fixture *f, char cmd)
{
	char ack;

	assert_int_equal(write(f->cmd_fd, &cmd, 1), 1);
	child_read(f, &ack, 1);
	assert_int_equal(ack, cmd);
}

/*
 * The map, the reader and a child with its region; skips (with the reason)
 * without root or BPF.
 */
static void start(struct fixture *f, enum child_mode mode, int verbose)
{
	int cmd[2], rep[2];

	fixture_require_root("opening /proc/PID/map_files and creating a BPF map");
	f->map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_ctx", sizeof(uint32_t),
				   sizeof(struct ctx_slot_ref), 64, NULL);
	if (f->map_fd < 0) {
		print_message("SKIP: no BPF hash map: %s\n", strerror(errno));
		skip();
	}
	f->a = app_context__new(f->map_fd, verbose);
	assert_non_null(f->a);
	assert_int_equal(pipe2(cmd, O_CLOEXEC), 0);
	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	f->child = fork();
	assert_true(f->child >= 0);
	if (!f->child) {
		close(cmd[1]);
		close(rep[0]);
		if (mode == CHILD_NEW_PIDNS)
			child_in_new_pidns(cmd[0], rep[1]);
		child_main(mode, cmd[0], rep[1]);
	}
	close(cmd[0]);
	close(rep[1]);
	f->cmd_fd = cmd[1];
	f->rep_fd = rep[0];
	if (mode == CHILD_NEW_PIDNS) {
		f->reaper = f->child;
		child_read(f, &f->child, sizeof(f->child));
		if (!f->child) {
			print_message("SKIP: no new pid namespace\n");
			skip();
		}
	}
	child_read(f, &f->rep, sizeof(f->rep));
}

/* what the map holds for @tid, all zero when it holds nothing */
static struct ctx_slot_ref map_ref(struct fixture *f, uint32_t tid)
{
	struct ctx_slot_ref ref;

	if (bpf_map_lookup_elem(f->map_fd, &tid, &ref))
		memset(&ref, 0, sizeof(ref));
	return ref;
}

/* the slot address the map holds for @tid, 0 when it holds none */
static uint64_t map_slot(struct fixture *f, uint32_t tid)
{
	return map_ref(f, tid).addr;
}

static unsigned int map_count(struct fixture *f)
{
	uint32_t key, next;
	unsigned int n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(f->map_fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

/* every tid in the map is a thread of the child */
static void assert_map_holds_only_child_threads(struct fixture *f)
{
	uint32_t key, next;
	void *prev = NULL;
	char path[64];

	while (!bpf_map_get_next_key(f->map_fd, prev, &next)) {
		snprintf(path, sizeof(path), "/proc/%d/task/%u", f->child, next);
		if (access(path, F_OK))
			fail_msg("tid %u in the map is no thread of the child %d", next, f->child);
		key = next;
		prev = &key;
	}
}

static struct app_context_stats stats(struct fixture *f)
{
	struct app_context_stats st;

	app_context__stats(f->a, &st);
	return st;
}

/* the child's mappings, as the collector hands them: read, then scanned */
static int scan(struct fixture *f)
{
	struct proc_maps *pm = proc_maps__read(f->child);

	if (!pm)
		return -errno;
	app_context__scan(f->a, f->child, pm, &f->regions);
	proc_maps__free(pm);
	return 0;
}

static void app_context__scan__valid_region__threads_mapped_to_their_slots(void **state)
{
	struct fixture *f = *state;

	start(f, CHILD_VALID, 0);
	assert_int_equal(scan(f), 0);
	assert_non_null(f->regions);
	/* found once: a second scan maps nothing new */
	assert_int_equal(scan(f), 0);
	assert_int_equal(stats(f).regions, 1);
	assert_int_equal(stats(f).regions_rejected, 0);
	assert_int_equal(map_count(f), 0); /* not before a poll */

	app_context__poll(f->a);
	assert_int_equal(stats(f).threads, 2);
	assert_int_equal(map_count(f), 2);
	assert_true(map_slot(f, f->rep.tids[0]) == f->rep.slots[0]);
	assert_true(map_slot(f, f->rep.tids[1]) == f->rep.slots[1]);
	assert_int_equal(stats(f).threads_rejected, 0);
	assert_int_equal(stats(f).lane_errors, 0);
	assert_true(stats(f).span_events >= 1);
}

static void app_context__tag__interned_in_the_child__named(void **state)
{
	struct fixture *f = *state;
	const char *key = NULL, *value = NULL;

	start(f, CHILD_VALID, 0);
	assert_int_equal(scan(f), 0);
	/* the dictionary record is read from the lanes by a poll */
	assert_int_equal(app_context__tag(f->regions, f->rep.tag, &key, &value), -ENOENT);
	app_context__poll(f->a);
	assert_int_equal(app_context__tag(f->regions, f->rep.tag, &key, &value), 0);
	assert_string_equal(key, "service");
	assert_string_equal(value, "checkout");
	assert_int_equal(stats(f).tags, 1);
	assert_int_equal(stats(f).tag_records, 1);
	assert_int_equal(app_context__tag(f->regions, f->rep.tag + 1, &key, &value), -ENOENT);
	assert_int_equal(app_context__tag(NULL, f->rep.tag, &key, &value), -ENOENT);
}

/* an id no record named: counted at each export, and the dictionary asked for, at most every 5 s */
static void app_context__tag__unknown_id__counted_and_asked_for_rate_bounded(void **state)
{
	struct fixture *f = *state;
	const char *key = NULL, *value = NULL;
	uint32_t i;

	start(f, CHILD_VALID, 0);
	assert_int_equal(scan(f), 0);
	app_context__poll(f->a);
	assert_int_equal(stats(f).dict_replays, 1); /* on mapping the region */
	for (i = 0; i < 100; i++)
		assert_int_equal(app_context__tag(f->regions, f->rep.tag + 1, &key, &value),
				 -ENOENT);
	assert_int_equal(stats(f).tag_ids_unknown, 100);
	assert_int_equal(stats(f).dict_replays, 2);
	/* a known id asks nothing */
	assert_int_equal(app_context__tag(f->regions, f->rep.tag, &key, &value), 0);
	assert_int_equal(stats(f).tag_ids_unknown, 100);
}

static void app_context__poll__thread_unregistered__leaves_the_map(void **state)
{
	struct fixture *f = *state;

	start(f, CHILD_VALID, 0);
	assert_int_equal(scan(f), 0);
	app_context__poll(f->a);
	assert_int_equal(map_count(f), 2);

	child_cmd(f, CMD_UNREGISTER);
	app_context__poll(f->a);
	assert_int_equal(map_slot(f, f->rep.tids[1]), 0);
	assert_true(map_slot(f, f->rep.tids[0]) == f->rep.slots[0]);
	assert_int_equal(map_count(f), 1);
	assert_int_equal(stats(f).threads, 1);
}

static void app_context__poll__slot_recycled__map_entry_carries_claim_and_generation(void **state)
{
	struct fixture *f = *state;
	struct ctx_slot_ref ref;
	uint32_t gen;

	start(f, CHILD_VALID, 0);
	assert_int_equal(scan(f), 0);
	app_context__poll(f->a);
	/* what the sampler checks the slot against: the claim as the slot holds it */
	ref = map_ref(f, f->rep.tids[1]);
	assert_true(ref.addr == f->rep.slots[1]);
	assert_int_equal(ref.tid, f->rep.tids[1]);
	gen = ref.generation;
	assert_true(gen >= 1);

	/* the worker leaves and takes its slot back before the next poll */
	child_cmd(f, CMD_UNREGISTER);
	child_cmd(f, CMD_REGISTER);
	/* until that poll the entry is the old generation's: the sampler sees it stale */
	assert_int_equal(map_ref(f, f->rep.tids[1]).generation, gen);
	app_context__poll(f->a);
	ref = map_ref(f, f->rep.tids[1]);
	assert_true(ref.addr == f->rep.slots[1]);
	assert_int_equal(ref.tid, f->rep.tids[1]);
	assert_int_equal(ref.generation, gen + 1);
	assert_int_equal(map_count(f), 2);
	assert_int_equal(stats(f).threads, 2);
}

/* the sum of a counter at @offset in the child's two threads' slots, read there */
static uint64_t child_slots_sum(struct fixture *f, size_t offset)
{
	uint64_t v, sum = 0;
	int i;

	for (i = 0; i < 2; i++) {
		struct iovec local = {&v, sizeof(v)};
		struct iovec remote = {(void *)(uintptr_t)(f->rep.slots[i] + offset), sizeof(v)};

		if (process_vm_readv(f->child, &local, 1, &remote, 1, 0) != sizeof(v))
			fail_msg("process_vm_readv of the child's slot %d: %s", i, strerror(errno));
		sum += v;
	}
	return sum;
}

/* the threads' own event counts, summed across polls */
static void app_context__stats__events_generated_and_refused__summed(void **state)
{
	struct fixture *f = *state;
	uint64_t generated;

	start(f, CHILD_VALID, 0);
	assert_int_equal(scan(f), 0);
	app_context__poll(f->a);
	/* the main thread's span begin and tag record, at least */
	generated = stats(f).events_generated;
	assert_true(generated >= 2);
	assert_int_equal(stats(f).events_refused, 0);
	/* counted once: a poll with nothing new adds nothing */
	app_context__poll(f->a);
	assert_int_equal(stats(f).events_generated, generated);

	assert_int_equal(generated,
			 child_slots_sum(f, offsetof(struct ctxprof_slot, events_generated)));

	/* each span begin and end refused (and whatever else the threads tried) */
	child_cmd(f, CMD_SHUTDOWN);
	app_context__poll(f->a);
	assert_true(stats(f).events_refused >= 2 * SHUTDOWN_SPANS);
	assert_int_equal(stats(f).events_refused,
			 child_slots_sum(f, offsetof(struct ctxprof_slot, events_refused)));
	assert_int_equal(stats(f).events_generated,
			 child_slots_sum(f, offsetof(struct ctxprof_slot, events_generated)));
	assert_true(stats(f).events_generated >= generated + 2 * SHUTDOWN_SPANS);
}

static void app_context__release__process_gone__every_tid_out_of_the_map(void **state)
{
	struct fixture *f = *state;

	start(f, CHILD_VALID, 0);
	assert_int_equal(scan(f), 0);
	app_context__poll(f->a);
	assert_int_equal(map_count(f), 2);

	app_context__release(f->regions);
	f->regions = NULL;
	assert_int_equal(map_count(f), 0);
	assert_int_equal(stats(f).threads, 0);
	/* nothing left to poll */
	app_context__poll(f->a);
	assert_int_equal(map_count(f), 0);
}

/* app_context__scan() with stderr (the -v log) captured into @log */
static void scan_logged(struct fixture *f, char *log, size_t len)
{
	FILE *err = tmpfile();
	int saved = dup(2);

	assert_non_null(err);
	fflush(stderr);
	dup2(fileno(err), 2);
	assert_int_equal(scan(f), 0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(err);
	log[fread(log, 1, len - 1, err)] = '\0';
	fclose(err);
	print_message("%s", log);
}

static void app_context__scan__look_alike_regions__refused_and_counted_once(void **state)
{
	struct fixture *f = *state;
	char log[1024];

	start(f, CHILD_UNSEALED, 1);
	scan_logged(f, log, sizeof(log));
	/* the unsealed copy at once; the sealed zeros may be a region whose
	 * library has not written its header yet: looked at again next time */
	fixture_assert_contains(log, "refused: not a sealed memfd\n");
	assert_null(strstr(log, "refused: magic"));
	assert_int_equal(stats(f).regions_rejected, 1);
	assert_int_equal(stats(f).regions, 1);
	scan_logged(f, log, sizeof(log));
	fixture_assert_contains(log, "refused: magic\n");
	assert_null(strstr(log, "not a sealed memfd"));
	assert_int_equal(stats(f).regions_rejected, 2);
	/* refused for good: neither looked at nor counted again */
	scan_logged(f, log, sizeof(log));
	assert_string_equal(log, "");
	assert_int_equal(stats(f).regions_rejected, 2);
	assert_int_equal(stats(f).regions, 1);
	app_context__poll(f->a);
	assert_int_equal(map_count(f), 2);
	assert_true(map_slot(f, f->rep.tids[0]) == f->rep.slots[0]);
	assert_true(map_slot(f, f->rep.tids[1]) == f->rep.slots[1]);
}

static void app_context__poll__slot_claims_a_foreign_tid__rejected_never_mapped(void **state)
{
	struct fixture *f = *state;

	start(f, CHILD_FOREIGN, 0);
	assert_int_equal(f->rep.foreign, getpid());
	assert_int_equal(scan(f), 0);
	app_context__poll(f->a);
	app_context__poll(f->a);
	assert_int_equal(map_slot(f, f->rep.foreign), 0);
	assert_int_equal(map_slot(f, f->rep.tids[1]), 0);
	assert_true(map_slot(f, f->rep.tids[0]) == f->rep.slots[0]);
	assert_int_equal(map_count(f), 1);
	assert_int_equal(stats(f).threads, 1);
	assert_true(stats(f).threads_rejected >= 1);
}

static void app_context__poll__rejected_claim__resolved_once_per_generation(void **state)
{
	struct fixture *f = *state;
	int i;

	start(f, CHILD_FOREIGN, 0);
	assert_int_equal(scan(f), 0);
	for (i = 0; i < 5; i++)
		app_context__poll(f->a);
	/* two claims (the main thread's, mapped, and the foreign one), each looked up once */
	assert_int_equal(stats(f).threads_rejected, 1);
	assert_int_equal(stats(f).claims_checked, 2);
	assert_int_equal(stats(f).threads, 1);
	assert_int_equal(map_slot(f, f->rep.foreign), 0);

	/* the same claim in the slot's next generation is a new claim: once more */
	child_cmd(f, CMD_BUMP_GEN);
	for (i = 0; i < 5; i++)
		app_context__poll(f->a);
	assert_int_equal(stats(f).threads_rejected, 2);
	assert_int_equal(stats(f).claims_checked, 3);
	assert_int_equal(map_count(f), 1);
	assert_int_equal(stats(f).claims_deferred, 0);
}

static void app_context__poll__many_bogus_claims__bounded_per_poll_and_counted_once(void **state)
{
	struct fixture *f = *state;
	uint64_t checked = 0, rejected = 0, polls = 0;
	struct app_context_stats st;

	start(f, CHILD_BOGUS_SLOTS, 0);
	assert_int_equal(scan(f), 0);
	assert_non_null(f->regions);
	/* MANY_SLOTS new claims: the two threads' and MANY_SLOTS - 2 bogus ones */
	do {
		app_context__poll(f->a);
		polls++;
		st = stats(f);
		assert_true(st.threads_rejected - rejected <= APP_CONTEXT_CLAIMS_PER_POLL);
		assert_true(st.claims_checked - checked <= APP_CONTEXT_CLAIMS_PER_POLL);
		rejected = st.threads_rejected;
		checked = st.claims_checked;
	} while (checked < MANY_SLOTS && polls < MANY_SLOTS);
	print_message("    %llu claims checked in %llu polls, %llu deferrals\n",
		      (unsigned long long)checked, (unsigned long long)polls,
		      (unsigned long long)st.claims_deferred);
	assert_int_equal(checked, MANY_SLOTS);
	assert_int_equal(polls, (MANY_SLOTS + APP_CONTEXT_CLAIMS_PER_POLL - 1) /
					APP_CONTEXT_CLAIMS_PER_POLL);
	assert_true(st.claims_deferred >= MANY_SLOTS - APP_CONTEXT_CLAIMS_PER_POLL);
	assert_int_equal(st.threads_rejected, MANY_SLOTS - 2);
	assert_int_equal(st.threads, 2);
	assert_int_equal(map_count(f), 2);
	assert_true(map_slot(f, f->rep.tids[0]) == f->rep.slots[0]);
	assert_true(map_slot(f, f->rep.tids[1]) == f->rep.slots[1]);
	/* every claim judged: later polls look nothing up and count nothing again */
	app_context__poll(f->a);
	app_context__poll(f->a);
	st = stats(f);
	assert_int_equal(st.claims_checked, MANY_SLOTS);
	assert_int_equal(st.threads_rejected, MANY_SLOTS - 2);
}

static void app_context__poll__slots_claim_one_thread__counted_once(void **state)
{
	struct fixture *f = *state;

	start(f, CHILD_DUP_CLAIMS, 0);
	assert_int_equal(scan(f), 0);
	app_context__poll(f->a);
	app_context__poll(f->a);
	/* 62 more slots claim the main thread: it stays one thread, at its own slot */
	assert_int_equal(stats(f).threads, 2);
	assert_int_equal(map_count(f), 2);
	assert_true(map_slot(f, f->rep.tids[0]) == f->rep.slots[0]);
	assert_int_equal(stats(f).threads_rejected, 62);
	/* the worker leaves: one thread left, whatever the other claims say */
	child_cmd(f, CMD_UNREGISTER);
	app_context__poll(f->a);
	assert_int_equal(stats(f).threads, 1);
	assert_int_equal(map_count(f), 1);
	assert_int_equal(stats(f).threads_rejected, 62);
	app_context__release(f->regions);
	f->regions = NULL;
	assert_int_equal(stats(f).threads, 0);
	assert_int_equal(map_count(f), 0);
}

static void
app_context__poll__app_in_another_pid_namespace__claims_resolved_to_host_tids(void **state)
{
	struct fixture *f = *state;
	uint32_t key, next;
	void *prev = NULL;
	unsigned int n = 0;

	start(f, CHILD_NEW_PIDNS, 0);
	/* the slots claim the namespace's tids, which are not ours */
	assert_int_equal(f->rep.tids[0], 1);
	assert_int_equal(scan(f), 0);
	app_context__poll(f->a);
	app_context__poll(f->a);
	assert_int_equal(stats(f).claims_checked, 2);
	assert_int_equal(stats(f).threads_rejected, 0);
	assert_int_equal(map_count(f), 2);
	/* keyed by host tids of the child, each entry with the claim its slot holds */
	assert_map_holds_only_child_threads(f);
	while (!bpf_map_get_next_key(f->map_fd, prev, &next)) {
		struct ctx_slot_ref ref = map_ref(f, next);
		int i = ref.tid == f->rep.tids[0] ? 0 : 1;

		assert_int_equal(ref.tid, f->rep.tids[i]);
		assert_true(ref.addr == f->rep.slots[i]);
		if (i == 0)
			assert_int_equal(next, f->child); /* the main thread: tid == pid */
		key = next;
		prev = &key;
		n++;
	}
	assert_int_equal(n, 2);
}

static void app_context__poll__garbage_in_the_lanes__counted_no_crash(void **state)
{
	struct fixture *f = *state;
	const char *key, *value;
	int round;

	start(f, CHILD_BAD_LANES, 0);
	assert_int_equal(scan(f), 0);
	app_context__poll(f->a);
	/* a submit queue of 1000 entries, a ring index past the pool */
	assert_int_equal(stats(f).lane_errors, 2);
	/* the threads and the rest of the lanes are fine */
	assert_int_equal(map_count(f), 2);
	assert_int_equal(app_context__tag(f->regions, f->rep.tag, &key, &value), 0);

	for (round = 0; round < 300; round++) {
		child_cmd(f, CMD_GARBAGE);
		app_context__poll(f->a);
		assert_map_holds_only_child_threads(f);
	}
	assert_true(stats(f).lane_errors > 2);
	print_message("    lane errors %llu, threads rejected %llu after 300 rounds of garbage\n",
		      (unsigned long long)stats(f).lane_errors,
		      (unsigned long long)stats(f).threads_rejected);
	app_context__release(f->regions);
	f->regions = NULL;
	assert_int_equal(map_count(f), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(app_context__scan__valid_region__threads_mapped_to_their_slots),
		T(app_context__tag__interned_in_the_child__named),
		T(app_context__tag__unknown_id__counted_and_asked_for_rate_bounded),
		T(app_context__poll__thread_unregistered__leaves_the_map),
		T(app_context__poll__slot_recycled__map_entry_carries_claim_and_generation),
		T(app_context__stats__events_generated_and_refused__summed),
		T(app_context__release__process_gone__every_tid_out_of_the_map),
		T(app_context__scan__look_alike_regions__refused_and_counted_once),
		T(app_context__poll__slot_claims_a_foreign_tid__rejected_never_mapped),
		T(app_context__poll__rejected_claim__resolved_once_per_generation),
		T(app_context__poll__many_bogus_claims__bounded_per_poll_and_counted_once),
		T(app_context__poll__slots_claim_one_thread__counted_once),
		T(app_context__poll__app_in_another_pid_namespace__claims_resolved_to_host_tids),
		T(app_context__poll__garbage_in_the_lanes__counted_no_crash),
#undef T
	};

	return cmocka_run_group_tests_name("app_context", tests, NULL, NULL);
}
