// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: kallsyms__parse() and kallsyms__lookup() on hostile text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *name, *module;
	struct kallsyms *ks;
	uint64_t addr = 0, offset;
	size_t i;

	ks = kallsyms__parse((const char *)data, size);
	if (!ks)
		return 0;
	for (i = 0; i + 8 <= size && i < 64; i += 8) {
		memcpy(&addr, data + i, sizeof(addr));
		name = kallsyms__lookup(ks, addr, &module, &offset);
		if (!name)
			continue;
		/* what it returns must be readable strings within the bound */
		if (offset >= KALLSYMS_MAX_OFFSET || strlen(name) > KALLSYMS_MAX_NAME ||
		    strlen(module) > KALLSYMS_MAX_MODULE)
			abort();
	}
	kallsyms__free(ks);
	return 0;
}
