/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwind_build - the state of one table build, shared by its stages
 * (unwind_table.h lists them): the FDE collection (cfi_fdes.c) fills the
 * settled FDE ranges, the walk (unwind_walk.c) turns them into rows and
 * rules, unwind_table.c drives both.  Private to user/unwind/.
 *
 * A build is its caller's: no locking.  Every allocation of a stage is
 * charged to the build's mem_budget before it is made.
 */
#ifndef CTXPROF_UNWIND_BUILD_H
#define CTXPROF_UNWIND_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_source.h"
#include "unwind/table.h"
#include "util/htable.h"
#include "util/mem_budget.h"

/* one executable PT_LOAD: [lo, hi) */
struct xseg {
	uint64_t lo;
	uint64_t hi;
};

/* one FDE kept for the walk (CFI_FDE_RANGE_BYTES) */
struct fde_range {
	uint64_t lo;
	uint64_t hi;
	uint64_t cost;	  /* what one libdw evaluation of a row costs (cfi_fde_cost()) */
	size_t order;	  /* position in the section: the tie-break of overlaps */
	unsigned int src; /* index of its source: the cfi_src the walk evaluates it with */
};

_Static_assert(sizeof(struct fde_range) == CFI_FDE_RANGE_BYTES, "fde_range size");

struct gopclntab;

struct unwind_build {
	char *err;
	size_t err_len;
	uint16_t machine;   /* the file's: EM_X86_64 or EM_AARCH64 */
	uint64_t cpu_limit; /* ns of the thread's CPU clock */
	const atomic_bool *cancel;
	struct mem_budget mem;
	uint64_t cpu_ns; /* taken by earlier steps */

	uint64_t base; /* lowest PT_LOAD p_vaddr */
	struct xseg *xsegs;
	size_t nr_xsegs;
	struct cfi_src srcs[UNWIND_TABLE_SOURCES];
	const char *source;   /* the first source with FDEs (unwind_table.source) */
	unsigned int sources; /* UNWIND_SRC_* bits of the sources with FDEs */

	/* cfi_fdes.c: settled (sorted, disjoint) up to nr_settled */
	struct fde_range *fdes;
	size_t nr_fdes, nr_settled, cap_fdes;

	/* go_rows.c: a Go program's own table, NULL for other files */
	struct gopclntab *go;
	size_t go_charged; /* its bytes, charged to @mem */

	/* unwind_walk.c */
	size_t next_fde; /* the walk resumes at this FDE */
	bool head_done;	 /* the row before the first FDE is out */
	bool in_fde;	 /* it resumes inside it, at walk_addr */
	uint64_t walk_addr;
	uint64_t fde_work;	 /* the work of that FDE so far (UNWIND_TABLE_FDE_WORK) */
	size_t emitted;		 /* rows emitted, before merging (UNWIND_TABLE_MAX_ROWS) */
	struct unwind_row *rows; /* merged as they come; rule: index into rules */
	size_t nr_rows, cap_rows;
	bool any_row;		   /* a row was emitted (last_pc is set) */
	uint32_t last_pc;	   /* of the row emitted last, kept or not */
	struct unwind_rule *rules; /* distinct, in order of first use */
	size_t nr_rules, cap_rules;
	struct htable rule_index; /* over rules[] */

	struct unwind_table *table; /* set by unwind_walk__finish() */
	struct unwind_table_stats stats;
};

#endif /* CTXPROF_UNWIND_BUILD_H */
