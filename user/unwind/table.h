/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * table - what one file's unwind table is: its rows and rules (include/unwind.h),
 * where they came from, what building it counted, and the limits a build
 * keeps to.  The stages of a build (cfi_*, unwind_walk) fill it; the API that
 * builds one and looks rows up is unwind_table.h.  Types only: any thread.
 */
#ifndef CTXPROF_UNWIND_TABLE_TYPES_H
#define CTXPROF_UNWIND_TABLE_TYPES_H

#include <elf.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

struct elf_file;

/* Hard limits against hostile files (-E2BIG beyond them). */
#define UNWIND_TABLE_MAX_ROWS	  (16u << 20)
#define UNWIND_TABLE_MAX_FDES	  (4u << 20)   /* CIEs and FDEs in one section */
#define UNWIND_TABLE_MAX_CFI_SIZE (128u << 20) /* bytes of one section, decompressed */
/*
 * libdw evaluates a row by running its FDE's program from the start, so a
 * walk over an FDE costs about rows * program bytes (DW_CFA_remember_state
 * counted at what its copy costs: cfi_check.h).  Past UNWIND_TABLE_FDE_WORK
 * the rest of the FDE becomes UNSUPPORTED (UNWIND_UNSUP_BUDGET): this also
 * bounds what one libdw call may take, which no clock can interrupt.  The
 * largest seen on real files: 8M for one FDE (librustc_driver).
 */
#define UNWIND_TABLE_FDE_WORK (64u << 20)
/*
 * Per-file budgets, the defaults of struct unwind_table_limits; why these
 * values: bench/README.md ("Unwind table budgets").  libLLVM-15, the
 * largest table measured, builds in 0.19 s of CPU holding 27 MiB.
 */
#define UNWIND_TABLE_CPU_NS (2000ull * 1000 * 1000) /* CPU time of one build */
#define UNWIND_TABLE_MEMORY (128u << 20)	    /* bytes one build holds at once */

/* What a build may spend; a zero field takes its default. */
/* the collector's own machine: the tables its BPF unwinder walks */
#if defined(__aarch64__)
#define UNWIND_HOST_MACHINE EM_AARCH64
#else
#define UNWIND_HOST_MACHINE EM_X86_64
#endif

struct unwind_table_limits {
	uint64_t cpu_ns; /* the thread's CPU time the build may take (-ETIME past it) */
	size_t memory;	 /* bytes it may hold at once (-E2BIG past them) */
	/* when it becomes true the build stops (-ECANCELED) within one libdw call */
	const atomic_bool *cancel;
	/* the ELF machine whose files it builds (EM_X86_64, EM_AARCH64); 0: the
	 * collector's own (tables of another machine serve tests, not a walk) */
	uint16_t machine;
};

/* Why a libdw row became UNWIND_CMD_UNSUPPORTED. */
enum unwind_unsup {
	UNWIND_UNSUP_CFA_REG = 0, /* CFA = some register other than rsp/rbp + offset */
	UNWIND_UNSUP_CFA_EXPR,	  /* CFA expression other than the PLT or realignment ones */
	UNWIND_UNSUP_CFA_UNDEF,	  /* no CFA rule at all */
	UNWIND_UNSUP_RA,	  /* return address not where enum unwind_ra can find it */
	UNWIND_UNSUP_RSP,	  /* caller's rsp is not the CFA */
	UNWIND_UNSUP_RBP,	  /* rbp rule not one of enum unwind_rbp */
	UNWIND_UNSUP_OFFSET,	  /* an offset does not fit 32 bits */
	UNWIND_UNSUP_LIBDW,	  /* libdw failed to evaluate the row */
	UNWIND_UNSUP_BUDGET,	  /* FDE past UNWIND_TABLE_FDE_WORK */
	UNWIND_UNSUP_MAX,
};

/* The CFI sources of a table, in the order they are read (unwind_table.sources). */
enum unwind_src {
	UNWIND_SRC_EH_FRAME = 1u << 0,	  /* @elf's .eh_frame */
	UNWIND_SRC_DEBUG_FRAME = 1u << 1, /* @elf's .debug_frame */
	UNWIND_SRC_DEBUG_FILE = 1u << 2,  /* @debug_elf's .debug_frame */
	/* not a CFI source: a Go program's .gopclntab (go_rows.h), for the Go
	 * functions no CFI covers, and its stack roots and switches */
	UNWIND_SRC_GOPCLNTAB = 1u << 3,
};
#define UNWIND_TABLE_SOURCES 3

struct unwind_table_stats {
	size_t fdes;		 /* FDEs whose range made it into the table */
	size_t fdes_outside;	 /* FDEs not inside an executable PT_LOAD (or empty) */
	size_t fdes_undecodable; /* FDEs whose address encoding is not absptr/pcrel */
	size_t fdes_overlap;	 /* FDEs trimmed or dropped: an earlier-starting FDE covered them */
	size_t fdes_shadowed;	 /* FDEs of a later source where an earlier source has FDEs */
	size_t sources_rejected; /* later sources skipped as malformed (earlier ones had FDEs) */
	uint64_t text_bytes;	 /* bytes of the executable PT_LOADs */
	uint64_t covered_bytes;	 /* of those, inside an FDE or a Go function with rows */
	size_t libdw_rows;	 /* rows libdw reported, before merging */
	/* a Go program's .gopclntab (go_rows.h) */
	size_t go_funcs;    /* functions given rows from their pcsp table (no CFI there) */
	size_t go_roots;    /* stack roots given UNWIND_CMD_END (runtime.goexit, mstart) */
	size_t go_switches; /* stack switches given UNWIND_CMD_GO_SYSTEM_STACK */
	size_t go_bad;	    /* functions whose pcsp table is malformed: UNSUPPORTED */
	uint64_t go_bytes;  /* bytes of the text whose rows come from it */
	size_t unsup[UNWIND_UNSUP_MAX];	 /* UNSUPPORTED libdw rows and cut walks, by reason */
	size_t cmd_rows[UNWIND_CMD_MAX]; /* final rows per command */
	uint64_t work;			 /* program bytes libdw ran (see UNWIND_TABLE_FDE_WORK) */
	uint64_t cpu_ns;		 /* CPU time the build took */
	size_t mem_peak;		 /* the most bytes it held at once */
};

struct unwind_table {
	uint64_t base;		 /* lowest PT_LOAD p_vaddr: row pcs are offsets from it */
	struct unwind_row *rows; /* sorted by pc, pcs distinct, consecutive rules differ */
	size_t nr_rows;
	struct unwind_rule *rules; /* this table's distinct rules; row.rule indexes it */
	size_t nr_rules;
	struct unwind_table_stats stats;
	/* the first source with FDEs: ".eh_frame" or ".debug_frame"; ".gopclntab"
	 * for a Go program without CFI */
	const char *source;
	unsigned int sources; /* the sources with FDEs in the table: UNWIND_SRC_* bits */
	int from_debug_file;  /* 1: some rows come from @debug_elf's .debug_frame */
};

#endif /* CTXPROF_UNWIND_TABLE_TYPES_H */
