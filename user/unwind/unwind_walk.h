/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwind_walk - a build's rows: the settled FDEs walked with libdw a slice
 * at a time (unwind_table's build stages), rows emitted in order (also by
 * go_rows), and the result made a table.  Called on the thread running the
 * build.
 */
#ifndef CTXPROF_UNWIND_UNWIND_WALK_H
#define CTXPROF_UNWIND_UNWIND_WALK_H

#include "unwind/unwind_build.h"

/**
 * unwind_walk() - walk the settled FDEs' rows with libdw, from where the
 * last call stopped, until done or @slice_ns of the thread's CPU time.
 * Return: 0 when every FDE is walked, -EAGAIN when the slice ran out,
 * -ETIME past the CPU budget, -ECANCELED, -E2BIG, -ENOMEM.
 */
int unwind_walk(struct unwind_build *b, uint64_t slice_ns);

/**
 * unwind_walk__emit() - emit a row at @vaddr, at or past the last one.  A
 * row at the pc of the one emitted before it covers nothing: the later
 * stands; a row whose rule is the one before it adds nothing: it merges.
 * So b->rows holds what the table will.
 * Return: 0, -E2BIG past UNWIND_TABLE_MAX_ROWS or the memory budget,
 * -EINVAL for a row out of order, -ENOMEM.
 */
int unwind_walk__emit(struct unwind_build *b, uint64_t vaddr, const struct unwind_rule *rule);

/**
 * unwind_walk__finish() - the walked rows and rules as b->table (rules
 * sorted, only those rows use).  Return: 0, -ENODATA without rows, -ENOMEM.
 */
int unwind_walk__finish(struct unwind_build *b);

#endif /* CTXPROF_UNWIND_UNWIND_WALK_H */
