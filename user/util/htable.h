/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * htable - an open-addressing hash index over an entry array its caller owns.
 *
 * A slot holds an entry's 32-bit hash and its index in the caller's array;
 * the entries themselves (any type, or pointers where an entry must not move)
 * stay in that array, dense and in insertion order, so iterating walks the
 * array and never the table.  A lookup probes linearly, compares the stored
 * hash first and calls the caller's @eq only for an equal hash.  The load
 * stays at or below 3/4, so an empty slot ends every probe.
 *
 * Two modes:
 *  - growing: a zeroed struct htable (or htable__init() without flags) doubles
 *    its slots when an insert would pass 3/4 load;
 *  - fixed (HTABLE_FIXED): htable__init() allocates once; an insert past the
 *    size asked for fails with -ENOSPC and nothing ever allocates again.  For
 *    paths that must not allocate (the drain thread's sample_table__add()).
 * No removal: htable__clear() empties the table, keeping its memory.
 *
 * Hashes: any 32 bits of a well-mixed hash (util/hash.h: hash_u64(),
 * hash_bytes()).  The low bits pick the first slot.
 *
 * Threading: no internal locking.  The owner serializes htable__insert(),
 * htable__clear(), htable__init() and htable__destroy() against every other
 * call; htable__find() calls may run concurrently with one another.
 */
#ifndef CTXPROF_HTABLE_H
#define CTXPROF_HTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* htable__find(): no entry; also the one index an entry cannot have */
#define HTABLE_NONE UINT32_MAX

/* the most slots a table has; it then indexes 3/4 as many entries */
#define HTABLE_MAX_SLOTS   ((size_t)1 << 31)
#define HTABLE_MAX_ENTRIES (HTABLE_MAX_SLOTS / 4 * 3)

/* htable__init() flags */
#define HTABLE_FIXED (1u << 0) /* allocate in htable__init() only; never grow */

struct htable_slot {
	uint32_t hash;
	uint32_t ref; /* entry index + 1; 0: an empty slot */
};

struct htable {
	struct htable_slot *slots;
	size_t mask;   /* slots - 1; slots is a power of two, or NULL with nr 0 */
	size_t nr;     /* entries indexed */
	size_t max_nr; /* a fixed table's size; else 3/4 of the slots */
	unsigned int flags;
};

/**
 * typedef htable_eq_fn - whether entry @idx of the caller's array equals @key.
 * @ctx: as given to htable__find(), typically the entry array or its owner
 */
typedef bool (*htable_eq_fn)(const void *ctx, uint32_t idx, const void *key);

/**
 * htable__init() - size @t, a zeroed or destroyed table, for @nr entries.
 * @flags: HTABLE_FIXED for a table that holds exactly @nr entries and never
 *         grows; 0 for a growing table that holds at least @nr before it grows
 *
 * Not needed for a growing table: a zeroed struct htable is an empty one,
 * allocating at its first insert.
 * Return: 0, -EINVAL for @nr 0 or above HTABLE_MAX_ENTRIES, or -ENOMEM.
 * Pair with htable__destroy().
 */
int htable__init(struct htable *t, size_t nr, unsigned int flags);

/** htable__destroy() - free the slots and leave @t zeroed (an empty growing table). */
void htable__destroy(struct htable *t);

/**
 * htable__find() - the entry equal to @key.
 * @hash: @key's hash, computed as for htable__insert()
 * @eq: called for each indexed entry with @hash until it returns true
 * @ctx: passed to @eq
 *
 * Inline, so that a static @eq is inlined too: a hit costs the probe and one
 * comparison, no call and no allocation.
 * Return: the entry's index, or HTABLE_NONE.
 */
static inline uint32_t htable__find(const struct htable *t, uint32_t hash, htable_eq_fn eq,
				    const void *ctx, const void *key)
{
	const struct htable_slot *s;
	size_t i;

	if (!t->nr)
		return HTABLE_NONE;
	for (i = hash & t->mask;; i = (i + 1) & t->mask) {
		s = &t->slots[i];
		if (!s->ref)
			return HTABLE_NONE;
		if (s->hash == hash && eq(ctx, s->ref - 1, key))
			return s->ref - 1;
	}
}

/**
 * htable__insert() - index entry @idx under @hash.
 *
 * The entry must be absent (htable__find() said HTABLE_NONE): duplicates are
 * not looked for.  A growing table may allocate here; a fixed one never does.
 * The caller may fill entry @idx before or after.
 * Return: 0; -ENOSPC when a fixed table is full; -ENOMEM when growing fails
 * or would pass HTABLE_MAX_SLOTS; -EINVAL for @idx HTABLE_NONE.
 */
int htable__insert(struct htable *t, uint32_t hash, uint32_t idx);

/** htable__clear() - drop every entry, keeping the memory (and a fixed table's size). */
void htable__clear(struct htable *t);

/* the hash entry @idx was inserted with (htable__clear_by()) */
typedef uint32_t (*htable_hash_fn)(const void *ctx, uint32_t idx);

/**
 * htable__clear_by() - htable__clear() for a table much larger than what it
 * holds: the entries' slots alone are zeroed, found from their hashes
 * (@hash_of), newest first (with linear probing, no older entry's probe
 * runs through a newer one's slot, so each is found whole); the whole slot
 * array when more than a sixteenth of it is in use.  Writes as many cache
 * lines as entries, where htable__clear() writes every slot: for a fixed
 * table emptied often (a queue's index).
 */
void htable__clear_by(struct htable *t, htable_hash_fn hash_of, const void *ctx);

#endif /* CTXPROF_HTABLE_H */
