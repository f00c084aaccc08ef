// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unw_fp_leaf - hot frameless leaves in a frame-pointer build.
 *
 * main -> unw_fp_caller -> unw_fp_leaf_a   (~70% of CPU)
 * main -> unw_fp_caller -> unw_fp_leaf_b   (~30%)
 *
 * Built -O2 -fno-omit-frame-pointer.  The leaves touch no stack, so gcc
 * gives them no frame (no push %rbp) even so: while a leaf runs, %rbp still
 * points at unw_fp_caller's frame, and a frame-pointer walk goes from the
 * leaf straight to main and loses unw_fp_caller.  .eh_frame keeps it.
 *
 * Usage: unw_fp_leaf [--seconds S]   (default: until killed)
 */
#include "unw.h"

#define UNW_A_ROUNDS 7000003ull
#define UNW_B_ROUNDS 3000017ull

UNW_FRAME uint64_t unw_fp_leaf_a(uint64_t x)
{
	return unw_spin(UNW_A_ROUNDS, x);
}

UNW_FRAME uint64_t unw_fp_leaf_b(uint64_t x)
{
	return unw_spin(UNW_B_ROUNDS, x ^ 0x5bd1e995u) + 7;
}

UNW_FRAME void unw_fp_caller(void)
{
	uint64_t x = 1;

	while (!unw_done) {
		x = unw_fp_leaf_a(x);
		x = unw_fp_leaf_b(x);
	}
	unw_sink = x;
}

int main(int argc, char **argv)
{
	if (unw_start(argc, argv, "unw_fp_leaf"))
		return 2;
	unw_fp_caller();
	return 0;
}
