// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ctxprof_abi.h"
#include "otel_abi.h"
#include "processes/process_state.h"
#include "util/clock.h"

/* lossy: a process whose slot another took waits for its next refresh */
#define APP_DUE_SLOTS 64

struct process_states {
	struct symbolizer *sym;
	struct process_state_hooks hooks;
	struct pod_index *pods;	       /* NULL: no Kubernetes names */
	pthread_mutex_t retired_lock;  /* the reclaim thread pushes, the exporter collects */
	struct process_state *retired; /* newest first */
	unsigned int nr_retired;
	/* processes a refresh saw map a libctxprof region: the main thread's */
	_Atomic uint32_t app_due[APP_DUE_SLOTS];
};

struct process_states *process_states__new(struct symbolizer *sym)
{
	struct process_states *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->sym = sym;
	pthread_mutex_init(&ps->retired_lock, NULL);
	return ps;
}

static void state_free(struct process_state *st, void (*release)(struct process_state *st))
{
	if (release)
		release(st);
	maps_history__release(&st->maps);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

unsigned int process_states__collect(struct process_states *ps, uint64_t before_ns,
				     void (*release)(struct process_state *st))
{
	struct process_state **pp, *st, *done = NULL;
	unsigned int n = 0;

	pthread_mutex_lock(&ps->retired_lock);
	for (pp = &ps->retired; (st = *pp);) {
		if (st->retired_ns >= before_ns ||
		    atomic_load_explicit(&st->pins, memory_order_acquire)) {
			pp = &st->next_retired;
			continue;
		}
		*pp = st->next_retired;
		st->next_retired = done;
		done = st;
		ps->nr_retired--;
	}
	pthread_mutex_unlock(&ps->retired_lock);
	for (; done; done = st, n++) {
		st = done->next_retired;
		state_free(done, release);
	}
	return n;
}

void process_states__free(struct process_states *ps)
{
	if (!ps)
		return;
	process_states__collect(ps, UINT64_MAX, NULL);
	pthread_mutex_destroy(&ps->retired_lock);
	free(ps);
}

void process_states_retire(void *ctx, void *state)
{
	struct process_states *ps = ctx;
	struct process_state *st = state;

	st->retired_ns = mono_ns();
	pthread_mutex_lock(&st->lock);
	st->retired = true;
	if (ps->hooks.retired)
		ps->hooks.retired(ps->hooks.ctx, st);
	pthread_mutex_unlock(&st->lock);
	pthread_mutex_lock(&ps->retired_lock);
	st->next_retired = ps->retired;
	ps->retired = st;
	ps->nr_retired++;
	pthread_mutex_unlock(&ps->retired_lock);
}

static struct process_state *state_new(uint32_t pid, const struct process_image *img,
				       const char *kube_id, const struct pod_meta *kube)
{
	struct process_state *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->pid = pid;
	st->exec_id = img->exec_id;
	memcpy(st->comm, img->comm, sizeof(st->comm));
	memcpy(st->container_id, img->container_id, sizeof(st->container_id));
	/* names looked up for this very id (the image may have changed since) */
	if (kube && !strcmp(kube_id, st->container_id))
		st->kube = *kube;
	pthread_mutex_init(&st->lock, NULL);
	return st;
}

static struct process_state *get(struct process_states *ps, struct thread_registry *reg,
				 uint32_t pid, bool pin)
{
	char kube_id[THREAD_REGISTRY_CONTAINER_ID_LEN + 1] = "";
	const struct process_image *img;
	const struct process_info *p;
	struct process_state *st = NULL, *mine;
	struct pod_meta kube, *found = NULL;

again:
	thread_registry__read_lock();
	p = thread_registry__lookup_process(reg, pid);
	img = p ? process_info__image(p) : NULL;
	if (!img)
		goto out;
	st = process_image__state(img);
	if (st)
		goto out;
	/* a container's names take the index's lock: look them up outside
	 * the read-side section, then look the image up again */
	if (ps->pods && img->container_id[0] && !kube_id[0]) {
		memcpy(kube_id, img->container_id, sizeof(kube_id));
		thread_registry__read_unlock();
		if (pod_index__lookup(ps->pods, kube_id, &kube))
			found = &kube;
		goto again;
	}
	mine = state_new(pid, img, kube_id, found);
	if (!mine)
		goto out;
	if (process_image__set_state(img, mine)) {
		st = mine;
	} else {
		/* another thread installed one first */
		state_free(mine, NULL);
		st = process_image__state(img);
	}
out:
	/* in the read-side section the image, so its state, cannot be retired */
	if (st && pin)
		atomic_fetch_add_explicit(&st->pins, 1, memory_order_acq_rel);
	thread_registry__read_unlock();
	return st;
}

void process_states__set_pods(struct process_states *ps, struct pod_index *pods)
{
	ps->pods = pods;
}

struct process_state *process_states__get(struct process_states *ps, struct thread_registry *reg,
					  uint32_t pid)
{
	return get(ps, reg, pid, false);
}

struct process_state *process_states__get_pinned(struct process_states *ps,
						 struct thread_registry *reg, uint32_t pid)
{
	return get(ps, reg, pid, true);
}

bool process_state__maps_mention(const struct process_state *st, const char *what)
{
	const struct maps_history *h = &st->maps;

	return h->text && memmem(h->text, h->text_len, what, strlen(what));
}

/*
 * Whether the main thread must look at @st's application context: a
 * libctxprof region (a line naming its memfd) it has not looked at yet, or
 * an OpenTelemetry context mapping in mappings that changed (@changed), so
 * that the first read of a process that runs already finds it.
 */
static bool app_due(const struct process_state *st, bool changed)
{
	return (!atomic_load_explicit(&st->app_seen, memory_order_relaxed) &&
		process_state__maps_mention(st, CTXPROF_REGION_MAPS_NAME)) ||
	       (changed && process_state__maps_mention(st, OTEL_CTX_NAME));
}

int process_states__refresh(struct process_states *ps, struct process_state *st)
{
	uint64_t now = mono_ns();
	bool app;
	int ret;

	pthread_mutex_lock(&st->lock);
	ret = maps_history__refresh(&st->maps, ps->sym, st->pid, now);
	if (ret > 0)
		st->maps_gen++;
	app = ret >= 0 && app_due(st, ret > 0);
	pthread_mutex_unlock(&st->lock);
	if (app)
		atomic_store_explicit(&ps->app_due[st->pid % APP_DUE_SLOTS], st->pid,
				      memory_order_relaxed);
	atomic_store_explicit(
		&st->refresh_after_ns,
		now + (ret > 0 ? PROCESS_STATE_REFRESH_SOON_NS : PROCESS_STATE_REFRESH_NS),
		memory_order_relaxed);
	if (ret > 0 && ps->hooks.mapped)
		ps->hooks.mapped(ps->hooks.ctx, st);
	return ret < 0 ? ret : 0;
}

struct process_state *process_states__find(struct process_states *ps, struct thread_registry *reg,
					   uint32_t pid, uint32_t exec_id)
{
	struct process_state *cur = NULL, *st, *unknown = NULL;
	const struct process_image *img;
	const struct process_info *p;

	thread_registry__read_lock();
	p = thread_registry__lookup_process(reg, pid);
	img = p ? process_info__image(p) : NULL;
	if (img)
		cur = process_image__state(img);
	thread_registry__read_unlock();
	if (cur && cur->exec_id == exec_id)
		return cur;
	if (cur && !cur->exec_id)
		unknown = cur;
	/* newest first: a pid reused within one interval names its latest image */
	pthread_mutex_lock(&ps->retired_lock);
	for (st = ps->retired; st; st = st->next_retired) {
		if (st->pid != pid)
			continue;
		if (st->exec_id == exec_id)
			break;
		if (!st->exec_id && !unknown)
			unknown = st;
	}
	pthread_mutex_unlock(&ps->retired_lock);
	if (st)
		return st;
	if (unknown)
		return unknown;
	/* a sample without an exec id (0) takes whatever the pid has now */
	return exec_id ? NULL : cur;
}

void process_states__app_due(struct process_states *ps, void (*fn)(void *ctx, uint32_t pid),
			     void *ctx)
{
	uint32_t pid;

	for (int i = 0; i < APP_DUE_SLOTS; i++) {
		if (!atomic_load_explicit(&ps->app_due[i], memory_order_relaxed))
			continue;
		pid = atomic_exchange_explicit(&ps->app_due[i], 0, memory_order_relaxed);
		if (pid)
			fn(ctx, pid);
	}
}

void process_states__set_hooks(struct process_states *ps, const struct process_state_hooks *h)
{
	ps->hooks = *h;
}

unsigned int process_states__nr_retired(struct process_states *ps)
{
	unsigned int n;

	pthread_mutex_lock(&ps->retired_lock);
	n = ps->nr_retired;
	pthread_mutex_unlock(&ps->retired_lock);
	return n;
}

struct symbolizer *process_states__symbolizer(const struct process_states *ps)
{
	return ps->sym;
}
