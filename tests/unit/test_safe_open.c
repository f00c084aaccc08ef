// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/elf/safe_open.c.  Each test builds a fake container root
 * under a mkdtemp() directory; paths that try to leave it must resolve inside
 * it, which the test proves by giving fakeroot/etc/passwd distinct content.
 * Needs Linux >= 5.6 (openat2); skips on -ENOSYS.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/safe_open.h"

#define FAKE_PASSWD "fake-root-passwd\n"
#define SMALL_MAX   (1u << 20)

struct fake_root {
	char dir[PATH_MAX];
	int fd; /* O_PATH fd of dir */
};

static void write_file(const char *dir, const char *name, const char *content, size_t len)
{
	char path[PATH_MAX * 2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
}

static void make_link(const char *dir, const char *name, const char *target)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(symlink(target, path), 0);
}

/*
 * fakeroot/
 *   file         "hello"
 *   etc/passwd   FAKE_PASSWD
 *   abs_link  -> /etc/passwd
 *   escape    -> ../../../../../../../../etc/passwd
 *   dotdot    -> ../../..
 *   fifo, dir/
 *   big          SMALL_MAX + 1 bytes (sparse)
 */
static int fake_root_setup(void **state)
{
	struct fake_root *fr = calloc(1, sizeof(*fr));
	char path[PATH_MAX * 2];
	int fd;

	assert_non_null(fr);
	snprintf(fr->dir, sizeof(fr->dir), "%s/ctxprof-safe-open-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(fr->dir));

	write_file(fr->dir, "file", "hello", 5);
	snprintf(path, sizeof(path), "%s/etc", fr->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	write_file(fr->dir, "etc/passwd", FAKE_PASSWD, strlen(FAKE_PASSWD));
	make_link(fr->dir, "abs_link", "/etc/passwd");
	make_link(fr->dir, "escape", "../../../../../../../../etc/passwd");
	make_link(fr->dir, "dotdot", "../../..");
	snprintf(path, sizeof(path), "%s/fifo", fr->dir);
	assert_int_equal(mkfifo(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/dir", fr->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/big", fr->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, SMALL_MAX + 1), 0);
	close(fd);

	fr->fd = open(fr->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fr->fd >= 0);
	*state = fr;
	return 0;
}

static int fake_root_teardown(void **state)
{
	struct fake_root *fr = *state;
	static const char *const names[] = {"file",   "etc/passwd", "abs_link", "escape",
					    "dotdot", "fifo",	    "big"};
	char path[PATH_MAX * 2];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", fr->dir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/etc", fr->dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/dir", fr->dir);
	rmdir(path);
	rmdir(fr->dir);
	close(fr->fd);
	free(fr);
	return 0;
}

/* open @path in the fake root, expecting success, and return its content */
static void open_and_read(struct fake_root *fr, const char *path, char *buf, size_t bufsz)
{
	struct stat st;
	ssize_t n;
	int fd;

	fd = safe_open_in_root(fr->fd, path, SMALL_MAX, &st);
	if (fd == -ENOSYS)
		skip();
	if (fd < 0)
		fail_msg("safe_open_in_root(%s) = %d (%s)", path, fd, strerror(-fd));
	assert_true(S_ISREG(st.st_mode));
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	n = read(fd, buf, bufsz - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_int_equal(n, st.st_size);
	close(fd);
}

static void safe_open_in_root__regular_file__opens_read_only(void **state)
{
	char buf[64];

	open_and_read(*state, "file", buf, sizeof(buf));
	assert_string_equal(buf, "hello");
	/* a target's paths are absolute: "/" is the fake root */
	open_and_read(*state, "/file", buf, sizeof(buf));
	assert_string_equal(buf, "hello");
}

static void safe_open_in_root__null_stat__allowed(void **state)
{
	struct fake_root *fr = *state;
	int fd;

	fd = safe_open_in_root(fr->fd, "file", SMALL_MAX, NULL);
	if (fd == -ENOSYS)
		skip();
	assert_true(fd >= 0);
	close(fd);
}

static void safe_open_in_root__absolute_symlink__resolves_inside_root(void **state)
{
	char buf[256];

	open_and_read(*state, "abs_link", buf, sizeof(buf));
	assert_string_equal(buf, FAKE_PASSWD);
	open_and_read(*state, "/etc/passwd", buf, sizeof(buf));
	assert_string_equal(buf, FAKE_PASSWD);
}

static void safe_open_in_root_nofollow__final_symlink__einval(void **state)
{
	struct fake_root *fr = *state;
	int fd;

	fd = safe_open_in_root_nofollow(fr->fd, "abs_link", SMALL_MAX, NULL);
	if (fd == -ENOSYS)
		skip();
	assert_int_equal(fd, -EINVAL);
	assert_int_equal(safe_open_in_root_nofollow(fr->fd, "fifo", SMALL_MAX, NULL), -EINVAL);
	/* a regular file, and links before the last component, as safe_open_in_root() */
	fd = safe_open_in_root_nofollow(fr->fd, "/etc/passwd", SMALL_MAX, NULL);
	assert_true(fd >= 0);
	close(fd);
}

static void safe_open_in_root__dotdot_escape__clamped_to_root(void **state)
{
	struct fake_root *fr = *state;
	char buf[256];
	int fd;

	open_and_read(fr, "escape", buf, sizeof(buf));
	assert_string_equal(buf, FAKE_PASSWD);
	open_and_read(fr, "../../../../../etc/passwd", buf, sizeof(buf));
	assert_string_equal(buf, FAKE_PASSWD);
	/* "../../.." lands on the fake root: a directory, refused */
	fd = safe_open_in_root(fr->fd, "dotdot", SMALL_MAX, NULL);
	assert_int_equal(fd, -EINVAL);
}

static void safe_open_in_root__fifo__einval_without_blocking(void **state)
{
	struct fake_root *fr = *state;
	int fd;

	/* a blocking open() of a FIFO with no writer would hang: kill the test instead */
	alarm(10);
	fd = safe_open_in_root(fr->fd, "fifo", SMALL_MAX, NULL);
	alarm(0);
	if (fd == -ENOSYS)
		skip();
	assert_int_equal(fd, -EINVAL);
}

static void safe_open_in_root__directory__einval(void **state)
{
	struct fake_root *fr = *state;

	assert_int_equal(safe_open_in_root(fr->fd, "dir", SMALL_MAX, NULL), -EINVAL);
	assert_int_equal(safe_open_in_root(fr->fd, "/", SMALL_MAX, NULL), -EINVAL);
}

static void safe_open_in_root__file_over_max_size__efbig(void **state)
{
	struct fake_root *fr = *state;
	int fd;

	assert_int_equal(safe_open_in_root(fr->fd, "big", SMALL_MAX, NULL), -EFBIG);
	assert_int_equal(safe_open_in_root(fr->fd, "file", 4, NULL), -EFBIG);
	/* exactly max_size is allowed */
	fd = safe_open_in_root(fr->fd, "file", 5, NULL);
	assert_true(fd >= 0);
	close(fd);
}

static void safe_open_in_root__missing_or_empty_path__error(void **state)
{
	struct fake_root *fr = *state;

	assert_int_equal(safe_open_in_root(fr->fd, "nope", SMALL_MAX, NULL), -ENOENT);
	assert_int_equal(safe_open_in_root(fr->fd, "", SMALL_MAX, NULL), -EINVAL);
	assert_int_equal(safe_open_in_root(fr->fd, NULL, SMALL_MAX, NULL), -EINVAL);
	assert_int_equal(safe_open_in_root(-1, "file", SMALL_MAX, NULL), -EBADF);
}

static void safe_open_in_root__device_node__einval(void **state)
{
	int root, fd;

	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	fd = safe_open_in_root(root, "/dev/null", SMALL_MAX, NULL);
	close(root);
	if (fd == -ENOSYS || fd == -ENOENT)
		skip();
	assert_int_equal(fd, -EINVAL);
}

/* with the real "/" as root, /proc/self/root is a magic link: refused */
static void safe_open_in_root__magic_link__eloop(void **state)
{
	int root, fd;

	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	fd = safe_open_in_root(root, "/proc/self/root/etc/passwd", SAFE_OPEN_MAX_ELF_SIZE, NULL);
	close(root);
	if (fd == -ENOSYS)
		skip();
	if (fd == -ENOENT)
		skip(); /* no /proc mounted here */
	assert_int_equal(fd, -ELOOP);
}

static void proc_root_open__self__directory_fd(void **state)
{
	struct stat st, want;
	int fd, f;

	fd = proc_root_open(getpid());
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(fd, F_GETFL) & O_PATH);
	/* our root is "/" */
	assert_int_equal(stat("/", &want), 0);
	assert_int_equal(st.st_ino, want.st_ino);
	assert_int_equal(st.st_dev, want.st_dev);

	/* it serves as a root: /proc/self is a plain symlink, stat a regular file */
	f = safe_open_in_root(fd, "/proc/self/stat", SMALL_MAX, NULL);
	close(fd);
	if (f == -ENOSYS)
		skip();
	assert_true(f >= 0);
	close(f);
}

/*
 * A pid that is not running gives -ESRCH: the kernel says ENOENT for a
 * missing /proc/PID, which proc_root_open() reports as the process being gone.
 */
static void proc_root_open__no_such_pid__esrch(void **state)
{
	pid_t pid = 0;
	FILE *f;

	f = fopen("/proc/sys/kernel/pid_max", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &pid), 1);
	fclose(f);
	/* pid_max itself is never handed out */
	assert_int_equal(proc_root_open(pid), -ESRCH);
	assert_int_equal(proc_root_open(0), -EINVAL);
	assert_int_equal(proc_root_open(-1), -EINVAL);
}

/*
 * safe_stat_mapped() names the inode mapped, as safe_open_mapped() opens it:
 * one of our own mappings of a file, and none for anonymous memory.  Root
 * (map_files needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE).
 */
static void safe_stat_mapped__own_file_mapping__its_inode(void **state)
{
	struct stat st, want, opened;
	char path[] = "/tmp/safe_stat_mappedXXXXXX";
	long page = sysconf(_SC_PAGESIZE);
	void *file_map, *anon;
	int fd, f;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, page), 0);
	assert_int_equal(fstat(fd, &want), 0);
	file_map = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 0);
	anon = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	close(fd);
	assert_true(file_map != MAP_FAILED && anon != MAP_FAILED);
	if (geteuid()) {
		print_message("not root: map_files refused, nothing to compare\n");
		skip();
	}
	assert_int_equal(
		safe_stat_mapped(getpid(), (uintptr_t)file_map, (uintptr_t)file_map + page, &st),
		0);
	assert_int_equal(st.st_ino, want.st_ino);
	assert_int_equal(st.st_dev, want.st_dev);
	f = safe_open_mapped(getpid(), (uintptr_t)file_map, (uintptr_t)file_map + page, SMALL_MAX,
			     &opened);
	assert_true(f >= 0);
	close(f);
	assert_int_equal(opened.st_ino, st.st_ino);
	assert_int_equal(opened.st_mtim.tv_nsec, st.st_mtim.tv_nsec);
	/* no file behind anonymous memory; no range at all is refused */
	assert_int_equal(safe_stat_mapped(getpid(), (uintptr_t)anon, (uintptr_t)anon + page, &st),
			 -ESRCH);
	assert_int_equal(safe_stat_mapped(getpid(), 2 * page, page, &st), -EINVAL);
	munmap(file_map, page);
	munmap(anon, page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(safe_open_in_root__regular_file__opens_read_only,
						fake_root_setup, fake_root_teardown),
		cmocka_unit_test_setup_teardown(safe_open_in_root__null_stat__allowed,
						fake_root_setup, fake_root_teardown),
		cmocka_unit_test_setup_teardown(
			safe_open_in_root__absolute_symlink__resolves_inside_root, fake_root_setup,
			fake_root_teardown),
		cmocka_unit_test_setup_teardown(safe_open_in_root__dotdot_escape__clamped_to_root,
						fake_root_setup, fake_root_teardown),
		cmocka_unit_test_setup_teardown(safe_open_in_root_nofollow__final_symlink__einval,
						fake_root_setup, fake_root_teardown),
		cmocka_unit_test_setup_teardown(safe_open_in_root__fifo__einval_without_blocking,
						fake_root_setup, fake_root_teardown),
		cmocka_unit_test_setup_teardown(safe_open_in_root__directory__einval,
						fake_root_setup, fake_root_teardown),
		cmocka_unit_test_setup_teardown(safe_open_in_root__file_over_max_size__efbig,
						fake_root_setup, fake_root_teardown),
		cmocka_unit_test_setup_teardown(safe_open_in_root__missing_or_empty_path__error,
						fake_root_setup, fake_root_teardown),
		cmocka_unit_test(safe_open_in_root__device_node__einval),
		cmocka_unit_test(safe_open_in_root__magic_link__eloop),
		cmocka_unit_test(proc_root_open__self__directory_fd),
		cmocka_unit_test(proc_root_open__no_such_pid__esrch),
		cmocka_unit_test(safe_stat_mapped__own_file_mapping__its_inode),
	};

	return cmocka_run_group_tests_name("safe_open", tests, NULL, NULL);
}
