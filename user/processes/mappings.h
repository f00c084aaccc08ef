/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mappings - what a process image had mapped: immutable, reference-counted
 * snapshots of its executable mappings, and the history of them that names
 * its frames.
 *
 * A snapshot is one read of /proc/PID/maps (processes/proc_maps.h), cut to
 * the executable mappings: a pc or a return address lies in one, anything
 * else is garbage from a broken frame chain.  It is built once, then only
 * read, by any thread: the exporter names frames with it, the unwinder
 * installs it into the BPF maps, the symbolizer resolves the file behind
 * each mapping when it is built (mapping.file).  Paths live in the
 * snapshot's own allocation, so a snapshot is one block whose memory goes
 * with its last reference.  A process forked from another starts with its
 * parent's snapshot, shared, not read again.
 *
 * A history keeps the snapshots of one image in the order they were read, at
 * most MAPPINGS_HISTORY_MAX, so a process that keeps mapping and unmapping
 * code (dlopen loops) holds bounded memory.  Snapshots are numbered, as
 * generations of the image's mappings: a sample carries the generation that
 * was newest when it was taken (processes/process_state.h), and is named
 * from that snapshot, or from its mapping alone where the next read found
 * another file at its address.  A history is part of the image's process
 * state, which serializes every call on it.
 *
 * References: mappings__get()/__put() from any thread.  The last put runs the
 * owner's release (the state set's resolver detaching the files) and frees.
 */
#ifndef CTXPROF_MAPPINGS_H
#define CTXPROF_MAPPINGS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/file_id.h"

struct mappings;
struct proc_maps;

/* snapshots kept per image: the oldest is dropped beyond this */
#define MAPPINGS_HISTORY_MAX 64
/* the bits of a generation a sample carries (a stored trace's flags): the
 * history matches those, newest first */
#define MAPPINGS_GEN_MASK 0xffffu

/* snapshot flags: named mappings the application-context readers look for */
#define MAPPINGS_F_CTXPROF_REGION (1u << 0) /* a libctxprof region (its memfd) */
#define MAPPINGS_F_OTEL_CTX	  (1u << 1) /* an OpenTelemetry process context */

struct mapping {
	uint64_t start; /* first address */
	uint64_t end;	/* one past the last */
	uint64_t pgoff; /* file offset of start */
	uint64_t inode; /* as /proc/PID/maps reports it */
	uint32_t dev_major;
	uint32_t dev_minor;
	bool deleted;	  /* the file was unlinked when the mapping was read */
	const char *path; /* "" anonymous, "[vdso]"...; in the snapshot's own block */
	/* the file behind it, attached by the state set's resolver (the
	 * symbolizer's cached file) when the snapshot was built; NULL: none */
	const void *file;
	/* ... and its identity as the resolver opened it (id.ino 0: none):
	 * what others key the same file under without opening it again */
	struct file_id id;
};

struct mappings_owner {
	/* the last reference went: release what was attached to @m's mappings */
	void (*release)(void *ctx, struct mappings *m);
	void *ctx;
};

struct mappings {
	_Atomic unsigned int refs;
	unsigned int nr;   /* executable mappings, sorted by start, not overlapping */
	uint64_t taken_ns; /* CLOCK_MONOTONIC when read: the clock of sample times */
	uint32_t flags;	   /* MAPPINGS_F_*, from every mapping of that read */
	const struct mappings_owner *owner; /* NULL: nothing to release */
	struct mapping maps[];		    /* nr of them, then their paths */
};

/*
 * One generation of an image's mappings: from @since_ns until the next
 * generation's, the image had the mappings of @snap, but where a change
 * happened between @snap's read and that window (see
 * mappings_history__find_gen()).  A generation begins with a change: a
 * new executable mapping the kernel reported (its time exact, its range
 * known), or one a read of /proc/PID/maps found (some time since the
 * previous read, over the range of the mappings that differ).
 */
struct mappings_entry {
	struct mappings *snap; /* a reference: the read that stands for it */
	uint64_t since_ns;     /* CLOCK_MONOTONIC: the generation's start */
	uint64_t read_ns;      /* when @snap was read */
	uint32_t gen;	       /* 1, 2, ...: the image's generations in order */
	/* the change that began it: [chg_start, chg_end) of addresses, at a
	 * time in [chg_t0, chg_t1]; chg_start == chg_end: none (the first) */
	uint64_t chg_start, chg_end;
	uint64_t chg_t0, chg_t1;
};

struct mappings_history {
	struct mappings_entry *e; /* oldest first */
	unsigned int nr;
	unsigned int cap;
};

/* why a frame is named from its mapping only (mappings_history__find_gen()) */
enum mappings_find {
	MAPPINGS_FOUND = 0, /* the mapping it was in */
	MAPPINGS_CHANGED, /* mappings changed at its address around its time: which file is unknown
			   */
	MAPPINGS_GEN_DROPPED, /* its generation left the history: the file is unknown */
};

/**
 * mappings__new() - a snapshot of @pm's executable mappings, one reference.
 * @flags: MAPPINGS_F_* found in @pm (mappings__flags())
 * Return: the snapshot, or NULL (ENOMEM).
 */
struct mappings *mappings__new(const struct proc_maps *pm, uint32_t flags, uint64_t taken_ns);

/** mappings__flags() - the MAPPINGS_F_* named mappings in @pm. */
uint32_t mappings__flags(const struct proc_maps *pm);

/** mappings__get() - one more reference; returns @m.  Any thread. */
static inline struct mappings *mappings__get(struct mappings *m)
{
	atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
	return m;
}

/** mappings__put() - drop a reference; the last one frees.  Accepts NULL. */
void mappings__put(struct mappings *m);

/** mappings__same() - the same executable mappings of the same files. */
bool mappings__same(const struct mappings *a, const struct mappings *b);

/** mapping__same_file() - @a and @b map the same file (path, device, inode). */
bool mapping__same_file(const struct mapping *a, const struct mapping *b);

/** mappings__find() - the mapping holding @addr, by binary search; NULL if none. */
const struct mapping *mappings__find(const struct mappings *m, uint64_t addr);

/**
 * mappings__file_id() - the identity the resolver found for the file of
 * @inode on @dev_major:@dev_minor, when one of @m's mappings is of it;
 * NULL when none is or its file was not resolved.
 */
const struct file_id *mappings__file_id(const struct mappings *m, uint64_t inode,
					uint32_t dev_major, uint32_t dev_minor);

/**
 * mappings_history__add() - a generation @gen found by a read: @m, read at
 * @read_ns, differs from the newest snapshot; the change happened after the
 * newest's read.  Takes over the caller's reference; the oldest generation
 * goes past MAPPINGS_HISTORY_MAX.
 * Return: 0 or -ENOMEM (the reference is then dropped).
 */
int mappings_history__add(struct mappings_history *h, struct mappings *m, uint32_t gen,
			  uint64_t read_ns);

/**
 * mappings_history__announce() - a generation @gen the kernel reported: a
 * new executable mapping [@start, @end) at @time_ns.  Until a read settles
 * it, its snapshot is the newest one (which does not show the change).
 * Return: 0 or -ENOMEM (nothing added; no history without its newest).
 */
int mappings_history__announce(struct mappings_history *h, uint32_t gen, uint64_t time_ns,
			       uint64_t start, uint64_t end);

/**
 * mappings_history__settle() - @m, read at @read_ns after every change
 * announced so far, stands for the newest generation (taking over the
 * caller's reference).
 */
void mappings_history__settle(struct mappings_history *h, struct mappings *m, uint64_t read_ns);

/** mappings_history__latest() - the newest snapshot, NULL when none. */
static inline struct mappings *mappings_history__latest(const struct mappings_history *h)
{
	return h->nr ? h->e[h->nr - 1].snap : NULL;
}

/**
 * mappings_history__find() - the mapping holding @addr as the image had it at
 * @time_ns: the snapshot in force then is tried first (the first one for
 * earlier times: a process is sampled before its first read), then the
 * others, newest first.
 * @snap: set to the snapshot the mapping belongs to; may be NULL
 * Return: the mapping, valid while the history holds its snapshot, or NULL.
 */
const struct mapping *mappings_history__find(const struct mappings_history *h, uint64_t addr,
					     uint64_t time_ns, const struct mappings **snap);

/**
 * mappings_history__find_gen() - the mapping holding @addr for a sample
 * taken while generation @gen was the image's newest (its low bits,
 * MAPPINGS_GEN_MASK; 0: before the first, or unknown).  A snapshot stands
 * for that generation at @addr unless a change touching @addr lies between
 * the snapshot's read and the generation's window, or inside the window (a
 * change a read found, whose time is known only to lie between two reads):
 * the generation's own snapshot is tried, then the later ones, then the
 * earlier ones.  When none stands, the generation's mapping is returned
 * and @why says MAPPINGS_CHANGED: the file is unknown.
 * Return: the mapping, or NULL when the snapshot that stands maps nothing
 * there (or, when none stands, none does).
 */
const struct mapping *mappings_history__find_gen(const struct mappings_history *h, uint64_t addr,
						 uint32_t gen, enum mappings_find *why);

/** mappings_history__release() - drop every snapshot and zero @h. */
void mappings_history__release(struct mappings_history *h);

#endif /* CTXPROF_MAPPINGS_H */
