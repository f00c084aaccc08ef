// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elf_plt - "NAME@plt" for the PLT stubs of an x86-64 ELF file.  See
 * elf_plt.h.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/elf_plt.h"
#include "util/ranges.h"

/* a name read for a stub, cut here (a C++ name may be long) */
#define ELF_PLT_MAX_NAME 1024
/* relocations read at once, and at most in one section */
#define ELF_PLT_RELA_WINDOW 256
#define ELF_PLT_MAX_RELOCS  (8u << 20)
/* .dynstr read whole up to this, else through windows */
#define ELF_PLT_MAX_STRINGS (16u << 20)

/* a GOT slot a relocation names: where, and its .dynsym entry */
struct plt_slot {
	uint64_t got;
	uint64_t sym; /* PLT_SYM_IFUNC: an IRELATIVE one, named by its resolver's address */
	uint64_t addend;
};

#define PLT_SYM_IFUNC UINT64_MAX

/* a stub found, before it is named */
struct plt_found {
	uint64_t start, end;
	uint64_t sym, addend; /* its slot's */
	uint64_t name;	      /* offset in the names pool once named */
};

/* one read: the budget, what it charged, and what it gathered */
struct plt_read {
	struct mem_budget *b;
	const struct elf_file *ef;
	struct plt_slot *slots;
	size_t nr_slots, cap_slots;
	struct plt_found *found;
	size_t nr_found, cap_found;
	char *pool;
	size_t pool_len, pool_cap;
};

/* section @idx copied, its bytes charged (give them back with free_section()) */
static int copy_section(struct plt_read *r, size_t idx, void **buf, size_t *len)
{
	uint64_t size;
	int ret;

	*buf = NULL;
	*len = 0;
	ret = elf_file__section_size(r->ef, idx, ELF_PLT_MAX_SECTION, &size);
	if (ret)
		return ret == -E2BIG ? -EFBIG : ret; /* past the cap: not the budget's */
	ret = mem_budget__take(r->b, size);
	if (ret)
		return ret;
	ret = elf_file__section_copy(r->ef, idx, size, buf, len);
	if (ret)
		mem_budget__give(r->b, size);
	return ret;
}

static void free_section(struct plt_read *r, void *buf, size_t len)
{
	free(buf);
	mem_budget__give(r->b, len);
}

static int slot_cmp(const void *a, const void *b)
{
	const struct plt_slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/*
 * The JUMP_SLOT and GLOB_DAT relocations of one SHT_RELA section, read
 * through a window: .rela.dyn of a big library is mostly R_X86_64_RELATIVE
 * entries, megabytes of them, none of which we keep.
 */
static int read_relocs(struct plt_read *r, size_t idx)
{
	const Elf64_Shdr *sh = elf_file__section(r->ef, idx);
	Elf64_Rela win[ELF_PLT_RELA_WINDOW];
	uint64_t n, i, at = 0;
	int ret = 0;

	n = sh->sh_size / sizeof(win[0]);
	if (n > ELF_PLT_MAX_RELOCS)
		return 0;
	while (at < n && !ret) {
		uint64_t k = n - at < ELF_PLT_RELA_WINDOW ? n - at : ELF_PLT_RELA_WINDOW;

		if (elf_file__read(r->ef, sh->sh_offset + at * sizeof(win[0]), win,
				   k * sizeof(win[0])))
			return 0; /* outside the file: the slots read so far stand */
		for (i = 0; i < k && !ret; i++) {
			uint32_t type = ELF64_R_TYPE(win[i].r_info);
			uint64_t sym = ELF64_R_SYM(win[i].r_info);

			/* an IFUNC the dynamic linker resolves by calling the addend */
			if (type == R_X86_64_IRELATIVE && !sym)
				sym = PLT_SYM_IFUNC;
			else if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !sym)
				continue;
			ret = mem_budget__grow(r->b, (void **)&r->slots, &r->cap_slots,
					       r->nr_slots + 1, sizeof(*r->slots), 256);
			if (!ret)
				r->slots[r->nr_slots++] = (struct plt_slot){
					win[i].r_offset, sym, (uint64_t)win[i].r_addend};
		}
		at += k;
	}
	return ret;
}

/* the GOT slot the stub at @p (@len bytes, at address @addr) jumps through */
static bool stub_slot(const uint8_t *p, size_t len, uint64_t addr, uint64_t *got)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t at = 0;
	int32_t disp;

	if (len >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		at += sizeof(endbr64);
	if (at < len && p[at] == 0xf2) /* bnd */
		at++;
	/* jmp *disp32(%rip): ff 25 disp32 */
	if (len - at < 6 || p[at] != 0xff || p[at + 1] != 0x25)
		return false;
	memcpy(&disp, p + at + 2, sizeof(disp));
	*got = addr + at + 6 + (uint64_t)(int64_t)disp; /* wraps as the CPU's does */
	return true;
}

static const struct plt_slot *find_slot(const struct plt_read *r, uint64_t got)
{
	struct plt_slot key = {.got = got};

	return bsearch(&key, r->slots, r->nr_slots, sizeof(key), slot_cmp);
}

/* the stubs of one .plt* section whose slots a relocation names */
static int read_stubs(struct plt_read *r, size_t idx)
{
	const Elf64_Shdr *sh = elf_file__section(r->ef, idx);
	uint64_t ent, off, got;
	const struct plt_slot *s;
	size_t len;
	void *buf;
	int ret;

	if (sh->sh_type != SHT_PROGBITS || !(sh->sh_flags & SHF_EXECINSTR) ||
	    sh->sh_addr > UINT64_MAX - sh->sh_size)
		return 0;
	ret = copy_section(r, idx, &buf, &len);
	if (ret) /* a section we cannot read has no names */
		return ret == -ENOMEM || ret == -E2BIG ? ret : 0;
	ent = sh->sh_entsize == 8 || sh->sh_entsize == 16 ? sh->sh_entsize : 16;
	for (off = 0; off + ent <= len && !ret; off += ent) {
		if (!stub_slot((const uint8_t *)buf + off, ent, sh->sh_addr + off, &got))
			continue;
		s = find_slot(r, got);
		if (!s)
			continue;
		if (r->nr_found >= ELF_PLT_MAX_STUBS)
			break;
		ret = mem_budget__grow(r->b, (void **)&r->found, &r->cap_found, r->nr_found + 1,
				       sizeof(*r->found), 256);
		if (!ret)
			r->found[r->nr_found++] = (struct plt_found){
				sh->sh_addr + off, sh->sh_addr + off + ent, s->sym, s->addend, 0};
	}
	free_section(r, buf, len);
	return ret;
}

static int found_by_sym(const void *a, const void *b)
{
	const struct plt_found *x = a, *y = b;

	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

static int found_by_start(const void *a, const void *b)
{
	const struct plt_found *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Each found stub's name, "NAME@plt", into the pool, in .dynsym order (the
 * table is read through windows).  A stub whose symbol cannot be read is
 * dropped: name offset UINT64_MAX.
 */
static int name_stubs(struct plt_read *r)
{
	char name[ELF_PLT_MAX_NAME];
	struct elf_symtab st;
	uint64_t strs = 0;
	size_t i, len;
	Elf64_Sym sym;
	int ret;

	ret = elf_file__symtab(r->ef, SHT_DYNSYM, &st);
	if (ret)
		return ret == -ENOMEM ? ret : 0;
	if (st.str_size <= ELF_PLT_MAX_STRINGS && !mem_budget__take(r->b, st.str_size)) {
		strs = st.str_size;
		if (elf_symtab__load_strings(&st, strs) == -ENOMEM) {
			ret = -ENOMEM;
			goto out;
		}
	}
	qsort(r->found, r->nr_found, sizeof(*r->found), found_by_sym);
	for (i = 0; i < r->nr_found && !ret; i++) {
		struct plt_found *f = &r->found[i];

		f->name = UINT64_MAX;
		if (f->sym == PLT_SYM_IFUNC) {
			/* as objdump and perf name it */
			len = (size_t)snprintf(name, sizeof(name),
					       "*ABS*+0x%" PRIx64 ELF_PLT_SUFFIX, f->addend) +
			      1;
		} else if (elf_symtab__get(&st, f->sym, &sym) ||
			   elf_symtab__name(&st, sym.st_name, name,
					    sizeof(name) - strlen(ELF_PLT_SUFFIX), &len) ||
			   !len) {
			continue;
		} else {
			memcpy(name + len, ELF_PLT_SUFFIX, sizeof(ELF_PLT_SUFFIX));
			len += sizeof(ELF_PLT_SUFFIX);
		}
		ret = mem_budget__grow(r->b, (void **)&r->pool, &r->pool_cap, r->pool_len + len, 1,
				       4096);
		if (ret)
			break;
		memcpy(r->pool + r->pool_len, name, len);
		f->name = r->pool_len;
		r->pool_len += len;
	}
out:
	elf_symtab__release(&st);
	mem_budget__give(r->b, strs);
	return ret;
}

/* the named stubs, sorted and cut so that none overlaps the next, into @plt */
static int keep_stubs(struct plt_read *r, struct elf_plt *plt)
{
	size_t i, n = 0;
	int ret;

	qsort(r->found, r->nr_found, sizeof(*r->found), found_by_start);
	for (i = 0; i < r->nr_found; i++) {
		struct plt_found f = r->found[i];

		if (f.name == UINT64_MAX || (n && r->found[n - 1].start == f.start))
			continue;
		if (n && r->found[n - 1].end > f.start)
			r->found[n - 1].end = f.start;
		r->found[n++] = f;
	}
	if (!n)
		return 0;
	ret = mem_budget__take(r->b, n * sizeof(*plt->stubs));
	if (ret)
		return ret;
	plt->stubs = calloc(n, sizeof(*plt->stubs));
	if (!plt->stubs) {
		mem_budget__give(r->b, n * sizeof(*plt->stubs));
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		plt->stubs[i] = (struct elf_plt_stub){r->found[i].start, r->found[i].end,
						      r->pool + r->found[i].name};
	plt->nr = n;
	plt->names = r->pool;
	plt->names_len = r->pool_cap;
	r->pool = NULL;
	return 0;
}

/* the scratch arrays freed, their charge given back (the pool's only if not kept) */
static void read_release(struct plt_read *r)
{
	mem_budget__give(r->b, r->cap_slots * sizeof(*r->slots) + r->cap_found * sizeof(*r->found) +
				       (r->pool ? r->pool_cap : 0));
	free(r->slots);
	free(r->found);
	free(r->pool);
}

static bool is_plt_section(const char *name)
{
	return name &&
	       (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got"));
}

int elf_plt__read(const struct elf_file *ef, struct mem_budget *b, struct elf_plt *plt)
{
	struct plt_read r = {.b = b, .ef = ef};
	size_t i, dynsym, nr = elf_file__nr_sections(ef);
	int ret = 0;

	memset(plt, 0, sizeof(*plt));
	dynsym = elf_file__find_section_type(ef, SHT_DYNSYM);
	if (elf_file__ehdr(ef)->e_machine != EM_X86_64 || !dynsym)
		return 0;
	for (i = 1; i < nr && !ret; i++) {
		const Elf64_Shdr *sh = elf_file__section(ef, i);

		if (sh->sh_type == SHT_RELA && sh->sh_link == dynsym)
			ret = read_relocs(&r, i);
	}
	if (!ret && r.nr_slots) {
		qsort(r.slots, r.nr_slots, sizeof(*r.slots), slot_cmp);
		for (i = 1; i < nr && !ret; i++)
			if (is_plt_section(elf_file__section_name(ef, i)))
				ret = read_stubs(&r, i);
	}
	if (!ret && r.nr_found)
		ret = name_stubs(&r);
	if (!ret && r.nr_found)
		ret = keep_stubs(&r, plt);
	read_release(&r);
	return ret; /* on an error, keep_stubs() did not run or kept nothing */
}

void elf_plt__release(struct elf_plt *plt)
{
	free(plt->stubs);
	free(plt->names);
	memset(plt, 0, sizeof(*plt));
}

const struct elf_plt_stub *elf_plt__find(const struct elf_plt *plt, uint64_t vaddr)
{
	return RANGE_FIND(plt->stubs, plt->nr, start, end, vaddr);
}

size_t elf_plt__bytes(const struct elf_plt *plt)
{
	return plt->nr * sizeof(*plt->stubs) + plt->names_len;
}
