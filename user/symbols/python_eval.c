// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python_eval - the ranges of _PyEval_EvalFrameDefault's code, split parts
 * included.  See python_eval.h.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "symbols/python_eval.h"

/* .eh_frame_hdr's encodings as GNU ld and lld write them */
#define HDR_VERSION	   1
#define ENC_PCREL_SDATA4   0x1b
#define ENC_UDATA4	   0x03
#define ENC_DATAREL_SDATA4 0x3b
#define HDR_TABLE	   12 /* version, 3 encodings, eh_frame_ptr, fde_count */
/* a function's extent at most, by its FDE */
#define MAX_FUNC_SIZE (16u << 20)
/* distinct functions counted (a stray E9 or 0F 8x of the scan lands anywhere: the slots
 * must outnumber them, or the real part could find none left) */
#define MAX_CANDIDATES 1024

struct eh_table {
	const uint8_t *hdr;
	uint64_t vaddr; /* .eh_frame_hdr's address: the table's base */
	uint32_t count;
};

/* the jumps into one function of the table, then what its FDE says */
struct candidate {
	uint32_t entry;	     /* its index in the table, + 1 */
	unsigned int sites;  /* jumps landing in it */
	uint64_t max_target; /* the furthest of them */
	uint64_t start, end; /* by its FDE */
};

static int32_t s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void *copy_hdr(const struct elf_file *ef, struct eh_table *t)
{
	size_t idx = elf_file__find_section(ef, ".eh_frame_hdr"), len;
	const Elf64_Shdr *sh = elf_file__section(ef, idx);
	void *buf = NULL;
	const uint8_t *h;

	if (!sh || elf_file__section_copy(ef, idx, PYTHON_EVAL_MAX_HDR, &buf, &len))
		return NULL;
	h = buf;
	if (len < HDR_TABLE || h[0] != HDR_VERSION || h[1] != ENC_PCREL_SDATA4 ||
	    h[2] != ENC_UDATA4 || h[3] != ENC_DATAREL_SDATA4 ||
	    u32(h + 8) > (len - HDR_TABLE) / 8) {
		free(buf);
		return NULL;
	}
	t->hdr = h;
	t->vaddr = sh->sh_addr;
	t->count = u32(h + 8);
	return buf;
}

/* table entry @i's initial location (0) or FDE address (1) */
static uint64_t table_at(const struct eh_table *t, uint32_t i, unsigned int field)
{
	return t->vaddr + (int64_t)s32(t->hdr + HDR_TABLE + 8 * (size_t)i + 4 * (size_t)field);
}

/* the index + 1 of the last table entry whose initial location is <= @addr; 0: none */
static uint32_t table_find(const struct eh_table *t, uint64_t addr)
{
	uint32_t lo = 0, hi = t->count, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (table_at(t, mid, 0) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Does an FDE whose first instruction is @insn (after an empty augmentation)
 * start inside a frame: the CFA or a saved register set before any advance?
 * A function's own entry has the CIE's state (the return address only); a
 * part split off a function starts with its frame's rules.
 */
static bool starts_in_frame(uint8_t insn)
{
	return insn == 0x0c || insn == 0x0d || insn == 0x0e || insn == 0x0f || insn == 0x12 ||
	       insn == 0x13 || insn == 0x05 || (insn & 0xc0) == 0x80;
}

/*
 * Candidate @c's extent from its FDE.  True when the FDE says what the table
 * says, holds every jump counted, and starts inside a frame.
 */
static bool split_part(const struct elf_file *ef, const struct eh_table *t, struct candidate *c)
{
	uint64_t loc = table_at(t, c->entry - 1, 0), fde = table_at(t, c->entry - 1, 1), off;
	const struct elf_load *loads;
	uint8_t rec[18];
	size_t n;

	loads = elf_file__loads(ef, &n);
	if (elf_loads__vaddr_to_offset(loads, n, fde, sizeof(rec), &off) ||
	    elf_file__read(ef, off, rec, sizeof(rec)))
		return false;
	/* length (not 64-bit), CIE pointer (not a CIE), pc_begin pcrel sdata4, pc_range */
	if (u32(rec) == 0xffffffffu || u32(rec) < 14 || !u32(rec + 4) ||
	    fde + 8 + (int64_t)s32(rec + 8) != loc || !u32(rec + 12) ||
	    u32(rec + 12) > MAX_FUNC_SIZE)
		return false;
	c->start = loc;
	c->end = loc + u32(rec + 12);
	/* an augmentation of 0 bytes (GCC's and clang's for C), then the instructions */
	return c->max_target < c->end && rec[16] == 0 && starts_in_frame(rec[17]);
}

/* a jump from the code to @target: counted for the table's function holding it */
static void add_target(const struct eh_table *t, uint64_t sym, uint64_t size, uint64_t target,
		       struct candidate *c, size_t *nc)
{
	uint32_t entry;
	size_t i;

	if (target >= sym && target - sym < size)
		return;
	entry = table_find(t, target);
	if (!entry)
		return;
	for (i = 0; i < *nc; i++)
		if (c[i].entry == entry)
			break;
	if (i == *nc) {
		if (*nc == MAX_CANDIDATES)
			return;
		c[i] = (struct candidate){.entry = entry};
		(*nc)++;
	}
	c[i].sites++;
	if (target > c[i].max_target)
		c[i].max_target = target;
}

/* the direct jumps of @code (at @sym) out of it */
static void scan(const struct elf_file *ef, const struct eh_table *t, const uint8_t *code,
		 uint64_t sym, uint64_t size, struct candidate *c, size_t *nc)
{
	uint16_t machine = elf_file__ehdr(ef)->e_machine;
	uint64_t i;
	uint32_t w;
	int64_t d;

	if (machine == EM_X86_64) {
		for (i = 0; i + 5 <= size; i++) {
			if (code[i] == 0xe9)
				add_target(t, sym, size, sym + i + 5 + (int64_t)s32(code + i + 1),
					   c, nc);
			else if (code[i] == 0x0f && i + 6 <= size && (code[i + 1] & 0xf0) == 0x80)
				add_target(t, sym, size, sym + i + 6 + (int64_t)s32(code + i + 2),
					   c, nc);
		}
	} else if (machine == EM_AARCH64) {
		for (i = 0; i + 4 <= size; i += 4) {
			w = u32(code + i);
			if ((w & 0xfc000000u) == 0x14000000u) /* B imm26 */
				d = (int64_t)((int32_t)(w << 6) >> 6) * 4;
			else if ((w & 0xff000010u) == 0x54000000u) /* B.cond imm19 */
				d = (int64_t)((int32_t)(w << 8) >> 13) * 4;
			else
				continue;
			add_target(t, sym, size, sym + i + d, c, nc);
		}
	}
}

size_t python_eval__ranges(const struct elf_file *ef, uint64_t sym, uint64_t size,
			   struct python_eval_range out[PYTHON_EVAL_RANGES])
{
	const struct elf_load *loads;
	struct candidate *c = NULL, tmp;
	struct eh_table t;
	uint8_t *code = NULL;
	void *hdr = NULL;
	size_t n = 1, nc = 0, nl, i, j;
	uint64_t off;

	out[0].start = sym;
	out[0].end = sym + size;
	if (!size || size > PYTHON_EVAL_MAX_CODE)
		return n;
	loads = elf_file__loads(ef, &nl);
	code = malloc(size);
	c = malloc(MAX_CANDIDATES * sizeof(*c));
	if (!code || !c || elf_loads__vaddr_to_offset(loads, nl, sym, size, &off) ||
	    elf_file__read(ef, off, code, size))
		goto out;
	hdr = copy_hdr(ef, &t);
	if (!hdr)
		goto out;
	scan(ef, &t, code, sym, size, c, &nc);
	/* most sites first */
	for (i = 1; i < nc; i++)
		for (j = i; j > 0 && c[j].sites > c[j - 1].sites; j--) {
			tmp = c[j];
			c[j] = c[j - 1];
			c[j - 1] = tmp;
		}
	for (i = 0; i < nc && n < PYTHON_EVAL_RANGES && c[i].sites >= PYTHON_EVAL_MIN_SITES; i++) {
		if (!split_part(ef, &t, &c[i]) || (c[i].start <= sym && sym < c[i].end))
			continue;
		out[n].start = c[i].start;
		out[n].end = c[i].end;
		n++;
	}
out:
	free(hdr);
	free(code);
	free(c);
	return n;
}
