/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * array - growing a heap array by doubling, overflow-checked.
 *
 * Threads: a function of its arguments; any thread, the array's owner
 * serializing its own array.
 */
#ifndef CTXPROF_ARRAY_H
#define CTXPROF_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/**
 * array_grow() - make *@buf hold at least @need elements of @elem bytes.
 * @cap: current capacity in elements, updated
 * @first: capacity of a first allocation
 * Return: 0 or -ENOMEM (*@buf is then unchanged).
 */
static inline int array_grow(void **buf, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t new_cap = *cap ? *cap : first;
	void *p;

	while (new_cap < need) {
		if (new_cap > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		new_cap *= 2;
	}
	if (new_cap == *cap)
		return 0;
	p = realloc(*buf, new_cap * elem);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = new_cap;
	return 0;
}

#endif /* CTXPROF_ARRAY_H */
