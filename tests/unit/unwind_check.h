/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwind_check - checks of a built unwind table (x86-64 and AArch64 rules),
 * for test_unwind_table and test_unwind_synth.  Each fails the test.
 */
#ifndef CTXPROF_TEST_UNWIND_CHECK_H
#define CTXPROF_TEST_UNWIND_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include "unwind/unwind_table.h"

/** unwind_check_invariants() - what the BPF side relies on, for any table. */
void unwind_check_invariants(const struct unwind_table *t);

/**
 * unwind_check_readelf() - every row readelf prints for @section of @path,
 * at its first and last byte, is the rule @t holds there, and every address
 * outside the FDEs is UNWIND_CMD_INVALID.
 * Return: the rows checked.
 */
size_t unwind_check_readelf(const struct unwind_table *t, const char *path, const char *section);

/** unwind_check_readelf_fdes() - the FDEs of @section in @path, as readelf lists them. */
size_t unwind_check_readelf_fdes(const char *path, const char *section);

/** unwind_check_readelf_signal_fde() - where the first FDE whose CIE has 'S' begins; 0: none. */
uint64_t unwind_check_readelf_signal_fde(const char *path, const char *section);

#endif /* CTXPROF_TEST_UNWIND_CHECK_H */
