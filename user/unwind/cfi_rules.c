// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_rules - a row libdw computed (its CFA, return address, rsp and rbp
 * rules, as DWARF expressions) into the one unwind_rule the BPF unwinder
 * can follow, or the reason it cannot.
 */
#include <dwarf.h>
#include <elf.h>
#include <string.h>

#include "unwind/cfi_rules.h"

/* a machine's DWARF register numbers: frame pointer, stack pointer, return address */
struct cfi_regs {
	unsigned int fp, sp, ra;
};

static const struct cfi_regs regs_x86_64 = {6, 7, 16};	  /* rbp, rsp, the return address column */
static const struct cfi_regs regs_aarch64 = {29, 31, 30}; /* x29, sp, x30 (the link register) */

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

	return n == 9 && op_is_breg(&ops[0], regs_x86_64.sp, off) &&
	       op_is_breg(&ops[1], regs_x86_64.ra, &rip_off) && rip_off == 0 &&
	       op_const(&ops[2], &mask) && mask == 15 && ops[3].atom == DW_OP_and &&
	       op_const(&ops[4], thresh) && *thresh <= 16 && ops[5].atom == DW_OP_ge &&
	       op_const(&ops[6], &shift) && shift == 3 && ops[7].atom == DW_OP_shl &&
	       ops[8].atom == DW_OP_plus;
}

static enum unwind_unsup rule_cfa(Dwarf_Frame *fr, const struct cfi_regs *rg, struct unwind_rule *r)
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
	if (n == 1 && op_is_breg(&ops[0], rg->sp, &off)) {
		r->cmd = UNWIND_CMD_CFA_RSP;
	} else if (n == 1 && op_is_breg(&ops[0], rg->fp, &off)) {
		r->cmd = UNWIND_CMD_CFA_RBP;
	} else if (n == 1 && (ops[0].atom == DW_OP_bregx ||
			      (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
		return UNWIND_UNSUP_CFA_REG;
	} else if (n == 2 && op_is_breg(&ops[0], rg->fp, &off) && ops[1].atom == DW_OP_deref) {
		r->cmd = UNWIND_CMD_CFA_RBP_DEREF;
	} else if (rg == &regs_x86_64 && cfa_is_plt(ops, n, &off, &thresh)) {
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
static enum unwind_unsup rule_rbp(Dwarf_Frame *fr, const struct cfi_regs *rg, struct unwind_rule *r)
{
	Dwarf_Op mem[3], *ops;
	int64_t off;
	size_t n;

	if (dwarf_frame_register(fr, rg->fp, mem, &ops, &n) != 0)
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
	else if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && op_is_breg(&ops[1], rg->fp, &off))
		r->rbp = UNWIND_RBP_RBP;
	else
		return UNWIND_UNSUP_RBP;
	if (!fits_s32(off))
		return UNWIND_UNSUP_OFFSET;
	r->rbp_off = (int32_t)off;
	return UNWIND_UNSUP_MAX;
}

/*
 * The return address.  x86-64: saved at CFA - 8 (the call pushed it), or
 * undefined (the end).  arm64: x30 saved at CFA + off (DW_CFA_offset), still
 * in x30 (unmentioned or same_value: a leaf, a prologue before the store),
 * or undefined (_start, a thread's entry: the end).
 */
static enum unwind_unsup rule_ra(Dwarf_Frame *fr, const struct cfi_regs *rg, struct unwind_rule *r)
{
	Dwarf_Op mem[3], *ops;
	int64_t off;
	size_t n;

	if (dwarf_frame_register(fr, rg->ra, mem, &ops, &n) != 0)
		return UNWIND_UNSUP_LIBDW;
	if (ops && !n) {
		r->cmd = UNWIND_CMD_END;
		return UNWIND_UNSUP_MAX;
	}
	if (rg == &regs_x86_64)
		return ops_cfa_plus(ops, n, &off) && n == 2 && off == -8 ? UNWIND_UNSUP_MAX
									 : UNWIND_UNSUP_RA;
	if (!ops) {
		r->ra = UNWIND_RA_LR;
		return UNWIND_UNSUP_MAX;
	}
	if (!ops_cfa_plus(ops, n, &off))
		return UNWIND_UNSUP_RA;
	if (!fits_s32(off))
		return UNWIND_UNSUP_OFFSET;
	r->ra = UNWIND_RA_CFA;
	r->ra_off = (int32_t)off;
	return UNWIND_UNSUP_MAX;
}

static enum unwind_unsup rule_translate(Dwarf_Frame *fr, int ra_reg, bool signal,
					const struct cfi_regs *rg, struct unwind_rule *r)
{
	Dwarf_Op mem[3], *ops;
	enum unwind_unsup why;
	size_t n;

	if (signal) {
		r->cmd = UNWIND_CMD_SIGNAL;
		return UNWIND_UNSUP_MAX;
	}
	if (ra_reg < 0 || (unsigned int)ra_reg != rg->ra)
		return UNWIND_UNSUP_RA;
	why = rule_ra(fr, rg, r);
	if (why != UNWIND_UNSUP_MAX || r->cmd == UNWIND_CMD_END)
		return why;
	/* libdw's ABI rules: the caller's sp is the CFA (DW_CFA_val_offset sp, 0) */
	if (dwarf_frame_register(fr, rg->sp, mem, &ops, &n) != 0)
		return UNWIND_UNSUP_LIBDW;
	if (!(ops && n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	      ops[1].atom == DW_OP_stack_value))
		return UNWIND_UNSUP_RSP;

	why = rule_cfa(fr, rg, r);
	if (why != UNWIND_UNSUP_MAX)
		return why;
	why = rule_rbp(fr, rg, r);
	/* the PLT command keeps its threshold in rbp_off: rbp must be unchanged */
	if (why == UNWIND_UNSUP_MAX && r->cmd == UNWIND_CMD_PLT && r->rbp != UNWIND_RBP_SAME)
		why = UNWIND_UNSUP_RBP;
	return why;
}

enum unwind_unsup cfi_rule_from_frame(Dwarf_Frame *fr, int ra_reg, bool signal, uint16_t machine,
				      struct unwind_rule *r)
{
	const struct cfi_regs *rg = machine == EM_AARCH64 ? &regs_aarch64 : &regs_x86_64;
	enum unwind_unsup why;

	memset(r, 0, sizeof(*r));
	why = rule_translate(fr, ra_reg, signal, rg, r);
	if (why != UNWIND_UNSUP_MAX) {
		memset(r, 0, sizeof(*r));
		r->cmd = UNWIND_CMD_UNSUPPORTED;
	}
	return why;
}
