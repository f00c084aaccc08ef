// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/sample_table.h"

#define MAX_LOAD_PCT 75

struct sample_table {
	struct sample_row *rows; /* count == 0 marks a free row */
	size_t capacity;
	size_t nr_rows;
	size_t max_rows;
	uint64_t nr_samples;
};

static uint64_t row_hash(uint64_t trace_id, const struct sample_record *rec, bool ctx)
{
	uint64_t h =
		trace_id * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)rec->tid * 0xc2b2ae3d27d4eb4fULL);
	int i;

	if (ctx) {
		h ^= rec->span_id * 0xff51afd7ed558ccdULL;
		h ^= (rec->local_root_span_id >> 7) * 0xc4ceb9fe1a85ec53ULL;
		for (i = 0; i < SAMPLER_NR_TAGS; i++)
			h = (h ^ rec->tags[i]) * 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

static bool row_match(const struct sample_row *r, uint64_t trace_id,
		      const struct sample_record *rec, bool ctx)
{
	if (r->trace_id != trace_id || r->tid != rec->tid || r->has_context != ctx)
		return false;
	return !ctx ||
	       (r->span_id == rec->span_id && r->local_root_span_id == rec->local_root_span_id &&
		!memcmp(r->tags, rec->tags, sizeof(r->tags)));
}

struct sample_table *sample_table__new(size_t capacity)
{
	struct sample_table *t;
	size_t cap = 16;

	if (!capacity || capacity > (1u << 28)) {
		errno = EINVAL;
		return NULL;
	}
	while (cap < capacity)
		cap <<= 1;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->rows = calloc(cap, sizeof(*t->rows));
	if (!t->rows) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->capacity = cap;
	t->max_rows = cap * MAX_LOAD_PCT / 100;
	return t;
}

void sample_table__free(struct sample_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

int sample_table__add(struct sample_table *t, uint64_t trace_id, const struct sample_record *rec)
{
	bool ctx = rec->flags & SAMPLE_F_CONTEXT;
	size_t mask = t->capacity - 1, i = row_hash(trace_id, rec, ctx) & mask;
	struct sample_row *r;
	size_t n;

	for (;; i = (i + 1) & mask) {
		r = &t->rows[i];
		if (!r->count)
			break;
		if (row_match(r, trace_id, rec, ctx))
			goto found;
	}
	if (t->nr_rows >= t->max_rows)
		return -ENOSPC;
	r->trace_id = trace_id;
	r->pid = rec->pid;
	r->tid = rec->tid;
	r->has_context = ctx;
	if (ctx) {
		r->span_id = rec->span_id;
		r->local_root_span_id = rec->local_root_span_id;
		memcpy(r->tags, rec->tags, sizeof(r->tags));
	}
	t->nr_rows++;
found:
	/* a thread can rename itself: keep the name it had at its latest sample */
	n = strnlen(rec->comm, sizeof(r->comm) - 1);
	memcpy(r->comm, rec->comm, n);
	memset(r->comm + n, 0, sizeof(r->comm) - n);
	r->count++;
	t->nr_samples++;
	return 0;
}

void sample_table__for_each(const struct sample_table *t,
			    void (*fn)(void *ctx, const struct sample_row *row), void *ctx)
{
	size_t i;

	for (i = 0; i < t->capacity; i++)
		if (t->rows[i].count)
			fn(ctx, &t->rows[i]);
}

void sample_table__clear(struct sample_table *t)
{
	memset(t->rows, 0, t->capacity * sizeof(*t->rows));
	t->nr_rows = 0;
	t->nr_samples = 0;
}

size_t sample_table__nr_rows(const struct sample_table *t)
{
	return t->nr_rows;
}

uint64_t sample_table__nr_samples(const struct sample_table *t)
{
	return t->nr_samples;
}
