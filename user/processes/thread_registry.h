/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * thread_registry - the collector's view of every thread and process on the
 * host, looked up by tid without locks.  (docs/design/thread-registry.md)
 *
 * The only module that calls liburcu (flavor urcu-memb; its read side is
 * inlined, _LGPL_SOURCE: see the licence note in thread_registry.c).
 *
 * Structure
 *   A TID-indexed table of atomic pointers to struct thread_info, built as a
 *   two-level table: a top-level array of THREAD_REGISTRY_NR_CHUNKS atomic
 *   chunk pointers, each chunk holding THREAD_REGISTRY_CHUNK_SLOTS slots.  A
 *   chunk is allocated on the first insert into it and never freed while the
 *   registry lives: memory follows the TID range in use (a host with
 *   pid_max 32768 needs 8 chunks, 256 KiB, not a flat 32 MiB
 *   array), and since a chunk never goes away, publishing it is one release
 *   store that readers pair with an acquire load, outside any grace period.
 *   A host that cycles pids through pid_max = 4M does end up with the full
 *   32 MiB; a radix tree or hash table is the way out if that hurts.
 *
 *   TID spreading: within a chunk, slot = rotate the 12-bit in-chunk index
 *   right by 3 (the low 3 tid bits become the high 3 slot bits).  Consecutive
 *   tids, which the kernel hands out in order, land 512 slots (4 KiB) apart,
 *   so a cache line of 8 slots holds tids t, t+8, ..., t+56: the writer
 *   publishing a new thread does not invalidate the line readers are using
 *   for its just-created neighbours (false sharing), and the chunk key stays
 *   tid >> 12, so chunk allocation still follows the tid range.
 *
 *   Each process has one struct process_info shared by its threads, holding
 *   an RCU-replaced struct process_image (what the last exec made of it:
 *   comm, exe, cgroup, container id, and the collector's state slot: the
 *   per-process facts the collector keeps, processes/process_state.h).
 *   Intrusive RCU lists (urcu's struct cds_list_head, walked with
 *   cds_list_for_each_entry_rcu) link all threads, all processes, each
 *   process's threads (its thread group) and each process's children.
 *
 * Readers (the drain threads, or anyone)
 *   - call thread_registry__register_thread() once per thread before the
 *     first read, thread_registry__unregister_thread() before it exits;
 *   - wrap lookups in thread_registry__read_lock()/_read_unlock(), or use
 *     thread_registry__visit() and the for_each functions, which take it;
 *   - pointers obtained inside a read-side critical section are valid until
 *     its end, never after; nothing a reader sees changes under it except
 *     the fields documented as updated in place (ppid) and the state slot;
 *   - never block, sleep long or call a writer function inside one (a
 *     writer may wait for readers: see thread_registry__remove()).
 *   Readers are wait-free and never blocked by writers.
 *
 * Writers (the lifecycle thread, and the /proc scan at start)
 *   - are serialized by one mutex, taken by every writer function;
 *     thread_registry__lock_writer() holds it across several calls, with
 *     the _locked variants inside (the /proc scan does so per process);
 *   - the calling thread must be registered (call_rcu needs it).
 *   Updates are weakly consistent, by design: a thread may be visible
 *   by tid before it is on the lists, or the reverse, for an instant.
 *
 * Reclamation: call_rcu (urcu_memb_call_rcu), chosen over a dedicated thread
 *   running synchronize_rcu on batches (256 objects or 10 ms).
 *   bench/registry_bench.c measured both on a shared 2-CPU VM (median of 3):
 *   - at the real load, a writer doing 10k inserts + 10k removes/s, they are
 *     the same in every run: 7.85 vs 7.91 ns per lookup with 1 reader (8.05
 *     vs 8.15 on a busier run), and the writer spends under 1 us per op;
 *   - with the writer unpaced the winner changed from run to run: quiet,
 *     call_rcu 280 ns/op against 324 alone, 777 against 432 with two
 *     readers; busy, 541 against 146 and 644 against 485.  Noise of a
 *     shared 2-CPU box, not a property of either;
 *   - both batch: liburcu's worker sleeps 10 ms between grace periods, so
 *     they issue about as many membarrier() calls (~800/s at 10k/s).
 *   Equal where it matters, so the one with no code of ours: call_rcu needs
 *   no thread, condition variable, batching policy or shutdown path, and
 *   rcu_barrier() is the flush.  The batch-thread variant was removed once
 *   measured (git history has it, should a bigger machine need the re-run).
 *   A grace period is also waited for synchronously in one rare case: see
 *   thread_registry__remove().
 *
 * Incarnations and the /proc scan race
 *   Every insert and remove names the incarnation it is about: the start
 *   time in clock ticks since boot (/proc/PID/stat field 22; the lifecycle
 *   records' start_boottime converted).  A removed thread leaves a tombstone
 *   in its slot carrying that incarnation.  A scan insert (observed state,
 *   THREAD_REGISTRY_F_SCAN) loses against a tombstone or a live entry of the
 *   same incarnation: an exit applied while the scan was reading /proc is not
 *   undone by the scan inserting the dead thread, and a fork seen before the
 *   scan reached the child is not duplicated.  An older incarnation left in
 *   a slot (its exit was lost) is replaced by a newer one.
 *   Limits: a tid reused within one clock tick (10 ms at USER_HZ 100) looks
 *   like the same incarnation, which takes pid_max allocations in that tick;
 *   and the collector must share the host's time namespace, or /proc
 *   start times are offset from the kernel's.
 */
#ifndef CTXPROF_THREAD_REGISTRY_H
#define CTXPROF_THREAD_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* tids are below this: the kernel's PID_MAX_LIMIT on 64-bit (2^22) */
#define THREAD_REGISTRY_MAX_TID	    (1u << 22)
#define THREAD_REGISTRY_CHUNK_SHIFT 12
#define THREAD_REGISTRY_CHUNK_SLOTS (1u << THREAD_REGISTRY_CHUNK_SHIFT)
#define THREAD_REGISTRY_NR_CHUNKS   (THREAD_REGISTRY_MAX_TID >> THREAD_REGISTRY_CHUNK_SHIFT)

#define THREAD_REGISTRY_COMM_LEN 16
/* a container id is 64 lowercase hex digits */
#define THREAD_REGISTRY_CONTAINER_ID_LEN 64
/* exe and cgroup paths longer than this are cut (and flagged) */
#define THREAD_REGISTRY_MAX_PATH 4096

struct thread_registry;

/*
 * What one exec made of a process.  Immutable once published, except @state;
 * replaced as a whole (RCU) on exec, freed a grace period later, when its
 * state is handed to opts->state_free.
 */
struct process_image {
	char comm[THREAD_REGISTRY_COMM_LEN]; /* name at exec (or at the scan) */
	const char *exe;		     /* /proc/PID/exe target, else the exec filename; "" */
	const char *cgroup;		     /* cgroup v2 path (or first v1 path); "" if unknown */
	char container_id[THREAD_REGISTRY_CONTAINER_ID_LEN + 1]; /* "" when none */
	uint64_t cgroup_id; /* cgroup v2 id the path belongs to, 0 if unknown */
	uint32_t exec_id;   /* the image's self_exec_id (sample_record.exec_id); 0: unknown */
	void *state;	    /* collector slot: process_image__state() */
};

/*
 * A process (thread group): shared by its threads, freed a grace period
 * after the last one left.  The registry embeds it in a private struct that
 * also holds its list links.
 */
struct process_info {
	uint32_t pid;		     /* thread group id */
	uint32_t ppid;		     /* parent: in place on re-parenting, process_info__ppid() */
	uint64_t start;		     /* incarnation: the leader's start time, ticks since boot */
	struct process_image *image; /* replaced on exec: process_info__image() */
};

/* A thread.  Immutable once published except @ppid; replaced on rename. */
struct thread_info {
	uint32_t tid;			     /* kernel task id */
	uint32_t pid;			     /* thread group id (tgid) */
	uint32_t ppid;			     /* parent process: in place, thread_info__ppid() */
	uint32_t ptid;			     /* creating thread, 0 if unknown (found by the scan) */
	uint64_t start;			     /* incarnation: start time, ticks since boot */
	char comm[THREAD_REGISTRY_COMM_LEN]; /* thread name */
	const struct process_info *proc;     /* its process; never NULL, outlives the entry */
};

/* thread_registry__insert() input: the thread */
struct thread_desc {
	uint32_t tid;	/* 1 .. max_tid - 1 */
	uint32_t pid;	/* its thread group: tid for a leader */
	uint32_t ppid;	/* parent process */
	uint32_t ptid;	/* creating thread, 0 if unknown */
	uint64_t start; /* incarnation, ticks since boot; the same clock for every caller */
	char comm[THREAD_REGISTRY_COMM_LEN]; /* thread name, NUL-terminated */
};

/* thread_registry__insert()/__exec() input: its process, used when it is new */
struct process_desc {
	uint32_t pid;			     /* thread group id */
	uint32_t ppid;			     /* parent process */
	uint64_t start;			     /* the leader's incarnation */
	char comm[THREAD_REGISTRY_COMM_LEN]; /* "" : the thread's comm */
	const char *exe;		     /* NULL: the parent's (a fork copies its image) */
	const char *cgroup;		     /* NULL: the parent's (exec: the process's own) */
	uint64_t cgroup_id;		     /* id of @cgroup; with a NULL @cgroup, the id of */
					     /* the inherited path when known, else 0 */
	uint32_t exec_id;		     /* the image's self_exec_id; 0: unknown (the scan) */
};

struct thread_registry_opts {
	uint32_t max_tid; /* tids >= this are refused; 0 or above the maximum: the maximum */
	/* takes the collector's state slot of an image back, after its grace
	 * period; runs on the reclaim thread: must not call into the registry */
	void (*state_free)(void *ctx, void *state);
	/* the image holding the state left the registry (its process exited or
	 * exec'd): no lookup finds it from now on, though readers may still
	 * hold it until state_free.  Under the writer lock, on the writer's
	 * thread: must not call into the registry.  NULL: not told */
	void (*state_unlinked)(void *ctx, void *state);
	void *state_ctx; /* the first argument of both */
};

/* thread_registry__insert() flags */
#define THREAD_REGISTRY_F_SCAN (1u << 0) /* observed state: loses to what events did */

/* Counters, read with thread_registry__stats(); exact only when no writer runs. */
struct thread_registry_stats {
	uint64_t nr_threads;   /* live entries */
	uint64_t nr_processes; /* live processes */
	uint64_t nr_chunks;    /* allocated chunks (THREAD_REGISTRY_CHUNK_SLOTS slots each) */
	uint64_t inserted;     /* threads inserted */
	uint64_t removed;      /* threads removed */
	uint64_t renamed;      /* thread entries replaced by a rename */
	uint64_t execs;	       /* process images replaced */
	uint64_t reparented;   /* processes moved to a new parent */
	uint64_t duplicates;   /* inserts of an incarnation already there (-EEXIST) */
	uint64_t stale;	       /* inserts/removes older than what is there (-ESTALE) */
	uint64_t out_of_range; /* tids or pids refused by max_tid (-ERANGE) */
	uint64_t not_found;    /* removes/renames of an unknown thread (-ENOENT) */
	uint64_t superseded;   /* entries of an older incarnation replaced (a lost exit) */
	uint64_t retired;      /* objects handed to reclamation */
	uint64_t reclaimed;    /* of those, freed (after their grace period) */
	uint64_t truncated;    /* exe or cgroup paths cut at THREAD_REGISTRY_MAX_PATH */
};

/**
 * thread_registry__new() - create an empty registry.
 * @opts: may be NULL for the defaults
 * Return: the registry, or NULL with errno set.  Pair with thread_registry__free().
 */
struct thread_registry *thread_registry__new(const struct thread_registry_opts *opts);

/**
 * thread_registry__free() - remove everything, wait for every pending
 * reclamation (state_free included), free the registry.  Accepts NULL.
 * No reader or writer may use @r any more; call outside a read-side section.
 */
void thread_registry__free(struct thread_registry *r);

/**
 * thread_registry__register_thread() - make the calling thread a registry
 * user (liburcu reader registration).  Once per thread, before any read or
 * write call.  Pair with thread_registry__unregister_thread() before exit.
 */
void thread_registry__register_thread(void);

/** thread_registry__unregister_thread() - outside any read-side section. */
void thread_registry__unregister_thread(void);

/**
 * thread_registry__read_lock() - begin a read-side critical section.
 * Nests.  Wait-free; never blocks on writers.
 */
void thread_registry__read_lock(void);

/** thread_registry__read_unlock() - end it. */
void thread_registry__read_unlock(void);

/**
 * thread_registry__lookup() - the thread with @tid.
 * Call inside a read-side critical section; the result is valid until its end.
 * Return: the entry, or NULL (unknown, exited, or out of range).
 */
const struct thread_info *thread_registry__lookup(struct thread_registry *r, uint32_t tid);

/**
 * thread_registry__lookup_process() - the process with @pid, even when its
 * leader thread has exited and other threads live on.
 * Call inside a read-side critical section; valid until its end.
 * Return: the process, or NULL.
 */
const struct process_info *thread_registry__lookup_process(struct thread_registry *r, uint32_t pid);

/* visitor for the functions below; return nonzero to stop an iteration */
typedef int (*thread_visit_fn)(void *ctx, const struct thread_info *t);
typedef int (*process_visit_fn)(void *ctx, const struct process_info *p);

/**
 * thread_registry__visit() - call @fn on the thread with @tid, inside a
 * read-side critical section this function takes.
 * Return: @fn's result, or -ENOENT when there is no such thread.
 */
int thread_registry__visit(struct thread_registry *r, uint32_t tid, thread_visit_fn fn, void *ctx);

/**
 * thread_registry__for_each_thread() - call @fn on every thread, in insertion
 * order, inside one read-side critical section.  Weakly consistent: threads
 * inserted or removed meanwhile may or may not be seen, none is seen twice.
 * Return: the nonzero value @fn stopped with, else 0.
 */
int thread_registry__for_each_thread(struct thread_registry *r, thread_visit_fn fn, void *ctx);

/** thread_registry__for_each_process() - the same over processes. */
int thread_registry__for_each_process(struct thread_registry *r, process_visit_fn fn, void *ctx);

/**
 * thread_registry__for_each_group_thread() - every thread of process @pid.
 * Return: the value @fn stopped with, 0, or -ENOENT when @pid is unknown.
 */
int thread_registry__for_each_group_thread(struct thread_registry *r, uint32_t pid,
					   thread_visit_fn fn, void *ctx);

/**
 * thread_registry__for_each_child() - every process whose parent is @pid.
 * Return: the value @fn stopped with, 0, or -ENOENT when @pid is unknown.
 */
int thread_registry__for_each_child(struct thread_registry *r, uint32_t pid, process_visit_fn fn,
				    void *ctx);

/** process_info__image() - the current image; inside a read-side section. */
static inline const struct process_image *process_info__image(const struct process_info *p)
{
	return __atomic_load_n(&p->image, __ATOMIC_CONSUME);
}

/** process_info__ppid() - the parent pid, which re-parenting updates in place. */
static inline uint32_t process_info__ppid(const struct process_info *p)
{
	return __atomic_load_n(&p->ppid, __ATOMIC_RELAXED);
}

/** thread_info__ppid() - the same, as stored in the thread. */
static inline uint32_t thread_info__ppid(const struct thread_info *t)
{
	return __atomic_load_n(&t->ppid, __ATOMIC_RELAXED);
}

/**
 * process_image__state() - the collector's state slot of @img, or NULL.
 * Inside a read-side section; the state is handed to opts->state_free when
 * the image is reclaimed.
 */
static inline void *process_image__state(const struct process_image *img)
{
	return __atomic_load_n(&img->state, __ATOMIC_ACQUIRE);
}

/**
 * process_image__set_state() - install @state in an empty slot.  Any thread,
 * inside a read-side section.  The registry owns @state on success and hands
 * it to opts->state_free when the image is reclaimed (the process exec'd or
 * died, plus a grace period).
 * Return: true if installed; false if the slot was taken: the caller keeps
 * @state (free it, and use process_image__state()).
 */
static inline bool process_image__set_state(const struct process_image *img, void *state)
{
	void *expected = NULL;

	return __atomic_compare_exchange_n((void **)&img->state, &expected, state, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/**
 * thread_registry__insert() - add thread @td, and its process @pd if the
 * registry has no live process @pd->pid of incarnation @pd->start (a fork,
 * or the first thread the scan finds).  Takes the writer lock.
 * @pd: may be NULL for a new thread of a known process; for a new process it
 *      gives comm/exe/cgroup, inheriting from the parent process where NULL
 * @flags: THREAD_REGISTRY_F_SCAN for observed state (the /proc scan)
 *
 * An entry of an older incarnation in the slot is removed first (its exit
 * was lost); so is a process of an older incarnation.
 * Return: 0; -EEXIST when this incarnation is there already (a duplicate,
 * harmless); -ESTALE when the slot holds a newer incarnation, or (scan only)
 * the tombstone of this one; -ERANGE when a tid or pid is 0 or >= max_tid;
 * -EINVAL when @pd is missing for an unknown process or disagrees with @td;
 * -ENOMEM.
 */
int thread_registry__insert(struct thread_registry *r, const struct thread_desc *td,
			    const struct process_desc *pd, unsigned int flags);

/** thread_registry__insert_locked() - the same, with the writer lock held. */
int thread_registry__insert_locked(struct thread_registry *r, const struct thread_desc *td,
				   const struct process_desc *pd, unsigned int flags);

/**
 * thread_registry__remove() - thread @tid of incarnation @start exited.
 * @start: 0 matches whatever incarnation is there
 *
 * Leaves a tombstone.  When it was its process's last thread, the process
 * goes too and its children are re-parented to pid 1 (or kept as orphans
 * when pid 1 is unknown); moving a child between RCU lists needs readers out
 * of the old list first, so that case waits for one grace period (rare: most
 * children exit before their parent).  Memory is reclaimed after a grace
 * period.  Takes the writer lock.
 * Return: 0; -ENOENT when there is no such thread (a tombstone is still
 * left, for the scan); -ESTALE when the slot holds a newer incarnation;
 * -ERANGE; -ENOMEM (no chunk for the tombstone).
 */
int thread_registry__remove(struct thread_registry *r, uint32_t tid, uint64_t start);

/**
 * thread_registry__rename() - thread @tid of incarnation @start (0: any) is
 * now called @comm.  The entry is replaced (RCU): readers see the old or the
 * new one whole.  Takes the writer lock.
 * Return: 0, -ENOENT, -ESTALE (another incarnation), -ERANGE, -ENOMEM.
 */
int thread_registry__rename(struct thread_registry *r, uint32_t tid, uint64_t start,
			    const char *comm);

/* thread_registry__exec() input */
struct exec_desc {
	uint32_t tid;		/* the exec'ing thread, now the leader: == pd.pid */
	uint32_t old_tid;	/* its tid before exec (differs if a non-leader exec'd) */
	struct process_desc pd; /* the process after exec; NULL exe: none known */
};

/**
 * thread_registry__exec() - process @ed->pd.pid replaced its image.
 * Installs a new image (comm, exe, cgroup; an empty state slot), retires the
 * old one with its state, leaves the process with its one thread @ed->tid
 * (exec kills the others: their exits normally came first), renamed to
 * @ed->pd.comm.  An unknown process is created.  Takes the writer lock.
 * Return: 0, -ERANGE, -EINVAL, -ENOMEM.
 */
int thread_registry__exec(struct thread_registry *r, const struct exec_desc *ed);

/**
 * thread_registry__relink() - give every orphan whose parent is now known
 * its place in the parent's children.  The scan inserts processes in /proc
 * order, children possibly before parents: it calls this at the end.
 * Takes the writer lock.
 * Return: the number of processes linked.
 */
int thread_registry__relink(struct thread_registry *r);

/** thread_registry__lock_writer() - take the writer lock (not recursive). */
void thread_registry__lock_writer(struct thread_registry *r);

/** thread_registry__unlock_writer() - release it. */
void thread_registry__unlock_writer(struct thread_registry *r);

/**
 * thread_registry__barrier() - wait until everything retired so far has been
 * reclaimed.  Outside any read-side section, without the writer lock.
 */
void thread_registry__barrier(struct thread_registry *r);

/** thread_registry__stats() - copy the counters into @out. */
void thread_registry__stats(struct thread_registry *r, struct thread_registry_stats *out);

/**
 * thread_registry_parse_container_id() - the container id in a cgroup path.
 * @cgroup: a path such as "/system.slice/docker-<id>.scope",
 *          "/kubepods/burstable/pod<uid>/<id>" or "/docker/<id>"; may be NULL
 * @out: receives the id and a NUL, or "" when there is none
 *
 * The id is a run of exactly 64 lowercase hex digits, with no letter or digit
 * right before or after it ("docker-", "cri-containerd-", "crio-",
 * "libpod-" prefixes and a ".scope" suffix all qualify).  With several, the
 * last one wins: the innermost container of a nested hierarchy.
 * Return: true if an id was found.
 */
bool thread_registry_parse_container_id(const char *cgroup,
					char out[THREAD_REGISTRY_CONTAINER_ID_LEN + 1]);

#endif /* CTXPROF_THREAD_REGISTRY_H */
