// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "processes/proc_maps.h"
#include "symbols/maps_history.h"
#include "elf/safe_open.h"

static const struct sym_map *snapshot_find(const struct maps_snapshot *snap, uint64_t addr)
{
	size_t lo = 0, hi = snap->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (snap->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= snap->maps[lo - 1].end)
		return NULL;
	return &snap->maps[lo - 1];
}

static bool same_file(const struct sym_map *a, const struct sym_map *b)
{
	return a->path == b->path && a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor;
}

static bool snapshot_equal(const struct maps_snapshot *a, const struct maps_snapshot *b)
{
	size_t i;

	if (a->nr != b->nr)
		return false;
	for (i = 0; i < a->nr; i++) {
		if (a->maps[i].start != b->maps[i].start || a->maps[i].end != b->maps[i].end ||
		    a->maps[i].pgoff != b->maps[i].pgoff || !same_file(&a->maps[i], &b->maps[i]))
			return false;
	}
	return true;
}

/* The same file at the same place in the previous snapshot, if any */
static const struct sym_map *prev_same_map(const struct maps_snapshot *prev,
					   const struct sym_map *m)
{
	const struct sym_map *old;

	if (!prev)
		return NULL;
	old = snapshot_find(prev, m->start);
	if (!old || old->start != m->start || !same_file(old, m))
		return NULL;
	return old;
}

/* find the ELF file behind each file-backed mapping of @snap */
static void snapshot_resolve(struct symbolizer *sym, pid_t pid, struct maps_snapshot *snap,
			     const struct maps_snapshot *prev)
{
	const struct sym_map *old, *last = NULL;
	int root_fd = -1;
	bool root_tried = false;
	size_t i;

	for (i = 0; i < snap->nr; i++) {
		struct sym_map *m = &snap->maps[i];

		if (!strcmp(m->path, "[vdso]")) {
			m->elf = symbolizer__vdso(sym, m->end - m->start);
			continue;
		}
		/* anonymous JIT code and the like have no file to read */
		if (m->path[0] != '/')
			continue;
		/* a refresh usually finds the file where it was: reuse that verdict */
		old = prev_same_map(prev, m);
		if (old) {
			m->elf = old->elf;
			continue;
		}
		/* a file mapped many times in a row is opened once */
		if (last && same_file(last, m)) {
			m->elf = last->elf;
			continue;
		}
		/* for debug files, and the path when map_files is refused */
		if (!root_tried) {
			root_fd = proc_root_open(pid);
			root_tried = true;
		}
		m->elf = symbolizer__file_mapped(sym, pid, root_fd, m);
		last = m;
	}
	if (root_fd >= 0)
		close(root_fd);
}

/* @pm's executable mappings, paths interned */
static int snapshot_build(struct symbolizer *sym, const struct proc_maps *pm,
			  struct maps_snapshot *snap)
{
	size_t i, nr = 0;

	memset(snap, 0, sizeof(*snap));
	for (i = 0; i < pm->nr; i++)
		nr += !!(pm->maps[i].perms & PROC_MAP_X);
	if (!nr)
		return 0;
	snap->maps = calloc(nr, sizeof(*snap->maps));
	if (!snap->maps)
		return -ENOMEM;
	for (i = 0; i < pm->nr; i++) {
		const struct proc_map *pmap = &pm->maps[i];
		struct sym_map *m;

		if (!(pmap->perms & PROC_MAP_X))
			continue;
		m = &snap->maps[snap->nr++];
		m->start = pmap->start;
		m->end = pmap->end;
		m->pgoff = pmap->pgoff;
		m->inode = pmap->inode;
		m->dev_major = pmap->dev_major;
		m->dev_minor = pmap->dev_minor;
		m->deleted = pmap->deleted;
		m->path = symbolizer__intern(sym, pmap->path);
		if (!m->path) {
			free(snap->maps);
			memset(snap, 0, sizeof(*snap));
			return -ENOMEM;
		}
	}
	return 0;
}

static int history_push(struct maps_history *h, const struct maps_snapshot *snap)
{
	if (h->snaps && h->nr == MAPS_HISTORY_MAX) {
		free(h->snaps[0].maps);
		memmove(&h->snaps[0], &h->snaps[1], (h->nr - 1) * sizeof(h->snaps[0]));
		h->nr--;
	}
	if (h->nr == h->cap || !h->snaps) {
		unsigned int cap = h->cap ? h->cap * 2 : 2;
		struct maps_snapshot *snaps;

		if (cap > MAPS_HISTORY_MAX)
			cap = MAPS_HISTORY_MAX;
		snaps = realloc(h->snaps, cap * sizeof(*snaps));
		if (!snaps)
			return -ENOMEM;
		h->snaps = snaps;
		h->cap = cap;
	}
	h->snaps[h->nr++] = *snap;
	return 0;
}

static int add_text(struct maps_history *h, struct symbolizer *sym, pid_t pid, char *text,
		    size_t len, uint64_t now_ns)
{
	struct maps_snapshot snap, *latest;
	struct proc_maps *pm;
	int err;

	if (h->text && h->text_len == len && !memcmp(h->text, text, len)) {
		free(text);
		return 0;
	}
	pm = proc_maps__parse(text, len);
	if (!pm) {
		err = -errno;
		goto out_free_text;
	}
	symbolizer__maps_read(sym, pm->nr_bad_lines);
	err = snapshot_build(sym, pm, &snap);
	if (err)
		goto out_free_maps;
	snap.taken_ns = now_ns;
	/*
	 * No executable mapping (a kernel thread, a zombie): nothing to add, and
	 * earlier snapshots still answer for the process.
	 */
	if (!snap.nr)
		goto out_free_maps;
	latest = h->nr ? &h->snaps[h->nr - 1] : NULL;
	/* heap or stack growth changes the text, not the code: keep one snapshot */
	if (latest && snapshot_equal(latest, &snap)) {
		free(snap.maps);
	} else {
		snapshot_resolve(sym, pid, &snap, latest);
		err = history_push(h, &snap);
		if (err) {
			free(snap.maps);
			goto out_free_maps;
		}
		err = 1;
	}
	free(h->text);
	h->text = text;
	h->text_len = len;
	text = NULL;
out_free_maps:
	proc_maps__free(pm);
out_free_text:
	free(text);
	return err;
}

int maps_history__refresh(struct maps_history *h, struct symbolizer *sym, pid_t pid,
			  uint64_t now_ns)
{
	size_t len;
	char *text;
	int err;

	err = proc_maps__read_text(pid, &text, &len);
	if (err)
		return err;
	return add_text(h, sym, pid, text, len, now_ns);
}

int maps_history__add_text(struct maps_history *h, struct symbolizer *sym, pid_t pid,
			   const char *text, size_t len, uint64_t now_ns)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	return add_text(h, sym, pid, copy, len, now_ns);
}

const struct sym_map *maps_history__find(const struct maps_history *h, uint64_t addr,
					 uint64_t time_ns)
{
	const struct sym_map *m;
	unsigned int i, at = 0;

	if (!h->nr)
		return NULL;
	/* the snapshot in force at @time_ns: the last one read at or before it */
	while (at + 1 < h->nr && h->snaps[at + 1].taken_ns <= time_ns)
		at++;
	m = snapshot_find(&h->snaps[at], addr);
	for (i = h->nr; !m && i > 0; i--)
		if (i - 1 != at)
			m = snapshot_find(&h->snaps[i - 1], addr);
	return m;
}

void maps_history__release(struct maps_history *h)
{
	unsigned int i;

	for (i = 0; i < h->nr; i++)
		free(h->snaps[i].maps);
	free(h->snaps);
	free(h->text);
	memset(h, 0, sizeof(*h));
}
