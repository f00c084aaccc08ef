/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python_eval - where an interpreter file's _PyEval_EvalFrameDefault code
 * lies: the native frames the sampler replaces with Python frames
 * (include/python_abi.h) are the ones whose pc is in one of these ranges.
 *
 * The symbol's own range is not always all of it: a compiler that
 * partitions a function into hot and cold parts (GCC with profile feedback:
 * Debian's CPython 3.14 and 3.15 keep their whole instruction loop in the
 * part split off, 84 KiB, behind a 1 KiB _PyEval_EvalFrameDefault) names
 * the other part only in .symtab (_PyEval_EvalFrameDefault.cold), which a
 * stripped file lacks.  So the parts are found from the code itself: the
 * direct jumps (not calls) of the symbol's code to an address outside it
 * (x86-64 jmp/jcc rel32, arm64 B/B.cond), each target's function in
 * .eh_frame_hdr's table, its extent from its FDE.  A part is taken when at
 * least PYTHON_EVAL_MIN_SITES jumps land in it (on x86-64 the bytes are
 * scanned, not decoded: a stray E9 inside another instruction could point
 * anywhere, two that agree on one function do not happen by chance) and
 * its CFI starts inside a frame (its FDE's first rule, before any advance,
 * sets the CFA or a saved register: a function of its own, a tail call's
 * target, starts from the CIE's entry state instead).
 * Everything read is bounded: the symbol's code (PYTHON_EVAL_MAX_CODE),
 * the table (PYTHON_EVAL_MAX_HDR); an encoding other than the linkers'
 * usual one (table datarel sdata4, FDE pcrel sdata4) gives the symbol's
 * range alone.
 *
 * Pure, any thread.
 */
#ifndef CTXPROF_PYTHON_EVAL_H
#define CTXPROF_PYTHON_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "python_abi.h"

struct elf_file;

#define PYTHON_EVAL_MAX_CODE  (1u << 20) /* bytes of the symbol's code scanned */
#define PYTHON_EVAL_MAX_HDR   (8u << 20) /* bytes of .eh_frame_hdr read */
#define PYTHON_EVAL_MIN_SITES 2

/* [start, end) in the file's ELF addresses */
struct python_eval_range {
	uint64_t start, end;
};

/**
 * python_eval__ranges() - the ranges of the function at ELF address @sym,
 * @size bytes, in @ef: its own first, then the parts split off it, at most
 * PYTHON_EVAL_RANGES in all.
 * Return: how many of @out are set (1 at least).
 */
size_t python_eval__ranges(const struct elf_file *ef, uint64_t sym, uint64_t size,
			   struct python_eval_range out[PYTHON_EVAL_RANGES]);

#endif /* CTXPROF_PYTHON_EVAL_H */
