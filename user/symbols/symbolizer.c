// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer - the caches behind naming: ELF files and mapping paths.
 *
 * Two chained hashes owned by the symbolizer, under its mutex:
 * - files: parsed ELF files keyed by the (st_dev, st_ino) of the opened file,
 *   shared by every process; a file that is not valid ELF stays as a
 *   negative entry so it is parsed once, not once per address or process;
 * - strings: interned mapping paths.
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

#define KERNEL_MAPPING "[kernel.kallsyms]"

struct hnode {
	struct hnode *next;
	uint64_t hash;
};

struct htab {
	struct hnode **buckets;
	size_t nr_buckets; /* a power of two, or 0 before the first insert */
	size_t nr;
};

struct str_node {
	struct hnode h;
	char s[];
};

struct sym_file {
	struct hnode h;
	dev_t dev;
	ino_t ino;
	struct elf_syms *es; /* NULL: not a valid ELF (negative entry) */
};

struct symbolizer {
	struct kallsyms *ks; /* NULL: kernel frames stay unnamed */
	pthread_mutex_t lock;
	struct htab files;
	struct htab strings;
	struct symbolizer_stats stats;
};

static void str_node_free(struct hnode *n)
{
	free(n);
}

static void sym_file_free(struct hnode *n)
{
	struct sym_file *ef = (struct sym_file *)n;

	elf_syms__free(ef->es);
	free(ef);
}

static uint64_t hash_u64(uint64_t x)
{
	/* splitmix64 finalizer: pids and inodes are dense, spread them */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static struct hnode *htab_chain(const struct htab *t, uint64_t hash)
{
	if (!t->nr_buckets)
		return NULL;
	return t->buckets[hash & (t->nr_buckets - 1)];
}

static int htab_insert(struct htab *t, struct hnode *n)
{
	size_t i;

	if (t->nr >= t->nr_buckets) {
		size_t nr_new = t->nr_buckets ? t->nr_buckets * 2 : 64;
		struct hnode **b = calloc(nr_new, sizeof(*b));

		if (!b)
			return -ENOMEM;
		for (i = 0; i < t->nr_buckets; i++) {
			struct hnode *p = t->buckets[i], *next;

			for (; p; p = next) {
				next = p->next;
				p->next = b[p->hash & (nr_new - 1)];
				b[p->hash & (nr_new - 1)] = p;
			}
		}
		free(t->buckets);
		t->buckets = b;
		t->nr_buckets = nr_new;
	}
	i = n->hash & (t->nr_buckets - 1);
	n->next = t->buckets[i];
	t->buckets[i] = n;
	t->nr++;
	return 0;
}

static void htab_destroy(struct htab *t, void (*free_node)(struct hnode *))
{
	size_t i;

	for (i = 0; i < t->nr_buckets; i++) {
		struct hnode *p = t->buckets[i], *next;

		for (; p; p = next) {
			next = p->next;
			free_node(p);
		}
	}
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}

/* Return: the interned copy of @s, or NULL (ENOMEM). */
static const char *intern_locked(struct symbolizer *s, const char *str)
{
	uint64_t hash = hash_str(str);
	struct str_node *sn;
	struct hnode *n;
	size_t len;

	if (!*str)
		return "";
	for (n = htab_chain(&s->strings, hash); n; n = n->next) {
		sn = (struct str_node *)n;
		if (n->hash == hash && !strcmp(sn->s, str))
			return sn->s;
	}
	len = strlen(str);
	sn = malloc(sizeof(*sn) + len + 1);
	if (!sn)
		return NULL;
	sn->h.hash = hash;
	memcpy(sn->s, str, len + 1);
	if (htab_insert(&s->strings, &sn->h)) {
		free(sn);
		return NULL;
	}
	return sn->s;
}

static struct sym_file *elf_find(const struct symbolizer *s, dev_t dev, ino_t ino)
{
	uint64_t hash = hash_u64((uint64_t)dev * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ino);
	struct hnode *n;

	for (n = htab_chain(&s->files, hash); n; n = n->next) {
		struct sym_file *ef = (struct sym_file *)n;

		if (n->hash == hash && ef->dev == dev && ef->ino == ino)
			return ef;
	}
	return NULL;
}

static struct sym_file *elf_add(struct symbolizer *s, dev_t dev, ino_t ino, struct elf_syms *es)
{
	struct sym_file *ef = calloc(1, sizeof(*ef));

	if (!ef)
		return NULL;
	ef->dev = dev;
	ef->ino = ino;
	ef->es = es;
	ef->h.hash = hash_u64((uint64_t)dev * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ino);
	if (htab_insert(&s->files, &ef->h)) {
		free(ef);
		return NULL;
	}
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

const struct sym_file *symbolizer__file(struct symbolizer *s, int root_fd, const char *path)
{
	struct elf_syms *es;
	struct sym_file *ef;
	struct stat st;
	int fd, err;

	fd = safe_open_in_root(root_fd, path, SAFE_OPEN_MAX_ELF_SIZE, &st);
	if (fd < 0) {
		pthread_mutex_lock(&s->lock);
		s->stats.elf_open_failed++;
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	pthread_mutex_lock(&s->lock);
	ef = elf_find(s, st.st_dev, st.st_ino);
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
	ef = elf_find(s, st.st_dev, st.st_ino);
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
	ef = elf_add(s, st.st_dev, st.st_ino, es);
	pthread_mutex_unlock(&s->lock);
	if (!ef)
		elf_syms__free(es);
	return ef;
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
	if (!s)
		return;
	htab_destroy(&s->files, sym_file_free);
	htab_destroy(&s->strings, str_node_free);
	kallsyms__free(s->ks);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static void count(struct symbolizer *s, uint64_t *counter, uint64_t n)
{
	pthread_mutex_lock(&s->lock);
	*counter += n;
	pthread_mutex_unlock(&s->lock);
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
