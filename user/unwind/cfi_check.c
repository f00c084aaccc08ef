// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_check - libdw's framing and CFA program decoding, mirrored with every
 * bound checked (cfi_check.h says why).  Operands are decoded as libdw's
 * execute_cfi() and dwarf_next_cfi() decode them, so the two stay in step;
 * a walk stops where libdw stops (unknown opcode, failed assertion,
 * truncated operand).
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_check.h"
#include "unwind/table.h"
#include "util/errmsg.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cfi_check reads x86-64 (little-endian) CFI with host loads"
#endif

#define LEB_MAX 10 /* libdw reads at most this many bytes of a leb128 */
/* libdw's x86-64 ABI rules name registers up to the return address (16) */
#define ABI_NREGS 17

/* one CIE or FDE as libdw frames it (dwarf_next_cfi) */
struct cfi_entry {
	uint64_t next;	     /* offset of the next entry */
	const uint8_t *body; /* after the CIE id / CIE pointer */
	const uint8_t *end;
	bool cie;
	uint64_t cie_off; /* FDE: its CIE's offset */
};

/* what a CFA program does that costs libdw more than its bytes */
struct cfa_scan {
	uint64_t max_reg;   /* the highest register it names */
	uint64_t remembers; /* DW_CFA_remember_state it runs */
};

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
 * evaluated: libdw remains the only CFA interpreter.  @scan (may be NULL)
 * learns what the program costs libdw beyond its bytes.
 */
static bool cfa_program_scan(const uint8_t *p, const uint8_t *end, uint8_t fde_enc,
			     struct cfa_scan *scan)
{
	struct cfa_scan dummy;
	unsigned int depth = 0;
	uint64_t reg, v;

	if (!scan)
		scan = &dummy;
	*scan = (struct cfa_scan){0};

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
		if ((var) > scan->max_reg)                                                         \
			scan->max_reg = (var);                                                     \
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
			scan->remembers++;
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
static int cfi_entry__read(struct cfi_entry *e, const struct cfi_section *sec, uint64_t off)
{
	const uint8_t *data = sec->data;
	uint64_t len, hdr = 4, idsz = 4, id, pos;

	e->cie_off = 0;
	if (off >= sec->size || sec->size - off <= 4)
		return 0;
	len = rd_u(data + off, 4);
	if (len == 0xffffffffu) {
		if (sec->size - off - 4 < 8)
			return -EINVAL;
		len = rd_u(data + off + 4, 8);
		hdr = 12;
		idsz = 8;
	}
	if (len == 0)
		return 0;
	if (len > sec->size - off - hdr || len < idsz + 1)
		return -EINVAL;
	pos = off + hdr;
	e->next = pos + len;
	id = rd_u(data + pos, idsz);
	e->body = data + pos + idsz;
	e->end = data + e->next;
	if (sec->eh) {
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
static int cie_parse(const struct cfi_section *sec, const struct cfi_entry *e, struct cfi_cie *ci,
		     const uint8_t **insn)
{
	const uint8_t *b = e->body, *end = e->end, *aug, *nul, *q, *aug_end;
	const uint8_t *sec_end = sec->data + sec->size;
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
	const struct cfi_cie *ci = elem;

	return off < ci->off ? -1 : off > ci->off;
}

const struct cfi_cie *cfi_section__cie(const struct cfi_section *sec, uint64_t off)
{
	if (!sec->nr_cies)
		return NULL;
	return bsearch(&off, sec->cies, sec->nr_cies, sizeof(*sec->cies), cie_cmp);
}

/*
 * What a DW_CFA_remember_state with restore costs libdw with @nregs
 * registers in its frame state, in program bytes (about 2.5 ns each on real
 * files): a malloc(), a copy of 16 bytes a register and a free().  Measured:
 * 12.7 ns a pair with 17 registers, 97 ns with 1024 (bench/README.md, "CFI
 * cost").
 */
static uint64_t remember_cost(uint64_t nregs)
{
	return 2 + nregs / 32;
}

static uint64_t nregs_of(uint64_t max_reg)
{
	return max_reg >= ABI_NREGS ? max_reg + 1 : ABI_NREGS;
}

/* append a CIE (they come in offset order), its array charged to @b */
static int cies_add(struct cfi_section *sec, struct mem_budget *b, const struct cfi_cie *cie)
{
	int ret = mem_budget__grow(b, (void **)&sec->cies, &sec->cap_cies, sec->nr_cies + 1,
				   sizeof(*sec->cies), 64);

	if (ret)
		return ret;
	sec->cies[sec->nr_cies++] = *cie;
	return 0;
}

/*
 * Skip an FDE's initial_location, address_range and augmentation block as
 * libdw's intern_fde() does.  Return: 0 and *@insn set, or -EINVAL when
 * libdw would fail to read it.
 */
static int fde_header_skip(const struct cfi_entry *e, const struct cfi_cie *ci,
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

int cfi_check(struct cfi_section *sec, struct mem_budget *b, char *err, size_t err_len)
{
	struct cfi_entry e;
	struct cfa_scan scan;
	size_t entries = 0;
	uint64_t off;
	int ret, pass;

	for (pass = 0; pass < 2; pass++) {
		for (off = 0;; off = e.next) {
			const struct cfi_cie *ci;
			struct cfi_cie cie;
			const uint8_t *insn;

			ret = cfi_entry__read(&e, sec, off);
			if (ret < 0) {
				set_err(err, err_len, "%s: malformed entry at %#lx", sec->name,
					(unsigned long)off);
				return ret;
			}
			if (!ret)
				break;
			if (pass == 0 && ++entries > UNWIND_TABLE_MAX_FDES) {
				set_err(err, err_len, "%s: more than %u entries", sec->name,
					UNWIND_TABLE_MAX_FDES);
				return -E2BIG;
			}
			if (e.cie != (pass == 0))
				continue;
			if (e.cie) {
				if (cie_parse(sec, &e, &cie, &insn) < 0) {
					set_err(err, err_len,
						"%s: CIE at %#lx: bad or unsupported augmentation",
						sec->name, (unsigned long)off);
					return -EINVAL;
				}
				ci = &cie;
				cie.off = off;
			} else {
				ci = cfi_section__cie(sec, e.cie_off);
				if (!ci || fde_header_skip(&e, ci, &insn) < 0) {
					set_err(err, err_len,
						"%s: FDE at %#lx: no CIE at %#lx or bad header",
						sec->name, (unsigned long)off,
						(unsigned long)e.cie_off);
					return -EINVAL;
				}
			}
			if (!cfa_program_scan(insn, e.end, ci->fde_enc, &scan)) {
				set_err(err, err_len,
					"%s: entry at %#lx: register or nesting too large",
					sec->name, (unsigned long)off);
				return -EINVAL;
			}
			if (e.cie) {
				cie.max_reg = (uint16_t)scan.max_reg;
				cie.cost = (uint64_t)(e.end - insn) +
					   scan.remembers * remember_cost(nregs_of(scan.max_reg));
				ret = cies_add(sec, b, &cie);
				if (ret) {
					set_err(err, err_len, "%s: %s", sec->name,
						ret == -E2BIG ? "CIEs past the memory budget"
							      : "out of memory");
					return ret;
				}
			}
		}
	}
	sec->nr_entries = entries;
	return 0;
}

int cfi_fde_range(const struct cfi_section *sec, const struct cfi_cie *cie, const uint8_t *body,
		  const uint8_t *end, uint64_t *lo, uint64_t *range)
{
	const uint8_t *p = body;
	int ret;

	ret = enc_read(&p, end, cie->fde_enc, sec->data, sec->addr, lo);
	if (!ret)
		ret = enc_read(&p, end, cie->fde_enc & 0x0f, sec->data, 0, range);
	return ret;
}

uint64_t cfi_fde_cost(const struct cfi_cie *cie, const uint8_t *body, const uint8_t *end)
{
	struct cfi_entry e = {.body = body, .end = end};
	struct cfa_scan scan = {0};
	const uint8_t *insn;
	uint64_t nregs;

	/* cfi_check() let the FDE through: its header and program read as they did */
	if (!fde_header_skip(&e, cie, &insn))
		cfa_program_scan(insn, end, cie->fde_enc, &scan);
	nregs = nregs_of(scan.max_reg > cie->max_reg ? scan.max_reg : cie->max_reg);
	/*
	 * an upper bound: libdw runs the program only as far as the row asked
	 * for, and the CIE's once per CIE
	 */
	return (uint64_t)(end - body) + 16 + scan.remembers * remember_cost(nregs) + cie->cost;
}
