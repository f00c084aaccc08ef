// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elf_syms - function symbols, PT_LOAD segments and build id of one ELF file.
 *
 * The file is read through elf_file (bounded pieces into private memory).
 * A symbol table is read twice, entry by entry through elf_file's window:
 * once to count the candidates (so the budget is charged before anything is
 * allocated from the count), once to fill them.  Their names are then read
 * in string-table order, each distinct name once (a table whose symbols all
 * share one name costs one name), into one pool that becomes the kept
 * names.  Every allocation is charged to the parse's mem_budget first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/debug_file.h"
#include "elf/gopclntab.h"
#include "symbols/elf_plt.h"
#include "symbols/elf_syms.h"
#include "util/mem_budget.h"
#include "util/ranges.h"
#include "util/xz.h"

/* elf_syms__parse() flags */
#define ELF_SYMS_INNER (1u << 0) /* a MiniDebugInfo image: no .gnu_debugdata of its own */

struct elf_sym {
	uint64_t start;
	uint64_t end; /* exclusive */
	const char *name;
};

struct elf_syms {
	struct elf_sym *syms; /* sorted by start, starts distinct */
	size_t nr_syms;
	char *names; /* backing store of the file's own syms[].name */
	size_t names_len;
	char *mini_names; /* names merged from .gnu_debugdata: NULL when none */
	size_t mini_names_len;
	struct elf_load *loads;
	size_t nr_loads;
	bool is_dyn;
	bool has_symtab;
	bool has_build_id;
	bool has_debuglink;
	bool over_budget;
	enum elf_syms_minidebug minidebug;
	enum elf_syms_go go_state;
	struct gopclntab *go; /* a Go program's own table: its names when it has no symbols */
	struct elf_plt plt;   /* its PLT stubs, "NAME@plt": no symbol covers them */
	uint32_t debuglink_crc;
	uint8_t build_id_raw[ELF_FILE_BUILD_ID_MAX];
	size_t build_id_len;
	char build_id[ELF_SYMS_BUILD_ID_HEX];
	char debuglink[ELF_FILE_DEBUGLINK_MAX + 1];
};

/* a symbol table entry we keep, before sorting fixes its end */
struct sym_cand {
	uint64_t start;
	uint64_t size;
	uint64_t sec_end; /* end of its section: a size-0 symbol stops there */
	uint64_t name;	  /* string table offset, then offset in the names pool */
	uint32_t order;	  /* its place among the table's candidates: the last tie-break */
	uint16_t len;	  /* of the name (< ELF_SYMS_MAX_NAME); 0: none (dropped) */
	uint8_t rank;	  /* binding preference among aliases, lower wins */
};

/* ELF_SYMS_MAX_BYTES is reckoned at this much a candidate (elf_syms.h) */
_Static_assert(sizeof(struct sym_cand) == 40, "a candidate is 40 bytes");
_Static_assert(ELF_SYMS_MAX_NAME <= UINT16_MAX, "a name's length fits sym_cand.len");

/* the state of one parse: its budget, the names pool */
struct parse {
	struct mem_budget *budget;
	size_t cands_charged; /* bytes of candidates charged */
	char *pool;
	size_t pool_len, pool_cap;
};

/*
 * perf's preference among aliases by binding: non-weak over weak, then
 * global over the rest (so a local alias beats a weak one).
 */
static uint8_t sym_rank(unsigned char bind)
{
	if (bind == STB_WEAK)
		return 2;
	return bind == STB_GLOBAL ? 0 : 1;
}

/*
 * Decide whether @sym is kept, filling @cand if so (all but the name's length).
 * Return: 1 kept, 0 skipped, -EINVAL when the entry is malformed.
 */
static int sym_cand__init(struct sym_cand *cand, const Elf64_Sym *sym, const struct elf_file *ef,
			  const struct elf_symtab *st)
{
	unsigned char type = ELF64_ST_TYPE(sym->st_info);
	const Elf64_Shdr *sh;

	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return 0;
	/* undefined (PLT-resolved), absolute and common symbols name no code here */
	sh = sym->st_shndx < SHN_LORESERVE ? elf_file__section(ef, sym->st_shndx) : NULL;
	if (!sym->st_value || !sh)
		return 0;
	if (sym->st_value > UINT64_MAX - sym->st_size || sym->st_name >= st->str_size)
		return -EINVAL;
	cand->start = sym->st_value;
	cand->size = sym->st_size;
	cand->sec_end =
		sh->sh_addr > UINT64_MAX - sh->sh_size ? UINT64_MAX : sh->sh_addr + sh->sh_size;
	cand->name = sym->st_name;
	cand->len = 0;
	cand->rank = sym_rank(ELF64_ST_BIND(sym->st_info));
	return 1;
}

/*
 * The candidates of @st, counted, charged to the budget, then filled.
 * Return: 0 with *@out (NULL when none) and *@nr set; -E2BIG past a bound;
 * -EINVAL for a malformed entry; -ENOMEM; -errno of a read.
 */
static int read_cands(struct parse *p, const struct elf_file *ef, struct elf_symtab *st,
		      struct sym_cand **out, size_t *nr)
{
	struct sym_cand cand, *cands;
	size_t i, count = 0, n = 0;
	Elf64_Sym sym;
	int ret;

	*out = NULL;
	*nr = 0;
	for (i = 1; i < st->nr; i++) {
		ret = elf_symtab__get(st, i, &sym);
		if (!ret)
			ret = sym_cand__init(&cand, &sym, ef, st);
		if (ret < 0)
			return ret;
		count += ret;
		if (count > ELF_SYMS_MAX_SYMBOLS)
			return -E2BIG;
	}
	if (!count)
		return 0;
	ret = mem_budget__take(p->budget, count * sizeof(*cands));
	if (ret)
		return ret;
	p->cands_charged = count * sizeof(*cands);
	cands = calloc(count, sizeof(*cands));
	if (!cands)
		return -ENOMEM;
	/* the file may change between the passes: fill at most what was charged */
	for (i = 1; i < st->nr && n < count; i++) {
		if (!elf_symtab__get(st, i, &sym) && sym_cand__init(&cands[n], &sym, ef, st) == 1) {
			cands[n].order = (uint32_t)n; /* n < ELF_SYMS_MAX_SYMBOLS */
			n++;
		}
	}
	*out = cands;
	*nr = n;
	return 0;
}

static int cand_cmp_name(const void *a, const void *b)
{
	const struct sym_cand *x = a, *y = b;

	return x->name < y->name ? -1 : x->name > y->name;
}

/* room for @len more bytes in the pool, charged */
static int pool_grow(struct parse *p, size_t len)
{
	if (p->pool_len + len > ELF_SYMS_MAX_NAME_BYTES)
		return -E2BIG;
	return mem_budget__grow(p->budget, (void **)&p->pool, &p->pool_cap, p->pool_len + len, 1,
				64u << 10);
}

/*
 * Read the candidates' names in string-table order, each distinct one
 * once, into the pool; cand.name becomes the name's offset in the pool.
 */
static int read_names(struct parse *p, struct elf_symtab *st, struct sym_cand *c, size_t n)
{
	char name[ELF_SYMS_MAX_NAME];
	uint64_t prev = UINT64_MAX;
	size_t i, len = 0, at = 0;
	int ret;

	qsort(c, n, sizeof(*c), cand_cmp_name);
	for (i = 0; i < n; i++) {
		if (c[i].name != prev) {
			prev = c[i].name;
			ret = elf_symtab__name(st, (uint32_t)c[i].name, name, sizeof(name), &len);
			if (ret)
				return ret;
			if (len) {
				ret = pool_grow(p, len + 1);
				if (ret)
					return ret;
				at = p->pool_len;
				memcpy(p->pool + at, name, len + 1);
				p->pool_len += len + 1;
			}
		}
		c[i].name = at;
		c[i].len = (uint16_t)len; /* < ELF_SYMS_MAX_NAME: the size of name[] */
	}
	return 0;
}

static size_t leading_underscores(const char *name, size_t len)
{
	size_t n = 0;

	while (n < len && name[n] == '_')
		n++;
	return n;
}

/*
 * By address; among aliases (one address), the name perf shows first, by
 * the rule of its choose_best_symbol() (tools/perf/util/symbol.c): a sized
 * symbol, then a non-weak one, then a global one, then the fewest leading
 * underscores ("malloc" over "__libc_malloc"), then the longest name, then
 * the first in the table.  Names are compared as the table has them,
 * versions included, as perf does.
 */
static int sym_cand__cmp(const void *a, const void *b, void *pool)
{
	const struct sym_cand *x = a, *y = b;
	size_t ux, uy;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	ux = leading_underscores((char *)pool + x->name, x->len);
	uy = leading_underscores((char *)pool + y->name, y->len);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Keep one named symbol per address (of aliases, the one sym_cand__cmp()
 * puts first), give size-0 symbols the range up to the next symbol (within
 * their section), cut any range at the next symbol so ranges never overlap
 * and a binary search finds the only candidate, and drop symbols left empty.
 * Return: the number of candidates left at the front of @c.
 */
static size_t sym_cands__settle(struct sym_cand *c, size_t n, char *pool)
{
	size_t i, kept = 0;

	for (i = 0; i < n; i++)
		if (c[i].len)
			c[kept++] = c[i];
	n = kept;
	qsort_r(c, n, sizeof(*c), sym_cand__cmp, pool);
	kept = 0;
	for (i = 0; i < n; i++) {
		if (kept && c[kept - 1].start == c[i].start)
			continue;
		c[kept++] = c[i];
	}
	n = kept;
	kept = 0;
	for (i = 0; i < n; i++) {
		struct sym_cand cur = c[i];
		uint64_t end = cur.size ? cur.start + cur.size : cur.sec_end;

		if (i + 1 < n && c[i + 1].start < end)
			end = c[i + 1].start;
		if (end <= cur.start)
			continue;
		cur.sec_end = end; /* now the symbol's end */
		c[kept++] = cur;
	}
	return kept;
}

/* the kept table from the settled candidates; the pool becomes es->names */
static int keep_symbols(struct parse *p, struct elf_syms *es, const struct sym_cand *c, size_t n)
{
	char *pool;
	size_t i;
	int ret;

	ret = mem_budget__take(p->budget, n * sizeof(*es->syms));
	if (ret)
		return ret;
	es->syms = calloc(n, sizeof(*es->syms));
	if (!es->syms)
		return -ENOMEM;
	/* the pool grew by doubling: shrunk to its names, what the file keeps */
	pool = realloc(p->pool, p->pool_len);
	if (pool) {
		mem_budget__give(p->budget, p->pool_cap - p->pool_len);
		p->pool = pool;
		p->pool_cap = p->pool_len;
	}
	for (i = 0; i < n; i++) {
		es->syms[i].start = c[i].start;
		es->syms[i].end = c[i].sec_end;
		es->syms[i].name = p->pool + c[i].name;
	}
	es->nr_syms = n;
	es->names = p->pool;
	es->names_len = p->pool_cap;
	p->pool = NULL;
	return 0;
}

/* .symtab, else .dynsym; -E2BIG when they pass a bound */
static int read_symbols(struct parse *p, struct elf_syms *es, const struct elf_file *ef)
{
	struct sym_cand *cands = NULL;
	struct elf_symtab st;
	size_t n = 0;
	int ret;

	ret = elf_file__symtab(ef, SHT_SYMTAB, &st);
	if (ret == -ENOENT)
		ret = elf_file__symtab(ef, SHT_DYNSYM, &st);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	es->has_symtab = st.type == SHT_SYMTAB;
	ret = read_cands(p, ef, &st, &cands, &n);
	if (!ret && n)
		ret = read_names(p, &st, cands, n);
	elf_symtab__release(&st);
	if (!ret && n) {
		n = sym_cands__settle(cands, n, p->pool);
		if (n)
			ret = keep_symbols(p, es, cands, n);
	}
	free(cands);
	mem_budget__give(p->budget, p->cands_charged);
	p->cands_charged = 0;
	return ret;
}

static struct elf_syms *elf_syms__parse(const struct elf_file *ef, struct mem_budget *b,
					unsigned int flags);

/*
 * Add @mini's symbols to @es's.  Both tables are sorted with distinct starts;
 * at an address both name, @es's own symbol (a .dynsym one) is kept.  Ranges
 * are cut where the next symbol starts, as sym_cands__settle() does, so a
 * size-0 .dynsym symbol no longer runs over a local function.  @mini's names
 * move to @es; @mini is freed.
 */
static int elf_syms__merge(struct elf_syms *es, struct elf_syms *mini, struct mem_budget *b)
{
	size_t i = 0, j = 0, n = 0, size = (es->nr_syms + mini->nr_syms) * sizeof(struct elf_sym);
	struct elf_sym *syms;

	if (!mini->nr_syms) {
		elf_syms__free(mini);
		return 0;
	}
	if (mem_budget__take(b, size)) {
		elf_syms__free(mini);
		return -E2BIG;
	}
	syms = calloc(1, size);
	if (!syms) {
		elf_syms__free(mini);
		return -ENOMEM;
	}
	while (i < es->nr_syms || j < mini->nr_syms) {
		if (j == mini->nr_syms ||
		    (i < es->nr_syms && es->syms[i].start <= mini->syms[j].start)) {
			if (j < mini->nr_syms && es->syms[i].start == mini->syms[j].start)
				j++;
			syms[n++] = es->syms[i++];
		} else {
			syms[n++] = mini->syms[j++];
		}
	}
	for (i = 0; i + 1 < n; i++) {
		if (syms[i].end > syms[i + 1].start)
			syms[i].end = syms[i + 1].start;
	}
	/* the two former arrays go; the merged one stays charged */
	free(es->syms);
	mem_budget__give(b, size);
	es->syms = syms;
	es->nr_syms = n;
	es->mini_names = mini->names;
	es->mini_names_len = mini->names_len;
	mini->names = NULL;
	elf_syms__free(mini);
	return 0;
}

/*
 * MiniDebugInfo: .gnu_debugdata holds an xz-compressed ELF whose .symtab
 * names the local functions .dynsym leaves out.  Hostile like the rest of
 * the file: the compressed and decompressed sizes are capped and charged,
 * its symbols parsed within what is left of the budget; a bad stream or
 * inner file is recorded in es->minidebug, never fatal.
 * Return: 0, or -errno when reading the file failed or memory ran out.
 */
static int read_minidebug(struct elf_syms *es, const struct elf_file *ef, struct mem_budget *b)
{
	size_t idx = elf_file__find_section(ef, ".gnu_debugdata"), xz_len = 0, out_len, cap;
	struct elf_file *inner;
	struct elf_syms *mini;
	void *xz = NULL, *out;
	int err;

	if (!idx)
		return 0;
	es->minidebug = ELF_SYMS_MINIDEBUG_BAD;
	cap = mem_budget__left(b) < ELF_SYMS_MAX_MINIDEBUG ? mem_budget__left(b)
							   : ELF_SYMS_MAX_MINIDEBUG;
	err = elf_file__section_copy(ef, idx, cap, &xz, &xz_len);
	if (err == -E2BIG)
		es->minidebug = ELF_SYMS_MINIDEBUG_TOO_BIG;
	if (err == -ENOMEM)
		return err;
	if (err || !xz_len) {
		free(xz);
		return 0;
	}
	mem_budget__take(b, xz_len); /* fits: copied within cap */
	cap = mem_budget__left(b) / 2 < ELF_SYMS_MAX_MINIDEBUG ? mem_budget__left(b) / 2
							       : ELF_SYMS_MAX_MINIDEBUG;
	/*
	 * The output grows up to the cap, and the decoder's dictionary is
	 * touched as far as it writes: charge twice the cap meanwhile.
	 */
	mem_budget__take(b, 2 * cap);
	err = xz_decompress(xz, xz_len, cap, &out, &out_len);
	free(xz);
	mem_budget__give(b, xz_len + 2 * cap);
	if (err == -ENOMEM)
		return err;
	if (err) {
		es->minidebug = err == -EFBIG ? ELF_SYMS_MINIDEBUG_TOO_BIG : ELF_SYMS_MINIDEBUG_BAD;
		return 0;
	}
	mem_budget__take(b, out_len); /* fits: within cap */
	inner = elf_file__open_mem(out, out_len);
	mini = inner ? elf_syms__parse(inner, b, ELF_SYMS_INNER) : NULL;
	err = mini ? 0 : -errno;
	elf_file__free(inner);
	free(out);
	mem_budget__give(b, out_len);
	if (err == -ENOMEM)
		return err;
	if (!mini)
		return 0;
	/* the symbols of another build would name the wrong code */
	if (es->has_build_id && mini->has_build_id && strcmp(es->build_id, mini->build_id)) {
		elf_syms__free(mini);
		return 0;
	}
	if (mini->over_budget) {
		es->minidebug = ELF_SYMS_MINIDEBUG_TOO_BIG;
		elf_syms__free(mini);
		return 0;
	}
	err = elf_syms__merge(es, mini, b);
	if (err == -E2BIG) {
		es->minidebug = ELF_SYMS_MINIDEBUG_TOO_BIG;
		return 0;
	}
	if (err)
		return err;
	es->minidebug = ELF_SYMS_MINIDEBUG_OK;
	return 0;
}

/*
 * A Go program without function symbols (built with -ldflags=-s, or
 * stripped) still has the runtime's own table, .gopclntab: its names, and
 * with its inlining trees, its source lines.  Hostile like the rest: the
 * section is copied within what is left of the budget (and
 * ELF_SYMS_MAX_GOPCLNTAB), the trees within ELF_SYMS_MAX_GO_INLINE; a bad
 * table is recorded in es->go_state, never fatal.
 * Return: 0, or -ENOMEM.
 */
static int read_gopclntab(struct elf_syms *es, const struct elf_file *ef, struct mem_budget *b)
{
	size_t cap = mem_budget__left(b) < ELF_SYMS_MAX_GOPCLNTAB ? mem_budget__left(b)
								  : ELF_SYMS_MAX_GOPCLNTAB;
	struct gopclntab *go;
	size_t bytes;
	int err;

	go = gopclntab__open(ef, cap);
	if (!go) {
		err = errno;
		if (err == ENOMEM)
			return -ENOMEM;
		es->go_state = err == ENOENT  ? ELF_SYMS_GO_NONE
			       : err == E2BIG ? ELF_SYMS_GO_TOO_BIG
					      : ELF_SYMS_GO_BAD;
		return 0;
	}
	bytes = gopclntab__bytes(go);
	mem_budget__take(b, bytes); /* fits: copied within cap (and a few words) */
	cap = mem_budget__left(b) < ELF_SYMS_MAX_GO_INLINE ? mem_budget__left(b)
							   : ELF_SYMS_MAX_GO_INLINE;
	err = gopclntab__open_inline(go, ef, cap);
	if (err == -ENOMEM) {
		gopclntab__free(go);
		return err;
	}
	mem_budget__take(b, gopclntab__bytes(go) - bytes); /* fits: within cap */
	es->go = go;
	es->go_state = ELF_SYMS_GO_OK;
	return 0;
}

/* what the file says besides its symbols */
static int read_file_facts(struct elf_syms *es, const struct elf_file *ef)
{
	const struct elf_load *loads;
	const uint8_t *id;
	const char *link;
	size_t n;

	es->is_dyn = elf_file__ehdr(ef)->e_type == ET_DYN;
	loads = elf_file__loads(ef, &n);
	if (n) {
		es->loads = malloc(n * sizeof(*loads));
		if (!es->loads)
			return -ENOMEM;
		memcpy(es->loads, loads, n * sizeof(*loads));
		es->nr_loads = n;
	}
	id = elf_file__build_id(ef, &n);
	if (id) {
		memcpy(es->build_id_raw, id, n);
		es->build_id_len = n;
		elf_build_id__hex(id, n, es->build_id);
		es->has_build_id = true;
	}
	link = elf_file__debuglink(ef, &es->debuglink_crc);
	if (link) {
		strcpy(es->debuglink, link); /* both ELF_FILE_DEBUGLINK_MAX + 1 */
		es->has_debuglink = true;
	}
	return 0;
}

static struct elf_syms *elf_syms__parse(const struct elf_file *ef, struct mem_budget *b,
					unsigned int flags)
{
	struct parse p = {.budget = b};
	struct elf_syms *es;
	size_t used = b->used;
	int err;

	es = calloc(1, sizeof(*es));
	if (!es)
		return NULL;
	err = read_file_facts(es, ef);
	if (err)
		goto err_free;
	err = read_symbols(&p, es, ef);
	free(p.pool);
	if (err == -E2BIG) {
		/* refused whole: a cut table would name the wrong functions */
		free(es->syms);
		free(es->names);
		es->syms = NULL;
		es->names = NULL;
		es->nr_syms = 0;
		es->names_len = 0;
		es->over_budget = true;
		b->used = used;
		err = 0;
	}
	if (err)
		goto err_free;
	if (!(flags & ELF_SYMS_INNER) && !es->over_budget) {
		err = read_minidebug(es, ef, b);
		if (err)
			goto err_free;
	}
	if (!(flags & ELF_SYMS_INNER)) {
		err = elf_plt__read(ef, b, &es->plt);
		if (err == -E2BIG) /* past the budget: the stubs stay unnamed */
			err = 0;
		if (err)
			goto err_free;
	}
	/* no symbol table: a stripped Go program names its own functions */
	if (!(flags & ELF_SYMS_INNER) && !es->has_symtab &&
	    es->minidebug != ELF_SYMS_MINIDEBUG_OK) {
		err = read_gopclntab(es, ef, b);
		if (err)
			goto err_free;
	}
	return es;

err_free:
	elf_syms__free(es);
	errno = -err;
	return NULL;
}

struct elf_syms *elf_syms__open_file(const struct elf_file *ef, size_t budget)
{
	struct mem_budget b = {.limit = budget};

	return elf_syms__parse(ef, &b, 0);
}

/* the symbols of @ef (NULL: errno says why), which is freed */
static struct elf_syms *open_and_free(struct elf_file *ef)
{
	struct elf_syms *es;
	int err;

	if (!ef)
		return NULL;
	es = elf_syms__open_file(ef, ELF_SYMS_MAX_BYTES);
	err = errno;
	elf_file__free(ef);
	errno = err;
	return es;
}

struct elf_syms *elf_syms__open_fd(int fd)
{
	return open_and_free(elf_file__open_fd(fd));
}

struct elf_syms *elf_syms__open_mem(const void *buf, size_t len)
{
	return open_and_free(elf_file__open_mem(buf, len));
}

/* debug_file's test of a candidate: it names functions in a .symtab */
static int debug_has_names(struct elf_file *cand, void *ctx)
{
	struct elf_syms **out = ctx;
	struct elf_syms *dbg = elf_syms__open_file(cand, ELF_SYMS_MAX_BYTES);

	if (!dbg)
		return errno == ENOMEM ? -ENOMEM : 0;
	if (!dbg->has_symtab || !dbg->nr_syms) {
		elf_syms__free(dbg);
		return 0;
	}
	*out = dbg;
	return 1;
}

struct elf_syms *elf_syms__open_debug(int root_fd, const char *path, const struct elf_syms *es,
				      const struct stat *self, struct debug_file_result *res)
{
	struct debug_file_key key = {
		.build_id = es->has_build_id ? es->build_id_raw : NULL,
		.build_id_len = es->build_id_len,
		.debuglink = es->has_debuglink ? es->debuglink : NULL,
		.crc = es->debuglink_crc,
	};
	struct elf_syms *dbg = NULL;
	struct elf_file *ef;

	ef = debug_file__open(root_fd, path, &key, self, debug_has_names, &dbg, res);
	if (!ef)
		return NULL;
	elf_file__free(ef);
	return dbg;
}

void elf_syms__free(struct elf_syms *es)
{
	if (!es)
		return;
	free(es->syms);
	free(es->names);
	free(es->mini_names);
	free(es->loads);
	gopclntab__free(es->go);
	elf_plt__release(&es->plt);
	free(es);
}

const char *elf_syms__lookup(const struct elf_syms *es, uint64_t vaddr, uint64_t *offset)
{
	const struct elf_plt_stub *stub;
	const struct elf_sym *sym;
	struct gopclntab_func f;

	/* Go's table first: a size-0 .dynsym symbol (cgo's) may run over Go code */
	if (es->go && !gopclntab__find(es->go, vaddr, &f) && f.name) {
		if (offset)
			*offset = vaddr - f.entry;
		return f.name;
	}
	sym = RANGE_FIND(es->syms, es->nr_syms, start, end, vaddr);
	if (sym) {
		if (offset)
			*offset = vaddr - sym->start;
		return sym->name;
	}
	stub = elf_plt__find(&es->plt, vaddr);
	if (!stub)
		return NULL;
	if (offset)
		*offset = vaddr - stub->start;
	return stub->name;
}

size_t elf_syms__source(const struct elf_syms *es, uint64_t vaddr, struct gopclntab_frame *frames,
			size_t max)
{
	struct gopclntab_func f;

	if (!es->go || !max || gopclntab__find(es->go, vaddr, &f) || !f.name)
		return 0;
	return gopclntab__frames(es->go, &f, vaddr, frames, max);
}

bool elf_syms__from_gopclntab(const struct elf_syms *es, const char *name)
{
	return es->go && gopclntab__owns(es->go, name);
}

enum elf_syms_go elf_syms__go(const struct elf_syms *es)
{
	return es->go_state;
}

const struct gopclntab *elf_syms__gopclntab(const struct elf_syms *es)
{
	return es->go;
}

int elf_syms__file_offset_to_vaddr(const struct elf_syms *es, uint64_t file_offset, uint64_t *vaddr)
{
	return elf_loads__offset_to_vaddr(es->loads, es->nr_loads, file_offset, vaddr);
}

const char *elf_syms__build_id(const struct elf_syms *es)
{
	return es->has_build_id ? es->build_id : NULL;
}

size_t elf_syms__nr_symbols(const struct elf_syms *es)
{
	return es->nr_syms;
}

int elf_syms__is_dyn(const struct elf_syms *es)
{
	return es->is_dyn;
}

bool elf_syms__has_symtab(const struct elf_syms *es)
{
	return es->has_symtab;
}

const char *elf_syms__debuglink(const struct elf_syms *es, uint32_t *crc)
{
	if (!es->has_debuglink)
		return NULL;
	if (crc)
		*crc = es->debuglink_crc;
	return es->debuglink;
}

enum elf_syms_minidebug elf_syms__minidebug(const struct elf_syms *es)
{
	return es->minidebug;
}

bool elf_syms__from_minidebug(const struct elf_syms *es, const char *name)
{
	uintptr_t p = (uintptr_t)name, base = (uintptr_t)es->mini_names;

	return es->mini_names && p >= base && p - base < es->mini_names_len;
}

bool elf_syms__over_budget(const struct elf_syms *es)
{
	return es->over_budget;
}

size_t elf_syms__bytes(const struct elf_syms *es)
{
	return sizeof(*es) + es->nr_syms * sizeof(*es->syms) + es->names_len + es->mini_names_len +
	       es->nr_loads * sizeof(*es->loads) + (es->go ? gopclntab__bytes(es->go) : 0) +
	       elf_plt__bytes(&es->plt);
}

const char *elf_syms__symbol(const struct elf_syms *es, size_t idx, uint64_t *start, uint64_t *end)
{
	if (idx >= es->nr_syms)
		return NULL;
	if (start)
		*start = es->syms[idx].start;
	if (end)
		*end = es->syms[idx].end;
	return es->syms[idx].name;
}
