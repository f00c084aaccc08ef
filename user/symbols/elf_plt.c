// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elf_plt - "NAME@plt" for the PLT stubs of an x86-64 or AArch64 ELF file.  See
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

struct plt_machine;

/* one read: the budget, what it charged, and what it gathered */
struct plt_read {
	struct mem_budget *b;
	const struct elf_file *ef;
	const struct plt_machine *m;
	struct plt_slot *slots;
	size_t nr_slots, cap_slots;
	struct plt_found *found;
	size_t nr_found, cap_found;
	char *pool;
	size_t pool_len, pool_cap;
};

/* what differs by machine: the relocation types that name a slot, the stubs' code */
struct plt_machine {
	uint32_t jump_slot, glob_dat, irelative;
	/* adds each stub of a section's bytes @p at @addr that jumps through a named slot */
	int (*scan)(struct plt_read *r, const uint8_t *p, size_t len, uint64_t addr,
		    uint64_t entsize);
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
 * through a window: .rela.dyn of a big library is mostly RELATIVE entries,
 * megabytes of them, none of which we keep.
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
			if (type == r->m->irelative && !sym)
				sym = PLT_SYM_IFUNC;
			else if ((type != r->m->jump_slot && type != r->m->glob_dat) || !sym)
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

static const struct plt_slot *find_slot(const struct plt_read *r, uint64_t got)
{
	struct plt_slot key = {.got = got};

	return bsearch(&key, r->slots, r->nr_slots, sizeof(key), slot_cmp);
}

/* the stub [@start, @end) jumps through @got: kept if a relocation names that slot */
static int add_stub(struct plt_read *r, uint64_t start, uint64_t end, uint64_t got)
{
	const struct plt_slot *s = find_slot(r, got);
	int ret;

	if (!s || r->nr_found >= ELF_PLT_MAX_STUBS)
		return 0;
	ret = mem_budget__grow(r->b, (void **)&r->found, &r->cap_found, r->nr_found + 1,
			       sizeof(*r->found), 256);
	if (!ret)
		r->found[r->nr_found++] = (struct plt_found){start, end, s->sym, s->addend, 0};
	return ret;
}

/* the GOT slot the x86-64 stub at @p (@len bytes, at address @addr) jumps through */
static bool x86_stub_slot(const uint8_t *p, size_t len, uint64_t addr, uint64_t *got)
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

/* x86-64: entries of sh_entsize (8 or 16) bytes, each decoded as one stub */
static int x86_scan(struct plt_read *r, const uint8_t *p, size_t len, uint64_t addr,
		    uint64_t entsize)
{
	uint64_t ent = entsize == 8 || entsize == 16 ? entsize : 16, off, got;
	int ret = 0;

	for (off = 0; off + ent <= len && !ret; off += ent)
		if (x86_stub_slot(p + off, ent, addr + off, &got))
			ret = add_stub(r, addr + off, addr + off + ent, got);
	return ret;
}

#define A64_BTI_C 0xd503245fu
/* adrp x16, PAGE; ldr x17, [x16, #OFF] (the stub's first two loads of its slot) */
#define A64_IS_ADRP_X16(i)    (((i)&0x9f00001fu) == 0x90000010u)
#define A64_IS_LDR_X17_X16(i) (((i)&0xffc003ffu) == 0xf9400211u)
#define A64_STUB_MAX	      24 /* bti c, adrp, ldr, add, autia1716, br at most */

static uint32_t a64_insn(const uint8_t *p)
{
	uint32_t i;

	memcpy(&i, p, sizeof(i));
	return i; /* AArch64 code is little-endian whatever the data's order */
}

/*
 * AArch64: a stub is `adrp x16, PAGE(slot); ldr x17, [x16, #OFF(slot)];
 * add x16, x16, #OFF; br x17` (16 bytes), after a `bti c` in BTI PLTs, with
 * an authenticating instruction before the br in PAC ones (24 bytes).  The
 * pair adrp/ldr is searched for at every instruction, so entry sizes need
 * not be known; a stub ends where the next begins, 24 bytes at most.
 * PLT0 loads a slot too (the resolver's), which no relocation names.
 */
static int a64_scan(struct plt_read *r, const uint8_t *p, size_t len, uint64_t addr,
		    uint64_t entsize)
{
	uint64_t off, start, got, page, imm;
	size_t first = r->nr_found, i;
	uint32_t adrp, ldr;
	int ret = 0;

	for (off = 0; off + 8 <= len && !ret; off += 4) {
		adrp = a64_insn(p + off);
		ldr = a64_insn(p + off + 4);
		if (!A64_IS_ADRP_X16(adrp) || !A64_IS_LDR_X17_X16(ldr))
			continue;
		/* immhi:immlo, a signed count of 4 KiB pages from the adrp's own page */
		imm = ((uint64_t)((adrp >> 5) & 0x7ffff) << 2) | ((adrp >> 29) & 3);
		if (imm & (1u << 20))
			imm |= ~(uint64_t)0x1fffff;
		page = ((addr + off) & ~(uint64_t)0xfff) + (imm << 12);
		got = page + (uint64_t)((ldr >> 10) & 0xfff) * 8;
		start = addr + off;
		if (off >= 4 && a64_insn(p + off - 4) == A64_BTI_C)
			start -= 4;
		/* the stub before, named or not, ends where this one begins */
		if (r->nr_found > first && r->found[r->nr_found - 1].end > start)
			r->found[r->nr_found - 1].end = start;
		ret = add_stub(r, start, start + A64_STUB_MAX, got);
	}
	for (i = first; i < r->nr_found; i++)
		if (r->found[i].end > addr + len)
			r->found[i].end = addr + len;
	return ret;
}

static const struct plt_machine plt_x86_64 = {R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT,
					      R_X86_64_IRELATIVE, x86_scan};
static const struct plt_machine plt_aarch64 = {R_AARCH64_JUMP_SLOT, R_AARCH64_GLOB_DAT,
					       R_AARCH64_IRELATIVE, a64_scan};

/* the stubs of one .plt* section whose slots a relocation names */
static int read_stubs(struct plt_read *r, size_t idx)
{
	const Elf64_Shdr *sh = elf_file__section(r->ef, idx);
	size_t len;
	void *buf;
	int ret;

	if (sh->sh_type != SHT_PROGBITS || !(sh->sh_flags & SHF_EXECINSTR) ||
	    sh->sh_addr > UINT64_MAX - sh->sh_size)
		return 0;
	ret = copy_section(r, idx, &buf, &len);
	if (ret) /* a section we cannot read has no names */
		return ret == -ENOMEM || ret == -E2BIG ? ret : 0;
	ret = r->m->scan(r, buf, len, sh->sh_addr, sh->sh_entsize);
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
	switch (elf_file__ehdr(ef)->e_machine) {
	case EM_X86_64:
		r.m = &plt_x86_64;
		break;
	case EM_AARCH64:
		r.m = &plt_aarch64;
		break;
	default:
		return 0;
	}
	if (!dynsym)
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
