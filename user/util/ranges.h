/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ranges - find the element holding an address in an array sorted by start:
 * symbols, mappings, any [start, end) run.  Binary search for the last
 * element whose start is at or below the address, then (range_find()) a
 * check against its end.
 *
 * Inline: with the size and offsets constant at the call (RANGE_FIND() and
 * RANGE_FLOOR() make them so) the search compiles to the hand-written loop.
 * Pure functions on a read-only array: any thread, no locking.
 */
#ifndef CTXPROF_RANGES_H
#define CTXPROF_RANGES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/**
 * range_floor() - the last of @nr elements whose start is at or below @addr.
 * @base: @nr elements of @size bytes, sorted by start (ascending)
 * @start_off: offset of the 64-bit start in an element
 * Return: that element, or NULL when there is none (@nr 0, or @addr below
 * every start).
 */
static inline const void *range_floor(const void *base, size_t nr, size_t size, size_t start_off,
				      uint64_t addr)
{
	const unsigned char *p = base;
	size_t lo = 0, hi = nr, mid;
	uint64_t start;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		memcpy(&start, p + mid * size + start_off, sizeof(start));
		if (start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? p + (lo - 1) * size : NULL;
}

/**
 * range_find() - the element whose [start, end) holds @addr.
 * @base: @nr elements of @size bytes, sorted by start, not overlapping
 * @start_off: offset of the 64-bit start in an element
 * @end_off: offset of the 64-bit end (exclusive)
 * Return: that element, or NULL when @addr is in none.
 */
static inline const void *range_find(const void *base, size_t nr, size_t size, size_t start_off,
				     size_t end_off, uint64_t addr)
{
	const unsigned char *e = range_floor(base, nr, size, start_off, addr);
	uint64_t end;

	if (!e)
		return NULL;
	memcpy(&end, e + end_off, sizeof(end));
	return addr < end ? e : NULL;
}

/* range_floor() over array @arr of structs sorted by their 64-bit field @start */
#define RANGE_FLOOR(arr, nr, start, addr)                                                          \
	({                                                                                         \
		_Static_assert(sizeof((arr)->start) == 8, "a 64-bit start");                       \
		range_floor((arr), (nr), sizeof(*(arr)), offsetof(typeof(*(arr)), start), (addr)); \
	})

/* range_find() over array @arr of structs with 64-bit fields @start and @end */
#define RANGE_FIND(arr, nr, start, end, addr)                                                      \
	({                                                                                         \
		_Static_assert(sizeof((arr)->start) == 8 && sizeof((arr)->end) == 8,               \
			       "64-bit start and end");                                            \
		range_find((arr), (nr), sizeof(*(arr)), offsetof(typeof(*(arr)), start),           \
			   offsetof(typeof(*(arr)), end), (addr));                                 \
	})

#endif /* CTXPROF_RANGES_H */
