/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * process_state - what the collector knows of one process image, kept in the
 * thread registry's entry for it (the image's collector slot, see
 * process_image__state() in thread_registry.h): its labels, what it had
 * mapped (for naming and unwinding its frames), its libctxprof region and
 * OpenTelemetry context.  The registry is the home of per-process facts
 * (docs/design/thread-registry.md); other modules look them up here.
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
 * Mappings.  The state is the one home of its image's mappings
 * (processes/mappings.h).  A read of /proc/PID/maps whose text is unchanged
 * stops there; one whose executable mappings changed adds a snapshot to
 * @maps, after the state set's resolver attached the file behind each
 * mapping (the symbolizer: process_states__set_resolver()).  Then every
 * subscriber (process_states__subscribe()) is told: the unwinder on the
 * refreshing thread, the application-context readers on the main thread
 * with every mapping of that read.  A forked child starts with its parent's
 * newest snapshot, shared.  When the image goes, subscribers are told so.
 *
 * Locking.  Labels (@comm, @container_id, @kube), pid and exec_id are
 * immutable: set before the state is installed.  @maps and what reading it
 * keeps (@text_hash, @text_len, @maps_gen, @maps_flags) are refreshed by the tracking
 * thread (exec, fork) and the main thread (first sample, periodic refresh)
 * and read by the exporter and the unwinder: under @lock.
 * @refresh_after_ns may be read without it (the drain threads' "due a
 * read?" test).  @app, @otel, @perf_map and @perf_map_checked_ns belong
 * to the main thread, which sets @delivered.
 *
 * Lock order: a state's @lock is taken before the resolver's (the
 * symbolizer's) and before a subscriber's own lock (its gone hook), never
 * after them, and never inside a registry read-side section.
 */
#ifndef CTXPROF_PROCESS_STATE_H
#define CTXPROF_PROCESS_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "processes/mappings.h"
#include "processes/pod_meta.h"
#include "processes/thread_registry.h"

struct app_region;
struct go_proc;
struct python_proc;
struct otel_proc;
struct perf_map;
struct hotspot_proc;
struct proc_maps;
struct unwind_proc_state;

/*
 * A sampled process's mappings are re-read at most this often; sooner (the
 * second figure) after a read that found new code, because a process that
 * just exec'd or dlopen()ed is still mapping its libraries.
 */
#define PROCESS_STATE_REFRESH_NS      1000000000ull
#define PROCESS_STATE_REFRESH_SOON_NS 100000000ull
/*
 * Where the kernel reports new code (processes/mmap_events.h), a read that
 * finds nothing new doubles the wait before the next, up to this: the
 * reports tell the code, the reads the rest (a libctxprof region, an
 * OpenTelemetry context) of a process long set up.
 */
#define PROCESS_STATE_REFRESH_MAX_NS 16000000000ull

/* generations whose start times a state publishes for the drain threads */
#define PROCESS_STATE_GEN_TIMES 8
/* a stored trace's flags carry the generation of mappings of its samples
 * (MAPPINGS_GEN_MASK of it) from this bit on; the sampler's own flags stay
 * below it (include/records.h) */
#define PROCESS_STATE_GEN_SHIFT 16

/* subscribers a state set takes */
#define PROCESS_STATES_MAX_SUBSCRIBERS 6

struct process_state {
	uint32_t pid;
	uint32_t exec_id; /* the image's (process_image.exec_id); 0: unknown */
	char comm[THREAD_REGISTRY_COMM_LEN];
	char container_id[THREAD_REGISTRY_CONTAINER_ID_LEN + 1];
	/* its container's Kubernetes names (pod_meta.h), "" when none are known */
	struct pod_meta kube;
	pthread_mutex_t lock; /* the fields below up to @retired */
	struct mappings_history maps;
	uint64_t text_hash;  /* of the last maps text read: an unchanged text stops there */
	size_t text_len;     /* its length; 0: never read */
	uint32_t maps_gen;   /* bumped each time @maps gains a snapshot */
	uint32_t maps_flags; /* MAPPINGS_F_* of the last text read */
	/* what the BPF unwinder has of it (unwind/unwinder.c) */
	struct unwind_proc_state *unwind;
	bool retired; /* the image is gone */
	/* @maps_gen and when each of its last generations began, published
	 * (release) for the drain threads: process_state__gen_at() */
	_Atomic uint32_t gen_pub;
	_Atomic uint64_t gen_since[PROCESS_STATE_GEN_TIMES];
	/* CLOCK_MONOTONIC time after which @maps is due a re-read (libraries
	 * loaded since); 0 until the first read.  Read without @lock by the
	 * drain threads, which ask the main thread for a refresh past it. */
	_Atomic uint64_t refresh_after_ns;
	uint64_t refresh_step_ns; /* the wait after a read finding nothing new; under @lock */
	struct app_region *app;	  /* its libctxprof region, NULL when none (main thread) */
	struct otel_proc *otel;	  /* its OpenTelemetry context, NULL when none (main thread) */
	/* its JIT code's names (symbols/perf_map.h), NULL until it had anonymous
	 * code at an export, and when the exporter last looked (main thread) */
	struct perf_map *perf_map;
	uint64_t perf_map_checked_ns;
	/* its JVM's reader (runtimes/hotspot/hotspot_proc.h), NULL when none;
	 * looked for once, at the first export with anonymous code (main thread) */
	struct hotspot_proc *hotspot;
	bool hotspot_looked;
	_Atomic bool delivered;	   /* its main-thread subscribers saw its mappings */
	_Atomic unsigned int pins; /* a thread holding it across long work: not freed */
	struct go_proc *go;	   /* its goroutine labels' reader, NULL when none (main thread) */
	/* its CPython interpreter's reader, NULL when none (main thread) */
	struct python_proc *python;
	bool python_looked; /* its mappings were looked at for one (main thread) */
	/* under the states' retired_lock: 0 until it is on the retired list
	 * (from the image's unlinking on), then when the registry let the
	 * image go (UINT64_MAX until then: not collected) */
	uint64_t retired_ns;
	struct process_state *next_retired;
};

/**
 * process_state__gen_at() - the generation of @st's mappings that was the
 * newest at CLOCK_MONOTONIC @time_ns, as far as published: 0 when none was
 * yet (or it is older than the last PROCESS_STATE_GEN_TIMES).  Any thread
 * holding @st (a drain thread in a registry read-side section); no lock.
 */
static inline uint32_t process_state__gen_at(const struct process_state *st, uint64_t time_ns)
{
	uint32_t g = atomic_load_explicit(&st->gen_pub, memory_order_acquire), k;

	for (k = g; k && g - k < PROCESS_STATE_GEN_TIMES; k--)
		if (atomic_load_explicit(&st->gen_since[k % PROCESS_STATE_GEN_TIMES],
					 memory_order_relaxed) <= time_ns)
			return k;
	return 0;
}

/*
 * Who gives each snapshot's mappings their file (mapping.file): the
 * symbolizer.  @attach runs on the refreshing thread with the state's lock
 * held, before the snapshot is published; @pid is the process whose
 * /proc/PID/map_files and root the files are opened through; @prev is the
 * image's previous snapshot (NULL for its first), whose files may be reused
 * where a mapping did not change, but in [@fresh_start, @fresh_end), where
 * the kernel reported new mappings (the same text may name another file:
 * one rewritten in place).  @detach runs when a snapshot's last reference goes, on
 * any thread, with no lock of ours held.
 */
struct process_state_resolver {
	void (*attach)(void *ctx, pid_t pid, struct mappings *snap, const struct mappings *prev,
		       uint64_t fresh_start, uint64_t fresh_end);
	void (*detach)(void *ctx, struct mappings *snap);
	void *ctx;
};

/*
 * A reader of process mappings.  @changed: @st's mappings changed; @snap is
 * its newest snapshot (take your own reference with mappings__get() to keep
 * it), @all every mapping of the read that found the change (NULL when
 * there was none: a forked child starting with its parent's snapshot).
 * Runs on the refreshing thread without the state's lock, or, with
 * @main_thread, on the main thread at process_states__deliver(), and then
 * only for reads whose mappings show one of @wants (MAPPINGS_F_*): the
 * first such read of an image, and later reads whose text changed; and,
 * with @first_read, for the first read of every image.
 * @gone: the image went; on the registry's reclaim thread with the state's
 * lock held: detach what is yours, queue it, return (no blocking, no
 * registry calls).  Either may be NULL.
 */
struct process_state_subscriber {
	void (*changed)(void *ctx, struct process_state *st, struct mappings *snap,
			const struct proc_maps *all);
	void (*gone)(void *ctx, struct process_state *st);
	void *ctx;
	bool main_thread;
	uint32_t wants;
	/* with @main_thread: also the first read of every image, whatever its
	 * mappings show (a look at each program: exactly once per image) */
	bool first_read;
};

/* Counters of the mappings home, for the summary. */
struct process_states_stats {
	uint64_t reads;		/* /proc/PID/maps reads, unchanged ones included */
	uint64_t reads_changed; /* of those, reads whose text changed */
	uint64_t mapped;	/* new executable mappings the kernel reported, in generations */
	uint64_t bad_lines;	/* unparsable lines in them */
	uint64_t snapshots;	/* snapshots added (executable mappings changed) */
	uint64_t inherited;	/* forked children started with their parent's snapshot */
	uint64_t events_lost;	/* main-thread deliveries dropped: queue full (retried) */
};

struct process_states;

/**
 * process_states__new() - the states of a registry's images.  Create it
 * before the registry, and create the registry with
 * opts->state_free = process_states_retire, opts->state_unlinked =
 * process_states_unlinked and opts->state_ctx set to the pointer this
 * returns (see thread_registry_opts).
 * Return: NULL with errno set.  Pair with process_states__free() after
 * thread_registry__free() (which retires every state left).
 */
struct process_states *process_states__new(void);

/** process_states__free() - free every retired state; accepts NULL. */
void process_states__free(struct process_states *ps);

/**
 * process_states__set_resolver() - who attaches files to snapshots; before
 * any state exists.
 */
void process_states__set_resolver(struct process_states *ps,
				  const struct process_state_resolver *r);

/**
 * process_states__subscribe() - add a reader of mappings; before any state
 * exists.  Return: 0, or -ENOSPC past PROCESS_STATES_MAX_SUBSCRIBERS.
 */
int process_states__subscribe(struct process_states *ps, const struct process_state_subscriber *s);

/**
 * process_states_retire() - the registry's state_free: @state's image is
 * gone.  Runs on the registry's reclaim thread; tells the subscribers.
 */
void process_states_retire(void *ctx, void *state);

/**
 * process_states_unlinked() - the registry's state_unlinked: @state's image
 * left the registry (exit, exec) and is retired a grace period later.  On
 * the registry's writer, under its lock.  From now on process_states__find()
 * finds @state on the retired list, so an export in between still names the
 * image's samples; process_states__collect() leaves it until its retirement.
 */
void process_states_unlinked(void *ctx, void *state);

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
 * process_states__refresh() - re-read @st's mappings (cheap when the text is
 * unchanged), add a snapshot when its executable mappings changed, tell the
 * subscribers; set its next refresh PROCESS_STATE_REFRESH_NS from now, or
 * PROCESS_STATE_REFRESH_SOON_NS when the executable mappings changed.
 * Any registered registry thread; takes @st->lock.
 * Return: 0 or -errno (-ESRCH: gone; earlier snapshots stay).
 */
int process_states__refresh(struct process_states *ps, struct process_state *st);

/**
 * process_states__add_text() - process_states__refresh() from maps text
 * already read (@len bytes, not kept), at CLOCK_MONOTONIC @now_ns, its
 * files opened as process @pid's (the state's own pid but in tests).
 * Return: 1 when a snapshot was added, 0 when the executable mappings are
 * unchanged, or -errno.
 */
int process_states__add_text(struct process_states *ps, struct process_state *st, pid_t pid,
			     const char *text, size_t len, uint64_t now_ns);

/* a new executable mapping the kernel reported (processes/mmap_events.h) */
struct process_mapped {
	uint64_t time_ns; /* CLOCK_MONOTONIC, when it was mapped */
	uint64_t start;
	uint64_t end;
};

/**
 * process_states__mapped() - @st's process mapped new code (@ev, @n of them,
 * in time order): each starts a generation of its mappings at its time, for
 * the samples drained from then on; then its mappings are read, once, and
 * stand for the newest (the files of the new ranges resolved afresh, even
 * where the text did not change).  Changes older than the last read are in
 * it already: skipped.  A process gone before the read keeps generations
 * whose new ranges name no file.  Tracking thread.
 * Return: 0 or -errno.
 */
int process_states__mapped(struct process_states *ps, struct process_state *st,
			   const struct process_mapped *ev, unsigned int n);

/**
 * process_states__inherit() - a forked @child starts with @parent's newest
 * snapshot (the address space fork copied), unless it has mappings of its
 * own already; its first sample reads them (refresh due at once).  Tracking
 * thread.  Return: 0, -ENOENT when the parent has none (read them instead),
 * -ESRCH when the child is not in the registry.
 */
int process_states__inherit(struct process_states *ps, struct thread_registry *reg, uint32_t child,
			    uint32_t parent);

/**
 * process_states__deliver() - run the main-thread subscribers for the reads
 * queued since the last call.  Main thread.
 */
void process_states__deliver(struct process_states *ps);

/**
 * process_states__latest() - @st's newest snapshot, with a reference the
 * caller drops with mappings__put(); NULL when none was read.  Takes
 * @st->lock.
 */
struct mappings *process_states__latest(struct process_state *st);

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
 * @otel, @perf_map) before it is freed; NULL when it attaches nothing
 * Return: how many were freed.
 */
unsigned int process_states__collect(struct process_states *ps, uint64_t before_ns,
				     void (*release)(struct process_state *st));

/**
 * process_states__set_pods() - name containers' pods from @pods (labels
 * pod, namespace, container); before any state exists.  NULL: none.
 */
void process_states__set_pods(struct process_states *ps, struct pod_index *pods);

/**
 * process_states__set_refresh_max() - a sampled process's mappings are
 * re-read after PROCESS_STATE_REFRESH_NS, the wait doubling while reads find
 * nothing new, up to @max_ns (PROCESS_STATE_REFRESH_NS, the default: every
 * second).  For where the kernel reports new code; before any state exists.
 */
void process_states__set_refresh_max(struct process_states *ps, uint64_t max_ns);

/** process_states__nr_retired() - states waiting to be collected. */
unsigned int process_states__nr_retired(struct process_states *ps);

/** process_states__stats() - counters since creation; any thread. */
void process_states__stats(struct process_states *ps, struct process_states_stats *out);

#endif /* CTXPROF_PROCESS_STATE_H */
