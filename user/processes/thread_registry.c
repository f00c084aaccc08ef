// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * thread_registry - RCU thread registry.  Contracts are in thread_registry.h.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Inline the read side.  Called through the shared library, read_lock plus
 * read_unlock cost 10.5 ns here against 1 ns inline: the whole lookup budget.
 * Licence, checked (STYLE 13): this project is LGPL-2.1 OR BSD-2-Clause, and
 * with the headers included here _LGPL_SOURCE inlines only urcu-memb's read
 * side and the pointer macros, which liburcu documents as meeting LGPL's
 * 10-line criterion "allowing this function to be invoked directly from
 * non-LGPL code".  rcu_dereference() becomes a C11 consume load, an atomic
 * ThreadSanitizer can see.
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>
#include <urcu/rculist.h>

#include "processes/thread_registry.h"

#if defined(__SANITIZE_THREAD__)
#define TR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TR_TSAN 1
#endif
#endif

#ifdef TR_TSAN
/*
 * ThreadSanitizer does not see a grace period: liburcu is not instrumented
 * and urcu-memb's readers only use compiler barriers (the writer's
 * membarrier() does the rest).  So that it sees the happens-before RCU really
 * gives, and no more, a TSan build mirrors each read-side section in a C11
 * atomic of the reader (odd inside a section, release store on leaving) and
 * retire() waits, with acquire loads, for every section open at that moment
 * to close: exactly the sections a grace period that starts after retire()
 * must wait for.  A reader that keeps using an entry after its section, or a
 * writer that touches an entry after retiring it, is ordered before nothing
 * and races with the free.  (The earlier model, a release at every unlock
 * acquired by every reclaim, ordered a section that began long after the
 * retire before the free, and hid both.)  Only liburcu's own hand-offs are
 * annotations: the call_rcu queue and rcu_barrier().
 */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define tsan_acquire(addr) __tsan_acquire(addr)
#define tsan_release(addr) __tsan_release(addr)

struct tsan_reader {
	_Atomic uint64_t seq; /* odd: inside a read-side section */
	unsigned int depth;   /* sections nest, like urcu's */
	struct tsan_reader *next;
};

static pthread_mutex_t tsan_readers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tsan_reader *tsan_readers;
static __thread struct tsan_reader tsan_self;

static void tsan_section_begin(void)
{
	if (tsan_self.depth++)
		return;
	/* seq_cst: a retire() that unpublished an entry either sees this or
	 * this section cannot find the entry (store-load order) */
	atomic_fetch_add_explicit(&tsan_self.seq, 1, memory_order_seq_cst);
}

static void tsan_section_end(void)
{
	if (--tsan_self.depth)
		return;
	atomic_fetch_add_explicit(&tsan_self.seq, 1, memory_order_release);
}

/* every section open now has closed when this returns, and happens before */
static void tsan_wait_readers(void)
{
	struct tsan_reader *rd;

	atomic_thread_fence(memory_order_seq_cst);
	pthread_mutex_lock(&tsan_readers_lock);
	for (rd = tsan_readers; rd; rd = rd->next) {
		uint64_t seq = atomic_load_explicit(&rd->seq, memory_order_acquire);

		if (rd == &tsan_self || !(seq & 1))
			continue;
		while (atomic_load_explicit(&rd->seq, memory_order_acquire) == seq)
			sched_yield();
	}
	pthread_mutex_unlock(&tsan_readers_lock);
}

static void tsan_reader_register(void)
{
	pthread_mutex_lock(&tsan_readers_lock);
	tsan_self.next = tsan_readers;
	tsan_readers = &tsan_self;
	pthread_mutex_unlock(&tsan_readers_lock);
}

static void tsan_reader_unregister(void)
{
	struct tsan_reader **pp;

	pthread_mutex_lock(&tsan_readers_lock);
	for (pp = &tsan_readers; *pp; pp = &(*pp)->next) {
		if (*pp == &tsan_self) {
			*pp = tsan_self.next;
			break;
		}
	}
	pthread_mutex_unlock(&tsan_readers_lock);
}
#else
#define tsan_acquire(addr) ((void)(addr))
#define tsan_release(addr) ((void)(addr))
static inline void tsan_section_begin(void)
{
}
static inline void tsan_section_end(void)
{
}
static inline void tsan_wait_readers(void)
{
}
static inline void tsan_reader_register(void)
{
}
static inline void tsan_reader_unregister(void)
{
}
#endif
/* the address the TSan annotation of rcu_barrier() uses */
static char tsan_reclaimed;

/*
 * Slot values.  Entries are 8-byte aligned, which leaves 3 tag bits:
 *   0                empty
 *   struct thread *  a live thread
 *   start << 3 | 1   tombstone: incarnation @start of this tid exited
 *   process | 2      the leader exited, its process lives on (the kernel
 *                    keeps such a pid too): lets the pid find its process
 */
#define SLOT_TAG_MASK 7ul
#define SLOT_TOMB     1ul
#define SLOT_PROC     2ul

struct image {
	struct process_image pub;
	struct thread_registry *r;
	struct rcu_head rcu;
	char strings[];
};

struct process {
	struct process_info pub;
	struct cds_list_head threads;  /* RCU: thread.group_node */
	struct cds_list_head children; /* RCU: process.sibling */
	struct cds_list_head sibling;  /* RCU in a parent's children; else in r->orphans */
	struct cds_list_head node;     /* RCU: r->processes */
	unsigned int nr_threads;
	bool has_parent;	       /* sibling is in a parent's children, not the orphans */
	bool leader_exited;	       /* the pid slot holds SLOT_PROC for us */
	struct process *reparent_next; /* writer scratch while re-parenting */
	struct thread_registry *r;
	struct rcu_head rcu;
};

struct thread {
	struct thread_info pub;
	struct cds_list_head node;	 /* RCU: r->threads */
	struct cds_list_head group_node; /* RCU: process.threads */
	struct thread_registry *r;
	struct rcu_head rcu;
};

struct thread_registry {
	/* read-mostly, first: what every lookup touches */
	uintptr_t **chunks; /* THREAD_REGISTRY_NR_CHUNKS atomic pointers */
	uint32_t max_tid;
	void (*state_free)(void *ctx, void *state);
	void (*state_unlinked)(void *ctx, void *state);
	void *state_ctx;

	struct cds_list_head threads;	    /* RCU: every thread */
	struct cds_list_head processes;	    /* RCU: every process */
	struct cds_list_head orphans;	    /* writer only: processes with no known parent */
	pthread_mutex_t lock;		    /* serializes writers */
	struct thread_registry_stats stats; /* under lock; reclaimed is below */
	uint64_t reclaimed;		    /* atomic: counted by the reclaim callbacks */
};

#define thread_of(ti)  caa_container_of(ti, struct thread, pub)
#define process_of(pi) caa_container_of(pi, struct process, pub)
#define image_of(pi)   caa_container_of(pi, struct image, pub)

/* ---- RCU list updates --------------------------------------------------- */

/*
 * cds_list_add_tail_rcu() and friends, with the pointer readers follow
 * published by a C11 release store.  liburcu 0.13's rcu_assign_pointer() is
 * a volatile store after a fence: the same ordering, but ThreadSanitizer
 * takes it for a plain write racing the readers' consume loads (0.14 added
 * atomic builtins for that).  Readers still walk with
 * cds_list_for_each_entry_rcu(); prev pointers are only used by writers.
 */
static void list_add_tail_rcu(struct cds_list_head *newp, struct cds_list_head *head)
{
	newp->next = head;
	newp->prev = head->prev;
	__atomic_store_n(&head->prev->next, newp, __ATOMIC_RELEASE);
	head->prev = newp;
}

static void list_del_rcu(struct cds_list_head *elem)
{
	elem->next->prev = elem->prev;
	__atomic_store_n(&elem->prev->next, elem->next, __ATOMIC_RELEASE);
}

static void list_replace_rcu(struct cds_list_head *old, struct cds_list_head *newp)
{
	newp->next = old->next;
	newp->prev = old->prev;
	__atomic_store_n(&newp->prev->next, newp, __ATOMIC_RELEASE);
	newp->next->prev = newp;
}

/* ---- the table ---------------------------------------------------------- */

/* rotate the in-chunk index right by 3: consecutive tids 8 lines apart */
static inline uint32_t tid_slot(uint32_t tid)
{
	uint32_t i = tid & (THREAD_REGISTRY_CHUNK_SLOTS - 1);

	return (i >> 3) | ((i & 7) << (THREAD_REGISTRY_CHUNK_SHIFT - 3));
}

static inline bool slot_is_thread(uintptr_t v)
{
	return v && !(v & SLOT_TAG_MASK);
}

static inline uintptr_t slot_tomb(uint64_t start)
{
	return (uintptr_t)(start << 3) | SLOT_TOMB;
}

static inline struct process *slot_proc(uintptr_t v)
{
	return (v & SLOT_TAG_MASK) == SLOT_PROC ? (struct process *)(v & ~SLOT_TAG_MASK) : NULL;
}

/* readers: NULL when the chunk was never allocated */
static inline uintptr_t slot_read(struct thread_registry *r, uint32_t tid)
{
	uintptr_t *chunk;

	if (tid >= r->max_tid)
		return 0;
	chunk = __atomic_load_n(&r->chunks[tid >> THREAD_REGISTRY_CHUNK_SHIFT], __ATOMIC_CONSUME);
	if (!chunk)
		return 0;
	return __atomic_load_n(&chunk[tid_slot(tid)], __ATOMIC_CONSUME);
}

/* writers: the slot's address, allocating its chunk; NULL when out of memory */
static uintptr_t *slot_get(struct thread_registry *r, uint32_t tid)
{
	uintptr_t **top = &r->chunks[tid >> THREAD_REGISTRY_CHUNK_SHIFT];
	uintptr_t *chunk = *top;

	if (!chunk) {
		chunk = calloc(THREAD_REGISTRY_CHUNK_SLOTS, sizeof(*chunk));
		if (!chunk)
			return NULL;
		/* zeroed slots before the chunk becomes reachable */
		__atomic_store_n(top, chunk, __ATOMIC_RELEASE);
		r->stats.nr_chunks++;
	}
	return &chunk[tid_slot(tid)];
}

static inline void slot_publish(uintptr_t *slot, uintptr_t v)
{
	__atomic_store_n(slot, v, __ATOMIC_RELEASE);
}

/* the live process with @pid: through its leader, or the SLOT_PROC it left */
static struct process *process_find(struct thread_registry *r, uint32_t pid)
{
	uintptr_t v = slot_read(r, pid);
	struct thread *t;

	if (slot_is_thread(v)) {
		t = (struct thread *)v;
		return t->pub.pid == pid ? process_of(t->pub.proc) : NULL;
	}
	return slot_proc(v);
}

/* ---- reclamation -------------------------------------------------------- */

/* first thing in a reclaim callback: what retire() and the readers did
 * happens before it */
static void reclaim_begin(struct rcu_head *head)
{
	tsan_acquire(head);
}

/* last thing: thread_registry__barrier() returns after it */
static void reclaim_end(struct thread_registry *r)
{
	__atomic_fetch_add(&r->reclaimed, 1, __ATOMIC_RELAXED);
	tsan_release(&tsan_reclaimed);
}

static void free_image(struct image *img)
{
	if (img->pub.state && img->r->state_free)
		img->r->state_free(img->r->state_ctx, img->pub.state);
	free(img);
}

static void reclaim_image(struct rcu_head *head)
{
	struct image *img = caa_container_of(head, struct image, rcu);
	struct thread_registry *r;

	reclaim_begin(head);
	r = img->r;
	free_image(img);
	reclaim_end(r);
}

static void reclaim_process(struct rcu_head *head)
{
	struct process *p = caa_container_of(head, struct process, rcu);
	struct thread_registry *r;

	reclaim_begin(head);
	r = p->r;
	/* the current image goes with the process: nobody can reach it now */
	free_image(image_of(p->pub.image));
	free(p);
	reclaim_end(r);
}

static void reclaim_thread(struct rcu_head *head)
{
	struct thread *t = caa_container_of(head, struct thread, rcu);
	struct thread_registry *r;

	reclaim_begin(head);
	r = t->r;
	free(t);
	reclaim_end(r);
}

/*
 * @img can no longer be looked up: say so of its state now, not a grace
 * period later, so that an export in between still finds it (a sample of
 * a process that just exited would be named by nothing).  Writer lock held.
 */
static void image_unlinked(struct thread_registry *r, const struct image *img)
{
	void *state = process_image__state(&img->pub);

	if (state && r->state_unlinked)
		r->state_unlinked(r->state_ctx, state);
}

/* hand @head to reclamation after a grace period; writer lock held */
static void retire(struct thread_registry *r, struct rcu_head *head,
		   void (*fn)(struct rcu_head *head))
{
	r->stats.retired++;
	tsan_wait_readers();
	/* liburcu's queue hands the object over unseen by TSan */
	tsan_release(head);
	urcu_memb_call_rcu(head, fn);
}

void thread_registry__barrier(struct thread_registry *r)
{
	urcu_memb_barrier();
	/* it waited for the callbacks, out of TSan's sight */
	tsan_acquire(&tsan_reclaimed);
}

/* ---- construction ------------------------------------------------------- */

void thread_registry__register_thread(void)
{
	urcu_memb_register_thread();
	tsan_reader_register();
}

void thread_registry__unregister_thread(void)
{
	tsan_reader_unregister();
	urcu_memb_unregister_thread();
}

struct thread_registry *thread_registry__new(const struct thread_registry_opts *opts)
{
	struct thread_registry *r;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->chunks = calloc(THREAD_REGISTRY_NR_CHUNKS, sizeof(*r->chunks));
	if (!r->chunks) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->max_tid = THREAD_REGISTRY_MAX_TID;
	if (opts && opts->max_tid && opts->max_tid < THREAD_REGISTRY_MAX_TID)
		r->max_tid = opts->max_tid;
	r->state_free = opts ? opts->state_free : NULL;
	r->state_unlinked = opts ? opts->state_unlinked : NULL;
	r->state_ctx = opts ? opts->state_ctx : NULL;
	CDS_INIT_LIST_HEAD(&r->threads);
	CDS_INIT_LIST_HEAD(&r->processes);
	CDS_INIT_LIST_HEAD(&r->orphans);
	pthread_mutex_init(&r->lock, NULL);
	return r;
}

/* ---- readers ------------------------------------------------------------ */

void thread_registry__read_lock(void)
{
	urcu_memb_read_lock();
	tsan_section_begin();
}

void thread_registry__read_unlock(void)
{
	tsan_section_end();
	urcu_memb_read_unlock();
}

const struct thread_info *thread_registry__lookup(struct thread_registry *r, uint32_t tid)
{
	uintptr_t v = slot_read(r, tid);

	return slot_is_thread(v) ? &((struct thread *)v)->pub : NULL;
}

const struct process_info *thread_registry__lookup_process(struct thread_registry *r, uint32_t pid)
{
	struct process *p = process_find(r, pid);

	return p ? &p->pub : NULL;
}

int thread_registry__visit(struct thread_registry *r, uint32_t tid, thread_visit_fn fn, void *ctx)
{
	const struct thread_info *t;
	int ret = -ENOENT;

	urcu_memb_read_lock();
	tsan_section_begin();
	t = thread_registry__lookup(r, tid);
	if (t)
		ret = fn(ctx, t);
	thread_registry__read_unlock();
	return ret;
}

int thread_registry__for_each_thread(struct thread_registry *r, thread_visit_fn fn, void *ctx)
{
	struct thread *t;
	int ret = 0;

	urcu_memb_read_lock();
	tsan_section_begin();
	cds_list_for_each_entry_rcu(t, &r->threads, node)
	{
		ret = fn(ctx, &t->pub);
		if (ret)
			break;
	}
	thread_registry__read_unlock();
	return ret;
}

int thread_registry__for_each_process(struct thread_registry *r, process_visit_fn fn, void *ctx)
{
	struct process *p;
	int ret = 0;

	urcu_memb_read_lock();
	tsan_section_begin();
	cds_list_for_each_entry_rcu(p, &r->processes, node)
	{
		ret = fn(ctx, &p->pub);
		if (ret)
			break;
	}
	thread_registry__read_unlock();
	return ret;
}

int thread_registry__for_each_group_thread(struct thread_registry *r, uint32_t pid,
					   thread_visit_fn fn, void *ctx)
{
	struct process *p;
	struct thread *t;
	int ret = -ENOENT;

	urcu_memb_read_lock();
	tsan_section_begin();
	p = process_find(r, pid);
	if (p) {
		ret = 0;
		cds_list_for_each_entry_rcu(t, &p->threads, group_node)
		{
			ret = fn(ctx, &t->pub);
			if (ret)
				break;
		}
	}
	thread_registry__read_unlock();
	return ret;
}

int thread_registry__for_each_child(struct thread_registry *r, uint32_t pid, process_visit_fn fn,
				    void *ctx)
{
	struct process *p, *c;
	int ret = -ENOENT;

	urcu_memb_read_lock();
	tsan_section_begin();
	p = process_find(r, pid);
	if (p) {
		ret = 0;
		cds_list_for_each_entry_rcu(c, &p->children, sibling)
		{
			ret = fn(ctx, &c->pub);
			if (ret)
				break;
		}
	}
	thread_registry__read_unlock();
	return ret;
}

/* ---- writers ------------------------------------------------------------ */

void thread_registry__lock_writer(struct thread_registry *r)
{
	pthread_mutex_lock(&r->lock);
}

void thread_registry__unlock_writer(struct thread_registry *r)
{
	pthread_mutex_unlock(&r->lock);
}

static inline bool id_ok(const struct thread_registry *r, uint32_t id)
{
	return id && id < r->max_tid;
}

/* copy at most THREAD_REGISTRY_MAX_PATH - 1 bytes of @s to @dst; count a cut */
static char *put_string(struct thread_registry *r, char *dst, const char *s, size_t len)
{
	if (len >= THREAD_REGISTRY_MAX_PATH) {
		len = THREAD_REGISTRY_MAX_PATH - 1;
		r->stats.truncated++;
	}
	memcpy(dst, s, len);
	dst[len] = '\0';
	return dst + len + 1;
}

static struct image *image_new(struct thread_registry *r, const char *comm, const char *exe,
			       const char *cgroup, uint64_t cgroup_id, uint32_t exec_id)
{
	size_t exe_len = strnlen(exe, THREAD_REGISTRY_MAX_PATH);
	size_t cg_len = strnlen(cgroup, THREAD_REGISTRY_MAX_PATH);
	struct image *img;
	char *s;

	img = calloc(1, sizeof(*img) + exe_len + cg_len + 2);
	if (!img)
		return NULL;
	img->r = r;
	strncpy(img->pub.comm, comm, sizeof(img->pub.comm) - 1);
	s = img->strings;
	img->pub.exe = s;
	s = put_string(r, s, exe, exe_len);
	img->pub.cgroup = s;
	put_string(r, s, cgroup, cg_len);
	img->pub.cgroup_id = cgroup_id;
	img->pub.exec_id = exec_id;
	thread_registry_parse_container_id(img->pub.cgroup, img->pub.container_id);
	return img;
}

static void thread_fill(struct thread *t, const struct thread_desc *td, struct process *p)
{
	t->pub.tid = td->tid;
	t->pub.pid = td->pid;
	t->pub.ppid = p->pub.ppid;
	t->pub.ptid = td->ptid;
	t->pub.start = td->start;
	memcpy(t->pub.comm, td->comm, sizeof(t->pub.comm));
	t->pub.comm[sizeof(t->pub.comm) - 1] = '\0';
	t->pub.proc = &p->pub;
}

static void process_remove(struct thread_registry *r, struct process *p);

/* unlink @t everywhere, leave a tombstone (or the SLOT_PROC of a process
 * whose leader this was), retire it; its process follows if now empty */
static void thread_remove(struct thread_registry *r, struct thread *t)
{
	struct process *p = process_of(t->pub.proc);
	uintptr_t *slot = slot_get(r, t->pub.tid); /* its chunk exists */

	list_del_rcu(&t->node);
	list_del_rcu(&t->group_node);
	p->nr_threads--;
	if (t->pub.tid == t->pub.pid && p->nr_threads) {
		slot_publish(slot, (uintptr_t)p | SLOT_PROC);
		p->leader_exited = true;
	} else {
		slot_publish(slot, slot_tomb(t->pub.start));
	}
	r->stats.removed++;
	r->stats.nr_threads--;
	retire(r, &t->rcu, reclaim_thread);
	if (!p->nr_threads)
		process_remove(r, p);
}

/* give @p's children to pid 1, or to the orphans if pid 1 is unknown */
static void reparent_children(struct thread_registry *r, struct process *p)
{
	struct process *c, *tmp, *batch = NULL, *init;
	struct thread *t;

	cds_list_for_each_entry_safe(c, tmp, &p->children, sibling)
	{
		list_del_rcu(&c->sibling);
		c->reparent_next = batch;
		batch = c;
	}
	/* a reader may stand on a child and still follow its sibling.next
	 * through @p's list: relinking it now would lead that reader into
	 * another list, past a head it does not know.  Wait it out. */
	urcu_memb_synchronize_rcu();
	tsan_wait_readers();

	init = p->pub.pid == 1 ? NULL : process_find(r, 1);
	for (c = batch; c; c = c->reparent_next) {
		__atomic_store_n(&c->pub.ppid, 1, __ATOMIC_RELAXED);
		cds_list_for_each_entry(t, &c->threads, group_node)
		{
			__atomic_store_n(&t->pub.ppid, 1, __ATOMIC_RELAXED);
		}
		if (init) {
			list_add_tail_rcu(&c->sibling, &init->children);
			c->has_parent = true;
		} else {
			cds_list_add_tail(&c->sibling, &r->orphans);
			c->has_parent = false;
		}
		r->stats.reparented++;
	}
}

/* @p has no thread left: unlink, re-parent its children, retire */
static void process_remove(struct thread_registry *r, struct process *p)
{
	uintptr_t *pslot = slot_get(r, p->pub.pid); /* its chunk exists */

	/* listed before it can be missed: a lookup finds it one way or the other */
	image_unlinked(r, image_of(p->pub.image));
	/* a tombstone says the leader thread died: true only if we saw it go.
	 * A process known only by other threads (older than the ring, its
	 * leader not scanned yet) may still have a live leader. */
	if (*pslot == ((uintptr_t)p | SLOT_PROC))
		slot_publish(pslot, p->leader_exited ? slot_tomb(p->pub.start) : 0);
	list_del_rcu(&p->node);
	if (p->has_parent)
		list_del_rcu(&p->sibling);
	else
		cds_list_del(&p->sibling);
	if (!cds_list_empty(&p->children))
		reparent_children(r, p);
	r->stats.nr_processes--;
	retire(r, &p->rcu, reclaim_process);
}

/* an older incarnation of a process is still here: its exits were lost */
static void process_kill(struct thread_registry *r, struct process *p)
{
	struct thread *t, *tmp;

	r->stats.superseded++;
	/*
	 * The last thread_remove() removes and retires the process: stop
	 * there.  Going round once more would read the next pointer of its
	 * list head (p->threads), in memory a grace period may already have
	 * freed.
	 */
	cds_list_for_each_entry_safe(t, tmp, &p->threads, group_node)
	{
		bool last = t->group_node.next == &p->threads;

		thread_remove(r, t);
		if (last)
			break;
	}
}

static struct process *process_new(struct thread_registry *r, const struct process_desc *pd,
				   const char *comm)
{
	struct process *parent = process_find(r, pd->ppid);
	const struct process_image *pimg = NULL;
	const char *exe = pd->exe, *cgroup = pd->cgroup;
	uint64_t cgroup_id = pd->cgroup_id;
	struct process *p;
	struct image *img;

	/* a parent of a later incarnation is not ours: the pid was reused */
	if (parent && parent->pub.start > pd->start)
		parent = NULL;
	if (parent)
		pimg = parent->pub.image;
	if (!exe)
		exe = pimg ? pimg->exe : "";
	if (!cgroup) {
		cgroup = pimg ? pimg->cgroup : "";
		if (!cgroup_id)
			cgroup_id = pimg ? pimg->cgroup_id : 0;
	}

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	img = image_new(r, pd->comm[0] ? pd->comm : comm, exe, cgroup, cgroup_id, pd->exec_id);
	if (!img) {
		free(p);
		return NULL;
	}
	p->r = r;
	p->pub.pid = pd->pid;
	p->pub.ppid = pd->ppid;
	p->pub.start = pd->start;
	p->pub.image = &img->pub;
	CDS_INIT_LIST_HEAD(&p->threads);
	CDS_INIT_LIST_HEAD(&p->children);

	list_add_tail_rcu(&p->node, &r->processes);
	if (parent && parent != p) {
		list_add_tail_rcu(&p->sibling, &parent->children);
		p->has_parent = true;
	} else {
		cds_list_add_tail(&p->sibling, &r->orphans);
	}
	r->stats.nr_processes++;
	return p;
}

/*
 * Make @slot (of tid @tid) free for incarnation @start, removing what an
 * older incarnation left there.  Return: 0, or -EEXIST / -ESTALE.
 */
static int slot_claim(struct thread_registry *r, uintptr_t *slot, uint32_t tid, uint32_t pid,
		      uint64_t start, unsigned int flags)
{
	uintptr_t v = *slot;
	struct process *p;
	struct thread *t;

	if (slot_is_thread(v)) {
		t = (struct thread *)v;
		if (t->pub.start == start)
			return -EEXIST;
		if (t->pub.start > start)
			return -ESTALE;
		r->stats.superseded++;
		thread_remove(r, t);
		return 0;
	}
	p = slot_proc(v);
	if (p) {
		/* the leader of a live process: its thread was not inserted yet */
		if (tid == pid && p->pub.pid == pid && p->pub.start == start && !p->leader_exited)
			return 0;
		if (p->pub.start >= start)
			return -ESTALE;
		process_kill(r, p);
		return 0;
	}
	/* a tombstone beats observed state of its incarnation, or older */
	if (v && (flags & THREAD_REGISTRY_F_SCAN) && (uint64_t)(v >> 3) >= start)
		return -ESTALE;
	return 0;
}

int thread_registry__insert_locked(struct thread_registry *r, const struct thread_desc *td,
				   const struct process_desc *pd, unsigned int flags)
{
	uintptr_t *slot, *pslot;
	struct process *p;
	struct thread *t;
	int err;

	if (!id_ok(r, td->tid) || !id_ok(r, td->pid) || (pd && pd->ppid >= r->max_tid)) {
		r->stats.out_of_range++;
		return -ERANGE;
	}
	if (pd && pd->pid != td->pid)
		return -EINVAL;
	slot = slot_get(r, td->tid);
	if (!slot)
		return -ENOMEM;
	err = slot_claim(r, slot, td->tid, td->pid, td->start, flags);
	if (err == -EEXIST)
		r->stats.duplicates++;
	else if (err == -ESTALE)
		r->stats.stale++;
	if (err)
		return err;

	p = process_find(r, td->pid);
	if (p && pd && p->pub.start != pd->start) {
		if (p->pub.start > pd->start) {
			r->stats.stale++;
			return -ESTALE;
		}
		process_kill(r, p);
		p = NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->r = r;
	if (!p) {
		if (!pd) {
			free(t);
			return -EINVAL;
		}
		pslot = slot_get(r, td->pid);
		if (!pslot)
			goto err_nomem;
		p = process_new(r, pd, td->comm);
		if (!p)
			goto err_nomem;
		if (td->tid != td->pid) {
			/* the pid must find its process before its leader shows
			 * up; a tombstone of the leader says it never will */
			if (slot_is_thread(*pslot))
				thread_remove(r, (struct thread *)*pslot);
			else if ((*pslot & SLOT_TAG_MASK) == SLOT_TOMB &&
				 (*pslot >> 3) == pd->start)
				p->leader_exited = true;
			slot_publish(pslot, (uintptr_t)p | SLOT_PROC);
		}
	}
	thread_fill(t, td, p);
	list_add_tail_rcu(&t->group_node, &p->threads);
	list_add_tail_rcu(&t->node, &r->threads);
	p->nr_threads++;
	slot_publish(slot, (uintptr_t)t);
	r->stats.inserted++;
	r->stats.nr_threads++;
	return 0;

err_nomem:
	free(t);
	return -ENOMEM;
}

int thread_registry__insert(struct thread_registry *r, const struct thread_desc *td,
			    const struct process_desc *pd, unsigned int flags)
{
	int err;

	pthread_mutex_lock(&r->lock);
	err = thread_registry__insert_locked(r, td, pd, flags);
	pthread_mutex_unlock(&r->lock);
	return err;
}

int thread_registry__remove(struct thread_registry *r, uint32_t tid, uint64_t start)
{
	uintptr_t *slot, v;
	struct thread *t;
	bool older;
	int err = 0;

	if (!id_ok(r, tid)) {
		pthread_mutex_lock(&r->lock);
		r->stats.out_of_range++;
		pthread_mutex_unlock(&r->lock);
		return -ERANGE;
	}
	pthread_mutex_lock(&r->lock);
	slot = slot_get(r, tid);
	if (!slot) {
		err = -ENOMEM;
		goto out;
	}
	v = *slot;
	if (!slot_is_thread(v)) {
		/* unknown: remember the exit, in case the scan read it alive */
		if (!slot_proc(v) && start)
			slot_publish(slot, slot_tomb(start));
		r->stats.not_found++;
		err = -ENOENT;
		goto out;
	}
	t = (struct thread *)v;
	if (start && t->pub.start > start) {
		r->stats.stale++;
		err = -ESTALE;
		goto out;
	}
	older = start && t->pub.start < start;
	if (older)
		r->stats.superseded++;
	/* @t is retired from here on: a grace period may end any time */
	thread_remove(r, t);
	/* an older incarnation went: tomb the one that exited, unless the
	 * slot now points its pid at a live process */
	if (older && !slot_proc(*slot))
		slot_publish(slot, slot_tomb(start));
out:
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* replace @old by a copy named @comm; writer lock held */
static int thread_replace(struct thread_registry *r, struct thread *old, const char *comm)
{
	struct thread *t;

	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = *old;
	strncpy(t->pub.comm, comm, sizeof(t->pub.comm) - 1);
	t->pub.comm[sizeof(t->pub.comm) - 1] = '\0';
	list_replace_rcu(&old->node, &t->node);
	list_replace_rcu(&old->group_node, &t->group_node);
	slot_publish(slot_get(r, t->pub.tid), (uintptr_t)t);
	retire(r, &old->rcu, reclaim_thread);
	return 0;
}

int thread_registry__rename(struct thread_registry *r, uint32_t tid, uint64_t start,
			    const char *comm)
{
	struct thread *t;
	uintptr_t v;
	int err;

	pthread_mutex_lock(&r->lock);
	if (!id_ok(r, tid)) {
		r->stats.out_of_range++;
		err = -ERANGE;
		goto out;
	}
	v = slot_read(r, tid);
	if (!slot_is_thread(v)) {
		r->stats.not_found++;
		err = -ENOENT;
		goto out;
	}
	t = (struct thread *)v;
	if (start && t->pub.start != start) {
		r->stats.stale++;
		err = -ESTALE;
		goto out;
	}
	err = thread_replace(r, t, comm);
	if (!err)
		r->stats.renamed++;
out:
	pthread_mutex_unlock(&r->lock);
	return err;
}

static int exec_locked(struct thread_registry *r, const struct exec_desc *ed)
{
	const struct process_desc *pd = &ed->pd;
	struct thread_desc td = {
		.tid = ed->tid,
		.pid = pd->pid,
		.ppid = pd->ppid,
		.start = pd->start,
	};
	struct image *img, *old;
	struct thread *t, *tmp;
	struct process *p;
	uintptr_t v;
	int err;

	if (!id_ok(r, ed->tid) || ed->tid != pd->pid || ed->old_tid >= r->max_tid) {
		r->stats.out_of_range++;
		return ed->tid != pd->pid ? -EINVAL : -ERANGE;
	}
	memcpy(td.comm, pd->comm, sizeof(td.comm));

	p = process_find(r, pd->pid);
	if (p && p->pub.start != pd->start) {
		process_kill(r, p); /* an older incarnation, whose exit was lost */
		p = NULL;
	}
	if (!p) {
		/* unknown so far: exec is where we learn about it */
		struct process_desc npd = *pd;

		if (!npd.exe)
			npd.exe = "";
		if (ed->old_tid && ed->old_tid != ed->tid) {
			v = slot_read(r, ed->old_tid);
			if (slot_is_thread(v))
				thread_remove(r, (struct thread *)v);
		}
		err = thread_registry__insert_locked(r, &td, &npd, 0);
		return err == -EEXIST ? 0 : err;
	}

	/* the exec'ing thread is the leader now: keep or create its entry */
	v = slot_read(r, ed->tid);
	if (slot_is_thread(v)) {
		err = thread_replace(r, (struct thread *)v, pd->comm);
	} else {
		/* a non-leader exec'd: the leader's slot held our SLOT_PROC */
		p->leader_exited = false;
		err = thread_registry__insert_locked(r, &td, NULL, 0);
	}
	if (err)
		return err;
	/* exec leaves one thread: any other is gone (exits lost or pending) */
	cds_list_for_each_entry_safe(t, tmp, &p->threads, group_node)
	{
		if (t->pub.tid != ed->tid)
			thread_remove(r, t);
	}

	old = image_of(p->pub.image);
	/* exec does not move a process between cgroups: keep the path unless
	 * a new one was read; learn the id if it was not known */
	img = image_new(r, pd->comm, pd->exe ? pd->exe : "",
			pd->cgroup ? pd->cgroup : old->pub.cgroup,
			pd->cgroup || !old->pub.cgroup_id ? pd->cgroup_id : old->pub.cgroup_id,
			pd->exec_id);
	if (!img)
		return -ENOMEM;
	image_unlinked(r, old);
	__atomic_store_n(&p->pub.image, &img->pub, __ATOMIC_RELEASE);
	retire(r, &old->rcu, reclaim_image);
	r->stats.execs++;
	return 0;
}

int thread_registry__exec(struct thread_registry *r, const struct exec_desc *ed)
{
	int err;

	pthread_mutex_lock(&r->lock);
	err = exec_locked(r, ed);
	pthread_mutex_unlock(&r->lock);
	return err;
}

int thread_registry__relink(struct thread_registry *r)
{
	struct process *p, *tmp, *parent;
	int n = 0;

	pthread_mutex_lock(&r->lock);
	cds_list_for_each_entry_safe(p, tmp, &r->orphans, sibling)
	{
		parent = process_find(r, p->pub.ppid);
		if (!parent || parent == p || parent->pub.start > p->pub.start)
			continue;
		/* the orphans list has no readers: no grace period needed */
		cds_list_del(&p->sibling);
		list_add_tail_rcu(&p->sibling, &parent->children);
		p->has_parent = true;
		n++;
	}
	pthread_mutex_unlock(&r->lock);
	return n;
}

void thread_registry__stats(struct thread_registry *r, struct thread_registry_stats *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->stats;
	out->reclaimed = __atomic_load_n(&r->reclaimed, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
}

void thread_registry__free(struct thread_registry *r)
{
	struct process *p, *ptmp;
	struct thread *t, *ttmp;
	uint32_t i;

	if (!r)
		return;
	/* what was retired references @r: let it finish first */
	thread_registry__barrier(r);
	/* no reader is left (the contract): free directly */
	cds_list_for_each_entry_safe(t, ttmp, &r->threads, node)
	{
		free(t);
	}
	cds_list_for_each_entry_safe(p, ptmp, &r->processes, node)
	{
		free_image(image_of(p->pub.image));
		free(p);
	}
	for (i = 0; i < THREAD_REGISTRY_NR_CHUNKS; i++)
		free(r->chunks[i]);
	free(r->chunks);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* ---- container ids ------------------------------------------------------ */

static inline bool is_lower_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static inline bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool thread_registry_parse_container_id(const char *cgroup,
					char out[THREAD_REGISTRY_CONTAINER_ID_LEN + 1])
{
	const char *s, *found = NULL;
	size_t run;

	out[0] = '\0';
	if (!cgroup)
		return false;
	/* scan runs of lowercase hex; keep the last one of exactly 64 with
	 * no letter or digit around it */
	for (s = cgroup; *s;) {
		if (!is_lower_hex(*s)) {
			s++;
			continue;
		}
		for (run = 0; is_lower_hex(s[run]); run++)
			;
		if (run == THREAD_REGISTRY_CONTAINER_ID_LEN && (s == cgroup || !is_alnum(s[-1])) &&
		    !is_alnum(s[run]))
			found = s;
		s += run;
	}
	if (!found)
		return false;
	memcpy(out, found, THREAD_REGISTRY_CONTAINER_ID_LEN);
	out[THREAD_REGISTRY_CONTAINER_ID_LEN] = '\0';
	return true;
}
