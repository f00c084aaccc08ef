// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unw_gap_nocfi - the middle frame of unw_cfi_gap, built with a frame
 * pointer and without any CFI (-g0 -fno-asynchronous-unwind-tables
 * -fno-unwind-tables: neither .eh_frame nor .debug_frame rows).  The leaf
 * is called through a pointer so that gcc cannot inline it here.
 */
#include "unw.h"

uint64_t unw_gap_nocfi(uint64_t x, uint64_t (*leaf)(uint64_t));

#define UNW_NOCFI_ROUNDS 4000037ull

UNW_FRAME uint64_t unw_gap_nocfi(uint64_t x, uint64_t (*leaf)(uint64_t))
{
	x = unw_spin(UNW_NOCFI_ROUNDS, x);
	return leaf(x) ^ x;
}
