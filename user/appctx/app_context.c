// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "util/array.h"
#include "util/hash.h"
#include "util/htable.h"

#define MAX_REGION_SIZE	    (1ULL << 30) /* a larger "region" is not ours: refuse it */
#define MAX_TAGS_PER_REGION 65536
#define MAX_TAG_STRING	    1024

struct tag_ent {
	uint32_t id;
	char *key;
	char *value;
};

struct app_region {
	struct app_context *a;
	struct app_region *next, **pprev; /* in a->regions */
	struct app_region *next_in_proc;  /* the process's other regions */
	pid_t pid;
	uint64_t start; /* where the application maps it */
	size_t size;
	void *base; /* where we map it */
	struct ctxprof_region_geom geom;
	struct ctxprof_region_stats st;
	bool same_pidns;    /* slot tids are host tids */
	uint32_t *slot_tid; /* per slot: the tid we put in the map, 0: none */
	uint32_t *slot_gen;
	uint32_t *slot_seen;  /* poll epoch the slot was last seen Active */
	struct tag_ent *tags; /* named ids, dense, in the order they came */
	size_t tags_cap, nr_tags;
	struct htable tag_idx; /* id -> tags[] index */
};

struct app_context {
	int map_fd;
	int verbose;
	uint32_t epoch;
	struct app_region *regions; /* every region of every process */
	struct app_context_stats st;
};

struct app_context *app_context__new(int ctx_map_fd, int verbose)
{
	struct app_context *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->map_fd = ctx_map_fd;
	a->verbose = verbose;
	return a;
}

static void region_free(struct app_region *r)
{
	size_t i;

	if (!r)
		return;
	if (r->slot_tid)
		for (i = 0; i < r->geom.max_threads; i++) {
			if (!r->slot_tid[i])
				continue;
			/* the process is gone: its tids must not keep a slot address */
			bpf_map_delete_elem(r->a->map_fd, &r->slot_tid[i]);
			r->a->st.threads--;
		}
	if (r->base)
		munmap(r->base, r->size);
	for (i = 0; i < r->nr_tags; i++) {
		free(r->tags[i].key);
		free(r->tags[i].value);
	}
	free(r->tags);
	htable__destroy(&r->tag_idx);
	free(r->slot_tid);
	free(r->slot_gen);
	free(r->slot_seen);
	free(r);
}

static void refuse(struct app_context *a, pid_t pid, uint64_t start, const char *why)
{
	a->st.regions_rejected++;
	if (a->verbose)
		fprintf(stderr, "ctxprof: pid %d: libctxprof region at %#llx refused: %s\n", pid,
			(unsigned long long)start, why);
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

/* open, check and map one region the maps line names; NULL when refused */
static struct app_region *map_region(struct app_context *a, pid_t pid, const struct proc_map *m)
{
	const char *why = "out of memory";
	struct app_region *r;
	char path[96];
	struct stat st;
	int fd, seals;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	/* map_files gives the very file mapped there; O_NONBLOCK in case it is not a memfd */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		refuse(a, pid, m->start, strerror(errno));
		return NULL;
	}
	/* only shmem files carry seals: a sealed memfd can neither block nor shrink */
	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || seals < 0 ||
	    (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
		close(fd);
		refuse(a, pid, m->start, "not a sealed memfd");
		return NULL;
	}
	if (st.st_size <= 0 || (uint64_t)st.st_size > MAX_REGION_SIZE) {
		close(fd);
		refuse(a, pid, m->start, "size out of range");
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		goto err_refuse;
	}
	r->a = a;
	r->pid = pid;
	r->start = m->start;
	r->size = st.st_size;
	r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		why = "mmap failed";
		goto err_refuse;
	}
	if (ctxprof_region__validate(r->base, r->size, &r->geom, &why))
		goto err_refuse;
	/* the application maps the whole region at start: slots must lie inside */
	if (m->end - m->start < r->geom.region_size) {
		why = "mapping shorter than the region";
		goto err_refuse;
	}
	why = "out of memory";
	r->slot_tid = calloc(r->geom.max_threads, sizeof(*r->slot_tid));
	r->slot_gen = calloc(r->geom.max_threads, sizeof(*r->slot_gen));
	r->slot_seen = calloc(r->geom.max_threads, sizeof(*r->slot_seen));
	if (!r->slot_tid || !r->slot_gen || !r->slot_seen)
		goto err_refuse;
	r->same_pidns = same_pid_namespace(pid);
	a->st.regions++;
	return r;

err_refuse:
	refuse(a, pid, m->start, why);
	region_free(r);
	return NULL;
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

int app_context__scan(struct app_context *a, pid_t pid, struct app_region **regions)
{
	struct proc_maps *pm = proc_maps__read(pid);
	struct app_region *r;
	size_t i;

	if (!pm)
		return -errno;
	for (i = 0; i < pm->nr; i++) {
		const struct proc_map *m = &pm->maps[i];

		if (!m->deleted || m->pgoff || strcmp(m->path, "/memfd:" CTXPROF_REGION_NAME))
			continue;
		for (r = *regions; r && r->start != m->start; r = r->next_in_proc)
			;
		if (r)
			continue;
		r = map_region(a, pid, m);
		if (r) {
			region_link(a, r);
			r->next_in_proc = *regions;
			*regions = r;
		}
	}
	proc_maps__free(pm);
	return 0;
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

/*
 * The host tid of a slot's claimed tid, or 0 when it is no thread of the
 * process.  In another pid namespace (an app in a container seen from the
 * host) the claim is the namespace's tid: find the task whose NSpid ends
 * with it.  That scan costs a read per thread, once per new claim.
 */
static uint32_t resolve_tid(const struct app_region *r, uint32_t claim)
{
	char path[96];
	struct dirent *de;
	uint32_t host = 0;
	DIR *dir;

	if (!claim)
		return 0;
	if (r->same_pidns) {
		snprintf(path, sizeof(path), "/proc/%d/task/%u", r->pid, claim);
		return access(path, F_OK) ? 0 : claim;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", r->pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!host && (de = readdir(dir))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (task_ns_tid(r->pid, de->d_name) == claim)
			host = strtoul(de->d_name, NULL, 10);
	}
	closedir(dir);
	return host;
}

static void map_slot(struct app_context *a, struct app_region *r, const struct ctxprof_slot_view *v)
{
	/* what the sampler checks the slot against at every read */
	struct ctx_slot_ref ref = {
		.addr = r->start + v->offset,
		.tid = v->tid,
		.generation = v->generation,
	};
	uint32_t tid;

	if (r->slot_tid[v->index]) {
		/* the slot changed hands: forget the previous thread */
		bpf_map_delete_elem(a->map_fd, &r->slot_tid[v->index]);
		r->slot_tid[v->index] = 0;
		a->st.threads--;
	}
	tid = resolve_tid(r, v->tid);
	if (!tid) {
		a->st.threads_rejected++;
		return;
	}
	if (bpf_map_update_elem(a->map_fd, &tid, &ref, BPF_ANY)) {
		a->st.map_full++;
		return;
	}
	r->slot_tid[v->index] = tid;
	r->slot_gen[v->index] = v->generation;
	a->st.threads++;
}

static void sync_slots(struct app_context *a, struct app_region *r)
{
	struct ctxprof_slot_view v;
	uint32_t cursor = 0, i;

	while (ctxprof_region__next_slot(r->base, &r->geom, &cursor, &v, &r->st)) {
		if (v.state != CTXPROF_SLOT_ACTIVE)
			continue;
		r->slot_seen[v.index] = a->epoch;
		if (r->slot_tid[v.index] && r->slot_gen[v.index] == v.generation)
			continue;
		map_slot(a, r, &v);
	}
	/* threads that left their slot since the last poll */
	for (i = 0; i < r->geom.max_threads; i++) {
		if (!r->slot_tid[i] || r->slot_seen[i] == a->epoch)
			continue;
		bpf_map_delete_elem(a->map_fd, &r->slot_tid[i]);
		r->slot_tid[i] = 0;
		a->st.threads--;
	}
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
};

static void on_span_event(void *ctx, const struct ctxprof_slot_view *slot,
			  const struct ctxprof_span_event *ev)
{
	struct drain_ctx *d = ctx;

	d->a->st.span_events++;
}

static void on_tag(void *ctx, const struct ctxprof_slot_view *slot, uint32_t id, const char *key,
		   uint32_t key_len, const char *value, uint32_t value_len)
{
	struct drain_ctx *d = ctx;
	struct app_region *r = d->r;
	struct tag_ent *t;

	if (!id || key_len > MAX_TAG_STRING || value_len > MAX_TAG_STRING ||
	    r->nr_tags >= MAX_TAGS_PER_REGION) {
		d->a->st.tags_dropped++;
		return;
	}
	/* an id is named once: a later record for it (a replay) changes nothing */
	if (tag_find(r, id))
		return;
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

void app_context__poll(struct app_context *a)
{
	static const struct ctxprof_drain_ops ops = {
		.span_event = on_span_event,
		.tag = on_tag,
	};
	struct drain_ctx d = {.a = a};
	struct timespec ts;
	struct app_region *r;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* epoch 0 marks "never seen" */
	if (++a->epoch == 0)
		a->epoch = 1;
	for (r = a->regions; r; r = r->next) {
		sync_slots(a, r);
		d.r = r;
		ctxprof_region__drain(r->base, &r->geom, ts.tv_sec * 1000000000ull + ts.tv_nsec,
				      &ops, &d, &r->st);
	}
}

int app_context__tag(const struct app_region *regions, uint32_t id, const char **key,
		     const char **value)
{
	const struct tag_ent *t;
	const struct app_region *r;

	for (r = regions; r; r = r->next_in_proc) {
		t = tag_find(r, id);
		if (t) {
			*key = t->key;
			*value = t->value;
			return 0;
		}
	}
	return -ENOENT;
}

void app_context__stats(const struct app_context *a, struct app_context_stats *st)
{
	const struct app_region *r;

	*st = a->st;
	st->lane_errors = 0;
	for (r = a->regions; r; r = r->next)
		st->lane_errors += r->st.bad_slot_state + r->st.bad_queue + r->st.bad_ring_index +
				   r->st.bad_ring_used + r->st.bad_record + r->st.unknown_record +
				   r->st.free_queue_full;
}

void app_context__release(struct app_region *regions)
{
	struct app_region *next;

	for (; regions; regions = next) {
		next = regions->next_in_proc;
		region_unlink(regions);
		region_free(regions);
	}
}

void app_context__free(struct app_context *a)
{
	if (!a)
		return;
	/* every region belongs to a process state, released before this */
	free(a);
}
