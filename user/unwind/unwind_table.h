/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwind_table - the unwind rows of one ELF file (include/unwind.h), built
 * from its CFI with elfutils' libdw.
 *
 * libdw executes the CFA programs; this module only decides which bytes
 * libdw may see and translates the rule libdw reports for each row into an
 * unwind_rule.  The file is untrusted (it comes from a profiled process):
 * it is read through elf/elf_file.h, the CFI section is copied, after bounds
 * checks, into a private in-memory ELF image holding only that section,
 * every CIE and FDE in it is checked for what would make libdw read out of
 * bounds or allocate without limit, and a section failing a check is
 * refused as a whole.  Building never crashes, never loops forever and
 * never returns unsorted rows; a failure is an -errno plus a one-line reason.
 *
 * A build is bounded in what it measures, not only in what it estimates:
 * the CPU time it takes (the thread's CPU clock, read between rows) and the
 * memory it holds (charged before each allocation, the image, the FDEs and
 * libdw's records up front from their counts, the rows as they grow); past
 * either budget it stops with its own error.  It can be cancelled, and run
 * in slices (unwind_build__run()) so that one file does not hold up others.
 *
 * The build runs in stages, one file each (each header says its contract):
 *   cfi_source.c  the section loading (private image, libdw opened on it)
 *   cfi_check.c   the safety checker (what libdw may be given)
 *   cfi_fdes.c    the FDE collection (ranges, sources merged, overlaps)
 *   unwind_walk.c the walk (rows from libdw, budgets, merging, rules)
 *   cfi_rules.c   the rule translation (libdw's row as an unwind_rule)
 *   unwind_table.c the API below, and the lookup the BPF side mirrors.
 *
 * Link with $(pkg-config --libs libdw) -lz (libdw, libelf, zlib).
 *
 * Threads: a build belongs to its caller (the unwinder's thread); distinct
 * builds may run on distinct threads; a table is read-only once built.
 */
#ifndef CTXPROF_UNWIND_TABLE_H
#define CTXPROF_UNWIND_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/table.h"

/**
 * unwind_table__build() - build the unwind table of one ELF file.
 * @elf: the file (elf/elf_file.h); only read, and only while this runs
 * @debug: its separate debug file, or NULL; only its .debug_frame is used,
 *	for the addresses @elf's own CFI does not cover.  The caller checks
 *	that it belongs to @elf (build id).
 * @lim: the budgets; NULL for the defaults
 * @out: set to the table on success
 * @err: filled with a one-line reason on failure; may be NULL
 * @err_len: size of @err
 *
 * Sources, in order: @elf's .eh_frame, its .debug_frame (SHF_COMPRESSED or
 * .zdebug_frame zlib accepted), @debug's .debug_frame.  A later source
 * only adds the FDEs that touch no FDE of an earlier one (a program built
 * without unwind tables still has its start files' .eh_frame); a malformed
 * later source is skipped (stats.sources_rejected) when an earlier one gave
 * FDEs.  Only FDEs inside an executable PT_LOAD of @elf are used.
 * Every address from the table's base up to the end of the last FDE has a
 * row; addresses in no FDE get UNWIND_CMD_INVALID rows.  When FDEs overlap,
 * the earlier-starting one (then the earlier in the section) keeps the
 * overlapped addresses; each such address gets the rule libdw reports for it.
 *
 * A Go program's .gopclntab is laid over the rows (go_rows.h): its stack
 * roots end the stack, its stack switches stop it (counted), and its
 * functions no CFI covers get rows from their pcsp tables; a Go program
 * without CFI gets a table from it alone, frame-pointer rows between its
 * functions.
 *
 * Only x86-64 ET_EXEC/ET_DYN files are supported.  Distinct files may be
 * built from distinct threads.
 *
 * Return: 0, or -ENODATA when no source has an FDE and the file is not a Go
 * program (the caller falls back to frame pointers), -EINVAL for a malformed file or CFI section,
 *-ENOTSUP for another architecture, -EFBIG when the covered pc range does not fit 32 bits, -E2BIG
 *past a limit above or the memory budget, -ETIME past the CPU budget, -ECANCELED when cancelled,
 *-ENOMEM.  Pair with unwind_table__free().
 */
int unwind_table__build(const struct elf_file *elf, const struct elf_file *debug,
			const struct unwind_table_limits *lim, struct unwind_table **out, char *err,
			size_t err_len);

/**
 * unwind_table__build_mem() - unwind_table__build() with the default
 * budgets over an ELF image in memory (vdso images, fuzzing, tests).  @buf
 * is read only during the call.
 */
int unwind_table__build_mem(const void *buf, size_t len, struct unwind_table **out, char *err,
			    size_t err_len);

/*
 * The same build in steps, for a caller that interleaves the builds of
 * several files on one thread (the unwinder): unwind_build__start() reads
 * and checks the sources (linear in their size: milliseconds, up to a few
 * hundred for UNWIND_TABLE_MAX_CFI_SIZE) and needs the files only during
 * the call; unwind_build__run() walks the rows, a slice of CPU time at a
 * time.  A build is its caller's: no locking; distinct builds are
 * independent.
 */
struct unwind_build;

/**
 * unwind_build__start() - begin building the table of @elf (and @debug),
 * as unwind_table__build() does.  @err must stay valid until the build is
 * freed: later steps write their reason there.
 * Return: 0 and *@out set (pair with unwind_build__free()), or the errors
 * of unwind_table__build().
 */
int unwind_build__start(const struct elf_file *elf, const struct elf_file *debug,
			const struct unwind_table_limits *lim, struct unwind_build **out, char *err,
			size_t err_len);

/**
 * unwind_build__run() - walk on for about @slice_ns of the thread's CPU
 * time (one libdw call may overrun it: UNWIND_TABLE_FDE_WORK bounds that).
 * Return: 0 when the table is done (unwind_build__take()), -EAGAIN when the
 * slice ran out first (call again), or the errors of unwind_table__build().
 */
int unwind_build__run(struct unwind_build *b, uint64_t slice_ns);

/** unwind_build__take() - the finished table (once); NULL before. */
struct unwind_table *unwind_build__take(struct unwind_build *b);

/** unwind_build__bytes() - the memory the build holds now. */
size_t unwind_build__bytes(const struct unwind_build *b);

/** unwind_build__cpu_ns() - the CPU time the build has taken so far. */
uint64_t unwind_build__cpu_ns(const struct unwind_build *b);

/** unwind_build__free() - accepts NULL. */
void unwind_build__free(struct unwind_build *b);

/**
 * unwind_table__find() - the rule at ELF virtual address @vaddr: the rule of
 * the row with the largest pc <= @vaddr - base, as the BPF unwinder looks it
 * up.  Addresses below the base or past the last row get a static
 * UNWIND_CMD_INVALID rule.  Never NULL; owned by @t (or static).
 */
const struct unwind_rule *unwind_table__find(const struct unwind_table *t, uint64_t vaddr);

/** unwind_table__free() - accepts NULL. */
void unwind_table__free(struct unwind_table *t);

/** unwind_cmd_name() - "cfa_rsp", "plt", ...; "?" for an unknown value. */
const char *unwind_cmd_name(enum unwind_cmd c);

/** unwind_unsup_name() - "cfa_reg", "ra", ...; "?" for an unknown value. */
const char *unwind_unsup_name(enum unwind_unsup u);

#endif /* CTXPROF_UNWIND_TABLE_H */
