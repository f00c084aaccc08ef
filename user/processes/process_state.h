/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * process_state - what the collector knows of one process image, kept in the
 * thread registry's entry for it (the image's collector slot, see
 * process_image__state() in thread_registry.h): its labels, what it had
 * mapped (for naming its frames), its libctxprof region.  [seed:
 * rcu-thread-manager: the registry is the home of per-process facts]
 *
 * One state per image: an exec starts a new image and so a new state, which
 * is how a sample taken before an exec is named from the old program's
 * mappings (samples carry the image's exec_id, see include/records.h).
 *
 * Lifetime.  A state is created on demand (process_states__get()) and
 * installed in its image's slot; it outlives the image: when the registry
 * reclaims an image (exec or exit, after an RCU grace period) the state is
 * retired, not freed, so the export that follows still names the samples of
 * a process that lived 10 ms.  process_states__collect(), called by the
 * exporter's thread after an export, frees states retired long enough ago.
 * Only that thread frees states: a pointer it got from process_states__find()
 * stays valid until it calls collect.
 *
 * Locking.  Labels (@comm, @container_id, @kube), pid and exec_id are
 * immutable: set before the state is installed.  @maps is refreshed by the
 * tracking thread (exec, fork) and the main thread (first sample, periodic
 * refresh) and read by the exporter: under @lock.  @refresh_after_ns may be
 * read without it (the drain threads' "due a read?" test).  @app and @otel
 * belong to the main thread.
 */
#ifndef CTXPROF_PROCESS_STATE_H
#define CTXPROF_PROCESS_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "processes/pod_meta.h"
#include "processes/thread_registry.h"
#include "symbols/maps_history.h"

struct app_region;
struct otel_proc;
struct unwind_proc_state;

/*
 * A sampled process's mappings are re-read at most this often; sooner (the
 * second figure) after a read that found new code, because a process that
 * just exec'd or dlopen()ed is still mapping its libraries.
 */
#define PROCESS_STATE_REFRESH_NS      1000000000ull
#define PROCESS_STATE_REFRESH_SOON_NS 100000000ull

struct process_state {
	uint32_t pid;
	uint32_t exec_id; /* the image's (process_image.exec_id); 0: unknown */
	char comm[THREAD_REGISTRY_COMM_LEN];
	char container_id[THREAD_REGISTRY_CONTAINER_ID_LEN + 1];
	/* its container's Kubernetes names (pod_meta.h), "" when none are known */
	struct pod_meta kube;
	pthread_mutex_t lock; /* @maps */
	struct maps_history maps;
	/* CLOCK_MONOTONIC time after which @maps is due a re-read (libraries
	 * loaded since); 0 until the first read.  Read without @lock by the
	 * drain threads, which ask the main thread for a refresh past it. */
	_Atomic uint64_t refresh_after_ns;
	uint32_t maps_gen; /* bumped under @lock each time @maps gains a snapshot */
	/* what the BPF unwinder has of it (unwind/unwinder.c), under @lock */
	struct unwind_proc_state *unwind;
	bool retired;		   /* under @lock: the image is gone */
	struct app_region *app;	   /* its libctxprof region, NULL when none (main thread) */
	_Atomic bool app_seen;	   /* the main thread looked at its region (app_due) */
	struct otel_proc *otel;	   /* its OpenTelemetry context, NULL when none (main thread) */
	_Atomic unsigned int pins; /* a thread holding it across long work: not freed */
	/* set once, when the registry let the image go */
	uint64_t retired_ns;
	struct process_state *next_retired;
};

struct process_states;

/**
 * process_states__new() - the states of a registry's images.  Create it
 * before the registry, and create the registry with
 * opts->state_free = process_states_retire and opts->state_ctx set to the
 * pointer this returns (see thread_registry_opts).
 * @sym: the symbolizer snapshots resolve their files with
 * Return: NULL with errno set.  Pair with process_states__free() after
 * thread_registry__free() (which retires every state left).
 */
struct process_states *process_states__new(struct symbolizer *sym);

/** process_states__free() - free every retired state; accepts NULL. */
void process_states__free(struct process_states *ps);

/**
 * process_states_retire() - the registry's state_free: @state's image is
 * gone.  Runs on the registry's reclaim thread; takes only the retire lock.
 */
void process_states_retire(void *ctx, void *state);

/**
 * process_states__get() - the state of @pid's current image, created (with
 * the image's labels) when it has none.  Any registered registry thread,
 * outside a read-side section.
 * Return: the state, or NULL when @pid is not in the registry (or ENOMEM).
 * Valid on the exporter's thread until its next process_states__collect();
 * on other threads, only until the image may be retired: use it at once.
 */
struct process_state *process_states__get(struct process_states *ps, struct thread_registry *reg,
					  uint32_t pid);

/**
 * process_states__get_pinned() - process_states__get(), pinned: collect
 * skips the state until process_states__unpin(), so a thread other than
 * the collector's may keep it across long work (a table build).
 */
struct process_state *process_states__get_pinned(struct process_states *ps,
						 struct thread_registry *reg, uint32_t pid);

static inline void process_states__unpin(struct process_state *st)
{
	atomic_fetch_sub_explicit(&st->pins, 1, memory_order_acq_rel);
}

/**
 * process_states__refresh() - re-read @st's mappings (cheap when unchanged)
 * and set its next refresh PROCESS_STATE_REFRESH_NS from now, or
 * PROCESS_STATE_REFRESH_SOON_NS when the executable mappings changed.
 * Return: 0 or -errno (-ESRCH: gone).
 */
int process_states__refresh(struct process_states *ps, struct process_state *st);

/**
 * process_state__maps_mention() - whether @st's last mappings text names
 * @what anywhere (a mapping's name: "OTEL_CTX", the libctxprof memfd).
 * With @st->lock held.
 */
bool process_state__maps_mention(const struct process_state *st, const char *what);

/**
 * process_states__find() - the state of image (@pid, @exec_id), current or
 * retired: an exact match first, then an image whose exec_id is unknown (0:
 * found by the /proc scan).  Exporter's thread.
 * Return: the state or NULL.
 */
struct process_state *process_states__find(struct process_states *ps, struct thread_registry *reg,
					   uint32_t pid, uint32_t exec_id);

/**
 * process_states__collect() - free states retired before @before_ns
 * (CLOCK_MONOTONIC) and not pinned.  Exporter's thread, after an export.
 * @release: releases what the main thread attached to a state (@app,
 * @otel) before it is freed; NULL when it attaches nothing
 * Return: how many were freed.
 */
unsigned int process_states__collect(struct process_states *ps, uint64_t before_ns,
				     void (*release)(struct process_state *st));

/*
 * Hooks for the module that keeps per-image data outside the collector (the
 * BPF unwinder): @mapped runs after a refresh added a snapshot to a state's
 * maps, on the refreshing thread, without @lock; @retired when the registry
 * let the image go, on its reclaim thread, with @lock held (detach what
 * belongs to you, queue it, return: no blocking, no registry calls).
 */
struct process_state_hooks {
	void (*mapped)(void *ctx, struct process_state *st);
	void (*retired)(void *ctx, struct process_state *st);
	void *ctx;
};

/**
 * process_states__set_pods() - name containers' pods from @pods (labels
 * pod, namespace, container); before any state exists.  NULL: none.
 */
void process_states__set_pods(struct process_states *ps, struct pod_index *pods);

/** process_states__set_hooks() - before any state exists. */
void process_states__set_hooks(struct process_states *ps, const struct process_state_hooks *h);

/**
 * process_states__app_due() - call @fn with each process whose mappings,
 * read since the last call, showed a libctxprof region its state's
 * @app_seen does not say was looked at, or changed and show an
 * OpenTelemetry context mapping ("OTEL_CTX"): --all and --children find the
 * applications to read trace context from this way (at the /proc scan, at
 * exec, at a first sample, at each periodic re-read), before the periodic
 * re-reads would.  @fn sets @app_seen once it looked.  Main thread.  Lossy (64 slots by pid): a
 * process missed comes again at its next re-read.
 */
void process_states__app_due(struct process_states *ps, void (*fn)(void *ctx, uint32_t pid),
			     void *ctx);

/** process_states__nr_retired() - states waiting to be collected. */
unsigned int process_states__nr_retired(struct process_states *ps);

/** process_states__symbolizer() - the symbolizer given to process_states__new(). */
struct symbolizer *process_states__symbolizer(const struct process_states *ps);

#endif /* CTXPROF_PROCESS_STATE_H */
