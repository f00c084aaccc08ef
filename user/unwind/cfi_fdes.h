/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cfi_fdes - a build's FDE ranges: collected from each CFI source, then
 * settled (sorted, overlaps cut).  Called by unwind_table's build stages,
 * on the thread running the build.
 */
#ifndef CTXPROF_UNWIND_CFI_FDES_H
#define CTXPROF_UNWIND_CFI_FDES_H

#include "unwind/unwind_build.h"

/**
 * fdes_collect() - enumerate @src's FDEs with dwarf_next_cfi() and append
 * those inside the text that no earlier source covers (a later source
 * only fills the gaps); stats count the others.
 * Return: 0 (none appended is not an error), -EINVAL when libdw frames the
 * section otherwise than cfi_check() did, -E2BIG past the budget, -ENOMEM.
 */
int fdes_collect(struct unwind_build *b, const struct cfi_src *src, unsigned int src_idx);

/** fdes_settle() - sort by start; an FDE overlapping the ones before it loses the overlap. */
void fdes_settle(struct unwind_build *b);

#endif /* CTXPROF_UNWIND_CFI_FDES_H */
