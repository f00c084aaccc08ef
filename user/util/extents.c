// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/array.h"
#include "util/extents.h"

struct extent {
	uint32_t first;
	uint32_t n;
	uint64_t until_ns; /* quarantine: unusable before this */
};

struct extents {
	struct extent *free; /* usable, sorted by first, never adjacent */
	size_t nr_free, cap_free;
	struct extent *held; /* released, in quarantine, oldest first */
	size_t nr_held, cap_held;
	uint32_t used;
	uint64_t quarantine_ns;
};

struct extents *extents__new(uint32_t capacity, uint64_t quarantine_ns)
{
	struct extents *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->quarantine_ns = quarantine_ns;
	if (capacity) {
		e->free = malloc(sizeof(*e->free));
		if (!e->free) {
			free(e);
			errno = ENOMEM;
			return NULL;
		}
		e->free[0] = (struct extent){.first = 0, .n = capacity};
		e->nr_free = e->cap_free = 1;
	}
	return e;
}

void extents__free(struct extents *e)
{
	if (!e)
		return;
	free(e->free);
	free(e->held);
	free(e);
}

/* put [first, first + n) into the free list, merged with its neighbours */
static int put_free(struct extents *e, uint32_t first, uint32_t n)
{
	size_t lo = 0, hi = e->nr_free, mid;
	struct extent *prev, *next;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (e->free[mid].first < first)
			lo = mid + 1;
		else
			hi = mid;
	}
	prev = lo ? &e->free[lo - 1] : NULL;
	next = lo < e->nr_free ? &e->free[lo] : NULL;
	if (prev && prev->first + prev->n == first) {
		prev->n += n;
		if (next && first + n == next->first) {
			prev->n += next->n;
			memmove(next, next + 1, (e->nr_free - lo - 1) * sizeof(*next));
			e->nr_free--;
		}
		return 0;
	}
	if (next && first + n == next->first) {
		next->first = first;
		next->n += n;
		return 0;
	}
	if (array_grow((void **)&e->free, &e->cap_free, e->nr_free + 1, sizeof(*e->free), 16))
		return -ENOMEM;
	memmove(&e->free[lo + 1], &e->free[lo], (e->nr_free - lo) * sizeof(*e->free));
	e->free[lo] = (struct extent){.first = first, .n = n};
	e->nr_free++;
	return 0;
}

/* quarantined ranges whose time is up become usable */
static void unquarantine(struct extents *e, uint64_t now_ns)
{
	size_t i = 0;

	while (i < e->nr_held && e->held[i].until_ns <= now_ns) {
		if (put_free(e, e->held[i].first, e->held[i].n))
			break;
		i++;
	}
	memmove(e->held, e->held + i, (e->nr_held - i) * sizeof(*e->held));
	e->nr_held -= i;
}

int extents__alloc(struct extents *e, uint32_t n, uint64_t now_ns, uint32_t *first)
{
	size_t i;

	if (!n)
		return -EINVAL;
	unquarantine(e, now_ns);
	for (i = 0; i < e->nr_free; i++) {
		if (e->free[i].n < n)
			continue;
		*first = e->free[i].first;
		e->free[i].first += n;
		e->free[i].n -= n;
		if (!e->free[i].n) {
			memmove(&e->free[i], &e->free[i + 1],
				(e->nr_free - i - 1) * sizeof(*e->free));
			e->nr_free--;
		}
		e->used += n;
		return 0;
	}
	return -ENOSPC;
}

int extents__release(struct extents *e, uint32_t first, uint32_t n, uint64_t now_ns)
{
	if (!n)
		return 0;
	if (array_grow((void **)&e->held, &e->cap_held, e->nr_held + 1, sizeof(*e->held), 16))
		return -ENOMEM;
	e->held[e->nr_held++] =
		(struct extent){.first = first, .n = n, .until_ns = now_ns + e->quarantine_ns};
	e->used -= n;
	return 0;
}

uint32_t extents__used(const struct extents *e)
{
	return e->used;
}

uint32_t extents__largest_free(struct extents *e, uint64_t now_ns)
{
	uint32_t best = 0;
	size_t i;

	unquarantine(e, now_ns);
	for (i = 0; i < e->nr_free; i++)
		if (e->free[i].n > best)
			best = e->free[i].n;
	return best;
}
