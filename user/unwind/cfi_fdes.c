// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_fdes - the FDE-collection stage of an unwind table build: which
 * address ranges each source's FDEs cover, kept only inside the file's
 * executable segments, a later source filling only the gaps of the earlier
 * ones, overlaps settled so that every address has one FDE
 * (unwind_build.h has the contract).
 */
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_check.h"
#include "unwind/cfi_fdes.h"
#include "util/errmsg.h"

static const unsigned char elf64_lsb_ident[EI_NIDENT] = {
	ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
};

static bool in_text(const struct unwind_build *b, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < b->nr_xsegs; i++)
		if (lo >= b->xsegs[i].lo && hi <= b->xsegs[i].hi)
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
static bool shadowed(const struct unwind_build *b, uint64_t lo, uint64_t hi)
{
	struct fde_range key = {.lo = lo, .hi = hi};

	return b->nr_settled &&
	       bsearch(&key, b->fdes, b->nr_settled, sizeof(key), fde_cmp_lo) != NULL;
}

/* room for one more FDE, the array charged to the budget */
static int fdes_grow(struct unwind_build *b)
{
	int ret = mem_budget__grow(&b->mem, (void **)&b->fdes, &b->cap_fdes, b->nr_fdes + 1,
				   sizeof(*b->fdes), 256);

	if (ret)
		set_err(b->err, b->err_len, "%s",
			ret == -E2BIG ? "FDEs past the memory budget" : "out of memory");
	return ret;
}

int fdes_collect(struct unwind_build *b, const struct cfi_src *src, unsigned int src_idx)
{
	const struct cfi_section *sec = &src->sec;
	Elf_Data d = {.d_buf = (void *)sec->data, .d_size = sec->size, .d_type = ELF_T_BYTE};
	Dwarf_CFI_Entry entry;
	Dwarf_Off off = 0, next;
	size_t order = 0;
	int ret;

	for (;; off = next) {
		const struct cfi_cie *ci;
		uint64_t lo = 0, range = 0;

		ret = dwarf_next_cfi(elf64_lsb_ident, &d, sec->eh, off, &next, &entry);
		if (ret > 0)
			break;
		if (ret < 0 || next <= off || next > sec->size) {
			/* cfi_check() framed it: libdw disagreeing is a bug on one side */
			set_err(b->err, b->err_len, "%s: libdw cannot read the entry at %#lx",
				sec->name, (unsigned long)off);
			return -EINVAL;
		}
		if (dwarf_cfi_cie_p(&entry))
			continue;
		order++;
		ci = cfi_section__cie(sec, entry.fde.CIE_pointer);
		if (!ci || entry.fde.start < sec->data || entry.fde.end > sec->data + sec->size ||
		    entry.fde.start > entry.fde.end) {
			set_err(b->err, b->err_len, "%s: FDE at %#lx: unexpected CIE pointer",
				sec->name, (unsigned long)off);
			return -EINVAL;
		}
		ret = cfi_fde_range(sec, ci, entry.fde.start, entry.fde.end, &lo, &range);
		if (ret == -ENOTSUP) {
			b->stats.fdes_undecodable++;
			continue;
		}
		if (ret < 0) {
			set_err(b->err, b->err_len, "%s: FDE at %#lx: bad address encoding",
				sec->name, (unsigned long)off);
			return -EINVAL;
		}
		if (!range || lo > UINT64_MAX - range || !in_text(b, lo, lo + range)) {
			b->stats.fdes_outside++;
			continue;
		}
		if (shadowed(b, lo, lo + range)) {
			b->stats.fdes_shadowed++;
			continue;
		}
		ret = fdes_grow(b);
		if (ret)
			return ret;
		b->fdes[b->nr_fdes++] = (struct fde_range){
			.lo = lo,
			.hi = lo + range,
			.cost = cfi_fde_cost(ci, entry.fde.start, entry.fde.end),
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

void fdes_settle(struct unwind_build *b)
{
	size_t i, kept = 0;

	qsort(b->fdes, b->nr_fdes, sizeof(*b->fdes), fde_cmp);
	for (i = 0; i < b->nr_fdes; i++) {
		struct fde_range f = b->fdes[i];

		if (kept && f.lo < b->fdes[kept - 1].hi) {
			b->stats.fdes_overlap++;
			if (f.hi <= b->fdes[kept - 1].hi)
				continue;
			f.lo = b->fdes[kept - 1].hi;
		}
		b->fdes[kept++] = f;
	}
	b->nr_fdes = kept;
	b->nr_settled = kept;
}
