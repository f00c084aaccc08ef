// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "calltrace_storage.h"

/* traces are carved from chunks of this size; a trace of 191 frames is 1.6 KiB */
#define ARENA_CHUNK (1u << 20)
/* stop inserting past this load so probe chains stay short */
#define MAX_LOAD_PCT 75

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	uint8_t data[];
};

struct slot {
	uint64_t hash;
	struct calltrace *trace;
};

struct calltrace_storage {
	struct slot *slots;
	size_t capacity; /* power of two */
	size_t count;
	size_t max_count;
	uint64_t instance_id; /* epoch of the current cycle, >= 1 */
	uint64_t puts;
	uint64_t dropped;
	struct arena_chunk *chunks; /* current chunk first */
	struct arena_chunk *spare;  /* chunks kept from earlier cycles */
};

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t calltrace_hash(uint32_t pid, const __u64 *frames, uint16_t nr_kframes,
			uint16_t nr_uframes, uint32_t flags)
{
	uint64_t h = mix64(((uint64_t)pid << 32) ^ ((uint64_t)nr_kframes << 16) ^ nr_uframes ^
			   ((uint64_t)flags << 48));
	unsigned int i, n = nr_kframes + nr_uframes;

	for (i = 0; i < n; i++)
		h = mix64(h ^ frames[i]) + i;
	/* 0 marks an empty slot */
	return h ? h : 1;
}

static struct arena_chunk *chunk_new(void)
{
	struct arena_chunk *c = malloc(sizeof(*c) + ARENA_CHUNK);

	if (c) {
		c->next = NULL;
		c->used = 0;
	}
	return c;
}

/* bump allocation; a new chunk costs a malloc once per ~1 MiB of new traces */
static void *arena_alloc(struct calltrace_storage *s, size_t size)
{
	struct arena_chunk *c = s->chunks;

	size = (size + 7) & ~(size_t)7;
	if (!c || c->used + size > ARENA_CHUNK) {
		if (s->spare) {
			c = s->spare;
			s->spare = c->next;
			c->used = 0;
		} else {
			c = chunk_new();
			if (!c)
				return NULL;
		}
		c->next = s->chunks;
		s->chunks = c;
	}
	c->used += size;
	return c->data + c->used - size;
}

struct calltrace_storage *calltrace_storage__new(size_t capacity)
{
	struct calltrace_storage *s;
	size_t cap = 16;

	if (!capacity || capacity > (1u << 30)) {
		errno = EINVAL;
		return NULL;
	}
	while (cap < capacity)
		cap <<= 1;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->slots = calloc(cap, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->capacity = cap;
	s->max_count = cap * MAX_LOAD_PCT / 100;
	s->instance_id = 1;
	return s;
}

static void free_chunks(struct arena_chunk *c)
{
	struct arena_chunk *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

void calltrace_storage__free(struct calltrace_storage *s)
{
	if (!s)
		return;
	free_chunks(s->chunks);
	free_chunks(s->spare);
	free(s->slots);
	free(s);
}

static bool trace_equal(const struct calltrace *t, uint32_t pid, const __u64 *frames,
			uint16_t nk, uint16_t nu, uint32_t flags)
{
	return t->pid == pid && t->nr_kframes == nk && t->nr_uframes == nu && t->flags == flags &&
	       !memcmp(t->frames, frames, (size_t)(nk + nu) * sizeof(*frames));
}

uint64_t calltrace_storage__put(struct calltrace_storage *s, uint32_t pid, const __u64 *frames,
				uint16_t nr_kframes, uint16_t nr_uframes, uint32_t flags)
{
	uint64_t h = calltrace_hash(pid, frames, nr_kframes, nr_uframes, flags);
	size_t mask = s->capacity - 1, i = h & mask, n = nr_kframes + nr_uframes;
	struct calltrace *t;

	for (;;) {
		struct slot *sl = &s->slots[i];

		if (!sl->hash)
			break;
		if (sl->hash == h && trace_equal(sl->trace, pid, frames, nr_kframes, nr_uframes,
						 flags)) {
			s->puts++;
			return sl->trace->trace_id;
		}
		i = (i + 1) & mask;
	}
	if (s->count >= s->max_count)
		goto dropped;
	t = arena_alloc(s, sizeof(*t) + n * sizeof(*frames));
	if (!t)
		goto dropped;
	t->trace_id = s->instance_id << 32 | i;
	t->hash = h;
	t->pid = pid;
	t->nr_kframes = nr_kframes;
	t->nr_uframes = nr_uframes;
	t->flags = flags;
	t->reserved = 0;
	memcpy(t->frames, frames, n * sizeof(*frames));
	s->slots[i].trace = t;
	s->slots[i].hash = h;
	s->count++;
	s->puts++;
	return t->trace_id;

dropped:
	s->dropped++;
	return CALLTRACE_DROPPED_TRACE_ID;
}

size_t calltrace_storage__process(struct calltrace_storage *s, calltrace_fn fn, void *ctx)
{
	struct arena_chunk *last;
	size_t i, n = 0;

	for (i = 0; i < s->capacity; i++) {
		if (!s->slots[i].hash)
			continue;
		fn(ctx, s->slots[i].trace);
		n++;
	}
	memset(s->slots, 0, s->capacity * sizeof(*s->slots));
	s->count = 0;
	s->puts = 0;
	/* keep the arena's chunks for the next cycle instead of freeing them */
	if (s->chunks) {
		for (last = s->chunks; last->next; last = last->next)
			;
		last->next = s->spare;
		s->spare = s->chunks;
		s->chunks = NULL;
	}
	/* epoch 0 is reserved (CALLTRACE_DROPPED_TRACE_ID lives there) */
	if (++s->instance_id > UINT32_MAX)
		s->instance_id = 1;
	return n;
}

void calltrace_storage__stats(const struct calltrace_storage *s, struct calltrace_storage_stats *st)
{
	st->traces = s->count;
	st->puts = s->puts;
	st->dropped = s->dropped;
	st->capacity = s->capacity;
}
