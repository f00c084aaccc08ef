// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "elf/elf_file.h"
#include "processes/mapped_file.h"
#include "processes/proc_maps.h"
#include "processes/proc_mem.h"
#include "runtimes/hotspot/code_cache.h"
#include "runtimes/hotspot/hotspot_proc.h"

/* the longest .dynstr looked through (libjvm.so's is about 1 MiB) */
#define HS_DYNSTR_MAX (16u << 20)
/* names kept per process at most; past it the cache starts again */
#define HS_CACHE_MAX 65536
/* a range outside the maps last read: read them again, at most this often */
#define HS_MAPS_REREAD_NS 1000000000ull

struct hs_entry {
	uint64_t blob; /* 0: empty */
	uint64_t method;
	int64_t compile_id;
	char *name;
};

struct hotspot_proc {
	pid_t pid;
	struct hotspot_layout l;
	struct elf_file *ef; /* libjvm.so: its read-only data is read here */
	const struct elf_load *loads;
	size_t nr_loads;
	uint64_t bias;
	struct proc_mem *mem;
	struct proc_maps *maps;
	uint64_t maps_read_ns;
	struct hotspot_heap heaps[HOTSPOT_MAX_HEAPS];
	unsigned int nr_heaps;
	struct hs_entry *cache;
	size_t cap, nr;
	char scratch[HOTSPOT_NAME_MAX * 2 + 64]; /* a name not kept, until the next call */
};

static const char *const exports[] = {
	"gHotSpotVMStructs",
	"gHotSpotVMTypes",
	"gHotSpotVMIntConstants",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryTypeStringOffset",
	"gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMIntConstantEntryArrayStride",
	"gHotSpotVMIntConstantEntryNameOffset",
	"gHotSpotVMIntConstantEntryValueOffset",
};

#define NR_EXPORTS (sizeof(exports) / sizeof(exports[0]))

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the addresses (ELF virtual) of the exports, in exports[] order; false: one missing */
static bool find_exports(const struct elf_file *ef, uint64_t at[NR_EXPORTS])
{
	struct elf_symtab st;
	unsigned int found = 0;
	char name[48]; /* longer than any export: a longer name is cut, and differs */
	Elf64_Sym sym;
	size_t i, k;

	memset(at, 0, NR_EXPORTS * sizeof(*at));
	if (elf_file__symtab(ef, SHT_DYNSYM, &st))
		return false;
	if (elf_symtab__load_strings(&st, HS_DYNSTR_MAX))
		goto out;
	for (i = 1; i < st.nr && found < NR_EXPORTS && !elf_symtab__get(&st, i, &sym); i++) {
		if (sym.st_shndx == SHN_UNDEF || !sym.st_value || sym.st_size < 8 ||
		    elf_symtab__name(&st, sym.st_name, name, sizeof(name), NULL) ||
		    strncmp(name, "gHotSpotVM", 10))
			continue;
		for (k = 0; k < NR_EXPORTS; k++) {
			if (!at[k] && !strcmp(name, exports[k])) {
				at[k] = sym.st_value;
				found++;
			}
		}
	}
out:
	elf_symtab__release(&st);
	return found == NR_EXPORTS;
}

/* the process's memory, its maps read again when a range is outside them */
static int read_mem(struct hotspot_proc *hp, uint64_t addr, void *buf, size_t len)
{
	struct proc_maps *fresh;
	uint64_t now;
	int err;

	err = hp->maps ? proc_mem__read(hp->mem, hp->maps, addr, buf, len) : -EACCES;
	if (err != -EACCES)
		return err;
	now = now_ns();
	if (hp->maps && now - hp->maps_read_ns < HS_MAPS_REREAD_NS)
		return err;
	fresh = proc_maps__read(hp->pid);
	if (!fresh)
		return -errno;
	proc_maps__free(hp->maps);
	hp->maps = fresh;
	hp->maps_read_ns = now;
	return proc_mem__read(hp->mem, hp->maps, addr, buf, len);
}

/*
 * vmstructs' reader: libjvm's read-only segments (the tables' names) from
 * its file, whose pages the process shares unchanged; the rest from memory
 */
static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct hotspot_proc *hp = ctx;
	uint64_t vaddr = addr - hp->bias, off;
	size_t i;

	for (i = 0; i < hp->nr_loads; i++) {
		const struct elf_load *l = &hp->loads[i];

		if ((l->flags & PF_W) || vaddr < l->vaddr || vaddr - l->vaddr >= l->filesz)
			continue;
		if (elf_loads__vaddr_to_offset(hp->loads, hp->nr_loads, vaddr, len, &off))
			return -EFAULT;
		return elf_file__read(hp->ef, off, buf, len);
	}
	return read_mem(hp, addr, buf, len);
}

static int read_u64(struct hotspot_proc *hp, uint64_t addr, uint64_t *v)
{
	return read_target(hp, addr, v, sizeof(*v));
}

/* the exports' values, read from the process; 0 or -errno */
static int read_exports(struct hotspot_proc *hp, const uint64_t at[NR_EXPORTS],
			struct vmstructs_exports *ex)
{
	uint64_t *dst[NR_EXPORTS] = {
		&ex->structs,	  &ex->types,	     &ex->int_consts,	 &ex->s_stride,
		&ex->s_type_name, &ex->s_field_name, &ex->s_type_string, &ex->s_is_static,
		&ex->s_offset,	  &ex->s_address,    &ex->t_stride,	 &ex->t_type_name,
		&ex->t_size,	  &ex->i_stride,     &ex->i_name,	 &ex->i_value,
	};
	size_t i;
	int err;

	for (i = 0; i < NR_EXPORTS; i++) {
		err = read_u64(hp, at[i] + hp->bias, dst[i]);
		if (err)
			return err;
	}
	return 0;
}

static bool is_libjvm(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, "libjvm.so");
}

/* open @m's file and take its exports, bias and loads into @hp; 0 or -errno */
static int open_libjvm(struct hotspot_proc *hp, const struct proc_map *m, uint64_t at[NR_EXPORTS])
{
	const struct elf_load *l;
	int root_fd = -1, fd;

	fd = mapped_file__open(hp->pid, m, &root_fd);
	if (root_fd >= 0)
		close(root_fd);
	if (fd < 0)
		return fd;
	hp->ef = elf_file__open_fd(fd);
	close(fd);
	if (!hp->ef)
		return errno ? -errno : -EINVAL;
	hp->loads = elf_file__loads(hp->ef, &hp->nr_loads);
	l = elf_loads__for_mapping(hp->loads, hp->nr_loads, m->pgoff);
	if (!l)
		return -EINVAL;
	hp->bias = m->start - m->pgoff + l->offset - l->vaddr;
	return find_exports(hp->ef, at) ? 0 : -ENOENT;
}

struct hotspot_proc *hotspot_proc__open(pid_t pid, const struct proc_maps *all,
					struct hotspot_stats *stats, int verbose)
{
	struct vmstructs_exports ex;
	uint64_t at[NR_EXPORTS] = {0};
	struct hotspot_proc *hp;
	enum vmstructs_error e;
	const char *what;
	size_t i;
	int err;

	for (i = 0; i < all->nr && !is_libjvm(all->maps[i].path); i++)
		;
	if (i == all->nr) {
		errno = ENOENT;
		return NULL;
	}
	hp = calloc(1, sizeof(*hp));
	if (!hp)
		return NULL;
	hp->pid = pid;
	hp->mem = proc_mem__open(pid);
	hp->maps = proc_maps__dup(all);
	hp->maps_read_ns = now_ns();
	if (!hp->mem || !hp->maps) {
		err = -errno;
		goto err_free;
	}
	err = open_libjvm(hp, &all->maps[i], at);
	if (!err)
		err = read_exports(hp, at, &ex);
	if (err) {
		stats->unreadable++;
		if (verbose)
			fprintf(stderr, "ctxprof: pid %d: %s: VMStructs exports unreadable (%s)\n",
				pid, all->maps[i].path, strerror(-err));
		goto err_free;
	}
	e = vmstructs__parse(&ex, read_target, hp, &hp->l, &what);
	if (e) {
		stats->refused[e]++;
		if (verbose)
			fprintf(stderr, "ctxprof: pid %d: HotSpot's VMStructs refused (%s: %s)\n",
				pid, vmstructs__error_name(e), what ?: "?");
		err = -EINVAL;
		goto err_free;
	}
	stats->jvms++;
	if (verbose)
		fprintf(stderr,
			"ctxprof: pid %d: HotSpot JVM, compiled methods named from VMStructs\n",
			pid);
	return hp;

err_free:
	hotspot_proc__free(hp);
	errno = -err;
	return NULL;
}

static size_t slot_of(const struct hotspot_proc *hp, uint64_t blob, int64_t id)
{
	uint64_t h = (blob ^ ((uint64_t)id << 40)) * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 17) & (hp->cap - 1);
}

static void cache_clear(struct hotspot_proc *hp)
{
	size_t i;

	for (i = 0; i < hp->cap; i++)
		free(hp->cache[i].name);
	free(hp->cache);
	hp->cache = NULL;
	hp->cap = hp->nr = 0;
}

/* the table twice as large (256 slots at first), the entries moved over; 0 or -ENOMEM */
static int cache_grow(struct hotspot_proc *hp)
{
	struct hs_entry *old = hp->cache;
	size_t old_cap = hp->cap, i, j;

	hp->cap = old_cap ? old_cap * 2 : 256;
	hp->cache = calloc(hp->cap, sizeof(*hp->cache));
	if (!hp->cache) {
		hp->cache = old;
		hp->cap = old_cap;
		return -ENOMEM;
	}
	for (i = 0; i < old_cap; i++) {
		if (!old[i].blob)
			continue;
		for (j = slot_of(hp, old[i].blob, old[i].compile_id); hp->cache[j].blob;
		     j = (j + 1) & (hp->cap - 1))
			;
		hp->cache[j] = old[i];
	}
	free(old);
	return 0;
}

/* the entry of (@blob, @method, @id), or the empty slot it goes into; NULL: no room */
static struct hs_entry *cache_slot(struct hotspot_proc *hp, uint64_t blob, uint64_t method,
				   int64_t id)
{
	struct hs_entry *e;
	size_t i;

	/* full: start again (a JVM compiles and frees more than this over its life) */
	if (hp->nr >= HS_CACHE_MAX)
		cache_clear(hp);
	/* at most half full, so that a probe ends */
	if ((hp->nr + 1) * 2 > hp->cap && cache_grow(hp))
		return NULL;
	for (i = slot_of(hp, blob, id);; i = (i + 1) & (hp->cap - 1)) {
		e = &hp->cache[i];
		if (!e->blob || (e->blob == blob && e->method == method && e->compile_id == id))
			return e;
	}
}

/* a blob that is no method: the interpreter, a stub, an adapter, by its own name */
static const char *blob_name(struct hotspot_proc *hp, uint64_t at)
{
	char name[VMSTRUCTS_NAME_MAX];

	if (hotspot_code__blob_name(read_target, hp, at, name, sizeof(name)))
		return NULL;
	if (!strcmp(name, "Interpreter"))
		return "[java interpreted]";
	snprintf(hp->scratch, sizeof(hp->scratch), "[jvm %s]", name);
	return hp->scratch;
}

const char *hotspot_proc__name(struct hotspot_proc *hp, uint64_t pc, struct hotspot_stats *stats)
{
	struct hotspot_blob b;
	struct hs_entry *e;
	const char *name;
	int n;

	if (!hp->nr_heaps) {
		n = hotspot_code__heaps(&hp->l, read_target, hp, hp->heaps);
		if (n <= 0)
			return NULL;
		hp->nr_heaps = (unsigned int)n;
	}
	switch (hotspot_code__find(&hp->l, read_target, hp, hp->heaps, hp->nr_heaps, pc, &b)) {
	case 0:
		break;
	case -ENOENT:
		return NULL; /* not the JVM's code */
	default:
		goto unnamed;
	}
	if (!b.nmethod) {
		name = blob_name(hp, b.name_at);
		if (!name)
			goto unnamed;
		stats->frames_blob++;
		return name;
	}
	e = cache_slot(hp, b.addr, b.method, b.compile_id);
	if (e && e->blob) {
		stats->frames_named++;
		return e->name;
	}
	stats->methods_read++;
	if (hotspot_code__method_name(&hp->l, read_target, hp, b.method, hp->scratch,
				      sizeof(hp->scratch)))
		goto unnamed;
	stats->frames_named++;
	if (!e)
		return hp->scratch;
	e->name = strdup(hp->scratch);
	if (!e->name)
		return hp->scratch;
	e->blob = b.addr;
	e->method = b.method;
	e->compile_id = b.compile_id;
	hp->nr++;
	return e->name;

unnamed:
	/* left to the perf map, if there is one */
	stats->frames_unnamed++;
	return NULL;
}

void hotspot_proc__free(struct hotspot_proc *hp)
{
	if (!hp)
		return;
	cache_clear(hp);
	elf_file__free(hp->ef);
	proc_mem__free(hp->mem);
	proc_maps__free(hp->maps);
	free(hp);
}
