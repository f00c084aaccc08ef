// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unw_deep - a 120-frame recursion above a hot leaf.
 *
 * main -> unw_deep_driver -> unw_recurse x120 -> unw_deep_leaf
 *
 * unw_recurse does work after its recursive call (a volatile store of its
 * depth), so gcc can neither make it a sibling call nor turn the recursion
 * into a loop; every level is a real frame (verify.sh counts the call).
 * Built -O2 -fomit-frame-pointer: only .eh_frame unwinds it.
 *
 * Usage: unw_deep [--seconds S]   (default: until killed)
 */
#include "unw.h"

#define UNW_DEPTH	120
#define UNW_LEAF_ROUNDS 1000003ull

UNW_FRAME void unw_deep_leaf(void)
{
	unw_sink = unw_spin(UNW_LEAF_ROUNDS, unw_sink);
}

UNW_FRAME void unw_recurse(int depth)
{
	if (depth > 1)
		unw_recurse(depth - 1);
	else
		unw_deep_leaf();
	/* work after the call: no tail call, no loop */
	unw_sink = unw_sink + (uint64_t)depth;
}

UNW_FRAME void unw_deep_driver(void)
{
	while (!unw_done)
		unw_recurse(UNW_DEPTH);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (unw_start(argc, argv, "unw_deep"))
		return 2;
	unw_deep_driver();
	return 0;
}
