// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/util/htable.c: an index over an array of uint64_t keys
 * owned by the test, the way the collector's tables use it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/hash.h"
#include "util/htable.h"

#define MAX_KEYS 20000

struct keys {
	uint64_t key[MAX_KEYS];
	uint32_t nr;
	unsigned int eq_calls;
};

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	struct keys *k = (struct keys *)ctx;

	k->eq_calls++;
	return k->key[idx] == *(const uint64_t *)key;
}

/* the hash of every key: the real one, or one value for all (collisions) */
static uint32_t (*key_hash)(uint64_t key);

static uint32_t hash_good(uint64_t key)
{
	return hash_u64(key);
}

static uint32_t hash_same(uint64_t key)
{
	return 42;
}

static uint32_t find(const struct htable *t, struct keys *k, uint64_t key)
{
	return htable__find(t, key_hash(key), key_eq, k, &key);
}

/* add @key unless present; Return: its index, or a negative errno */
static long add(struct htable *t, struct keys *k, uint64_t key)
{
	uint32_t idx = find(t, k, key);
	int err;

	if (idx != HTABLE_NONE)
		return idx;
	err = htable__insert(t, key_hash(key), k->nr);
	if (err)
		return err;
	k->key[k->nr] = key;
	return k->nr++;
}

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct keys));
	key_hash = hash_good;
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static void insert__zeroed_table__grows_and_finds_every_key(void **state)
{
	struct keys *k = *state;
	struct htable t = {};
	size_t slots = 0;
	uint64_t i;

	assert_int_equal(find(&t, k, 1), HTABLE_NONE);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(add(&t, k, i * 7 + 1), i);
		if (t.mask + 1 != slots) {
			/* a new size: a power of two, the load still at most 3/4 */
			slots = t.mask + 1;
			assert_int_equal(slots & (slots - 1), 0);
		}
		assert_true(t.nr * 4 <= slots * 3);
	}
	assert_true(slots >= 1024);
	for (i = 0; i < 1000; i++)
		assert_int_equal(find(&t, k, i * 7 + 1), i);
	assert_int_equal(find(&t, k, 2), HTABLE_NONE);
	htable__destroy(&t);
	assert_null(t.slots);
	assert_int_equal(t.nr, 0);
}

static void find__colliding_hashes__eq_tells_entries_apart(void **state)
{
	struct keys *k = *state;
	struct htable t = {};
	uint64_t i;

	key_hash = hash_same;
	for (i = 0; i < 100; i++)
		assert_int_equal(add(&t, k, 1000 + i), i);
	for (i = 0; i < 100; i++)
		assert_int_equal(find(&t, k, 1000 + i), i);
	k->eq_calls = 0;
	assert_int_equal(find(&t, k, 5), HTABLE_NONE);
	assert_int_equal(k->eq_calls, 100);
	htable__destroy(&t);
}

static void find__distinct_hashes__one_eq_call_a_hit(void **state)
{
	struct keys *k = *state;
	struct htable t = {};
	uint64_t i;

	for (i = 0; i < 40; i++)
		add(&t, k, i);
	k->eq_calls = 0;
	for (i = 0; i < 40; i++)
		assert_int_equal(find(&t, k, i), i);
	/* 32-bit hashes of 40 small keys do not collide: one comparison a hit */
	assert_int_equal(k->eq_calls, 40);
	htable__destroy(&t);
}

static void clear__filled_table__empty_with_memory_kept(void **state)
{
	struct keys *k = *state;
	struct htable t = {};
	struct htable_slot *slots;
	size_t mask;
	uint64_t i;

	for (i = 0; i < 500; i++)
		add(&t, k, i);
	slots = t.slots;
	mask = t.mask;
	htable__clear(&t);
	k->nr = 0;
	assert_ptr_equal(t.slots, slots);
	assert_int_equal(t.mask, mask);
	assert_int_equal(t.nr, 0);
	for (i = 0; i < 500; i++)
		assert_int_equal(find(&t, k, i), HTABLE_NONE);
	/* refilled to the same size: no growth */
	for (i = 0; i < 500; i++)
		assert_int_equal(add(&t, k, i + 10000), i);
	assert_ptr_equal(t.slots, slots);
	htable__clear(&t);
	htable__clear(&t);
	htable__destroy(&t);
}

/* many random keys, about a third of them repeats, against a direct-mapped reference */
static void insert_find__many_keys__agree_with_reference(void **state)
{
	struct keys *k = *state;
	static uint32_t ref[16384]; /* key -> its index + 1; 0: not added */
	uint64_t x = 88172645463325252ULL, key;
	struct htable t = {};
	uint32_t nr_ref = 0;
	int i;

	memset(ref, 0, sizeof(ref));
	assert_int_equal(htable__init(&t, 100, 0), 0);
	for (i = 0; i < 30000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		key = x % 16384;
		if (!ref[key]) {
			assert_int_equal(find(&t, k, key), HTABLE_NONE);
			assert_int_equal(add(&t, k, key), nr_ref);
			ref[key] = ++nr_ref;
		} else {
			assert_int_equal(find(&t, k, key), ref[key] - 1);
		}
	}
	assert_true(nr_ref > 10000 && nr_ref < 20000);
	assert_int_equal(t.nr, nr_ref);
	for (key = 0; key < 16384; key++)
		assert_int_equal(find(&t, k, key), ref[key] ? ref[key] - 1 : HTABLE_NONE);
	htable__destroy(&t);
}

static void insert__fixed_table_full__enospc_without_allocating(void **state)
{
	struct keys *k = *state;
	struct htable t;
	struct htable_slot *slots;
	uint64_t i;

	assert_int_equal(htable__init(&t, 12, HTABLE_FIXED), 0);
	/* 12 entries at 3/4 load fit in 16 slots */
	assert_int_equal(t.mask + 1, 16);
	slots = t.slots;
	for (i = 0; i < 12; i++)
		assert_int_equal(add(&t, k, i), i);
	assert_int_equal(add(&t, k, 12), -ENOSPC);
	assert_int_equal(add(&t, k, 13), -ENOSPC);
	/* present keys are still found, and nothing moved */
	for (i = 0; i < 12; i++)
		assert_int_equal(add(&t, k, i), i);
	assert_ptr_equal(t.slots, slots);
	htable__clear(&t);
	k->nr = 0;
	assert_int_equal(add(&t, k, 12), 0);
	assert_ptr_equal(t.slots, slots);
	htable__destroy(&t);
}

static void init__fixed_size_not_power_of_two__holds_exactly_that(void **state)
{
	struct keys *k = *state;
	struct htable t;
	uint64_t i;

	assert_int_equal(htable__init(&t, 13, HTABLE_FIXED), 0);
	assert_int_equal(t.mask + 1, 32);
	for (i = 0; i < 13; i++)
		assert_int_equal(add(&t, k, i), i);
	assert_int_equal(add(&t, k, 13), -ENOSPC);
	htable__destroy(&t);
}

static void init__bad_sizes__einval(void **state)
{
	struct htable t;

	assert_int_equal(htable__init(&t, 0, 0), -EINVAL);
	assert_int_equal(htable__init(&t, 0, HTABLE_FIXED), -EINVAL);
	assert_int_equal(htable__init(&t, HTABLE_MAX_ENTRIES + 1, 0), -EINVAL);
}

static void insert__index_none__einval(void **state)
{
	struct htable t = {};

	assert_int_equal(htable__insert(&t, 1, HTABLE_NONE), -EINVAL);
	assert_int_equal(htable__insert(&t, 1, HTABLE_NONE - 1), 0);
	htable__destroy(&t);
}

static uint32_t hash_of_key(const void *ctx, uint32_t idx)
{
	const struct keys *k = ctx;

	return key_hash(k->key[idx]);
}

/* every slot empty: what a fresh table of that size is */
static bool all_empty(const struct htable *t)
{
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].ref || t->slots[i].hash)
			return false;
	return true;
}

static void clear_by__few_entries_colliding__each_slot_zeroed_table_reusable(void **state)
{
	static struct keys k;
	struct htable t = {0};
	uint64_t key;
	uint32_t round, i;

	assert_int_equal(htable__init(&t, 4096, HTABLE_FIXED), 0);
	for (round = 0; round < 2; round++) {
		/* runs of colliding keys, then well spread ones, interleaved */
		key_hash = round ? hash_same : hash_good;
		k.nr = 0;
		for (i = 0; i < 100; i++) {
			key = (uint64_t)round * 1000 + i;
			assert_true(add(&t, &k, key) >= 0);
		}
		htable__clear_by(&t, hash_of_key, &k);
		assert_int_equal(t.nr, 0);
		assert_true(all_empty(&t));
		k.nr = 0;
		/* as good as new: the same keys go in and are found */
		for (i = 0; i < 100; i++)
			assert_int_equal(add(&t, &k, i), i);
		for (i = 0; i < 100; i++)
			assert_int_equal(find(&t, &k, i), i);
		htable__clear_by(&t, hash_of_key, &k);
		assert_true(all_empty(&t));
	}
	/* past a sixteenth in use: the whole array, the same result */
	key_hash = hash_good;
	k.nr = 0;
	for (i = 0; i < 1000; i++)
		assert_true(add(&t, &k, i) >= 0);
	htable__clear_by(&t, hash_of_key, &k);
	assert_true(all_empty(&t));
	htable__destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(insert__zeroed_table__grows_and_finds_every_key,
						setup, teardown),
		cmocka_unit_test_setup_teardown(find__colliding_hashes__eq_tells_entries_apart,
						setup, teardown),
		cmocka_unit_test_setup_teardown(find__distinct_hashes__one_eq_call_a_hit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(clear__filled_table__empty_with_memory_kept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(insert_find__many_keys__agree_with_reference, setup,
						teardown),
		cmocka_unit_test_setup_teardown(insert__fixed_table_full__enospc_without_allocating,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			init__fixed_size_not_power_of_two__holds_exactly_that, setup, teardown),
		cmocka_unit_test(init__bad_sizes__einval),
		cmocka_unit_test(insert__index_none__einval),
		cmocka_unit_test(clear_by__few_entries_colliding__each_slot_zeroed_table_reusable),
	};

	return cmocka_run_group_tests_name("htable", tests, NULL, NULL);
}
