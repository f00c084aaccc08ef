/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * go_rows - the Go stage of an unwind table build (unwind_table.h): a Go
 * program's own table, .gopclntab (elf/gopclntab.h), laid over the rows its
 * CFI gave, or standing alone for a program without CFI (built with
 * -ldflags='-s -w': no .debug_frame, and Go writes no .eh_frame).
 *
 * What the Go runtime knows and CFI does not say:
 *  - where a stack begins: a function flagged TOPFRAME (runtime.goexit, the
 *    return address of every goroutine's first function; runtime.mstart,
 *    rt0_go, sigtramp) gets UNWIND_CMD_END over its whole range: the stack
 *    is complete there, not walked on into whatever lies above it;
 *  - where a stack is switched: a function flagged SPWRITE (runtime.mcall,
 *    systemstack, morestack, asmcgocall, cgocallback, gogo) sets rsp to
 *    another stack before it calls on, so its caller is not above it: it
 *    gets UNWIND_CMD_GO_SYSTEM_STACK over its range, with which switch it
 *    is (systemstack, mcall, morestack, the vDSO callers nanotime1 and
 *    time.now: enum unwind_go_switch) and its pcsp frame (for a sample
 *    taken in it before it switched), to go on where the runtime saved the
 *    goroutine's registers, or else to end the stack there, counted
 *    (runtime.systemstack_switch, where the walk resumes after
 *    systemstack, at its entry or, since Go 1.21, past its rbp push, keeps
 *    its pcsp rows).
 *    (systemstack called on the system stack already jumps to its callee:
 *    it is then no frame at all.)  The sampler decides (bpf/go_stack.bpf.h);
 *    a switch it does not follow ends the stack: never a made-up caller;
 *  - the frame of every other Go function at each pc, from its pcsp table
 *    (the bytes it pushed below its entry rsp): CFA = rsp + pcsp + 8, the
 *    return address at CFA - 8, and once the frame is made (pcsp >= 16) the
 *    caller's rbp saved at CFA - 16, where Go's prologue puts it.  Those
 *    rows fill what no CFI covers; CFI stays where it is.
 * Go 1.16 tables have no flags: the functions above are then found by name.
 *
 * Private to user/unwind/; a build is its caller's: no locking.
 */
#ifndef CTXPROF_GO_ROWS_H
#define CTXPROF_GO_ROWS_H

#include "unwind/unwind_build.h"

struct elf_file;

/**
 * go_rows__load() - read @elf's .gopclntab into @b (b->go), charged to its
 * memory budget, when it has one.
 * Return: 1 when it has (b->go set), 0 when it has none or it is malformed
 * (a Go table that cannot be read leaves the CFI as it is), -E2BIG past the
 * budget, -ENOMEM.
 */
int go_rows__load(struct unwind_build *b, const struct elf_file *elf);

/**
 * go_rows__apply() - lay b->go over the rows walked so far (b->rows, from
 * CFI; none when the file has no CFI): stack roots and switches everywhere,
 * pcsp rows where no CFI covers a Go function; elsewhere the walked rows,
 * or frame-pointer rows in a table without CFI (what the file had before).
 * The rows are emitted again (unwind_walk__emit()); the old ones freed.
 * Return: 0, -E2BIG, -EFBIG (a function past 4 GiB from the base),
 * -ENOMEM.
 */
int go_rows__apply(struct unwind_build *b);

#endif /* CTXPROF_GO_ROWS_H */
