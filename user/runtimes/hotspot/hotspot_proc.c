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
#include "runtimes/hotspot/hotspot_proc.h"

/* the longest .dynstr looked through (libjvm.so's is about 1 MiB) */
#define HS_DYNSTR_MAX (16u << 20)
/* an nmethod's header read at most (vmstructs bounds it so) */
#define HS_MAX_HEADER 4096
/* code heaps read at most (HotSpot has 1 or 3) */
#define HS_MAX_HEAPS 8
/* segment map hops followed at most for one pc (a blob of 64 MiB in 64-byte segments) */
#define HS_MAX_HOPS 4096
/* names kept per process at most; past it the cache starts again */
#define HS_CACHE_MAX 65536
/* a class or method name at most, in bytes (Symbol::max_symbol_length is 65535) */
#define HS_NAME_MAX 512
/* a range outside the maps last read: read them again, at most this often */
#define HS_MAPS_REREAD_NS 1000000000ull

struct hs_heap {
	uint64_t low, high; /* its committed code */
	uint64_t segmap;    /* its segment map's first byte */
	uint32_t log2_seg;
};

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
	struct hs_heap heaps[HS_MAX_HEAPS];
	unsigned int nr_heaps;
	struct hs_entry *cache;
	size_t cap, nr;
	char scratch[HS_NAME_MAX * 2 + 64]; /* a name not kept, until the next call */
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

/* the integer field @f of the bytes @base read */
static int64_t field_int(const uint8_t *base, const struct vm_field *f)
{
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;

	switch (f->size) {
	case 1:
		memcpy(&i8, base + f->off, 1);
		return i8;
	case 2:
		memcpy(&i16, base + f->off, 2);
		return i16;
	case 4:
		memcpy(&i32, base + f->off, 4);
		return i32;
	default:
		memcpy(&i64, base + f->off, 8);
		return i64;
	}
}

static uint64_t field_ptr(const uint8_t *base, const struct vm_field *f)
{
	uint64_t v;

	memcpy(&v, base + f->off, sizeof(v));
	return v;
}

/* the exports' values, read from the process; 0 or -errno */
static int read_exports(struct hotspot_proc *hp, const uint64_t at[NR_EXPORTS],
			struct vmstructs_exports *ex)
{
	uint64_t *dst[NR_EXPORTS] = {
		&ex->structs,	    &ex->types,		&ex->int_consts,    &ex->s_stride,
		&ex->s_type_name,   &ex->s_field_name,	&ex->s_type_string, &ex->s_is_static,
		&ex->s_offset,	    &ex->s_address,	&ex->t_stride,	    &ex->t_type_name,
		&ex->t_size,	    &ex->i_stride,	&ex->i_name,	    &ex->i_value,
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
		return -errno;
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
	uint64_t at[NR_EXPORTS];
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
			fprintf(stderr, "ctxprof: pid %d: HotSpot's VMStructs refused (%s: %s)\n", pid,
				vmstructs__error_name(e), what ?: "?");
		err = -EINVAL;
		goto err_free;
	}
	stats->jvms++;
	if (verbose)
		fprintf(stderr, "ctxprof: pid %d: HotSpot JVM, compiled methods named from VMStructs\n",
			pid);
	return hp;

err_free:
	hotspot_proc__free(hp);
	errno = -err;
	return NULL;
}

/* the code heaps, read once the JVM has made them; 0 or -errno */
static int read_heaps(struct hotspot_proc *hp)
{
	const struct hotspot_layout *l = &hp->l;
	uint8_t ga[64], heap[4096];
	uint64_t arr, data, ptr;
	int64_t len;
	size_t heap_len;
	unsigned int i;
	int err;

	heap_len = l->heap_segmap.off + l->vs_high.off + 8;
	if (l->heap_memory.off + l->vs_high.off + 8 > heap_len)
		heap_len = l->heap_memory.off + l->vs_high.off + 8;
	if (l->heap_log2_seg.off + l->heap_log2_seg.size > heap_len)
		heap_len = l->heap_log2_seg.off + l->heap_log2_seg.size;
	if (heap_len > sizeof(heap) || l->ga_len.off + 8 > sizeof(ga) ||
	    l->ga_data.off + 8 > sizeof(ga))
		return -EINVAL;
	err = read_u64(hp, l->code_heaps, &arr);
	if (!err && !arr)
		return -EAGAIN; /* not made yet */
	if (!err)
		err = read_target(hp, arr, ga, sizeof(ga));
	if (err)
		return err;
	len = field_int(ga, &l->ga_len);
	data = field_ptr(ga, &l->ga_data);
	if (len <= 0 || len > HS_MAX_HEAPS)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		struct hs_heap *h = &hp->heaps[i];
		int64_t log2;

		err = read_u64(hp, data + i * 8, &ptr);
		if (!err)
			err = read_target(hp, ptr, heap, heap_len);
		if (err)
			return err;
		h->low = field_ptr(heap + l->heap_memory.off, &l->vs_low);
		h->high = field_ptr(heap + l->heap_memory.off, &l->vs_high);
		h->segmap = field_ptr(heap + l->heap_segmap.off, &l->vs_low);
		log2 = field_int(heap, &l->heap_log2_seg);
		if (h->high < h->low || log2 < 4 || log2 > 20)
			return -EINVAL;
		h->log2_seg = (uint32_t)log2;
	}
	hp->nr_heaps = (unsigned int)len;
	return 0;
}

/*
 * The blob holding @pc in @h: the segment map's hops back to the block's
 * first segment (CodeHeap::find_block_for), the block in use.  0: none.
 */
static uint64_t find_blob(struct hotspot_proc *hp, const struct hs_heap *h, uint64_t pc)
{
	uint64_t seg = (pc - h->low) >> h->log2_seg, block;
	uint8_t hop = 0, used = 0;
	unsigned int i;

	for (i = 0; i < HS_MAX_HOPS; i++) {
		if (read_target(hp, h->segmap + seg, &hop, 1))
			return 0;
		if (hop == 0xff) /* free_sentinel: no block there */
			return 0;
		if (!hop)
			break;
		if (hop > seg)
			return 0;
		seg -= hop;
	}
	if (hop)
		return 0;
	block = h->low + (seg << h->log2_seg);
	if (read_target(hp, block + hp->l.hb_used.off, &used, 1) || !used)
		return 0;
	return block + hp->l.heap_block_size;
}

/* the Symbol at @sym, its bytes into @out (NUL-terminated, cut to @cap - 1); 0 or -errno */
static int read_symbol(struct hotspot_proc *hp, uint64_t sym, char *out, size_t cap)
{
	const struct hotspot_layout *l = &hp->l;
	uint8_t hdr[64];
	int64_t len;
	int err;

	if (!sym || l->sym_length.off + l->sym_length.size > sizeof(hdr))
		return -EINVAL;
	err = read_target(hp, sym, hdr, l->sym_length.off + l->sym_length.size);
	if (err)
		return err;
	len = field_int(hdr, &l->sym_length) & 0xffff;
	if (!len)
		return -EINVAL;
	if ((size_t)len >= cap)
		len = (int64_t)cap - 1;
	err = read_target(hp, sym + l->sym_body.off, out, (size_t)len);
	if (err)
		return err;
	out[len] = 0;
	/* a name with a NUL or a control byte inside is no Symbol of a class */
	for (int64_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20)
			return -EINVAL;
	return 0;
}

/* `package.Class.method` of the Method at @method, into @out; 0 or -errno */
static int method_name(struct hotspot_proc *hp, uint64_t method, char *out, size_t cap)
{
	const struct hotspot_layout *l = &hp->l;
	char klass[HS_NAME_MAX], name[HS_NAME_MAX];
	uint64_t cm, cp, holder, kname, sym;
	uint8_t buf[64];
	int64_t idx, cp_len;
	int err;
	char *c;

	if (l->cm_name_index.off + l->cm_name_index.size > sizeof(buf) ||
	    l->cp_length.off + l->cp_length.size > sizeof(buf))
		return -EINVAL;
	err = read_u64(hp, method + l->method_const.off, &cm);
	if (!err)
		err = read_target(hp, cm, buf, l->cm_name_index.off + l->cm_name_index.size);
	if (err)
		return err;
	idx = field_int(buf, &l->cm_name_index) & 0xffff;
	err = read_u64(hp, cm + l->cm_constants.off, &cp);
	if (!err)
		err = read_target(hp, cp, buf, l->cp_length.off + l->cp_length.size);
	if (err)
		return err;
	cp_len = field_int(buf, &l->cp_length);
	if (idx <= 0 || idx >= cp_len)
		return -EINVAL;
	err = read_u64(hp, cp + l->cp_holder.off, &holder);
	if (!err)
		err = read_u64(hp, holder + l->klass_name.off, &kname);
	if (!err)
		err = read_symbol(hp, kname, klass, sizeof(klass));
	if (!err)
		err = read_u64(hp, cp + l->cp_size + (uint64_t)idx * 8, &sym);
	if (!err)
		err = read_symbol(hp, sym, name, sizeof(name));
	if (err)
		return err;
	/* the JVM's internal form, com/example/Foo: as Java writes it */
	for (c = klass; *c; c++)
		if (*c == '/')
			*c = '.';
	snprintf(out, cap, "%s.%s", klass, name);
	return 0;
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

/* the entry of (@blob, @method, @id), or the empty slot it goes into; NULL: no room */
static struct hs_entry *cache_slot(struct hotspot_proc *hp, uint64_t blob, uint64_t method,
				   int64_t id)
{
	struct hs_entry *e;
	size_t i;

	if (hp->nr >= HS_CACHE_MAX)
		cache_clear(hp);
	if (!hp->cap) {
		hp->cache = calloc(HS_CACHE_MAX * 2, sizeof(*hp->cache));
		if (!hp->cache)
			return NULL;
		hp->cap = HS_CACHE_MAX * 2;
	}
	for (i = slot_of(hp, blob, id);; i = (i + 1) & (hp->cap - 1)) {
		e = &hp->cache[i];
		if (!e->blob || (e->blob == blob && e->method == method && e->compile_id == id))
			return e;
	}
}

/* a blob that is no method: the interpreter, a stub, an adapter, by its own name */
static const char *blob_name(struct hotspot_proc *hp, const uint8_t *hdr)
{
	char name[VMSTRUCTS_NAME_MAX];
	uint64_t at = field_ptr(hdr, &hp->l.blob_name);
	size_t n;

	for (n = 0; n < sizeof(name) - 1; n++)
		if (read_target(hp, at + n, name + n, 1) || !name[n])
			break;
	name[n] = 0;
	if (!n || n == sizeof(name) - 1)
		return NULL;
	if (!strcmp(name, "Interpreter"))
		return "[java interpreted]";
	snprintf(hp->scratch, sizeof(hp->scratch), "[jvm %s]", name);
	return hp->scratch;
}

static bool is_nmethod(struct hotspot_proc *hp, const uint8_t *hdr)
{
	char name[8];

	if (hp->l.blob_kind.size)
		return field_int(hdr, &hp->l.blob_kind) == hp->l.kind_nmethod;
	/* before JDK 23: an nmethod's CodeBlob name is "nmethod" */
	return !read_target(hp, field_ptr(hdr, &hp->l.blob_name), name, sizeof(name)) &&
	       !memcmp(name, "nmethod", 8);
}

const char *hotspot_proc__name(struct hotspot_proc *hp, uint64_t pc, struct hotspot_stats *stats)
{
	const struct hotspot_layout *l = &hp->l;
	const struct hs_heap *h = NULL;
	uint8_t hdr[HS_MAX_HEADER];
	uint64_t blob, method;
	struct hs_entry *e;
	const char *name;
	int64_t size, id;
	unsigned int i;

	if (!hp->nr_heaps && read_heaps(hp))
		return NULL;
	for (i = 0; i < hp->nr_heaps && !h; i++)
		if (pc >= hp->heaps[i].low && pc < hp->heaps[i].high)
			h = &hp->heaps[i];
	if (!h)
		return NULL;
	blob = find_blob(hp, h, pc);
	if (!blob || l->nm_read > sizeof(hdr) || read_target(hp, blob, hdr, l->blob_read))
		goto unnamed;
	size = field_int(hdr, &l->blob_size);
	if (size <= 0 || pc >= blob + (uint64_t)size || blob + (uint64_t)size > h->high)
		goto unnamed;
	if (!is_nmethod(hp, hdr)) {
		name = blob_name(hp, hdr);
		if (!name)
			goto unnamed;
		stats->frames_blob++;
		return name;
	}
	if (read_target(hp, blob, hdr, l->nm_read))
		goto unnamed;
	method = field_ptr(hdr, &l->nm_method);
	id = field_int(hdr, &l->nm_compile_id);
	e = cache_slot(hp, blob, method, id);
	if (e && e->blob) {
		stats->frames_named++;
		return e->name;
	}
	stats->methods_read++;
	if (method_name(hp, method, hp->scratch, sizeof(hp->scratch)))
		goto unnamed;
	stats->frames_named++;
	if (!e)
		return hp->scratch;
	e->name = strdup(hp->scratch);
	if (!e->name)
		return hp->scratch;
	*e = (struct hs_entry){blob, method, id, e->name};
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
