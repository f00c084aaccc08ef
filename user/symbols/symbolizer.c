// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer - the cache behind naming: parsed ELF files, kernel symbols.
 *
 * Under the symbolizer's mutex:
 * - files: parsed ELF files (with their debug file), heap objects whose
 *   pointers the snapshots' mappings hold (mapping.file), each with a count
 *   of those mappings; a file that is not valid ELF, or did not fit the
 *   budget, stays as a negative entry so it is not parsed once per mapping;
 *   indexed by GNU build id;
 * - aliases: file identities (device, inode, size, mtime, ctime) -> file;
 *   a file has one per identity it was found under;
 * - strings: interned kernel module mapping names ("[ext4]").
 * An entry no mapping holds goes once idle (symbolizer__trim()) or to make
 * room; going rebuilds both indexes (util/htable has no removal), which is
 * rare: a batch at a time, outside the paths that name frames.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/debug_file.h"
#include "elf/elf_file.h"
#include "elf/gopclntab.h"
#include "elf/safe_open.h"
#include "processes/mappings.h"
#include "processes/proc_maps.h"
#include "processes/process_state.h"
#include "symbols/demangle.h"
#include "symbols/elf_plt.h"
#include "symbols/elf_syms.h"
#include "symbols/kallsyms.h"
#include "symbols/symbolizer.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/file_id.h"
#include "util/hash.h"
#include "util/htable.h"
#include "util/read_capped.h"

#define KERNEL_MAPPING	 "[kernel.kallsyms]"
#define KERNEL_NOTES	 "/sys/kernel/notes"
#define KERNEL_NOTES_MAX (64u << 10) /* a few hundred bytes in practice */
#define VDSO_MAPPING	 "[vdso]"
/* entries at most, negative ones included: past it, unheld ones go first */
#define MAX_FILES 16384

struct display_name {
	const char *name; /* as the symbol table has it; keyed by address */
	char *shown;	  /* version dropped, demangled; NULL: @name itself */
};

struct sym_file {
	struct elf_syms *es;  /* NULL: a negative entry */
	struct elf_syms *dbg; /* its separate debug file's symbols, NULL when none */
	size_t bytes;	      /* what es and dbg hold */
	unsigned int refs;    /* mappings holding it */
	uint64_t idle_since;  /* CLOCK_MONOTONIC when @refs went to 0 */
	uint64_t last_used;   /* the symbolizer's tick: least recently used goes first */
	/* display forms of its versioned or mangled names, made once each */
	struct display_name *names;
	size_t nr_names, cap_names;
	struct htable names_idx;
};

struct alias {
	struct file_id id;
	struct sym_file *f;
};

struct symbolizer {
	struct kallsyms *ks; /* NULL: kernel frames stay unnamed */
	uint64_t ktext_start, ktext_end;
	bool has_kernel_build_id;
	char kernel_build_id[ELF_SYMS_BUILD_ID_HEX];
	struct sym_file vdso; /* vdso.es NULL when unknown; never counted or freed by refs */
	uint64_t vdso_size;
	pthread_mutex_t lock;
	struct sym_file **files;
	size_t nr_files, cap_files;
	struct htable by_build_id; /* over files[] with a build id */
	struct alias *aliases;
	size_t nr_aliases, cap_aliases;
	struct htable by_id; /* over aliases[] */
	char **strings;
	size_t nr_strings, cap_strings;
	struct htable strings_idx;
	uint64_t budget, bytes, tick;
	uint64_t charged; /* of @bytes, what others hold (symbolizer__charge()) */
	struct symbolizer_stats stats;
};

static bool id_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct alias *a = (const struct alias *)ctx + idx;

	return file_id_eq(&a->id, key);
}

static bool build_id_eq(const void *ctx, uint32_t idx, const void *key)
{
	struct sym_file *const *files = ctx;

	return files[idx]->es && !strcmp(elf_syms__build_id(files[idx]->es) ?: "", key);
}

static bool string_eq(const void *ctx, uint32_t idx, const void *key)
{
	char *const *strings = ctx;

	return !strcmp(strings[idx], key);
}

static bool display_name_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct display_name *names = ctx;

	return names[idx].name == key;
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
		       sizeof(*s->strings), 64))
		return NULL;
	copy = strdup(str);
	if (!copy)
		return NULL;
	if (htable__insert(&s->strings_idx, hash, s->nr_strings)) {
		free(copy);
		return NULL;
	}
	s->strings[s->nr_strings++] = copy;
	return copy;
}

static void file_free(struct sym_file *f)
{
	size_t i;

	elf_syms__free(f->es);
	elf_syms__free(f->dbg);
	for (i = 0; i < f->nr_names; i++)
		free(f->names[i].shown);
	free(f->names);
	htable__destroy(&f->names_idx);
	free(f);
}

static void hold_locked(struct symbolizer *s, struct sym_file *f)
{
	f->refs++;
	f->last_used = ++s->tick;
}

static struct sym_file *find_id_locked(struct symbolizer *s, const struct file_id *id)
{
	uint32_t idx = htable__find(&s->by_id, file_id_hash(id), id_eq, s->aliases, id);

	return idx == HTABLE_NONE ? NULL : s->aliases[idx].f;
}

static struct sym_file *find_build_id_locked(struct symbolizer *s, const char *bid)
{
	uint32_t idx = htable__find(&s->by_build_id, (uint32_t)hash_bytes(bid, strlen(bid)),
				    build_id_eq, s->files, bid);

	return idx == HTABLE_NONE ? NULL : s->files[idx];
}

static int alias_add_locked(struct symbolizer *s, const struct file_id *id, struct sym_file *f)
{
	int err;

	err = array_grow((void **)&s->aliases, &s->cap_aliases, s->nr_aliases + 1,
			 sizeof(*s->aliases), 64);
	if (!err)
		err = htable__insert(&s->by_id, file_id_hash(id), s->nr_aliases);
	if (!err)
		s->aliases[s->nr_aliases++] = (struct alias){*id, f};
	return err;
}

static int index_build_id_locked(struct symbolizer *s, size_t idx)
{
	const char *bid = s->files[idx]->es ? elf_syms__build_id(s->files[idx]->es) : NULL;

	if (!bid)
		return 0;
	return htable__insert(&s->by_build_id, (uint32_t)hash_bytes(bid, strlen(bid)), idx);
}

/*
 * Drop the entries @gone marks from the arrays and rebuild the indexes;
 * the entries themselves are freed by the caller, outside the lock.  The
 * indexes only shrink, so no insert can fail here.
 */
static void compact_locked(struct symbolizer *s, bool (*gone)(const struct sym_file *f, void *ctx),
			   void *ctx)
{
	size_t i, n = 0;

	for (i = 0; i < s->nr_aliases; i++)
		if (!gone(s->aliases[i].f, ctx))
			s->aliases[n++] = s->aliases[i];
	s->nr_aliases = n;
	htable__clear(&s->by_id);
	for (i = 0; i < n; i++)
		htable__insert(&s->by_id, file_id_hash(&s->aliases[i].id), i);
	for (i = n = 0; i < s->nr_files; i++)
		if (!gone(s->files[i], ctx))
			s->files[n++] = s->files[i];
	s->nr_files = n;
	htable__clear(&s->by_build_id);
	for (i = 0; i < n; i++)
		index_build_id_locked(s, i);
}

struct evict_ctx {
	struct sym_file **victims;
	size_t nr;
};

static bool is_victim(const struct sym_file *f, void *ctx)
{
	const struct evict_ctx *e = ctx;
	size_t i;

	for (i = 0; i < e->nr; i++)
		if (e->victims[i] == f)
			return true;
	return false;
}

/* take @v's entries out of the cache; the caller frees them unlocked */
static void evict_locked(struct symbolizer *s, struct evict_ctx *v)
{
	size_t i;

	if (!v->nr)
		return;
	compact_locked(s, is_victim, v);
	for (i = 0; i < v->nr; i++)
		s->bytes -= v->victims[i]->bytes;
	s->stats.files_evicted += v->nr;
}

static void free_victims(struct evict_ctx *v)
{
	size_t i;

	for (i = 0; i < v->nr; i++)
		file_free(v->victims[i]);
	free(v->victims);
}

/*
 * Choose unheld entries to go, least recently used first, until @need more
 * bytes fit the budget and @files more entries (0 or 1) fit MAX_FILES.
 * Return: whether they then fit.
 */
static bool make_room_locked(struct symbolizer *s, size_t need, size_t files, struct evict_ctx *v)
{
	uint64_t freed = 0;
	size_t i, nr = 0;

	v->victims = NULL;
	v->nr = 0;
	while (s->bytes - freed + need > s->budget || s->nr_files - nr + files > MAX_FILES) {
		struct sym_file *lru = NULL, **grown;

		for (i = 0; i < s->nr_files; i++) {
			struct sym_file *f = s->files[i];

			if (!f->refs && !is_victim(f, v) && (!lru || f->last_used < lru->last_used))
				lru = f;
		}
		if (!lru)
			break;
		grown = realloc(v->victims, (v->nr + 1) * sizeof(struct sym_file *));
		if (!grown)
			break;
		v->victims = grown;
		v->victims[v->nr++] = lru;
		freed += lru->bytes;
		nr++;
	}
	evict_locked(s, v);
	return s->bytes + need <= s->budget && s->nr_files + files <= MAX_FILES;
}

/* the counters of a file parsed for the first time */
static void count_file_locked(struct symbolizer *s, const struct elf_syms *es,
			      const struct elf_syms *dbg, const struct debug_file_result *dres,
			      bool looked)
{
	if (!es) {
		s->stats.elf_parse_failed++;
		return;
	}
	s->stats.elf_opened++;
	s->stats.symbols_over_budget += elf_syms__over_budget(es);
	switch (elf_syms__minidebug(es)) {
	case ELF_SYMS_MINIDEBUG_OK:
		s->stats.minidebug_files++;
		break;
	case ELF_SYMS_MINIDEBUG_BAD:
		s->stats.minidebug_bad++;
		break;
	case ELF_SYMS_MINIDEBUG_TOO_BIG:
		s->stats.minidebug_too_big++;
		break;
	default:
		break;
	}
	switch (elf_syms__go(es)) {
	case ELF_SYMS_GO_OK:
		s->stats.go_tables++;
		break;
	case ELF_SYMS_GO_BAD:
		s->stats.go_bad++;
		break;
	case ELF_SYMS_GO_TOO_BIG:
		s->stats.go_too_big++;
		break;
	default:
		break;
	}
	if (!looked)
		return;
	if (dbg)
		s->stats.debug_files++;
	else
		s->stats.debug_missing++;
	s->stats.debug_build_id_bad += dres->build_id_bad;
	s->stats.debug_crc_bad += dres->crc_bad;
	s->stats.debug_unusable += dres->unusable;
}

static bool never(const struct sym_file *f, void *ctx)
{
	return false;
}

/*
 * A new entry for @es and @dbg under @id, indexed; NULL (ENOMEM) leaves the
 * cache as it was and @es, @dbg to the caller.
 */
static struct sym_file *file_new_locked(struct symbolizer *s, const struct file_id *id,
					struct elf_syms *es, struct elf_syms *dbg, size_t bytes)
{
	struct sym_file *f = calloc(1, sizeof(*f));

	if (!f || array_grow((void **)&s->files, &s->cap_files, s->nr_files + 1,
			     sizeof(struct sym_file *), 64))
		goto err_free;
	*f = (struct sym_file){.es = es, .dbg = dbg, .bytes = bytes};
	s->files[s->nr_files] = f;
	if (index_build_id_locked(s, s->nr_files))
		goto err_free;
	if (alias_add_locked(s, id, f)) {
		/* its build id is indexed already: rebuild without it */
		compact_locked(s, never, NULL);
		goto err_free;
	}
	s->nr_files++;
	s->bytes += bytes;
	return f;

err_free:
	free(f);
	return NULL;
}

/*
 * Add the parse of @id to the cache (or find it there, parsed meanwhile or
 * under its build id), held.  Consumes @es and @dbg.
 */
static struct sym_file *file_add(struct symbolizer *s, const struct file_id *id,
				 struct elf_syms *es, struct elf_syms *dbg,
				 const struct debug_file_result *dres, bool looked)
{
	const char *bid = es ? elf_syms__build_id(es) : NULL;
	size_t bytes = (es ? elf_syms__bytes(es) : 0) + (dbg ? elf_syms__bytes(dbg) : 0);
	struct evict_ctx victims = {};
	struct sym_file *f;

	pthread_mutex_lock(&s->lock);
	f = find_id_locked(s, id);
	if (f)
		goto found; /* another thread parsed it meanwhile */
	f = bid ? find_build_id_locked(s, bid) : NULL;
	if (f) {
		/* the same file under another identity: another container's copy */
		s->stats.elf_shared++;
		alias_add_locked(s, id, f);
		goto found;
	}
	count_file_locked(s, es, dbg, dres, looked);
	if (!make_room_locked(s, bytes, 1, &victims)) {
		/* remembered as unnamed until it goes idle: not parsed per mapping */
		s->stats.files_over_budget++;
		elf_syms__free(es);
		elf_syms__free(dbg);
		es = dbg = NULL;
		bytes = 0;
	}
	f = file_new_locked(s, id, es, dbg, bytes);
	if (f)
		es = dbg = NULL; /* the entry's now */
found:
	if (f)
		hold_locked(s, f);
	pthread_mutex_unlock(&s->lock);
	elf_syms__free(es);
	elf_syms__free(dbg);
	free_victims(&victims);
	return f;
}

/* the cached file with @ef's build id, held and found under @id too; NULL: none */
static struct sym_file *file_by_build_id(struct symbolizer *s, const struct elf_file *ef,
					 const struct file_id *id)
{
	char hex[ELF_FILE_BUILD_ID_HEX];
	const uint8_t *bid;
	struct sym_file *f;
	size_t len;

	bid = elf_file__build_id(ef, &len);
	if (!bid || !len)
		return NULL;
	elf_build_id__hex(bid, len, hex);
	pthread_mutex_lock(&s->lock);
	f = find_build_id_locked(s, hex);
	if (f) {
		s->stats.elf_shared++;
		alias_add_locked(s, id, f);
		hold_locked(s, f);
	}
	pthread_mutex_unlock(&s->lock);
	return f;
}

/*
 * The file open on @fd (consumed), from the cache or parsed now with its
 * debug file.  @path and @root_fd say where debug files are looked for.
 */
static struct sym_file *file_from_fd(struct symbolizer *s, int fd, const struct stat *st,
				     int root_fd, const char *path)
{
	struct file_id id = file_id_of(st);
	struct debug_file_result dres = {};
	struct elf_syms *es, *dbg = NULL;
	struct elf_file *ef;
	struct sym_file *f;
	bool looked = false;
	int err;

	pthread_mutex_lock(&s->lock);
	f = find_id_locked(s, &id);
	if (f)
		hold_locked(s, f);
	pthread_mutex_unlock(&s->lock);
	if (f) {
		close(fd);
		return f;
	}
	/*
	 * Its build id first (a few hundred bytes read): the same file under
	 * another identity (another container's copy) is parsed already.
	 */
	ef = elf_file__open_fd(fd);
	err = ef ? 0 : errno;
	close(fd);
	f = ef ? file_by_build_id(s, ef, &id) : NULL;
	if (f) {
		elf_file__free(ef);
		return f;
	}
	/* parsed outside the lock: a large file must not stall other callers */
	es = ef ? elf_syms__open_file(ef, ELF_SYMS_MAX_BYTES) : NULL;
	if (ef && !es)
		err = errno;
	elf_file__free(ef);
	/* running out of memory is not the file's fault: cache no verdict */
	if (err == ENOMEM)
		return NULL;
	/* only a file without .symtab gains names from a debug file */
	if (es && !elf_syms__has_symtab(es) && root_fd >= 0 &&
	    (elf_syms__build_id(es) || elf_syms__debuglink(es, NULL))) {
		looked = true;
		dbg = elf_syms__open_debug(root_fd, path, es, st, &dres);
		if (!dbg && errno == ENOMEM) {
			elf_syms__free(es);
			return NULL;
		}
	}
	return file_add(s, &id, es, dbg, &dres, looked);
}

static void count(struct symbolizer *s, uint64_t *counter)
{
	pthread_mutex_lock(&s->lock);
	(*counter)++;
	pthread_mutex_unlock(&s->lock);
}

/* the root of the process a snapshot is attached for, opened on first need */
struct attach_root {
	pid_t pid;
	int fd;
	bool tried, ours;
};

static int root_of(struct attach_root *r)
{
	if (!r->tried) {
		r->fd = proc_root_open(r->pid);
		r->ours = r->tried = true;
	}
	return r->fd;
}

/* the cached file with identity @id, held; NULL: not parsed yet */
static struct sym_file *file_cached(struct symbolizer *s, const struct file_id *id)
{
	struct sym_file *f;

	pthread_mutex_lock(&s->lock);
	f = find_id_locked(s, id);
	if (f) {
		hold_locked(s, f);
		s->stats.elf_by_stat++;
	}
	pthread_mutex_unlock(&s->lock);
	return f;
}

/*
 * The file @pid maps at @m: the mapped inode itself through map_files, a
 * stat first (a file parsed already is not opened again); when map_files is
 * refused (no CAP_SYS_ADMIN/CAP_CHECKPOINT_RESTORE) or the mapping is gone
 * by now, the path inside the target's root, kept only if it is the inode
 * mapped.  The path of an unlinked file names another file or none: never
 * tried.
 */
static struct sym_file *file_mapped(struct symbolizer *s, pid_t pid, struct attach_root *root,
				    struct mapping *m)
{
	struct sym_file *f;
	struct stat st;
	int fd;

	if (pid && !safe_stat_mapped(pid, m->start, m->end, &st)) {
		m->id = file_id_of(&st);
		f = file_cached(s, &m->id);
		if (f)
			return f;
	}
	fd = pid ? safe_open_mapped(pid, m->start, m->end, SAFE_OPEN_MAX_ELF_SIZE, &st) : -EPERM;
	if (fd < 0 && fd != -EFBIG && fd != -EINVAL && !m->deleted) {
		count(s, &s->stats.elf_by_path);
		fd = root_of(root) >= 0
			     ? safe_open_in_root(root->fd, m->path, SAFE_OPEN_MAX_ELF_SIZE, &st)
			     : -EBADF;
		if (fd >= 0 && (uint64_t)st.st_ino != m->inode) {
			close(fd);
			count(s, &s->stats.elf_mismatch);
			m->id = (struct file_id){0};
			return NULL;
		}
	}
	if (fd < 0) {
		count(s, &s->stats.elf_open_failed);
		m->id = (struct file_id){0};
		return NULL;
	}
	m->id = file_id_of(&st);
	return file_from_fd(s, fd, &st, root_of(root), m->path);
}

/* @prev's mapping of the same file at the same place, if any */
static const struct mapping *prev_same(const struct mappings *prev, const struct mapping *m)
{
	const struct mapping *old = prev ? mappings__find(prev, m->start) : NULL;

	if (!old || old->start != m->start || old->end != m->end || old->pgoff != m->pgoff ||
	    !mapping__same_file(old, m))
		return NULL;
	return old;
}

void symbolizer__attach(struct symbolizer *s, pid_t pid, int root_fd, struct mappings *snap,
			const struct mappings *prev, uint64_t fresh_start, uint64_t fresh_end)
{
	struct attach_root root = {.pid = pid, .fd = root_fd, .tried = root_fd >= 0 || !pid};
	const struct mapping *old, *last = NULL;
	unsigned int i;

	for (i = 0; i < snap->nr; i++) {
		struct mapping *m = &snap->maps[i];
		struct sym_file *f = NULL;

		m->file = NULL;
		m->id = (struct file_id){0};
		if (!strcmp(m->path, VDSO_MAPPING)) {
			if (s->vdso.es && m->end - m->start == s->vdso_size)
				m->file = &s->vdso;
			continue;
		}
		/* anonymous JIT code and the like have no file to read */
		if (m->path[0] != '/')
			continue;
		/* a refresh usually finds the file where it was, and a file mapped
		 * several times in a row is opened once */
		old = m->end > fresh_start && m->start < fresh_end ? NULL : prev_same(prev, m);
		if (!old && last && mapping__same_file(last, m))
			old = last;
		if (old) {
			f = (struct sym_file *)old->file;
			m->id = old->id;
			if (f) {
				pthread_mutex_lock(&s->lock);
				hold_locked(s, f);
				pthread_mutex_unlock(&s->lock);
			}
		} else {
			f = file_mapped(s, pid, &root, m);
		}
		m->file = f;
		last = m;
	}
	if (root.ours && root.fd >= 0)
		close(root.fd);
}

int symbolizer__charge(struct symbolizer *s, size_t n)
{
	struct evict_ctx victims;
	bool fits;

	pthread_mutex_lock(&s->lock);
	fits = make_room_locked(s, n, 0, &victims);
	if (fits) {
		s->bytes += n;
		s->charged += n;
	}
	pthread_mutex_unlock(&s->lock);
	free_victims(&victims);
	return fits ? 0 : -E2BIG;
}

void symbolizer__uncharge(struct symbolizer *s, size_t n)
{
	pthread_mutex_lock(&s->lock);
	n = n < s->charged ? n : s->charged;
	s->charged -= n;
	s->bytes -= n;
	pthread_mutex_unlock(&s->lock);
}

void symbolizer__detach(struct symbolizer *s, struct mappings *snap)
{
	uint64_t now = mono_ns();
	unsigned int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < snap->nr; i++) {
		struct sym_file *f = (struct sym_file *)snap->maps[i].file;

		if (!f || f == &s->vdso)
			continue;
		if (!--f->refs)
			f->idle_since = now;
		snap->maps[i].file = NULL;
	}
	pthread_mutex_unlock(&s->lock);
}

static void resolver_attach(void *ctx, pid_t pid, struct mappings *snap,
			    const struct mappings *prev, uint64_t fresh_start, uint64_t fresh_end)
{
	symbolizer__attach(ctx, pid, -1, snap, prev, fresh_start, fresh_end);
}

static void resolver_detach(void *ctx, struct mappings *snap)
{
	symbolizer__detach(ctx, snap);
}

void symbolizer__resolver(struct symbolizer *s, struct process_state_resolver *out)
{
	*out = (struct process_state_resolver){resolver_attach, resolver_detach, s};
}

struct idle_ctx {
	uint64_t now;
};

static bool is_idle(const struct sym_file *f, void *ctx)
{
	const struct idle_ctx *c = ctx;

	return !f->refs && c->now - f->idle_since >= SYMBOLIZER_IDLE_NS;
}

void symbolizer__trim(struct symbolizer *s, uint64_t now_ns)
{
	struct idle_ctx c = {now_ns};
	struct evict_ctx v = {};
	size_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nr_files; i++) {
		struct sym_file **grown;

		if (!is_idle(s->files[i], &c))
			continue;
		grown = realloc(v.victims, (v.nr + 1) * sizeof(struct sym_file *));
		if (!grown)
			break;
		v.victims = grown;
		v.victims[v.nr++] = s->files[i];
	}
	evict_locked(s, &v);
	pthread_mutex_unlock(&s->lock);
	free_victims(&v);
}

/*
 * Our own vDSO, from memory: its address from the auxiliary vector, its
 * size from our maps.  Missing is no error: "[vdso]" frames stay unnamed.
 * Return: 0 or -ENOMEM.
 */
static int vdso_load(struct symbolizer *s)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	const struct proc_map *m;
	struct proc_maps *pm;
	int err = 0;

	if (!base)
		return 0;
	pm = proc_maps__read(getpid());
	if (!pm)
		return errno == ENOMEM ? -ENOMEM : 0;
	m = proc_maps__find(pm, base);
	if (m && m->start == base && !strcmp(m->path, VDSO_MAPPING)) {
		s->vdso.es = elf_syms__open_mem((const void *)(uintptr_t)base, m->end - m->start);
		if (s->vdso.es)
			s->vdso_size = m->end - m->start;
		else if (errno == ENOMEM)
			err = -ENOMEM;
	}
	proc_maps__free(pm);
	return err;
}

/* the kernel's text range and build id; what cannot be read stays unknown */
static void kernel_load(struct symbolizer *s)
{
	uint8_t id[ELF_FILE_BUILD_ID_MAX];
	size_t len;
	char *notes;

	kallsyms__text_range(s->ks, &s->ktext_start, &s->ktext_end);
	if (read_capped(KERNEL_NOTES, KERNEL_NOTES_MAX, 4096, &notes, &len))
		return;
	len = elf_notes__build_id(notes, len, 4, id);
	elf_build_id__hex(id, len, s->kernel_build_id);
	s->has_kernel_build_id = len > 0;
	free(notes);
}

struct symbolizer *symbolizer__new(int kernel, uint64_t budget)
{
	struct symbolizer *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return errno = ENOMEM, NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->budget = budget;
	if (vdso_load(s))
		goto err_nomem;
	if (kernel) {
		s->ks = kallsyms__load();
		/* hidden or missing kallsyms only leave kernel frames unnamed */
		if (!s->ks && errno == ENOMEM)
			goto err_nomem;
		kernel_load(s);
	}
	return s;

err_nomem:
	symbolizer__free(s);
	return errno = ENOMEM, NULL;
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_files; i++)
		file_free(s->files[i]);
	free(s->files);
	htable__destroy(&s->by_build_id);
	free(s->aliases);
	htable__destroy(&s->by_id);
	for (i = 0; i < s->nr_strings; i++)
		free(s->strings[i]);
	free(s->strings);
	htable__destroy(&s->strings_idx);
	elf_syms__free(s->vdso.es);
	for (i = 0; i < s->vdso.nr_names; i++)
		free(s->vdso.names[i].shown);
	free(s->vdso.names);
	htable__destroy(&s->vdso.names_idx);
	kallsyms__free(s->ks);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* @name has a display form of its own: a version to drop, or a mangling */
static bool display_wanted(const char *name)
{
	return demangle_wanted(name) || name[symbol_version_at(name)];
}

/*
 * The display form of @name, a symbol of @f: its version dropped and
 * demangled, once per symbol and remembered with the file; the name itself
 * when memory ran out.
 */
static const char *display_name_locked(struct symbolizer *s, struct sym_file *f, const char *name)
{
	uint32_t hash = (uint32_t)hash_u64((uintptr_t)name), idx;
	char plain[DEMANGLE_MAX_LEN], buf[DEMANGLE_MAX_LEN];
	size_t len = symbol_version_at(name);
	char *shown = NULL;

	idx = htable__find(&f->names_idx, hash, display_name_eq, f->names, name);
	if (idx != HTABLE_NONE)
		return f->names[idx].shown ?: name;
	/* elf_syms keeps names shorter than ELF_SYMS_MAX_NAME, well within */
	if (len >= sizeof(plain))
		len = sizeof(plain) - 1;
	memcpy(plain, name, len);
	plain[len] = '\0';
	if (demangle_wanted(plain)) {
		if (!demangle(plain, buf)) {
			shown = strdup(buf);
			if (!shown)
				return name;
			s->stats.demangled++;
		} else {
			s->stats.demangle_failed++;
		}
	}
	if (!strcmp(name + len, ELF_PLT_SUFFIX)) {
		/* a PLT stub stays one ("memcpy@plt"), apart from the function it calls */
		char *stub = NULL;

		if (shown && asprintf(&stub, "%s" ELF_PLT_SUFFIX, shown) < 0) {
			free(shown);
			return name;
		}
		free(shown);
		shown = stub;
	} else if (!shown && name[len]) {
		shown = strdup(plain);
		if (!shown)
			return name;
	}
	if (array_grow((void **)&f->names, &f->cap_names, f->nr_names + 1, sizeof(*f->names), 64) ||
	    htable__insert(&f->names_idx, hash, f->nr_names)) {
		free(shown);
		return name;
	}
	f->names[f->nr_names++] = (struct display_name){name, shown};
	return shown ?: name;
}

int symbolizer__user(struct symbolizer *s, const struct mapping *m, uint64_t addr,
		     bool return_address, struct sym_frame *out)
{
	struct sym_file *f = (struct sym_file *)m->file;
	struct gopclntab_frame src[SYM_FRAME_MAX_INLINE + 1];
	const char *name = NULL;
	bool from_dbg = false;
	uint64_t vaddr = 0;
	size_t n, i;

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
	if (f && f->es) {
		out->build_id = elf_syms__build_id(f->es);
		if (!elf_syms__file_offset_to_vaddr(f->es, addr - m->start + m->pgoff, &vaddr)) {
			if (f->dbg)
				name = elf_syms__lookup(f->dbg, vaddr, NULL);
			from_dbg = name != NULL;
			if (!name)
				name = elf_syms__lookup(f->es, vaddr, NULL);
		}
	}
	out->system_name = name;
	out->function = name;
	if (!name)
		return 0;
	/* a Go program's own table says the line, and the calls inlined there */
	n = from_dbg ? 0 : elf_syms__source(f->es, vaddr, src, SYM_FRAME_MAX_INLINE + 1);
	if (n && src[n - 1].function == name) {
		out->file = src[n - 1].file;
		out->line = src[n - 1].line;
		for (i = 0; i + 1 < n; i++) {
			if (!src[i].function)
				continue;
			out->inlined[out->nr_inlined++] =
				(struct sym_inline){src[i].function, src[i].file, src[i].line};
		}
	}
	pthread_mutex_lock(&s->lock);
	if (from_dbg)
		s->stats.names_debug_file++;
	else if (elf_syms__from_minidebug(f->es, name))
		s->stats.names_minidebug++;
	else if (elf_syms__from_gopclntab(f->es, name))
		s->stats.names_gopclntab++;
	else if (f == &s->vdso)
		s->stats.names_vdso++;
	if (display_wanted(name))
		out->function = display_name_locked(s, f, name);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool return_address,
		       struct sym_frame *out)
{
	const char *module = NULL, *path;
	char mapping[KALLSYMS_MAX_MODULE + 3];

	memset(out, 0, sizeof(*out));
	out->mapping_path = KERNEL_MAPPING;
	if (return_address && addr)
		addr--;
	if (s->ks)
		out->function = kallsyms__lookup(s->ks, addr, &module, NULL);
	out->system_name = out->function;
	/* a module is a mapping of its own, as perf shows it: "[ext4]" */
	if (module && *module) {
		snprintf(mapping, sizeof(mapping), "[%s]", module);
		pthread_mutex_lock(&s->lock);
		path = intern_locked(s, mapping);
		pthread_mutex_unlock(&s->lock);
		if (path)
			out->mapping_path = path;
		return 0;
	}
	out->map_start = s->ktext_start;
	out->map_end = s->ktext_end;
	out->build_id = s->has_kernel_build_id ? s->kernel_build_id : NULL;
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
	st->files_cached = s->nr_files;
	st->bytes_cached = s->bytes;
	st->bytes_budget = s->budget;
	st->bytes_charged = s->charged;
	pthread_mutex_unlock(&s->lock);
}
