/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mapped_file - the files a target process maps, opened as the very inodes
 * it maps, and which of them is its executable.  For the readers of
 * application context that look into a process's ELF files (appctx/
 * otel_tls, appctx/go_labels).
 *
 * Threads: no state; any thread.
 */
#ifndef CTXPROF_MAPPED_FILE_H
#define CTXPROF_MAPPED_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map;
struct proc_maps;

/**
 * mapped_file__open() - open the file @pid maps at @m: through
 * /proc/PID/map_files (elf/safe_open.h: the inode mapped, whatever its
 * path names now); without the capability for it, by @m's path inside the
 * process's root, if that is still the inode mapped.
 * @root_fd: the process's root (proc_root_open()), opened here at the
 * first need and kept for the caller's next calls; the caller closes it
 * when >= 0 (start with -1)
 * Return: a read-only fd (regular file, at most SAFE_OPEN_MAX_ELF_SIZE),
 * or -errno (-ESTALE: the path names another inode now).
 */
int mapped_file__open(pid_t pid, const struct proc_map *m, int *root_fd);

/**
 * mapped_file__exe_phdr() - AT_PHDR from /proc/PID/auxv: an address inside
 * the executable's mappings; 0 when unreadable.
 */
uint64_t mapped_file__exe_phdr(pid_t pid);

/** mapped_file__same() - @a and @b map the same file (inode, device, path). */
bool mapped_file__same(const struct proc_map *a, const struct proc_map *b);

/**
 * mapped_file__exe() - the lowest mapping of @pid's executable in @maps:
 * the file whose mappings hold AT_PHDR.
 * Return: the mapping, or NULL when auxv is unreadable or no file mapping
 * holds it.
 */
const struct proc_map *mapped_file__exe(pid_t pid, const struct proc_maps *maps);

#endif /* CTXPROF_MAPPED_FILE_H */
