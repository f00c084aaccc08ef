// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * safe_open - open a target process's files without leaving its root.
 *
 * The path is resolved to an O_PATH fd first and its type checked before
 * anything is really opened: open() on a device node can act (arming a
 * watchdog, rewinding a tape), and a container that can mknod could plant one
 * where its maps say a library is.  The regular file is then re-opened for
 * reading through /proc/self/fd, which names the inode already checked, not
 * the path, so nothing can be swapped in between.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/stat.h>

#include "elf/safe_open.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* openat2() asks for a retry when a rename raced a ".." lookup */
#define SAFE_OPEN_MAX_RETRIES 8

/* the root of a live thread of @pid: its leader may have exited (a zombie has none) */
static int task_root_open(pid_t pid)
{
	char path[64];
	struct dirent *de;
	int fd = -ESRCH;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while (fd < 0 && (de = readdir(dir))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.10s/root", (int)pid, de->d_name);
		fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	closedir(dir);
	return fd == -ENOENT ? -ESRCH : fd;
}

int proc_root_open(pid_t pid)
{
	char path[32];
	int fd;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	return errno == ENOENT ? task_root_open(pid) : -errno;
}

static int openat2_retry(int dirfd, const char *path, struct open_how *how)
{
	int i, fd = -1;

	for (i = 0; i < SAFE_OPEN_MAX_RETRIES; i++) {
		fd = syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
		if (fd >= 0 || (errno != EAGAIN && errno != EINTR))
			break;
	}
	return fd < 0 ? -errno : fd;
}

/* open the regular file behind an O_PATH fd for reading, consuming @path_fd */
static int reopen_regular(int path_fd, uint64_t max_size, struct stat *st)
{
	char self_path[32];
	struct stat tmp;
	int fd, err;

	if (fstat(path_fd, &tmp) < 0) {
		err = -errno;
		goto out_close_path;
	}
	err = -EINVAL;
	if (!S_ISREG(tmp.st_mode))
		goto out_close_path;
	err = -EFBIG;
	if ((uint64_t)tmp.st_size > max_size)
		goto out_close_path;

	/* the inode is a regular file now, so these flags only guard against our own bugs */
	snprintf(self_path, sizeof(self_path), "/proc/self/fd/%d", path_fd);
	fd = open(self_path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		goto out_close_path;
	}
	close(path_fd);

	/* the file may have grown since the first check */
	if (fstat(fd, &tmp) < 0) {
		err = -errno;
		goto out_close_fd;
	}
	err = -EFBIG;
	if ((uint64_t)tmp.st_size > max_size)
		goto out_close_fd;
	if (st)
		*st = tmp;
	return fd;

out_close_fd:
	close(fd);
	return err;
out_close_path:
	close(path_fd);
	return err;
}

/* @flags: O_NOFOLLOW or 0, for the last component */
static int open_in_root(int root_fd, const char *path, int flags, uint64_t max_size,
			struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int path_fd;

	if (!path || !*path)
		return -EINVAL;
	/* with O_NOFOLLOW a final link is the O_PATH fd itself: not regular, refused */
	path_fd = openat2_retry(root_fd, path, &how);
	if (path_fd < 0)
		return path_fd;
	return reopen_regular(path_fd, max_size, st);
}

int safe_open_in_root(int root_fd, const char *path, uint64_t max_size, struct stat *st)
{
	return open_in_root(root_fd, path, 0, max_size, st);
}

int safe_open_in_root_nofollow(int root_fd, const char *path, uint64_t max_size, struct stat *st)
{
	return open_in_root(root_fd, path, O_NOFOLLOW, max_size, st);
}

/* /proc/PID/map_files/START-END into @path; -EINVAL for a bad range */
static int map_files_path(pid_t pid, uint64_t start, uint64_t end, char *path, size_t len)
{
	if (pid <= 0 || start >= end)
		return -EINVAL;
	snprintf(path, len, "/proc/%d/map_files/%llx-%llx", (int)pid, (unsigned long long)start,
		 (unsigned long long)end);
	return 0;
}

int safe_stat_mapped(pid_t pid, uint64_t start, uint64_t end, struct stat *st)
{
	char path[80];
	int err;

	err = map_files_path(pid, start, end, path, sizeof(path));
	if (err)
		return err;
	if (stat(path, st) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return S_ISREG(st->st_mode) ? 0 : -EINVAL;
}

int safe_open_mapped(pid_t pid, uint64_t start, uint64_t end, uint64_t max_size, struct stat *st)
{
	char path[80];
	int path_fd, err;

	err = map_files_path(pid, start, end, path, sizeof(path));
	if (err)
		return err;
	/* the magic link names the mapped inode itself: follow it, to an O_PATH fd */
	path_fd = open(path, O_PATH | O_CLOEXEC);
	if (path_fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return reopen_regular(path_fd, max_size, st);
}
