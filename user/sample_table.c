// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sample_table.h"

#define MAX_LOAD_PCT 75

struct sample_table {
	struct sample_row *rows; /* count == 0 marks a free row */
	size_t capacity;
	size_t nr_rows;
	size_t max_rows;
	uint64_t nr_samples;
};

static uint64_t row_hash(uint64_t trace_id, uint32_t tid)
{
	uint64_t h = trace_id * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)tid * 0xc2b2ae3d27d4eb4fULL);

	return h ^ (h >> 29);
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

int sample_table__add(struct sample_table *t, uint64_t trace_id, uint32_t pid, uint32_t tid,
		      const char *comm)
{
	size_t mask = t->capacity - 1, i = row_hash(trace_id, tid) & mask;
	struct sample_row *r;
	size_t n;

	for (;; i = (i + 1) & mask) {
		r = &t->rows[i];
		if (!r->count)
			break;
		if (r->trace_id == trace_id && r->tid == tid)
			goto found;
	}
	if (t->nr_rows >= t->max_rows)
		return -ENOSPC;
	r->trace_id = trace_id;
	r->pid = pid;
	r->tid = tid;
	t->nr_rows++;
found:
	/* a thread can rename itself: keep the name it had at its latest sample */
	n = strnlen(comm, sizeof(r->comm) - 1);
	memcpy(r->comm, comm, n);
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
