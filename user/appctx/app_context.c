// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "records.h"
#include "appctx/app_context.h"
#include "appctx/ctxprof_region.h"
#include "processes/proc_maps.h"
#include "processes/process_state.h"
#include "traces/trace.h"
#include "traces/trace_event.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/htable.h"

#define MAX_REGION_SIZE	    (1ULL << 30) /* a larger "region" is not ours: refuse it */
#define MAX_TAGS_PER_REGION 65536
#define MAX_TAG_STRING	    1024
/* an export that meets unknown tag ids asks a region for its dictionary at most this often */
#define ASK_PERIOD_NS (5 * 1000000000ull)
/* span event times taken into a timeline: near the collector's clock */
#define SPAN_TIME_AHEAD_NS  1000000000ull	  /* 1 s ahead */
#define SPAN_TIME_BEHIND_NS (600 * 1000000000ull) /* 10 min behind */

struct tag_ent {
	uint32_t id;
	char *key;
	char *value;
};

/* what the collector decided about a slot's tid claim, for one generation */
enum claim_verdict {
	CLAIM_NONE = 0, /* not judged: the next poll looks the claim up */
	CLAIM_MAPPED,	/* the tid is in the sampler's map for this slot */
	CLAIM_REJECTED, /* no thread of the process, or one another slot holds */
	CLAIM_NO_ROOM,	/* a thread of the process, but the map was full: retried */
	CLAIM_LEFT,	/* was mapped; the slot left Active since */
};

/* per slot: the verdict on its claim in generation @gen */
struct slot_track {
	uint32_t gen;	 /* the generation the verdict is for */
	uint32_t claim;	 /* the tid the slot claimed, as it holds it */
	uint32_t tid;	 /* the host tid of the claim; 0: none */
	uint32_t seen;	 /* poll epoch the slot was last seen Active */
	uint8_t verdict; /* enum claim_verdict */
	/* the owner's event counts as last summed (sum_events()), and its generation */
	bool counted;
	uint32_t counted_gen;
	uint64_t generated, refused;
};

/* a new claim, waiting for its /proc lookup at the end of its region's pass */
struct pending_claim {
	uint32_t index;
	uint32_t claim;
	uint32_t gen;
};

/* a tid of a process in another pid namespace: as the process sees it, as we do */
struct ns_tid {
	uint32_t ns;
	uint32_t host;
};

struct app_region {
	struct app_context *a;
	struct app_region *next, **pprev; /* in a->regions; pprev NULL: not mapped */
	struct app_region *next_in_proc;  /* the process's other regions */
	pid_t pid;
	uint64_t start; /* where the application maps it */
	uint64_t end;
	uint64_t inode; /* of the memfd, from the maps line */
	dev_t dev;	/* the memfd as mapped (fstat): one file is one region */
	ino_t ino;
	size_t size;
	void *base; /* where we map it; NULL: refused */
	bool refused;
	bool look_again; /* refused before its library wrote the magic: one more look */
	struct ctxprof_region_geom geom;
	struct ctxprof_region_stats st;
	bool same_pidns;	  /* slot tids are host tids */
	struct slot_track *slots; /* [geom.max_threads] */
	uint64_t asked_ns;	  /* when an export last asked for the dictionary; 0: never */
	struct tag_ent *tags;	  /* named ids, dense, in the order they came */
	size_t tags_cap, nr_tags;
	struct htable tag_idx; /* id -> tags[] index */
};

struct app_context {
	int map_fd;
	int verbose;
	struct trace_writer *tw; /* span events into per-thread traces; NULL: counted only */
	uint32_t epoch;
	struct app_region *regions; /* every mapped region of every process */
	struct app_context_stats st;
	/* this poll's new claims, APP_CONTEXT_CLAIMS_PER_POLL at most */
	struct pending_claim pending[APP_CONTEXT_CLAIMS_PER_POLL];
	uint32_t nr_pending;
	/* the tids of the process in another pid namespace whose claims are
	 * being looked up, read once per poll and region (sorted by ns) */
	struct ns_tid *ns_tids;
	size_t nr_ns_tids, ns_tids_cap;
	bool ns_tids_valid;
};

void app_context__trace(struct app_context *a, struct trace_writer *w)
{
	a->tw = w;
}

struct app_context *app_context__new(int ctx_map_fd, int verbose)
{
	struct app_context *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->map_fd = ctx_map_fd;
	a->verbose = verbose;
	return a;
}

/* take the tid of slot @t out of the sampler's map, if it is there */
static void unmap_slot(struct app_context *a, struct slot_track *t)
{
	if (t->verdict != CLAIM_MAPPED)
		return;
	bpf_map_delete_elem(a->map_fd, &t->tid);
	a->st.threads--;
	t->verdict = CLAIM_LEFT;
}

/* unmap @r and drop what goes with the mapping; @r keeps naming it */
static void region_unmap(struct app_region *r)
{
	bool validated = r->slots; /* set up only once the region validated */
	uint32_t i;

	if (r->slots)
		for (i = 0; i < r->geom.max_threads; i++)
			/* the process is gone: its tids must not keep a slot address */
			unmap_slot(r->a, &r->slots[i]);
	free(r->slots);
	r->slots = NULL;
	if (r->base) {
		/* a restarted collector drains the lanes at once, not after the heartbeat lapses */
		if (validated)
			ctxprof_region__release(r->base, &r->geom);
		munmap(r->base, r->size);
	}
	r->base = NULL;
}

static void region_free(struct app_region *r)
{
	size_t i;

	if (!r)
		return;
	region_unmap(r);
	for (i = 0; i < r->nr_tags; i++) {
		free(r->tags[i].key);
		free(r->tags[i].value);
	}
	free(r->tags);
	htable__destroy(&r->tag_idx);
	free(r);
}

/*
 * Refuse region @r, counting and logging it once: it stays in its process's
 * chain, unmapped, and is not looked at again.  But a region whose magic is
 * still 0 may be one whose library has not written its header yet (the magic
 * comes last): that one gets one more look at the next scan first.
 */
static void refuse(struct app_context *a, struct app_region *r, bool not_ready, const char *why)
{
	region_unmap(r);
	r->refused = true;
	if (not_ready && !r->look_again) {
		r->look_again = true;
		return;
	}
	r->look_again = false;
	a->st.regions_rejected++;
	if (a->verbose)
		fprintf(stderr, "ctxprof: pid %d: libctxprof region at %#llx refused: %s\n", r->pid,
			(unsigned long long)r->start, why);
}

static bool same_pid_namespace(pid_t pid)
{
	char self[64], target[64], path[64];
	ssize_t n, m;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	n = readlink("/proc/self/ns/pid", self, sizeof(self) - 1);
	m = readlink(path, target, sizeof(target) - 1);
	return n > 0 && n == m && !memcmp(self, target, n);
}

/*
 * Whether a mapped region is this memfd already: a process that maps
 * another's region (by its map_files, or a passed fd) must not make us
 * drain the same lanes twice, under the wrong process.
 */
static bool memfd_taken(const struct app_context *a, const struct stat *st)
{
	const struct app_region *r;

	for (r = a->regions; r; r = r->next)
		if (r->dev == st->st_dev && r->ino == st->st_ino)
			return true;
	return false;
}

/* open, check and map the region @r names; refused (r->refused) when it does not pass */
static void map_region(struct app_context *a, struct app_region *r)
{
	const char *why = "out of memory";
	bool not_ready = false;
	char path[96];
	struct stat st;
	int fd, seals;

	r->refused = false;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", r->pid,
		 (unsigned long long)r->start, (unsigned long long)r->end);
	/* map_files gives the very file mapped there; O_NONBLOCK in case it is not a memfd */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		refuse(a, r, false, strerror(errno));
		return;
	}
	/* only shmem files carry seals: a sealed memfd can neither block nor shrink */
	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || seals < 0 ||
	    (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
		close(fd);
		refuse(a, r, false, "not a sealed memfd");
		return;
	}
	if (memfd_taken(a, &st)) {
		close(fd);
		refuse(a, r, false, "the same memfd is another process's region already");
		return;
	}
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	if (st.st_size <= 0 || (uint64_t)st.st_size > MAX_REGION_SIZE) {
		close(fd);
		refuse(a, r, false, "size out of range");
		return;
	}
	r->size = st.st_size;
	r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		why = "mmap failed";
		goto err_refuse;
	}
	if (ctxprof_region__validate(r->base, r->size, &r->geom, &why)) {
		not_ready = !__atomic_load_n((const uint64_t *)r->base, __ATOMIC_RELAXED);
		goto err_refuse;
	}
	/* the application maps the whole region at start: slots must lie inside */
	if (r->end - r->start < r->geom.region_size) {
		why = "mapping shorter than the region";
		goto err_refuse;
	}
	why = "out of memory";
	r->slots = calloc(r->geom.max_threads, sizeof(*r->slots));
	if (!r->slots)
		goto err_refuse;
	r->same_pidns = same_pid_namespace(r->pid);
	r->look_again = false;
	a->st.regions++;
	/*
	 * Tags interned before we came were sent to no one, or to a collector
	 * before us: ask for the whole dictionary (the library serves it on
	 * its next span events, flushes and registrations).
	 */
	atomic_fetch_add_explicit(
		(_Atomic __u32 *)&((struct ctxprof_region_header *)r->base)->dict_replay_request, 1,
		memory_order_relaxed);
	a->st.dict_replays++;
	return;

err_refuse:
	refuse(a, r, not_ready, why);
}

static void region_link(struct app_context *a, struct app_region *r)
{
	r->next = a->regions;
	if (r->next)
		r->next->pprev = &r->next;
	r->pprev = &a->regions;
	a->regions = r;
}

static void region_unlink(struct app_region *r)
{
	*r->pprev = r->next;
	if (r->next)
		r->next->pprev = r->pprev;
}

static bool region_is(const struct app_region *r, const struct proc_map *m)
{
	return r->start == m->start && r->end == m->end && r->inode == m->inode;
}

void app_context__scan(struct app_context *a, pid_t pid, const struct proc_maps *pm,
		       struct app_region **regions)
{
	struct app_region *r;
	size_t i, n;

	for (i = 0; i < pm->nr; i++) {
		const struct proc_map *m = &pm->maps[i];

		if (!m->deleted || m->pgoff || strcmp(m->path, "/memfd:" CTXPROF_REGION_NAME))
			continue;
		for (r = *regions, n = 0; r && !region_is(r, m); r = r->next_in_proc)
			n++;
		if (r && !r->look_again)
			continue; /* mapped, or refused for good */
		if (!r) {
			/* a process needs one region: a few more are looked at, no more */
			if (n > APP_CONTEXT_REGIONS_PER_PROCESS)
				continue;
			r = calloc(1, sizeof(*r));
			if (!r)
				break;
			r->a = a;
			r->pid = pid;
			r->start = m->start;
			r->end = m->end;
			r->inode = m->inode;
			r->next_in_proc = *regions;
			*regions = r;
			if (n == APP_CONTEXT_REGIONS_PER_PROCESS) {
				/* counted once, for all the regions it stands for */
				refuse(a, r, false,
				       "too many regions in the process, the rest ignored");
				continue;
			}
		}
		map_region(a, r);
		if (r->base)
			region_link(a, r);
	}
}

void app_context__changed(void *ctx, struct process_state *st, struct mappings *snap,
			  const struct proc_maps *all)
{
	if (st->pid != (uint32_t)getpid())
		app_context__scan(ctx, st->pid, all, &st->app);
}

/* the last field of the NSpid line of a task's status: its tid in the
 * innermost pid namespace; 0 when unreadable */
static uint32_t task_ns_tid(pid_t pid, const char *task)
{
	char path[300], line[256], *last;
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/status", pid, task);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		last = strrchr(line, '\t');
		if (!last)
			last = strrchr(line, ' ');
		if (last)
			v = strtoul(last + 1, NULL, 10);
		break;
	}
	fclose(f);
	return v <= UINT32_MAX ? (uint32_t)v : 0;
}

static int ns_tid_cmp(const void *x, const void *y)
{
	const struct ns_tid *p = x, *q = y;

	return p->ns < q->ns ? -1 : p->ns > q->ns;
}

/*
 * The tids of @r's process, as its pid namespace and as we see them: one
 * read of every task's status, done at most once per poll and region (the
 * claims of a poll are looked up in it together).  Empty when unreadable.
 */
static void read_ns_tids(struct app_context *a, const struct app_region *r)
{
	char path[64];
	struct dirent *de;
	DIR *dir;

	a->nr_ns_tids = 0;
	a->ns_tids_valid = true;
	snprintf(path, sizeof(path), "/proc/%d/task", r->pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		struct ns_tid t;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		t.ns = task_ns_tid(r->pid, de->d_name);
		t.host = strtoul(de->d_name, NULL, 10);
		if (!t.ns || array_grow((void **)&a->ns_tids, &a->ns_tids_cap, a->nr_ns_tids + 1,
					sizeof(*a->ns_tids), 64))
			continue;
		a->ns_tids[a->nr_ns_tids++] = t;
	}
	closedir(dir);
	if (a->nr_ns_tids)
		qsort(a->ns_tids, a->nr_ns_tids, sizeof(*a->ns_tids), ns_tid_cmp);
}

/*
 * The host tid of a slot's claimed tid, or 0 when it is no thread of the
 * process.  In another pid namespace (an app in a container seen from the
 * host) the claim is the namespace's tid: the task whose NSpid ends with it.
 */
static uint32_t resolve_tid(struct app_context *a, const struct app_region *r, uint32_t claim)
{
	struct ns_tid key = {.ns = claim}, *hit;
	char path[96];

	if (!claim)
		return 0;
	if (r->same_pidns) {
		snprintf(path, sizeof(path), "/proc/%d/task/%u", r->pid, claim);
		return access(path, F_OK) ? 0 : claim;
	}
	if (!a->ns_tids_valid)
		read_ns_tids(a, r);
	if (!a->nr_ns_tids)
		return 0;
	hit = bsearch(&key, a->ns_tids, a->nr_ns_tids, sizeof(key), ns_tid_cmp);
	return hit ? hit->host : 0;
}

/* put slot @index's verified claim into the sampler's map */
static void map_claim(struct app_context *a, struct app_region *r, uint32_t index)
{
	struct slot_track *t = &r->slots[index];
	/* what the sampler checks the slot against at every read */
	struct ctx_slot_ref ref = {
		.addr = r->start + ctxprof_region__slot_offset(&r->geom, index),
		.tid = t->claim,
		.generation = t->gen,
	};

	/* NOEXIST: a tid another slot holds stays that slot's, counted once */
	if (!bpf_map_update_elem(a->map_fd, &t->tid, &ref, BPF_NOEXIST)) {
		t->verdict = CLAIM_MAPPED;
		a->st.threads++;
	} else if (errno == EEXIST) {
		t->verdict = CLAIM_REJECTED;
		a->st.threads_rejected++;
	} else if (t->verdict != CLAIM_NO_ROOM) {
		/* full: tried again at the next polls, with no lookup */
		t->verdict = CLAIM_NO_ROOM;
		a->st.map_full++;
	}
}

/* look a new claim up in /proc and judge it for its generation */
static void judge_claim(struct app_context *a, struct app_region *r, const struct pending_claim *p)
{
	struct slot_track *t = &r->slots[p->index];

	a->st.claims_checked++;
	t->gen = p->gen;
	t->claim = p->claim;
	t->tid = resolve_tid(a, r, p->claim);
	if (!t->tid) {
		t->verdict = CLAIM_REJECTED;
		a->st.threads_rejected++;
		return;
	}
	map_claim(a, r, p->index);
}

/*
 * Bring the map up to date with @r's Active slots.  A claim is judged once
 * per slot and generation: a rejected one is not looked up again until the
 * slot's generation changes, and at most APP_CONTEXT_CLAIMS_PER_POLL new
 * claims are looked up per poll (over all regions), the rest at the next
 * polls.  Threads that left are taken out before the new claims are mapped,
 * so that a claim of a tid the kernel gave again finds the map free.
 */
/*
 * Add what slot @t's owner counted since the last poll (its events, and the
 * events refused after ctxprof_shutdown()) to @a's sums.  The counts start
 * at 0 with each owner (a new generation).  What an owner counted after the
 * last poll that saw its slot is lost only if a new thread takes the slot
 * (Draining, its lanes empty) before the next poll.  A count that went down
 * (a hostile or broken writer) resets the base and adds nothing.
 */
static void sum_events(struct app_context *a, struct slot_track *t,
		       const struct ctxprof_slot_view *v)
{
	if (!t->counted || t->counted_gen != v->generation) {
		t->counted = true;
		t->counted_gen = v->generation;
		t->generated = 0;
		t->refused = 0;
	}
	if (v->events_generated >= t->generated)
		a->st.events_generated += v->events_generated - t->generated;
	if (v->events_refused >= t->refused)
		a->st.events_refused += v->events_refused - t->refused;
	t->generated = v->events_generated;
	t->refused = v->events_refused;
}

static void sync_slots(struct app_context *a, struct app_region *r)
{
	uint32_t cursor = 0, first = a->nr_pending, i;
	struct ctxprof_slot_view v;

	while (ctxprof_region__next_slot(r->base, &r->geom, &cursor, &v, &r->st)) {
		struct slot_track *t = &r->slots[v.index];

		sum_events(a, t, &v);
		if (v.state != CTXPROF_SLOT_ACTIVE)
			continue;
		t->seen = a->epoch;
		if (t->verdict != CLAIM_NONE && t->gen == v.generation) {
			if (t->verdict == CLAIM_NO_ROOM)
				map_claim(a, r, v.index);
			continue;
		}
		/* a new claim; the slot's previous thread (if mapped) has left it */
		unmap_slot(a, t);
		t->verdict = CLAIM_NONE;
		if (a->nr_pending == APP_CONTEXT_CLAIMS_PER_POLL) {
			a->st.claims_deferred++;
			continue;
		}
		a->pending[a->nr_pending++] = (struct pending_claim){
			.index = v.index,
			.claim = v.tid,
			.gen = v.generation,
		};
	}
	/* threads that left their slot since the last poll */
	for (i = 0; i < r->geom.max_threads; i++) {
		struct slot_track *t = &r->slots[i];

		if (t->seen == a->epoch)
			continue;
		unmap_slot(a, t);
		if (t->verdict == CLAIM_NO_ROOM)
			t->verdict = CLAIM_LEFT;
	}
	a->ns_tids_valid = false;
	for (i = first; i < a->nr_pending; i++)
		judge_claim(a, r, &a->pending[i]);
}

static bool tag_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct tag_ent *tags = ctx;

	return tags[idx].id == *(const uint32_t *)key;
}

static struct tag_ent *tag_find(const struct app_region *r, uint32_t id)
{
	uint32_t idx = htable__find(&r->tag_idx, (uint32_t)hash_u64(id), tag_eq, r->tags, &id);

	return idx == HTABLE_NONE ? NULL : &r->tags[idx];
}

struct drain_ctx {
	struct app_context *a;
	struct app_region *r;
	uint64_t now_ns;
	uint64_t tag_records; /* drained in this poll */
};

/*
 * A span event into the trace of the slot's thread: only a claim the
 * collector verified names a thread (still in the slot, or gone from it
 * since: a thread's last events are drained after it left), and only a time
 * near ours is taken (the application writes both).
 */
static void on_span_event(void *ctx, const struct ctxprof_slot_view *slot,
			  const struct ctxprof_span_event *ev)
{
	struct drain_ctx *d = ctx;
	const struct slot_track *t = &d->r->slots[slot->index];
	uint64_t words[TRACE_EV_MAX_WORDS];
	struct trace *tr;
	unsigned int n;

	d->a->st.span_events++;
	if (!d->a->tw)
		return;
	if (t->gen != slot->generation || !t->tid ||
	    (t->verdict != CLAIM_MAPPED && t->verdict != CLAIM_LEFT)) {
		d->a->st.span_events_unattributed++;
		return;
	}
	if (ev->time_ns > d->now_ns + SPAN_TIME_AHEAD_NS ||
	    ev->time_ns + SPAN_TIME_BEHIND_NS < d->now_ns) {
		d->a->st.span_events_bad_time++;
		return;
	}
	if (ev->type == CTXPROF_EVENT_SPAN_BEGIN)
		n = trace_ev_span_begin(words, ev->time_ns, ev->span_id, ev->local_root_span_id);
	else if (ev->type == CTXPROF_EVENT_SPAN_END)
		n = trace_ev_span_end(words, ev->time_ns, ev->span_id);
	else
		return;
	tr = trace_writer__get(d->a->tw, d->r->pid, t->tid, true);
	trace__append(d->a->tw, tr, words, n);
}

static void on_tag(void *ctx, const struct ctxprof_slot_view *slot, uint32_t id, const char *key,
		   uint32_t key_len, const char *value, uint32_t value_len)
{
	struct drain_ctx *d = ctx;
	struct app_region *r = d->r;
	struct tag_ent *t;

	d->tag_records++;
	d->a->st.tag_records++;
	if (!id || key_len > MAX_TAG_STRING || value_len > MAX_TAG_STRING ||
	    r->nr_tags >= MAX_TAGS_PER_REGION) {
		d->a->st.tags_dropped++;
		return;
	}
	/* an id is named once: a later record for it (a replay) changes nothing */
	if (tag_find(r, id)) {
		d->a->st.tag_records_again++;
		return;
	}
	if (array_grow((void **)&r->tags, &r->tags_cap, r->nr_tags + 1, sizeof(*r->tags), 64) ||
	    !r->tags) {
		d->a->st.tags_dropped++;
		return;
	}
	t = &r->tags[r->nr_tags];
	t->id = id;
	t->key = strndup(key, key_len);
	t->value = strndup(value, value_len);
	if (!t->key || !t->value ||
	    htable__insert(&r->tag_idx, (uint32_t)hash_u64(id), r->nr_tags)) {
		free(t->key);
		free(t->value);
		d->a->st.tags_dropped++;
		return;
	}
	r->nr_tags++;
	d->a->st.tags++;
}

bool app_context__poll(struct app_context *a)
{
	static const struct ctxprof_drain_ops ops = {
		.span_event = on_span_event,
		.tag = on_tag,
	};
	struct drain_ctx d = {.a = a};
	struct app_region *r;

	d.now_ns = mono_ns();
	/* epoch 0 marks "never seen" */
	if (++a->epoch == 0)
		a->epoch = 1;
	a->nr_pending = 0;
	for (r = a->regions; r; r = r->next) {
		sync_slots(a, r);
		d.r = r;
		ctxprof_region__drain(r->base, &r->geom, d.now_ns, &ops, &d, &r->st);
	}
	return d.tag_records > 0;
}

/*
 * The library sends every entry on its own (an entry that did not fit goes
 * out later), but records can still be lost on the way (a collector killed
 * holding a ring, a record refused here): an id a sample carries and no
 * record named makes the export ask the process's first mapped region for
 * its dictionary again, at most every ASK_PERIOD_NS.
 */
static void ask_again(struct app_region *regions)
{
	struct app_region *r;
	uint64_t now = mono_ns();

	for (r = regions; r && !r->base; r = r->next_in_proc)
		;
	if (!r || (r->asked_ns && now - r->asked_ns < ASK_PERIOD_NS))
		return;
	r->asked_ns = now;
	atomic_fetch_add_explicit(
		(_Atomic __u32 *)&((struct ctxprof_region_header *)r->base)->dict_replay_request, 1,
		memory_order_relaxed);
	r->a->st.dict_replays++;
}

int app_context__tag(struct app_region *regions, uint32_t id, const char **key, const char **value)
{
	const struct tag_ent *t;
	struct app_region *r;

	for (r = regions; r; r = r->next_in_proc) {
		t = tag_find(r, id);
		if (t) {
			*key = t->key;
			*value = t->value;
			return 0;
		}
	}
	if (regions) {
		regions->a->st.tag_ids_unknown++;
		ask_again(regions);
	}
	return -ENOENT;
}

void app_context__stats(const struct app_context *a, struct app_context_stats *st)
{
	const struct app_region *r;

	*st = a->st;
	st->lane_errors = 0;
	for (r = a->regions; r; r = r->next) {
		st->lane_errors += r->st.bad_slot_state + r->st.bad_queue + r->st.bad_ring_index +
				   r->st.bad_ring_used + r->st.bad_record + r->st.unknown_record +
				   r->st.free_queue_full;
		st->lane_passes_refused += r->st.consumer_refused;
		st->lane_takeovers += r->st.consumer_takeovers;
		st->lane_passes_lost += r->st.consumer_lost;
		st->regions_shut_down += r->st.shut_down > 0;
	}
}

void app_context__release(struct app_region *regions)
{
	struct app_region *next;

	for (; regions; regions = next) {
		next = regions->next_in_proc;
		if (regions->pprev)
			region_unlink(regions);
		region_free(regions);
	}
}

void app_context__free(struct app_context *a)
{
	if (!a)
		return;
	/* every region belongs to a process state, released before this */
	free(a->ns_tids);
	free(a);
}
