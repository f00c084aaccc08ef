// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/unwind/unwind_table.c on small ELF files synthesized
 * here byte by byte, for what real files never contain: overlapping FDEs,
 * hostile CIEs, a pc range past 4 GiB, every rule kind.  Real files are
 * test_unwind_table's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_check.h"
#include "unwind/unwind_table.h"

/* ---- synthetic files: a PT_LOAD or two and one CFI section, made here */

struct synth {
	uint8_t cfi[8192];
	size_t len;
	bool eh;      /* .eh_frame, else .debug_frame */
	bool dwarf64; /* .debug_frame entries in the 64-bit format */
};

struct synth_seg {
	uint64_t vaddr;
	uint64_t memsz;
	uint32_t flags;
};

static const struct synth_seg text_seg = {0x400000, 0x10000, PF_R | PF_X};

static void put(struct synth *s, const void *p, size_t n)
{
	assert_true(s->len + n <= sizeof(s->cfi));
	if (n)
		memcpy(s->cfi + s->len, p, n);
	s->len += n;
}

static void put_u(struct synth *s, uint64_t v, size_t n)
{
	put(s, &v, n); /* little-endian host */
}

/* entry header: length (patched by entry_end()) and the CIE id / pointer */
static size_t entry_begin(struct synth *s, size_t *len_at)
{
	size_t off = s->len;

	if (s->dwarf64) {
		put_u(s, 0xffffffff, 4);
		*len_at = s->len;
		put_u(s, 0, 8);
	} else {
		*len_at = s->len;
		put_u(s, 0, 4);
	}
	return off;
}

static void entry_end(struct synth *s, size_t len_at)
{
	size_t w = s->dwarf64 ? 8 : 4;
	uint64_t len = s->len - len_at - w;

	memcpy(s->cfi + len_at, &len, w);
}

static const uint8_t default_cie_insns[] = {DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1};

/* a CIE: version 1, code factor 1, data factor -8, ra 16 */
static size_t synth_cie(struct synth *s, const char *aug, const void *augdata, size_t augdata_len,
			const uint8_t *insns, size_t n)
{
	static const uint8_t factors[] = {1, 0x78, 16};
	size_t len_at, off = entry_begin(s, &len_at);

	put_u(s, s->eh ? 0 : UINT64_MAX, s->dwarf64 ? 8 : 4);
	put_u(s, 1, 1);
	put(s, aug, strlen(aug) + 1);
	put(s, factors, sizeof(factors));
	if (aug[0] == 'z') {
		put_u(s, augdata_len, 1);
		put(s, augdata, augdata_len);
	}
	if (!insns) {
		insns = default_cie_insns;
		n = sizeof(default_cie_insns);
	}
	put(s, insns, n);
	entry_end(s, len_at);
	return off;
}

/* an FDE with 8-byte absolute addresses (its CIE has no 'R'); @z: CIE has 'z' */
static size_t synth_fde_ptr(struct synth *s, uint64_t cie_ptr, bool z, uint64_t lo, uint64_t len,
			    const uint8_t *insns, size_t n)
{
	size_t len_at, off = entry_begin(s, &len_at);

	put_u(s, cie_ptr, s->dwarf64 ? 8 : 4);
	put_u(s, lo, 8);
	put_u(s, len, 8);
	if (z)
		put_u(s, 0, 1);
	put(s, insns, n);
	entry_end(s, len_at);
	return off;
}

static size_t synth_fde(struct synth *s, size_t cie, uint64_t lo, uint64_t len,
			const uint8_t *insns, size_t n)
{
	size_t pos = s->len + (s->dwarf64 ? 12 : 4);

	return synth_fde_ptr(s, s->eh ? pos - cie : cie, false, lo, len, insns, n);
}

/* an ELF file: header, program headers, the CFI section, .shstrtab, section headers */
static size_t synth_elf(uint8_t *out, size_t cap, const struct synth *s,
			const struct synth_seg *segs, int nsegs, uint16_t machine)
{
	static const char strtab[] = "\0.eh_frame\0.debug_frame\0.shstrtab";
	size_t off_ph = sizeof(Elf64_Ehdr), off_cfi, off_str, off_sh, total;
	Elf64_Ehdr eh = {};
	Elf64_Shdr sh[3] = {};

	off_cfi = off_ph + nsegs * sizeof(Elf64_Phdr);
	off_str = off_cfi + s->len;
	off_sh = (off_str + sizeof(strtab) + 7) & ~(size_t)7;
	total = off_sh + sizeof(sh);
	assert_true(total <= cap);
	memset(out, 0, total);

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = machine;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = off_ph;
	eh.e_shoff = off_sh;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = nsegs;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	eh.e_shstrndx = 2;
	memcpy(out, &eh, sizeof(eh));
	for (int i = 0; i < nsegs; i++) {
		Elf64_Phdr ph = {.p_type = PT_LOAD,
				 .p_flags = segs[i].flags,
				 .p_vaddr = segs[i].vaddr,
				 .p_paddr = segs[i].vaddr,
				 .p_memsz = segs[i].memsz,
				 .p_align = 0x1000};

		memcpy(out + off_ph + i * sizeof(ph), &ph, sizeof(ph));
	}
	memcpy(out + off_cfi, s->cfi, s->len);
	memcpy(out + off_str, strtab, sizeof(strtab));
	sh[1].sh_name = s->eh ? 1 : 11;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = s->eh ? SHF_ALLOC : 0;
	sh[1].sh_addr = s->eh ? segs[0].vaddr + off_cfi : 0;
	sh[1].sh_offset = off_cfi;
	sh[1].sh_size = s->len;
	sh[1].sh_addralign = 1;
	sh[2].sh_name = 24;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = off_str;
	sh[2].sh_size = sizeof(strtab);
	sh[2].sh_addralign = 1;
	memcpy(out + off_sh, sh, sizeof(sh));
	return total;
}

static int synth_build(const struct synth *s, const struct synth_seg *segs, int nsegs,
		       struct unwind_table **t, char *err, size_t err_len)
{
	static uint8_t image[16384];
	size_t len = synth_elf(image, sizeof(image), s, segs, nsegs, EM_X86_64);
	int ret = unwind_table__build_mem(image, len, t, err, err_len);

	if (ret == 0)
		unwind_check_invariants(*t);
	else
		assert_null(*t);
	return ret;
}

static void expect_rule_at(const struct unwind_table *t, uint64_t vaddr, uint8_t cmd,
			   int32_t cfa_off, uint8_t rbp, int32_t rbp_off)
{
	const struct unwind_rule *r = unwind_table__find(t, vaddr);

	if (r->cmd != cmd || r->cfa_off != cfa_off || r->rbp != rbp || r->rbp_off != rbp_off)
		fail_msg("at %#" PRIx64 ": %s cfa %d rbp %u/%d, want %s cfa %d rbp %u/%d", vaddr,
			 unwind_cmd_name(r->cmd), r->cfa_off, r->rbp, r->rbp_off,
			 unwind_cmd_name(cmd), cfa_off, rbp, rbp_off);
}

static const uint8_t cfa16[] = {DW_CFA_def_cfa_offset, 16};
static const uint8_t cfa24[] = {DW_CFA_def_cfa_offset, 24};
static const uint8_t cfa32[] = {DW_CFA_def_cfa_offset, 32};

/*
 * Overlaps: the earlier-starting FDE (then the earlier in the section)
 * keeps the addresses, a later one is trimmed or dropped.
 */
static void unwind_table__build_mem__overlapping_fdes__earlier_start_wins(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x100, cfa16, sizeof(cfa16)); /* A */
	synth_fde(&s, cie, 0x401080, 0x180, cfa24, sizeof(cfa24)); /* B: trimmed to A's end */
	synth_fde(&s, cie, 0x401010, 0x10, cfa32, sizeof(cfa32));  /* inside A: dropped */
	synth_fde(&s, cie, 0x401000, 0x40, cfa16, sizeof(cfa16));  /* A's start: dropped */
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
	assert_int_equal(t->stats.fdes, 2);
	assert_int_equal(t->stats.fdes_overlap, 3);
	expect_rule_at(t, 0x400fff, UNWIND_CMD_INVALID, 0, 0, 0);
	expect_rule_at(t, 0x401000, UNWIND_CMD_CFA_RSP, 16, 0, 0);
	assert_int_equal(unwind_table__find(t, 0x4010ff)->cmd, UNWIND_CMD_CFA_RSP);
	expect_rule_at(t, 0x401100, UNWIND_CMD_CFA_RSP, 24, 0, 0);
	expect_rule_at(t, 0x4011ff, UNWIND_CMD_CFA_RSP, 24, 0, 0);
	expect_rule_at(t, 0x401200, UNWIND_CMD_INVALID, 0, 0, 0);
	unwind_table__free(t);
}

/* rows from the base up to the end of the last FDE, INVALID in the gaps */
static void unwind_table__build_mem__gaps__invalid_rows(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x402000, 0x10, cfa16, sizeof(cfa16));
	synth_fde(&s, cie, 0x401000, 0x10, NULL, 0);
	synth_fde(&s, cie, 0x401010, 0x10, cfa24, sizeof(cfa24)); /* adjacent: no gap row */
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
	assert_int_equal(t->nr_rows, 6); /* invalid, 8, 24, invalid, 16, invalid */
	assert_int_equal(t->rows[0].pc, 0);
	expect_rule_at(t, 0x400000, UNWIND_CMD_INVALID, 0, 0, 0);
	expect_rule_at(t, 0x401000, UNWIND_CMD_CFA_RSP, 8, 0, 0);
	expect_rule_at(t, 0x40101f, UNWIND_CMD_CFA_RSP, 24, 0, 0);
	expect_rule_at(t, 0x401020, UNWIND_CMD_INVALID, 0, 0, 0);
	expect_rule_at(t, 0x401fff, UNWIND_CMD_INVALID, 0, 0, 0);
	expect_rule_at(t, 0x402000, UNWIND_CMD_CFA_RSP, 16, 0, 0);
	expect_rule_at(t, 0x402010, UNWIND_CMD_INVALID, 0, 0, 0);
	unwind_table__free(t);
}

static void unwind_table__build_mem__pc_range_over_4g__efbig(void **state)
{
	const struct synth_seg segs[] = {text_seg, {0x400000 + (1ULL << 32), 0x1000, PF_R | PF_X}};
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x10, NULL, 0);
	synth_fde(&s, cie, segs[1].vaddr, 0x10, NULL, 0);
	assert_int_equal(synth_build(&s, segs, 2, &t, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "4 GiB"));
}

static void unwind_table__build_mem__fde_outside_text__skipped(void **state)
{
	const struct synth_seg segs[] = {text_seg, {0x500000, 0x1000, PF_R | PF_W}};
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x500000, 0x10, NULL, 0);  /* not executable */
	synth_fde(&s, cie, 0x40fff0, 0x100, NULL, 0); /* runs past the segment */
	synth_fde(&s, cie, 0x401000, 0, NULL, 0);     /* empty */
	assert_int_equal(synth_build(&s, segs, 2, &t, err, sizeof(err)), -ENODATA);
	synth_fde(&s, cie, 0x401000, 0x10, NULL, 0);
	assert_int_equal(synth_build(&s, segs, 2, &t, err, sizeof(err)), 0);
	assert_int_equal(t->stats.fdes, 1);
	assert_int_equal(t->stats.fdes_outside, 3);
	unwind_table__free(t);
}

static void unwind_table__build_mem__cie_only__enodata(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];

	(void)state;

	synth_cie(&s, "zR", "\x1b", 1, NULL, 0);
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), -ENODATA);
}

static void unwind_table__build_mem__not_x86_64__enotsup(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	uint8_t image[4096];
	char err[128];
	size_t cie, len;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x10, NULL, 0);
	len = synth_elf(image, sizeof(image), &s, &text_seg, 1, EM_AARCH64);
	assert_int_equal(unwind_table__build_mem(image, len, &t, err, sizeof(err)), -ENOTSUP);
}

/* what libdw 0.188 would read out of bounds or allocate without limit */
static void unwind_table__build_mem__hostile_cfi__einval(void **state)
{
	static const uint8_t huge_reg[] = {DW_CFA_undefined, 0xa0, 0x8d, 0x06}; /* r100000 */
	static const uint8_t huge_reg_expr[] = {DW_CFA_expression, 0xff, 0xff, 0x03, 1, DW_OP_lit0};
	uint8_t deep[100], balanced[40];
	struct unwind_table *t;
	char err[128];
	size_t cie, i;

	(void)state;

	memset(deep, DW_CFA_remember_state, sizeof(deep));
	for (i = 0; i < sizeof(balanced); i++)
		balanced[i] = i < 20 ? DW_CFA_remember_state : DW_CFA_restore_state;

	struct {
		const char *aug;
		const char *augdata;
		size_t augdata_len;
		const uint8_t *fde_insns;
		size_t fde_len;
		int want;
	} cases[] = {
		{"zPPPPPPPPPPPP", "\x00", 1, NULL, 0, -EINVAL}, /* personality past the data */
		{"zR", "", 0, NULL, 0, -EINVAL},		/* 'R' without its byte */
		{"eh", NULL, 0, NULL, 0, -EINVAL},		/* g++ 2 */
		{"zRX", "\x00", 1, NULL, 0, -EINVAL},		/* unknown letter */
		{"", NULL, 0, huge_reg, sizeof(huge_reg), -EINVAL},
		{"", NULL, 0, huge_reg_expr, sizeof(huge_reg_expr), -EINVAL},
		{"", NULL, 0, deep, sizeof(deep), -EINVAL},
		{"", NULL, 0, balanced, sizeof(balanced), 0},
		{"zPLR", "\x00\x11\x22\x33\x44\x55\x66\x77\x88\x00\x00", 11, NULL, 0, 0},
	};

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct synth s = {.eh = true};
		int ret;

		/* 'P' with absptr: 8 bytes, 'L' and 'R' absptr */
		cie = synth_cie(&s, cases[i].aug, cases[i].augdata, cases[i].augdata_len, NULL, 0);
		synth_fde_ptr(&s, s.len + 4 - cie, cases[i].aug[0] == 'z', 0x401000, 0x10,
			      cases[i].fde_insns, cases[i].fde_len);
		ret = synth_build(&s, &text_seg, 1, &t, err, sizeof(err));
		if (ret != cases[i].want)
			fail_msg("case %zu: %d (%s), want %d", i, ret, err, cases[i].want);
		if (!ret)
			unwind_table__free(t);
	}
}

static void unwind_table__build_mem__bad_cie_pointer__einval(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	/* points 4 bytes into the CIE, not at it */
	synth_fde_ptr(&s, s.len + 4 - (cie + 4), false, 0x401000, 0x10, NULL, 0);
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "FDE"));

	/* past the start of the section */
	s.len = 0;
	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde_ptr(&s, 0x7fffffff, false, 0x401000, 0x10, NULL, 0);
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), -EINVAL);
}

/* a rule per kind the unwinder can and cannot follow */
static void unwind_table__build_mem__rule_kinds__translated(void **state)
{
	static const uint8_t insns[] = {
		/* 0x401010: CFA on r12 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa,
		12,
		16,
		/* 0x401020: CFA = rsp + 16, rbp in rbx */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa,
		7,
		16,
		DW_CFA_register,
		6,
		3,
		/* 0x401030: rbp undefined */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_undefined,
		6,
		/* 0x401040: rbp saved at rbp + 16 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_expression,
		6,
		2,
		DW_OP_breg6,
		16,
		/* 0x401050: the PLT expression with DW_OP_const1u constants; rbp unchanged */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_same_value,
		6,
		DW_CFA_def_cfa_expression,
		13,
		DW_OP_breg7,
		8,
		DW_OP_breg16,
		0,
		DW_OP_const1u,
		15,
		DW_OP_and,
		DW_OP_const1u,
		11,
		DW_OP_ge,
		DW_OP_lit3,
		DW_OP_shl,
		DW_OP_plus,
		/* 0x401060: CFA = *(rbp - 8), rbp saved at CFA - 16 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa_expression,
		3,
		DW_OP_breg6,
		0x78,
		DW_OP_deref,
		DW_CFA_offset | 6,
		2,
		/* 0x401070: CFA = rbp + 16, return address saved elsewhere */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa,
		6,
		16,
		DW_CFA_offset | 16,
		2,
		/* 0x401080: return address restored: CFA - 8 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_offset | 16,
		1,
		/* 0x401090: a CFA expression that is a plain DW_OP_breg7 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa_expression,
		2,
		DW_OP_breg7,
		8,
		/* 0x4010a0: an expression the unwinder has no command for */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa_expression,
		4,
		DW_OP_breg7,
		8,
		DW_OP_lit1,
		DW_OP_plus,
		/* 0x4010b0: the outermost frame */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa,
		7,
		8,
		DW_CFA_undefined,
		16,
	};
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x100, insns, sizeof(insns));
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
	expect_rule_at(t, 0x401000, UNWIND_CMD_CFA_RSP, 8, UNWIND_RBP_SAME, 0);
	expect_rule_at(t, 0x401010, UNWIND_CMD_UNSUPPORTED, 0, 0, 0);
	expect_rule_at(t, 0x401020, UNWIND_CMD_UNSUPPORTED, 0, 0, 0);
	expect_rule_at(t, 0x401030, UNWIND_CMD_CFA_RSP, 16, UNWIND_RBP_UNDEFINED, 0);
	expect_rule_at(t, 0x401040, UNWIND_CMD_CFA_RSP, 16, UNWIND_RBP_RBP, 16);
	expect_rule_at(t, 0x401050, UNWIND_CMD_PLT, 8, UNWIND_RBP_SAME, 11);
	expect_rule_at(t, 0x401060, UNWIND_CMD_CFA_RBP_DEREF, -8, UNWIND_RBP_CFA, -16);
	expect_rule_at(t, 0x401070, UNWIND_CMD_UNSUPPORTED, 0, 0, 0);
	expect_rule_at(t, 0x401080, UNWIND_CMD_CFA_RBP, 16, UNWIND_RBP_CFA, -16);
	expect_rule_at(t, 0x401090, UNWIND_CMD_CFA_RSP, 8, UNWIND_RBP_CFA, -16);
	expect_rule_at(t, 0x4010a0, UNWIND_CMD_UNSUPPORTED, 0, 0, 0);
	expect_rule_at(t, 0x4010b0, UNWIND_CMD_END, 0, 0, 0);
	expect_rule_at(t, 0x401100, UNWIND_CMD_INVALID, 0, 0, 0);
	assert_int_equal(t->stats.unsup[UNWIND_UNSUP_CFA_REG], 1);
	assert_int_equal(t->stats.unsup[UNWIND_UNSUP_RBP], 1);
	assert_int_equal(t->stats.unsup[UNWIND_UNSUP_RA], 1);
	assert_int_equal(t->stats.unsup[UNWIND_UNSUP_CFA_EXPR], 1);
	assert_int_equal(t->stats.libdw_rows, 12);
	unwind_table__free(t);
}

/* DW_CFA_set_loc moving backwards: libdw decides, the walk still advances */
static void unwind_table__build_mem__set_loc_backwards__terminates_sorted(void **state)
{
	uint8_t insns[64];
	struct synth s = {.eh = true};
	struct unwind_table *t;
	uint64_t loc = 0x401008;
	char err[128];
	size_t n = 0, cie;

	(void)state;

	insns[n++] = DW_CFA_advance_loc | 0x20;
	insns[n++] = DW_CFA_def_cfa_offset;
	insns[n++] = 16;
	insns[n++] = DW_CFA_set_loc;
	memcpy(insns + n, &loc, 8);
	n += 8;
	insns[n++] = DW_CFA_def_cfa_offset;
	insns[n++] = 24;
	insns[n++] = DW_CFA_advance_loc | 0x3f;
	insns[n++] = DW_CFA_def_cfa_offset;
	insns[n++] = 32;
	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x80, insns, n);
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
	assert_int_equal(unwind_table__find(t, 0x401000)->cmd, UNWIND_CMD_CFA_RSP);
	assert_int_equal(unwind_table__find(t, 0x40107f)->cmd, UNWIND_CMD_CFA_RSP);
	unwind_table__free(t);
}

/* .debug_frame with 32-bit and 64-bit DWARF entries, CIEs after their FDEs */
static void unwind_table__build_mem__debug_frame_formats__parsed(void **state)
{
	(void)state;

	for (int dwarf64 = 0; dwarf64 <= 1; dwarf64++) {
		struct synth s = {.eh = false, .dwarf64 = dwarf64};
		struct unwind_table *t;
		size_t fde_at, cie;
		char err[128];

		/* an FDE whose CIE comes later: patch its pointer afterwards */
		fde_at = synth_fde_ptr(&s, 0, false, 0x401000, 0x10, cfa16, sizeof(cfa16));
		cie = synth_cie(&s, "", NULL, 0, NULL, 0);
		memcpy(s.cfi + fde_at + (dwarf64 ? 12 : 4), &cie, dwarf64 ? 8 : 4);
		synth_fde(&s, cie, 0x401010, 0x10, cfa24, sizeof(cfa24));
		assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
		assert_string_equal(t->source, ".debug_frame");
		expect_rule_at(t, 0x401000, UNWIND_CMD_CFA_RSP, 16, 0, 0);
		expect_rule_at(t, 0x401010, UNWIND_CMD_CFA_RSP, 24, 0, 0);
		expect_rule_at(t, 0x401020, UNWIND_CMD_INVALID, 0, 0, 0);
		unwind_table__free(t);
	}
}

static void unwind_cmd_name__every_command__named(void **state)
{
	(void)state;

	for (int c = 0; c < UNWIND_CMD_MAX; c++)
		assert_string_not_equal(unwind_cmd_name(c), "?");
	assert_string_equal(unwind_cmd_name(UNWIND_CMD_MAX), "?");
	assert_string_equal(unwind_cmd_name(UNWIND_CMD_PLT), "plt");
	for (int u = 0; u < UNWIND_UNSUP_MAX; u++)
		assert_string_not_equal(unwind_unsup_name(u), "?");
	assert_string_equal(unwind_unsup_name(UNWIND_UNSUP_MAX), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwind_table__build_mem__overlapping_fdes__earlier_start_wins),
		cmocka_unit_test(unwind_table__build_mem__gaps__invalid_rows),
		cmocka_unit_test(unwind_table__build_mem__pc_range_over_4g__efbig),
		cmocka_unit_test(unwind_table__build_mem__fde_outside_text__skipped),
		cmocka_unit_test(unwind_table__build_mem__cie_only__enodata),
		cmocka_unit_test(unwind_table__build_mem__not_x86_64__enotsup),
		cmocka_unit_test(unwind_table__build_mem__hostile_cfi__einval),
		cmocka_unit_test(unwind_table__build_mem__bad_cie_pointer__einval),
		cmocka_unit_test(unwind_table__build_mem__rule_kinds__translated),
		cmocka_unit_test(unwind_table__build_mem__set_loc_backwards__terminates_sorted),
		cmocka_unit_test(unwind_table__build_mem__debug_frame_formats__parsed),
		cmocka_unit_test(unwind_cmd_name__every_command__named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
