// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unw_plt - calls through lazily bound PLT stubs into libunw_lib.so, whose
 * hot leaf calls back into the executable through a function pointer.
 *
 * main -> unw_plt_driver -> unw_lib_entry@plt -> unw_lib_entry
 *      -> unw_lib_leaf@plt -> unw_lib_leaf                      (~75% of CPU)
 *      -> unw_plt_callback                                      (~20%)
 * main -> unw_plt_driver -> unw_plt_tight -> unw_lib_tiny@plt -> unw_lib_tiny
 *                                                               (~5%, many in PLT stubs)
 * The PLT stubs are never sampled for long but are on every call; the tight
 * loop makes some samples land inside them, where only the linker's
 * .eh_frame for .plt unwinds.  Built -O2 -fomit-frame-pointer, rpath
 * $ORIGIN so it runs from the build directory.
 *
 * Usage: unw_plt [--seconds S]   (default: until killed)
 */
#include "unw.h"
#include "unw_lib.h"

#define UNW_CB_TICKS	200003ull
#define UNW_TIGHT_CALLS 20000

UNW_FRAME uint64_t unw_plt_callback(uint64_t x)
{
	return unw_spin(UNW_CB_TICKS, x);
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
