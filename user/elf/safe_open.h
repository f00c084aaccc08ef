/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * safe_open - open a target process's files without leaving its root.
 *
 * Paths taken from a target (its /proc/PID/maps, its ELF files) are resolved
 * under /proc/PID/root with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS),
 * so a symlink planted in a container cannot point the collector at a host
 * file.  Only regular files up to a size cap are opened; a FIFO, device or
 * socket is refused, because reading one could block the collector forever.
 *
 * Threads: no state: each call opens its own descriptor; any thread.
 */
#ifndef CTXPROF_SAFE_OPEN_H
#define CTXPROF_SAFE_OPEN_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "elf/elf_file.h"

/* ELF files larger than elf_file reads are not opened (a hostile file could be huge) */
#define SAFE_OPEN_MAX_ELF_SIZE ELF_FILE_MAX_SIZE

/**
 * proc_root_open() - open /proc/@pid/root as a directory handle.
 * Return: an O_PATH directory fd, or -errno (-ESRCH when the process is gone).
 */
int proc_root_open(pid_t pid);

/**
 * safe_open_in_root() - open @path read-only, resolved inside @root_fd.
 * @root_fd: directory fd from proc_root_open() (or any directory fd)
 * @path: absolute or relative path as the target sees it
 * @max_size: refuse files larger than this (-EFBIG)
 * @st: filled with the file's stat on success; may be NULL
 *
 * ".." and absolute symlinks cannot leave @root_fd: they resolve as if it
 * were "/".  A non-regular file is refused before it is opened, so no device
 * or FIFO open() ever runs; the file is then re-opened via /proc/self/fd.
 *
 * Return: a read-only O_CLOEXEC fd, or -errno: -ELOOP when the path crosses a
 * magic link (/proc/PID/root, /proc/self/fd/N), -EAGAIN when renames kept
 * racing the lookup, -EINVAL when it is not a regular file, -EFBIG when too
 * large, -ENOSYS when openat2 is missing, -ENOENT and the like from the lookup.
 */
int safe_open_in_root(int root_fd, const char *path, uint64_t max_size, struct stat *st);

/**
 * safe_open_in_root_nofollow() - safe_open_in_root(), but a symbolic link as
 * the last component is refused (-EINVAL, not a regular file) rather than
 * followed: for a file the target itself writes at a known path (its perf
 * map), which it could replace with a link to another of its files.
 */
int safe_open_in_root_nofollow(int root_fd, const char *path, uint64_t max_size, struct stat *st);

/**
 * safe_open_mapped() - open the very file @pid maps at [@start, @end), through
 * /proc/PID/map_files: whatever its path names now (a deleted or replaced
 * file, a planted one in a container), this is the inode mapped.  The same
 * checks as safe_open_in_root(): a regular file up to @max_size, opened
 * read-only after the check.
 * Return: a read-only O_CLOEXEC fd, or -errno: -EPERM without CAP_SYS_ADMIN
 * or CAP_CHECKPOINT_RESTORE (the kernel's rule for map_files), -ESRCH when
 * the mapping or the process is gone, -EINVAL, -EFBIG as above.
 */
int safe_open_mapped(pid_t pid, uint64_t start, uint64_t end, uint64_t max_size, struct stat *st);

/**
 * safe_stat_mapped() - the identity of the file @pid maps at [@start, @end)
 * without opening it (a stat through the magic link): enough to find a file
 * parsed already.  Opening nothing, it needs no type check.
 * Return: 0 with @st filled, or -errno as safe_open_mapped(); -EINVAL for a
 * mapping of anything but a regular file.
 */
int safe_stat_mapped(pid_t pid, uint64_t start, uint64_t end, struct stat *st);

#endif /* CTXPROF_SAFE_OPEN_H */
