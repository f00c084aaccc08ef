// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/export/output.c: where a profile may go, decided before
 * profiling and at every write: only a regular file is ever replaced, a
 * link others could have planted is never followed, a write that fails can
 * keep its document whole in memory, and the temporary files of a killed
 * run are cleaned, only those.
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
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
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

static int fill_hello(void *ctx, struct output_sink *s)
{
	return output_sink__write(s, "hello", 5);
}

static int fill_fail(void *ctx, struct output_sink *s)
{
	output_sink__write(s, "partial", 7);
	return -EIO;
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* the whole content of @p into @buf (NUL-terminated) */
static ssize_t slurp(const char *p, char *buf, size_t len)
{
	int fd = open(p, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	return n;
}

static void output_check__new_file_in_writable_dir__ok(void **state)
{
	char p[128];

	path_in(p, sizeof(p), "new.pb.gz");
	assert_int_equal(output_check(p, err, sizeof(err)), 0);
	/* the probe leaves nothing behind */
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(count_entries(dir), 0);
}

static void output_check__directory__eisdir(void **state)
{
	char p[128];

	assert_int_equal(output_check(dir, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
	path_in(p, sizeof(p), "sub/");
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(output_check(p, err, sizeof(err)), -EISDIR);
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

	path_in(p, sizeof(p), "sock");
	assert_int_equal(mknod(p, S_IFSOCK | 0600, 0), 0);
	assert_int_equal(output_check(p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "socket"));
}

static void output_check__fifo_and_device__refused(void **state)
{
	char p[128];

	assert_int_equal(output_check("/dev/null", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "device"));
	path_in(p, sizeof(p), "fifo");
	assert_int_equal(mkfifo(p, 0666), 0);
	assert_int_equal(output_check(p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "FIFO"));
}

/*
 * A link in a directory others can write, as /tmp: whoever can write there
 * may have planted it (to /dev/kmsg, to /etc/...), so it is refused at the
 * check and at the write, whatever it points to, and nothing is written.
 */
static void output_write__link_in_others_writable_dir__refused_nothing_written(void **state)
{
	char sticky[128], link[160], target[128], buf[32];
	struct stat st;

	path_in(sticky, sizeof(sticky), "tmp");
	assert_int_equal(mkdir(sticky, 0700), 0);
	assert_int_equal(chmod(sticky, 01777), 0);
	path_in(target, sizeof(target), "victim");
	fixture_put(dir, "victim", "precious");
	snprintf(link, sizeof(link), "%s/cpu.pb.gz", sticky);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(output_check(link, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(output_write(link, fill_hello, NULL, NULL), -ELOOP);
	assert_int_equal(slurp(target, buf, sizeof(buf)), 8);
	assert_string_equal(buf, "precious");
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* no temporary file either */
	assert_int_equal(count_entries(sticky), 1);
	/* a link to a device is no better */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(output_write(link, fill_hello, NULL, NULL), -ELOOP);
}

/* in a directory only we can write, a link is ours: the file it ends at is written */
static void output_write__link_in_own_dir__file_it_names_replaced(void **state)
{
	char link[128], target[128], buf[32];
	struct stat st;

	path_in(target, sizeof(target), "real.pb.gz");
	fixture_put(dir, "real.pb.gz", "old");
	path_in(link, sizeof(link), "latest.pb.gz");
	assert_int_equal(symlink("real.pb.gz", link), 0);
	assert_int_equal(output_check(link, err, sizeof(err)), 0);
	assert_int_equal(output_write(link, fill_hello, NULL, NULL), 0);
	assert_int_equal(slurp(target, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "hello");
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* ... unless it ends at what is not a regular file */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(output_check(link, err, sizeof(err)), -EINVAL);
	assert_int_equal(output_write(link, fill_hello, NULL, NULL), -EINVAL);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* and a loop ends */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink("latest.pb.gz", link), 0);
	assert_int_equal(output_write(link, fill_hello, NULL, NULL), -ELOOP);
}

/* root replaces anything in /tmp: not a file another user put at our name */
static void output_check__others_file_in_sticky_dir__refused(void **state)
{
	char sticky[128], p[160];

	if (geteuid())
		skip();
	path_in(sticky, sizeof(sticky), "tmp");
	assert_int_equal(mkdir(sticky, 0700), 0);
	assert_int_equal(chmod(sticky, 01777), 0);
	snprintf(p, sizeof(p), "%s/cpu.pb.gz", sticky);
	fixture_put(sticky, "cpu.pb.gz", "theirs");
	assert_int_equal(chown(p, 65534, 65534), 0);
	assert_int_equal(output_check(p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "another user"));
	assert_int_equal(output_write(p, fill_hello, NULL, NULL), -EPERM);
}

static void output_write__regular_file__replaced_whole(void **state)
{
	char p[128], buf[16] = "";
	struct stat st;

	path_in(p, sizeof(p), "out");
	fixture_put(dir, "out", "old contents");
	assert_int_equal(output_write(p, fill_hello, NULL, NULL), 0);
	assert_int_equal(slurp(p, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "hello");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(count_entries(dir), 1);
}

static void output_write__fill_fails__old_file_kept_no_temp_left(void **state)
{
	struct output_keep keep = {.max = 1 << 20};
	char p[128], buf[32] = "";

	path_in(p, sizeof(p), "keep");
	fixture_put(dir, "keep", "old");
	assert_int_equal(output_write(p, fill_fail, NULL, &keep), -EIO);
	/* half a document is nothing to keep */
	assert_null(keep.buf);
	assert_int_equal(slurp(p, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "old");
	assert_int_equal(count_entries(dir), 1);
}

static void output_write__fifo__refused_untouched(void **state)
{
	char p[128];
	struct stat st;

	path_in(p, sizeof(p), "lonely");
	assert_int_equal(mkfifo(p, 0666), 0);
	assert_int_equal(output_write(p, fill_hello, NULL, NULL), -EINVAL);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(count_entries(dir), 1);
}

static void output_dir_check__file__enotdir(void **state)
{
	char p[128];

	path_in(p, sizeof(p), "plain");
	fixture_put(dir, "plain", "x");
	assert_int_equal(output_dir_check(p, err, sizeof(err)), -ENOTDIR);
	assert_int_equal(output_dir_check(dir, err, sizeof(err)), 0);
	assert_int_equal(count_entries(dir), 1);
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

static int fill_pieces(void *ctx, struct output_sink *s)
{
	const struct pieces *pc = ctx;
	struct output_stream *o = output_stream__open(s, pc->gz);
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
	assert_int_equal(output_write(p, fill_pieces, &plain, NULL), 0);
	assert_int_equal(output_write(q, fill_pieces, &gz, NULL), 0);
	check_pieces(p, plain.n);
	check_pieces(q, gz.n);
	f = fopen(q, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 2, f), 2);
	fclose(f);
	assert_true(magic[0] == 0x1f && magic[1] == 0x8b);
}

/*
 * Files can grow to 8 KiB at most (RLIMIT_FSIZE: writes past it fail with
 * EFBIG, as a full disk fails with ENOSPC), until files_unlimited().
 */
static struct rlimit saved_fsize;

static void files_limited(void)
{
	struct rlimit small;

	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved_fsize), 0);
	small = (struct rlimit){.rlim_cur = 8192, .rlim_max = saved_fsize.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
}

static void files_unlimited(void)
{
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved_fsize), 0);
}

static int fill_kept(void *ctx, struct output_sink *s)
{
	const struct output_keep *k = ctx;

	return output_sink__write(s, k->buf, k->len);
}

/*
 * A write that fails half way (a disk filling up) keeps the whole document
 * in memory, as it would have been in the file, and leaves no file; written
 * later, it reads back whole.
 */
static void output_stream__write_fails_with_keep__whole_document_kept(void **state)
{
	struct pieces gz = {true, 200000};
	struct output_keep keep = {.max = 64 << 20};
	char p[128];

	path_in(p, sizeof(p), "full.json.gz");
	files_limited();
	assert_int_equal(output_write(p, fill_pieces, &gz, &keep), -EFBIG);
	files_unlimited();
	assert_non_null(keep.buf);
	assert_true(keep.len > 8192);
	assert_int_equal(count_entries(dir), 0);
	assert_int_equal(output_write(p, fill_kept, &keep, NULL), 0);
	check_pieces(p, gz.n);
	free(keep.buf);
}

/* without a keep, or past its bound, the error sticks and nothing is left */
static void output_stream__write_fails__error_sticks_nothing_kept(void **state)
{
	struct pieces gz = {true, 200000};
	struct output_keep keep = {.max = 100000};
	char p[128];

	path_in(p, sizeof(p), "full.json.gz");
	files_limited();
	assert_int_equal(output_write(p, fill_pieces, &gz, NULL), -EFBIG);
	assert_int_equal(output_write(p, fill_pieces, &gz, &keep), -EFBIG);
	files_unlimited();
	assert_null(keep.buf);
	assert_int_equal(count_entries(dir), 0);
}

/* not even a temporary file (a directory gone): the document goes to memory */
static void output_write__missing_dir_with_keep__kept_in_memory(void **state)
{
	struct output_keep keep = {.max = 1 << 20};
	char p[128];

	path_in(p, sizeof(p), "gone/x.pb.gz");
	assert_int_equal(output_write(p, fill_hello, NULL, &keep), -ENOENT);
	assert_int_equal(keep.len, 5);
	assert_memory_equal(keep.buf, "hello", 5);
	free(keep.buf);
}

/*
 * What a killed run left is removed: a regular file named as our temporary
 * files, ours, that no writer holds.  Anything else stays: another name, a
 * link, a directory, a FIFO named like ours, and a file a live writer locks.
 */
static void output_clean_temps__stale_ours__removed_others_kept(void **state)
{
	static const char *const kept[] = {
		".ctxprof-0123456789abcdeg.tmp", /* not hex */
		".ctxprof-0123456789abcde.tmp",	 /* too short */
		"ctxprof-7-20261121T070000Z.pb.gz",
		".ctxprof-fedcba9876543210.tmp", /* locked below */
	};
	char p[160];
	unsigned int removed = 9;
	int fd;

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		fixture_put(dir, kept[i], "x");
	fixture_put(dir, ".ctxprof-0123456789abcdef.tmp", "stale");
	path_in(p, sizeof(p), ".ctxprof-1111111111111111.tmp");
	assert_int_equal(symlink("ctxprof-7-20261121T070000Z.pb.gz", p), 0);
	path_in(p, sizeof(p), ".ctxprof-2222222222222222.tmp");
	assert_int_equal(mkdir(p, 0700), 0);
	path_in(p, sizeof(p), ".ctxprof-3333333333333333.tmp");
	assert_int_equal(mkfifo(p, 0600), 0);
	path_in(p, sizeof(p), ".ctxprof-fedcba9876543210.tmp");
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);

	assert_int_equal(output_clean_temps(dir, true, &removed), 0);
	assert_int_equal(removed, 1);
	path_in(p, sizeof(p), ".ctxprof-0123456789abcdef.tmp");
	assert_int_equal(access(p, F_OK), -1);
	assert_int_equal(count_entries(dir), 7);
	close(fd);
	/* the writer gone, its file is stale too; a file path cleans its directory */
	path_in(p, sizeof(p), "ctxprof-7-20261121T070000Z.pb.gz");
	assert_int_equal(output_clean_temps(p, false, &removed), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(count_entries(dir), 6);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(output_check__new_file_in_writable_dir__ok),
		T(output_check__directory__eisdir),
		T(output_check__missing_dir__error_names_it),
		T(output_check__socket__refused),
		T(output_check__fifo_and_device__refused),
		T(output_write__link_in_others_writable_dir__refused_nothing_written),
		T(output_write__link_in_own_dir__file_it_names_replaced),
		T(output_check__others_file_in_sticky_dir__refused),
		T(output_write__regular_file__replaced_whole),
		T(output_write__fill_fails__old_file_kept_no_temp_left),
		T(output_write__fifo__refused_untouched),
		T(output_dir_check__file__enotdir),
		T(output_stream__pieces__read_back_whole),
		T(output_stream__write_fails_with_keep__whole_document_kept),
		T(output_stream__write_fails__error_sticks_nothing_kept),
		T(output_write__missing_dir_with_keep__kept_in_memory),
		T(output_clean_temps__stale_ours__removed_others_kept),
	};
#undef T

	return cmocka_run_group_tests_name("output", tests, NULL, NULL);
}
