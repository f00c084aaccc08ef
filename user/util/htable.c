// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/htable.h"

#define MIN_SLOTS   16 /* the fewest slots htable__init() allocates */
#define FIRST_SLOTS 64 /* a zeroed table's first allocation */

static void slot_place(struct htable_slot *slots, size_t mask, uint32_t hash, uint32_t ref)
{
	size_t i;

	for (i = hash & mask; slots[i].ref; i = (i + 1) & mask)
		;
	slots[i].hash = hash;
	slots[i].ref = ref;
}

/* move every entry to @nr_slots new slots */
static int resize(struct htable *t, size_t nr_slots)
{
	struct htable_slot *slots;
	size_t i;

	if (nr_slots > HTABLE_MAX_SLOTS)
		return -ENOMEM;
	slots = calloc(nr_slots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	/* slots carry their hash: rehashing needs no entry access */
	for (i = 0; t->slots && i <= t->mask; i++) {
		if (t->slots[i].ref)
			slot_place(slots, nr_slots - 1, t->slots[i].hash, t->slots[i].ref);
	}
	free(t->slots);
	t->slots = slots;
	t->mask = nr_slots - 1;
	if (!(t->flags & HTABLE_FIXED))
		t->max_nr = nr_slots / 4 * 3;
	return 0;
}

int htable__init(struct htable *t, size_t nr, unsigned int flags)
{
	size_t nr_slots = MIN_SLOTS;
	int err;

	if (!nr || nr > HTABLE_MAX_ENTRIES)
		return -EINVAL;
	while (nr_slots / 4 * 3 < nr)
		nr_slots <<= 1;
	memset(t, 0, sizeof(*t));
	t->flags = flags;
	err = resize(t, nr_slots);
	if (err)
		return err;
	if (flags & HTABLE_FIXED)
		t->max_nr = nr;
	return 0;
}

void htable__destroy(struct htable *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

int htable__insert(struct htable *t, uint32_t hash, uint32_t idx)
{
	int err;

	if (idx == HTABLE_NONE)
		return -EINVAL;
	if (t->nr >= t->max_nr) {
		if (t->flags & HTABLE_FIXED)
			return -ENOSPC;
		err = resize(t, t->slots ? (t->mask + 1) * 2 : FIRST_SLOTS);
		if (err)
			return err;
	}
	slot_place(t->slots, t->mask, hash, idx + 1);
	t->nr++;
	return 0;
}

void htable__clear(struct htable *t)
{
	if (t->nr)
		memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	t->nr = 0;
}

void htable__clear_by(struct htable *t, htable_hash_fn hash_of, const void *ctx)
{
	uint32_t idx;
	size_t i;

	if (t->nr > (t->mask + 1) / 16) {
		htable__clear(t);
		return;
	}
	for (idx = (uint32_t)t->nr; idx-- > 0;) {
		/* every slot on its probe run is an older entry's, or its own */
		for (i = hash_of(ctx, idx) & t->mask; t->slots[i].ref; i = (i + 1) & t->mask)
			if (t->slots[i].ref == idx + 1) {
				t->slots[i] = (struct htable_slot){0};
				break;
			}
	}
	t->nr = 0;
}
