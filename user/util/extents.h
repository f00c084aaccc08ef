/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * extents - hand out contiguous index ranges of a fixed-size array (the BPF
 * unwinder's rows and mappings), first fit, free neighbours merged.
 *
 * A freed range is reusable only after a quarantine: a reader that is not
 * ours (a BPF program that looked an old range up just before it was
 * retired) may still be walking it, and must never see it rewritten under
 * it.  BPF programs run for microseconds; the quarantine is generous.
 *
 * No locking: one thread at a time.
 */
#ifndef CTXPROF_EXTENTS_H
#define CTXPROF_EXTENTS_H

#include <stdint.h>

struct extents;

/**
 * extents__new() - an allocator over indexes [0, @capacity).
 * @quarantine_ns: how long a freed range stays unusable
 * Return: NULL with errno set.  Pair with extents__free().
 */
struct extents *extents__new(uint32_t capacity, uint64_t quarantine_ns);

/** extents__free() - accepts NULL. */
void extents__free(struct extents *e);

/**
 * extents__alloc() - a free range of @n indexes, at *@first.
 * @now_ns: CLOCK_MONOTONIC now: ranges out of quarantine are reused first
 * Return: 0, -ENOSPC when no free range is that long, -EINVAL for @n 0,
 * -ENOMEM.
 */
int extents__alloc(struct extents *e, uint32_t n, uint64_t now_ns, uint32_t *first);

/** extents__release() - give back [@first, @first + @n), quarantined from @now_ns. */
int extents__release(struct extents *e, uint32_t first, uint32_t n, uint64_t now_ns);

/** extents__used() - indexes handed out and not released (quarantine included). */
uint32_t extents__used(const struct extents *e);

/** extents__largest_free() - the longest range extents__alloc() could give now. */
uint32_t extents__largest_free(struct extents *e, uint64_t now_ns);

#endif /* CTXPROF_EXTENTS_H */
