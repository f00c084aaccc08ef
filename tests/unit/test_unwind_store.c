// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/unwind/unwind_store.c against real BPF maps of the
 * kinds the sampler declares (mmapable arrays, a hash): root only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "fixtures.h"
#include "unwind/unwind_store.h"

struct fx {
	struct unwind_store_maps m;
	struct unwind_store *s;
	int chunks_left; /* what new_chunk may still make; -1: fail with EPERM */
};

static int array_map(uint32_t value_size, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, value_size, n, &o);
}

/* a chunk, as the collector's child makes it */
static int new_chunk(void *ctx)
{
	struct fx *f = ctx;

	if (f->chunks_left < 0)
		return -EPERM;
	if (!f->chunks_left)
		return -ENOSPC;
	f->chunks_left--;
	return array_map(sizeof(struct unwind_row), UNWIND_CHUNK_ROWS);
}

/* the array of chunks, as the sampler declares it: inner maps of a chunk's kind */
static int chunks_map(uint32_t nr)
{
	int inner = array_map(sizeof(struct unwind_row), UNWIND_CHUNK_ROWS), outer;
	LIBBPF_OPTS(bpf_map_create_opts, o, .inner_map_fd = inner);

	if (inner < 0)
		return inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL, 4, 4, nr, &o);
	close(inner);
	return outer;
}

/* row @i as BPF reads it: its chunk, then the row */
static int row_read(struct fx *f, uint32_t i, struct unwind_row *out)
{
	uint32_t c = i >> UNWIND_CHUNK_SHIFT, off = i & (UNWIND_CHUNK_ROWS - 1), id;
	int fd, err;

	if (bpf_map_lookup_elem(f->m.rows_fd, &c, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	err = bpf_map_lookup_elem(fd, &off, out) ? -errno : 0;
	close(fd);
	return err;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || geteuid() != 0) {
		*state = f;
		return 0;
	}
	f->m = (struct unwind_store_maps){
		.nr_rows = 3 * UNWIND_CHUNK_ROWS,
		.nr_rules = 4,
		.nr_mappings = 8,
		.nr_procs = 4,
		.new_chunk = new_chunk,
		.chunk_ctx = f,
	};
	f->chunks_left = 3;
	f->m.rows_fd = chunks_map(3);
	f->m.rules_fd = array_map(sizeof(struct unwind_rule), f->m.nr_rules);
	f->m.mappings_fd = array_map(sizeof(struct unwind_mapping), f->m.nr_mappings);
	f->m.procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 4, sizeof(struct unwind_proc),
				       f->m.nr_procs, NULL);
	if (f->m.rows_fd < 0 || f->m.rules_fd < 0 || f->m.mappings_fd < 0 || f->m.procs_fd < 0)
		return -1;
	f->s = unwind_store__new(&f->m);
	*state = f;
	return f->s ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f && f->s) {
		unwind_store__free(f->s);
		close(f->m.rows_fd);
		close(f->m.rules_fd);
		close(f->m.mappings_fd);
		close(f->m.procs_fd);
	}
	free(f);
	return 0;
}

static struct unwind_rule rule(uint8_t cmd, int32_t off)
{
	return (struct unwind_rule){.cmd = cmd, .cfa_off = off};
}

static void unwind_store__put_table__rules_shared_rows_translated(void **state)
{
	struct fx *f = *state;
	struct unwind_rule ra[2] = {rule(UNWIND_CMD_CFA_RSP, 8), rule(UNWIND_CMD_CFA_RSP, 16)};
	struct unwind_rule rb[2] = {rule(UNWIND_CMD_CFA_RSP, 16), rule(UNWIND_CMD_END, 0)};
	struct unwind_row rows[3] = {{0, 0}, {4, 1}, {9, 0}};
	struct unwind_row got;
	struct unwind_rule r;
	struct unwind_store_stats st;
	uint32_t a, b, k;

	fixture_require_root("creates BPF maps");
	assert_int_equal(unwind_store__put_table(f->s, rows, 3, ra, 2, &a), 0);
	/* table b: its rule 0 is table a's rule 1, stored once */
	rows[1].rule = 1;
	assert_int_equal(unwind_store__put_table(f->s, rows, 3, rb, 2, &b), 0);
	unwind_store__stats(f->s, &st);
	assert_int_equal(st.rules_used, 3);
	assert_int_equal(st.rows_used, 6);
	/* what BPF reads: table b's row 1 points at the END rule */
	k = b + 1;
	assert_int_equal(row_read(f, k, &got), 0);
	assert_int_equal(got.pc, 4);
	assert_int_equal(bpf_map_lookup_elem(f->m.rules_fd, &got.rule, &r), 0);
	assert_int_equal(r.cmd, UNWIND_CMD_END);
	/* and table b's row 0 the shared rsp+16 */
	k = b;
	assert_int_equal(row_read(f, k, &got), 0);
	assert_int_equal(bpf_map_lookup_elem(f->m.rules_fd, &got.rule, &r), 0);
	assert_int_equal(r.cfa_off, 16);
}

static void unwind_store__put_table__hostile_rule_index__einval_nothing_kept(void **state)
{
	struct fx *f = *state;
	struct unwind_rule ra[1] = {rule(UNWIND_CMD_CFA_RSP, 8)};
	struct unwind_row rows[2] = {{0, 0}, {4, 7}};
	struct unwind_store_stats st;
	uint32_t a;

	fixture_require_root("creates BPF maps");
	assert_int_equal(unwind_store__put_table(f->s, rows, 2, ra, 1, &a), -EINVAL);
	unwind_store__stats(f->s, &st);
	assert_int_equal(st.rows_used, 0);
}

static void unwind_store__rules_full__enospc(void **state)
{
	struct fx *f = *state;
	struct unwind_rule r[5];
	struct unwind_row rows[5];
	uint32_t a, i;

	fixture_require_root("creates BPF maps");
	for (i = 0; i < 5; i++) {
		r[i] = rule(UNWIND_CMD_CFA_RSP, 8 * (i + 1));
		rows[i] = (struct unwind_row){i, i};
	}
	assert_int_equal(unwind_store__put_table(f->s, rows, 5, r, 5, &a), -ENOSPC);
}

static void unwind_store__put_proc__replaced_then_deleted_only_if_ours(void **state)
{
	struct fx *f = *state;
	struct unwind_mapping m[2] = {
		{.start = 0x1000, .end = 0x2000, .kind = UNWIND_MAP_FP},
		{.start = 0x3000, .end = 0x4000, .kind = UNWIND_MAP_FP},
	};
	struct unwind_proc first, second, cur;
	struct unwind_mapping got;
	uint32_t pid = 4242;

	fixture_require_root("creates BPF maps");
	assert_int_equal(unwind_store__put_proc(f->s, pid, 7, m, 2, &first), 0);
	assert_int_equal(bpf_map_lookup_elem(f->m.procs_fd, &pid, &cur), 0);
	assert_int_equal(cur.map_first, first.map_first);
	assert_int_equal(cur.map_count, 2);
	assert_int_equal(cur.exec_id, 7);
	assert_int_equal(bpf_map_lookup_elem(f->m.mappings_fd, &first.map_first, &got), 0);
	assert_true(got.start == 0x1000);
	/* a new image's mappings replace the entry; the old owner's delete is a no-op */
	assert_int_equal(unwind_store__put_proc(f->s, pid, 8, m, 1, &second), 0);
	unwind_store__del_proc(f->s, pid, &first);
	assert_int_equal(bpf_map_lookup_elem(f->m.procs_fd, &pid, &cur), 0);
	assert_int_equal(cur.exec_id, 8);
	unwind_store__del_proc(f->s, pid, &second);
	assert_true(bpf_map_lookup_elem(f->m.procs_fd, &pid, &cur) < 0);
	assert_int_equal(errno, ENOENT);
}

/* @n rows, pc = 10 * i, every one of rule 0 */
static struct unwind_row *rows_of(size_t n)
{
	struct unwind_row *r = calloc(n, sizeof(*r));

	assert_non_null(r);
	for (size_t i = 0; i < n; i++)
		r[i].pc = (uint32_t)(10 * i);
	return r;
}

static void unwind_store__chunks__made_as_rows_land_a_table_may_straddle(void **state)
{
	struct fx *f = *state;
	struct unwind_rule r[1] = {rule(UNWIND_CMD_CFA_RSP, 8)};
	size_t big = UNWIND_CHUNK_ROWS - 10, small = 100;
	struct unwind_row *rows = rows_of(big), got;
	struct unwind_store_stats st;
	uint32_t a, b;

	fixture_require_root("creates BPF maps");
	unwind_store__stats(f->s, &st);
	/* nothing made before the first table: the budget is not the memory */
	assert_int_equal(st.chunks, 0);
	assert_int_equal(st.chunks_cap, 3);
	assert_int_equal(unwind_store__put_table(f->s, rows, big, r, 1, &a), 0);
	unwind_store__stats(f->s, &st);
	assert_int_equal(st.chunks, 1);
	assert_true(st.bytes >= (uint64_t)UNWIND_CHUNK_ROWS * sizeof(struct unwind_row));
	/* the next table runs past the first chunk's end: a second is made */
	assert_int_equal(unwind_store__put_table(f->s, rows, small, r, 1, &b), 0);
	assert_true(b < UNWIND_CHUNK_ROWS && b + small > UNWIND_CHUNK_ROWS);
	unwind_store__stats(f->s, &st);
	assert_int_equal(st.chunks, 2);
	/* its rows on both sides of the boundary, as BPF finds them */
	assert_int_equal(row_read(f, b, &got), 0);
	assert_int_equal(got.pc, 0);
	assert_int_equal(row_read(f, UNWIND_CHUNK_ROWS, &got), 0);
	assert_int_equal(got.pc, 10 * (UNWIND_CHUNK_ROWS - b));
	assert_int_equal(row_read(f, b + small - 1, &got), 0);
	assert_int_equal(got.pc, 10 * (small - 1));
	free(rows);
}

static void unwind_store__chunk_refused__enospc_range_given_back(void **state)
{
	struct fx *f = *state;
	struct unwind_rule r[1] = {rule(UNWIND_CMD_CFA_RSP, 8)};
	struct unwind_row *rows = rows_of(10);
	struct unwind_store_stats st;
	uint32_t a;

	fixture_require_root("creates BPF maps");
	f->chunks_left = -1;
	assert_int_equal(unwind_store__put_table(f->s, rows, 10, r, 1, &a), -ENOSPC);
	unwind_store__stats(f->s, &st);
	assert_int_equal(st.rows_used, 0);
	assert_int_equal(st.chunks, 0);
	assert_int_equal(st.chunk_errors, 1);
	/* made once it can be */
	f->chunks_left = 1;
	assert_int_equal(unwind_store__put_table(f->s, rows, 10, r, 1, &a), 0);
	unwind_store__stats(f->s, &st);
	assert_int_equal(st.chunks, 1);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			unwind_store__put_table__rules_shared_rows_translated, setup, teardown),
		cmocka_unit_test_setup_teardown(
			unwind_store__put_table__hostile_rule_index__einval_nothing_kept, setup,
			teardown),
		cmocka_unit_test_setup_teardown(unwind_store__rules_full__enospc, setup, teardown),
		cmocka_unit_test_setup_teardown(
			unwind_store__put_proc__replaced_then_deleted_only_if_ours, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			unwind_store__chunks__made_as_rows_land_a_table_may_straddle, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			unwind_store__chunk_refused__enospc_range_given_back, setup, teardown),
	};

	return cmocka_run_group_tests_name("unwind_store", tests, NULL, NULL);
}
