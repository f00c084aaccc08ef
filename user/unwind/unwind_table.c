// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind_table - rows of include/unwind.h from .eh_frame / .debug_frame.
 *
 * The flow: pick a source section; copy (or inflate) it into a private ELF
 * image holding only that section, followed by zero padding; cfi_check()
 * walks every entry exactly as libdw frames it and refuses the section if
 * libdw could be made to read out of bounds or allocate without limit;
 * dwarf_next_cfi() enumerates the FDEs, whose ranges we decode with their
 * CIE's 'R' encoding; the ranges are sorted and overlaps resolved; each FDE
 * is walked row by row with dwarf_cfi_addrframe(); each row's rules are
 * translated; equal neighbours are merged and rules deduplicated.
 *
 * Why a private image rather than libdw on the caller's Elf: libdw then sees
 * no .eh_frame_hdr (a hostile search table could point lookups at other
 * FDEs than the ones we enumerate), never reads the whole file (its
 * no-section-header path does), and its few reads past the end of a
 * truncated operand (libdw 0.188 reads a leb128's first byte and
 * DW_CFA_advance_loc1's operand unchecked) land in our padding.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/array.h"
#include "util/errmsg.h"
#include "unwind/unwind_table.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "unwind_table reads x86-64 (little-endian) CFI with host loads"
#endif

/* x86-64 DWARF register numbers */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA	16

#define SHT_X86_64_UNWIND_ 0x70000001 /* what some linkers give .eh_frame */
#define MAX_SEGMENTS	   (1u << 16)
/* libdw sizes a frame state by the largest register number a program names
 * (up to 2^27 of them, 16 bytes each) and copies it on every
 * DW_CFA_remember_state: we refuse programs beyond these */
#define CFI_MAX_REG   1023
#define CFI_MAX_DEPTH 64
#define IMAGE_PAD     64 /* zero bytes after the section in the private image */
#define LEB_MAX	      10 /* libdw reads at most this many bytes of a leb128 */

/* one executable PT_LOAD: [lo, hi) */
struct xseg {
	uint64_t lo;
	uint64_t hi;
};

/* what cfi_check() learnt about one CIE */
struct cie_info {
	uint64_t off;
	uint8_t fde_enc; /* 'R' encoding; DW_EH_PE_absptr without one */
	bool sized;	 /* 'z': FDEs carry a sized augmentation block */
};

/* one FDE kept for the walk */
struct fde_range {
	uint64_t lo;
	uint64_t hi;
	uint64_t insn_len; /* bytes of its entry: what one libdw evaluation may run */
	size_t order;	   /* position in the section: the tie-break of overlaps */
	unsigned int src;  /* index of its source: the cfi_src the walk evaluates it with */
};

struct tmp_row {
	uint32_t pc;
	struct unwind_rule rule;
};

/* one CIE or FDE as libdw frames it (dwarf_next_cfi) */
struct cfi_entry {
	uint64_t next;	     /* offset of the next entry */
	const uint8_t *body; /* after the CIE id / CIE pointer */
	const uint8_t *end;
	bool cie;
	uint64_t cie_off; /* FDE: its CIE's offset */
};

/* the CFI section being read, in its private image */
struct cfi_src {
	const char *name; /* ".eh_frame" | ".debug_frame" */
	bool eh;
	uint64_t addr; /* sh_addr: .eh_frame's pcrel base */
	uint8_t *image;
	size_t image_size;
	const uint8_t *data; /* the section, inside image */
	size_t size;
	struct cie_info *cies; /* sorted by offset */
	size_t nr_cies;
	Elf *elf;
	Dwarf *dwarf;
	Dwarf_CFI *cfi;
};

struct builder {
	char *err;
	size_t err_len;
	uint64_t base;
	struct xseg *xsegs;
	size_t nr_xsegs;
	struct fde_range *fdes; /* settled (sorted, disjoint) up to nr_settled */
	size_t nr_fdes;
	size_t nr_settled;
	size_t cap_fdes;
	struct tmp_row *rows;
	size_t nr_rows;
	size_t cap_rows;
	struct unwind_table_stats stats;
};

static const unsigned char elf64_lsb_ident[EI_NIDENT] = {
	ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
};

static const struct unwind_rule invalid_rule = {.cmd = UNWIND_CMD_INVALID};

static uint64_t rd_u(const uint8_t *p, unsigned int size)
{
	uint64_t v = 0;

	memcpy(&v, p, size); /* little-endian host */
	return v;
}

/*
 * A leb128 as libdw's get_[us]leb128() reads it: at most LEB_MAX bytes and
 * never at or past @end.  Return: bytes consumed; *@done false when no byte
 * ended it (libdw then yields UINT64_MAX / INT64_MAX).
 */
static size_t leb_read(const uint8_t *p, const uint8_t *end, uint64_t *val, bool sign, bool *done)
{
	uint64_t v = 0;
	size_t n = 0;

	*done = false;
	while (p + n < end && n < LEB_MAX) {
		uint8_t b = p[n];

		v |= (uint64_t)(b & 0x7f) << (7 * n);
		n++;
		if (!(b & 0x80)) {
			if (sign && (b & 0x40) && 7 * n < 64)
				v |= ~0ULL << (7 * n);
			*done = true;
			break;
		}
	}
	*val = *done ? v : (sign ? (uint64_t)INT64_MAX : UINT64_MAX);
	return n;
}

/*
 * Read a leb128 operand of a CFA program at *@p.  Return: false when it is
 * truncated by @end: libdw's program pointer is then at or past the end and
 * it executes nothing more of this program.
 */
static bool op_leb(const uint8_t **p, const uint8_t *end, uint64_t *val, bool sign)
{
	bool done;
	size_t n = leb_read(*p, end, val, sign, &done);

	if (!done && n < LEB_MAX)
		return false;
	*p += n;
	return true;
}

/*
 * libdw's encoded_value_size(): the size of a DW_EH_PE_* value at @p, 0 for
 * omit, unknown formats and unterminated leb128s (which scan to @sec_end).
 */
static size_t enc_size_libdw(uint8_t enc, const uint8_t *p, const uint8_t *sec_end)
{
	if (enc == DW_EH_PE_omit)
		return 0;
	switch (enc & 0x07) {
	case DW_EH_PE_udata2:
		return 2;
	case DW_EH_PE_udata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_absptr:
		return 8;
	case DW_EH_PE_uleb128:
		for (const uint8_t *q = p; p && q < sec_end;)
			if (*q++ & 0x80u)
				return q - p;
		return 0;
	default:
		return 0;
	}
}

/*
 * The size of a value read by libdw's read_encoded_value() with @enc (an
 * FDE's addresses, DW_CFA_set_loc).  Return: the size, 0 when libdw would
 * fail (unknown format or application) or when the application is
 * DW_EH_PE_aligned, whose padding depends on the load address.
 */
static size_t enc_value_size(uint8_t enc, const uint8_t *p, const uint8_t *end)
{
	uint64_t v;
	bool done;

	if ((enc & 0x70) > DW_EH_PE_funcrel)
		return 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: /* libdw reads it as udata8 on ELFCLASS64 */
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		return leb_read(p, end, &v, false, &done);
	default:
		return 0;
	}
}

/*
 * Decode an address-like value with @enc at *@p, as libdw does for an FDE's
 * initial_location / address_range.  @pc_base is the vaddr of the byte at
 * the start of the section (pcrel).  Return: 0, -EINVAL when libdw could not
 * read it either, -ENOTSUP for encodings libdw reads but we do not use
 * (textrel, datarel, funcrel, indirect: libdw adds 0 or dereferences).
 */
static int enc_read(const uint8_t **p, const uint8_t *end, uint8_t enc, const uint8_t *sec,
		    uint64_t pc_base, uint64_t *val)
{
	size_t size = enc_value_size(enc, *p, end);
	uint64_t v;
	bool done;

	if (!size || size > (size_t)(end - *p))
		return -EINVAL;
	switch (enc & 0x0f) {
	case DW_EH_PE_uleb128:
		leb_read(*p, end, &v, false, &done);
		break;
	case DW_EH_PE_sleb128:
		leb_read(*p, end, &v, true, &done);
		break;
	case DW_EH_PE_sdata2:
		v = (uint64_t)(int64_t)(int16_t)rd_u(*p, 2);
		break;
	case DW_EH_PE_sdata4:
		v = (uint64_t)(int64_t)(int32_t)rd_u(*p, 4);
		break;
	default:
		v = rd_u(*p, size);
		break;
	}
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		v += pc_base + (uint64_t)(*p - sec);
	*p += size;
	if ((enc & 0x70) != DW_EH_PE_absptr && (enc & 0x70) != DW_EH_PE_pcrel)
		return -ENOTSUP;
	if (enc & DW_EH_PE_indirect)
		return -ENOTSUP;
	*val = v;
	return 0;
}

/*
 * Decide whether libdw may execute the CFA program [@p, @end): refuse
 * register numbers above CFI_MAX_REG and DW_CFA_remember_state nesting
 * deeper than CFI_MAX_DEPTH.  Operands are decoded as libdw's execute_cfi()
 * decodes them, so the two stay in step; the walk stops where libdw stops
 * (unknown opcode, failed assertion, truncated operand).  Nothing is
 * evaluated: libdw remains the only CFA interpreter.
 */
static bool cfa_program_ok(const uint8_t *p, const uint8_t *end, uint8_t fde_enc)
{
	unsigned int depth = 0;
	uint64_t reg, v;

#define LEB(var, sign)                                                                             \
	do {                                                                                       \
		if (!op_leb(&p, end, &(var), sign))                                                \
			return true;                                                               \
	} while (0)
#define NEED(n)                                                                                    \
	do {                                                                                       \
		if ((size_t)(end - p) < (size_t)(n))                                               \
			return true;                                                               \
	} while (0)
#define REG(var)                                                                                   \
	do {                                                                                       \
		LEB(var, false);                                                                   \
		if ((var) > CFI_MAX_REG)                                                           \
			return false;                                                              \
	} while (0)

	while (p < end) {
		uint8_t op = *p++;

		/* advance_loc, offset (+uleb), restore: their register is < 64 */
		if (op >= 0x40) {
			if ((op & 0xc0) == DW_CFA_offset)
				LEB(v, false);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_GNU_window_save: /* registers 8..31 */
			break;
		case DW_CFA_set_loc: {
			size_t n;

			if ((fde_enc & 0x70) == DW_EH_PE_aligned)
				return false; /* its size depends on the address: cannot follow */
			n = enc_value_size(fde_enc, p, end);
			if (!n || n > (size_t)(end - p))
				return true;
			p += n;
			break;
		}
		case DW_CFA_advance_loc1:
			NEED(1);
			p += 1;
			break;
		case DW_CFA_advance_loc2:
			NEED(2);
			p += 2;
			break;
		case DW_CFA_advance_loc4:
			NEED(4);
			p += 4;
			break;
		case DW_CFA_MIPS_advance_loc8:
			NEED(8);
			p += 8;
			break;
		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
			LEB(v, false);
			NEED(1);
			LEB(v, op == DW_CFA_def_cfa_sf);
			break;
		case DW_CFA_def_cfa_register:
		case DW_CFA_def_cfa_offset:
		case DW_CFA_GNU_args_size:
			LEB(v, false);
			break;
		case DW_CFA_def_cfa_offset_sf:
			LEB(v, true);
			break;
		case DW_CFA_def_cfa_expression:
			LEB(v, false);
			if (v > (uint64_t)(end - p))
				return true;
			p += v;
			break;
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_restore_extended:
			REG(reg);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_GNU_negative_offset_extended:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_register:
			REG(reg);
			NEED(1);
			LEB(v, op == DW_CFA_val_offset_sf);
			break;
		case DW_CFA_offset_extended_sf:
			REG(reg);
			LEB(v, true);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			REG(reg);
			if (op == DW_CFA_expression)
				NEED(1);
			LEB(v, false);
			if (v > (uint64_t)(end - p))
				return true;
			p += v;
			break;
		case DW_CFA_remember_state:
			if (++depth > CFI_MAX_DEPTH)
				return false;
			break;
		case DW_CFA_restore_state:
			if (!depth)
				return true; /* libdw fails here */
			depth--;
			break;
		default:
			return true; /* libdw fails here */
		}
	}
	return true;
#undef LEB
#undef NEED
#undef REG
}

/*
 * Frame the entry at @off as dwarf_next_cfi() does.
 * Return: 1 and @e filled, 0 at the end (libdw's "no more entries": fewer
 * than 5 bytes left, or a zero-length terminator), -EINVAL when libdw could
 * not frame it.
 */
static int cfi_entry__read(struct cfi_entry *e, const struct cfi_src *src, uint64_t off)
{
	const uint8_t *sec = src->data;
	uint64_t len, hdr = 4, idsz = 4, id, pos;

	e->cie_off = 0;
	if (off >= src->size || src->size - off <= 4)
		return 0;
	len = rd_u(sec + off, 4);
	if (len == 0xffffffffu) {
		if (src->size - off - 4 < 8)
			return -EINVAL;
		len = rd_u(sec + off + 4, 8);
		hdr = 12;
		idsz = 8;
	}
	if (len == 0)
		return 0;
	if (len > src->size - off - hdr || len < idsz + 1)
		return -EINVAL;
	pos = off + hdr;
	e->next = pos + len;
	id = rd_u(sec + pos, idsz);
	e->body = sec + pos + idsz;
	e->end = sec + e->next;
	if (src->eh) {
		e->cie = id == 0;
		if (!e->cie) {
			if (id > pos || pos <= idsz)
				return -EINVAL;
			e->cie_off = pos - id;
		}
	} else {
		e->cie = id == (idsz == 4 ? 0xffffffffu : UINT64_MAX);
		e->cie_off = id;
	}
	return 1;
}

/*
 * Parse a CIE's header as dwarf_next_cfi() and libdw's intern_new_cie() do,
 * bounds-checking what they do not: libdw 0.188 walks the augmentation
 * string reading one data byte per 'R'/'L'/'P' without checking the data's
 * size, so only "" and "z" followed by R, P, L, S are accepted.
 * Return: 0 and @ci, *@insn (start of the initial instructions) filled, or
 * -EINVAL.
 */
static int cie_parse(const struct cfi_src *src, const struct cfi_entry *e, struct cie_info *ci,
		     const uint8_t **insn)
{
	const uint8_t *b = e->body, *end = e->end, *aug, *nul, *q, *aug_end;
	const uint8_t *sec_end = src->data + src->size;
	uint8_t version;
	uint64_t v, aug_size;
	bool done;
	size_t n;

	version = *b++; /* the entry is at least id + 1 byte long */
	if (version != 1 && version != 3 && version != 4)
		return -EINVAL;
	aug = b;
	nul = memchr(b, '\0', end - b);
	if (!nul)
		return -EINVAL;
	b = nul + 1;
	ci->sized = aug[0] == 'z';
	ci->fde_enc = DW_EH_PE_absptr;
	if (aug[0] && !ci->sized)
		return -EINVAL;
	for (q = aug + ci->sized; q < nul; q++)
		if (!strchr("RPLS", *q))
			return -EINVAL;
	if (version == 4) {
		if (end - b < 5 || b[0] != 8 || b[1] != 0)
			return -EINVAL; /* address size 8, no segment selector */
		b += 2;
	}
	/* code and data alignment factors, return address register */
	for (int i = 0; i < 3; i++) {
		if (b >= end)
			return -EINVAL;
		if (i == 2 && version == 1) {
			b++;
			continue;
		}
		b += leb_read(b, end, &v, i == 1, &done);
	}
	*insn = b;
	if (!ci->sized)
		return 0;
	if (b >= end)
		return -EINVAL;
	b += leb_read(b, end, &aug_size, false, &done);
	if (!done || aug_size > (uint64_t)(end - b))
		return -EINVAL;
	aug_end = b + aug_size;
	for (q = aug + 1; q < nul; q++) {
		uint8_t enc;

		if (*q == 'S')
			continue;
		if (b >= aug_end)
			return -EINVAL;
		enc = *b++;
		if (*q == 'R') {
			ci->fde_enc = enc;
		} else if (*q == 'P') {
			n = enc_size_libdw(enc, b, sec_end);
			if (n > (size_t)(aug_end - b))
				return -EINVAL;
			b += n;
		}
	}
	*insn = aug_end;
	return 0;
}

static int cie_cmp(const void *key, const void *elem)
{
	uint64_t off = *(const uint64_t *)key;
	const struct cie_info *ci = elem;

	return off < ci->off ? -1 : off > ci->off;
}

static const struct cie_info *cfi_src__cie(const struct cfi_src *src, uint64_t off)
{
	if (!src->nr_cies)
		return NULL;
	return bsearch(&off, src->cies, src->nr_cies, sizeof(*src->cies), cie_cmp);
}

/*
 * Skip an FDE's initial_location, address_range and augmentation block as
 * libdw's intern_fde() does.  Return: 0 and *@insn set, or -EINVAL when
 * libdw would fail to read it.
 */
static int fde_header_skip(const struct cfi_entry *e, const struct cie_info *ci,
			   const uint8_t **insn)
{
	const uint8_t *p = e->body, *end = e->end;
	uint64_t v;
	bool done;
	size_t n;

	if ((ci->fde_enc & 0x70) == DW_EH_PE_aligned)
		return -EINVAL;
	for (int i = 0; i < 2; i++) {
		n = enc_value_size(i ? ci->fde_enc & 0x0f : ci->fde_enc, p, end);
		if (!n || n > (size_t)(end - p))
			return -EINVAL;
		p += n;
	}
	if (ci->sized) {
		if (p >= end)
			return -EINVAL;
		p += leb_read(p, end, &v, false, &done);
		if (!done || v > (uint64_t)(end - p))
			return -EINVAL;
		p += v;
	}
	*insn = p;
	return 0;
}

/*
 * Check that libdw can be let loose on @src: every entry it may frame (all
 * of them, up to the terminator) is well framed, every CIE has a supported
 * augmentation, every FDE names such a CIE and has a readable header, and
 * no program passes cfa_program_ok().  Fills src->cies.
 */
static int cfi_check(struct builder *bld, struct cfi_src *src)
{
	struct cfi_entry e;
	size_t cap = 0, entries = 0;
	uint64_t off;
	int ret, pass;

	for (pass = 0; pass < 2; pass++) {
		for (off = 0;; off = e.next) {
			const struct cie_info *ci;
			struct cie_info cie;
			const uint8_t *insn;

			ret = cfi_entry__read(&e, src, off);
			if (ret < 0) {
				set_err(bld->err, bld->err_len, "%s: malformed entry at %#lx",
					src->name, (unsigned long)off);
				return ret;
			}
			if (!ret)
				break;
			if (pass == 0 && ++entries > UNWIND_TABLE_MAX_FDES) {
				set_err(bld->err, bld->err_len, "%s: more than %u entries",
					src->name, UNWIND_TABLE_MAX_FDES);
				return -E2BIG;
			}
			if (e.cie != (pass == 0))
				continue;
			if (e.cie) {
				if (cie_parse(src, &e, &cie, &insn) < 0) {
					set_err(bld->err, bld->err_len,
						"%s: CIE at %#lx: bad or unsupported augmentation",
						src->name, (unsigned long)off);
					return -EINVAL;
				}
				ci = &cie;
				cie.off = off;
				if (array_grow((void **)&src->cies, &cap, src->nr_cies + 1,
					       sizeof(*src->cies), 64))
					goto out_nomem;
				src->cies[src->nr_cies++] = cie;
			} else {
				ci = cfi_src__cie(src, e.cie_off);
				if (!ci || fde_header_skip(&e, ci, &insn) < 0) {
					set_err(bld->err, bld->err_len,
						"%s: FDE at %#lx: no CIE at %#lx or bad header",
						src->name, (unsigned long)off,
						(unsigned long)e.cie_off);
					return -EINVAL;
				}
			}
			if (!cfa_program_ok(insn, e.end, ci->fde_enc)) {
				set_err(bld->err, bld->err_len,
					"%s: entry at %#lx: register or nesting too large",
					src->name, (unsigned long)off);
				return -EINVAL;
			}
		}
	}
	return 0;

out_nomem:
	set_err(bld->err, bld->err_len, "out of memory");
	return -ENOMEM;
}

static bool builder__in_text(const struct builder *bld, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < bld->nr_xsegs; i++)
		if (lo >= bld->xsegs[i].lo && hi <= bld->xsegs[i].hi)
			return true;
	return false;
}

static int fde_cmp_lo(const void *key, const void *elem)
{
	const struct fde_range *k = key, *f = elem;

	if (k->hi <= f->lo)
		return -1;
	return k->lo >= f->hi;
}

/* does [lo, hi) touch an FDE of an earlier source? */
static bool builder__shadowed(const struct builder *bld, uint64_t lo, uint64_t hi)
{
	struct fde_range key = {.lo = lo, .hi = hi};

	return bld->nr_settled &&
	       bsearch(&key, bld->fdes, bld->nr_settled, sizeof(key), fde_cmp_lo) != NULL;
}

/*
 * Enumerate the FDEs with dwarf_next_cfi() and append those inside the text
 * that no earlier source covers: a later source only fills the gaps.
 */
static int fdes_collect(struct builder *bld, const struct cfi_src *src, unsigned int src_idx)
{
	Elf_Data d = {.d_buf = (void *)src->data, .d_size = src->size, .d_type = ELF_T_BYTE};
	Dwarf_CFI_Entry entry;
	Dwarf_Off off = 0, next;
	size_t order = 0;
	int ret;

	for (;; off = next) {
		const struct cie_info *ci;
		const uint8_t *p;
		uint64_t lo = 0, range = 0;

		ret = dwarf_next_cfi(elf64_lsb_ident, &d, src->eh, off, &next, &entry);
		if (ret > 0)
			break;
		if (ret < 0 || next <= off || next > src->size) {
			/* cfi_check() framed it: libdw disagreeing is a bug on one side */
			set_err(bld->err, bld->err_len, "%s: libdw cannot read the entry at %#lx",
				src->name, (unsigned long)off);
			return -EINVAL;
		}
		if (dwarf_cfi_cie_p(&entry))
			continue;
		order++;
		ci = cfi_src__cie(src, entry.fde.CIE_pointer);
		p = entry.fde.start;
		if (!ci || p < src->data || entry.fde.end > src->data + src->size ||
		    p > entry.fde.end) {
			set_err(bld->err, bld->err_len, "%s: FDE at %#lx: unexpected CIE pointer",
				src->name, (unsigned long)off);
			return -EINVAL;
		}
		ret = enc_read(&p, entry.fde.end, ci->fde_enc, src->data, src->addr, &lo);
		if (!ret)
			ret = enc_read(&p, entry.fde.end, ci->fde_enc & 0x0f, src->data, 0, &range);
		if (ret == -ENOTSUP) {
			bld->stats.fdes_undecodable++;
			continue;
		}
		if (ret < 0) {
			set_err(bld->err, bld->err_len, "%s: FDE at %#lx: bad address encoding",
				src->name, (unsigned long)off);
			return -EINVAL;
		}
		if (!range || lo > UINT64_MAX - range || !builder__in_text(bld, lo, lo + range)) {
			bld->stats.fdes_outside++;
			continue;
		}
		if (builder__shadowed(bld, lo, lo + range)) {
			bld->stats.fdes_shadowed++;
			continue;
		}
		if (array_grow((void **)&bld->fdes, &bld->cap_fdes, bld->nr_fdes + 1,
			       sizeof(*bld->fdes), 256)) {
			set_err(bld->err, bld->err_len, "out of memory");
			return -ENOMEM;
		}
		bld->fdes[bld->nr_fdes++] = (struct fde_range){
			.lo = lo,
			.hi = lo + range,
			.insn_len = (uint64_t)(entry.fde.end - entry.fde.start),
			.order = order,
			.src = src_idx,
		};
	}
	return 0;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* sort by start; an FDE overlapping the ones before it loses the overlap */
static void fdes_settle(struct builder *bld)
{
	size_t i, kept = 0;

	qsort(bld->fdes, bld->nr_fdes, sizeof(*bld->fdes), fde_cmp);
	for (i = 0; i < bld->nr_fdes; i++) {
		struct fde_range f = bld->fdes[i];

		if (kept && f.lo < bld->fdes[kept - 1].hi) {
			bld->stats.fdes_overlap++;
			if (f.hi <= bld->fdes[kept - 1].hi)
				continue;
			f.lo = bld->fdes[kept - 1].hi;
		}
		bld->fdes[kept++] = f;
	}
	bld->nr_fdes = kept;
	bld->nr_settled = kept;
}

static bool op_is_breg(const Dwarf_Op *op, unsigned int reg, int64_t *off)
{
	if (op->atom == DW_OP_breg0 + reg) {
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx && op->number == reg) {
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

/* a constant push: DW_OP_lit0..31, DW_OP_const*u / const*s */
static bool op_const(const Dwarf_Op *op, uint64_t *v)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
		*v = op->atom - DW_OP_lit0;
		return true;
	}
	switch (op->atom) {
	case DW_OP_const1u:
	case DW_OP_const2u:
	case DW_OP_const4u:
	case DW_OP_const8u:
	case DW_OP_constu:
	case DW_OP_const1s:
	case DW_OP_const2s:
	case DW_OP_const4s:
	case DW_OP_const8s:
	case DW_OP_consts:
		*v = op->number;
		return true;
	default:
		return false;
	}
}

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * The lazy-binding PLT's CFA, as gcc/ld emit it:
 *   DW_OP_breg7 off; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_litN;
 *   DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. rsp + off + ((rip & 15) >= N ? 8 : 0); constants may come in any
 * DW_OP_lit / DW_OP_const form.
 */
static bool cfa_is_plt(const Dwarf_Op *ops, size_t n, int64_t *off, uint64_t *thresh)
{
	int64_t rip_off;
	uint64_t mask, shift;

	return n == 9 && op_is_breg(&ops[0], REG_RSP, off) &&
	       op_is_breg(&ops[1], REG_RA, &rip_off) && rip_off == 0 && op_const(&ops[2], &mask) &&
	       mask == 15 && ops[3].atom == DW_OP_and && op_const(&ops[4], thresh) &&
	       *thresh <= 16 && ops[5].atom == DW_OP_ge && op_const(&ops[6], &shift) &&
	       shift == 3 && ops[7].atom == DW_OP_shl && ops[8].atom == DW_OP_plus;
}

static enum unwind_unsup rule_cfa(Dwarf_Frame *fr, struct unwind_rule *r)
{
	uint64_t thresh;
	Dwarf_Op *ops;
	int64_t off;
	size_t n;

	if (dwarf_frame_cfa(fr, &ops, &n) != 0)
		return UNWIND_UNSUP_LIBDW;
	if (!n)
		return UNWIND_UNSUP_CFA_UNDEF;
	/* DW_CFA_def_cfa gives DW_OP_bregx reg off; an expression DW_OP_bregN */
	if (n == 1 && op_is_breg(&ops[0], REG_RSP, &off)) {
		r->cmd = UNWIND_CMD_CFA_RSP;
	} else if (n == 1 && op_is_breg(&ops[0], REG_RBP, &off)) {
		r->cmd = UNWIND_CMD_CFA_RBP;
	} else if (n == 1 && (ops[0].atom == DW_OP_bregx ||
			      (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
		return UNWIND_UNSUP_CFA_REG;
	} else if (n == 2 && op_is_breg(&ops[0], REG_RBP, &off) && ops[1].atom == DW_OP_deref) {
		r->cmd = UNWIND_CMD_CFA_RBP_DEREF;
	} else if (cfa_is_plt(ops, n, &off, &thresh)) {
		r->cmd = UNWIND_CMD_PLT;
		r->rbp_off = (int32_t)thresh;
	} else {
		return UNWIND_UNSUP_CFA_EXPR;
	}
	if (!fits_s32(off))
		return UNWIND_UNSUP_OFFSET;
	r->cfa_off = (int32_t)off;
	return UNWIND_UNSUP_MAX;
}

/* DW_CFA_offset/val_offset come back as DW_OP_call_frame_cfa [DW_OP_plus_uconst off] */
static bool ops_cfa_plus(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (!ops || n < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (n == 1) {
		*off = 0;
		return true;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * The caller's rbp.  same_value (or unmentioned: libdw's x86-64 ABI rules
 * make rbp same_value) -> SAME; DW_CFA_offset -> CFA; DW_CFA_expression
 * DW_OP_breg6 off (libdw prepends DW_OP_call_frame_cfa, the CFA the
 * expression starts with) -> RBP; undefined -> UNDEFINED.  Anything else
 * (DW_CFA_register, val_offset, other expressions) makes the row
 * UNSUPPORTED: the unwinder could not find the caller's rbp.
 */
static enum unwind_unsup rule_rbp(Dwarf_Frame *fr, struct unwind_rule *r)
{
	Dwarf_Op mem[3], *ops;
	int64_t off;
	size_t n;

	if (dwarf_frame_register(fr, REG_RBP, mem, &ops, &n) != 0)
		return UNWIND_UNSUP_LIBDW;
	if (!ops) {
		r->rbp = UNWIND_RBP_SAME;
		return UNWIND_UNSUP_MAX;
	}
	if (!n) {
		r->rbp = UNWIND_RBP_UNDEFINED;
		return UNWIND_UNSUP_MAX;
	}
	if (ops_cfa_plus(ops, n, &off))
		r->rbp = UNWIND_RBP_CFA;
	else if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
		 op_is_breg(&ops[1], REG_RBP, &off))
		r->rbp = UNWIND_RBP_RBP;
	else
		return UNWIND_UNSUP_RBP;
	if (!fits_s32(off))
		return UNWIND_UNSUP_OFFSET;
	r->rbp_off = (int32_t)off;
	return UNWIND_UNSUP_MAX;
}

static enum unwind_unsup rule_translate(Dwarf_Frame *fr, int ra_reg, bool signal,
					struct unwind_rule *r)
{
	Dwarf_Op mem[3], *ops;
	enum unwind_unsup why;
	int64_t off;
	size_t n;

	if (signal) {
		r->cmd = UNWIND_CMD_SIGNAL;
		return UNWIND_UNSUP_MAX;
	}
	if (ra_reg != REG_RA)
		return UNWIND_UNSUP_RA;
	if (dwarf_frame_register(fr, REG_RA, mem, &ops, &n) != 0)
		return UNWIND_UNSUP_LIBDW;
	if (ops && !n) {
		r->cmd = UNWIND_CMD_END;
		return UNWIND_UNSUP_MAX;
	}
	if (!ops_cfa_plus(ops, n, &off) || n != 2 || off != -8)
		return UNWIND_UNSUP_RA;
	/* libdw's x86-64 ABI rules: rsp = CFA (DW_CFA_val_offset rsp, 0) */
	if (dwarf_frame_register(fr, REG_RSP, mem, &ops, &n) != 0)
		return UNWIND_UNSUP_LIBDW;
	if (!(ops && n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	      ops[1].atom == DW_OP_stack_value))
		return UNWIND_UNSUP_RSP;

	why = rule_cfa(fr, r);
	if (why != UNWIND_UNSUP_MAX)
		return why;
	why = rule_rbp(fr, r);
	/* the PLT command keeps its threshold in rbp_off: rbp must be unchanged */
	if (why == UNWIND_UNSUP_MAX && r->cmd == UNWIND_CMD_PLT && r->rbp != UNWIND_RBP_SAME)
		why = UNWIND_UNSUP_RBP;
	return why;
}

/*
 * Translate the row libdw computed into @r.  Return: UNWIND_UNSUP_MAX when
 * it is expressible, else why it is not (@r is then UNSUPPORTED, all other
 * fields zero).
 */
static enum unwind_unsup rule_from_frame(Dwarf_Frame *fr, int ra_reg, bool signal,
					 struct unwind_rule *r)
{
	enum unwind_unsup why;

	memset(r, 0, sizeof(*r));
	why = rule_translate(fr, ra_reg, signal, r);
	if (why != UNWIND_UNSUP_MAX) {
		memset(r, 0, sizeof(*r));
		r->cmd = UNWIND_CMD_UNSUPPORTED;
	}
	return why;
}

static int builder__emit(struct builder *bld, uint64_t vaddr, const struct unwind_rule *rule)
{
	if (bld->nr_rows >= UNWIND_TABLE_MAX_ROWS) {
		set_err(bld->err, bld->err_len, "more than %u rows", UNWIND_TABLE_MAX_ROWS);
		return -E2BIG;
	}
	if (array_grow((void **)&bld->rows, &bld->cap_rows, bld->nr_rows + 1, sizeof(*bld->rows),
		       1024)) {
		set_err(bld->err, bld->err_len, "out of memory");
		return -ENOMEM;
	}
	bld->rows[bld->nr_rows].pc = (uint32_t)(vaddr - bld->base);
	bld->rows[bld->nr_rows].rule = *rule;
	bld->nr_rows++;
	return 0;
}

static int builder__emit_unsup(struct builder *bld, uint64_t vaddr, enum unwind_unsup why)
{
	struct unwind_rule r = {.cmd = UNWIND_CMD_UNSUPPORTED};

	bld->stats.unsup[why]++;
	return builder__emit(bld, vaddr, &r);
}

/*
 * Walk one FDE's rows: ask libdw for the row at @addr, emit it, continue at
 * its end.  libdw reports start <= addr < end; anything else stops the walk,
 * so it always advances.
 */
static int builder__walk_fde(struct builder *bld, const struct cfi_src *src,
			     const struct fde_range *f)
{
	uint64_t addr = f->lo, fde_work = 0, cost = f->insn_len + 16;
	int ret;

	while (addr < f->hi) {
		Dwarf_Addr start, end;
		struct unwind_rule rule;
		enum unwind_unsup why;
		Dwarf_Frame *fr;
		bool signal;
		int ra_reg;

		if (fde_work + cost > UNWIND_TABLE_FDE_WORK)
			return builder__emit_unsup(bld, addr, UNWIND_UNSUP_BUDGET);
		fde_work += cost;
		bld->stats.work += cost;
		if (bld->stats.work > UNWIND_TABLE_TOTAL_WORK) {
			set_err(bld->err, bld->err_len,
				"%s: evaluating the CFI takes more than %u program bytes",
				src->name, UNWIND_TABLE_TOTAL_WORK);
			return -E2BIG;
		}

		if (dwarf_cfi_addrframe(src->cfi, addr, &fr) != 0)
			return builder__emit_unsup(bld, addr, UNWIND_UNSUP_LIBDW);
		ra_reg = dwarf_frame_info(fr, &start, &end, &signal);
		if (start > addr || end <= addr) {
			free(fr);
			return builder__emit_unsup(bld, addr, UNWIND_UNSUP_LIBDW);
		}
		bld->stats.libdw_rows++;
		why = rule_from_frame(fr, ra_reg, signal, &rule);
		free(fr);
		if (why != UNWIND_UNSUP_MAX)
			bld->stats.unsup[why]++;
		ret = builder__emit(bld, addr, &rule);
		if (ret)
			return ret;
		addr = end < f->hi ? end : f->hi;
	}
	return 0;
}

static int builder__walk(struct builder *bld, const struct cfi_src *srcs)
{
	size_t i;
	int ret;

	bld->nr_rows = 0;
	if (bld->fdes[0].lo > bld->base) {
		ret = builder__emit(bld, bld->base, &invalid_rule);
		if (ret)
			return ret;
	}
	for (i = 0; i < bld->nr_fdes; i++) {
		ret = builder__walk_fde(bld, &srcs[bld->fdes[i].src], &bld->fdes[i]);
		if (ret)
			return ret;
		if (i + 1 == bld->nr_fdes || bld->fdes[i + 1].lo != bld->fdes[i].hi) {
			ret = builder__emit(bld, bld->fdes[i].hi, &invalid_rule);
			if (ret)
				return ret;
		}
	}
	bld->stats.fdes = bld->nr_fdes;
	for (i = 0; i < bld->nr_fdes; i++)
		bld->stats.covered_bytes += bld->fdes[i].hi - bld->fdes[i].lo;
	return 0;
}

static int rule_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct unwind_rule));
}

/* merge equal neighbours, deduplicate rules, fill @t */
static int builder__finish(struct builder *bld, struct unwind_table *t)
{
	struct tmp_row *rows = bld->rows;
	size_t i, n = 0, nr_rules = 0;

	/* pcs rise strictly by construction; a row at the same pc as the next
	 * covers nothing and goes */
	for (i = 0; i < bld->nr_rows; i++) {
		if (i + 1 < bld->nr_rows && rows[i + 1].pc <= rows[i].pc) {
			if (rows[i + 1].pc < rows[i].pc) {
				set_err(bld->err, bld->err_len,
					"internal error: rows out of order");
				return -EINVAL;
			}
			continue;
		}
		if (n && memcmp(&rows[n - 1].rule, &rows[i].rule, sizeof(rows[i].rule)) == 0)
			continue;
		rows[n++] = rows[i];
	}
	if (!n) {
		set_err(bld->err, bld->err_len, "no rows");
		return -ENODATA;
	}

	t->rules = malloc(n * sizeof(*t->rules));
	t->rows = malloc(n * sizeof(*t->rows));
	if (!t->rules || !t->rows) {
		set_err(bld->err, bld->err_len, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		t->rules[i] = rows[i].rule;
	qsort(t->rules, n, sizeof(*t->rules), rule_cmp);
	for (i = 0; i < n; i++)
		if (!nr_rules || rule_cmp(&t->rules[nr_rules - 1], &t->rules[i]) != 0)
			t->rules[nr_rules++] = t->rules[i];
	t->nr_rules = nr_rules;

	for (i = 0; i < n; i++) {
		const struct unwind_rule *r =
			bsearch(&rows[i].rule, t->rules, nr_rules, sizeof(*t->rules), rule_cmp);

		t->rows[i].pc = rows[i].pc;
		t->rows[i].rule = (uint32_t)(r - t->rules);
		bld->stats.cmd_rows[r->cmd]++;
	}
	t->nr_rows = n;
	t->base = bld->base;
	t->stats = bld->stats;
	return 0;
}

/* the lowest PT_LOAD and the executable ones */
static int builder__load_segments(struct builder *bld, Elf *elf)
{
	bool have_base = false;
	size_t phnum, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &phnum) != 0 || phnum > MAX_SEGMENTS) {
		set_err(bld->err, bld->err_len, "bad program headers");
		return -EINVAL;
	}
	bld->xsegs = calloc(phnum ? phnum : 1, sizeof(*bld->xsegs));
	if (!bld->xsegs) {
		set_err(bld->err, bld->err_len, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, i, &ph)) {
			set_err(bld->err, bld->err_len, "bad program header %zu", i);
			return -EINVAL;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		if (!have_base || ph.p_vaddr < bld->base)
			bld->base = ph.p_vaddr;
		have_base = true;
		if ((ph.p_flags & PF_X) && ph.p_memsz && ph.p_vaddr <= UINT64_MAX - ph.p_memsz) {
			bld->xsegs[bld->nr_xsegs].lo = ph.p_vaddr;
			bld->xsegs[bld->nr_xsegs].hi = ph.p_vaddr + ph.p_memsz;
			bld->stats.text_bytes += ph.p_memsz;
			bld->nr_xsegs++;
		}
	}
	if (!have_base) {
		set_err(bld->err, bld->err_len, "no PT_LOAD segment");
		return -EINVAL;
	}
	return 0;
}

static int elf_check_x86_64(Elf *elf, GElf_Ehdr *eh)
{
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, eh))
		return -EINVAL;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64)
		return -ENOTSUP;
	return 0;
}

static Elf_Scn *section_find(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0 || !shstrndx)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

static void cfi_src__release(struct cfi_src *src)
{
	if (src->cfi && src->eh)
		dwarf_cfi_end(src->cfi);
	if (src->dwarf)
		dwarf_end(src->dwarf);
	if (src->elf)
		elf_end(src->elf);
	free(src->image);
	free(src->cies);
	memset(src, 0, sizeof(*src));
}

/*
 * Allocate the private image: ELF header, the section's @len bytes at
 * offset 64 then IMAGE_PAD zeros, .shstrtab, three section headers.  The
 * caller fills src->data.
 */
static int cfi_src__alloc(struct cfi_src *src, size_t len)
{
	static const char strtab[] = "\0.eh_frame\0.debug_frame\0.shstrtab";
	size_t off_str, off_sh;
	Elf64_Shdr *sh;
	Elf64_Ehdr *eh;

	off_str = 64 + len + IMAGE_PAD;
	off_sh = (off_str + sizeof(strtab) + 7) & ~(size_t)7;
	src->image_size = off_sh + 3 * sizeof(Elf64_Shdr);
	src->image = calloc(1, src->image_size);
	if (!src->image)
		return -ENOMEM;
	eh = (Elf64_Ehdr *)src->image;
	memcpy(eh->e_ident, elf64_lsb_ident, sizeof(elf64_lsb_ident));
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_shoff = off_sh;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	memcpy(src->image + off_str, strtab, sizeof(strtab));
	sh = (Elf64_Shdr *)(src->image + off_sh);
	sh[1].sh_name = src->eh ? 1 : 11;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = src->eh ? SHF_ALLOC : 0;
	sh[1].sh_addr = src->addr;
	sh[1].sh_offset = 64;
	sh[1].sh_size = len;
	sh[1].sh_addralign = 8;
	sh[2].sh_name = 24;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = off_str;
	sh[2].sh_size = sizeof(strtab);
	sh[2].sh_addralign = 1;
	src->data = src->image + 64;
	src->size = len;
	return 0;
}

static int inflate_exact(uint8_t *dst, size_t dst_len, const uint8_t *in, size_t in_len)
{
	z_stream zs = {0};
	int ret;

	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)in_len;
	zs.next_out = dst;
	zs.avail_out = (uInt)dst_len;
	ret = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	return ret == Z_STREAM_END && zs.total_out == dst_len ? 0 : -EINVAL;
}

/*
 * Copy section @scn (named @name in the file) into src's private image,
 * inflating SHF_COMPRESSED and .zdebug_ sections (zlib only).
 */
static int cfi_src__load(struct builder *bld, struct cfi_src *src, Elf_Scn *scn,
			 const GElf_Shdr *sh, bool gnu_compressed)
{
	const uint8_t *raw;
	size_t raw_len, len;
	Elf_Data *d;
	int ret;

	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size != sh->sh_size) {
		set_err(bld->err, bld->err_len, "%s: cannot read the section", src->name);
		return -EINVAL;
	}
	raw = d->d_buf;
	raw_len = d->d_size;
	len = raw_len;
	if (sh->sh_flags & SHF_COMPRESSED) {
		Elf64_Chdr ch;

		if (raw_len < sizeof(ch)) {
			set_err(bld->err, bld->err_len, "%s: truncated compression header",
				src->name);
			return -EINVAL;
		}
		memcpy(&ch, raw, sizeof(ch));
		if (ch.ch_type != ELFCOMPRESS_ZLIB) {
			set_err(bld->err, bld->err_len, "%s: compression type %u not supported",
				src->name, ch.ch_type);
			return -ENOTSUP;
		}
		len = ch.ch_size;
		raw += sizeof(ch);
		raw_len -= sizeof(ch);
	} else if (gnu_compressed) {
		if (raw_len < 12 || memcmp(raw, "ZLIB", 4) != 0) {
			set_err(bld->err, bld->err_len, "%s: bad .zdebug header", src->name);
			return -EINVAL;
		}
		len = 0;
		for (int i = 4; i < 12; i++)
			len = len << 8 | raw[i];
		raw += 12;
		raw_len -= 12;
	}
	if (len > UNWIND_TABLE_MAX_CFI_SIZE || raw_len > UNWIND_TABLE_MAX_CFI_SIZE) {
		set_err(bld->err, bld->err_len, "%s: larger than %u bytes", src->name,
			UNWIND_TABLE_MAX_CFI_SIZE);
		return -E2BIG;
	}
	if (cfi_src__alloc(src, len)) {
		set_err(bld->err, bld->err_len, "out of memory");
		return -ENOMEM;
	}
	if (!(sh->sh_flags & SHF_COMPRESSED) && !gnu_compressed) {
		memcpy(src->image + 64, raw, len);
		return 0;
	}
	ret = inflate_exact(src->image + 64, len, raw, raw_len);
	if (ret)
		set_err(bld->err, bld->err_len, "%s: cannot inflate", src->name);
	return ret;
}

/* hand the private image to libdw */
static int cfi_src__open_libdw(struct builder *bld, struct cfi_src *src)
{
	src->elf = elf_memory((char *)src->image, src->image_size);
	if (src->elf && src->eh) {
		src->cfi = dwarf_getcfi_elf(src->elf);
	} else if (src->elf) {
		src->dwarf = dwarf_begin_elf(src->elf, DWARF_C_READ, NULL);
		src->cfi = src->dwarf ? dwarf_getcfi(src->dwarf) : NULL;
	}
	if (!src->cfi) {
		set_err(bld->err, bld->err_len, "%s: libdw: %s", src->name, dwarf_errmsg(-1));
		return -EINVAL;
	}
	return 0;
}

/*
 * Try one source.  Return: 0 with bld->fdes filled (nr_fdes may be 0: no
 * usable FDE, try the next source), 1 when @elf has no such section, or
 * -errno.
 */
static int builder__try(struct builder *bld, struct cfi_src *src, Elf *elf, bool eh,
			unsigned int src_idx)
{
	bool gnu = false;
	Elf_Scn *scn;
	GElf_Shdr sh;
	int ret;

	src->eh = eh;
	src->name = eh ? ".eh_frame" : ".debug_frame";
	scn = section_find(elf, src->name, &sh);
	if (!scn && !eh) {
		scn = section_find(elf, ".zdebug_frame", &sh);
		gnu = true;
	}
	if (!scn)
		return 1;
	if (eh && (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND_)) {
		set_err(bld->err, bld->err_len, "%s: unexpected section type %u", src->name,
			sh.sh_type);
		return -EINVAL;
	}
	if (eh && (sh.sh_flags & SHF_COMPRESSED)) {
		set_err(bld->err, bld->err_len, "%s: compressed", src->name);
		return -EINVAL;
	}
	src->addr = eh ? sh.sh_addr : 0;
	ret = cfi_src__load(bld, src, scn, &sh, gnu);
	if (ret)
		return ret;
	ret = cfi_check(bld, src);
	if (ret)
		return ret;
	return fdes_collect(bld, src, src_idx);
}

/*
 * Collect the FDEs of every source, earlier sources first; a later one only
 * fills the gaps (a program whose own functions have .debug_frame only and
 * whose start files brought .eh_frame).  A broken later source is skipped
 * and counted when an earlier one gave FDEs: the debug file must not cost
 * the rows the file itself has.
 */
static int builder__collect(struct builder *bld, Elf *const files[UNWIND_TABLE_SOURCES],
			    struct cfi_src *srcs, struct unwind_table *t)
{
	int ret;

	for (unsigned int i = 0; i < UNWIND_TABLE_SOURCES; i++) {
		size_t before = bld->nr_fdes;

		if (!files[i])
			continue;
		ret = builder__try(bld, &srcs[i], files[i], i == 0, i);
		if (ret < 0 && before) {
			bld->nr_fdes = before;
			bld->stats.sources_rejected++;
			cfi_src__release(&srcs[i]);
			if (bld->err && bld->err_len)
				bld->err[0] = '\0';
			continue;
		}
		if (ret < 0)
			return ret;
		if (bld->nr_fdes == before) {
			cfi_src__release(&srcs[i]);
			continue;
		}
		fdes_settle(bld);
		if (!t->source)
			t->source = srcs[i].name;
		t->sources |= 1u << i;
	}
	t->from_debug_file = !!(t->sources & UNWIND_SRC_DEBUG_FILE);
	if (!bld->nr_fdes) {
		set_err(bld->err, bld->err_len, "no CFI: no FDE in .eh_frame or .debug_frame");
		return -ENODATA;
	}
	return 0;
}

static int unwind_table__build_from(struct builder *bld, Elf *elf, Elf *debug_elf,
				    struct unwind_table *t)
{
	Elf *const files[UNWIND_TABLE_SOURCES] = {elf, elf, debug_elf};
	struct cfi_src srcs[UNWIND_TABLE_SOURCES] = {};
	int ret;

	ret = builder__collect(bld, files, srcs, t);
	if (ret)
		goto out_release;
	if (bld->fdes[bld->nr_fdes - 1].hi - bld->base > UINT32_MAX) {
		set_err(bld->err, bld->err_len, "CFI covers %#lx past the base %#lx: over 4 GiB",
			(unsigned long)bld->fdes[bld->nr_fdes - 1].hi, (unsigned long)bld->base);
		ret = -EFBIG;
		goto out_release;
	}
	for (unsigned int i = 0; i < UNWIND_TABLE_SOURCES; i++) {
		if (!(t->sources & (1u << i)))
			continue;
		ret = cfi_src__open_libdw(bld, &srcs[i]);
		if (ret)
			goto out_release;
	}
	ret = builder__walk(bld, srcs);
	if (ret)
		goto out_release;
	ret = builder__finish(bld, t);

out_release:
	for (unsigned int i = 0; i < UNWIND_TABLE_SOURCES; i++)
		cfi_src__release(&srcs[i]);
	return ret;
}

int unwind_table__build(Elf *elf, Elf *debug_elf, struct unwind_table **out, char *err,
			size_t err_len)
{
	struct builder bld = {.err = err, .err_len = err_len};
	struct unwind_table *t = NULL;
	GElf_Ehdr eh;
	int ret;

	*out = NULL;
	if (err && err_len)
		err[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE) {
		set_err(err, err_len, "libelf: %s", elf_errmsg(-1));
		return -ENOTSUP;
	}
	ret = elf ? elf_check_x86_64(elf, &eh) : -EINVAL;
	if (!ret && eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		ret = -EINVAL;
	if (ret) {
		set_err(err, err_len,
			ret == -ENOTSUP ? "not a 64-bit little-endian x86-64 ELF file"
					: "not an ELF executable or shared object");
		return ret;
	}
	if (debug_elf) {
		ret = elf_check_x86_64(debug_elf, &eh);
		if (ret) {
			set_err(err, err_len, "debug file: not a 64-bit x86-64 ELF file");
			return ret;
		}
	}
	ret = builder__load_segments(&bld, elf);
	if (ret)
		goto out_free;
	ret = -ENOMEM;
	t = calloc(1, sizeof(*t));
	if (!t) {
		set_err(err, err_len, "out of memory");
		goto out_free;
	}
	ret = unwind_table__build_from(&bld, elf, debug_elf, t);
	if (ret)
		goto out_free;
	*out = t;
	t = NULL;

out_free:
	unwind_table__free(t);
	free(bld.xsegs);
	free(bld.fdes);
	free(bld.rows);
	return ret;
}

int unwind_table__build_mem(const void *buf, size_t len, struct unwind_table **out, char *err,
			    size_t err_len)
{
	char *copy;
	Elf *elf;
	int ret;

	*out = NULL;
	if (!buf || len < sizeof(Elf64_Ehdr)) {
		set_err(err, err_len, "not an ELF file: %zu bytes", buf ? len : 0);
		return -EINVAL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		set_err(err, err_len, "libelf: %s", elf_errmsg(-1));
		return -ENOTSUP;
	}
	/* libelf may write to an elf_memory() image: give it our own copy */
	copy = malloc(len);
	if (!copy) {
		set_err(err, err_len, "out of memory");
		return -ENOMEM;
	}
	memcpy(copy, buf, len);
	elf = elf_memory(copy, len);
	if (!elf) {
		set_err(err, err_len, "libelf: %s", elf_errmsg(-1));
		free(copy);
		return -EINVAL;
	}
	ret = unwind_table__build(elf, NULL, out, err, err_len);
	elf_end(elf);
	free(copy);
	return ret;
}

const struct unwind_rule *unwind_table__find(const struct unwind_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->nr_rows;
	uint64_t pc;

	if (vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return &invalid_rule;
	pc = vaddr - t->base;
	/* the last row starting at or below pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || t->rows[lo - 1].rule >= t->nr_rules)
		return &invalid_rule;
	return &t->rules[t->rows[lo - 1].rule];
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->rules);
	free(t);
}

const char *unwind_cmd_name(enum unwind_cmd c)
{
	static const char *const names[UNWIND_CMD_MAX] = {
		[UNWIND_CMD_INVALID] = "invalid",
		[UNWIND_CMD_CFA_RSP] = "cfa_rsp",
		[UNWIND_CMD_CFA_RBP] = "cfa_rbp",
		[UNWIND_CMD_CFA_RBP_DEREF] = "cfa_rbp_deref",
		[UNWIND_CMD_PLT] = "plt",
		[UNWIND_CMD_SIGNAL] = "signal",
		[UNWIND_CMD_END] = "end",
		[UNWIND_CMD_FP] = "fp",
		[UNWIND_CMD_UNSUPPORTED] = "unsupported",
	};

	return (unsigned int)c < UNWIND_CMD_MAX && names[c] ? names[c] : "?";
}

const char *unwind_unsup_name(enum unwind_unsup u)
{
	static const char *const names[UNWIND_UNSUP_MAX] = {
		[UNWIND_UNSUP_CFA_REG] = "cfa_reg",
		[UNWIND_UNSUP_CFA_EXPR] = "cfa_expr",
		[UNWIND_UNSUP_CFA_UNDEF] = "cfa_undef",
		[UNWIND_UNSUP_RA] = "ra",
		[UNWIND_UNSUP_RSP] = "rsp",
		[UNWIND_UNSUP_RBP] = "rbp",
		[UNWIND_UNSUP_OFFSET] = "offset",
		[UNWIND_UNSUP_LIBDW] = "libdw",
		[UNWIND_UNSUP_BUDGET] = "budget",
	};

	return (unsigned int)u < UNWIND_UNSUP_MAX && names[u] ? names[u] : "?";
}
