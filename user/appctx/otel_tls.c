// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "appctx/otel_tls.h"
#include "elf/elf_file.h"
#include "processes/mapped_file.h"
#include "processes/proc_maps.h"
#include "processes/proc_mem.h"

/* glibc's descriptors for libthread_db: {size in bits, count, offset} */
enum tdb_desc {
	TDB_L_TLS_OFFSET, /* link_map.l_tls_offset */
	TDB_L_TLS_MODID,  /* link_map.l_tls_modid */
	TDB_DTVP,	  /* struct pthread's DTV pointer (the TCB's header.dtv) */
	TDB_DTV_ELEM,	  /* the DTV's entries: element size in bits */
	TDB_DTV_VAL,	  /* dtv_t.pointer.val */
	TDB_MAX,
};

static const char *const tdb_names[TDB_MAX] = {
	[TDB_L_TLS_OFFSET] = "_thread_db_link_map_l_tls_offset",
	[TDB_L_TLS_MODID] = "_thread_db_link_map_l_tls_modid",
	[TDB_DTVP] = "_thread_db_pthread_dtvp",
	[TDB_DTV_ELEM] = "_thread_db_dtv_dtv",
	[TDB_DTV_VAL] = "_thread_db_dtv_t_pointer_val",
};

/* what one mapped ELF file tells */
struct tls_file {
	const struct proc_map *first; /* its lowest mapping */
	uint64_t bias;		      /* load bias: runtime address - ELF vaddr */
	bool has_sym;
	uint64_t sym_value; /* otel_thread_ctx_v1's offset in the module's TLS block */
	bool has_tls;
	uint64_t tls_memsz, tls_align, tls_vaddr;
	bool has_dyn;
	uint64_t dyn_vaddr;
	bool has_r_debug;
	uint64_t r_debug; /* vaddr of _r_debug */
	bool has_tdb[TDB_MAX];
	uint32_t tdb[TDB_MAX][3];
};

uint64_t otel_tls__static_offset(uint64_t memsz, uint64_t align, uint64_t vaddr)
{
	uint64_t firstbyte;

	if (align < 2)
		return memsz;
	/* glibc's _dl_determine_tlsoffset for the first block, TLS_TCB_AT_TP */
	firstbyte = (-(vaddr & (align - 1))) & (align - 1);
	return (memsz - firstbyte + align - 1) / align * align + firstbyte;
}

uint64_t otel_tls__static_offset_above(uint64_t align, uint64_t vaddr)
{
	uint64_t firstbyte, off;

	if (align < 2)
		return 16;
	/* glibc's _dl_determine_tlsoffset for the first block, TLS_DTV_AT_TP:
	 * the blocks start right after the TCB (TLS_TCB_SIZE 16 on aarch64) */
	firstbyte = (-(vaddr & (align - 1))) & (align - 1);
	off = (16 + align - 1) / align * align;
	if (off - 16 < firstbyte)
		off += align;
	return off - firstbyte;
}

int64_t otel_tls__tp_offset(uint64_t sym, uint64_t off)
{
#if defined(__aarch64__)
	return (int64_t)sym + (int64_t)off;
#else
	return (int64_t)sym - (int64_t)off;
#endif
}

/* the static TLS offset of the executable's block, as this architecture places it */
static uint64_t exe_static_offset(const struct tls_file *f)
{
#if defined(__aarch64__)
	return otel_tls__static_offset_above(f->tls_align, f->tls_vaddr);
#else
	return otel_tls__static_offset(f->tls_memsz, f->tls_align, f->tls_vaddr);
#endif
}

/* the longest .dynstr looked through (libLLVM-15's is 2.6 MiB) */
#define DYNSTR_MAX (16u << 20)

static void read_tdb(struct tls_file *f, const struct elf_file *ef, enum tdb_desc d, uint64_t value)
{
	const struct elf_load *loads;
	uint64_t off;
	size_t n;

	loads = elf_file__loads(ef, &n);
	if (elf_loads__vaddr_to_offset(loads, n, value, sizeof(f->tdb[d]), &off) ||
	    elf_file__read(ef, off, f->tdb[d], sizeof(f->tdb[d])))
		return;
	f->has_tdb[d] = true;
}

/* the symbols we want from .dynsym */
static void scan_dynsym(struct tls_file *f, const struct elf_file *ef)
{
	struct elf_symtab st;
	char name[64]; /* longer than any name looked for: a longer one is cut, and differs */
	Elf64_Sym sym;
	size_t i;
	int d;

	if (elf_file__symtab(ef, SHT_DYNSYM, &st))
		return;
	if (elf_symtab__load_strings(&st, DYNSTR_MAX))
		goto out;
	for (i = 0; i < st.nr && !elf_symtab__get(&st, i, &sym); i++) {
		if (sym.st_shndx == SHN_UNDEF || !sym.st_name ||
		    elf_symtab__name(&st, sym.st_name, name, sizeof(name), NULL))
			continue;
		if (ELF64_ST_TYPE(sym.st_info) == STT_TLS &&
		    !strcmp(name, OTEL_THREAD_CTX_SYMBOL)) {
			f->has_sym = true;
			f->sym_value = sym.st_value;
		} else if (!strcmp(name, "_r_debug")) {
			f->has_r_debug = true;
			f->r_debug = sym.st_value;
		} else if (!strncmp(name, "_thread_db_", 11)) {
			for (d = 0; d < TDB_MAX; d++)
				if (!strcmp(name, tdb_names[d]))
					read_tdb(f, ef, d, sym.st_value);
		}
	}
out:
	elf_symtab__release(&st);
}

/* read the headers and symbols of @f's ELF file, opened as @fd */
static int read_file(struct tls_file *f, int fd)
{
	const struct elf_load *loads, *first;
	struct elf_file *ef;
	size_t nr_loads, i;

	/* a mapped data file (a locale archive, a font) is no ELF: not read further */
	ef = elf_file__open_fd(fd);
	if (!ef)
		return -EINVAL;
	if (elf_file__ehdr(ef)->e_machine != ELF_NATIVE_MACHINE) {
		elf_file__free(ef);
		return -EINVAL;
	}
	for (i = 0; i < elf_file__nr_segments(ef); i++) {
		const Elf64_Phdr *ph = elf_file__segment(ef, i);

		if (ph->p_type == PT_TLS) {
			f->has_tls = true;
			f->tls_memsz = ph->p_memsz;
			f->tls_align = ph->p_align;
			f->tls_vaddr = ph->p_vaddr;
		} else if (ph->p_type == PT_DYNAMIC) {
			f->has_dyn = true;
			f->dyn_vaddr = ph->p_vaddr;
		}
	}
	/* the load bias, from the segment the file's lowest mapping maps */
	loads = elf_file__loads(ef, &nr_loads);
	first = elf_loads__for_mapping(loads, nr_loads, f->first->pgoff);
	if (first)
		f->bias = f->first->start - f->first->pgoff + first->offset - first->vaddr;
	else
		f->has_dyn = false; /* no bias: its link_map entry cannot be matched */
	scan_dynsym(f, ef);
	elf_file__free(ef);
	return 0;
}

static bool tdb_ok(const struct tls_file *libc, enum tdb_desc d, uint32_t bits)
{
	return libc->has_tdb[d] && libc->tdb[d][0] == bits && libc->tdb[d][2] < 65536;
}

struct locate {
	pid_t pid;
	const struct proc_maps *maps;
	struct proc_mem *mem;
	struct tls_file *files;
	size_t nr;
	const struct tls_file *exe, *libc, *ld;
};

static int read_u64(struct locate *l, uint64_t addr, uint64_t *v)
{
	return proc_mem__read(l->mem, l->maps, addr, v, sizeof(*v));
}

/* a library's variable, through the loader's link_map list */
static enum otel_tls_status locate_in_library(struct locate *l, struct otel_tls_ref *ref,
					      const char **why)
{
	const struct tls_file *libc = l->libc, *lib;
	uint64_t lm, l_ld, off, modid, elem;
	size_t i, n;

	if (!libc || !l->ld || !tdb_ok(libc, TDB_L_TLS_OFFSET, 64) ||
	    !tdb_ok(libc, TDB_L_TLS_MODID, 64)) {
		*why = "a library's TLS without glibc's loader descriptors";
		return OTEL_TLS_UNSUPPORTED;
	}
	/* r_debug.r_map, after the int r_version */
	if (read_u64(l, l->ld->bias + l->ld->r_debug + 8, &lm)) {
		*why = "_r_debug unreadable";
		return OTEL_TLS_UNREADABLE;
	}
	/* link_map order is load order: the first definition is the one bound */
	for (n = 0; lm && n < OTEL_TLS_MAX_LINK_MAPS; n++) {
		if (read_u64(l, lm + 16, &l_ld))
			break;
		for (i = 0, lib = NULL; i < l->nr && !lib; i++)
			if (l->files[i].has_sym && l->files[i].has_dyn && &l->files[i] != l->exe &&
			    l->files[i].bias + l->files[i].dyn_vaddr == l_ld)
				lib = &l->files[i];
		if (lib) {
			if (read_u64(l, lm + libc->tdb[TDB_L_TLS_OFFSET][2], &off) ||
			    read_u64(l, lm + libc->tdb[TDB_L_TLS_MODID][2], &modid)) {
				*why = "link_map unreadable";
				return OTEL_TLS_UNREADABLE;
			}
			/* glibc's NO_TLS_OFFSET (0) and FORCED_DYNAMIC_TLS_OFFSET (-1) */
			if (off && off != UINT64_MAX && off < (1ull << 32)) {
				ref->mode = OTEL_TLS_STATIC;
				ref->offset = otel_tls__tp_offset(lib->sym_value, off);
				return OTEL_TLS_FOUND;
			}
			elem = libc->has_tdb[TDB_DTV_ELEM] ? libc->tdb[TDB_DTV_ELEM][0] / 8 : 0;
			if (!tdb_ok(libc, TDB_DTVP, 64) || !tdb_ok(libc, TDB_DTV_VAL, 64) ||
			    elem < 8 || elem > 64 || !modid || modid >= 65536) {
				*why = "dynamic TLS without glibc's DTV descriptors";
				return OTEL_TLS_UNSUPPORTED;
			}
			ref->mode = OTEL_TLS_DTV;
			ref->offset = (int64_t)lib->sym_value;
			ref->dtv_ptr = libc->tdb[TDB_DTVP][2];
			ref->dtv_slot = modid * elem + libc->tdb[TDB_DTV_VAL][2];
			return OTEL_TLS_FOUND;
		}
		if (read_u64(l, lm + 24, &lm))
			break;
	}
	*why = "no link_map entry for the library";
	return OTEL_TLS_UNREADABLE;
}

enum otel_tls_status otel_tls__locate(pid_t pid, const struct proc_maps *maps, struct proc_mem *mem,
				      struct otel_tls_ref *ref, const char **why)
{
	struct locate l = {.pid = pid, .maps = maps, .mem = mem};
	enum otel_tls_status ret = OTEL_TLS_NO_SYMBOL;
	const struct proc_map *pm;
	uint64_t phdr = mapped_file__exe_phdr(pid);
	bool any_sym = false, unreadable = false;
	int root_fd = -1, fd;
	size_t i, j;

	memset(ref, 0, sizeof(*ref));
	*why = "no mapped file exports " OTEL_THREAD_CTX_SYMBOL;
	l.files = calloc(OTEL_TLS_MAX_FILES, sizeof(*l.files));
	if (!l.files) {
		*why = "out of memory";
		return OTEL_TLS_UNREADABLE;
	}
	for (i = 0; i < maps->nr && l.nr < OTEL_TLS_MAX_FILES; i++) {
		pm = &maps->maps[i];
		if (pm->path[0] != '/' || !pm->inode)
			continue;
		for (j = 0; j < l.nr && !mapped_file__same(l.files[j].first, pm); j++)
			;
		if (j < l.nr)
			continue;
		l.files[l.nr].first = pm;
		fd = mapped_file__open(pid, pm, &root_fd);
		if (fd < 0) {
			unreadable = true;
		} else {
			read_file(&l.files[l.nr], fd);
			close(fd);
		}
		l.nr++;
	}
	if (root_fd >= 0)
		close(root_fd);
	for (i = 0; i < l.nr; i++) {
		const struct tls_file *f = &l.files[i];

		any_sym |= f->has_sym;
		if (f->has_r_debug && !l.ld)
			l.ld = f;
		if (f->has_tdb[TDB_L_TLS_OFFSET] && !l.libc)
			l.libc = f;
		/* the executable: the file whose mappings hold the program headers */
		for (j = 0; j < maps->nr && phdr && !l.exe; j++)
			if (phdr >= maps->maps[j].start && phdr < maps->maps[j].end &&
			    mapped_file__same(&maps->maps[j], f->first))
				l.exe = f;
	}
	if (l.exe && l.exe->has_sym) {
		if (!l.exe->has_tls) {
			*why = "the executable exports the variable but has no PT_TLS";
			ret = OTEL_TLS_UNSUPPORTED;
			goto out;
		}
		ref->mode = OTEL_TLS_STATIC;
		ref->offset = otel_tls__tp_offset(l.exe->sym_value, exe_static_offset(l.exe));
		ret = OTEL_TLS_FOUND;
	} else if (any_sym) {
		ret = locate_in_library(&l, ref, why);
	} else if (unreadable) {
		*why = "some mapped files were unreadable";
		ret = OTEL_TLS_UNREADABLE;
	}
out:
	free(l.files);
	return ret;
}
