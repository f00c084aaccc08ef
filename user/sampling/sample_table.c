// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sampling/sample_table.h"
#include "util/hash.h"
#include "util/htable.h"

struct blob {
	uint32_t at; /* offset in the pool */
	uint32_t size;
};

struct sample_table {
	struct htable index;	 /* fixed: allocated by sample_table__new() only */
	struct sample_row *rows; /* nr_rows used, in the order of their first sample */
	size_t nr_rows;
	uint64_t nr_samples;
	/* distinct OpenTelemetry records and goroutine label sets, each 8-byte
	 * aligned in @pool */
	struct htable blob_index; /* fixed, two entries a row */
	struct blob *blobs;	  /* entry -> where in @pool */
	size_t nr_blobs;
	uint8_t *pool;
	size_t pool_used, pool_size;
};

/* what identifies a row, in the sample's terms */
struct row_key {
	uint64_t trace_id;
	const struct sample_record *rec;
	bool ctx;
	const struct otel_thread_record *otel; /* interned: equal records, equal pointers */
	const struct go_labels_record *go;     /* likewise */
};

/* span_id, local_root_span_id and tags: the record's last words before frames */
#define CTX_WORDS 7
_Static_assert(offsetof(struct sample_record, frames) ==
		       offsetof(struct sample_record, span_id) + CTX_WORDS * sizeof(uint64_t),
	       "the trace context is one run of words");

/* a row without context costs one multiply; the context adds hash_words() */
static uint32_t row_hash(const struct row_key *k)
{
	uint64_t h =
		hash_mum(k->trace_id ^ HASH_P1, ((uint64_t)k->ctx << 32 | k->rec->tid) ^ HASH_P2);

	if (k->ctx)
		h = hash_words(h, &k->rec->span_id, CTX_WORDS);
	if (k->otel)
		h = hash_u64(h ^ (uintptr_t)k->otel);
	if (k->go)
		h = hash_u64(h ^ (uintptr_t)k->go);
	return h;
}

static bool row_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sample_row *r = (const struct sample_row *)ctx + idx;
	const struct row_key *k = key;

	if (r->trace_id != k->trace_id || r->tid != k->rec->tid || r->has_context != k->ctx ||
	    r->otel != k->otel || r->go != k->go)
		return false;
	return !k->ctx || (r->span_id == k->rec->span_id &&
			   r->local_root_span_id == k->rec->local_root_span_id &&
			   !memcmp(r->tags, k->rec->tags, sizeof(r->tags)));
}

static void row_init(struct sample_row *r, const struct row_key *k)
{
	*r = (struct sample_row){
		.trace_id = k->trace_id,
		.pid = k->rec->pid,
		.tid = k->rec->tid,
		.has_context = k->ctx,
		.otel = k->otel,
		.go = k->go,
	};
	if (k->ctx) {
		r->span_id = k->rec->span_id;
		r->local_root_span_id = k->rec->local_root_span_id;
		memcpy(r->tags, k->rec->tags, sizeof(r->tags));
	}
}

struct sample_table *sample_table__new(size_t capacity)
{
	struct sample_table *t;
	size_t cap = 16;
	int err;

	if (!capacity || capacity > (1u << 28)) {
		errno = EINVAL;
		return NULL;
	}
	while (cap < capacity)
		cap <<= 1;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	/* 3/4 of the power of two: the index then has exactly @cap slots */
	err = htable__init(&t->index, cap / 4 * 3, HTABLE_FIXED);
	if (err)
		goto err_free;
	t->rows = calloc(cap / 4 * 3, sizeof(*t->rows));
	/* a row has at most an OpenTelemetry record and a label set */
	err = htable__init(&t->blob_index, cap / 4 * 3 * 2, HTABLE_FIXED);
	if (err)
		goto err_free;
	/* untouched pages of the pool cost no memory: most processes publish no record */
	t->pool_size = (size_t)cap / 4 * 3 * SAMPLE_TABLE_OTEL_BYTES_PER_ROW;
	if (t->pool_size > UINT32_MAX) /* offsets are 32-bit */
		t->pool_size = UINT32_MAX;
	t->pool = calloc(1, t->pool_size);
	t->blobs = calloc(cap / 4 * 3 * 2, sizeof(*t->blobs));
	if (!t->rows || !t->pool || !t->blobs) {
		err = -ENOMEM;
		goto err_free;
	}
	return t;

err_free:
	sample_table__free(t);
	errno = -err;
	return NULL;
}

void sample_table__free(struct sample_table *t)
{
	if (!t)
		return;
	htable__destroy(&t->index);
	free(t->rows);
	htable__destroy(&t->blob_index);
	free(t->blobs);
	free(t->pool);
	free(t);
}

struct blob_key {
	const struct sample_table *t;
	const void *bytes;
	size_t size;
};

static bool blob_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct blob_key *k = key;
	const struct blob *b = &k->t->blobs[idx];

	return b->size == k->size && !memcmp(k->t->pool + b->at, k->bytes, k->size);
}

/* the table's copy of @size bytes at @bytes, stored on first sight; NULL when the pool is full */
static const void *blob_intern(struct sample_table *t, const void *bytes, size_t size)
{
	struct blob_key key = {t, bytes, size};
	uint32_t hash = (uint32_t)hash_bytes(bytes, size), idx;

	idx = htable__find(&t->blob_index, hash, blob_eq, &key, &key);
	if (idx != HTABLE_NONE)
		return t->pool + t->blobs[idx].at;
	if (t->pool_size - t->pool_used < size || htable__insert(&t->blob_index, hash, t->nr_blobs))
		return NULL;
	memcpy(t->pool + t->pool_used, bytes, size);
	t->blobs[t->nr_blobs++] = (struct blob){(uint32_t)t->pool_used, (uint32_t)size};
	t->pool_used += (size + 7) & ~(size_t)7;
	return t->pool + t->blobs[t->nr_blobs - 1].at;
}

static int add(struct sample_table *t, uint64_t trace_id, const struct sample_record *rec,
	       const struct otel_thread_record *otel, const struct go_labels_record *go,
	       uint64_t off_ns)
{
	struct row_key key = {trace_id, rec, rec->flags & SAMPLE_F_CONTEXT, NULL, NULL};
	uint32_t hash, idx;
	struct sample_row *r;
	size_t n;
	int err;

	if (otel) {
		key.otel = blob_intern(t, otel, sizeof(*otel) + otel->attrs_size);
		if (!key.otel)
			return -ENOSPC;
	}
	if (go) {
		key.go = blob_intern(t, go, sizeof(*go) + go->size);
		if (!key.go)
			return -ENOSPC;
	}
	hash = row_hash(&key);
	idx = htable__find(&t->index, hash, row_eq, t->rows, &key);
	if (idx == HTABLE_NONE) {
		/* the fixed index refuses a row past the table's size: -ENOSPC */
		err = htable__insert(&t->index, hash, t->nr_rows);
		if (err)
			return err;
		idx = t->nr_rows++;
		row_init(&t->rows[idx], &key);
	}
	r = &t->rows[idx];
	/* a thread can rename itself: keep the name it had at its latest sample */
	n = strnlen(rec->comm, sizeof(r->comm) - 1);
	memcpy(r->comm, rec->comm, n);
	memset(r->comm + n, 0, sizeof(r->comm) - n);
	r->count++;
	r->off_ns += off_ns;
	t->nr_samples++;
	return 0;
}

int sample_table__add(struct sample_table *t, uint64_t trace_id, const struct sample_record *rec,
		      const struct otel_thread_record *otel, const struct go_labels_record *go)
{
	return add(t, trace_id, rec, otel, go, 0);
}

int sample_table__add_wait(struct sample_table *t, uint64_t trace_id,
			   const struct sample_record *rec, const struct otel_thread_record *otel,
			   const struct go_labels_record *go, uint64_t off_ns)
{
	return add(t, trace_id, rec, otel, go, off_ns);
}

void sample_table__for_each(const struct sample_table *t,
			    void (*fn)(void *ctx, const struct sample_row *row), void *ctx)
{
	size_t i;

	for (i = 0; i < t->nr_rows; i++)
		fn(ctx, &t->rows[i]);
}

void sample_table__clear(struct sample_table *t)
{
	htable__clear(&t->index);
	t->nr_rows = 0;
	t->nr_samples = 0;
	/* clearing touches every slot: not for a table that never held a record */
	if (t->nr_blobs)
		htable__clear(&t->blob_index);
	t->nr_blobs = 0;
	t->pool_used = 0;
}

size_t sample_table__nr_rows(const struct sample_table *t)
{
	return t->nr_rows;
}

uint64_t sample_table__nr_samples(const struct sample_table *t)
{
	return t->nr_samples;
}
