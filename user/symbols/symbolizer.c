// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symbolizer - the caches behind naming: ELF files, mapping paths, display
 * names.
 *
 * Three caches owned by the symbolizer, under its mutex, each an array of
 * entries indexed by a util/htable:
 * - files: parsed ELF files (with their debug file) keyed by the (st_dev,
 *   st_ino) of the opened file, shared by every process; a file that is not
 *   valid ELF stays as a negative entry so it is parsed once, not once per
 *   address or process.  Entries are heap objects: pointers to them are
 *   handed out, and the array holds those pointers;
 * - strings: interned mapping paths, module mappings and demangled names,
 *   each its own allocation for the same reason;
 * - display names: a mangled name (keyed by its address, which its file
 *   keeps until the end) -> its demangled form, or itself.
 * Nothing handed out is freed before symbolizer__free(): function names and
 * build ids belong to cached files, paths to the string table, so a frame
 * stays valid after the process state it came from is gone.
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
#include "elf/safe_open.h"
#include "processes/proc_maps.h"
#include "symbols/demangle.h"
#include "symbols/elf_syms.h"
#include "symbols/kallsyms.h"
#include "symbols/symbolizer.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htable.h"
#include "util/read_capped.h"

#define KERNEL_MAPPING	 "[kernel.kallsyms]"
#define KERNEL_NOTES	 "/sys/kernel/notes"
#define KERNEL_NOTES_MAX (64u << 10) /* a few hundred bytes in practice */
#define VDSO_MAPPING	 "[vdso]"

struct sym_file {
	dev_t dev;
	ino_t ino;
	struct elf_syms *es;  /* NULL: not a valid ELF (negative entry) */
	struct elf_syms *dbg; /* its separate debug file's symbols, NULL when none */
};

struct display_name {
	const char *name;  /* as the symbol table has it; keyed by address */
	const char *shown; /* demangled (interned), or @name itself */
};

struct symbolizer {
	struct kallsyms *ks; /* NULL: kernel frames stay unnamed */
	uint64_t ktext_start, ktext_end;
	bool has_kernel_build_id;
	char kernel_build_id[ELF_SYMS_BUILD_ID_HEX];
	struct sym_file vdso; /* vdso.es NULL when unknown */
	uint64_t vdso_size;
	pthread_mutex_t lock;
	struct sym_file **files;
	size_t nr_files, cap_files;
	struct htable files_idx;
	char **strings;
	size_t nr_strings, cap_strings;
	struct htable strings_idx;
	struct display_name *names;
	size_t nr_names, cap_names;
	struct htable names_idx;
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

static struct sym_file *elf_add(struct symbolizer *s, dev_t dev, ino_t ino, struct elf_syms *es,
				struct elf_syms *dbg)
{
	struct sym_file *ef;

	if (array_grow((void **)&s->files, &s->cap_files, s->nr_files + 1,
		       sizeof(struct sym_file *), 64))
		return NULL;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	*ef = (struct sym_file){.dev = dev, .ino = ino, .es = es, .dbg = dbg};
	if (htable__insert(&s->files_idx, file_hash(dev, ino), s->nr_files)) {
		free(ef);
		return NULL;
	}
	s->files[s->nr_files++] = ef;
	return ef;
}

/*
 * The display form of @name: demangled once per symbol and remembered; the
 * name itself when it is not mangled, does not demangle, or memory ran out.
 */
static const char *display_name_locked(struct symbolizer *s, const char *name)
{
	uint32_t hash = (uint32_t)hash_u64((uintptr_t)name), idx;
	char buf[DEMANGLE_MAX_LEN];
	const char *shown = name;

	idx = htable__find(&s->names_idx, hash, display_name_eq, s->names, name);
	if (idx != HTABLE_NONE)
		return s->names[idx].shown;
	if (!demangle(name, buf)) {
		shown = intern_locked(s, buf);
		if (!shown)
			return name;
		s->stats.demangled++;
	} else {
		s->stats.demangle_failed++;
	}
	if (array_grow((void **)&s->names, &s->cap_names, s->nr_names + 1, sizeof(*s->names),
		       256) ||
	    htable__insert(&s->names_idx, hash, s->nr_names))
		return shown;
	s->names[s->nr_names++] = (struct display_name){name, shown};
	return shown;
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

/*
 * The entry of the file open on @fd (consumed), parsed with its debug file
 * unless its (dev, ino) is cached.  @path and @root_fd say where debug files
 * are looked for.
 */
static const struct sym_file *file_from_fd(struct symbolizer *s, int fd, const struct stat *st,
					   int root_fd, const char *path)
{
	struct debug_file_result dres = {};
	struct elf_syms *es, *dbg = NULL;
	struct sym_file *ef;
	bool looked = false;
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
	pthread_mutex_lock(&s->lock);
	ef = elf_find(s, st->st_dev, st->st_ino);
	if (ef) {
		/* another thread parsed it meanwhile: keep the first */
		pthread_mutex_unlock(&s->lock);
		elf_syms__free(es);
		elf_syms__free(dbg);
		return ef;
	}
	count_file_locked(s, es, dbg, &dres, looked);
	ef = elf_add(s, st->st_dev, st->st_ino, es, dbg);
	pthread_mutex_unlock(&s->lock);
	if (!ef) {
		elf_syms__free(es);
		elf_syms__free(dbg);
	}
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
	return file_from_fd(s, fd, &st, root_fd, path);
}

const struct sym_file *symbolizer__file_mapped(struct symbolizer *s, pid_t pid, int root_fd,
					       const struct sym_map *m)
{
	struct stat st;
	int fd;

	fd = safe_open_mapped(pid, m->start, m->end, SAFE_OPEN_MAX_ELF_SIZE, &st);
	/*
	 * map_files refused (no CAP_SYS_ADMIN/CAP_CHECKPOINT_RESTORE) or the
	 * mapping is gone by now: the path, kept only if it is the inode mapped.
	 * The path of an unlinked file names another file or none: never tried.
	 */
	if (fd < 0 && fd != -EFBIG && fd != -EINVAL && !m->deleted) {
		count(s, &s->stats.elf_by_path, 1);
		return symbolizer__file_at(s, root_fd, m->path, m->inode);
	}
	if (fd < 0) {
		count(s, &s->stats.elf_open_failed, 1);
		return NULL;
	}
	return file_from_fd(s, fd, &st, root_fd, m->path);
}

bool symbolizer__file_ok(const struct sym_file *f)
{
	return f && f->es;
}

const struct sym_file *symbolizer__vdso(const struct symbolizer *s, uint64_t size)
{
	return s->vdso.es && size == s->vdso_size ? &s->vdso : NULL;
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

struct symbolizer *symbolizer__new(int kernel)
{
	struct symbolizer *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return errno = ENOMEM, NULL;
	pthread_mutex_init(&s->lock, NULL);
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
	for (i = 0; i < s->nr_files; i++) {
		elf_syms__free(s->files[i]->es);
		elf_syms__free(s->files[i]->dbg);
		free(s->files[i]);
	}
	free(s->files);
	htable__destroy(&s->files_idx);
	for (i = 0; i < s->nr_strings; i++)
		free(s->strings[i]);
	free(s->strings);
	htable__destroy(&s->strings_idx);
	free(s->names);
	htable__destroy(&s->names_idx);
	elf_syms__free(s->vdso.es);
	kallsyms__free(s->ks);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int symbolizer__user(struct symbolizer *s, const struct sym_map *m, uint64_t addr,
		     bool return_address, struct sym_frame *out)
{
	const struct sym_file *f = m->elf;
	const char *name = NULL;
	bool from_dbg = false;
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
	if (symbolizer__file_ok(f)) {
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
	pthread_mutex_lock(&s->lock);
	if (!name) {
		s->stats.unnamed++;
	} else {
		if (from_dbg)
			s->stats.names_debug_file++;
		else if (elf_syms__from_minidebug(f->es, name))
			s->stats.names_minidebug++;
		else if (f == &s->vdso)
			s->stats.names_vdso++;
		if (demangle_wanted(name))
			out->function = display_name_locked(s, name);
	}
	pthread_mutex_unlock(&s->lock);
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
	const char *module = NULL, *path;
	char mapping[KALLSYMS_MAX_MODULE + 3];

	memset(out, 0, sizeof(*out));
	out->mapping_path = KERNEL_MAPPING;
	if (return_address && addr)
		addr--;
	if (s->ks)
		out->function = kallsyms__lookup(s->ks, addr, &module, NULL);
	out->system_name = out->function;
	pthread_mutex_lock(&s->lock);
	if (!out->function)
		s->stats.unnamed++;
	/* a module is a mapping of its own, as perf shows it: "[ext4]" */
	if (module && *module) {
		snprintf(mapping, sizeof(mapping), "[%s]", module);
		path = intern_locked(s, mapping);
		pthread_mutex_unlock(&s->lock);
		if (path)
			out->mapping_path = path;
		return 0;
	}
	pthread_mutex_unlock(&s->lock);
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
	pthread_mutex_unlock(&s->lock);
}
