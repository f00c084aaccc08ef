// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unw_plt - calls through lazily bound PLT stubs into libunw_lib.so, whose
 * hot leaf calls back into the executable through a function pointer.
 *
 * main -> unw_plt_driver -> unw_lib_entry@plt -> unw_lib_entry
 *      -> unw_lib_leaf@plt -> unw_lib_leaf                      (~70% of CPU)
 *      -> unw_plt_callback                                      (~16%)
 * main -> unw_plt_driver -> unw_plt_tight -> unw_lib_tiny@plt -> unw_lib_tiny
 *                                                               (~14%)
 * The tight loop of PLT calls is there to have samples land inside the
 * stubs, where only the linker's .eh_frame for .plt unwinds; with cpu-clock
 * they are rare all the same (skid puts most at the return address).  The
 * first call of each stub goes through the dynamic linker's lazy resolver.
 * Built -O2 -fomit-frame-pointer, rpath $ORIGIN so it runs from the build
 * directory.
 *
 * Usage: unw_plt [--seconds S]   (default: until killed)
 */
#include "unw.h"
#include "unw_lib.h"

#define UNW_CB_ROUNDS	100003ull
#define UNW_TIGHT_CALLS 400000

UNW_FRAME uint64_t unw_plt_callback(uint64_t x)
{
	return unw_spin(UNW_CB_ROUNDS, x);
}

UNW_FRAME uint64_t unw_plt_tight(uint64_t x)
{
	int i;

	for (i = 0; i < UNW_TIGHT_CALLS; i++)
		x = unw_lib_tiny(x);
	return x + 1;
}

UNW_FRAME void unw_plt_driver(void)
{
	uint64_t x = 1;

	while (!unw_done) {
		x += unw_lib_entry(unw_plt_callback, 4);
		x = unw_plt_tight(x);
	}
	unw_sink = x;
}

int main(int argc, char **argv)
{
	if (unw_start(argc, argv, "unw_plt"))
		return 2;
	unw_plt_driver();
	return 0;
}
