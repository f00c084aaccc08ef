// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "unwind/unwind_store.h"
#include "util/clock.h"
#include "util/extents.h"
#include "util/hash.h"
#include "util/htable.h"

/* a BPF program walks a range for microseconds: a second is ample */
#define QUARANTINE_NS 1000000000ull

#define CHUNK_BYTES ((size_t)UNWIND_CHUNK_ROWS * sizeof(struct unwind_row))

struct unwind_store {
	struct unwind_store_maps m;
	/* the shared mappings of the BPF arrays: each row chunk's, NULL until made */
	struct unwind_row **chunks;
	uint32_t nr_chunks, chunks_made, chunk_errors;
	struct unwind_rule *rules;
	struct unwind_mapping *mappings;
	size_t rules_bytes, mappings_bytes;
	struct extents *row_ranges;
	struct extents *mapping_ranges;
	struct htable rule_index; /* over rules[0, nr_rules) */
	uint32_t nr_rules;
	uint32_t *rule_map; /* scratch: a table's rule -> global rule */
	size_t rule_map_cap;
};

static size_t page_round(size_t n)
{
	size_t page = sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

static void *map_array(int fd, size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

struct unwind_store *unwind_store__new(const struct unwind_store_maps *maps)
{
	struct unwind_store *s = calloc(1, sizeof(*s));
	int err = -ENOMEM;

	if (!s)
		return NULL;
	s->m = *maps;
	s->nr_chunks =
		(uint32_t)(((uint64_t)maps->nr_rows + UNWIND_CHUNK_ROWS - 1) / UNWIND_CHUNK_ROWS);
	s->chunks = calloc(s->nr_chunks ? s->nr_chunks : 1, sizeof(struct unwind_row *));
	s->rules_bytes = page_round((size_t)maps->nr_rules * sizeof(*s->rules));
	s->mappings_bytes = page_round((size_t)maps->nr_mappings * sizeof(*s->mappings));
	s->rules = map_array(maps->rules_fd, s->rules_bytes);
	s->mappings = map_array(maps->mappings_fd, s->mappings_bytes);
	if (!s->chunks || !s->rules || !s->mappings) {
		err = -errno;
		goto err_free;
	}
	s->row_ranges = extents__new(maps->nr_rows, QUARANTINE_NS);
	s->mapping_ranges = extents__new(maps->nr_mappings, QUARANTINE_NS);
	if (!s->row_ranges || !s->mapping_ranges)
		goto err_free;
	return s;

err_free:
	unwind_store__free(s);
	errno = -err;
	return NULL;
}

void unwind_store__free(struct unwind_store *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; s->chunks && i < s->nr_chunks; i++)
		if (s->chunks[i])
			munmap(s->chunks[i], CHUNK_BYTES);
	free(s->chunks);
	if (s->rules)
		munmap(s->rules, s->rules_bytes);
	if (s->mappings)
		munmap(s->mappings, s->mappings_bytes);
	extents__free(s->row_ranges);
	extents__free(s->mapping_ranges);
	htable__destroy(&s->rule_index);
	free(s->rule_map);
	free(s);
}

static bool rule_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct unwind_store *s = ctx;

	return !memcmp(&s->rules[idx], key, sizeof(s->rules[idx]));
}

/* the global index of @r, added when new */
static int intern_rule(struct unwind_store *s, const struct unwind_rule *r, uint32_t *idx)
{
	uint32_t hash = (uint32_t)hash_bytes(r, sizeof(*r));
	uint32_t i = htable__find(&s->rule_index, hash, rule_eq, s, r);
	int err;

	if (i != HTABLE_NONE) {
		*idx = i;
		return 0;
	}
	if (s->nr_rules >= s->m.nr_rules)
		return -ENOSPC;
	err = htable__insert(&s->rule_index, hash, s->nr_rules);
	if (err)
		return err;
	/* written before any row points at it; rows are published by a syscall */
	s->rules[s->nr_rules] = *r;
	*idx = s->nr_rules++;
	return 0;
}

/* chunk @c made, mapped and put in the array of chunks, unless it is */
static int chunk_make(struct unwind_store *s, uint32_t c)
{
	void *p;
	int fd, err;

	if (s->chunks[c])
		return 0;
	fd = s->m.new_chunk ? s->m.new_chunk(s->m.chunk_ctx) : -ENOSYS;
	if (fd < 0) {
		err = fd;
		goto err_count;
	}
	p = map_array(fd, CHUNK_BYTES);
	if (!p) {
		err = -errno;
		close(fd);
		goto err_count;
	}
	/* published before any row of it is: no mapping points into it yet */
	if (bpf_map_update_elem(s->m.rows_fd, &c, &fd, BPF_ANY)) {
		err = -errno;
		munmap(p, CHUNK_BYTES);
		close(fd);
		goto err_count;
	}
	/* the array of chunks and our mapping hold it now */
	close(fd);
	s->chunks[c] = p;
	s->chunks_made++;
	return 0;

err_count:
	/* the first time, said: every table past the first chunk goes without */
	if (!s->chunk_errors++)
		fprintf(stderr, "ctxprof: unwind: cannot make a chunk of unwind rows: %s\n",
			strerror(-err));
	return err;
}

static struct unwind_row *row_at(struct unwind_store *s, uint32_t i)
{
	return &s->chunks[i >> UNWIND_CHUNK_SHIFT][i & (UNWIND_CHUNK_ROWS - 1)];
}

int unwind_store__put_table(struct unwind_store *s, const struct unwind_row *rows, size_t nr_rows,
			    const struct unwind_rule *rules, size_t nr_rules, uint32_t *first)
{
	size_t i;
	int err;

	if (!nr_rows || !nr_rules)
		return -EINVAL;
	if (nr_rows > UNWIND_MAX_TABLE_ROWS)
		return -ENOSPC;
	if (nr_rules > s->rule_map_cap) {
		uint32_t *m = realloc(s->rule_map, nr_rules * sizeof(*m));

		if (!m)
			return -ENOMEM;
		s->rule_map = m;
		s->rule_map_cap = nr_rules;
	}
	for (i = 0; i < nr_rules; i++) {
		err = intern_rule(s, &rules[i], &s->rule_map[i]);
		if (err)
			return err;
	}
	err = extents__alloc(s->row_ranges, nr_rows, mono_ns(), first);
	if (err)
		return err;
	for (i = *first >> UNWIND_CHUNK_SHIFT; i <= (*first + nr_rows - 1) >> UNWIND_CHUNK_SHIFT;
	     i++) {
		if (chunk_make(s, (uint32_t)i)) {
			extents__release(s->row_ranges, *first, nr_rows, mono_ns());
			return -ENOSPC;
		}
	}
	for (i = 0; i < nr_rows; i++) {
		/* a hostile table cannot point past its own rules */
		if (rows[i].rule >= nr_rules) {
			extents__release(s->row_ranges, *first, nr_rows, mono_ns());
			return -EINVAL;
		}
		*row_at(s, *first + (uint32_t)i) = (struct unwind_row){
			.pc = rows[i].pc,
			.rule = s->rule_map[rows[i].rule],
		};
	}
	return 0;
}

void unwind_store__drop_table(struct unwind_store *s, uint32_t first, uint32_t nr_rows)
{
	extents__release(s->row_ranges, first, nr_rows, mono_ns());
}

int unwind_store__put_proc(struct unwind_store *s, uint32_t pid, uint32_t exec_id,
			   const struct unwind_mapping *maps, uint32_t nr, struct unwind_proc *proc)
{
	int err;

	*proc = (struct unwind_proc){.map_count = nr, .exec_id = exec_id};
	if (!nr || nr > UNWIND_MAX_PROC_MAPPINGS)
		return -EINVAL;
	err = extents__alloc(s->mapping_ranges, nr, mono_ns(), &proc->map_first);
	if (err)
		return err;
	memcpy(&s->mappings[proc->map_first], maps, nr * sizeof(*maps));
	/* the syscall publishes the mappings written above to the BPF side */
	if (bpf_map_update_elem(s->m.procs_fd, &pid, proc, BPF_ANY)) {
		err = errno == E2BIG ? -ENOSPC : -errno;
		extents__release(s->mapping_ranges, proc->map_first, nr, mono_ns());
		return err;
	}
	return 0;
}

void unwind_store__drop_proc_range(struct unwind_store *s, const struct unwind_proc *proc)
{
	extents__release(s->mapping_ranges, proc->map_first, proc->map_count, mono_ns());
}

void unwind_store__del_proc(struct unwind_store *s, uint32_t pid, const struct unwind_proc *proc)
{
	struct unwind_proc cur;

	if (!bpf_map_lookup_elem(s->m.procs_fd, &pid, &cur) && cur.map_first == proc->map_first &&
	    cur.map_count == proc->map_count)
		bpf_map_delete_elem(s->m.procs_fd, &pid);
	unwind_store__drop_proc_range(s, proc);
}

uint32_t unwind_store__largest_rows(struct unwind_store *s)
{
	return extents__largest_free(s->row_ranges, mono_ns());
}

void unwind_store__stats(struct unwind_store *s, struct unwind_store_stats *st)
{
	st->rows_used = extents__used(s->row_ranges);
	st->rows_cap = s->m.nr_rows;
	st->rules_used = s->nr_rules;
	st->rules_cap = s->m.nr_rules;
	st->mappings_used = extents__used(s->mapping_ranges);
	st->mappings_cap = s->m.nr_mappings;
	st->chunks = s->chunks_made;
	st->chunks_cap = s->nr_chunks;
	st->chunk_errors = s->chunk_errors;
	/* a hash element: key, value and the kernel's ~48-byte htab_elem header */
	st->bytes = s->rules_bytes + s->mappings_bytes +
		    (uint64_t)s->m.nr_procs * (sizeof(uint32_t) + sizeof(struct unwind_proc) + 48);
	st->bytes_max = st->bytes + (uint64_t)s->nr_chunks * CHUNK_BYTES;
	st->bytes += (uint64_t)s->chunks_made * CHUNK_BYTES;
}
