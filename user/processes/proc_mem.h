/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * proc_mem - read another process's memory, only where a read cannot block.
 *
 * Reads go through /proc/PID/mem, opened once: the file stays bound to the
 * address space it was opened on, so a pid reused by another process, or
 * the same process after an exec, reads nothing (-EIO), never the
 * newcomer's memory.
 *
 * A read faults the target's pages in on the collector's behalf.  Anonymous
 * memory and shmem (memfd) fault without I/O; a page of a file mapping may
 * wait for its file system, and a hostile process can map a file whose
 * reads never complete (FUSE).  So a range is read only when it lies inside
 * one mapping of @maps (the caller's latest parse of /proc/PID/maps) that is
 * anonymous, a memfd or other shmem file, or a private writable mapping (an
 * ELF file's data, copied on write at start-up).  The maps can change
 * between that check and the read: a process that unmaps the range and maps
 * a file there within the microseconds between them can still make one read
 * wait on that file (a residual risk: closing it needs the reads off the
 * main thread).
 * Any thread; one proc_mem per thread at a time.
 */
#ifndef CTXPROF_PROC_MEM_H
#define CTXPROF_PROC_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_maps;
struct proc_mem;

/**
 * proc_mem__open() - open @pid's memory.
 * Return: NULL with errno set (ESRCH: gone; EACCES/EPERM: no ptrace access).
 * Pair with proc_mem__free().
 */
struct proc_mem *proc_mem__open(pid_t pid);

/**
 * proc_mem__read() - copy @len bytes at @addr into @buf.
 * Return: 0; -EACCES when the range is not inside one safe mapping of
 * @maps; -EFAULT when it could not be read whole (unmapped since, or the
 * process is gone); -errno.
 */
int proc_mem__read(struct proc_mem *m, const struct proc_maps *maps, uint64_t addr, void *buf,
		   size_t len);

/** proc_mem__free() - accepts NULL. */
void proc_mem__free(struct proc_mem *m);

#endif /* CTXPROF_PROC_MEM_H */
