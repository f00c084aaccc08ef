// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "processes/exe_cache.h"
#include "util/hash.h"

struct exe_entry {
	uint64_t dev, ino; /* ino 0: empty */
	char *filename;
	char *exe;
};

struct exe_cache {
	struct exe_entry slot[EXE_CACHE_SLOTS];
};

static const char deleted[] = " (deleted)";

static size_t slot_of(uint64_t dev, uint64_t ino, const char *filename)
{
	uint64_t h = hash_combine(hash_combine(dev, ino), hash_bytes(filename, strlen(filename)));

	return hash_u64(h) % EXE_CACHE_SLOTS;
}

struct exe_cache *exe_cache__new(void)
{
	return calloc(1, sizeof(struct exe_cache));
}

static void entry_clear(struct exe_entry *e)
{
	free(e->filename);
	free(e->exe);
	memset(e, 0, sizeof(*e));
}

void exe_cache__free(struct exe_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < EXE_CACHE_SLOTS; i++)
		entry_clear(&c->slot[i]);
	free(c);
}

const char *exe_cache__find(const struct exe_cache *c, uint64_t dev, uint64_t ino,
			    const char *filename)
{
	const struct exe_entry *e;

	if (!ino)
		return NULL;
	e = &c->slot[slot_of(dev, ino, filename)];
	if (e->ino != ino || e->dev != dev || strcmp(e->filename, filename))
		return NULL;
	return e->exe;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !memcmp(s + n - t, tail, t);
}

void exe_cache__add(struct exe_cache *c, uint64_t dev, uint64_t ino, const char *filename,
		    const char *exe)
{
	struct exe_entry *e;

	if (!ino || !exe[0] || ends_with(exe, deleted))
		return;
	e = &c->slot[slot_of(dev, ino, filename)];
	entry_clear(e);
	e->filename = strdup(filename);
	e->exe = strdup(exe);
	if (!e->filename || !e->exe) {
		entry_clear(e);
		return;
	}
	e->dev = dev;
	e->ino = ino;
}
