// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
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
#include "unwind/unwind_table.h"
#include "unwind/unwinder.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/htable.h"

#define MAX_SEGS 16
/* files remembered (tables or verdicts): past it, ones no process maps are forgotten */
#define MAX_FILES 16384
/* a pid asked for while the thread is busy waits here (deduplicated) */
#define MAX_PENDING 65536
/*
 * Builds: a slice of CPU time each, the one that has taken least first, so
 * a new file waits at most a slice behind a long build.  A started build
 * holds its memory (up to UNWIND_TABLE_MEMORY) until it ends: at most
 * MAX_STARTED are under way at once, so builds hold at most twice the
 * budget.  Jobs beyond MAX_JOBS are not queued: their files are built when
 * a process maps them again.
 */
#define BUILD_SLICE_NS (20ull * 1000 * 1000)
#define MAX_STARTED    2
#define MAX_JOBS       4096

/* one file's table (or verdict), shared by every process that maps it */
struct utable {
	uint8_t build_id[ELF_FILE_BUILD_ID_MAX];
	uint32_t build_id_len; /* 0: none, keyed by its identity alone */
	dev_t dev;	       /* the identity it was read under */
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	enum unwind_map_kind kind; /* TABLE, FP (no CFI), NO_TABLE (failed) */
	uint64_t base;
	uint32_t row_first;
	uint32_t nr_rows;      /* the table's rows; kept when evicted, to know its size */
	bool in_store;	       /* the rows are in the BPF array now */
	bool debug_file;       /* built with its debug file's .debug_frame */
	struct build_job *job; /* its table is being built: mappings wait, pending */
	struct elf_load segs[MAX_SEGS];
	uint32_t nr_segs;
	uint32_t refs; /* mappings of installed processes */
	uint64_t last_used;
};

/* one mapping as installed, kept to install the process again when a table lands */
struct inst_map {
	uint64_t start, end, pgoff;
	struct utable *t; /* NULL: anonymous, or a file that could not be read */
	bool file;	  /* a file mapping */
};

/* what the BPF unwinder has of one process image (process_state.unwind) */
struct unwind_proc_state {
	uint32_t pid;
	uint32_t exec_id;
	uint32_t maps_gen; /* process_state.maps_gen it was built from */
	struct unwind_proc bpf;
	struct inst_map *maps;
	uint32_t nr_maps;
	uint32_t nr_waiting;		/* mappings whose table is being built */
	struct unwind_proc_state *next; /* on the release queue */
};

/* one mapping to install, copied out of the process's state */
struct map_copy {
	uint64_t start, end, pgoff, inode;
	const char *path;
	bool deleted;
};

/*
 * One file's build.  It holds no fd while it waits: the file is opened
 * again (the very inode, through the mapping) when its sources are read.
 */
struct build_job {
	struct utable *t;
	uint32_t pid; /* a process that maps it, whose root holds its debug file */
	struct map_copy map;
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

struct unwinder {
	struct unwinder_opts o;
	struct unwind_store *store;
	pthread_t thread;
	bool started;
	atomic_bool cancel; /* set first by unwinder__stop(): a build stops in one libdw call */

	pthread_mutex_t lock; /* the queues below and the stats */
	pthread_cond_t wake;
	pthread_cond_t idle; /* signalled when the queues are found empty */
	bool busy;	     /* the thread works on what it took off the queues */
	bool stop;
	uint32_t *pending;
	uint32_t nr_pending;
	struct htable pending_index; /* over pending[] */
	struct unwind_proc_state *releases;
	struct unwinder_stats st;

	/* the unwinder thread's own */
	struct utable **files;
	size_t nr_files, cap_files;
	struct htable by_build_id; /* over files[] */
	struct htable by_identity; /* over files[] */
	struct utable *vdso;
	uint64_t tick;
	struct unwind_mapping *scratch;
	size_t scratch_cap;
	struct build_job **jobs;
	size_t nr_jobs, cap_jobs;
	uint64_t job_seq;
	bool landed; /* a table landed since waiting processes were looked at */
	struct unwind_proc_state **waiting; /* installed with tables still building */
	size_t nr_waiting, cap_waiting;
};

static void count(struct unwinder *u, uint64_t *c, uint64_t n)
{
	pthread_mutex_lock(&u->lock);
	*c += n;
	pthread_mutex_unlock(&u->lock);
}

/* --- the file cache --------------------------------------------------- */

struct identity {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
};

static struct identity identity_of(const struct stat *st)
{
	return (struct identity){st->st_dev, st->st_ino, st->st_size,
				 st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec};
}

static uint32_t identity_hash(const struct identity *id)
{
	return (uint32_t)hash_combine(hash_combine(hash_u64(id->dev), id->ino),
				      (uint64_t)id->size ^ (uint64_t)id->mtime_ns);
}

static bool identity_is(const struct utable *t, const struct identity *id)
{
	return t->dev == id->dev && t->ino == id->ino && t->size == id->size &&
	       t->mtime_ns == id->mtime_ns;
}

static bool identity_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct unwinder *u = ctx;

	return identity_is(u->files[idx], key);
}

struct build_id {
	const uint8_t *bytes;
	uint32_t len;
};

static bool build_id_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct unwinder *u = ctx;
	const struct utable *t = u->files[idx];
	const struct build_id *b = key;

	return t->build_id_len == b->len && !memcmp(t->build_id, b->bytes, b->len);
}

static int index_file(struct unwinder *u, struct utable *t)
{
	struct identity id = {t->dev, t->ino, t->size, t->mtime_ns};
	uint32_t idx = u->nr_files;
	int err;

	err = array_grow((void **)&u->files, &u->cap_files, u->nr_files + 1,
			 sizeof(struct utable *), 256);
	if (err)
		return err;
	err = htable__insert(&u->by_identity, identity_hash(&id), idx);
	if (!err && t->build_id_len)
		err = htable__insert(&u->by_build_id,
				     (uint32_t)hash_bytes(t->build_id, t->build_id_len), idx);
	if (err)
		return err;
	u->files[u->nr_files++] = t;
	return 0;
}

/* forget files no process maps, whose rows are gone and which no job builds */
static void compact_files(struct unwinder *u)
{
	size_t i, n = 0;

	if (u->nr_files < MAX_FILES)
		return;
	for (i = 0; i < u->nr_files; i++) {
		struct utable *t = u->files[i];

		if (!t->refs && !t->in_store && !t->job)
			free(t);
		else
			u->files[n++] = t;
	}
	u->nr_files = 0;
	htable__clear(&u->by_identity);
	htable__clear(&u->by_build_id);
	for (i = 0; i < n; i++)
		/* the indexes only shrink: no allocation can fail here */
		index_file(u, u->files[i]);
}

static void evict_one(struct unwinder *u, struct utable *t)
{
	unwind_store__drop_table(u->store, t->row_first, t->nr_rows);
	t->in_store = false;
	pthread_mutex_lock(&u->lock);
	u->st.tables_evicted++;
	u->st.tables_cached--;
	u->st.rows -= t->nr_rows;
	pthread_mutex_unlock(&u->lock);
}

/* make room for @rows by evicting the least recently used unmapped tables */
static bool make_room(struct unwinder *u, uint32_t rows)
{
	struct utable *lru;
	size_t i;

	while (unwind_store__largest_rows(u->store) < rows) {
		lru = NULL;
		for (i = 0; i < u->nr_files; i++) {
			struct utable *t = u->files[i];

			if (t->in_store && !t->refs && (!lru || t->last_used < lru->last_used))
				lru = t;
		}
		if (!lru)
			return false;
		evict_one(u, lru);
	}
	return true;
}

/* the PT_LOAD segments a mapping's bias is found from (fill_mapping()) */
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
static void count_build(struct unwinder *u, uint64_t cpu_ns)
{
	pthread_mutex_lock(&u->lock);
	u->st.build_ns += cpu_ns;
	if (cpu_ns > u->st.build_max_ns)
		u->st.build_max_ns = cpu_ns;
	pthread_mutex_unlock(&u->lock);
}

/* set @t's kind from the build's result @e and put @tab's rows in the store; frees @tab */
static void install_rows(struct unwinder *u, struct utable *t, struct unwind_table *tab, int e,
			 const char *err, const char *what)
{
	t->debug_file = false;
	if (e == -ENODATA) {
		t->kind = UNWIND_MAP_FP;
		count(u, &u->st.files_no_cfi, 1);
		return;
	}
	if (e) {
		t->kind = UNWIND_MAP_NO_TABLE;
		count(u,
		      e == -ETIME	? &u->st.tables_too_slow
		      : e == -E2BIG	? &u->st.tables_too_large
		      : e == -ECANCELED ? &u->st.tables_cancelled
					: &u->st.tables_failed,
		      1);
		if (u->o.verbose && e != -ECANCELED)
			fprintf(stderr, "ctxprof: no unwind table for %s: %s\n", what, err);
		return;
	}
	t->kind = UNWIND_MAP_TABLE;
	t->base = tab->base;
	t->nr_rows = tab->nr_rows;
	t->debug_file = tab->from_debug_file;
	count(u, &u->st.tables_built, 1);
	if (tab->from_debug_file)
		count(u, &u->st.tables_from_debug_file, 1);
	e = -ENOSPC;
	if (make_room(u, t->nr_rows))
		e = unwind_store__put_table(u->store, tab->rows, tab->nr_rows, tab->rules,
					    tab->nr_rules, &t->row_first);
	if (e == -ENOSPC) {
		/* kind stays TABLE: a later process may find room for it */
		count(u, &u->st.tables_no_room, 1);
		if (u->o.verbose)
			fprintf(stderr, "ctxprof: no room for the %zu-row unwind table of %s\n",
				tab->nr_rows, what);
	} else if (!e) {
		t->in_store = true;
		pthread_mutex_lock(&u->lock);
		u->st.tables_cached++;
		u->st.rows += t->nr_rows;
		pthread_mutex_unlock(&u->lock);
	}
	unwind_table__free(tab);
}

static struct utable *file_new(const struct identity *id)
{
	struct utable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->dev = id->dev;
	t->ino = id->ino;
	t->size = id->size;
	t->mtime_ns = id->mtime_ns;
	return t;
}

/*
 * Without /proc/PID/map_files (no CAP_SYS_ADMIN/CAP_CHECKPOINT_RESTORE, or a
 * leader gone before its threads): the path inside the process's root, taken
 * only if it is the inode the mapping names (a file planted at that path in a
 * container must not be read as the one mapped).
 */
static int open_by_path(uint32_t pid, const struct map_copy *m, struct stat *st)
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
static int open_mapped(uint32_t pid, const struct map_copy *m, struct stat *st)
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
static bool job_queue(struct unwinder *u, struct utable *t, uint32_t pid, const struct map_copy *m,
		      bool rebuild_debug)
{
	struct build_job *j;

	if (u->nr_jobs >= MAX_JOBS || array_grow((void **)&u->jobs, &u->cap_jobs, u->nr_jobs + 1,
						 sizeof(struct build_job *), 64))
		return false;
	j = calloc(1, sizeof(*j));
	if (!j)
		return false;
	j->t = t;
	j->pid = pid;
	j->map = *m;
	j->seq = u->job_seq++;
	j->rebuild_debug = rebuild_debug;
	j->with_debug = rebuild_debug;
	j->own_err = -ENODATA;
	u->jobs[u->nr_jobs++] = j;
	t->job = j;
	count(u, &u->st.tables_building, 1);
	return true;
}

/* the file's own CFI leaves a quarter of its code or more without rows */
static bool table_has_gaps(int e, const struct unwind_table *tab)
{
	if (e == -ENODATA)
		return true;
	return !e && tab->stats.covered_bytes < tab->stats.text_bytes / 4 * 3;
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
static int job_start(struct unwinder *u, struct build_job *j)
{
	struct unwind_table_limits lim = {.cancel = &u->cancel};
	struct elf_file *ef, *dbg = NULL;
	struct identity id;
	struct stat st;
	int fd, e;

	fd = open_mapped(j->pid, &j->map, &st);
	if (fd < 0)
		return j->with_debug ? 1 : fd;
	ef = elf_file__open_fd(fd);
	close(fd);
	/* still the file of the cache entry: its identity, or its build id */
	id = identity_of(&st);
	if (ef && !identity_is(j->t, &id) && !same_build_id(j->t, ef)) {
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
static bool job_phase_done(struct unwinder *u, struct build_job *j, int e, struct unwind_table *tab)
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
	/* no table: the own phase's verdict (it ran, or found no CFI to add to) */
	install_rows(u, j->t, j->own,
		     j->own	  ? 0
		     : j->own_err ? j->own_err
				  : -ENODATA,
		     j->err, j->map.path);
	j->own = NULL;
	return true;
}

static void job_free(struct unwinder *u, size_t idx)
{
	struct build_job *j = u->jobs[idx];

	j->t->job = NULL;
	u->landed = true;
	unwind_build__free(j->b);
	unwind_table__free(j->own);
	free(j);
	u->jobs[idx] = u->jobs[--u->nr_jobs];
	pthread_mutex_lock(&u->lock);
	u->st.tables_building--;
	pthread_mutex_unlock(&u->lock);
}

/* the CPU time @j has taken */
static uint64_t job_cpu(const struct build_job *j)
{
	return j->cpu_ns + (j->b ? unwind_build__cpu_ns(j->b) : 0);
}

/*
 * The next job to run: the one that has taken least CPU time (new ones
 * first), the oldest among equals; only a started one while MAX_STARTED
 * are under way.
 */
static size_t job_pick(struct unwinder *u)
{
	size_t i, best = SIZE_MAX, started = 0;

	for (i = 0; i < u->nr_jobs; i++)
		started += u->jobs[i]->b != NULL;
	for (i = 0; i < u->nr_jobs; i++) {
		const struct build_job *j = u->jobs[i];

		if (started >= MAX_STARTED && !j->b)
			continue;
		if (best == SIZE_MAX || job_cpu(j) < job_cpu(u->jobs[best]) ||
		    (job_cpu(j) == job_cpu(u->jobs[best]) && j->seq < u->jobs[best]->seq))
			best = i;
	}
	return best;
}

/* run the next job for a slice; land what it built when it is over */
static void job_run(struct unwinder *u)
{
	size_t idx = job_pick(u);
	struct build_job *j = u->jobs[idx];
	struct unwind_table *tab = NULL;
	int e = 0;

	if (!j->b) {
		e = job_start(u, j);
		if (e < 0 && e != -ENOMEM && !j->b && !j->with_debug &&
		    (e == -ESTALE || e == -ENOENT || e == -ESRCH || e == -EPERM)) {
			/* the file is no longer there to read: built when mapped again */
			j->t->in_store = false;
			count(u, &u->st.builds_abandoned, 1);
			job_free(u, idx);
			return;
		}
		/* no debug file: the own table is all there is */
		if (e == 1)
			e = -ENODATA;
	}
	if (j->b) {
		e = unwind_build__run(j->b, BUILD_SLICE_NS);
		if (e == -EAGAIN)
			return;
		j->cpu_ns += unwind_build__cpu_ns(j->b);
		tab = e ? NULL : unwind_build__take(j->b);
		unwind_build__free(j->b);
		j->b = NULL;
	}
	if (!job_phase_done(u, j, e, tab))
		return;
	count_build(u, j->cpu_ns);
	job_free(u, idx);
}

/*
 * The table of the file open on @fd (@pid maps it at @m), from the cache,
 * or a new entry whose table is queued to be built.
 */
static struct utable *file_table(struct unwinder *u, int fd, const struct stat *st, uint32_t pid,
				 const struct map_copy *m)
{
	struct identity id = identity_of(st);
	const uint8_t *bid = NULL;
	struct elf_file *ef;
	struct build_id key;
	struct utable *t;
	size_t bid_len = 0;
	uint32_t idx;

	idx = htable__find(&u->by_identity, identity_hash(&id), identity_eq, u, &id);
	if (idx != HTABLE_NONE) {
		t = u->files[idx];
		goto found;
	}
	/* read through elf_file, never mapped: a target truncating it cannot SIGBUS us */
	ef = elf_file__open_fd(fd);
	if (ef)
		bid = elf_file__build_id(ef, &bid_len);
	if (bid) {
		key = (struct build_id){bid, (uint32_t)bid_len};
		idx = htable__find(&u->by_build_id, (uint32_t)hash_bytes(bid, bid_len), build_id_eq,
				   u, &key);
		if (idx != HTABLE_NONE) {
			/* the same file elsewhere (another container, a copy) */
			elf_file__free(ef);
			t = u->files[idx];
			goto found;
		}
	}
	t = file_new(&id);
	if (!t || index_file(u, t)) {
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
		count(u, &u->st.tables_failed, 1);
	} else {
		t->kind = UNWIND_MAP_TABLE; /* no rows yet: built when the queue reaches it */
		job_queue(u, t, pid, m, false);
	}
	elf_file__free(ef);
	goto out;

found:
	count(u, &u->st.tables_shared, 1);
	/* evicted since, found no room then, or left unbuilt: build again */
	if (t->kind == UNWIND_MAP_TABLE && !t->in_store && !t->job)
		job_queue(u, t, pid, m, t->debug_file);
out:
	t->last_used = ++u->tick;
	return t;
}

static int vdso_table(struct unwinder *u)
{
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct unwind_table *tab = NULL;
	struct identity none = {0};
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
	u->vdso = file_new(&none);
	if (!u->vdso)
		return -ENOMEM;
	ef = elf_file__open_mem(image, len);
	if (!ef || read_segments(ef, u->vdso)) {
		elf_file__free(ef);
		u->vdso->kind = UNWIND_MAP_FP;
		return 0;
	}
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	e = unwind_table__build(ef, NULL, NULL, &tab, err, sizeof(err));
	count_build(u, clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
	elf_file__free(ef);
	install_rows(u, u->vdso, tab, e, err, "[vdso]");
	/* never evicted: every process maps it */
	u->vdso->refs = 1;
	return 0;
}

/* --- installing a process --------------------------------------------- */

/* BPF's mapping entry for @m of a file with table @t */
static void fill_mapping(const struct inst_map *m, struct unwind_mapping *out)
{
	const struct utable *t = m->t;
	const struct elf_load *s;

	*out = (struct unwind_mapping){.start = m->start, .end = m->end};
	if (!t) {
		/* anonymous code (JIT), or a file we cannot read: frame pointers */
		out->kind = m->file ? UNWIND_MAP_NO_TABLE : UNWIND_MAP_FP;
		return;
	}
	out->kind = t->kind;
	if (t->kind != UNWIND_MAP_TABLE)
		return;
	/* still building (frame pointers meanwhile), or not in the store */
	if (t->job || !t->in_store) {
		out->kind = UNWIND_MAP_NO_TABLE;
		return;
	}
	/* the loadable segment this part of the file belongs to */
	s = elf_loads__for_mapping(t->segs, t->nr_segs, m->pgoff);
	if (!s) {
		out->kind = UNWIND_MAP_NO_TABLE;
		return;
	}
	out->bias = m->start - m->pgoff + s->offset - s->vaddr + t->base;
	out->row_first = t->row_first;
	out->row_count = t->nr_rows;
}

/* the table of the file @pid maps at @m, or NULL (unreadable: counted) */
static struct utable *mapping_table(struct unwinder *u, uint32_t pid, const struct map_copy *m)
{
	struct utable *t;
	struct stat st;
	int fd;

	if (!strcmp(m->path, "[vdso]"))
		return u->vdso;
	if (m->path[0] != '/')
		return NULL;
	fd = open_mapped(pid, m, &st);
	if (fd < 0) {
		count(u, &u->st.files_unreadable, 1);
		return NULL;
	}
	t = file_table(u, fd, &st, pid, m);
	close(fd);
	return t;
}

static void waiting_del(struct unwinder *u, struct unwind_proc_state *ups)
{
	for (size_t i = 0; i < u->nr_waiting; i++) {
		if (u->waiting[i] == ups) {
			u->waiting[i] = u->waiting[--u->nr_waiting];
			return;
		}
	}
}

static void ups_free(struct unwinder *u, struct unwind_proc_state *ups)
{
	uint32_t i;

	waiting_del(u, ups);
	for (i = 0; i < ups->nr_maps; i++)
		if (ups->maps[i].t && ups->maps[i].t != u->vdso)
			ups->maps[i].t->refs--;
	free(ups->maps);
	free(ups);
}

static void release_proc(struct unwinder *u, struct unwind_proc_state *ups, bool delete_entry)
{
	if (delete_entry)
		unwind_store__del_proc(u->store, ups->pid, &ups->bpf);
	else
		unwind_store__drop_proc_range(u->store, &ups->bpf);
	ups_free(u, ups);
}

/* put @ups's mappings in the store as their tables are now; count its waiting ones */
static int put_proc(struct unwinder *u, struct unwind_proc_state *ups, struct unwind_proc *bpf)
{
	uint32_t i;

	if (array_grow((void **)&u->scratch, &u->scratch_cap, ups->nr_maps ? ups->nr_maps : 1,
		       sizeof(*u->scratch), 64))
		return -ENOMEM;
	ups->nr_waiting = 0;
	for (i = 0; i < ups->nr_maps; i++) {
		fill_mapping(&ups->maps[i], &u->scratch[i]);
		ups->nr_waiting += ups->maps[i].t && ups->maps[i].t->job;
	}
	if (!ups->nr_maps)
		return -EINVAL;
	return unwind_store__put_proc(u->store, ups->pid, ups->exec_id, u->scratch, ups->nr_maps,
				      bpf);
}

/*
 * Tables landed: install again the processes that waited for them, from
 * the mappings they were installed with (their own install replaces that
 * when their mappings change).
 */
static void install_waiting(struct unwinder *u)
{
	struct unwind_proc bpf;
	size_t i = 0;

	u->landed = false;
	while (i < u->nr_waiting) {
		struct unwind_proc_state *ups = u->waiting[i];
		uint32_t k, still = 0;

		for (k = 0; k < ups->nr_maps; k++)
			still += ups->maps[k].t && ups->maps[k].t->job;
		if (still == ups->nr_waiting) {
			i++;
			continue;
		}
		if (put_proc(u, ups, &bpf)) {
			count(u, &u->st.install_failed, 1);
		} else {
			unwind_store__drop_proc_range(u->store, &ups->bpf);
			ups->bpf = bpf;
			count(u, &u->st.reinstalls, 1);
		}
		ups->nr_waiting = still;
		if (!still)
			u->waiting[i] = u->waiting[--u->nr_waiting];
		else
			i++;
	}
}

/* copy what an install needs out of @st; false when there is nothing to do */
static bool copy_maps(struct process_state *st, struct map_copy **out, uint32_t *nr, uint32_t *gen)
{
	const struct maps_snapshot *snap;
	uint32_t i;
	bool todo = false;

	pthread_mutex_lock(&st->lock);
	if (st->retired || !st->maps.nr || (st->unwind && st->unwind->maps_gen == st->maps_gen))
		goto out;
	snap = &st->maps.snaps[st->maps.nr - 1];
	*nr = snap->nr < UNWIND_MAX_PROC_MAPPINGS ? snap->nr : UNWIND_MAX_PROC_MAPPINGS;
	*out = calloc(*nr ? *nr : 1, sizeof(**out));
	if (!*out)
		goto out;
	for (i = 0; i < *nr; i++)
		(*out)[i] = (struct map_copy){
			.start = snap->maps[i].start,
			.end = snap->maps[i].end,
			.pgoff = snap->maps[i].pgoff,
			.inode = snap->maps[i].inode,
			.path = snap->maps[i].path, /* interned: lives as long as the symbolizer */
			.deleted = snap->maps[i].deleted,
		};
	*gen = st->maps_gen;
	todo = true;
out:
	pthread_mutex_unlock(&st->lock);
	return todo;
}

static void install(struct unwinder *u, uint32_t pid)
{
	struct unwind_proc_state *ups = NULL, *prev;
	struct process_state *st;
	struct map_copy *maps = NULL;
	uint32_t i, nr = 0, gen = 0;
	struct utable *t;
	int err;

	st = process_states__get_pinned(u->o.states, u->o.reg, pid);
	if (!st)
		return;
	if (!copy_maps(st, &maps, &nr, &gen))
		goto out_unpin;
	if (array_grow((void **)&u->waiting, &u->cap_waiting, u->nr_waiting + 1,
		       sizeof(struct unwind_proc_state *), 64))
		goto out_unpin;
	ups = calloc(1, sizeof(*ups));
	if (!ups || !(ups->maps = calloc(nr ? nr : 1, sizeof(*ups->maps))))
		goto out_unpin;
	ups->pid = pid;
	ups->exec_id = st->exec_id;
	ups->maps_gen = gen;
	ups->nr_maps = nr;
	for (i = 0; i < nr; i++) {
		t = mapping_table(u, pid, &maps[i]);
		ups->maps[i] = (struct inst_map){
			.start = maps[i].start,
			.end = maps[i].end,
			.pgoff = maps[i].pgoff,
			.t = t,
			.file = maps[i].path[0] == '/',
		};
		if (t && t != u->vdso)
			t->refs++;
	}
	err = put_proc(u, ups, &ups->bpf);
	if (err) {
		count(u, &u->st.install_failed, 1);
		goto out_unpin;
	}
	pthread_mutex_lock(&st->lock);
	if (st->retired) {
		/* the image went while we built: its retire found nothing to take */
		pthread_mutex_unlock(&st->lock);
		release_proc(u, ups, true);
		ups = NULL;
		goto out_unpin;
	}
	prev = st->unwind;
	st->unwind = ups;
	pthread_mutex_unlock(&st->lock);
	/* some of its tables are still building: installed again when they land */
	if (ups->nr_waiting)
		u->waiting[u->nr_waiting++] = ups;
	ups = NULL;
	/* put_proc replaced the previous install's entry: its range and refs go */
	if (prev)
		release_proc(u, prev, false);
	count(u, &u->st.installs, 1);
out_unpin:
	if (ups)
		ups_free(u, ups);
	free(maps);
	process_states__unpin(st);
	compact_files(u);
}

/* --- the thread and its queues ---------------------------------------- */

static bool pending_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct unwinder *u = ctx;

	return u->pending[idx] == *(const uint32_t *)key;
}

void unwinder__request(struct unwinder *u, uint32_t pid)
{
	uint32_t hash = (uint32_t)hash_u64(pid);

	pthread_mutex_lock(&u->lock);
	if (htable__find(&u->pending_index, hash, pending_eq, u, &pid) == HTABLE_NONE &&
	    u->nr_pending < MAX_PENDING &&
	    !htable__insert(&u->pending_index, hash, u->nr_pending)) {
		u->pending[u->nr_pending++] = pid;
		pthread_cond_signal(&u->wake);
	}
	pthread_mutex_unlock(&u->lock);
}

static void on_mapped(void *ctx, struct process_state *st)
{
	unwinder__request(ctx, st->pid);
}

/* with @st->lock held, on the registry's reclaim thread */
static void on_retired(void *ctx, struct process_state *st)
{
	struct unwinder *u = ctx;
	struct unwind_proc_state *ups = st->unwind;

	if (!ups)
		return;
	st->unwind = NULL;
	pthread_mutex_lock(&u->lock);
	ups->next = u->releases;
	u->releases = ups;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
}

/*
 * One round: releases first (they free room the installs may need), then
 * the installs asked for (never waiting for a build: a file's table is
 * queued, its mappings walked by frame pointers meanwhile), then one slice
 * of the builds, then the processes whose tables landed.
 */
static void work(struct unwinder *u, struct unwind_proc_state *rel, const uint32_t *batch,
		 uint32_t n)
{
	struct unwind_proc_state *next;
	uint32_t i;

	for (; rel; rel = next) {
		next = rel->next;
		release_proc(u, rel, true);
	}
	for (i = 0; i < n && !atomic_load(&u->cancel); i++)
		install(u, batch[i]);
	if (u->nr_jobs && !atomic_load(&u->cancel))
		job_run(u);
	if (u->landed)
		install_waiting(u);
}

static void *unwinder_thread(void *arg)
{
	struct unwinder *u = arg;
	struct unwind_proc_state *rel;
	uint32_t *batch = NULL, n;
	struct timespec ts;

	pthread_setname_np(pthread_self(), "ctxprof-unwind");
	thread_registry__register_thread();
	batch = malloc(MAX_PENDING * sizeof(*batch));
	pthread_mutex_lock(&u->lock);
	while (!u->stop && batch) {
		if (!u->nr_pending && !u->releases && !u->nr_jobs) {
			u->busy = false;
			pthread_cond_broadcast(&u->idle);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&u->wake, &u->lock, &ts);
			continue;
		}
		u->busy = true;
		rel = u->releases;
		u->releases = NULL;
		n = u->nr_pending;
		memcpy(batch, u->pending, n * sizeof(*batch));
		u->nr_pending = 0;
		htable__clear(&u->pending_index);
		pthread_mutex_unlock(&u->lock);

		work(u, rel, batch, n);

		pthread_mutex_lock(&u->lock);
		unwind_store__stats(u->store, &u->st.store);
	}
	u->busy = false;
	pthread_cond_broadcast(&u->idle);
	pthread_mutex_unlock(&u->lock);
	free(batch);
	thread_registry__unregister_thread();
	return NULL;
}

struct unwinder *unwinder__start(const struct unwinder_opts *opts, char *err, size_t err_len)
{
	struct process_state_hooks hooks = {.mapped = on_mapped, .retired = on_retired};
	struct unwinder *u;
	int e;

	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->o = *opts;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->wake, NULL);
	pthread_cond_init(&u->idle, NULL);
	u->pending = calloc(MAX_PENDING, sizeof(*u->pending));
	e = u->pending ? htable__init(&u->pending_index, MAX_PENDING, HTABLE_FIXED) : -ENOMEM;
	if (e) {
		snprintf(err, err_len, "out of memory for the unwinder");
		goto err_free;
	}
	u->store = unwind_store__new(&opts->maps);
	if (!u->store) {
		e = -errno;
		snprintf(err, err_len, "cannot map the unwind tables: %s", strerror(errno));
		goto err_free;
	}
	e = vdso_table(u);
	if (e) {
		snprintf(err, err_len, "cannot read the vdso: %s", strerror(-e));
		goto err_free;
	}
	hooks.ctx = u;
	process_states__set_hooks(opts->states, &hooks);
	e = -pthread_create(&u->thread, NULL, unwinder_thread, u);
	if (e) {
		snprintf(err, err_len, "cannot start the unwinder thread: %s", strerror(-e));
		goto err_free;
	}
	u->started = true;
	return u;

err_free:
	unwinder__free(u);
	errno = -e;
	return NULL;
}

bool unwinder__wait_idle(struct unwinder *u, int timeout_ms)
{
	struct timespec ts;
	bool idle;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&u->lock);
	while ((u->busy || u->nr_pending || u->releases) && u->started)
		if (pthread_cond_timedwait(&u->idle, &u->lock, &ts))
			break;
	idle = !u->busy && !u->nr_pending && !u->releases;
	pthread_mutex_unlock(&u->lock);
	return idle;
}

void unwinder__stats(struct unwinder *u, struct unwinder_stats *st)
{
	pthread_mutex_lock(&u->lock);
	*st = u->st;
	pthread_mutex_unlock(&u->lock);
}

void unwinder__stop(struct unwinder *u)
{
	if (!u || !u->started)
		return;
	/* a build under way sees this within one libdw call */
	atomic_store(&u->cancel, true);
	pthread_mutex_lock(&u->lock);
	u->stop = true;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	pthread_join(u->thread, NULL);
	u->started = false;
}

void unwinder__free(struct unwinder *u)
{
	struct unwind_proc_state *rel, *next;
	size_t i;

	if (!u)
		return;
	unwinder__stop(u);
	for (rel = u->releases; rel; rel = next) {
		next = rel->next;
		free(rel->maps);
		free(rel);
	}
	while (u->nr_jobs)
		job_free(u, u->nr_jobs - 1);
	for (i = 0; i < u->nr_files; i++)
		free(u->files[i]);
	free(u->files);
	free(u->jobs);
	free(u->waiting);
	free(u->vdso);
	htable__destroy(&u->by_identity);
	htable__destroy(&u->by_build_id);
	htable__destroy(&u->pending_index);
	free(u->pending);
	free(u->scratch);
	unwind_store__free(u->store);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->wake);
	pthread_cond_destroy(&u->idle);
	free(u);
}
