/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cfi_check - the first stage of an unwind table build (unwind_table.h):
 * may libdw be let loose on this CFI section?
 *
 * libdw (0.188) trusts what it parses: a hostile .eh_frame can make it read
 * past the section, allocate a frame state of 2^27 registers, or nest
 * DW_CFA_remember_state without end.  cfi_check() walks every CIE and FDE
 * exactly as libdw frames and executes them, checking what libdw does not,
 * and refuses the whole section at the first entry that fails; it evaluates
 * nothing (libdw stays the only CFA interpreter).  The decoders here are the
 * ones the later stages use to read what cfi_check() let through: an FDE's
 * address range in its CIE's encoding, and what evaluating it costs.
 *
 * Pure functions over the section they are given: any thread, no locks.
 */
#ifndef CTXPROF_CFI_CHECK_H
#define CTXPROF_CFI_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/mem_budget.h"

/*
 * libdw sizes a frame state by the largest register number a program names
 * (16 bytes a register) and copies it on every DW_CFA_remember_state: we
 * refuse programs beyond these.  x86-64's DWARF registers end below 130.
 */
#define CFI_MAX_REG   1023
#define CFI_MAX_DEPTH 64
/*
 * Zero bytes the section must be followed by in memory: libdw 0.188 reads a
 * leb128's first byte and DW_CFA_advance_loc1's operand without checking
 * the end, and those reads must land in bytes of ours.
 */
#define CFI_SECTION_PAD 64

/* what cfi_check() learnt about one CIE */
struct cfi_cie {
	uint64_t off;
	uint8_t fde_enc;  /* 'R' encoding; DW_EH_PE_absptr without one */
	bool sized;	  /* 'z': FDEs carry a sized augmentation block */
	uint16_t max_reg; /* the highest register its initial instructions name */
	uint64_t cost;	  /* of running its initial instructions (cfi_fde_cost()) */
};

/* one CFI section in private memory, and what cfi_check() found in it */
struct cfi_section {
	const char *name;    /* ".eh_frame" | ".debug_frame" */
	bool eh;	     /* .eh_frame's framing (CIE ids, pcrel) */
	uint64_t addr;	     /* sh_addr: .eh_frame's pcrel base */
	const uint8_t *data; /* followed by CFI_SECTION_PAD zero bytes */
	size_t size;
	struct cfi_cie *cies; /* sorted by offset */
	size_t nr_cies, cap_cies;
	size_t nr_entries; /* CIEs and FDEs up to the terminator */
};

/**
 * cfi_check() - check that libdw can be let loose on @sec: every entry it
 * may frame (all of them, up to the terminator) is well framed, every CIE
 * has a supported augmentation, every FDE names such a CIE and has a
 * readable header, and no program names a register above CFI_MAX_REG or
 * nests DW_CFA_remember_state deeper than CFI_MAX_DEPTH.
 * @b: the build's budget, charged for sec->cies
 * Fills sec->cies (free() them) and sec->nr_entries.
 * Return: 0; -EINVAL (with a reason in @err) for a section refused;
 * -E2BIG past UNWIND_TABLE_MAX_FDES entries or the budget; -ENOMEM.
 */
int cfi_check(struct cfi_section *sec, struct mem_budget *b, char *err, size_t err_len);

/** cfi_section__cie() - the CIE at offset @off, or NULL. */
const struct cfi_cie *cfi_section__cie(const struct cfi_section *sec, uint64_t off);

/**
 * cfi_fde_range() - decode the address range of the FDE whose body (its
 * initial_location onwards) is [@body, @end), with its CIE's encoding, as
 * libdw does.
 * Return: 0 with [*@lo, *@lo + *@range) set; -EINVAL when libdw could not
 * read it either; -ENOTSUP for encodings libdw reads but we do not use
 * (textrel, datarel, funcrel, indirect: libdw adds 0 or dereferences).
 */
int cfi_fde_range(const struct cfi_section *sec, const struct cfi_cie *cie, const uint8_t *body,
		  const uint8_t *end, uint64_t *lo, uint64_t *range);

/**
 * cfi_fde_cost() - at most what one libdw evaluation of a row of this FDE
 * costs, in program bytes (about 2.5 ns each): libdw runs the FDE's program
 * from its start for every row, after its CIE's initial instructions, and
 * each DW_CFA_remember_state copies a frame state as large as the highest
 * register named (its CIE's or its own).  Calibrated in bench/README.md.
 */
uint64_t cfi_fde_cost(const struct cfi_cie *cie, const uint8_t *body, const uint8_t *end);

#endif /* CTXPROF_CFI_CHECK_H */
