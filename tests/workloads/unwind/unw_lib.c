// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libunw_lib.so - the shared library of the unw_plt workload, built
 * -O2 -fomit-frame-pointer -fPIC and linked lazily (no -z now).  Every
 * function has default visibility, so even the library's call from
 * unw_lib_entry to unw_lib_leaf goes through a PLT stub.
 */
#include "unw.h"
#include "unw_lib.h"

#define UNW_LIB_LEAF_ROUNDS 400003ull

UNW_FRAME uint64_t unw_lib_leaf(unw_lib_callback cb, uint64_t x)
{
	x = unw_spin(UNW_LIB_LEAF_ROUNDS, x);
	return cb(x) + 1;
}

UNW_FRAME uint64_t unw_lib_entry(unw_lib_callback cb, int rounds)
{
	uint64_t x = 1;
	int i;

	for (i = 0; i < rounds; i++)
		x = unw_lib_leaf(cb, x);
	return x + 1;
}

UNW_FRAME uint64_t unw_lib_tiny(uint64_t x)
{
	return x * 2862933555777941757ull + 3037000493ull;
}
