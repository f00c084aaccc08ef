// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elf_syms - function symbols, PT_LOAD segments and build id of one ELF file.
 *
 * We never map the file and never hand libelf the caller's bytes.  The pieces
 * we parse (ELF header, section and program header tables, one symbol table
 * with its strings, notes, the section names and the .gnu_debuglink and
 * .gnu_debugdata sections) are copied, after bounds checks, into a private
 * zero-filled image as large as the file, and libelf parses that image.  A
 * target that truncates or rewrites its file while we parse can then neither
 * SIGBUS us nor change bytes between our checks and libelf's reads, and a
 * 1 GiB binary costs little more than its symbol table: glibc serves a
 * calloc() above its mmap threshold (32 MiB at most) from fresh mmap()ed
 * pages, and pages we never write are never backed.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/elf_syms.h"
#include "util/ranges.h"
#include "util/xz.h"

/* internal caps, far above what linked executables and libraries carry */
#define ELF_SYMS_MAX_SECTIONS (1u << 20)
#define ELF_SYMS_MAX_SEGMENTS (1u << 16)
#define ELF_SYMS_MAX_NOTE     (1u << 20) /* bytes in one note section or segment */
#define ELF_SYMS_MAX_SHSTRTAB (1u << 20) /* section names: a few KiB in real files */

/* elf_syms__open_src() flags */
#define ELF_SYMS_INNER (1u << 0) /* a MiniDebugInfo image: no .gnu_debugdata of its own */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ELF_SYMS_HOST_DATA ELFDATA2LSB
#else
#define ELF_SYMS_HOST_DATA ELFDATA2MSB
#endif

struct elf_sym {
	uint64_t start;
	uint64_t end; /* exclusive */
	const char *name;
};

/* a PT_LOAD segment's file-backed part */
struct elf_seg {
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;
};

struct elf_syms {
	struct elf_sym *syms; /* sorted by start, starts distinct */
	size_t nr_syms;
	char *names; /* backing store of the file's own syms[].name */
	size_t names_len;
	char *mini_names; /* names merged from .gnu_debugdata: NULL when none */
	size_t mini_names_len;
	struct elf_seg *segs;
	size_t nr_segs;
	bool is_dyn;
	bool has_symtab;
	bool has_build_id;
	bool has_debuglink;
	enum elf_syms_minidebug minidebug;
	uint32_t debuglink_crc;
	char build_id[ELF_SYMS_BUILD_ID_HEX];
	char debuglink[NAME_MAX + 1];
};

/* where the file's bytes come from: a caller's buffer, else pread() on fd */
struct elf_src {
	const uint8_t *buf;
	int fd;
	uint64_t size;
};

/* the private image being filled, and what its headers told us */
struct elf_image {
	uint8_t *buf;
	uint64_t size;
	Elf64_Ehdr ehdr;
	uint64_t shoff;
	size_t shnum;
	uint64_t phoff;
	size_t phnum;
	size_t shstrndx;   /* section names; 0 when none */
	size_t symtab_idx; /* 0: the file has no symbol table */
	size_t strtab_idx;
	const char *shstrtab; /* loaded on first use, NUL-terminated; NULL: unusable */
	uint64_t shstrtab_size;
	bool shstrtab_tried;
};

/* a symbol table entry we keep, before sorting fixes its end */
struct sym_cand {
	uint64_t start;
	uint64_t size;
	uint64_t sec_end; /* end of its section: a size-0 symbol stops there */
	uint64_t end;	  /* set once sorted */
	const char *name; /* in the image's string table, not NUL-terminated at len */
	size_t len;
	int rank; /* binding preference among aliases, lower wins */
};

static bool range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int elf_src__read(const struct elf_src *src, uint64_t off, void *dst, uint64_t len)
{
	uint8_t *p = dst;

	if (!range_ok(off, len, src->size))
		return -EINVAL;
	if (src->buf) {
		memcpy(dst, src->buf + off, len);
		return 0;
	}
	while (len) {
		size_t chunk = len > (1u << 30) ? (1u << 30) : len;
		ssize_t n = pread(src->fd, p, chunk, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* the file shrank since fstat(): its headers no longer hold */
		if (n == 0)
			return -EINVAL;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

static int elf_image__load(struct elf_image *img, const struct elf_src *src, uint64_t off,
			   uint64_t len)
{
	return elf_src__read(src, off, img->buf + off, len);
}

/* callers check idx < shnum; copies, as a hostile e_shoff may be unaligned */
static void elf_image__shdr(const struct elf_image *img, size_t idx, Elf64_Shdr *sh)
{
	memcpy(sh, img->buf + img->shoff + idx * sizeof(*sh), sizeof(*sh));
}

static void elf_image__phdr(const struct elf_image *img, size_t idx, Elf64_Phdr *ph)
{
	memcpy(ph, img->buf + img->phoff + idx * sizeof(*ph), sizeof(*ph));
}

static int elf_image__load_headers(struct elf_image *img, const struct elf_src *src)
{
	const Elf64_Ehdr *eh = &img->ehdr;
	Elf64_Shdr sh0 = {};
	uint64_t shnum, phnum;
	int err;

	err = elf_image__load(img, src, 0, sizeof(*eh));
	if (err)
		return err;
	memcpy(&img->ehdr, img->buf, sizeof(img->ehdr));

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELF_SYMS_HOST_DATA || eh->e_ident[EI_VERSION] != EV_CURRENT)
		return -EINVAL;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return -EINVAL;

	shnum = eh->e_shnum;
	if (eh->e_shoff) {
		if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
		    !range_ok(eh->e_shoff, sizeof(sh0), img->size))
			return -EINVAL;
		err = elf_image__load(img, src, eh->e_shoff, sizeof(sh0));
		if (err)
			return err;
		memcpy(&sh0, img->buf + eh->e_shoff, sizeof(sh0));
		/* more than SHN_LORESERVE sections: the count is in section 0 */
		if (shnum == 0)
			shnum = sh0.sh_size;
		if (shnum > ELF_SYMS_MAX_SECTIONS ||
		    !range_ok(eh->e_shoff, shnum * sizeof(Elf64_Shdr), img->size))
			return -EINVAL;
		err = elf_image__load(img, src, eh->e_shoff, shnum * sizeof(Elf64_Shdr));
		if (err)
			return err;
	} else if (shnum) {
		return -EINVAL;
	}
	img->shoff = eh->e_shoff;
	img->shnum = shnum;
	/* SHN_XINDEX: the index is in section 0 */
	img->shstrndx = eh->e_shstrndx == SHN_XINDEX ? sh0.sh_link : eh->e_shstrndx;
	if (img->shstrndx >= shnum)
		img->shstrndx = 0;

	phnum = eh->e_phnum;
	if (phnum == PN_XNUM) {
		if (!img->shnum)
			return -EINVAL;
		phnum = sh0.sh_info;
	}
	if (phnum) {
		if (!eh->e_phoff || eh->e_phentsize != sizeof(Elf64_Phdr) ||
		    phnum > ELF_SYMS_MAX_SEGMENTS ||
		    !range_ok(eh->e_phoff, phnum * sizeof(Elf64_Phdr), img->size))
			return -EINVAL;
		err = elf_image__load(img, src, eh->e_phoff, phnum * sizeof(Elf64_Phdr));
		if (err)
			return err;
	}
	img->phoff = eh->e_phoff;
	img->phnum = phnum;
	return 0;
}

/* pick .symtab, else .dynsym, and load it with its string table */
static int elf_image__load_symtab(struct elf_image *img, const struct elf_src *src)
{
	size_t idx = 0, dynsym = 0, i;
	Elf64_Shdr sh, str;
	int err;

	for (i = 1; i < img->shnum; i++) {
		elf_image__shdr(img, i, &sh);
		if (sh.sh_type == SHT_SYMTAB) {
			idx = i;
			break;
		}
		if (sh.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = i;
	}
	if (!idx)
		idx = dynsym;
	if (!idx)
		return 0;

	elf_image__shdr(img, idx, &sh);
	if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_size % sizeof(Elf64_Sym) != 0 ||
	    !range_ok(sh.sh_offset, sh.sh_size, img->size))
		return -EINVAL;
	if (sh.sh_link == 0 || sh.sh_link >= img->shnum)
		return -EINVAL;
	elf_image__shdr(img, sh.sh_link, &str);
	if (str.sh_type != SHT_STRTAB || str.sh_size == 0 ||
	    !range_ok(str.sh_offset, str.sh_size, img->size))
		return -EINVAL;

	err = elf_image__load(img, src, sh.sh_offset, sh.sh_size);
	if (err)
		return err;
	err = elf_image__load(img, src, str.sh_offset, str.sh_size);
	if (err)
		return err;
	img->symtab_idx = idx;
	img->strtab_idx = sh.sh_link;
	return 0;
}

/*
 * Find the section called @name, loading the section names on first use.
 * Names are optional to us: a file whose names are missing, cut or too many
 * simply has no section found by name.
 * Return: its index (its header in @sh), 0 when there is none, or -errno
 * when reading the file failed.
 */
static int elf_image__find_section(struct elf_image *img, const struct elf_src *src,
				   const char *name, Elf64_Shdr *sh)
{
	size_t i, len = strlen(name);
	Elf64_Shdr str;
	int err;

	if (!img->shstrtab_tried) {
		img->shstrtab_tried = true;
		if (!img->shstrndx)
			return 0;
		elf_image__shdr(img, img->shstrndx, &str);
		if (str.sh_type != SHT_STRTAB || !str.sh_size ||
		    str.sh_size > ELF_SYMS_MAX_SHSTRTAB ||
		    !range_ok(str.sh_offset, str.sh_size, img->size))
			return 0;
		err = elf_image__load(img, src, str.sh_offset, str.sh_size);
		if (err)
			return err;
		/* the last byte must end the last name, so every name is terminated */
		if (img->buf[str.sh_offset + str.sh_size - 1] != '\0')
			return 0;
		img->shstrtab = (const char *)img->buf + str.sh_offset;
		img->shstrtab_size = str.sh_size;
	}
	if (!img->shstrtab)
		return 0;
	for (i = 1; i < img->shnum; i++) {
		elf_image__shdr(img, i, sh);
		if (sh->sh_name < img->shstrtab_size && sh->sh_type != SHT_NOBITS &&
		    img->shstrtab_size - sh->sh_name > len &&
		    !memcmp(img->shstrtab + sh->sh_name, name, len + 1))
			return (int)i;
	}
	return 0;
}

static bool note_align(uint64_t *pos, uint64_t align, uint64_t len)
{
	uint64_t aligned = (*pos + align - 1) & ~(align - 1);

	if (aligned < *pos || aligned > len)
		return false;
	*pos = aligned;
	return true;
}

/*
 * Walk the notes in @len bytes at @p for NT_GNU_BUILD_ID.  Name and
 * descriptor start @align-aligned from the notes' start, as libelf reads
 * them; every step moves forward by at least a header, so the walk ends.
 */
static bool scan_notes(const uint8_t *p, uint64_t len, uint64_t align, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	uint64_t pos = 0;
	Elf64_Nhdr nh;
	size_t i;

	while (len - pos >= sizeof(nh)) {
		const uint8_t *name, *desc;

		memcpy(&nh, p + pos, sizeof(nh));
		pos += sizeof(nh);
		if (nh.n_namesz > len - pos)
			return false;
		name = p + pos;
		pos += nh.n_namesz;
		if (!note_align(&pos, align, len) || nh.n_descsz > len - pos)
			return false;
		desc = p + pos;
		pos += nh.n_descsz;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(ELF_NOTE_GNU) &&
		    memcmp(name, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= ELF_SYMS_BUILD_ID_MAX) {
			for (i = 0; i < nh.n_descsz; i++) {
				hex[2 * i] = digits[desc[i] >> 4];
				hex[2 * i + 1] = digits[desc[i] & 0xf];
			}
			hex[(size_t)2 * nh.n_descsz] = '\0';
			return true;
		}
		/* padding after the last note may be cut off: stop, not fail */
		if (!note_align(&pos, align, len))
			return false;
	}
	return false;
}

bool elf_syms__note_build_id(const void *notes, size_t len, size_t align,
			     char hex[ELF_SYMS_BUILD_ID_HEX])
{
	if (!notes || (align != 4 && align != 8))
		return false;
	return scan_notes(notes, len, align, hex);
}

/* notes are optional: ones out of the file or too large are skipped */
static int elf_syms__read_note(struct elf_syms *es, struct elf_image *img,
			       const struct elf_src *src, uint64_t off, uint64_t len,
			       uint64_t align)
{
	int err;

	if (es->has_build_id || !len || len > ELF_SYMS_MAX_NOTE || !range_ok(off, len, img->size))
		return 0;
	err = elf_image__load(img, src, off, len);
	if (err)
		return err;
	es->has_build_id = scan_notes(img->buf + off, len, align == 8 ? 8 : 4, es->build_id);
	return 0;
}

/* the loader's view (PT_NOTE) first, then note sections */
static int elf_syms__read_build_id(struct elf_syms *es, struct elf_image *img,
				   const struct elf_src *src)
{
	Elf64_Phdr ph;
	Elf64_Shdr sh;
	size_t i;
	int err;

	for (i = 0; i < img->phnum; i++) {
		elf_image__phdr(img, i, &ph);
		if (ph.p_type != PT_NOTE)
			continue;
		err = elf_syms__read_note(es, img, src, ph.p_offset, ph.p_filesz, ph.p_align);
		if (err)
			return err;
	}
	for (i = 1; i < img->shnum; i++) {
		elf_image__shdr(img, i, &sh);
		if (sh.sh_type != SHT_NOTE)
			continue;
		err = elf_syms__read_note(es, img, src, sh.sh_offset, sh.sh_size, sh.sh_addralign);
		if (err)
			return err;
	}
	return 0;
}

/* segments reaching past the file (e.g. in separate debug files) are skipped */
static bool seg_usable(const Elf64_Phdr *ph, uint64_t file_size)
{
	return ph->p_type == PT_LOAD && ph->p_filesz &&
	       range_ok(ph->p_offset, ph->p_filesz, file_size) &&
	       ph->p_vaddr <= UINT64_MAX - ph->p_filesz;
}

static int elf_syms__read_segments(struct elf_syms *es, const struct elf_image *img)
{
	size_t i, n = 0;
	Elf64_Phdr ph;

	for (i = 0; i < img->phnum; i++) {
		elf_image__phdr(img, i, &ph);
		n += seg_usable(&ph, img->size);
	}
	if (!n)
		return 0;
	es->segs = calloc(n, sizeof(*es->segs));
	if (!es->segs)
		return -ENOMEM;
	for (i = 0; i < img->phnum; i++) {
		elf_image__phdr(img, i, &ph);
		if (!seg_usable(&ph, img->size))
			continue;
		es->segs[es->nr_segs].offset = ph.p_offset;
		es->segs[es->nr_segs].filesz = ph.p_filesz;
		es->segs[es->nr_segs].vaddr = ph.p_vaddr;
		es->nr_segs++;
	}
	return 0;
}

static int sym_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_LOCAL:
		return 2;
	default:
		return 3;
	}
}

/*
 * Decide whether @sym is kept, filling @cand if so.
 * Return: 1 kept, 0 skipped, -EINVAL when the entry is malformed.
 */
static int sym_cand__init(struct sym_cand *cand, const GElf_Sym *sym, const struct elf_image *img,
			  const char *strtab, size_t strsz)
{
	unsigned char type = GELF_ST_TYPE(sym->st_info);
	const char *name;
	Elf64_Shdr sh;
	size_t len;

	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return 0;
	/* undefined (PLT-resolved), absolute and common symbols name no code here */
	if (!sym->st_value || sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE ||
	    sym->st_shndx >= img->shnum)
		return 0;
	if (sym->st_value > UINT64_MAX - sym->st_size || sym->st_name >= strsz)
		return -EINVAL;
	/* the table's last byte is NUL, so this stays inside it */
	name = strtab + sym->st_name;
	len = strnlen(name, ELF_SYMS_MAX_NAME - 1);
	if (!len)
		return 0;

	elf_image__shdr(img, sym->st_shndx, &sh);
	cand->start = sym->st_value;
	cand->size = sym->st_size;
	cand->sec_end = sh.sh_addr > UINT64_MAX - sh.sh_size ? UINT64_MAX : sh.sh_addr + sh.sh_size;
	cand->name = name;
	cand->len = len;
	cand->rank = sym_rank(GELF_ST_BIND(sym->st_info));
	return 1;
}

/* by address; among aliases the sized, global, then first-named one sorts first */
static int sym_cand__cmp(const void *a, const void *b)
{
	const struct sym_cand *x = a, *y = b;
	size_t len = x->len < y->len ? x->len : y->len;
	int c;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	c = memcmp(x->name, y->name, len);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/*
 * Keep one symbol per address, give size-0 symbols the range up to the next
 * symbol (within their section), cut any range at the next symbol so ranges
 * never overlap and a binary search finds the only candidate, and drop
 * symbols left empty.
 * Return: the number of candidates left at the front of @c.
 */
static size_t sym_cands__settle(struct sym_cand *c, size_t n)
{
	size_t i, kept = 0;

	qsort(c, n, sizeof(*c), sym_cand__cmp);
	for (i = 0; i < n; i++) {
		if (kept && c[kept - 1].start == c[i].start)
			continue;
		c[kept++] = c[i];
	}
	n = kept;
	kept = 0;
	for (i = 0; i < n; i++) {
		struct sym_cand cur = c[i];

		cur.end = cur.size ? cur.start + cur.size : cur.sec_end;
		if (i + 1 < n && c[i + 1].start < cur.end)
			cur.end = c[i + 1].start;
		if (cur.end <= cur.start)
			continue;
		c[kept++] = cur;
	}
	return kept;
}

static int elf_syms__read_symbols(struct elf_syms *es, const struct elf_image *img)
{
	Elf_Data *symdata, *strdata;
	struct sym_cand *cands = NULL;
	size_t nsyms, count = 0, n = 0, i, names_len = 0;
	Elf64_Shdr sh, str;
	const char *strtab;
	Elf *elf;
	char *p;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_memory((char *)img->buf, img->size);
	if (!elf)
		return -EINVAL;
	err = -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64)
		goto out_end_elf;

	elf_image__shdr(img, img->symtab_idx, &sh);
	elf_image__shdr(img, img->strtab_idx, &str);
	symdata = elf_getdata(elf_getscn(elf, img->symtab_idx), NULL);
	strdata = elf_getdata(elf_getscn(elf, img->strtab_idx), NULL);
	if (!symdata || !strdata || !symdata->d_buf || !strdata->d_buf ||
	    symdata->d_size != sh.sh_size || strdata->d_size != str.sh_size)
		goto out_end_elf;
	strtab = strdata->d_buf;
	if (strtab[strdata->d_size - 1] != '\0')
		goto out_end_elf;
	nsyms = symdata->d_size / sizeof(Elf64_Sym);

	/* count, then fill: the table size says nothing about how many we keep */
	for (i = 1; i < nsyms; i++) {
		struct sym_cand cand;
		GElf_Sym sym;
		int ret;

		if (!gelf_getsym(symdata, i, &sym))
			goto out_end_elf;
		ret = sym_cand__init(&cand, &sym, img, strtab, strdata->d_size);
		if (ret < 0)
			goto out_end_elf;
		count += ret;
		if (count > ELF_SYMS_MAX_SYMBOLS)
			goto out_end_elf;
	}
	err = 0;
	if (!count)
		goto out_end_elf;
	err = -ENOMEM;
	cands = calloc(count, sizeof(*cands));
	if (!cands)
		goto out_end_elf;
	/* the image is private, so this pass sees what the first one did */
	for (i = 1; i < nsyms && n < count; i++) {
		GElf_Sym sym;

		if (gelf_getsym(symdata, i, &sym))
			n += sym_cand__init(&cands[n], &sym, img, strtab, strdata->d_size) == 1;
	}

	n = sym_cands__settle(cands, n);
	err = 0;
	if (!n)
		goto out_free_cands;
	for (i = 0; i < n; i++)
		names_len += cands[i].len + 1;
	err = -ENOMEM;
	es->syms = calloc(n, sizeof(*es->syms));
	es->names = malloc(names_len);
	if (!es->syms || !es->names)
		goto out_free_cands;
	es->names_len = names_len;
	p = es->names;
	for (i = 0; i < n; i++) {
		memcpy(p, cands[i].name, cands[i].len);
		p[cands[i].len] = '\0';
		es->syms[i].start = cands[i].start;
		es->syms[i].end = cands[i].end;
		es->syms[i].name = p;
		p += cands[i].len + 1;
	}
	es->nr_syms = n;
	err = 0;

out_free_cands:
	free(cands);
out_end_elf:
	elf_end(elf);
	return err;
}

/*
 * .gnu_debuglink: the debug file's name, NUL, padding to 4, its CRC32.  The
 * name is a file name, looked up in a few directories (symbols/debug_file.h):
 * one with a '/' or that is "." or ".." is ignored, as is a malformed section.
 */
static int elf_syms__read_debuglink(struct elf_syms *es, struct elf_image *img,
				    const struct elf_src *src)
{
	const char *name;
	size_t len, crc_off;
	Elf64_Shdr sh = {0};
	int idx, err;

	idx = elf_image__find_section(img, src, ".gnu_debuglink", &sh);
	if (idx <= 0)
		return idx;
	if (sh.sh_size < 8 || sh.sh_size > sizeof(es->debuglink) + 8 ||
	    !range_ok(sh.sh_offset, sh.sh_size, img->size))
		return 0;
	err = elf_image__load(img, src, sh.sh_offset, sh.sh_size);
	if (err)
		return err;
	name = (const char *)img->buf + sh.sh_offset;
	len = strnlen(name, sh.sh_size - 4);
	crc_off = (len + 1 + 3) & ~(size_t)3;
	if (!len || len > NAME_MAX || crc_off + 4 > sh.sh_size || memchr(name, '/', len) ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	memcpy(es->debuglink, name, len);
	es->debuglink[len] = '\0';
	memcpy(&es->debuglink_crc, name + crc_off, sizeof(es->debuglink_crc));
	es->has_debuglink = true;
	return 0;
}

static struct elf_syms *elf_syms__open_src(const struct elf_src *src, unsigned int flags);

/*
 * Add @mini's symbols to @es's.  Both tables are sorted with distinct starts;
 * at an address both name, @es's own symbol (a .dynsym one) is kept.  Ranges
 * are cut where the next symbol starts, as sym_cands__settle() does, so a
 * size-0 .dynsym symbol no longer runs over a local function.  @mini's names
 * move to @es; @mini is freed.
 */
static int elf_syms__merge(struct elf_syms *es, struct elf_syms *mini)
{
	size_t i = 0, j = 0, n = 0;
	struct elf_sym *syms;

	if (!mini->nr_syms) {
		elf_syms__free(mini);
		return 0;
	}
	syms = calloc(es->nr_syms + mini->nr_syms, sizeof(*syms));
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
	free(es->syms);
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
 * the file: the compressed size and the decompressed size are capped, a bad
 * stream or inner file is recorded in es->minidebug, never fatal.
 * Return: 0, or -errno when reading the file failed or memory ran out.
 */
static int elf_syms__read_minidebug(struct elf_syms *es, struct elf_image *img,
				    const struct elf_src *src)
{
	struct elf_syms *mini;
	size_t out_len;
	Elf64_Shdr sh;
	void *out;
	int idx, err;

	idx = elf_image__find_section(img, src, ".gnu_debugdata", &sh);
	if (idx <= 0)
		return idx;
	es->minidebug = ELF_SYMS_MINIDEBUG_BAD;
	if (!sh.sh_size || !range_ok(sh.sh_offset, sh.sh_size, img->size))
		return 0;
	es->minidebug = ELF_SYMS_MINIDEBUG_TOO_BIG;
	if (sh.sh_size > ELF_SYMS_MAX_MINIDEBUG)
		return 0;
	err = elf_image__load(img, src, sh.sh_offset, sh.sh_size);
	if (err)
		return err;
	err = xz_decompress(img->buf + sh.sh_offset, sh.sh_size, ELF_SYMS_MAX_MINIDEBUG, &out,
			    &out_len);
	if (err == -ENOMEM)
		return err;
	if (err) {
		es->minidebug = err == -EFBIG ? ELF_SYMS_MINIDEBUG_TOO_BIG : ELF_SYMS_MINIDEBUG_BAD;
		return 0;
	}
	mini = elf_syms__open_src(&(struct elf_src){.buf = out, .fd = -1, .size = out_len},
				  ELF_SYMS_INNER);
	err = mini ? 0 : -errno;
	free(out);
	if (err == -ENOMEM)
		return err;
	es->minidebug = ELF_SYMS_MINIDEBUG_BAD;
	if (!mini)
		return 0;
	/* the symbols of another build would name the wrong code */
	if (es->has_build_id && mini->has_build_id && strcmp(es->build_id, mini->build_id)) {
		elf_syms__free(mini);
		return 0;
	}
	err = elf_syms__merge(es, mini);
	if (err)
		return err;
	es->minidebug = ELF_SYMS_MINIDEBUG_OK;
	return 0;
}

static struct elf_syms *elf_syms__open_src(const struct elf_src *src, unsigned int flags)
{
	struct elf_image img = {.size = src->size};
	struct elf_syms *es = NULL;
	int err;

	err = -EINVAL;
	if (src->size < sizeof(Elf64_Ehdr))
		goto out_err;
	err = -EFBIG;
	if (src->size > ELF_SYMS_MAX_FILE_SIZE || src->size > SIZE_MAX)
		goto out_err;
	err = -ENOMEM;
	img.buf = calloc(1, src->size);
	es = calloc(1, sizeof(*es));
	if (!img.buf || !es)
		goto out_free_image;

	err = elf_image__load_headers(&img, src);
	if (err)
		goto out_free_image;
	err = elf_image__load_symtab(&img, src);
	if (err)
		goto out_free_image;
	if (img.symtab_idx) {
		Elf64_Shdr sh;

		elf_image__shdr(&img, img.symtab_idx, &sh);
		es->has_symtab = sh.sh_type == SHT_SYMTAB;
	}
	es->is_dyn = img.ehdr.e_type == ET_DYN;
	err = elf_syms__read_segments(es, &img);
	if (err)
		goto out_free_image;
	err = elf_syms__read_build_id(es, &img, src);
	if (err)
		goto out_free_image;
	if (img.symtab_idx) {
		err = elf_syms__read_symbols(es, &img);
		if (err)
			goto out_free_image;
	}
	if (!(flags & ELF_SYMS_INNER)) {
		err = elf_syms__read_debuglink(es, &img, src);
		if (err)
			goto out_free_image;
		err = elf_syms__read_minidebug(es, &img, src);
		if (err)
			goto out_free_image;
	}
	free(img.buf);
	return es;

out_free_image:
	free(img.buf);
out_err:
	elf_syms__free(es);
	errno = -err;
	return NULL;
}

struct elf_syms *elf_syms__open_fd(int fd)
{
	struct elf_src src = {.fd = fd};
	struct stat st;

	if (fstat(fd, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	src.size = st.st_size;
	return elf_syms__open_src(&src, 0);
}

struct elf_syms *elf_syms__open_mem(const void *buf, size_t len)
{
	struct elf_src src = {.buf = buf, .fd = -1, .size = len};

	if (!buf) {
		errno = EINVAL;
		return NULL;
	}
	return elf_syms__open_src(&src, 0);
}

void elf_syms__free(struct elf_syms *es)
{
	if (!es)
		return;
	free(es->syms);
	free(es->names);
	free(es->mini_names);
	free(es->segs);
	free(es);
}

size_t elf_syms__bytes(const struct elf_syms *es)
{
	return sizeof(*es) + es->nr_syms * sizeof(es->syms[0]) + es->names_len +
	       es->mini_names_len + es->nr_segs * sizeof(es->segs[0]);
}

const char *elf_syms__lookup(const struct elf_syms *es, uint64_t vaddr, uint64_t *offset)
{
	const struct elf_sym *sym = RANGE_FIND(es->syms, es->nr_syms, start, end, vaddr);

	if (!sym)
		return NULL;
	if (offset)
		*offset = vaddr - sym->start;
	return sym->name;
}

int elf_syms__file_offset_to_vaddr(const struct elf_syms *es, uint64_t file_offset, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < es->nr_segs; i++) {
		const struct elf_seg *seg = &es->segs[i];

		if (file_offset >= seg->offset && file_offset - seg->offset < seg->filesz) {
			*vaddr = seg->vaddr + (file_offset - seg->offset);
			return 0;
		}
	}
	return -ENOENT;
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
