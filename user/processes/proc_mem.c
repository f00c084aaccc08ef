// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "processes/proc_maps.h"
#include "processes/proc_mem.h"

struct proc_mem {
	int fd;
};

/* the device of the kernel's internal shmem mount, which every memfd is on */
static dev_t shmem_dev;
static bool shmem_dev_known;
static pthread_once_t shmem_once = PTHREAD_ONCE_INIT;

static void find_shmem_dev(void)
{
	struct stat st;
	int fd = memfd_create("ctxprof-probe", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (!fstat(fd, &st)) {
		shmem_dev = st.st_dev;
		shmem_dev_known = true;
	}
	close(fd);
}

struct proc_mem *proc_mem__open(pid_t pid)
{
	struct proc_mem *m;
	char path[32];

	pthread_once(&shmem_once, find_shmem_dev);
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0) {
		free(m);
		return NULL;
	}
	return m;
}

/* whether a fault in @pm never waits for a file system */
static bool mapping_safe(const struct proc_map *pm)
{
	if (!pm->inode)
		return true;
	if (shmem_dev_known && pm->dev_major == major(shmem_dev) &&
	    pm->dev_minor == minor(shmem_dev))
		return true;
	return (pm->perms & (PROC_MAP_W | PROC_MAP_P)) == (PROC_MAP_W | PROC_MAP_P);
}

int proc_mem__read(struct proc_mem *m, const struct proc_maps *maps, uint64_t addr, void *buf,
		   size_t len)
{
	const struct proc_map *pm;
	ssize_t n;

	if (!len)
		return 0;
	if (addr + len < addr || (int64_t)addr < 0)
		return -EACCES;
	pm = proc_maps__find(maps, addr);
	if (!pm || addr + len > pm->end || !(pm->perms & PROC_MAP_R) || !mapping_safe(pm))
		return -EACCES;
	n = pread(m->fd, buf, len, (off_t)addr);
	if (n < 0)
		return errno == EIO ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

void proc_mem__free(struct proc_mem *m)
{
	if (!m)
		return;
	close(m->fd);
	free(m);
}
