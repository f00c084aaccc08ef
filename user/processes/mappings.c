// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ctxprof_abi.h"
#include "otel_abi.h"
#include "processes/mappings.h"
#include "processes/proc_maps.h"

/* the names the application-context readers look for (their own matching is finer) */
static uint32_t map_flags(const struct proc_map *m)
{
	if (!strcmp(m->path, "/memfd:" CTXPROF_REGION_NAME))
		return MAPPINGS_F_CTXPROF_REGION;
	if (strstr(m->path, OTEL_CTX_NAME))
		return MAPPINGS_F_OTEL_CTX;
	return 0;
}

uint32_t mappings__flags(const struct proc_maps *pm)
{
	uint32_t flags = 0;
	size_t i;

	for (i = 0; i < pm->nr; i++)
		flags |= map_flags(&pm->maps[i]);
	return flags;
}

struct mappings *mappings__new(const struct proc_maps *pm, uint32_t flags, uint64_t taken_ns)
{
	size_t i, nr = 0, bytes = 0;
	struct mappings *m;
	char *strings;

	for (i = 0; i < pm->nr; i++) {
		if (!(pm->maps[i].perms & PROC_MAP_X))
			continue;
		nr++;
		bytes += strlen(pm->maps[i].path) + 1;
	}
	m = malloc(sizeof(*m) + nr * sizeof(m->maps[0]) + bytes);
	if (!m)
		return NULL;
	atomic_init(&m->refs, 1);
	m->nr = 0;
	m->taken_ns = taken_ns;
	m->flags = flags;
	m->owner = NULL;
	strings = (char *)&m->maps[nr];
	for (i = 0; i < pm->nr; i++) {
		const struct proc_map *p = &pm->maps[i];
		size_t len;

		if (!(p->perms & PROC_MAP_X))
			continue;
		len = strlen(p->path) + 1;
		memcpy(strings, p->path, len);
		m->maps[m->nr++] = (struct mapping){
			.start = p->start,
			.end = p->end,
			.pgoff = p->pgoff,
			.inode = p->inode,
			.dev_major = p->dev_major,
			.dev_minor = p->dev_minor,
			.deleted = p->deleted,
			.path = strings,
		};
		strings += len;
	}
	return m;
}

void mappings__put(struct mappings *m)
{
	if (!m || atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (m->owner)
		m->owner->release(m->owner->ctx, m);
	free(m);
}

bool mapping__same_file(const struct mapping *a, const struct mapping *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && a->deleted == b->deleted &&
	       !strcmp(a->path, b->path);
}

const struct file_id *mappings__file_id(const struct mappings *m, uint64_t inode,
					uint32_t dev_major, uint32_t dev_minor)
{
	unsigned int i;

	for (i = 0; m && i < m->nr; i++)
		if (m->maps[i].inode == inode && m->maps[i].dev_major == dev_major &&
		    m->maps[i].dev_minor == dev_minor && m->maps[i].id.ino)
			return &m->maps[i].id;
	return NULL;
}

bool mappings__same(const struct mappings *a, const struct mappings *b)
{
	unsigned int i;

	if (a->nr != b->nr)
		return false;
	for (i = 0; i < a->nr; i++) {
		const struct mapping *x = &a->maps[i], *y = &b->maps[i];

		if (x->start != y->start || x->end != y->end || x->pgoff != y->pgoff ||
		    !mapping__same_file(x, y))
			return false;
	}
	return true;
}

const struct mapping *mappings__find(const struct mappings *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->maps[lo - 1].end)
		return NULL;
	return &m->maps[lo - 1];
}

/* room for one more generation: the oldest goes past MAPPINGS_HISTORY_MAX */
static int make_room(struct mappings_history *h)
{
	unsigned int cap;
	struct mappings_entry *e;

	if (h->e && h->nr == MAPPINGS_HISTORY_MAX) {
		mappings__put(h->e[0].snap);
		memmove(&h->e[0], &h->e[1], (h->nr - 1) * sizeof(h->e[0]));
		h->nr--;
	}
	if (h->e && h->nr < h->cap)
		return 0;
	cap = h->cap ? h->cap * 2 : 2;
	if (cap > MAPPINGS_HISTORY_MAX)
		cap = MAPPINGS_HISTORY_MAX;
	e = realloc(h->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	h->e = e;
	h->cap = cap;
	return 0;
}

static bool same_mapping(const struct mapping *a, const struct mapping *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       mapping__same_file(a, b);
}

/* whether @m has a mapping that @other lacks, widening [*lo, *hi) to hold it */
static void widen_by_missing(const struct mappings *m, const struct mappings *other, uint64_t *lo,
			     uint64_t *hi)
{
	const struct mapping *o;
	unsigned int i;

	for (i = 0; i < m->nr; i++) {
		o = mappings__find(other, m->maps[i].start);
		if (o && same_mapping(o, &m->maps[i]))
			continue;
		if (*lo == *hi || m->maps[i].start < *lo)
			*lo = m->maps[i].start;
		if (*lo == *hi || m->maps[i].end > *hi)
			*hi = m->maps[i].end;
	}
}

int mappings_history__add(struct mappings_history *h, struct mappings *m, uint32_t gen,
			  uint64_t read_ns)
{
	const struct mappings_entry *prev = h->nr ? &h->e[h->nr - 1] : NULL;
	struct mappings_entry e = {.snap = m, .since_ns = read_ns, .read_ns = read_ns, .gen = gen};

	if (prev) {
		/* the mappings either side has and the other lacks, changed some
		 * time after the previous read */
		widen_by_missing(m, prev->snap, &e.chg_start, &e.chg_end);
		widen_by_missing(prev->snap, m, &e.chg_start, &e.chg_end);
		e.chg_t0 = prev->read_ns;
		e.chg_t1 = read_ns;
	}
	if (make_room(h)) {
		mappings__put(m);
		return -ENOMEM;
	}
	h->e[h->nr++] = e;
	return 0;
}

int mappings_history__announce(struct mappings_history *h, uint32_t gen, uint64_t time_ns,
			       uint64_t start, uint64_t end)
{
	struct mappings_entry e;

	if (!h->nr || make_room(h))
		return -ENOMEM;
	e = h->e[h->nr - 1];
	e.snap = mappings__get(e.snap);
	e.since_ns = time_ns;
	e.gen = gen;
	e.chg_start = start;
	e.chg_end = end;
	e.chg_t0 = e.chg_t1 = time_ns;
	h->e[h->nr++] = e;
	return 0;
}

void mappings_history__settle(struct mappings_history *h, struct mappings *m, uint64_t read_ns)
{
	struct mappings_entry *e = &h->e[h->nr - 1];

	mappings__put(e->snap);
	e->snap = m;
	e->read_ns = read_ns;
}

const struct mapping *mappings_history__find(const struct mappings_history *h, uint64_t addr,
					     uint64_t time_ns, const struct mappings **snap)
{
	const struct mapping *m;
	unsigned int i, at = 0, found;

	if (!h->nr)
		return NULL;
	/* the snapshot in force at @time_ns: the last one had at or before it */
	while (at + 1 < h->nr && h->e[at + 1].since_ns <= time_ns)
		at++;
	found = at;
	m = mappings__find(h->e[at].snap, addr);
	/* then the others, newest first */
	for (i = h->nr; !m && i-- > 0;)
		if (i != at && (m = mappings__find(h->e[i].snap, addr)))
			found = i;
	if (m && snap)
		*snap = h->e[found].snap;
	return m;
}

/* a change at @addr whose time may lie inside (@from, @to) */
static bool changed_between(const struct mappings_history *h, uint64_t addr, uint64_t from,
			    uint64_t to)
{
	unsigned int i;

	for (i = 0; i < h->nr; i++) {
		const struct mappings_entry *e = &h->e[i];

		if (addr >= e->chg_start && addr < e->chg_end && e->chg_t1 > from && e->chg_t0 < to)
			return true;
	}
	return false;
}

/*
 * Whether the snapshot of entry @k shows what the image had at @addr from
 * @ws to @we: no change at @addr between its read and that window, nor
 * inside the window.  (A change exactly at @ws, the window's own, counts
 * only when the snapshot was read before it.)
 */
static bool stands_for(const struct mappings_history *h, unsigned int k, uint64_t addr, uint64_t ws,
		       uint64_t we)
{
	uint64_t read = h->e[k].read_ns;

	if (read < ws)
		return !changed_between(h, addr, read, we);
	return !changed_between(h, addr, ws, read > we ? read : we);
}

const struct mapping *mappings_history__find_gen(const struct mappings_history *h, uint64_t addr,
						 uint32_t gen, enum mappings_find *why)
{
	uint64_t ws, we;
	unsigned int j, k, n;

	*why = MAPPINGS_FOUND;
	if (!h->nr)
		return NULL;
	/* the generation's window; before the first read: up to it */
	for (j = h->nr; gen && j-- > 0 && (h->e[j].gen & MAPPINGS_GEN_MASK) != gen;)
		;
	if (gen && j == UINT_MAX) {
		/* gone from the history: a mapping, but not which file then */
		*why = MAPPINGS_GEN_DROPPED;
		return mappings_history__find(h, addr, 0, NULL);
	}
	ws = gen ? h->e[j].since_ns : 0;
	we = !gen ? h->e[0].since_ns : j + 1 < h->nr ? h->e[j + 1].since_ns : UINT64_MAX;
	/* its own snapshot, then the later ones, then the earlier ones */
	for (n = 0; n < h->nr; n++) {
		if (!gen)
			k = n;
		else
			k = n < h->nr - j ? j + n : j - (n - (h->nr - j) + 1);
		if (n && h->e[k].snap == h->e[gen ? j : 0].snap)
			continue;
		if (stands_for(h, k, addr, ws, we))
			return mappings__find(h->e[k].snap, addr);
	}
	*why = MAPPINGS_CHANGED;
	return mappings__find(h->e[gen ? j : 0].snap, addr);
}

void mappings_history__release(struct mappings_history *h)
{
	unsigned int i;

	for (i = 0; i < h->nr; i++)
		mappings__put(h->e[i].snap);
	free(h->e);
	memset(h, 0, sizeof(*h));
}
