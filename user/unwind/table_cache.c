// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "elf/debug_file.h"
#include "elf/elf_file.h"
#include "elf/safe_open.h"
#include "processes/proc_maps.h"
#include "unwind/table_cache.h"
#include "unwind/unwind_table.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/file_id.h"
#include "util/hash.h"

#define MAX_SEGS 16
/* files remembered (tables or verdicts): past it, ones no process maps are forgotten */
#define MAX_FILES 16384

struct utable {
	uint8_t build_id[ELF_FILE_BUILD_ID_MAX];
	uint32_t build_id_len;	   /* 0: none, keyed by its identity alone */
	struct file_id id;	   /* the identity it was read under */
	enum unwind_map_kind kind; /* TABLE, FP (no CFI), NO_TABLE (failed) */
	uint64_t base;
	uint32_t row_first;
	uint32_t nr_rows;      /* the table's rows; kept when evicted, to know its size */
	bool in_store;	       /* the rows are in the BPF array now */
	bool debug_file;       /* built with its debug file's .debug_frame */
	struct build_job *job; /* its table is being built: its mappings wait */
	struct elf_load segs[MAX_SEGS];
	uint32_t nr_segs;
	uint32_t refs; /* mappings of installed processes */
	uint64_t last_used;
};

/*
 * One file's build.  It holds no fd while it waits: the file is opened
 * again (the very inode, through the mapping) when its sources are read.
 */
struct build_job {
	struct utable *t;
	uint32_t pid; /* a process that maps it, whose root holds its debug file */
	struct mapping map;
	uint64_t seq;		  /* FIFO among equals */
	bool with_debug;	  /* the phase that adds the debug file's .debug_frame */
	bool debug_tried;	  /* that phase ran (or was found to have no debug file) */
	bool rebuild_debug;	  /* evicted after a build with its debug file: start there */
	struct unwind_build *b;	  /* the build under way, or NULL */
	struct unwind_table *own; /* the file's own table, while the debug one builds */
	int own_err;
	uint64_t cpu_ns; /* of the builds done before b */
	char err[160];
};

static void count(struct table_cache *c, uint64_t *counter, uint64_t n)
{
	pthread_mutex_lock(c->lock);
	*counter += n;
	pthread_mutex_unlock(c->lock);
}

static bool identity_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct table_cache *c = ctx;

	return file_id_eq(&c->files[idx]->id, key);
}

struct build_id {
	const uint8_t *bytes;
	uint32_t len;
};

static bool build_id_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct table_cache *c = ctx;
	const struct utable *t = c->files[idx];
	const struct build_id *b = key;

	return t->build_id_len == b->len && !memcmp(t->build_id, b->bytes, b->len);
}

static int index_file(struct table_cache *c, struct utable *t)
{
	uint32_t idx = c->nr_files;
	int err;

	err = array_grow((void **)&c->files, &c->cap_files, c->nr_files + 1,
			 sizeof(struct utable *), 256);
	if (err)
		return err;
	err = htable__insert(&c->by_identity, file_id_hash(&t->id), idx);
	if (!err && t->build_id_len)
		err = htable__insert(&c->by_build_id,
				     (uint32_t)hash_bytes(t->build_id, t->build_id_len), idx);
	if (err)
		return err;
	c->files[c->nr_files++] = t;
	return 0;
}

/* files no process maps, whose rows are gone and which no job builds go */
void table_cache__compact(struct table_cache *c)
{
	size_t i, n = 0;

	if (c->nr_files < MAX_FILES)
		return;
	for (i = 0; i < c->nr_files; i++) {
		struct utable *t = c->files[i];

		if (!t->refs && !t->in_store && !t->job)
			free(t);
		else
			c->files[n++] = t;
	}
	c->nr_files = 0;
	htable__clear(&c->by_identity);
	htable__clear(&c->by_build_id);
	for (i = 0; i < n; i++)
		/* the indexes only shrink: no allocation can fail here */
		index_file(c, c->files[i]);
}

static void evict_one(struct table_cache *c, struct utable *t)
{
	unwind_store__drop_table(c->store, t->row_first, t->nr_rows);
	t->in_store = false;
	pthread_mutex_lock(c->lock);
	c->st->tables_evicted++;
	c->st->tables_cached--;
	c->st->rows -= t->nr_rows;
	pthread_mutex_unlock(c->lock);
}

/* make room for @rows by evicting the least recently used unmapped tables */
static bool make_room(struct table_cache *c, uint32_t rows)
{
	struct utable *lru;
	size_t i;

	while (unwind_store__largest_rows(c->store) < rows) {
		lru = NULL;
		for (i = 0; i < c->nr_files; i++) {
			struct utable *t = c->files[i];

			if (t->in_store && !t->refs && (!lru || t->last_used < lru->last_used))
				lru = t;
		}
		if (!lru)
			return false;
		evict_one(c, lru);
	}
	return true;
}

/* the PT_LOAD segments a mapping's bias is found from (table_cache__mapping()) */
static int read_segments(const struct elf_file *ef, struct utable *t)
{
	const struct elf_load *loads;
	size_t n;

	loads = elf_file__loads(ef, &n);
	t->nr_segs = n < MAX_SEGS ? (uint32_t)n : MAX_SEGS;
	memcpy(t->segs, loads, t->nr_segs * sizeof(*loads));
	return t->nr_segs ? 0 : -EINVAL;
}

/* a build is over: its CPU time into the stats */
static void count_build(struct table_cache *c, uint64_t cpu_ns)
{
	pthread_mutex_lock(c->lock);
	c->st->build_ns += cpu_ns;
	if (cpu_ns > c->st->build_max_ns)
		c->st->build_max_ns = cpu_ns;
	pthread_mutex_unlock(c->lock);
}

/* set @t's kind from the build's result @e and put @tab's rows in the store; frees @tab */
static void install_rows(struct table_cache *c, struct utable *t, struct unwind_table *tab, int e,
			 const char *err, const char *what)
{
	t->debug_file = false;
	/* nothing built and nothing failed: there was no CFI to build from */
	if (!e && !tab)
		e = -ENODATA;
	if (e == -ENODATA) {
		t->kind = UNWIND_MAP_FP;
		count(c, &c->st->files_no_cfi, 1);
		return;
	}
	if (e) {
		t->kind = UNWIND_MAP_NO_TABLE;
		count(c,
		      e == -ETIME	? &c->st->tables_too_slow
		      : e == -E2BIG	? &c->st->tables_too_large
		      : e == -ECANCELED ? &c->st->tables_cancelled
					: &c->st->tables_failed,
		      1);
		if (c->verbose && e != -ECANCELED)
			fprintf(stderr, "ctxprof: no unwind table for %s: %s\n", what, err);
		return;
	}
	t->kind = UNWIND_MAP_TABLE;
	t->base = tab->base;
	t->nr_rows = tab->nr_rows;
	t->debug_file = tab->from_debug_file;
	count(c, &c->st->tables_built, 1);
	if (tab->from_debug_file)
		count(c, &c->st->tables_from_debug_file, 1);
	e = -ENOSPC;
	if (make_room(c, t->nr_rows))
		e = unwind_store__put_table(c->store, tab->rows, tab->nr_rows, tab->rules,
					    tab->nr_rules, &t->row_first);
	if (e == -ENOSPC) {
		/* kind stays TABLE: a later process may find room for it */
		count(c, &c->st->tables_no_room, 1);
		if (c->verbose)
			fprintf(stderr, "ctxprof: no room for the %zu-row unwind table of %s\n",
				tab->nr_rows, what);
	} else if (!e) {
		t->in_store = true;
		pthread_mutex_lock(c->lock);
		c->st->tables_cached++;
		c->st->rows += t->nr_rows;
		pthread_mutex_unlock(c->lock);
	}
	unwind_table__free(tab);
}

static struct utable *file_new(const struct file_id *id)
{
	struct utable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->id = *id;
	return t;
}

/*
 * Without /proc/PID/map_files (no CAP_SYS_ADMIN/CAP_CHECKPOINT_RESTORE, or a
 * leader gone before its threads): the path inside the process's root, taken
 * only if it is the inode the mapping names (a file planted at that path in a
 * container must not be read as the one mapped).
 */
static int open_by_path(uint32_t pid, const struct mapping *m, struct stat *st)
{
	int root, fd;

	if (m->deleted)
		return -ENOENT;
	root = proc_root_open(pid);
	if (root < 0)
		return root;
	fd = safe_open_in_root(root, m->path, SAFE_OPEN_MAX_ELF_SIZE, st);
	close(root);
	if (fd >= 0 && st->st_ino != m->inode) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* the very file @pid maps at @m, whatever its path names now */
static int open_mapped(uint32_t pid, const struct mapping *m, struct stat *st)
{
	int fd = safe_open_mapped(pid, m->start, m->end, SAFE_OPEN_MAX_ELF_SIZE, st);

	return fd >= 0 ? fd : open_by_path(pid, m, st);
}

/* --- builds ------------------------------------------------------------ */

/*
 * Queue the build of @t's table, the file being the one @pid maps at @m.
 * Return: false when the queue is full (the file is built when a process
 * maps it again).
 */
static bool job_queue(struct table_cache *c, struct utable *t, uint32_t pid,
		      const struct mapping *m, bool rebuild_debug)
{
	struct build_job *j;

	if (c->nr_jobs >= CACHE_MAX_JOBS ||
	    array_grow((void **)&c->jobs, &c->cap_jobs, c->nr_jobs + 1, sizeof(struct build_job *),
		       64))
		return false;
	j = calloc(1, sizeof(*j));
	if (!j)
		return false;
	j->t = t;
	j->pid = pid;
	j->map = *m;
	j->seq = c->job_seq++;
	j->rebuild_debug = rebuild_debug;
	j->with_debug = rebuild_debug;
	j->own_err = -ENODATA;
	c->jobs[c->nr_jobs++] = j;
	t->job = j;
	count(c, &c->st->tables_building, 1);
	return true;
}

/* the file's own CFI leaves a quarter of its code or more without rows */
static bool table_has_gaps(int e, const struct unwind_table *tab)
{
	if (e == -ENODATA)
		return true;
	return !e && tab && tab->stats.covered_bytes < tab->stats.text_bytes / 4 * 3;
}

/*
 * The separate debug file of @ef, found and checked as the symbolizer
 * finds debug files (build id, debuglink CRC) inside the process's root;
 * NULL without one.
 */
static struct elf_file *debug_open(const struct elf_file *ef, const struct stat *st, uint32_t pid,
				   const char *path)
{
	struct debug_file_key key = {0};
	struct debug_file_result res;
	struct elf_file *dbg;
	int root;

	key.build_id = elf_file__build_id(ef, &key.build_id_len);
	key.debuglink = elf_file__debuglink(ef, &key.crc);
	if (!key.build_id && !key.debuglink)
		return NULL;
	root = proc_root_open(pid);
	if (root < 0)
		return NULL;
	dbg = debug_file__open(root, path, &key, st, NULL, NULL, &res);
	close(root);
	return dbg;
}

static bool same_build_id(const struct utable *t, const struct elf_file *ef)
{
	size_t len;
	const uint8_t *id = elf_file__build_id(ef, &len);

	return id && t->build_id_len == len && !memcmp(t->build_id, id, len);
}

/*
 * Start the job's next build: open the file again (and its debug file in
 * the debug phase), check it is still the one the cache entry is for, and
 * read its sources.  Return: 0 with j->b set, 1 when the debug phase has
 * no debug file to add, or -errno.
 */
static int job_start(struct table_cache *c, struct build_job *j)
{
	struct unwind_table_limits lim = {.cancel = &*c->cancel};
	struct elf_file *ef, *dbg = NULL;
	struct file_id id;
	struct stat st;
	int fd, e;

	fd = open_mapped(j->pid, &j->map, &st);
	if (fd < 0)
		return j->with_debug ? 1 : fd;
	ef = elf_file__open_fd(fd);
	close(fd);
	/* still the file of the cache entry: its identity, or its build id */
	id = file_id_of(&st);
	if (ef && !file_id_eq(&j->t->id, &id) && !same_build_id(j->t, ef)) {
		elf_file__free(ef);
		ef = NULL;
	}
	if (!ef)
		return j->with_debug ? 1 : -ESTALE;
	if (j->with_debug) {
		dbg = debug_open(ef, &st, j->pid, j->map.path);
		if (!dbg) {
			elf_file__free(ef);
			return 1;
		}
	}
	e = unwind_build__start(ef, dbg, &lim, &j->b, j->err, sizeof(j->err));
	elf_file__free(dbg);
	elf_file__free(ef);
	return e;
}

/*
 * The table a finished job lands: the file's own, or the one with its
 * debug file's CFI when that covers more.  Where its own CFI leaves gaps (a
 * program built without unwind tables: only its start files' .eh_frame),
 * the debug phase follows; @t->debug_file remembers it for a rebuild.
 * Return: true when the job is over (the table or verdict landed).
 */
static bool job_phase_done(struct table_cache *c, struct build_job *j, int e,
			   struct unwind_table *tab)
{
	if (!j->with_debug) {
		j->own = tab;
		j->own_err = e;
		if (!j->debug_tried && e != -ECANCELED && table_has_gaps(e, tab)) {
			j->with_debug = true;
			return false;
		}
	} else {
		j->debug_tried = true;
		if (tab && (!j->own || tab->stats.covered_bytes > j->own->stats.covered_bytes)) {
			unwind_table__free(j->own);
			j->own = tab;
			j->own_err = 0;
			tab = NULL;
		}
		unwind_table__free(tab);
		/* evicted after a build with its debug file, gone since: what the file has */
		if (j->rebuild_debug && !j->own && e != -ECANCELED) {
			j->rebuild_debug = false;
			j->with_debug = false;
			return false;
		}
	}
	install_rows(c, j->t, j->own, j->own ? 0 : j->own_err, j->err, j->map.path);
	j->own = NULL;
	return true;
}

static void job_free(struct table_cache *c, size_t idx)
{
	struct build_job *j = c->jobs[idx];

	j->t->job = NULL;
	unwind_build__free(j->b);
	unwind_table__free(j->own);
	free(j);
	c->jobs[idx] = c->jobs[--c->nr_jobs];
	pthread_mutex_lock(c->lock);
	c->st->tables_building--;
	pthread_mutex_unlock(c->lock);
}

/* the CPU time @j has taken */
static uint64_t job_cpu(const struct build_job *j)
{
	return j->cpu_ns + (j->b ? unwind_build__cpu_ns(j->b) : 0);
}

/*
 * The next job to run: the one that has taken least CPU time (new ones
 * first), the oldest among equals; only a started one while CACHE_MAX_STARTED
 * are under way.
 */
static size_t job_pick(struct table_cache *c)
{
	size_t i, best = SIZE_MAX, started = 0;

	for (i = 0; i < c->nr_jobs; i++)
		started += c->jobs[i]->b != NULL;
	for (i = 0; i < c->nr_jobs; i++) {
		const struct build_job *j = c->jobs[i];

		if (started >= CACHE_MAX_STARTED && !j->b)
			continue;
		if (best == SIZE_MAX || job_cpu(j) < job_cpu(c->jobs[best]) ||
		    (job_cpu(j) == job_cpu(c->jobs[best]) && j->seq < c->jobs[best]->seq))
			best = i;
	}
	return best;
}

/* run the next job for a slice; land what it built when it is over (true) */
static bool job_run(struct table_cache *c)
{
	size_t idx = job_pick(c);
	struct build_job *j = c->jobs[idx];
	struct unwind_table *tab = NULL;
	int e = 0;

	if (!j->b) {
		e = job_start(c, j);
		if (!j->with_debug &&
		    (e == -ESTALE || e == -ENOENT || e == -ESRCH || e == -EPERM)) {
			/* the file is no longer there to read: built when mapped again */
			count(c, &c->st->builds_abandoned, 1);
			job_free(c, idx);
			return true;
		}
		/* no debug file: the own table is all there is */
		if (e == 1)
			e = -ENODATA;
	}
	if (j->b) {
		e = unwind_build__run(j->b, CACHE_SLICE_NS);
		if (e == -EAGAIN)
			return false;
		j->cpu_ns += unwind_build__cpu_ns(j->b);
		tab = e ? NULL : unwind_build__take(j->b);
		unwind_build__free(j->b);
		j->b = NULL;
	}
	if (!job_phase_done(c, j, e, tab))
		return false;
	count_build(c, j->cpu_ns);
	job_free(c, idx);
	return true;
}

/*
 * The table of the file open on @fd (@pid maps it at @m), from the cache,
 * or a new entry whose table is queued to be built.
 */
/* @t, a file known already, for another mapping of it */
static struct utable *file_found(struct table_cache *c, struct utable *t, uint32_t pid,
				 const struct mapping *m)
{
	count(c, &c->st->tables_shared, 1);
	/* evicted since, found no room then, or left unbuilt: build again */
	if (t->kind == UNWIND_MAP_TABLE && !t->in_store && !t->job)
		job_queue(c, t, pid, m, t->debug_file);
	t->last_used = ++c->tick;
	return t;
}

static struct utable *file_table(struct table_cache *c, int fd, const struct stat *st, uint32_t pid,
				 const struct mapping *m)
{
	struct file_id id = file_id_of(st);
	const uint8_t *bid = NULL;
	struct elf_file *ef;
	struct build_id key;
	struct utable *t;
	size_t bid_len = 0;
	uint32_t idx;

	idx = htable__find(&c->by_identity, file_id_hash(&id), identity_eq, c, &id);
	if (idx != HTABLE_NONE) {
		t = c->files[idx];
		goto found;
	}
	/* read through elf_file, never mapped: a target truncating it cannot SIGBUS us */
	ef = elf_file__open_fd(fd);
	if (ef)
		bid = elf_file__build_id(ef, &bid_len);
	if (bid) {
		key = (struct build_id){bid, (uint32_t)bid_len};
		idx = htable__find(&c->by_build_id, (uint32_t)hash_bytes(bid, bid_len), build_id_eq,
				   c, &key);
		if (idx != HTABLE_NONE) {
			/* the same file elsewhere (another container, a copy) */
			elf_file__free(ef);
			t = c->files[idx];
			goto found;
		}
	}
	t = file_new(&id);
	if (!t || index_file(c, t)) {
		free(t);
		elf_file__free(ef);
		return NULL;
	}
	if (bid) {
		memcpy(t->build_id, bid, bid_len);
		t->build_id_len = bid_len;
	}
	if (!ef || read_segments(ef, t)) {
		t->kind = UNWIND_MAP_NO_TABLE;
		count(c, &c->st->tables_failed, 1);
	} else {
		t->kind = UNWIND_MAP_TABLE; /* no rows yet: built when the queue reaches it */
		job_queue(c, t, pid, m, false);
	}
	elf_file__free(ef);
	goto out;

found:
	return file_found(c, t, pid, m);
out:
	t->last_used = ++c->tick;
	return t;
}

static int vdso_table(struct table_cache *c)
{
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct unwind_table *tab = NULL;
	struct file_id none = {0};
	struct elf_file *ef = NULL;
	struct proc_maps *pm;
	size_t i, len = 0;
	char err[160] = "";
	uint64_t cpu0;
	int e;

	if (!image)
		return 0;
	pm = proc_maps__read(getpid());
	if (!pm)
		return -errno;
	for (i = 0; i < pm->nr; i++)
		if (pm->maps[i].start == (uintptr_t)image)
			len = pm->maps[i].end - pm->maps[i].start;
	proc_maps__free(pm);
	if (!len)
		return 0;
	c->vdso = file_new(&none);
	if (!c->vdso)
		return -ENOMEM;
	ef = elf_file__open_mem(image, len);
	if (!ef || read_segments(ef, c->vdso)) {
		elf_file__free(ef);
		c->vdso->kind = UNWIND_MAP_FP;
		return 0;
	}
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	e = unwind_table__build(ef, NULL, NULL, &tab, err, sizeof(err));
	count_build(c, clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
	elf_file__free(ef);
	install_rows(c, c->vdso, tab, e, err, "[vdso]");
	/* never evicted: every process maps it */
	c->vdso->refs = 1;
	return 0;
}

void table_cache__mapping(const struct utable *t, bool file, uint64_t start, uint64_t end,
			  uint64_t pgoff, struct unwind_mapping *out)
{
	const struct elf_load *s;

	*out = (struct unwind_mapping){.start = start, .end = end};
	if (!t) {
		/* anonymous code (JIT), or a file we cannot read: frame pointers */
		out->kind = file ? UNWIND_MAP_NO_TABLE : UNWIND_MAP_JIT;
		return;
	}
	out->kind = t->kind;
	if (t->kind != UNWIND_MAP_TABLE)
		return;
	/* still building (frame pointers meanwhile), or not in the store */
	if (t->job || !t->in_store) {
		out->kind = t->job ? UNWIND_MAP_BUILDING : UNWIND_MAP_NO_TABLE;
		return;
	}
	/* the loadable segment this part of the file belongs to */
	s = elf_loads__for_mapping(t->segs, t->nr_segs, pgoff);
	if (!s) {
		out->kind = UNWIND_MAP_NO_TABLE;
		return;
	}
	out->bias = start - pgoff + s->offset - s->vaddr + t->base;
	out->row_first = t->row_first;
	out->row_count = t->nr_rows;
}

struct utable *table_cache__get(struct table_cache *c, uint32_t pid, const struct mapping *m)
{
	struct utable *t;
	struct stat st;
	uint32_t idx;
	int fd;

	if (!strcmp(m->path, "[vdso]"))
		return c->vdso;
	if (m->path[0] != '/')
		return NULL;
	/*
	 * The resolver opened the file for this very snapshot (its identity
	 * is the mapping's): a file known under it needs no second open, the
	 * one each exec of a known program paid
	 */
	if (m->id.ino) {
		idx = htable__find(&c->by_identity, file_id_hash(&m->id), identity_eq, c, &m->id);
		if (idx != HTABLE_NONE)
			return file_found(c, c->files[idx], pid, m);
	}
	fd = open_mapped(pid, m, &st);
	if (fd < 0) {
		count(c, &c->st->files_unreadable, 1);
		return NULL;
	}
	t = file_table(c, fd, &st, pid, m);
	close(fd);
	return t;
}

void table_cache__hold(struct table_cache *c, struct utable *t)
{
	if (t && t != c->vdso)
		t->refs++;
}

void table_cache__put(struct table_cache *c, struct utable *t)
{
	if (t && t != c->vdso)
		t->refs--;
}

bool table_cache__building(const struct utable *t)
{
	return t && t->job;
}

bool table_cache__busy(const struct table_cache *c)
{
	return c->nr_jobs > 0;
}

/* drop every job, built or not; returns how many there were */
static size_t jobs_drop(struct table_cache *c)
{
	size_t n = c->nr_jobs;

	while (c->nr_jobs)
		job_free(c, c->nr_jobs - 1);
	return n;
}

void table_cache__cancel(struct table_cache *c)
{
	count(c, &c->st->tables_cancelled, jobs_drop(c));
}

bool table_cache__run(struct table_cache *c)
{
	return c->nr_jobs && !atomic_load(c->cancel) && job_run(c);
}

int table_cache__init(struct table_cache *c)
{
	return vdso_table(c);
}

void table_cache__destroy(struct table_cache *c)
{
	size_t i;

	jobs_drop(c);
	for (i = 0; i < c->nr_files; i++)
		free(c->files[i]);
	free(c->files);
	free(c->jobs);
	free(c->vdso);
	htable__destroy(&c->by_identity);
	htable__destroy(&c->by_build_id);
}
