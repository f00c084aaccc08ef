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

#endif /* CTXPROF_MEM_BUDGET_H */
