// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * proc_maps - parse /proc/PID/maps.
 *
 * A line as the kernel writes it (show_map_vma()):
 *   55d0c0a00000-55d0c0a21000 r-xp 00002000 fd:01 1234567      /usr/bin/foo
 * start-end perms pgoff major:minor inode, then, when the mapping has a name,
 * spaces up to a fixed column and the name.  Only the name is under the
 * target's control, but the whole text is treated as hostile.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"
#include "processes/proc_maps.h"
#include "util/hex.h"
#include "util/ranges.h"
#include "util/read_capped.h"
#include "util/strpool.h"

#define DELETED_SUFFIX " (deleted)"
#define READ_CHUNK     (64u << 10)

/* Paths are collected in one pool; maps hold offsets until parsing ends. */
struct maps_builder {
	struct proc_maps *pm;
	size_t maps_cap;
	struct strpool pool; /* becomes pm->strings */
	size_t last_path;    /* pool offset of the previous path, to share repeats */
};

/* at least one hex digit, no overflow; leading zeros are fine */
static bool scan_hex(const char **pp, const char *end, uint64_t max, uint64_t *val)
{
	const char *p = *pp;
	uint64_t v = 0;
	int d;

	while (p < end && (d = hex_digit(*p)) >= 0) {
		if (v > (max - d) / 16)
			return false;
		v = v * 16 + d;
		p++;
	}
	if (p == *pp)
		return false;
	*pp = p;
	*val = v;
	return true;
}

static bool scan_dec(const char **pp, const char *end, uint64_t *val)
{
	const char *p = *pp;
	uint64_t v = 0;

	while (p < end && *p >= '0' && *p <= '9') {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		p++;
	}
	if (p == *pp)
		return false;
	*pp = p;
	*val = v;
	return true;
}

static bool scan_char(const char **pp, const char *end, char c)
{
	if (*pp >= end || **pp != c)
		return false;
	(*pp)++;
	return true;
}

static bool scan_perms(const char **pp, const char *end, uint32_t *perms)
{
	const char *p = *pp;

	if (end - p < 4)
		return false;
	*perms = 0;
	if (p[0] == 'r')
		*perms |= PROC_MAP_R;
	else if (p[0] != '-')
		return false;
	if (p[1] == 'w')
		*perms |= PROC_MAP_W;
	else if (p[1] != '-')
		return false;
	if (p[2] == 'x')
		*perms |= PROC_MAP_X;
	else if (p[2] != '-')
		return false;
	if (p[3] == 'p')
		*perms |= PROC_MAP_P;
	else if (p[3] != 's')
		return false;
	*pp = p + 4;
	return true;
}

/*
 * Parse one line (without its newline) into @m; the name is returned as
 * @path/@path_len, not copied.  Return: false when the line is malformed.
 */
static bool parse_line(const char *p, const char *end, struct proc_map *m, const char **path,
		       size_t *path_len)
{
	uint64_t major, minor;
	size_t n;

	memset(m, 0, sizeof(*m));
	if (memchr(p, '\0', end - p))
		return false;
	if (!scan_hex(&p, end, UINT64_MAX, &m->start) || !scan_char(&p, end, '-') ||
	    !scan_hex(&p, end, UINT64_MAX, &m->end) || !scan_char(&p, end, ' ') ||
	    !scan_perms(&p, end, &m->perms) || !scan_char(&p, end, ' ') ||
	    !scan_hex(&p, end, UINT64_MAX, &m->pgoff) || !scan_char(&p, end, ' ') ||
	    !scan_hex(&p, end, UINT32_MAX, &major) || !scan_char(&p, end, ':') ||
	    !scan_hex(&p, end, UINT32_MAX, &minor) || !scan_char(&p, end, ' ') ||
	    !scan_dec(&p, end, &m->inode))
		return false;
	/* an empty mapping would break the sorted, non-overlapping invariant */
	if (m->start >= m->end)
		return false;
	m->dev_major = (uint32_t)major; /* scan_hex() bounded both */
	m->dev_minor = (uint32_t)minor;

	/*
	 * The name follows padding spaces.  Skipping all of them loses nothing:
	 * a file name from d_path() starts with '/', and special names with '['
	 * or a word; old kernels leave trailing spaces on anonymous lines.
	 */
	if (p < end && *p != ' ')
		return false;
	while (p < end && *p == ' ')
		p++;
	n = end - p;
	if (n >= sizeof(DELETED_SUFFIX) - 1 &&
	    !memcmp(end - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX,
		    sizeof(DELETED_SUFFIX) - 1)) {
		n -= sizeof(DELETED_SUFFIX) - 1;
		m->deleted = 1;
	}
	if (n >= PROC_MAPS_MAX_PATH)
		return false;
	*path = p;
	*path_len = n;
	return true;
}

/* Copy the path into the pool, sharing it with the previous line's if equal. */
static int builder_add_path(struct maps_builder *b, const char *path, size_t len, size_t *off)
{
	int err;

	if (b->last_path && strpool__is(&b->pool, b->last_path, path, len)) {
		*off = b->last_path;
		return 0;
	}
	err = strpool__add(&b->pool, path, len, off);
	if (!err && len)
		b->last_path = *off;
	return err;
}

static int map_cmp(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/*
 * The kernel lists mappings in address order; hostile or corrupted text may
 * not, and binary search needs it: sort, then drop (and count) overlaps.
 */
static void maps_make_ordered(struct proc_maps *pm)
{
	size_t i, out;
	bool sorted = true;

	for (i = 1; i < pm->nr; i++) {
		if (pm->maps[i].start < pm->maps[i - 1].end) {
			sorted = false;
			break;
		}
	}
	if (sorted)
		return;
	qsort(pm->maps, pm->nr, sizeof(*pm->maps), map_cmp);
	for (i = 1, out = 1; i < pm->nr; i++) {
		if (pm->maps[i].start < pm->maps[out - 1].end) {
			pm->nr_bad_lines++;
			continue;
		}
		pm->maps[out++] = pm->maps[i];
	}
	pm->nr = out;
}

struct proc_maps *proc_maps__parse(const char *text, size_t len)
{
	struct maps_builder b = {};
	const char *p, *end, *nl;
	struct proc_maps *pm;
	size_t i;
	int err;

	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return errno = ENOMEM, NULL;
	b.pm = pm;
	err = strpool__init(&b.pool, 16);
	if (err)
		goto err_free;

	if (!text)
		len = 0;
	/* beyond the cap the text is cut, and the cut line counts as bad */
	if (len > PROC_MAPS_MAX_TEXT)
		len = PROC_MAPS_MAX_TEXT;
	p = text;
	end = text + len;
	while (p < end) {
		struct proc_map m;
		const char *path;
		size_t path_len, off;

		nl = memchr(p, '\n', end - p);
		/* every kernel line ends in '\n': without one the read was cut short */
		if (!nl) {
			pm->nr_bad_lines++;
			break;
		}
		if (!parse_line(p, nl, &m, &path, &path_len)) {
			pm->nr_bad_lines++;
			p = nl + 1;
			continue;
		}
		p = nl + 1;
		err = builder_add_path(&b, path, path_len, &off);
		if (!err)
			err = array_grow((void **)&pm->maps, &b.maps_cap, pm->nr + 1,
					 sizeof(*pm->maps), 16);
		if (err)
			goto err_free;
		m.path = (char *)(uintptr_t)off;
		pm->maps[pm->nr++] = m;
	}

	/* the pool no longer moves: turn offsets into pointers */
	pm->strings = b.pool.buf;
	for (i = 0; i < pm->nr; i++)
		pm->maps[i].path = pm->strings + (uintptr_t)pm->maps[i].path;
	maps_make_ordered(pm);
	return pm;

err_free:
	free(b.pool.buf);
	proc_maps__free(pm);
	return errno = -err, NULL;
}

/*
 * A process whose leader called pthread_exit() while other threads run has
 * an empty /proc/PID/maps (the leader, a zombie, has no mm): its threads'
 * /proc/PID/task/TID/maps still show the address space they share.
 */
static int read_task_maps(pid_t pid, char **text, size_t *len)
{
	char fname[64];
	struct dirent *de;
	DIR *dir;
	int err = -ESRCH;

	snprintf(fname, sizeof(fname), "/proc/%d/task", (int)pid);
	dir = opendir(fname);
	if (!dir)
		return -ESRCH;
	while ((de = readdir(dir))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || atoi(de->d_name) == pid)
			continue;
		snprintf(fname, sizeof(fname), "/proc/%d/task/%.10s/maps", (int)pid, de->d_name);
		err = read_capped(fname, PROC_MAPS_MAX_TEXT, READ_CHUNK, text, len);
		if (!err && *len)
			break;
		if (!err) {
			free(*text);
			*text = NULL;
			err = -ESRCH;
		}
	}
	closedir(dir);
	return err == -ENOENT ? -ESRCH : err;
}

int proc_maps__read_text(pid_t pid, char **text, size_t *len)
{
	char fname[32];
	int err;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	err = read_capped(fname, PROC_MAPS_MAX_TEXT, READ_CHUNK, text, len);
	/* the process is gone (mid-read a vanished process also says ENOENT) */
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	if (*len)
		return 0;
	/* empty: a kernel thread, a zombie, or a leader gone before its threads */
	{
		char *task_text = NULL;
		size_t task_len = 0;

		if (!read_task_maps(pid, &task_text, &task_len)) {
			free(*text);
			*text = task_text;
			*len = task_len;
		}
	}
	return 0;
}

struct proc_maps *proc_maps__read(pid_t pid)
{
	struct proc_maps *pm;
	char *text = NULL;
	size_t len = 0;
	int err;

	err = proc_maps__read_text(pid, &text, &len);
	if (err)
		return errno = -err, NULL;
	pm = proc_maps__parse(text, len);
	err = errno;
	free(text);
	errno = err;
	return pm;
}

struct proc_maps *proc_maps__dup(const struct proc_maps *pm)
{
	struct proc_maps *copy = calloc(1, sizeof(*copy));
	size_t i, bytes = 1;
	char *p;

	if (!copy)
		return NULL;
	for (i = 0; i < pm->nr; i++)
		bytes += strlen(pm->maps[i].path) + 1;
	copy->maps = malloc((pm->nr ? pm->nr : 1) * sizeof(*copy->maps));
	copy->strings = malloc(bytes);
	if (!copy->maps || !copy->strings) {
		proc_maps__free(copy);
		return NULL;
	}
	p = copy->strings;
	for (i = 0; i < pm->nr; i++) {
		size_t len = strlen(pm->maps[i].path) + 1;

		copy->maps[i] = pm->maps[i];
		copy->maps[i].path = memcpy(p, pm->maps[i].path, len);
		p += len;
	}
	copy->nr = pm->nr;
	copy->nr_bad_lines = pm->nr_bad_lines;
	return copy;
}

void proc_maps__free(struct proc_maps *pm)
{
	if (!pm)
		return;
	free(pm->maps);
	free(pm->strings);
	free(pm);
}

const struct proc_map *proc_maps__find(const struct proc_maps *pm, uint64_t addr)
{
	if (!pm)
		return NULL;
	return RANGE_FIND(pm->maps, pm->nr, start, end, addr);
}
