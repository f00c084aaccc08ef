// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the impostor put at the mapped library's path: never to be read as it */
#include <stdint.h>

static volatile uint64_t sink;

__attribute__((noinline)) void ATTACKER_NAME(void)
{
	int i;

	for (i = 0; i < 100000; i++)
		sink = sink * 6364136223846793005ULL + i;
}

void plant_spin(void)
{
	ATTACKER_NAME();
}
