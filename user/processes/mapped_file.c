// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "elf/safe_open.h"
#include "processes/mapped_file.h"
#include "processes/proc_maps.h"
#include "util/read_capped.h"

int mapped_file__open(pid_t pid, const struct proc_map *m, int *root_fd)
{
	struct stat st;
	int fd;

	fd = safe_open_mapped(pid, m->start, m->end, SAFE_OPEN_MAX_ELF_SIZE, &st);
	if (fd != -EPERM)
		return fd;
	/* no map_files: the path in the process's root, if it is still the inode mapped */
	if (*root_fd < 0)
		*root_fd = proc_root_open(pid);
	if (*root_fd < 0)
		return *root_fd;
	fd = safe_open_in_root(*root_fd, m->path, SAFE_OPEN_MAX_ELF_SIZE, &st);
	if (fd >= 0 && (uint64_t)st.st_ino != m->inode) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

uint64_t mapped_file__exe_phdr(pid_t pid)
{
	uint64_t aux[128], phdr = 0;
	char path[32];
	ssize_t n;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	n = read_small(path, aux, sizeof(aux));
	for (i = 0; n > 0 && i + 1 < (size_t)n / sizeof(aux[0]); i += 2)
		if (aux[i] == AT_PHDR)
			phdr = aux[i + 1];
	return phdr;
}

bool mapped_file__same(const struct proc_map *a, const struct proc_map *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && !strcmp(a->path, b->path);
}

const struct proc_map *mapped_file__exe(pid_t pid, const struct proc_maps *maps)
{
	uint64_t phdr = mapped_file__exe_phdr(pid);
	const struct proc_map *at = NULL;
	size_t i;

	for (i = 0; i < maps->nr && phdr && !at; i++)
		if (phdr >= maps->maps[i].start && phdr < maps->maps[i].end)
			at = &maps->maps[i];
	if (!at || at->path[0] != '/' || !at->inode)
		return NULL;
	/* its lowest mapping: sorted by start, the first of the same file */
	for (i = 0; i < maps->nr; i++)
		if (mapped_file__same(&maps->maps[i], at))
			return &maps->maps[i];
	return at;
}
