/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hash - the collector's hash functions, for in-memory tables only: the values
 * are never stored or sent, so they may change between versions.
 *
 * hash_u64() and hash_bytes() avalanche: any bit of their result may index a
 * table.  hash_combine() does not: end a chain of it with hash_u64().
 * Pure functions, any thread.
 */
#ifndef CTXPROF_HASH_H
#define CTXPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

/**
 * hash_u64() - murmur3's 64-bit finalizer (fmix64): every input bit flips
 * each output bit with probability about 1/2, so dense keys (pids, inodes,
 * sequential ids) spread over a power-of-two table.
 */
static inline uint64_t hash_u64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/**
 * hash_combine() - fold @v into the running hash @h (boost's hash_combine,
 * 64-bit): order-dependent, cheap, not avalanched.
 */
static inline uint64_t hash_combine(uint64_t h, uint64_t v)
{
	return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

/**
 * hash_bytes() - FNV-1a over @len bytes at @p, finished with hash_u64() (and
 * the length, so that "" and "\0" differ).
 */
static inline uint64_t hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return hash_u64(h ^ len);
}

#endif /* CTXPROF_HASH_H */
