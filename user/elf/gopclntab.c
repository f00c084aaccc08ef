// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gopclntab - Go's function table, read from a private copy of the section.
 *
 * The section, Go 1.16 on (offsets from its start):
 *   header   magic, 0, 0, pc quantum, pointer size, then words: nfunc,
 *            nfiles, [textStart: 1.18 on,] and the offsets of funcnametab,
 *            cutab, filetab, pctab and pclntab
 *   functab  at pclntab: nfunc (entry, record offset) pairs and the end pc;
 *            entries are absolute words (1.16) or 32-bit offsets from
 *            textStart (1.18); a record offset is from pclntab
 *   _func    a function's record: its entry, name offset (funcnametab), its
 *            pc-value tables (offsets into pctab), its compilation unit
 *            (cutab), funcID, flag, then npcdata 32-bit pctab offsets and
 *            nfuncdata funcdata (words: absolute addresses, 1.16; 32-bit
 *            offsets from the module's go.func.* blob, 1.18)
 *   pctab    pc-value tables: (value delta, zig-zag varint; pc delta,
 *            varint, in quanta) pairs from value -1 at the entry; a 0 byte
 *            in value position ends a table (but the first)
 *   cutab    32-bit offsets into filetab, per compilation unit
 *   filetab, funcnametab: NUL-terminated strings
 * Nothing read here is trusted: every offset is checked against the copy.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "elf/gopclntab.h"

#define MAGIC_GO116 0xfffffffau
#define MAGIC_GO118 0xfffffff0u
#define MAGIC_GO120 0xfffffff1u

#define FUNCDATA_INLTREE 3
#define PCDATA_INLTREE	 2
#define NO_FUNCDATA	 0xffffffffu

/* moduledata: where its words are (pointers, slices as 3 words) */
#define MODULEDATA_TEXT	       22	   /* moduledata.text */
#define MODULEDATA_WORDS       44	   /* read of it: up to 1.27's gofunc */
#define MODULEDATA_SCAN_MAX    (64u << 20) /* bytes of data searched for it */
#define MODULEDATA_SCAN_WINDOW (64u << 10)
#define RELRO_WINDOW	       (64u << 10) /* bytes of .data.rel.ro read at once */
#define RELRO_CANDIDATES       8	   /* headers tried there at most */

/* an inlining tree copied: its function's record offset, where its entries are */
struct inl_tree {
	uint32_t func_off;
	uint32_t first; /* index of its first entry in g->inl */
	uint32_t count;
};

/* one entry of an inlining tree, in either layout */
struct inl_call {
	int32_t name_off;  /* into funcnametab */
	int32_t parent_pc; /* offset from the function's entry of a pc at the call site */
};

struct gopclntab {
	uint8_t *data; /* the section's copy */
	size_t size;
	uint64_t vaddr; /* the section's address */
	enum gopclntab_version version;
	uint32_t quantum;
	uint64_t text_start; /* what 1.18 entry offsets are relative to */
	uint64_t nfunc;
	uint64_t funcnametab, cutab, filetab, pctab, pclntab;
	uint32_t field;	   /* bytes of a functab field: 8 (1.16), 4 */
	uint32_t rec_u32;  /* offset in a record of its first 32-bit field (nameoff) */
	uint32_t rec_size; /* bytes of a record before its pcdata */
	/* inlining trees (gopclntab__open_inline()) */
	struct inl_tree *trees; /* sorted by func_off */
	size_t nr_trees;
	struct inl_call *inl;
	size_t nr_inl;
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* @len bytes at @off lie inside the copy */
static bool in_copy(const struct gopclntab *g, uint64_t off, uint64_t len)
{
	return off <= g->size && len <= g->size - off;
}

/* the NUL-terminated string at @off, at most GOPCLNTAB_MAX_NAME bytes; NULL otherwise */
static const char *string_at(const struct gopclntab *g, uint64_t off)
{
	size_t n;
	const char *s;

	if (off >= g->size)
		return NULL;
	n = g->size - off < GOPCLNTAB_MAX_NAME + 1 ? g->size - off : GOPCLNTAB_MAX_NAME + 1;
	s = (const char *)g->data + off;
	if (!memchr(s, '\0', n) || !*s)
		return NULL;
	return s;
}

/* Go's runtime takes offset 0 for no name, yet the first function's is there */
static const char *name_at(const struct gopclntab *g, int32_t name_off)
{
	if (name_off < 0)
		return NULL;
	return string_at(g, g->funcnametab + (uint64_t)name_off);
}

/* functab field @i (entries and record offsets alternate, then the end pc) */
static uint64_t functab_field(const struct gopclntab *g, uint64_t i)
{
	const uint8_t *p = g->data + g->pclntab + i * g->field;

	return g->field == 8 ? rd64(p) : rd32(p);
}

static uint64_t functab_pc(const struct gopclntab *g, uint64_t i)
{
	uint64_t v = functab_field(g, 2 * i);

	return g->field == 8 ? v : g->text_start + v;
}

/* the header: version, counts and table offsets, each inside the copy */
static int read_header(struct gopclntab *g, uint64_t text_addr)
{
	const uint8_t *d = g->data;
	uint64_t words[8], offs[5];
	uint32_t magic, nwords;
	int i;

	if (g->size < 8)
		return -EINVAL;
	magic = rd32(d);
	switch (magic) {
	case MAGIC_GO116:
		g->version = GOPCLNTAB_GO116;
		break;
	case MAGIC_GO118:
		g->version = GOPCLNTAB_GO118;
		break;
	case MAGIC_GO120:
		g->version = GOPCLNTAB_GO120;
		break;
	default:
		return -ENOTSUP;
	}
	if (d[4] || d[5] || (d[6] != 1 && d[6] != 2 && d[6] != 4))
		return -EINVAL;
	if (d[7] != 8)
		return -ENOTSUP;
	g->quantum = d[6];
	nwords = g->version == GOPCLNTAB_GO116 ? 7 : 8;
	if (!in_copy(g, 8, nwords * 8ull))
		return -EINVAL;
	for (i = 0; i < (int)nwords; i++)
		words[i] = rd64(d + 8 + 8 * (size_t)i);
	g->nfunc = words[0];
	if (g->version == GOPCLNTAB_GO116) {
		memcpy(offs, &words[2], sizeof(offs));
		g->field = 8;
		g->rec_u32 = 8;
		g->rec_size = 44;
	} else {
		/* a position-independent file may leave it to a relocation: .text then */
		g->text_start = words[2] ? words[2] : text_addr;
		memcpy(offs, &words[3], sizeof(offs));
		g->field = 4;
		g->rec_u32 = 4;
		g->rec_size = g->version == GOPCLNTAB_GO118 ? 40 : 44;
	}
	for (i = 0; i < 5; i++)
		if (offs[i] >= g->size)
			return -EINVAL;
	g->funcnametab = offs[0];
	g->cutab = offs[1];
	g->filetab = offs[2];
	g->pctab = offs[3];
	g->pclntab = offs[4];
	if (!g->nfunc)
		return -EINVAL;
	if (g->nfunc > GOPCLNTAB_MAX_FUNCS)
		return -E2BIG;
	if (!in_copy(g, g->pclntab, (2 * g->nfunc + 1) * g->field))
		return -EINVAL;
	return 0;
}

/* the function table: sorted, every record inside the copy */
static int check_functab(const struct gopclntab *g)
{
	uint64_t i, prev = 0, pc, rec;

	for (i = 0; i <= g->nfunc; i++) {
		pc = functab_pc(g, i);
		if (g->field == 4 && pc < g->text_start)
			return -EINVAL; /* text_start + offset wrapped */
		if (i && pc < prev)
			return -EINVAL;
		prev = pc;
		if (i == g->nfunc)
			break;
		rec = functab_field(g, 2 * i + 1);
		if (!in_copy(g, g->pclntab, rec) || !in_copy(g, g->pclntab + rec, g->rec_size))
			return -EINVAL;
	}
	return 0;
}

static uint64_t section_vaddr(const struct elf_file *ef, const char *name)
{
	const Elf64_Shdr *sh = elf_file__section(ef, elf_file__find_section(ef, name));

	return sh ? sh->sh_addr : 0;
}

/* a header's first 8 bytes: a magic this file reads, 0, 0, a quantum, 8-byte pointers */
static bool looks_like_header(const uint8_t *p)
{
	uint32_t magic = rd32(p);

	return (magic == MAGIC_GO116 || magic == MAGIC_GO118 || magic == MAGIC_GO120) && !p[4] &&
	       !p[5] && (p[6] == 1 || p[6] == 2 || p[6] == 4) && p[7] == 8;
}

/* read the table from the copy @g holds: 0, or -errno with the copy freed */
static int settle(struct gopclntab *g, uint64_t text_addr)
{
	int err = read_header(g, text_addr);

	if (!err)
		err = check_functab(g);
	if (err) {
		free(g->data);
		g->data = NULL;
	}
	return err;
}

/*
 * An externally linked position-independent file (cgo, -buildmode=pie) has
 * no .gopclntab: its linker merged the table into .data.rel.ro.  Its header
 * is found there, 8-aligned; the copy runs to the section's end.  A few
 * candidates at most are copied: a hostile file may hold many magics.  Only
 * for a Go program (a .go.buildinfo or .note.go.buildid section).
 */
static int find_in_relro(struct gopclntab *g, const struct elf_file *ef, size_t max_bytes,
			 uint64_t text_addr)
{
	const Elf64_Shdr *sh = elf_file__section(ef, elf_file__find_section(ef, ".data.rel.ro"));
	uint64_t pos, n, j, len, tried = 0;
	uint8_t *win;
	int err = -ENOENT;

	if (!sh || sh->sh_size < 8 || sh->sh_offset % 8 || sh->sh_offset > elf_file__size(ef) ||
	    sh->sh_size > elf_file__size(ef) - sh->sh_offset)
		return -ENOENT;
	win = malloc(RELRO_WINDOW);
	if (!win)
		return -ENOMEM;
	for (pos = 0; pos + 8 <= sh->sh_size && tried < RELRO_CANDIDATES; pos += n) {
		n = sh->sh_size - pos < RELRO_WINDOW ? (sh->sh_size - pos) & ~7ull : RELRO_WINDOW;
		if (elf_file__read(ef, sh->sh_offset + pos, win, n))
			break;
		for (j = 0; j + 8 <= n && tried < RELRO_CANDIDATES; j += 8) {
			if (!looks_like_header(win + j))
				continue;
			tried++;
			len = sh->sh_size - pos - j < max_bytes ? sh->sh_size - pos - j : max_bytes;
			g->data = malloc(len);
			if (!g->data) {
				err = -ENOMEM;
				goto out;
			}
			g->size = len;
			g->vaddr = sh->sh_addr + pos + j;
			err = elf_file__read(ef, sh->sh_offset + pos + j, g->data, len);
			if (!err)
				err = settle(g, text_addr);
			else {
				free(g->data);
				g->data = NULL;
			}
			if (!err || err == -ENOMEM)
				goto out;
		}
	}
	err = err == -ENOENT ? -ENOENT : -EINVAL;
out:
	free(win);
	return err;
}

struct gopclntab *gopclntab__open(const struct elf_file *ef, size_t max_bytes)
{
	uint64_t text_addr = section_vaddr(ef, ".text");
	struct gopclntab *g;
	size_t idx;
	void *copy;
	int err;

	if (elf_file__ehdr(ef)->e_ident[EI_DATA] != ELFDATA2LSB) {
		errno = ENOTSUP;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	idx = elf_file__find_section(ef, ".gopclntab");
	/* where Go's own linker puts it in a position-independent file */
	if (!idx)
		idx = elf_file__find_section(ef, ".data.rel.ro.gopclntab");
	/* only a Go program's .data.rel.ro is searched: any other file costs nothing */
	if (!idx && !elf_file__find_section(ef, ".go.buildinfo") &&
	    !elf_file__find_section(ef, ".note.go.buildid")) {
		err = -ENOENT;
		goto err_free;
	}
	if (!idx) {
		err = find_in_relro(g, ef, max_bytes, text_addr);
		if (err)
			goto err_free;
		return g;
	}
	err = elf_file__section_copy(ef, idx, max_bytes, &copy, &g->size);
	if (err)
		goto err_free;
	g->data = copy;
	g->vaddr = elf_file__section(ef, idx)->sh_addr;
	err = settle(g, text_addr);
	if (err)
		goto err_free;
	return g;

err_free:
	gopclntab__free(g);
	errno = -err;
	return NULL;
}

void gopclntab__free(struct gopclntab *g)
{
	if (!g)
		return;
	free(g->data);
	free(g->trees);
	free(g->inl);
	free(g);
}

enum gopclntab_version gopclntab__version(const struct gopclntab *g)
{
	return g->version;
}

size_t gopclntab__nr_funcs(const struct gopclntab *g)
{
	return g->nfunc;
}

size_t gopclntab__bytes(const struct gopclntab *g)
{
	return sizeof(*g) + g->size + g->nr_trees * sizeof(*g->trees) + g->nr_inl * sizeof(*g->inl);
}

bool gopclntab__owns(const struct gopclntab *g, const void *p)
{
	uintptr_t a = (uintptr_t)p, base = (uintptr_t)g->data;

	return a >= base && a - base < g->size;
}

bool gopclntab__has_inline(const struct gopclntab *g)
{
	return g->nr_trees > 0;
}

int gopclntab__func(const struct gopclntab *g, size_t idx, struct gopclntab_func *f)
{
	const uint8_t *r;
	uint64_t rec;

	if (idx >= g->nfunc)
		return -ENOENT;
	/* checked at open: the record is inside the copy */
	rec = g->pclntab + functab_field(g, 2 * idx + 1);
	r = g->data + rec + g->rec_u32;
	memset(f, 0, sizeof(*f));
	f->entry = functab_pc(g, idx);
	f->end = functab_pc(g, idx + 1);
	f->idx = (uint32_t)idx;
	f->off = (uint32_t)rec;
	f->name = name_at(g, (int32_t)rd32(r));
	f->pcsp = rd32(r + 12);
	f->pcfile = rd32(r + 16);
	f->pcln = rd32(r + 20);
	f->npcdata = rd32(r + 24);
	f->cu_offset = rd32(r + 28);
	r = g->data + rec + g->rec_size - 4;
	f->func_id = r[0];
	f->flag = g->version == GOPCLNTAB_GO116 && !r[1] ? 0 : r[1];
	f->nfuncdata = r[3];
	return 0;
}

int gopclntab__find(const struct gopclntab *g, uint64_t vaddr, struct gopclntab_func *f)
{
	uint64_t lo = 0, hi = g->nfunc, mid;

	/* the last function whose entry is at or below @vaddr */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (functab_pc(g, mid) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= functab_pc(g, lo))
		return -ENOENT;
	return gopclntab__func(g, lo - 1, f);
}

/* the pctab offset of @f's pcdata table @i; 0 when it has none */
static uint32_t pcdata_off(const struct gopclntab *g, const struct gopclntab_func *f, uint32_t i)
{
	uint64_t at = (uint64_t)f->off + g->rec_size + 4ull * i;

	if (i >= f->npcdata || !in_copy(g, at, 4))
		return 0;
	return rd32(g->data + at);
}

int gopclntab__pcvalue(const struct gopclntab *g, const struct gopclntab_func *f,
		       enum gopclntab_pctab which, struct gopclntab_pcvalue *it)
{
	uint64_t quanta = (f->end - f->entry) / g->quantum + 1;
	uint32_t off;

	switch (which) {
	case GOPCLNTAB_PCSP:
		off = f->pcsp;
		break;
	case GOPCLNTAB_PCFILE:
		off = f->pcfile;
		break;
	case GOPCLNTAB_PCLN:
		off = f->pcln;
		break;
	case GOPCLNTAB_PCINLINE:
		off = pcdata_off(g, f, PCDATA_INLTREE);
		break;
	default:
		return -EINVAL;
	}
	if (!off)
		return -ENOENT;
	if (!in_copy(g, g->pctab + off, 1))
		return -EINVAL;
	*it = (struct gopclntab_pcvalue){
		.max_steps = quanta < GOPCLNTAB_MAX_STEPS ? (uint32_t)quanta : GOPCLNTAB_MAX_STEPS,
		.p = g->data + g->pctab + off,
		.end = g->data + g->size,
		.pc = f->entry,
		.func_end = f->end,
		.quantum = g->quantum,
		.val = -1,
		.first = true,
	};
	return 0;
}

/* an unsigned varint of at most 32 bits; false past the table or 5 bytes */
static bool read_uvarint(struct gopclntab_pcvalue *it, uint32_t *v)
{
	uint32_t shift = 0, out = 0;
	uint8_t b;

	do {
		if (it->p >= it->end || shift > 28)
			return false;
		b = *it->p++;
		out |= (uint32_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*v = out;
	return true;
}

int gopclntab_pcvalue__next(struct gopclntab_pcvalue *it, uint64_t *lo, uint64_t *hi, int32_t *val)
{
	uint32_t uv, pcdelta;
	uint64_t step, span;

	if (it->done)
		return 0;
	if (it->p >= it->end)
		return -EINVAL;
	if (!*it->p && !it->first) {
		it->done = true;
		return 0;
	}
	/* every entry covers a quantum at least, but hostile ones may cover none */
	if (++it->steps > it->max_steps)
		return -EINVAL;
	if (!read_uvarint(it, &uv) || !read_uvarint(it, &pcdelta))
		return -EINVAL;
	it->first = false;
	it->val += (int32_t)((uv >> 1) ^ -(uv & 1));
	step = (uint64_t)pcdelta * it->quantum;
	span = it->func_end - it->pc;
	*lo = it->pc;
	*val = it->val;
	if (step >= span) {
		/* the last entry: it ends with the function */
		it->pc = it->func_end;
		it->done = true;
	} else {
		it->pc += step;
	}
	*hi = it->pc;
	return 1;
}

int gopclntab__value_at(const struct gopclntab *g, const struct gopclntab_func *f,
			enum gopclntab_pctab which, uint64_t vaddr, int32_t *val)
{
	struct gopclntab_pcvalue it;
	uint64_t lo, hi;
	int ret;

	ret = gopclntab__pcvalue(g, f, which, &it);
	if (ret)
		return ret;
	while ((ret = gopclntab_pcvalue__next(&it, &lo, &hi, val)) == 1) {
		if (vaddr >= lo && vaddr < hi)
			return 0;
		if (vaddr < lo)
			return -ENOENT;
	}
	return ret ? ret : -ENOENT;
}

const char *gopclntab__file(const struct gopclntab *g, const struct gopclntab_func *f,
			    int32_t fileno)
{
	uint64_t at;
	uint32_t off;

	if (fileno < 0)
		return NULL;
	at = g->cutab + 4 * ((uint64_t)f->cu_offset + (uint64_t)fileno);
	if (!in_copy(g, at, 4))
		return NULL;
	off = rd32(g->data + at);
	if (off == 0xffffffffu)
		return NULL;
	return string_at(g, g->filetab + off);
}

/* file and line of @vaddr in @f's own tables */
static void position(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t vaddr,
		     struct gopclntab_frame *fr)
{
	int32_t v;

	fr->file = NULL;
	fr->line = 0;
	if (!gopclntab__value_at(g, f, GOPCLNTAB_PCFILE, vaddr, &v))
		fr->file = gopclntab__file(g, f, v);
	if (!gopclntab__value_at(g, f, GOPCLNTAB_PCLN, vaddr, &v) && v > 0)
		fr->line = (uint32_t)v;
}

static const struct inl_tree *tree_of(const struct gopclntab *g, uint32_t func_off)
{
	size_t lo = 0, hi = g->nr_trees, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (g->trees[mid].func_off < func_off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->nr_trees && g->trees[lo].func_off == func_off ? &g->trees[lo] : NULL;
}

size_t gopclntab__frames(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t vaddr,
			 struct gopclntab_frame *frames, size_t max)
{
	const struct inl_tree *t = g->nr_trees ? tree_of(g, f->off) : NULL;
	size_t n = 0;
	int32_t ix;

	if (!max)
		return 0;
	/* each inlined call's position is its body's; its caller's is at parent_pc */
	while (t && n + 1 < max && n < GOPCLNTAB_MAX_DEPTH &&
	       !gopclntab__value_at(g, f, GOPCLNTAB_PCINLINE, vaddr, &ix) && ix >= 0 &&
	       (uint32_t)ix < t->count) {
		const struct inl_call *c = &g->inl[t->first + ix];

		frames[n].function = name_at(g, c->name_off);
		position(g, f, vaddr, &frames[n]);
		n++;
		if (c->parent_pc < 0 || (uint64_t)c->parent_pc >= f->end - f->entry)
			break;
		vaddr = f->entry + (uint64_t)c->parent_pc;
	}
	frames[n].function = f->name;
	position(g, f, vaddr, &frames[n]);
	return n + 1;
}

/* --- inlining trees ------------------------------------------------------ */

/* what gopclntab__open_inline() works with */
struct inl_load {
	const struct elf_file *ef;
	const struct elf_load *loads;
	size_t nr_loads;
	uint64_t gofunc; /* 1.18 on: what funcdata offsets are relative to; 0 unknown */
};

/*
 * moduledata's words from types to gofunc, per Go version (runtime/symtab.go
 * of each): one pclntab layout (1.20 on) covers several of them, so each
 * candidate is tried and kept only when its words fit (is_gofunc()).
 */
struct moduledata_layout {
	uint8_t types, etypes, rodata, gofunc;
};

/* 1.18, 1.19 */
static const struct moduledata_layout md_go118[] = {{35, 36, 37, 38}};
/* 1.20 to 1.26: covctrs, ecovctrs before; 1.27: typedesclen, itaboffset, itabsize added */
static const struct moduledata_layout md_go120[] = {{37, 38, 39, 40}, {37, 39, 42, 43}};

/* @md's words fit layout @ml: types before etypes, gofunc past rodata, both in the file */
static bool is_gofunc(const uint64_t *md, const struct moduledata_layout *ml,
		      const struct inl_load *l)
{
	uint64_t off;

	return md[ml->types] && md[ml->etypes] >= md[ml->types] &&
	       md[ml->gofunc] >= md[ml->rodata] &&
	       !elf_loads__vaddr_to_offset(l->loads, l->nr_loads, md[ml->rodata], 1, &off) &&
	       !elf_loads__vaddr_to_offset(l->loads, l->nr_loads, md[ml->gofunc], 1, &off);
}

/*
 * The go.func.* blob's address (1.18 on), from the runtime's moduledata: the
 * one word in the file's data that holds the section's address, followed by
 * the funcnametab slice the header says, and whose text is textStart; of
 * the version's layouts, the first whose words fit.
 */
static uint64_t find_gofunc(const struct gopclntab *g, struct inl_load *l)
{
	uint64_t want[2] = {g->vaddr, g->vaddr + g->funcnametab}, scanned = 0;
	bool go118 = g->version == GOPCLNTAB_GO118;
	const struct moduledata_layout *ml = go118 ? md_go118 : md_go120;
	size_t nr_ml = go118 ? sizeof(md_go118) / sizeof(*ml) : sizeof(md_go120) / sizeof(*ml);
	uint64_t md[MODULEDATA_WORDS];
	uint8_t *win;
	size_t i, k;

	win = malloc(MODULEDATA_SCAN_WINDOW);
	if (!win)
		return 0;
	for (i = 0; i < l->nr_loads && scanned < MODULEDATA_SCAN_MAX; i++) {
		const struct elf_load *s = &l->loads[i];
		uint64_t pos;

		/* moduledata is written at start-up: a writable segment */
		if (!s->in_file || !(s->flags & PF_W))
			continue;
		for (pos = 0; pos + sizeof(md) <= s->filesz && scanned < MODULEDATA_SCAN_MAX;) {
			uint64_t n = s->filesz - pos < MODULEDATA_SCAN_WINDOW
					     ? s->filesz - pos
					     : MODULEDATA_SCAN_WINDOW;
			uint64_t j;

			if (elf_file__read(l->ef, s->offset + pos, win, n))
				break;
			scanned += n;
			for (j = 0; j + sizeof(md) <= n; j += 8) {
				if (rd64(win + j) != want[0] || rd64(win + j + 8) != want[1])
					continue;
				memcpy(md, win + j, sizeof(md));
				if (md[MODULEDATA_TEXT] != g->text_start)
					continue;
				for (k = 0; k < nr_ml && !is_gofunc(md, &ml[k], l); k++)
					;
				if (k == nr_ml)
					continue;
				free(win);
				return md[ml[k].gofunc];
			}
			/* the next window overlaps this one by a moduledata */
			pos += n - sizeof(md) + 8;
		}
	}
	free(win);
	return 0;
}

/* @f's inlining tree's address and its number of entries; false without one */
static bool tree_extent(const struct gopclntab *g, const struct inl_load *l,
			const struct gopclntab_func *f, uint64_t *vaddr, uint32_t *count)
{
	struct gopclntab_pcvalue it;
	uint64_t at, lo, hi;
	int32_t v, max = -1;
	int ret;

	if (f->nfuncdata <= FUNCDATA_INLTREE)
		return false;
	at = (uint64_t)f->off + g->rec_size + 4ull * f->npcdata;
	if (g->version == GOPCLNTAB_GO116) {
		/* words, aligned as their address is */
		if ((g->vaddr + at) & 4)
			at += 4;
		at += 8ull * FUNCDATA_INLTREE;
		if (!in_copy(g, at, 8))
			return false;
		*vaddr = rd64(g->data + at);
	} else {
		at += 4ull * FUNCDATA_INLTREE;
		if (!in_copy(g, at, 4) || rd32(g->data + at) == NO_FUNCDATA || !l->gofunc)
			return false;
		*vaddr = l->gofunc + rd32(g->data + at);
	}
	if (!*vaddr || gopclntab__pcvalue(g, f, GOPCLNTAB_PCINLINE, &it))
		return false;
	while ((ret = gopclntab_pcvalue__next(&it, &lo, &hi, &v)) == 1)
		if (v > max)
			max = v;
	if (ret || max < 0)
		return false;
	*count = (uint32_t)max + 1;
	return true;
}

/* copy @f's tree at @vaddr, @count entries of this version's layout, into the room made */
static void tree_copy(struct gopclntab *g, struct inl_load *l, const struct gopclntab_func *f,
		      uint64_t vaddr, uint32_t count, uint8_t *raw)
{
	/* 1.20: funcID, pad[3], nameOff, parentPc, startLine; before: parent
	 * (16 bits), funcID, pad, file, line, func_, parentPc */
	uint32_t esize = g->version == GOPCLNTAB_GO120 ? 16 : 20;
	uint32_t name_off = g->version == GOPCLNTAB_GO120 ? 4 : 12;
	uint64_t off, bytes = (uint64_t)count * esize;
	uint32_t i;

	/* not in the file, or unreadable: left out, its pcs name the outer function */
	if (elf_loads__vaddr_to_offset(l->loads, l->nr_loads, vaddr, bytes, &off) ||
	    elf_file__read(l->ef, off, raw, bytes))
		return;
	for (i = 0; i < count; i++) {
		const uint8_t *e = raw + (uint64_t)i * esize;

		g->inl[g->nr_inl + i].name_off = (int32_t)rd32(e + name_off);
		g->inl[g->nr_inl + i].parent_pc = (int32_t)rd32(e + name_off + 4);
	}
	g->trees[g->nr_trees++] = (struct inl_tree){f->off, (uint32_t)g->nr_inl, count};
	g->nr_inl += count;
}

static int tree_cmp(const void *a, const void *b)
{
	const struct inl_tree *x = a, *y = b;

	return x->func_off < y->func_off ? -1 : x->func_off > y->func_off;
}

int gopclntab__open_inline(struct gopclntab *g, const struct elf_file *ef, size_t max_bytes)
{
	struct inl_load l = {.ef = ef};
	uint64_t trees = 0, entries = 0, vaddr;
	struct gopclntab_func f;
	uint32_t count, most = 0;
	uint8_t *raw;
	size_t i;

	if (g->nr_trees)
		return 0;
	l.loads = elf_file__loads(ef, &l.nr_loads);
	if (g->version != GOPCLNTAB_GO116) {
		l.gofunc = find_gofunc(g, &l);
		if (!l.gofunc)
			return 0;
	}
	/* counted first, so the budget is charged before anything is allocated */
	for (i = 0; i < g->nfunc; i++) {
		if (gopclntab__func(g, i, &f) || !tree_extent(g, &l, &f, &vaddr, &count))
			continue;
		trees++;
		entries += count;
		most = count > most ? count : most;
		/* the trees kept, and the largest read at once */
		if (trees * sizeof(struct inl_tree) + entries * sizeof(struct inl_call) +
			    (uint64_t)most * 20 >
		    max_bytes)
			return -E2BIG;
	}
	if (!trees || !entries || !most)
		return 0;
	g->trees = calloc(trees, sizeof(*g->trees));
	g->inl = calloc(entries, sizeof(*g->inl));
	raw = malloc((size_t)most * 20);
	if (!g->trees || !g->inl || !raw) {
		free(raw);
		free(g->trees);
		free(g->inl);
		g->trees = NULL;
		g->inl = NULL;
		return -ENOMEM;
	}
	/* the second pass finds what the first did: the copy does not change */
	for (i = 0; i < g->nfunc && g->nr_trees < trees; i++) {
		if (gopclntab__func(g, i, &f) || !tree_extent(g, &l, &f, &vaddr, &count) ||
		    count > entries - g->nr_inl)
			continue;
		tree_copy(g, &l, &f, vaddr, count, raw);
	}
	free(raw);
	qsort(g->trees, g->nr_trees, sizeof(*g->trees), tree_cmp);
	return 0;
}
