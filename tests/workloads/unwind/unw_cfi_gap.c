// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unw_cfi_gap - a file with CFI whose middle frame has none.
 *
 * main -> unw_gap_driver -> unw_gap_nocfi -> unw_gap_leaf   (~60% of CPU)
 * main -> unw_gap_driver -> unw_gap_nocfi                   (~40%)
 *
 * Everything here is built -O2 -fomit-frame-pointer with .eh_frame;
 * unw_gap_nocfi (unw_gap_nocfi.c) is built with a frame pointer and no
 * unwind tables at all, as V8's builtins, HotSpot's stubs and hand-written
 * assembly are: the file's table has a gap there.  A walk that stops at
 * the first pc without CFI loses unw_gap_driver and main; one that steps
 * over the gap by frame pointer and goes back to the table has them all.
 *
 * Usage: unw_cfi_gap [--seconds S]   (default: until killed)
 */
#include "unw.h"

uint64_t unw_gap_nocfi(uint64_t x, uint64_t (*leaf)(uint64_t));

#define UNW_LEAF_ROUNDS 6000011ull

UNW_FRAME uint64_t unw_gap_leaf(uint64_t x)
{
	return unw_spin(UNW_LEAF_ROUNDS, x);
}

UNW_FRAME void unw_gap_driver(void)
{
	uint64_t x = 1;

	while (!unw_done)
		x = unw_gap_nocfi(x, unw_gap_leaf) + 1;
	unw_sink = x;
}

int main(int argc, char **argv)
{
	if (unw_start(argc, argv, "unw_cfi_gap"))
		return 2;
	unw_gap_driver();
	return 0;
}
