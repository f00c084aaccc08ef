// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "processes/proc_maps.h"
#include "symbols/debug_file.h"
#include "symbols/elf_syms.h"
#include "symbols/safe_open.h"
#include "unwind/unwind_table.h"
#include "unwind/unwinder.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/htable.h"

#define MAX_SEGS     16
#define BUILD_ID_MAX 64
/* files remembered (tables or verdicts): past it, ones no process maps are forgotten */
#define MAX_FILES 16384
/* a pid asked for while the thread is busy waits here (deduplicated) */
#define MAX_PENDING 65536

struct seg {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

/* one file's table (or verdict), shared by every process that maps it */
struct utable {
	uint8_t build_id[BUILD_ID_MAX];
	uint32_t build_id_len; /* 0: none, keyed by its identity alone */
	dev_t dev;	       /* the identity it was read under */
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	enum unwind_map_kind kind; /* TABLE, FP (no CFI), NO_TABLE (failed) */
	uint64_t base;
	uint32_t row_first;
	uint32_t nr_rows; /* the table's rows; kept when evicted, to know its size */
	bool in_store;	  /* the rows are in the BPF array now */
	bool debug_file;  /* built with its debug file's .debug_frame */
	struct seg segs[MAX_SEGS];
	uint32_t nr_segs;
	uint32_t refs; /* processes mapping it */
	uint64_t last_used;
};

/* what the BPF unwinder has of one process image (process_state.unwind) */
struct unwind_proc_state {
	uint32_t pid;
	uint32_t maps_gen; /* process_state.maps_gen it was built from */
	struct unwind_proc bpf;
	struct utable **refs;
	uint32_t nr_refs;
	struct unwind_proc_state *next; /* on the release queue */
};

struct unwinder {
	struct unwinder_opts o;
	struct unwind_store *store;
	pthread_t thread;
	bool started;

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

static uint32_t identity_hash(const struct identity *id)
{
	return (uint32_t)hash_combine(hash_combine(hash_u64(id->dev), id->ino),
				      (uint64_t)id->size ^ (uint64_t)id->mtime_ns);
}

static bool identity_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct unwinder *u = ctx;
	const struct utable *t = u->files[idx];
	const struct identity *id = key;

	return t->dev == id->dev && t->ino == id->ino && t->size == id->size &&
	       t->mtime_ns == id->mtime_ns;
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

/* forget files no process maps and whose rows are gone, when there are too many */
static void compact_files(struct unwinder *u)
{
	size_t i, n = 0;

	if (u->nr_files < MAX_FILES)
		return;
	for (i = 0; i < u->nr_files; i++) {
		if (!u->files[i]->refs && !u->files[i]->in_store)
			free(u->files[i]);
		else
			u->files[n++] = u->files[i];
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

static int read_segments(Elf *elf, struct utable *t)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n && t->nr_segs < MAX_SEGS; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		t->segs[t->nr_segs++] = (struct seg){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
	return t->nr_segs ? 0 : -EINVAL;
}

/* build a table from @elf (and @debug_elf), or from the image at @mem; timed */
static int build_table(struct unwinder *u, Elf *elf, Elf *debug_elf, const void *mem,
		       size_t mem_len, struct unwind_table **tab, char *err, size_t err_len)
{
	uint64_t start = mono_ns(), took;
	int e;

	e = elf ? unwind_table__build(elf, debug_elf, tab, err, err_len)
		: unwind_table__build_mem(mem, mem_len, tab, err, err_len);
	took = mono_ns() - start;
	pthread_mutex_lock(&u->lock);
	u->st.build_ns += took;
	if (took > u->st.build_max_ns)
		u->st.build_max_ns = took;
	pthread_mutex_unlock(&u->lock);
	return e;
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
		count(u, &u->st.tables_failed, 1);
		if (u->o.verbose)
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
 * The separate debug file of the file open on @fd, found and checked as the
 * symbolizer finds debug files (build id, debuglink CRC) inside the
 * process's root; NULL without one.  Close @dfd after elf_end().
 */
static Elf *debug_elf_open(int fd, const struct stat *st, uint32_t pid, const char *path, int *dfd)
{
	struct debug_file_result res;
	struct elf_syms *es;
	Elf *debug_elf;
	int root;

	*dfd = -1;
	es = elf_syms__open_fd(fd);
	if (!es)
		return NULL;
	root = proc_root_open(pid);
	*dfd = root >= 0 ? debug_file__open_fd(root, path, es, st, &res) : -ENOENT;
	if (root >= 0)
		close(root);
	elf_syms__free(es);
	if (*dfd < 0)
		return NULL;
	debug_elf = elf_begin(*dfd, ELF_C_READ, NULL);
	if (!debug_elf) {
		close(*dfd);
		*dfd = -1;
	}
	return debug_elf;
}

/* the file's own CFI leaves a quarter of its code or more without rows */
static bool table_has_gaps(int e, const struct unwind_table *tab)
{
	if (e == -ENODATA)
		return true;
	return !e && tab->stats.covered_bytes < tab->stats.text_bytes / 4 * 3;
}

/*
 * Build the table of the ELF file open on @fd (@elf) and install it.  Where
 * its own CFI leaves gaps (a program built without unwind tables: only its
 * start files' .eh_frame), its debug file's .debug_frame fills them, if
 * one is installed; @t->debug_file remembers it for a rebuild.
 */
static void build_file(struct unwinder *u, struct utable *t, Elf *elf, int fd,
		       const struct stat *st, uint32_t pid, const char *what)
{
	struct unwind_table *tab = NULL, *dtab = NULL;
	char err[160] = "", derr[160];
	bool rebuild_with_debug = t->debug_file;
	Elf *debug_elf;
	int e = -ENODATA, de, dfd;

	if (!rebuild_with_debug)
		e = build_table(u, elf, NULL, NULL, 0, &tab, err, sizeof(err));
	if (rebuild_with_debug || table_has_gaps(e, tab)) {
		debug_elf = debug_elf_open(fd, st, pid, what, &dfd);
		if (debug_elf) {
			de = build_table(u, elf, debug_elf, NULL, 0, &dtab, derr, sizeof(derr));
			elf_end(debug_elf);
			close(dfd);
			if (!de && (!tab || dtab->stats.covered_bytes > tab->stats.covered_bytes)) {
				unwind_table__free(tab);
				tab = dtab;
				dtab = NULL;
				e = 0;
			}
			unwind_table__free(dtab);
		}
	}
	/* evicted, and its debug file gone since: what the file has */
	if (rebuild_with_debug && !tab)
		e = build_table(u, elf, NULL, NULL, 0, &tab, err, sizeof(err));
	install_rows(u, t, tab, e, err, what);
}

/* the table of the file open on @fd, from the cache or built now */
static struct utable *file_table(struct unwinder *u, int fd, const struct stat *st, uint32_t pid,
				 const char *what)
{
	struct identity id = {st->st_dev, st->st_ino, st->st_size,
			      st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec};
	const void *bid = NULL;
	struct build_id key;
	struct utable *t;
	ssize_t bid_len;
	uint32_t idx;
	Elf *elf;

	idx = htable__find(&u->by_identity, identity_hash(&id), identity_eq, u, &id);
	if (idx != HTABLE_NONE) {
		t = u->files[idx];
		goto found;
	}
	/* read, never mapped: a target truncating the file cannot SIGBUS us */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return NULL;
	bid_len = dwelf_elf_gnu_build_id(elf, &bid);
	if (bid_len > 0 && bid_len <= BUILD_ID_MAX) {
		key = (struct build_id){bid, (uint32_t)bid_len};
		idx = htable__find(&u->by_build_id, (uint32_t)hash_bytes(bid, bid_len), build_id_eq,
				   u, &key);
		if (idx != HTABLE_NONE) {
			/* the same file elsewhere (another container, a copy) */
			elf_end(elf);
			t = u->files[idx];
			count(u, &u->st.tables_shared, 1);
			goto found_rebuild;
		}
	}
	t = file_new(&id);
	if (!t) {
		elf_end(elf);
		return NULL;
	}
	if (bid_len > 0 && bid_len <= BUILD_ID_MAX) {
		memcpy(t->build_id, bid, bid_len);
		t->build_id_len = bid_len;
	}
	if (read_segments(elf, t)) {
		t->kind = UNWIND_MAP_NO_TABLE;
		count(u, &u->st.tables_failed, 1);
	} else {
		build_file(u, t, elf, fd, st, pid, what);
	}
	elf_end(elf);
	if (index_file(u, t)) {
		free(t);
		return NULL;
	}
	goto out;

found:
	count(u, &u->st.tables_shared, 1);
found_rebuild:
	/* evicted since, or found no room then: build again */
	if (t->kind == UNWIND_MAP_TABLE && !t->in_store) {
		elf = elf_begin(fd, ELF_C_READ, NULL);
		if (elf) {
			build_file(u, t, elf, fd, st, pid, what);
			elf_end(elf);
		}
	}
out:
	t->last_used = ++u->tick;
	return t;
}

static int vdso_table(struct unwinder *u)
{
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct unwind_table *tab = NULL;
	struct identity none = {0};
	struct proc_maps *pm;
	size_t i, len = 0;
	char err[160] = "";
	Elf *elf;
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
	elf = elf_memory((char *)image, len);
	if (!elf || read_segments(elf, u->vdso)) {
		if (elf)
			elf_end(elf);
		u->vdso->kind = UNWIND_MAP_FP;
		return 0;
	}
	elf_end(elf);
	/* the builder works on a private copy of the bytes */
	e = build_table(u, NULL, NULL, image, len, &tab, err, sizeof(err));
	install_rows(u, u->vdso, tab, e, err, "[vdso]");
	/* never evicted: every process maps it */
	u->vdso->refs = 1;
	return 0;
}

/* --- installing a process --------------------------------------------- */

/* BPF's mapping entry for @m of a file with table @t */
static void fill_mapping(const struct mapping *m, const struct utable *t,
			 struct unwind_mapping *out)
{
	const struct seg *s = NULL;
	uint32_t i;

	*out = (struct unwind_mapping){.start = m->start, .end = m->end, .kind = t->kind};
	if (t->kind != UNWIND_MAP_TABLE)
		return;
	if (!t->in_store) {
		out->kind = UNWIND_MAP_NO_TABLE;
		return;
	}
	/* the loadable segment this part of the file belongs to */
	for (i = 0; i < t->nr_segs; i++) {
		if ((t->segs[i].offset & ~4095ull) <= m->pgoff &&
		    m->pgoff < t->segs[i].offset + t->segs[i].filesz) {
			s = &t->segs[i];
			break;
		}
	}
	if (!s) {
		out->kind = UNWIND_MAP_NO_TABLE;
		return;
	}
	out->bias = m->start - m->pgoff + s->offset - s->vaddr + t->base;
	out->row_first = t->row_first;
	out->row_count = t->nr_rows;
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

/* the table of the file @pid maps at @m, or NULL (unreadable: counted) */
static struct utable *mapping_table(struct unwinder *u, uint32_t pid, const struct mapping *m)
{
	struct utable *t;
	struct stat st;
	int fd;

	if (!strcmp(m->path, "[vdso]"))
		return u->vdso;
	if (m->path[0] != '/')
		return NULL;
	/* the very file mapped there, whatever its path names now */
	fd = safe_open_mapped(pid, m->start, m->end, SAFE_OPEN_MAX_ELF_SIZE, &st);
	if (fd < 0)
		fd = open_by_path(pid, m, &st);
	if (fd < 0) {
		count(u, &u->st.files_unreadable, 1);
		return NULL;
	}
	t = file_table(u, fd, &st, pid, m->path);
	close(fd);
	return t;
}

static void release_proc(struct unwinder *u, struct unwind_proc_state *ups, bool delete_entry)
{
	uint32_t i;

	if (delete_entry)
		unwind_store__del_proc(u->store, ups->pid, &ups->bpf);
	else
		unwind_store__drop_proc_range(u->store, &ups->bpf);
	for (i = 0; i < ups->nr_refs; i++)
		ups->refs[i]->refs--;
	free(ups->refs);
	free(ups);
}

/* @st's newest snapshot, unless installed already: NULL when there is nothing to do */
static struct mappings *take_maps(struct process_state *st, uint32_t *gen)
{
	struct mappings *snap = NULL;

	pthread_mutex_lock(&st->lock);
	if (st->retired || (st->unwind && st->unwind->maps_gen == st->maps_gen))
		goto out;
	snap = mappings_history__latest(&st->maps);
	if (snap)
		mappings__get(snap);
	*gen = st->maps_gen;
out:
	pthread_mutex_unlock(&st->lock);
	return snap;
}

static void install(struct unwinder *u, uint32_t pid)
{
	struct unwind_proc_state *ups = NULL, *prev;
	struct process_state *st;
	const struct mapping *maps;
	struct mappings *snap;
	uint32_t i, nr = 0, gen = 0;
	struct utable *t;
	int err;

	st = process_states__get_pinned(u->o.states, u->o.reg, pid);
	if (!st)
		return;
	snap = take_maps(st, &gen);
	if (!snap)
		goto out_unpin;
	/* a fork that lived a millisecond: its files cannot be opened any more */
	if (kill((pid_t)pid, 0) && errno == ESRCH) {
		count(u, &u->st.install_gone, 1);
		goto out_unpin;
	}
	maps = snap->maps;
	nr = snap->nr < UNWIND_MAX_PROC_MAPPINGS ? snap->nr : UNWIND_MAX_PROC_MAPPINGS;
	if (array_grow((void **)&u->scratch, &u->scratch_cap, nr ? nr : 1, sizeof(*u->scratch), 64))
		goto out_unpin;
	ups = calloc(1, sizeof(*ups));
	if (!ups || !(ups->refs = calloc(nr ? nr : 1, sizeof(struct utable *))))
		goto out_unpin;
	ups->pid = pid;
	ups->maps_gen = gen;
	for (i = 0; i < nr; i++) {
		t = mapping_table(u, pid, &maps[i]);
		if (!t) {
			/* anonymous code (JIT), or a file we cannot read: frame pointers */
			u->scratch[i] = (struct unwind_mapping){
				.start = maps[i].start,
				.end = maps[i].end,
				.kind = maps[i].path[0] == '/' ? UNWIND_MAP_NO_TABLE
							       : UNWIND_MAP_FP,
			};
			continue;
		}
		fill_mapping(&maps[i], t, &u->scratch[i]);
		if (t != u->vdso) {
			t->refs++;
			ups->refs[ups->nr_refs++] = t;
		}
	}
	err = nr ? unwind_store__put_proc(u->store, pid, st->exec_id, u->scratch, nr, &ups->bpf)
		 : -EINVAL;
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
	ups = NULL;
	/* put_proc replaced the previous install's entry: its range and refs go */
	if (prev)
		release_proc(u, prev, false);
	count(u, &u->st.installs, 1);
out_unpin:
	if (ups) {
		for (i = 0; i < ups->nr_refs; i++)
			ups->refs[i]->refs--;
		free(ups->refs);
		free(ups);
	}
	mappings__put(snap);
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

static void on_mapped(void *ctx, struct process_state *st, struct mappings *snap,
		      const struct proc_maps *all)
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

static void *unwinder_thread(void *arg)
{
	struct unwinder *u = arg;
	struct unwind_proc_state *rel, *next;
	uint32_t *batch = NULL, n, i;
	struct timespec ts;

	pthread_setname_np(pthread_self(), "ctxprof-unwind");
	thread_registry__register_thread();
	batch = malloc(MAX_PENDING * sizeof(*batch));
	pthread_mutex_lock(&u->lock);
	while (!u->stop && batch) {
		if (!u->nr_pending && !u->releases) {
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

		/* releases first: they free room the installs may need */
		for (; rel; rel = next) {
			next = rel->next;
			release_proc(u, rel, true);
		}
		for (i = 0; i < n && !u->stop; i++)
			install(u, batch[i]);

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
	struct process_state_subscriber sub = {.changed = on_mapped, .gone = on_retired};
	struct unwinder *u;
	int e;

	elf_version(EV_CURRENT);
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
	sub.ctx = u;
	e = process_states__subscribe(opts->states, &sub);
	if (e) {
		snprintf(err, err_len, "cannot follow process mappings: %s", strerror(-e));
		goto err_free;
	}
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
		free(rel->refs);
		free(rel);
	}
	for (i = 0; i < u->nr_files; i++)
		free(u->files[i]);
	free(u->files);
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
