// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perf_map - a process's perf map, read into sorted ranges that do not
 * overlap.  See perf_map.h.
 *
 * A read parses complete lines into a batch (PERF_MAP_BATCH lines at most),
 * then merges the batch into the ranges in two steps: the batch's own
 * overlaps are resolved by a sweep over its boundaries (at each, the latest
 * line still open wins), and the result is laid over the ranges kept, which
 * it hides where they meet.  Every range begins at a line's start or end,
 * so there are at most twice as many ranges as lines.  Names go into one
 * pool, by offset; the name of a line whose ranges were all hidden stays
 * there (the pool is bounded by the bytes read).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/safe_open.h"
#include "symbols/perf_map.h"
#include "symbols/symbolizer.h"
#include "util/array.h"
#include "util/hex.h"
#include "util/ranges.h"
#include "util/read_capped.h"

#define READ_CHUNK  (256u << 10) /* bytes read at once; more than PERF_MAP_MAX_LINE */
#define CHECK_BYTES 64		 /* the first and last bytes read, compared before reading on */
#define STATUS_MAX  8192	 /* /proc/PID/status, NSpid and Uid lines included */
#define RESERVE	    (64u << 10)	 /* ranges' memory charged ahead at most, when it fits */

/* refusals counted once per image (perf_map.refused) */
#define REFUSED_NOT_REGULAR (1u << 0)
#define REFUSED_NOT_OWNER   (1u << 1)

struct perf_map {
	pid_t pid;
	struct symbolizer *sym; /* charged; NULL: not */
	/* the file as last read */
	bool have_file;
	bool capped; /* larger than PERF_MAP_MAX_BYTES: counted */
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	uint64_t offset; /* bytes of complete lines read */
	unsigned char head[CHECK_BYTES], tail[CHECK_BYTES];
	size_t head_len, tail_len;
	unsigned int refused; /* REFUSED_* counted */
	/* a line longer than PERF_MAP_MAX_LINE at the end of the last read: its
	 * bytes up to @scan were looked at, no newline among them */
	bool skipping;
	uint64_t scan;
	/* what it names */
	char *pool; /* names, NUL-terminated, by offset */
	size_t pool_len, pool_cap;
	struct perf_map_range *ranges;
	size_t nr_ranges;
	uint32_t lines;	 /* lines kept: the next one's number */
	size_t reserved; /* charged for ranges: two per line kept, at most */
	size_t charged;	 /* bytes of the pool's capacity, and @reserved */
	/* the read under way: lines not merged yet (not charged: at most
	 * PERF_MAP_BATCH of them, freed when the read ends) */
	struct perf_map_range *batch;
	size_t nr_batch, cap_batch;
	size_t batch_pool; /* pool_len before the batch's names */
};

static const char *const skip_names[PERF_MAP_SKIP_MAX] = {
	[PERF_MAP_SKIP_NO_NAME] = "no_name",   [PERF_MAP_SKIP_BAD_ADDRESS] = "bad_address",
	[PERF_MAP_SKIP_JUNK] = "junk",	       [PERF_MAP_SKIP_TOO_LONG] = "too_long",
	[PERF_MAP_SKIP_OVER_CAP] = "over_cap", [PERF_MAP_SKIP_NO_MEMORY] = "no_memory",
};

const char *perf_map_skip_name(unsigned int reason)
{
	return reason < PERF_MAP_SKIP_MAX ? skip_names[reason] : "unknown";
}

static int charge(struct perf_map *pm, size_t n)
{
	if (pm->sym && symbolizer__charge(pm->sym, n))
		return -E2BIG;
	pm->charged += n;
	return 0;
}

static void uncharge(struct perf_map *pm, size_t n)
{
	if (pm->sym)
		symbolizer__uncharge(pm->sym, n);
	pm->charged -= n;
}

/* array_grow(), the growth charged first.  Return: 0, -E2BIG, -ENOMEM. */
static int grow_charged(struct perf_map *pm, void **buf, size_t *cap, size_t need, size_t elem,
			size_t first)
{
	size_t new_cap = *cap ? *cap : first;
	void *p;

	if (need <= *cap)
		return 0;
	while (new_cap < need) {
		if (new_cap > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		new_cap *= 2;
	}
	if (charge(pm, (new_cap - *cap) * elem))
		return -E2BIG;
	p = realloc(*buf, new_cap * elem);
	if (!p) {
		uncharge(pm, (new_cap - *cap) * elem);
		return -ENOMEM;
	}
	*buf = p;
	*cap = new_cap;
	return 0;
}

/*
 * Charge the ranges one more line may make (two: every range begins at a
 * line's start or end), so that merging never needs more than was charged.
 * Return: 0 or -E2BIG.
 */
static int reserve_line(struct perf_map *pm)
{
	size_t need = ((size_t)pm->lines + 1) * 2 * sizeof(struct perf_map_range);
	size_t ahead = need + (need < RESERVE ? need : RESERVE); /* a lock taken less often */

	if (need <= pm->reserved)
		return 0;
	if (!charge(pm, ahead - pm->reserved)) {
		pm->reserved = ahead;
		return 0;
	}
	if (charge(pm, need - pm->reserved))
		return -E2BIG;
	pm->reserved = need;
	return 0;
}

/* forget every name: the file is another, or rewritten */
static void reset(struct perf_map *pm)
{
	uncharge(pm, pm->charged);
	free(pm->pool);
	free(pm->ranges);
	free(pm->batch);
	pm->pool = NULL;
	pm->ranges = pm->batch = NULL;
	pm->pool_len = pm->pool_cap = pm->nr_ranges = pm->nr_batch = pm->cap_batch = 0;
	pm->lines = 0;
	pm->reserved = 0;
	pm->have_file = pm->capped = pm->skipping = false;
	pm->offset = pm->scan = 0;
	pm->head_len = pm->tail_len = 0;
}

struct perf_map *perf_map__new(pid_t pid, struct symbolizer *budget)
{
	struct perf_map *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return errno = ENOMEM, NULL;
	pm->pid = pid;
	pm->sym = budget;
	return pm;
}

void perf_map__free(struct perf_map *pm)
{
	if (!pm)
		return;
	reset(pm);
	free(pm);
}

/* --- parsing */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* a hex number at @p[*@i] ("0x" allowed), at most 64 bits.  Return: 0 or -1. */
static int parse_hex(const char *p, size_t len, size_t *i, uint64_t *v)
{
	size_t k = *i, digits = 0;
	uint64_t x = 0;
	int d;

	if (k + 1 < len && p[k] == '0' && (p[k + 1] == 'x' || p[k + 1] == 'X'))
		k += 2;
	for (; k < len && (d = hex_digit(p[k])) >= 0; k++, digits++) {
		if (x >> 60)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	if (!digits)
		return -1;
	*i = k;
	*v = x;
	return 0;
}

/*
 * One line (@len bytes, no newline): its range [*@start, *@end) and where
 * its name begins (*@name, *@name_len).
 * Return: PERF_MAP_SKIP_MAX when it is good, else why it is skipped.
 */
static enum perf_map_skip parse_line(const char *p, size_t len, uint64_t *start, uint64_t *end,
				     size_t *name, size_t *name_len)
{
	uint64_t size;
	size_t i = 0, k;

	for (k = 0; k < len; k++)
		if (((unsigned char)p[k] < 0x20 && p[k] != '\t') || p[k] == 0x7f)
			return PERF_MAP_SKIP_JUNK;
	if (parse_hex(p, len, &i, start) || i >= len || !is_blank(p[i]))
		return PERF_MAP_SKIP_BAD_ADDRESS;
	while (i < len && is_blank(p[i]))
		i++;
	if (parse_hex(p, len, &i, &size))
		return PERF_MAP_SKIP_BAD_ADDRESS;
	if (i < len && !is_blank(p[i]))
		return PERF_MAP_SKIP_BAD_ADDRESS;
	/* one blank, then the name, spaces and all, as perf takes it */
	for (k = i + 1; k < len && is_blank(p[k]); k++)
		;
	if (k >= len)
		return PERF_MAP_SKIP_NO_NAME;
	/* a size of 0 is its start address alone; a range must not wrap */
	if (!size)
		size = 1;
	if (size > UINT64_MAX - *start)
		return PERF_MAP_SKIP_BAD_ADDRESS;
	*end = *start + size;
	*name = i + 1;
	*name_len = len - (i + 1);
	return PERF_MAP_SKIP_MAX;
}

/* --- merging a batch into the ranges */

static int by_start_line(const void *x, const void *y)
{
	const struct perf_map_range *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

static int by_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* a max-heap of batch indices, by line number */
static void heap_push(uint32_t *h, size_t *n, const struct perf_map_range *b, uint32_t v)
{
	size_t i = (*n)++, up;

	for (; i; i = up) {
		up = (i - 1) / 2;
		if (b[h[up]].line >= b[v].line)
			break;
		h[i] = h[up];
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n, const struct perf_map_range *b)
{
	uint32_t v = h[--(*n)];
	size_t i = 0, c;

	for (; (c = 2 * i + 1) < *n; i = c) {
		if (c + 1 < *n && b[h[c + 1]].line > b[h[c]].line)
			c++;
		if (b[h[c]].line <= b[v].line)
			break;
		h[i] = h[c];
	}
	if (*n)
		h[i] = v;
}

/*
 * The batch @b (@n lines sorted by start) as ranges that do not overlap,
 * into @out (room for 2 * @n): at each boundary the latest line still open
 * names what follows.  Return: how many.
 */
static size_t sweep(const struct perf_map_range *b, size_t n, uint64_t *bounds, uint32_t *heap,
		    struct perf_map_range *out)
{
	size_t nb = 0, hn = 0, j = 0, k, nr = 0;
	const struct perf_map_range *top;
	uint64_t x;

	for (k = 0; k < n; k++) {
		bounds[nb++] = b[k].start;
		bounds[nb++] = b[k].end;
	}
	qsort(bounds, nb, sizeof(*bounds), by_u64);
	for (k = j = 1; k < nb; k++)
		if (bounds[k] != bounds[j - 1])
			bounds[j++] = bounds[k];
	nb = j;
	for (k = 0, j = 0; k + 1 < nb; k++) {
		x = bounds[k];
		while (j < n && b[j].start <= x)
			heap_push(heap, &hn, b, (uint32_t)j++);
		while (hn && b[heap[0]].end <= x)
			heap_pop(heap, &hn, b);
		if (!hn)
			continue;
		top = &b[heap[0]];
		if (nr && out[nr - 1].line == top->line && out[nr - 1].end == x) {
			out[nr - 1].end = bounds[k + 1];
			continue;
		}
		out[nr++] = (struct perf_map_range){x, bounds[k + 1], top->name, top->line};
	}
	return nr;
}

static void emit(struct perf_map_range *c, size_t *nc, uint64_t start, uint64_t end,
		 const struct perf_map_range *from)
{
	if (start < end)
		c[(*nc)++] = (struct perf_map_range){start, end, from->name, from->line};
}

/*
 * @b (@nb ranges, later than every one of @a) laid over @a: into @c (room
 * for @na + 2 * @nb).  Marks in @overlap (by line - @base) the lines of @b
 * that meet a range of @a.  Return: how many ranges.
 */
static size_t overlay(const struct perf_map_range *a, size_t na, const struct perf_map_range *b,
		      size_t nb, struct perf_map_range *c, unsigned char *overlap, uint32_t base)
{
	size_t i = 0, j, nc = 0;
	uint64_t clip = 0; /* what lies below is written, or hidden */

	for (j = 0; j < nb; j++) {
		/* what @a names before b[j] */
		while (i < na && a[i].start < b[j].start) {
			emit(c, &nc, a[i].start > clip ? a[i].start : clip,
			     a[i].end < b[j].start ? a[i].end : b[j].start, &a[i]);
			if (a[i].end > b[j].start)
				break;
			i++;
		}
		if (i < na && a[i].start < b[j].end && a[i].end > b[j].start)
			overlap[b[j].line - base] = 1;
		c[nc++] = b[j];
		clip = b[j].end;
		while (i < na && a[i].end <= clip)
			i++;
	}
	for (; i < na; i++)
		emit(c, &nc, a[i].start > clip ? a[i].start : clip, a[i].end, &a[i]);
	return nc;
}

/*
 * Merge the batch into the ranges (their memory charged already, line by
 * line).  Return: 0, or -ENOMEM with the batch dropped (its lines then
 * skipped, counted) and the ranges as they were.
 */
static int merge_batch(struct perf_map *pm, struct perf_map_stats *st)
{
	size_t n = pm->nr_batch, nb, nc, k;
	struct perf_map_range *b = pm->batch, *segs = NULL, *c = NULL, *shrunk;
	uint32_t base = pm->lines - (uint32_t)n, *heap = NULL;
	unsigned char *overlap = NULL;
	uint64_t *bounds = NULL, max_end = 0;
	int err = -ENOMEM;

	if (!n)
		return 0;
	qsort(b, n, sizeof(*b), by_start_line);
	overlap = calloc(n, 1);
	bounds = malloc(2 * n * sizeof(*bounds));
	heap = malloc(n * sizeof(*heap));
	segs = malloc(2 * n * sizeof(*segs));
	if (!overlap || !bounds || !heap || !segs)
		goto out_drop;
	/* sorted by start: a line overlaps an earlier one, or the next */
	for (k = 0; k < n; k++) {
		if ((k && max_end > b[k].start) || (k + 1 < n && b[k + 1].start < b[k].end))
			overlap[b[k].line - base] = 1;
		if (b[k].end > max_end)
			max_end = b[k].end;
	}
	nb = sweep(b, n, bounds, heap, segs);
	c = malloc((pm->nr_ranges + 2 * nb) * sizeof(*c));
	if (!c)
		goto out_drop;
	/* the latest line of the batch names some range: nc >= 1 */
	nc = overlay(pm->ranges, pm->nr_ranges, segs, nb, c, overlap, base);
	shrunk = realloc(c, nc * sizeof(*c));
	free(pm->ranges);
	pm->ranges = shrunk ? shrunk : c;
	pm->nr_ranges = nc;
	st->entries += n;
	for (k = 0; k < n; k++)
		st->overlapping += overlap[k];
	err = 0;
	goto out_free;

out_drop:
	st->skipped[PERF_MAP_SKIP_NO_MEMORY] += n;
	pm->lines = base;
	pm->pool_len = pm->batch_pool;
out_free:
	free(overlap);
	free(bounds);
	free(heap);
	free(segs);
	pm->nr_batch = 0;
	pm->batch_pool = pm->pool_len;
	return err;
}

/* one line of the file, @len bytes without its newline */
static void add_line(struct perf_map *pm, const char *p, size_t len, struct perf_map_stats *st)
{
	enum perf_map_skip why;
	size_t name, name_len;
	uint64_t start, end;

	if (len > PERF_MAP_MAX_LINE) {
		st->skipped[PERF_MAP_SKIP_TOO_LONG]++;
		return;
	}
	why = parse_line(p, len, &start, &end, &name, &name_len);
	if (why != PERF_MAP_SKIP_MAX) {
		st->skipped[why]++;
		return;
	}
	if (pm->lines >= PERF_MAP_MAX_ENTRIES) {
		st->skipped[PERF_MAP_SKIP_OVER_CAP]++;
		return;
	}
	if (array_grow((void **)&pm->batch, &pm->cap_batch, pm->nr_batch + 1, sizeof(*pm->batch),
		       256)) {
		st->skipped[PERF_MAP_SKIP_NO_MEMORY]++;
		return;
	}
	if (pm->pool_len + name_len + 1 > UINT32_MAX || reserve_line(pm) ||
	    grow_charged(pm, (void **)&pm->pool, &pm->pool_cap, pm->pool_len + name_len + 1, 1,
			 4096)) {
		st->skipped[PERF_MAP_SKIP_NO_MEMORY]++;
		return;
	}
	memcpy(pm->pool + pm->pool_len, p + name, name_len);
	pm->pool[pm->pool_len + name_len] = '\0';
	pm->batch[pm->nr_batch++] =
		(struct perf_map_range){start, end, (uint32_t)pm->pool_len, pm->lines++};
	pm->pool_len += name_len + 1;
	if (pm->nr_batch == PERF_MAP_BATCH)
		merge_batch(pm, st);
}

/* --- reading */

static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	ssize_t r;

	while (got < len) {
		r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* read complete lines from pm->offset up to @limit */
static int read_lines(struct perf_map *pm, int fd, uint64_t limit, struct perf_map_stats *st)
{
	/* inside a line longer than PERF_MAP_MAX_LINE: go on where it was left */
	bool skipping = pm->skipping;
	uint64_t pos = skipping ? pm->scan : pm->offset, buf_off = pos; /* buf[0]'s offset */
	size_t have = 0, want, used, left;
	char *buf, *p, *nl;
	ssize_t r;
	int err = 0;

	buf = malloc(READ_CHUNK);
	if (!buf)
		return -ENOMEM;
	pm->batch_pool = pm->pool_len;
	while (pos < limit) {
		want = READ_CHUNK - have;
		if (want > limit - pos)
			want = (size_t)(limit - pos);
		r = pread_full(fd, buf + have, want, pos);
		if (r <= 0) {
			err = (int)r;
			break;
		}
		pos += (uint64_t)r;
		have += (size_t)r;
		for (p = buf; (nl = memchr(p, '\n', have - (size_t)(p - buf))); p = nl + 1) {
			if (skipping)
				st->skipped[PERF_MAP_SKIP_TOO_LONG]++;
			else
				add_line(pm, p, (size_t)(nl - p), st);
			skipping = false;
		}
		used = (size_t)(p - buf);
		pm->offset = buf_off + used;
		left = have - used;
		if (skipping || left > PERF_MAP_MAX_LINE) {
			/* a line too long to keep: drop its bytes until its newline */
			skipping = true;
			buf_off += have;
			have = 0;
		} else {
			memmove(buf, p, left);
			buf_off += used;
			have = left;
		}
		if ((size_t)r < want)
			break; /* the file is shorter than it said: truncated meanwhile */
	}
	pm->skipping = skipping;
	pm->scan = buf_off + have;
	free(buf);
	merge_batch(pm, st);
	free(pm->batch);
	pm->batch = NULL;
	pm->cap_batch = 0;
	return err;
}

/* the first and last bytes read: a rewrite in place shows there */
static void remember_ends(struct perf_map *pm, int fd)
{
	size_t n = pm->offset < CHECK_BYTES ? (size_t)pm->offset : CHECK_BYTES;
	ssize_t r;

	r = pread_full(fd, pm->head, n, 0);
	pm->head_len = r == (ssize_t)n ? n : 0;
	r = pread_full(fd, pm->tail, n, pm->offset - n);
	pm->tail_len = r == (ssize_t)n ? n : 0;
}

static bool same_ends(const struct perf_map *pm, int fd)
{
	unsigned char buf[CHECK_BYTES];

	if (pm->head_len && (pread_full(fd, buf, pm->head_len, 0) != (ssize_t)pm->head_len ||
			     memcmp(buf, pm->head, pm->head_len)))
		return false;
	if (pm->tail_len && (pread_full(fd, buf, pm->tail_len, pm->offset - pm->tail_len) !=
				     (ssize_t)pm->tail_len ||
			     memcmp(buf, pm->tail, pm->tail_len)))
		return false;
	return true;
}

int perf_map__read_fd(struct perf_map *pm, int fd, struct perf_map_stats *st)
{
	uint64_t limit, before;
	struct stat sb;
	int64_t mtime;
	bool same_file;
	int err;

	if (fstat(fd, &sb))
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	mtime = sb.st_mtim.tv_sec * 1000000000ll + sb.st_mtim.tv_nsec;
	same_file = pm->have_file && sb.st_dev == pm->dev && sb.st_ino == pm->ino;
	if (same_file && sb.st_size == pm->size && mtime == pm->mtime_ns)
		return 0;
	if (pm->have_file &&
	    (!same_file || (uint64_t)sb.st_size < pm->offset || !same_ends(pm, fd))) {
		reset(pm);
		st->rereads++;
	}
	pm->have_file = true;
	pm->dev = sb.st_dev;
	pm->ino = sb.st_ino;
	pm->size = sb.st_size;
	pm->mtime_ns = mtime;
	limit = (uint64_t)sb.st_size;
	if (limit > PERF_MAP_MAX_BYTES) {
		limit = PERF_MAP_MAX_BYTES;
		if (!pm->capped)
			st->too_big++;
		pm->capped = true;
	}
	if ((pm->skipping ? pm->scan : pm->offset) >= limit)
		return 0;
	before = pm->offset;
	err = read_lines(pm, fd, limit, st);
	if (pm->offset > before) {
		st->reads++;
		remember_ends(pm, fd);
	}
	return err;
}

/* --- the process's file */

struct proc_ids {
	uint32_t nspid; /* its pid in its own pid namespace */
	uint32_t uids[4];
	unsigned int nr_uids;
};

/* where the line of /proc/PID/status that begins with @key goes on; NULL: none */
static const char *status_line(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && strncmp(p, key, klen)) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return p ? p + klen : NULL;
}

/* the next number of a status line, after blanks (never past its end) */
static bool next_number(const char **p, unsigned long *v)
{
	const char *q = *p;
	unsigned long x = 0;

	while (is_blank(*q))
		q++;
	if (*q < '0' || *q > '9')
		return false;
	for (; *q >= '0' && *q <= '9'; q++) {
		if (x > (UINT32_MAX - 9) / 10)
			return false;
		x = x * 10 + (unsigned long)(*q - '0');
	}
	*p = q;
	*v = x;
	return true;
}

static int read_ids(pid_t pid, struct proc_ids *ids)
{
	char path[64], text[STATUS_MAX];
	unsigned long v;
	const char *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	n = read_small(path, text, sizeof(text) - 1);
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	text[n] = '\0';
	ids->nspid = (uint32_t)pid;
	ids->nr_uids = 0;
	/* NSpid: its pid in every namespace from ours in, its own last (Linux 4.1) */
	p = status_line(text, "NSpid:");
	while (p && next_number(&p, &v))
		if (v && v <= INT32_MAX)
			ids->nspid = (uint32_t)v;
	/* Uid: real, effective, saved, filesystem */
	p = status_line(text, "Uid:");
	while (p && ids->nr_uids < 4 && next_number(&p, &v))
		ids->uids[ids->nr_uids++] = (uint32_t)v;
	return 0;
}

static bool owner_ok(const struct stat *sb, const struct proc_ids *ids)
{
	unsigned int i;

	if (!sb->st_uid)
		return true;
	for (i = 0; i < ids->nr_uids; i++)
		if (sb->st_uid == ids->uids[i])
			return true;
	return false;
}

static void refuse(struct perf_map *pm, unsigned int why, uint64_t *counter)
{
	if (!(pm->refused & why))
		(*counter)++;
	pm->refused |= why;
}

int perf_map__refresh(struct perf_map *pm, struct perf_map_stats *st)
{
	struct proc_ids ids;
	char path[64];
	struct stat sb;
	int err, root, fd;

	err = read_ids(pm->pid, &ids);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", ids.nspid);
	root = proc_root_open(pm->pid);
	if (root < 0)
		return root;
	fd = safe_open_in_root_nofollow(root, path, UINT64_MAX, &sb);
	close(root);
	if (fd == -EINVAL)
		refuse(pm, REFUSED_NOT_REGULAR, &st->not_regular);
	if (fd < 0)
		return fd;
	if (!owner_ok(&sb, &ids)) {
		refuse(pm, REFUSED_NOT_OWNER, &st->not_owner);
		close(fd);
		return -EPERM;
	}
	err = perf_map__read_fd(pm, fd, st);
	close(fd);
	return err;
}

/* --- names */

const char *perf_map__lookup(const struct perf_map *pm, uint64_t addr)
{
	const struct perf_map_range *r = RANGE_FIND(pm->ranges, pm->nr_ranges, start, end, addr);

	return r ? pm->pool + r->name : NULL;
}

const struct perf_map_range *perf_map__ranges(const struct perf_map *pm, size_t *nr)
{
	*nr = pm->nr_ranges;
	return pm->ranges;
}

const char *perf_map__name(const struct perf_map *pm, const struct perf_map_range *r)
{
	return pm->pool + r->name;
}

size_t perf_map__lines(const struct perf_map *pm)
{
	return pm->lines;
}

size_t perf_map__bytes(const struct perf_map *pm)
{
	return pm->charged;
}
