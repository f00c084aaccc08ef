// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/output.c: where a profile may go, decided before
 * profiling, and writes that never replace what is not a regular file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <zlib.h>

#include "export/output.h"
#include "fixtures.h"

static char *dir;
static char err[256];

static int setup(void **state)
{
	dir = fixture_tmpdir("test_output");
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	fixture_tmpdir_remove(dir);
	return 0;
}

static int count_entries(const char *d)
{
	struct dirent *de;
	DIR *dh = opendir(d);
	int n = 0;

	assert_non_null(dh);
	while ((de = readdir(dh)))
		n += de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."));
	closedir(dh);
	return n;
}

static int fill_hello(void *ctx, int fd)
{
	return output_write_all(fd, "hello", 5);
}

static int fill_fail(void *ctx, int fd)
{
	output_write_all(fd, "partial", 7);
	return -EIO;
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void output_check__new_file_in_writable_dir__ok(void **state)
{
	char p[128];

	path_in(p, sizeof(p), "new.pb.gz");
	assert_int_equal(output_check(p, err, sizeof(err)), 0);
	/* the probe leaves nothing behind */
	assert_int_equal(access(p, F_OK), -1);
}

static void output_check__directory__eisdir(void **state)
{
	assert_int_equal(output_check(dir, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
}

static void output_check__missing_dir__error_names_it(void **state)
{
	char p[128];

	path_in(p, sizeof(p), "nope/x.pb.gz");
	assert_true(output_check(p, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "nope"));
}

static void output_check__socket__refused(void **state)
{
	char p[128];

	path_in(p, sizeof(p), "fifo-not");
	assert_int_equal(mknod(p, S_IFSOCK | 0600, 0), 0);
	assert_int_equal(output_check(p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
}

static void output_check__devnull_and_fifo__accepted(void **state)
{
	char p[128];

	assert_int_equal(output_check("/dev/null", err, sizeof(err)), 0);
	path_in(p, sizeof(p), "fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(output_check(p, err, sizeof(err)), 0);
}

static void output_write__regular_file__replaced_whole(void **state)
{
	char p[128], buf[16] = "";
	struct stat st;
	int fd;

	path_in(p, sizeof(p), "out");
	fixture_put(dir, "out", "old contents");
	assert_int_equal(output_write(p, fill_hello, NULL), 0);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);
	close(fd);
	assert_string_equal(buf, "hello");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

static void output_write__fill_fails__old_file_kept_no_temp_left(void **state)
{
	char p[128], buf[32] = "";
	int fd;

	path_in(p, sizeof(p), "keep");
	fixture_put(dir, "keep", "old");
	assert_int_equal(output_write(p, fill_fail, NULL), -EIO);
	fd = open(p, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	close(fd);
	assert_string_equal(buf, "old");
	assert_int_equal(count_entries(dir), 1);
}

static void output_write__dev_null__still_a_device(void **state)
{
	struct stat st;

	assert_int_equal(output_write("/dev/null", fill_hello, NULL), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void output_write__dev_full__enospc(void **state)
{
	if (access("/dev/full", W_OK))
		skip();
	assert_int_equal(output_write("/dev/full", fill_hello, NULL), -ENOSPC);
}

static void output_write__fifo_without_reader__epipe_not_a_hang(void **state)
{
	char p[128];
	struct stat st;

	path_in(p, sizeof(p), "lonely");
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(output_write(p, fill_hello, NULL), -EPIPE);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static void output_dir_check__file__enotdir(void **state)
{
	char p[128];

	path_in(p, sizeof(p), "plain");
	fixture_put(dir, "plain", "x");
	assert_int_equal(output_dir_check(p, err, sizeof(err)), -ENOTDIR);
	assert_int_equal(output_dir_check(dir, err, sizeof(err)), 0);
}

struct pieces {
	bool gz;
	size_t n;
};

/* a document larger than the stream's buffer, in uneven pieces */
static void piece(size_t i, char *buf, size_t *len)
{
	*len = (size_t)snprintf(buf, 64, "piece %zu;", i) + (i % 7) * 3;
	memset(buf + *len - (i % 7) * 3, 'a' + (int)(i % 26), (i % 7) * 3);
}

static int fill_pieces(void *ctx, int fd)
{
	const struct pieces *pc = ctx;
	struct output_stream *o = output_stream__open(fd, pc->gz);
	char buf[64];
	size_t len;
	int err = 0;

	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < pc->n && !err; i++) {
		piece(i, buf, &len);
		err = output_stream__write(o, buf, len);
	}
	return err ? (output_stream__close(o), err) : output_stream__close(o);
}

static void check_pieces(const char *p, size_t n)
{
	gzFile g = gzopen(p, "rb");
	char want[64], got[64];
	size_t len;

	assert_non_null(g);
	for (size_t i = 0; i < n; i++) {
		piece(i, want, &len);
		assert_int_equal(gzread(g, got, (unsigned)len), (int)len);
		assert_memory_equal(got, want, len);
	}
	assert_int_equal(gzread(g, got, 1), 0);
	gzclose(g);
}

static void output_stream__pieces__read_back_whole(void **state)
{
	struct pieces plain = {false, 200000}, gz = {true, 200000};
	char p[128], q[128];
	unsigned char magic[2];
	FILE *f;

	path_in(p, sizeof(p), "plain.json");
	path_in(q, sizeof(q), "doc.json.gz");
	assert_int_equal(output_write(p, fill_pieces, &plain), 0);
	assert_int_equal(output_write(q, fill_pieces, &gz), 0);
	check_pieces(p, plain.n);
	check_pieces(q, gz.n);
	f = fopen(q, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 2, f), 2);
	fclose(f);
	assert_true(magic[0] == 0x1f && magic[1] == 0x8b);
}

static void output_stream__full_device__error_sticks(void **state)
{
	struct pieces gz = {true, 200000};

	assert_int_equal(output_write("/dev/full", fill_pieces, &gz), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(output_check__new_file_in_writable_dir__ok, setup,
						teardown),
		cmocka_unit_test_setup_teardown(output_check__directory__eisdir, setup, teardown),
		cmocka_unit_test_setup_teardown(output_check__missing_dir__error_names_it, setup,
						teardown),
		cmocka_unit_test_setup_teardown(output_check__socket__refused, setup, teardown),
		cmocka_unit_test_setup_teardown(output_check__devnull_and_fifo__accepted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(output_write__regular_file__replaced_whole, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			output_write__fill_fails__old_file_kept_no_temp_left, setup, teardown),
		cmocka_unit_test_setup_teardown(output_write__dev_null__still_a_device, setup,
						teardown),
		cmocka_unit_test_setup_teardown(output_write__dev_full__enospc, setup, teardown),
		cmocka_unit_test_setup_teardown(output_write__fifo_without_reader__epipe_not_a_hang,
						setup, teardown),
		cmocka_unit_test_setup_teardown(output_dir_check__file__enotdir, setup, teardown),
		cmocka_unit_test_setup_teardown(output_stream__pieces__read_back_whole, setup,
						teardown),
		cmocka_unit_test_setup_teardown(output_stream__full_device__error_sticks, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("output", tests, NULL, NULL);
}
