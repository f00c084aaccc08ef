// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbols/python_code against CPython itself: location tables decoded as
 * PyCode_Addr2Line() decodes them (tests/unit/python_code_fixture.py prints
 * both), code objects named from a live python3.11's memory, and hostile
 * objects in a fake memory image refused or bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"
#include "symbols/python_code.h"
#include "util/hex.h"
#include "util/utf8.h"

#define PYTHON "python3.11"

/* one "fn" line of the fixture and its "lines" line */
struct fx_fn {
	char name[32];
	uint64_t code, filename, qualname;
	int32_t firstlineno;
	uint8_t *qualname_utf8, *filename_utf8, *linetable;
	size_t qualname_len, filename_len, linetable_len;
	int *lines;
	size_t nr_lines;
};

struct fx {
	FILE *fp;
	uint32_t version;
	pid_t pid;
	uint64_t code_type, unicode_type, bytes_type, notcode;
	struct fx_fn *fns;
	size_t nr_fns;
};

/* "x" + hex into a malloc()ed buffer */
static uint8_t *unhex(const char *tok, size_t *len)
{
	size_t n, i;
	uint8_t *b;

	assert_true(tok[0] == 'x');
	tok++;
	n = strlen(tok);
	assert_true(n % 2 == 0);
	b = malloc(n / 2 + 1);
	assert_non_null(b);
	for (i = 0; i < n / 2; i++) {
		assert_true(hex_digit(tok[2 * i]) >= 0 && hex_digit(tok[2 * i + 1]) >= 0);
		b[i] = hex_digit(tok[2 * i]) << 4 | hex_digit(tok[2 * i + 1]);
	}
	*len = n / 2;
	return b;
}

static void fx_parse_fn(struct fx *fx, char *line)
{
	char *tok[9], *save = NULL;
	struct fx_fn *f;
	int i;

	fx->fns = realloc(fx->fns, (fx->nr_fns + 1) * sizeof(*fx->fns));
	assert_non_null(fx->fns);
	f = &fx->fns[fx->nr_fns++];
	memset(f, 0, sizeof(*f));
	for (i = 0; i < 9; i++) {
		tok[i] = strtok_r(i ? NULL : line, " \n", &save);
		assert_non_null(tok[i]);
	}
	snprintf(f->name, sizeof(f->name), "%s", tok[1]);
	f->code = strtoull(tok[2], NULL, 0);
	f->firstlineno = (int32_t)strtol(tok[3], NULL, 0);
	f->filename = strtoull(tok[4], NULL, 0);
	f->qualname = strtoull(tok[5], NULL, 0);
	f->qualname_utf8 = unhex(tok[6], &f->qualname_len);
	f->filename_utf8 = unhex(tok[7], &f->filename_len);
	f->linetable = unhex(tok[8], &f->linetable_len);
}

static void fx_parse_lines(struct fx *fx, char *line)
{
	struct fx_fn *f = &fx->fns[fx->nr_fns - 1];
	char *p = line + strlen("lines");
	size_t i;

	f->nr_lines = strtoul(p, &p, 10);
	f->lines = calloc(f->nr_lines + 1, sizeof(*f->lines));
	assert_non_null(f->lines);
	for (i = 0; i < f->nr_lines; i++)
		f->lines[i] = (int)strtol(p, &p, 10);
}

static void fx_end(struct fx *fx)
{
	size_t i;

	/* a live fixture exits at its next write to the closed pipe */
	pclose(fx->fp);
	for (i = 0; i < fx->nr_fns; i++) {
		free(fx->fns[i].qualname_utf8);
		free(fx->fns[i].filename_utf8);
		free(fx->fns[i].linetable);
		free(fx->fns[i].lines);
	}
	free(fx->fns);
}

/*
 * Run the fixture (in @mode, with @arg) and read what it says up to "ready"
 * or its end.  Skips the test when python3.11 is not there, removing @dir
 * (NULL: none) first.
 */
static void fx_run(struct fx *fx, const char *mode, const char *arg, char *dir)
{
	const char *src = getenv("SRCDIR");
	char cmd[PATH_MAX + 256], *line = NULL;
	size_t cap = 0;

	memset(fx, 0, sizeof(*fx));
	snprintf(cmd, sizeof(cmd), PYTHON " '%s/tests/unit/python_code_fixture.py' %s '%s'",
		 src && *src ? src : ".", mode, arg);
	fx->fp = popen(cmd, "r");
	assert_non_null(fx->fp);
	while (getline(&line, &cap, fx->fp) > 0) {
		if (!strncmp(line, "version ", 8))
			fx->version = strtoul(line + 8, NULL, 0);
		else if (!strncmp(line, "pid ", 4))
			fx->pid = atoi(line + 4);
		else if (!strncmp(line, "types ", 6))
			assert_int_equal(sscanf(line + 6, "%" SCNu64 " %" SCNu64 " %" SCNu64,
						&fx->code_type, &fx->unicode_type, &fx->bytes_type),
					 3);
		else if (!strncmp(line, "notcode ", 8))
			fx->notcode = strtoull(line + 8, NULL, 0);
		else if (!strncmp(line, "fn ", 3))
			fx_parse_fn(fx, line);
		else if (!strncmp(line, "lines ", 6))
			fx_parse_lines(fx, line);
		else if (!strncmp(line, "ready", 5))
			break;
		else
			fail_msg("fixture: %s", line);
	}
	free(line);
	if (!fx->version) {
		print_message("SKIP: %s did not run (%s)\n", PYTHON, cmd);
		pclose(fx->fp);
		fixture_tmpdir_remove(dir);
		skip();
	}
	if (!python_layout__find(fx->version)) {
		print_message("SKIP: %s is %#x: no layout\n", PYTHON, fx->version);
		fx_end(fx);
		fixture_tmpdir_remove(dir);
		skip();
	}
}

/* every code unit's line as CPython computes it; the entry kinds met in @seen */
static void check_lines(const struct fx_fn *f, const uint8_t *table, size_t len, int seen[16])
{
	size_t i;

	for (i = 0; i < f->nr_lines; i++) {
		int got = python_code__line(table, len, f->firstlineno, i);

		if (got != f->lines[i])
			fail_msg("%s: unit %zu: line %d, CPython says %d", f->name, i, got,
				 f->lines[i]);
	}
	/* past the end, or not known: the first line */
	assert_int_equal(python_code__line(table, len, f->firstlineno, f->nr_lines),
			 f->firstlineno);
	assert_int_equal(python_code__line(table, len, f->firstlineno, PYTHON_INSTR_NONE),
			 f->firstlineno);
	for (i = 0; i < len; i++)
		if (table[i] & 0x80)
			seen[table[i] >> 3 & 15]++;
}

static void python_code__line__stdlib_tables__match_addr2line(void **state)
{
	int seen[16] = {0}, code, units = 0;
	struct fx fx;
	size_t i;

	fx_run(&fx, "lines", "-", NULL);
	assert_true(fx.nr_fns > 100);
	for (i = 0; i < fx.nr_fns; i++) {
		check_lines(&fx.fns[i], fx.fns[i].linetable, fx.fns[i].linetable_len, seen);
		units += fx.fns[i].nr_lines;
	}
	/* the tables hold every kind of entry: each was decoded at least once */
	for (code = 0; code < 16; code++)
		print_message("entry code %2d: %d\n", code, seen[code]);
	assert_true(seen[0] + seen[1] + seen[2] > 0);
	for (code = 10; code <= 15; code++)
		assert_true(seen[code] > 0);
	print_message("%zu code objects, %d code units: every line as CPython's\n", fx.nr_fns,
		      units);
	fx_end(&fx);
}

/* 3.9's co_lnotab, decoded as its PyCode_Addr2Line() does (by hand: byte
 * offsets 0, 6, 14, 18 start lines 11, 12, 14, 12 of a function at line 10) */
static void python_code__lnotab_line__increments__as_addr2line(void **state)
{
	static const uint8_t tab[] = {0, 1, 6, 1, 8, 2, 4, 0xfe, 7};

	assert_int_equal(python_code__lnotab_line(tab, sizeof(tab), 10, 0), 11);
	assert_int_equal(python_code__lnotab_line(tab, sizeof(tab), 10, 2), 11);
	assert_int_equal(python_code__lnotab_line(tab, sizeof(tab), 10, 3), 12);
	assert_int_equal(python_code__lnotab_line(tab, sizeof(tab), 10, 7), 14);
	assert_int_equal(python_code__lnotab_line(tab, sizeof(tab), 10, 9), 12);
	assert_int_equal(python_code__lnotab_line(tab, sizeof(tab), 10, 1000), 12);
	assert_int_equal(python_code__lnotab_line(tab, sizeof(tab), 10, PYTHON_INSTR_NONE), 10);
	assert_int_equal(python_code__lnotab_line(NULL, 0, 10, 5), 10);
	/* a line past INT_MAX */
	assert_int_equal(python_code__lnotab_line(tab, sizeof(tab), INT_MAX, 0), -1);
}

static void python_code__line__malformed__minus_one_or_first(void **state)
{
	/* one unit on line 10 + 3 (code 13: svarint 6), two units on line 13 - 2 (svarint 5) */
	const uint8_t good[] = {0x80 | 13 << 3, 6, 0x80 | 13 << 3 | 1, 5};
	const uint8_t no_lead[] = {0x10, 0x80};
	const uint8_t cut_varint[] = {0x80 | 13 << 3, 0x40};
	const uint8_t varint_then_entry[] = {0x80 | 13 << 3, 0x41, 0x80};
	const uint8_t long_varint[] = {0x80 | 14 << 3, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x01};
	const uint8_t negative[] = {0x80 | 13 << 3, 41}; /* -20 */
	const uint8_t none[] = {0x80 | 15 << 3 | 1, 0x80 | 11 << 3, 0, 0};
	const uint8_t huge[] = {0x80 | 13 << 3, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x03}; /* +2^31-1 */

	assert_int_equal(python_code__line(good, sizeof(good), 10, 0), 13);
	assert_int_equal(python_code__line(good, sizeof(good), 10, 1), 11);
	assert_int_equal(python_code__line(good, sizeof(good), 10, 2), 11);
	assert_int_equal(python_code__line(good, sizeof(good), 10, 3), 10);
	assert_int_equal(python_code__line(good, 2, 10, 1), 10);
	assert_int_equal(python_code__line(NULL, 0, 10, 0), 10);
	assert_int_equal(python_code__line(no_lead, sizeof(no_lead), 10, 0), -1);
	assert_int_equal(python_code__line(cut_varint, sizeof(cut_varint), 10, 0), -1);
	assert_int_equal(python_code__line(varint_then_entry, sizeof(varint_then_entry), 10, 0),
			 -1);
	assert_int_equal(python_code__line(long_varint, sizeof(long_varint), 10, 0), -1);
	assert_int_equal(python_code__line(negative, sizeof(negative), 10, 0), -1);
	assert_int_equal(python_code__line(huge, sizeof(huge), 10, 0), -1);
	/* no location: -1, and the line goes on from where it was */
	assert_int_equal(python_code__line(none, sizeof(none), 10, 1), -1);
	assert_int_equal(python_code__line(none, sizeof(none), 10, 2), 11);
}

static int read_proc_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(*(int *)ctx, buf, len, (off_t)addr);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static void python_code__name__live_process__names_and_lines(void **state)
{
	const struct python_layout *l;
	struct python_code_name n;
	char *dir = fixture_tmpdir("pycode"), path[64];
	int fd, seen[16] = {0};
	struct fx fx;
	size_t i;

	fx_run(&fx, "live", dir, dir);
	l = python_layout__find(fx.version);
	assert_int_equal(fx.nr_fns, 7);
	snprintf(path, sizeof(path), "/proc/%d/mem", fx.pid);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		print_message("SKIP: %s: %s\n", path, strerror(errno));
		fx_end(&fx);
		fixture_tmpdir_remove(dir);
		skip();
	}
	for (i = 0; i < fx.nr_fns; i++) {
		const struct fx_fn *f = &fx.fns[i];
		uint32_t check = python_code_check(f->firstlineno, f->filename, f->qualname);

		assert_int_equal(python_code__name(l, read_proc_mem, &fd, fx.code_type,
						   fx.unicode_type, fx.bytes_type, f->code, check,
						   &n),
				 0);
		print_message("%-7s %.60s%s  %s:%d\n", f->name, n.qualname,
			      strlen(n.qualname) > 60 ? "..." : "", n.filename, n.firstlineno);
		assert_int_equal(strlen(n.qualname), f->qualname_len);
		assert_memory_equal(n.qualname, f->qualname_utf8, f->qualname_len);
		assert_int_equal(strlen(n.filename), f->filename_len);
		assert_memory_equal(n.filename, f->filename_utf8, f->filename_len);
		assert_true(utf8_valid(n.qualname, strlen(n.qualname)));
		assert_true(utf8_valid(n.filename, strlen(n.filename)));
		assert_int_equal(n.firstlineno, f->firstlineno);
		assert_int_equal(n.linetable_len, f->linetable_len);
		assert_memory_equal(n.linetable, f->linetable, f->linetable_len);
		check_lines(f, n.linetable, n.linetable_len, seen);
		python_code_name__free(&n);
		assert_null(n.qualname);

		/* another check: another object than the sampler saw */
		assert_int_equal(python_code__name(l, read_proc_mem, &fd, fx.code_type,
						   fx.unicode_type, fx.bytes_type, f->code,
						   check ^ 1, &n),
				 -ESTALE);
	}
	/* a str is no code object; nothing is mapped at 16 */
	assert_int_equal(python_code__name(l, read_proc_mem, &fd, fx.code_type, fx.unicode_type,
					   fx.bytes_type, fx.notcode, 0, &n),
			 -EINVAL);
	assert_true(python_code__name(l, read_proc_mem, &fd, fx.code_type, fx.unicode_type,
				      fx.bytes_type, 16, 0, &n) < 0);
	/* the wrong type addresses: the code object is refused, then its name */
	assert_int_equal(python_code__name(l, read_proc_mem, &fd, fx.unicode_type, fx.unicode_type,
					   fx.bytes_type, fx.fns[0].code, 0, &n),
			 -EINVAL);
	assert_int_equal(
		python_code__name(l, read_proc_mem, &fd, fx.code_type, fx.bytes_type, fx.bytes_type,
				  fx.fns[0].code,
				  python_code_check(fx.fns[0].firstlineno, fx.fns[0].filename,
						    fx.fns[0].qualname),
				  &n),
		-EINVAL);
	close(fd);
	fx_end(&fx);
	fixture_tmpdir_remove(dir);
}

/* --- a fake memory image: hostile objects built by hand */

#define IMG_BASE     0x10000
#define IMG_CODE     (IMG_BASE + 0x000)
#define IMG_BYTES    (IMG_BASE + 0x200)
#define IMG_QUALNAME (IMG_BASE + 0x1000) /* room for 3000 bytes */
#define IMG_FILENAME (IMG_BASE + 0x2000) /* room for 20 KiB */
#define CODE_TYPE    0x1000
#define STR_TYPE     0x2000
#define BYTES_TYPE   0x3000

struct image {
	uint8_t mem[0x7000];
};

static int read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *img = ctx;

	if (addr < IMG_BASE || addr - IMG_BASE > sizeof(img->mem) ||
	    len > sizeof(img->mem) - (addr - IMG_BASE))
		return -EFAULT;
	memcpy(buf, img->mem + (addr - IMG_BASE), len);
	return 0;
}

static void put64(struct image *img, uint64_t addr, uint64_t v)
{
	memcpy(img->mem + (addr - IMG_BASE), &v, sizeof(v));
}

static void put32(struct image *img, uint64_t addr, uint32_t v)
{
	memcpy(img->mem + (addr - IMG_BASE), &v, sizeof(v));
}

/* a str of @len units of @kind at @at, @data its bytes */
static void put_str(struct image *img, const struct python_layout *l, uint64_t at, int64_t len,
		    uint32_t state, const void *data, size_t bytes)
{
	bool ascii = state >> l->unicode_ascii_bit & 1;

	put64(img, at + l->code_type_off, STR_TYPE);
	put64(img, at + l->unicode_length, (uint64_t)len);
	put32(img, at + l->unicode_state, state);
	memcpy(img->mem + (at - IMG_BASE) +
		       (ascii ? l->unicode_ascii_data : l->unicode_compact_data),
	       data, bytes);
}

static uint32_t state_of(const struct python_layout *l, unsigned int kind, bool compact, bool ascii)
{
	return kind << l->unicode_kind_shift | (uint32_t)compact << l->unicode_compact_bit |
	       (uint32_t)ascii << l->unicode_ascii_bit;
}

static void image_init(struct image *img, const struct python_layout *l)
{
	memset(img, 0, sizeof(*img));
	put64(img, IMG_CODE + l->code_type_off, CODE_TYPE);
	put32(img, IMG_CODE + l->code_firstlineno, 7);
	put64(img, IMG_CODE + l->code_qualname, IMG_QUALNAME);
	put64(img, IMG_CODE + l->code_filename, IMG_FILENAME);
	put64(img, IMG_CODE + l->code_linetable, IMG_BYTES);
	put_str(img, l, IMG_QUALNAME, 1, state_of(l, 1, true, true), "f", 1);
	put_str(img, l, IMG_FILENAME, 4, state_of(l, 1, true, true), "x.py", 4);
	put64(img, IMG_BYTES + l->code_type_off, BYTES_TYPE);
	put64(img, IMG_BYTES + l->bytes_size, 2);
	memcpy(img->mem + (IMG_BYTES - IMG_BASE) + l->bytes_data, "\x80\x00", 2);
}

static int image_name(struct image *img, const struct python_layout *l, struct python_code_name *n)
{
	uint32_t check = python_code_check(7, IMG_FILENAME, IMG_QUALNAME);

	return python_code__name(l, read_image, img, CODE_TYPE, STR_TYPE, BYTES_TYPE, IMG_CODE,
				 check, n);
}

static void python_code__name__hostile_objects__refused_or_bounded(void **state)
{
	const struct python_layout *l = python_layout__find(0x030b02f0);
	const uint16_t ucs2[] = {'a', 0xd800, 0, 'b'};
	const uint32_t ucs4[] = {0x10330, 0x110000, 'c'};
	static struct image img; /* 28 KiB: not on the stack */
	struct python_code_name n;

	image_init(&img, l);
	assert_int_equal(image_name(&img, l, &n), 0);
	assert_string_equal(n.qualname, "f");
	assert_string_equal(n.filename, "x.py");
	assert_int_equal(n.linetable_len, 2);
	python_code_name__free(&n);
	python_code_name__free(NULL);

	/* surrogates, NUL, past U+10FFFF, high bytes in "ASCII": U+FFFD */
	put_str(&img, l, IMG_QUALNAME, 4, state_of(l, 2, true, false), ucs2, sizeof(ucs2));
	put_str(&img, l, IMG_FILENAME, 3, state_of(l, 4, true, false), ucs4, sizeof(ucs4));
	assert_int_equal(image_name(&img, l, &n), 0);
	assert_string_equal(n.qualname, "a\xef\xbf\xbd\xef\xbf\xbd"
					"b");
	assert_string_equal(n.filename, "\xf0\x90\x8c\xb0\xef\xbf\xbd"
					"c");
	python_code_name__free(&n);
	put_str(&img, l, IMG_QUALNAME, 2, state_of(l, 1, true, true), "\xff\x80", 2);
	assert_int_equal(image_name(&img, l, &n), 0);
	assert_string_equal(n.qualname, "\xef\xbf\xbd\xef\xbf\xbd");
	python_code_name__free(&n);
	/* control characters (an escape sequence, DEL, a C1 one): U+FFFD */
	put_str(&img, l, IMG_QUALNAME, 5, state_of(l, 1, true, false),
		"a\x1b\x7f\x85"
		"b",
		5);
	assert_int_equal(image_name(&img, l, &n), 0);
	assert_string_equal(n.qualname, "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
					"b");
	python_code_name__free(&n);

	/* longer than the bound: cut and marked, and only the bound read (the
	 * lengths claim more than the image holds) */
	memset(img.mem + 0x1000 + l->unicode_ascii_data, 'g', 3000);
	put_str(&img, l, IMG_QUALNAME, 1 << 30, state_of(l, 1, true, true), "g", 1);
	memset(img.mem + 0x2000 + l->unicode_ascii_data, 'h', 5000);
	put_str(&img, l, IMG_FILENAME, 5000, state_of(l, 1, true, true), "h", 1);
	assert_int_equal(image_name(&img, l, &n), 0);
	assert_int_equal(strlen(n.qualname), PYTHON_CODE_MAX_NAME + 3);
	assert_string_equal(n.qualname + PYTHON_CODE_MAX_NAME, PYTHON_CODE_CUT);
	assert_int_equal(strlen(n.filename), PYTHON_CODE_MAX_FILENAME + 3);
	assert_string_equal(n.filename + PYTHON_CODE_MAX_FILENAME, PYTHON_CODE_CUT);
	python_code_name__free(&n);
	/* at the bound exactly: whole, no mark */
	put_str(&img, l, IMG_QUALNAME, PYTHON_CODE_MAX_NAME, state_of(l, 1, true, true), "g", 1);
	put_str(&img, l, IMG_FILENAME, PYTHON_CODE_MAX_FILENAME, state_of(l, 1, true, true), "h",
		1);
	assert_int_equal(image_name(&img, l, &n), 0);
	assert_int_equal(strlen(n.qualname), PYTHON_CODE_MAX_NAME);
	assert_int_equal(strlen(n.filename), PYTHON_CODE_MAX_FILENAME);
	python_code_name__free(&n);
	/* an unreadable name fails the whole */
	put64(&img, IMG_CODE + l->code_filename, 8);
	assert_int_equal(python_code__name(l, read_image, &img, CODE_TYPE, STR_TYPE, BYTES_TYPE,
					   IMG_CODE, python_code_check(7, 8, IMG_QUALNAME), &n),
			 -EFAULT);

	/* not compact, a kind that is none, ASCII of kind 2, negative length */
	image_init(&img, l);
	put_str(&img, l, IMG_QUALNAME, 1, state_of(l, 1, false, false), "f", 1);
	assert_int_equal(image_name(&img, l, &n), -EOPNOTSUPP);
	put_str(&img, l, IMG_QUALNAME, 1, state_of(l, 3, true, false), "f", 1);
	assert_int_equal(image_name(&img, l, &n), -EINVAL);
	put_str(&img, l, IMG_QUALNAME, 1, state_of(l, 0, true, false), "f", 1);
	assert_int_equal(image_name(&img, l, &n), -EINVAL);
	put_str(&img, l, IMG_QUALNAME, 1, state_of(l, 2, true, true), "f", 1);
	assert_int_equal(image_name(&img, l, &n), -EINVAL);
	put_str(&img, l, IMG_QUALNAME, -1, state_of(l, 1, true, true), "f", 1);
	assert_int_equal(image_name(&img, l, &n), -EINVAL);

	/* a line table too long is not read, a negative one refused, a str refused */
	image_init(&img, l);
	put64(&img, IMG_BYTES + l->bytes_size, PYTHON_CODE_MAX_LINETABLE + 1);
	assert_int_equal(image_name(&img, l, &n), 0);
	assert_null(n.linetable);
	assert_int_equal(n.linetable_len, 0);
	python_code_name__free(&n);
	put64(&img, IMG_BYTES + l->bytes_size, (uint64_t)-5);
	assert_int_equal(image_name(&img, l, &n), -EINVAL);
	put64(&img, IMG_CODE + l->code_linetable, IMG_FILENAME);
	assert_int_equal(image_name(&img, l, &n), -EINVAL);

	/* a name pointer moved since the sample: the check differs */
	image_init(&img, l);
	put64(&img, IMG_CODE + l->code_qualname, IMG_FILENAME);
	assert_int_equal(image_name(&img, l, &n), -ESTALE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(python_code__line__stdlib_tables__match_addr2line),
		cmocka_unit_test(python_code__line__malformed__minus_one_or_first),
		cmocka_unit_test(python_code__lnotab_line__increments__as_addr2line),
		cmocka_unit_test(python_code__name__live_process__names_and_lines),
		cmocka_unit_test(python_code__name__hostile_objects__refused_or_bounded),
	};

	return cmocka_run_group_tests_name("python_code", tests, NULL, NULL);
}
