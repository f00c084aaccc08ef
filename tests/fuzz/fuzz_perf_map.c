// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: perf_map__read_fd() on hostile text.  The first byte
 * says where the file is cut; the rest is the file, read in one go by one
 * map, and by another in two reads (the file grown between them, as a JIT
 * appends).  Beyond "no crash", both must name every address alike, the
 * ranges must be sorted and not overlap, and each address must be named
 * by the latest good line covering it, as an oracle that parses the lines
 * its own way (perf_map.h's rules) finds it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/perf_map.h"

struct oracle_line {
	uint64_t start, end;
	const char *name;
	size_t name_len;
};

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* hex at @p[*i], "0x" allowed, at most 16 significant digits */
static bool oracle_hex(const char *p, size_t len, size_t *i, uint64_t *v)
{
	size_t k = *i, sig = 0, digits = 0;
	uint64_t x = 0;

	if (k + 1 < len && p[k] == '0' && (p[k + 1] == 'x' || p[k + 1] == 'X'))
		k += 2;
	for (; k < len; k++, digits++) {
		char c = p[k];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;

		if (d < 0)
			break;
		if (x || d)
			sig++;
		x = x * 16 + (uint64_t)d;
	}
	if (!digits || sig > 16)
		return false;
	*i = k;
	*v = x;
	return true;
}

static bool oracle_parse(const char *p, size_t len, struct oracle_line *l)
{
	uint64_t size;
	size_t i = 0, k;

	if (len > PERF_MAP_MAX_LINE)
		return false;
	for (k = 0; k < len; k++)
		if ((unsigned char)p[k] < 0x20 ? p[k] != '\t' : p[k] == 0x7f)
			return false;
	if (!oracle_hex(p, len, &i, &l->start) || i >= len || !blank(p[i]))
		return false;
	while (i < len && blank(p[i]))
		i++;
	if (!oracle_hex(p, len, &i, &size) || (i < len && !blank(p[i])))
		return false;
	/* the name: after one blank; not blank itself */
	for (k = i + 1; k < len && blank(p[k]); k++)
		;
	if (k >= len)
		return false;
	size = size ? size : 1;
	if (l->start + size < l->start || l->start + size == 0)
		return false;
	l->end = l->start + size;
	l->name = p + i + 1;
	l->name_len = len - (i + 1);
	return true;
}

/* the name the latest good line covering @addr gives it, NULL when none */
static const struct oracle_line *oracle_lookup(const struct oracle_line *l, size_t n, uint64_t addr)
{
	while (n--)
		if (l[n].start <= addr && addr < l[n].end)
			return &l[n];
	return NULL;
}

static struct perf_map *read_map(const uint8_t *text, size_t len, size_t cut)
{
	struct perf_map_stats st = {};
	struct perf_map *pm = perf_map__new(getpid(), NULL);
	int fd = memfd_create("fuzz_perf_map", MFD_CLOEXEC);

	if (!pm || fd < 0)
		abort();
	if (cut && write(fd, text, cut) != (ssize_t)cut)
		abort();
	if (cut && perf_map__read_fd(pm, fd, &st))
		abort();
	if (len > cut && write(fd, text + cut, len - cut) != (ssize_t)(len - cut))
		abort();
	if (perf_map__read_fd(pm, fd, &st))
		abort();
	close(fd);
	return pm;
}

static void check(const struct perf_map *one, const struct perf_map *two,
		  const struct oracle_line *lines, size_t n, uint64_t addr)
{
	const char *a = perf_map__lookup(one, addr), *b = perf_map__lookup(two, addr);
	const struct oracle_line *want = oracle_lookup(lines, n, addr);

	if (!a != !b || (a && strcmp(a, b)))
		abort(); /* read in two goes, named otherwise */
	if (!want != !a)
		abort();
	if (want && (strlen(a) != want->name_len || memcmp(a, want->name, want->name_len)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct perf_map_range *r;
	struct perf_map *one, *two;
	struct oracle_line *lines;
	const char *text, *p, *nl;
	size_t len, cut, n = 0, i, nr;

	if (!size)
		return 0;
	text = (const char *)data + 1;
	len = size - 1;
	cut = len ? (size_t)data[0] * len / 255 : 0;
	one = read_map(data + 1, len, 0);
	two = read_map(data + 1, len, cut);

	lines = calloc(len / 2 + 1, sizeof(*lines));
	if (!lines)
		abort();
	for (p = text; (nl = memchr(p, '\n', len - (size_t)(p - text))); p = nl + 1)
		if (oracle_parse(p, (size_t)(nl - p), &lines[n]))
			n++;
	if (perf_map__lines(one) != n || perf_map__lines(two) != n)
		abort();

	r = perf_map__ranges(one, &nr);
	for (i = 0; i < nr; i++) {
		if (r[i].start >= r[i].end || (i && r[i - 1].end > r[i].start))
			abort();
		check(one, two, lines, n, r[i].start);
		check(one, two, lines, n, r[i].end - 1);
	}
	for (i = 0; i < n; i++) {
		check(one, two, lines, n, lines[i].start);
		check(one, two, lines, n, lines[i].start - 1);
		check(one, two, lines, n, lines[i].end);
		check(one, two, lines, n, lines[i].end - 1);
	}
	free(lines);
	perf_map__free(one);
	perf_map__free(two);
	return 0;
}
