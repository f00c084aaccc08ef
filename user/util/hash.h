/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hash - the collector's hash functions, for in-memory tables only: the values
 * are never stored or sent, so they may change between versions.
 *
 * hash_u64(), hash_words() and hash_bytes() avalanche: any bit of their
 * result may index a table.  hash_combine() does not: end a chain of it with
 * hash_u64().  For a key of several words on a hot path, hash_words() is the
 * fast one: its multiplies are independent, a chain of hash_combine() is not.
 * Pure functions, any thread.
 */
#ifndef CTXPROF_HASH_H
#define CTXPROF_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

#define HASH_P1 0x9e3779b185ebca87ULL
#define HASH_P2 0xc2b2ae3d27d4eb4fULL
#define HASH_P3 0x165667b19e3779f9ULL

#ifdef __SIZEOF_INT128__
/* wyhash's mum: a full 64x64->128 multiply, folded */
static inline uint64_t hash_mum(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}
#else
static inline uint64_t hash_mum(uint64_t a, uint64_t b)
{
	return hash_u64(a) ^ hash_u64(b + HASH_P3);
}
#endif

/**
 * hash_words() - hash @n 64-bit words at @words, and @seed.
 * @words: any array of 8-byte integers (read with memcpy(), so the element
 *         type does not matter to aliasing)
 *
 * One independent multiply per pair of words (no dependency chain but the
 * adds), keyed by position so that order matters, then one avalanche.
 */
static inline uint64_t hash_words(uint64_t seed, const void *words, size_t n)
{
	const unsigned char *p = words;
	uint64_t h = seed ^ HASH_P3, ka = HASH_P1, kb = HASH_P2, a, b;
	size_t i = 0;

	for (; i + 2 <= n; i += 2) {
		memcpy(&a, p + i * 8, 8);
		memcpy(&b, p + i * 8 + 8, 8);
		h += hash_mum(a ^ ka, b ^ kb);
		ka += HASH_P3;
		kb += HASH_P1;
	}
	if (i < n) {
		memcpy(&a, p + i * 8, 8);
		h += hash_mum(a ^ ka, kb ^ n);
	}
	return hash_u64(h ^ (seed << 29 | seed >> 35) ^ n);
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
