/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unw_lib.h - libunw_lib.so, the shared library of the unw_plt workload.
 */
#ifndef UNW_LIB_H
#define UNW_LIB_H

#include <stdint.h>

/* called back by unw_lib_leaf every so often; returns a value to mix in */
typedef uint64_t (*unw_lib_callback)(uint64_t x);

/**
 * unw_lib_entry() - spin in unw_lib_leaf (reached through the library's own
 * PLT) for @rounds rounds, calling @cb back once a round.
 * Return: a value the caller must keep, so nothing is optimised away.
 */
uint64_t unw_lib_entry(unw_lib_callback cb, int rounds);

/* the hot leaf: exported, so unw_lib_entry calls it through the PLT */
uint64_t unw_lib_leaf(unw_lib_callback cb, uint64_t x);

/* a tiny function the executable calls in a tight loop through its PLT */
uint64_t unw_lib_tiny(uint64_t x);

#endif /* UNW_LIB_H */
