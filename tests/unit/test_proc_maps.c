// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/processes/proc_maps.c */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"
#include "processes/proc_maps.h"

/*
 * Parse a copy of @text in a buffer of exactly its length, so the parser's
 * reads past the end (it gets no NUL terminator) show up under ASan.
 */
static struct proc_maps *parse_exact(const char *text, size_t len)
{
	char *copy = fixture_exact_copy(text, len);
	struct proc_maps *pm = proc_maps__parse(copy, len);

	free(copy);
	assert_non_null(pm);
	return pm;
}

static struct proc_maps *parse_str(const char *text)
{
	return parse_exact(text, strlen(text));
}

static void proc_maps__parse__normal_lines__all_fields_parsed(void **state)
{
	/* the kernel pads the name out to a column */
	static const char text[] = "55d0c0a00000-55d0c0a21000 r-xp 00002000 fd:01 1234567"
				   "                    /usr/bin/foo\n"
				   "7f0000000000-7f0000001000 rw-s 0000000000010000 103:1f 0"
				   "                  /dev/shm/x\n";
	struct proc_maps *pm = parse_str(text);

	assert_int_equal(pm->nr, 2);
	assert_int_equal(pm->nr_bad_lines, 0);
	assert_true(pm->maps[0].start == 0x55d0c0a00000ULL);
	assert_true(pm->maps[0].end == 0x55d0c0a21000ULL);
	assert_true(pm->maps[0].pgoff == 0x2000);
	assert_int_equal(pm->maps[0].dev_major, 0xfd);
	assert_int_equal(pm->maps[0].dev_minor, 0x01);
	assert_true(pm->maps[0].inode == 1234567);
	assert_int_equal(pm->maps[0].perms, PROC_MAP_R | PROC_MAP_X | PROC_MAP_P);
	assert_int_equal(pm->maps[0].deleted, 0);
	assert_string_equal(pm->maps[0].path, "/usr/bin/foo");

	assert_true(pm->maps[1].pgoff == 0x10000);
	assert_int_equal(pm->maps[1].dev_major, 0x103);
	assert_int_equal(pm->maps[1].dev_minor, 0x1f);
	assert_int_equal(pm->maps[1].perms, PROC_MAP_R | PROC_MAP_W);
	assert_string_equal(pm->maps[1].path, "/dev/shm/x");
	proc_maps__free(pm);
}

static void proc_maps__parse__path_with_spaces__kept_whole(void **state)
{
	struct proc_maps *pm = parse_str(
		"1000-2000 r-xp 00000000 08:01 42                         /opt/my app/lib x.so\n");

	assert_int_equal(pm->nr, 1);
	assert_string_equal(pm->maps[0].path, "/opt/my app/lib x.so");
	assert_int_equal(pm->maps[0].deleted, 0);
	proc_maps__free(pm);
}

static void proc_maps__parse__deleted_suffix__stripped_and_flagged(void **state)
{
	struct proc_maps *pm = parse_str(
		"1000-2000 r-xp 00000000 08:01 42                   /tmp/old lib.so (deleted)\n"
		"2000-3000 r-xp 00000000 08:01 43                   /tmp/(deleted)\n");

	assert_int_equal(pm->nr, 2);
	assert_string_equal(pm->maps[0].path, "/tmp/old lib.so");
	assert_int_equal(pm->maps[0].deleted, 1);
	/* the suffix needs its leading space */
	assert_string_equal(pm->maps[1].path, "/tmp/(deleted)");
	assert_int_equal(pm->maps[1].deleted, 0);
	proc_maps__free(pm);
}

static void proc_maps__parse__anonymous_line__empty_path(void **state)
{
	/* with and without the trailing space some kernels print */
	struct proc_maps *pm = parse_str("1000-2000 rw-p 00000000 00:00 0 \n"
					 "3000-4000 r-xp 00000000 00:00 0\n");

	assert_int_equal(pm->nr, 2);
	assert_int_equal(pm->nr_bad_lines, 0);
	assert_string_equal(pm->maps[0].path, "");
	assert_string_equal(pm->maps[1].path, "");
	assert_int_equal(pm->maps[1].perms, PROC_MAP_R | PROC_MAP_X | PROC_MAP_P);
	proc_maps__free(pm);
}

static void proc_maps__parse__special_mappings__names_kept(void **state)
{
	struct proc_maps *pm = parse_str(
		"7ffd1000-7ffd3000 r-xp 00000000 00:00 0                          [vdso]\n"
		"7ffe0000-7ffe2000 rw-p 00000000 00:00 0                          [stack]\n"
		"7fff0000-7fff2000 rw-p 00000000 00:00 0                          [heap]\n");

	assert_int_equal(pm->nr, 3);
	assert_string_equal(pm->maps[0].path, "[vdso]");
	assert_string_equal(pm->maps[1].path, "[stack]");
	assert_string_equal(pm->maps[2].path, "[heap]");
	proc_maps__free(pm);
}

static void proc_maps__parse__missing_fields__counted_bad(void **state)
{
	struct proc_maps *pm = parse_str("1000-2000 r-xp 00000000 08:01\n"
					 "1000-2000 r-xp\n"
					 "1000-2000\n"
					 "1000\n"
					 "\n"
					 "1000-2000 r-xp 00000000 08:01 \n"
					 "5000-6000 r-xp 00000000 08:01 7 /ok\n");

	assert_int_equal(pm->nr, 1);
	assert_int_equal(pm->nr_bad_lines, 6);
	assert_string_equal(pm->maps[0].path, "/ok");
	proc_maps__free(pm);
}

static void proc_maps__parse__bad_hex_or_perms__counted_bad(void **state)
{
	struct proc_maps *pm = parse_str("10g0-2000 r-xp 00000000 08:01 1 /a\n"
					 "-2000 r-xp 00000000 08:01 1 /a\n"
					 "1000-2000 r-xz 00000000 08:01 1 /a\n"
					 "1000-2000 rwx 00000000 08:01 1 /a\n"
					 "1000-2000 r-xp 0x000000 08:01 1 /a\n"
					 "1000-2000 r-xp 00000000 08-01 1 /a\n"
					 "1000-2000 r-xp 00000000 08:01 1x /a\n"
					 "1000-2000  r-xp 00000000 08:01 1 /a\n");

	assert_int_equal(pm->nr, 0);
	assert_int_equal(pm->nr_bad_lines, 8);
	proc_maps__free(pm);
}

static void proc_maps__parse__huge_numbers__counted_bad(void **state)
{
	struct proc_maps *pm = parse_str(
		/* 17 significant hex digits overflow 64 bits */
		"10000000000000000-20000000000000000 r-xp 00000000 08:01 1 /a\n"
		/* a device number past 32 bits */
		"1000-2000 r-xp 00000000 100000000:01 1 /a\n"
		/* an inode past 64 bits */
		"1000-2000 r-xp 00000000 08:01 18446744073709551616 /a\n"
		/* leading zeros are not an overflow, and the top values fit */
		"00000000000000001000-ffffffffffffffff r-xp 00000000 ffffffff:ffffffff "
		"18446744073709551615 /b\n");

	assert_int_equal(pm->nr, 1);
	assert_int_equal(pm->nr_bad_lines, 3);
	assert_true(pm->maps[0].start == 0x1000);
	assert_true(pm->maps[0].end == UINT64_MAX);
	assert_true(pm->maps[0].inode == UINT64_MAX);
	assert_int_equal(pm->maps[0].dev_major, UINT32_MAX);
	assert_string_equal(pm->maps[0].path, "/b");
	proc_maps__free(pm);
}

static void proc_maps__parse__start_not_below_end__counted_bad(void **state)
{
	struct proc_maps *pm = parse_str("3000-2000 r-xp 00000000 08:01 1 /a\n"
					 "2000-2000 r-xp 00000000 08:01 1 /a\n");

	assert_int_equal(pm->nr, 0);
	assert_int_equal(pm->nr_bad_lines, 2);
	proc_maps__free(pm);
}

static void proc_maps__parse__overlong_path__counted_bad(void **state)
{
	static const char fits[] = "1000-2000 r-xp 00000000 08:01 1 /";
	static const char too_long[] = "3000-4000 r-xp 00000000 08:01 1 /";
	size_t len = sizeof(fits) + sizeof(too_long) + 2 * PROC_MAPS_MAX_PATH;
	char *text = malloc(len);
	struct proc_maps *pm;
	char *p = text;

	assert_non_null(text);
	/* a path of PROC_MAPS_MAX_PATH - 1 bytes fits (with its NUL), one more does not */
	memcpy(p, fits, sizeof(fits) - 1);
	p += sizeof(fits) - 1;
	memset(p, 'a', PROC_MAPS_MAX_PATH - 2);
	p += PROC_MAPS_MAX_PATH - 2;
	*p++ = '\n';
	memcpy(p, too_long, sizeof(too_long) - 1);
	p += sizeof(too_long) - 1;
	memset(p, 'b', PROC_MAPS_MAX_PATH - 1);
	p += PROC_MAPS_MAX_PATH - 1;
	*p++ = '\n';

	pm = parse_exact(text, p - text);
	assert_int_equal(pm->nr, 1);
	assert_int_equal(pm->nr_bad_lines, 1);
	assert_true(pm->maps[0].start == 0x1000);
	assert_int_equal(strlen(pm->maps[0].path), PROC_MAPS_MAX_PATH - 1);
	proc_maps__free(pm);
	free(text);
}

static void proc_maps__parse__no_trailing_newline__last_line_counted_bad(void **state)
{
	struct proc_maps *pm = parse_str("1000-2000 r-xp 00000000 08:01 1 /a\n"
					 "3000-4000 r-xp 00000000 08:01 1 /usr/lib/libtrunc");

	/* the cut line might have lost part of its path: it is not trusted */
	assert_int_equal(pm->nr, 1);
	assert_int_equal(pm->nr_bad_lines, 1);
	assert_string_equal(pm->maps[0].path, "/a");
	proc_maps__free(pm);
}

static void proc_maps__parse__embedded_nul__counted_bad(void **state)
{
	static const char text[] = "1000-2000 r-xp 00000000 08:01 1 /a\0b\n"
				   "3000-4000 r-xp 00000000 08:01 1 /c\n";
	struct proc_maps *pm = parse_exact(text, sizeof(text) - 1);

	assert_int_equal(pm->nr, 1);
	assert_int_equal(pm->nr_bad_lines, 1);
	assert_string_equal(pm->maps[0].path, "/c");
	proc_maps__free(pm);
}

static void proc_maps__parse__empty_or_null_text__no_maps(void **state)
{
	struct proc_maps *pm = proc_maps__parse(NULL, 0);

	assert_non_null(pm);
	assert_int_equal(pm->nr, 0);
	assert_int_equal(pm->nr_bad_lines, 0);
	proc_maps__free(pm);
	pm = parse_exact("", 0);
	assert_int_equal(pm->nr, 0);
	proc_maps__free(pm);
	proc_maps__free(NULL);
}

static void proc_maps__parse__unsorted_overlapping__sorted_overlap_dropped(void **state)
{
	struct proc_maps *pm = parse_str("5000-6000 r-xp 00000000 08:01 1 /c\n"
					 "1000-2000 r-xp 00000000 08:01 1 /a\n"
					 "1800-2800 r-xp 00000000 08:01 1 /overlap\n"
					 "3000-4000 r-xp 00000000 08:01 1 /b\n");

	assert_int_equal(pm->nr, 3);
	assert_int_equal(pm->nr_bad_lines, 1);
	assert_string_equal(pm->maps[0].path, "/a");
	assert_string_equal(pm->maps[1].path, "/b");
	assert_string_equal(pm->maps[2].path, "/c");
	assert_non_null(proc_maps__find(pm, 0x5fff));
	proc_maps__free(pm);
}

static void proc_maps__parse__repeated_path__shared_and_intact(void **state)
{
	struct proc_maps *pm = parse_str("1000-2000 r--p 00000000 08:01 1 /lib/a.so\n"
					 "2000-3000 r-xp 00001000 08:01 1 /lib/a.so\n"
					 "3000-4000 r--p 00002000 08:01 1 /lib/a.sox\n"
					 "4000-5000 r--p 00002000 08:01 1 /lib/a.s\n");

	assert_int_equal(pm->nr, 4);
	assert_string_equal(pm->maps[0].path, "/lib/a.so");
	assert_string_equal(pm->maps[1].path, "/lib/a.so");
	assert_string_equal(pm->maps[2].path, "/lib/a.sox");
	assert_string_equal(pm->maps[3].path, "/lib/a.s");
	proc_maps__free(pm);
}

static void proc_maps__find__boundaries__start_and_last_byte_hit_end_misses(void **state)
{
	struct proc_maps *pm = parse_str("1000-2000 r-xp 00000000 08:01 1 /a\n"
					 "2000-3000 r-xp 00000000 08:01 1 /b\n"
					 "5000-6000 r-xp 00000000 08:01 1 /c\n");
	const struct proc_map *m;

	m = proc_maps__find(pm, 0x1000);
	assert_non_null(m);
	assert_string_equal(m->path, "/a");
	m = proc_maps__find(pm, 0x1fff);
	assert_non_null(m);
	assert_string_equal(m->path, "/a");
	/* end is exclusive: 0x2000 belongs to the next mapping */
	m = proc_maps__find(pm, 0x2000);
	assert_non_null(m);
	assert_string_equal(m->path, "/b");
	assert_null(proc_maps__find(pm, 0x3000));
	assert_null(proc_maps__find(pm, 0x4fff));
	m = proc_maps__find(pm, 0x5fff);
	assert_non_null(m);
	assert_string_equal(m->path, "/c");
	assert_null(proc_maps__find(pm, 0x6000));
	assert_null(proc_maps__find(pm, 0xfff));
	assert_null(proc_maps__find(pm, 0));
	assert_null(proc_maps__find(pm, UINT64_MAX));
	assert_null(proc_maps__find(NULL, 0x1000));
	proc_maps__free(pm);
}

__attribute__((noinline)) int proc_maps_test_marker(int x)
{
	return x * 3 + 1;
}

static void proc_maps__read__self__finds_own_function(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&proc_maps_test_marker;
	struct proc_maps *pm = proc_maps__read(getpid());
	char exe[PATH_MAX];
	const struct proc_map *m;
	ssize_t n;

	assert_non_null(pm);
	assert_true(pm->nr > 0);
	assert_int_equal(pm->nr_bad_lines, 0);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';

	m = proc_maps__find(pm, addr);
	assert_non_null(m);
	assert_true(m->perms & PROC_MAP_X);
	assert_string_equal(m->path, exe);
	assert_true(m->start <= addr && addr < m->end);
	proc_maps__free(pm);
}

static void proc_maps__read__nonexistent_pid__esrch(void **state)
{
	errno = 0;
	assert_null(proc_maps__read(INT_MAX));
	assert_int_equal(errno, ESRCH);
}

static void proc_maps__read_text__self__whole_lines(void **state)
{
	size_t len;
	char *text;

	assert_int_equal(proc_maps__read_text(getpid(), &text, &len), 0);
	assert_true(len > 0);
	assert_int_equal(text[len - 1], '\n');
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(proc_maps__parse__normal_lines__all_fields_parsed),
		cmocka_unit_test(proc_maps__parse__path_with_spaces__kept_whole),
		cmocka_unit_test(proc_maps__parse__deleted_suffix__stripped_and_flagged),
		cmocka_unit_test(proc_maps__parse__anonymous_line__empty_path),
		cmocka_unit_test(proc_maps__parse__special_mappings__names_kept),
		cmocka_unit_test(proc_maps__parse__missing_fields__counted_bad),
		cmocka_unit_test(proc_maps__parse__bad_hex_or_perms__counted_bad),
		cmocka_unit_test(proc_maps__parse__huge_numbers__counted_bad),
		cmocka_unit_test(proc_maps__parse__start_not_below_end__counted_bad),
		cmocka_unit_test(proc_maps__parse__overlong_path__counted_bad),
		cmocka_unit_test(proc_maps__parse__no_trailing_newline__last_line_counted_bad),
		cmocka_unit_test(proc_maps__parse__embedded_nul__counted_bad),
		cmocka_unit_test(proc_maps__parse__empty_or_null_text__no_maps),
		cmocka_unit_test(proc_maps__parse__unsorted_overlapping__sorted_overlap_dropped),
		cmocka_unit_test(proc_maps__parse__repeated_path__shared_and_intact),
		cmocka_unit_test(proc_maps__find__boundaries__start_and_last_byte_hit_end_misses),
		cmocka_unit_test(proc_maps__read__self__finds_own_function),
		cmocka_unit_test(proc_maps__read__nonexistent_pid__esrch),
		cmocka_unit_test(proc_maps__read_text__self__whole_lines),
	};

	return cmocka_run_group_tests_name("proc_maps", tests, NULL, NULL);
}
