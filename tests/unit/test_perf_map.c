// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/symbols/perf_map.c: perf maps written into temporary
 * files and read through perf_map__read_fd(), and this process's own
 * /tmp/perf-PID.map read through perf_map__refresh() (opened inside our own
 * root, as the collector opens a target's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"
#include "symbols/perf_map.h"
#include "symbols/symbolizer.h"

struct fixture {
	char *dir;
	char path[PATH_MAX];
	int fd; /* open on path, for perf_map__read_fd() */
	struct perf_map *pm;
	struct perf_map_stats st;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->dir = fixture_tmpdir("perf-map");
	snprintf(f->path, sizeof(f->path), "%s/perf.map", f->dir);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	f->pm = perf_map__new(getpid(), NULL);
	if (f->fd < 0 || !f->pm)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	perf_map__free(f->pm);
	close(f->fd);
	fixture_tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/* append @len bytes to the map */
static void append_bytes(struct fixture *f, const void *text, size_t len)
{
	assert_int_equal(pwrite(f->fd, text, len, lseek(f->fd, 0, SEEK_END)), (ssize_t)len);
}

static void append(struct fixture *f, const char *text)
{
	append_bytes(f, text, strlen(text));
}

static void read_map(struct fixture *f)
{
	assert_int_equal(perf_map__read_fd(f->pm, f->fd, &f->st), 0);
}

static void assert_name(const struct perf_map *pm, uint64_t addr, const char *want)
{
	const char *got = perf_map__lookup(pm, addr);

	if (!want && got)
		fail_msg("0x%llx: named \"%s\", want no name", (unsigned long long)addr, got);
	if (want && (!got || strcmp(got, want)))
		fail_msg("0x%llx: named \"%s\", want \"%s\"", (unsigned long long)addr,
			 got ? got : "(none)", want);
}

static uint64_t skipped(const struct fixture *f)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < PERF_MAP_SKIP_MAX; i++)
		n += f->st.skipped[i];
	return n;
}

/* the ranges are sorted, do not overlap, and name something */
static void assert_ranges_sane(const struct perf_map *pm)
{
	const struct perf_map_range *r;
	size_t i, nr;

	r = perf_map__ranges(pm, &nr);
	for (i = 0; i < nr; i++) {
		assert_true(r[i].start < r[i].end);
		assert_true(!i || r[i - 1].end <= r[i].start);
		assert_true(perf_map__name(pm, &r[i])[0] != '\0');
	}
}

static void read_fd__node_and_jvm_lines__named_exactly_as_written(void **state)
{
	struct fixture *f = *state;

	append(f, "7ffb3efc6340 47c JS:*sortWork /tmp/pmx/w.js:1:18\n"
		  "0x00007fd860ecd7a0 0x0000000000000468 long Hot.sortWork(int)\n"
		  "3f00\t10\tLjava/util/TimSort;::mergeLo\n"
		  "4000 0 zero-sized\n"
		  "5000 10 trailing blanks  \n");
	read_map(f);
	assert_name(f->pm, 0x7ffb3efc6340, "JS:*sortWork /tmp/pmx/w.js:1:18");
	assert_name(f->pm, 0x7ffb3efc6340 + 0x47b, "JS:*sortWork /tmp/pmx/w.js:1:18");
	assert_name(f->pm, 0x7ffb3efc6340 + 0x47c, NULL);
	assert_name(f->pm, 0x7ffb3efc633f, NULL);
	assert_name(f->pm, 0x7fd860ecd7a0 + 0x100, "long Hot.sortWork(int)");
	assert_name(f->pm, 0x3f0f, "Ljava/util/TimSort;::mergeLo");
	/* a size of 0: its start alone, as perf's symbol of length 0 */
	assert_name(f->pm, 0x4000, "zero-sized");
	assert_name(f->pm, 0x4001, NULL);
	assert_name(f->pm, 0x5000, "trailing blanks  ");
	assert_int_equal(f->st.entries, 5);
	assert_int_equal(f->st.reads, 1);
	assert_int_equal(skipped(f), 0);
	assert_int_equal(perf_map__lines(f->pm), 5);
	assert_ranges_sane(f->pm);
}

static void read_fd__lines_without_name__skipped_counted(void **state)
{
	struct fixture *f = *state;

	append(f, "1000 10\n"
		  "2000 10 \n"
		  "3000 10 \t \n"
		  "4000 10 kept\n");
	read_map(f);
	assert_int_equal(f->st.skipped[PERF_MAP_SKIP_NO_NAME], 3);
	assert_int_equal(f->st.entries, 1);
	assert_name(f->pm, 0x1000, NULL);
	assert_name(f->pm, 0x2000, NULL);
	assert_name(f->pm, 0x4000, "kept");
}

static void read_fd__bad_hex__skipped_counted(void **state)
{
	struct fixture *f = *state;

	append(f, "zz00 10 a\n"		     /* not hex */
		  "1000 zz b\n"		     /* size not hex */
		  "10zz 10 c\n"		     /* junk after the address */
		  "1000 10z d\n"	     /* junk after the size */
		  "11112222333344445 10 e\n" /* 65 bits */
		  "fffffffffffffff0 20 f\n"  /* wraps */
		  "ffffffffffffffff 0 g\n"   /* its one byte wraps too */
		  "0x 10 h\n"		     /* a prefix and no digit */
		  "-1000 10 i\n"	     /* perf's strtoull takes a sign: not here */
		  "\n"			     /* blank */
		  "1000\n"		     /* no size */
		  "fffffffffffffff0 f last\n");
	read_map(f);
	assert_int_equal(f->st.skipped[PERF_MAP_SKIP_BAD_ADDRESS], 11);
	assert_int_equal(skipped(f), 11);
	assert_int_equal(f->st.entries, 1);
	assert_name(f->pm, 0x1000, NULL);
	assert_name(f->pm, 0xfffffffffffffffe, "last");
	assert_name(f->pm, 0xffffffffffffffff, NULL);
}

static void read_fd__overlapping_lines__the_later_one_wins(void **state)
{
	struct fixture *f = *state;

	append(f, "1000 1000 outer\n" /* [0x1000, 0x2000) */
		  "1800 100 inner\n"  /* [0x1800, 0x1900) */
		  "1000 100 head\n"   /* [0x1000, 0x1100): the same start as outer */
		  "3000 10 alone\n");
	read_map(f);
	assert_name(f->pm, 0x1000, "head");
	assert_name(f->pm, 0x10ff, "head");
	assert_name(f->pm, 0x1100, "outer");
	assert_name(f->pm, 0x1850, "inner");
	assert_name(f->pm, 0x1900, "outer");
	assert_name(f->pm, 0x1fff, "outer");
	assert_name(f->pm, 0x3000, "alone");
	assert_int_equal(f->st.overlapping, 3);
	assert_ranges_sane(f->pm);

	/* later reads win over earlier ones too: code put where other code was */
	append(f, "1f00 200 moved\n"
		  "1000 100 head2\n");
	read_map(f);
	assert_name(f->pm, 0x1000, "head2");
	assert_name(f->pm, 0x1100, "outer");
	assert_name(f->pm, 0x1eff, "outer");
	assert_name(f->pm, 0x1f00, "moved");
	assert_name(f->pm, 0x20ff, "moved");
	assert_name(f->pm, 0x2100, NULL);
	assert_name(f->pm, 0x1850, "inner");
	assert_int_equal(f->st.overlapping, 5);
	assert_int_equal(f->st.entries, 6);
	assert_ranges_sane(f->pm);
}

/*
 * Ten million lines (60 MB, within PERF_MAP_MAX_BYTES): every one is read
 * and counted, PERF_MAP_MAX_ENTRIES kept, the rest skipped as over the cap.
 * Sixteen addresses, each line overlapping those before it.
 */
static void read_fd__ten_million_lines__capped_and_counted(void **state)
{
	struct fixture *f = *state;
	const size_t lines = 10000000, per_chunk = 1 << 16;
	char *chunk, line[8];
	size_t i, done, nr;

	/* "X 1 f\n", X in 0..f: six bytes a line */
	chunk = malloc(per_chunk * 6);
	assert_non_null(chunk);
	for (i = 0; i < per_chunk; i++) {
		snprintf(line, sizeof(line), "%zx 1 f\n", i % 16);
		memcpy(chunk + i * 6, line, 6);
	}
	for (done = 0; done < lines; done += per_chunk)
		append_bytes(f, chunk, (lines - done < per_chunk ? lines - done : per_chunk) * 6);
	free(chunk);
	read_map(f);
	assert_int_equal(perf_map__lines(f->pm), PERF_MAP_MAX_ENTRIES);
	assert_int_equal(f->st.entries, PERF_MAP_MAX_ENTRIES);
	assert_int_equal(f->st.skipped[PERF_MAP_SKIP_OVER_CAP], lines - PERF_MAP_MAX_ENTRIES);
	assert_int_equal(skipped(f), lines - PERF_MAP_MAX_ENTRIES);
	assert_int_equal(f->st.too_big, 0);
	assert_name(f->pm, 0x0, "f");
	assert_name(f->pm, 0xf, "f");
	assert_name(f->pm, 0x10, NULL);
	assert_non_null(perf_map__ranges(f->pm, &nr));
	assert_int_equal(nr, 16);
	/* nothing new: nothing read, nothing counted twice */
	read_map(f);
	assert_int_equal(f->st.reads, 1);
	assert_int_equal(f->st.entries, PERF_MAP_MAX_ENTRIES);
}

/* more than a batch of distinct ranges, each named by its own line */
static void read_fd__many_ranges__each_named_by_its_line(void **state)
{
	struct fixture *f = *state;
	const unsigned int n = 3 * PERF_MAP_BATCH + 17;
	char *text, *p, want[32];
	unsigned int i;

	text = malloc((size_t)n * 40);
	assert_non_null(text);
	/* in a scrambled order: a JIT writes where its allocator puts code */
	for (i = 0, p = text; i < n; i++)
		p += sprintf(p, "%x 10 fn%u\n", ((i * 7919u) % n) * 0x20 + 0x100000, i);
	append_bytes(f, text, (size_t)(p - text));
	free(text);
	read_map(f);
	assert_int_equal(f->st.entries, n);
	assert_int_equal(f->st.overlapping, 0);
	for (i = 0; i < n; i += 997) {
		snprintf(want, sizeof(want), "fn%u", i);
		assert_name(f->pm, ((i * 7919u) % n) * 0x20 + 0x100000 + 0xf, want);
		assert_name(f->pm, ((i * 7919u) % n) * 0x20 + 0x100000 + 0x10, NULL);
	}
	assert_ranges_sane(f->pm);
}

static void read_fd__binary_junk__skipped_never_named(void **state)
{
	struct fixture *f = *state;
	unsigned char junk[4096];
	unsigned int seed = 1, i;
	size_t nr, k;
	const struct perf_map_range *r;

	append(f, "1000 10 before\n");
	for (i = 0; i < sizeof(junk); i++) {
		seed = seed * 1103515245 + 12345;
		junk[i] = (unsigned char)(seed >> 16);
	}
	append_bytes(f, junk, sizeof(junk));
	append(f, "\n2000 10 with\001control\n");
	append_bytes(f, "4000 10 nul\0after\n", 18);
	append(f, "5000 10 after\n");
	read_map(f);
	assert_name(f->pm, 0x1000, "before");
	assert_name(f->pm, 0x2000, NULL);
	assert_name(f->pm, 0x4000, NULL);
	assert_name(f->pm, 0x5000, "after");
	assert_true(f->st.skipped[PERF_MAP_SKIP_JUNK] >= 2);
	/* whatever the junk made of itself: names without a control byte */
	r = perf_map__ranges(f->pm, &nr);
	for (k = 0; k < nr; k++) {
		const unsigned char *s = (const unsigned char *)perf_map__name(f->pm, &r[k]);

		for (; *s; s++)
			assert_true(*s >= 0x20 || *s == '\t');
	}
	assert_ranges_sane(f->pm);
}

static void read_fd__line_too_long__skipped_counted(void **state)
{
	struct fixture *f = *state;
	size_t len = 3 * (256u << 10); /* longer than a read */
	char *name = malloc(len + 1);

	assert_non_null(name);
	memset(name, 'x', len);
	name[len] = '\0';
	append(f, "1000 10 short\n2000 10 ");
	append(f, name);
	append(f, "\n3000 10 ");
	append_bytes(f, name, PERF_MAP_MAX_LINE); /* with its prefix, just over */
	append(f, "\n4000 10 after\n");
	free(name);
	read_map(f);
	assert_int_equal(f->st.skipped[PERF_MAP_SKIP_TOO_LONG], 2);
	assert_name(f->pm, 0x1000, "short");
	assert_name(f->pm, 0x2000, NULL);
	assert_name(f->pm, 0x3000, NULL);
	assert_name(f->pm, 0x4000, "after");
}

/* a JIT appending as it compiles: each read takes the new complete lines */
static void read_fd__grown_file__new_lines_read_once(void **state)
{
	struct fixture *f = *state;

	append(f, "1000 10 first\n");
	read_map(f);
	append(f, "2000 10 second\n3000 10 thi");
	read_map(f);
	assert_name(f->pm, 0x2000, "second");
	/* a line being written waits for its newline */
	assert_name(f->pm, 0x3000, NULL);
	append(f, "rd\n");
	read_map(f);
	assert_name(f->pm, 0x1000, "first");
	assert_name(f->pm, 0x3000, "third");
	assert_int_equal(f->st.entries, 3);
	assert_int_equal(f->st.reads, 3);
	assert_int_equal(f->st.rereads, 0);
	assert_int_equal(skipped(f), 0);
}

/* jcmd Compiler.perfmap rewrites the file in place: read again, old names gone */
static void read_fd__rewritten_or_truncated__read_again_from_start(void **state)
{
	struct fixture *f = *state;

	append(f, "1000 10 old1\n2000 10 old2\n");
	read_map(f);
	/* rewritten, longer: the first bytes differ */
	assert_int_equal(ftruncate(f->fd, 0), 0);
	append(f, "1000 10 new1\n5000 10 new5\n6000 10 new6\n");
	read_map(f);
	assert_int_equal(f->st.rereads, 1);
	assert_name(f->pm, 0x1000, "new1");
	assert_name(f->pm, 0x2000, NULL);
	assert_name(f->pm, 0x6000, "new6");
	assert_int_equal(perf_map__lines(f->pm), 3);
	/* truncated */
	assert_int_equal(ftruncate(f->fd, 0), 0);
	append(f, "7000 10 seven\n");
	read_map(f);
	assert_int_equal(f->st.rereads, 2);
	assert_name(f->pm, 0x1000, NULL);
	assert_name(f->pm, 0x7000, "seven");
	assert_int_equal(perf_map__lines(f->pm), 1);
}

/* a file larger than PERF_MAP_MAX_BYTES: read up to it, counted once */
static void read_fd__past_max_bytes__read_up_to_it(void **state)
{
	struct fixture *f = *state;

	append(f, "1000 10 kept\n");
	/* a hole reads as NUL bytes: one line with no end */
	assert_int_equal(ftruncate(f->fd, PERF_MAP_MAX_BYTES + 4096), 0);
	read_map(f);
	assert_int_equal(f->st.too_big, 1);
	assert_name(f->pm, 0x1000, "kept");
	read_map(f);
	assert_int_equal(ftruncate(f->fd, PERF_MAP_MAX_BYTES + 8192), 0);
	read_map(f);
	assert_int_equal(f->st.too_big, 1);
	assert_int_equal(f->st.reads, 1);
}

static void read_fd__not_regular__einval(void **state)
{
	struct fixture *f = *state;
	int dir = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(dir >= 0);
	assert_int_equal(perf_map__read_fd(f->pm, dir, &f->st), -EINVAL);
	close(dir);
}

/* the names' memory is charged to the symbolizer, given back at free */
static void read_fd__symbolizer_budget__charged_and_bounded(void **state)
{
	struct fixture *f = *state;
	struct symbolizer *sym = symbolizer__new(0, 64u << 10);
	struct symbolizer_stats ss;
	struct perf_map *pm;
	char line[80];
	unsigned int i;

	assert_non_null(sym);
	for (i = 0; i < 4000; i++) {
		snprintf(line, sizeof(line), "%x 10 a_rather_long_name_for_function_%u\n",
			 0x10000 + i * 0x10, i);
		append(f, line);
	}
	pm = perf_map__new(getpid(), sym);
	assert_non_null(pm);
	assert_int_equal(perf_map__read_fd(pm, f->fd, &f->st), 0);
	symbolizer__stats(sym, &ss);
	assert_true(ss.bytes_charged > 0);
	assert_true(ss.bytes_charged <= 64u << 10);
	assert_int_equal(ss.bytes_charged, perf_map__bytes(pm));
	assert_true(f->st.skipped[PERF_MAP_SKIP_NO_MEMORY] > 0);
	assert_int_equal(f->st.entries + f->st.skipped[PERF_MAP_SKIP_NO_MEMORY], 4000);
	assert_name(pm, 0x10000, "a_rather_long_name_for_function_0");
	assert_ranges_sane(pm);
	perf_map__free(pm);
	symbolizer__stats(sym, &ss);
	assert_int_equal(ss.bytes_charged, 0);
	assert_int_equal(ss.bytes_cached, 0);
	symbolizer__free(sym);
}

/* --- this process's own /tmp/perf-PID.map, through perf_map__refresh() */

struct own_map {
	char path[64];
	struct perf_map *pm;
	struct perf_map_stats st;
};

static int own_setup(void **state)
{
	struct own_map *o = calloc(1, sizeof(*o));

	if (!o)
		return -1;
	snprintf(o->path, sizeof(o->path), "/tmp/perf-%d.map", (int)getpid());
	unlink(o->path);
	o->pm = perf_map__new(getpid(), NULL);
	*state = o;
	return o->pm ? 0 : -1;
}

static int own_teardown(void **state)
{
	struct own_map *o = *state;

	unlink(o->path);
	perf_map__free(o->pm);
	free(o);
	return 0;
}

/* write @text as the whole file at @path (a new inode when @replace) */
static void own_write(const char *path, const char *text, bool replace)
{
	char tmp[80];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(replace ? tmp : path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	if (replace)
		assert_int_equal(rename(tmp, path), 0);
}

static int own_refresh(struct own_map *o)
{
	int err = perf_map__refresh(o->pm, &o->st);

	if (err == -ENOSYS)
		skip(); /* no openat2 */
	return err;
}

static void refresh__no_map__enoent(void **state)
{
	struct own_map *o = *state;

	assert_int_equal(own_refresh(o), -ENOENT);
	assert_int_equal(o->st.reads, 0);
}

static void refresh__file_replaced_between_reads__read_again(void **state)
{
	struct own_map *o = *state;

	own_write(o->path, "1000 10 before\n2000 10 gone\n", false);
	assert_int_equal(own_refresh(o), 0);
	assert_name(o->pm, 0x1000, "before");
	/* another inode, the same size and first bytes: still another file */
	own_write(o->path, "1000 10 before\n3000 10 gone\n", true);
	assert_int_equal(own_refresh(o), 0);
	assert_int_equal(o->st.rereads, 1);
	assert_name(o->pm, 0x1000, "before");
	assert_name(o->pm, 0x2000, NULL);
	assert_name(o->pm, 0x3000, "gone");
	/* unchanged: nothing read */
	assert_int_equal(own_refresh(o), 0);
	assert_int_equal(o->st.reads, 2);
	/* gone: the names read stay */
	unlink(o->path);
	assert_int_equal(own_refresh(o), -ENOENT);
	assert_name(o->pm, 0x3000, "gone");
}

static void refresh__grown_file__new_lines_read(void **state)
{
	struct own_map *o = *state;
	FILE *fp;

	own_write(o->path, "1000 10 first\n", false);
	assert_int_equal(own_refresh(o), 0);
	/* the file's mtime may not move within a tick: its size does */
	fp = fopen(o->path, "ae");
	assert_non_null(fp);
	fputs("2000 10 second\n", fp);
	fclose(fp);
	assert_int_equal(own_refresh(o), 0);
	assert_name(o->pm, 0x1000, "first");
	assert_name(o->pm, 0x2000, "second");
	assert_int_equal(o->st.entries, 2);
	assert_int_equal(o->st.reads, 2);
	assert_int_equal(o->st.rereads, 0);
}

static void refresh__symlink_or_fifo__refused_counted_once(void **state)
{
	struct own_map *o = *state;
	char target[80];

	snprintf(target, sizeof(target), "%s.target", o->path);
	own_write(target, "1000 10 linked\n", false);
	assert_int_equal(symlink(target, o->path), 0);
	assert_int_equal(own_refresh(o), -EINVAL);
	assert_int_equal(own_refresh(o), -EINVAL);
	assert_int_equal(o->st.not_regular, 1);
	assert_name(o->pm, 0x1000, NULL);
	unlink(o->path);
	unlink(target);
	/* a FIFO with no writer: refused without blocking */
	assert_int_equal(mkfifo(o->path, 0644), 0);
	alarm(10);
	assert_int_equal(own_refresh(o), -EINVAL);
	alarm(0);
	assert_int_equal(o->st.not_regular, 1);
}

static void refresh__another_users_file__refused(void **state)
{
	struct own_map *o = *state;

	fixture_require_root("chown");
	own_write(o->path, "1000 10 planted\n", false);
	assert_int_equal(chown(o->path, 4321, 4321), 0);
	assert_int_equal(own_refresh(o), -EPERM);
	assert_int_equal(o->st.not_owner, 1);
	assert_name(o->pm, 0x1000, NULL);
}

static void refresh__process_gone__esrch(void **state)
{
	struct perf_map *pm = perf_map__new(0x3ffffffe, NULL);
	struct perf_map_stats st = {};

	assert_non_null(pm);
	assert_int_equal(perf_map__refresh(pm, &st), -ESRCH);
	perf_map__free(pm);
}

static void skip_name__every_reason__named(void **state)
{
	unsigned int i;

	for (i = 0; i < PERF_MAP_SKIP_MAX; i++)
		assert_string_not_equal(perf_map_skip_name(i), "unknown");
	assert_string_equal(perf_map_skip_name(PERF_MAP_SKIP_MAX), "unknown");
}

#define T(name)	  cmocka_unit_test_setup_teardown(name, setup, teardown)
#define OWN(name) cmocka_unit_test_setup_teardown(name, own_setup, own_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(read_fd__node_and_jvm_lines__named_exactly_as_written),
		T(read_fd__lines_without_name__skipped_counted),
		T(read_fd__bad_hex__skipped_counted),
		T(read_fd__overlapping_lines__the_later_one_wins),
		T(read_fd__ten_million_lines__capped_and_counted),
		T(read_fd__many_ranges__each_named_by_its_line),
		T(read_fd__binary_junk__skipped_never_named),
		T(read_fd__line_too_long__skipped_counted),
		T(read_fd__grown_file__new_lines_read_once),
		T(read_fd__rewritten_or_truncated__read_again_from_start),
		T(read_fd__past_max_bytes__read_up_to_it),
		T(read_fd__not_regular__einval),
		T(read_fd__symbolizer_budget__charged_and_bounded),
		OWN(refresh__no_map__enoent),
		OWN(refresh__file_replaced_between_reads__read_again),
		OWN(refresh__grown_file__new_lines_read),
		OWN(refresh__symlink_or_fifo__refused_counted_once),
		OWN(refresh__another_users_file__refused),
		cmocka_unit_test(refresh__process_gone__esrch),
		cmocka_unit_test(skip_name__every_reason__named),
	};

	return cmocka_run_group_tests_name("perf_map", tests, NULL, NULL);
}
