// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: cpus_parse_busy() on /proc/stat text (the kernel's,
 * but a parser that reads past a line or overflows a sum is a bug).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sampling/cpus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t busy[8];
	char *text;
	int i;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!cpus_parse_busy(text, busy, 8, 100)) {
		/* each CPU's sum of five fields, each field < 2^61 ticks */
		for (i = 0; i < 8; i++)
			if (busy[i] % 10000000)
				abort();
	}
	free(text);
	return 0;
}
