// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "processes/pod_meta.h"
#include "util/array.h"
#include "util/clock.h"

#define RESCAN_NS 1000000000ull

struct pod_entry {
	char id[POD_META_ID_LEN + 1];
	struct pod_meta m;
};

struct pod_index {
	pthread_mutex_t lock;
	char *containers_dir;
	char *pods_dir;
	struct pod_entry *e; /* sorted by id */
	size_t nr, cap;
	uint64_t scanned_ns; /* CLOCK_MONOTONIC of the last read; 0: never */
};

/* a DNS name's bytes: lowercase letters, digits, '-' and (pods only) '.' */
static bool dns_name(const char *s, size_t len, size_t max, bool dots)
{
	size_t i;

	if (!len || len > max)
		return false;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		      (dots && c == '.')))
			return false;
	}
	return true;
}

static bool lower_hex(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool pod_meta_parse_link(const char *name, struct pod_meta *out, char id[POD_META_ID_LEN + 1])
{
	size_t len = strlen(name), rest;
	const char *u1, *u2, *dash;

	/* "-" + id + ".log" end it */
	if (len < POD_META_ID_LEN + 5 + 5 || strcmp(name + len - 4, ".log"))
		return false;
	dash = name + len - 4 - POD_META_ID_LEN - 1;
	if (*dash != '-' || !lower_hex(dash + 1, POD_META_ID_LEN))
		return false;
	rest = dash - name;
	u1 = memchr(name, '_', rest);
	u2 = u1 ? memchr(u1 + 1, '_', dash - u1 - 1) : NULL;
	if (!u2 || memchr(u2 + 1, '_', dash - u2 - 1))
		return false;
	if (!dns_name(name, u1 - name, POD_META_POD_LEN - 1, true) ||
	    !dns_name(u1 + 1, u2 - u1 - 1, POD_META_NAME_LEN - 1, false) ||
	    !dns_name(u2 + 1, dash - u2 - 1, POD_META_NAME_LEN - 1, false))
		return false;
	memcpy(out->pod, name, u1 - name);
	out->pod[u1 - name] = '\0';
	memcpy(out->ns, u1 + 1, u2 - u1 - 1);
	out->ns[u2 - u1 - 1] = '\0';
	memcpy(out->container, u2 + 1, dash - u2 - 1);
	out->container[dash - u2 - 1] = '\0';
	memcpy(id, dash + 1, POD_META_ID_LEN);
	id[POD_META_ID_LEN] = '\0';
	return true;
}

bool pod_meta_target_agrees(const char *target, const struct pod_meta *m)
{
	const char *file, *cdir, *pdir, *p;
	size_t nl = strlen(m->ns), pl = strlen(m->pod), cl = strlen(m->container);

	/* from the end: <file>, <container>, <namespace>_<pod>_<uid>, "pods" */
	file = strrchr(target, '/');
	if (!file || file == target)
		return false;
	for (cdir = file - 1; cdir > target && *cdir != '/'; cdir--)
		;
	if (cdir == target || *cdir != '/' || (size_t)(file - cdir - 1) != cl ||
	    memcmp(cdir + 1, m->container, cl))
		return false;
	for (pdir = cdir - 1; pdir > target && *pdir != '/'; pdir--)
		;
	if (*pdir != '/')
		return false;
	p = pdir + 1;
	if ((size_t)(cdir - p) <= nl + pl + 2 || memcmp(p, m->ns, nl) || p[nl] != '_' ||
	    memcmp(p + nl + 1, m->pod, pl) || p[nl + 1 + pl] != '_')
		return false;
	return pdir - target >= 5 && !memcmp(pdir - 5, "/pods", 5);
}

struct pod_index *pod_index__new(const char *logs_dir)
{
	struct pod_index *pi = calloc(1, sizeof(*pi));

	if (!pi)
		return NULL;
	pthread_mutex_init(&pi->lock, NULL);
	if (asprintf(&pi->containers_dir, "%s/containers", logs_dir) < 0)
		pi->containers_dir = NULL;
	if (asprintf(&pi->pods_dir, "%s/pods", logs_dir) < 0)
		pi->pods_dir = NULL;
	if (!pi->containers_dir || !pi->pods_dir) {
		pod_index__free(pi);
		return errno = ENOMEM, NULL;
	}
	return pi;
}

static int by_id(const void *a, const void *b)
{
	return strcmp(((const struct pod_entry *)a)->id, ((const struct pod_entry *)b)->id);
}

/* the container's log directory exists: its pod still runs here */
static bool pod_dir_exists(int pods_fd, const struct pod_meta *m, const char *target)
{
	const char *file = strrchr(target, '/'), *cdir;
	char rel[PATH_MAX];
	struct stat st;

	for (cdir = file - 1; cdir > target && *cdir != '/'; cdir--)
		;
	for (cdir--; cdir > target && *cdir != '/'; cdir--)
		;
	/* <namespace>_<pod>_<uid>/<container>, relative to pods/ */
	if ((size_t)(file - cdir - 1) >= sizeof(rel))
		return false;
	memcpy(rel, cdir + 1, file - cdir - 1);
	rel[file - cdir - 1] = '\0';
	return !fstatat(pods_fd, rel, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
}

/* read containers/ again; the old index stays when it cannot be read */
static void rescan(struct pod_index *pi)
{
	struct pod_entry *e = NULL, cur;
	size_t nr = 0, cap = 0;
	char target[PATH_MAX];
	struct dirent *de;
	int dfd, pods_fd;
	ssize_t n;
	DIR *d;

	pi->scanned_ns = mono_ns();
	d = opendir(pi->containers_dir);
	if (!d)
		return;
	pods_fd = open(pi->pods_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dfd = dirfd(d);
	while (pods_fd >= 0 && (de = readdir(d))) {
		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		if (!pod_meta_parse_link(de->d_name, &cur.m, cur.id))
			continue;
		n = readlinkat(dfd, de->d_name, target, sizeof(target) - 1);
		if (n <= 0 || (size_t)n >= sizeof(target) - 1)
			continue;
		target[n] = '\0';
		if (!pod_meta_target_agrees(target, &cur.m) ||
		    !pod_dir_exists(pods_fd, &cur.m, target))
			continue;
		if (array_grow((void **)&e, &cap, nr + 1, sizeof(*e), 64))
			break;
		e[nr++] = cur;
	}
	closedir(d);
	if (pods_fd < 0) {
		free(e);
		return;
	}
	close(pods_fd);
	if (nr)
		qsort(e, nr, sizeof(*e), by_id);
	free(pi->e);
	pi->e = e;
	pi->nr = nr;
	pi->cap = cap;
}

static const struct pod_entry *find(const struct pod_index *pi, const char *id)
{
	struct pod_entry key;

	if (!pi->nr)
		return NULL;
	snprintf(key.id, sizeof(key.id), "%s", id);
	return bsearch(&key, pi->e, pi->nr, sizeof(*pi->e), by_id);
}

bool pod_index__lookup(struct pod_index *pi, const char *id, struct pod_meta *out)
{
	const struct pod_entry *e;

	if (!pi || !id || strlen(id) != POD_META_ID_LEN)
		return false;
	pthread_mutex_lock(&pi->lock);
	e = find(pi, id);
	if (!e && (!pi->scanned_ns || mono_ns() - pi->scanned_ns >= RESCAN_NS)) {
		rescan(pi);
		e = find(pi, id);
	}
	if (e)
		*out = e->m;
	pthread_mutex_unlock(&pi->lock);
	return e != NULL;
}

unsigned int pod_index__size(struct pod_index *pi)
{
	unsigned int n;

	pthread_mutex_lock(&pi->lock);
	n = pi->nr;
	pthread_mutex_unlock(&pi->lock);
	return n;
}

void pod_index__free(struct pod_index *pi)
{
	if (!pi)
		return;
	pthread_mutex_destroy(&pi->lock);
	free(pi->containers_dir);
	free(pi->pods_dir);
	free(pi->e);
	free(pi);
}
