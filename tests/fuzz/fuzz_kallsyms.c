// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: kallsyms__parse(), kallsyms__lookup() and
 * kallsyms__text_range() on hostile text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *name, *module;
	struct kallsyms *ks;
	uint64_t addr = 0, offset, start, end;
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
	/* a text range is never empty or reversed */
	if (!kallsyms__text_range(ks, &start, &end) && (!start || start >= end))
		abort();
	kallsyms__free(ks);
	return 0;
}
