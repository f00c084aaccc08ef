// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer - turn sampled addresses into mappings and function names.
 *
 * Three tables, all chained hashes owned by the symbolizer:
 * - pids: per process, the raw maps text of the latest read (to skip
 *   unchanged refreshes) and up to SYMBOLIZER_MAX_SNAPSHOTS snapshots of its
 *   executable mappings, newest last;
 * - elfs: parsed ELF files keyed by the (st_dev, st_ino) of the opened file,
 *   shared by every pid; a file that is not valid ELF stays as a negative
 *   entry so it is parsed once, not once per address or per pid;
 * - strings: interned mapping paths.
 * Nothing handed out is freed before symbolizer__free(): function names and
 * build ids belong to cached ELF files, paths to the string table, so a frame
 * stays valid after the snapshot it came from is dropped.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/elf_syms.h"
#include "symbols/kallsyms.h"
#include "processes/proc_maps.h"
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

struct elf_file {
	struct hnode h;
	dev_t dev;
	ino_t ino;
	struct elf_syms *es; /* NULL: not a valid ELF (negative entry) */
};

/* One executable mapping, as captured */
struct snap_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t inode; /* as /proc/PID/maps reports it */
	uint32_t dev_major;
	uint32_t dev_minor;
	const char *path;     /* interned; "" for anonymous */
	struct elf_file *elf; /* NULL when there is no ELF to read or it failed */
	bool deleted;	      /* the file was unlinked when the snapshot was taken */
};

struct snapshot {
	struct snap_map *maps; /* sorted by start, non-overlapping */
	size_t nr;
};

struct pid_entry {
	struct hnode h;
	pid_t pid;
	char *text; /* maps text behind the latest snapshot */
	size_t text_len;
	struct snapshot *snaps; /* oldest first */
	unsigned int nr_snaps;
	unsigned int cap_snaps; /* grows up to SYMBOLIZER_MAX_SNAPSHOTS */
};

struct symbolizer {
	struct kallsyms *ks; /* NULL: kernel frames stay unnamed */
	struct htab pids;
	struct htab elfs;
	struct htab strings;
	struct symbolizer_stats stats;
};

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

/* unlink @n from its chain; the caller frees it */
static void htab_remove(struct htab *t, struct hnode *n)
{
	struct hnode **pp = &t->buckets[n->hash & (t->nr_buckets - 1)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			t->nr--;
			return;
		}
	}
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

static void str_node_free(struct hnode *n)
{
	free(n);
}

static void elf_file_free(struct hnode *n)
{
	struct elf_file *ef = (struct elf_file *)n;

	elf_syms__free(ef->es);
	free(ef);
}

static void pid_entry_free(struct hnode *n)
{
	struct pid_entry *pe = (struct pid_entry *)n;
	unsigned int i;

	for (i = 0; i < pe->nr_snaps; i++)
		free(pe->snaps[i].maps);
	free(pe->snaps);
	free(pe->text);
	free(pe);
}

/* Return: the interned copy of @s, or NULL (ENOMEM). */
static const char *intern(struct symbolizer *s, const char *str)
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

static struct pid_entry *pid_find(const struct symbolizer *s, pid_t pid)
{
	uint64_t hash = hash_u64((uint64_t)pid);
	struct hnode *n;

	for (n = htab_chain(&s->pids, hash); n; n = n->next) {
		if (n->hash == hash && ((struct pid_entry *)n)->pid == pid)
			return (struct pid_entry *)n;
	}
	return NULL;
}

static struct pid_entry *pid_add(struct symbolizer *s, pid_t pid)
{
	struct pid_entry *pe = calloc(1, sizeof(*pe));

	if (!pe)
		return NULL;
	pe->pid = pid;
	pe->h.hash = hash_u64((uint64_t)pid);
	if (htab_insert(&s->pids, &pe->h)) {
		free(pe);
		return NULL;
	}
	return pe;
}

static struct elf_file *elf_find(const struct symbolizer *s, dev_t dev, ino_t ino)
{
	uint64_t hash = hash_u64((uint64_t)dev * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ino);
	struct hnode *n;

	for (n = htab_chain(&s->elfs, hash); n; n = n->next) {
		struct elf_file *ef = (struct elf_file *)n;

		if (n->hash == hash && ef->dev == dev && ef->ino == ino)
			return ef;
	}
	return NULL;
}

static struct elf_file *elf_add(struct symbolizer *s, dev_t dev, ino_t ino, struct elf_syms *es)
{
	struct elf_file *ef = calloc(1, sizeof(*ef));

	if (!ef)
		return NULL;
	ef->dev = dev;
	ef->ino = ino;
	ef->es = es;
	ef->h.hash = hash_u64((uint64_t)dev * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ino);
	if (htab_insert(&s->elfs, &ef->h)) {
		free(ef);
		return NULL;
	}
	return ef;
}

static const struct snap_map *snapshot_find(const struct snapshot *snap, uint64_t addr)
{
	size_t lo = 0, hi = snap->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (snap->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= snap->maps[lo - 1].end)
		return NULL;
	return &snap->maps[lo - 1];
}

static bool snap_map_same_file(const struct snap_map *a, const struct snap_map *b)
{
	return a->path == b->path && a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor;
}

static bool snapshot_equal(const struct snapshot *a, const struct snapshot *b)
{
	size_t i;

	if (a->nr != b->nr)
		return false;
	for (i = 0; i < a->nr; i++) {
		if (a->maps[i].start != b->maps[i].start || a->maps[i].end != b->maps[i].end ||
		    a->maps[i].pgoff != b->maps[i].pgoff ||
		    !snap_map_same_file(&a->maps[i], &b->maps[i]))
			return false;
	}
	return true;
}

/* State shared by the ELF resolution of one snapshot's mappings */
struct resolve_ctx {
	pid_t pid;
	bool root_tried;
	int root_fd;		     /* fd, or -errno when proc_root_open() failed */
	const struct snapshot *prev; /* the pid's previous snapshot, or NULL */
	const struct snap_map *last; /* the last mapping opened */
};

/*
 * Open the file behind @m inside the target's root and find or parse its ELF.
 * Return: the cache entry (possibly negative), or NULL when the file could not
 * be opened (counted) or memory ran out.
 */
static struct elf_file *elf_open_for_map(struct symbolizer *s, struct resolve_ctx *rc,
					 const struct snap_map *m)
{
	struct elf_syms *es;
	struct elf_file *ef;
	struct stat st;
	int fd, err;

	if (!rc->root_tried) {
		rc->root_fd = proc_root_open(rc->pid);
		rc->root_tried = true;
	}
	if (rc->root_fd < 0) {
		s->stats.elf_open_failed++;
		return NULL;
	}
	fd = safe_open_in_root(rc->root_fd, m->path, SAFE_OPEN_MAX_ELF_SIZE, &st);
	if (fd < 0) {
		s->stats.elf_open_failed++;
		return NULL;
	}
	ef = elf_find(s, st.st_dev, st.st_ino);
	if (ef) {
		close(fd);
		return ef;
	}
	es = elf_syms__open_fd(fd);
	err = es ? 0 : errno;
	close(fd);
	/* running out of memory is not the file's fault: cache no verdict */
	if (err == ENOMEM)
		return NULL;
	if (es)
		s->stats.elf_opened++;
	else
		s->stats.elf_parse_failed++;
	ef = elf_add(s, st.st_dev, st.st_ino, es);
	if (!ef)
		elf_syms__free(es);
	return ef;
}

/* The same file at the same place in the previous snapshot, if any */
static const struct snap_map *prev_same_map(const struct snapshot *prev, const struct snap_map *m)
{
	const struct snap_map *old;

	if (!prev)
		return NULL;
	old = snapshot_find(prev, m->start);
	if (!old || old->start != m->start || !snap_map_same_file(old, m))
		return NULL;
	return old;
}

static void snapshot_resolve(struct symbolizer *s, pid_t pid, struct snapshot *snap,
			     const struct snapshot *prev)
{
	struct resolve_ctx rc = {.pid = pid, .prev = prev};
	const struct snap_map *old;
	size_t i;

	for (i = 0; i < snap->nr; i++) {
		struct snap_map *m = &snap->maps[i];

		/* "[vdso]", anonymous JIT code and the like have no file to read */
		if (m->path[0] != '/')
			continue;
		/* a refresh usually finds the file where it was: reuse that verdict */
		old = prev_same_map(prev, m);
		if (old) {
			m->elf = old->elf;
			continue;
		}
		/*
		 * The path of an unlinked file now names another file or none:
		 * reading it would give wrong names, so only a verdict taken while
		 * the file was there (above) is used.
		 */
		if (m->deleted)
			continue;
		/* a file mapped many times in a row is opened once */
		if (rc.last && snap_map_same_file(rc.last, m)) {
			m->elf = rc.last->elf;
			continue;
		}
		m->elf = elf_open_for_map(s, &rc, m);
		rc.last = m;
	}
	if (rc.root_tried && rc.root_fd >= 0)
		close(rc.root_fd);
}

/*
 * Capture @pm's executable mappings: a sampled PC or return address lies in
 * one, and an address anywhere else is garbage from a broken frame chain.
 */
static int snapshot_build(struct symbolizer *s, const struct proc_maps *pm, struct snapshot *snap)
{
	size_t i, nr = 0;

	memset(snap, 0, sizeof(*snap));
	for (i = 0; i < pm->nr; i++)
		nr += !!(pm->maps[i].perms & PROC_MAP_X);
	if (!nr)
		return 0;
	snap->maps = calloc(nr, sizeof(*snap->maps));
	if (!snap->maps)
		return -ENOMEM;
	for (i = 0; i < pm->nr; i++) {
		const struct proc_map *pmap = &pm->maps[i];
		struct snap_map *m;

		if (!(pmap->perms & PROC_MAP_X))
			continue;
		m = &snap->maps[snap->nr++];
		m->start = pmap->start;
		m->end = pmap->end;
		m->pgoff = pmap->pgoff;
		m->inode = pmap->inode;
		m->dev_major = pmap->dev_major;
		m->dev_minor = pmap->dev_minor;
		m->deleted = pmap->deleted;
		m->path = intern(s, pmap->path);
		if (!m->path) {
			free(snap->maps);
			memset(snap, 0, sizeof(*snap));
			return -ENOMEM;
		}
	}
	return 0;
}

static int pid_entry_push(struct pid_entry *pe, const struct snapshot *snap)
{
	if (pe->nr_snaps == SYMBOLIZER_MAX_SNAPSHOTS) {
		free(pe->snaps[0].maps);
		memmove(&pe->snaps[0], &pe->snaps[1], (pe->nr_snaps - 1) * sizeof(pe->snaps[0]));
		pe->nr_snaps--;
	}
	if (pe->nr_snaps == pe->cap_snaps) {
		unsigned int cap = pe->cap_snaps ? pe->cap_snaps * 2 : 2;
		struct snapshot *snaps;

		if (cap > SYMBOLIZER_MAX_SNAPSHOTS)
			cap = SYMBOLIZER_MAX_SNAPSHOTS;
		snaps = realloc(pe->snaps, cap * sizeof(*snaps));
		if (!snaps)
			return -ENOMEM;
		pe->snaps = snaps;
		pe->cap_snaps = cap;
	}
	pe->snaps[pe->nr_snaps++] = *snap;
	return 0;
}

struct symbolizer *symbolizer__new(int kernel)
{
	struct symbolizer *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return errno = ENOMEM, NULL;
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
	htab_destroy(&s->pids, pid_entry_free);
	htab_destroy(&s->elfs, elf_file_free);
	htab_destroy(&s->strings, str_node_free);
	kallsyms__free(s->ks);
	free(s);
}

int symbolizer__snapshot(struct symbolizer *s, pid_t pid)
{
	struct snapshot snap, *latest;
	struct proc_maps *pm = NULL;
	struct pid_entry *pe;
	size_t len;
	char *text;
	int err;

	err = proc_maps__read_text(pid, &text, &len);
	if (err)
		return err;
	s->stats.maps_reads++;
	pe = pid_find(s, pid);
	if (pe && pe->text && pe->text_len == len && !memcmp(pe->text, text, len)) {
		free(text);
		return 0;
	}

	pm = proc_maps__parse(text, len);
	if (!pm) {
		err = -errno;
		goto out_free_text;
	}
	s->stats.maps_bad_lines += pm->nr_bad_lines;
	err = snapshot_build(s, pm, &snap);
	if (err)
		goto out_free_maps;
	/*
	 * No executable mapping (a kernel thread, a zombie): nothing to add, and
	 * earlier snapshots still answer for the process.
	 */
	if (!snap.nr)
		goto out_free_maps;
	if (!pe) {
		pe = pid_add(s, pid);
		if (!pe) {
			err = -ENOMEM;
			goto out_free_snap;
		}
	}
	latest = pe->nr_snaps ? &pe->snaps[pe->nr_snaps - 1] : NULL;
	/* heap or stack growth changes the text, not the code: keep one snapshot */
	if (latest && snapshot_equal(latest, &snap)) {
		free(snap.maps);
	} else {
		snapshot_resolve(s, pid, &snap, latest);
		err = pid_entry_push(pe, &snap);
		if (err)
			goto out_free_snap;
	}
	free(pe->text);
	pe->text = text;
	pe->text_len = len;
	text = NULL;
	goto out_free_maps;

out_free_snap:
	free(snap.maps);
out_free_maps:
	proc_maps__free(pm);
out_free_text:
	free(text);
	return err;
}

int symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t addr, int return_address,
		     struct sym_frame *out)
{
	const struct snap_map *m = NULL;
	const struct pid_entry *pe;
	uint64_t vaddr;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	/*
	 * A return address points past its call, possibly into the next
	 * function or mapping: the frame is the call, so look up addr - 1.
	 */
	if (return_address) {
		if (!addr)
			goto unmapped;
		addr--;
	}
	pe = pid_find(s, pid);
	for (i = pe ? pe->nr_snaps : 0; i > 0 && !m; i--)
		m = snapshot_find(&pe->snaps[i - 1], addr);
	if (!m)
		goto unmapped;

	out->mapping_path = m->path;
	out->map_start = m->start;
	out->map_end = m->end;
	out->map_pgoff = m->pgoff;
	if (m->elf && m->elf->es) {
		struct elf_syms *es = m->elf->es;

		out->build_id = elf_syms__build_id(es);
		if (!elf_syms__file_offset_to_vaddr(es, addr - m->start + m->pgoff, &vaddr))
			out->function = elf_syms__lookup(es, vaddr, NULL);
	}
	if (!out->function)
		s->stats.unnamed++;
	return 0;

unmapped:
	s->stats.unmapped++;
	return -ENOENT;
}

int symbolizer__kernel(struct symbolizer *s, uint64_t addr, int return_address,
		       struct sym_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->mapping_path = KERNEL_MAPPING;
	if (return_address && addr)
		addr--;
	if (s->ks)
		out->function = kallsyms__lookup(s->ks, addr, NULL, NULL);
	if (!out->function)
		s->stats.unnamed++;
	return 0;
}

void symbolizer__forget(struct symbolizer *s, pid_t pid)
{
	struct pid_entry *pe = pid_find(s, pid);

	if (!pe)
		return;
	htab_remove(&s->pids, &pe->h);
	pid_entry_free(&pe->h);
}

bool symbolizer__knows(const struct symbolizer *s, pid_t pid)
{
	return pid_find(s, pid) != NULL;
}

int symbolizer__has_kernel(const struct symbolizer *s)
{
	return s && s->ks;
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = s->stats;
}
