// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the library plant maps: the frames must be named from it */
#include <stdint.h>

static volatile uint64_t sink;

__attribute__((noinline)) void plant_real_work(void)
{
	int i;

	for (i = 0; i < 100000; i++)
		sink = sink * 6364136223846793005ULL + i;
}

void plant_spin(void)
{
	plant_real_work();
}
