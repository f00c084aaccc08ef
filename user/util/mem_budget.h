/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mem_budget - the bytes one piece of work may hold at once, charged before
 * they are allocated, so that a hostile input is refused before it costs
 * the memory rather than after.
 *
 * A budget is its owner's: no locking.
 */
#ifndef CTXPROF_MEM_BUDGET_H
#define CTXPROF_MEM_BUDGET_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/array.h"

struct mem_budget {
	size_t limit; /* bytes that may be held at once */
	size_t used;  /* bytes held now */
	size_t peak;  /* the most held at once */
};

/**
 * mem_budget__take() - charge @n bytes.
 * Return: 0, or -E2BIG (nothing charged) when they do not fit.
 */
static inline int mem_budget__take(struct mem_budget *b, size_t n)
{
	if (n > b->limit - b->used)
		return -E2BIG;
	b->used += n;
	if (b->used > b->peak)
		b->peak = b->used;
	return 0;
}

/** mem_budget__give() - return @n bytes taken before. */
static inline void mem_budget__give(struct mem_budget *b, size_t n)
{
	b->used -= n < b->used ? n : b->used;
}

/** mem_budget__left() - what may still be taken. */
static inline size_t mem_budget__left(const struct mem_budget *b)
{
	return b->limit - b->used;
}

/**
 * mem_budget__grow() - array_grow() whose growth is charged to @b: *@cap
 * counts what is charged, so a caller gives back *@cap * @elem when it
 * frees *@buf (also after a failure: the array may then be larger than
 * *@cap, never charged beyond it).
 * Return: 0, -E2BIG past the budget, -ENOMEM.
 */
static inline int mem_budget__grow(struct mem_budget *b, void **buf, size_t *cap, size_t need,
				   size_t elem, size_t first)
{
	size_t new_cap = *cap;
	int ret = array_grow(buf, &new_cap, need, elem, first);

	if (ret || new_cap == *cap)
		return ret;
	ret = mem_budget__take(b, (new_cap - *cap) * elem);
	if (!ret)
		*cap = new_cap;
	return ret;
}

#endif /* CTXPROF_MEM_BUDGET_H */
