/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cfi_rules - the rule-translation stage of an unwind table build
 * (unwind_table.h): what libdw reports for one row, as an unwind_rule
 * (include/unwind.h).
 *
 * The BPF unwinder follows a handful of shapes (CFA = rsp or rbp + offset,
 * gcc's realignment, the lazy PLT's expression, signal frames, the end of
 * the stack, with rbp unchanged, saved at the CFA or at rbp); anything else
 * becomes UNWIND_CMD_UNSUPPORTED with the reason, so that the walk stops
 * there rather than guess.
 *
 * Pure function of the frame: any thread.
 */
#ifndef CTXPROF_CFI_RULES_H
#define CTXPROF_CFI_RULES_H

#include <elfutils/libdw.h>
#include <stdbool.h>

#include "unwind/table.h"

/**
 * cfi_rule_from_frame() - translate the row libdw computed into @r.
 * @fr: dwarf_cfi_addrframe()'s frame
 * @ra_reg: its return address register (dwarf_frame_info())
 * @signal: its CIE has the 'S' augmentation (a signal trampoline)
 * @machine: the file's ELF machine: EM_AARCH64's registers, else x86-64's
 * Return: UNWIND_UNSUP_MAX when the row is expressible, else why it is not
 * (@r is then UNSUPPORTED, all other fields zero).
 */
enum unwind_unsup cfi_rule_from_frame(Dwarf_Frame *fr, int ra_reg, bool signal, uint16_t machine,
				      struct unwind_rule *r);

#endif /* CTXPROF_CFI_RULES_H */
