// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unw_qsort - the hot function is called back from inside glibc.
 *
 * main -> unw_sort_driver -> qsort -> (glibc: qsort_r, msort_with_tmp...) -> unw_cmp_hot
 *
 * Debian's glibc has no frame pointers, and its qsort is a tail jump into
 * qsort_r, so a stack shows qsort_r (or __qsort_r), never qsort.  The
 * comparator spins ~300 ns a call so nearly every sample lands
 * in it.  Built -O2 -fomit-frame-pointer: only .eh_frame unwinds it.
 *
 * Usage: unw_qsort [--seconds S]   (default: until killed)
 */
#include "unw.h"

#define UNW_NELEM      4096
#define UNW_CMP_ROUNDS 250

static int unw_array[UNW_NELEM];

UNW_FRAME int unw_cmp_hot(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	unw_sink = unw_spin(UNW_CMP_ROUNDS, (uint64_t)x);
	return (x > y) - (x < y);
}

UNW_FRAME void unw_sort_driver(void)
{
	uint32_t seed = 1;
	int i;

	while (!unw_done) {
		for (i = 0; i < UNW_NELEM; i++) {
			seed = seed * 1103515245u + 12345u;
			unw_array[i] = (int)(seed >> 8);
		}
		qsort(unw_array, UNW_NELEM, sizeof(unw_array[0]), unw_cmp_hot);
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (unw_start(argc, argv, "unw_qsort"))
		return 2;
	unw_sort_driver();
	return 0;
}
