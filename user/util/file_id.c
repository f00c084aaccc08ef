// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * file_id - the set of file identities.  See file_id.h.
 */
#include <errno.h>
#include <stdlib.h>
#include "util/array.h"
#include "util/file_id.h"
#include "util/htable.h"

struct file_id_set {
	struct file_id *ids;
	size_t nr, cap, max;
	struct htable index;
};

static bool id_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct file_id_set *set = ctx;

	return file_id_eq(&set->ids[idx], key);
}

struct file_id_set *file_id_set__new(size_t max)
{
	struct file_id_set *set;

	if (!max || max > HTABLE_MAX_ENTRIES) {
		errno = EINVAL;
		return NULL;
	}
	set = calloc(1, sizeof(*set));
	if (set)
		set->max = max;
	return set;
}

void file_id_set__free(struct file_id_set *set)
{
	if (!set)
		return;
	free(set->ids);
	htable__destroy(&set->index);
	free(set);
}

void file_id_set__add(struct file_id_set *set, const struct file_id *id)
{
	uint32_t hash = file_id_hash(id);

	if (!id->ino || htable__find(&set->index, hash, id_eq, set, id) != HTABLE_NONE)
		return;
	if (set->nr == set->max) {
		set->nr = 0;
		htable__clear(&set->index);
	}
	if (array_grow((void **)&set->ids, &set->cap, set->nr + 1, sizeof(*set->ids), 64) ||
	    htable__insert(&set->index, hash, (uint32_t)set->nr))
		return;
	set->ids[set->nr++] = *id;
}

bool file_id_set__has(const struct file_id_set *set, const struct file_id *id)
{
	return id->ino &&
	       htable__find(&set->index, file_id_hash(id), id_eq, set, id) != HTABLE_NONE;
}
