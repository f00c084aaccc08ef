// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "export/outfiles.h"
#include "export/output.h"
#include "util/array.h"

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

int outfiles__written(struct outfiles *o, const char *path)
{
	unsigned int slot;
	char *copy;
	int err = 0;

	o->count++;
	if (!o->max_files)
		return 0;
	copy = strdup(path);
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

/* a document kept to be written again */
struct kept_doc {
	char *path;
	uint8_t *buf;
	size_t len;
	uint64_t samples;
	bool profile;
};

struct outqueue {
	struct outfiles *files;
	struct kept_doc *docs; /* oldest first */
	size_t nr, cap;
	struct outqueue_stats st;
};

struct outqueue *outqueue__new(struct outfiles *files, size_t max_bytes)
{
	struct outqueue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->files = files;
	q->st.max_bytes = max_bytes;
	return q;
}

void outqueue__keep(const struct outqueue *q, struct output_keep *k)
{
	*k = (struct output_keep){.max = q->st.max_bytes - q->st.pending_bytes};
}

/* the document written: counted, and a profile joins the --max-files ring */
static void written(struct outqueue *q, const char *path, bool profile)
{
	int err;

	q->st.written++;
	if (!profile || !q->files)
		return;
	err = outfiles__written(q->files, path);
	if (err)
		fprintf(stderr, "\ncollector: cannot delete an old profile: %s\n", strerror(-err));
}

static void dropped(struct outqueue *q, bool profile, uint64_t samples)
{
	q->st.dropped++;
	if (profile)
		q->st.dropped_samples += samples;
}

bool outqueue__done(struct outqueue *q, const char *path, bool profile, uint64_t samples, int err,
		    struct output_keep *k)
{
	char *copy = NULL;

	if (!err) {
		written(q, path, profile);
		return true;
	}
	q->st.failed++;
	q->st.last_err = err;
	if (!k || !k->buf ||
	    array_grow((void **)&q->docs, &q->cap, q->nr + 1, sizeof(*q->docs), 8) ||
	    !(copy = strdup(path))) {
		if (k) {
			free(k->buf);
			k->buf = NULL;
		}
		dropped(q, profile, samples);
		return false;
	}
	q->docs[q->nr++] = (struct kept_doc){
		.path = copy,
		.buf = k->buf,
		.len = k->len,
		.samples = samples,
		.profile = profile,
	};
	k->buf = NULL;
	q->st.kept++;
	q->st.pending++;
	q->st.pending_bytes += k->len;
	return true;
}

static int fill_kept(void *ctx, struct output_sink *s)
{
	const struct kept_doc *d = ctx;

	return output_sink__write(s, d->buf, d->len);
}

static void forget(struct outqueue *q, struct kept_doc *d)
{
	q->st.pending--;
	q->st.pending_bytes -= d->len;
	free(d->path);
	free(d->buf);
}

int outqueue__retry(struct outqueue *q, uint64_t *profiles, uint64_t *samples)
{
	size_t i;
	int err = 0;

	for (i = 0; i < q->nr; i++) {
		struct kept_doc *d = &q->docs[i];

		err = output_write(d->path, fill_kept, d, NULL);
		if (err) {
			q->st.failed++;
			q->st.last_err = err;
			break;
		}
		q->st.written_late++;
		written(q, d->path, d->profile);
		if (d->profile) {
			(*profiles)++;
			*samples += d->samples;
		}
		forget(q, d);
	}
	memmove(q->docs, q->docs + i, (q->nr - i) * sizeof(*q->docs));
	q->nr -= i;
	return err;
}

void outqueue__drop_all(struct outqueue *q)
{
	for (size_t i = 0; i < q->nr; i++) {
		dropped(q, q->docs[i].profile, q->docs[i].samples);
		forget(q, &q->docs[i]);
	}
	q->nr = 0;
}

void outqueue__stats(const struct outqueue *q, struct outqueue_stats *st)
{
	*st = q->st;
}

void outqueue__free(struct outqueue *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->nr; i++) {
		free(q->docs[i].path);
		free(q->docs[i].buf);
	}
	free(q->docs);
	free(q);
}
