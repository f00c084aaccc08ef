// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer - the caches behind naming: ELF files and mapping paths.
 *
 * Two caches owned by the symbolizer, under its mutex, each an array of
 * entries indexed by a util/htable:
 * - files: parsed ELF files keyed by the (st_dev, st_ino) of the opened file,
 *   shared by every process; a file that is not valid ELF stays as a
 *   negative entry so it is parsed once, not once per address or process.
 *   Entries are heap objects: pointers to them are handed out, and the array
 *   holds those pointers;
 * - strings: interned mapping paths, each its own allocation for the same
 *   reason.
 * Nothing handed out is freed before symbolizer__free(): function names and
 * build ids belong to cached files, paths to the string table, so a frame
 * stays valid after the process state it came from is gone.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/elf_syms.h"
#include "symbols/kallsyms.h"
#include "symbols/safe_open.h"
#include "symbols/symbolizer.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htable.h"

#define KERNEL_MAPPING "[kernel.kallsyms]"

struct sym_file {
	dev_t dev;
	ino_t ino;
	struct elf_syms *es; /* NULL: not a valid ELF (negative entry) */
};

struct symbolizer {
	struct kallsyms *ks; /* NULL: kernel frames stay unnamed */
	pthread_mutex_t lock;
	struct sym_file **files;
	size_t nr_files, cap_files;
	struct htable files_idx;
	char **strings;
	size_t nr_strings, cap_strings;
	struct htable strings_idx;
	struct symbolizer_stats stats;
};

struct file_key {
	dev_t dev;
	ino_t ino;
};

static uint32_t file_hash(dev_t dev, ino_t ino)
{
	uint64_t w[2] = {dev, ino};

	return (uint32_t)hash_words(0, w, 2);
}

static bool file_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sym_file *const *files = ctx;
	const struct file_key *k = key;

	return files[idx]->dev == k->dev && files[idx]->ino == k->ino;
}

static bool string_eq(const void *ctx, uint32_t idx, const void *key)
{
	char *const *strings = ctx;

	return !strcmp(strings[idx], key);
}

/* Return: the interned copy of @s, or NULL (ENOMEM). */
static const char *intern_locked(struct symbolizer *s, const char *str)
{
	size_t len = strlen(str);
	uint32_t hash = (uint32_t)hash_bytes(str, len), idx;
	char *copy;

	if (!len)
		return "";
	idx = htable__find(&s->strings_idx, hash, string_eq, s->strings, str);
	if (idx != HTABLE_NONE)
		return s->strings[idx];
	if (array_grow((void **)&s->strings, &s->cap_strings, s->nr_strings + 1,
		       sizeof(*s->strings), 256))
		return NULL;
	copy = malloc(len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, str, len + 1);
	if (htable__insert(&s->strings_idx, hash, s->nr_strings)) {
		free(copy);
		return NULL;
	}
	s->strings[s->nr_strings++] = copy;
	return copy;
}

static struct sym_file *elf_find(const struct symbolizer *s, dev_t dev, ino_t ino)
{
	struct file_key key = {dev, ino};
	uint32_t idx;

	idx = htable__find(&s->files_idx, file_hash(dev, ino), file_eq, s->files, &key);
	return idx == HTABLE_NONE ? NULL : s->files[idx];
}

static struct sym_file *elf_add(struct symbolizer *s, dev_t dev, ino_t ino, struct elf_syms *es)
{
	struct sym_file *ef;

	if (array_grow((void **)&s->files, &s->cap_files, s->nr_files + 1, sizeof(*s->files), 64))
		return NULL;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	*ef = (struct sym_file){.dev = dev, .ino = ino, .es = es};
	if (htable__insert(&s->files_idx, file_hash(dev, ino), s->nr_files)) {
		free(ef);
		return NULL;
	}
	s->files[s->nr_files++] = ef;
	return ef;
}

const char *symbolizer__intern(struct symbolizer *s, const char *str)
{
	const char *ret;

	pthread_mutex_lock(&s->lock);
	ret = intern_locked(s, str);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static void count(struct symbolizer *s, uint64_t *counter, uint64_t n)
{
	pthread_mutex_lock(&s->lock);
	*counter += n;
	pthread_mutex_unlock(&s->lock);
}

/* The entry of the file open on @fd (consumed), parsed unless its (dev, ino) is cached. */
static const struct sym_file *file_from_fd(struct symbolizer *s, int fd, const struct stat *st)
{
	struct elf_syms *es;
	struct sym_file *ef;
	int err;

	pthread_mutex_lock(&s->lock);
	ef = elf_find(s, st->st_dev, st->st_ino);
	pthread_mutex_unlock(&s->lock);
	if (ef) {
		close(fd);
		return ef;
	}
	/* parsed outside the lock: a large file must not stall other callers */
	es = elf_syms__open_fd(fd);
	err = es ? 0 : errno;
	close(fd);
	/* running out of memory is not the file's fault: cache no verdict */
	if (err == ENOMEM)
		return NULL;
	pthread_mutex_lock(&s->lock);
	ef = elf_find(s, st->st_dev, st->st_ino);
	if (ef) {
		/* another thread parsed it meanwhile: keep the first */
		pthread_mutex_unlock(&s->lock);
		elf_syms__free(es);
		return ef;
	}
	if (es)
		s->stats.elf_opened++;
	else
		s->stats.elf_parse_failed++;
	ef = elf_add(s, st->st_dev, st->st_ino, es);
	pthread_mutex_unlock(&s->lock);
	if (!ef)
		elf_syms__free(es);
	return ef;
}

const struct sym_file *symbolizer__file_at(struct symbolizer *s, int root_fd, const char *path,
					   uint64_t inode)
{
	struct stat st;
	int fd;

	fd = root_fd >= 0 ? safe_open_in_root(root_fd, path, SAFE_OPEN_MAX_ELF_SIZE, &st) : -EBADF;
	if (fd < 0) {
		count(s, &s->stats.elf_open_failed, 1);
		return NULL;
	}
	if ((uint64_t)st.st_ino != inode) {
		close(fd);
		count(s, &s->stats.elf_mismatch, 1);
		return NULL;
	}
	return file_from_fd(s, fd, &st);
}

const struct sym_file *symbolizer__file_mapped(struct symbolizer *s, pid_t pid, int root_fd,
					       const struct sym_map *m)
{
	struct stat st;
	int fd;

	fd = safe_open_mapped(pid, m->start, m->end, SAFE_OPEN_MAX_ELF_SIZE, &st);
	/* the path of an unlinked file names another file or none */
	if ((fd == -EPERM || fd == -EACCES) && !m->deleted) {
		count(s, &s->stats.elf_by_path, 1);
		return symbolizer__file_at(s, root_fd, m->path, m->inode);
	}
	if (fd < 0) {
		count(s, &s->stats.elf_open_failed, 1);
		return NULL;
	}
	return file_from_fd(s, fd, &st);
}

bool symbolizer__file_ok(const struct sym_file *f)
{
	return f && f->es;
}

struct symbolizer *symbolizer__new(int kernel)
{
	struct symbolizer *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return errno = ENOMEM, NULL;
	pthread_mutex_init(&s->lock, NULL);
	if (kernel) {
		s->ks = kallsyms__load();
		/* hidden or missing kallsyms only leave kernel frames unnamed */
		if (!s->ks && errno == ENOMEM) {
			free(s);
			return errno = ENOMEM, NULL;
		}
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_files; i++) {
		elf_syms__free(s->files[i]->es);
		free(s->files[i]);
	}
	free(s->files);
	htable__destroy(&s->files_idx);
	for (i = 0; i < s->nr_strings; i++)
		free(s->strings[i]);
	free(s->strings);
	htable__destroy(&s->strings_idx);
	kallsyms__free(s->ks);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int symbolizer__user(struct symbolizer *s, const struct sym_map *m, uint64_t addr,
		     bool return_address, struct sym_frame *out)
{
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	/*
	 * A return address points past its call, possibly into the next
	 * function or mapping: the frame is the call, so look up addr - 1.
	 */
	if (return_address && addr)
		addr--;
	out->mapping_path = m->path;
	out->map_start = m->start;
	out->map_end = m->end;
	out->map_pgoff = m->pgoff;
	if (symbolizer__file_ok(m->elf)) {
		struct elf_syms *es = m->elf->es;

		out->build_id = elf_syms__build_id(es);
		if (!elf_syms__file_offset_to_vaddr(es, addr - m->start + m->pgoff, &vaddr))
			out->function = elf_syms__lookup(es, vaddr, NULL);
	}
	if (!out->function)
		count(s, &s->stats.unnamed, 1);
	return 0;
}

void symbolizer__unmapped(struct symbolizer *s)
{
	count(s, &s->stats.unmapped, 1);
}

void symbolizer__maps_read(struct symbolizer *s, uint64_t bad_lines)
{
	pthread_mutex_lock(&s->lock);
	s->stats.maps_reads++;
	s->stats.maps_bad_lines += bad_lines;
	pthread_mutex_unlock(&s->lock);
}

int symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool return_address,
		       struct sym_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->mapping_path = KERNEL_MAPPING;
	if (return_address && addr)
		addr--;
	if (s->ks)
		out->function = kallsyms__lookup(s->ks, addr, NULL, NULL);
	if (!out->function)
		count(s, &s->stats.unnamed, 1);
	return 0;
}

bool symbolizer__has_kernel(const struct symbolizer *s)
{
	return s && s->ks;
}

void symbolizer__stats(struct symbolizer *s, struct symbolizer_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->stats;
	pthread_mutex_unlock(&s->lock);
}
