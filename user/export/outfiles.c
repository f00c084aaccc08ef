// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "export/outfiles.h"

struct outfiles {
	char *dir;
	char *who;
	unsigned int max_files;
	char **kept; /* ring of the newest max_files paths, oldest at head */
	unsigned int head, nr;
	unsigned long count;
	char path[PATH_MAX];
	const char *sibling_suffix; /* a file written beside each profile; NULL: none */
	char sibling[PATH_MAX];
	char last_stamp[32];
	unsigned int same_stamp;
};

struct outfiles *outfiles__new(const char *dir, const char *who, unsigned int max_files)
{
	struct outfiles *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->dir = strdup(dir);
	o->who = strdup(who);
	o->max_files = max_files;
	if (max_files)
		o->kept = calloc(max_files, sizeof(*o->kept));
	if (!o->dir || !o->who || (max_files && !o->kept)) {
		outfiles__free(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

const char *outfiles__path(struct outfiles *o, time_t start)
{
	char stamp[32], suffix[16] = "";
	struct tm tm;
	int n;

	gmtime_r(&start, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (!strcmp(stamp, o->last_stamp))
		snprintf(suffix, sizeof(suffix), "-%u", ++o->same_stamp);
	else
		o->same_stamp = 0;
	snprintf(o->last_stamp, sizeof(o->last_stamp), "%s", stamp);
	n = snprintf(o->path, sizeof(o->path), "%s/ctxprof-%s-%s%s.pb.gz", o->dir, o->who, stamp,
		     suffix);
	if (n < 0 || (size_t)n >= sizeof(o->path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return o->path;
}

void outfiles__set_sibling(struct outfiles *o, const char *suffix)
{
	o->sibling_suffix = suffix;
}

/* @path (a profile's) with its ".pb.gz" replaced by the sibling suffix, into @out */
static int sibling_of(const struct outfiles *o, const char *path, char *out, size_t len)
{
	size_t base = strlen(path) - strlen(".pb.gz");
	int n = snprintf(out, len, "%.*s%s", (int)base, path, o->sibling_suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *outfiles__sibling(struct outfiles *o)
{
	if (!o->sibling_suffix || sibling_of(o, o->path, o->sibling, sizeof(o->sibling))) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return o->sibling;
}

/* delete @path and its sibling */
static int delete_file(const struct outfiles *o, const char *path)
{
	char sibling[PATH_MAX];
	int err = 0;

	if (unlink(path) && errno != ENOENT)
		err = -errno;
	if (o->sibling_suffix && !sibling_of(o, path, sibling, sizeof(sibling)) &&
	    unlink(sibling) && errno != ENOENT && !err)
		err = -errno;
	return err;
}

int outfiles__written(struct outfiles *o)
{
	unsigned int slot;
	char *copy;
	int err = 0;

	o->count++;
	if (!o->max_files)
		return 0;
	copy = strdup(o->path);
	if (!copy)
		return -ENOMEM;
	if (o->nr == o->max_files) {
		/* the ring is full: the oldest file goes */
		err = delete_file(o, o->kept[o->head]);
		free(o->kept[o->head]);
		o->kept[o->head] = copy;
		o->head = (o->head + 1) % o->max_files;
		return err;
	}
	slot = (o->head + o->nr) % o->max_files;
	o->kept[slot] = copy;
	o->nr++;
	return 0;
}

unsigned long outfiles__count(const struct outfiles *o)
{
	return o->count;
}

void outfiles__free(struct outfiles *o)
{
	unsigned int i;

	if (!o)
		return;
	if (o->kept)
		for (i = 0; i < o->max_files; i++)
			free(o->kept[i]);
	free(o->kept);
	free(o->dir);
	free(o->who);
	free(o);
}
